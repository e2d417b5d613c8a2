"""Traces as columns: one Arrow column per trace field, one row per trace, in input order.

The analysis core (metrics, aggregation, disagreements, units) works on these columns instead
of one :class:`~failcodes.traces.Trace` object per claim: at paper scale (120k traces, 1.2M
passages) building and garbage-collecting the objects cost more than the analysis itself.
:class:`TraceColumns` always holds the key columns (:data:`KEY_COLUMNS`, the verdict already
canonical); readers add the other scalar fields only when a step needs the text. Passages are
never held here: a step that needs them fetches the full traces of the rows it needs
(:func:`failcodes.columnar.gather_traces`) through :attr:`TraceColumns.origin`.

Pydantic models stay the contract at the edges: :meth:`TraceColumns.from_traces` takes
traces, :meth:`TraceColumns.to_traces` gives them back. Nothing here reads or writes files.
"""

from __future__ import annotations

import array
import bisect
import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from failcodes.traces import Trace
from failcodes.verdicts import Verdict

#: Columns every :class:`TraceColumns` has (what metrics and aggregation need).
KEY_COLUMNS: tuple[str, ...] = ("system", "question_id", "sentence_id", "claim_id", "verdict")
#: Every scalar trace field (everything but ``passages``), in model order.
SCALAR_COLUMNS: tuple[str, ...] = tuple(n for n in Trace.model_fields if n != "passages")
#: Canonical verdicts in code order (``verdict_codes`` indexes this tuple).
VERDICTS: tuple[Verdict, ...] = tuple(Verdict)

IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]


def pyarrow_module() -> Any:
    """Return ``pyarrow``, imported on first use (~0.2 s)."""
    import pyarrow as pa  # type: ignore[import-untyped]

    return pa


def string_array(values: Sequence[str | None]) -> Any:
    """An Arrow string array of Python strings (None = null), built from buffers.

    ``pyarrow.array`` imports pandas on its first call (~50 MB and ~1 s at start-up) to ask
    whether the input is a pandas object; the columnar readers build their few string arrays
    here instead.
    """
    pa = pyarrow_module()
    encoded = [v.encode("utf-8") if v is not None else b"" for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    valid = np.array([v is not None for v in values], dtype=bool)
    nulls = int(len(values) - valid.sum())
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pa.LargeStringArray.from_buffers(
        len(encoded), pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded)), bitmap, nulls
    ).cast(pa.string())


_NUMPY_TYPES = {
    "bool": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "double": np.float64,
    "float": np.float32,
}


def numpy_of(values: Any, fill: Any = None) -> npt.NDArray[Any]:
    """An Arrow array (or chunked array) of numbers or booleans as a numpy array.

    Read from the array's buffers: pyarrow's own ``to_numpy`` (and ``fill_null`` with a
    Python value) import pandas (~50 MB) on first use. Nulls become ``fill``; with nulls and
    no ``fill``, or another type, the array goes through ``to_numpy``.
    """
    if hasattr(values, "combine_chunks"):
        values = values.combine_chunks()
    kind = _NUMPY_TYPES.get(str(values.type))
    if kind is None or (values.null_count and fill is None):
        out: npt.NDArray[Any] = values.to_numpy(zero_copy_only=False)
        return out
    start, n = values.offset, len(values)
    validity, data = values.buffers()[:2]

    def bits(buffer: Any) -> npt.NDArray[np.bool_]:
        raw = np.frombuffer(buffer, dtype=np.uint8)
        unpacked = np.unpackbits(raw, bitorder="little", count=start + n)
        return unpacked[start:].astype(bool)

    if data is None:
        result: npt.NDArray[Any] = np.zeros(n, dtype=kind)
    elif kind is np.bool_:
        result = bits(data)
    else:
        result = np.frombuffer(data, dtype=kind)[start : start + n]
    if values.null_count:
        result = result.copy()
        result[~bits(validity)] = fill
    return result


@dataclass(frozen=True)
class Origin:
    """Where each row was read from: file index (into ``paths``), 1-based line, byte offset.

    For Parquet the "line" is the 1-based row number and ``offsets`` holds the 0-based row;
    ``formats`` names each file's format (``"jsonl"`` or ``"parquet"``).
    """

    paths: tuple[Path, ...]
    formats: tuple[str, ...]
    file: npt.NDArray[np.int32]
    line: IntArray
    offset: IntArray


