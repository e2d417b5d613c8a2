"""Root of the CLI. Each subcommand lives in its own module and registers itself here.

This is the only layer that parses arguments and prints; it turns a
:class:`~failcodes.errors.FailcodesError` into one line on stderr and exit code 2.
"""

from __future__ import annotations

import errno
import gc
import importlib
import importlib.util
import inspect
import os
import signal
import stat
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import NoReturn

import typer

from failcodes import __version__
from failcodes.csvcells import raw_cells
from failcodes.deferredimport import defer_while_importing
from failcodes.errors import FailcodesError
from failcodes.redact import redact_text

# typer.rich_utils (imported by typer to draw any help or error box) imports rich.markdown
# (markdown_it, pygments) for the "markdown" markup mode and rich.traceback (rich.pretty,
# attrs) for pretty exceptions. failcodes draws help in the default "rich" markup mode with
# pretty exceptions off (below), so neither is called; importing them was a third of
# `failcodes --help`: 672 -> 457 M instructions without them, the same text (issue 30).
defer_while_importing(
    "typer.rich_utils", {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}
)
# pydantic's plugin loader imports importlib.metadata (email, zipfile, csv...) for
# ``entry_points``, which it calls only to look for plugins: main() turns that search off
# (PYDANTIC_DISABLE_PLUGINS), so the import is deferred to a call that does not come.
# Every command that builds a model paid it: 1,205 -> 1,164 M instructions for
# `ingest generic-labels` of bench_study's 1x labels (issue 30).
defer_while_importing("pydantic.plugin._loader", {"importlib.metadata": "entry_points"})

app = typer.Typer(
    name="failcodes",
    help="Diagnose why a medical fact-checking pipeline disagrees with clinicians.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def command_group(name: str, summary: str) -> typer.Typer:
    """Add the subcommand group ``failcodes NAME``; called bare, it lists its commands."""
    group = typer.Typer(help=summary, no_args_is_help=True)
    app.add_typer(group, name=name)
    return group


@app.callback()
def _root() -> None:
    """failcodes: error codebooks, judges, review and statistics for fact-checking pipelines."""


@app.command("version")
def version() -> None:
    """Print the failcodes version."""
    typer.echo(__version__)


def register_commands() -> None:
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
        init,
        judge,
        labelstudio,
        metrics,
        recode,
        report,
        review,
        rtv,
        run,
        saturate,
        schema,
    )


#: ``failcodes --help`` lists these, in the order of the workflow, without importing a single
#: command module (importing them all took ~1.3 s and 140 MB: pandas, scipy, the SDKs). Each
#: is the first paragraph of the command's own help; tests/test_cli_startup.py checks that
#: they match and that no command is missing.
COMMAND_SUMMARIES: dict[str, str] = {
    "init": "Create a study folder: failcodes.toml, the codebook, and one folder per step.",
    "run": "Run the pending steps of a study in order (finished ones are skipped; resumable).",
    "ingest": "Read PATH... with ADAPTER and write failcodes traces/labels (format by extension).",
    "metrics": "Precision, recall, F1, specificity, balanced accuracy, Youden J, accuracy per "
    "system.",
    "compare": "Cochran's Q, pairwise McNemar and F1/recall differences, all Holm-adjusted.",
    "disagreements": "Every sentence where a system's mapped verdict differs from the clinical "
    "label.",
    "codebook": "Codebooks as code: validate, show, diff, render as a table, JSON Schema.",
    "judge": "Code retrieved passages (retrieval) or verifier reasoning (reasoning) with a judge.",
    "cache": "Inspect and trim the judge's response cache.",
    "attribute": "Attribute each disagreement to retrieval, provided evidence or verification.",
    "labelstudio": "Review judge codes in Label Studio: serve, config, tasks, push, pull, import.",
    "review": "Human review sampling plans: draw the units to review, follow the review.",
    "agree": "Agreement coefficients with confidence intervals (undefined ones say why).",
    "saturate": "Human-in-the-loop saturation: grow the codebook round by round until nothing new.",
    "recode": "Re-code what a codebook bump touched in the study's judge runs; migrate the rest.",
    "report": "Write paper tables (md, tex, csv), figures (png, pdf) and index.html for a run.",
    "demo": "Run every demo step offline on the bundled data (no API key, no network).",
    "rtv": "Chunk, BM25-retrieve and verify model outputs against their source documents.",
    "benchmark": "Closed-benchmark evaluators: SciFact official metrics, evidence P/R@k, "
    "seed-003 atomic fact-check metrics.",
    "schema": "Print the JSON Schema of a failcodes model (see the NAME argument for the list).",
}


