"""The shared-label text check on JSONL traces decodes the lines once, in the load.

Issue 30. Shared sentence labels over several systems (no system column) are checked for a
sentence id whose traces give two texts (``labels.text_mismatch``). On JSONL the check
decoded every line a second time (``columnar.trace_texts``) after the load: 0.50 of the 2.43
CPU-s of ``metrics`` at paper scale (bench scale-1 traces.jsonl, 4 systems), where the
DuckDB script took 2.30. Now the load keeps each row's sentence-text hash and the engine
finds whether an id has two texts; the lines are read again only then, or when a label
gives its sentence's text. The refusals are unchanged. On Parquet files the same check ran
on a second DuckDB instance (~100 M instructions of 2,917 M on the tool's own Parquet): it
now runs on the load's connection. Labels per system (or giving their texts) hash nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from failcodes import columnar, engine
from failcodes.tracecols import SentenceColumns
from tests.cli_helpers import run_cli

SAME = {"s1": "Aspirin reduces fever.", "s2": "Aspirin cures cancer."}


def _rows(system: str, texts: dict[str, str | None]) -> list[dict[str, Any]]:
    return [
        {
            "system": system,
            "question_id": "q1",
            "sentence_id": sid,
            "claim_id": f"{sid}c{k}",
            **({} if text is None else {"sentence": text}),
            "claim": f"claim {k}",
            "verdict": "refuted" if text and "cures" in text else "supported",
        }
        for sid, text in texts.items()
        for k in range(2)  # two claims a sentence
    ]


def _jsonl(path: Path, *rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for part in rows for r in part))
    return path


def _labels(tmp_path: Path, text: str | None = None) -> Path:
    path = tmp_path / "labels.jsonl"
    first: dict[str, Any] = {"sentence_id": "s1", "has_error": False}
    if text is not None:
        first["sentence"] = text
    rows = [first, {"sentence_id": "s2", "has_error": True}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the second passes over the traces (rows each yielded)."""
    passes: list[int] = []
    texts = columnar.trace_texts

    def counted(*args: Any, **kwargs: Any) -> Iterator[Any]:
        passes.append(0)
        for row in texts(*args, **kwargs):
            passes[-1] += 1
            yield row

    monkeypatch.setattr(columnar, "trace_texts", counted)
    return passes


