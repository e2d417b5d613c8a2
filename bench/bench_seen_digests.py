"""Issue 30: ``SeenDigests`` (attribute's reader of a disagreements file) at 100x, paired.

N random 16-byte digests added one by one, then a third of them looked up again, with the dict
merged into the sorted array every ``DIGEST_WINDOW`` digests (``DIGEST_SHARE`` set so large
that the share is never more: the merge of session 29) and at the share (now), alternated in
one process. Prints CPU seconds of the adds, of the merges among them, and the merges.

    python bench/bench_seen_digests.py [--n 3000000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from failcodes import unitrepeats


def one(digests: list[bytes], share: int) -> tuple[float, float, int]:
    """(CPU-s of the adds and lookups, CPU-s of the merges among them, merges)."""
    unitrepeats.DIGEST_SHARE = share
    settle = unitrepeats.SeenDigests._settle
    spent = [0.0, 0]

    def timed(self: unitrepeats.SeenDigests) -> None:
        started = time.process_time()
        settle(self)
        spent[0] += time.process_time() - started
        spent[1] += 1

    unitrepeats.SeenDigests._settle = timed  # type: ignore[method-assign]
    try:
        seen = unitrepeats.SeenDigests()
        started = time.process_time()
        for d in digests:
            seen.add(d)
        for d in digests[::3]:
            seen.add(d)
        return time.process_time() - started, spent[0], int(spent[1])
    finally:
        unitrepeats.SeenDigests._settle = settle  # type: ignore[method-assign]


def main() -> None:
    """Run the pairs and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3_000_000, help="Digests (3M: 100x claims).")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    digests = list(map(bytes, rng.integers(0, 256, size=(args.n, 16), dtype=np.uint8)))
    now = unitrepeats.DIGEST_SHARE
    print(f"{args.n:,} digests; {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    for r in range(args.rounds):
        for name, share in (("every window", 1 << 62), (f"share 1/{now}", now)):
            cpu, merging, merges = one(digests, share)
            print(f"round {r + 1} {name:<14} {cpu:6.2f} CPU-s ({merging:5.2f} in {merges} merges)")
    unitrepeats.DIGEST_SHARE = now


if __name__ == "__main__":
    main()
