"""Session 27 (t27disag): ``disagreements`` of trace JSONL written as the claims' lines come.

Issue 30: ``disagreements`` from a foreign JSONL file was 1.64x the strict stdlib parse of the
file (5.29 against 3.23 CPU-s, bench_engine at load ~6); a third of it went to storing every
needed claim's JSON pieces in a scratch file and reading them back per disagreement, and to
counting each line's keys by walking its passages. Each mapping's disagreements whose claims
come in file order are now written as the pieces come (the first mapping's into the output,
each other's into a file appended to it), and a block of lines has its keys counted at once.
The bytes must stay the stream's: every test compares with it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from failcodes import disagreementio, disagreementsql
from failcodes.tracelines import Voucher
from tests.cli_helpers import exit_code, write_jsonl


def _trace(system: str, q: str, s: int, c: int, verdict: str, **extra: Any) -> dict[str, Any]:
    sid = f"{q}:s{s}"
    return {
        "system": system,
        "question_id": q,
        "sentence_id": sid,
        "claim_id": f"{sid}:c{c}",
        "claim": f"claim {c} of {sid}",
        "verdict": verdict,
        "retriever": "bm25",
        "passages": [
            {"passage_id": f"{sid}:c{c}:p1", "rank": 1, "text": "a", "score": 0.5},
            {"passage_id": f"{sid}:c{c}:p2", "rank": 2, "text": "b", "score": 0.25},
        ],
        **extra,
    }


#: Two systems, two questions; by hand, with the labels below (q1:s0 error, q1:s1 none,
#: q2:s0 none, q2:s9 error and claimed by no system):
#: - refuted: a q1:s0 FN (no claim refuted), a q2:s9 FN (no claim), b q1:s0 FN,
#:   b q1:s1 FP (c0 refuted), b q2:s9 FN  -> 5
#: - non_supported: a q1:s0 FN, a q1:s1 FP (c1 no_evidence), a q2:s9 FN, b q1:s0 FN,
#:   b q1:s1 FP, b q2:s0 FP (ambiguous), b q2:s9 FN  -> 7
#: - refuted+no_evidence: a q1:s0 FN, a q1:s1 FP, a q2:s9 FN, b q1:s0 FN, b q1:s1 FP,
#:   b q2:s9 FN  -> 6
ROWS = [
    _trace("a", "q1", 0, 0, "supported", sentence="the first sentence"),
    _trace("a", "q1", 0, 1, "supported"),
    _trace("a", "q1", 1, 0, "supported"),
    _trace("a", "q1", 1, 1, "no_evidence"),
    _trace("a", "q2", 0, 0, "supported"),
    _trace("b", "q1", 0, 0, "supported"),
    _trace("b", "q1", 1, 0, "refuted", raw_verdict="REFUTES"),
    _trace("b", "q2", 0, 0, "ambiguous"),
]
LABELS = [
    {"sentence_id": "q1:s0", "has_error": True, "rationale": "wrong dose", "annotator": "md"},
    {"sentence_id": "q1:s1", "has_error": False, "severity": "Mild"},
    {"sentence_id": "q2:s0", "has_error": False},
    {"question_id": "q2", "sentence_id": "q2:s9", "has_error": True, "sentence": "unclaimed"},
]
MAPPINGS = ["refuted", "non_supported", "refuted+no_evidence"]
#: (mapping, system, sentence, kind) in output order, by hand (see ROWS)
EXPECTED = [
    ("refuted", "a", "q1:s0", "FN"),
    ("refuted", "a", "q2:s9", "FN"),
    ("refuted", "b", "q1:s0", "FN"),
    ("refuted", "b", "q1:s1", "FP"),
    ("refuted", "b", "q2:s9", "FN"),
    ("non_supported", "a", "q1:s0", "FN"),
    ("non_supported", "a", "q1:s1", "FP"),
    ("non_supported", "a", "q2:s9", "FN"),
    ("non_supported", "b", "q1:s0", "FN"),
    ("non_supported", "b", "q1:s1", "FP"),
    ("non_supported", "b", "q2:s0", "FP"),
    ("non_supported", "b", "q2:s9", "FN"),
    ("refuted+no_evidence", "a", "q1:s0", "FN"),
    ("refuted+no_evidence", "a", "q1:s1", "FP"),
    ("refuted+no_evidence", "a", "q2:s9", "FN"),
    ("refuted+no_evidence", "b", "q1:s0", "FN"),
    ("refuted+no_evidence", "b", "q1:s1", "FP"),
    ("refuted+no_evidence", "b", "q2:s9", "FN"),
]


def _disagreements(traces: Path, labels: Path, out: Path) -> bytes:
    maps = [x for m in MAPPINGS for x in ("-m", m)]
    assert exit_code("disagreements", "--traces", traces, "--labels", labels, "-o", out, *maps) == 0
    return out.read_bytes()


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records each time the stream writes the file (the engine's path declined)."""
    calls: list[bool] = []
    stream = disagreementio.stream_disagreements

    def counted(*args: Any, **kwargs: Any) -> int:
        calls.append(True)
        return stream(*args, **kwargs)

    monkeypatch.setattr(disagreementio, "stream_disagreements", counted)
    return calls


