"""Disagreements found on sentence groups, then streamed group by group (issue 18).

``failcodes disagreements`` at sentence level reads the traces into sentence groups that know
where their claims are (each group's first line and offset, and its row count when its claims
are consecutive rows: :class:`~failcodes.tracecols.GroupOrigin`), selects the disagreeing
groups as arrays and fetches only their lines while it writes. Its output must be byte for
byte what the trace-column path writes (``select_with_shape`` + ``stream_disagreements``
on :func:`~failcodes.columnar.read_trace_columns`), which stays the path for claim level and
for groups whose claims are not one run of lines.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from failcodes import (
    columnar,
    disagreementio,
    disagreements,
    disagreementsql,
    labelio,
    tracecols,
    traceio,
)
from failcodes.disagreements import (
    GroupSelection,
    count_by_kind,
    select_group_disagreements,
    select_with_shape,
)
from failcodes.errors import ConfigError, InputError
from failcodes.labels import LabelIndex
from failcodes.mapping import resolve_mappings
from failcodes.metrics import Level
from failcodes.tracecols import SentenceColumns
from tests.cli_helpers import exit_code

MAPPINGS = ["refuted", "non_supported"]


def _claim(system: str, question: str, sentence: str, claim: int, verdict: str) -> dict[str, Any]:
    return {
        "system": system,
        "question_id": question,
        "sentence_id": sentence,
        "claim_id": f"{sentence}:c{claim}",
        "claim": f"claim {claim} of {sentence}",
        "sentence": f"text of {sentence}",
        "verdict": verdict,
        "passages": [
            {"passage_id": f"{sentence}:c{claim}:p{r}", "rank": r, "text": "t", "score": 0.5}
            for r in (1, 2)
        ],
    }


def _write_jsonl(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _labels(path: Path, flags: dict[str, bool], **given: str) -> Path:
    rows = [
        {"sentence_id": sid, "has_error": err, "rationale": f"why {sid}", "annotator": "c1"}
        | ({"question_id": given[sid]} if sid in given else {})
        for sid, err in flags.items()
    ]
    return _write_jsonl(path, list(rows))


def _hand_counted(tmp_path: Path) -> tuple[Path, Path]:
    """Two systems, three sentences (claims consecutive), labels s1 error, s2 and s3 none.

    Under ``refuted``: A/s1 (refuted) agrees; A/s2 (refuted) FP; A/s3 (supported) agrees;
    B/s1 (supported) FN; B/s2 agrees; B/s3 (refuted) FP. Under ``non_supported`` (no_evidence
    is an error too): A/s3 (no_evidence claim) FP as well, 4 in all.
    """
    rows: list[dict[str, Any] | str] = [
        _claim("A", "q1", "s1", 0, "refuted"),
        _claim("A", "q1", "s1", 1, "supported"),
        _claim("A", "q1", "s2", 0, "refuted"),
        _claim("A", "q2", "s3", 0, "supported"),
        _claim("A", "q2", "s3", 1, "no_evidence"),
        _claim("B", "q1", "s1", 0, "supported"),
        _claim("B", "q1", "s2", 0, "supported"),
        _claim("B", "q2", "s3", 0, "refuted"),
    ]
    traces = _write_jsonl(tmp_path / "traces.jsonl", rows)
    labels = _labels(tmp_path / "labels.jsonl", {"s1": True, "s2": False, "s3": False})
    return traces, labels


def _column_path(traces: list[Path], labels: Path, out: Path, policy: str = "no_error") -> bytes:
    """What the trace-column path writes (the reference)."""
    columns = columnar.read_trace_columns(traces)
    label_list = labelio.read_labels(labels, traces=columns, columns=True)
    index = LabelIndex(label_list)
    items = [
        s
        for m in resolve_mappings(MAPPINGS)
        for s in select_with_shape(columns, index, m, without_claims=policy)[0]
    ]
    disagreementio.stream_disagreements(out, columns, items, index)
    return out.read_bytes()


def _command(traces: list[Path], labels: Path, out: Path, *extra: str) -> bytes:
    args = ["disagreements", "--labels", str(labels), "-o", str(out)]
    for t in traces:
        args += ["--traces", str(t)]
    for m in MAPPINGS:
        args += ["-m", m]
    assert exit_code(*args, *extra) == 0
    return out.read_bytes()


def _no_trace_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the trace columns were read")

    monkeypatch.setattr(columnar, "read_trace_columns", refuse)


def test_hand_counted_disagreements_from_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traces, labels = _hand_counted(tmp_path)
    expected = _column_path([traces], labels, tmp_path / "columns.jsonl")
    _no_trace_columns(monkeypatch)  # the command must not need the claim rows as columns
    got = _command([traces], labels, tmp_path / "groups.jsonl")
    assert got == expected
    records = [json.loads(line) for line in got.decode().splitlines()]
    # counted by hand (see _hand_counted): 3 under refuted, 4 under non_supported
    assert [(r["mapping"], r["system"], r["sentence_id"], r["kind"]) for r in records] == [
        ("refuted", "A", "s2", "FP"),
        ("refuted", "B", "s1", "FN"),
        ("refuted", "B", "s3", "FP"),
        ("non_supported", "A", "s2", "FP"),
        ("non_supported", "A", "s3", "FP"),
        ("non_supported", "B", "s1", "FN"),
        ("non_supported", "B", "s3", "FP"),
    ]
    a_s3 = records[4]
    assert [c["claim_id"] for c in a_s3["claims"]] == ["s3:c0", "s3:c1"]
    assert a_s3["error_claim_ids"] == ["s3:c1"]
    assert a_s3["label_rationale"] == "why s3"


def test_only_the_disagreeing_groups_lines_are_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stream decodes the lines of disagreeing groups only, one run per group."""
    traces, labels = _hand_counted(tmp_path)
    fetched: list[int] = []
    runs: list[list[int]] = []
    # (since session 28 the lines are read again by disagreementsql._vouched_lines, not
    # columnar.gather_runs: its rows per run and the lines it decodes are counted)
    vouched_lines = disagreementsql._vouched_lines

    def counting_runs(
        paths: Any, files: Any, offsets: Any, counts: Any, ends: Any, *rest: Any
    ) -> Any:
        runs.append(list(counts))  # the rows of each run fetched
        for rec in vouched_lines(paths, files, offsets, counts, ends, *rest):
            fetched.append(1)
            yield rec

    monkeypatch.setattr(disagreementsql, "_vouched_lines", counting_runs)
    _command([traces], labels, tmp_path / "out.jsonl")
    # 7 disagreements (both mappings) are one chunk of at most 16: one fetch of the distinct
    # disagreeing groups A/s2 (1 claim), A/s3 (2), B/s1 (1), B/s3 (1), in group order
    assert runs == [[1, 2, 1, 1]]
    assert len(fetched) == 5  # of 8 lines: A/s1 and B/s2 (3 lines) are not decoded again


