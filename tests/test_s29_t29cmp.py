"""Session 29, t29cmp: compare / metrics / corrected shares, t28cmp's left items (issue 30).

Each test asserts a value computed by hand (the working beside it) and fails with main's src
before its fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from failcodes.metrics import bootstrap_intervals, counts_by_cluster
from failcodes.stats.bootstrap import multinomial_weights
from failcodes.stats.classification import cochrans_q
from tests.cli_helpers import run_cli, write_text


def test_few_clusters_and_concentration_are_both_named() -> None:
    """10 questions, one holding 20 of the 29 positives: both reasons, not the first alone.

    Kish's effective number of clusters of recall's denominator (positives per question
    20, 1 x 9): (sum d)^2 / sum d^2 = 29^2 / (20^2 + 9) = 841 / 409 = 2.056 -> "worth 2.1
    equal ones (< 15)"; and 10 clusters (< 20). The two were elif: only "only 10 clusters".
    """
    sizes = [20] + [1] * 9
    cluster = np.repeat(np.arange(10), [s * 2 for s in sizes])
    label = np.tile([True, False], sum(sizes))
    pred = np.random.default_rng(0).random(cluster.size) < 0.5
    per = counts_by_cluster(cluster, np.zeros(cluster.size, dtype=int), label, pred, 10, 1)
    weights = multinomial_weights(10, 200, np.random.default_rng(1))
    warning = bootstrap_intervals(per, weights, 0.95)[0]["recall"].warning
    assert warning is not None
    assert "only 10 clusters (< 20)" in warning
    assert "units concentrated in few clusters: worth 2.1 equal ones (< 15)" in warning


def test_cochran_q_of_two_systems_is_labelled_by_the_pair_defined_or_not() -> None:
    """Two systems: the Q row's comparison is "A vs B" whether Q is defined or 0/0.

    A = B on every unit (1, 0, 1): no unit has mixed outcomes, Q is 0/0 (undefined) and the row
    read "all"; with one discordant unit (A 1, B 0 on unit 1) Q is defined and read "A vs B".
    Q defined: column sums C = 3, 2 (T = 5), row sums R = 2, 1, 2 (sum R = 5, sum R^2 = 9);
    (k-1)(k sum C^2 - T^2) / (k sum R - sum R^2) = 1 (2 * 13 - 25) / (2 * 5 - 9) = 1.
    """
    tied = cochrans_q(np.array([[1, 1], [0, 0], [1, 1]]), names=["A", "B"])
    assert (tied.statistic, tied.comparison) == (None, "A vs B")
    apart = cochrans_q(np.array([[1, 1], [1, 0], [1, 1]]), names=["A", "B"])
    assert (apart.statistic, apart.comparison) == (pytest.approx(1.0), "A vs B")


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("A,B,", "--systems 'A,B,': an empty system name (a comma at an end or two together)"),
        ("A,,B", "--systems 'A,,B': an empty system name"),
        ("A,A", "--systems 'A,A': A given twice; name each once"),
    ],
)
def test_systems_with_an_empty_or_repeated_name_are_refused_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str, said: str
) -> None:
    """`--systems A,B,` read "no column ''"; `A,A` "system names must be unique" (no option)."""
    path = write_text(tmp_path / "o.csv", "unit_id,A,B\n0,1,1\n1,0,0\n2,1,0\n")
    code, out, err = run_cli(["compare", str(path), "--systems", given], capsys)
    assert code == 2
    assert out == ""
    assert said in err
    assert len(err.strip().splitlines()) == 1
    # the same names are right without the stray comma: McNemar b=1, c=0, mid-p = 2*(1/2) - 1/2
    code, out, err = run_cli(["compare", str(path), "--systems", "A,B", "--format", "json"], capsys)
    assert code == 0, err
    rows = {r["test"]: r for r in json.loads(out)["tests"]}
    assert rows["mcnemar_midp"]["p_value"] == pytest.approx(0.5)


def test_ppi_not_random_note_says_it_is_a_test_at_5_percent() -> None:
    """A draw a random one makes 1 time in 49 gets the note: it says what the threshold is.

    12 labelled units of 52, the judge coding 1 on 6 of the 52: 4 of them among the 12
    labelled (2 among the 40 unlabelled). Hypergeometric P(a) = C(6,a) C(46,12-a) / C(52,12):
    P(4) = 0.018965, P(5) = 0.001556, P(6) = 0.0000454, and every other a is likelier than
    P(4) (P(0) = 0.1885, P(3) = 0.1068), so the two-sided Fisher p = 0.018965 + 0.001556 +
    0.0000454 = 0.020566, and a random draw fires the note exactly when a >= 4: 2.06% of them.
    Before, the note read "look unlike a random draw ... (two-sided Fisher exact p = 0.021)",
    nothing saying a random draw does that 1 time in 20 at most (docs/statistics.md).
    """
    from failcodes.stats.ppi import ppi_mean

    y = [1, 1, 1, 1] + [0] * 8
    result = ppi_mean(y, y, [1, 1] + [0] * 38)
    assert result.warning is not None
    assert (
        "the judge coded 1 on 4 of 12 labelled and 2 of 40 unlabelled (two-sided Fisher exact "
        "p = 0.021; this note shows below p = 0.05, which at most 1 random draw in 20 reaches)"
    ) in result.warning


def _concentrated_rows() -> str:
    """35 questions: q0 holds 20 positive sentences (A flags 16, B 10); q1-q5 one positive
    each (A flags q1-q4, B q1-q2); q6-q34 one negative each (B flags q6). 54 units."""
    rows = ["question_id,unit_id,gold,A,B"]
    rows += [f"q0,q0s{s},1,{int(s < 16)},{int(s < 10)}" for s in range(20)]
    rows += [f"q{q},q{q}s0,1,{int(q <= 4)},{int(q <= 2)}" for q in range(1, 6)]
    rows += [f"q{q},q{q}s0,0,0,{int(q == 6)}" for q in range(6, 35)]
    return "\n".join(rows) + "\n"


def test_compare_bootstrap_interval_warns_of_units_concentrated_in_few_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """35 questions (>= 20), 25 positives (>= 15), 54 units (>= 50): no reason was given.

    But q0 holds 20 of the 25 positives. Kish's effective number of questions behind recall
    (positives per question 20, 1 x 5): 25^2 / (20^2 + 5) = 625 / 405 = 1.54; behind F1
    (positives or flagged by A or B: 20, 1 x 5, and q6 B's false alarm): 26^2 / (400 + 6) =
    676 / 406 = 1.67. metrics warns below 15; compare's bootstrap interval said nothing, and
    in a simulation of 25 questions, one holding 60 sentences (Kish 1.9), its 95% intervals
    covered 0.915 (F1) and 0.900 (recall) of 400 (t29cmp report). Recall A = (16 + 4) / 25 =
    0.8, B = (10 + 2) / 25 = 0.48: effect 0.32.
    """
    path = write_text(tmp_path / "conc.csv", _concentrated_rows())
    args = ["compare", str(path), "--truth", "gold", "--method", "bootstrap"]
    code, out, err = run_cli([*args, "--resamples", "500", "--format", "json"], capsys)
    assert code == 0, err
    rows = {r["test"]: r for r in json.loads(out)["tests"]}
    assert rows["bootstrap_recall"]["effect"] == pytest.approx(0.32)
    assert (rows["bootstrap_recall"]["n"], rows["mcnemar_midp"]["n"]) == (54, 25)
    assert rows["bootstrap_recall"]["note"] == (
        "interval: units concentrated in few clusters: worth 1.5 equal ones (< 15)"
    )
    assert rows["bootstrap_f1"]["note"] == (
        "interval: units concentrated in few clusters: worth 1.7 equal ones (< 15)"
    )


def test_compare_bootstrap_interval_from_few_resamples_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--method bootstrap --resamples 5` printed a "95%" interval of 5 values with no word.

    The concentrated file above (54 units, as rows: no question column here, so each row is
    a unit and the Kish reason does not apply) with 5 resamples: a percentile interval of 5
    differences sits near their extremes (metrics says "interval from only 5 bootstrap
    resamples (fewer than 200 ..." of its own; interval_warning's MIN_MC_RESAMPLES = 20 x 10
    batches). In session 29's run a 156-unit file read F1 difference [0.045, 0.221], 0 outside,
    where 400,000 resamples give [-0.016, 0.315]. And `--resamples 0` was refused as "number
    of resamples must be >= 1", naming no option.
    """
    rows = _concentrated_rows().replace("question_id,unit_id", "topic,unit_id")
    path = write_text(tmp_path / "rows.csv", rows)
    args = ["compare", str(path), "--truth", "gold", "--unit-column", "unit_id"]
    code, out, err = run_cli(
        [
            *args,
            "--method",
            "bootstrap",
            "--resamples",
            "5",
            "--systems",
            "A,B",
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0, err
    rows_out = {r["test"]: r for r in json.loads(out)["tests"]}
    for test in ("bootstrap_f1", "bootstrap_recall"):
        # the note's head names the interval once (session 30: "interval: interval from ...")
        assert rows_out[test]["note"].startswith(
            "interval: from only 5 bootstrap resamples (fewer than 200"
        )
    code, out, err = run_cli([*args, "--systems", "A,B", "--resamples", "0"], capsys)
    assert code == 2
    assert "'--resamples'" in err and "greater than or equal to 1" in err


def test_equal_clusters_are_not_called_concentrated() -> None:
    """Named beside 'only N clusters' only where the sizes differ: 10 equal questions are
    worth 10 equal ones (Kish 10^2 / 10 = 10 < 15, but 10 of 10), one question worth 1.

    With both reasons named (the elif gone), 10 equal questions would read "units concentrated
    in few clusters: worth 10.0 equal ones" and one question "worth 1.0": false words. The rule:
    below 20 clusters, concentrated when worth fewer than 15/20 of their number (2.06 < 7.5 in
    the test above; 10 and 1 are not).
    """
    from failcodes.stats.bootstrap import interval_warning

    ten = interval_warning(0.5, 0.3, 0.7, n_clusters=10, effective_clusters=10.0)
    assert ten == "only 10 clusters (< 20)"
    one = interval_warning(0.5, 0.5, 0.5, n_clusters=1, effective_clusters=1.0)
    assert one == "zero-width interval; only 1 clusters (< 20)"
    uneven = interval_warning(0.5, 0.3, 0.7, n_clusters=10, effective_clusters=29**2 / 409)
    assert uneven == (
        "only 10 clusters (< 20); units concentrated in few clusters: worth 2.1 equal ones (< 15)"
    )
