"""A study with a drawn review plan, and a judge's annotations, as the review tests build them.

Built on :mod:`tests.test_review_plan`'s coded table (:func:`coded_table`, :data:`HIGH`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.codebook import bundled
from failcodes.reviewplan import ReviewPlan, StratifyBy
from failcodes.units import UnitKind
from tests.test_review_plan import HIGH, coded_table


def drawn_plan(
    root: Path,
    judge: Mapping[str, str],
    *,
    size: int = 20,
    stratify: Sequence[StratifyBy] = (),
) -> ReviewPlan:
    """The coded table of ``judge`` (unit -> entity_match; data set 'ds', retriever 'A') in the
    study at ``root``, and plan 'p' drawn from it as ``review plan -n SIZE --seed 0`` (and
    ``--stratify``) draws it, written to ``review/plans/p.json``. Returns the plan."""
    import pandas as pd

    from failcodes.hashing import file_sha256
    from failcodes.reviewplan import draw_plan
    from failcodes.study.layout import StudyLayout

    table = StudyLayout.of(root).per_passage("ds")
    table.parent.mkdir(parents=True)
    coded_table(dict(judge), dict.fromkeys(judge, "A")).to_csv(table, index=False)
    plan = draw_plan(
        pd.read_csv(table),
        UnitKind.RETRIEVAL,
        name="p",
        size=size,
        seed=0,
        source=table.relative_to(root).as_posix(),
        source_sha256=file_sha256(table),
        stratify=stratify,
    )
    path = root / "review" / "plans" / "p.json"
    path.parent.mkdir(parents=True)
    path.write_text(plan.model_dump_json(), encoding="utf-8")
    return plan


def drawn_plan_study(root: Path, judge: Mapping[str, str], *, size: int = 20) -> list[str]:
    """:func:`drawn_plan`'s study; returns the drawn (estimation) unit ids, sorted."""
    return sorted(drawn_plan(root, judge, size=size).estimation_ids())


def judge_annotations(
    judge: Mapping[str, str],
    *,
    coder: str = "gpt",
    uncertain: Collection[str] = (),
    unscored: Collection[str] = (),
) -> list[Annotation]:
    """An LLM judge's retrieval annotations: entity_match ``judge[unit]``, the other dimensions
    their high-quality code (:data:`HIGH`); flagged uncertain on the ``uncertain`` units, no
    valid answer (unscored, 'invalid answer') on the ``unscored`` ones."""
    ref = bundled().ref()
    return [
        Annotation(
            unit_id=u,
            unit_kind=UnitKind.RETRIEVAL,
            codebook=ref,
            coder=coder,
            coder_kind=CoderKind.LLM,
            uncertain=u in uncertain,
            **(
                {"status": Status.UNSCORED, "reason": "invalid answer"}
                if u in unscored
                else {"codes": {"entity_match": code, **HIGH}}
            ),
        )
        for u, code in judge.items()
    ]
