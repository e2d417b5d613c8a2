"""``failcodes codebook``: validate, show, diff, render and describe codebook files.

    failcodes codebook validate [PATH ...]          files or folders (default: taxonomy/)
    failcodes codebook show [PATH] [--format text|json]
    failcodes codebook diff OLD NEW [--format text|json]
    failcodes codebook table [PATH] [--format md|latex|html] [--part P] [--stats S.json] [-o F]
    failcodes codebook schema [-o codebook.schema.json]

PATH defaults to the codebook bundled with failcodes. Thin: the options are
:mod:`failcodes.commands.codebook`'s requests' fields.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from failcodes.cli.main import command_group
from failcodes.cli.output_format import OutputFormat, print_result
from failcodes.cli.requests import add_command
from failcodes.commands.base import Request
from failcodes.commands.codebook import (
    CodebookDiffRequest,
    CodebookSchemaRequest,
    CodebookShowRequest,
    CodebookTableRequest,
    CodebookText,
    CodebookValidateRequest,
)

codebook_app = command_group("codebook")

_FORMAT = inspect.Parameter(
    "fmt",
    inspect.Parameter.KEYWORD_ONLY,
    default=OutputFormat.TABLE,
    annotation=Annotated[
        OutputFormat, typer.Option("--format", "-f", help="table (text) or json.")
    ],
)


def _text(request: Request) -> None:
    """Print the text, unless it was written to -o."""
    runner: Any = request
    result: CodebookText = runner.run()
    if result.output is None:
        typer.echo(result.text, nl=not result.text.endswith("\n"))


for _printed in (CodebookValidateRequest, CodebookShowRequest, CodebookDiffRequest):
    add_command(codebook_app, _printed, print_result, extra=[_FORMAT])
for _text_only in (CodebookTableRequest, CodebookSchemaRequest):
    add_command(codebook_app, _text_only, _text)
