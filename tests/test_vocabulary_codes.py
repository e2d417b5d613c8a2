"""labels.vocabulary_codes: ids in any order are found with one string comparison each.

Issue 30. Every id was a binary search over the sorted vocabulary (~14 string comparisons
at 10,000 sentences): 139 M instructions of ``metrics`` on bench scale-1's own Parquet
(10,000 labels matched 5 times). The previous id's code and the next were then looked at
first, which only ids in the vocabulary's order find; since session 34 each id is found by
its hash and one comparison, in any order (at 100x paper scale, 1M labels in an order not
the vocabulary's: 1.7-2.5 CPU-s a call by binary search, 0.7 by hash).
"""

from __future__ import annotations

import pytest

from failcodes.labels import vocabulary_codes


class _Counted(str):
    """A string that counts the comparisons made with it (its reflected ones too)."""

    made = 0

    def __eq__(self, other: object) -> bool:
        _Counted.made += 1
        return str.__eq__(self, other)

    def __lt__(self, other: str) -> bool:
        _Counted.made += 1
        return str.__lt__(self, other)

    def __gt__(self, other: str) -> bool:
        _Counted.made += 1
        return str.__gt__(self, other)

    __hash__ = str.__hash__


def test_ids_in_sorted_order_take_one_comparison() -> None:
    vocab = [f"q{i:04d}:s0" for i in range(1000)]
    ids = [_Counted(v) for v in vocab]
    _Counted.made = 0
    assert vocabulary_codes(vocab, ids, len(ids)).tolist() == list(range(1000))
    # each id: the string of its hash equal (1); before: a search each, 10,978 comparisons,
    # then vocab[i - 1] not, vocab[i] equal (1 + 2 * 999)
    assert _Counted.made == 1000


def test_ids_in_an_order_not_the_vocabularys_take_one_comparison() -> None:
    # 100x paper scale's labels: copy k's ids 'q0000:s0~k', 'q0001:s0~k', ... sit 10 apart
    # in the sorted vocabulary (copies ~0..~9), so neither the previous id's code nor the
    # next was theirs: a binary search each (main: 4,000+ comparisons for these 400 ids)
    vocab = sorted(f"q{i:04d}:s0~{k}" for k in range(10) for i in range(40))
    ids = [_Counted(f"q{i:04d}:s0~{k}") for k in range(10) for i in range(40)]
    want = [vocab.index(i) for i in ids]
    _Counted.made = 0
    assert vocabulary_codes(vocab, ids, len(ids)).tolist() == want
    assert _Counted.made == len(ids)


def test_ids_in_any_order_get_their_codes() -> None:
    vocab = ["a", "b", "c", "e"]
    ids = ["c", "c", "e", None, "a", "d", "b", "z", "c", ""]
    # positions in vocab by hand; d, z and the empty id are absent, None is no id
    assert vocabulary_codes(vocab, ids, len(ids)).tolist() == [2, 2, 3, -1, 0, -1, 1, -1, 2, -1]
    assert vocabulary_codes([], ["a"], 1).tolist() == [-1]


def test_ids_whose_hashes_collide_are_found_by_a_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each id's position in the sorted vocabulary, -1 for an id in none or None
    from failcodes import labels

    vocabulary = ["a~0", "a~1", "a~10", "b~0", "b~1", "c"]
    ids = ["b~1", "a~0", None, "a~10", "zz", "c", "a~1", "b~0", "a~1", ""]
    want = [4, 0, -1, 2, -1, 5, 1, 3, 1, -1]  # by hand
    assert labels.vocabulary_codes(vocabulary, ids, len(ids)).tolist() == want
    # every string of one hash (a collision): the binary search finds each the same
    monkeypatch.setattr(labels, "_id_hash", lambda _: 7)
    assert labels.vocabulary_codes(vocabulary, ids, len(ids)).tolist() == want
    monkeypatch.setattr(labels, "_id_hash", lambda key: 0 if key is None else len(key))
    assert labels.vocabulary_codes(vocabulary, ids, len(ids)).tolist() == want
    assert labels.vocabulary_codes([], ids, len(ids)).tolist() == [-1] * len(ids)
    assert labels.vocabulary_codes(vocabulary, [], 0).tolist() == []
