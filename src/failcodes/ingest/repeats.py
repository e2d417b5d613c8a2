"""Keys read before, among millions, found on their 64-bit hashes (8 bytes a key).

A stream that refuses a key it has seen before (``ingest generic``: each (system, claim_id)
once) cannot afford to keep every key with the line it came from: at 1.2M traces that dict
alone held ~300 MB. :class:`KeyHashes` keeps each key's hash only, checked in batches. A hash
that repeats marks a *possible* repeat: the caller confirms it on the keys themselves (by
reading its input again up to there), which a true repeat, an error, costs once; two keys
sharing a 64-bit hash are too rare (about n^2 / 2^65) to cost anything in practice.
:class:`KeyValues` does the same for a key that must keep its first value (a sentence its
text): 16 bytes a key, a key given another value named.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where used: a small input needs none
    import numpy as np

#: Hashes checked at once (512 KB of pending hashes).
BATCH = 1 << 16
#: Settled hashes moved at once when a batch is merged in.
CHUNK = 1 << 16
#: Up to this many hashes in all, held in a set: ``ingest`` of a small file imports no numpy
#: (~0.15 CPU-s, most of what the file costs).
SMALL = 1 << 12


class KeyHashes:
    """The 64-bit hashes of keys in the order read; :meth:`settle` names those that repeat."""

    def __init__(self, batch: int | None = None) -> None:
        self.batch = BATCH if batch is None else batch
        self.count = 0
        self._small: set[int] | None = set()  # the settled hashes while few, then None
        self._settled: np.ndarray[Any, np.dtype[np.int64]]  # sorted, once there are many
        self._pending = array("q")

    def add(self, key_hash: int) -> bool:
        """Record the next key's hash; True when the batch is full (time to :meth:`settle`)."""
        self._pending.append(key_hash)
        self.count += 1
        return len(self._pending) >= self.batch

    def settle(self) -> frozenset[int]:
        """The hashes added since the last call that an earlier key (or another of them) has.

        Empty when no hash repeats, i.e. no key can have.
        """
        if not self._pending:
            return frozenset()
        if self._small is not None and self.count <= SMALL:
            found = set()
            for key_hash in self._pending:
                if key_hash in self._small:
                    found.add(key_hash)
                self._small.add(key_hash)
            self._pending = array("q")
            return frozenset(found)
        import numpy as np

        if self._small is not None:  # many now: sorted, in numpy
            self._settled = np.array(sorted(self._small), dtype=np.int64)
            self._small = None
        new = np.sort(np.frombuffer(self._pending, dtype=np.int64))
        self._pending = array("q")
        at = np.searchsorted(self._settled, new)
        known = at < len(self._settled)
        known[known] = self._settled[at[known]] == new[known]
        twice = new[1:][new[1:] == new[:-1]]
        repeats = frozenset(int(h) for h in (*new[known], *twice))
        self._merge(new)
        return repeats

    def _merge(self, new: np.ndarray[Any, np.dtype[np.int64]]) -> None:
        """Merge the sorted ``new`` hashes into the settled ones, in place.

        The array grows by ``resize`` (a realloc: no second copy of a large array, which
        ``np.insert`` made at every batch) and its hashes move up a chunk at a time from the
        end: an old hash goes up by the new ones below it, a new one lands after the old
        ones not above it.
        """
        import numpy as np

        n = len(self._settled)
        places = np.arange(len(new)) + np.searchsorted(self._settled, new, side="right")
        self._settled.resize(n + len(new), refcheck=False)  # no view of it is kept anywhere
        merged = self._settled
        for end in range(n, 0, -CHUNK):
            start = max(0, end - CHUNK)
            chunk = merged[start:end].copy()
            merged[np.arange(start, end) + np.searchsorted(new, chunk, side="left")] = chunk
        merged[places] = new


class KeyValues:
    """Each key's first value, on 64-bit hashes; :meth:`settle` names keys given another.

    A stream that refuses a key read again with another value (``ingest generic``: a
    sentence id with a second text) kept a dict of every key's value and line (~220 bytes a
    sentence, 400,000 at 10x paper scale); this keeps 16 bytes a key. A key named marks a
    *possible* conflict: the caller finds the rows on the input itself (two keys or two values
    sharing a 64-bit hash are too rare to cost anything in practice).
    """

    def __init__(self, batch: int | None = None) -> None:
        self.batch = BATCH if batch is None else batch
        self.count = 0
        self._small: dict[int, int] | None = {}  # key -> first value while few, then None
        self._keys: np.ndarray[Any, np.dtype[np.int64]]  # sorted, once there are many
        self._values: np.ndarray[Any, np.dtype[np.int64]]  # each key's first value
        self._pending = array("q")  # key, value, key, value...

    def add(self, key_hash: int, value_hash: int) -> bool:
        """Record a key's value; True when the batch is full (time to :meth:`settle`)."""
        self._pending.append(key_hash)
        self._pending.append(value_hash)
        self.count += 1
        return len(self._pending) >= 2 * self.batch

    def settle(self) -> frozenset[int]:
        """The keys added since the last call with a value other than their first.

        Empty when none has, i.e. no key can have.
        """
        if not self._pending:
            return frozenset()
        if self._small is not None and self.count <= SMALL:
            found = set()
            pending = iter(self._pending)
            for key_hash, value_hash in zip(pending, pending, strict=True):
                if self._small.setdefault(key_hash, value_hash) != value_hash:
                    found.add(key_hash)
            self._pending = array("q")
            return frozenset(found)
        import numpy as np

        if self._small is not None:  # many now: sorted, in numpy
            self._keys = np.array(sorted(self._small), dtype=np.int64)
            self._values = np.array([self._small[k] for k in self._keys.tolist()], np.int64)
            self._small = None
        pairs = np.frombuffer(self._pending, dtype=np.int64).reshape(-1, 2)
        order = np.argsort(pairs[:, 0], kind="stable")  # a key's values in reading order
        keys, values = pairs[order, 0], pairs[order, 1]
        self._pending = array("q")
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        firsts = np.repeat(values[starts], np.diff(np.r_[starts, len(keys)]))
        found = set(keys[values != firsts].tolist())  # two values within the batch
        keys, values = keys[starts], values[starts]
        at = np.searchsorted(self._keys, keys)
        known = at < len(self._keys)
        known[known] = self._keys[at[known]] == keys[known]
        found.update(keys[known][self._values[at[known]] != values[known]].tolist())
        new = ~known
        self._keys = np.insert(self._keys, at[new], keys[new])
        self._values = np.insert(self._values, at[new], values[new])
        return frozenset(found)