def _top_level_help(argv: list[str]) -> bool:
    """``failcodes``, ``failcodes --help``: the command list only."""
    return not argv or argv == ["--help"]


def _list_commands() -> None:
    """Register a help-only stand-in per command (see :data:`COMMAND_SUMMARIES`)."""
    for name, summary in COMMAND_SUMMARIES.items():
        app.command(name, help=summary, add_help_option=False)(_stand_in)


def _stand_in() -> None:  # pragma: no cover - only listed, never run
    """A command listed by ``failcodes --help``; running it imports the real one."""


def _register_only(argv: list[str]) -> bool:
    """Import just the module of the subcommand being run (fast start-up); False if unsure.

    ``failcodes NAME ...`` where ``failcodes/cli/NAME.py`` registers a command or group called
    NAME needs only that module: importing all of them costs ~7x the CPU (scipy, pandas...),
    which every CLI call and subprocess test would pay. Anything else (``--help``, no
    arguments, a module that does not register NAME) falls back to :func:`register_commands`.
    """
    name = next((a for a in argv if not a.startswith("-")), None)
    if name is None or not name.isidentifier() or name.startswith("_") or name == "main":
        return False
    if any(c.name == name for c in app.registered_commands):  # defined here: `version`
        return True
    module = f"failcodes.cli.{name}"
    try:
        if importlib.util.find_spec(module) is None:
            return False
    except ModuleNotFoundError:  # pragma: no cover - defensive
        return False
    importlib.import_module(module)
    return any(c.name == name for c in app.registered_commands) or any(
        g.name == name for g in app.registered_groups
    )


def _reflow(doc: str) -> str:
    """A command's docstring as its help: each paragraph one line, so the terminal wraps it.

    Typer keeps a paragraph's line breaks, which leaves ragged help; a paragraph holding a
    list (``- item``) keeps them. Square brackets are escaped (``[judge].args`` is no markup).
    """
    from rich.markup import escape

    out = []
    for paragraph in inspect.cleandoc(doc).split("\n\n"):
        lines = paragraph.splitlines()
        if any(line.lstrip().startswith(("- ", "* ", "\b")) for line in lines):
            out.append(paragraph)
        else:
            out.append(" ".join(line.strip() for line in lines))
    return escape("\n\n".join(out))


def _reflow_help(group: typer.Typer) -> None:
    """Re-flow the help of every command of ``group`` and of its subgroups (see _reflow)."""
    for info in group.registered_commands:
        doc = info.help or (inspect.getdoc(info.callback) if info.callback else None)
        if doc:
            info.help = _reflow(doc)
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _reflow_help(sub.typer_instance)


def _terminate_like_interrupt(signum: int, frame: FrameType | None) -> None:  # noqa: ARG001
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


def _path_problem(args: list[str]) -> str | None:
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


