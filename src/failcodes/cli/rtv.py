"""``failcodes rtv``: the reference retrieve-then-verify evaluator (seed 000).

Thin: the options are :class:`failcodes.commands.rtv.RtvRequest`'s fields.
"""

from __future__ import annotations

from typing import Any

import typer

from failcodes.cli.main import app
from failcodes.cli.output_format import FORMAT_PARAM, OutputFormat, require_format
from failcodes.cli.requests import request_command
from failcodes.commands.rtv import RtvRequest


def _rtv(request: RtvRequest, fmt: OutputFormat) -> None:
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="rtv")
    result = request.run()
    if fmt is OutputFormat.JSON:
        typer.echo(result.json_text())
        return
    for line in result.lines():
        typer.echo(line)


_rtv_cmd: Any = request_command(RtvRequest, _rtv, extra=[FORMAT_PARAM])
app.command("rtv")(_rtv_cmd)
