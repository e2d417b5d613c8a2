"""The validated marker bound to its footer: a marker copied onto edited rows is not trusted.

Before (h33read's left item): the tool's own Parquet carries ``failcodes.validated`` in its
footer and goes straight to DuckDB. A table read with pyarrow, one cell edited, and written
back with the original file's key-value metadata (the same row count) kept the marker:
a blank system read as a system of its own and Excel's '#REF!' as a claim id, exit 0. Now
the marker holds a SHA-256 digest of the footer it was written in (:func:`failcodes.engine.seal`);
a footer that is not that one (every rewrite moves offsets, sizes, statistics) is read as any
foreign Parquet file, by the strict readers and their one-line errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from failcodes import engine
from tests.cli_helpers import run_cli

#: one system A, four sentences; s1 and s3 refuted and labelled errors: TP 2, TN 2 by hand
_VERDICTS = {"s1": "refuted", "s2": "supported", "s3": "refuted", "s4": "supported"}
_ERRORS = {"s1": True, "s2": False, "s3": True, "s4": False}


def _own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    rows = [
        {"system": "A", "question_id": "q1", "sentence_id": s, "claim_id": f"{s}:c0"}
        | {"claim": f"claim of {s}", "sentence": f"text of {s}", "verdict": v, "passages": []}
        for s, v in _VERDICTS.items()
    ]
    jsonl, own, labels = tmp_path / "t.jsonl", tmp_path / "own.parquet", tmp_path / "l.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    lines = [json.dumps({"sentence_id": s, "has_error": e}) for s, e in _ERRORS.items()]
    labels.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    code, _, err = run_cli(["ingest", "generic", str(jsonl), "-o", str(own)], capsys)
    assert code == 0, err
    return own, labels


def _forge(own: Path, out: Path, column: str, row: int, value: str) -> Path:
    """``own`` read with pyarrow, one cell set, written with its key-value metadata copied."""
    table = pq.read_table(own)
    values = table.column(column).to_pylist()
    values[row] = value
    table = table.set_column(table.schema.get_field_index(column), column, [values])
    pq.write_table(table.replace_schema_metadata(pq.ParquetFile(own).metadata.metadata), out)
    return out


@pytest.mark.parametrize(
    ("column", "row", "value", "said"),
    [
        # main: read at exit 0, TP 2, TN 2 with '#REF!' as a claim's id
        (
            "claim_id",
            1,
            "#REF!",
            "field 'claim_id': '#REF!' is Excel's error value (a formula that failed; "
            "the file holds its text), not an id",
        ),
        # main: exit 0, a system '' of its own (TP 1, FN 1, TN 2) beside A's TP 1, FN 1, TN 2
        ("system", 2, "", "field 'system': blank id (empty or spaces only)"),
    ],
)
def test_a_marker_copied_onto_edited_rows_is_read_strictly(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    column: str,
    row: int,
    value: str,
    said: str,
) -> None:
    own, labels = _own(tmp_path, capsys)
    code, out, err = run_cli(["metrics", "--traces", str(own), "--labels", str(labels)], capsys)
    assert code == 0, err
    forged = _forge(own, tmp_path / "forged.parquet", column, row, value)
    # the copy holds the same marker (digest included) over as many rows
    assert (
        pq.read_metadata(forged).metadata[engine.MARKER_KEY]
        == (pq.read_metadata(own).metadata[engine.MARKER_KEY])
    )
    assert pq.read_metadata(forged).num_rows == pq.read_metadata(own).num_rows == 4
    line = f"failcodes: error: {forged}:{row + 1}, {said}"
    for command in ("metrics", "disagreements"):
        written = tmp_path / ("m.json" if command == "metrics" else "d.jsonl")
        args = [command, "--traces", str(forged), "--labels", str(labels), "-o", str(written)]
        code, out, err = run_cli([*args, "-m", "refuted"], capsys)
        assert code == 2, (command, out)
        assert err.startswith(line), (command, err)
        assert len(err.strip().splitlines()) == 1
        assert not written.exists()
    # ingest, which passes the tool's own traces through unread: read as any table
    again = tmp_path / "again.jsonl"
    code, out, err = run_cli(["ingest", "generic", str(forged), "-o", str(again)], capsys)
    assert code == 2 and err.startswith(line) and not again.exists(), err
    assert engine.is_validated(own) and not engine.is_validated(forged)


def test_a_marker_of_the_version_before_the_seal_is_read_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a file an earlier failcodes wrote (version 2, no digest) over the same rows: read by
    # the strict readers, which give the same figures (A: TP 2, FP 0, FN 0, TN 2 by hand)
    own, labels = _own(tmp_path, capsys)
    old = tmp_path / "old.parquet"
    marker = b'{"kind": "traces", "rows": 4, "version": 2}'
    pq.write_table(pq.read_table(own).replace_schema_metadata({engine.MARKER_KEY: marker}), old)
    assert not engine.is_validated(old)
    counts = []
    for path in (own, old):
        out = tmp_path / f"{path.stem}.json"
        args = ["metrics", "--traces", str(path), "--labels", str(labels), "-o", str(out)]
        code, _, err = run_cli([*args, "-m", "refuted"], capsys)
        assert code == 0, err
        counts.append(
            [
                (r["system"], r["tp"], r["fp"], r["fn"], r["tn"])
                for r in json.loads(out.read_text(encoding="utf-8"))
            ]
        )
    assert counts == [[("A", 2, 0, 0, 2)]] * 2


def test_a_seal_holds_on_a_byte_copy_and_not_on_a_marker_left_unsealed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own, _ = _own(tmp_path, capsys)
    copy = tmp_path / "copy.parquet"
    copy.write_bytes(own.read_bytes())
    assert engine.is_validated(copy)
    # a writer that put the marker and never sealed it: not trusted
    unsealed = tmp_path / "unsealed.parquet"
    with pq.ParquetWriter(unsealed, pq.read_schema(own)) as writer:
        writer.write_table(pq.read_table(own))
        writer.add_key_value_metadata(engine.validated_marker("traces", 4))
    assert not engine.is_validated(unsealed)
    assert engine.seal(unsealed) and engine.is_validated(unsealed)
    # one byte of the footer changed (the marker's own digest): no longer
    data = bytearray(unsealed.read_bytes())
    at = data.rindex(b'"digest": "') + len(b'"digest": "')
    data[at] = ord("0") if data[at] != ord("0") else ord("1")
    unsealed.write_bytes(bytes(data))
    assert not engine.is_validated(unsealed)


def test_a_parquet_text_past_the_cell_bound_is_refused_as_a_csv_or_workbook_cell_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Parquet cell of 100 M characters (a 5 KB zstd file) was ingested at exit 0 (709 MB
    peak) into a JSONL line of 100 MB that metrics then refused ("a line of over 64 MB");
    a CSV or workbook cell past sheetio.MAX_CELL (64 M characters) is refused at ingest.
    Here the bound is lowered to 1,000 characters (the same code path, a small file)."""
    import pyarrow as pa

    from failcodes import tableio

    monkeypatch.setattr(tableio, "MAX_CELL", 1000)
    rows = {
        "system": ["A", "A"],
        "question_id": ["q1", "q1"],
        "sentence_id": ["s1", "s2"],
        "claim_id": ["s1:c0", "s2:c0"],
        "claim": ["claim 1", "x" * 1001],
        "verdict": ["refuted", "supported"],
    }
    table = tmp_path / "t.parquet"
    pq.write_table(pa.table(rows), table)
    out = tmp_path / "out.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert (code, err) == (
        2,
        f"failcodes: error: {table}:2, field 'claim': a text of over 0 M characters (no trace "
        "or label cell is that long)\n",
    )
    assert not out.exists()
    # a text of 1,000 characters is read (the bound is on more than MAX_CELL),
    # and a column mapped to claim is named as the file names it
    rows["claim"][1] = "x" * 1000
    pq.write_table(pa.table(rows), table)
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert code == 0, err
    rows["text"] = rows.pop("claim")
    rows["text"][0] = "y" * 1001
    pq.write_table(pa.table(rows), table)
    out.unlink()
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--map", "text=claim"], capsys
    )
    assert code == 2 and err.startswith(f"failcodes: error: {table}:1, field 'text': a text")
    assert not out.exists()
