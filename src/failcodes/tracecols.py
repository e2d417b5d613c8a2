"""Traces as columns: one Arrow column per trace field, one row per trace, in input order.

The analysis core (metrics, aggregation, disagreements, units) works on these columns instead
of one :class:`~failcodes.traces.Trace` object per claim: at paper scale (120k traces, 1.2M
passages) building and garbage-collecting the objects cost more than the analysis itself.
:class:`TraceColumns` always holds the key columns (:data:`KEY_COLUMNS`, the verdict already
canonical); readers add the other scalar fields only when a step needs the text. Passages are
never held here: a step that needs them fetches the full traces of the rows it needs
(:func:`failcodes.dataio.gather_traces`) through :attr:`TraceColumns.origin`.

Pydantic models stay the contract at the edges: :meth:`TraceColumns.from_traces` takes
traces, :meth:`TraceColumns.to_traces` gives them back. Nothing here reads or writes files.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def pyarrow_module() -> Any:
    """Return ``pyarrow``, imported on first use (~0.2 s)."""
    import pyarrow as pa  # type: ignore[import-untyped]

    return pa


@dataclass(frozen=True)
class Origin:
    """Where each row was read from: file index (into ``paths``), 1-based line, byte offset.

    For Parquet the "line" is the 1-based row number and ``offsets`` holds the 0-based row;
    ``formats`` names each file's format (``"jsonl"`` or ``"parquet"``).
    """

    paths: tuple[Path, ...]
    formats: tuple[str, ...]
    file: IntArray
    line: IntArray
    offset: IntArray


@dataclass(frozen=True)
class TraceColumns:
    """Traces as an Arrow table (see the module doc); ``origin`` is None for in-memory input."""

    table: Any  # pyarrow.Table with at least KEY_COLUMNS
    origin: Origin | None = None
    #: The traces the columns were made from (in-memory input; rows index them).
    objects: Sequence[Trace] | None = None
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
        table = pa.table({n: pa.array(data[n], type=pa.string()) for n in names})
        return cls(table, None, traces)

    def __len__(self) -> int:
        """Number of traces."""
        return int(self.table.num_rows)

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns held."""
        return tuple(self.table.column_names)

    def values(self, name: str) -> list[Any]:
        """One column as a Python list (None for missing values)."""
        out: list[Any] = self.table.column(name).to_pylist()
        return out

    def codes(self, name: str) -> tuple[IntArray, list[str]]:
        """Integer codes of a string column and its distinct values, sorted.

        ``uniques[codes[i]]`` is row ``i``'s value; codes follow the sorted order of the
        values (code point order, as Python sorts strings). Cached per column.
        """
        cached = self._codes.get(name)
        if cached is not None:
            return cached
        col = self.table.column(name)
        encoded = col.combine_chunks().dictionary_encode() if len(col) else None
        if encoded is None:
            out: tuple[IntArray, list[str]] = (np.zeros(0, dtype=np.int64), [])
        else:
            first: list[str] = encoded.dictionary.to_pylist()
            order = sorted(range(len(first)), key=first.__getitem__)
            rank = np.empty(len(first), dtype=np.int64)
            rank[order] = np.arange(len(first), dtype=np.int64)
            idx = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            out = (rank[idx], [first[i] for i in order])
        self._codes[name] = out
        return out

    def verdict_codes(self) -> IntArray:
        """Each row's verdict as an index into :data:`VERDICTS`."""
        codes, uniques = self.codes("verdict")
        lookup = np.array([VERDICTS.index(Verdict(v)) for v in uniques], dtype=np.int64)
        return lookup[codes] if len(codes) else codes

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
        return TraceColumns(self.table.take(idx), origin, objects)

    def to_traces(self) -> list[Trace]:
        """The rows as (passage-less) :class:`Trace` models: needs every required column."""
        names = [n for n in SCALAR_COLUMNS if n in self.table.column_names]
        rows = self.table.select(names).to_pylist()
        return [Trace.model_validate({k: v for k, v in r.items() if v is not None}) for r in rows]
