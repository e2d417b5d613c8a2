"""The columnar trace reader accepts, refuses and reports exactly as the object reader does.

Every case is run through both :func:`failcodes.traceio.read_traces` (pydantic, one object
per trace) and :func:`failcodes.columnar.read_trace_columns` (msgspec + Arrow): accepted files
must give the same columns, refused ones the same one-line error (file, line, field, text).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failcodes import columnar, disagreementio, traceio
from failcodes.codebook import UnitKind
from failcodes.errors import InputError
from failcodes.hashing import content_hash
from failcodes.judge.prompts import render_user, user_length
from failcodes.tracecols import TraceColumns
from failcodes.traces import Passage, Trace
from failcodes.units import Unit, unit_id
from failcodes.verdicts import Verdict
from tests.judge_helpers import write_disagreements

P = {"passage_id": "p1", "rank": 1, "text": "Metformin lowers glucose.", "score": 0.5}
GOOD = {
    "system": "bm25",
    "question_id": "q1",
    "sentence_id": "q1:s0",
    "claim_id": "q1:s0:c0",
    "claim": "Metformin lowers glucose.",
    "verdict": "supported",
    "passages": [P, {**P, "passage_id": "p2", "rank": 2, "title": "T", "gold": True}],
}


def _line(**changes: object) -> str:
    rec = {**GOOD, **changes}
    return json.dumps({k: v for k, v in rec.items() if v is not ...})


def _outcome(fn: object, path: Path) -> object:
    try:
        return fn(path)  # type: ignore[operator]
    except InputError as exc:
        return f"error: {exc}"


def _same(path: Path) -> object:
    """Run both readers; assert they agree; return the columns or the error text."""
    old = _outcome(traceio.read_traces, path)
    new = _outcome(columnar.read_trace_columns, path)
    if isinstance(old, str):
        assert new == old
        return old
    assert isinstance(new, TraceColumns)
    assert new.table.equals(TraceColumns.from_traces(old).table)  # type: ignore[arg-type]
    return new


OTHER = _line(claim_id="q1:s0:c1", verdict="True")

# (name, lines) - each file is checked with both readers
CASES = [
    ("valid", [_line(), OTHER]),
    ("alias and raw verdict kept", [_line(verdict=" Refutes "), OTHER]),
    ("own raw verdict wins", [_line(verdict="false", raw_verdict="F"), OTHER]),
    ("null optional fields", [_line(sentence=None, reasoning=None), OTHER]),
    ("null extra field is dropped", [_line(foo=None), OTHER]),
    ("string rank coerced", [_line(passages=[{**P, "rank": "3"}]), OTHER]),
    ("blank and CRLF lines", [_line() + "\r", "", "   ", OTHER]),
    ("spaced colon", [_line().replace('"claim":', '"claim" :'), OTHER]),
    ("quoted text", [_line(claim='He said "no".'), OTHER]),
    ("unknown verdict", [OTHER, _line(verdict="maybe")]),
    ("verdict not a string", [_line(verdict=3)]),
    ("bool verdict", [_line(verdict=True), OTHER]),
    ("missing field", [OTHER, _line(claim=...)]),
    ("null required", [_line(claim=None)]),
    ("wrong type", [_line(claim=5)]),
    ("unknown field", [_line(colour="red")]),
    ("rank zero", [_line(passages=[{**P, "rank": 0}])]),
    ("duplicate rank", [_line(passages=[P, {**P, "passage_id": "p9"}])]),
    ("passage extra field", [_line(passages=[{**P, "x": 1}])]),
    ("bad gold verdict", [_line(passages=[{**P, "gold_verdict": "yes"}])]),
    ("duplicate key", [_line()[:-1] + ', "claim": "again"}']),
    ("duplicate passage key", [_line().replace('"rank": 2', '"rank": 2, "rank": 3')]),
    ("escaped duplicate key", [_line()[:-1] + ', "cl\\u0061im": "x"}']),
    ("spaced duplicate key", [_line()[:-1] + ', "claim" : "x"}']),
    ("quoted colon text", [_line(claim='say " : no'), OTHER]),
    ("quoted colon duplicate", [_line(claim='say " : no')[:-1] + ', "claim":"x"}']),
    ("NaN score", [_line(passages=[{**P}]).replace('"score": 0.5', '"score": NaN')]),
    ("huge score", [_line().replace('"score": 0.5', '"score": 1e400', 1)]),
    ("lone surrogate", [_line(claim="x").replace('"x"', '"\\ud800"')]),
    ("malformed", [OTHER, '{"system": "bm25",']),
    ("not an object", ["[1, 2]"]),
    ("duplicate claim", [_line(), OTHER, _line()]),
    ("bad line before duplicate", [_line(), _line(claim=5), _line()]),
    ("duplicate before bad line", [_line(), _line(), _line(claim=5)]),
    ("bare CR", [_line() + "\r" + OTHER]),
]


@pytest.mark.parametrize(("name", "lines"), CASES, ids=[c[0] for c in CASES])
def test_jsonl_reader_agrees(tmp_path: Path, name: str, lines: list[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _same(path)


def test_errors_of_the_hand_checked_cases(tmp_path: Path) -> None:
    """A few errors spelled out (not only "same as the old reader")."""
    path = tmp_path / "t.jsonl"
    path.write_text(_line() + "\n" + _line() + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        columnar.read_trace_columns(path)
    assert str(info.value) == (
        f"{path}:2, field 'claim_id': duplicate (system, claim_id) = ('bm25', 'q1:s0:c0'); "
        "first at line 1"
        "; claim ids numbered within each question? give each claim its own id: "
        "--map claim_id= --option ids=claim --option sentence_ids=question "
        "(failcodes ingest generic)"
    )
    path.write_text(_line()[:-1] + ', "claim": "again"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="key 'claim' appears twice"):
        columnar.read_trace_columns(path)


def test_bom_and_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + _line().encode() + b"\n")
    _same(path)
    path.write_bytes(_line().encode() + b"\n" + b'{"system": "\xff"}\n')
    assert str(_same(path)).startswith("error: ")


def test_duplicates_across_files(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.parquet"
    a.write_text(_line() + "\n", encoding="utf-8")
    first = traceio.read_traces(a)[0]
    traceio.write_traces(b, [first.model_copy(update={"claim_id": "c9"}), first])
    with pytest.raises(InputError) as info:
        columnar.read_trace_columns([a, b])
    assert str(info.value) == (
        f"{b}:2, field 'claim_id': duplicate (system, claim_id) = ('bm25', 'q1:s0:c0'); "
        f"first at {a}:1"
        "; a file per system under one system name? "
        "ingest each file apart with --system NAME"
    )


TRACES = [
    Trace(
        system="s",
        question_id="q",
        sentence_id="q:s0",
        claim_id=f"c{i}",
        claim="c",
        verdict=Verdict.REFUTED,
        raw_verdict="False" if i % 2 else None,
        passages=(Passage(passage_id="p", rank=1, text="t", score=1.0),),
    )
    for i in range(5)
]


@pytest.mark.parametrize("ext", ["jsonl", "parquet", "csv"])
def test_round_trip(tmp_path: Path, ext: str) -> None:
    path = tmp_path / f"t.{ext}"
    traceio.write_traces(path, TRACES)
    cols = columnar.read_trace_columns(path)
    assert cols.table.equals(TraceColumns.from_traces(TRACES).table)


def test_parquet_refusals_match(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = traceio.trace_arrow_schema()
    good = Trace.model_validate(json.loads(_line())).model_dump(mode="json")
    variants = {
        "unknown verdict": {**good, "verdict": "maybe"},
        "null claim": {**good, "claim": None},
        "rank zero": {**good, "passages": [{**good["passages"][0], "rank": 0}]},
        "duplicate rank": {**good, "passages": [good["passages"][0]] * 2},
        "nan score": {**good, "passages": [{**good["passages"][0], "score": float("nan")}]},
    }
    for name, rec in variants.items():
        other = {**good, "claim_id": "other"}
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.Table.from_pylist([other, rec], schema=schema), path)
        assert str(_same(path)).startswith(f"error: {path}:2"), name
    path = tmp_path / "alias.parquet"
    pq.write_table(pa.Table.from_pylist([{**good, "verdict": "True"}], schema=schema), path)
    assert isinstance(_same(path), TraceColumns)


@settings(max_examples=300, deadline=None)
@given(
    claim=st.text(),
    texts=st.lists(st.text(), max_size=4),
    reasoning=st.none() | st.text(),
    verdict=st.none() | st.sampled_from(list(Verdict)),
    kind=st.sampled_from(list(UnitKind)),
)
def test_unit_id_is_the_content_hash(
    claim: str, texts: list[str], reasoning: str | None, verdict: Verdict | None, kind: UnitKind
) -> None:
    """The field-by-field id equals the canonical-JSON content hash (ids key journals)."""
    try:
        expected = content_hash(
            {
                "kind": kind.value,
                "claim": claim,
                "passages": texts,
                "reasoning": reasoning,
                "verdict": verdict.value if verdict is not None else None,
            }
        )
    except UnicodeEncodeError:  # lone surrogates: neither can hash them
        with pytest.raises(UnicodeEncodeError):
            unit_id(kind, claim, tuple(texts), reasoning, verdict)
        return
    assert unit_id(kind, claim, tuple(texts), reasoning, verdict) == expected


_TEXT = st.text(alphabet=st.sampled_from(list("ab <>&\"'\n é")), max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(list(UnitKind)),
    claim=_TEXT,
    reasoning=_TEXT,
    passages=st.lists(
        st.tuples(st.integers(1, 120), _TEXT, st.none() | _TEXT, st.none() | _TEXT, _TEXT),
        max_size=3,
    ),
)
def test_user_length_is_the_rendered_length(
    kind: UnitKind,
    claim: str,
    reasoning: str,
    passages: list[tuple[int, str, str | None, str | None, str]],
) -> None:
    """The dry run's render-free length equals the length of the rendered user message.

    The passage ids too (a verification prompt shows them; an empty one is not shown).
    """
    unit = Unit(
        id="u",
        kind=kind,
        claim=claim,
        passages=tuple(
            Passage(passage_id=pid, rank=r, text=t, source=s, title=ti)
            for r, t, s, ti, pid in passages
        ),
        reasoning=reasoning if kind is UnitKind.VERIFICATION else None,
        verdict=Verdict.REFUTED if kind is UnitKind.VERIFICATION else None,
    )
    assert user_length(unit) == len(render_user(unit))


def test_disagreement_traces_fast_path_equals_models(tmp_path: Path) -> None:
    """Traces read from a disagreements file equal those built from the models."""
    from failcodes.disagreements import find_disagreements
    from failcodes.labels import Label
    from failcodes.units import disagreement_traces

    traces = [
        t.model_copy(update={"sentence_id": "q:s0", "reasoning": 'it says "x" & <y>'})
        for t in TRACES
    ]
    labels = [Label(sentence_id="q:s0", has_error=False, rationale="fine")]
    items = find_disagreements(traces, labels, "refuted")
    path = tmp_path / "d.jsonl"
    write_disagreements(path, items + items)
    expected = disagreement_traces(disagreementio.read_disagreements(path))
    assert disagreementio.read_disagreement_traces(path) == expected
    assert len(expected) == len(TRACES)
    path.write_text(path.read_text().replace('"kind": "FP"', '"kind": "FP", "kind": "FN"'))
    with pytest.raises(InputError, match="appears twice"):
        disagreementio.read_disagreement_traces(path)


def test_drawn_bootstrap_equals_one_weight_matrix() -> None:
    """Weights drawn a block at a time give the intervals of one big weight matrix."""
    import numpy as np

    from failcodes import metrics
    from failcodes.stats.bootstrap import multinomial_weights

    rng = np.random.default_rng(5)
    per_cluster = rng.integers(0, 4, size=(37, 3, 4)).astype(np.int64)
    whole = metrics.bootstrap_intervals(
        per_cluster, multinomial_weights(37, 501, np.random.default_rng([1, 2])), 0.9
    )
    old = metrics._WEIGHT_CELLS
    metrics._WEIGHT_CELLS = 37 * 10  # blocks of 10 resamples (the last one 1)
    try:
        drawn = metrics.shared_bootstrap_intervals(
            [per_cluster], 501, np.random.default_rng([1, 2]), 0.9
        )[0]
    finally:
        metrics._WEIGHT_CELLS = old
    assert drawn == whole


def test_parquet_traces_are_written_a_row_group_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ingest writes a paper-scale traces file as it reads it: Parquet in row groups of
    # PARQUET_ROWS traces, not one table of every trace (1.2M passages held took 4 GB)
    import pyarrow.parquet as pq

    from failcodes import tableio

    monkeypatch.setattr(tableio, "PARQUET_ROWS", 2)
    traces = [
        Trace(system="s", question_id="q", sentence_id=f"s{i}", claim_id=f"c{i}", claim="X.",
              verdict=Verdict.SUPPORTED)
        for i in range(5)
    ]  # fmt: skip
    path = tmp_path / "t.parquet"
    traceio.write_traces(path, (t for t in traces))  # a stream, as ingest gives it
    assert pq.ParquetFile(path).metadata.num_row_groups == 3  # 2 + 2 + 1
    assert traceio.read_traces(path) == traces
    empty = tmp_path / "empty.parquet"
    traceio.write_traces(empty, iter(()))
    assert traceio.read_traces(empty) == []