class KeyCodes:
    """Key columns accumulated as integer codes while a reader goes through the rows.

    Each value gets a code when first seen (one dict per column; no string per row is
    kept): at paper scale x10 (1.2M traces) the codes are 4 bytes a row and a column, where
    Arrow strings and their dictionary encodings cost ~10x that. :meth:`finish` re-codes each
    column in the sorted order of its values (what :meth:`TraceColumns.codes` returns).
    """

    def __init__(self) -> None:
        self.vocab: dict[str, dict[str, int]] = {n: {} for n in KEY_COLUMNS}
        self.codes: dict[str, array.array[int]] = {n: array.array("i") for n in KEY_COLUMNS}
        self._vocabs = [self.vocab[n] for n in KEY_COLUMNS]  # in add's argument order
        self._arrays = [self.codes[n] for n in KEY_COLUMNS]

    def __len__(self) -> int:
        """Rows added so far."""
        return len(self.codes["verdict"])

    def add(self, system: str, question: str, sentence: str, claim: str, verdict: str) -> None:
        """Append one row (the verdict canonical): each value's code, a new one if unseen."""
        (v0, v1, v2, v3, v4), (a0, a1, a2, a3, a4) = self._vocabs, self._arrays
        a0.append(v0.setdefault(system, len(v0)))  # unrolled: ~0.7 us a row, not ~1.1
        a1.append(v1.setdefault(question, len(v1)))
        a2.append(v2.setdefault(sentence, len(v2)))
        a3.append(v3.setdefault(claim, len(v3)))
        a4.append(v4.setdefault(verdict, len(v4)))

    def add_arrow(self, name: str, column: Any) -> None:
        """Append a chunk of one column given as an Arrow string array (no nulls)."""
        if len(column) == 0:
            return
        encoded = column.combine_chunks() if hasattr(column, "combine_chunks") else column
        encoded = encoded.dictionary_encode()
        vocab = self.vocab[name]
        lookup = np.array(
            [vocab.setdefault(v, len(vocab)) for v in encoded.dictionary.to_pylist()],
            dtype=np.int32,
        )
        indices = numpy_of(encoded.indices)
        self.codes[name].extend(lookup[indices].tolist())

    def first_seen(self, name: str) -> npt.NDArray[np.int32]:
        """One column's codes so far, in first-seen order (a view, no copy)."""
        return np.frombuffer(self.codes[name], dtype=np.int32)

    def truncate(self, rows: int) -> None:
        """Keep the first ``rows`` rows."""
        for codes in self.codes.values():
            del codes[rows:]

    def finish(self) -> dict[str, tuple[npt.NDArray[np.int32], list[str]]]:
        """Every column as (codes in sorted value order, sorted values)."""
        out: dict[str, tuple[npt.NDArray[np.int32], list[str]]] = {}
        for name in KEY_COLUMNS:
            first = list(self.vocab[name])
            order = sorted(range(len(first)), key=first.__getitem__)
            rank = np.empty(len(first), dtype=np.int32)
            rank[order] = np.arange(len(first), dtype=np.int32)
            codes = self.first_seen(name)
            out[name] = (rank[codes] if len(codes) else codes.copy(), [first[i] for i in order])
            self.codes[name] = array.array("i")
            self.vocab[name] = {}
        self._vocabs = [self.vocab[n] for n in KEY_COLUMNS]
        self._arrays = [self.codes[n] for n in KEY_COLUMNS]
        return out


