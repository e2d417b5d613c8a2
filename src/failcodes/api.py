"""``failcodes.run(request)``: run one command's typed request in this process.

Every command of the CLI is a request of :mod:`failcodes.commands` (``JudgeRequest``,
``MetricsRequest``, ...); this runs one the way the CLI and ``failcodes run`` do, saying its
notes (the bundled codebook in use, the heuristic baseline, skipped traces) through ``note``
(default: standard error), and returns its typed result. ``failcodes.run_study(path)`` runs a
whole study (:func:`failcodes.study.runner.run_study`).
"""

from __future__ import annotations

import sys
from typing import Any

from failcodes.commands.base import Note, Request, ignore_note
from failcodes.csvcells import raw_cells
from failcodes.errors import ConfigError, file_errors
from failcodes.fileio import notes_to


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def run(request: Request, *, note: Note | None = _stderr, raw_csv: bool = False) -> Any:
    """Run ``request`` (``failcodes.JudgeRequest(...)``, ...) and return its result.

    A result that assumed a shape of the data (``metrics``, ``disagreements``, ``compare``:
    shared or per-system labels, the questions each system answered) says it through ``note``
    as well, as the CLI's first line does: it is also ``result.assumed``. So does one whose
    labels cover part of the units (``result.coverage``, the CLI's second line: P/R/F1 of 3
    labelled sentences of 6 read 100% with no word of the other 3), and ``metrics`` on traces
    whose ingest left rows out for want of a verdict (``result.dropped``: their claims count
    in no metric), and the notes the CLI prints under its first line or its table
    (``result.later``: ``agree``'s; ``metrics``' unlabelled units, CI warnings, ...), and
    what ``failcodes run`` says of a step (``result.said()``: an ``ingest`` that read a
    system's evidence from its traces, closed-book), each line once.

    Every error a user can cause is a :class:`~failcodes.errors.FailcodesError` with the
    CLI's one line: the file system refusing a file too (a
    :class:`~failcodes.errors.FileSystemError`, where the CLI says "PATH: permission denied;
    check the path and its permissions").

    ``note=None`` says nothing (the lines stay on the result: ``result.assumed``, ...).

    ``raw_csv=True`` is the CLI's ``--raw-csv`` (``ingest``, ``metrics``, ``attribute``,
    ``report``): CSV text cells written as they are, not neutralised against spreadsheet
    formulas (:mod:`failcodes.csvcells`), for a program that reads the CSV itself.
    """
    if note is None:  # note=None: say nothing (it was a TypeError at the first note)
        note = ignore_note
    if not callable(note):
        raise ConfigError(f"note: expected a function taking a line (print), not {note!r}")
    if not isinstance(request, Request):  # a dict from JSON: AttributeError 'run'
        raise ConfigError(
            f"request: expected a request (failcodes.MetricsRequest(...), ...), not "
            f"{type(request).__name__}"
            + (
                " (build it: failcodes.MetricsRequest.model_validate(d))"
                if isinstance(request, dict)
                else ""
            )
        )
    runner: Any = request
    told: list[str] = []

    def noted(line: str) -> None:
        told.append(line)
        note(line)

    with file_errors(), notes_to(note), raw_cells(raw_csv):
        result = runner.run(note=noted)
    said = [getattr(result, name, None) for name in ("assumed", "coverage", "dropped")]
    step = getattr(result, "said", None)  # also what `failcodes run` says of the step
    for line in [*said, *getattr(result, "later", ()), *(step() if callable(step) else ())]:
        if isinstance(line, str) and line and line not in told:
            told.append(line)  # each line once: a step's said() repeats its first lines
            note(line)
    return result
