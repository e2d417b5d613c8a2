"""Session 22, t22mcn: compare's McNemar is the mid-p, its chi-square uncorrected.

The exact McNemar and the continuity-corrected chi-square are conservative at the numbers of
discordant pairs compare meets: with two equal systems on 30 questions of 1-6 sentences (about
14 discordant sentences in 9-10 questions), 10,000 seeded data sets a cell, the exact form
rejected 0.023-0.025 at alpha 0.05 on question totals and 0.028 on 105 independent sentences;
the mid-p 0.042-0.044 and 0.047, and at 100 questions 0.048-0.051 against 0.035-0.037, with 9-10
points more power at 30 questions (docs/statistics.md; /tmp/t22mcn/sim.py in notes/t22mcn.md).
Fagerland, Lydersen & Laake (2013) found the same of the classic test over 9595 scenarios.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from failcodes.stats import classification as cl
from tests.cli_helpers import run_cli


def test_midp_on_fagerlands_published_example() -> None:
    """Fagerland et al. (2013), Table 1 (Bentur et al. 2009, 21 children): discordant pairs
    n12 = 1, n21 = 7. Published: exact conditional p 0.070, mid-p 0.039. By hand: exact
    2 P(Bin(8, 1/2) <= 1) = 2 * 9/256 = 0.0703; mid-p = exact - P(X = 1) = 18/256 - 8/256 =
    10/256 = 0.0390625. (main gave the exact 0.0703.)"""
    before = [1] + [1] * 1 + [0] * 7 + [0] * 12
    after = [1] + [0] * 1 + [1] * 7 + [0] * 12
    got = cl.mcnemar(before, after)
    assert got.test == "mcnemar_midp"
    assert got.p_value == 10 / 256
    assert round(got.p_value, 3) == 0.039  # the published value
    assert got.statistic == 1.0  # min(b, c)


def test_chi2_is_statsmodels_uncorrected_to_the_last_digit() -> None:
    """At 25 or more discordant pairs: (b - c)^2 / (b + c), statsmodels' mcnemar with
    correction=False. b = 20, c = 8: 144 / 28 = 5.142857 (main: (12 - 1)^2 / 28 = 4.3214)."""
    a = [1] * 20 + [0] * 8 + [1] * 5
    b = [0] * 20 + [1] * 8 + [1] * 5
    got = cl.mcnemar(a, b)
    ref = sm_mcnemar(np.array([[5, 20], [8, 0]]), exact=False, correction=False)
    assert got.test == "mcnemar_chi2"
    assert (got.statistic, got.p_value) == (ref.statistic, ref.pvalue)
    assert got.statistic == pytest.approx(144 / 28)
    # one sentence per question: the same numbers with the questions given
    ids = [f"q{i}" for i in range(len(a))]
    assert cl.mcnemar(a, b, clusters=ids).p_value == got.p_value


def test_clustered_midp_on_the_thyroid_data_by_hand() -> None:
    """Obuchowski's thyroid data (tests/test_s21_t21cmp.py): per patient d = -2, -2 and
    -1, -1, -1, +1 (15 patients 0); 8 discordant glands, under 25, so the sign-flip mid-p.
    S = 2 (2 B1 - 2) + (2 B2 - 4) = 4 B1 + 2 B2 - 8, B1 ~ Bin(2, 1/2), B2 ~ Bin(4, 1/2); the
    observed |S| = 6. |S| = 8: (B1, B2) = (0, 0) or (2, 4), 1/64 each; |S| = 6: (0, 1) or
    (2, 3), 4/64 each. Mid-p 2/64 + 8/64 / 2 = 6/64 = 0.09375 (main: exact 10/64 = 0.15625)."""
    from tests.test_s21_t21cmp import _glands

    x, ids = _glands()
    got = cl.mcnemar(x[:, 0], x[:, 1], clusters=ids)
    assert got.test == "mcnemar_midp"
    assert got.p_value == 6 / 64


def test_midp_size_and_power_at_30_questions() -> None:
    """400 seeded data sets of 30 questions of 1-6 sentences (t21cmp's design: logit-normal
    question effects on errors, on both systems' calls and on each system's, sd 1; recall 0.7
    and 0.7, then 0.85 and 0.6): rejections at alpha 0.05 of McNemar on question totals. The
    10,000-set runs gave the mid-p 0.044 (size) and 0.378 (power), the exact 0.025 and 0.291.
    These 400 give the mid-p 14 and 146, main's exact form 11 and 116."""
    from scipy.special import expit, logit

    rng = np.random.default_rng(2026120422)

    def rejections(recalls: tuple[float, float]) -> int:
        count = 0
        for _ in range(400):
            q = np.repeat(np.arange(30), rng.integers(1, 7, 30))
            y = rng.random(q.size) < expit(logit(0.3) + rng.normal(0, 1, 30)[q])
            shared = rng.normal(0, 1, 30)[q]
            calls = [
                rng.random(q.size)
                < expit(logit(np.where(y, r, 0.1)) + shared + rng.normal(0, 1, 30)[q])
                for r in recalls
            ]
            p = cl.mcnemar(calls[0][y], calls[1][y], clusters=q[y]).p_value
            count += p is not None and p < 0.05
        return count

    size, power = rejections((0.7, 0.7)), rejections((0.85, 0.6))
    assert size <= 24, size  # 0.06 of 400; here 14 (main's exact form: 11)
    assert power >= 140, power  # 0.35 of 400; here 146 (main's exact form: 116)


