"""Root of the CLI. Each subcommand lives in its own module and registers itself here.

This is the only layer that parses arguments and prints; it turns a
:class:`~failcodes.errors.FailcodesError` into one line on stderr and exit code 2.
"""

from __future__ import annotations

import sys

import typer

from failcodes import __version__
from failcodes.errors import FailcodesError

app = typer.Typer(
    name="failcodes",
    help="Diagnose why a medical fact-checking pipeline disagrees with clinicians.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """failcodes: error codebooks, judges, review and statistics for fact-checking pipelines."""


@app.command("version")
def version() -> None:
    """Print the failcodes version."""
    typer.echo(__version__)


def _register() -> None:
    """Attach the subcommand modules (imported here to keep start-up in one place)."""
    # Subcommand modules add themselves to ``app`` on import, e.g.:
    # from failcodes.cli import ingest
    from failcodes.cli import (  # noqa: F401
        agree,
        attribute,
        benchmark,
        cache,
        codebook,
        compare,
        demo,
        disagreements,
        ingest,
        judge,
        metrics,
        report,
        rtv,
        saturate,
        schema,
    )


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; user errors exit 2 with one line, bugs keep their traceback."""
    _register()
    try:
        app(args=argv)
    except FailcodesError as exc:
        typer.echo(f"failcodes: error: {exc.one_line()}", err=True)
        sys.exit(2)
