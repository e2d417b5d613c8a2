"""``ingest generic`` reads a foreign table one trace at a time and writes each as it comes.

At paper scale (120,000 traces with 1.2M passages, bench/bench_columnar.py ``--steps ingest``)
holding every trace took 2.4 GB; streamed, the command holds one trace plus the claim keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from failcodes.errors import InputError
from failcodes.ingest import AdapterOptions, get_adapter
from tests.cli_helpers import run_cli

ROW = {"system": "s", "claim_id": "c1", "claim": "X is Y.", "verdict": "supported"}


def test_the_stream_yields_a_trace_before_the_next_row_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + "{not json\n")
    result = get_adapter("generic").open([path], AdapterOptions())
    assert result.stream is not None and result.traces == []
    traces = iter(result.stream)
    assert next(traces).claim_id == "c1"  # the bad line 2 is not read yet
    with pytest.raises(InputError) as info:
        next(traces)
    assert info.value.line == 2
    # read() still gives the list (the Python API), and fails before returning
    with pytest.raises(InputError):
        get_adapter("generic").read([path], AdapterOptions())


def test_labels_and_notes_come_after_the_traces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {**ROW, "claim_id": f"c{i}", "gold": "wrong" if i % 2 else "right", "verdict": v}
        for i, v in enumerate(["supported", "refuted", "", "refuted"])
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, lab = tmp_path / "o.jsonl", tmp_path / "l.jsonl"
    code, stdout, err = run_cli(
        ["ingest", "generic", str(path), "-o", str(out), "--labels-out", str(lab),
         "--label-rule", "gold = wrong -> error", "--option", "no_verdict=drop"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    # c2 has no verdict (dropped); c0 right, c1 wrong, c3 wrong
    assert [json.loads(x)["claim_id"] for x in out.read_text().splitlines()] == ["c0", "c1", "c3"]
    assert [json.loads(x)["has_error"] for x in lab.read_text().splitlines()] == [False, True, True]
    assert "wrote 3 traces" in stdout and "wrote 3 labels" in stdout
    assert "1 row(s) without a verdict left out (first at line 3" in err
    assert "label rule 'gold = wrong -> error': 2 error / 1 no-error sentence labels" in err


def test_an_error_late_in_the_stream_leaves_no_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + json.dumps({**ROW, "verdict": "maybe"}) + "\n")
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(path), "-o", str(out)], capsys)
    assert code == 2 and "t.jsonl:2, field 'verdict'" in err
    assert not out.exists() and list(tmp_path.iterdir()) == [path]


def test_a_csv_and_its_passages_table_are_written_as_the_traces_come(tmp_path: Path) -> None:
    from failcodes import traceio
    from failcodes.traces import Passage, Trace

    def trace(claim_id: str, texts: list[str]) -> Trace:
        passages = [Passage(passage_id=f"p{i}", rank=i, text=t) for i, t in enumerate(texts, 1)]
        return Trace(
            system="s",
            question_id="q",
            sentence_id="q:s1",
            claim_id=claim_id,
            claim="X is Y.",
            verdict="supported",
            passages=passages,
        )

    out = tmp_path / "out" / "t.csv"
    staged: list[int] = []

    def traces() -> Iterator[Trace]:
        yield trace("c1", ["A, with a comma.", "B."])
        staged.append(len(list(out.parent.iterdir())))  # both staged files, open already
        yield trace("c2", [])

    assert traceio.write_traces(out, traces()) == [out, tmp_path / "out" / "t.passages.csv"]
    assert staged == [2]
    assert (tmp_path / "out" / "t.passages.csv").read_text().splitlines() == [
        "system,claim_id,passage_id,rank,text,source,title,score,gold,gold_verdict",
        's,c1,p1,1,"A, with a comma.",,,,,',
        "s,c1,p2,2,B.,,,,,",
    ]
    assert [t.claim_id for t in traceio.read_traces(out)] == ["c1", "c2"]

    def failing() -> Iterator[Trace]:
        yield trace("c3", ["C."])
        raise InputError("bad row", path="in.jsonl", line=2)

    with pytest.raises(InputError):
        traceio.write_traces(tmp_path / "out" / "u.csv", failing())
    assert sorted(p.name for p in out.parent.iterdir()) == ["t.csv", "t.passages.csv"]
