"""Disagreement lines built by the engine from the tool's own Parquet (issue 30).

The engine's lines must be the stream's, byte for byte: the same traces as JSONL (read and
written by the strict readers and the stream) are the reference. The rows hold what DuckDB's
JSON writes unlike ``json.dumps`` (control characters, floats outside [1e-4, 1e16)), a
literal backslash-u, quotes, non-ASCII, declared and derived evidence sources, a sentence
text only on a later claim, and two trace files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from failcodes import disagreementio, disagreementsql, engine
from tests.cli_helpers import exit_code, write_jsonl


def _passage(rank: int, text: str, score: float | None, **extra: Any) -> dict[str, Any]:
    return {"passage_id": f"p{rank}", "rank": rank, "text": text, "score": score, **extra}


#: (system, sentence, claim, verdict, extra fields)
ROWS: list[dict[str, Any]] = [
    {
        "system": "a",
        "question_id": "q1",
        "sentence_id": "q1:s0",
        "claim_id": "q1:s0:c0",
        "claim": 'vertical\x0btab, unit\x1fsep, "quoted", caf\u00e9 \u2028 \U0001f600',
        "verdict": "supported",
        "retriever": "bm25",
        "passages": [
            _passage(1, "literal \\u000B and \\\\ and \x0e", 1e-05),
            _passage(2, "big", 1e22, title="T\u00eftle", source="pubmed", gold=True),
            _passage(3, "zero", 0.0, gold_verdict="refuted"),
            _passage(4, "negative zero", -0.0),
            _passage(5, "no score", None),
        ],
    },
    {
        "system": "a",
        "question_id": "q1",
        "sentence_id": "q1:s0",
        "claim_id": "q1:s0:c1",
        "claim": "second claim",
        "sentence": "the sentence, only on the second claim",
        "verdict": "refuted",
        "raw_verdict": "REFUTES",
        "reasoning": "tab\there\nnewline",
        "verifier": "gpt",
        "passages": [_passage(1, "plain", 0.5)],
    },
    {
        "system": "a",
        "question_id": "q1",
        "sentence_id": "q1:s1",
        "claim_id": "q1:s1:c0",
        "claim": "closed book",
        "verdict": "no_evidence",
        # declared: beside traces with passages, an undeclared bare trace is refused (b6ab2b6)
        "evidence_source": "none",
    },
    {
        "system": "a",
        "question_id": "q2",
        "sentence_id": "q2:s0",
        "claim_id": "q2:s0:c0",
        "claim": "provided evidence",
        "verdict": "supported",
        "evidence_source": "provided",
        "passages": [_passage(1, "given", 12.25)],
    },
]
#: system b: the same claims, verdicts flipped where that makes a disagreement
ROWS_B = [
    {**r, "system": "b", "verdict": {"supported": "refuted"}.get(r["verdict"], "supported")}
    for r in ROWS
]
#: q1:s0 error, q1:s1 no error, q2:s0 no error, q2:s9 error (no system has a claim for it)
LABELS = [
    {"sentence_id": "q1:s0", "has_error": True, "rationale": "wrong dose \x0b", "annotator": "md"},
    {"sentence_id": "q1:s1", "has_error": False, "severity": "Mild"},
    {"sentence_id": "q2:s0", "has_error": False, "sentence": "label's own text"},
    {"question_id": "q2", "sentence_id": "q2:s9", "has_error": True, "sentence": "unclaimed"},
]


def _files(tmp_path: Path) -> tuple[list[Path], list[Path], Path]:
    """(the traces as JSONL, the same as the tool's own Parquet, labels)."""
    plain = [write_jsonl(tmp_path / "a.jsonl", ROWS), write_jsonl(tmp_path / "b.jsonl", ROWS_B)]
    own = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    for src, dst in zip(plain, own, strict=True):
        assert exit_code("ingest", "generic", src, "-o", dst) == 0
    return plain, own, write_jsonl(tmp_path / "labels.jsonl", LABELS)


def _disagreements(traces: list[Path], labels: Path, out: Path) -> bytes:
    args = ["disagreements", "--labels", labels, "-o", out, "-m", "refuted", "-m", "non_supported"]
    assert exit_code(*args, *(x for t in traces for x in ("--traces", t))) == 0
    return out.read_bytes()


def test_the_engines_lines_are_the_streams_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain, own, labels = _files(tmp_path)
    want = _disagreements(plain, labels, tmp_path / "stream.jsonl")

    def no_stream(*args: Any, **kwargs: Any) -> int:
        raise AssertionError("the stream wrote the tool's own Parquet")

    monkeypatch.setattr(disagreementio, "stream_disagreements", no_stream)
    got = _disagreements(own, labels, tmp_path / "engine.jsonl")
    assert got == want
    lines = [json.loads(x) for x in got.splitlines()]
    # by hand, refuted: a q1:s0 has refuted c1 -> flagged, error: agree; a q1:s1/q2:s0 no
    # error, not flagged: agree; q2:s9 error, no claim: FN. b q1:s0 c0 refuted, c1 supported
    # -> flagged: agree; b q1:s1 supported, q2:s0 refuted -> FP; b q2:s9: FN.
    # non_supported adds a q1:s1 (no_evidence, no error): FP; b the same as refuted.
    got_keys = [(d["mapping"], d["system"], d["sentence_id"], d["kind"]) for d in lines]
    assert got_keys == [
        ("refuted", "a", "q2:s9", "FN"),
        ("refuted", "b", "q2:s0", "FP"),
        ("refuted", "b", "q2:s9", "FN"),
        ("non_supported", "a", "q1:s1", "FP"),
        ("non_supported", "a", "q2:s9", "FN"),
        ("non_supported", "b", "q2:s0", "FP"),
        ("non_supported", "b", "q2:s9", "FN"),
    ]
    b_q2 = lines[1]
    assert b_q2["sentence"] == "label's own text"  # no claim has a sentence text
    assert b_q2["error_claim_ids"] == ["q2:s0:c0"]
    assert b_q2["claims"][0]["evidence_source"] == "provided"
    assert lines[3]["claims"][0]["evidence_source"] == "none"  # no passage, no retriever
    assert lines[0]["claims"] == [] and lines[0]["sentence"] == "unclaimed"


def test_scores_out_of_reprs_range_and_escapes_in_claim_lines(tmp_path: Path) -> None:
    # a sentence whose claims DuckDB writes: q1:s0 disagrees for system b under no mapping,
    # so label it no-error to make both systems' q1:s0 a disagreement (both flagged)
    plain, own, labels = _files(tmp_path)
    flipped = [dict(x, has_error=False) if x["sentence_id"] == "q1:s0" else x for x in LABELS]
    labels = write_jsonl(labels, flipped)
    want = _disagreements(plain, labels, tmp_path / "stream.jsonl")
    got = _disagreements(own, labels, tmp_path / "engine.jsonl")
    assert got == want
    first = json.loads(got.splitlines()[0])
    assert (first["system"], first["sentence_id"], first["kind"]) == ("a", "q1:s0", "FP")
    assert first["sentence"] == "the sentence, only on the second claim"
    scores = [p["score"] for p in first["claims"][0]["passages"]]
    assert scores == [1e-05, 1e22, 0.0, -0.0, None]
    assert b'"score": 1e-05' in got and b'"score": 1e+22' in got and b'"score": -0.0' in got
    assert first["claims"][1]["raw_verdict"] == "REFUTES"
    # the control characters DuckDB writes upper-case: json.dumps' lower-case, and the
    # literal backslash-u text kept as it is
    assert b"vertical\\u000btab, unit\\u001fsep" in got
    assert b"literal \\\\u000B and" in got


def test_rows_fetched_a_batch_at_a_time_and_windows_of_two_rows_are_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[bool]
) -> None:
    # one claim row per Arrow batch, a query per two rows of a file, a group of lines per
    # sentence group. (Until 2026-12-03 this also refused copy_file_range and asserted the
    # later mapping's part file was copied through Python: the part files are gone, each
    # mapping's lines are now written one after another from the scratch file.)
    plain, own, labels = _files(tmp_path)
    flipped = [dict(x, has_error=False) if x["sentence_id"] == "q1:s0" else x for x in LABELS]
    labels = write_jsonl(labels, flipped)
    want = _disagreements(plain, labels, tmp_path / "stream.jsonl")
    monkeypatch.setattr(disagreementsql, "_FETCH_ROWS", 1)
    monkeypatch.setattr(disagreementsql, "_WINDOW_ROWS", 2)
    monkeypatch.setattr(disagreementsql, "_LINE_GROUPS", 1)
    for traces in (own, plain):  # the engine's rows, then the lines read again
        assert _disagreements(traces, labels, tmp_path / "engine.jsonl") == want
    assert streamed == []


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One entry per call of the stream (the writer a file falls back to)."""
    calls: list[bool] = []
    stream = disagreementio.stream_disagreements

    def counted(*args: Any, **kwargs: Any) -> int:
        calls.append(True)
        return stream(*args, **kwargs)

    monkeypatch.setattr(disagreementio, "stream_disagreements", counted)
    return calls


def test_a_row_the_writer_cannot_have_written_goes_to_the_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[bool]
) -> None:
    _, own, labels = _files(tmp_path)
    table = pq.read_table(own[1])
    passages = table.column("passages").to_pylist()
    passages[3][0]["score"] = float("nan")  # b's q2:s0 (an FP): a NaN score, footer kept
    edited = table.set_column(
        table.schema.get_field_index("passages"),
        "passages",
        pa.array(passages, type=table.schema.field("passages").type),
    )
    with pq.ParquetWriter(own[1], edited.schema) as writer:
        writer.write_table(edited)
        writer.add_key_value_metadata(engine.validated_marker("traces", len(ROWS_B)))
    assert engine.seal(own[1])  # sealed anew, as a forger would (a copied marker: not trusted)
    assert engine.is_validated(own[1])
    got = _disagreements(own, labels, tmp_path / "engine.jsonl")
    assert streamed == [True]  # the engine saw the NaN and left the file to the stream
    monkeypatch.setattr(disagreementsql, "applies", lambda *args: False)
    assert _disagreements(own, labels, tmp_path / "stream.jsonl") == got
    assert streamed == [True, True]


def test_only_sentence_groups_of_own_parquet_are_the_engines(tmp_path: Path) -> None:
    plain, own, labels = _files(tmp_path)
    from failcodes.mapping import resolve_mappings
    from failcodes.metrics import Level

    def selection(traces: list[Path]) -> disagreementio.Selection:
        return disagreementio.select_from_files(
            traces,
            labels,
            resolve_mappings(["refuted"]),
            level=Level.SENTENCE,
            without_claims="no_error",
        )

    mine, theirs = selection(own), selection(plain)
    jsonl, parquet = tmp_path / "x.jsonl", tmp_path / "x.parquet"
    assert disagreementsql.applies(mine.columns, mine.items, mine.index, jsonl)
    # (before 2026-12-03 only JSONL output was the engine's: this asserted `not applies`)
    assert disagreementsql.applies(mine.columns, mine.items, mine.index, parquet)
    assert not disagreementsql.applies(theirs.columns, theirs.items, theirs.index, jsonl)
    # JSONL traces' lines are read again for JSONL output only: Parquet is the stream's
    assert disagreementsql.applies(theirs.columns, theirs.items, theirs.index, jsonl, True)
    assert not disagreementsql.applies(theirs.columns, theirs.items, theirs.index, parquet, True)


def test_jsonl_traces_are_written_from_their_lines_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[bool]
) -> None:
    # q1:s0 labelled no error: both systems' q1:s0 disagree (claims with escapes, scores
    # out of repr's range) under both mappings, so each line serves two disagreements
    plain, _, labels = _files(tmp_path)
    flipped = [dict(x, has_error=False) if x["sentence_id"] == "q1:s0" else x for x in LABELS]
    labels = write_jsonl(labels, flipped)
    got = _disagreements(plain, labels, tmp_path / "lines.jsonl")
    assert streamed == []  # the lines read again, not the stream
    read: list[tuple[int, int]] = []
    line_rows = disagreementsql._line_rows

    def reading(columns: Any, groups: Any, *ends: Any) -> Any:
        pieces = line_rows(columns, groups, *ends)
        origin, rows = columns.origin, []
        for g in groups.tolist():  # (file, row in the file) of each group's rows
            first = int(columns.first[g])
            file = int(np.searchsorted(origin.starts, first, side="right")) - 1
            rows += [(file, first - int(origin.starts[file]) + i) for i in range(origin.run[g])]
        assert len(pieces) == 5 * len(rows)  # (five pieces a row)
        read.extend(rows)
        return pieces

    monkeypatch.setattr(disagreementsql, "_line_rows", reading)
    assert _disagreements(plain, labels, tmp_path / "again.jsonl") == got
    # each line decoded once for both mappings: both systems' q1:s0 claims (rows 0, 1), a's
    # q1:s1 (no_evidence: an FP under non_supported), b's q2:s0 (refuted: an FP under both)
    assert sorted(read) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 3)]  # (file, row)
    monkeypatch.setattr(disagreementsql, "applies", lambda *args: False)
    assert _disagreements(plain, labels, tmp_path / "stream.jsonl") == got
    assert streamed == [True]
    lines = [json.loads(x) for x in got.splitlines()]
    # refuted: a q1:s0 (c1 refuted) and b q1:s0 (c0 refuted) flagged, labelled no error: FP
    keys = [(d["mapping"], d["system"], d["sentence_id"], d["kind"]) for d in lines]
    assert keys[:2] == [("refuted", "a", "q1:s0", "FP"), ("refuted", "a", "q2:s9", "FN")]
    assert [p["score"] for p in lines[0]["claims"][0]["passages"]] == [1e-05, 1e22, 0.0, -0.0, None]
    assert b'"score": 1e-05' in got and b'"score": 1e+22' in got
    assert b"vertical\\u000btab, unit\\u001fsep" in got


def test_a_jsonl_line_msgspec_cannot_vouch_for_leaves_the_file_to_the_stream(
    tmp_path: Path, streamed: list[bool]
) -> None:
    plain, _, labels = _files(tmp_path)
    # b's q2:s0 (an FP) with an empty reasoning: the model reads it as missing, msgspec refuses
    rows = [dict(r, reasoning="") if r["sentence_id"] == "q2:s0" else r for r in ROWS_B]
    plain[1] = write_jsonl(plain[1], rows)
    got = _disagreements(plain, labels, tmp_path / "lines.jsonl")
    assert streamed == [True]
    b_q2 = json.loads(got.splitlines()[1])
    assert (b_q2["system"], b_q2["sentence_id"]) == ("b", "q2:s0")
    assert b_q2["claims"][0]["reasoning"] is None


def test_lines_short_of_their_rows_leave_the_file_to_the_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[bool]
) -> None:
    # the pieces are matched to rows by position: a read that gave fewer lines than its
    # groups' rows would put one claim's record under another's disagreement (the lines
    # read again by disagreementsql itself since session 28, not columnar.gather_runs)
    plain, _, labels = _files(tmp_path)
    want = _disagreements(plain, labels, tmp_path / "want.jsonl")
    assert streamed == []
    gather = disagreementsql._vouched_lines

    def short(*args: Any) -> Any:
        return list(gather(*args))[:-1]

    monkeypatch.setattr(disagreementsql, "_vouched_lines", short)
    assert _disagreements(plain, labels, tmp_path / "short.jsonl") == want
    assert streamed == [True]


@pytest.mark.parametrize("per_group", [2_000, 2, 3])
@pytest.mark.parametrize("groups_reversed", [False, True])
def test_the_engines_parquet_is_the_streams_bytes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    streamed: list[bool],
    per_group: int,
    groups_reversed: bool,
) -> None:
    # Parquet output: the engine's table columns against the stream's records, byte for
    # byte; row groups of 2, 3 records cut within a mapping and across the two mappings
    # (7 disagreements); files whose sentence groups are not in output order (each
    # mapping's rows then taken out of file order)
    plain, own, labels = _files(tmp_path)
    if groups_reversed:
        for rows, src, dst in zip((ROWS, ROWS_B), plain, own, strict=True):
            backwards = sorted(rows, key=lambda r: r["question_id"], reverse=True)
            write_jsonl(src, backwards)
            assert exit_code("ingest", "generic", src, "-o", dst) == 0
    flipped = [dict(x, has_error=False) if x["sentence_id"] == "q1:s0" else x for x in LABELS]
    labels = write_jsonl(labels, flipped)
    monkeypatch.setattr(disagreementsql, "_RECORDS_PER_GROUP", per_group)
    monkeypatch.setattr(disagreementio, "_RECORDS_PER_CHUNK", per_group)
    got = _disagreements(own, labels, tmp_path / "engine.parquet")
    assert streamed == []
    monkeypatch.setattr(disagreementsql, "applies", lambda *args: False)
    assert _disagreements(own, labels, tmp_path / "stream.parquet") == got
    assert _disagreements(plain, labels, tmp_path / "plain.parquet") == got
    assert streamed == [True, True]
    meta = pq.ParquetFile(tmp_path / "engine.parquet").metadata
    # 11 disagreements (refuted: a q1:s0 FP, a q2:s9 FN, b q1:s0 FP, b q2:s0 FP, b q2:s9
    # FN; non_supported the same and a q1:s1 FP); row groups of per_group, the last the rest
    sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    assert sum(sizes) == 11
    assert sizes[:-1] == [per_group] * (11 // per_group)
    records = disagreementio.read_disagreements(tmp_path / "engine.parquet")
    first = next(d for d in records if (d.system, d.sentence_id) == ("a", "q1:s0"))
    assert first.sentence == "the sentence, only on the second claim"
    assert [p.score for p in first.claims[0].passages] == [1e-05, 1e22, 0.0, -0.0, None]
    assert first.error_claim_ids == ("q1:s0:c1",)


def test_a_row_the_writer_cannot_have_written_leaves_the_parquet_to_the_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[bool]
) -> None:
    _, own, labels = _files(tmp_path)
    table = pq.read_table(own[1])
    at = table.schema.get_field_index("reasoning")
    # b's q2:s0 (an FP) with an empty reasoning: the model reads it as missing
    reasoning = table.column("reasoning").to_pylist()
    reasoning[3] = ""
    edited = table.set_column(at, "reasoning", pa.array(reasoning, pa.string()))
    with pq.ParquetWriter(own[1], edited.schema) as writer:
        writer.write_table(edited)
        writer.add_key_value_metadata(engine.validated_marker("traces", len(ROWS_B)))
    assert engine.seal(own[1])  # sealed anew, as a forger would (a copied marker: not trusted)
    got = _disagreements(own, labels, tmp_path / "engine.parquet")
    assert streamed == [True]  # no half-written file: the stream wrote it
    records = disagreementio.read_disagreements(tmp_path / "engine.parquet")
    b_q2 = [d for d in records if (d.system, d.sentence_id) == ("b", "q2:s0")]
    assert [d.claims[0].reasoning for d in b_q2] == [None, None]  # both mappings
    assert not list(tmp_path.glob(".engine.parquet.*"))  # the engine's scratch file: gone
    monkeypatch.setattr(disagreementsql, "applies", lambda *args: False)
    assert _disagreements(own, labels, tmp_path / "stream.parquet") == got


def test_the_engines_lines_import_no_pandas_in_a_fresh_process(tmp_path: Path) -> None:
    # registering the window's row numbers as an Arrow table, and reading the fetched
    # batches' numbers with Arrow's to_numpy, each imported pandas (~870 M instructions, a
    # third of the DuckDB script's whole run at paper scale): the same bytes without it
    # (issue 30)
    import subprocess
    import sys

    plain, own, labels = _files(tmp_path)
    want = _disagreements(plain, labels, tmp_path / "stream.jsonl")
    out = tmp_path / "engine.jsonl"
    argv = ["disagreements", "--labels", str(labels), "-o", str(out), "-m", "refuted"]
    argv += ["-m", "non_supported", *(x for t in own for x in ("--traces", str(t)))]
    code = (
        "import sys\n"
        "import failcodes.disagreementio as d\n"
        "def no_stream(*args, **kwargs):\n"
        "    raise AssertionError('the stream wrote the file')\n"
        "d.stream_disagreements = no_stream\n"
        "from failcodes.cli.start import main\n"
        f"sys.argv = ['failcodes', *{argv!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(proc.stdout.split())
    assert out.read_bytes() == want
    assert "pandas" not in loaded
