"""``failcodes run STUDY``: run a study's pending steps in order, with a progress bar per step.

Each step is an ordinary ``failcodes`` command line (``failcodes run STUDY --plan`` prints
them); it runs in-process exactly as typed, its output goes to
``STUDY/.failcodes/logs/<step>.log``, and a finished step is skipped next time (see
:mod:`failcodes.study.runner`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from failcodes.cli.main import app
from failcodes.cli.options import data_console
from failcodes.errors import ConfigError, FailcodesError, InputError
from failcodes.runlock import folder_lock
from failcodes.study.layout import STUDY_FILE, StudyLayout
from failcodes.study.runner import log_path
from failcodes.study.steps import Step


def execute_step(step: Step, log: Path | None = None) -> None:
    """Run one step's command in this process, as ``failcodes ARGV...`` would; output to ``log``.

    A user error inside the command propagates as the :class:`FailcodesError` it raised; a
    command line the command rejects (e.g. a bad option in the study file) is a ConfigError.
    """
    from failcodes.cli.main import register_commands

    register_commands()
    with contextlib.ExitStack() as stack:
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            fh = stack.enter_context(log.open("w", encoding="utf-8"))
            stack.enter_context(contextlib.redirect_stdout(fh))
            stack.enter_context(contextlib.redirect_stderr(fh))
        try:
            code = app(args=list(step.argv), prog_name="failcodes", standalone_mode=False)
        except typer.TyperException as exc:  # typer's own click: ClickException and kin
            show = getattr(exc, "format_message", None)
            message = show() if show is not None else str(exc)
            raise ConfigError(f"{step.command()}: {message}") from None
        except typer.Abort:
            raise ConfigError(f"{step.name}: aborted") from None
    if isinstance(code, int) and code != 0:
        raise ConfigError(f"step {step.name!r} exited with code {code} (log: {log})")


def unknown_option(command: str, args: list[str]) -> str | None:
    """The first option in ``args`` that ``failcodes COMMAND`` does not have, if any.

    ``command`` is ``ingest`` or ``judge retrieval``; a value after an option that takes one
    is skipped (``--temperature -1``).
    """
    from typer.main import get_command

    from failcodes.cli.main import register_commands

    register_commands()
    found: Any = get_command(app)
    for name in command.split():
        found = found.commands[name]
    params = {o: p for p in found.params for o in (*p.opts, *p.secondary_opts)}
    value_next = False
    for arg in args:
        if value_next:
            value_next = False
            continue
        if not arg.startswith("-") or arg == "-":
            continue
        name, eq, _ = arg.partition("=")
        param = params.get(name)
        if param is None:
            return name
        value_next = not eq and not getattr(param, "is_flag", False)
    return None


def check_step_args(config: Any, root: Path) -> None:
    """Refuse an option a step's command does not have (``args`` of the study file) at load.

    It failed in its step, after the steps before it had run and written their outputs.
    """
    from failcodes.study.config import field_error

    wanted: list[tuple[tuple[int | str, ...], str, list[str]]] = [
        (("datasets", i, "ingest", j, "args"), "ingest", spec.args)
        for i, ds in enumerate(config.datasets)
        for j, spec in enumerate(ds.ingest)
    ]
    wanted += [
        (("judge", "args"), f"judge {kind}", config.judge.args) for kind in config.judge.kinds
    ]
    for loc, command, args in wanted:
        bad = unknown_option(command, args) if args else None
        if bad is not None:
            raise field_error(
                root, loc, f"{bad!r}: `failcodes {command}` has no such option (see its --help)"
            )


@app.command("run")
def run(
    study: Annotated[Path, typer.Argument(help="The study folder (with failcodes.toml).")],
    plan: Annotated[
        bool,
        typer.Option("--plan", help="Print the steps' commands (finished ones marked); run none."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Run every step, finished or not.")
    ] = False,
) -> None:
    """Run the pending steps of a study in order (finished ones are skipped; resumable)."""
    from failcodes.study.config import check_input_paths, load_study
    from failcodes.study.runner import Outcome, is_finished, load_state, run_steps
    from failcodes.study.steps import plan_notes, plan_study

    if study.is_file():  # the study file itself: its folder is the study
        if study.name != STUDY_FILE:
            raise InputError(
                f"is a file; give the study folder (the one holding {STUDY_FILE})", path=study
            )
        study = study.parent
    layout = StudyLayout.of(study)
    config = load_study(layout.root)
    # before the lock, the state or any step; a plan reads the codebook only
    check_input_paths(config, layout.root, inputs=not plan)
    check_step_args(config, layout.root)
    steps = plan_study(config, layout)
    if plan:
        state = load_state(layout)
        for step in steps:
            done = not force and is_finished(step, layout, state)
            typer.echo(step.command() + ("  # finished" if done else ""))
        for note in plan_notes(config, layout):
            typer.echo(f"# {note}")
        return
    err = data_console(stderr=True)
    progress = Progress(
        SpinnerColumn(finished_text="[green]✓"),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=err,
        disable=not err.is_terminal,
    )
    tasks = {s.name: progress.add_task(s.name, total=1, start=False, status="") for s in steps}
    ran = skipped = 0
    current: list[Step] = []

    def task_of(step: Step) -> TaskID:
        if step.name not in tasks:
            tasks[step.name] = progress.add_task(step.name, total=1, start=False, status="")
        return tasks[step.name]

    def on_start(step: Step) -> None:
        current[:] = [step]
        progress.start_task(task_of(step))
        progress.update(task_of(step), status="running")

    with folder_lock(layout.root, what="study"), progress:
        try:
            for result in run_steps(
                lambda: plan_study(config, layout),
                layout,
                lambda s: execute_step(s, log_path(layout, s)),
                force=force,
                on_start=on_start,
            ):
                task = task_of(result.step)
                if result.outcome is Outcome.SKIPPED:
                    skipped += 1
                    progress.update(task, completed=1, status="finished earlier")
                else:
                    ran += 1
                    progress.update(task, completed=1, status="done")
                if not err.is_terminal:
                    what = "skipped (finished)" if result.outcome is Outcome.SKIPPED else "done"
                    typer.echo(f"{result.step.name}: {what}")
        except FailcodesError as exc:
            if not current:
                raise
            step = current[0]
            progress.update(task_of(step), status="[red]failed")
            # one line: the step's own error, then which step and where its output is
            raise FailcodesError(
                f"{exc.one_line()} (step {step.name!r} failed; its output: "
                f"{log_path(layout, step)})"
            ) from exc
    index = layout.report_dir / "index.html"
    typer.echo(f"{ran} step(s) run, {skipped} already finished; report: {index}")
