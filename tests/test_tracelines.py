"""Trace JSONL lines vouched for by msgspec are written byte for byte as their models (issue 30).

``ingest generic`` of a trace-format JSONL file keeps a line the voucher accepts as a struct
and writes it back with msgspec, never building the pydantic models (paper scale: 19.9 ->
7.8 CPU-s, bench/bench_study.py). What it must never change: the bytes written and the
errors. Here every line is read both ways (``TableStream(..., lines=True)``, the way
``ingest`` reads, and the exact reader) and the outputs or the errors compared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failcodes.errors import InputError
from failcodes.ingest.table import TableSpec, TableStream
from failcodes.tracelines import Voucher, json_of, trace_of
from failcodes.verdicts import Verdict
from tests.cli_helpers import run_cli

FULL = {
    "system": "bm25+gpt",
    "question_id": "q1",
    "sentence_id": "q1:s0",
    "claim_id": "q1:s0:c0",
    "claim": "Metformin lowers HbA1c.",
    "verdict": "Supported",
    "passages": [
        {"passage_id": "p1", "rank": 1, "text": "HbA1c fell by 1%.", "score": 2},
        {"passage_id": "p2", "rank": 2, "text": "No change.", "gold": False},
    ],
}


def both_ways(path: Path, spec: TableSpec | None = None) -> tuple[Any, Any]:
    """(bytes or error) of the file read with vouched lines, and read by the exact reader."""

    def read(lines: bool) -> Any:
        try:
            stream = TableStream([path], spec or TableSpec(), lines=lines)
            return b"".join(json_of(t) + b"\n" for t in stream)
        except InputError as exc:
            return str(exc)

    return read(True), read(False)


def test_a_full_line_is_vouched_and_written_as_its_model_writes_it(tmp_path: Path) -> None:
    line = json.dumps(FULL)
    vouched = Voucher()(line)
    assert vouched is not None
    # by hand: the verdict canonical, its raw text kept; the whole-number score a float (2.0);
    # unset fields left out; the model's field order (raw_verdict after verdict)
    expected = (
        '{"system":"bm25+gpt","question_id":"q1","sentence_id":"q1:s0","claim_id":"q1:s0:c0",'
        '"claim":"Metformin lowers HbA1c.","verdict":"supported","raw_verdict":"Supported",'
        '"passages":[{"passage_id":"p1","rank":1,"text":"HbA1c fell by 1%.","score":2.0},'
        '{"passage_id":"p2","rank":2,"text":"No change.","gold":false}]}'
    )
    assert json_of(vouched).decode() == expected
    assert json_of(trace_of(vouched)).decode() == expected  # the model itself agrees
    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n")
    fast, exact = both_ways(path)
    assert fast == exact == (expected + "\n").encode()


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ('"claim_id": "q1:s0:c0"', "a duplicate key (msgspec keeps the last)"),
        ('"sentence": ""', "an empty optional text (the model reads it as missing)"),
        ('"reasoning": null', "an explicit null"),
        ('"verifier": 3', "a number where text goes"),
        ('"note": "x"', "an unknown field"),
    ],
)
def test_lines_the_exact_reader_changes_or_refuses_are_not_vouched(
    tmp_path: Path, change: str, why: str
) -> None:
    line = json.dumps(FULL)[:-1] + ", " + change + "}"
    assert Voucher()(line) is None, why
    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n")
    fast, exact = both_ways(path)
    assert fast == exact


def test_a_large_score_is_written_in_the_models_notation(tmp_path: Path) -> None:
    # msgspec writes 1e20 as 1e20, the model as 1e+20: such a line goes through the model
    rec = {**FULL, "passages": [{"passage_id": "p", "rank": 1, "text": "t", "score": 1e20}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    assert Voucher()(json.dumps(rec)) is None
    fast, exact = both_ways(path)
    assert fast == exact and b'"score":1e+20' in fast


def test_a_repeated_claim_among_vouched_lines_names_where_it_first_was(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(FULL) + "\n\n" + json.dumps(FULL) + "\n")
    fast, exact = both_ways(path)
    assert fast == exact
    assert "t.jsonl:3, field 'claim_id'" in fast and "first at line 1" in fast


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=6)
# mostly values the voucher takes; one in a few it leaves to the exact reader (which may
# refuse them): an empty text, a null, a number for text, a padded id, an unknown verdict
ODD = st.sampled_from(["", None, 7, " c1"])
TWEAKS: dict[str, Any] = {
    "sentence": st.one_of(TEXT, TEXT, TEXT, ODD),
    "raw_verdict": st.one_of(TEXT, TEXT, TEXT, ODD),
    "verifier": st.one_of(TEXT, TEXT, TEXT, ODD),
    "retriever": st.sampled_from(["bm25", "bm25", "bm25", " bm25", None]),
    "evidence_source": st.sampled_from(["retrieved", "none", "post-hoc", "Retrieved", None]),
    "claim_id": st.one_of(TEXT, TEXT, TEXT, ODD),
    "verdict": st.sampled_from(
        ["supported", "REFUTED", " nei ", "supported", "refuted", "maybe", "", 1, True, None]
    ),
}
PASSAGE = st.fixed_dictionaries(
    {"passage_id": st.sampled_from(["p", "p2", "p3", "p4", 3]), "text": TEXT},
    optional={
        "score": st.one_of(
            st.floats(allow_nan=False, allow_infinity=False),
            st.integers(-(10**17), 10**17),
            st.floats(-1e3, 1e3),
            st.floats(-1e3, 1e3),
        ),
        "gold": st.sampled_from([True, False, True, None]),
        "gold_verdict": st.sampled_from(["supported", "refuted", "no_evidence", "x"]),
        "title": st.one_of(TEXT, TEXT, TEXT, ODD),
        "rank": st.sampled_from([1, 2, 0]),  # else its place: 1, 2, ...
    },
)
CLEAN = st.fixed_dictionaries(
    {"passage_id": st.sampled_from(["p", "p2"]), "text": TEXT},
    optional={
        "score": st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers()),
        "gold": st.booleans(),
        "gold_verdict": st.sampled_from(["supported", "refuted", "no_evidence"]),
        "title": TEXT,
        "source": TEXT,
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tweaks=st.fixed_dictionaries({}, optional=TWEAKS),
    passages=st.one_of(
        st.none(), st.lists(PASSAGE, max_size=3), *[st.lists(CLEAN, max_size=3)] * 2
    ),
    duplicate=st.sampled_from([None, None, None, None, "system", "claim", "text"]),
    aliases=st.sampled_from([{}, {"maybe": Verdict.NO_EVIDENCE}]),
)
def test_any_line_reads_the_same_both_ways(
    tmp_path_factory: pytest.TempPathFactory,
    tweaks: dict[str, Any],
    passages: list[dict[str, Any]] | None,
    duplicate: str | None,
    aliases: dict[str, Verdict],
) -> None:
    rec = {k: v for k, v in FULL.items() if k != "passages"} | tweaks
    if passages is not None:
        rec["passages"] = [{"rank": i, **p} for i, p in enumerate(passages, start=1)]
    line = json.dumps(rec, ensure_ascii=False)
    if duplicate == "system":  # a repeated key, as the text has it
        line = line[:-1] + ', "system": "other"}'
    elif duplicate == "claim":  # an escaped quote, then the same key twice
        line = '{"claim": "say \\"x\\"", ' + line[1:]
    elif duplicate == "text" and passages:
        line = line.replace('"text": ', '"text": "a", "text": ', 1)
    path = tmp_path_factory.mktemp("l") / "t.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    fast, exact = both_ways(path, TableSpec(aliases=aliases))
    assert fast == exact


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_parquet_and_csv_of_vouched_lines_are_those_of_the_models(
    tmp_path: Path, suffix: str
) -> None:
    from failcodes import traceio

    # line 1 vouched for, line 2 not (an explicit null): both ways give the same files
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps(FULL) + "\n" + json.dumps({**FULL, "claim_id": "c2", "title": None}))
    written = {}
    for lines in (True, False):
        out = tmp_path / f"{lines}{suffix}"
        files = traceio.write_traces(out, TableStream([src], TableSpec(), lines=lines))
        written[lines] = [f.read_bytes() for f in files]
    assert written[True] == written[False]
    back = traceio.read_traces(tmp_path / f"True{suffix}")
    assert [t.raw_verdict for t in back] == ["Supported", "Supported"]
    assert [p.score for p in back[0].passages] == [2.0, None]


def test_ingest_writes_vouched_lines_with_the_declared_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    other = {**FULL, "system": "dense", "verdict": "refuted"}
    path.write_text(json.dumps(FULL) + "\n" + json.dumps(other) + "\n")
    out = tmp_path / "o.jsonl"
    argv = ["ingest", "generic", str(path), "-o", str(out), "--evidence", "dense=provided"]
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    first, second = (json.loads(x) for x in out.read_text().splitlines())
    assert "evidence_source" not in first and second["evidence_source"] == "provided"
    assert second["verdict"] == "refuted" and "raw_verdict" not in second
