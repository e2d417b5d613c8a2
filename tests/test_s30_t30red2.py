"""Session 30, helper t30red2: agree / compare and the Python API on shapes the tests did not
use (a majority column under a name with no consensus word, ...).

Each test names what main gave and the value worked by hand (or by an independent package)
beside the assertion.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from tests.cli_helpers import run_cli

#: Three raters of 30 units (a/b) and their row-wise majority under a name with no consensus
#: word. 21 unanimous units (12 a, 9 b); on 9 units one rater dissents (each rater 3 times).
THREE = [("a", "a", "a")] * 12 + [("b", "b", "b")] * 9
THREE += [("b", "a", "a"), ("a", "b", "a"), ("a", "a", "b"), ("b", "a", "a"), ("a", "b", "a")]
THREE += [("a", "b", "b"), ("b", "a", "b"), ("b", "b", "a"), ("a", "b", "b")]


# `y` was a case here: it is now left out by name (an outcome, tests/test_s30_t30left.py)
@pytest.mark.parametrize("name", ["R_all", "z", "adj"])
def test_a_majority_column_named_like_nothing_is_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Before: the majority column, never departing from the others' majority on its 30
    rows while each rater is the lone dissenter on 3 of 30 (the others' rate 9/90 = 10%),
    was read as a fourth rater with no word: a rater as often right would never dissent with
    probability 0.9^30 = 0.042, above the 0.01 the first line's test used. Now said on the
    first line (never departing, p < 0.05), still read as a rater (said, not left out)."""
    frame = pd.DataFrame(THREE, columns=["r1", "r2", "r3"])
    frame.insert(0, "unit", range(1, 31))
    frame[name] = [Counter(r).most_common(1)[0][0] for r in THREE]
    path = tmp_path / "ratings.csv"
    frame.to_csv(path, index=False)
    args = ["agree", str(path), "--stat", "fleiss", "--bootstrap", "0"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    first = out.splitlines()[0]
    assert (
        f"{name} equals the row-wise majority of the other columns on 30 of 30 rows (the other "
        "columns equal theirs on 90%): a consensus of r1, r2 and r3? read here as a rater "
        "(--raters r1,r2,r3 leaves it out)"
    ) in first
    # Fleiss by hand, n = 4: P_i = 1 on 21 units, (9 + 1 - 4) / 12 = 0.5 on 9, mean 0.85;
    # p_a = (48 + 15 + 4) / 120 = 67/120, P_e = (67^2 + 53^2) / 120^2 = 7298/14400;
    # kappa = (0.85 - 0.506806) / 0.493194 = 0.695860 (statsmodels fleiss_kappa: 0.6958603)
    code, out, _ = run_cli([*args, "--format", "json"], capsys)
    assert json.loads(out)[0]["value"] == pytest.approx(0.6958603, abs=1e-6)
    # the way the line names: the three raters, by hand (n = 3): P_i = 1 or 1/3, mean 0.8;
    # p_a = 50/90, P_e = 41/81; kappa = (0.8 - 41/81) / (40/81) = 23.8/40 = 0.595
    code, out, _ = run_cli([*args, "--raters", "r1,r2,r3", "--format", "json"], capsys)
    assert json.loads(out)[0]["value"] == pytest.approx(0.595)


def test_a_record_holding_every_systems_answer_is_read_a_row_per_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a JSONL line {id, claim, has_error, systems: {A: {verdict}, B: {verdict}}}
    was refused asking for a verdict column, and --option rows=systems.* was refused (a rows
    path had to end in a list): no way through but a script. Now the refusal names the
    options and rows=systems.* reads each key's object as a row of that system."""
    answers = [  # id, has_error, A's verdict, B's verdict
        ("q1", True, "refuted", "supported"),
        ("q2", False, "supported", "supported"),
        ("q3", True, "supported", "refuted"),
        ("q4", False, "supported", "refuted"),
        ("q5", True, "refuted", "refuted"),
        ("q6", False, "supported", "supported"),
    ]
    src = tmp_path / "nested.jsonl"
    src.write_text(
        "".join(
            json.dumps(
                {
                    "id": q,
                    "claim": f"claim {q}",
                    "has_error": e,
                    "systems": {"A": {"verdict": a}, "B": {"verdict": b}},
                }
            )
            + "\n"
            for q, e, a, b in answers
        )
    )
    traces, labels = tmp_path / "traces.jsonl", tmp_path / "labels.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(src), "--out", str(traces)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--option 'rows=systems.*' --map 'systems.*=system'" in err
    args = ["ingest", "generic", str(src), "--option", "rows=systems.*"]
    args += ["--map", "systems.*=system", "--map", "id=sentence_id", "--out", str(traces)]
    args += ["--label-rule", "has_error = true -> error", "--labels-out", str(labels)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "--bootstrap", "0"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    rows = {r["system"]: r for r in json.loads(out)}
    # by hand, refuted = error flagged: A flags q1, q5 (errors: TP 2), misses q3 (FN 1),
    # passes q2, q4, q6 (TN 3); B flags q3, q5 (TP 2) and q4 (FP 1), misses q1 (FN 1), TN 2
    got = {s: tuple(rows[s][k] for k in ("tp", "fp", "fn", "tn")) for s in rows}
    assert got == {"A": (2, 0, 1, 3), "B": (2, 1, 1, 2)}


def test_compare_reads_a_column_named_y_as_the_truth_not_a_third_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before (t30red's find): compare FILE with columns id, sysA, sysB, y (scikit-learn's
    name for the truth) read y as a third system: Cochran's Q over sysA, sysB, y and McNemar
    pairs 'sysA vs y', exit 0. Now refused asking for --truth y, as 'gold' or 'y_true' is."""
    path = tmp_path / "outcomes.csv"
    rows = ["1,1,1,1", "2,0,1,1", "3,1,0,0", "4,0,0,0", "5,1,1,0", "6,1,0,1", "7,0,0,1"]
    path.write_text("id,sysA,sysB,y\n" + "\n".join([*rows, "8,1,1,1"]) + "\n")
    code, _, err = run_cli(["compare", str(path)], capsys)
    assert code == 2 and "give the reference with --truth y" in err
    code, out, err = run_cli(["compare", str(path), "--truth", "y", "--format", "json"], capsys)
    assert code == 0, err
    f1 = next(r for r in json.loads(out)["tests"] if r["test"] == "permutation_f1")
    # by hand against y: sysA TP 3 (units 1, 6, 8), FP 2 (3, 5), FN 2 (2, 7): F1 6/10;
    # sysB TP 3 (1, 2, 8), FP 1 (5), FN 2 (6, 7): F1 6/9; difference 0.6 - 0.6667 = -1/15
    assert f1["statistic"] == pytest.approx(-1 / 15)
    # one-letter systems X, Y, Z: Y stays a system
    (tmp_path / "xyz.csv").write_text(path.read_text().replace("sysA,sysB,y", "X,Y,Z"))
    code, out, _ = run_cli(["compare", str(tmp_path / "xyz.csv")], capsys)
    assert code == 0 and out.startswith("Assumed: systems (3): X, Y, Z;")


def test_two_rating_rounds_in_one_table_name_by_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a table of two rating rounds of the same raters (unit, round, r1, r2) was
    refused asking for --long RATER_COLUMN,RATING_COLUMN (a rater column it does not have).
    Now the refusal names the column that tells a unit's rows apart and --by round, which
    reads each round apart."""
    first = [("a", "a"), ("b", "b"), ("a", "b"), ("b", "b")]
    first += [("a", "a"), ("c", "c"), ("a", "a"), ("b", "a")]
    second = [("a", "a"), ("b", "b"), ("a", "b"), ("a", "b")]
    second += [("a", "c"), ("c", "c"), ("b", "a"), ("b", "b")]
    lines = [
        f"{u},{k},{a},{b}"
        for k, rnd in ((1, first), (2, second))
        for u, (a, b) in enumerate(rnd, 1)
    ]
    path = tmp_path / "rounds.csv"
    path.write_text("unit,round,r1,r2\n" + "\n".join(lines) + "\n")
    code, _, err = run_cli(["agree", str(path), "--bootstrap", "0"], capsys)
    assert code == 2 and "told apart by 'round' (1, 2)" in err and "--by round" in err
    args = ["agree", str(path), "--by", "round", "--stat", "cohen", "--bootstrap", "0"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    kappa = {str(r["round"]): r["value"] for r in json.loads(out)}
    # by hand, round 1: agree on 6 of 8; r1 a 4, b 3, c 1; r2 a 4, b 3, c 1: P_e = 26/64,
    # kappa = (48/64 - 26/64) / (38/64) = 22/38 = 0.5789. Round 2: agree on 4 of 8; r1 a 4,
    # b 3, c 1; r2 a 2, b 4, c 2: P_e = 22/64, kappa = (32 - 22) / (64 - 22) = 10/42 = 0.2381
    assert kappa == {"1": pytest.approx(22 / 38), "2": pytest.approx(10 / 42)}


def test_read_traces_and_labels_given_a_file_object_refuse_in_one_line(tmp_path: Path) -> None:
    """Before: fc.read_traces(open(path)) and fc.read_labels(open(path)) (a notebook's open
    file) were a TypeError traceback ("expected str, bytes or os.PathLike object, not
    TextIOWrapper"); read_ratings_frame already refused one in one line. Now a ConfigError
    line naming what was given and the way (its .name)."""
    import failcodes as fc
    from failcodes.errors import ConfigError

    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"system": "A", "sentence_id": "s1", "verdict": "refuted"}) + "\n")
    for read in (fc.read_traces, fc.read_labels):
        with path.open() as handle, pytest.raises(ConfigError) as caught:
            read(handle)
        assert str(caught.value) == (
            "path: expected a file's path (str or pathlib.Path), not TextIOWrapper (give its .name)"
        )


def test_compare_names_a_truth_column_with_spaces_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a reference column 'Actual Label' was refused naming '--truth Actual Label',
    which a shell reads as --truth Actual and a stray argument. Now quoted as a shell reads it
    ('--truth 'Actual Label''), and that command reads it: F1 difference -1/15 as for 'y'."""
    path = tmp_path / "outcomes.csv"
    rows = ["1,1,1,1", "2,0,1,1", "3,1,0,0", "4,0,0,0", "5,1,1,0", "6,1,0,1", "7,0,0,1"]
    path.write_text("id,sysA,sysB,Actual Label\n" + "\n".join([*rows, "8,1,1,1"]) + "\n")
    code, _, err = run_cli(["compare", str(path)], capsys)
    assert code == 2 and "give the reference with --truth 'Actual Label' (F1" in err
    code, out, err = run_cli(["compare", str(path), "--truth", "Actual Label"], capsys)
    assert code == 0, err
    args = ["compare", str(path), "--truth", "Actual Label", "--format", "json"]
    code, out, _ = run_cli(args, capsys)
    f1 = next(r for r in json.loads(out)["tests"] if r["test"] == "permutation_f1")
    assert f1["statistic"] == pytest.approx(-1 / 15)  # by hand, as in the test above
