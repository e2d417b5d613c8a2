"""Run a study's steps in order, skipping the ones already finished (``failcodes run``).

A step is finished when its outputs exist and ``.failcodes/run.json`` records the fingerprint
it ran with (:mod:`failcodes.study.state`). Change an input (or the study file, which changes a
request) and that step and the ones whose inputs it rewrites run again; the judge steps resume
from their journal (only units not yet coded are judged).

Each step runs in this process (:func:`run_request`): its request's ``run()``, with what it
says and its result's lines written to the step's log. ``failcodes run`` and
``failcodes.run_study`` run the same requests the same way.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from failcodes.csvcells import raw_cells
from failcodes.errors import FailcodesError, InputError, UndeclaredSystemError, file_errors
from failcodes.fileio import notes_to
from failcodes.judge.journal import PROMPT_KEYS, RunIdentityError
from failcodes.redact import redact_text
from failcodes.runlock import folder_lock
from failcodes.study.config import StudyFile, check_input_paths, load_study, pipeline_entry
from failcodes.study.layout import STUDY_FILE, StudyLayout
from failcodes.study.state import changed_steps as changed_steps
from failcodes.study.state import fingerprint as fingerprint
from failcodes.study.state import is_finished as is_finished
from failcodes.study.state import load_state as load_state
from failcodes.study.state import pending_steps as pending_steps
from failcodes.study.state import save_state, written
from failcodes.study.steps import Step, plan_study


class Outcome(StrEnum):
    """What happened to a step."""

    RAN = "ran"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class StepResult:
    """A step and what happened to it."""

    step: Step
    outcome: Outcome


def log_path(layout: StudyLayout, step: Step) -> Path:
    """``.failcodes/logs/<step name>.log``: what the step printed under ``failcodes run``."""
    return layout.logs_dir / (re.sub(r"[^A-Za-z0-9._-]+", "_", step.name).strip("_") + ".log")


def run_request(
    step: Step, log: Path | None = None, say: Callable[[str], None] | None = None
) -> None:
    """Run the step's request in this process; what it says and its result go to ``log``.

    The lines its result's ``said()`` gives (if it has one) also go to ``say``. A user error
    inside it propagates as the :class:`FailcodesError` it raised.
    """
    with contextlib.ExitStack() as stack:
        fh = None
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            fh = stack.enter_context(log.open("w", encoding="utf-8"))

        def write(line: str) -> None:
            if fh is not None:  # a base URL's password no more in the log than on screen
                fh.write(redact_text(line) + "\n")
                fh.flush()

        def told(line: str) -> None:  # a note on a file read: the log, and said
            write(line)
            if say is not None:
                say(line)

        write(f"$ {step.command()}")
        with notes_to(told):
            result = step.request.run(note=write)
        for line in result.lines():
            write(line)
        said = getattr(result, "said", None)
        if say is not None and callable(said):
            for line in said():
                say(line)
        # a step that did nothing is not finished: its result says so, the run stops here
        unfinished = getattr(result, "unfinished", None)
        why = unfinished() if callable(unfinished) else None
        if why:
            write(f"not finished: {why}")
            raise StepNotFinishedError(
                f"{why}: the step is not finished, and the steps after it did not run; run "
                "the study again to finish it"
            )


def run_steps(
    plan: Callable[[], Sequence[Step]],
    layout: StudyLayout,
    execute: Callable[[Step], None] | None = None,
    *,
    force: bool = False,
    on_start: Callable[[Step], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> Iterator[StepResult]:
    """Run the unfinished steps in order; yield each step's result as it finishes.

    ``plan`` is called again after every step (a step's output can change the steps after
    it, see :func:`failcodes.study.steps.plan_study`). ``say`` takes what a step run by
    :func:`run_request` says beside its log (see there). A step that raises stops the run
    (the exception propagates); the finished steps stay recorded, so the next run starts
    from the failed one.
    """
    state, outputs = load_state(layout), load_state(layout, "outputs")
    seen: set[str] = set()
    while True:
        step = next((s for s in plan() if s.name not in seen), None)
        if step is None:
            return
        seen.add(step.name)
        if not force and is_finished(step, layout, state):
            yield StepResult(step, Outcome.SKIPPED)
            continue
        if on_start is not None:
            on_start(step)
        state.pop(step.name, None)
        outputs.pop(step.name, None)
        save_state(layout, state, outputs)
        since = time.time_ns()
        if execute is None:
            run_request(step, log_path(layout, step), say)
        else:
            execute(step)
        state[step.name] = fingerprint(step, layout)
        outputs[step.name] = written(step, layout, since)
        save_state(layout, state, outputs)
        yield StepResult(step, Outcome.RAN)


def study_folder(study: str | Path) -> Path:
    """The study folder of ``study`` (the folder itself, or its study file)."""
    path = Path(study)
    if path.is_file():  # the study file itself: its folder is the study
        if path.name != STUDY_FILE:
            raise InputError(
                f"is a file; give the study folder (the one holding {STUDY_FILE})", path=path
            )
        return path.parent
    return path


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


@dataclass(frozen=True)
class PlannedStep:
    """A step of the study's plan and whether it is finished (``failcodes run --plan``)."""

    step: Step
    finished: bool

    def line(self) -> str:
        """The step as ``--plan`` prints it: its command line, ``# finished`` when it is."""
        # a base URL's user:password@ is redacted here as on every other line printed
        return redact_text(self.step.command()) + ("  # finished" if self.finished else "")


