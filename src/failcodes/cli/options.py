"""Options and consoles shared by several subcommands (one place, no borrowing).

``demo`` and ``run`` print tables on the same console; the commands writing CSV share
``--raw-csv``. A command's own options are fields of its request
(:mod:`failcodes.commands`; a judge's in :class:`failcodes.commands.judge.JudgeOptions`).
Nothing here imports the data layer or the judge: every subcommand imports this module, and
``failcodes metrics`` paid ~0.3 CPU-s at start-up for the judge package it never used.
"""

from __future__ import annotations

import inspect
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console


def raw_csv_cells(raw: bool) -> None:
    """``--raw-csv``: this command writes CSV cells as they are (see failcodes.csvcells)."""
    if raw:
        from failcodes.csvcells import keep_raw

        keep_raw()


# CSV cells as they are (no quote before a formula-leading text): every command writing CSV.
RawCsvOpt = Annotated[
    bool,
    typer.Option(
        "--raw-csv",
        help="Write CSV cells as they are. By default a text cell beginning with =, +, -, @, "
        "a tab or a carriage return gets a ' in front so a spreadsheet shows it as text and "
        "does not run it as a formula (OWASP); failcodes' readers take it off.",
    ),
]
#: ``--raw-csv`` as an extra option of a request's command (``request_command(extra=...)``).
RAW_CSV = inspect.Parameter(
    "raw_csv", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=RawCsvOpt
)


def data_console(**kwargs: Any) -> Console:
    """A console for text that comes from data: rich markup, emoji codes and highlighting off.

    A model named ``openai:m`` or a code ``[red]`` prints as written (rich drew ``:m...:`` as
    an emoji and ate ``[...]`` as markup).
    """
    from rich.console import Console  # imported here: `ingest` prints no tables

    return Console(markup=False, emoji=False, highlight=False, **kwargs)


def make_console() -> Console:
    """A console for tables: the terminal's width, or 200 columns when piped (data-safe)."""
    return data_console() if sys.stdout.isatty() else data_console(width=200)