def _shuffled(seed: int) -> tuple[list[dict[str, Any]], dict[str, bool]]:
    rng = random.Random(seed)
    rows = []
    for system in ("rerank", "bm25", "dense"):
        for s in range(40):
            question = f"q{s // 3}"
            if rng.random() < 0.1:
                continue  # no claim for this sentence (a sentence without claims)
            for c in range(rng.randint(1, 4)):
                verdict = rng.choice(["supported", "refuted", "no_evidence", "Refutes"])
                rows.append(_claim(system, question, f"{question}:s{s}", c, verdict))
    flags = {f"q{s // 3}:s{s}": rng.random() < 0.4 for s in range(40)}
    return rows, flags


def _questions(flags: dict[str, bool]) -> dict[str, str]:
    """Each labelled sentence's question (a sentence no system has claims for needs it)."""
    return {sid: sid.split(":")[0] for sid in flags}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("chunk", [3, 1 << 17])
@pytest.mark.parametrize("policy", ["no_error", "exclude"])
def test_groups_write_what_the_columns_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, chunk: int, policy: str
) -> None:
    """Random sentences (some without claims, blank lines inside runs), folded every 3 rows."""
    monkeypatch.setattr(columnar, "_SINK_ROWS", chunk)
    monkeypatch.setattr(disagreements, "_BLOCK", 2 if chunk == 3 else 1_024)
    rows, flags = _shuffled(seed)
    lines: list[dict[str, Any] | str] = []
    for i, row in enumerate(rows):
        lines.append(row)
        if i % 7 == 3:
            lines.append("   ")  # a blank line is no row, also inside a group's run
    traces = _write_jsonl(tmp_path / "traces.jsonl", lines)
    labels = _labels(tmp_path / "labels.jsonl", flags, **_questions(flags))
    expected = _column_path([traces], labels, tmp_path / "columns.jsonl", policy)
    _no_trace_columns(monkeypatch)
    got = _command([traces], labels, tmp_path / "groups.jsonl", "--without-claims", policy)
    assert got == expected
    assert len(got.splitlines()) > 20


