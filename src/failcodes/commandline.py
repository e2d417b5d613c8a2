"""What the CLI does around every command, without typer (``failcodes metrics`` runs on it alone).

The process's settings (:func:`process_defaults`), SIGTERM as Ctrl-C, the check of paths on
the command line before anything is read (:func:`path_problem`) and the one-line errors of a
command (:func:`one_line_errors`): :mod:`failcodes.cli.main` uses them around typer, and
:mod:`failcodes.cli.direct` around a command line it parses itself (issue 30).
"""

from __future__ import annotations

import errno
import os
import re
import signal
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from failcodes.deferredimport import defer_while_importing
from failcodes.errors import FailcodesError, FileSystemError
from failcodes.redact import redact_text

# pydantic's plugin loader imports importlib.metadata (email, zipfile, csv...) for
# ``entry_points``, which it calls only to look for plugins: process_defaults() turns that
# search off (PYDANTIC_DISABLE_PLUGINS), so the import is deferred to a call that does not come.
# Every command that builds a model paid it: 1,205 -> 1,164 M instructions for
# `ingest generic-labels` of bench_study's 1x labels (issue 30).
defer_while_importing("pydantic.plugin._loader", {"importlib.metadata": "entry_points"})

#: An ANSI escape sequence (colour, cursor): taken off what goes to a file or pipe.
_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


def echo(text: str, *, err: bool = False) -> None:
    """``text`` and a newline on stdout (stderr), as ``typer.echo`` writes it.

    ANSI escape sequences (a file name may hold one) are kept for a terminal only.
    """
    stream = sys.stderr if err else sys.stdout
    line = f"{text}\n"
    stream.write(line if stream.isatty() else _ANSI.sub("", line))
    stream.flush()


def say_error(text: str) -> None:
    """``failcodes: error: TEXT`` on stderr (URLs in it redacted)."""
    echo(f"failcodes: error: {redact_text(text)}", err=True)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """A :class:`FailcodesError` or a file-system error naming its file: one line, exit 2.

    A broken pipe (``failcodes ... | head``) exits 1 without a word, as typer's standalone
    mode does; a file-system error that names no file is a bug and keeps its traceback.
    """
    try:
        yield
    except FailcodesError as exc:
        say_error(exc.one_line())
        sys.exit(2)
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        # the one safety net for the file system (permission denied, read-only, full disk):
        # a file-system error that names its file is the user's to fix, not a bug
        if exc.filename is None:
            raise
        say_error(FileSystemError(exc).one_line())
        sys.exit(2)


def process_defaults() -> None:
    """Settings read when a library is first imported, set before any command runs."""
    # Arrow's default allocator (mimalloc) keeps the pages of freed batches: the Parquet
    # scans stream batch by batch, and the system allocator returns them (~17 MB less
    # peak memory for metrics from Parquet, at paper scale and at 10x; issue 18). Read
    # when pyarrow is first imported, so set before any command runs; a user's choice wins.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    # numpy's OpenBLAS on one thread: the bootstrap's matrix products are blocks of at most
    # 2**18 weights, too small to share, and idle BLAS threads spin between the calls.
    # metrics --bootstrap 2000 of the tool's own Parquet, 2 cores at load 5: 1.7 -> 1.4 CPU-s
    # at paper scale, 19-23 -> 5.5-6.6 CPU-s (and 20-46 -> 10-14 s wall) at 10x; the
    # output byte-identical (each product's sums run in the same order). Read when numpy is
    # first imported; a user's choice wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # no pydantic plugin search (every installed package's entry points read): none is used
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def terminate_like_interrupt(signum: int, frame: FrameType | None) -> None:  # noqa: ARG001
    """SIGTERM does what Ctrl-C does: whatever SIGINT handler is current runs.

    Inside ``asyncio.run`` that is the runner's handler (cancel the main task, so a judge run
    commits, exports ``annotations.jsonl`` and ``summary.json`` and stops); elsewhere it raises
    :class:`KeyboardInterrupt`.
    """
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt


#: Options whose value is written, not read: a FIFO or /dev/null there is the user's choice.
_WRITTEN = frozenset({"-o", "--out", "--output", "--labels-out", "--sentences-out", "--cache"})
#: Options naming a path to write: an empty value (an unset shell variable) would mean ".".
_PATHS_OUT = _WRITTEN | {"--dir"}


def path_problem(args: list[str]) -> str | None:
    """An output option given an empty value, or an input that is a FIFO or device, if any."""
    empty = _empty_output(args)
    if empty is not None:
        return (
            f"{empty} '': an empty path (an unset shell variable?); name the file or folder "
            "to write"
        )
    special = _special_input(args)
    if special is not None:
        return f"{special}: not a regular file (a FIFO, socket or device); give a file"
    return None


#: Commands whose first argument is a folder they create: ``init ""`` made the working folder
#: a study (an unset shell variable).
_CREATES_FOLDER = frozenset({"init"})


def _empty_output(args: list[str]) -> str | None:
    """The output option given an empty value (``-o ""``, ``--output=``), if any."""
    if args and args[0] in _CREATES_FOLDER:
        rest = args[1:]
        values = {i + 1 for i, a in enumerate(rest) if a == "--name"}  # the option's value
        first = next(
            (a for i, a in enumerate(rest) if i not in values and not a.startswith("-")), None
        )
        if first is not None and not first.strip():
            return f"{args[0]} FOLDER"
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if eq and name in _PATHS_OUT and not value.strip():
            return name
        if arg in _PATHS_OUT and i + 1 < len(args) and not args[i + 1].strip():
            return arg
    return None


def _special_input(args: list[str]) -> str | None:
    """The first argument naming a FIFO, socket or device (not an output option's value).

    Opening a FIFO for reading waits for a writer (the command hung without a word), and a
    device reads as an empty file or forever; every input of failcodes is a regular file or
    a folder.
    """
    written = False
    for arg in args:
        if arg == "--":
            written = False
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg.startswith("-") and not eq:
            written = arg in _WRITTEN
            continue
        if eq:
            candidate, skip = value, name in _WRITTEN
        else:
            candidate, skip, written = arg, written, False
        if skip or not candidate:
            continue
        try:
            mode = Path(candidate).stat().st_mode
        except (OSError, ValueError):
            continue
        if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
            return candidate
    return None
