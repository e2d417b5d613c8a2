"""Batch mode: judge units through the providers' batch APIs (half price), resumably.

The runner reuses a :class:`~failcodes.judge.engine.JudgeEngine` for everything but the
calls (prompt, schema, validation, annotations, cache, journal, prices) and adds:

- a *ledger* in the run's ``journal.sqlite`` (tables ``batches`` and ``batch_items``, created
  by forward-only migrations of their own) recording every provider batch id and, per unit,
  its state (queued, submitted, done), attempt counts, tokens spent so far and the messages of
  an invalid-answer retry;
- submission in provider-sized batches (request count and payload bytes), streamed from the
  units through a JSONL file on disk, never the whole run in memory (which units are done or
  tracked is asked of the database chunk by chunk, so memory does not grow with the run);
- polling, then streaming collection of each ended batch into the same journal;
- retries: a failed item is sent again (up to ``RetryPolicy.max_attempts``); an invalid
  answer is sent again with the validation error (up to ``invalid_answer_retries``); after
  that the unit is recorded *unscored* with its reason.

A run killed at any moment resumes: batches already submitted are polled and collected (not
resubmitted), units already in the journal are skipped, collection is idempotent. The one
gap is a kill between a provider accepting a batch and the ledger recording its id: those
units are submitted again on resume (paid twice, journaled once).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from failcodes.annotations import Status, Usage
from failcodes.codebook import Codebook
from failcodes.errors import FailcodesError
from failcodes.hashing import content_hash
from failcodes.judge._sqlite import Migration, migrate
from failcodes.judge.engine import JudgeEngine, JudgeSettings, ProgressCallback, RunSummary
from failcodes.judge.pricing import PriceTable
from failcodes.judge.prompts import render_invalid, render_user, template_hash
from failcodes.judge.providers.base import LLMProvider, Message, ProviderRequest, TokenUsage
from failcodes.judge.providers.batching import BatchBackend, BatchItem, batch_backend
from failcodes.judge.schema import SCHEMA_NAME, AnswerError, parse_answer
from failcodes.units import Unit, UnitKind

BATCH_MIGRATIONS: tuple[Migration, ...] = (
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
)

QUEUED, SUBMITTED, DONE = "queued", "submitted", "done"


@dataclass(frozen=True)
class BatchSettings:
    """How batches are sized and polled."""

    #: Most items per batch (also capped by the provider's own limit).
    batch_size: int | None = None
    poll_interval_s: float = 30.0
    #: Rows written per ledger transaction.
    commit_every: int = 500


@dataclass
class _Item:
    unit: Unit
    attempts: int
    invalid: int
    messages: list[Message]
    tokens: TokenUsage


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class BatchLedger:
    """The batch tables of a run's journal (own forward-only migrations).

    It shares the journal's connection, so marking an item done and journaling its
    annotation commit together.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        migrate(self._conn, BATCH_MIGRATIONS)

    def present(self, table: str, unit_ids: list[str]) -> set[str]:
        """Which of ``unit_ids`` have a row in ``table`` (annotations or batch_items)."""
        if table not in ("annotations", "batch_items") or not unit_ids:
            return set()
        marks = ",".join("?" * len(unit_ids))
        rows = self._conn.execute(
            f"SELECT unit_id FROM {table} WHERE unit_id IN ({marks})",
            unit_ids,
        )
        return {r[0] for r in rows}

    def open_batches(self) -> list[str]:
        """Batches submitted and not yet collected, oldest first."""
        rows = self._conn.execute(
            "SELECT batch_id FROM batches WHERE collected = 0 ORDER BY submitted_at, rowid"
        )
        return [r[0] for r in rows]

    def count_batches(self) -> int:
        """Every batch submitted in this run."""
        return int(self._conn.execute("SELECT COUNT(*) FROM batches").fetchone()[0])

    def queue(self, units: list[Unit]) -> None:
        """Record new units as queued (one transaction)."""
        self._conn.execute("BEGIN IMMEDIATE")
        self._conn.executemany(
            "INSERT OR IGNORE INTO batch_items (unit_id, unit, state) VALUES (?, ?, ?)",
            [(u.id, u.model_dump_json(), QUEUED) for u in units],
        )
        self._conn.execute("COMMIT")

    def queued(self, limit: int) -> Generator[_Item, None, None]:
        """Up to ``limit`` queued items (new units and retries), streamed from the database."""
        rows = self._conn.execute(
            "SELECT unit, attempts, invalid, messages, input_tokens, cached_input_tokens, "
            "cache_write_tokens, output_tokens FROM batch_items WHERE state = ? LIMIT ?",
            (QUEUED, limit),
        )
        for row in rows:
            yield _item(row)

    def submitted(self, batch_id: str, provider: str, unit_ids: list[str]) -> None:
        """Record a provider batch and mark its items submitted (one transaction)."""
        self._conn.execute("BEGIN IMMEDIATE")
        self._conn.execute(
            "INSERT INTO batches (batch_id, provider, items, submitted_at) VALUES (?, ?, ?, ?)",
            (batch_id, provider, len(unit_ids), _now()),
        )
        self._conn.executemany(
            "UPDATE batch_items SET state = ?, batch_id = ?, attempts = attempts + 1 "
            "WHERE unit_id = ?",
            [(SUBMITTED, batch_id, uid) for uid in unit_ids],
        )
        self._conn.execute("COMMIT")

    def item(self, batch_id: str, unit_id: str) -> _Item | None:
        """The item ``unit_id`` if it is still waiting for ``batch_id``'s result."""
        row = self._conn.execute(
            "SELECT unit, attempts, invalid, messages, input_tokens, cached_input_tokens, "
            "cache_write_tokens, output_tokens FROM batch_items "
            "WHERE unit_id = ? AND batch_id = ? AND state = ?",
            (unit_id, batch_id, SUBMITTED),
        ).fetchone()
        return _item(row) if row else None

    def requeue(self, unit_id: str, item: _Item, error: str) -> None:
        """Send an item again in a later batch, keeping what it cost so far."""
        self._conn.execute(
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
                unit_id,
            ),
        )

    def done(self, unit_id: str) -> None:
        """Mark an item finished (its annotation is in the journal); drop its stored unit."""
        self._conn.execute(
            "UPDATE batch_items SET state = ?, unit = NULL, messages = NULL WHERE unit_id = ?",
            (DONE, unit_id),
        )

    def begin(self) -> None:
        """Open a write transaction."""
        self._conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        """Commit the open transaction."""
        self._conn.execute("COMMIT")

    def collected(self, batch_id: str, state: str) -> None:
        """Mark a batch collected."""
        self._conn.execute(
            "UPDATE batches SET collected = 1, state = ?, ended_at = ? WHERE batch_id = ?",
            (state, _now(), batch_id),
        )


