"""Session 28, t28cmp: `compare` on designs a second researcher brings (issue 30).

A reference with no positive unit (a slice of a study where the clinicians found no error):
McNemar compared the systems' hits on 0 units and gave p 1 (Holm 1), n 0, beside a Cochran's Q
undefined for "no unit has an outcome for every system"; the F1 test gave a difference of 0,
p 1, where every F1 is 0 (2TP = 0) or 0/0 and metrics shows F1 undefined (recall 0/0).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.stats.classification import mcnemar
from tests.cli_helpers import run_cli, write_text

#: 8 units, the reference all 0: A flags units 0 and 4, B none, C units 0-2. TP = 0 for every
#: system, so recall is 0/0 and F1 is 0/(FP) = 0 for A and C, 0/0 for B (by hand).
NO_POSITIVES = (
    "unit_id,A,B,C,gold\n"
    "0,1,0,1,0\n1,0,0,1,0\n2,0,0,1,0\n3,0,0,0,0\n"
    "4,1,0,0,0\n5,0,0,0,0\n6,0,0,0,0\n7,0,0,0,0\n"
)


def test_no_positive_unit_makes_every_paired_test_undefined_not_p_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_text(tmp_path / "nopos.csv", NO_POSITIVES)
    args = ["compare", str(path), "--truth", "gold", "--resamples", "200", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    payload = json.loads(out)
    rows = {(r["test"], r["comparison"]): r for r in payload["tests"]}
    # McNemar on the positive units: there are none (n 0), so no p (main: p 1, Holm 1)
    for pair in ("A vs B", "A vs C", "B vs C"):
        row = rows["mcnemar_midp", pair]
        assert (row["n"], row["p_value"], row["p_holm"]) == (0, None, None)
        assert row["undefined_reason"].startswith("no positive unit (truth 1)")
    assert rows["cochran_q", "all"]["undefined_reason"].startswith("no positive unit")
    # F1 of A and C is 0 / 2 and 0 / 3 by 2TP / (2TP + FP + FN); recall is 0/0 for both:
    # metrics shows F1 undefined, so no difference is tested (main: effect 0, p 1)
    f1 = rows["permutation_f1", "A vs C"]
    assert (f1["effect"], f1["p_value"]) == (None, None)
    assert f1["undefined_reason"].startswith("f1 is undefined: no positive units")
    # B never flags, but its F1 is not "counted as 0" here: no test has it
    assert "never flag" not in (payload["assumed"] or "")
    assert payload["holm"] is None  # no family holds a p


def test_mcnemar_on_no_unit_has_no_p() -> None:
    """Both units lack an outcome: no pair to test (main: mid-p 1.0 on n 0)."""
    result = mcnemar([1.0, float("nan")], [float("nan"), 0.0])
    assert (result.n, result.p_value, result.statistic) == (0, None, None)
    assert result.undefined_reason == "no unit has an outcome for both systems"


def test_mcnemar_b_equal_c_keeps_fagerland_mid_p() -> None:
    """b = c = 2: Fagerland et al. 2013, supplement: mid-p = 1 - 0.5 * binompdf(2, 4, 0.5)
    = 1 - 0.5 * 6/16 = 0.8125 (the exact p is 1); b = c = 0: p 1 (statsmodels' exact 1.0).
    Unchanged by this session: it guards the fix above from turning ties into 'undefined'."""
    a = [1.0, 1.0, 0.0, 0.0, 1.0]
    b = [0.0, 0.0, 1.0, 1.0, 1.0]
    assert mcnemar(a, b).p_value == pytest.approx(0.8125, abs=1e-12)
    assert mcnemar([1.0, 0.0], [1.0, 0.0]).p_value == 1.0


def test_few_discordant_questions_take_the_mid_p_not_the_chi_square(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """40 discordant sentences (A flags, B not) in 4 questions of 10, 2 concordant questions.

    The question is the unit: d_q = 10, 10, 10, 10. Sign flips of 4 questions: |S| = 40 with
    probability 2/16, none larger, so the mid-p is 0 + (2/16) / 2 = 0.0625 (Fagerland et al.
    2013's mid-p on the questions). Main took the chi-square (sum d)^2 / sum d^2 = 1600/400 = 4,
    p 0.0455 (scipy chi2.sf(4, 1)), because 40 discordant *units* >= --exact-below 25.
    """
    rows = [f"q{q},1,0" for q in range(4) for _ in range(10)] + ["q4,1,1", "q5,0,0"]
    path = write_text(tmp_path / "few.csv", "question_id,A,B\n" + "\n".join(rows) + "\n")
    code, out, err = run_cli(["compare", str(path), "--format", "json"], capsys)
    assert code == 0, err
    row = next(r for r in json.loads(out)["tests"] if r["test"].startswith("mcnemar"))
    assert (row["test"], row["unit"]) == ("mcnemar_midp", "question")
    assert row["p_value"] == pytest.approx(0.0625, abs=1e-12)
