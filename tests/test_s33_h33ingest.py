"""Session 33 (h33ingest): ``disagreements`` reads a disagreeing claim's line back once, checked.

Issue 30: ``disagreements`` on a foreign JSONL file scans every line (the voucher's checks),
then reads each disagreeing group's lines again by offset. Each line read back was decoded and
looked over again for missing marks (``N/A``) and references alone (``Voucher.finish``), ~8 us
a line: 5-6% of the command on a paper-scale file, where the strict parse floor is the target.
A line the scan's voucher took has none (a marked line is the exact reader's); so a file whose
every line the voucher took is read back with ``Voucher.again`` (decode, canonical verdict),
and a file holding a line the exact reader read keeps the check. The bytes must stay the
stream's either way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from failcodes import disagreementsql
from failcodes.tracelines import Voucher
from tests.cli_helpers import write_jsonl
from tests.test_s27_t27disag import EXPECTED, LABELS, ROWS, _disagreements, _keys


def _calls(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count the calls of ``Voucher.<name>`` (still calling it)."""
    calls: list[int] = []
    method = getattr(Voucher, name, None)
    if method is None:  # (main's src before this change: no Voucher.again)
        return calls

    def counted(self: Voucher, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return method(self, *args, **kwargs)

    monkeypatch.setattr(Voucher, name, counted)
    return calls


def _stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, traces: Path, labels: Path) -> bytes:
    """The stream's bytes for these files (the engine's writer declined)."""
    with monkeypatch.context() as m:
        m.setattr(disagreementsql, "applies", lambda *args: False)
        return _disagreements(traces, labels, tmp_path / "stream.jsonl")


def test_a_file_the_voucher_took_whole_is_read_back_without_the_marks_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The disagreeing groups (EXPECTED) hold 7 of the 8 rows, by hand from ROWS: a q1:s0
    # (2 rows), a q1:s1 (2), b q1:s0, b q1:s1, b q2:s0 (1 each); a q2:s0 agrees. Each is read
    # back once. On main's src each went through Voucher.finish (7 calls), none through again.
    traces = write_jsonl(tmp_path / "t.jsonl", ROWS)
    labels = write_jsonl(tmp_path / "labels.jsonl", LABELS)
    expected = _stream(tmp_path, monkeypatch, traces, labels)
    finished, again = _calls(monkeypatch, "finish"), _calls(monkeypatch, "again")
    got = _disagreements(traces, labels, tmp_path / "out.jsonl")
    assert (len(finished), len(again)) == (0, 7)
    assert _keys(got) == EXPECTED
    assert got == expected


def test_a_file_holding_a_line_the_exact_reader_read_keeps_the_marks_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a q1:s0 c1's second passage is 'N/A' (no passage): the scan's voucher leaves the line
    # to the exact reader, which drops that passage (a note). Read back with no marks check
    # it would be written with its 'N/A' passage; the check declines it (the stream writes
    # the file), so the line carries passage p1 alone, as the stream's does.
    rows = json.loads(json.dumps(ROWS))
    rows[1]["passages"][1]["text"] = "N/A"
    traces = write_jsonl(tmp_path / "t.jsonl", rows)
    labels = write_jsonl(tmp_path / "labels.jsonl", LABELS)
    expected = _stream(tmp_path, monkeypatch, traces, labels)
    again = _calls(monkeypatch, "again")
    got = _disagreements(traces, labels, tmp_path / "out.jsonl")
    assert again == []
    assert _keys(got) == EXPECTED
    assert got == expected
    first = json.loads(got.splitlines()[0])  # refuted, a, q1:s0 (FN): its claims c0, c1
    assert [c["claim_id"] for c in first["claims"]] == ["q1:s0:c0", "q1:s0:c1"]
    assert [p["passage_id"] for p in first["claims"][1]["passages"]] == ["q1:s0:c1:p1"]
    assert "N/A" not in got.decode("utf-8")
