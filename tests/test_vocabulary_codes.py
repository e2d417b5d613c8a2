"""labels.vocabulary_codes: ids in sorted order are found with one or two comparisons.

Issue 30. Every id was a binary search over the sorted vocabulary (~14 string comparisons
at 10,000 sentences): 139 M instructions of ``metrics`` on bench scale-1's own Parquet
(10,000 labels matched 5 times). The previous id's code and the next are looked at first.
"""

from __future__ import annotations

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


def test_ids_in_sorted_order_take_one_or_two_comparisons() -> None:
    vocab = [f"q{i:04d}:s0" for i in range(1000)]
    ids = [_Counted(v) for v in vocab]
    _Counted.made = 0
    assert vocabulary_codes(vocab, ids, len(ids)).tolist() == list(range(1000))
    # the first id: vocab[0] equal (1); each later one: vocab[i - 1] not, vocab[i] equal (2)
    assert _Counted.made == 1 + 2 * 999  # main: a search each, 10,978 comparisons


def test_ids_in_any_order_get_their_codes() -> None:
    vocab = ["a", "b", "c", "e"]
    ids = ["c", "c", "e", None, "a", "d", "b", "z", "c", ""]
    # positions in vocab by hand; d, z and the empty id are absent, None is no id
    assert vocabulary_codes(vocab, ids, len(ids)).tolist() == [2, 2, 3, -1, 0, -1, 1, -1, 2, -1]
    assert vocabulary_codes([], ["a"], 1).tolist() == [-1]
