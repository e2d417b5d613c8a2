"""``failcodes init NAME``: create a study folder with a documented study file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from failcodes.cli.main import app


@app.command("init")
def init(
    folder: Annotated[
        Path, typer.Argument(help="The study folder to create (its name by default).")
    ],
    name: Annotated[
        str | None, typer.Option("--name", help="Study name (default: the folder's name).")
    ] = None,
    codebook_version: Annotated[
        int | None,
        typer.Option(
            "--codebook-version",
            help="Version of the bundled codebook to copy in (default 1: single-label; 2 lets "
            "the low-quality codes of a reasoning step co-occur, as seed 001 does; see "
            "docs/codebook.md).",
        ),
    ] = None,
) -> None:
    """Create a study folder: failcodes.toml, the codebook, and one folder per step."""
    from failcodes.fileio import check_output_dir
    from failcodes.study.create import init_study

    check_output_dir(folder)
    layout = init_study(folder, name=name, codebook_version=codebook_version)
    typer.echo(f"study created: {layout.root}/")
    typer.echo(f"edit {layout.study_file} (docs/study.md), then: failcodes run {layout.root}")