def test_a_labelled_sentence_without_claims_is_merged_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error sentence a system has no claim for (no_error policy) is an FN between groups."""
    rows: list[dict[str, Any] | str] = [
        _claim("A", "q1", "s1", 0, "supported"),
        _claim("A", "q1", "s3", 0, "refuted"),
        _claim("B", "q1", "s1", 0, "supported"),
        _claim("B", "q1", "s2", 0, "supported"),
        _claim("B", "q1", "s3", 0, "refuted"),
    ]
    traces = _write_jsonl(tmp_path / "traces.jsonl", rows)
    # s2 has no claim for A; s4 is in no trace (its question is): both FN for both systems
    labels = _labels(
        tmp_path / "labels.jsonl", {"s1": False, "s2": True, "s3": False, "s4": True}, s4="q1"
    )
    expected = _column_path([traces], labels, tmp_path / "columns.jsonl")
    _no_trace_columns(monkeypatch)
    got = _command([traces], labels, tmp_path / "groups.jsonl")
    assert got == expected
    refuted = [json.loads(x) for x in got.decode().splitlines()][:5]
    assert [(r["system"], r["sentence_id"], r["kind"], len(r["claims"])) for r in refuted] == [
        ("A", "s2", "FN", 0),
        ("A", "s3", "FP", 1),
        ("A", "s4", "FN", 0),
        ("B", "s2", "FN", 1),
        ("B", "s3", "FP", 1),
    ]


def test_claims_not_in_one_run_are_found_by_a_key_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interleaved systems and sentences (two files, each of its own systems: a system's
    sentence in two files is refused): the engine lists the rows of the groups that are no
    run, and the command needs no trace columns."""
    rows, flags = _shuffled(7)
    random.Random(7).shuffle(rows)
    first = _write_jsonl(
        tmp_path / "a.jsonl", [*(r for r in rows if r["system"] == "bm25"), "", "  "]
    )
    second = _write_jsonl(tmp_path / "b.jsonl", [r for r in rows if r["system"] != "bm25"])
    labels = _labels(tmp_path / "labels.jsonl", flags, **_questions(flags))
    cols = columnar.read_sentence_columns([first, second], locate=True)
    assert isinstance(cols, SentenceColumns) and cols.origin is not None
    assert 0 in cols.origin.where(range(len(cols.first)), cols.first)[3]
    expected = _column_path([first, second], labels, tmp_path / "columns.jsonl")
    _no_trace_columns(monkeypatch)
    assert _command([first, second], labels, tmp_path / "groups.jsonl") == expected
    runs = cols.origin.run
    assert cols.origin.scattered is not None
    listed = sorted(set(cols.origin.scattered.group.tolist()))
    assert listed == np.flatnonzero(runs == 0).tolist()  # exactly the groups with no run
    assert len(expected.splitlines()) > 20