@dataclass(frozen=True)
class RunPlan:
    """What ``failcodes run`` would run: every planned step, and why others are not planned."""

    steps: list[PlannedStep]
    #: Why steps are not planned (a judge kind with nothing to code, a data set of labels only)
    notes: list[str]

    def pending(self) -> list[Step]:
        """The steps a run would run (the unfinished ones), in order."""
        return [p.step for p in self.steps if not p.finished]

    def lines(self) -> list[str]:
        """What ``failcodes run STUDY --plan`` prints."""
        return [p.line() for p in self.steps] + [redact_text(f"# {n}") for n in self.notes]


def plan_run(study: str | Path, *, force: bool = False) -> RunPlan:
    """The study's plan, nothing run (``failcodes run STUDY --plan``; ``force``: as ``--force``).

    Each step holds its typed request (``step.request``, for :func:`failcodes.run`) and its
    command line; a finished step is marked (from Python a plan needed the study's internals:
    ``plan_study``, ``load_state`` and ``is_finished``). The steps after a pending one are
    planned from the outputs there now, as ``--plan`` shows them: ``run`` plans again after
    every step (docs/study.md).
    """
    from failcodes.study.steps import plan_notes

    layout = StudyLayout.of(study_folder(study))
    config = load_study(layout.root)
    check_input_paths(config, layout.root, inputs=False)  # a plan reads the codebook only
    state = load_state(layout)
    steps = [
        PlannedStep(step, not force and is_finished(step, layout, state))
        for step in plan_study(config, layout)
    ]
    return RunPlan(steps, plan_notes(config, layout))


def run_study(
    study: str | Path,
    *,
    force: bool = False,
    on_start: Callable[[Step], None] | None = None,
    on_result: Callable[[StepResult], None] | None = None,
    say: Callable[[str], None] | None = _stderr,
    raw_csv: bool = False,
) -> list[StepResult]:
    """Run the pending steps of a study in order, in this process (``failcodes run``).

    Finished steps are skipped (``force``: run every step); each step's output goes to
    ``.failcodes/logs/<step>.log``, and what a step's result says beyond it (the report's
    figure labels the fonts cannot draw, a system whose evidence was read as closed-book) to
    ``say`` too: standard error, as ``failcodes run`` and :func:`failcodes.run` say it (it
    said nothing from Python; ``say=None``: the logs alone). A failing step stops the run with
    its own one-line error, naming the step and its log. ``raw_csv=True`` is ``--raw-csv``
    (the steps' CSV text cells written as they are, :mod:`failcodes.csvcells`).
    :func:`plan_run` gives the plan without running it (``--plan``).
    """
    if raw_csv:  # the CLI's --raw-csv (from Python only the CLI's global switch gave it)
        with raw_cells():
            return run_study(study, force=force, on_start=on_start, on_result=on_result, say=say)
    layout = StudyLayout.of(study_folder(study))
    config = load_study(layout.root)
    check_input_paths(config, layout.root)  # before the lock, the state or any step
    load_state(layout)  # a FIFO or device named like the state: refused before the lock
    results: list[StepResult] = []
    current: list[Step] = []

    def started(step: Step) -> None:
        current[:] = [step]
        if on_start is not None:
            on_start(step)

    with folder_lock(layout.root, what="study"):
        try:
            with file_errors():  # a step's file refused: the step's one line, as others
                for result in run_steps(
                    lambda: plan_study(config, layout),
                    layout,
                    force=force,
                    on_start=started,
                    say=say,
                ):
                    results.append(result)
                    if on_result is not None:
                        on_result(result)
        except FailcodesError as exc:
            if not current:
                raise
            step = current[0]
            # one line: the step's own error, then which step and where its output is
            raise StepFailedError(
                f"{_in_study(exc, step, config, layout)} (step {step.name!r} failed; its output: "
                f"{log_path(layout, step)})",
                step=step,
            ) from exc
    return results