@pytest.mark.parametrize("locate", [False, True])  # metrics; disagreements
@pytest.mark.parametrize(
    "b_texts",
    [SAME, {"s1": SAME["s1"], "s2": None}],  # sysB's s2 without its text: passed over
)
def test_one_text_per_id_reads_the_lines_once(
    locate: bool,
    b_texts: dict[str, str | None],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    traces = [
        _jsonl(tmp_path / "a.jsonl", _rows("sysA", dict(SAME))),
        _jsonl(tmp_path / "b.jsonl", _rows("sysB", b_texts)),
    ]
    passes = _passes(monkeypatch)
    cols, labels = columnar.load_sentence_columns(traces, _labels(tmp_path), locate=locate)
    assert (len(cols), len(labels)) == (8, 2)  # 2 systems x 2 sentences x 2 claims
    assert passes == []  # main: [8], every line decoded again


def test_a_label_giving_its_text_reads_the_lines_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traces = [_jsonl(tmp_path / "ab.jsonl", _rows("sysA", dict(SAME)), _rows("sysB", dict(SAME)))]
    passes = _passes(monkeypatch)
    columnar.load_sentence_columns(traces, _labels(tmp_path, SAME["s1"]))
    assert passes == [8]


@pytest.mark.parametrize("files", [1, 2])
def test_two_texts_of_one_id_are_refused(
    files: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each system's own answer, numbered alike: sysB's s2 is sysA's s1
    a, b = _rows("sysA", dict(SAME)), _rows("sysB", {"s1": SAME["s1"], "s2": SAME["s1"]})
    if files == 1:
        traces = [_jsonl(tmp_path / "ab.jsonl", a, b)]
    else:
        traces = [_jsonl(tmp_path / "a.jsonl", a), _jsonl(tmp_path / "b.jsonl", b)]
    labels = _labels(tmp_path)
    out = tmp_path / "m.json"
    args = [arg for t in traces for arg in ("--traces", str(t))]
    code, _, err = run_cli(["metrics", *args, "--labels", str(labels), "-o", str(out)], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {labels}:2, field 'sentence_id': sentence 's2' reads 'Aspirin cures "
        "cancer.' in the traces of system 'sysA' and 'Aspirin reduces fever.' in those of "
        "'sysB': this label, shared by every system (no system column), would apply to two "
        "different sentences; if each system wrote its own answer, give the labels a system "
        "column (labels per system), else write the sentence one way in every traces file"
    ]
    assert not out.exists()


def test_a_label_text_not_the_traces_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = _jsonl(tmp_path / "ab.jsonl", _rows("sysA", dict(SAME)), _rows("sysB", dict(SAME)))
    labels = _labels(tmp_path, "Aspirin lowers blood pressure.")
    out = tmp_path / "m.json"
    args = ["--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    code, _, err = run_cli(["metrics", *args], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {labels}:1, field 'sentence': the label's sentence 'Aspirin lowers "
        "blood pressure.' is not sentence 's1' of the traces of system 'sysA', 'Aspirin reduces "
        "fever.': the label was made on another answer, or its id names another sentence; "
        "label the traces' sentences by their ids"
    ]
    assert not out.exists()


def _connects(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the engine connections opened (each a DuckDB instance)."""
    opened: list[int] = []
    connect = engine.connect

    def counted() -> Any:
        opened.append(1)
        return connect()

    monkeypatch.setattr(engine, "connect", counted)
    return opened


@pytest.mark.parametrize("locate", [False, True])  # metrics; disagreements
@pytest.mark.parametrize(
    "b_texts",
    [SAME, {"s1": SAME["s1"], "s2": None}],  # sysB's s2 without its text: passed over
)
def test_own_parquet_is_checked_on_the_loads_connection(
    locate: bool,
    b_texts: dict[str, str | None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the text check opened a second DuckDB instance (~100 M instructions, 0.02 CPU-s)
    a = _jsonl(tmp_path / "a.jsonl", _rows("sysA", dict(SAME)))
    b = _jsonl(tmp_path / "b.jsonl", _rows("sysB", b_texts))
    own = tmp_path / "own.parquet"
    assert run_cli(["ingest", "generic", str(a), str(b), "-o", str(own)], capsys)[0] == 0
    passes, opened = _passes(monkeypatch), _connects(monkeypatch)
    cols, _ = columnar.load_sentence_columns([own], _labels(tmp_path), locate=locate)
    assert len(cols) == 8
    assert (passes, len(opened)) == ([], 1)  # main: [0] or [4] (text and none), 2


def test_per_system_labels_are_not_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # labels with a system column: no text is compared, and the load hashes none
    traces = [_jsonl(tmp_path / "ab.jsonl", _rows("sysA", dict(SAME)), _rows("sysB", dict(SAME)))]
    labels = tmp_path / "labels.jsonl"
    rows = [
        {"system": s, "sentence_id": t, "has_error": False} for s in ("sysA", "sysB") for t in SAME
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    passes = _passes(monkeypatch)
    cols, _ = columnar.load_sentence_columns(traces, labels)
    assert passes == []
    assert isinstance(cols, SentenceColumns) and cols.texts_differ is None


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_one_system_is_not_checked(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # shared labels over one system's traces: no two systems to give an id two texts
    # (validate_labels compares none); the load's connection runs no GROUP BY of the texts
    traces = _jsonl(tmp_path / "a.jsonl", _rows("sysA", dict(SAME)))
    if fmt == "parquet":
        own = tmp_path / "own.parquet"
        assert run_cli(["ingest", "generic", str(traces), "-o", str(own)], capsys)[0] == 0
        traces = own
    queries: list[str] = []
    connect = engine.connect

    def recorded() -> Any:
        con = connect()

        class _Recorded:
            def execute(self, query: str, *args: Any) -> Any:
                queries.append(query)
                return con.execute(query, *args)

            def __getattr__(self, name: str) -> Any:
                return getattr(con, name)

        return _Recorded()

    monkeypatch.setattr(engine, "connect", recorded)
    cols, _ = columnar.load_sentence_columns([traces], _labels(tmp_path))
    assert isinstance(cols, SentenceColumns) and cols.texts_differ is None
    assert not any("max(hash(sentence))" in q or "sentence_text, 0))" in q for q in queries)
