"""The compact forms behind the disagreements command's memory at 10x paper scale (issue 18).

:class:`~failcodes.tracecols.GroupOrigin` keeps each group's place as a uint32 line, its
byte offset and a uint16 run (groups made by the engine from its row table, issue 30).
Labels read as columns hold ``has_error`` as bytes and question ids as codes; a
:class:`~failcodes.labels.LabelIndex` of sentence groups finds labels by bisection. Every
value here is written out by hand in the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from failcodes import columnar, engine, labelio, tracecols
from failcodes.labels import Label, LabelIndex

FOUR_GB = 1 << 32


def _located(rows: list[tuple[str, str, str, int, int]]) -> tracecols.SentenceColumns:
    """Groups of rows (system, sentence, claim, line, offset), all of question q1.

    Put in the engine's row table as a scan of one file would (issue 30).
    """
    con = engine.connect()
    con.execute(columnar._ROWS_TABLE)
    for row, (system, sentence, claim, line, offset) in enumerate(rows):
        con.execute(
            "INSERT INTO rows VALUES (0, ?, ?, ?, ?, 'q1', ?, ?, 0)",
            [line, offset, row, system, sentence, claim],
        )
    loaded = columnar._Rows(con, (Path("t.jsonl"),), (columnar.Format.JSONL,), [0])
    try:
        return columnar._engine_sentence_columns(loaded, locate=True)
    finally:
        con.close()


def test_offsets_beyond_four_gigabytes_come_back_whole() -> None:
    # a file of ~12 GB: A/s1 before 4 GB, A/s2 between 4 and 8 GB, A/s3 after 8 GB
    rows = [
        ("A", "s1", "c1", 1, 100),
        ("A", "s1", "c2", 2, 200),
        ("A", "s2", "c3", 3, FOUR_GB + 5),
        ("A", "s3", "c4", 4, 2 * FOUR_GB + 7),
        ("A", "s3", "c5", 5, 2 * FOUR_GB + 9),
    ]
    cols = _located(rows)
    assert cols.origin is not None
    assert cols.sentences == ["s1", "s2", "s3"]
    files, lines, offsets, runs = cols.origin.where([0, 1, 2], cols.first)
    assert lines == [1, 3, 4]
    assert offsets == [100, FOUR_GB + 5, 2 * FOUR_GB + 7]
    assert runs == [2, 1, 2]
    assert files == [0, 0, 0]


def test_a_line_beyond_uint32_gives_up_the_groups() -> None:
    with pytest.raises(OverflowError):
        _located([("A", "s1", "c1", FOUR_GB, 0)])


def test_a_run_longer_than_uint16_is_kept_as_no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columnar, "_MAX_RUN", 3)  # (65,535 rows in the real thing)
    rows = [("A", "s1", f"c{i}", i + 1, i * 10) for i in range(4)]  # 4 consecutive rows
    rows.append(("A", "s2", "c9", 5, 40))
    cols = _located(rows)
    assert cols.origin is not None
    assert cols.origin.where([0, 1], cols.first)[3] == [0, 1]  # s1: 4 rows > 3: no run
    # s1's rows are listed instead: (row, file, line, offset)
    assert cols.origin.rows_of(0) == [(i, 0, i + 1, i * 10) for i in range(4)]


def _labels(tmp_path: Path) -> Path:
    rows = [
        {"sentence_id": f"s{i}", "question_id": f"q{i // 4}", "has_error": i % 3 == 0}
        for i in range(12)
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_compacted_flags_and_codes_read_as_lists(tmp_path: Path) -> None:
    held = labelio.read_labels(_labels(tmp_path), columns=True)
    flags, questions = held.column("has_error"), held.column("question_id")
    assert not isinstance(flags, list) and not isinstance(questions, list)
    assert list(flags) == [True, False, False, True, False, False] * 2
    assert flags[3] is True and flags[-1] is False and flags[1:4] == [False, False, True]
    assert list(questions) == ["q0"] * 4 + ["q1"] * 4 + ["q2"] * 4
    assert questions[5] == "q1" and questions[-1] == "q2" and questions[3:5] == ["q0", "q1"]
    with pytest.raises(IndexError):
        flags[12]
    with pytest.raises(IndexError):
        questions[12]
    assert held[3] == Label(sentence_id="s3", question_id="q0", has_error=True)
    held.append(Label(sentence_id="s12", question_id="q9", has_error=False))  # lists again
    assert list(held.column("question_id"))[-2:] == ["q2", "q9"]
    assert list(held.column("has_error"))[-2:] == [False, False]


def test_sorted_sentence_index_finds_what_the_dict_index_finds(tmp_path: Path) -> None:
    held = labelio.read_labels(_labels(tmp_path), columns=True)
    # groups hold s0..s9 (sorted as strings); s10 and s11 are labelled without a trace
    sentences = sorted(f"s{i}" for i in range(10))  # s0, s1, s2, ..., s9
    positions = np.array([int(s[1:]) for s in sentences], dtype=np.int32)
    index = LabelIndex.of_sorted_sentences(held, sentences, positions, {"s10": 10, "s11": 11})
    plain = LabelIndex(held)
    for i in range(12):
        sid = f"s{i}"
        assert index.sentence_label(sid) == plain.sentence_label(sid)
        assert index.claim_has_error(sid, "any") is plain.claim_has_error(sid, "any")
        assert index.for_sentence("q", sid) == plain.for_sentence("q", sid)
    assert index.for_sentence("q", "s99") is None
    assert index.claim_has_error("s99", "c") is None
    assert list(index.sentence) == list(plain.sentence)  # label order
    assert len(index.sentence) == 12
