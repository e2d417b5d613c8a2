"""The fast paths of the columnar core agree with the object paths they replace (issue 18).

- :func:`failcodes.disagreementio.json_line_encoder` gives the bytes of ``json.dumps`` exactly;
- the duplicate-key check of the msgspec trace reader (a quote count when the line has no
  backslash) accepts and refuses exactly what the object reader does;
- the disagreements fast reader vouches only for lines the object reader accepts (every
  field present, no key twice);
- the streamed ``disagreements`` output (claim views, no models) equals the file written from
  :func:`failcodes.disagreements.find_disagreements` byte for byte.
"""

from __future__ import annotations

import functools
import json
import math
import random
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failcodes import columnar, disagreementio, labelio, traceio
from failcodes.disagreements import disagreement_id, find_disagreements, select_with_shape
from failcodes.errors import InputError
from failcodes.hashing import content_hash
from failcodes.labels import Label, LabelIndex
from failcodes.metrics import Level
from failcodes.tracecols import TraceColumns
from tests.judge_helpers import write_disagreements

# characters that matter to the encoder and to the key count: structure, escapes, blanks
TRICKY = st.text(alphabet=st.sampled_from(list(',:"\\{}[] \t\n\x01é\u2028😀ab1e-.')), max_size=8)
FINITE = st.floats(allow_nan=False, allow_infinity=False)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | FINITE | TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES)
def test_json_line_encoder_gives_the_json_dumps_bytes(value: Any) -> None:
    expected = (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8")
    assert disagreementio.json_line_encoder()(value) == expected


def test_json_line_encoder_hand_checked_numbers() -> None:
    # Python's float repr (json.dumps) vs msgspec's shortest form: 1e+16, 1e-05
    encode = disagreementio.json_line_encoder()
    assert encode({"a": [1e16, 1e-05, 0.95, -0.0, 3]}) == b'{"a": [1e+16, 1e-05, 0.95, -0.0, 3]}\n'
    assert encode({"t": 'a,{"b": 1}'}) == b'{"t": "a,{\\"b\\": 1}"}\n'


@settings(max_examples=400, deadline=None)
@given(FINITE)
def test_msgspec_writes_floats_in_the_repr_range_as_json_dumps(value: float) -> None:
    # the streamed disagreements are spaced by msgspec when every score is 0 or in this range
    low, high = disagreementio._REPR_RANGE
    spaced = msgspec.json.format(msgspec.json.encode([value, {"s": value}]), indent=0)
    same = spaced == json.dumps([value, {"s": value}]).encode()
    assert same or not (value == 0 or low <= abs(value) < high)
    # hand-checked edges: repr switches to exponents below 1e-4 and from 1e16
    for edge, expected in ((1e-4, b"0.0001"), (9999999999999998.0, b"9999999999999998.0")):
        assert msgspec.json.encode(edge) == expected == repr(edge).encode()


PASSAGE = {"passage_id": "p1", "rank": 1, "text": "Metformin lowers glucose.", "score": 0.5}


def _trace(text: str, claim: str) -> dict[str, Any]:
    return {
        "system": "bm25",
        "question_id": "q1",
        "sentence_id": "q1:s0",
        "claim_id": "q1:s0:c0",
        "claim": claim,
        "verdict": "supported",
        "passages": [
            {**PASSAGE, "text": text},
            {**PASSAGE, "passage_id": "p2", "rank": 2, "title": text, "gold": False},
        ],
    }


def _outcome(fn: Any, path: Path) -> Any:
    try:
        return fn(path)
    except InputError as exc:
        return f"error: {exc}"


# how a key may be written again (a duplicate), and the separators around keys
DUPLICATES = st.sampled_from(
    [
        None,
        '"claim": "x", ',
        '"claim" : "x", ',
        '"claim"\t:"x",',
        '"rank": 2, ',
        '"text": "a\\"b", ',
        '"score": null, ',
        '"title": "t", ',
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=TRICKY,
    claim=TRICKY,
    duplicate=DUPLICATES,
    where=st.sampled_from(["top", "passage"]),
    compact=st.booleans(),
)
def test_duplicate_keys_found_as_by_the_object_reader(
    tmp_path: Path, text: str, claim: str, duplicate: str | None, where: str, compact: bool
) -> None:
    rec = _trace(text, claim)
    separators = (",", ":") if compact else (", ", ": ")
    line = json.dumps(rec, ensure_ascii=False, separators=separators)
    if duplicate is not None:
        anchor = '{"passage_id"' if where == "passage" else '{"system"'
        line = line.replace(anchor, anchor[0] + duplicate + anchor[1:], 1)
    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    old = _outcome(traceio.read_traces, path)
    new = _outcome(columnar.read_trace_columns, path)
    if isinstance(old, str):
        assert new == old
        own_level = (where == "top") == ('"claim"' in (duplicate or ""))
        # (a blank claim is refused, session 31: '"title"' put in passage 1, which has none,
        # is no duplicate, and the blank claim's error is the line's)
        if duplicate is not None and own_level and "null" not in duplicate and claim.strip():
            assert "appears twice" in old
    else:
        assert isinstance(new, TraceColumns)
        assert new.table.equals(TraceColumns.from_traces(old).table)


def _study(seed: int) -> tuple[list[dict[str, Any]], list[Label]]:
    """Varied traces (texts with quotes, commas, unicode, escapes) and sentence labels."""
    rng = random.Random(seed)
    words = ["dose", "risk", 'say "no"', "a,{b}", "x: y", "é", "back\\slash", "tab\there", "z"]
    traces: list[dict[str, Any]] = []
    labels: list[Label] = []
    for s in range(6):
        sid = f"q{s // 3}:s{s}"
        labels.append(Label(sentence_id=sid, has_error=rng.random() < 0.5, rationale="r"))
        for system in ("bm25", "dense"):
            for c in range(rng.randint(1, 3)):
                passages = [
                    {
                        "passage_id": f"{sid}:c{c}:p{k}",
                        "rank": k + 1,
                        "text": " ".join(rng.choice(words) for _ in range(5)),
                        "score": rng.choice([None, 0.95, 1e-05, 12.0]),
                        **({"title": "T", "gold": True} if k == 0 else {}),
                    }
                    for k in range(rng.randint(0, 3))
                ]
                traces.append(
                    {
                        "system": system,
                        "question_id": f"q{s // 3}",
                        "sentence_id": sid,
                        "claim_id": f"{sid}:c{c}",
                        "claim": rng.choice(words),
                        "sentence": f"Sentence {s}",
                        "verdict": rng.choice(["supported", "refuted", "no_evidence", "Refutes"]),
                        "reasoning": rng.choice([None, 'because, "so"']),
                        "retriever": rng.choice([None, system]),
                        "passages": passages,
                    }
                )
    return traces, labels


@pytest.mark.parametrize("seed", range(6))
def test_streamed_disagreements_equal_the_object_path(tmp_path: Path, seed: int) -> None:
    records, labels = _study(seed)
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    traces = traceio.read_traces(src)
    expected = tmp_path / "expected.jsonl"
    items = [d for m in ("refuted", "non_supported") for d in find_disagreements(traces, labels, m)]
    write_disagreements(expected, items)
    columns = columnar.read_trace_columns(src)
    index = LabelIndex(labels)
    selected = [
        s for m in ("refuted", "non_supported") for s in select_with_shape(columns, index, m)[0]
    ]
    got = tmp_path / "got.jsonl"
    assert disagreementio.stream_disagreements(got, columns, selected, index) == len(items)
    assert got.read_bytes() == expected.read_bytes()
    # Parquet: the same records (decoded passage structs written as their fields)
    write_disagreements(tmp_path / "expected.parquet", items)
    disagreementio.stream_disagreements(tmp_path / "got.parquet", columns, selected, index)
    assert disagreementio.read_disagreements(
        tmp_path / "got.parquet"
    ) == disagreementio.read_disagreements(tmp_path / "expected.parquet")
    # and the stdlib writes the same bytes
    lines = [json.dumps(d.model_dump(mode="json"), ensure_ascii=False) for d in items]
    assert expected.read_text(encoding="utf-8") == "".join(x + "\n" for x in lines)
    assert not any(math.isnan(p.score or 0) for d in items for c in d.claims for p in c.passages)


#: Ids as they may be (blank ids and ids with spaces around them are refused on reading)
IDS = st.sampled_from(["a", "b", "B", "é", "a:1", "z", "a b", "x\ty"])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.tuples(IDS, IDS, IDS, st.sampled_from(["supported", "refuted", "False", "no_evidence"])),
        max_size=12,
    ),
    parquet=st.booleans(),
)
def test_encoded_key_columns_equal_the_object_columns(
    tmp_path: Path, rows: list[tuple[str, str, str, str]], parquet: bool
) -> None:
    """Codes built while reading (int32 + vocabularies) = codes of the trace models' columns."""
    records = [
        {
            "system": system or "s",
            "question_id": question,
            "sentence_id": f"{question}:{sentence}",
            "claim_id": f"c{i}",
            "claim": "x",
            "verdict": verdict,
        }
        for i, (system, question, sentence, verdict) in enumerate(rows)
    ]
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    traces = traceio.read_traces(src)
    if parquet:
        src = tmp_path / "t.parquet"
        traceio.write_traces(src, traces)
    cols = columnar.read_trace_columns(src)
    assert cols.encoded  # the reader's own path, not the object fallback
    assert cols.objects is None  # (the fallback keeps its trace objects)
    expected = TraceColumns.from_traces(traces)
    for name in ("system", "question_id", "sentence_id", "claim_id", "verdict"):
        got_codes, got_values = cols.codes(name)
        want_codes, want_values = expected.codes(name)
        assert got_values == want_values
        assert got_codes.tolist() == want_codes.tolist()
        assert cols.small_codes(name)[0].tolist() == want_codes.tolist()
        assert cols.values(name) == expected.values(name)
    assert (cols.verdict_codes() == expected.verdict_codes()).all()
    assert cols.table.equals(expected.table)
    if len(cols):
        back = list(range(len(cols)))[::-1]
        assert cols.take(back).table.equals(expected.take(back).table)


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(st.none() | st.integers(-(2**40), 2**40), max_size=40),
    kind=st.sampled_from(["int64", "int32", "bool", "double"]),
    start=st.integers(0, 10),
)
def test_numpy_of_equals_to_numpy(values: list[int | None], kind: str, start: int) -> None:
    """Buffers read directly (no pandas) = pyarrow's to_numpy, on slices, nulls filled."""
    import numpy as np
    import pyarrow as pa

    from failcodes.tracecols import numpy_of

    if kind == "int32":
        values = [None if v is None else v % 2**31 for v in values]
    if kind == "bool":
        typed: list[Any] = [None if v is None else v % 2 == 1 for v in values]
    elif kind == "double":
        typed = [None if v is None else v / 7 for v in values]
    else:
        typed = list(values)
    types = {"int64": pa.int64(), "int32": pa.int32(), "bool": pa.bool_(), "double": pa.float64()}
    arr = pa.array(typed, type=types[kind])
    arr = arr.slice(min(start, len(arr)))
    fill = False if kind == "bool" else 3
    got = numpy_of(arr, fill=fill)
    want = arr.fill_null(fill).to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)
    if arr.null_count == 0:
        assert np.array_equal(numpy_of(pa.chunked_array([arr, arr])), np.concatenate([want, want]))


