"""The embedded analytical engine (DuckDB): connections and the tool's validated-file marker.

Issue 30. The analysis steps do their row work (scan, group, count, find duplicates, join) in
DuckDB: C++ over columns, every core, spilling to disk past its memory limit. Each command
opens one in-memory connection (:func:`connect`), loads its inputs as tables
(:mod:`failcodes.tracetable`) and queries them; numpy does the per-question arithmetic and the
bootstrap on the small count arrays that come out.

Validation happens once, at the boundary. A file the tool did not write goes through the
strict reader (duplicate keys, NaN/Infinity, depth, lone surrogates, unknown fields: the
one-line errors naming file, line and field) before the engine sees its rows. A Parquet trace
file the tool wrote itself from validated traces carries a marker in its footer
(:func:`validated_marker`, checked by :func:`is_validated`): the engine reads it directly.
The marker vouches for what the writer checked (every row a valid trace, ids neither blank
nor padded, verdicts canonical, no ``(system, claim_id)`` twice); a file rewritten by another
tool loses it (a Parquet writer does not copy another file's metadata unless told to).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

#: The Parquet footer key of the marker (key-value metadata).
MARKER_KEY = b"failcodes.validated"
#: What the marker vouches for; a reader that knows another version re-validates.
MARKER_VERSION = 1
#: Memory DuckDB may hold before it spills to its temporary folder (env FAILCODES_MEMORY).
DEFAULT_MEMORY = "1GB"


def available() -> bool:
    """True if DuckDB is installed.

    A virtualenv made before it was a dependency lacks it: the strict readers then do the
    work, with the same results, more slowly.
    """
    import importlib.util

    return importlib.util.find_spec("duckdb") is not None


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection: all cores, a memory limit, spilling to a temp folder.

    ``FAILCODES_THREADS`` and ``FAILCODES_MEMORY`` (e.g. ``4GB``) override the defaults
    (every core; :data:`DEFAULT_MEMORY`). The spill folder is under the system's temporary
    folder and removed when the process ends.
    """
    import duckdb

    threads = int(os.environ.get("FAILCODES_THREADS") or os.cpu_count() or 1)
    spill = Path(tempfile.gettempdir()) / f"failcodes-duckdb-{os.getpid()}"
    config: dict[str, str | bool | int | float | list[str]] = {
        "threads": max(1, threads),
        "memory_limit": os.environ.get("FAILCODES_MEMORY") or DEFAULT_MEMORY,
        "temp_directory": str(spill),
        # results come back in the order a query asks for (ORDER BY), not the scan's
        "preserve_insertion_order": False,
    }
    return duckdb.connect(":memory:", config=config)


def validated_marker(kind: str, rows: int) -> dict[bytes, bytes]:
    """Footer metadata saying the tool wrote ``rows`` validated rows of ``kind`` (``traces``)."""
    value = {"kind": kind, "version": MARKER_VERSION, "rows": rows}
    return {MARKER_KEY: json.dumps(value, sort_keys=True).encode("utf-8")}


def marker_of(metadata: Any) -> dict[str, Any] | None:
    """The marker in a Parquet file's key-value metadata (pyarrow's), or None."""
    raw = (metadata or {}).get(MARKER_KEY)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def is_validated(path: Path, kind: str = "traces", *, schema: Any = None) -> bool:
    """True if ``path`` is a Parquet file the tool wrote with validated ``kind`` rows.

    Reads the footer only: the marker's kind and version, its row count against the
    footer's, and (given ``schema``, a pyarrow schema) the columns and their types.
    """
    if path.suffix.lower() != ".parquet" or not path.is_file():
        return False
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    try:
        meta = pq.read_metadata(path)
        arrow = pq.read_schema(path)
    except (pa.ArrowException, OSError):
        return False
    marker = marker_of(meta.metadata)
    if marker is None or marker.get("kind") != kind or marker.get("version") != MARKER_VERSION:
        return False
    if marker.get("rows") != meta.num_rows:
        return False
    if schema is not None:
        if arrow.names != schema.names:
            return False
        if any(arrow.field(n).type != schema.field(n).type for n in schema.names):
            return False
    return True


def quoted(path: Path) -> str:
    """A path as a SQL string literal."""
    return "'" + str(path).replace("'", "''") + "'"


__all__ = [
    "DEFAULT_MEMORY",
    "MARKER_KEY",
    "MARKER_VERSION",
    "available",
    "connect",
    "is_validated",
    "marker_of",
    "quoted",
    "validated_marker",
]