@dataclass(frozen=True)
class TraceColumns:
    """Traces as columns (see the module doc); ``origin`` is None for in-memory input.

    A column is held either in ``arrow`` (a pyarrow table) or, for the key columns a reader
    encoded on the way (:class:`KeyCodes`), in ``encoded`` as int32 codes and the sorted
    values; :attr:`table` gives all of them as one Arrow table of strings.
    """

    arrow: Any  # pyarrow.Table of the columns not in ``encoded`` (None: there are none)
    origin: Origin | None = None
    #: The traces the columns were made from (in-memory input; rows index them).
    objects: Sequence[Trace] | None = None
    encoded: Mapping[str, tuple[npt.NDArray[np.int32], list[str]]] = field(default_factory=dict)
    #: Column order of :attr:`table` (default: ``arrow``'s columns then ``encoded``'s).
    names: tuple[str, ...] = ()
    _codes: dict[str, tuple[IntArray, list[str]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def from_traces(cls, traces: Sequence[Trace], *, text: bool = True) -> TraceColumns:
        """Columns of in-memory traces (all scalar fields with ``text``, else the keys)."""
        pa = pyarrow_module()
        names = SCALAR_COLUMNS if text else KEY_COLUMNS
        data: dict[str, list[Any]] = {n: [] for n in names}
        for t in traces:
            for n in names:
                value = getattr(t, n)
                data[n].append(value.value if isinstance(value, Verdict) else value)
        table = pa.table({n: string_array(data[n]) for n in names})
        return cls(table, None, traces)

    def __len__(self) -> int:
        """Number of traces."""
        if self.encoded:
            return len(next(iter(self.encoded.values()))[0])
        return int(self.arrow.num_rows)

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns held."""
        if self.names:
            return self.names
        own = tuple(self.arrow.column_names) if self.arrow is not None else ()
        return own + tuple(n for n in self.encoded if n not in own)

    @property
    def table(self) -> Any:
        """Every column as one pyarrow table of strings (encoded columns decoded)."""
        if not self.encoded:
            return self.arrow
        pa = pyarrow_module()
        data = {}
        for name in self.columns:
            if name in self.encoded:
                codes, values = self.encoded[name]
                data[name] = string_array(values).take(codes)
            else:
                data[name] = self.arrow.column(name)
        return pa.table(data)

    def values(self, name: str) -> list[Any]:
        """One column as a Python list (None for missing values)."""
        if name in self.encoded:
            codes, uniques = self.encoded[name]
            return [uniques[c] for c in codes.tolist()]
        out: list[Any] = self.arrow.column(name).to_pylist()
        return out

    def value(self, name: str, row: int) -> Any:
        """One cell (None if missing)."""
        if name in self.encoded:
            codes, uniques = self.encoded[name]
            return uniques[int(codes[row])]
        return self.arrow.column(name)[row].as_py()

    def codes(self, name: str) -> tuple[IntArray, list[str]]:
        """Integer codes of a string column and its distinct values, sorted.

        ``uniques[codes[i]]`` is row ``i``'s value; codes follow the sorted order of the
        values (code point order, as Python sorts strings). Encoded columns give a fresh
        int64 copy of their codes (not cached: 8 bytes a row); others are cached per column.
        """
        if name in self.encoded:
            small, values = self.encoded[name]
            return small.astype(np.int64), values
        cached = self._codes.get(name)
        if cached is not None:
            return cached
        col = self.arrow.column(name)
        encoded = col.combine_chunks().dictionary_encode() if len(col) else None
        if encoded is None:
            out: tuple[IntArray, list[str]] = (np.zeros(0, dtype=np.int64), [])
        else:
            first: list[str] = encoded.dictionary.to_pylist()
            order = sorted(range(len(first)), key=first.__getitem__)
            rank = np.empty(len(first), dtype=np.int64)
            rank[order] = np.arange(len(first), dtype=np.int64)
            idx = numpy_of(encoded.indices).astype(np.int64)
            out = (rank[idx], [first[i] for i in order])
        self._codes[name] = out
        return out

    def small_codes(self, name: str) -> tuple[npt.NDArray[np.integer[Any]], list[str]]:
        """:meth:`codes` without the int64 copy: an encoded column's own int32 codes.

        For indexing, grouping and ``np.unique``; widen to int64 before multiplying codes
        into a combined key (int32 products overflow at 10x paper scale).
        """
        if name in self.encoded:
            small, values = self.encoded[name]
            return small, values
        return self.codes(name)

    def verdict_codes(self) -> IntArray:
        """Each row's verdict as an index into :data:`VERDICTS`."""
        codes, uniques = self.small_codes("verdict")  # no int64 copy of the codes
        lookup = np.array([VERDICTS.index(Verdict(v)) for v in uniques], dtype=np.int64)
        out: IntArray = lookup[codes] if len(codes) else np.zeros(0, dtype=np.int64)
        return out

    def take(self, rows: Sequence[int] | IntArray) -> TraceColumns:
        """The given rows, in the given order (origin kept)."""
        idx = np.asarray(rows, dtype=np.int64)
        origin = self.origin
        if origin is not None:
            origin = Origin(
                origin.paths,
                origin.formats,
                origin.file[idx],
                origin.line[idx],
                origin.offset[idx],
            )
        objects = None if self.objects is None else [self.objects[int(i)] for i in idx]
        arrow = None if self.arrow is None else self.arrow.take(idx)
        encoded = {}
        for name, (codes, values) in self.encoded.items():
            present, inverse = np.unique(codes[idx], return_inverse=True)
            encoded[name] = (
                inverse.reshape(-1).astype(np.int32),
                [values[int(c)] for c in present],
            )
        return TraceColumns(arrow, origin, objects, encoded, self.names)

    def of_system(self, system: str) -> TraceColumns:
        """The rows of one system (in input order; none if it has no trace)."""
        codes, systems = self.small_codes("system")
        at = bisect.bisect_left(systems, system)
        code = at if at < len(systems) and systems[at] == system else -1
        return self.take(np.flatnonzero(codes == code))

    def to_traces(self) -> list[Trace]:
        """The rows as (passage-less) :class:`Trace` models: needs every required column."""
        table = self.table
        names = [n for n in SCALAR_COLUMNS if n in table.column_names]
        rows = table.select(names).to_pylist()
        return [Trace.model_validate({k: v for k, v in r.items() if v is not None}) for r in rows]


class GroupOverflowError(Exception):
    """The rows do not fit :class:`GroupCodes` (duplicate claim, too many distinct ids)."""


#: Rows :class:`GroupCodes` buffers before it folds them into its groups.
_GROUP_CHUNK = 1 << 15  # a fold's temporaries cost ~60 bytes a row: ~2 MB
#: Key layout of a group: sentence code << 32 | question code << 8 | system code.
_SYSTEM_BITS, _QUESTION_BITS, _SENTENCE_BITS = 8, 24, 31
#: Mixes a row's system code into its claim id's hash (an odd 64-bit constant).
_SYSTEM_MIX = np.uint64(0x9E3779B97F4A7C15)
#: Buckets of the rows' hashes by their top 8 bits (:meth:`GroupCodes._fold`).
_HASH_BUCKETS = 256
_GROUP_COLUMNS = ("system", "question_id", "sentence_id", "verdict")
#: Groups' first lines are kept as uint32 (more lines: :class:`GroupOverflowError`); their
#: runs as uint16 (a longer run is kept as no run: a scan then finds its rows).
_MAX_LINE, _MAX_RUN = (1 << 32) - 1, (1 << 16) - 1
#: Groups :meth:`GroupCodes.finish` turns into columns at a time (its temporaries: ~1 MB).
_FINISH_BLOCK = 1 << 16


class GroupCodes:
    """Rows folded into (system, question, sentence) groups as a reader goes (issue 18).

    What sentence-level metrics need of the traces, in memory that follows the sentences:
    per group the set of its claims' verdicts (a bit per :data:`VERDICTS` index) and its
    first row, the claims per system and verdict, and 56 bits of a hash of each row's
    (system, claim_id) for the duplicate check (6 bytes a row where :class:`KeyCodes` holds
    20 and the claim ids). Same ``add``/``add_arrow`` interface as :class:`KeyCodes`.
    :meth:`finish` raises :class:`GroupOverflowError` when two rows share a hash (a
    duplicate claim, or a collision) or the ids outgrow the key: the caller then reads the
    traces into :class:`KeyCodes` (which gives the exact error, if any).

    With ``locate`` a reader appends each row's line and byte offset (Parquet: row) to
    :attr:`lines` and :attr:`offsets` before the row itself; each group then also keeps
    where its first row is and, while its rows are consecutive, how many it has
    (:class:`GroupOrigin`: the disagreements stream fetches a group's claims as one run of
    lines, with no row map). These are appended as groups appear (14 bytes a group: the
    line as uint32, the offset's low 32 bits with the few places its high bits change, the
    run as uint16; never copied); the sorted groups keep no more than their first row.

    Sentence ids are coded by their place among the given ids, sorted (a bisection; a row
    with its predecessor's id reuses its code); ids not given get codes after those, in a
    dict. No dict or code object per sentence: at 10x paper scale the dict of 100,000 ids
    and their codes cost ~8 MB at the peak of the scan.
    """

    def __init__(self, sentence_ids: Iterable[str | None] = (), *, locate: bool = False) -> None:
        """``sentence_ids``: ids the traces' sentence ids are expected among (the labels').

        They are held sorted (a list of the same strings), so a trace's id equal to one of
        them is held as that string (one copy, not two: 100,000 labelled sentences at 10x
        paper scale cost ~6 MB of strings). Ids no trace has are left out of
        :meth:`finish`'s result.
        """
        self.locate = locate
        #: Pending rows' lines and offsets (``locate``; emptied at each fold).
        self.lines = array.array("q")
        self.offsets = array.array("q")
        self.vocab: dict[str, dict[str, int]] = {
            n: {} for n in _GROUP_COLUMNS if n != "sentence_id"
        }
        # the given sentence ids, sorted and distinct (codes 0..), then the others' codes
        ordered = sorted(sid for sid in sentence_ids if sid is not None)
        self._known: list[str] = [sid for sid, _ in itertools.groupby(ordered)]
        del ordered
        self._other: dict[str, int] = {}
        self._last: str | None = None  # the last row's sentence id and its code
        self._code = -1
        self._pending = {n: array.array("i") for n in _GROUP_COLUMNS}
        self._claims = array.array("q")  # hash(claim_id) per pending row
        self._vocabs = [self.vocab[n] for n in ("system", "question_id", "verdict")]
        self._arrays = [self._pending[n] for n in _GROUP_COLUMNS]
        # the mixed hashes of every row folded so far, 6 bytes a row (see _fold): each
        # chunk's sorted, appended to buffers that grow in place, with its bucket bounds
        self._hash_low = array.array("I")
        self._hash_mid = array.array("H")
        self._hash_runs: list[npt.NDArray[np.int64]] = []
        # the groups so far, sorted by key: grown in place (np.insert's new arrays at each
        # fold, a little larger each time, left ~9 MB of freed heap at 10x paper scale)
        self._keys = array.array("q")
        self._bits = array.array("B")
        self._first = array.array("i")
        # with ``locate``, per group in the order groups appeared (their first rows ascend):
        # first row, first line, first offset, and rows so far while consecutive (else 0)
        self._born = array.array("i")
        self._line = array.array("I")
        self._offset = array.array("I")  # low 32 bits
        self._offset_high: list[tuple[int, int]] = [(0, 0)]  # (from group, high bits)
        self._run = array.array("H")
        self._tally = np.zeros((1 << _SYSTEM_BITS) * len(VERDICTS), dtype=np.int64)
        self._rows = 0  # rows folded so far

    def __len__(self) -> int:
        """Rows added so far."""
        return self._rows + len(self._pending["verdict"])

    def add(self, system: str, question: str, sentence: str, claim: str, verdict: str) -> None:
        """Append one row (the verdict canonical), unrolled as :meth:`KeyCodes.add`."""
        (v0, v1, v3), (a0, a1, a2, a3) = self._vocabs, self._arrays
        a0.append(v0.setdefault(system, len(v0)))
        a1.append(v1.setdefault(question, len(v1)))
        if sentence != self._last:  # a sentence's claims are usually consecutive rows
            self._code = self._sentence_code(sentence)
            self._last = sentence
        a2.append(self._code)
        a3.append(v3.setdefault(verdict, len(v3)))
        claims = self._claims
        claims.append(hash(claim))
        if len(claims) >= _GROUP_CHUNK:
            self._fold()

    def _sentence_code(self, sentence: str) -> int:
        """A sentence id's code: its place among the given ids, else one after them."""
        known = self._known
        at = bisect.bisect_left(known, sentence)
        if at < len(known) and known[at] == sentence:
            return at
        return self._other.setdefault(sentence, len(known) + len(self._other))

    def _sentences(self) -> int:
        """Sentence codes given so far."""
        return len(self._known) + len(self._other)

    def add_arrow(self, name: str, column: Any) -> None:
        """Append a chunk of one column given as an Arrow string array (no nulls).

        The columns of a batch come one after another, ``verdict`` last (as
        :data:`KEY_COLUMNS` orders them); rows are folded once the verdicts are in.
        """
        if len(column) == 0:
            return
        encoded = column.combine_chunks() if hasattr(column, "combine_chunks") else column
        encoded = encoded.dictionary_encode()
        indices = numpy_of(encoded.indices)
        uniques = encoded.dictionary.to_pylist()
        if name == "claim_id":
            hashes = np.array([hash(v) for v in uniques], dtype=np.int64)
            self._claims.extend(hashes[indices].tolist())
            return
        if name == "sentence_id":
            found = [self._sentence_code(v) for v in uniques]
        else:
            vocab = self.vocab[name]
            found = [vocab.setdefault(v, len(vocab)) for v in uniques]
        lookup = np.array(found, dtype=np.int32)
        self._pending[name].extend(lookup[indices].tolist())
        if name == "verdict" and len(self._claims) >= _GROUP_CHUNK:
            self._fold()

    def _fold(self) -> None:
        """Fold the pending rows into the groups (sorted keys, verdict bits, first rows)."""
        n = len(self._claims)
        if n == 0:
            return
        sizes = (len(self.vocab["system"]), len(self.vocab["question_id"]))
        if sizes[0] > 1 << _SYSTEM_BITS or sizes[1] > 1 << _QUESTION_BITS:
            raise GroupOverflowError
        if self._sentences() > 1 << _SENTENCE_BITS or self._rows + n >= 1 << 31:
            raise GroupOverflowError  # first rows are int32
        system = np.frombuffer(self._pending["system"], dtype=np.int32).astype(np.int64)
        key = np.frombuffer(self._pending["sentence_id"], dtype=np.int32).astype(np.int64)
        key <<= 32
        key |= np.frombuffer(self._pending["question_id"], dtype=np.int32).astype(np.int64) << 8
        key |= system
        lookup = np.array([VERDICTS.index(Verdict(v)) for v in self.vocab["verdict"]], np.int64)
        verdict = lookup[np.frombuffer(self._pending["verdict"], dtype=np.int32)]
        self._tally += np.bincount(system * len(VERDICTS) + verdict, minlength=len(self._tally))
        # each row's hash of (system, claim_id), kept as 56 of its 64 bits in 6 bytes: the
        # chunk's sorted hashes keep bits 0-47, and where each value of the top 8 bits
        # starts (bits 48-55 are dropped: a repeat of the other 56 is a duplicate claim, or
        # at 10x paper scale a ~1e-5 chance, and then the exact reader decides)
        mixed = np.frombuffer(self._claims, dtype=np.uint64) ^ (
            system.view(np.uint64) * _SYSTEM_MIX
        )
        mixed.sort()
        start = len(self._hash_low)
        bounds = np.searchsorted(mixed, np.arange(_HASH_BUCKETS, dtype=np.uint64) << 56)
        self._hash_runs.append(np.append(bounds, len(mixed)).astype(np.int64) + start)
        self._hash_low.frombytes((mixed & 0xFFFFFFFF).astype(np.uint32).tobytes())
        self._hash_mid.frombytes(((mixed >> 32) & 0xFFFF).astype(np.uint16).tobytes())
        del mixed, bounds
        # the chunk's own groups (stable: the first of equal keys is the earliest row)
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
        bits = np.bitwise_or.reduceat(np.left_shift(1, verdict).astype(np.uint8)[order], starts)
        first = (order[starts] + self._rows).astype(np.int32)
        runs = self._chunk_runs(order, starts) if self.locate else None
        key = key[starts]
        del order, starts, verdict, system
        # merged into the groups so far: known groups gain bits, new ones are inserted
        groups = np.frombuffer(self._keys, dtype=np.int64)
        at = np.searchsorted(groups, key)
        known = at < len(groups)
        known[known] = groups[at[known]] == key[known]
        del groups  # (a buffer with a view cannot grow)
        group_bits = np.frombuffer(self._bits, dtype=np.uint8)
        np.bitwise_or.at(group_bits, at[known], bits[known])
        del group_bits
        new = ~known
        if runs is not None:
            self._locate(runs, first, known, np.frombuffer(self._first, dtype=np.int32)[at[known]])
        _insert_sorted(
            (self._keys, self._bits, self._first), at[new], (key[new], bits[new], first[new])
        )
        self._rows += n
        for codes in self._arrays:
            del codes[:]
        del self._claims[:]

    def _chunk_runs(
        self, order: npt.NDArray[np.int64], starts: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """Per group of the pending chunk: rows (0 if not consecutive), first line, offset."""
        n = len(order)
        if len(self.lines) != n or len(self.offsets) != n:
            raise ValueError("with locate, every row needs its line and offset first")
        ends = np.append(starts[1:], n)
        head = order[starts]
        out = np.empty((3, len(starts)), dtype=np.int64)
        out[0] = ends - starts
        out[0][order[ends - 1] - head + 1 != out[0]] = 0  # stable order: a group's rows ascend
        out[1] = np.frombuffer(self.lines, dtype=np.int64)[head]
        out[2] = np.frombuffer(self.offsets, dtype=np.int64)[head]
        del self.lines[:]
        del self.offsets[:]
        return out

    def _locate(
        self,
        runs: npt.NDArray[np.int64],
        first: npt.NDArray[np.int32],
        known: npt.NDArray[np.bool_],
        known_first: npt.NDArray[np.int32],
    ) -> None:
        """Extend the runs of known groups (or end them); append the new groups' places."""
        if known.any():
            born = np.frombuffer(self._born, dtype=np.int32)
            at = np.searchsorted(born, known_first)
            run = np.frombuffer(self._run, dtype=np.uint16)  # a view: updated in place
            size = runs[0][known]
            had = run[at].astype(np.int64)
            # a run goes on when this chunk's rows of it are consecutive and come next (and
            # it still fits a uint16: a longer one is kept as no run)
            goes_on = (had > 0) & (size > 0) & (born[at] + had == first[known])
            goes_on &= had + size <= _MAX_RUN
            run[at] = np.where(goes_on, had + size, 0)
            del born, run, at, had  # (a buffer with a view cannot grow)
        new = np.flatnonzero(~known)
        new = new[np.argsort(first[new], kind="stable")]  # the order they appeared in
        size, line, offset = runs[0][new], runs[1][new], runs[2][new]
        if len(new) and int(line.max()) > _MAX_LINE:
            raise GroupOverflowError
        self._born.extend(first[new].tolist())
        self._run.extend(np.where(size <= _MAX_RUN, size, 0).tolist())
        self._line.extend(line.tolist())
        # the offsets' high bits, kept only where they change (they ascend within a file)
        high = offset >> 32
        start = len(self._offset)
        before = np.concatenate([[self._offset_high[-1][1]], high[:-1]])
        for i in np.flatnonzero(high != before).tolist():
            self._offset_high.append((start + i, int(high[i])))
        self._offset.extend((offset & 0xFFFFFFFF).tolist())

    def _hashes_repeat(self) -> bool:
        """Whether two rows share a kept hash: each top-8-bit bucket of every chunk at once."""
        low = np.frombuffer(self._hash_low, dtype=np.uint32)
        mid = np.frombuffer(self._hash_mid, dtype=np.uint16)
        for bucket in range(_HASH_BUCKETS):
            parts = [
                (int(run[bucket]), int(run[bucket + 1]))
                for run in self._hash_runs
                if run[bucket + 1] > run[bucket]
            ]
            if sum(end - begin for begin, end in parts) < 2:
                continue
            values = np.concatenate(
                [(mid[b:e].astype(np.uint64) << 32) | low[b:e] for b, e in parts]
            )
            values.sort()
            if bool((values[1:] == values[:-1]).any()):
                return True
        return False

    def finish(self) -> SentenceColumns:
        """The groups as :class:`SentenceColumns` (see the class doc for the errors)."""
        self._fold()
        repeated = self._hashes_repeat()
        self._hash_low, self._hash_mid, self._hash_runs = array.array("I"), array.array("H"), []
        if repeated:
            raise GroupOverflowError
        self._vocabs = []  # the vocabularies are freed as each is sorted
        ranks: list[npt.NDArray[np.int64]] = []
        values: list[list[str]] = []
        for name in ("system", "question_id"):
            first_seen = list(self.vocab[name])
            self.vocab[name] = {}
            rank, sorted_values = _sorted_codes(first_seen, range(len(first_seen)))
            ranks.append(rank)
            values.append(sorted_values)
            del first_seen
        # sentence ids: only those of the traces (not every one given); the given ones are
        # sorted already, so without others no sort (and no code object) is needed
        known, other = self._known, list(self._other)
        self._known, self._other, self._last = [], {}, None
        used = np.zeros(len(known) + len(other), dtype=bool)
        groups = np.frombuffer(self._keys, dtype=np.int64)
        for start in range(0, len(groups), _FINISH_BLOCK):
            used[groups[start : start + _FINISH_BLOCK] >> 32] = True
        del groups
        if other:
            rank, sorted_values = _sorted_codes(known + other, np.flatnonzero(used).tolist())
        else:
            kept = np.flatnonzero(used)
            rank = np.full(len(known), -1, dtype=np.int64)
            rank[kept] = np.arange(len(kept), dtype=np.int64)
            sorted_values = known if len(kept) == len(known) else [known[i] for i in kept.tolist()]
            del kept
        del used, known, other
        ranks.append(rank)
        values.append(sorted_values)
        # the key re-coded in sorted value order (system, question, sentence: 8 + 24 + 31
        # bits) in place and sorted in place; the group columns are read back from it. A
        # block at a time: temporaries of every group (~3 MB each at 10x paper scale) grew
        # the heap by ~15 MB that it kept after
        ordered = np.frombuffer(self._keys, dtype=np.int64)  # the buffer, re-coded in place
        self._keys = array.array("q")
        for start in range(0, len(ordered), _FINISH_BLOCK):
            block = ordered[start : start + _FINISH_BLOCK]  # a view: re-coded in place
            recoded = ranks[0][block & 0xFF]
            recoded <<= _QUESTION_BITS
            recoded |= ranks[1][(block >> 8) & 0xFFFFFF]
            recoded <<= _SENTENCE_BITS
            recoded |= ranks[2][block >> 32]
            block[:] = recoded
            del block, recoded
        by_key = np.argsort(ordered)  # keys are distinct: any sort is the stable one
        ordered.sort()  # (= ordered[by_key], in place)
        sentence = np.empty(len(ordered), dtype=np.int32)
        question = np.empty(len(ordered), dtype=np.int32)
        system = np.empty(len(ordered), dtype=np.int32)
        for start in range(0, len(ordered), _FINISH_BLOCK):
            part = slice(start, start + _FINISH_BLOCK)
            block = ordered[part]
            sentence[part] = block & ((1 << _SENTENCE_BITS) - 1)
            question[part] = (block >> _SENTENCE_BITS) & ((1 << _QUESTION_BITS) - 1)
            system[part] = block >> (_SENTENCE_BITS + _QUESTION_BITS)
            del block
        del ordered
        tally = self._tally.reshape(-1, len(VERDICTS))[: len(values[0])]
        counts = np.zeros_like(tally)
        counts[ranks[0]] = tally
        first = np.frombuffer(self._first, dtype=np.int32)[by_key]
        verdicts = np.frombuffer(self._bits, dtype=np.uint8)[by_key]
        self._first, self._bits = array.array("i"), array.array("B")
        origin = None
        if self.locate:
            # each group's entry in the appended arrays (by first row: they ascend there)
            born = np.frombuffer(self._born, dtype=np.int32) if self._born else first[:0]
            at = np.empty(len(first), dtype=np.int32)
            for start in range(0, len(first), _FINISH_BLOCK):
                part = slice(start, start + _FINISH_BLOCK)
                at[part] = np.searchsorted(born, first[part])
            del born
            origin = GroupOrigin(
                at=at,
                line=np.frombuffer(self._line, dtype=np.uint32) if self._line else _NO_LINES,
                offset_low=np.frombuffer(self._offset, dtype=np.uint32)
                if self._offset
                else _NO_LINES,
                offset_high=tuple(self._offset_high),
                run=np.frombuffer(self._run, dtype=np.uint16) if self._run else _NO_RUNS,
            )
            self._born = array.array("i")
            del at
        return SentenceColumns(
            systems=values[0],
            questions=values[1],
            sentences=values[2],
            system=system,
            question=question,
            sentence=sentence,
            verdicts=verdicts,
            first=first,
            verdict_counts=counts,
            rows=self._rows,
            origin=origin,
        )


def _insert_sorted(
    buffers: Sequence[array.array[int]], at: npt.NDArray[np.int64], values: Sequence[Any]
) -> None:
    """``np.insert`` into growing buffers, in place: value ``i`` goes before old item ``at[i]``.

    ``at`` ascends (the places of sorted new keys among sorted old ones). Each buffer grows
    by the new items (realloc, no second copy) and its items from ``at[0]`` on move up by the
    number of new items before them, a block at a time from the end (a block never lands on
    items not moved yet: it moves up, and the items below it stay until their turn).
    """
    k = len(at)
    if not k:
        return
    n = len(buffers[0])
    for buf in buffers:
        buf.frombytes(bytes(k * buf.itemsize))
    views = [np.frombuffer(buf, dtype=f"={buf.typecode}") for buf in buffers]
    end, low = n, int(at[0])
    while end > low:
        begin = max(low, end - _FINISH_BLOCK)
        old = np.arange(begin, end, dtype=np.int64)
        moved = old + np.searchsorted(at, old, side="right")
        for view in views:
            view[moved] = view[begin:end].copy()
        end = begin
    place = at + np.arange(k, dtype=np.int64)
    for view, new in zip(views, values, strict=True):
        view[place] = new
    del view, views  # (a buffer with a view cannot grow)


def _sorted_codes(
    first_seen: Sequence[str], codes: Iterable[int]
) -> tuple[npt.NDArray[np.int64], list[str]]:
    """Each code's rank in the sorted order of the values ``codes`` name, and those values.

    ``first_seen[c]`` is code ``c``'s value; codes not in ``codes`` get rank -1.
    """
    order = sorted(codes, key=first_seen.__getitem__)
    rank = np.full(len(first_seen), -1, dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank, [first_seen[i] for i in order]


_NO_RUNS = np.zeros(0, dtype=np.uint16)
_NO_LINES = np.zeros(0, dtype=np.uint32)


@dataclass(frozen=True)
class ScatteredRows:
    """The rows of some groups, one entry a row, sorted by group then row (32 bytes a row).

    What a scan finds for groups whose claims are no run of rows: each row's group, its
    number, file, 1-based line and byte offset.
    """

    group: IntArray
    row: IntArray
    file: Int32Array
    line: IntArray
    offset: IntArray

    def __contains__(self, group: object) -> bool:
        if not isinstance(group, int):
            return False
        at = int(np.searchsorted(self.group, group))
        return at < len(self.group) and int(self.group[at]) == group

    def of(self, group: int) -> list[tuple[int, int, int, int]]:
        """The group's rows as (row, file, line, offset), in row order."""
        lo = int(np.searchsorted(self.group, group, side="left"))
        hi = int(np.searchsorted(self.group, group, side="right"))
        return list(
            zip(
                self.row[lo:hi].tolist(),
                self.file[lo:hi].tolist(),
                self.line[lo:hi].tolist(),
                self.offset[lo:hi].tolist(),
                strict=True,
            )
        )


@dataclass(frozen=True)
class GroupOrigin:
    """Where the rows of each sentence group are (:class:`GroupCodes` with ``locate``).

    Group ``g``'s entry is ``at[g]``: the 1-based line and byte offset of its first row
    (Parquet: the row number and the 0-based row, as :class:`Origin`) and ``run``, its
    number of rows when they are consecutive rows, else 0 (then only a scan finds them).
    An offset is held as its low 32 bits (``offset_low``) and the high bits of the entries
    from each ``(entry, high)`` of ``offset_high`` on (they change rarely: offsets ascend
    within a file); :meth:`where` gives whole offsets.
    A reader of several files names them (``paths``, ``formats``) with each file's first
    row (``starts``), and ends a run at the end of its file.
    """

    at: Int32Array
    line: npt.NDArray[np.uint32]
    offset_low: npt.NDArray[np.uint32]
    offset_high: tuple[tuple[int, int], ...]
    run: npt.NDArray[np.uint16]
    paths: tuple[Path, ...] = ()
    formats: tuple[str, ...] = ()
    starts: IntArray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    #: Rows of groups that are no run, found by a scan (:class:`ScatteredRows`).
    scattered: ScatteredRows | None = None

    def rows_of(self, group: int) -> list[tuple[int, int, int, int]]:
        """A scattered group's rows as (row, file, line, offset), in row order (else [])."""
        return self.scattered.of(group) if self.scattered is not None else []

    def where(
        self, groups: Sequence[int] | IntArray, first: Int32Array
    ) -> tuple[list[int], list[int], list[int], list[int]]:
        """File, line, offset and run of ``groups`` (``first``: every group's first row)."""
        idx = np.asarray(groups, dtype=np.int64)
        at = self.at[idx]
        file = np.searchsorted(self.starts, first[idx], side="right") - 1
        offset = self.offset_low[at].astype(np.int64)
        if len(self.offset_high) > 1 or self.offset_high[0][1]:
            begins = np.array([entry for entry, _ in self.offset_high], dtype=np.int64)
            highs = np.array([high for _, high in self.offset_high], dtype=np.int64)
            offset += highs[np.searchsorted(begins, at, side="right") - 1] << 32
        return (
            file.tolist(),
            self.line[at].tolist(),
            offset.tolist(),
            self.run[at].tolist(),
        )


@dataclass(frozen=True)
class SentenceColumns:
    """Traces reduced to their (system, question, sentence) groups (:class:`GroupCodes`).

    Enough for sentence-level metrics, verdict distributions and the label checks of
    sentence labels, in memory that follows the sentences, not the claims. Groups are
    sorted by (system, question, sentence); codes index the sorted ``systems``,
    ``questions`` and ``sentences``; ``verdicts`` has bit ``i`` set when one of the group's
    claims has verdict ``VERDICTS[i]``; ``first`` is the group's first trace row.
    """

    systems: list[str]
    questions: list[str]
    sentences: list[str]
    system: Int32Array
    question: Int32Array
    sentence: Int32Array
    verdicts: npt.NDArray[np.uint8]
    first: Int32Array
    verdict_counts: IntArray  # (systems, VERDICTS): claims per system and verdict
    rows: int
    #: Where each group's rows are (read with ``locate``), else None.
    origin: GroupOrigin | None = None

    def __len__(self) -> int:
        """Number of traces."""
        return self.rows

    def of_system(self, system: str) -> SentenceColumns:
        """The groups of one system (vocabularies of questions and sentences kept; no origin).

        For the checks of per-system labels against that system's traces.
        """
        at = bisect.bisect_left(self.systems, system)
        code = at if at < len(self.systems) and self.systems[at] == system else -1
        mask = self.system == code
        counts = self.verdict_counts[[code]] if code >= 0 else self.verdict_counts[:0]
        return SentenceColumns(
            systems=[system] if code >= 0 else [],
            questions=self.questions,
            sentences=self.sentences,
            system=np.zeros(int(mask.sum()), dtype=np.int32),
            question=self.question[mask],
            sentence=self.sentence[mask],
            verdicts=self.verdicts[mask],
            first=self.first[mask],
            verdict_counts=counts,
            rows=int(counts.sum()),
        )

    def flags(self, error_verdicts: Collection[Verdict]) -> npt.NDArray[np.bool_]:
        """Any-error per group: one of its claims has one of ``error_verdicts``."""
        mask = sum(1 << VERDICTS.index(v) for v in set(error_verdicts))
        out: npt.NDArray[np.bool_] = (self.verdicts & np.uint8(mask)) != 0
        return out
