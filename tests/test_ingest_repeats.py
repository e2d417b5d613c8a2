"""A (system, claim_id) read twice by ``ingest generic``, found on 64-bit hashes in batches.

The stream keeps 8 bytes a trace (:class:`failcodes.ingest.repeats.KeyHashes`) instead of
every key with its line; a hash that repeats sends it back over the input for the keys
themselves. The errors are the ones a check row by row gives (the first repeat, where it
first appeared, before any later error of the input), whatever the batch boundaries; the
expected messages are written out by hand from the rows below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.errors import InputError
from failcodes.ingest import AdapterOptions, get_adapter, repeats, table
from failcodes.ingest.repeats import KeyHashes
from failcodes.traces import Trace

GENERIC = get_adapter("generic")


def _row(claim_id: str, system: str = "s", verdict: str = "supported") -> str:
    return json.dumps(
        {"system": system, "claim_id": claim_id, "claim": "X is Y.", "verdict": verdict}
    )


def _file(tmp_path: Path, rows: list[str], name: str = "t.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(r + "\n" for r in rows))
    return path


def _error(paths: list[Path], options: AdapterOptions | None = None) -> str:
    with pytest.raises(InputError) as info:
        list(GENERIC.open(paths, options or AdapterOptions()).each_trace())
    return str(info.value)


# SMALL: the settled hashes in a set (no numpy) up to 4096 in all, in numpy from the start
# (0), or in a set for the first batch and in numpy from the second (3)
@pytest.mark.parametrize("small", [repeats.SMALL, 0, 3])
def test_key_hashes_name_the_hashes_that_repeat(
    monkeypatch: pytest.MonkeyPatch, small: int
) -> None:
    monkeypatch.setattr(repeats, "SMALL", small)
    keys = KeyHashes(batch=3)
    assert [keys.add(h) for h in (5, -3, 5)] == [False, False, True]  # full at the third
    assert keys.settle() == {5}  # twice in one batch
    assert keys.settle() == frozenset()  # nothing pending
    keys.add(7)
    keys.add(-3)
    assert keys.settle() == {-3}  # seen in the first batch
    keys.add(2**63 - 1)
    keys.add(-(2**63) + 1)
    assert keys.settle() == frozenset()  # the extremes of a 64-bit hash, new
    keys.add(2**63 - 1)
    assert keys.settle() == {2**63 - 1}
    assert keys.count == 8


@pytest.mark.parametrize("batch", [1, 2, 3, 1000])
def test_the_first_repeat_and_its_first_line_whatever_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(repeats, "BATCH", batch)
    # c2 repeats at line 4 (first at line 2), c1 at line 5; line 6 has a bad verdict
    rows = [_row("c1"), _row("c2"), _row("c3"), _row("c2"), _row("c1"), _row("c4", verdict="?")]
    path = _file(tmp_path, rows)
    assert _error([path]) == (
        f"{path}:4, field 'claim_id': duplicate (system, claim_id) = ('s', 'c2'); first at line 2"
        "; the same claim of one sentence on two rows (the row twice, or a row per passage or "
        "per retriever?): give one row per claim, its passages a list (--map COLUMN=passages), "
        "or each retriever a system (--map retriever=system)"
    )


@pytest.mark.parametrize("batch", [1, 4, 1000])
def test_a_bad_row_after_the_last_check_comes_after_an_earlier_repeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(repeats, "BATCH", batch)
    path = _file(tmp_path, [_row("c1"), _row("c1"), _row("c2", verdict="maybe")])
    assert "t.jsonl:2, field 'claim_id': duplicate" in _error([path])
    # without the repeat, the bad verdict on line 3 is the error
    path = _file(tmp_path, [_row("c1"), _row("c0"), _row("c2", verdict="maybe")])
    assert f"{path}:3, field 'verdict'" in _error([path])


def test_a_repeat_in_the_second_file_names_the_first(tmp_path: Path) -> None:
    a = _file(tmp_path, [_row("c1"), _row("c2", system="t")], "a.jsonl")
    b = _file(tmp_path, [_row("c2"), _row("c2", system="t")], "b.jsonl")
    assert _error([a, b]) == (
        f"{b}:2, field 'claim_id': duplicate (system, claim_id) = ('t', 'c2'); first at {a}:2"
        "; a file per system under one system name? "
        "ingest each file apart with --system NAME"
    )


def test_rows_of_a_record_name_their_path_and_the_sentence_id_default(tmp_path: Path) -> None:
    record = {
        "q": "Q1",
        "sentences": [
            {
                "sid": "s1",
                "claims": [
                    {"claim": "A.", "verdict": "supported"},
                    {"claim": "B.", "verdict": "refuted"},
                ],
            }
        ],
    }
    path = _file(tmp_path, [json.dumps({"q": "Q0", "sentences": []}), json.dumps(record)])
    options = AdapterOptions(
        column_map={"q": ("question_id",), "sentences.sid": ("sentence_id",)},
        system="s",
        extra={"rows": "sentences[].claims[]"},
    )
    # both claims of line 2 take claim_id s1 from their sentence
    assert _error([path], options) == (
        f"{path}:2, field 'claim_id': duplicate (system, claim_id) = ('s', 's1'); first at "
        "line 2 (claim_id defaults to sentence_id: with several claims per sentence, --option "
        "ids=claim gives each claim its own id) (row sentences[0].claims[1])"
    )


def test_keys_sharing_a_hash_are_told_apart_on_the_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every key hashes alike: each batch goes back over the input, and only true repeats fail
    monkeypatch.setattr(table, "_key_hash", lambda trace: 42)
    monkeypatch.setattr(repeats, "BATCH", 2)
    path = _file(tmp_path, [_row(f"c{i}") for i in range(5)])
    traces = list(GENERIC.open([path], AdapterOptions()).each_trace())
    assert [t.claim_id for t in traces] == ["c0", "c1", "c2", "c3", "c4"]
    path = _file(tmp_path, [_row("c0"), _row("c1"), _row("c2"), _row("c1")])
    assert "duplicate (system, claim_id) = ('s', 'c1'); first at line 2;" in _error([path])


def test_an_input_that_changes_before_the_check_is_an_error(tmp_path: Path) -> None:
    path = _file(tmp_path, [_row("c1"), _row("c1")])
    stream = GENERIC.open([path], AdapterOptions()).each_trace()
    traces = iter(stream)
    got: list[Trace] = [next(traces), next(traces)]  # checked in batches: not yet refused
    assert [t.claim_id for t in got] == ["c1", "c1"]
    path.write_text(_row("c1") + "\n")  # one row left where two were read
    with pytest.raises(InputError) as info:
        next(traces)
    assert info.value.reason == (
        "a (system, claim_id) may repeat, but reading the input again gave 1 rows, not 2: "
        "did a file change while it was read?"
    )


@pytest.mark.parametrize("chunk", [1, 2, 1000])
@pytest.mark.parametrize("small", [0, 2])
def test_hashes_merged_in_place_stay_findable(
    monkeypatch: pytest.MonkeyPatch, chunk: int, small: int
) -> None:
    # each batch lands between, before and after the settled hashes; a merge that left them
    # out of order would hide a repeat from the binary search of a later batch (small=2: the
    # first pair settled in a set, moved to numpy at the second)
    monkeypatch.setattr(repeats, "CHUNK", chunk)
    monkeypatch.setattr(repeats, "SMALL", small)
    keys = KeyHashes(batch=2)
    for pair in ((10, 30), (20, 40), (5, 35), (-7, 50)):
        keys.add(pair[0])
        keys.add(pair[1])
        assert keys.settle() == frozenset()
    for h in (-7, 5, 10, 20, 30, 35, 40, 50):
        keys.add(h)
        assert keys.settle() == {h}
    keys.add(25)
    keys.add(25)
    assert keys.settle() == {25}
    assert keys.count == 18  # 4 pairs, 8 single repeats, 25 twice
