"""Round trips and error reporting of the trace, label and atomic-write files (hand-made)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failcodes import fileio, labelio, traceio
from failcodes.errors import InputError
from failcodes.labels import Label
from failcodes.tableio import CELL_ERRORS, NO_ID
from failcodes.tracelines import missing_mark
from failcodes.traces import Passage, Trace
from failcodes.verdicts import Verdict

TRACES = [
    Trace(
        system="bm25+gpt",
        question_id="q1",
        sentence_id="q1:s0",
        claim_id="q1:s0:c0",
        claim="Metformin lowers blood glucose.",
        sentence="Metformin lowers blood glucose, and is cheap.",
        verdict=Verdict.SUPPORTED,
        raw_verdict="True",
        reasoning='The passage says "lowers glucose",\nso true.',
        verifier="gpt-4o",
        passages=(
            Passage(
                passage_id="pm1", rank=1, text="Metformin, a biguanide, lowers glucose.", score=12.5
            ),
            Passage(passage_id="pm2", rank=2, text="Unrelated, text", title="T", gold=False),
        ),
    ),
    Trace(
        system="bm25+gpt",
        question_id="q1",
        sentence_id="q1:s0",
        claim_id="q1:s0:c1",
        claim="Metformin is cheap.",
        verdict=Verdict.NO_EVIDENCE,
    ),
    Trace(
        system="dense+gpt",
        question_id="q1",
        sentence_id="q1:s0",
        claim_id="q1:s0:c0",
        claim="Metformin lowers blood glucose.",
        verdict=Verdict.REFUTED,
        passages=(Passage(passage_id="x", rank=1, text="é ü 中文"),),
    ),
]


@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
def test_traces_round_trip(tmp_path: Path, ext: str) -> None:
    path = tmp_path / f"traces.{ext}"
    written = traceio.write_traces(path, TRACES)
    assert written[0] == path
    if ext == "csv":
        assert written[1] == tmp_path / "traces.passages.csv"
        # 3 passages in all -> header + 3 rows
        assert len((tmp_path / "traces.passages.csv").read_text().splitlines()) == 4
    assert traceio.read_traces(path) == TRACES
    # no temp files left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in written)


LABELS = [
    Label(sentence_id="q1:s0", question_id="q1", has_error=True, severity="Mild", rationale="x, y"),
    Label(claim_id="q1:s0:c1", has_error=False, annotator="JaneDoe"),
]


@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
def test_labels_round_trip(tmp_path: Path, ext: str) -> None:
    path = tmp_path / f"labels.{ext}"
    labelio.write_labels(path, LABELS)
    assert labelio.read_labels(path, traces=TRACES) == LABELS


def test_csv_without_passages_table_reads_traces_without_passages(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    traceio.write_traces(path, TRACES)
    (tmp_path / "t.passages.csv").unlink()
    assert [len(t.passages) for t in traceio.read_traces(path)] == [0, 0, 0]


def test_explicit_passages_option_and_foreign_names(tmp_path: Path) -> None:
    traces = tmp_path / "runs.csv"
    traces.write_text(
        "run,question_id,sentence_id,id,claim_text,verdict,notes\n"
        "A,q,q:s0,c0,Aspirin thins blood.,Supported,ignore me\n"
    )
    passages = tmp_path / "evidence.csv"
    passages.write_text("run,id,passage_id,rank,text\nA,c0,d2,2,second\nA,c0,d1,1,first\n")
    cmap = {"run": "system", "id": "claim_id", "claim_text": "claim", "notes": ""}
    (t,) = traceio.read_traces(traces, passages_path=passages, column_map=cmap)
    assert (t.system, t.claim_id, t.claim, t.verdict, t.raw_verdict) == (
        "A",
        "c0",
        "Aspirin thins blood.",
        Verdict.SUPPORTED,
        "Supported",
    )
    assert [p.passage_id for p in t.passages] == ["d1", "d2"]  # sorted by rank


def _err(fn: object, *args: object, **kw: object) -> InputError:
    with pytest.raises(InputError) as info:
        fn(*args, **kw)  # type: ignore[operator]
    return info.value


def test_jsonl_errors_name_line_and_field(tmp_path: Path) -> None:
    good = TRACES[1].model_dump_json()
    p = tmp_path / "t.jsonl"
    p.write_text(good + "\n\n{bad json\n")
    e = _err(traceio.read_traces, p)
    assert (e.path, e.line) == (str(p), 3)
    assert "malformed JSON" in e.reason

    p.write_text(good + "\n" + good.replace('"claim":"Metformin is cheap.",', "") + "\n")
    e = _err(traceio.read_traces, p)
    assert (e.line, e.field, e.reason) == (2, "claim", "missing required field")

    p.write_text(good + "\n" + good + "\n")
    e = _err(traceio.read_traces, p)
    assert (e.line, e.field) == (2, "claim_id")
    assert "duplicate (system, claim_id)" in e.reason and "first at line 1" in e.reason

    p.write_text(good.replace('"no_evidence"', '"Probably"') + "\n")
    e = _err(traceio.read_traces, p)
    assert (e.line, e.field) == (1, "verdict")
    assert "unknown verdict 'Probably'" in e.reason

    bad_rank = TRACES[0].model_dump(mode="json")
    bad_rank["passages"][1]["rank"] = "second"
    import json

    p.write_text(json.dumps(bad_rank) + "\n")
    e = _err(traceio.read_traces, p)
    assert (e.line, e.field) == (1, "passages[1].rank")

    p.write_text("[1, 2]\n")
    assert "expected a JSON object" in _err(traceio.read_traces, p).reason


def test_csv_errors_name_data_row_line(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    # The quoted reasoning spans two physical lines, so the third record starts on line 5.
    p.write_text(
        "system,question_id,sentence_id,claim_id,claim,verdict,reasoning\n"
        "s,q,q:s0,c0,x,supported,\n"
        's,q,q:s0,c1,y,refuted,"two\nlines"\n'
        "s,q,q:s0,c2,z,maybe,\n"
    )
    e = _err(traceio.read_traces, p)
    assert (e.line, e.field) == (5, "verdict")

    p.write_text("system,question_id,sentence_id,claim_id,verdict\ns,q,q:s0,c0,supported\n")
    e = _err(traceio.read_traces, p)
    assert (e.line, e.field) == (1, "claim")
    assert e.reason.startswith("missing column")

    # an empty cell in a required text column is the empty string, as "" is in JSONL; an empty
    # claim is refused in both (session 31: it was a claim, its verdict counted, exit 0)
    p.write_text("system,question_id,sentence_id,claim_id,claim,verdict\ns,q,q:s0,c0,,supported\n")
    e = _err(traceio.read_traces, p)
    assert (e.line, e.field) == (2, "claim")
    assert e.reason.startswith("the claim has no text (empty)")
    p.write_text("system,question_id,sentence_id,claim_id,claim,verdict\ns,q,q:s0,c0,x,\n")
    e = _err(traceio.read_traces, p)
    assert (e.line, e.field) == (2, "verdict")

    side = tmp_path / "t.passages.csv"
    p.write_text("system,question_id,sentence_id,claim_id,claim,verdict\ns,q,q:s0,c0,x,supported\n")
    side.write_text("system,claim_id,passage_id,rank,text\ns,c0,p,1,a\ns,c9,p,1,b\n")
    e = _err(traceio.read_traces, p)
    assert (e.path, e.line, e.field) == (str(side), 3, "claim_id")

    side.write_text("system,claim_id,passage_id,rank,text\ns,c0,p,1,a\ns,c0,p2,1,b\n")
    e = _err(traceio.read_traces, p)
    assert (e.path, e.line, e.field) == (str(side), 3, "rank")

    side.write_text("system,claim_id,passage_id,rank,text\ns,c0,p,zero,a\n")
    e = _err(traceio.read_traces, p)
    assert (e.line, e.field) == (2, "rank")


def test_label_errors(tmp_path: Path) -> None:
    p = tmp_path / "l.csv"
    p.write_text("sentence_id,has_error\nq1:s0,true\nq1:s9,false\n")
    e = _err(labelio.read_labels, p, traces=TRACES)
    assert (e.line, e.field) == (3, "sentence_id")
    assert "no trace has sentence_id 'q1:s9'" in e.reason
    # a sentence of a known question with no claims is allowed (metrics report it), beside
    # labels of sentences the traces have (labels none of which has a trace are refused)
    p.write_text("sentence_id,question_id,has_error\nq1:s0,q1,true\nq1:s9,q1,false\n")
    assert labelio.read_labels(p, traces=TRACES)[1].sentence_id == "q1:s9"
    p.write_text("sentence_id,question_id,has_error\nq1:s9,q1,false\n")
    assert "nor any other sentence label's" in _err(labelio.read_labels, p, traces=TRACES).reason
    p.write_text("sentence_id,has_error\nq1:s0,perhaps\n")
    e = _err(labelio.read_labels, p)
    assert (e.line, e.field) == (2, "has_error")
    p.write_text("sentence_id,has_error\nq1:s0,true\nq1:s0,false\n")
    e = _err(labelio.read_labels, p)
    assert (e.line, e.field) == (3, "sentence_id")
    p.write_text("claim_id,has_error\nnope,true\n")
    e = _err(labelio.read_labels, p, traces=TRACES)
    assert (e.line, e.field) == (2, "claim_id")


def test_parquet_errors(tmp_path: Path) -> None:
    p = tmp_path / "t.parquet"
    p.write_bytes(b"not parquet at all")
    assert "not a readable Parquet file" in _err(traceio.read_traces, p).reason
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"system": ["s"], "claim_id": ["c"]}), p)
    e = _err(traceio.read_traces, p)
    assert e.line == 1 and e.field == "question_id"  # first missing column in model order


def test_format_and_missing_file(tmp_path: Path) -> None:
    assert (
        "expected .jsonl, .csv or .parquet" in _err(traceio.read_traces, tmp_path / "x.txt").reason
    )
    assert _err(traceio.read_traces, tmp_path / "nope.jsonl").reason == "file not found"


def test_atomic_batch_leaves_nothing_on_error(tmp_path: Path) -> None:
    target = tmp_path / "a.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), fileio.AtomicBatch() as batch:
        traceio.write_traces(target, TRACES, batch=batch)
        labelio.write_labels(tmp_path / "b.csv", LABELS, batch=batch)
        raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl"]


# ------------------------------------------------------------------ property: lossless round trip

#: Any text but an Excel error value alone ('#VALUE!', '#REF!': a CSV cell holding one is
#: refused on reading, tableio.CELL_ERRORS, 4abf3b7: bad input, a formula that failed).
_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1
).filter(lambda t: t not in CELL_ERRORS)
_opt = st.none() | _text
#: Ids are any text but blank or with spaces around them, a number in scientific notation
#: as a spreadsheet shows it, 1.23457E+11, or no id ('#N/A', 'NA', 'nan', 'null' in any case:
#: tableio.NO_ID, 5406721) (refused on reading: bad input).
_SHOWN = re.compile(r"[+-]?[0-9]+(?:\.[0-9]*)?[eE][+-][0-9]+")
_id = _text.map(str.strip).filter(lambda t: bool(t) and not _SHOWN.fullmatch(t) and t not in NO_ID)
_passage = st.builds(
    Passage,
    passage_id=_text,
    rank=st.integers(1, 50),
    # a missing mark ('N/A') or a blank text (spaces alone) reads as no passage (tracelines)
    text=_text.filter(lambda t: not missing_mark(t)),
    source=_opt,
    title=_opt,
    score=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    gold=st.none() | st.booleans(),
    gold_verdict=st.none() | st.sampled_from(list(Verdict)),
)
_trace = st.builds(
    Trace,
    system=_id,
    question_id=_id,
    sentence_id=_id,
    claim_id=_id,
    claim=_text.filter(str.strip),  # a claim of spaces alone is refused (no claim to judge)
    sentence=_opt,
    verdict=st.sampled_from(list(Verdict)),
    raw_verdict=_opt,
    reasoning=st.none() | _text.filter(lambda t: not missing_mark(t)),  # (as a passage's)
    verifier=_opt,
    retriever=_opt,
    passages=st.lists(_passage, max_size=3, unique_by=lambda p: p.rank).map(
        lambda ps: tuple(sorted(ps, key=lambda p: p.rank))
    ),
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(traces=st.lists(_trace, max_size=4, unique_by=lambda t: (t.system, t.claim_id)))
def test_round_trip_is_lossless_in_every_format(tmp_path: Path, traces: list[Trace]) -> None:
    # Any text (quotes, commas, newlines, unicode) survives; CSV cannot tell "" from missing,
    # hence min_size=1 above (documented in docs/trace-format.md).
    for ext in ("jsonl", "csv", "parquet"):
        path = tmp_path / f"prop.{ext}"
        traceio.write_traces(path, traces)
        assert traceio.read_traces(path) == traces, ext


def test_bom_is_tolerated_and_long_values_are_shortened(tmp_path: Path) -> None:
    p = tmp_path / "l.csv"
    p.write_text("\ufeffsentence_id,has_error\nq1:s0,true\n", encoding="utf-8")
    assert labelio.read_labels(p)[0].sentence_id == "q1:s0"
    j = tmp_path / "t.jsonl"
    j.write_text("\ufeff" + TRACES[1].model_dump_json() + "\n", encoding="utf-8")
    assert traceio.read_traces(j) == [TRACES[1]]
    bad = TRACES[1].model_dump(mode="json") | {"claim": ["x" * 500]}
    import json

    j.write_text(json.dumps(bad) + "\n")
    e = _err(traceio.read_traces, j)
    # the tool's wording since ca01f07 (pydantic's was '... (got [...]...)'), the value cut
    assert e.field == "claim" and len(e.reason) < 160
    assert e.reason.startswith("expected text, got a list ['xxx") and e.reason.endswith("...")


def test_duplicate_labels_across_files(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.jsonl"
    a.write_text("sentence_id,has_error\nq1:s0,true\n")
    b.write_text(
        '{"sentence_id": "q1:s1", "has_error": false}\n'
        '{"sentence_id": "q1:s0", "has_error": false}\n'
    )
    seen: dict[tuple[str, str, str | None], tuple[Path, int]] = {}
    labelio.read_labels(a, seen=seen)
    e = _err(labelio.read_labels, b, seen=seen)
    assert (e.path, e.line, e.field) == (str(b), 2, "sentence_id")
    assert f"first at {a}:2" in e.reason
