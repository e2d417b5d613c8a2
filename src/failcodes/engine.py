"""The embedded analytical engine (DuckDB): connections and the tool's validated-file marker.

Issue 30. The analysis steps do their row work (scan, group, count, find duplicates, join) in
DuckDB: C++ over columns, every core, spilling to disk past its memory limit. Each command
opens one in-memory connection (:func:`connect`) and gives it its inputs
(:mod:`failcodes.columnar`, :mod:`failcodes.disagreementsql`); numpy does the per-question
arithmetic and the bootstrap on the small count arrays that come out.

A Parquet trace file the tool wrote itself from validated traces carries a marker in its
footer (:func:`validated_marker`, checked by :func:`is_validated`): the engine reads it
directly; any other file goes through the strict readers first. What the marker vouches for
and how a file another tool rewrote is caught: docs/architecture.md, "The analysis engine".
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, BinaryIO, ParamSpec, TypeVar

from failcodes.errors import ConfigError
from failcodes.fileio import run_tag, sweep_stale

if TYPE_CHECKING:
    import duckdb

_P = ParamSpec("_P")
_T = TypeVar("_T")

#: The Parquet footer key of the marker (key-value metadata).
MARKER_KEY = b"failcodes.validated"
#: What the marker vouches for; a reader that knows another version re-validates (3: the
#: marker holds a digest of the footer it is in, :func:`seal`).
MARKER_VERSION = 3
#: The marker's digest as the writer gives it, before :func:`seal` patches the file: as long
#: as a digest (SHA-256, hexadecimal), so the footer's lengths hold.
UNSEALED = "0" * 64
#: Memory DuckDB may hold before it spills to its temporary folder (env FAILCODES_MEMORY).
DEFAULT_MEMORY = "1GB"


def core() -> ModuleType:
    """DuckDB's C++ extension (``_duckdb``: connections, ``execute``, the fetches, errors).

    The ``duckdb`` package re-exports it and adds the relational API (``con.sql``,
    ``from_arrow``...) in Python, which the engine's queries over the tool's own Parquet
    never call: importing the package cost 492 M instructions against the extension's 131 M
    (callgrind; ``metrics`` of bench_engine's own Parquet 3,256 -> ~2,900 M, issue 30). A
    module that needs the relational API imports ``duckdb`` (the methods are added to the same
    connection class). DuckDB before 1.3 ships no ``_duckdb``: the package, then.
    """
    try:
        import _duckdb
    except ImportError:  # pragma: no cover - duckdb < 1.3
        import duckdb

        return duckdb
    return _duckdb


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection: all cores, a memory limit, spilling to a temp folder.

    ``FAILCODES_THREADS`` and ``FAILCODES_MEMORY`` (e.g. ``4GB``) override the defaults
    (every core; :data:`DEFAULT_MEMORY`). The spill folder is under the system's temporary
    folder and removed when the process ends.
    """
    db = core()
    given = os.environ.get("FAILCODES_THREADS")
    if given and not (given.strip().isdigit() and int(given) > 0):
        raise ConfigError(
            f"FAILCODES_THREADS={given!r}: expected a whole number of threads, 1 or more "
            "(unset it to use every core)"
        )
    threads = int(given or os.cpu_count() or 1)
    memory = os.environ.get("FAILCODES_MEMORY")
    spill = Path(tempfile.gettempdir()) / f"failcodes-duckdb-{run_tag()}"
    sweep_stale(spill.parent)  # a killed run's spill (GBs) stays
    config: dict[str, str | bool | int | float | list[str]] = {
        "threads": max(1, threads),
        "memory_limit": memory or DEFAULT_MEMORY,
        "temp_directory": str(spill),
        # results come back in the order a query asks for (ORDER BY), not the scan's
        "preserve_insertion_order": False,
    }
    try:
        con: duckdb.DuckDBPyConnection = db.connect(":memory:", config=config)
    except db.Error as exc:
        if not memory:
            raise
        reason = " ".join(str(exc).split())
        raise ConfigError(
            f"FAILCODES_MEMORY={memory!r}: DuckDB cannot read it as a memory size ({reason}); "
            f"expected a number with a unit, e.g. 4GB or 500MB (unset it for {DEFAULT_MEMORY})"
        ) from None
    # each Parquet footer parsed once, not by every query that reads the file (at 10x paper
    # scale a parse is ~50 ms and leaves ~30 MB freed but held by the allocator)
    return con.execute("SET parquet_metadata_cache = true")


def translate_out_of_memory(func: Callable[_P, _T]) -> Callable[_P, _T]:
    """``func`` with DuckDB out of its memory limit raised as a :class:`ConfigError`.

    One line naming the limit and ``FAILCODES_MEMORY`` (the CLI prints it, exit 2), for a
    Python caller (``failcodes.run``) too, where DuckDB's own exception named neither. Put on
    the readers that open a connection (:func:`connect`), outside their own fallbacks: a
    reader that catches DuckDB's errors to take a slower path still sees them.
    """

    @functools.wraps(func)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return func(*args, **kwargs)
        except Exception as exc:
            error = out_of_memory(exc)
            if error is None:
                raise
            raise error from exc

    return call


def register_arrow(con: duckdb.DuckDBPyConnection, name: str, table: Any) -> None:
    """Register the Arrow ``table`` on ``con`` as the view ``name``.

    Scanning a Python Arrow object needs the ``duckdb`` package's Python layer (it sets up
    ``duckdb._sources``, which the extension reads; a connection from :func:`core` alone
    refuses the scan), so the package is imported here, on the paths that scan Arrow data.
    """
    import duckdb  # noqa: F401  (sets up duckdb._sources)

    con.register(name, table)


def out_of_memory(exc: BaseException) -> ConfigError | None:
    """The one-line error of DuckDB out of its memory limit (and of spill space), or None.

    DuckDB's exception classes are looked up where DuckDB is loaded, never imported here
    (``failcodes --help`` loads no DuckDB). Below ~1 MB the same shortage reaches a commit
    and is a TransactionException saying it could not allocate.
    """
    duckdb = sys.modules.get("_duckdb") or sys.modules.get("duckdb")
    if duckdb is None or not isinstance(exc, duckdb.Error):
        return None
    said = str(exc).split("Possible solutions")[0]
    if not isinstance(exc, duckdb.OutOfMemoryException) and "could not allocate" not in said:
        return None
    limit = os.environ.get("FAILCODES_MEMORY") or DEFAULT_MEMORY
    return ConfigError(
        f"the analysis engine (DuckDB) ran out of its memory limit {limit} "
        f"({' '.join(said.split())}): raise FAILCODES_MEMORY (e.g. FAILCODES_MEMORY=4GB), "
        f"or free space in {tempfile.gettempdir()}, where it spills"
    )


def validated_marker(kind: str, rows: int) -> dict[bytes, bytes]:
    """Footer metadata saying the tool wrote ``rows`` validated rows of ``kind`` (``traces``).

    Its digest is :data:`UNSEALED` until :func:`seal` binds it to the written file's footer:
    a file left unsealed is read as any foreign file.
    """
    value = {"digest": UNSEALED, "kind": kind, "version": MARKER_VERSION, "rows": rows}
    return {MARKER_KEY: json.dumps(value, sort_keys=True).encode("utf-8")}


#: The start of a marker's value (``sort_keys``: the digest first), up to its 64 digits.
_DIGEST_AT = b'{"digest": "'


def seal(path: Path) -> bool:
    """Bind the marker in the footer of the closed Parquet file ``path`` to that footer.

    The footer (Thrift: the schema, each row group's row count and, per column chunk, its
    offsets, compressed and uncompressed sizes, value count and statistics, and the
    key-value metadata) is hashed (SHA-256) with the marker's digest :data:`UNSEALED`, and
    the digest is written over the placeholder in place: the same length, so the footer's
    lengths hold. False (the file left unsealed, so never trusted) unless the footer holds
    the placeholder marker exactly once. A footer copied onto a rewritten file no longer
    hashes to its digest (:func:`sealed`); docs/architecture.md says what it does not catch.
    """
    with path.open("r+b") as fh:
        start, footer = _footer_span(fh)
        placeholder = _DIGEST_AT + UNSEALED.encode("ascii")
        if footer.count(placeholder) != 1:
            return False
        fh.seek(start + footer.index(placeholder) + len(_DIGEST_AT))
        fh.write(hashlib.sha256(footer).hexdigest().encode("ascii"))
    return True


def sealed(path: Path, raw: bytes) -> bool:
    """Whether the marker ``raw`` (its value in ``path``'s footer) holds the footer's digest.

    The footer is read as bytes (no library) and hashed with the marker's digest put back
    to :data:`UNSEALED` (:func:`seal`). A marker found twice in the footer, unsealed, or
    not as :func:`validated_marker` writes it, is not.
    """
    if not raw.startswith(_DIGEST_AT) or raw[len(_DIGEST_AT) + 64 : len(_DIGEST_AT) + 65] != b'"':
        return False
    digest = raw[len(_DIGEST_AT) : len(_DIGEST_AT) + 64]
    if digest == UNSEALED.encode("ascii"):
        return False
    try:
        footer = _footer_bytes(path)
    except OSError:
        return False
    if footer.count(raw) != 1:
        return False
    at = footer.index(raw) + len(_DIGEST_AT)
    unsealed = footer[:at] + UNSEALED.encode("ascii") + footer[at + 64 :]
    return hmac.compare_digest(hashlib.sha256(unsealed).hexdigest().encode("ascii"), digest)


def marker_holds(path: Path, pairs: Any, rows: int, kind: str = "traces") -> bool:
    """Whether ``path``'s footer (key-value ``pairs``, ``rows``) vouches for ``kind`` rows.

    The marker of this version and kind, its row count the footer's, and its digest the
    footer's (:func:`sealed`): a marker copied onto a rewritten file is not.
    """
    marker = marker_of(pairs)
    if marker is None or marker.get("kind") != kind:
        return False
    if marker.get("version") != MARKER_VERSION or marker.get("rows") != rows:
        return False
    return sealed(path, pairs[MARKER_KEY])


def marker_of(metadata: Any) -> dict[str, Any] | None:
    """The marker in a Parquet file's key-value metadata (bytes to bytes), or None."""
    raw = (metadata or {}).get(MARKER_KEY)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def is_validated(
    path: Path,
    kind: str = "traces",
    *,
    schema: Any = None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> bool:
    """True if ``path`` is a Parquet file the tool wrote with validated ``kind`` rows.

    Reads the footer only: the marker's kind and version, its row count against the
    footer's, and (given ``schema``) the columns and their types as DuckDB reads them.
    ``schema`` is a sequence of ``(name, DuckDB type)`` pairs (:func:`columns_of`) or a
    pyarrow schema. ``con`` is a connection to read with (a new one costs ~0.04 CPU-s).

    A file found validated is not read again while it is unchanged (its inode, size, and
    modification and change times): ``disagreements`` asked twice, and a new connection to
    ask with was ~96 M instructions of a run 1.01x the DuckDB script's (issue 30).
    """
    if not may_be_validated(path):
        return False
    try:
        st = path.stat()
    except OSError:
        return False
    key: tuple[Any, ...] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, kind)
    if schema is not None:
        key += tuple(map(tuple, schema)) if not hasattr(schema, "empty_table") else (schema,)
    if key in _VALIDATED:
        return True
    if _read_validated(path, kind, schema, con):
        _VALIDATED.add(key)
        return True
    return False


#: The files :func:`is_validated` found validated, keyed as it keys them.
_VALIDATED: set[tuple[Any, ...]] = set()


def _read_validated(
    path: Path, kind: str, schema: Any, con: duckdb.DuckDBPyConnection | None
) -> bool:
    """:func:`is_validated`, read from the file's footer."""
    db = core()
    own = con is None
    con = db.connect(":memory:") if con is None else con
    try:
        pairs, rows = footer_of(path, con)
        if not marker_holds(path, pairs, rows, kind):
            return False
        if schema is None:
            return True
        found = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
        return [(n, t) for n, t, *_ in found] == columns_of(schema, con)
    except db.Error:
        return False
    finally:
        if own:
            con.close()


def footer_of(path: Path, con: Any = None) -> tuple[dict[bytes, bytes], int]:
    """A Parquet file's key-value metadata and its row count, read from the footer alone.

    ``con``: a connection to read with (default: a new one, closed after). DuckDB's errors
    propagate (``core().Error``).
    """
    own = con is None
    con = core().connect(":memory:") if con is None else con
    try:
        name = [str(path)]
        pairs = con.execute("SELECT key, value FROM parquet_kv_metadata(?)", name).fetchall()
        [(rows,)] = con.execute("SELECT num_rows FROM parquet_file_metadata(?)", name).fetchall()
        return {bytes(k): bytes(v) for k, v in pairs}, int(rows)
    finally:
        if own:
            con.close()


def footer_holds(path: Path, key: bytes) -> bool:
    """Whether ``path`` is a ``.parquet`` file whose footer's bytes hold ``key``: no library."""
    if path.suffix.lower() != ".parquet" or not path.is_file():
        return False
    try:
        return key in _footer_bytes(path)
    except OSError:
        return False


def may_be_validated(path: Path) -> bool:
    """False unless ``path`` is a ``.parquet`` file whose footer holds the marker's key.

    Told from the footer's bytes, no library loaded: a foreign Parquet file costs neither
    DuckDB's nor pyarrow's import (issue 30). :func:`is_validated` reads the marker itself.
    """
    return footer_holds(path, MARKER_KEY)


def columns_of(schema: Any, con: duckdb.DuckDBPyConnection | None = None) -> list[tuple[str, str]]:
    """``(name, DuckDB type)`` of each column of ``schema`` (pairs as they are, or pyarrow's)."""
    if not hasattr(schema, "empty_table"):
        return [(str(n), str(t)) for n, t in schema]
    import duckdb

    rel = (con or duckdb.connect(":memory:")).from_arrow(schema.empty_table())
    return [(str(n), str(t)) for n, t in zip(rel.columns, rel.types, strict=True)]


#: A Parquet file ends with its footer, the footer's length (4 bytes, little-endian), ``PAR1``.
_MAGIC = b"PAR1"


def _footer_bytes(path: Path) -> bytes:
    """The raw footer of a Parquet file (b"" if the file does not end as one does)."""
    with path.open("rb") as fh:
        return _footer_span(fh)[1]


def _footer_span(fh: BinaryIO) -> tuple[int, bytes]:
    """Where the footer of the open Parquet file starts, and its bytes (b"": not one)."""
    size = fh.seek(0, os.SEEK_END)
    if size < 12:
        return size, b""
    fh.seek(size - 8)
    tail = fh.read(8)
    length = int.from_bytes(tail[:4], "little")
    if tail[4:] != _MAGIC or length > size - 12:
        return size, b""
    fh.seek(size - 8 - length)
    return size - 8 - length, fh.read(length)


def quoted(path: Path) -> str:
    """A path as a SQL string literal."""
    return "'" + str(path).replace("'", "''") + "'"