def _keys(got: bytes) -> list[tuple[str, str, str, str]]:
    lines = [json.loads(x) for x in got.splitlines()]
    return [(d["mapping"], d["system"], d["sentence_id"], d["kind"]) for d in lines]


def test_jsonl_lines_in_file_order_are_written_as_their_claims_come(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[bool]
) -> None:
    traces = write_jsonl(tmp_path / "t.jsonl", ROWS)
    labels = write_jsonl(tmp_path / "labels.jsonl", LABELS)

    got = _disagreements(traces, labels, tmp_path / "in-order.jsonl")
    assert streamed == []  # the lines read again, not the stream
    assert _keys(got) == EXPECTED  # 5 + 7 + 6 = 18, by hand (see ROWS)
    # the mappings' files appended in their order, none left beside the output
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["in-order.jsonl", "labels.jsonl", "t.jsonl"]
    lines = [json.loads(x) for x in got.splitlines()]
    assert lines[3]["error_claim_ids"] == ["q1:s1:c0"]  # b q1:s1 under refuted
    assert lines[3]["claims"][0]["raw_verdict"] == "REFUTES"
    assert lines[0]["sentence"] == "the first sentence"  # its first claim's text
    assert lines[1]["sentence"] == "unclaimed" and lines[1]["claims"] == []  # the label's
    monkeypatch.setattr(disagreementsql, "applies", lambda *args: False)
    assert _disagreements(traces, labels, tmp_path / "stream.jsonl") == got  # the stream's bytes
    assert streamed == [True]


def test_jsonl_lines_out_of_file_order_are_stored_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[bool]
) -> None:
    # system b's lines first: each mapping's disagreements (a before b) are not in file order
    # (since session 28 the same writer as in file order: tests/test_s28_t28disag.py)
    traces = write_jsonl(tmp_path / "t.jsonl", ROWS[5:] + ROWS[:5])
    labels = write_jsonl(tmp_path / "labels.jsonl", LABELS)
    in_order: list[bool] = []
    write_lines = disagreementsql._write_lines

    def counted(*args: Any) -> int:
        in_order.append(True)
        return write_lines(*args)

    monkeypatch.setattr(disagreementsql, "_write_lines", counted)
    got = _disagreements(traces, labels, tmp_path / "stored.jsonl")
    assert (streamed, in_order) == ([], [True])  # the one writer, not the stream
    assert _keys(got) == EXPECTED  # the output's order is the sentences', not the file's
    monkeypatch.setattr(disagreementsql, "applies", lambda *args: False)
    assert _disagreements(traces, labels, tmp_path / "stream.jsonl") == got


