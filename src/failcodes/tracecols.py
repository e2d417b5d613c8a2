"""Traces as columns: one coded column per key field, one row per trace, in input order.

The analysis core (metrics, aggregation, disagreements, units) works on these columns instead
of one :class:`~failcodes.traces.Trace` object per claim: at paper scale (120k traces, 1.2M
passages) building and garbage-collecting the objects cost more than the analysis itself.
:class:`TraceColumns` holds the key columns only (:data:`KEY_COLUMNS`, the verdict already
canonical). A step that needs text or passages fetches the traces of the rows it needs
(:func:`failcodes.columnar.claim_fetcher`) through :attr:`TraceColumns.origin`.

Pydantic models stay the contract at the edges: :meth:`TraceColumns.from_traces` takes
traces. Nothing here reads or writes files.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from failcodes.traces import Marks, Trace, tally_undeclared
from failcodes.verdicts import Verdict

#: Columns every :class:`TraceColumns` has (what metrics and aggregation need).
KEY_COLUMNS: tuple[str, ...] = ("system", "question_id", "sentence_id", "claim_id", "verdict")
#: Every scalar trace field (everything but ``passages``), in model order.
SCALAR_COLUMNS: tuple[str, ...] = tuple(n for n in Trace.model_fields if n != "passages")
#: Canonical verdicts in code order (``verdict_codes`` indexes this tuple).
VERDICTS: tuple[Verdict, ...] = tuple(Verdict)

IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]


#: The Arrow types the columnar Parquet checks meet (flags, string lengths and list
#: offsets, ranks, scores: the trace schema's); any other goes through ``to_numpy``.
_NUMPY_TYPES = {"bool": np.bool_, "int32": np.int32, "int64": np.int64, "double": np.float64}


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


def _encoded(values: list[str]) -> tuple[Int32Array, list[str]]:
    """A column as int32 codes into its distinct values, sorted (code point order)."""
    uniques = sorted(dict.fromkeys(values))
    at = {v: i for i, v in enumerate(uniques)}
    return np.fromiter(map(at.__getitem__, values), dtype=np.int32, count=len(values)), uniques


@dataclass(frozen=True)
class TraceColumns:
    """Traces as columns (see the module doc); ``origin`` is None for in-memory input.

    Each key column is held in ``encoded`` as int32 codes and its distinct values, sorted
    (code point order, as Python sorts strings and as the engine's readers give them);
    :attr:`table` gives them as one Arrow table of strings.
    """

    encoded: Mapping[str, tuple[Int32Array, list[str]]]
    origin: Origin | None = None
    #: The traces the columns were made from (in-memory input; rows index them).
    objects: Sequence[Trace] | None = None
    #: Per system, its traces of no declared evidence source: [bare, retrieving]
    #: (:func:`~failcodes.traces.tally_undeclared`; the tool's own Parquet: its footer's);
    #: None: not known (a Parquet file written before its footer held them).
    undeclared: Mapping[str, Sequence[int]] | None = None
    #: Traces whose verdict a default alias read, per alias word (true/false read as
    #: supported/refuted, NEI as no_evidence...; none for the tool's own Parquet, whose
    #: verdicts are canonical: its ingest said them).
    truths: Mapping[str, int] = field(default_factory=dict)
    #: The reasonings and passages whose text is a missing mark, read as none (JSONL and
    #: CSV files; None: not counted, as for the tool's own Parquet, whose ingest read them).
    marks: Marks | None = None

    @classmethod
    def from_traces(cls, traces: Sequence[Trace]) -> TraceColumns:
        """The key columns of in-memory traces (the traces themselves kept as ``objects``)."""
        encoded = {}
        for n in KEY_COLUMNS:
            column = [getattr(t, n) for t in traces]
            if n == "verdict":
                column = [v.value if isinstance(v, Verdict) else v for v in column]
            encoded[n] = _encoded(column)
        undeclared: dict[str, list[int]] = {}
        for t in traces:
            tally_undeclared(undeclared, t.system, t.evidence_source, t.passages, t.retriever)
        return cls(encoded, None, traces, undeclared)

    def __len__(self) -> int:
        """Number of traces."""
        return len(next(iter(self.encoded.values()))[0])

    @property
    def table(self) -> Any:
        """Every column as one pyarrow table of strings."""
        import pyarrow as pa  # type: ignore[import-untyped]

        return pa.table(
            {
                name: pa.array(values, type=pa.string()).take(codes)
                for name, (codes, values) in self.encoded.items()
            }
        )

    def values(self, name: str) -> list[Any]:
        """One column as a Python list."""
        codes, uniques = self.encoded[name]
        return [uniques[c] for c in codes.tolist()]

    def value(self, name: str, row: int) -> Any:
        """One cell."""
        codes, uniques = self.encoded[name]
        return uniques[int(codes[row])]

    def codes(self, name: str) -> tuple[IntArray, list[str]]:
        """Integer codes of a string column and its distinct values, sorted.

        ``uniques[codes[i]]`` is row ``i``'s value; codes follow the sorted order of the
        values (code point order, as Python sorts strings). A fresh int64 copy of the codes
        (not cached: 8 bytes a row).
        """
        small, values = self.encoded[name]
        return small.astype(np.int64), values

    def small_codes(self, name: str) -> tuple[npt.NDArray[np.integer[Any]], list[str]]:
        """:meth:`codes` without the int64 copy: the column's own int32 codes.

        For indexing, grouping and ``np.unique``; widen to int64 before multiplying codes
        into a combined key (int32 products overflow at 10x paper scale).
        """
        return self.encoded[name]

    def verdict_codes(self) -> IntArray:
        """Each row's verdict as an index into :data:`VERDICTS`."""
        codes, uniques = self.small_codes("verdict")  # no int64 copy of the codes
        lookup = np.array([VERDICTS.index(Verdict(v)) for v in uniques], dtype=np.int64)
        out: IntArray = lookup[codes] if len(codes) else np.zeros(0, dtype=np.int64)
        return out

    def error_rows(self, error_verdicts: Collection[Verdict]) -> npt.NDArray[np.bool_]:
        """Per row: its verdict is one of ``error_verdicts`` (a mapping's errors)."""
        lookup = np.array([v in error_verdicts for v in VERDICTS], dtype=bool)
        out: npt.NDArray[np.bool_] = lookup[self.verdict_codes()]
        return out

    def take(self, rows: Sequence[int] | IntArray) -> TraceColumns:
        """The given rows, in the given order (origin kept)."""
        idx = np.asarray(rows, dtype=np.int64)
        origin = self.origin
        if origin is not None:
            origin = Origin(
                origin.paths, origin.formats, origin.file[idx], origin.line[idx], origin.offset[idx]
            )
        objects = None if self.objects is None else [self.objects[int(i)] for i in idx]
        encoded = {}
        for name, (codes, values) in self.encoded.items():
            present, inverse = np.unique(codes[idx], return_inverse=True)
            encoded[name] = (
                inverse.reshape(-1).astype(np.int32),
                [values[int(c)] for c in present],
            )
        return TraceColumns(encoded, origin, objects)

    def of_system(self, system: str) -> TraceColumns:
        """The rows of one system (in input order; none if it has no trace)."""
        codes, systems = self.small_codes("system")
        at = bisect.bisect_left(systems, system)
        code = at if at < len(systems) and systems[at] == system else -1
        return self.take(np.flatnonzero(codes == code))


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
    """Where the rows of each sentence group are (read with ``locate``).

    Group ``g``'s first row is at 1-based ``line[g]`` and byte ``offset[g]`` (Parquet: the
    row number and the 0-based row, as :class:`Origin`); ``run[g]`` is its number of rows
    when they are consecutive rows, else 0 (then only a scan finds them).
    A reader of several files names them (``paths``, ``formats``) with each file's first
    row (``starts``), and ends a run at the end of its file.
    """

    line: npt.NDArray[np.uint32]
    offset: IntArray
    run: npt.NDArray[np.uint16]
    paths: tuple[Path, ...] = ()
    formats: tuple[str, ...] = ()
    starts: IntArray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    #: Rows of groups that are no run, found by a scan (:class:`ScatteredRows`).
    scattered: ScatteredRows | None = None
    #: The JSONL files (indexes into ``paths``) every line of which the scan's voucher took
    #: (:meth:`Voucher.lines <failcodes.tracelines.Voucher.lines>`: none the object reader's).
    vouched: frozenset[int] = frozenset()

    def rows_of(self, group: int) -> list[tuple[int, int, int, int]]:
        """A scattered group's rows as (row, file, line, offset), in row order (else [])."""
        return self.scattered.of(group) if self.scattered is not None else []

    def where(
        self, groups: Sequence[int] | IntArray, first: Int32Array
    ) -> tuple[list[int], list[int], list[int], list[int]]:
        """File, line, offset and run of ``groups`` (``first``: every group's first row)."""
        idx = np.asarray(groups, dtype=np.int64)
        file = np.searchsorted(self.starts, first[idx], side="right") - 1
        return (
            file.tolist(),
            self.line[idx].tolist(),
            self.offset[idx].tolist(),
            self.run[idx].tolist(),
        )


@dataclass(frozen=True)
class VerdictCounts:
    """How many claims of each system have each canonical verdict (Table 5), nothing per claim.

    ``systems`` sorted; ``verdict_counts`` has one row per system, one column per
    :data:`VERDICTS` entry.
    """

    systems: list[str]
    verdict_counts: IntArray

    @classmethod
    def of_columns(cls, cols: TraceColumns) -> VerdictCounts:
        """The counts of traces read as columns."""
        n_v = len(VERDICTS)
        sys_codes, systems = cols.small_codes("system")
        keys = sys_codes.astype(np.int64) * n_v + cols.verdict_codes()
        tally = np.bincount(keys, minlength=len(systems) * n_v).astype(np.int64)
        return cls(list(systems), tally.reshape(len(systems), n_v))


@dataclass(frozen=True)
class SentenceColumns:
    """Traces reduced to their (system, question, sentence) groups (grouped by the engine).

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
    #: Whether a sentence id has two texts in the traces (None: not known; the label checks
    #: then read the texts again).
    texts_differ: bool | None = None
    #: As :attr:`TraceColumns.undeclared`.
    undeclared: Mapping[str, Sequence[int]] | None = None
    #: As :attr:`TraceColumns.truths`.
    truths: Mapping[str, int] = field(default_factory=dict)
    #: As :attr:`TraceColumns.marks`.
    marks: Marks | None = None

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
