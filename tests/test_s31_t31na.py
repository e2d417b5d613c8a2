"""Session 31 (t31na): Excel's error text and missing marks as ids, where the CSV check missed.

t31read refused Excel's error values in a CSV (not ``#N/A``, a missing mark). A trace file
(JSONL, Parquet: a frame ``pandas.read_excel`` read and saved) holding ``#N/A`` or ``#REF!``
as a system (a VLOOKUP that failed), or ``nan`` as an id (pandas' ``astype(str)`` of a missing
cell), was read as an id of its own. Hand-counted from the rows below: system A flags s1
(TP 1) and passes s2 (TN 1); system B passes s1 (FN 1) and flags s2 (FP 1). With B's s2 row
under system '#N/A', main read three systems: B FN 1, TN 1 (its s2 "made no claim", so "no
error flagged"), '#N/A' FP 1, FN 1 (every labelled sentence), exit 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

_ROWS = [
    ("A", "s1", "c1", "refuted"),
    ("A", "s2", "c2", "supported"),
    ("B", "s1", "c1", "supported"),
    ("B", "s2", "c2", "refuted"),
]
_EXCEL = "Excel's error value (a formula that failed; the file holds its text)"
_LABELS = "sentence_id,has_error\ns1,true\ns2,false\n"


def _records(field: str, value: str) -> list[dict[str, str]]:
    out = [
        {"system": s, "question_id": "q1", "sentence_id": t, "claim_id": c, "claim": f"claim {c}",
         "verdict": v}
        for s, t, c, v in _ROWS
    ]  # fmt: skip
    out[3][field] = value  # B's s2 row: line 4 (JSONL), row 4 (Parquet), line 5 (CSV)
    return out


def _write(tmp_path: Path, kind: str, field: str, value: str) -> Path:
    records = _records(field, value)
    path = tmp_path / f"t.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    elif kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(records), path)
    else:
        head = list(records[0])
        lines = [",".join(head)] + [",".join(r[h] for h in head) for r in records]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize(
    ("field", "value", "what"),
    [
        ("system", "#N/A", _EXCEL),
        ("system", "#REF!", _EXCEL),
        ("claim_id", "#VALUE!", _EXCEL),
        ("sentence_id", "nan", "a missing mark (no value)"),
        ("question_id", "N/A", "a missing mark (no value)"),
    ],
)  # fmt: skip
def test_metrics_refuses_an_excel_error_or_missing_mark_as_a_trace_id(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    field: str,
    value: str,
    what: str,
) -> None:
    # main: exit 0; for system '#N/A' three systems, B FN 1, TN 1 (for FN 1, FP 1), '#N/A' FP 1,
    # FN 1; a '#VALUE!' claim id or a 'nan' sentence id was an id of its own (a sentence 'nan'
    # no label names). Now one line naming the row (line 4 / Parquet row 4) and the field.
    traces = _write(tmp_path, kind, field, value)
    labels = tmp_path / "labels.csv"
    labels.write_text(_LABELS, encoding="utf-8")
    code, out, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert code == 2, out
    assert err.strip() == (
        f"failcodes: error: {traces}:4, field '{field}': {value!r} is {what}, not an id: fill "
        "the cell, or leave the row out"
    )


def test_ingest_refuses_a_csv_system_cell_holding_na(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # '#N/A' is left out of t31read's CSV check (a missing mark): as a system cell, main wrote
    # 4 traces of 3 systems ('#N/A 1, A 2, B 1'), exit 0. The header is line 1: B's s2 row is 5.
    table = _write(tmp_path, "csv", "system", "#N/A")
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:5, field 'system': '#N/A' is Excel's error value (a formula "
        "that failed; the file holds its text), not an id: fill the cell, or leave the row out"
    )
    assert not out.exists()


def test_the_parquet_claim_scan_hands_a_na_system_to_the_exact_reader(tmp_path: Path) -> None:
    # iter_parquet_trace_claims (a study's traces Parquet) vouched each converted row without
    # the JSON text's checks: a '#N/A' system went through as a fourth row of system '#N/A'.
    from failcodes.columnar import ExactReaderNeededError, iter_parquet_trace_claims

    traces = _write(tmp_path, "parquet", "system", "#N/A")
    with pytest.raises(ExactReaderNeededError):
        list(iter_parquet_trace_claims(traces))


@pytest.mark.parametrize("value", ["#1", "N/A-7", "nana", "NA1"])
def test_an_id_merely_starting_like_a_mark_is_an_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    # guard (passes on main too): only the whole cell is no id; B's s2 claim id '#1' etc. is
    # read, and the counts are the hand counts above: A TP 1, TN 1; B FN 1, FP 1.
    traces = _write(tmp_path, "jsonl", "claim_id", value)
    labels = tmp_path / "labels.csv"
    labels.write_text(_LABELS, encoding="utf-8")
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0, err
    rows = {r["system"]: r for r in json.loads(out)}
    assert [rows["A"][k] for k in ("tp", "fp", "fn", "tn")] == [1, 0, 0, 1]
    assert [rows["B"][k] for k in ("tp", "fp", "fn", "tn")] == [0, 1, 1, 0]


# s1 correct, s2 an error, s3 and s4 a label formula that failed (=IF over a #REF!)
_RULED = [
    ("q1", "s1", "Aspirin helps", "supported", "A", "false"),
    ("q1", "s2", "Dose is 5g", "refuted", "A", "true"),
    ("q2", "s3", "Water is wet", "supported", "A", "#VALUE!"),
    ("q2", "s4", "Sky green", "refuted", "A", "#VALUE!"),
]


def _table(tmp_path: Path, kind: str, head: list[str], rows: list[tuple[str, ...]]) -> Path:
    records = [dict(zip(head, r, strict=True)) for r in rows]
    path = tmp_path / f"t.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(records), path)
    return path


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_label_rule_refuses_excel_error_text_in_jsonl_and_parquet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # a CSV's '#VALUE!' is refused (t31read); the same frame saved as JSONL or Parquet gave s3
    # and s4 the rule's implied opposite: '1 error / 3 no-error sentence labels' for 1 / 1 (two
    # unknown), exit 0 with a note. Now refused at s3's row (line 3; Parquet row 3).
    head = ["question_id", "sentence_id", "claim", "verdict", "system", "is_wrong"]
    table = _table(tmp_path, kind, head, _RULED)
    out, labels = tmp_path / "o.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--labels-out", str(labels),
         "--label-rule", "is_wrong = true -> error"], capsys
    )  # fmt: skip
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:3, field 'is_wrong': Excel error value #VALUE! (a formula "
        "that failed; the file holds its text): fix or clear the cell"
    )
    assert not out.exists() and not labels.exists()


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_agree_refuses_excel_error_text_as_a_rating_in_jsonl_and_parquet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # r1 and r2 agree on u1, u2, u4, not on u3; r2's u5 is '#REF!'. Main read '#REF!' as a
    # third category: percent 3/5 = 0.600 (it should be 3/4 = 0.75 with u5 unrated, or a
    # refusal: a failed formula is no rating). Now refused at u5's row (line 5).
    rows = [("u1", "X", "X"), ("u2", "Y", "Y"), ("u3", "X", "Y"), ("u4", "Y", "Y")]
    table = _table(tmp_path, kind, ["unit", "r1", "r2"], [*rows, ("u5", "X", "#REF!")])
    code, _, err = run_cli(["agree", str(table)], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:5, field 'r2': Excel error value #REF! (a formula that "
        "failed; the file holds its text): fix or clear the cell"
    )


def test_ratings_from_frame_refuses_excel_error_text() -> None:
    # a frame pandas.read_excel read keeps a failed formula's text: main read '#REF!' as a
    # third category (RatingsTable ... categories: #REF!, X, Y), percent 3/5 for 3/4. Now
    # refused naming the frame's row (position 4, u5) and column.
    import pandas as pd

    from failcodes import ratings_from_frame
    from failcodes.errors import InputError

    frame = pd.DataFrame(
        {"r1": ["X", "Y", "X", "Y", "X"], "r2": ["X", "Y", "Y", "Y", "#REF!"]},
        index=pd.Index(["u1", "u2", "u3", "u4", "u5"], name="unit"),
    )
    with pytest.raises(InputError) as caught:
        ratings_from_frame(frame.reset_index())
    assert str(caught.value) == (
        "field 'r2': row 4: Excel error value #REF! (a formula that failed; the frame holds its "
        "text): fix or clear the cell"
    )
