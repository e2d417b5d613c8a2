"""Session 26 (t26scale): FirstUnits fed a paper-scale table a chunk at a time.

FirstUnits (failcodes.unitrepeats) inserted each chunk's new keys into one sorted array with
``np.insert``: every chunk copied every key held so far, so a table of n chunks copied about
n^2/2 chunks' worth of keys (12M rows in 20k-row chunks: 600 copies of up to 192 MB). The
keys are now held in sorted runs merged as a binary counter carries: each key is copied about
log2(chunks) times. Which rows repeat a key, and the codes they are compared with, stay the
first row's (first chunk first, then row order).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from failcodes import unitrepeats
from failcodes.unitrepeats import FirstUnits


def _u64(values: list[int]) -> np.ndarray[Any, np.dtype[np.uint64]]:
    return np.array(values, dtype=np.uint64)


def test_first_units_keeps_the_first_row_of_each_key_and_copies_each_key_a_few_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    copied = [0]
    insert = np.insert

    def counting_insert(arr: Any, at: Any, values: Any) -> Any:
        out = insert(arr, at, values)
        copied[0] += len(out)  # every element of the result is written once
        return out

    monkeypatch.setattr(unitrepeats.np, "insert", counting_insert)

    # By hand: keys 1..4, codes 10/20/30/40 (a row's codes other than its key's first: 99).
    seen = FirstUnits()
    got = seen.repeated(_u64([3, 1, 3]), _u64([30, 10, 30]), ["u3", "u1", "u3"])
    assert got.tolist() == [False, False, True]  # u3's second row repeats its first
    got = seen.repeated(_u64([1, 2, 4]), _u64([10, 20, 40]), ["u1", "u2", "u4"])
    assert got.tolist() == [True, False, False]  # u1 held from chunk 1
    got = seen.repeated(_u64([2, 5, 3, 5]), _u64([99, 50, 30, 50]), ["u2", "u5", "u3", "u5"])
    assert got.tolist() == [True, False, True, True]
    # repeats: chunk 1 one (u3), chunk 2 one (u1), chunk 3 three (u2, u3, u5's second row);
    # codes other than the first row's: u2 (99, first row 20) alone
    assert (seen.repeats, seen.differ, seen.first_differ) == (5, 1, "u2")

    # 256 chunks of 400 rows, 300 new keys each and 100 rows repeating keys of earlier
    # chunks (or the chunk itself) with codes of their own half the time: every row checked
    # against a dict of first rows, and the copies counted.
    copied[0] = 0
    rng = np.random.default_rng(26)
    seen = FirstUnits()
    first: dict[int, int] = {}
    chunks, new_per_chunk = 256, 300
    repeats = differ = 0
    for c in range(chunks):
        new = list(range(c * new_per_chunk, (c + 1) * new_per_chunk))
        old = rng.integers(0, (c + 1) * new_per_chunk, 100).tolist()
        keys = new + old
        order = rng.permutation(len(keys))
        keys = [keys[i] for i in order]
        codes = [k * 7 if rng.random() < 0.5 else k * 7 + 1 for k in keys]
        expected = []
        for k, code in zip(keys, codes, strict=True):
            again = k in first
            expected.append(again)
            repeats += again
            differ += again and first[k] != code
            first.setdefault(k, code)
        got = seen.repeated(_u64(keys), _u64(codes), [str(k) for k in keys])
        assert got.tolist() == expected, c
    assert (seen.repeats, seen.differ) == (repeats, differ)
    held = chunks * new_per_chunk  # 76,800 distinct keys
    # keys and codes copied once each per merge a key takes part in: at most log2(256) = 8
    # merges a key (a binary counter over 256 equal runs), so at most 2 x 8 x 76,800 = 1.2M
    # elements written; one sorted array wrote 2 x 300 x (1 + ... + 256) = 19.7M
    assert copied[0] <= 2 * math.log2(chunks) * held
