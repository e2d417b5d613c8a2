"""Response cache in SQLite: a rerun of the same request costs nothing.

The key covers everything that changes an answer: provider identity (name, model, base URL,
sampling), parameters, the rendered prompt (system + messages), the answer schema and the
prompt digest (:func:`~failcodes.judge.prompts.prompt_hash`: the kind's templates and the
schema version); never retries, timeouts or keys. The raw request and response are stored
beside the validated payload.

Keys before this one (entries marked ``scheme = 1``, written by failcodes up to session 29)
held the hash of the whole codebook and of every template instead of the prompt digest: an
edit to the verification part missed every retrieval answer. Those entries are still read: a
lookup that misses tries the old key under each codebook hash the cache holds for the model
(:class:`CacheKey`), so an answer to the very same request is served whichever key it was
stored under.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from failcodes.contract import FrozenModel
from failcodes.hashing import content_hash
from failcodes.judge._sqlite import (
    BLOBS_MIGRATION,
    BlobStore,
    Migration,
    check_database,
    open_migrated,
)

#: How an entry's key was made: 1, the whole codebook's hash and every template's (the
#: default, so an entry an older failcodes writes into a migrated cache reads as one); 2, the
#: prompt digest (:func:`prompt_prefix_digest`).
LEGACY_SCHEME = 1
PROMPT_SCHEME = 2

MIGRATIONS: tuple[Migration, ...] = (
    (
        "001_responses",
        """
        CREATE TABLE responses (
            key TEXT PRIMARY KEY,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            template_hash TEXT NOT NULL,
            codebook_hash TEXT NOT NULL,
            payload TEXT NOT NULL,
            usage TEXT NOT NULL,
            raw_request TEXT NOT NULL,
            raw_response TEXT NOT NULL,
            created_at TEXT NOT NULL,
            hits INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX responses_model ON responses (provider, model);
        CREATE INDEX responses_created ON responses (created_at)
        """,
    ),
    BLOBS_MIGRATION,
    (
        "003_key_scheme",
        f"""
        ALTER TABLE responses ADD COLUMN scheme INTEGER NOT NULL DEFAULT {LEGACY_SCHEME};
        CREATE INDEX responses_legacy ON responses (provider, model, template_hash, codebook_hash)
            WHERE scheme = {LEGACY_SCHEME}
        """,
    ),
)


def prompt_prefix_digest(
    *,
    identity: dict[str, Any],
    params: dict[str, Any],
    system: str,
    schema: dict[str, Any],
    prompt: str,
) -> str:
    """Digest of everything in a cache key that is the same for every unit of a run.

    ``prompt``: the prompt digest (:func:`~failcodes.judge.prompts.prompt_hash`). Nothing of
    the codebook but what the judge is shown (the rendered part in ``system``, its codes in
    ``schema``): an edit to the other part keeps every answer.
    """
    return content_hash(
        {
            "identity": identity,
            "params": params,
            "system": system,
            "schema": schema,
            "prompt": prompt,
        },
        length=64,
    )


def request_prefix_digest(
    *,
    identity: dict[str, Any],
    params: dict[str, Any],
    system: str,
    schema: dict[str, Any],
    template_hash: str,
    codebook_hash: str,
) -> str:
    """The prefix digest of the keys before :func:`prompt_prefix_digest` (``scheme`` 1).

    Still computed to read an older cache: the whole codebook's hash and every template's.
    """
    return content_hash(
        {
            "identity": identity,
            "params": params,
            "system": system,
            "schema": schema,
            "template_hash": template_hash,
            "codebook_hash": codebook_hash,
        },
        length=64,
    )


def cache_key(prefix_digest: str, user: str) -> str:
    """Return the cache key of one request: the run's prefix digest plus the user message."""
    return content_hash({"prefix": prefix_digest, "user": user}, length=64)


@dataclass(frozen=True, slots=True)
class CacheKey:
    """The key of one request (``key``), and the keys an older failcodes stored it under."""

    key: str
    legacy: tuple[str, ...] = ()


@dataclass(frozen=True)
class CachedResponse:
    """A stored answer."""

    payload: object
    usage: dict[str, int]
    raw_request: dict[str, Any]
    raw_response: dict[str, Any]


class CacheStats(FrozenModel):
    """What the cache holds, per (provider, model): ``cache stats``' result."""

    path: str
    entries: int
    hits: int
    by_model: dict[str, int]
    size_bytes: int

    def lines(self) -> list[str]:
        """The stats as the CLI prints them."""
        head = f"{self.path}: {self.entries} entries, {self.hits} hits, "
        head += f"{self.size_bytes / 1e6:.2f} MB"
        return [head, *(f"  {model}: {n}" for model, n in self.by_model.items())]


CACHE_OPTION = "another --cache (or --no-cache)"


def check_cache(path: str | Path) -> Path:
    """Check, creating nothing, that ``path`` is a usable cache or can become one.

    Raises :class:`~failcodes.errors.OutputError` (a folder, read-only, not a database).
    """
    return check_database(path, option=CACHE_OPTION)


class ResponseCache:
    """A SQLite response cache (one file, shared by runs)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn = open_migrated(self.path, MIGRATIONS, option=CACHE_OPTION)
        self._blobs = BlobStore(self._conn)

    def find(self, key: CacheKey, *, count: bool = True) -> CachedResponse | None:
        """The stored response under ``key.key``, else under its first older key that has one."""
        hit = self.get(key.key, count=count)
        for old in key.legacy:
            if hit is not None:
                break
            hit = self.get(old, count=count)
        return hit

    def legacy_codebooks(self, provider: str, model: str, template_hashes: list[str]) -> list[str]:
        """The codebook hashes of the entries keyed the old way for this model and templates.

        Each gives one older key to try (:class:`CacheKey`); a cache written by this version
        alone has none, and a lookup costs one read.
        """
        marks = ", ".join("?" * len(template_hashes))
        rows = self._conn.execute(
            f"SELECT DISTINCT codebook_hash FROM responses WHERE scheme = {LEGACY_SCHEME} "
            f"AND provider = ? AND model = ? AND template_hash IN ({marks}) "
            "ORDER BY codebook_hash",
            (provider, model, *template_hashes),
        )
        return [str(h) for (h,) in rows]

    def get(self, key: str, *, count: bool = True) -> CachedResponse | None:
        """Return the stored response for ``key`` (counting the hit unless told), or None."""
        row = self._conn.execute(
            "SELECT payload, usage, raw_request, raw_response FROM responses WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        if count:
            self._conn.execute("UPDATE responses SET hits = hits + 1 WHERE key = ?", (key,))
        return CachedResponse(
            payload=json.loads(row[0]),
            usage=json.loads(row[1]),
            raw_request=self._blobs.loads(row[2]),
            raw_response=json.loads(row[3]),
        )

    def put(
        self,
        key: str,
        *,
        provider: str,
        model: str,
        template_hash: str,
        codebook_hash: str,
        payload: object,
        usage: dict[str, int],
        raw_request: dict[str, Any],
        raw_response: dict[str, Any],
        blobs: Mapping[str, Any] | None = None,
    ) -> None:
        """Store a validated answer under ``key`` (replacing any older one).

        ``blobs``: see :meth:`BlobStore.raw_columns`.
        """
        self._conn.execute(
            "INSERT OR REPLACE INTO responses (key, provider, model, template_hash, "
            "codebook_hash, payload, usage, raw_request, raw_response, created_at, scheme) "
            f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {PROMPT_SCHEME})",
            (
                key,
                provider,
                model,
                template_hash,
                codebook_hash,
                json.dumps(payload, ensure_ascii=False),
                json.dumps(usage),
                *self._blobs.raw_columns(raw_request, raw_response, blobs),
                datetime.now(UTC).isoformat(),
            ),
        )

    def stats(self) -> CacheStats:
        """Return counts per provider:model, total hits and file size."""
        entries, hits = self._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(hits), 0) FROM responses"
        ).fetchone()
        by_model = {
            f"{p}:{m}": n
            for p, m, n in self._conn.execute(
                "SELECT provider, model, COUNT(*) FROM responses GROUP BY provider, model "
                "ORDER BY provider, model"
            )
        }
        size = sum(
            f.stat().st_size for f in self.path.parent.glob(self.path.name + "*") if f.is_file()
        )
        return CacheStats(
            path=str(self.path),
            entries=int(entries),
            hits=int(hits),
            by_model=by_model,
            size_bytes=size,
        )

    def prune(
        self,
        *,
        older_than_days: float | None = None,
        model: str | None = None,
        codebook_hash: str | None = None,
    ) -> int:
        """Delete entries matching every given filter (all entries if none); return count."""
        clauses: list[str] = []
        args: list[Any] = []
        if older_than_days is not None:
            cutoff = datetime.now(UTC) - timedelta(days=older_than_days)
            clauses.append("created_at < ?")
            args.append(cutoff.isoformat())
        if model is not None:
            clauses.append("(model = ? OR provider || ':' || model = ?)")
            args.extend([model, model])
        if codebook_hash is not None:
            clauses.append("codebook_hash LIKE ?")
            args.append(codebook_hash + "%")
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        cur = self._conn.execute(f"DELETE FROM responses{where}", args)
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(cur.rowcount)

    def close(self) -> None:
        """Close the database."""
        self._conn.close()
