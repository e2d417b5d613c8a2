"""CSV writer and reader agree (issue 16): every value the JSONL path round-trips, CSV does too."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes import traceio
from failcodes.traces import Passage, Trace
from failcodes.verdicts import Verdict

BIG = "evidence " * 30_000  # 270 KB: over the csv module's default 128 KiB cell limit


def _hard_traces() -> list[Trace]:
    return [
        Trace(
            system="s",
            question_id="q",
            sentence_id="q:s0",
            claim_id="c-empty",
            claim="",  # an empty claim
            verdict=Verdict.SUPPORTED,
            reasoning="",  # an empty optional text is missing in both formats
            passages=(Passage(passage_id="p1", rank=1, text=""),),  # an empty passage text
        ),
        Trace(
            system="s",
            question_id="q",
            sentence_id="q:s1",
            claim_id="c-big",
            claim='quotes " and, commas\nand a newline; unicode: β-blocker ≥ 5 mg 😀',
            verdict=Verdict.REFUTED,
            reasoning=BIG,
            passages=(
                Passage(passage_id="p1", rank=1, text=BIG, title="  spaces  ", score=-0.0),
                Passage(passage_id="p2", rank=2, text="\r\nCRLF inside\r\n", score=1e-300),
            ),
        ),
    ]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_hard_values_round_trip(tmp_path: Path, suffix: str) -> None:
    traces = _hard_traces()
    path = tmp_path / f"t{suffix}"
    traceio.write_traces(path, traces)
    assert traceio.read_traces(path) == traces


def test_csv_and_jsonl_read_back_the_same(tmp_path: Path) -> None:
    raw = [t.model_copy(update={"sentence": ""}) for t in _hard_traces()]
    traceio.write_traces(tmp_path / "t.csv", raw)
    traceio.write_traces(tmp_path / "t.jsonl", raw)
    assert traceio.read_traces(tmp_path / "t.csv") == traceio.read_traces(tmp_path / "t.jsonl")
    assert traceio.read_traces(tmp_path / "t.csv")[0].sentence is None
