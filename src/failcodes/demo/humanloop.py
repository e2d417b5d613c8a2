"""Demo step: the human loop on bundled data, with a SIMULATED reviewer.

judge (offline heuristic baseline, earlier step) -> review plan (a seeded uniform sample of the
judged SciFact passages) -> simulated reviewer answers taken from the data's own gold -> the
report's corrected Table 8 and corrected attribution (Figure 1). No person reviews anything:
what the simulated reviewer answers, and why the demo attributes scifact-dev by the codebook
rule: docs/review.md ("In the demo"). Its annotations are written under the coder name
:data:`SIMULATED_CODER`, so the report names it wherever its codes appear.
"""

from __future__ import annotations

from typing import Any

from failcodes.csvcells import read_frame
from failcodes.demo._base import DEMO_SEED, DemoContext, StepOutput

#: The simulated reviewer's name, shown wherever its codes are: its agreement with the judge
#: outside evidence_polarity (1.000 on entity_match, scope, chunking, trustworthy) is by
#: construction, and the report, which cannot know it, showed it under a name that said only
#: "SciFact rationales".
SIMULATED_CODER = "SIMULATED reviewer (SciFact rationales; other codes copy the judge)"
DATASET = "scifact-dev"
PLAN_SIZE = 30
GOLD_DIMENSION = "evidence_polarity"
REVIEW_NAME = "simulated-scifact-gold"


def review_loop_step(ctx: DemoContext) -> StepOutput:
    """Draw a review plan, answer it with a simulated reviewer, leave it for the report."""
    from failcodes import codebook
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.fileio import atomic_write_text
    from failcodes.hashing import file_sha256
    from failcodes.reviewplan import draw_plan
    from failcodes.study.layout import StudyLayout
    from failcodes.units import UnitKind

    out = StepOutput()
    judged: dict[str, Any] = ctx.results.get("judge", {})
    layout = StudyLayout.of(ctx.out_dir)
    table = layout.per_passage(DATASET)
    if DATASET not in judged or not table.exists():
        out.lines.append(f"review loop: no judged {DATASET} passages (skipped)")
        return out
    cb = codebook.bundled()
    coded = read_frame(table)
    plan = draw_plan(
        coded,
        UnitKind.RETRIEVAL,
        name=f"{DATASET}.retrieval",
        size=PLAN_SIZE,
        seed=DEMO_SEED,
        source=str(table.relative_to(ctx.out_dir)),
        source_sha256=file_sha256(table),
    )
    plan_path = atomic_write_text(
        layout.review_plan(plan.name), plan.model_dump_json(indent=2) + "\n"
    )
    out.files.append(plan_path)
    population = sum(s.population for s in plan.strata)
    out.lines.append(
        f"review plan: {len(plan.estimation_ids())} of {population} judged {DATASET} passages "
        f"drawn uniformly (seed {DEMO_SEED}, inclusion probability "
        f"{plan.strata[0].inclusion_probability:.3f})"
    )
    _, judge_anns = judged[DATASET][UnitKind.RETRIEVAL]
    by_unit = {a.unit_id: a for a in judge_anns}
    gold = {str(u): g for u, g in zip(coded["unit_id"], coded["gold"], strict=True)}
    reviews: list[Annotation] = []
    for uid in sorted(plan.estimation_ids()):
        judge = by_unit[uid]
        is_gold = gold.get(uid) is True or str(gold.get(uid)) == "True"
        codes = {**judge.codes, GOLD_DIMENSION: "direct_polarity" if is_gold else "neutral"}
        reviews.append(
            Annotation(
                unit_id=uid,
                unit_kind=UnitKind.RETRIEVAL,
                codebook=cb.ref(),
                coder=SIMULATED_CODER,
                coder_kind=CoderKind.HUMAN,
                codes=codes,
                rationale="simulated from SciFact gold rationales; other dimensions copy the judge",
            )
        )
    review_path = atomic_write_text(
        layout.review(REVIEW_NAME), "".join(a.model_dump_json() + "\n" for a in reviews)
    )
    out.files.append(review_path)
    changed = sum(
        1 for a in reviews if a.codes[GOLD_DIMENSION] != by_unit[a.unit_id].codes[GOLD_DIMENSION]
    )
    out.lines.append(
        f"SIMULATED reviewer: {len(reviews)} answers from SciFact gold ({GOLD_DIMENSION}: gold "
        f"rationale = direct_polarity); it disagrees with the heuristic judge on {changed}; "
        "no person reviewed anything"
    )
    out.lines.append(
        "the report's Table 8 section shows the corrected shares (judge-only, human-only, PPI++)"
    )
    return out
