"""The batch ledger: which units of a run went in which provider batch (tables of the journal).

Two tables of the run's ``journal.sqlite`` (created by the journal's forward-only
migrations): ``batches`` records every provider batch id; ``batch_items`` one row per batch
item (one unit, or the units of one claim for a grouped item, listed in ``members`` and
indexed by ``batch_members``) with its state (queued, submitted, done), attempt counts,
tokens spent so far and the messages of an invalid-answer retry. The ledger shares the
journal's connection, so marking an item done and journaling its annotations commit together.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from failcodes.hashing import content_hash
from failcodes.judge._sqlite import Migration
from failcodes.judge.providers.base import Message, TokenUsage
from failcodes.units import Unit

LEDGER_MIGRATIONS: tuple[Migration, ...] = (
    (
        "batch_001_ledger",
        """
        CREATE TABLE batches (
            batch_id TEXT PRIMARY KEY,
            provider TEXT NOT NULL,
            items INTEGER NOT NULL,
            submitted_at TEXT NOT NULL,
            ended_at TEXT,
            state TEXT,
            collected INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE batch_items (
            unit_id TEXT PRIMARY KEY,
            unit TEXT,
            state TEXT NOT NULL,
            batch_id TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            invalid INTEGER NOT NULL DEFAULT 0,
            messages TEXT,
            last_error TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            cached_input_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX batch_items_batch ON batch_items (batch_id, state);
        CREATE INDEX batch_items_state ON batch_items (state)
        """,
    ),
    (
        "batch_002_groups",
        """
        ALTER TABLE batch_items ADD COLUMN members TEXT;
        CREATE TABLE batch_members (unit_id TEXT PRIMARY KEY, item_id TEXT NOT NULL)
        """,
    ),
)

QUEUED, SUBMITTED, DONE = "queued", "submitted", "done"
_COLUMNS = (
    "unit_id, unit, members, attempts, invalid, messages, input_tokens, cached_input_tokens, "
    "cache_write_tokens, output_tokens"
)


@dataclass
class LedgerItem:
    """One batch item: one unit, or the units of one claim (a grouped item)."""

    item_id: str
    units: list[Unit]
    grouped: bool
    attempts: int
    invalid: int
    messages: list[Message]
    tokens: TokenUsage


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _item(row: Any) -> LedgerItem:
    messages = [Message(r, c) for r, c in json.loads(row[5])] if row[5] else []
    grouped = row[2] is not None
    units = (
        [Unit.model_validate(u) for u in json.loads(row[2])]
        if grouped
        else [Unit.model_validate_json(row[1])]
    )
    return LedgerItem(
        item_id=str(row[0]),
        units=units,
        grouped=grouped,
        attempts=int(row[3]),
        invalid=int(row[4]),
        messages=messages,
        tokens=TokenUsage(int(row[6]), int(row[7]), int(row[8]), int(row[9])),
    )


class BatchLedger:
    """The batch tables of a run's journal (see the module docstring)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def tracked(self, unit_ids: list[str]) -> set[str]:
        """Which of ``unit_ids`` are already in the ledger (alone or as a group member)."""
        if not unit_ids:
            return set()
        marks = ",".join("?" * len(unit_ids))
        rows = self.conn.execute(
            f"SELECT unit_id FROM batch_items WHERE unit_id IN ({marks}) "
            f"UNION SELECT unit_id FROM batch_members WHERE unit_id IN ({marks})",
            [*unit_ids, *unit_ids],
        )
        return {r[0] for r in rows}

    def open_batches(self) -> list[str]:
        """Batches submitted and not yet collected, oldest first."""
        rows = self.conn.execute(
            "SELECT batch_id FROM batches WHERE collected = 0 ORDER BY submitted_at, rowid"
        )
        return [r[0] for r in rows]

    def queue(self, units: list[Unit], groups: list[list[Unit]] | None = None) -> None:
        """Record new single units and grouped items as queued (one transaction)."""
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(
            "INSERT OR IGNORE INTO batch_items (unit_id, unit, state) VALUES (?, ?, ?)",
            [(u.id, u.model_dump_json(), QUEUED) for u in units],
        )
        for group in groups or []:
            item_id = "group-" + content_hash([u.id for u in group], length=24)  # stable
            members = json.dumps([u.model_dump(mode="json") for u in group])
            self.conn.execute(
                "INSERT OR IGNORE INTO batch_items (unit_id, members, state) VALUES (?, ?, ?)",
                (item_id, members, QUEUED),
            )
            self.conn.executemany(
                "INSERT OR IGNORE INTO batch_members (unit_id, item_id) VALUES (?, ?)",
                [(u.id, item_id) for u in group],
            )
        self.conn.execute("COMMIT")

    def queued(self, limit: int) -> Generator[LedgerItem, None, None]:
        """Up to ``limit`` queued items (new units and retries), streamed from the database."""
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM batch_items WHERE state = ? LIMIT ?", (QUEUED, limit)
        )
        for row in rows:
            yield _item(row)

    def submitted(self, batch_id: str, provider: str, item_ids: list[str]) -> None:
        """Record a provider batch and mark its items submitted (one transaction)."""
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute(
            "INSERT INTO batches (batch_id, provider, items, submitted_at) VALUES (?, ?, ?, ?)",
            (batch_id, provider, len(item_ids), _now()),
        )
        self.conn.executemany(
            "UPDATE batch_items SET state = ?, batch_id = ?, attempts = attempts + 1 "
            "WHERE unit_id = ?",
            [(SUBMITTED, batch_id, uid) for uid in item_ids],
        )
        self.conn.execute("COMMIT")

    def item(self, batch_id: str, item_id: str) -> LedgerItem | None:
        """The item ``item_id`` if it is still waiting for ``batch_id``'s result."""
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM batch_items WHERE unit_id = ? AND batch_id = ? AND state = ?",
            (item_id, batch_id, SUBMITTED),
        ).fetchone()
        return _item(row) if row else None

    def unanswered(self, batch_id: str) -> list[str]:
        """Items of ``batch_id`` still waiting (the provider never answered them)."""
        rows = self.conn.execute(
            "SELECT unit_id FROM batch_items WHERE batch_id = ? AND state = ?",
            (batch_id, SUBMITTED),
        ).fetchall()
        return [r[0] for r in rows]

    def requeue(self, item: LedgerItem, error: str) -> None:
        """Send an item again in a later batch, keeping what it cost so far."""
        self.conn.execute(
            "UPDATE batch_items SET state = ?, batch_id = NULL, invalid = ?, messages = ?, "
            "last_error = ?, input_tokens = ?, cached_input_tokens = ?, "
            "cache_write_tokens = ?, output_tokens = ? WHERE unit_id = ?",
            (
                QUEUED,
                item.invalid,
                json.dumps([[m.role, m.content] for m in item.messages]),
                error,
                item.tokens.input_tokens,
                item.tokens.cached_input_tokens,
                item.tokens.cache_write_tokens,
                item.tokens.output_tokens,
                item.item_id,
            ),
        )

    def requeue_alone(self, unit: Unit, tokens: TokenUsage, error: str) -> None:
        """Queue one member of a grouped item on its own, carrying its share of the tokens.

        Runs inside the collecting transaction (no transaction of its own).
        """
        self.conn.execute(
            "INSERT OR IGNORE INTO batch_items (unit_id, unit, state, last_error, input_tokens, "
            "cached_input_tokens, cache_write_tokens, output_tokens) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                unit.id,
                unit.model_dump_json(),
                QUEUED,
                error,
                tokens.input_tokens,
                tokens.cached_input_tokens,
                tokens.cache_write_tokens,
                tokens.output_tokens,
            ),
        )

    def done(self, item_id: str) -> None:
        """Mark an item finished (its annotations are in the journal); drop its stored units."""
        self.conn.execute(
            "UPDATE batch_items SET state = ?, unit = NULL, members = NULL, messages = NULL "
            "WHERE unit_id = ?",
            (DONE, item_id),
        )

    def begin(self) -> None:
        """Open a write transaction."""
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        """Commit the open transaction."""
        self.conn.execute("COMMIT")

    def collected(self, batch_id: str, state: str) -> None:
        """Mark a batch collected."""
        self.conn.execute(
            "UPDATE batches SET collected = 1, state = ?, ended_at = ? WHERE batch_id = ?",
            (state, _now(), batch_id),
        )
