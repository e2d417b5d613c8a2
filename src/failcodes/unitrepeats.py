"""A (claim, passage) unit retrieved for several systems: Table 8 counts it once per retriever.

Systems that share a retriever retrieve the same unit for the same claim, and the per-passage
table has a row of it for each system. Table 8, its corrected shares and
``retriever_all_high.csv`` count each (retriever, unit) once within a data set (or the data
sets the report pools), with its first row's codes; rows that disagree are said
(:attr:`FirstUnits.differ`). Table 9 keeps a row per trace. Why: docs/architecture.md,
"Module notes".
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt
    import pandas as pd


class FirstUnits:
    """Which rows repeat a (group, unit) key an earlier row held, fed a chunk at a time.

    Holds each distinct key's hash and its first row's codes' hash (16 bytes a unit: a
    paper-scale table's 1.2M rows in under 20 MB) in a few sorted runs, each key in one: a
    chunk's new keys are a run of their own, merged into the run before it while that one is
    no larger (a binary counter's carries). A key is merged about log2(chunks) times and looked
    up in as many runs, where inserting every chunk into one sorted array copied the whole
    array per chunk (12M rows in 20k-row chunks: 600 copies of up to 192 MB). ``repeats``
    counts the rows found repeating a key; ``differ`` those among them whose codes are not the
    first row's, and ``first_differ`` names the first such unit.
    """

    def __init__(self) -> None:
        #: (keys, codes) pairs: keys sorted, no key in two runs; sizes fall run after run
        self._runs: list[tuple[npt.NDArray[Any], npt.NDArray[Any]]] = []
        self.repeats = 0
        self.differ = 0
        self.first_differ: str | None = None

    def repeated(
        self, keys: npt.NDArray[Any], codes: npt.NDArray[Any], ids: Sequence[object]
    ) -> npt.NDArray[np.bool_]:
        """True for each row whose key an earlier row (of this chunk or one before) holds.

        ``keys`` and ``codes``: per row, the hash of its (group, unit id) and of its codes;
        ``ids``: its unit id, to name a unit coded differently in two rows.
        """
        n = len(keys)
        if n == 0:
            return np.zeros(0, dtype=bool)
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        repeat = np.ones(n, dtype=bool)
        repeat[first] = False  # the first row of each key within the chunk
        first_codes = codes[first]  # per distinct key of the chunk, its first row's codes
        held = np.zeros(len(uniq), dtype=bool)
        earlier = first_codes.copy()
        for run_keys, run_codes in self._runs:  # sorted: a sorted search in each
            at: npt.NDArray[np.intp] = np.asarray(np.searchsorted(run_keys, uniq))
            inside = at < len(run_keys)
            here = np.zeros(len(uniq), dtype=bool)
            here[inside] = run_keys[at[inside]] == uniq[inside]
            earlier[here] = run_codes[at[here]]
            held |= here
        repeat |= held[inverse]
        differ = repeat & (codes != earlier[inverse])
        self.repeats += int(repeat.sum())
        self.differ += int(differ.sum())
        if self.first_differ is None and differ.any():
            self.first_differ = str(ids[int(np.argmax(differ))])
        new = ~held
        self._add(uniq[new], first_codes[new])
        return repeat

    def _add(self, keys: npt.NDArray[Any], codes: npt.NDArray[Any]) -> None:
        """Hold ``keys`` (sorted, none held yet) with their first rows' ``codes``."""
        if not len(keys):
            return
        self._runs.append((keys, codes))
        runs = self._runs
        merged = False
        # runs of RUN_KEYS keys or more are not merged further: merging two runs of 1.5M
        # keys (10x paper scale) wrote a 3M-key copy of each array beside them, the report's
        # peak (454 MB against 264 at 1x); a chunk is looked up in a few more runs instead
        while (
            len(runs) > 1
            and len(runs[-2][0]) <= len(runs[-1][0])
            and len(runs[-2][0]) + len(runs[-1][0]) <= RUN_KEYS
        ):
            merged = True
            # one merge of two sorted runs, no key in both; each array written once, and each
            # old one let go as soon as its merge is written (8 bytes a key of the later run
            # and 1 of both besides: np.insert also sorts the positions, 24 bytes a key)
            late_keys, late_codes = self._runs.pop()
            keys, codes = self._runs.pop()
            at = np.searchsorted(keys, late_keys)
            at += np.arange(len(at))  # where each of the later run's keys lands in the merge
            old = np.ones(len(keys) + len(at), dtype=bool)
            old[at] = False
            keys = _placed(keys, late_keys, at, old)
            del late_keys
            codes = _placed(codes, late_codes, at, old)
            del late_codes, at, old
            self._runs.append((keys, codes))
        if merged and len(runs[-1][0]) * 2 > RUN_KEYS:  # a large merge: its old arrays'
            give_back()  # pages (heap memory glibc keeps) back to the system

    def repeated_in(
        self, frame: pd.DataFrame, by: str, codes: Sequence[str]
    ) -> npt.NDArray[np.bool_]:
        """:meth:`repeated` of a coded table's rows: key (``by``, unit_id), codes ``codes``.

        Codes the table has no column of are left out of the comparison.
        """
        from pandas.util import hash_pandas_object

        codes = [c for c in codes if c in frame.columns]

        as_text = frame[[by, "unit_id", *codes]].astype(str)  # a flag read as bool or text alike
        keys = hash_pandas_object(as_text[[by, "unit_id"]], index=False).to_numpy(np.uint64)
        said = (
            hash_pandas_object(as_text[codes], index=False).to_numpy(np.uint64)
            if codes
            else np.zeros(len(frame), dtype=np.uint64)
        )
        return self.repeated(keys, said, as_text["unit_id"].tolist())

    def first_rows(
        self,
        rows: Sequence[Sequence[object]],
        columns: Sequence[str],
        by: str,
        codes: Sequence[str],
    ) -> list[Sequence[object]]:
        """The rows of a table's chunk (tuples in ``columns`` order) that repeat no earlier key."""
        import pandas as pd

        names = [by, "unit_id", *codes]
        if not rows:
            return []
        pick = itemgetter(*(list(columns).index(c) for c in names))
        frame = pd.DataFrame(list(map(pick, rows)), columns=names)
        repeat = self.repeated_in(frame, by, codes)
        return [row for row, again in zip(rows, repeat, strict=True) if not again]

    def note(self, where: str) -> str | None:
        """The words for units coded differently in their rows (None: none was)."""
        if not self.differ:
            return None
        return (
            f"{where}: {self.differ} row(s) repeat a (claim, passage) unit of their retriever "
            f"with other codes than the unit's first row (first: unit {self.first_differ}; two "
            "judge runs of data sets pooled into one column, or a table edited by hand?): "
            "Table 8 counts each unit once, with its first row's codes (data sets in name "
            "order, rows in file order); judge the data sets with the judge's cache on, so a "
            "unit gets one answer"
        )


class SeenDigests:
    """16-byte digests seen, each with the number it was first given: ~24 bytes a digest.

    The latest are held in a dict; older ones in one sorted array (``S16``) beside their
    numbers, the dict merged into it when it holds :data:`DIGEST_WINDOW` digests or a
    1 / :data:`DIGEST_SHARE` of the array's, whichever is more: a merge copies the array, and
    a merge each 8,192 digests copied it N / 8,192 times (3M digests: 366 merges, 9.2 of 15.2
    CPU-s; 67 merges, 3.1 of 9.7 at a share). ``attribute``'s reader
    of a disagreements file kept a set of every claim's digest and a dict of every
    disagreement's id (~77 and ~136 bytes a key): ~36 MB of its peak at the 300k claims and
    98,600 disagreements of a 10x paper-scale study, 3.6 at 1x (issue 30: its 10x peak was
    1.50x its 1x peak).
    """

    def __init__(self) -> None:
        self._recent: dict[bytes, int] = {}
        self._keys: npt.NDArray[Any] = np.empty(0, dtype="S16")
        self._numbers: npt.NDArray[Any] = np.empty(0, dtype=np.int64)

    def setdefault(self, digest: bytes, number: int) -> int:
        """The number ``digest`` was first given; if new, hold it with ``number`` (returned)."""
        held = self._recent.get(digest)
        if held is not None:
            return held
        keys = self._keys
        if len(keys):
            at = int(keys.searchsorted(digest))
            # (a bytes item loses its trailing NULs: padded back, every digest is 16 bytes)
            if at < len(keys) and bytes(keys[at]).ljust(16, b"\0") == digest:
                return int(self._numbers[at])
        if len(digest) != 16:
            raise ValueError(f"a digest is 16 bytes, not {len(digest)}")
        self._recent[digest] = number
        if len(self._recent) >= max(DIGEST_WINDOW, len(keys) // DIGEST_SHARE):
            self._settle()
        return number

    def add(self, digest: bytes) -> bool:
        """Hold ``digest``; True if it was not held before."""
        number = len(self)  # more than any number given before: held only if new
        return self.setdefault(digest, number) == number

    def _settle(self) -> None:
        """Merge the dict's digests into the sorted array."""
        new = np.array(list(self._recent), dtype="S16")
        numbers = np.fromiter(self._recent.values(), dtype=np.int64, count=len(new))
        self._recent = {}
        order = np.argsort(new)
        new, numbers = new[order], numbers[order]
        at = np.searchsorted(self._keys, new)  # none held yet: each lands before its place
        self._keys = np.insert(self._keys, at, new)
        self._numbers = np.insert(self._numbers, at, numbers)

    def __len__(self) -> int:
        return len(self._recent) + len(self._keys)


#: Digests a :class:`SeenDigests` holds in its dict before merging them into its array, at
#: least; and 1 / DIGEST_SHARE of the array's at most (~6 bytes a digest more at the worst,
#: the dict's ~100 bytes a digest).
DIGEST_WINDOW = 1 << 13
DIGEST_SHARE = 16


#: A run of :class:`FirstUnits` is merged with the next while both hold this many keys in
#: all (16 bytes a key: 16 MB).
RUN_KEYS = 1 << 20


def give_back() -> None:
    """Give the pages of freed heap memory back to the system (glibc's ``malloc_trim``).

    A merge lets go of two runs' arrays (a code index each sorted bucket,
    :class:`failcodes.attribution.CodeIndex`): glibc keeps such arrays' pages (under its mmap
    threshold, which rises to 32 MB as large arrays are freed) for reuse, and the larger arrays
    made next do not fit in them. Nothing on another C library.
    """
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def _placed(
    mine: npt.NDArray[Any], theirs: npt.NDArray[Any], at: npt.NDArray[Any], old: npt.NDArray[Any]
) -> npt.NDArray[Any]:
    """``theirs`` written at ``at``, ``mine`` in order where ``old`` holds: a merged run."""
    out = np.empty(len(old), dtype=mine.dtype)
    out[at] = theirs
    out[old] = mine
    return out


def marked(frame: pd.DataFrame, by: str, codes: Sequence[str]) -> tuple[pd.DataFrame, FirstUnits]:
    """``frame`` with its :data:`~failcodes.tally.REPEAT` column, and what marking it found.

    A table without a ``unit_id`` column is returned as it is (its rows cannot be told apart).
    """
    from failcodes.tally import REPEAT

    seen = FirstUnits()
    if "unit_id" not in frame.columns or REPEAT in frame.columns:
        return frame, seen
    return frame.assign(**{REPEAT: seen.repeated_in(frame, by, codes)}), seen
