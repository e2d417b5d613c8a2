"""``python -m tests.fakeserver [--latency S] [--port N]``: serve the fake API in this process."""

from __future__ import annotations

import argparse

from tests.fakeserver.server import serve_forever

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--latency", type=float, default=0.0)
parser.add_argument("--port", type=int, default=0)
args = parser.parse_args()
serve_forever(args.latency, args.port)
