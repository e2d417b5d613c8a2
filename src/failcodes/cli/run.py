"""``failcodes run STUDY``: run a study's pending steps in order, with a progress bar per step.

Each step holds a command's request (``failcodes run STUDY --plan`` prints each as the
command line that runs it); it runs in this process through
:func:`failcodes.study.runner.run_study` (as ``failcodes.run_study`` does), its output goes
to ``STUDY/.failcodes/logs/<step>.log``, and a finished step is skipped next time.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from failcodes.cli.main import app
from failcodes.cli.options import RawCsvOpt, data_console, raw_csv_cells
from failcodes.redact import redact_text

if TYPE_CHECKING:
    from rich.console import Console

    from failcodes.study.runner import StepResult
    from failcodes.study.steps import Step


def _plan(study: Path, force: bool) -> None:
    """Print the steps' commands (finished ones marked) and why others are not planned."""
    from failcodes.study.runner import plan_run

    for line in plan_run(study, force=force).lines():
        typer.echo(line)


class _Bar:
    """A study run's progress bar on stderr: a line per step when stderr is no terminal."""

    def __init__(self, err: Console) -> None:
        self.err = err
        self.progress = Progress(
            SpinnerColumn(finished_text="[green]✓"),
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=err,
            disable=not err.is_terminal,
        )
        self._tasks: dict[str, TaskID] = {}

    def task_of(self, step: Step) -> TaskID:
        """The bar's task of ``step``, added when first asked for."""
        if step.name not in self._tasks:
            self._tasks[step.name] = self.progress.add_task(
                step.name, total=1, start=False, status=""
            )
        return self._tasks[step.name]

    def on_start(self, step: Step) -> None:
        """``step`` has started."""
        self.progress.start_task(self.task_of(step))
        self.progress.update(self.task_of(step), status="running")

    def on_result(self, result: StepResult) -> None:
        """A step has finished (or was finished earlier)."""
        from failcodes.study.runner import Outcome

        skipped = result.outcome is Outcome.SKIPPED
        status = "finished earlier" if skipped else "done"
        self.progress.update(self.task_of(result.step), completed=1, status=status)
        if not self.err.is_terminal:
            what = "skipped (finished)" if skipped else "done"
            typer.echo(redact_text(f"{result.step.name}: {what}"))


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
    raw_csv: RawCsvOpt = False,
) -> None:
    """Run the pending steps of a study in order (finished ones are skipped; resumable)."""
    # imported here: the study's steps import every command (numpy, pydantic models...),
    # which `run --help` does not need
    from failcodes.study.layout import StudyLayout
    from failcodes.study.runner import Outcome, StepFailedError, run_study, study_folder

    raw_csv_cells(raw_csv)
    study = study_folder(study)
    if plan:
        _plan(study, force)
        return
    err = data_console(stderr=True)
    bar = _Bar(err)
    progress = bar.progress
    with progress:
        try:
            # what a step says beyond its log (the report's figure labels the fonts cannot
            # draw) on stderr, the line `failcodes report` prints; through the progress bar's
            # console, which writes it above the live bar (unwrapped: one line)
            results = run_study(
                study,
                force=force,
                on_start=bar.on_start,
                on_result=bar.on_result,
                say=lambda line: err.print(line, soft_wrap=True),
            )
        except StepFailedError as exc:
            progress.update(bar.task_of(exc.step), status="[red]failed")
            raise
    skipped = sum(r.outcome is Outcome.SKIPPED for r in results)
    index = StudyLayout.of(study).report_dir / "index.html"
    typer.echo(f"{len(results) - skipped} step(s) run, {skipped} already finished; report: {index}")
