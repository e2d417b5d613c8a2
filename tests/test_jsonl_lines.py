"""JSONL lines split at ``\\n`` first are the universal-newline reader's lines (issue 30).

``jsonio.jsonl_lines`` reads a file with ``newline="\\n"`` (a byte search) and, at the first
``\\r`` or text that is not UTF-8, reads it again as universal newlines, skipping the lines it
gave. What it must never change: the lines, their numbers and the error. The reference here
is the reader it replaced (universal newlines from the start), written out in full.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failcodes import jsonio
from failcodes.errors import InputError

BOM = b"\xef\xbb\xbf"


def universal(path: Path) -> list[tuple[int, str]] | str:
    """The lines as the universal-newline reader gave them, or its error line."""
    out: list[tuple[int, str]] = []
    with path.open(encoding="utf-8-sig", newline="") as fh:
        try:
            for lineno, raw in enumerate(fh, start=1):
                if not raw.isspace():
                    out.append((lineno, raw))
        except UnicodeDecodeError as exc:
            return str(jsonio.decode_error(path, exc))
    return out


def fast(path: Path) -> list[tuple[int, str]] | str:
    """The lines ``jsonl_lines`` gives, or its error line (the lines before it dropped)."""
    try:
        return list(jsonio.jsonl_lines(path))
    except InputError as exc:
        return str(exc)


def test_carriage_returns_after_some_lines_are_line_ends_as_before(tmp_path: Path) -> None:
    # lines 1-2 split at \n; line 3 holds a \r: from there the universal reader's lines,
    # by hand: 'c\r' is line 3, 'd\r\n' line 4, the blank '\r' line 5 skipped, 'e' line 6
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"a\n\nb\nc\rd\r\n\re")
    assert fast(path) == [(1, "a\n"), (3, "b\n"), (4, "c\r"), (5, "d\r\n"), (7, "e")]
    assert fast(path) == universal(path)


def test_text_that_is_not_utf8_is_the_universal_readers_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 3 + b'{"a": "\xff"}\n')
    with pytest.raises(InputError) as exc:
        list(jsonio.jsonl_lines(path))
    # the whole file is one chunk of the decoder: the bad byte is at offset 34 from 0
    # (3 lines of 9 bytes, then the 7 bytes of '{"a": "')
    assert str(exc.value) == str(universal(path))
    assert "invalid start byte at byte 34" in str(exc.value)


def test_a_bad_byte_past_the_decoders_first_chunk_is_named_by_its_offset_in_the_file(
    tmp_path: Path,
) -> None:
    # 500 lines of 90 bytes ('{"a": "' + 80 x + '"}\n'), then the 7 bytes of '{"a": "':
    # the bad byte is at 500 * 90 + 7 = 45,007 by hand. The text stream decodes a chunk at a
    # time and its error's offset was the chunk's ("at byte 4047" before the fix).
    good = b'{"a": "' + b"x" * 80 + b'"}\n'
    assert len(good) == 90
    path = tmp_path / "t.jsonl"
    path.write_bytes(good * 500 + b'{"a": "\xff"}\n' + good)
    with pytest.raises(InputError) as exc:
        list(jsonio.iter_jsonl(path))
    assert "invalid start byte at byte 45007)" in str(exc.value)


def test_a_file_ending_inside_a_character_is_named_by_its_offset(tmp_path: Path) -> None:
    # 3 lines of 9 bytes, then '{"a": "' (7 bytes) and the first byte of a 2-byte character
    # at 27 + 7 = 34 by hand, the file ending there
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 3 + b'{"a": "\xc3')
    with pytest.raises(InputError) as exc:
        list(jsonio.iter_jsonl(path))
    assert "at byte 34)" in str(exc.value)


def test_a_long_line_without_a_line_end_is_read_in_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonio, "_PIECE", 4)
    path = tmp_path / "t.jsonl"
    path.write_text("abcdefghij\nklmnopq\rrs\n", encoding="utf-8")
    # pieces of 4: 'abcd' 'efgh' 'ij\n' joined; then 'klmn' 'opq\r' holds a \r: read again
    assert fast(path) == [(1, "abcdefghij\n"), (2, "klmnopq\r"), (3, "rs\n")]


@settings(max_examples=400, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(
            [
                b"a",
                b"{}",
                b" ",
                b"\n",
                b"\r",
                b"\r\n",
                b"\x1c",
                b"\xc3\xa9",
                b"\xef\xbb\xbf",
                b"\xff",
            ]
        ),
        max_size=40,
    ),
    bom=st.booleans(),
    piece=st.sampled_from([1, 2, 3, 1 << 20]),
)
def test_any_bytes_give_the_universal_readers_lines_or_error(
    tmp_path_factory: pytest.TempPathFactory, parts: list[bytes], bom: bool, piece: int
) -> None:
    path = tmp_path_factory.mktemp("l") / "t.jsonl"
    path.write_bytes((BOM if bom else b"") + b"".join(parts))
    old = jsonio._PIECE
    jsonio._PIECE = piece
    try:
        assert fast(path) == universal(path)
    finally:
        jsonio._PIECE = old
