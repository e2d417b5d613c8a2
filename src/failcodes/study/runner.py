"""Run a study's steps in order, skipping the ones already finished (``failcodes run``).

A step is finished when its outputs exist and ``.failcodes/run.json`` records the fingerprint
it ran with: its command line and the SHA-256 of every input file. Change an input (or the
study file, which changes a command line) and that step and the ones whose inputs it
rewrites run again; the judge steps resume from their journal (only units not yet coded are
judged). A folder input (the report's) is fingerprinted over every file under it except
``report/``, ``.failcodes/`` and SQLite files.

The runner does not know how a command is executed: the caller passes ``execute`` (the CLI
runs the command in-process, exactly as typed).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from failcodes.errors import FailcodesError
from failcodes.fileio import atomic_write_text
from failcodes.hashing import file_sha256
from failcodes.study.layout import StudyLayout
from failcodes.study.steps import Step


class StepFailedError(FailcodesError):
    """A step's command failed (its own one-line error is in the message)."""


_SKIP_SUFFIXES = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal", ".lock")


class Outcome(StrEnum):
    """What happened to a step."""

    RAN = "ran"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class StepResult:
    """A step and what happened to it."""

    step: Step
    outcome: Outcome


def _folder_files(folder: Path, layout: StudyLayout) -> Iterator[Path]:
    skip = {layout.report_dir.resolve(), layout.state_dir.resolve()}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.endswith(_SKIP_SUFFIXES):
            continue
        resolved = path.resolve()
        if any(resolved.is_relative_to(s) for s in skip) or path.name.startswith("."):
            continue
        yield path


def fingerprint(step: Step, layout: StudyLayout) -> str:
    """SHA-256 over the step's command line and the contents of its inputs."""
    h = hashlib.sha256(json.dumps(list(step.argv)).encode("utf-8"))
    for path in step.inputs:
        files = list(_folder_files(path, layout)) if path.is_dir() else [path]
        for f in files:
            digest = file_sha256(f) if f.is_file() else "missing"
            h.update(f"\0{f}\0{digest}".encode())
    return h.hexdigest()


def load_state(layout: StudyLayout) -> dict[str, str]:
    """``{step name: fingerprint}`` of the finished steps (empty when none or unreadable)."""
    try:
        data = json.loads(layout.run_state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    steps = data.get("steps") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in steps.items()} if isinstance(steps, dict) else {}


def _save_state(layout: StudyLayout, state: dict[str, str]) -> None:
    atomic_write_text(layout.run_state, json.dumps({"steps": state}, indent=2) + "\n")


def is_finished(step: Step, layout: StudyLayout, state: dict[str, str]) -> bool:
    """True if the step's outputs exist and it last ran with today's fingerprint."""
    if not all(p.exists() for p in step.outputs):
        return False
    return state.get(step.name) == fingerprint(step, layout)


def pending_steps(steps: Sequence[Step], layout: StudyLayout) -> list[Step]:
    """The steps that would run now (an estimate: a rerun step can make later ones pending)."""
    state = load_state(layout)
    return [s for s in steps if not is_finished(s, layout, state)]


def log_path(layout: StudyLayout, step: Step) -> Path:
    """``.failcodes/logs/<step name>.log``: what the step printed under ``failcodes run``."""
    return layout.logs_dir / (re.sub(r"[^A-Za-z0-9._-]+", "_", step.name).strip("_") + ".log")


def subprocess_execute(step: Step, log: Path | None = None) -> None:
    """Run a step as a child ``python -m failcodes ARGV...``; its output goes to ``log``.

    The CLI runs steps in-process (faster); this is for callers outside the CLI (the demo's
    Python API). A failing command raises :class:`StepFailedError` with its one-line error.
    """
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "failcodes", *step.argv], capture_output=True, text=True
    )
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(proc.stdout + proc.stderr, encoding="utf-8")
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise StepFailedError(f"step {step.name!r} failed: {last.removeprefix('failcodes: ')}")


def run_steps(
    plan: Callable[[], Sequence[Step]],
    layout: StudyLayout,
    execute: Callable[[Step], None],
    *,
    force: bool = False,
    on_start: Callable[[Step], None] | None = None,
) -> Iterator[StepResult]:
    """Run the unfinished steps in order; yield each step's result as it finishes.

    ``plan`` is called again after every step (a step's output can change the steps after
    it, see :func:`failcodes.study.steps.plan_study`). A step that raises stops the run
    (the exception propagates); the finished steps stay recorded, so the next run starts
    from the failed one.
    """
    state = load_state(layout)
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
        _save_state(layout, state)
        execute(step)
        state[step.name] = fingerprint(step, layout)
        _save_state(layout, state)
        yield StepResult(step, Outcome.RAN)


__all__ = [
    "Outcome",
    "StepFailedError",
    "StepResult",
    "fingerprint",
    "is_finished",
    "load_state",
    "log_path",
    "pending_steps",
    "run_steps",
    "subprocess_execute",
]
