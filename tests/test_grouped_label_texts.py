"""The shared-label text check on the tool's own Parquet reads no claim text for sentence labels.

Issue 30. 042c213's check (a shared label over ids two systems give two texts) grouped every
row of the files twice after the load, on the sentence's text and on the claim's: +320 M
instructions of ``metrics`` at paper scale (bench scale-1 own Parquet, 3,158 M for 2,832 M
without the check). Sentence labels (read as sentence groups) are never compared with a
claim's text (``text_mismatch`` compares the claim texts of claim labels only): that scan
is not run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from failcodes import columnar, engine
from tests.cli_helpers import run_cli


def _traces(path: Path, system: str, texts: dict[str, str], claim: str = "{}") -> Path:
    rows = [
        {
            "system": system,
            "question_id": "q1",
            "sentence_id": sid,
            "claim_id": f"{sid}c0",
            "sentence": text,
            "claim": claim.format(text),
            "verdict": "refuted" if "cures" in text else "supported",
        }
        for sid, text in texts.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _own(out: Path, capsys: pytest.CaptureFixture[str], *files: Path) -> Path:
    assert run_cli(["ingest", "generic", *map(str, files), "-o", str(out)], capsys)[0] == 0
    return out


def _labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.jsonl"
    rows = [{"sentence_id": "s1", "has_error": False}, {"sentence_id": "s2", "has_error": True}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class _Recorded:
    """A connection that records the SQL run on it."""

    def __init__(self, con: Any, queries: list[str]) -> None:
        self._con, self._queries = con, queries

    def execute(self, query: str, *args: Any) -> Any:
        self._queries.append(query)
        return self._con.execute(query, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def _queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    queries: list[str] = []
    connect = engine.connect
    monkeypatch.setattr(engine, "connect", lambda: _Recorded(connect(), queries))
    return queries


SAME = {"s1": "Aspirin reduces fever.", "s2": "Aspirin cures cancer."}


def test_sentence_labels_are_checked_without_reading_claim_texts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # two systems, one text per sentence; sysB's claims worded otherwise (a claim label
    # would be refused; sentence labels never look at them)
    a = _traces(tmp_path / "a.jsonl", "sysA", SAME)
    b = _traces(tmp_path / "b.jsonl", "sysB", SAME, claim="{} (restated)")
    own = _own(tmp_path / "own.parquet", capsys, a, b)
    queries = _queries(monkeypatch)
    cols, labels = columnar.load_sentence_columns([own], _labels(tmp_path))
    assert (len(cols), len(labels)) == (4, 2)
    checks = [q for q in queries if "HAVING min(hash(" in q]
    assert [q.split("HAVING ")[1] for q in checks] == [
        "min(hash(sentence)) < max(hash(sentence))"  # main: and min(hash(claim)) < ...
    ]
    assert not any("NULLIF(claim" in q for q in queries)  # the claim column is never read
    # the same files with claim labels: the claims' texts are compared, and differ
    claim_labels = tmp_path / "claims.jsonl"
    claim_labels.write_text(json.dumps({"claim_id": "s1c0", "has_error": False}) + "\n")
    monkeypatch.undo()
    out = tmp_path / "m.json"
    args = ["--traces", str(own), "--labels", str(claim_labels), "--level", "claim", "-o", str(out)]
    code, _, err = run_cli(["metrics", *args], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {claim_labels}:1, field 'claim_id': claim 's1c0' reads 'Aspirin "
        "reduces fever.' in the traces of system 'sysA' and 'Aspirin reduces fever. "
        "(restated)' in those of 'sysB': this label, shared by every system (no system "
        "column), would apply to two different claims; if each system wrote its own answer, "
        "give the labels a system column (labels per system), else write the claim one way "
        "in every traces file"
    ]
    assert not out.exists()
    assert "claim 's1c0' reads 'Aspirin reduces fever.' in the traces of system 'sysA'" in err


@pytest.mark.parametrize("merged", [False, True])
def test_two_texts_across_own_parquet_files_are_refused(
    merged: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each system's own answer in its own Parquet file (or both in one), numbered alike:
    # sysB's s2 is sysA's s1. Shared labels would score sysB on sysA's sentences.
    a = _traces(tmp_path / "a.jsonl", "sysA", SAME)
    b = _traces(tmp_path / "b.jsonl", "sysB", {"s1": SAME["s1"], "s2": SAME["s1"]})
    if merged:
        files = [_own(tmp_path / "ab.parquet", capsys, a, b)]
    else:
        files = [_own(tmp_path / "a.parquet", capsys, a), _own(tmp_path / "b.parquet", capsys, b)]
    labels = _labels(tmp_path)
    out = tmp_path / "m.json"
    traces = [arg for f in files for arg in ("--traces", str(f))]
    code, _, err = run_cli(["metrics", *traces, "--labels", str(labels), "-o", str(out)], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {labels}:2, field 'sentence_id': sentence 's2' reads 'Aspirin cures "
        "cancer.' in the traces of system 'sysA' and 'Aspirin reduces fever.' in those of "
        "'sysB': this label, shared by every system (no system column), would apply to two "
        "different sentences; if each system wrote its own answer, give the labels a system "
        "column (labels per system), else write the sentence one way in every traces file"
    ]
    assert not out.exists()
