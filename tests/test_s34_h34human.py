"""Session 34's red team of the human loop (helper h34human): the faults it found.

Each test failed on main's src before its fix (issue 30).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.annotations import CoderKind
from tests.cli_helpers import run_cli
from tests.review_helpers import drawn_plan, judge_annotations
from tests.test_review_plan import coded_table


def test_review_status_says_a_plan_rejudged_after_the_draw_is_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plan of 10 of 30 units, the coded table re-judged after the draw (every unit now
    partial_entity), alice's reviews of the 10 drawn units: `review status` read '10/10
    reviewed' and nothing else at exit 0, where the report shows the part uncorrected and uses
    none of them (rundir's stale_reason). Now the line says the plan is stale and how to
    redraw it."""
    from failcodes.study.layout import StudyLayout

    root = tmp_path / "st"
    judge = {f"u{i:02d}": ("exact_entity" if i % 3 else "partial_entity") for i in range(30)}
    plan = drawn_plan(root, judge, size=10)
    table = StudyLayout.of(root).per_passage("ds")
    coded_table(dict.fromkeys(judge, "partial_entity"), dict.fromkeys(judge, "A")).to_csv(
        table, index=False
    )
    reviews = root / "review" / "alice.jsonl"
    reviews.write_text(
        "".join(
            a.model_copy(update={"coder_kind": CoderKind.HUMAN}).model_dump_json() + "\n"
            for a in judge_annotations(
                {u: judge[u] for u in sorted(plan.estimation_ids())}, coder="alice"
            )
        ),
        encoding="utf-8",
    )
    path = root / "review" / "plans" / "p.json"
    code, out, err = run_cli(["review", "status", str(path), "--reviews", str(reviews)], capsys)
    assert code == 0, err
    assert out == (
        "plan 'p' (retrieval): estimation sample 10/10 reviewed, targeted 0/0; 0 reviewed "
        "unit(s) outside the plan (not used); review plan 'p' is stale: "
        "attribution/ds/per_passage.csv changed since it was drawn (e.g. a codebook bump "
        "re-coded the units), so its tables are shown uncorrected (the report uses none of "
        f"these reviews); redraw it with: failcodes review plan {root} -p retrieval -n 10 "
        "--seed 0 --dataset ds --name p\n"
    )