def _compare_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = run_cli(["compare", *args, "--resamples", "200", "--format", "json"], capsys)
    assert code == 0, err
    payload: dict[str, Any] = json.loads(out)
    return payload


def test_json_rows_say_the_unit_and_the_clustered_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tests keep their names in both forms (mcnemar_midp on rows or on question totals):
    each row now says its unit and whether it is the clustered form. main's rows had neither
    key, so a JSON reader could not tell t21cmp's clustered p 0.25 from the per-row 0.125."""
    csv = tmp_path / "preds.csv"
    rows = ["question_id,a,b", "q1,1,0", "q1,1,0", "q2,1,0", "q3,1,1", "q3,1,1"]
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    got = _compare_json([str(csv)], capsys)["tests"]
    assert {(r["test"], r["unit"], r["clustered"]) for r in got} == {
        ("cochran_q", "question", True),
        ("mcnemar_midp", "question", True),
    }
    flat = tmp_path / "flat.csv"
    flat.write_text("\n".join(r.split(",", 1)[1] for r in rows) + "\n", encoding="utf-8")
    got = _compare_json([str(flat)], capsys)["tests"]
    assert {(r["unit"], r["clustered"]) for r in got} == {("row", False)}
    assert next(r for r in got if r["test"] == "mcnemar_midp")["p_value"] == 0.125
    # traces: 5 error sentences in 4 questions (q0 holds 2): every test on questions
    from tests.test_s21_t21cmp import _traces_and_labels

    got = _compare_json(_traces_and_labels(tmp_path), capsys)["tests"]
    assert {(r["unit"], r["clustered"]) for r in got} == {("question", True)}
    assert len(got) == 4  # cochran_q, mcnemar_midp, permutation_f1, permutation_recall


@pytest.mark.parametrize("column", ["qid", "question", "q_id", "prompt_id", "QuestionID"])
def test_a_files_question_column_under_its_usual_spellings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    """q1 holds 2 rows a=1, b=0, q2 1 such row, q3 2 rows both 1: on question totals d = +2,
    +1, mid-p 0.25; per row (b 3, c 0) 0.125. main read `qid`, `question` and `QuestionID` as a
    system ("expected 0/1 ... got 'q1'", exit 2) and `q_id`, `prompt_id` as plain unit ids,
    the 5 rows independent (p 0.125, "each row counts as one unit in every test")."""
    csv = tmp_path / "preds.csv"
    rows = [f"{column},a,b", "q1,1,0", "q1,1,0", "q2,1,0", "q3,1,1", "q3,1,1"]
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    got = _compare_json([str(csv)], capsys)
    first = f"Assumed: systems (2): a, b; unit ids: column(s) '{column}'"
    assert got["assumed"].startswith(first), got["assumed"]
    assert "hold several of the 5 rows, which are not independent" in got["assumed"]
    assert f"from column '{column}'" in got["assumed"]
    mcnemar = next(r for r in got["tests"] if r["test"] == "mcnemar_midp")
    assert (mcnemar["p_value"], mcnemar["unit"]) == (0.25, "question")


