"""Cheap-first cascade: a cheap judge codes every unit, the expensive judge only the doubtful.

Stage 1 runs the cheap judge (the ``offline`` heuristic baseline, or a small model) over every
unit into ``RUN_DIR/cascade-first/`` (its own journal, resumable). Stage 2 sends the units it
marked uncertain, or could not score, to the expensive judge in ``RUN_DIR`` (synchronously,
grouped, or in batches: whatever runner the caller passes). Stage 3 copies the cheap judge's
confident annotations into the run's journal, so the run holds exactly one annotation per
unit and every annotation names the judge that coded it (``coder``, ``coder_kind``): reports
built from the run (attribution tables, ``per_passage_codes``) show it per row. Every stage
is idempotent, so a killed cascade resumes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.codebook import Codebook
from failcodes.judge.engine import RunSummary
from failcodes.judge.journal import Journal
from failcodes.judge.providers.base import DirectCoder, LLMProvider, TokenUsage
from failcodes.judge.run import export_run, run_judge_async
from failcodes.units import Unit, UnitKind

FIRST_DIR = "cascade-first"

#: Runs the expensive stage: (units to judge) -> summary. The caller binds the judge, codebook,
#: run directory and mode (sync, grouped or batch).
SecondStage = Callable[[list[Unit]], Awaitable[RunSummary]]


def needs_second_opinion(annotation: Annotation) -> bool:
    """Whether the cheap judge's annotation goes to the expensive judge."""
    return annotation.status is Status.UNSCORED or annotation.uncertain


@dataclass(frozen=True)
class CascadeSummary:
    """What each judge coded."""

    first: RunSummary
    second: RunSummary | None
    escalated: int
    kept: int
    coded_by: dict[str, int]

    def lines(self) -> list[str]:
        """Human-readable cascade summary (the CLI prints these)."""
        label = " (heuristic baseline)" if self.first.coder_kind is CoderKind.HEURISTIC else ""
        by = ", ".join(f"{coder}: {n}" for coder, n in sorted(self.coded_by.items()))
        return [
            f"cascade: {self.first.judge}{label} coded {self.first.units} units, kept "
            f"{self.kept} it was confident about and sent {self.escalated} (uncertain or "
            f"unscored) to {self.second.judge if self.second else 'the expensive judge'}",
            f"coded by: {by}",
        ]


def coded_by(annotations: Iterable[Annotation]) -> dict[str, int]:
    """Annotations per coder (judge spec), labelling the heuristic baseline."""
    counts: Counter[str] = Counter()
    for ann in annotations:
        label = " (heuristic baseline)" if ann.coder_kind is CoderKind.HEURISTIC else ""
        counts[f"{ann.coder}{label}"] += 1
    return dict(counts)


async def run_cascade(
    units: list[Unit],
    first: LLMProvider | DirectCoder,
    codebook: Codebook,
    kind: UnitKind,
    *,
    run_dir: str | Path,
    second: SecondStage,
) -> CascadeSummary:
    """Run the cascade into ``run_dir`` (see the module docstring)."""
    run = Path(run_dir)
    first_dir = run / FIRST_DIR
    first_summary = await run_judge_async(units, first, codebook, kind, run_dir=first_dir)
    journal = Journal(first_dir)
    try:
        firsts = {a.unit_id: a for a in journal.annotations()}
    finally:
        journal.close()
    escalate = [u for u in units if u.id in firsts and needs_second_opinion(firsts[u.id])]
    second_summary = await second(escalate) if escalate else None
    kept_ids = {u.id for u in units} - {u.id for u in escalate}
    main = Journal(run)
    try:
        done = main.done_ids()
        for uid in kept_ids:
            ann = firsts.get(uid)
            if ann is None or uid in done:
                continue
            main.record(
                ann,
                tokens=TokenUsage(),
                raw_request=None,
                raw_response=None,
                cache_hit=False,
                attempts=0,
            )
        counts = coded_by(a for a in main.annotations() if a.unit_id in firsts)
    finally:
        main.close()
    export_run(run, second_summary)
    return CascadeSummary(
        first=first_summary,
        second=second_summary,
        escalated=len(escalate),
        kept=len(kept_ids),
        coded_by=counts,
    )
