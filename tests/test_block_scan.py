"""Trace JSONL read a block at a time, the quotes counted once per read (issue 30).

``metrics`` on a foreign JSONL file (bench scale-1, 120,000 lines, 675 MB) counted the quotes
of every line (``bytes.count``: the duplicate-key check of
:func:`~failcodes.jsonio.keys_vouched`) after reading it with its own ``readline``. Now
:func:`~failcodes.jsonio.byte_blocks` reads 64 kB at a time, numpy counts the read's quotes,
and :meth:`Voucher.lines <failcodes.tracelines.Voucher.lines>` compares the count with the
quotes the records' keys and strings need: a line holds at least that many (more if a key is
repeated or a value null), so an equal sum vouches for every line, and a shortfall has each
line counted on its own. What must not change: the lines, the vouched records, and every
refusal (each line the line-at-a-time voucher refuses is refused; the error is the exact
reader's).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from failcodes import jsonio
from failcodes.errors import InputError
from failcodes.jsonio import byte_blocks, byte_lines
from failcodes.traceio import read_traces
from failcodes.tracelines import Voucher
from tests.cli_helpers import run_cli


def _trace(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "system": "bm25",
        "question_id": f"q{i}",
        "sentence_id": f"q{i}:s0",
        "claim_id": f"q{i}:s0:c0",
        "claim": f"Claim {i} " + "word " * 200,  # ~1 kB a line: several lines a 64 kB read
        "verdict": "refuted" if i % 3 == 0 else "supported",
        "passages": [
            {"passage_id": f"p{i}", "rank": 1, "text": "Aspirin reduces fever.", "score": 0.5},
            {"passage_id": f"p{i}b", "rank": 2, "text": "No effect.", "gold": False},
        ],
        **extra,
    }


def _line(i: int, **extra: Any) -> bytes:
    return json.dumps(_trace(i, **extra)).encode() + b"\n"


GOOD = _line(0)
#: A repeated key, no backslash: 2 more quotes than the record's keys and strings need.
DUPLICATE = GOOD.replace(b'"verdict": ', b'"verdict": "supported", "verdict": ', 1)
#: A null: its key's 2 quotes, and no field the record shows.
NULL = GOOD.replace(b'"verdict": ', b'"reasoning": null, "verdict": ', 1)
#: A repeated key in a line with a backslash (counted on its own, by keys).
ESCAPED_DUPLICATE = _line(1, reasoning="a \\ b").replace(
    b'"verdict": ', b'"verdict": "supported", "verdict": ', 1
)
#: What the strict reader refuses, msgspec too (the line goes to the exact reader).
STRICT = [
    GOOD.replace(b'"score": 0.5', b'"score": NaN'),
    GOOD.replace(b'"No effect."', b'"\\ud800"'),  # a lone surrogate
    GOOD.replace(b'"verdict": ', b'"extra": 1, "verdict": '),  # an unknown field
    GOOD.replace(b'"verdict": ', b'"extra": ' + b"[" * 600 + b"]" * 600 + b', "verdict": '),
]


def test_the_lines_a_block_vouches_for_are_those_the_line_voucher_does() -> None:
    lines = [_line(2), DUPLICATE, _line(3), NULL, ESCAPED_DUPLICATE, _line(4, reasoning="\\")]
    assert b"\\" in lines[5] and b"\\" not in DUPLICATE + NULL
    got = Voucher(rewritten=False).lines(lines, sum(line.count(b'"') for line in lines))
    # by hand: the duplicate, the null and the escaped duplicate refused; the rest vouched
    assert [g is None for g in got] == [False, True, False, True, True, False]
    alone = [Voucher(rewritten=False)(line) for line in lines]
    assert [g is None for g in alone] == [g is None for g in got]
    for a, b in zip(alone, got, strict=True):
        if a is not None:
            assert msgspec.structs.asdict(a) == msgspec.structs.asdict(b)


def test_a_block_of_good_lines_is_vouched_whole() -> None:
    lines = [_line(i) for i in range(5)]
    got = Voucher(rewritten=False).lines(lines, sum(line.count(b'"') for line in lines))
    assert all(g is not None for g in got)
    assert [g.claim_id for g in got] == [f"q{i}:s0:c0" for i in range(5)]
    # the count one short (a quote the records do not explain): every line counted alone
    assert all(g is not None for g in Voucher(rewritten=False).lines(lines, 0))


def test_byte_blocks_gives_the_lines_of_byte_lines_and_their_quotes(tmp_path: Path) -> None:
    long = b'{"a": "' + b"x" * (3 * jsonio._BLOCK) + b'"}\n'  # over three reads
    text = b"\xef\xbb\xbf" + GOOD + b"\n" + long + _line(5).replace(b"\n", b"\r\n") + b'{"b"}'
    path = tmp_path / "t.jsonl"
    path.write_bytes(text)
    with path.open("rb") as fh:
        lines = [raw for _, raw in byte_lines(fh, path)]
    with path.open("rb", buffering=0) as fh:
        blocks = list(byte_blocks(fh, path))
    assert [raw for block, _ in blocks for raw in block] == lines
    assert len(lines) == 5 and lines[2] == long and lines[4] == b'{"b"}'
    assert [q for _, q in blocks] == [sum(raw.count(b'"') for raw in b) for b, _ in blocks]


def test_a_line_too_long_is_refused_as_byte_lines_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonio, "MAX_LINE", 2 * jsonio._PIECE)  # (byte_lines reads 1 MB at once)
    path = tmp_path / "t.jsonl"
    path.write_bytes(GOOD + GOOD + b'{"a": "' + b"x" * (3 * jsonio._PIECE) + b'"}\n' + GOOD)
    with path.open("rb") as fh, pytest.raises(InputError) as by_line:
        list(byte_lines(fh, path))
    given: list[bytes] = []
    with path.open("rb", buffering=0) as fh, pytest.raises(InputError) as by_block:
        for block, _ in byte_blocks(fh, path):
            given.extend(block)
    assert str(by_block.value) == str(by_line.value)
    assert by_block.value.line == 3 and given == [GOOD, GOOD]


def _files(tmp_path: Path, line: bytes) -> tuple[Path, Path]:
    """Traces of 120 lines (~140 kB: three reads), line 101 ``line`` (made q100's); labels."""
    lines = [_line(i) for i in range(120)]
    lines[100] = line.replace(b'"q0', b'"q100')
    traces = tmp_path / "traces.jsonl"
    traces.write_bytes(b"".join(lines))
    assert traces.stat().st_size > 2 * jsonio._BLOCK
    labels = tmp_path / "labels.jsonl"
    rows = [{"sentence_id": f"q{i}:s0", "has_error": i % 3 == 0} for i in (1, 3, 100, 101)]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return traces, labels


def test_a_null_inside_a_block_is_read_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outs = []
    for name, line in (("null", NULL), ("plain", GOOD)):
        (tmp_path / name).mkdir()
        traces, labels = _files(tmp_path / name, line)
        outs.append(tmp_path / name / "m.json")
        args = ["metrics", "--traces", str(traces), "--labels", str(labels), "--bootstrap", "0"]
        assert run_cli([*args, "--format", "json", "-o", str(outs[-1])], capsys)[0] == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()


@pytest.mark.parametrize("bad", [DUPLICATE, ESCAPED_DUPLICATE, *STRICT])
def test_metrics_refuses_a_bad_line_inside_a_block_with_the_exact_readers_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: bytes
) -> None:
    traces, labels = _files(tmp_path, bad)
    with pytest.raises(InputError) as exact:
        read_traces(traces)
    assert exact.value.line == 101
    out = tmp_path / "m.json"
    code, _, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-o", str(out)], capsys
    )
    assert code == 2
    assert err.strip().splitlines() == [f"failcodes: error: {exact.value}"]
    assert not out.exists()


def test_a_line_the_block_refuses_counts_its_true_false_verdict_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two detector lines (true/false verdicts), the first with a null: the block's quote count
    # refuses it after its record was decoded, and the object reader reads (and counts) it.
    base = {"system": "A", "question_id": "q1", "claim": "x"}
    records = [
        {**base, "sentence_id": "s1", "claim_id": "a1", "reasoning": None, "verdict": "true"},
        {**base, "sentence_id": "s2", "claim_id": "a2", "verdict": "false"},
    ]
    traces = tmp_path / "t.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in records))
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        '{"question_id": "q1", "sentence_id": "s1", "has_error": true}\n'
        '{"question_id": "q1", "sentence_id": "s2", "has_error": false}\n'
    )
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"]
    code, _, err = run_cli(args, capsys)
    assert code == 0
    # by hand: 2 lines, 2 true/false verdicts
    assert err.strip() == (
        "2 verdict(s) true/false read as supported/refuted (true: the claim holds); if true "
        "marks an error, ingest the traces with --alias true=refuted --alias false=supported"
    )
