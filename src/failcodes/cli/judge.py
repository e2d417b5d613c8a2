"""``failcodes judge retrieval|reasoning``: code passages or reasoning traces with a judge.

Thin: the options are :class:`failcodes.commands.judge.JudgeRequest`'s fields; this module
shows a progress bar while the request runs and prints its result.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from failcodes.cli.main import command_group
from failcodes.cli.options import data_console
from failcodes.cli.output_format import FORMAT_PARAM, OutputFormat, require_format
from failcodes.cli.requests import request_command
from failcodes.commands.judge import JudgeRequest, JudgeResult
from failcodes.units import UnitKind

judge_app = command_group("judge")


def _run(request: JudgeRequest, err: Console) -> JudgeResult:
    """Run the request with a progress bar (its notes, a budget stop's summary too, on ``err``)."""
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not err.is_terminal,
    )
    with progress:
        task = progress.add_task(f"judging {request.kind.value}", total=None)

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        def note(line: str) -> None:
            err.print(line, highlight=False)

        return request.run(note=note, on_progress=on_progress)


def _print(result: JudgeResult, fmt: OutputFormat, out: Console) -> None:
    from failcodes.judge import summary_json

    if fmt is OutputFormat.JSON:
        if result.panel is not None:
            out.print_json(result.panel.model_dump_json())
        elif result.members:
            out.print_json(data=[e.model_dump(mode="json") for e in result.estimates])
        elif result.estimate is not None:
            out.print_json(result.estimate.model_dump_json())
        elif result.summary is not None:
            out.print_json(summary_json(result.summary))
    else:
        for line in result.lines():
            out.print(line, highlight=False)


def _handle(request: JudgeRequest, fmt: OutputFormat) -> None:
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="judge")
    out = data_console(soft_wrap=True)
    err = data_console(stderr=True, soft_wrap=True)
    _print(_run(request, err), fmt, out)


def _register(kind: UnitKind, name: str, doc: str) -> None:
    command: Any = request_command(
        JudgeRequest, _handle, fixed={"kind": kind}, extra=[FORMAT_PARAM], doc=doc
    )
    judge_app.command(name)(command)


_register(
    UnitKind.RETRIEVAL,
    "retrieval",
    "Code every (claim, passage) pair: evidence quality on each retrieval dimension.",
)
_register(
    UnitKind.VERIFICATION,
    "reasoning",
    "Code every verifier reasoning trace: each verification step.",
)
