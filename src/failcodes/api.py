"""``failcodes.run(request)``: run one command's typed request in this process.

Every command of the CLI is a request of :mod:`failcodes.commands` (``JudgeRequest``,
``MetricsRequest``, ...); this runs one the way the CLI and ``failcodes run`` do, saying its
notes (the bundled codebook in use, the heuristic baseline, skipped traces) through ``note``
(default: standard error), and returns its typed result. ``failcodes.run_study(path)`` runs a
whole study (:func:`failcodes.study.runner.run_study`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from failcodes.commands.base import Note, Request

if TYPE_CHECKING:
    from failcodes.study.layout import StudyLayout


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _changed_steps(layout: StudyLayout) -> list[str]:
    """The study's steps changed since ``failcodes run`` ran them, for a report to say.

    Given here, not in ``ReportRequest.run``: ``failcodes run``'s plan holds the report step
    (commands.report -> study.runner -> study.steps -> commands.report, an import cycle).
    """
    from failcodes.study.runner import changed_steps

    return [s.name for s in changed_steps(layout)]


def run(request: Request, *, note: Note = _stderr) -> Any:
    """Run ``request`` (``failcodes.JudgeRequest(...)``, ...) and return its result.

    A result that assumed a shape of the data (``metrics``, ``disagreements``, ``compare``:
    shared or per-system labels, the questions each system answered) says it through ``note``
    as well, as the CLI's first line does: it is also ``result.assumed``. A report of a study
    whose inputs or settings changed since ``failcodes run`` says so first, and in its run box.
    """
    from failcodes.commands.report import ReportRequest

    runner: Any = request
    if isinstance(request, ReportRequest):  # a study edited since `failcodes run`: said first
        result = request.run(note=note, changed=_changed_steps)
    else:
        result = runner.run(note=note)
    assumed = getattr(result, "assumed", None)
    if isinstance(assumed, str) and assumed:
        note(assumed)
    return result


__all__ = ["run"]
