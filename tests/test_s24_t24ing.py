"""Issue 30, session 24: ``ingest generic``'s per-sentence checks kept as hashes, in batches.

A sentence id given two texts (``_one_text``) or two verifiers (``_one_verifier``) is refused;
the stream kept a dict of packed ints per (system, question, sentence) for the whole file to
tell (~220 bytes a sentence: the traces ingest peaked at 366 MB at 10x paper scale, 2.02x its
1x peak). Now each sentence's text and verifier hashes are recorded once a run of its rows
(:class:`failcodes.ingest.repeats.KeyValues`, 16 bytes a sentence) and settled in batches, the
input read again only to name a conflict. The errors are the ones a check row by row gives
(the first row at fault, where its sentence first appeared, before any later error); the
expected lines and messages are written out by hand from the rows below.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from failcodes.errors import InputError
from failcodes.ingest import AdapterOptions, get_adapter, repeats
from failcodes.ingest.repeats import KeyValues

GENERIC = get_adapter("generic")

_TEXT_TAIL = (
    ": two sentences with one id would be one, their claims pooled; give each sentence its "
    "own id (ids repeated across sub-sets of the data: map the sub-set into the ids, or "
    "ingest each sub-set apart)"
)
_VERIFIER_TAIL = (
    ": two pipelines under one system name, their claims pooled into one sentence; give each "
    "its own system: --map verifier=system beside --map verifier=verifier (a system column "
    "kept: --map system=retriever, or --map system=)"
)


def _row(
    claim_id: str,
    sentence_id: str,
    sentence: str,
    *,
    verifier: str = "gpt",
    verdict: str = "supported",
) -> dict[str, Any]:
    return {
        "system": "s",
        "question_id": "q1",
        "sentence_id": sentence_id,
        "claim_id": claim_id,
        "claim": f"claim {claim_id}",
        "sentence": sentence,
        "verdict": verdict,
        "verifier": verifier,
    }


def _file(tmp_path: Path, rows: list[dict[str, Any]], name: str = "t.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _read(paths: list[Path]) -> list[Any]:
    return list(GENERIC.open(paths, AdapterOptions()).each_trace())


def test_key_values_name_the_keys_given_another_value(monkeypatch: pytest.MonkeyPatch) -> None:
    # by hand: key 5 first 10; -3 first 1; 7 first 2; a key's value compared with its first
    for small in (repeats.SMALL, 0, 2):  # in a dict; in numpy from the start; from batch 2
        monkeypatch.setattr(repeats, "SMALL", small)
        values = KeyValues(batch=3)
        assert [values.add(k, v) for k, v in ((5, 10), (-3, 1), (5, 10))] == [False, False, True]
        assert values.settle() == frozenset()  # 5 again with its first value
        assert values.settle() == frozenset()  # nothing pending
        values.add(5, 11)  # another value than its first (10)
        values.add(7, 2)
        values.add(7, 3)  # two values within one batch
        assert values.settle() == {5, 7}
        values.add(-3, 1)
        values.add(2**63 - 1, -(2**63))  # the extremes of a 64-bit hash
        assert values.settle() == frozenset()
        values.add(5, 10)  # its first value again: no conflict, whatever came between
        values.add(2**63 - 1, 0)
        values.add(-3, 9)
        assert values.settle() == {2**63 - 1, -3}
        assert values.count == 11


# rows of one system 's', question 'q1'; (rows, the expected error by hand)
_CASES: dict[str, tuple[list[dict[str, Any]], str]] = {
    # s1 given "C." at line 3 (first "A." at line 1), c1 repeated at line 4: the text first
    "text-before-a-repeat": (
        [
            _row("c1", "s1", "A."),
            _row("c2", "s2", "B."),
            _row("c3", "s1", "C."),
            _row("c1", "s3", "D."),
        ],
        "{t}:3, field 'sentence': sentence 's1' of question 'q1' (system 's') has another text "
        "here than at line 1" + _TEXT_TAIL,
    ),
    # line 3 repeats c1 (claim, question and sentence id as at line 1) and gives s1 another
    # text: the repeat is checked first, row by row
    "a-repeat-and-a-text-on-one-row": (
        [_row("c1", "s1", "A."), _row("c2", "s2", "B."), _row("c1", "s1", "C.")],
        "{t}:3, field 'claim_id': duplicate (system, claim_id) = ('s', 'c1'); first at line 1; "
        "the same claim of one sentence on two rows (the row twice, or a row per passage or "
        "per retriever?): give one row per claim, its passages a list (--map COLUMN=passages), "
        "or each retriever a system (--map retriever=system)",
    ),
    # line 3: s1 checked by llama (gpt at line 1) and c1 repeated: the verifier first
    "a-verifier-and-a-repeat-on-one-row": (
        [_row("c1", "s1", "A."), _row("c2", "s2", "B."), _row("c1", "s1", "A.", verifier="llama")],
        "{t}:3, field 'verifier': sentence 's1' of question 'q1' (system 's') was checked by "
        "verifier 'llama' here and by another at line 1" + _VERIFIER_TAIL,
    ),
    # s2 given another verifier at line 4, after s1's runs (lines 1-2, 3 with another
    # claim), then a bad verdict at line 5: the verifier first
    "a-verifier-before-a-bad-row": (
        [
            _row("c1", "s1", "A."),
            _row("c2", "s1", "A."),
            _row("c3", "s2", "B."),
            _row("c4", "s2", "B.", verifier="llama"),
            _row("c5", "s3", "E.", verdict="maybe?"),
        ],
        "{t}:4, field 'verifier': sentence 's2' of question 'q1' (system 's') was checked by "
        "verifier 'llama' here and by another at line 3" + _VERIFIER_TAIL,
    ),
    # s1 read again after s2 with its text in another case and spacing (one text, folded),
    # then with another: the line of s1's first row named, not of its second run
    "a-text-after-a-folded-one": (
        [
            _row("c1", "s1", "Statins lower LDL."),
            _row("c2", "s2", "B."),
            _row("c3", "s1", "statins  lower LDL."),
            _row("c4", "s1", "Statins raise HDL."),
        ],
        "{t}:4, field 'sentence': sentence 's1' of question 'q1' (system 's') has another text "
        "here than at line 1" + _TEXT_TAIL,
    ),
}


@pytest.mark.parametrize("small", [repeats.SMALL, 0])
@pytest.mark.parametrize("batch", [1, 2, 3, 1000])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_a_sentences_second_text_or_verifier_is_the_first_error_whatever_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, batch: int, small: int
) -> None:
    monkeypatch.setattr(repeats, "BATCH", batch)
    monkeypatch.setattr(repeats, "SMALL", small)
    named: list[frozenset[int]] = []  # what the hashes named: found on them, not row by row
    settle = KeyValues.settle

    def spied(self: KeyValues) -> frozenset[int]:
        named.append(settle(self))
        return named[-1]

    monkeypatch.setattr(KeyValues, "settle", spied)
    rows, expected = _CASES[case]
    path = _file(tmp_path, rows)
    with pytest.raises(InputError) as info:
        _read([path])
    assert str(info.value) == expected.format(t=path)
    if "field 'claim_id'" not in expected:  # a text's or a verifier's: named on its hashes
        assert any(named)


def test_a_sentence_in_two_files_is_said_before_its_second_text(tmp_path: Path) -> None:
    # s1 of 's' in a.jsonl ("A.") and in b.jsonl ("B."): the sentence split over two files
    # is refused before the text is compared (row by row: the file check comes first)
    a = _file(tmp_path, [_row("c1", "s1", "A.")], "a.jsonl")
    b = _file(tmp_path, [_row("c2", "s1", "B.")], "b.jsonl")
    with pytest.raises(InputError) as info:
        _read([a, b])
    assert str(info.value).startswith(f"{b}:1, field 'sentence_id': ")
    assert "has another text" not in str(info.value)


def test_sentences_read_again_with_their_text_or_a_folded_one_pass(tmp_path: Path) -> None:
    # s1 and s2 interleaved, s1 again in another case (one text, folded): 4 traces, no error
    rows = [
        _row("c1", "s1", "A b."),
        _row("c2", "s2", "B."),
        _row("c3", "s1", "a  B."),
        _row("c4", "s2", "B."),
    ]
    assert [t.claim_id for t in _read([_file(tmp_path, rows)])] == ["c1", "c2", "c3", "c4"]


def test_the_sentence_checks_hold_bytes_a_sentence_not_a_dict(tmp_path: Path) -> None:
    # 20,000 sentences of one row each, with a text and a verifier, traced at the last trace
    # (the stream suspended before its end): with main's two dicts 4,678,749 bytes (~234 a
    # sentence); the hashes pending hold 16 bytes a sentence each and the keys 8 a row, 40
    # in all (1,103,104 bytes traced: 55 a sentence, with the arrays' spare room)
    n = 20_000
    path = tmp_path / "t.jsonl"
    with path.open("w") as fh:
        for s in range(n):
            fh.write(json.dumps(_row(f"c{s}", f"s{s}", f"Sentence {s}.")) + "\n")
    stream = iter(GENERIC.open([path], AdapterOptions()).each_trace())
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for count, _ in enumerate(stream, start=1):
            if count == n:
                held = tracemalloc.get_traced_memory()[0] - base
                break
    finally:
        tracemalloc.stop()
    assert held < 100 * n, f"{held:,} bytes held for {n:,} sentences"


class _Unit:
    """An annotation as :meth:`CodeIndex.add` reads it, under another unit id."""

    __slots__ = ("code_sets", "codebook", "coder", "coder_kind", "codes", "status", "unit_id")
    __slots__ += ("unit_kind",)

    def __init__(self, ann: Any, uid: str) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(ann, name))
        self.unit_id = uid


def test_the_code_index_sorts_its_units_keeping_one_copy() -> None:
    # attribute's peak at 10x paper scale (252 MB, 1.56x its 1x peak): the sort of the
    # retrieval units' index (209,628 units at 1x, ~2.1M at 10x) copied the ids and their
    # record numbers, sorted them, and kept a second copy. 100,000 units (12 bytes each as
    # added, 1.2 MB), traced over that at the first lookup: main's attribution.py peaked
    # 3,775,894 bytes above and kept 1,200,576 more; sorted from views of the arrays, which
    # are then let go: 2,001,385 above at the sort, -74,407 kept (one sorted copy)
    from failcodes.annotations import Annotation, CoderKind, Status
    from failcodes.attribution import CodeIndex
    from failcodes.codebook import bundled
    from failcodes.units import UnitKind

    codebook = bundled()
    ann = Annotation(
        unit_id="0" * 16,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=codebook.ref(),
        coder="x",
        coder_kind=CoderKind.LLM,
        status=Status.UNSCORED,
        reason="invalid",
        codes={},
    )
    n = 100_000
    index = CodeIndex(codebook, UnitKind.RETRIEVAL)
    index.add(ann)  # (its record made once: the others share it)
    for k in range(1, n):
        index.add(_Unit(ann, f"{k * 0x9E3779B97F4A7C15 % 2**64:016x}"))  # type: ignore[arg-type]
    tracemalloc.start()
    try:
        index._settle()
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        assert index.get(f"{3 * 0x9E3779B97F4A7C15 % 2**64:016x}") is not None
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert index.get("f" * 16) is None
    assert len(index) == n
    assert peak - before < 28 * n, f"{peak - before:,} bytes at the sort"
    assert kept - before < 6 * n, f"{kept - before:,} bytes kept"