@given(st.lists(st.none() | TRICKY, max_size=20))
def test_string_array_equals_pa_array(values: list[str | None]) -> None:
    import pyarrow as pa

    from failcodes.tableio import string_array

    assert string_array(values).equals(pa.array(values, type=pa.string()))


def test_metrics_from_parquet_import_no_pandas(tmp_path: Path) -> None:
    """The Parquet reader and metrics stay clear of pandas (~50 MB, ~1 s at start-up)."""
    import subprocess
    import sys

    records, labels = _study(1)
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    traceio.write_traces(tmp_path / "t.parquet", traceio.read_traces(src))
    pairs = [(x.sentence_id, x.has_error) for x in labels]
    code = (
        "import sys; from failcodes import columnar, metrics; from failcodes.labels import Label\n"
        f"cols = columnar.read_trace_columns({str(tmp_path / 't.parquet')!r})\n"
        f"labels = [Label(sentence_id=s, has_error=e) for s, e in {pairs!r}]\n"
        "metrics.compute_metrics(cols, labels, ['refuted'], bootstrap=20)\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("seed", range(3))
def test_labelled_pairs_are_the_labelled_sentences(tmp_path: Path, seed: int) -> None:
    """The tuples metrics/disagreements use = the SentenceKey models, on traces and columns;
    shared label strings are stored once."""
    records, labels = _study(seed)
    # a labelled sentence no system has claims for (known through its question only)
    labels = [*labels, Label(sentence_id="q0:s9", question_id="q0", has_error=True)]
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    traces = traceio.read_traces(src)
    cols = columnar.read_trace_columns(src)
    index = LabelIndex(labels)
    keys = [(k.question_id, k.sentence_id) for k in index.labelled_sentences(traces)]
    assert ("q0", "q0:s9") in keys
    assert index.labelled_pairs(cols) == keys == index.labelled_pairs(traces)
    path = tmp_path / "labels.jsonl"
    labelio.write_labels(path, labels)
    read = labelio.read_labels(path, traces=cols)
    assert read == labels
    assert read[0].rationale is read[1].rationale  # one string object per distinct value


def test_duplicate_claim_names_the_first_repeat_and_where_it_was_first() -> None:
    """The in-place int64 key finds the first repeated claim and the sentence it was first in."""
    from failcodes.mapping import check_unique_claims
    from failcodes.traces import Trace

    def trace(system: str, q: str, s: str, c: str) -> Trace:
        return Trace(
            system=system, question_id=q, sentence_id=s, claim_id=c, claim="x", verdict="supported"
        )

    traces = [
        trace("A", "q1", "s1", "c1"),
        trace("B", "q1", "s1", "c1"),
        trace("A", "q1", "s2", "c2"),
        trace("A", "q1", "s3", "c1"),
    ]
    with pytest.raises(InputError) as err:
        check_unique_claims(TraceColumns.from_traces(traces))
    assert str(err.value) == (
        "field 'claim_id': duplicate claim 'c1' for system 'A' in question 'q1' (sentences "
        "'s1' and 's3')"
    )
    check_unique_claims(TraceColumns.from_traces(traces[:3]))  # no duplicate: no error


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as its (key, value) pairs: keys may be missing or written twice."""


def _pairs(value: Any) -> Any:
    if isinstance(value, dict):
        return _Pairs((k, _pairs(v)) for k, v in value.items())
    return [_pairs(v) for v in value] if isinstance(value, list) else value


def _render(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)`` of a value holding :class:`_Pairs`."""
    if isinstance(value, _Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {_render(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


@functools.lru_cache(maxsize=1)
def _disagreement_record() -> dict[str, Any]:
    """A disagreement as ``write_disagreements`` writes it (a first claim with passages)."""
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(6):
            records, labels = _study(seed)
            src = Path(tmp) / "t.jsonl"
            src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
            for d in find_disagreements(traceio.read_traces(src), labels, "non_supported"):
                if len(d.claims) > 1 and d.claims[0].passages:
                    return d.model_dump(mode="json")
    raise AssertionError("no disagreement with passages in the studies")


LEVELS = ("top", "claim", "passage")


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    level=st.sampled_from(LEVELS),
    data=st.data(),
    extra=st.sampled_from([None, "x", 'a "b"', 1, 0.5, True, []]),
)
def test_disagreement_fast_reader_vouches_only_for_what_the_object_reader_accepts(
    tmp_path: Path, level: str, data: Any, extra: Any
) -> None:
    # a key left out and/or written twice (with another value) at one level of the record
    rec = _disagreement_record()
    keys = sorted(
        {"top": rec, "claim": rec["claims"][0], "passage": rec["claims"][0]["passages"][0]}[level]
    )
    omit = data.draw(st.sampled_from([None, *keys]))
    twice = data.draw(st.sampled_from([None, *keys]))
    record = _pairs(rec)
    claim = dict(record)["claims"][0]
    target = {"top": record, "claim": claim, "passage": dict(claim)["passages"][0]}[level]
    if omit is not None:
        target[:] = [(k, v) for k, v in target if k != omit]
    if twice is not None:
        target.insert(data.draw(st.integers(0, len(target))), (twice, extra))
    path = tmp_path / "d.jsonl"
    path.write_text(_render(record) + "\n", encoding="utf-8")
    try:
        fast = [
            (msgspec.to_builtins(d), msgspec.to_builtins(c))
            for d, c in disagreementio.iter_disagreement_claims(path)
        ]
    except columnar.ExactReaderNeededError:
        fast = None
    exact = _outcome(disagreementio.read_disagreements, path)
    if fast is None:
        assert omit is not None or twice is not None  # the file as written is vouched for
        return
    assert not isinstance(exact, str), exact  # vouched for: the object reader accepts it
    assert fast == [
        (d.model_dump(mode="json"), c) for d in exact for c in d.model_dump(mode="json")["claims"]
    ]


@pytest.mark.parametrize("statistics", [True, False])
@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("text", None, "field 'passages[1].text': missing required field"),
        ("passage_id", None, "field 'passages[1].passage_id': missing required field"),
        ("gold_verdict", "bogus", "field 'passages[1].gold_verdict': Input should be"),
        ("gold_verdict", "refuted", None),
    ],
)
def test_parquet_passage_checks_with_and_without_statistics(
    tmp_path: Path, statistics: bool, field: str, value: Any, message: str | None
) -> None:
    """Fields the row-group statistics vouch for are not read; a bad value is still found.

    With statistics, a null text or passage id is counted in its column chunk (so read and
    refused); without them every checked field is read. Errors are the object reader's.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = [
        {
            "system": "s",
            "question_id": "q",
            "sentence_id": "q:s1",
            "claim_id": f"c{i}",
            "claim": "x",
            "sentence": "y",
            "verdict": "supported",
            "passages": [{"passage_id": f"p{k}", "rank": k, "text": "t"} for k in (1, 2)],
        }
        for i in range(3)
    ]
    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.Table.from_pylist(records, schema=traceio.trace_arrow_schema()),
        path,
        write_statistics=statistics,
    )
    clean = columnar._vouched_passage_fields(pq.ParquetFile(path))
    assert clean == ({"passage_id", "text", "gold_verdict"} if statistics else set())
    records[1]["passages"][1][field] = value
    pq.write_table(
        pa.Table.from_pylist(records, schema=traceio.trace_arrow_schema()),
        path,
        write_statistics=statistics,
    )
    if message is None:
        assert len(columnar.read_trace_columns(path)) == len(traceio.read_traces(path)) == 3
        return
    with pytest.raises(InputError) as exact:
        traceio.read_traces(path)
    with pytest.raises(InputError) as fast:
        columnar.read_trace_columns(path)
    assert str(fast.value) == str(exact.value)
    assert f"t.parquet:2, {message}" in str(fast.value)


@settings(max_examples=300, deadline=None)
@given(
    names=st.lists(TRICKY | st.text(max_size=6), min_size=5, max_size=5),
    claim=st.none() | TRICKY,
    level=st.sampled_from(list(Level)),
)
def test_disagreement_id_is_the_content_hash_of_its_keys(
    names: list[str], claim: str | None, level: Level
) -> None:
    # the id is written as canonical JSON directly; it must stay content_hash of the dict
    system, mapping, question, sentence = names[:4]
    expected = content_hash(
        {
            "system": system,
            "mapping": mapping,
            "level": level.value,
            "question_id": question,
            "sentence_id": sentence,
            "claim_id": claim,
        }
    )
    assert disagreement_id(system, mapping, level, question, sentence, claim) == expected


def test_streaming_from_parquet_reads_each_row_group_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 40 false alarms in 4 row groups: the stream fetches Parquet rows a batch at a time and
    # keeps its reader from one chunk of 16 disagreements to the next, so no group is read
    # twice; the lines equal those streamed from JSONL
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = [
        {
            "system": "bm25",
            "question_id": f"q{s // 4}",
            "sentence_id": f"q{s // 4}:s{s}",
            "claim_id": f"q{s // 4}:s{s}:c0",
            "claim": "x",
            "verdict": "refuted",
            "passages": [{"passage_id": "p", "rank": 1, "text": f"t{s}", "score": 0.5}],
        }
        for s in range(40)
    ]
    labels = [Label(sentence_id=r["sentence_id"], has_error=False) for r in records]
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    table = pa.Table.from_pylist(records, schema=traceio.trace_arrow_schema())
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=10)
    reads: list[int] = []
    real = pq.ParquetFile.iter_batches

    def counting(self: Any, *args: Any, row_groups: Any = None, **kwargs: Any) -> Any:
        reads.extend(row_groups or [])  # (the scans read every group, naming none)
        return real(self, *args, row_groups=row_groups, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counting)
    index = LabelIndex(labels)
    out = []
    for name in ("t.jsonl", "t.parquet"):
        columns = columnar.read_trace_columns(tmp_path / name)
        selected = select_with_shape(columns, index, "refuted")[0]
        assert len(selected) == 40
        reads.clear()
        disagreementio.stream_disagreements(
            tmp_path / f"{name}.out.jsonl", columns, selected, index
        )
        out.append((tmp_path / f"{name}.out.jsonl").read_bytes())
    assert sorted(reads) == [0, 1, 2, 3]
    assert out[0] == out[1]