def test_scattered_groups_rows_by_hand(tmp_path: Path) -> None:
    rows: list[dict[str, Any] | str] = [
        _claim("A", "q1", "s1", 0, "refuted"),  # row 0, line 1
        _claim("B", "q1", "s1", 0, "supported"),  # row 1, line 2
        "",  # line 3: no row
        _claim("A", "q1", "s1", 1, "supported"),  # row 2, line 4
        _claim("B", "q1", "s1", 1, "refuted"),  # row 3, line 5
    ]
    traces = _write_jsonl(tmp_path / "traces.jsonl", rows)
    offsets = [0]
    for line in traces.read_bytes().splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    located = columnar.read_sentence_columns(traces, locate=True)
    assert isinstance(located, SentenceColumns) and located.origin is not None
    # groups A/s1 (rows 0 and 2) and B/s1 (rows 1 and 3): neither is a run of rows
    assert located.origin.rows_of(0) == [(0, 0, 1, offsets[0]), (2, 0, 4, offsets[3])]
    assert located.origin.rows_of(1) == [(1, 0, 2, offsets[1]), (3, 0, 5, offsets[4])]


def test_scattered_parquet_groups_are_listed_too(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows, flags = _shuffled(5)
    random.Random(5).shuffle(rows)
    path = tmp_path / "traces.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=traceio.trace_arrow_schema()), path)
    labels = _labels(tmp_path / "labels.jsonl", flags, **_questions(flags))
    cols = columnar.read_sentence_columns(path, locate=True)
    assert isinstance(cols, SentenceColumns) and cols.origin is not None
    assert cols.origin.scattered is not None  # listed by the engine, as for JSONL
    expected = _column_path([path], labels, tmp_path / "columns.jsonl")
    assert _command([path], labels, tmp_path / "groups.jsonl") == expected


def test_group_origin_counts_rows_across_folds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each group's first line, byte offset and run, with rows folded every 2 rows."""
    monkeypatch.setattr(columnar, "_SINK_ROWS", 2)
    rows: list[dict[str, Any] | str] = [
        _claim("A", "q1", "s1", 0, "supported"),  # line 1
        _claim("A", "q1", "s1", 1, "supported"),  # line 2
        "",  # line 3: blank
        _claim("A", "q1", "s1", 2, "refuted"),  # line 4: the run goes on (3 rows)
        _claim("A", "q1", "s2", 0, "supported"),  # line 5
        _claim("B", "q1", "s1", 0, "supported"),  # line 6
        _claim("A", "q1", "s2", 1, "supported"),  # line 7: A/s2 rows 3 and 5: no run
    ]
    traces = _write_jsonl(tmp_path / "traces.jsonl", rows)
    starts = [0]
    for line in traces.read_bytes().splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    cols = columnar.read_sentence_columns(traces, locate=True)
    assert isinstance(cols, SentenceColumns) and cols.origin is not None
    groups = [
        (cols.systems[s], cols.sentences[t])
        for s, t in zip(cols.system.tolist(), cols.sentence.tolist(), strict=True)
    ]
    assert groups == [("A", "s1"), ("A", "s2"), ("B", "s1")]
    files, lines, offsets, runs = cols.origin.where([0, 1, 2], cols.first)
    assert files == [0, 0, 0]
    assert lines == [1, 5, 6]
    assert offsets == [starts[0], starts[4], starts[5]]
    assert runs == [3, 0, 1]
    assert cols.first.tolist() == [0, 3, 4]


@pytest.mark.parametrize("chunk", [3, 1 << 17])
def test_group_origin_of_parquet_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Parquet groups are located by row; the command writes what the columns write."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setattr(columnar, "_PARQUET_BATCH_ROWS", chunk)  # 3: inserts inside a group

    rows, flags = _shuffled(3)
    path = tmp_path / "traces.parquet"
    pq.write_table(
        pa.Table.from_pylist(rows, schema=traceio.trace_arrow_schema()), path, row_group_size=7
    )
    labels = _labels(tmp_path / "labels.jsonl", flags, **_questions(flags))
    cols = columnar.read_sentence_columns(path, locate=True)
    assert isinstance(cols, SentenceColumns) and cols.origin is not None
    _, lines, offsets, runs = cols.origin.where(range(len(cols.first)), cols.first)
    assert offsets == cols.first.tolist()
    assert lines == (cols.first + 1).tolist()
    assert min(runs) > 0
    expected = _column_path([path], labels, tmp_path / "columns.jsonl")
    assert _command([path], labels, tmp_path / "groups.jsonl") == expected


def test_parquet_rows_are_fetched_a_batch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From Parquet the stream decodes batches, not row groups, and keeps one across chunks.

    The hand-counted traces in 2 row groups of 4 rows, batches of 2 rows, and a chunk of one
    disagreement: rows 0-1 A/s1, 2 A/s2, 3-4 A/s3, 5 B/s1, 6 B/s2, 7 B/s3. The 7
    disagreements (see _hand_counted) want rows 2 | 5 | 7 under refuted, then 2 | 3, 4 | 5 | 7.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    traces, labels = _hand_counted(tmp_path)
    expected = _command([traces], labels, tmp_path / "from-jsonl.jsonl")
    rows = [json.loads(line) for line in traces.read_text(encoding="utf-8").splitlines()]
    path = tmp_path / "traces.parquet"
    table = pa.Table.from_pylist(rows, schema=columnar.trace_arrow_schema())
    pq.write_table(table, path, row_group_size=4)
    monkeypatch.setattr(columnar, "_FETCH_BATCH_ROWS", 2)
    monkeypatch.setattr(disagreementio, "_GATHERED_PER_CHUNK", 1)
    started: list[int] = []
    converted: list[str] = []
    iter_batches, parquet_item = pq.ParquetFile.iter_batches, columnar._parquet_item
    readers: list[Any] = []
    real_reader = columnar._ParquetRows

    def counting_batches(self: Any, *args: Any, row_groups: Any = None, **kwargs: Any) -> Any:
        if kwargs.get("batch_size") == 2:  # the stream's fetches (the scan names no group,
            started.extend(row_groups or [])  # the decompression-bomb pass reads 4,096 rows)
        return iter_batches(self, *args, row_groups=row_groups, **kwargs)

    def counting_item(record: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        converted.append(record["claim_id"])
        return parquet_item(record, *args, **kwargs)

    def kept_reader(file: Path) -> Any:
        readers.append(real_reader(file))
        return readers[-1]

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counting_batches)
    monkeypatch.setattr(columnar, "_parquet_item", counting_item)
    monkeypatch.setattr(columnar, "_ParquetRows", kept_reader)
    _no_trace_columns(monkeypatch)
    assert _command([path], labels, tmp_path / "from-parquet.jsonl") == expected
    # one reader for the whole stream: row group 0 is started again only for the row behind
    # (row 2 under non_supported); batch [0, 1] (no wanted row) is decoded on the way. Group
    # 1's cursor is kept meanwhile: rows 4, 5, 7 under non_supported come from its batches
    # (before issue 30's cursors, group 1 was started again too: [0, 1, 0, 1], 8 decodes)
    assert len(readers) == 1
    assert started == [0, 1, 0]
    assert readers[0].decoded == 6  # [0, 1] [2, 3] [4, 5] [6, 7], then [0, 1] [2, 3]
    # only the wanted rows become Python values, each once per chunk that wants it
    assert converted == ["s2:c0", "s1:c0", "s3:c0", "s2:c0", "s3:c0", "s3:c1", "s1:c0", "s3:c0"]


def test_a_row_behind_in_its_row_group_is_not_decoded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream sorted by question, then by disagreement id, asks for rows behind the last.

    One row group of 8 rows, batches of 2: rows 5, then 1 and 2, then 6 decode [0, 1] [2, 3]
    [4, 5] once and [6, 7] once: 4 decodes. Starting the group again for row 1 (as before)
    decoded [0, 1] again, then [2, 3] [4, 5] [6, 7]: 7 decodes. With 2 batches kept, rows 5,
    2, 0: row 0 behind them starts the group again.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [_claim("A", "q1", f"s{i}", 0, "refuted") for i in range(8)]
    path = tmp_path / "traces.parquet"
    table = pa.Table.from_pylist(rows, schema=columnar.trace_arrow_schema())
    pq.write_table(table, path, row_group_size=8)
    monkeypatch.setattr(columnar, "_FETCH_BATCH_ROWS", 2)
    reader = columnar._ParquetRows(path)
    assert [r["sentence_id"] for r in reader.records([5])] == ["s5"]
    assert [r["sentence_id"] for r in reader.records([1, 2])] == ["s1", "s2"]
    assert [r["sentence_id"] for r in reader.records([6])] == ["s6"]
    assert reader.decoded == 4
    monkeypatch.setattr(columnar, "_KEPT_BATCHES", 2)
    reader = columnar._ParquetRows(path)
    assert [r["sentence_id"] for r in reader.records([5])] == ["s5"]  # keeps [2, 3] [4, 5]
    assert [r["sentence_id"] for r in reader.records([2])] == ["s2"]
    assert reader.decoded == 3
    assert [r["sentence_id"] for r in reader.records([0])] == ["s0"]  # [0, 1] again
    assert reader.decoded == 4


def test_rows_scattered_over_the_file_decode_each_row_group_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream jumping back and forth between places of a file decodes each row group once.

    Three copies of 6 sentences (one claim each, supported, each labelled an error: 18 FN
    under ``refuted``), each copy's ids suffixed ``~k`` as bench_engine's N-fold copy does:
    copy k's sentence i is row 6k + i, but the output order (question, then sentence) is
    q0~0, q0~1, q0~2, q1~0, ...: rows 0, 6, 12, 1, 7, 13, ... Row groups of 2 rows (9), a
    batch a row group, a chunk of one disagreement: every fetch is in another group than
    the last. Restarting a group at each jump back (issue 30: 60 CPU-s for 13.5 at twice
    the paper scale) decoded a batch per row, 18; a cursor kept per group decodes 9.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        _claim("A", f"q{i}~{k}", f"s{i}~{k}", 0, "supported") for k in range(3) for i in range(6)
    ]
    traces = _write_jsonl(tmp_path / "traces.jsonl", list(rows))
    flags = {f"s{i}~{k}": True for k in range(3) for i in range(6)}
    labels = _labels(tmp_path / "labels.jsonl", flags)
    path = tmp_path / "traces.parquet"
    table = pa.Table.from_pylist(rows, schema=columnar.trace_arrow_schema())
    pq.write_table(table, path, row_group_size=2)
    assert pq.ParquetFile(path).metadata.num_row_groups == 9
    monkeypatch.setattr(columnar, "_FETCH_BATCH_ROWS", 2)
    monkeypatch.setattr(disagreementio, "_GATHERED_PER_CHUNK", 1)
    readers: list[Any] = []
    real_reader = columnar._ParquetRows

    def kept_reader(file: Path) -> Any:
        readers.append(real_reader(file))
        return readers[-1]

    monkeypatch.setattr(columnar, "_ParquetRows", kept_reader)
    got = {}
    for source, name in ((traces, "from-jsonl.jsonl"), (path, "from-parquet.jsonl")):
        args = ["disagreements", "--labels", labels, "--traces", source, "-m", "refuted"]
        assert exit_code(*args, "-o", tmp_path / name) == 0
        got[name] = (tmp_path / name).read_bytes()
    assert got["from-parquet.jsonl"] == got["from-jsonl.jsonl"]
    order = [json.loads(line)["sentence_id"] for line in got["from-jsonl.jsonl"].splitlines()]
    assert order[:4] == ["s0~0", "s0~1", "s0~2", "s1~0"]  # the jumps the docstring counts
    assert len(order) == 18
    assert len(readers) == 1
    assert readers[0].decoded == 9  # each row group once


