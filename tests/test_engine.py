"""The analysis engine (DuckDB) over the tool's own validated Parquet (issue 30).

``ingest`` writes trace Parquet with a footer marker (:func:`failcodes.engine.validated_marker`);
``metrics`` and ``disagreements`` give such files straight to the engine. The figures are
hand-counted below and must be those of the JSONL file and of a Parquet file another writer
made (both read by the strict readers), byte for byte. A file whose footer is kept but whose
rows were edited by another tool goes back to the strict readers and their one-line errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from failcodes import columnar, engine, traceio
from failcodes.errors import InputError
from failcodes.tracecols import SentenceColumns
from tests.cli_helpers import exit_code, run_cli


def _claim(system: str, sentence: str, claim: int, verdict: str) -> dict[str, Any]:
    question = sentence.split(":")[0]
    return {
        "system": system,
        "question_id": question,
        "sentence_id": sentence,
        "claim_id": f"{sentence}:c{claim}",
        "claim": f"claim {claim} of {sentence}",
        "sentence": f"text of {sentence}",
        "verdict": verdict,
        "passages": [
            {"passage_id": f"{sentence}:p{r}", "rank": r, "text": f"passage {r}", "score": 0.5}
            for r in (1, 2)
        ],
    }


#: s2 first, and s1's sentence q1:s0 split (its second claim last): a group that is no run
#: of rows, which disagreements finds by its rows, not by one read
ROWS = [
    _claim("s2", "q1:s0", 0, "supported"),
    _claim("s2", "q1:s1", 0, "ambiguous"),
    _claim("s2", "q2:s0", 0, "refuted"),
    _claim("s2", "q2:s1", 0, "supported"),
    _claim("s1", "q1:s0", 0, "refuted"),
    _claim("s1", "q1:s1", 0, "supported"),
    _claim("s1", "q2:s0", 0, "no_evidence"),
    _claim("s1", "q2:s1", 0, "refuted"),
    _claim("s1", "q1:s0", 1, "supported"),
]
FLAGS = {"q1:s0": True, "q1:s1": False, "q2:s0": True, "q2:s1": False}
#: (system, mapping): (TP, FP, FN, TN), by hand from ROWS and FLAGS (a sentence is flagged
#: when any of its claims has an error verdict of the mapping):
#: s1 refuted: q1:s0 refuted+supported -> flagged, error: TP; q1:s1 supported, no error: TN;
#:   q2:s0 no_evidence not flagged, error: FN; q2:s1 refuted, no error: FP -> (1, 1, 1, 1)
#: s1 non_supported: q2:s0 no_evidence now flagged: TP -> (2, 1, 0, 1)
#: s2 refuted: q1:s0 supported, error: FN; q1:s1 ambiguous not flagged: TN; q2:s0 refuted,
#:   error: TP; q2:s1 supported: TN -> (1, 0, 1, 2)
#: s2 non_supported: q1:s1 ambiguous flagged, no error: FP -> (1, 1, 1, 1)
COUNTS = {
    ("s1", "refuted"): (1, 1, 1, 1),
    ("s1", "non_supported"): (2, 1, 0, 1),
    ("s2", "refuted"): (1, 0, 1, 2),
    ("s2", "non_supported"): (1, 1, 1, 1),
}


def _files(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """(JSONL, Parquet written by ingest, Parquet written by plain pyarrow, labels)."""
    jsonl = tmp_path / "traces.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    own = tmp_path / "own.parquet"
    assert exit_code("ingest", "generic", jsonl, "-o", own) == 0
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS, schema=traceio.trace_arrow_schema()), foreign)
    labels = tmp_path / "labels.jsonl"
    lines = [json.dumps({"sentence_id": s, "has_error": e}) for s, e in FLAGS.items()]
    labels.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return jsonl, own, foreign, labels


def _metrics(traces: Path, labels: Path, out: Path) -> dict[tuple[str, str], tuple[int, ...]]:
    args = ["metrics", "--traces", traces, "--labels", labels, "-o", out, "--bootstrap", "50"]
    assert exit_code(*args, "-m", "refuted", "-m", "non_supported") == 0
    rows = json.loads(out.read_text(encoding="utf-8"))
    return {(r["system"], r["mapping"]): (r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows}


def _rewrite(
    table: pa.Table, path: Path, footer: dict[bytes, bytes], *, forged: bool = False
) -> None:
    """Write ``table`` to ``path`` copying another file's footer (a tool told to keep it).

    ``forged``: a fresh marker sealed to the new footer (``engine.seal``), as only a writer
    that means to forge it does: what the engine's own checks still catch.
    """
    with pq.ParquetWriter(path, table.schema) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(footer)
    if forged:
        assert engine.seal(path)


def test_only_the_tools_own_parquet_carries_the_marker(tmp_path: Path) -> None:
    jsonl, own, foreign, _ = _files(tmp_path)
    schema = traceio.trace_arrow_schema()
    assert engine.is_validated(own, schema=schema)
    assert not engine.is_validated(foreign, schema=schema)
    assert not engine.is_validated(jsonl)
    marker = engine.marker_of(pq.read_metadata(own).metadata)
    assert marker is not None and len(marker["digest"]) == 64  # (engine.seal: SHA-256)
    assert marker["digest"] != engine.UNSEALED
    # 2: t30left; 3: h34seal (the digest)
    assert marker == {"digest": marker["digest"], "kind": "traces", "version": 3, "rows": 9}
    # a plain rewrite drops it (pyarrow does not carry a footer's key-value metadata over)
    table = pq.read_table(own)
    pq.write_table(table, tmp_path / "copy.parquet")
    assert not engine.is_validated(tmp_path / "copy.parquet", schema=schema)
    # a footer copied onto other rows: the count no longer matches the footer's
    copied = {engine.MARKER_KEY: pq.read_metadata(own).metadata[engine.MARKER_KEY]}
    _rewrite(table.slice(0, 3), own, copied)
    assert engine.marker_of(pq.read_metadata(own).metadata) == marker
    assert not engine.is_validated(own, schema=schema)


def test_a_validated_file_is_read_once_while_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # disagreements asked twice (the columns' load, then the writer), each time with a new
    # DuckDB connection: ~96 M instructions of a run 1.01x the DuckDB script's (issue 30)
    _, own, _, _ = _files(tmp_path)
    reads: list[Path] = []
    footer = engine.footer_of

    def counted(path: Path, con: Any = None) -> Any:
        reads.append(path)
        return footer(path, con)

    monkeypatch.setattr(engine, "footer_of", counted)
    cols = traceio.TRACE_ENGINE_COLUMNS
    assert engine.is_validated(own, schema=cols)
    assert engine.is_validated(own, schema=cols)
    assert reads == [own]
    # the footer copied onto other rows in the same file: read again, and refused
    _rewrite(pq.read_table(own).slice(0, 3), own, engine.validated_marker("traces", len(ROWS)))
    assert not engine.is_validated(own, schema=cols)
    assert reads == [own, own]


def test_engine_figures_equal_the_strict_readers_and_the_hand_count(tmp_path: Path) -> None:
    jsonl, own, foreign, labels = _files(tmp_path)
    groups = columnar.read_sentence_columns([own], locate=True)
    assert isinstance(groups, SentenceColumns)  # (the engine's groups)
    assert groups.origin is not None and groups.origin.scattered is not None  # s1's q1:s0
    outs = {p.stem: tmp_path / f"m-{p.stem}.json" for p in (jsonl, own, foreign)}
    for path in (jsonl, own, foreign):
        assert _metrics(path, labels, outs[path.stem]) == COUNTS
    assert outs["own"].read_bytes() == outs["traces"].read_bytes()
    assert outs["own"].read_bytes() == outs["foreign"].read_bytes()
    written = {}
    for path in (jsonl, own, foreign):
        out = tmp_path / f"d-{path.stem}.jsonl"
        args = ["disagreements", "--traces", path, "--labels", labels, "-o", out]
        assert exit_code(*args, "-m", "refuted", "-m", "non_supported") == 0
        written[path.stem] = out.read_bytes()
    # FN + FP over the four (system, mapping) rows: 2 + 1 + 1 + 2 = 6 (+ 0 + 0 ... by hand:
    # s1 refuted FN 1 FP 1, s1 non_supported FP 1, s2 refuted FN 1, s2 non_supported FN 1 FP 1)
    assert len(written["traces"].splitlines()) == 6
    assert written["own"] == written["traces"] == written["foreign"]


def test_groups_of_two_own_files_come_from_the_files_without_a_rows_table(
    tmp_path: Path,
) -> None:
    _, own, _, _ = _files(tmp_path)
    second = tmp_path / "second.jsonl"
    extra = [_claim("s3", "q1:s0", 0, "refuted"), _claim("s3", "q1:s0", 1, "ambiguous")]
    second.write_text("".join(json.dumps(r) + "\n" for r in extra), encoding="utf-8")
    again = tmp_path / "second.parquet"
    assert exit_code("ingest", "generic", second, "-o", again) == 0
    loaded = columnar._vouched_groups([own, again], [columnar.Format.PARQUET] * 2)
    assert loaded is not None and loaded.grouped and loaded.starts == [0, 9]
    tables = loaded.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    assert tables == [("groups",)]  # no rows table
    loaded.con.close()
    got = columnar.read_sentence_columns([own, again])
    assert isinstance(got, SentenceColumns)
    # 9 groups, sorted: s1's four sentences, s2's four, s3's one. Firsts (0-based rows
    # over both files, ROWS then the second file's at 9): s1 q1:s0 row 4 (its claim 1 at
    # 8), q1:s1 5, q2:s0 6, q2:s1 7; s2 rows 0-3; s3 q1:s0 rows 9 and 10
    assert got.systems == ["s1", "s2", "s3"]
    assert got.sentences == ["q1:s0", "q1:s1", "q2:s0", "q2:s1"]
    assert got.system.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2]
    assert got.sentence.tolist() == [0, 1, 2, 3, 0, 1, 2, 3, 0]
    assert got.first.tolist() == [4, 5, 6, 7, 0, 1, 2, 3, 9]
    # verdict bits (supported 1, refuted 2, no_evidence 4, ambiguous 8): s1 q1:s0 refuted
    # and supported 3; s3 q1:s0 refuted and ambiguous 10
    assert got.verdicts.tolist() == [3, 1, 4, 2, 1, 8, 2, 1, 10]
    # claims per (system, verdict) in VERDICTS order (supported, refuted, no_evidence,
    # ambiguous, out_of_scope): s1 2 supported, 2 refuted, 1 no_evidence; s2 2, 1, 0, 1
    assert got.verdict_counts.tolist() == [[2, 2, 1, 0, 0], [2, 1, 0, 1, 0], [0, 1, 0, 1, 0]]
    assert got.rows == 11
    # the rows-table path (disagreements: where the rows are) gives the same groups
    located = columnar.read_sentence_columns([own, again], locate=True)
    assert isinstance(located, SentenceColumns)
    for name in ("system", "question", "sentence", "first", "verdicts", "verdict_counts"):
        assert getattr(located, name).tolist() == getattr(got, name).tolist()


def test_claim_level_columns_from_the_engine(tmp_path: Path) -> None:
    jsonl, own, _, _ = _files(tmp_path)
    got, want = columnar.read_trace_columns(own), columnar.read_trace_columns(jsonl)
    for name in ("system", "question_id", "sentence_id", "claim_id", "verdict"):
        (got_codes, got_values), (want_codes, want_values) = (
            got.small_codes(name),
            want.small_codes(name),
        )
        assert got_values == want_values and got_codes.tolist() == want_codes.tolist()
    assert got.origin.line.tolist() == list(range(1, len(ROWS) + 1))  # Parquet: the row


def test_a_claim_in_two_of_the_tools_files_names_both(tmp_path: Path) -> None:
    jsonl, own, _, _ = _files(tmp_path)
    again = tmp_path / "again.parquet"
    only = tmp_path / "only.jsonl"
    only.write_text(jsonl.read_text(encoding="utf-8").splitlines()[4] + "\n", encoding="utf-8")
    assert exit_code("ingest", "generic", only, "-o", again) == 0
    with pytest.raises(InputError) as info:
        columnar.read_sentence_columns([own, again])
    assert str(info.value) == (
        f"{again}:1, field 'claim_id': duplicate (system, claim_id) = ('s1', 'q1:s0:c0'); "
        f"first at {own}:5; a file per system under one system name? "
        "ingest each file apart with --system NAME"
    )


def test_rows_edited_under_a_kept_footer_go_to_the_strict_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, own, _, labels = _files(tmp_path)
    capsys.readouterr()  # (what ingest printed)
    table = pq.read_table(own)
    verdicts = table.column("verdict").to_pylist()
    verdicts[2] = "REFUTED!"  # not a verdict: the strict reader refuses row 3
    edited = table.set_column(table.schema.get_field_index("verdict"), "verdict", [verdicts])
    copied = {engine.MARKER_KEY: pq.read_metadata(own).metadata[engine.MARKER_KEY]}
    forged = tmp_path / "forged.parquet"
    _rewrite(edited, own, copied)
    _rewrite(edited, forged, engine.validated_marker("traces", len(ROWS)), forged=True)
    schema = traceio.trace_arrow_schema()
    assert not engine.is_validated(own, schema=schema)  # footer kept: its seal no longer holds
    assert engine.is_validated(forged, schema=schema)  # sealed anew: the engine's own checks
    for path in (own, forged):
        code, out, err = run_cli(
            ["metrics", "--traces", str(path), "--labels", str(labels), "-m", "refuted"], capsys
        )
        assert code == 2 and out == ""
        assert err.startswith(f"failcodes: error: {path}:3, field 'verdict': unknown verdict")
        assert len(err.strip().splitlines()) == 1


def test_the_columns_are_checked_as_duckdb_reads_them(tmp_path: Path) -> None:
    # the engine compares a file's columns with this constant (no pyarrow imported): it must
    # be the trace schema the writer uses, as DuckDB reads it
    assert engine.columns_of(traceio.trace_arrow_schema()) == list(traceio.TRACE_ENGINE_COLUMNS)
    _, own, _, _ = _files(tmp_path)
    # a footer kept over the same rows with a column dropped: the marker and count still hold
    _rewrite(
        pq.read_table(own).drop_columns(["retriever"]),
        own,
        engine.validated_marker("traces", len(ROWS)),
        forged=True,
    )
    assert engine.is_validated(own)
    assert not engine.is_validated(own, schema=traceio.TRACE_ENGINE_COLUMNS)
    assert not engine.is_validated(own, schema=traceio.trace_arrow_schema())


def test_verdict_counts_by_hand_on_every_input(tmp_path: Path) -> None:
    """The report's Table 5 counts: the engine counts the loaded rows, nothing per claim.

    By hand from ROWS, per system in sorted order and VERDICTS' order (supported, refuted,
    no_evidence, ambiguous, out_of_scope): s1 has supported 2 (q1:s1, q1:s0 c1), refuted 2
    (q1:s0, q2:s1), no_evidence 1 (q2:s0); s2 supported 2, refuted 1, ambiguous 1.
    """
    from failcodes.metrics import verdict_distributions
    from failcodes.tracecols import VERDICTS

    assert [v.value for v in VERDICTS] == [
        "supported",
        "refuted",
        "no_evidence",
        "ambiguous",
        "out_of_scope",
    ]
    jsonl, own, foreign, _ = _files(tmp_path)
    for path in (jsonl, own, foreign):
        counts = columnar.read_verdict_counts(path)
        assert counts.systems == ["s1", "s2"]
        assert counts.verdict_counts.tolist() == [[2, 2, 1, 0, 0], [2, 1, 0, 1, 0]]
        assert verdict_distributions(counts) == verdict_distributions(
            columnar.read_trace_columns(path)
        )
    # a duplicate claim: the error read_trace_columns gives, naming the later row
    twice = tmp_path / "twice.jsonl"
    twice.write_text(jsonl.read_text() + json.dumps(ROWS[0]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as fast:
        columnar.read_verdict_counts(twice)
    with pytest.raises(InputError) as exact:
        columnar.read_trace_columns(twice)
    assert str(fast.value) == str(exact.value)
    assert str(fast.value).startswith(f"{twice}:10")
    # the tool's own Parquet edited under a kept footer (a claim twice, a verdict that is
    # not one): the strict readers' errors, as read_trace_columns gives them
    table = pq.read_table(own)
    verdicts = table.column("verdict").to_pylist()
    verdicts[2] = "REFUTED!"
    edited = table.set_column(table.schema.get_field_index("verdict"), "verdict", [verdicts])
    for bad, where in ((pa.concat_tables([table, table.slice(0, 1)]), ":10"), (edited, ":3")):
        path = tmp_path / f"edited{where[1:]}.parquet"
        _rewrite(bad, path, engine.validated_marker("traces", bad.num_rows), forged=True)
        assert engine.is_validated(path)  # the engine's own checks, then the strict readers
        with pytest.raises(InputError) as fast:
            columnar.read_verdict_counts(path)
        with pytest.raises(InputError) as exact:
            columnar.read_trace_columns(path)
        assert str(fast.value) == str(exact.value)
        assert str(fast.value).startswith(f"{path}{where}")


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        # DuckDB's own parser refuses the size; the line names the variable and its value
        ("FAILCODES_MEMORY", "lots", "FAILCODES_MEMORY='lots': DuckDB cannot read it as a memory"),
        ("FAILCODES_THREADS", "two", "FAILCODES_THREADS='two': expected a whole number"),
        ("FAILCODES_THREADS", "0", "FAILCODES_THREADS='0': expected a whole number"),
    ],
)
def test_a_bad_engine_setting_is_one_line_naming_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    value: str,
    said: str,
) -> None:
    # it was a traceback, exit 1 (int('two'); DuckDB's ParserException at connect)
    _, own, _, labels = _files(tmp_path)
    monkeypatch.setenv(name, value)
    out = tmp_path / "m.json"
    capsys.readouterr()
    args = ["metrics", "--traces", str(own), "--labels", str(labels), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and said in err, err
    assert not out.exists()


def test_the_engine_out_of_memory_is_one_line_naming_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1 KB is below what one DuckDB block needs (256 KiB): the scan cannot allocate. It was
    # DuckDB's traceback (OutOfMemoryException, or a TransactionException below ~1 MB), exit 1
    _, own, _, labels = _files(tmp_path)
    monkeypatch.setenv("FAILCODES_MEMORY", "1KB")
    out = tmp_path / "m.json"
    capsys.readouterr()
    args = ["metrics", "--traces", str(own), "--labels", str(labels), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "ran out of its memory limit 1KB" in lines[0] and "raise FAILCODES_MEMORY" in lines[0]
    assert not out.exists()


def test_the_engine_out_of_memory_is_the_tools_error_for_a_python_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the CLI alone translated it (cc0dcfe): failcodes.run got DuckDB's own exception, which
    # a caller catching FailcodesError (as the CLI and a study do) did not catch
    import failcodes as fc

    _, own, _, labels = _files(tmp_path)
    monkeypatch.setenv("FAILCODES_MEMORY", "1KB")
    request = fc.MetricsRequest(traces=[own], labels=labels, out=tmp_path / "m.json")
    with pytest.raises(fc.FailcodesError) as info:
        fc.run(request, note=lambda _: None)
    said = info.value.one_line()
    assert "ran out of its memory limit 1KB" in said and "raise FAILCODES_MEMORY" in said
    assert "\n" not in said
    assert not (tmp_path / "m.json").exists()
    # the same readers, called directly, and the verdict counts the report reads
    for read in (columnar.read_sentence_columns, columnar.read_verdict_counts):
        with pytest.raises(fc.FailcodesError, match="ran out of its memory limit 1KB"):
            read([own])
