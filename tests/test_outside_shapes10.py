"""Shapes from redteam10's outside check (issue 30): each failed before its fix."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import failcodes as fc
from failcodes.errors import InputError
from tests.cli_helpers import run_cli


def _percent(frame: pd.DataFrame) -> float:
    (row,) = fc.agreement_table(fc.ratings_from_frame(frame), ["percent"])
    assert row.value is not None
    return row.value


def test_api_frame_with_a_rating_in_another_case_is_refused() -> None:
    # r1 wrote 'Yes' on item 3 where everyone else wrote 'yes'. Read as one category the
    # raters agree on all 5 items (percent 5/5 = 1.0); read as written, 'Yes' and 'yes' were
    # two categories and item 3 a disagreement: 4/5 = 0.8, exit 0 (the CLI refuses the same
    # table in one line; the Python API did not).
    frame = pd.DataFrame(
        {
            "item": [1, 2, 3, 4, 5],
            "r1": ["yes", "no", "Yes", "yes", "no"],
            "r2": ["yes", "no", "yes", "yes", "no"],
        }
    )
    with pytest.raises(InputError) as err:
        fc.ratings_from_frame(frame)
    assert err.value.field == "r1"
    assert "'Yes' is 'yes'" in str(err.value)
    frame.loc[2, "r1"] = "yes"
    assert _percent(frame) == pytest.approx(1.0)  # 5/5


def test_api_frame_with_a_date_rating_is_refused() -> None:
    # an Excel column read by pandas: 1/2 became a date; as a category it matched only
    # another identical date
    frame = pd.DataFrame(
        {"item": [1, 2], "r1": [pd.Timestamp("2024-01-02"), "3"], "r2": ["1/2", "3"]}
    )
    with pytest.raises(InputError, match="date or time"):
        fc.ratings_from_frame(frame)


def _boolean_column_table(path: Path, wrong: list[object]) -> None:
    table = pa.table(
        {
            "system": ["A"] * 4,
            "question_id": ["q"] * 4,
            "sentence_id": ["s0", "s1", "s2", "s3"],
            "claim": ["w", "x", "y", "z"],
            "verdict": ["refuted", "supported", "refuted", "supported"],
            "wrong": wrong,
        }
    )
    pq.write_table(table, path)


@pytest.mark.parametrize(
    ("wrong", "rule", "spelling"),
    [
        ([True, False, False, True], "wrong = 1 -> error", "'1', which no row has, and not 'True'"),
        ([1.0, 0.0, 0.0, 1.0], "wrong = true -> error", "'true', which no row has, and not '1.0'"),
        ([True, False, False, True], "wrong in {yes} -> error", "'yes', which no row has"),
    ],
)
def test_label_rule_naming_a_truth_value_the_rows_write_another_way_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    wrong: list[object],
    rule: str,
    spelling: str,
) -> None:
    # A Parquet column 'wrong' holding booleans (read as true/false) and the rule 'wrong = 1':
    # no row matched '1', so all four got the opposite label: 0 error / 4 no-error where the
    # column says 2 / 2 (s0 and s3 are True), exit 0 with a note "no row has '1'".
    path = tmp_path / "t.parquet"
    _boolean_column_table(path, wrong)
    args = ["ingest", "generic", str(path), "-o", str(tmp_path / "t.jsonl")]
    code, _, err = run_cli(
        [*args, "--labels-out", str(tmp_path / "l.jsonl"), "--label-rule", rule], capsys
    )
    assert code == 2
    assert err.count("\n") == 1 and spelling in err and "field 'wrong'" in err
    assert not (tmp_path / "l.jsonl").exists()


def test_label_rule_written_as_the_column_writes_it_labels_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the same column with the rule's value as the rows write it: s0 and s3 errors (True),
    # s1 and s2 not: 2 error / 2 no-error
    path = tmp_path / "t.parquet"
    _boolean_column_table(path, [True, False, False, True])
    labels = tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(path), "-o", str(tmp_path / "t.jsonl")]
    code, _, _ = run_cli(
        [*args, "--labels-out", str(labels), "--label-rule", "wrong = true -> error"], capsys
    )
    assert code == 0
    got = [json.loads(line) for line in labels.read_text().splitlines()]
    assert [(g["sentence_id"], g["has_error"]) for g in got] == [
        ("s0", True),
        ("s1", False),
        ("s2", False),
        ("s3", True),
    ]


def _two_systems_one_sentence_two_ways(d: Path, other: str) -> tuple[Path, Path]:
    # A writes the labelled sentence 's\u00e90' (or 's0'); B writes it ``other``: the same
    # sentence, in another Unicode form (NFD) or case. Verdicts alike in A and B.
    first = unicodedata.normalize("NFC", other) if other != "S0" else "s0"
    rows = []
    for system, s0 in (("A", first), ("B", other)):
        for i, verdict in enumerate(["refuted", "supported", "refuted", "supported"]):
            sid = s0 if i == 0 else f"s{i}"
            rows.append(
                {"system": system, "question_id": "q1", "sentence_id": sid, "claim_id": sid}
                | {"claim": f"x{i}", "verdict": verdict}
            )
    labels = [(first, True), ("s1", False), ("s2", True), ("s3", False)]
    traces, labelled = d / "t.jsonl", d / "l.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    labelled.write_text(
        "".join(json.dumps({"sentence_id": s, "has_error": e}) + "\n" for s, e in labels),
        encoding="utf-8",
    )
    return traces, labelled


@pytest.mark.parametrize(
    ("other", "how"),
    [(unicodedata.normalize("NFD", "s\u00e90"), "Unicode form"), ("S0", "in another case")],
)
def test_a_labelled_sentence_one_system_writes_another_way_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], other: str, how: str
) -> None:
    # By hand, one sentence: A and B both refute s0 and s2 (errors) and support s1 and s3:
    # TP 2, TN 2 each. Read as two ids, the label named A's s0 only: B's claim under its
    # spelling was unlabelled, and the labelled s0, which B "made no claim for", counted as no
    # error flagged: B TP 1, FN 1, TN 2 (recall 50% for 100%), exit 0.
    traces, labels = _two_systems_one_sentence_two_ways(tmp_path, other)
    args = ["--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    for command in (
        ["metrics", *args, "--bootstrap", "0"],
        ["disagreements", *args, "-o", str(tmp_path / "d.jsonl")],
        ["compare", *args],
    ):
        code, out, err = run_cli(command, capsys)
        assert code == 2, command
        assert err.count("\n") == 1 and how in err and "l.jsonl:1, field 'sentence_id'" in err
        assert not out and not (tmp_path / "d.jsonl").exists()


def test_the_same_sentence_written_one_way_scores_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the control: B writes 's\u00e90' as A does: TP 2, FP 0, FN 0, TN 2 for both systems
    traces, labels = _two_systems_one_sentence_two_ways(tmp_path, "s\u00e90")
    out = tmp_path / "m.json"
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, _, _ = run_cli([*args, "--bootstrap", "0", "--format", "json", "-o", str(out)], capsys)
    assert code == 0
    rows = json.loads(out.read_text())
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("A", 2, 0, 0, 2),
        ("B", 2, 0, 0, 2),
    ]


def test_cohen_interval_zero_but_for_rounding_is_warned() -> None:
    # r1 says 1 on all 6 units, r2 on 5 (0 on the last). p_o = 5/6; marginals r1 (1: 1),
    # r2 (1: 5/6, 0: 1/6), so p_e = 5/6 and kappa = 0. Its delta-method variance (Fleiss,
    # Cohen & Everitt 1969) at kappa 0: sum_i p_ii (1 - (p_i. + p_.i))^2 + sum_{i!=j} p_ij
    # (p_.i + p_j.)^2 - p_e^2 = 5/6 (5/6)^2 + 1/6 (5/6)^2 - (5/6)^2 = 0: the interval is
    # [0, 0]. Computed, the SE is 2.6e-8 (statsmodels' cohens_kappa too), and the 1e-12 test
    # missed it: Conger's identical zero-width interval was warned, Cohen's not.
    frame = pd.DataFrame({"item": range(1, 7), "r1": [1] * 6, "r2": [1, 1, 1, 1, 1, 0]})
    rows = fc.agreement_table(fc.ratings_from_frame(frame), ["cohen", "conger"])
    for row in rows:
        assert row.value == pytest.approx(0.0, abs=1e-12)
        assert row.se is not None and row.se < 1e-6
        assert row.warning is not None and "zero-width interval" in row.warning, row.statistic


BY_TABLE = (
    "item,dim,r1,r2\n1,a,low,mid\n2,a,high,high\n3,a,mid,mid\n4,a,low,low\n"
    "1,b,low,mid\n2,b,mid,mid\n3,b,low,low\n4,b,mid,low\n"
)


def test_by_group_using_fewer_categories_than_the_table_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Group b never uses 'high': r1 low, mid, low, mid; r2 mid, mid, low, low; they agree on
    # items 2 and 3, p_a = 1/2. Brennan-Prediger is (p_a - 1/q) / (1 - 1/q): on the table's
    # scale (q = 3) (1/2 - 1/3) / (2/3) = 0.25; on the group's own values (q = 2) 0.0, which
    # was printed with no word that q had changed between groups.
    path = tmp_path / "by.csv"
    path.write_text(BY_TABLE)
    args = ["agree", str(path), "--by", "dim", "--stat", "brennan_prediger", "--bootstrap", "0"]
    code, out, _ = run_cli([*args, "--format", "json"], capsys)
    assert code == 0
    rows = {r["dim"]: r for r in json.loads(out)}
    assert rows["b"]["value"] == pytest.approx(0.0)  # the group's q = 2, now said
    assert any("'b': 2, without high" in n for n in rows["b"]["notes"])
    code, out, _ = run_cli([*args, "--format", "json", "--categories", "low,mid,high"], capsys)
    rows = {r["dim"]: r for r in json.loads(out)}
    assert rows["b"]["value"] == pytest.approx(0.25)
    assert not any("category set is the values" in n for n in rows["b"]["notes"])


def test_a_system_whose_every_claims_list_is_empty_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The tutorial's answers keyed by system, plus sysC answering all 4 questions with no
    # claim: sysC has no row, so no trace, and vanished from every output with only "5
    # list(s) ... missing or empty" (sysA's answer to question 4 is the fifth).
    source = Path(__file__).parent.parent / "docs" / "tutorial" / "answers-by-system.jsonl"
    records = [json.loads(line) for line in source.read_text().splitlines()]
    for record in records:
        record["answers"]["sysC"] = {"model": "c", "claims": []}
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(path), "-o", str(tmp_path / "t.jsonl")),
            *("--option", "rows=answers.*.claims[]", "--map", "#=question_id"),
            *("--map", "answers.*.claims#=sentence_id", "--option", "sentence_ids=question"),
            *("--map", "answers.*=system", "--option", "unmapped=drop", "--verdict", "supported"),
        ],
        capsys,
    )
    assert code == 0
    assert "5 list(s) or object(s) on the rows path missing or empty" in err
    assert "no trace and in no output: sysC (4)" in err
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    systems = {json.loads(line)["system"] for line in lines}
    assert systems == {"sysA", "sysB"}


def test_a_kappa_below_zero_by_less_than_the_last_digit_prints_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 73 units: (yes, yes) 5, (yes, no) 1, (no, yes) 56, (no, no) 11. p_o = 16/73; r1 says yes
    # on 6/73, r2 on 61/73, so p_e = (6 * 61 + 67 * 12) / 73^2 = 1170/5329 and Cohen's kappa =
    # (16 * 73 - 1170) / (5329 - 1170) = -2/4159 = -0.00048. Printed to three places it is
    # zero: the table showed '-0.000' (a sign with no digit behind it), now '0.000'.
    rows = [("yes", "yes")] * 5 + [("yes", "no")] + [("no", "yes")] * 56 + [("no", "no")] * 11
    path = tmp_path / "near_zero.csv"
    path.write_text("item,r1,r2\n" + "".join(f"{i},{a},{b}\n" for i, (a, b) in enumerate(rows)))
    args = ["agree", str(path), "--stat", "cohen", "--bootstrap", "0"]
    code, out, _ = run_cli([*args, "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)[0]["value"] == pytest.approx(-2 / 4159)  # the number keeps its sign
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    assert "-0.000" not in out
    assert "│ 0.000" in out


def _a_claim_label_and_two_ways(d: Path, b_writes: str) -> tuple[Path, Path]:
    # A and B make the same four claims (c0 of sentence s0, ...), refuting c0 and c2; B writes
    # c0 as ``b_writes``. The clinicians label claim c0 an error and sentence s0 not (the
    # sentence's other content was right), s1 and s3 no error, s2 an error.
    rows = [
        {"system": system, "question_id": "q1", "sentence_id": f"s{i}", "claim_id": cid}
        | {"claim": f"x{i}", "verdict": verdict}
        for system, c0 in (("A", "c0"), ("B", b_writes))
        for i, (cid, verdict) in enumerate(
            [(c0, "refuted"), ("c1", "supported"), ("c2", "refuted"), ("c3", "supported")]
        )
    ]
    labels = [{"claim_id": "c0", "has_error": True}] + [
        {"sentence_id": f"s{i}", "has_error": e} for i, e in enumerate([False, False, True, False])
    ]
    traces, labelled = d / "t.jsonl", d / "l.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    labelled.write_text("".join(json.dumps(r) + "\n" for r in labels), encoding="utf-8")
    return traces, labelled


def test_a_labelled_claim_one_system_writes_another_way_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # By hand, one claim: at claim level A and B both flag c0 and c2 (errors) and support c1
    # and c3: TP 2, TN 2 each. Read as two ids, B's 'C0' missed the claim label and took s0's
    # (no error): B TP 1, FP 1, TN 2 beside A's TP 2, TN 2, exit 0.
    traces, labels = _a_claim_label_and_two_ways(tmp_path, "C0")
    args = ["--labels", str(labels), "-m", "refuted", "--level", "claim"]
    own = tmp_path / "t.parquet"  # the tool's own Parquet: the engine's path
    assert run_cli(["ingest", "generic", str(traces), "-o", str(own)], capsys)[0] == 0
    for command in (
        ["metrics", "--traces", str(traces), *args, "--bootstrap", "0"],
        ["metrics", "--traces", str(own), *args, "--bootstrap", "0"],
        ["disagreements", "--traces", str(traces), *args, "-o", str(tmp_path / "d.jsonl")],
    ):
        code, out, err = run_cli(command, capsys)
        assert code == 2, command
        assert err.count("\n") == 1, err
        assert "l.jsonl:1, field 'claim_id'" in err and "'c0' also as 'C0' (in another case)" in err
        assert not out and not (tmp_path / "d.jsonl").exists()
    traces, labels = _a_claim_label_and_two_ways(tmp_path, "c0")  # the control, by hand
    args = ["--traces", str(traces), "--labels", str(labels), "-m", "refuted", "--level", "claim"]
    code, out, _ = run_cli(["metrics", *args, "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out)] == [
        ("A", 2, 0, 0, 2),
        ("B", 2, 0, 0, 2),
    ]
