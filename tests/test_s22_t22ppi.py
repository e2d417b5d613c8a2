"""Red-team of the corrected shares, session 22 (t22ppi).

Each test states the input, what failcodes gave before the fix, and the value computed by
hand beside the assertion.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

#: Fisher's exact test on the 20 drawn units, reviewed (10) vs not (10), of the split "the
#: judge flagged itself uncertain": 10 of 10 vs 0 of 10; two-sided p = 2 / C(20, 10) =
#: 2 / 184,756 = 1.08e-5, the only split (the judge coded all 40 units alike), so no
#: Bonferroni factor.
SKEW_ON_UNCERTAIN = (
    "the reviewed units are not a random part of the drawn ones: the judge flagged itself "
    "uncertain on 10 of 10 reviewed and 0 of 10 drawn but not reviewed (Fisher p = 1.1e-05); "
    "counting those as not drawn biases the human and corrected shares toward the units "
    "reviewed"
)


def _reviewed_where_the_judge_was_unsure(root: Path) -> None:
    """40 units, the judge exact_entity on all (its run in judge/ds/retrieval); a plan of 20
    drawn by `review plan -n 20 --seed 0`; the judge flagged itself uncertain on 10 of the
    drawn units (Label Studio shows them "[judge uncertain]") and alice reviewed just those
    10, partial_entity on each."""
    from failcodes.study.layout import StudyLayout
    from tests.review_helpers import drawn_plan_study, judge_annotations
    from tests.test_review_plan import human, write_reviews

    judge = {f"u{n:02d}": "exact_entity" for n in range(40)}
    unsure = drawn_plan_study(root, judge)[:10]
    machine = judge_annotations(judge, uncertain=unsure)
    run = StudyLayout.of(root).judge_run("ds", "retrieval")
    write_reviews(run / "annotations.jsonl", machine)
    write_reviews(root / "review" / "alice.jsonl", [human(u, "partial_entity") for u in unsure])


def test_reviews_of_the_units_the_judge_was_unsure_of_are_said_not_missing_at_random(
    tmp_path: Path,
) -> None:
    # Before: the check tested the judge's codes only (alike on all 40 units: no split) and
    # said nothing, while partial_entity read corrected 100.0 [69.2, 100.0] for the 40 units
    # (10 of 10 reviewed; Clopper-Pearson 10/10: 0.025^(1/10) = 0.692), the caption only
    # "10 not yet, ... assumes they are missing at random".
    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind

    _reviewed_where_the_judge_was_unsure(tmp_path)
    inputs = load_run_dir(tmp_path)
    [(caption, table)] = inputs.corrected[UnitKind.RETRIEVAL]
    assert caption.endswith(
        "(10 not yet, counted as not drawn, which assumes they are missing at random); "
        f"{SKEW_ON_UNCERTAIN}"
    )
    assert inputs.notes["corrected:retrieval"] == [f"Plan 'p': {SKEW_ON_UNCERTAIN}"]
    partial = table[table["code"] == "partial_entity"].iloc[0]
    assert partial["corrected (%)"] == "100.0 [69.2, 100.0]"
    assert partial["note"] == "the missing reviews are not missing at random (caption)"


def test_review_status_warns_of_reviews_of_the_units_the_judge_was_unsure_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _reviewed_where_the_judge_was_unsure(tmp_path)
    plan = tmp_path / "review" / "plans" / "p.json"
    reviews = tmp_path / "review" / "alice.jsonl"
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(reviews)], capsys)
    assert code == 0 and "estimation sample 10/20 reviewed" in out
    assert err == f"failcodes: warning: {SKEW_ON_UNCERTAIN}\n"
