"""Session 24, t24red3: foreign table shapes the reader tests did not use."""

from __future__ import annotations

import pytest

from tests.cli_helpers import run_cli


@pytest.mark.parametrize(
    ("header", "shown", "char"),
    [
        (
            "sentence_id\u200b",
            "'sentence_id\\u200b'",
            "U+200B ZERO WIDTH SPACE",
        ),  # a zero-width space pasted
        (
            "\ufeffsentence_id",
            "'\\ufeffsentence_id'",
            "U+FEFF ZERO WIDTH NO-BREAK SPACE",
        ),  # two byte-order marks
    ],
)
def test_a_header_name_with_an_invisible_character_is_named_as_the_column_it_looks_like(
    tmp_path, capsys, header, shown, char
) -> None:
    # main: "field 'sentence_id\u200b': unknown column (expected some of: sentence_id, ...)"
    # the refused name printed exactly like the first expected one, with no word of why
    table = tmp_path / "l.csv"
    # Excel's "CSV UTF-8" starts with a byte-order mark (read as such); the second is a name's
    table.write_text(f"{header},has_error\ns1,true\n", encoding="utf-8-sig")
    out = tmp_path / "o" / "l.jsonl"
    args = ["ingest", "generic-labels", str(table), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert (code, err.splitlines()) == (
        2,
        [
            f"failcodes: error: {table}:1: column {shown}: did you mean 'sentence_id'? (names "
            f"are exact: case, spaces; it holds {char}, a character that shows as nothing)"
        ],
    )
    assert not out.parent.exists()


def test_a_trace_header_name_with_an_invisible_character_is_named_too(tmp_path, capsys) -> None:
    table = tmp_path / "t.csv"
    table.write_text("claim_id,claim,verdict\u200b\nc1,X,supported\n", encoding="utf-8")
    out = tmp_path / "o" / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert (code, err.splitlines()) == (
        2,
        [
            f"failcodes: error: {table}:1: column 'verdict\\u200b': did you mean 'verdict'? "
            "(names are exact: case, spaces; it holds U+200B ZERO WIDTH SPACE, a character that "
            "shows as nothing)"
        ],
    )
    assert not out.parent.exists()
