"""A study folder whose v2 judge is reviewed under codebook v1 (test_outside_shapes4 and 6).

20 traces of verifier v; the judge (v2) gives inference {overreach,
conflict_synthesis_failure} on t0..t9 and valid_inference on t10..t19. A reviewer under v1
agreed but could give one code: overreach on t0..t9. Migrated to v2, the human share of
conflict_synthesis_failure is 0/20 = 0.0 where the judge's is 10/20 = 50.0.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

#: Every reasoning step's correct code under v2.
V2_STEPS = {
    "evidence_selection": "complete_selection",
    "evidence_understanding": "correct_understanding",
    "inference": "valid_inference",
    "verbal_confidence": "calibrated",
    "label_consistency": "consistent",
    "grounding": "grounded",
}
#: The judge's inference set on t0..t9 (valid_inference on t10..t19).
BOTH = ("overreach", "conflict_synthesis_failure")
TRACES = 20
SETS = 10


def v1_reviews_of_a_v2_judge(
    root: Path, plan: Callable[[], None], judge_annotations: bool = False
) -> None:
    """Write the coded table (and, if asked, the judge's annotations), ``plan()`` the review,
    then write alice's 20 v1 reviews into ``root/review``.
    """
    import pandas as pd

    from failcodes import codebook as codebooks
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.units import UnitKind

    v1, v2 = codebooks.bundled(version=1), codebooks.bundled(version=2)
    rows = [
        {
            "verifier": "v",
            "unit_id": f"t{i}",
            "status": "scored",
            **V2_STEPS,
            "inference": "|".join(BOTH) if i < SETS else "valid_inference",
            "all_correct": i >= SETS,
        }
        for i in range(TRACES)
    ]
    table = root / "attribution" / "ds" / "per_trace.csv"
    table.parent.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(table, index=False)
    if judge_annotations:
        judge = [
            Annotation(
                unit_id=f"t{i}",
                unit_kind=UnitKind.VERIFICATION,
                codebook=v2.ref(),
                coder="judge",
                coder_kind=CoderKind.LLM,
                codes={**V2_STEPS, "inference": BOTH[0] if i < SETS else "valid_inference"},
                code_sets={"inference": list(BOTH)} if i < SETS else {},
            )
            for i in range(TRACES)
        ]
        run = root / "judge" / "ds" / "reasoning"
        run.mkdir(parents=True)
        (run / "annotations.jsonl").write_text("".join(a.model_dump_json() + "\n" for a in judge))
    plan()
    reviews = [
        Annotation(
            unit_id=f"t{i}",
            unit_kind=UnitKind.VERIFICATION,
            codebook=v1.ref(),
            coder="alice",
            coder_kind=CoderKind.HUMAN,
            codes={**V2_STEPS, "inference": BOTH[0] if i < SETS else "valid_inference"},
        )
        for i in range(TRACES)
    ]
    (root / "review" / "alice.jsonl").write_text(
        "".join(a.model_dump_json() + "\n" for a in reviews)
    )


def v2_codebook_file() -> Path:
    """The bundled v2 codebook's YAML (the report's ``--codebook``)."""
    from failcodes import codebook as codebooks

    v2 = codebooks.bundled(version=2)
    return codebooks.bundled_dir() / f"{v2.name}.v2.yaml"
