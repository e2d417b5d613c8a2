"""Session 28 (t28disag): one writer for ``disagreements`` lines, whatever the file's order.

Issue 30: session 27 wrote each mapping's lines as their claims' pieces came only where the
file's order was the output's (a file sorted by system, question and sentence as strings);
any other order (numeric ids q1..q10, systems out of order) stored every piece in a scratch
file and read it back. And the later mappings' files were "appended in the kernel" through
an output opened for appending, which ``copy_file_range`` refuses (EBADF): every byte went
through Python reads. Now every order takes one writer: each mapping's lines are written as
their claims come into a file of its own, then copied onto the output in the kernel, a run
of lines in output order at a time (the first mapping's straight into the output when it
comes in output order). The bytes must stay the stream's: every test compares with it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from failcodes import disagreementsql
from failcodes.tracelines import Voucher
from tests.cli_helpers import exit_code, write_jsonl
from tests.test_s27_t27disag import EXPECTED, LABELS, ROWS, _disagreements, _keys, _trace


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, str]]:
    """Each ``copy_file_range`` call: (bytes asked, source offset, what came of it)."""
    calls: list[tuple[int, int, str]] = []
    copy = os.copy_file_range

    def recorded(src: int, dst: int, count: int, offset_src: Any = None, *rest: Any) -> int:
        try:
            got = copy(src, dst, count, offset_src, *rest)
        except OSError as exc:
            calls.append((count, -1 if offset_src is None else offset_src, exc.strerror or ""))
            raise
        calls.append((count, offset_src, "copied" if got == count else f"{got} copied"))
        return got

    monkeypatch.setattr(os, "copy_file_range", recorded)
    return calls


def _streams(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, traces: Path, labels: Path) -> bytes:
    """The stream's bytes for these files (the engine's writer declined)."""
    with monkeypatch.context() as m:
        m.setattr(disagreementsql, "applies", lambda *args: False)
        return _disagreements(traces, labels, tmp_path / "stream.jsonl")


def test_lines_out_of_file_order_are_copied_in_the_kernel_a_run_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copies: list[tuple[int, int, str]]
) -> None:
    # system b's rows first: no mapping's disagreements (a before b) come in file order.
    # By hand, each mapping's lines are made b's first (their rows first), then a's: in the
    # output a's come first, so each mapping's file is copied in 2 runs (a's lines, then
    # b's; a q2:s9, no claim, goes with a q1:s0 before it): 3 mappings x 2 = 6 copies, and
    # every byte of the output is copied (the first mapping's lines too: not in file order).
    # On main's src: the pieces stored in a scratch file, no copy at all.
    traces = write_jsonl(tmp_path / "t.jsonl", ROWS[5:] + ROWS[:5])
    labels = write_jsonl(tmp_path / "labels.jsonl", LABELS)
    got = _disagreements(traces, labels, tmp_path / "out.jsonl")
    assert _keys(got) == EXPECTED  # the sentences' order, 5 + 7 + 6 lines (by hand)
    assert [how for _, _, how in copies] == ["copied"] * 6
    assert sum(n for n, _, _ in copies) == len(got)
    # each mapping's file: a's run starts past b's lines (offset > 0), b's run at 0
    assert [at > 0 for _, at, _ in copies] == [True, False] * 3
    lines = got.splitlines(keepends=True)
    # the first copy is a's lines of refuted: a q1:s0 and a q2:s9 (lines 1 and 2)
    assert copies[0][0] == len(lines[0]) + len(lines[1])
    assert got == _streams(tmp_path, monkeypatch, traces, labels)
    left = sorted(p.name for p in tmp_path.iterdir())  # no mapping's file left behind
    assert left == ["labels.jsonl", "out.jsonl", "stream.jsonl", "t.jsonl"]


def test_lines_in_file_order_copy_the_later_mappings_whole_in_the_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copies: list[tuple[int, int, str]]
) -> None:
    # in file order: the first mapping's 5 lines straight into the output, the other two
    # mappings' files copied whole (one run each, from offset 0). On main's src the kernel
    # refused both copies (EBADF: the output was opened for appending) and Python copied them.
    traces = write_jsonl(tmp_path / "t.jsonl", ROWS)
    labels = write_jsonl(tmp_path / "labels.jsonl", LABELS)
    got = _disagreements(traces, labels, tmp_path / "out.jsonl")
    assert _keys(got) == EXPECTED
    lines = got.splitlines(keepends=True)
    first = sum(map(len, lines[:5]))  # refuted's 5 lines (see EXPECTED)
    second = sum(map(len, lines[5:12]))  # non_supported's 7
    assert copies == [(second, 0, "copied"), (len(got) - first - second, 0, "copied")]
    assert got == _streams(tmp_path, monkeypatch, traces, labels)


def test_numeric_question_ids_take_the_same_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copies: list[tuple[int, int, str]]
) -> None:
    # questions q1..q11 in numeric order in the file, one sentence each, every label an error
    # and every claim supported: each is an FN under both mappings. The output is in string
    # order: q1, q10, q11, q2, ..., q9; the lines are made q1..q11, so each mapping's file is
    # copied in 3 runs (q1; q10, q11; q2..q9), 2 x 3 = 6 copies, all of the output.
    qs = [f"q{i}" for i in range(1, 12)]
    traces = write_jsonl(tmp_path / "t.jsonl", [_trace("a", q, 0, 0, "supported") for q in qs])
    labels = write_jsonl(
        tmp_path / "labels.jsonl", [{"sentence_id": f"{q}:s0", "has_error": True} for q in qs]
    )
    maps = ["-m", "refuted", "-m", "non_supported"]
    out = tmp_path / "out.jsonl"
    assert exit_code("disagreements", "--traces", traces, "--labels", labels, "-o", out, *maps) == 0
    got = out.read_bytes()
    lines = [json.loads(x) for x in got.splitlines()]
    order = ["q1", "q10", "q11", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"]
    assert [(d["mapping"], d["question_id"], d["kind"]) for d in lines] == [
        (m, q, "FN") for m in ("refuted", "non_supported") for q in order
    ]
    sizes = [len(x) for x in got.splitlines(keepends=True)]
    # refuted's file as made (q1..q11): q1 at 0, q10 after q1..q9, q2 after q1
    made = [sizes[0], *sizes[3:11], sizes[1], sizes[2]]  # q1, q2..q9, q10, q11
    assert copies[:3] == [
        (sizes[0], 0, "copied"),
        (sizes[1] + sizes[2], sum(made[:9]), "copied"),
        (sum(sizes[3:11]), sizes[0], "copied"),
    ]
    assert len(copies) == 6 and sum(n for n, _, _ in copies) == len(got)
    with monkeypatch.context() as m:
        m.setattr(disagreementsql, "applies", lambda *args: False)
        stream = tmp_path / "stream.jsonl"
        assert (
            exit_code("disagreements", "--traces", traces, "--labels", labels, "-o", stream, *maps)
            == 0
        )
    assert got == stream.read_bytes()


def test_engine_batches_are_cut_where_a_group_starts() -> None:
    # rows 0..4 in batches of 2, 2 and 1 rows; groups start at rows 0, 3 and 4 (rows 0-2 one
    # group, row 3 one, row 4 one). By hand: after 2 rows the last start at or before row 2
    # is 0 (group 0 not whole): nothing; after 4 rows it is 4, so rows 0-3 (two whole
    # groups) are given on; after 5 rows it is 4 again: row 4 is given at the end.
    n = disagreementsql._PIECES
    rows = [[f"r{i}p{k}".encode() for k in range(n)] for i in range(5)]
    batches = [rows[0] + rows[1], rows[2] + rows[3], rows[4]]
    got = list(disagreementsql._aligned(batches, [0, 3, 4]))
    assert got == [rows[0] + rows[1] + rows[2] + rows[3], rows[4]]


def test_a_needed_groups_lines_are_read_again_with_one_pread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file: a BOM, CRLF line ends, a blank line after a's q1:s1. Its groups: a q1:s0
    # (rows 0-1), a q1:s1 (2-3), a q2:s0 (4), b q1:s0 (5), b q1:s1 (6), b q2:s0 (7). The
    # disagreeing ones (EXPECTED: all but a q2:s0; q2:s9 has no claim) are read once each,
    # in file order, from their first byte to the next group's (the last to the end of the
    # file): 5 reads, by hand from the lines' lengths. On main's src: no pread (readline).
    texts = [json.dumps(r).encode() + b"\r\n" for r in ROWS]
    texts[0] = b"\xef\xbb\xbf" + texts[0]
    texts[3] += b"\r\n"  # a blank line (no row) ends a's q1:s1
    traces = tmp_path / "t.jsonl"
    traces.write_bytes(b"".join(texts))
    labels = write_jsonl(tmp_path / "labels.jsonl", LABELS)
    start = [sum(map(len, texts[:i])) for i in range(len(texts) + 1)]
    reads: list[tuple[int, int]] = []
    pread = os.pread

    def recorded(fd: int, n: int, at: int) -> bytes:
        reads.append((n, at))
        return pread(fd, n, at)

    monkeypatch.setattr(os, "pread", recorded)
    got = _disagreements(traces, labels, tmp_path / "out.jsonl")
    monkeypatch.setattr(os, "pread", pread)
    assert reads == [
        (start[2], 0),  # a q1:s0: rows 0-1, the BOM with them
        (start[4] - start[2], start[2]),  # a q1:s1: rows 2-3 and the blank line
        (start[6] - start[5], start[5]),  # b q1:s0
        (start[7] - start[6], start[6]),  # b q1:s1
        (start[8] - start[7], start[7]),  # b q2:s0, to the end of the file
    ]
    assert _keys(got) == EXPECTED
    assert got == _streams(tmp_path, monkeypatch, traces, labels)


def test_a_blocks_passages_are_counted_a_field_at_a_time() -> None:
    # Voucher._block_keys counted a block's keys and strings with a tuple per passage
    # (msgspec astuple: ~1.2M of them in bench_engine's 675 MB file); now only the records
    # are made tuples. ROWS: 8 records of 2 passages each -> 8 astuple calls, not 8 + 16.
    vouch = Voucher(rewritten=False)
    made: list[int] = []
    astuple = vouch.astuple

    def counted(rec: Any) -> Any:
        made.append(1)
        return astuple(rec)

    vouch.astuple = counted
    bodies = [json.dumps(r).encode() for r in ROWS]
    recs = [vouch.decode(b) for b in bodies]
    # the quotes the block needs, by hand: each record's keys and string values, each
    # passage's 4 keys (passage_id, rank, text, score) and 2 strings (passage_id, text);
    # ROWS[0] (sentence) and ROWS[6] (raw_verdict) one more key and string each
    top = [2 * 8] * len(ROWS)  # 8 keys: ids (4), claim, verdict, retriever, passages
    top = [k + 2 * 7 for k in top]  # 7 strings: all but passages
    top[0] += 4  # sentence
    top[6] += 4  # raw_verdict
    passages = 2 * 2 * (4 + 2)
    assert vouch._block_keys(recs) == sum(top) + len(ROWS) * passages
    assert sum(top) + len(ROWS) * passages == sum(b.count(b'"') for b in bodies)
    assert made == [1] * 8
    # ranks falling (2 then 1) are still unique; a rank twice is not (the record's own count)
    falling = [dict(r, passages=r["passages"][::-1]) for r in ROWS]
    recs = [vouch.decode(json.dumps(r).encode()) for r in falling]
    assert vouch._block_keys(recs) == sum(top) + len(ROWS) * passages
    twice = [dict(falling[0], passages=[dict(p, rank=1) for p in falling[0]["passages"]])]
    assert vouch._block_keys([vouch.decode(json.dumps(twice[0]).encode())]) is None
