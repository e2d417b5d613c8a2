"""``failcodes rtv``: the reference retrieve-then-verify evaluator (seed 000).

Thin: the options are :class:`failcodes.commands.rtv.RtvRequest`'s fields.
"""

from __future__ import annotations

from failcodes.cli.main import app
from failcodes.cli.output_format import FORMAT_PARAM, print_result
from failcodes.cli.requests import add_command
from failcodes.commands.rtv import RtvRequest

add_command(app, RtvRequest, print_result, extra=[FORMAT_PARAM])
