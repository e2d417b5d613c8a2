"""SQLite helpers shared by the cache and the journal: connections and forward-only migrations.

Each database has a ``_migrations`` table naming the migrations already applied; a migration
is a (name, SQL script) pair that is applied once, in order, and never edited or removed
(the pattern of simonw/llm ``migrations.py``).

Blobs: the big static parts of raw requests (the system prompt with the codebook, the answer
schema) are identical for every unit of a run; they are stored once in a ``blobs`` table and
referenced from each row, so journals and caches grow with the judged texts only.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from failcodes.errors import OutputError
from failcodes.fileio import check_output_file, output_error, probe_dir, probe_file
from failcodes.hashing import content_hash

Migration = tuple[str, str]


def check_database(path: str | Path, *, option: str = "another path") -> Path:
    """Check, creating nothing, that ``path`` is a usable SQLite database or can become one.

    Raises :class:`~failcodes.errors.OutputError` naming the file and what to do: it is a
    folder, its folder cannot be written (WAL mode needs side files), it is read-only, or it is
    not a SQLite database (corrupt, truncated, some other file). ``option`` names the
    command-line option to change in the message (``--cache``, ``-o``).
    """
    p = Path(path)
    if p.exists():
        if p.is_dir():
            raise OutputError(f"is a folder, expected a SQLite file; pass {option}", path=p)
        if not p.is_file():  # a FIFO was "read-only (permission denied); fix its permissions"
            raise OutputError(
                f"not a regular file (a FIFO, socket or device), expected a SQLite file; pass "
                f"{option}",
                path=p,
            )
        try:
            probe_file(p)
            probe_dir(p.parent, shown=p)  # WAL mode creates -wal and -shm beside it
        except OutputError:
            raise OutputError(
                f"database is read-only (permission denied); fix its permissions or pass {option}",
                path=p,
            ) from None
        try:
            # immutable: a WAL-mode header would make even a read-only open create -wal/-shm
            conn = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
            try:
                refuse_foreign_schema(conn)
                tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                for (name,) in tables.fetchall():  # each table's root page: cheap, catches most
                    conn.execute(f'SELECT * FROM "{name}" LIMIT 1').fetchall()
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise OutputError(
                f"not a usable SQLite database ({exc}); move it away or pass {option}", path=p
            ) from None
        return p
    check_output_file(p)
    return p


def connect(
    path: str | Path, *, option: str = "another path", page_size: int | None = None
) -> sqlite3.Connection:
    """Open (creating folders as needed) a WAL-mode SQLite database safe against kills.

    A database that cannot be opened (see :func:`check_database`) raises
    :class:`~failcodes.errors.OutputError` before anything is created. ``page_size``: the
    page size of a database created now (SQLite's default, 4,096 bytes, when None); an
    existing database keeps its own.
    """
    p = Path(path)
    check_database(p, option=option)
    conn: sqlite3.Connection | None = None
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(p, isolation_level=None, check_same_thread=False)
        if page_size is not None:  # takes effect in a new database only (before WAL mode)
            conn.execute(f"PRAGMA page_size={int(page_size)}")
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a killed process (not a power cut): enough here, and fast.
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=5000")
    except OSError as exc:
        if conn is not None:
            conn.close()
        raise output_error(exc, p) from None
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        raise OutputError(
            f"cannot open the SQLite database ({exc}); move it away or pass {option}", path=p
        ) from None
    return conn


def open_migrated(
    path: str | Path, migrations: Sequence[Migration], *, option: str, page_size: int | None = None
) -> sqlite3.Connection:
    """:func:`connect` and :func:`migrate`; a database that fails either is left as it was.

    On failure (a damaged database) the connection is closed and the ``-wal``/``-shm`` files
    this open created beside it are removed: a refused database leaves nothing behind.
    """
    p = Path(path)
    created = [s for s in (Path(f"{p}-wal"), Path(f"{p}-shm")) if not s.exists()]
    try:
        conn = connect(p, option=option, page_size=page_size)
    except BaseException:
        _remove(created)
        raise
    try:
        migrate(conn, migrations)
    except BaseException:
        conn.close()
        _remove(created)
        raise
    return conn


def _remove(paths: Sequence[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def open_read_only(path: str | Path) -> sqlite3.Connection:
    """Open an existing database to read it, creating and changing nothing beside it.

    Without a ``-wal`` file every committed row is in the database file, which is opened
    immutable (a read-only open of a WAL-mode database would create ``-wal`` and ``-shm``);
    with one (a run still going, or killed) it is opened read-only, so its rows are seen too.
    Raises :class:`sqlite3.DatabaseError` as :mod:`sqlite3` does.
    """
    p = Path(path)
    flags = "mode=ro" if Path(f"{p}-wal").exists() else "mode=ro&immutable=1"
    conn = sqlite3.connect(f"{p.resolve().as_uri()}?{flags}", uri=True)
    try:
        refuse_foreign_schema(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def refuse_foreign_schema(conn: sqlite3.Connection) -> None:
    """Raise :class:`sqlite3.DatabaseError` if the database holds a view or a trigger.

    failcodes writes neither; a journal whose ``annotations`` table was swapped for a view
    over an endless recursive query made ``attribute`` run for ever without a word.
    """
    found = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') LIMIT 1"
    ).fetchone()
    if found is not None:
        raise sqlite3.DatabaseError(
            f"it holds a {found[0]} ({str(found[1])[:80]!r}), which failcodes never writes"
        )


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> list[str]:
    """Apply the migrations not yet recorded; return the names applied now.

    A damaged database (valid header, broken pages) raises
    :class:`~failcodes.errors.OutputError` naming the file.
    """
    try:
        return _migrate(conn, migrations)
    except sqlite3.DatabaseError as exc:
        row = conn.execute("PRAGMA database_list").fetchone()
        raise OutputError(
            f"damaged SQLite database ({exc}); move it away and start again",
            path=row[2] if row else "database",
        ) from None


def _migrate(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> list[str]:
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied: list[str] = []
    for name, script in migrations:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in filter(str.strip, script.split(";")):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                (name, datetime.now(UTC).isoformat()),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied


#: Key of a reference to a stored blob inside a deflated JSON document.
BLOB_REF = "$blob"

BLOBS_MIGRATION: Migration = (
    "002_blobs",
    "CREATE TABLE blobs (sha TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


def blob_sha(value: Any) -> str:
    """Content id of a blob (a string or a JSON value)."""
    return content_hash(value, length=64)


def deflate(obj: Any, blobs: Mapping[str, Any]) -> Any:
    """Replace every value equal to a blob by a ``{"$blob": sha}`` reference.

    Blobs are the big static parts of raw requests (the run's system prompt, answer schema),
    which are then stored once.
    """
    items = list(blobs.items())

    def walk(o: Any) -> Any:
        for sha, value in items:
            if o is value or (type(o) is type(value) and o == value):
                return {BLOB_REF: sha}
        if isinstance(o, dict):
            return {k: walk(v) for k, v in o.items()}
        if isinstance(o, list | tuple):
            return [walk(v) for v in o]
        return o

    return walk(obj)


def inflate(obj: Any, fetch: Callable[[str], Any]) -> Any:
    """Undo :func:`deflate`, reading blobs with ``fetch(sha)``."""
    if isinstance(obj, dict):
        if len(obj) == 1 and BLOB_REF in obj:
            return fetch(str(obj[BLOB_REF]))
        return {k: inflate(v, fetch) for k, v in obj.items()}
    if isinstance(obj, list):
        return [inflate(v, fetch) for v in obj]
    return obj


class BlobStore:
    """Blobs of one database (``blobs`` table), written once each."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._stored: set[str] = set()

    def put(self, blobs: Mapping[str, Any]) -> None:
        """Store the blobs not stored yet."""
        for sha, value in blobs.items():
            if sha in self._stored:
                continue
            self._conn.execute(
                "INSERT OR IGNORE INTO blobs (sha, value) VALUES (?, ?)",
                (sha, json.dumps(value, ensure_ascii=False)),
            )
            self._stored.add(sha)

    def get(self, sha: str) -> Any:
        """Return a stored blob (KeyError if absent)."""
        row = self._conn.execute("SELECT value FROM blobs WHERE sha = ?", (sha,)).fetchone()
        if row is None:
            raise KeyError(sha)
        return json.loads(row[0])

    def dumps(self, obj: Any, blobs: Mapping[str, Any]) -> str:
        """Store ``blobs`` and return ``obj`` deflated against them, as JSON."""
        if not blobs:
            return json.dumps(obj, ensure_ascii=False)
        self.put(blobs)
        return json.dumps(deflate(obj, blobs), ensure_ascii=False)

    def raw_columns(
        self,
        raw_request: Mapping[str, Any] | None,
        raw_response: Mapping[str, Any] | None,
        blobs: Mapping[str, Any] | None,
    ) -> tuple[str | None, str | None]:
        """The stored text of a raw request and response (None stays None).

        Values of ``raw_request`` equal to one of ``blobs`` (sha -> value) are stored once.
        """
        return (
            self.dumps(raw_request, blobs or {}) if raw_request is not None else None,
            json.dumps(raw_response, ensure_ascii=False) if raw_response is not None else None,
        )

    def loads(self, text: str) -> Any:
        """Parse JSON written by :meth:`dumps`, re-inflating blob references."""
        return inflate(json.loads(text), self.get)
