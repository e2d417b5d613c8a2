"""Session 24, helper t24red2: agreement, review and corrected shares (issue 30)."""

from __future__ import annotations

from types import SimpleNamespace

from failcodes.attribution import ReviewedAttribution, Stage
from failcodes.report.corrected import attribution_rows, attribution_table


def _pair(item: str, system: str, judge: Stage, human: Stage | None, units: tuple[str, ...]):
    return ReviewedAttribution(item_id=item, system=system, judge=judge, human=human, units=units)


def test_a_closed_book_systems_corrected_attribution_is_not_shown_as_a_review_finding() -> None:
    ver, ret = Stage.VERIFICATION, Stage.RETRIEVAL
    # 23 closed-book items: the rule makes each 'verification' and no judge code enters it,
    # so the "reviewer" cannot disagree. Main read human-only and corrected 100.0 [85.2, 100.0]
    # (Clopper-Pearson of 23/23: lower 0.025 ** (1 / 23) = 0.852), reviewed 23
    closed = [_pair(f"c{k}", "closed", ver, ver, ()) for k in range(23)]
    # beside it a retrieved system with judge-coded items, 12 reviewed: estimated as before
    judged = [
        _pair(
            f"r{k}",
            "rag",
            ret if k % 3 else ver,
            (ret if k % 4 else ver) if k < 12 else None,
            (f"u{k}",),
        )
        for k in range(30)
    ]
    plan = SimpleNamespace(unit_strata={f"u{k}": "all" for k in range(30)})  # one stratum
    rows = attribution_rows([*closed, *judged], plan)  # type: ignore[arg-type]
    table = attribution_table(rows).set_index(["system", "stage"])
    row = table.loc[("closed", "verification")]
    assert row["judge-only (%)"] == "100.0"
    assert row["human-only (%)"] == "–" and row["corrected (%)"] == "–"
    assert row["reviewed"] == 0
    assert "by construction, not a review finding" in row["note"]
    assert "of its 23 items (closed-book" in row["note"]
    # the judge-coded system keeps its estimates: 12 reviewed of 30 (one group, one stratum)
    rag = [r for r in rows if r["system"] == "rag"]
    assert all(r["estimates"] is not None and r["fixed"] is None for r in rag)
    assert {r["reviewed"] for r in rag} == {12}
