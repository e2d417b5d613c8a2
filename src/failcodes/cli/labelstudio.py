"""``failcodes labelstudio config|export|push|pull|import|serve``: human review in Label Studio.

The server URL and token come from ``--url``/``--token`` or from ``LABEL_STUDIO_URL`` and
``LABEL_STUDIO_API_KEY`` (prefer the environment: command lines are visible to other users).
Thin: the options are :mod:`failcodes.commands.labelstudio`'s requests' fields.
"""

from __future__ import annotations

from typing import Any

import typer

from failcodes.cli.main import command_group
from failcodes.cli.output_format import print_lines
from failcodes.cli.requests import add_command
from failcodes.commands.base import Request
from failcodes.commands.labelstudio import (
    ExportRequest,
    LabelStudioConfigRequest,
    LabelStudioImportRequest,
    LabelStudioPullRequest,
    LabelStudioPushRequest,
    LabelStudioServeRequest,
)

ls_app = command_group("labelstudio")


def _stderr(line: str) -> None:
    typer.echo(line, err=True)


def _config(request: LabelStudioConfigRequest) -> None:
    result = request.run()
    if result.out is None:
        typer.echo(result.xml, nl=False)
    for line in result.lines():
        typer.echo(line)


def _serve(request: LabelStudioServeRequest) -> None:
    request.run(note=_stderr, say=typer.echo)


_COMMANDS: tuple[tuple[type[Request], Any], ...] = (
    (LabelStudioConfigRequest, _config),
    (ExportRequest, print_lines),
    (LabelStudioPushRequest, print_lines),
    (LabelStudioPullRequest, print_lines),
    (LabelStudioImportRequest, print_lines),
    (LabelStudioServeRequest, _serve),
)
for _model, _handle in _COMMANDS:
    add_command(ls_app, _model, _handle)
