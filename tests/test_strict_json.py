"""The strict JSON parser every file reader goes through (issue 16: inputs accepted silently).

Each case is an input the standard library's :func:`json.loads` accepts (or crashes on with
something other than a clean error) and :func:`failcodes.jsonio.parse_json` refuses with one
line naming the file, the line and, where there is one, the field.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from failcodes import jsonio, traceio
from failcodes.errors import InputError
from failcodes.jsonio import MAX_JSON_DEPTH, parse_json

TRACE = (
    '{"system":"s","question_id":"q","sentence_id":"s1","claim_id":"c1","claim":"x",'
    '"verdict":"supported","passages":[%s]}'
)


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        ('{"a": 1, "a": 2}', "a", "key 'a' appears twice"),
        ('{"x": {"b": 1, "c": 2, "b": 3}}', "b", "key 'b' appears twice"),
        ('{"x": NaN}', None, "NaN is not a number JSON allows"),
        ('{"x": Infinity}', None, "Infinity is not a number JSON allows"),
        ('{"x": -Infinity}', None, "-Infinity is not a number JSON allows"),
        ('{"x": 1e999}', None, "overflows to infinity"),
        ('{"x": -2.5E400}', None, "overflows to infinity"),
        ('{"t": "\\ud800"}', "t", "lone surrogate"),
        ('{"p": [{"t": "ok"}, {"t": "a\\uDFFFb"}]}', "p[1].t", "lone surrogate"),
        ('{"\\udc00": 1}', "\udc00", "lone surrogate"),
        ("[" * 200_000, None, f"nested deeper than {MAX_JSON_DEPTH} levels"),
        ('{"a": ' * 65 + "1" + "}" * 65, None, "nested deeper than"),
        ("1" * 5000, None, "4300 digits"),
        ('{"a": 1', None, "malformed JSON"),
    ],
)
def test_refused_with_line_and_field(text: str, field: str | None, reason: str) -> None:
    started = time.perf_counter()
    with pytest.raises(InputError) as info:
        parse_json(text, path="in.jsonl", line=7)
    assert time.perf_counter() - started < 1.0
    err = info.value
    assert (err.path, err.line, err.field) == ("in.jsonl", 7, field)
    assert reason in err.reason
    assert "\n" not in err.one_line()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"ok": "\\ud83d\\ude00"}', {"ok": "\U0001f600"}),  # a valid surrogate pair
        ('{"s": "[[[[{{{{' + "[" * 100 + '"}', {"s": "[[[[{{{{" + "[" * 100}),  # in a string
        ('{"a": ' * 64 + "1" + "}" * 64, None),  # exactly the limit
        ('{"x": 1.5e308, "y": -0.0}', {"x": 1.5e308, "y": -0.0}),
        ('{"a": {"k": 1}, "b": {"k": 2}}', {"a": {"k": 1}, "b": {"k": 2}}),  # same key, 2 objects
    ],
)
def test_accepted(text: str, expected: object) -> None:
    value = parse_json(text)
    if expected is not None:
        assert value == expected
    assert value == json.loads(text)


def test_whole_document_reports_the_line_of_a_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text('{\n  "a": 1,\n  "b": ,\n}\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        jsonio.read_json(path)
    assert info.value.line == 3


def test_jsonl_reader_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = TRACE % '{"passage_id":"p1","rank":1,"text":"a"}'
    path.write_text(good + "\n\n" + good.replace('"c1"', '"c2", "claim_id": "c3"') + "\n")
    with pytest.raises(InputError) as info:
        traceio.read_traces(path)
    assert (info.value.line, info.value.field) == (3, "claim_id")


def test_duplicate_passage_ranks_refused_in_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    passages = '{"passage_id":"p1","rank":2,"text":"a"},{"passage_id":"p2","rank":2,"text":"b"}'
    path.write_text(TRACE % passages + "\n")
    with pytest.raises(InputError) as info:
        traceio.read_traces(path)
    assert info.value.one_line() == (
        f"{path}:1, field 'passages': rank 2 appears twice; ranks must be unique (two "
        "retrievers' rankings in one list? rank them as one list, or give each retriever's "
        "traces a system of its own)"
    )


def test_nan_score_refused_in_csv(tmp_path: Path) -> None:
    traces = tmp_path / "t.csv"
    traces.write_text(
        "system,question_id,sentence_id,claim_id,claim,verdict\ns,q,s1,c1,x,supported\n"
    )
    (tmp_path / "t.passages.csv").write_text(
        "system,claim_id,passage_id,rank,text,score\ns,c1,p1,1,a,nan\n"
    )
    with pytest.raises(InputError) as info:
        traceio.read_traces(traces)
    assert (info.value.line, info.value.field) == (2, "score")


def test_peek_returns_none_for_strict_failures(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": 1, "a": 2}\n')
    assert jsonio.peek_jsonl(path) is None


def test_peek_reads_past_a_bom(tmp_path: Path) -> None:
    # the readers accept a BOM; the sniffer did not, so a disagreements file saved by an
    # editor that adds one was read as traces ('claim_id' missing on line 1)
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"kind": "FN", "claims": []}\n')
    assert jsonio.peek_jsonl(path) == {"kind": "FN", "claims": []}


# Each line's decoded record (a fast reader keeps the last of two equal keys) shows one key,
# "a"; ``strings`` is 1 when that value is text. Quote counts worked by hand.
@pytest.mark.parametrize(
    ("line", "strings", "vouched"),
    [
        # no backslash: 4 quotes = 2 * (1 key + 1 string)
        (b'{"a": "y"}', 1, True),
        # a duplicate, no backslash: 8 quotes != 4
        (b'{"a": "x", "a": "y"}', 1, False),
        # an escaped quote: 6 quotes != 4, so keys are counted: one '"a":', nothing else
        ('{"a": "say \\"hi\\""}', 1, True),
        # a duplicate with a backslash: '"a":' twice, no '\\":', 2 keys != 1
        (b'{"a": "x\\"", "a": "y"}', 1, False),
        # an escaped quote before a colon inside the value: '"[ ]*:' matches '"a":' and
        # '\\":', the escaped-quote pattern matches '\\":' once: 2 - 1 = 1 key
        (b'{"a": "x\\": y"}', 1, True),
        ('{"a": "x\\" : y", "a": "z"}', 1, False),  # the same, duplicated: 3 - 1 = 2 keys
        # keys alone (no string count given): '"a" :' with a blank counts as a key
        (b'{"a" : 1}', None, True),
        (b'{"a" : 1, "a": 2}', None, False),
        # a line break before a colon is JSON whitespace too (a journal row is not a line):
        # with a backslash elsewhere, '"a"\n:' went uncounted: only '"a":' was, 1 key, and the
        # duplicate was vouched for (redteam5); now '"a"\n:' and '"a":' are 2 keys != 1
        (b'{"a"\n: "x\\u0041", "a": "y"}', 1, False),
        (b'{"a"\r\n: "x\\u0041"}', 1, True),
    ],
)
def test_keys_vouched_counts_keys_a_fast_reader_may_drop(
    line: bytes | str, strings: int | None, vouched: bool
) -> None:
    assert jsonio.keys_vouched(line, 1, strings) is vouched
