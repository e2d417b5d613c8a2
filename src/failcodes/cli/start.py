"""The console entry point: ``failcodes version`` is answered before the CLI is built.

Building the typer app imports typer and, through typer's parameter coercion, pydantic:
~600 M instructions, 15x what ``version`` prints needs (issue 30). A ``metrics`` command
line writing rows and an ``ingest`` one run without it (:mod:`failcodes.cli.direct`); any
other command line runs :func:`failcodes.cli.main.main`.
"""

from __future__ import annotations

import gc
import os
import sys


def main() -> None:
    """Run the CLI (``failcodes version`` without it)."""
    if sys.argv[1:] == ["version"]:
        from failcodes import __version__

        try:
            sys.stdout.write(f"{__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # `failcodes version | false`: as the CLI does
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        sys.exit(0)
    # start-up (the CLI's modules, the command's) allocates hundreds of thousands of objects
    # that live as long as the process: collecting them over and over while they are made
    # found nothing to free. Collection resumes, with them frozen, before the command runs
    # (failcodes.cli.main.main).
    gc.disable()
    if sys.argv[1:2] in (["metrics"], ["ingest"]):  # read without typer (cli/direct.py)
        from failcodes.cli import direct

        direct.run(sys.argv[1:])  # exits, unless the command line is typer's to read
    from failcodes.cli.main import main as run

    run(gc_paused=True)
