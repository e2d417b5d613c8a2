"""Cheap-first cascade: a cheap judge codes every unit, the expensive judge only the doubtful.

Stage 1 runs the cheap judge (the ``offline`` heuristic baseline, or a small model) over every
unit into ``RUN_DIR/cascade-first/`` (its own journal, resumable). Stage 2 sends the units it
marked uncertain, or could not score, to the expensive judge in ``RUN_DIR`` in the cascade's
``then`` mode (per unit, grouped or in batches). Stage 3 copies the cheap judge's confident
annotations into the run's journal, so the run holds exactly one annotation per unit and
every annotation names the judge that coded it (``coder``, ``coder_kind``): reports built
from the run (attribution tables, ``per_passage_codes``) show it per row. Every stage is
idempotent, so a killed cascade resumes. :func:`failcodes.judge.run.run_judge_async` runs
the stages; this module holds the rules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.judge.journal import Journal
from failcodes.units import Unit

FIRST_DIR = "cascade-first"


def needs_second_opinion(annotation: Annotation) -> bool:
    """Whether the cheap judge's annotation goes to the expensive judge."""
    return annotation.status is Status.UNSCORED or annotation.uncertain


def coded_by(annotations: Iterable[Annotation]) -> dict[str, int]:
    """Annotations per coder (judge spec), labelling the heuristic baseline."""
    counts: Counter[str] = Counter()
    for ann in annotations:
        label = " (heuristic baseline)" if ann.coder_kind is CoderKind.HEURISTIC else ""
        counts[f"{ann.coder}{label}"] += 1
    return dict(counts)


def split(units: list[Unit], firsts: dict[str, Annotation]) -> tuple[list[Unit], set[str]]:
    """The units to escalate, and the ids whose first annotation is kept."""
    escalate = [u for u in units if u.id in firsts and needs_second_opinion(firsts[u.id])]
    kept = {u.id for u in units} - {u.id for u in escalate}
    return escalate, kept


def keep_confident(main: Journal, firsts: dict[str, Annotation], kept: set[str]) -> None:
    """Copy the first judge's kept annotations into the run's journal (idempotent)."""
    done = main.done_ids()
    for uid in sorted(kept):
        ann = firsts.get(uid)
        if ann is None or uid in done:
            continue
        main.record_uncalled(ann)
