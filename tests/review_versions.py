"""A study folder whose v2 judge is reviewed under codebook v1 (test_outside_shapes4 and 6).

20 traces of verifier v; the judge (v2) gives inference {overreach,
conflict_synthesis_failure} on t0..t9 and valid_inference on t10..t19. A reviewer under v1
agreed but could give one code: overreach on t0..t9. Migrated to v2, the human share of
conflict_synthesis_failure is 0/20 = 0.0 where the judge's is 10/20 = 50.0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from failcodes.annotations import Annotation
    from failcodes.codebook import CodebookRef

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


def coded(
    unit_id: str,
    ref: CodebookRef,
    coder: str,
    codes: Mapping[str, str],
    code_sets: Mapping[str, list[str]] | None = None,
    *,
    retrieval: bool = False,
) -> Annotation:
    """One annotation of a verification unit (a retrieval unit if ``retrieval``) by ``coder``:
    the name 'judge' is the LLM, any other a human.
    """
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.units import UnitKind

    return Annotation(
        unit_id=unit_id,
        unit_kind=UnitKind.RETRIEVAL if retrieval else UnitKind.VERIFICATION,
        codebook=ref,
        coder=coder,
        coder_kind=CoderKind.LLM if coder == "judge" else CoderKind.HUMAN,
        codes=dict(codes),
        code_sets=dict(code_sets or {}),
    )


def write_annotations(path: Path, annotations: Sequence[Annotation]) -> None:
    """``annotations`` as JSON lines at ``path`` (its folder made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(a.model_dump_json() + "\n" for a in annotations))


def v1_reviews_of_a_v2_judge(
    root: Path, plan: Callable[[], None], judge_annotations: bool = False
) -> None:
    """Write the coded table (and, if asked, the judge's annotations), ``plan()`` the review,
    then write alice's 20 v1 reviews into ``root/review``.
    """
    import pandas as pd

    from failcodes import codebook as codebooks

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
            coded(
                f"t{i}",
                v2.ref(),
                "judge",
                {**V2_STEPS, "inference": BOTH[0] if i < SETS else "valid_inference"},
                {"inference": list(BOTH)} if i < SETS else {},
            )
            for i in range(TRACES)
        ]
        write_annotations(root / "judge" / "ds" / "reasoning" / "annotations.jsonl", judge)
    plan()
    reviews = [
        coded(
            f"t{i}",
            v1.ref(),
            "alice",
            {**V2_STEPS, "inference": BOTH[0] if i < SETS else "valid_inference"},
        )
        for i in range(TRACES)
    ]
    write_annotations(root / "review" / "alice.jsonl", reviews)


def v2_codebook_file() -> Path:
    """The bundled v2 codebook's YAML (the report's ``--codebook``)."""
    from failcodes import codebook as codebooks

    v2 = codebooks.bundled(version=2)
    return codebooks.bundled_dir() / f"{v2.name}.v2.yaml"
