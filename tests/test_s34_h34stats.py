"""Session 34 (h34stats): human vs judge agreement beside a plan reviewed at unequal rates.

A plan stratified by the judge's code gives a small stratum its 2 units: those units are
reviewed at a higher rate than the rest, and the agreement rows, which count each reviewed unit
once, are the agreement on the units reviewed, not the judge's on the units it codes. The
report said so in its agreement notes only; each row's interval read as the judge's, with no
word beside it (``bench/bench_s34_stats.py --parts 2``: a plan of 50 by 4 systems x the
judge's code).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.annotations import CoderKind
from failcodes.reviewplan import StratifyBy

#: The warning each such row carries (failcodes.report.rundir.UNEVEN_WARNING).
UNEVEN = (
    "strata reviewed at different rates, counted unweighted: the agreement on the units "
    "reviewed, not on the units the judge codes (note)"
)


def _study(root: Path, stratify: list[StratifyBy], size: int) -> None:
    """40 judge-high and 4 judge-low units; alice agrees with the judge but on one (a low one)."""
    from tests.review_helpers import drawn_plan
    from tests.test_review_plan import human, write_reviews

    entity = {f"h{i:02d}": "exact_entity" for i in range(40)}
    entity |= {f"l{i}": "partial_entity" for i in range(4)}
    plan = drawn_plan(root, entity, size=size, stratify=stratify)
    drawn = sorted(plan.estimation_ids())
    low = [u for u in drawn if u.startswith("l")]
    odd = low[1] if len(low) > 1 else drawn[0]  # the unit alice codes otherwise
    other = {"exact_entity": "partial_entity", "partial_entity": "exact_entity"}
    reviews = [human(u, other[entity[u]] if u == odd else entity[u]) for u in drawn]
    write_reviews(root / "review" / "alice.jsonl", reviews)
    judged = [
        human(u, c).model_copy(update={"coder": "judge", "coder_kind": CoderKind.LLM})
        for u, c in entity.items()
    ]
    write_reviews(root / "judge" / "ds" / "retrieval" / "annotations.jsonl", judged)


def test_agreement_rows_of_a_plan_reviewed_at_unequal_rates_say_so_beside_them(
    tmp_path: Path,
) -> None:
    """8 drawn by the judge's code: 6 of 40 judge-high (0.15) and 2 of 4 judge-low (0.5)
    units. Alice agrees on 7 of the 8: percent 7/8 = 0.875, the units' own rate (strata
    weighted by their units) (40 + 2) / 44 = 0.955 (by hand). The row now carries the warning,
    and so does every row of the part (the dimension's and each code's); the codebook table's
    kappa is starred. Fails on main: the rows' warnings lacked it."""
    from failcodes.report.rundir import load_run_dir

    _study(tmp_path, [StratifyBy.CODE], 8)
    inputs = load_run_dir(tmp_path)
    assert inputs.agreement is not None
    rows = inputs.agreement.set_index(["subject", "statistic"])
    assert rows.loc[("entity_match", "percent"), "value"] == pytest.approx(7 / 8)
    assert UNEVEN in str(rows.loc[("entity_match", "percent"), "warning"])
    assert all(UNEVEN in str(w) for w in inputs.agreement["warning"])
    cohen = rows.loc[("entity_match: partial_entity", "cohen")]
    # 2x2 of partial_entity, alice vs judge over the 8: both 1 on 1, judge alone on 1, both 0
    # on 6: p_o 7/8, p_e (1/8)(2/8) + (7/8)(6/8) = 44/64, kappa (56/64 - 44/64)/(20/64) = 0.6
    assert cohen["value"] == pytest.approx(0.6)
    assert inputs.codebook_table is not None
    column = next(c for c in inputs.codebook_table.columns if "agree" in str(c).lower())
    text = inputs.codebook_table.set_index(inputs.codebook_table.columns[0])[column]
    kappa = next(str(v) for v in text if str(v).startswith("0.60"))
    assert kappa.endswith(" *"), kappa


def test_a_plan_reviewed_at_equal_rates_keeps_its_rows_unmarked(tmp_path: Path) -> None:
    """A uniform plan of 11 of the 44 units (one rate, 0.25): no note, no row warning of it."""
    from failcodes.report.rundir import load_run_dir

    _study(tmp_path, [], 11)
    inputs = load_run_dir(tmp_path)
    assert inputs.agreement is not None
    assert not any(UNEVEN in str(w) for w in inputs.agreement["warning"])
    assert not any("different rates" in n for n in inputs.notes.get("agreement", []))