def _in_study(exc: FailcodesError, step: Step, config: StudyFile, layout: StudyLayout) -> str:
    """A step's one-line error, with what to do in a study where the command's advice is no way.

    A judge run folder holding another run: the command says "use another output folder
    (-o)", which a study sets itself. The tutorial's way (run with the offline judge, then
    name an LLM judge in [judge]) and a codebook edited in place ended there. Labels merged
    from ingests of which one names each label's system (ragchecker's, ``labels = true``)
    and one does not (clinicians' shared labels): the part files were named, no study way.
    """
    if isinstance(exc, UndeclaredSystemError) and step.dataset is not None:
        # B's ingest removed, its [[datasets.pipelines]] entry left: "--evidence names system
        # 'B'" named no line of the study file, and the user wrote no --evidence
        path = layout.root / STUDY_FILE
        field, line = pipeline_entry(
            config, path.read_text(encoding="utf-8"), step.dataset, exc.system
        )
        if field:
            have = ", ".join(exc.systems) or "none"
            return InputError(
                f"[[datasets.pipelines]] names system {exc.system!r}, which no ingest of data "
                f"set {step.dataset!r} gives (its traces' systems: {have}){exc.hint}: remove "
                f"that entry, or ingest the traces of {exc.system!r}",
                path=path,
                line=line,
                field=field,
            ).one_line()
    if (
        isinstance(exc, InputError)
        and exc.field == "system"
        and step.name.startswith("merge labels")
    ):
        return (
            f"{exc.one_line()}; in the study file (parts numbered by [[datasets.ingest]] "
            "entry): drop one ingest's labels with labels = false on it (a traces ingest's "
            "own, as ragchecker's, which name their system), or give the shared labels a "
            "system column (a row per system)"
        )
    if (
        isinstance(exc, InputError)
        and exc.field == "claim_id"
        and step.name.startswith("merge traces")
    ):  # two ingests under one system name (two medscore ingests, both 'medscore')
        return (
            f"{exc.one_line()}; in the study file (parts numbered by [[datasets.ingest]] "
            'entry): give each ingest of one system\'s file its own system = "NAME"'
        )
    if not isinstance(exc, RunIdentityError):
        return exc.one_line()
    run = exc.run_dir
    if exc.key == "codebook_hash":
        return (
            f"the study's codebook changed since {run} was coded under it (the run: "
            f"{exc.stored.get('codebook')}, now {exc.wanted.get('codebook')}: one version, two "
            "contents): save the change as the next version (<name>.v<N+1>.yaml, with "
            "parent_version and a migration section: docs/codebook.md) and name it in the "
            "study file's codebook, and failcodes run re-codes the judge runs; or restore the "
            "codebook"
        )
    if exc.key in PROMPT_KEYS:  # a failcodes upgrade, not the study file
        return (
            f"{exc.one_line()}; in a study: move that run folder out of the study's judge/ "
            "folder (to keep its codes) or delete it, then run again"
        )
    return (
        f"{run} holds a run with {exc.key}={exc.stored[exc.key]!r}, and the study file's "
        f"[judge] now gives {exc.wanted[exc.key]!r}: a judge run folder holds one judge's "
        "codes; move the earlier judge's run folders (this one first) out of the study's "
        "judge/ folder, to keep their codes, or delete them, then run again: the steps after "
        "them follow the new judge"
    )


class StepNotFinishedError(FailcodesError):
    """A step ran without an error but did not do its work (its result says why)."""


class StepFailedError(FailcodesError):
    """A step failed: its own one-line error, the step's name and its log."""

    def __init__(self, message: str, *, step: Step) -> None:
        self.step = step
        super().__init__(message)
