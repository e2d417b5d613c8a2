"""A whole-JSON list read once, with the line each element starts on (``ingest generic`` of
a ``.json`` dump: the record's line names its rows in every error and in ``ids=line``).

:func:`failcodes.jsonio.read_json_list` decodes the list element by element, so the lines
come from the one parse (before, a second ``raw_decode`` pass over the whole text found
them). Its value and its errors are :func:`~failcodes.jsonio.read_json`'s: each refused case
below is compared with it, and with the message written out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes import jsonio
from failcodes.errors import InputError
from failcodes.ingest import AdapterOptions, get_adapter

#: The decoder's own words for a trailing comma differ across Python versions; our hint does not
TRAILING = "; a trailing comma before ] or }? JSON allows none"


def _doc(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "doc.json"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "value", "lines"),
    [
        # line 1 "[", line 2 the first object, line 3 two objects, the second over two lines
        (
            '[\n  {"a": 1},\n  {"a": 2}, {"b": [1,\n2]}\n]\n',
            [{"a": 1}, {"a": 2}, {"b": [1, 2]}],
            [2, 3, 3],
        ),
        ("[ ]", [], []),
        ("\n\n[1,\r\n\t2]\n", [1, 2], [3, 4]),
        ("\ufeff[\n3]", [3], [2]),  # a byte-order mark is no character of the text
        ('{"a": [1]}', {"a": [1]}, None),  # an object: no element lines
        ("7", 7, None),
    ],
)
def test_value_and_element_lines(tmp_path: Path, text: str, value: object, lines: object) -> None:
    path = _doc(tmp_path, text)
    assert jsonio.read_json_list(path) == (value, lines)
    assert jsonio.read_json(path) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[1,]",
            TRAILING,
        ),
        (
            "[1] [2]",
            "doc.json:1: malformed JSON (Extra data at column 5); more than one JSON value",
        ),
        ("[1\n 2]", "doc.json:2: malformed JSON (Expecting ',' delimiter at column 2)"),
        (
            "[1, \u00a02]",
            "doc.json:1: malformed JSON (Expecting value at column 5)",
        ),  # no-break space: no JSON whitespace
        (
            '[{"a": 1},\n {"a": 1, "a": 2}]',
            "doc.json, field 'a': key 'a' appears twice in one object",
        ),
        ('[{"a": 1}, {"t": "\\ud800"}]', "doc.json, field '[1].t': string holds a lone surrogate"),
        ("[" + '{"a": ' * 64 + "1" + "}" * 64 + "]", "doc.json: JSON nested deeper than 64 levels"),
        ("[[" * 100_000, "doc.json: JSON nested deeper than 64 levels"),
        ("[NaN]", "doc.json: NaN is not a number JSON allows"),
    ],
)
def test_refused_as_read_json_refuses(tmp_path: Path, text: str, message: str) -> None:
    path = _doc(tmp_path, text)
    with pytest.raises(InputError) as listed:
        jsonio.read_json_list(path)
    with pytest.raises(InputError) as whole:
        jsonio.read_json(path)
    assert str(listed.value) == str(whole.value)
    assert message in str(listed.value).replace(str(tmp_path) + "/", "")


def test_elements_share_their_keys_as_one_parse_does(tmp_path: Path) -> None:
    records, _ = jsonio.read_json_list(_doc(tmp_path, json.dumps([{"claim": 1}, {"claim": 2}])))
    first, second = (next(iter(r)) for r in records)
    assert first == second == "claim" and first is second  # one string, not one a record


def test_a_record_line_names_its_rows_errors_and_ids(tmp_path: Path) -> None:
    records = [
        {"system": "s", "claim": "A.", "verdict": "supported"},
        {"system": "s", "claim": "B.", "verdict": "refuted"},
        {"system": "s", "claim": "C.", "verdict": "maybe"},
    ]
    text = "[\n" + ",\n\n".join(json.dumps(r) for r in records) + "\n]\n"  # lines 2, 4, 6
    path = _doc(tmp_path, text.replace('"maybe"', '"refuted"'))
    traces = get_adapter("generic").read([path], AdapterOptions(extra={"ids": "line"})).traces
    assert [t.claim_id for t in traces] == ["L2", "L4", "L6"]
    path = _doc(tmp_path, text)
    with pytest.raises(InputError) as info:
        get_adapter("generic").read([path], AdapterOptions(extra={"ids": "line"}))
    assert (info.value.line, info.value.field) == (6, "verdict")
