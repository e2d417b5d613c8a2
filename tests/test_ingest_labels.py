"""`ingest generic-labels` of a JSONL file held as columns (issue 30) against the exact path.

The labels are read a piece of whole lines at a time by msgspec (``labelio._whole_piece``
vouches for a piece at once, else its lines are read one at a time) and written to JSONL from
their columns (``labelio._stage_label_lines``). Both must give exactly what the exact reader
(json + one pydantic model per line) and ``stage_table`` (pydantic's ``model_dump_json``)
give: the same labels, lines, errors and bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from failcodes import labelio
from failcodes.errors import InputError
from failcodes.labels import Label, LabelColumns


def _exact(path: Path) -> LabelColumns:
    """Labels as columns through the exact reader (the fast reader switched off)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(labelio, "_fast_label_columns", lambda *_: None)
        return labelio.read_labels(path, columns=True)


def _labels(n: int) -> list[str]:
    """``n`` label lines in the shapes a labels file takes (as json.dumps writes them)."""
    out = []
    for i in range(n):
        rec: dict[str, object] = {"sentence_id": f"q{i // 3}:s{i % 3}", "question_id": f"q{i // 3}"}
        rec["has_error"] = i % 7 == 0
        if i % 5 == 0:
            rec["rationale"] = "dose µg — über"
        if i % 11 == 0:
            rec["annotator"] = "Zoë"
        out.append(json.dumps(rec, ensure_ascii=i % 2 == 0))
    return out


@pytest.mark.parametrize("piece", [64, 200, 1 << 20])
def test_pieces_of_lines_give_the_exact_readers_labels_and_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    lines = _labels(40)
    lines[5] = "   "  # a blank line: its piece is read a line at a time
    lines[17] += "\r"  # a CRLF line end
    lines[23] = lines[23].replace('"has_error"', '"has\\u005ferror"')  # a backslash in a key
    path = tmp_path / "labels.jsonl"
    # a BOM first; the last line without its line end
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode("utf-8"))
    monkeypatch.setattr(labelio, "_PIECE", piece)  # 64 bytes: a line spans two reads
    fast = labelio._fast_label_columns(path, None)
    assert fast is not None
    exact = _exact(path)
    # 40 lines, the blank 6th one skipped: lines 1-5 and 7-40
    assert list(fast.lines) == list(exact.lines) == [*range(1, 6), *range(7, 41)]
    assert list(fast) == list(exact)
    assert [lab.model_fields_set for lab in fast] == [lab.model_fields_set for lab in exact]
    assert fast[23].has_error is False  # line 25: i = 24, 24 % 7 != 0
    assert fast[0].rationale == "dose µg — über"


def test_a_read_ending_at_a_line_end_loses_no_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 10 lines of 43 bytes each (with the line end): reads of 3 lines end at a line end
    lines = [f'{{"sentence_id": "s{i:02d}", "has_error": false}}' for i in range(10)]
    assert {len(line) + 1 for line in lines} == {43}
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    monkeypatch.setattr(labelio, "_PIECE", 3 * 43)
    fast = labelio._fast_label_columns(path, None)
    assert fast is not None
    assert list(fast.column("sentence_id")) == [f"s{i:02d}" for i in range(10)]
    assert list(fast.lines) == list(range(1, 11))


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        # two labels on one line: msgspec reads both, the exact reader refuses the line
        (
            ['{"sentence_id": "a", "has_error": true} {"sentence_id": "b", "has_error": true}'],
            "labels.jsonl:2: malformed JSON (Extra data at column 41); more than one JSON value",
        ),
        # one label over two lines: the exact reader refuses its first line
        (
            ['{"sentence_id": "a",', '"has_error": true}'],
            "labels.jsonl:2: malformed JSON (Expecting property name enclosed in double quotes "
            "at column 21)",
        ),
        # a duplicate key without a backslash in the piece (the quote count)
        (
            ['{"sentence_id": "a", "has_error": true, "has_error": false}'],
            "labels.jsonl:2, field 'has_error': key 'has_error' appears twice in one object",
        ),
        # an explicit null is read by the exact reader (pydantic drops it)
        (['{"sentence_id": "a", "has_error": true, "severity": null}'], None),
        # a bare \r inside a line: the text reader ends the line there
        (
            ['{"sentence_id": "a",\r"has_error": true}'],
            "labels.jsonl:2: malformed JSON (Expecting property name enclosed in double quotes "
            "at column 21)",
        ),
    ],
)
def test_what_a_piece_cannot_vouch_for_is_the_exact_readers(
    tmp_path: Path, lines: list[str], message: str | None
) -> None:
    path = tmp_path / "labels.jsonl"
    first = '{"sentence_id": "q0:s0", "has_error": false}'
    path.write_bytes("\n".join([first, *lines]).encode("utf-8") + b"\n")
    assert labelio._fast_label_columns(path, None) is None
    if message is None:
        assert list(labelio.read_labels(path, columns=True)) == [
            Label(sentence_id="q0:s0", has_error=False),
            Label(sentence_id="a", has_error=True),
        ]
        return
    with pytest.raises(InputError) as fast:
        labelio.read_labels(path, columns=True)
    with pytest.raises(InputError) as exact:
        _exact(path)
    assert str(fast.value) == str(exact.value)
    assert message in str(fast.value)


def test_lines_from_columns_are_pydantics_json(tmp_path: Path) -> None:
    # every code point but the surrogates, in one field: each character's escape (or none)
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    rows = [
        Label(sentence_id=text, has_error=True, rationale="x"),
        Label(claim_id="c1", question_id="q", has_error=False, severity="Mild", system="s"),
        Label(sentence_id="s", has_error=False, annotator="", sentence='a "b" \\ \n\t'),
    ]
    held = LabelColumns()
    for row in rows:
        held.append(row)
    held.compact()
    path = tmp_path / "out.jsonl"
    labelio.write_labels(path, held)
    expected = "".join(r.model_dump_json(exclude_none=True) + "\n" for r in rows)
    assert path.read_bytes() == expected.encode("utf-8")
    assert json.loads(path.read_text("utf-8").split("\n")[1]) == {
        "claim_id": "c1",
        "question_id": "q",
        "has_error": False,
        "severity": "Mild",
        "system": "s",
    }


def test_ingest_output_is_the_exact_paths(tmp_path: Path) -> None:
    lines = _labels(3000)
    lines.insert(100, "")  # one piece read a line at a time
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "failcodes", "ingest", "generic-labels", path, "-o", out],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"wrote 3,000 labels -> {out}\n"
    # the exact path: one model per line, written by stage_table
    exact = labelio.read_labels(path)
    assert out.read_text("utf-8") == "".join(
        lab.model_dump_json(exclude_none=True) + "\n" for lab in exact
    )