def _item(row: Any) -> _Item:
    messages = [Message(r, c) for r, c in json.loads(row[3])] if row[3] else []
    return _Item(
        unit=Unit.model_validate_json(row[0]),
        attempts=int(row[1]),
        invalid=int(row[2]),
        messages=messages,
        tokens=TokenUsage(int(row[4]), int(row[5]), int(row[6]), int(row[7])),
    )


def _chunks(units: Iterable[Unit], size: int) -> Iterator[list[Unit]]:
    chunk: list[Unit] = []
    for unit in units:
        chunk.append(unit)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class BatchRunner:
    """Runs an engine's units through its provider's batch API."""

    def __init__(
        self,
        engine: JudgeEngine,
        *,
        settings: BatchSettings | None = None,
        backend: BatchBackend | None = None,
    ) -> None:
        if not isinstance(engine.coder, LLMProvider):
            raise FailcodesError("batch mode needs an LLM judge (openai:MODEL or anthropic:MODEL)")
        if engine.settings.budget_usd is not None:
            raise FailcodesError(
                "--budget is not supported with --batch (batches are paid when they run); "
                "use --dry-run to see the cost first"
            )
        self.engine = engine
        self.coder: LLMProvider = engine.coder
        self.settings = settings or BatchSettings()
        self.backend = backend or batch_backend(engine.coder)
        size = self.backend.max_requests
        if self.settings.batch_size is not None:
            size = min(size, self.settings.batch_size)
        self.batch_size = max(1, size)
        self.ledger = BatchLedger(engine.journal._conn)
        self.batches_submitted = 0
        self._folder = engine.journal.run_dir / "batches"
        self._system_digest = ""

    # -- requests -------------------------------------------------------------------------

    def _request(self, item: _Item) -> ProviderRequest:
        messages = [Message("user", render_user(item.unit)), *item.messages]
        return ProviderRequest(
            system=self.engine.system,
            messages=tuple(messages),
            schema=self.engine.schema,
            schema_name=SCHEMA_NAME,
            max_output_tokens=self.engine.settings.max_output_tokens,
        )

    def _raw_request(self, batch_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The request as journaled, with the parts shared by every unit by SHA-256 digest.

        The system prefix and the answer schema are the same for every unit of a run, so
        the journal grows with the judged texts only.
        """
        slim: dict[str, Any] = {}
        for key, value in body.items():
            if key in ("system", "tools", "response_format"):
                slim[key] = {"sha256": content_hash(value, length=64)}
            elif key == "messages":
                slim[key] = [
                    {"role": "system", "content": {"sha256": content_hash(m, length=64)}}
                    if m.get("role") == "system"
                    else m
                    for m in value
                ]
            else:
                slim[key] = value
        return {"batch_id": batch_id, "body": slim}

    # -- the run --------------------------------------------------------------------------

    async def run(
        self, units: Iterable[Unit], on_progress: ProgressCallback | None = None
    ) -> RunSummary:
        """Queue new units, submit, poll, collect and retry until every unit is journaled."""
        engine = self.engine
        started = time.monotonic()
        engine.journal.bind({**engine.journal_meta(), "mode": "batch"})
        summary = RunSummary(
            judge=self.coder.spec,
            coder_kind=self.coder.coder_kind,
            kind=engine.kind,
            units=0,
            already_done=0,
            price_known=engine.price is not None,
        )
        engine.journal.start_session()
        outcome = "finished"
        try:
            # Stream the units in chunks; which are done or tracked is asked of the database
            # chunk by chunk, so memory does not grow with the number of units.
            for raw_chunk in _chunks(units, self.settings.commit_every):
                chunk = list({u.id: u for u in raw_chunk}.values())
                ids = [u.id for u in chunk]
                done = self.ledger.present("annotations", ids)
                known = self.ledger.present("batch_items", ids)
                summary.units += len(chunk)
                summary.already_done += len(done)
                fresh = [u for u in chunk if u.id not in done and u.id not in known]
                fresh = self._from_cache(fresh, summary)
                self.ledger.queue(fresh)
            while True:
                await self._submit_queued(summary)
                open_ids = self.ledger.open_batches()
                if not open_ids:
                    break
                await self._poll_and_collect(open_ids, summary, on_progress)
        except BaseException as exc:
            outcome = f"error: {type(exc).__name__}"
            raise
        finally:
            engine.close_session(summary, outcome, started)
        return summary

    def _from_cache(self, units: list[Unit], summary: RunSummary) -> list[Unit]:
        """Record units answered by the response cache; return the others."""
        engine = self.engine
        if engine.cache is None:
            return units
        rest: list[Unit] = []
        for unit in units:
            hit = engine.cache.get(engine._key(render_user(unit)))
            if hit is None:
                rest.append(unit)
                continue
            try:
                answer = parse_answer(engine.part, hit.payload)
            except AnswerError:
                rest.append(unit)
                continue
            ann = engine._annotation(unit, answer, reason=None, usage=Usage())
            engine.journal.record(
                ann,
                tokens=TokenUsage(),
                raw_request=hit.raw_request,
                raw_response=hit.raw_response,
                cache_hit=True,
                attempts=0,
            )
            summary.judged += 1
            summary.cache_hits += 1
            summary.scored += 1
        return rest

    async def _submit_queued(self, summary: RunSummary) -> None:
        """Submit every queued item in provider-sized batches."""
        self._folder.mkdir(parents=True, exist_ok=True)
        while True:
            path = self._folder / "pending.jsonl"
            ids: list[str] = []
            size = 0
            items = self.ledger.queued(self.batch_size)
            with path.open("w", encoding="utf-8") as fh, contextlib.closing(items):
                for item in items:
                    body = self.backend.body(self._request(item))
                    line = json.dumps(self.backend.line(item.unit.id, body), ensure_ascii=False)
                    if ids and size + len(line) + 1 > self.backend.max_bytes:
                        break
                    fh.write(line + "\n")
                    size += len(line.encode()) + 1
                    ids.append(item.unit.id)
                    summary.retries += int(item.attempts > 0)
            if not ids:
                path.unlink(missing_ok=True)
                return
            batch_id = await self.backend.submit(
                path, metadata={"failcodes_run": str(self.engine.journal.run_dir.name)}
            )
            self.ledger.submitted(batch_id, self.coder.provider, ids)
            self.batches_submitted += 1
            summary.calls += len(ids)
            path.unlink(missing_ok=True)

    async def _poll_and_collect(
        self, batch_ids: list[str], summary: RunSummary, on_progress: ProgressCallback | None
    ) -> None:
        waiting = list(batch_ids)
        while waiting:
            still: list[str] = []
            for batch_id in waiting:
                status = await self.backend.status(batch_id)
                if not status.ended:
                    still.append(batch_id)
                    continue
                await self._collect(batch_id, status.state, summary)
                if on_progress is not None:
                    on_progress(summary.judged, summary.units - summary.already_done)
            waiting = still
            if waiting:
                await asyncio.sleep(self.settings.poll_interval_s)

    async def _collect(self, batch_id: str, state: str, summary: RunSummary) -> None:
        """Stream one ended batch's results into the journal (idempotent)."""
        ledger = self.ledger
        ledger.begin()
        n = 0
        async for result in self.backend.results(batch_id):
            item = ledger.item(batch_id, result.custom_id)
            if item is None:
                continue  # collected before a restart, or not ours
            self._settle(batch_id, result, item, summary)
            n += 1
            if n % self.settings.commit_every == 0:
                ledger.commit()
                ledger.begin()
        ledger.commit()
        # Items the provider never answered (expired, cancelled batch) go back to the queue.
        leftovers = self.ledger._conn.execute(
            "SELECT unit_id FROM batch_items WHERE batch_id = ? AND state = ?",
            (batch_id, SUBMITTED),
        ).fetchall()
        for (unit_id,) in leftovers:
            item = ledger.item(batch_id, unit_id)
            if item is not None:
                self._settle(batch_id, BatchItem(unit_id, None, f"batch {state}"), item, summary)
        ledger.collected(batch_id, state)

    def _settle(self, batch_id: str, result: BatchItem, item: _Item, summary: RunSummary) -> None:
        engine = self.engine
        policy = engine.settings.retry
        unit = item.unit
        if result.reply is None:
            if item.attempts < policy.max_attempts:
                self.ledger.requeue(unit.id, item, result.error or "failed")
                return
            self._record(
                item,
                batch_id,
                None,
                None,
                f"batch item failed after {item.attempts} attempts: {result.error}",
                summary,
            )
            return
        reply = result.reply
        item.tokens = item.tokens + reply.usage
        try:
            answer = parse_answer(engine.part, reply.payload)
        except AnswerError as exc:
            summary.invalid_answers += 1
            item.invalid += 1
            if item.invalid <= policy.invalid_answer_retries:
                item.messages = [
                    *item.messages,
                    Message("assistant", reply.text),
                    Message("user", render_invalid(str(exc))),
                ]
                self.ledger.requeue(unit.id, item, str(exc))
                return
            reason = f"invalid answer after {item.invalid} attempts: {exc}"
            self._record(item, batch_id, reply.raw_response, None, reason, summary)
            return
        if engine.cache is not None:
            body = self.backend.body(self._request(item))
            engine.cache.put(
                engine._key(render_user(unit)),
                provider=self.coder.provider,
                model=self.coder.model,
                template_hash=template_hash(),
                codebook_hash=engine.codebook.hash,
                payload=answer.model_dump(mode="json"),
                usage={
                    "input_tokens": item.tokens.input_tokens,
                    "cached_input_tokens": item.tokens.cached_input_tokens,
                    "output_tokens": item.tokens.output_tokens,
                },
                raw_request=self._raw_request(batch_id, body),
                raw_response=reply.raw_response,
            )
        self._record(item, batch_id, reply.raw_response, answer, None, summary)

    def _record(
        self,
        item: _Item,
        batch_id: str,
        raw_response: dict[str, Any] | None,
        answer: Any,
        reason: str | None,
        summary: RunSummary,
    ) -> None:
        engine = self.engine
        tokens = item.tokens
        cost = engine.price.cost(tokens, batch=True) if engine.price is not None else 0.0
        usage = Usage(
            input_tokens=tokens.input_tokens,
            cached_input_tokens=tokens.cached_input_tokens,
            output_tokens=tokens.output_tokens,
            cost_usd=cost,
        )
        ann = engine._annotation(item.unit, answer, reason=reason, usage=usage)
        body = self.backend.body(self._request(item))
        engine.journal.record(
            ann,
            tokens=tokens,
            raw_request=self._raw_request(batch_id, body),
            raw_response=raw_response,
            cache_hit=False,
            attempts=item.attempts,
        )
        self.ledger.done(item.unit.id)
        s = summary
        s.judged += 1
        s.scored += int(ann.status is Status.SCORED)
        s.unscored += int(ann.status is Status.UNSCORED)
        s.quotes_not_found += int(ann.quote_found is False)
        s.input_tokens += tokens.input_tokens
        s.cached_input_tokens += tokens.cached_input_tokens
        s.output_tokens += tokens.output_tokens
        s.cost_usd += cost


async def run_batch_async(
    units: Iterable[Unit],
    coder: LLMProvider,
    codebook: Codebook,
    kind: UnitKind,
    *,
    run_dir: str | Path,
    cache_path: str | Path | None = None,
    prices: PriceTable | None = None,
    settings: JudgeSettings | None = None,
    batch: BatchSettings | None = None,
    on_progress: ProgressCallback | None = None,
) -> tuple[RunSummary, int]:
    """Judge ``units`` into ``run_dir`` in batch mode (resuming it) and export the run.

    Returns the summary and the number of provider batches this invocation submitted.
    """
    from failcodes.judge.run import _engine, export_run

    run = Path(run_dir)
    engine, journal, cache = _engine(
        coder,
        codebook,
        kind,
        run,
        Path(cache_path) if cache_path else None,
        prices,
        settings or JudgeSettings(),
    )
    runner: BatchRunner | None = None
    try:
        runner = BatchRunner(engine, settings=batch)
        summary = await runner.run(units, on_progress)
        return summary, runner.batches_submitted
    finally:
        journal.close()
        if cache is not None:
            cache.close()
        await coder.aclose()
        if runner is not None:
            export_run(run, engine.last_summary)
