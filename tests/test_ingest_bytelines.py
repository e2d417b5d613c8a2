"""``ingest`` of a trace JSONL file read as bytes a block at a time (issue 30).

``ingest generic`` of a file in the trace format read each line as text (``readline``) and
counted each line's quotes (the duplicate-key check): ~0.3 of ~4.4 CPU-s at paper scale. Now
:class:`~failcodes.ingest.table._ByteLines` reads 64 kB at a time as bytes and vouches for a
read's lines with one quote count (:meth:`Voucher.lines
<failcodes.tracelines.Voucher.lines>`), until a read holds a ``\\r``, a line is not UTF-8 or is
too long: from there :func:`~failcodes.jsonio.jsonl_lines` reads on. What must not change: the
traces written, their line numbers, and every error. The Parquet writer's ASCII texts are
joined and encoded once (``tableio._text_buffers``): the same buffers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from failcodes import jsonio, tableio
from failcodes.ingest import table
from failcodes.ingest.table import _ByteLines
from failcodes.tracelines import Voucher
from tests.cli_helpers import run_cli


@pytest.fixture(autouse=True)
def _bytes_from_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file here read as bytes (a real one from BYTE_LINES_FROM bytes, 256 MB)."""
    monkeypatch.setattr(table, "BYTE_LINES_FROM", 0)


def _line(i: int, **extra: Any) -> bytes:
    trace = {
        "system": "bm25",
        "question_id": f"q{i}",
        "sentence_id": f"q{i}:s0",
        "claim_id": f"q{i}:s0:c0",
        "claim": f"Claim {i} " + "word " * 200,  # ~1 kB a line: 64 lines a 64 kB read
        "verdict": "refuted" if i % 3 == 0 else "supported",
        "passages": [{"passage_id": f"p{i}", "rank": 1, "text": "Aspirin reduces fever."}],
        **extra,
    }
    return json.dumps(trace).encode() + b"\n"


def _lines(n: int) -> bytes:
    return b"".join(_line(i) for i in range(n))


def test_the_byte_lines_are_the_text_readers_lines(tmp_path: Path) -> None:
    # a BOM, a blank line (2), a line of Unicode whitespace (4: U+001C, blank to str.isspace
    # and skipped by the text reader, not by bytes.isspace), a verdict alias (5, vouched: the
    # alias table knows 'SUPPORTS') and a null (6: no voucher, the object reader's)
    path = tmp_path / "t.jsonl"
    body = [_line(0), b"\n", _line(1), b"\x1c\n", _line(2, verdict="SUPPORTS")]
    body.append(_line(3).replace(b'"verdict"', b'"reasoning": null, "verdict"'))
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(body))
    read = _ByteLines(path, Voucher())
    got = [(line, text, rec is not None) for line, text, rec in read]
    assert read.ended
    # by hand: lines 1, 3, 5 vouched (no text); 2 and 4 blank; 6 given as its text
    assert [(line, vouched) for line, _, vouched in got] == [
        (1, True),
        (2, False),
        (3, True),
        (4, False),
        (5, True),
        (6, False),
    ]
    assert got[1][1].isspace() and got[3][1].isspace()
    texts = dict(jsonio.jsonl_lines(path))  # the text reader: blank lines 2 and 4 left out
    assert sorted(texts) == [1, 3, 5, 6]
    assert got[5][1] == texts[6]


def test_a_carriage_return_past_the_first_read_hands_the_rest_to_the_text_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 100 lines of ~1 kB: the first 64 kB read holds lines 1-60 or so, no \r; line 80 ends
    # in \r\n. The byte reader stops at the read that holds it; the text reader gives the rest.
    lf = _lines(100)
    crlf = b"".join(_line(i).replace(b"\n", b"\r\n") if i == 79 else _line(i) for i in range(100))
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(crlf)
    read = _ByteLines(path, Voucher())
    given = [line for line, _, _ in read]
    assert not read.ended
    assert given and given == list(range(1, len(given) + 1)) and len(given) < 80
    outs = []
    for name, data in (("lf", lf), ("crlf", crlf)):
        src = tmp_path / f"{name}.jsonl"
        src.write_bytes(data)
        out = tmp_path / f"{name}.out.jsonl"
        code, _, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
        assert code == 0, err
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert outs[0].count(b"\n") == 100


def test_text_that_is_not_utf8_past_the_first_read_is_the_text_readers_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # line 90 holds a \xff inside its claim: msgspec refuses it, the byte reader stops there
    # and the text reader reads on, to its own one-line error naming line 90
    lines = [_line(i) for i in range(100)]
    lines[89] = lines[89].replace(b"Claim 89", b"Claim \xff89", 1)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"".join(lines))
    offset = sum(map(len, lines[:89])) + lines[89].index(b"\xff")  # the bad byte, from 0
    out = tmp_path / "out.parquet"
    code, _, err = run_cli(["ingest", "generic", str(path), "-o", str(out)], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert f"{path}:90" in err and f"invalid start byte at byte {offset})" in err, err
    assert not out.exists()


def test_a_line_too_long_past_the_first_read_is_the_text_readers_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # MAX_LINE lowered to 4 kB, the text reader's piece and the bytes reader's read to 1 kB
    # (as 64 MB, 1 MB, 64 kB): line 70 of ~5 kB is refused at line 70 (the bytes reader
    # stops at it, the text reader refuses it)
    monkeypatch.setattr(jsonio, "MAX_LINE", 4096)
    monkeypatch.setattr(jsonio, "_PIECE", 1024)
    monkeypatch.setattr(jsonio, "_BLOCK", 1024)
    lines = [_line(i) for i in range(100)]
    lines[69] = _line(69, reasoning="x" * 4000)
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"".join(lines))
    out = tmp_path / "out.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(path), "-o", str(out)], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert f"{path}:70" in err and "a line of over" in err, err
    assert not out.exists()


def test_a_file_under_the_size_is_the_text_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (numpy, which the quote count imports, is not worth its import: tests/test_cli_startup)
    monkeypatch.setattr(table, "BYTE_LINES_FROM", 1 << 20)
    path = tmp_path / "t.jsonl"
    path.write_bytes(_lines(100))  # ~100 kB
    read = _ByteLines(path, Voucher())
    assert list(read) == [] and not read.ended
    path.write_bytes(_lines(1100))  # ~1.1 MB
    read = _ByteLines(path, Voucher())
    assert len(list(read)) == 1100 and read.ended


def test_ascii_and_other_texts_give_the_same_arrow_buffers() -> None:
    # by hand: 'ab', '', 'c\0d' -> offsets 0 2 2 5, bytes 'abc\0d' (one byte a character)
    offsets, data = tableio._text_buffers(["ab", "", "c\0d"])
    assert bytes(offsets) == bytes(memoryview(__import__("array").array("i", [0, 2, 2, 5])))
    assert data == b"abc\x00d"
    # 'é' is 2 bytes in UTF-8: 'é', 'ab' -> offsets 0 2 4
    offsets, data = tableio._text_buffers(["é", "ab"])
    assert list(memoryview(bytes(offsets)).cast("i")) == [0, 2, 4]
    assert data == "éab".encode()
    with pytest.raises(TypeError):  # a missing value: the caller's null path, as before
        tableio._text_buffers(["a", None])  # type: ignore[list-item]