def test_empty_optional_texts_are_missing_from_jsonl_and_parquet(tmp_path: Path) -> None:
    """An empty optional text is written as null, as the model reads it (``empty_as_none``).

    The fast paths (JSONL lines, Parquet rows) wrote ``""`` for the reasoning, raw verdict,
    passage source and title; the model path (old Parquet fetches) wrote null.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for claim in range(2):
        row = _claim("A", "q1", "s1", claim, "refuted")
        row.update(raw_verdict="", reasoning="")
        row["passages"][0].update(source="", title="")
        rows.append(row)
    traces = _write_jsonl(tmp_path / "traces.jsonl", list(rows))
    path = tmp_path / "traces.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=columnar.trace_arrow_schema()), path)
    labels = _labels(tmp_path / "labels.jsonl", {"s1": False})
    got = _command([traces], labels, tmp_path / "from-jsonl.jsonl")
    assert _command([path], labels, tmp_path / "from-parquet.jsonl") == got
    records = [json.loads(line) for line in got.decode().splitlines()]
    assert len(records) == 2  # A/s1 refuted, labelled no error: an FP under each mapping
    for claim in (c for r in records for c in r["claims"]):
        assert (claim["raw_verdict"], claim["reasoning"]) == (None, None)
        assert (claim["passages"][0]["source"], claim["passages"][0]["title"]) == (None, None)
        assert claim["passages"][1]["text"] == "t"  # (a required text stays as written)


def test_group_selection_counts_without_building_items(tmp_path: Path) -> None:
    traces, labels = _hand_counted(tmp_path)
    cols = columnar.read_sentence_columns(traces, locate=True)
    assert isinstance(cols, SentenceColumns)
    label_list = labelio.read_labels(labels, columns=True)
    index = LabelIndex(label_list)
    found = select_group_disagreements(cols, label_list, index, resolve_mappings(MAPPINGS))
    assert found is not None
    assert [len(s) for s in found] == [3, 4]
    assert all(isinstance(s, GroupSelection) and not len(s.unlocated()) for s in found)
    by_items = count_by_kind([d for s in found for d in s])
    assert (
        count_by_kind(found)
        == by_items
        == {
            ("A", "refuted"): {"FN": 0, "FP": 1},
            ("B", "refuted"): {"FN": 1, "FP": 1},
            ("A", "non_supported"): {"FN": 0, "FP": 2},
            ("B", "non_supported"): {"FN": 1, "FP": 1},
        }
    )


def test_a_run_ends_at_the_end_of_its_file(tmp_path: Path) -> None:
    """A sentence whose claims go on in the next file is refused (two runs, or another
    system's file naming this system, would be pooled); one that ends there is a run."""
    first = _write_jsonl(
        tmp_path / "a.jsonl",
        [_claim("A", "q1", "s1", 0, "refuted"), _claim("A", "q1", "s2", 0, "refuted")],
    )
    second = _write_jsonl(
        tmp_path / "b.jsonl",
        [_claim("A", "q1", "s2", 1, "supported"), _claim("A", "q1", "s3", 0, "supported")],
    )
    with pytest.raises(InputError, match="sentence 's2' of system 'A' has claims in"):
        columnar.read_sentence_columns([first, second], locate=True)
    _write_jsonl(
        first,
        [
            _claim("A", "q1", "s1", 0, "refuted"),
            _claim("A", "q1", "s2", 0, "refuted"),
            _claim("A", "q1", "s2", 1, "supported"),
        ],
    )
    _write_jsonl(second, [_claim("A", "q1", "s3", 0, "supported")])
    labels = _labels(tmp_path / "labels.jsonl", {"s1": False, "s2": False, "s3": True})
    cols = columnar.read_sentence_columns([first, second], locate=True)
    assert isinstance(cols, SentenceColumns) and cols.origin is not None
    files, lines, _, runs = cols.origin.where([0, 1, 2], cols.first)
    # rows 0..3 are consecutive; s2's end with its file, s3's start the next
    assert (files, lines, runs) == ([0, 0, 1], [1, 2, 1], [1, 2, 1])
    expected = _column_path([first, second], labels, tmp_path / "columns.jsonl")
    assert _command([first, second], labels, tmp_path / "groups.jsonl") == expected
    assert len(expected.splitlines()) == 2 * 3  # s1 FP, s2 FP, s3 FN under both mappings


#: The hand-counted disagreements of :func:`_hand_counted` (mapping, system, sentence, kind).
HAND_COUNTED = [
    ("refuted", "A", "s2", "FP"),
    ("refuted", "B", "s1", "FN"),
    ("refuted", "B", "s3", "FP"),
    ("non_supported", "A", "s2", "FP"),
    ("non_supported", "A", "s3", "FP"),
    ("non_supported", "B", "s1", "FN"),
    ("non_supported", "B", "s3", "FP"),
]


def test_select_from_files_chooses_groups_or_trace_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one function the command calls: sentence groups at sentence level (no trace
    columns read), the trace columns at claim level; the same hand-counted disagreements."""
    traces, labels = _hand_counted(tmp_path)
    maps = resolve_mappings(MAPPINGS)
    expected = _column_path([traces], labels, tmp_path / "columns.jsonl")
    real = columnar.read_trace_columns
    _no_trace_columns(monkeypatch)
    found = disagreementio.select_from_files(
        [traces], labels, maps, level=Level.SENTENCE, without_claims="no_error"
    )
    assert [type(i) for i in found.items] == [GroupSelection, GroupSelection]
    assert [(s.mapping.name, s.system, s.sentence_id, s.kind.value) for s in found] == (
        HAND_COUNTED
    )
    assert found.write(tmp_path / "groups.jsonl") == 7
    assert (tmp_path / "groups.jsonl").read_bytes() == expected
    # claim level, on trace columns: each claim takes its sentence's label (by hand: s1's
    # non-error claims are FN, s2/s3's error claims FP; no_evidence counts under non_supported)
    monkeypatch.setattr(columnar, "read_trace_columns", real)
    claims = disagreementio.select_from_files(
        [traces], labels, maps, level=Level.CLAIM, without_claims="no_error"
    )
    assert isinstance(claims.columns, tracecols.TraceColumns)
    assert all(isinstance(i, disagreements.Selected) for i in claims.items)
    assert [(s.mapping.name, s.system, s.claim_id, s.kind.value) for s in claims] == [
        ("refuted", "A", "s1:c1", "FN"),
        ("refuted", "A", "s2:c0", "FP"),
        ("refuted", "B", "s1:c0", "FN"),
        ("refuted", "B", "s3:c0", "FP"),
        ("non_supported", "A", "s1:c1", "FN"),
        ("non_supported", "A", "s2:c0", "FP"),
        ("non_supported", "A", "s3:c1", "FP"),
        ("non_supported", "B", "s1:c0", "FN"),
        ("non_supported", "B", "s3:c0", "FP"),
    ]


def test_select_from_files_refuses_claim_labels_at_sentence_level(tmp_path: Path) -> None:
    traces, _ = _hand_counted(tmp_path)
    labels = _write_jsonl(
        tmp_path / "claim-labels.jsonl",
        [{"sentence_id": "s1", "claim_id": "s1:c0", "has_error": True, "annotator": "c1"}],
    )
    with pytest.raises(ConfigError, match="all 1 labels are claim-level"):
        disagreementio.select_from_files(
            [traces],
            labels,
            resolve_mappings(MAPPINGS),
            level=Level.SENTENCE,
            without_claims="no_error",
        )