def test_a_block_of_clean_lines_has_its_keys_counted_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vouch = Voucher(rewritten=False)
    walked: list[bool] = []
    keys = Voucher.keys

    def counted(self: Voucher, rec: Any) -> Any:
        walked.append(True)
        return keys(self, rec)

    monkeypatch.setattr(Voucher, "keys", counted)
    bodies = [json.dumps(r).encode() for r in ROWS]
    got = vouch.lines(bodies, sum(b.count(b'"') for b in bodies))
    assert [r.claim_id for r in got] == [r["claim_id"] for r in ROWS]
    assert walked == []  # no line's passages walked on its own
    # a repeated key, a padded id, a repeated rank: those lines (and only those) refused,
    # each line then counted on its own
    dup = bodies[1][:-1] + b', "claim": "again"}'
    padded = bodies[2].replace(b'"q1:s1:c0"', b'" q1:s1:c0"')
    ranks = bodies[3].replace(b'"rank": 2', b'"rank": 1')
    mixed = [bodies[0], dup, padded, ranks, bodies[4]]
    got = vouch.lines(mixed, sum(b.count(b'"') for b in mixed))
    assert [r is not None for r in got] == [True, False, False, False, True]
    assert len(walked) == 5


def test_each_sentences_label_is_looked_up_once_and_lines_are_gathered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from failcodes import labels as labels_module

    traces = write_jsonl(tmp_path / "t.jsonl", ROWS)
    labels = write_jsonl(tmp_path / "labels.jsonl", LABELS)
    looked: list[str] = []
    sentence_fields = labels_module.LabelIndex.sentence_fields

    def counted(self: Any, sentence_id: str, names: Any) -> Any:
        looked.append(sentence_id)
        return sentence_fields(self, sentence_id, names)

    monkeypatch.setattr(labels_module.LabelIndex, "sentence_fields", counted)
    calls: list[int] = []
    writev = os.writev

    def gathered(fd: int, parts: Any) -> int:
        calls.append(len(parts))
        return writev(fd, parts)

    monkeypatch.setattr(os, "writev", gathered)
    got = _disagreements(traces, labels, tmp_path / "out.jsonl")
    assert _keys(got) == EXPECTED
    # 18 disagreements of 4 labelled sentences (2 systems x 3 mappings each at most): one
    # look-up a sentence, not one a disagreement
    assert sorted(looked) == ["q1:s0", "q1:s1", "q2:s0", "q2:s9"]
    # one writev a mapping's file (each under 1 MB and 1,024 parts), no line joined first;
    # a line with n claims is 3 + 6n - 1 + 3 parts (no claim: 6), so (claims per line):
    # refuted a q1:s0 (2) 17, a q2:s9 6, b q1:s0 (1) 11, b q1:s1 (1) 11, b q2:s9 6 = 51;
    # non_supported 17, a q1:s1 (2) 17, 6, 11, 11, b q2:s0 (1) 11, 6 = 79;
    # refuted+no_evidence 17, 17, 6, 11, 11, 6 = 68
    assert sorted(calls) == [51, 68, 79]


def test_a_mappings_file_is_appended_whole_where_the_kernel_copy_stops_or_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head, tail = tmp_path / "head.jsonl", tmp_path / "tail.jsonl"
    copy = os.copy_file_range

    def one_byte_then_fail(src: int, dst: int, count: int, at: int) -> int:
        if at == 0:
            return copy(src, dst, 1, at)  # the kernel copies b"d", then gives up
        raise OSError(18, "Invalid cross-device link")

    for copier in (one_byte_then_fail, None):
        head.write_bytes(b'{"a": 1}\nabc')
        tail.write_bytes(b"defg\n")
        if copier is None:  # a system without copy_file_range (not Linux)
            monkeypatch.delattr(os, "copy_file_range")
        else:
            monkeypatch.setattr(os, "copy_file_range", copier)
        with head.open("r+b", buffering=0) as out:  # (since session 28: not "ab", which
            out.seek(0, os.SEEK_END)  # the kernel's copy refuses)
            disagreementsql._append(out, tail, [(0, 5)])
        assert head.read_bytes() == b'{"a": 1}\nabcdefg\n'  # 12 + 5 bytes, in order