def test_question_id_is_taken_before_a_question_text_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both present: question_id (q1 q1 q2 q3 q3) groups, not the question text (each row its
    own): mid-p 0.25 as above, not 0.125."""
    csv = tmp_path / "preds.csv"
    rows = ["question,question_id,a,b"] + [
        f"text {i},{q},{a},{b}"
        for i, (q, a, b) in enumerate(
            [("q1", 1, 0), ("q1", 1, 0), ("q2", 1, 0), ("q3", 1, 1), ("q3", 1, 1)]
        )
    ]
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    got = _compare_json([str(csv)], capsys)
    assert "from column 'question_id'" in got["assumed"], got["assumed"]
    assert next(r for r in got["tests"] if r["test"] == "mcnemar_midp")["p_value"] == 0.25


@pytest.mark.parametrize("seed", range(4))
def test_classic_forms_on_request_are_statsmodels(seed: int) -> None:
    """form="exact" (compare --mcnemar exact), to reproduce a paper: below 25 discordant pairs
    statsmodels' mcnemar(exact=True), above mcnemar(exact=False, correction=True) = (|b - c| -
    1)^2 / (b + c); named mcnemar_exact / mcnemar_chi2_corrected so a reader can tell."""
    rng = np.random.default_rng(seed)
    for n, exact in ((20, True), (400, False)):
        a, b = (rng.random((2, n)) < np.array([[0.5], [0.7]])).astype(float)
        table = np.array(
            [
                [((a == 1) & (b == 1)).sum(), ((a == 1) & (b == 0)).sum()],
                [((a == 0) & (b == 1)).sum(), ((a == 0) & (b == 0)).sum()],
            ]
        )
        assert (table[0, 1] + table[1, 0] < 25) == exact
        ref = sm_mcnemar(table, exact=exact, correction=True)
        got = cl.mcnemar(a, b, form="exact")
        assert got.test == ("mcnemar_exact" if exact else "mcnemar_chi2_corrected")
        assert got.statistic == ref.statistic
        assert got.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_classic_exact_on_fagerlands_example_and_the_thyroid_data() -> None:
    """Fagerland et al. (2013): exact conditional 2 * 9/256 = 0.0703 (published 0.070);
    thyroid question totals: exact P(|S| >= 6) = 10/64 (enumerated above)."""
    before = [1] + [1] * 1 + [0] * 7 + [0] * 12
    after = [1] + [0] * 1 + [1] * 7 + [0] * 12
    assert cl.mcnemar(before, after, form="exact").p_value == 18 / 256
    from tests.test_s21_t21cmp import _glands

    x, ids = _glands()
    assert cl.mcnemar(x[:, 0], x[:, 1], clusters=ids, form="exact").p_value == 10 / 64


def test_compare_mcnemar_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--mcnemar exact on the question_id FILE above: exact sign-flip p 0.5 (mid-p 0.25), named
    mcnemar_exact; an unknown form is refused in one line, nothing on stdout."""
    csv = tmp_path / "preds.csv"
    rows = ["question_id,a,b", "q1,1,0", "q1,1,0", "q2,1,0", "q3,1,1", "q3,1,1"]
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    got = _compare_json([str(csv), "--mcnemar", "exact"], capsys)["tests"]
    mcnemar = next(r for r in got if r["test"].startswith("mcnemar"))
    assert (mcnemar["test"], mcnemar["p_value"]) == ("mcnemar_exact", 0.5)
    code, out, err = run_cli(["compare", str(csv), "--mcnemar", "fisher"], capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "--mcnemar must be midp or exact, got 'fisher'" in err, err