def _repeated_option(command: object, args: list[str]) -> str | None:
    """An option that takes one value given twice with two values, if any (one line).

    The parser keeps the last value of an option that takes one: ``metrics --labels a.jsonl
    --labels b.jsonl`` read b's labels alone, a's sentences left out without a word (sysA's
    3 labelled sentences, 2 of them errors, scored as if unlabelled: "no clinician-labelled
    errors", exit 0); ``ingest generic --label-rule 'gold = bad -> error' --label-rule 'gold =
    partial -> error'`` labelled by the second rule alone (bad rows no error). The same value
    twice is harmless.
    """
    path: list[str] = []
    rest = list(args)
    while isinstance(getattr(command, "commands", None), dict):
        index = next((i for i, a in enumerate(rest) if not a.startswith("-")), None)
        if index is None or rest[index] not in command.commands:  # type: ignore[attr-defined]
            return None
        command = command.commands[rest[index]]  # type: ignore[attr-defined]
        path.append(rest[index])
        rest = rest[index + 1 :]
    valued: set[str] = set()
    single: dict[str, str] = {}
    paths: set[str] = set()
    for param in getattr(command, "params", ()):
        if param.param_type_name != "option" or param.is_flag or param.count:
            continue
        valued.update(param.opts)
        if not param.multiple:
            single.update(dict.fromkeys(param.opts, param.opts[-1]))
            descriptor = getattr(param, "type_descriptor", None)
            if getattr(descriptor, "annotation", None) is Path:
                paths.add(param.opts[-1])
    given: dict[str, list[str]] = {}
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--":
            break
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if not eq and arg in valued:
            value = rest[i + 1] if i + 1 < len(rest) else ""
            i += 1
        if name in single:
            given.setdefault(single[name], []).append(value)
        i += 1
    for name, values in given.items():
        if len(set(values)) > 1:
            shown = ", ".join(repr(v) for v in values)
            join = {
                "--labels": " (several label files: join them into one)",
                "--label-rule": " (one rule of several clauses: join them with ';')",
            }.get(name, "")
            return (
                f"{' '.join(path)}: {name} takes one {'path' if name in paths else 'value'} "
                f"and was given {len(values)} ({shown}): only the last would be used; give "
                f"one{join}"
            )
    return None


def _process_defaults() -> None:
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


def main(argv: list[str] | None = None, *, gc_paused: bool = False) -> None:
    """Run the CLI; user errors exit 2 with one line, bugs keep their traceback.

    ``gc_paused``: the garbage collector was disabled for start-up (failcodes.cli.start);
    the objects start-up made are frozen (never collected: they live as long as the
    process) and collection resumes before the command runs.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate_like_interrupt)
    args = sys.argv[1:] if argv is None else argv
    _process_defaults()
    if _top_level_help(args):
        _list_commands()
    elif not _register_only(args):
        register_commands()
    if "--help" in args:
        _reflow_help(app)
    if gc_paused:
        gc.freeze()
        gc.enable()
    problem = _path_problem(args)
    if problem is not None:
        typer.echo(f"failcodes: error: {redact_text(problem)}", err=True)
        sys.exit(2)
    try:
        # not standalone: a bad option value is one line too (typer draws a usage box)
        with raw_cells(False):  # --raw-csv holds for this command only
            command = typer.main.get_command(app)
            repeated = _repeated_option(command, args)
            if repeated is not None:
                typer.echo(f"failcodes: error: {redact_text(repeated)}", err=True)
                sys.exit(2)
            code = command(args=args, standalone_mode=False)
    except typer.TyperException as exc:  # typer's ClickException family: a bad command line
        _command_line_error(exc)
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        sys.exit(1)
    except FailcodesError as exc:
        typer.echo(f"failcodes: error: {redact_text(exc.one_line())}", err=True)
        sys.exit(2)
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # `failcodes ... | head`: as typer's standalone mode
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        # the one safety net for the file system (permission denied, read-only, full disk):
        # a file-system error that names its file is the user's to fix, not a bug
        if exc.filename is None:
            raise
        reason = (exc.strerror or str(exc)).lower()
        typer.echo(
            f"failcodes: error: {redact_text(str(exc.filename))}: {reason}; "
            "check the path and its permissions",
            err=True,
        )
        sys.exit(2)
    # always exit, as typer's standalone mode did: 0, typer.Exit(n), or 130 after Ctrl-C
    sys.exit(code if isinstance(code, int) else 0)


def _command_line_error(exc: typer.TyperException) -> NoReturn:
    """A bad option or argument (exit code 2) as one line; anything else as typer shows it.

    Typer's standalone mode draws a usage box of several lines for ``--top-k 0``; the help a
    bare command group shows (NoArgsIsHelpError) stays as it was.
    """
    code = int(getattr(exc, "exit_code", 1))
    message = getattr(exc, "format_message", None)
    if code == 2 and message is not None and type(exc).__name__ != "NoArgsIsHelpError":
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else "failcodes"
        text = " ".join(str(message()).split())
        typer.echo(f"failcodes: error: {where}: {text} (see --help)", err=True)
        sys.exit(2)
    from typer import rich_utils

    rich_utils.rich_format_error(exc)  # type: ignore[arg-type]
    sys.exit(code)
