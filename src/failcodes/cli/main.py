"""Root of the CLI. Each subcommand lives in its own module and registers itself here.

This is the only layer that parses arguments and prints; it turns a
:class:`~failcodes.errors.FailcodesError` into one line on stderr and exit code 2.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import inspect
import signal
import sys
import threading
from pathlib import Path
from typing import NoReturn

import typer

from failcodes import __version__
from failcodes.commandline import (
    one_line_errors,
    path_problem,
    process_defaults,
    say_error,
    terminate_like_interrupt,
)
from failcodes.csvcells import raw_cells
from failcodes.deferredimport import defer_while_importing

# typer.rich_utils (imported by typer to draw any help or error box) imports rich.markdown
# (markdown_it, pygments) for the "markdown" markup mode and rich.traceback (rich.pretty,
# attrs) for pretty exceptions. failcodes draws help in the default "rich" markup mode with
# pretty exceptions off (below), so neither is called; importing them was a third of
# `failcodes --help`: 672 -> 457 M instructions without them, the same text (issue 30).
defer_while_importing(
    "typer.rich_utils", {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}
)

app = typer.Typer(
    name="failcodes",
    help="Diagnose why a medical fact-checking pipeline disagrees with clinicians.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def command_group(name: str) -> typer.Typer:
    """Add the group ``failcodes NAME`` (help: COMMAND_SUMMARIES); bare, it lists its commands."""
    group = typer.Typer(help=COMMAND_SUMMARIES[name], no_args_is_help=True)
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


#: How to give one value where a repeated option was meant to give several.
_JOIN_HINTS = {
    "--labels": " (several label files: join them into one)",
    "--label-rule": " (one rule of several clauses: join them with ';')",
}


def _repeated_option(
    command: object, args: list[str], notes: list[str] | None = None
) -> str | None:
    """An option that takes one value given twice with two values, if any (one line).

    The parser keeps the last value of an option that takes one:
    ``metrics --labels a.jsonl --labels b.jsonl`` read b's labels alone, a's sentences left out;
    two ``--label-rule`` options labelled by the second rule alone. The same value twice is
    harmless; for a file it is said in ``notes`` (``--labels a.jsonl --labels a.jsonl`` read a
    once, silently: a second file meant, the first typed again?).
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
        if name in paths and len(values) > 1 and len(set(values)) == 1 and notes is not None:
            times = "twice" if len(values) == 2 else f"{len(values)} times"
            notes.append(f"note: {name}: {values[0]} is given {times}; read once")
        if len(set(values)) > 1:
            shown = ", ".join(repr(v) for v in values)
            join = _JOIN_HINTS.get(name, "")
            return (
                f"{' '.join(path)}: {name} takes one {'path' if name in paths else 'value'} "
                f"and was given {len(values)} ({shown}): only the last would be used; give "
                f"one{join}"
            )
    return None


def main(argv: list[str] | None = None, *, gc_paused: bool = False) -> None:
    """Run the CLI; user errors exit 2 with one line, bugs keep their traceback.

    ``gc_paused``: the garbage collector was disabled for start-up (failcodes.cli.start);
    the objects start-up made are frozen (never collected: they live as long as the
    process) and collection resumes before the command runs.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, terminate_like_interrupt)
    args = sys.argv[1:] if argv is None else argv
    process_defaults()
    if not args or args == ["--help"]:  # the command list only: a help-only stand-in each
        for name, summary in COMMAND_SUMMARIES.items():
            app.command(name, help=summary, add_help_option=False)(_stand_in)
    elif not _register_only(args):
        register_commands()
    if "--help" in args:
        _reflow_help(app)
    if gc_paused:
        gc.freeze()
        gc.enable()
    problem = path_problem(args)
    if problem is not None:
        say_error(problem)
        sys.exit(2)
    try:
        # not standalone: a bad option value is one line too (typer draws a usage box)
        with one_line_errors(), raw_cells(False):  # --raw-csv holds for this command only
            command = typer.main.get_command(app)
            twice: list[str] = []
            repeated = _repeated_option(command, args, twice)
            if repeated is not None:
                say_error(repeated)
                sys.exit(2)
            for line in twice:
                typer.echo(line, err=True)
            # prog_name: messages and usage say `failcodes rtv`, run as `python -m failcodes`
            # too (click took argv[0]: '__main__.py rtv: Invalid value ...', 'pytest rtv')
            code = command(args=args, prog_name="failcodes", standalone_mode=False)
    except typer.TyperException as exc:  # typer's ClickException family: a bad command line
        _command_line_error(exc)
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        sys.exit(1)
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
