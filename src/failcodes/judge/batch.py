"""Batch mode: judge units through the providers' batch APIs (half price), resumably.

Everything but the sending is shared with the other modes
(:class:`~failcodes.judge.unitjudge.UnitJudge`, :class:`~failcodes.judge.session.Session`); on
top, batch mode keeps a *ledger* in the run's journal (:mod:`failcodes.judge.ledger`).
Submission, polling, retries and resuming a killed run: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
from collections.abc import Iterable, Iterator
from typing import Any

from failcodes.errors import ConfigError, ProviderError
from failcodes.hashing import content_hash
from failcodes.judge.grouping import GROUP_SCHEMA_NAME, GroupJudge, groups_by_claim
from failcodes.judge.ledger import LedgerItem
from failcodes.judge.modes import BUDGET_WITH_BATCH, Batch
from failcodes.judge.prompts import render_invalid, truncate
from failcodes.judge.providers.base import (
    LLMProvider,
    Message,
    ProviderReply,
    ProviderRequest,
    RetryableProviderError,
    TokenUsage,
)
from failcodes.judge.providers.batching import BatchBackend, BatchItem
from failcodes.judge.providers.factory import batch_backend
from failcodes.judge.schema import SCHEMA_NAME, Answer, AnswerError, NoAnswer, parse_answer
from failcodes.judge.session import Session
from failcodes.judge.unitjudge import Outcome
from failcodes.units import Unit


def chunks(units: Iterable[Unit], size: int) -> Iterator[list[Unit]]:
    """``units`` in lists of at most ``size``."""
    it = iter(units)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def slim_request(batch_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """The request as journaled, with the parts shared by every unit by SHA-256 digest.

    The system prefix and the answer schema are the same for every unit of a run, so the
    journal grows with the judged texts only.
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


class BatchRun:
    """One invocation of batch mode over a session."""

    def __init__(
        self, session: Session, mode: Batch, *, backend: BatchBackend | None = None
    ) -> None:
        judge = session.judge
        if not isinstance(judge.coder, LLMProvider):
            raise ConfigError("batch mode needs an LLM judge (openai:MODEL or anthropic:MODEL)")
        if judge.settings.budget_usd is not None:
            raise ConfigError(BUDGET_WITH_BATCH)
        self.session = session
        self.judge = judge
        self.coder: LLMProvider = judge.coder
        self.mode = mode
        self.groups = GroupJudge(judge) if mode.group is not None else None
        self.ledger = session.journal.ledger
        self.backend = backend or batch_backend(judge.coder)
        size = self.backend.max_requests
        if mode.size is not None:
            size = min(size, mode.size)
        self.batch_size = max(1, size)
        self._folder = session.journal.run_dir / "batches"

    # -- requests -------------------------------------------------------------------------

    def request(self, item: LedgerItem) -> ProviderRequest:
        """The provider request of one ledger item."""
        if item.grouped and self.groups is not None:
            return self.groups.request(item.units)
        user = self.judge.user(item.units[0])
        return self.judge.request([Message("user", user), *item.messages])

    # -- the run --------------------------------------------------------------------------

    async def run(self, units: Iterable[Unit]) -> None:
        """Queue new units, submit, poll, collect and retry until every unit is journaled."""
        summary = self.session.summary
        for raw_chunk in chunks(units, self.mode.commit_every):
            chunk = list({u.id: u for u in raw_chunk}.values())
            ids = [u.id for u in chunk]
            done = self.session.journal.present(ids)
            known = self.ledger.tracked(ids)
            self.session.count_input(len(chunk), len(done))
            fresh = [u for u in chunk if u.id not in done and u.id not in known]
            fresh = self.session.from_cache(fresh)
            if self.mode.group is not None:
                grouped = groups_by_claim(fresh, self.mode.group.size)
                singles = [g[0] for g in grouped if len(g) == 1]
                groups = [g for g in grouped if len(g) > 1]
                # a group whose whole answer the cache holds (a grouped run before, in
                # batches or by direct calls) is not sent again: a second batch run on a warm
                # cache sent every group again, and the dry run counted them as items too
                groups, alone = self._groups_from_cache(groups)
                singles += alone
                summary.judged_alone += len(singles)
                self.ledger.queue(singles, groups)
            else:
                self.ledger.queue(fresh)
        while True:
            await self._submit_queued()
            open_ids = self.ledger.open_batches()
            if not open_ids:
                break
            await self._poll_and_collect(open_ids)

    def _groups_from_cache(self, groups: list[list[Unit]]) -> tuple[list[list[Unit]], list[Unit]]:
        """Record the groups the response cache answers whole; the others, and units to ask alone.

        As a grouped run by direct calls does (:meth:`GroupJudge.judge_group`): a cached group
        answer one of whose results is invalid leaves that unit to be asked alone.
        """
        assert self.groups is not None
        if self.judge.cache is None:
            return groups, []
        rest: list[list[Unit]] = []
        alone: list[Unit] = []
        for group in groups:
            hit = self.judge.lookup(self.groups.key(self.groups.request(group)))
            if hit is None:
                rest.append(group)
                continue
            raw = (hit.raw_request, hit.raw_response)
            done, left = self.groups.settle(
                group, hit.payload, TokenUsage(), raw, cache_hit=True, attempts=0, batch=True
            )
            self.session.summary.grouped_units += len(done)
            for out in done:
                self.session.record(out)
            alone += [unit for unit, _ in left]
        return rest, alone

    async def _submit_queued(self) -> None:
        """Submit every queued item in provider-sized batches."""
        summary = self.session.summary
        self._folder.mkdir(parents=True, exist_ok=True)
        while True:
            path = self._folder / "pending.jsonl"
            ids: list[str] = []
            size = 0
            items = self.ledger.queued(self.batch_size)
            with path.open("w", encoding="utf-8") as fh, contextlib.closing(items):
                for item in items:
                    body = self.backend.body(self.request(item))
                    line = json.dumps(self.backend.line(item.item_id, body), ensure_ascii=False)
                    if ids and size + len(line) + 1 > self.backend.max_bytes:
                        break
                    fh.write(line + "\n")
                    size += len(line.encode()) + 1
                    ids.append(item.item_id)
                    summary.retries += int(item.attempts > 0)
            if not ids:
                path.unlink(missing_ok=True)
                return
            batch_id = await self.backend.submit(
                path, metadata={"failcodes_run": str(self.session.journal.run_dir.name)}
            )
            self.ledger.submitted(batch_id, self.coder.provider, ids)
            summary.batches += 1
            summary.calls += len(ids)
            path.unlink(missing_ok=True)

    async def _poll_and_collect(self, batch_ids: list[str]) -> None:
        waiting = list(batch_ids)
        failures: dict[str, int] = {}
        attempts = self.judge.settings.retry.max_attempts
        while waiting:
            still: list[str] = []
            for batch_id in waiting:
                try:
                    status = await self.backend.status(batch_id)
                except RetryableProviderError as exc:
                    # an overloaded or rate-limited poll is polled again; the batch id is in
                    # the ledger, so a run that gives up here resumes without resubmitting
                    failures[batch_id] = failures.get(batch_id, 0) + 1
                    if failures[batch_id] >= attempts:
                        raise ProviderError(
                            f"{self.coder.spec}: giving up after {attempts} attempts: {exc}"
                        ) from None
                    still.append(batch_id)
                    continue
                failures.pop(batch_id, None)
                if not status.ended:
                    still.append(batch_id)
                    continue
                await self._collect(batch_id, status.state)
                self.session.progress()
            waiting = still
            if waiting:
                await asyncio.sleep(self.mode.poll)

    async def _collect(self, batch_id: str, state: str) -> None:
        """Stream one ended batch's results into the journal (idempotent)."""
        ledger = self.ledger
        ledger.begin()
        n = 0
        async for result in self.backend.results(batch_id):
            item = ledger.item(batch_id, result.custom_id)
            if item is None:
                continue  # collected before a restart, or not ours
            self._settle(batch_id, result, item)
            n += 1
            if n % self.mode.commit_every == 0:
                ledger.commit()
                ledger.begin()
        ledger.commit()
        # Items the provider never answered (expired, cancelled batch) go back to the queue.
        for item_id in ledger.unanswered(batch_id):
            item = ledger.item(batch_id, item_id)
            if item is not None:
                self._settle(batch_id, BatchItem(item_id, None, f"batch {state}"), item)
        ledger.collected(batch_id, state)

    def _settle(self, batch_id: str, result: BatchItem, item: LedgerItem) -> None:
        policy = self.judge.settings.retry
        if result.reply is None:
            if item.attempts < policy.max_attempts:
                self.ledger.requeue(item, result.error or "failed")
                return
            reason = f"batch item failed after {item.attempts} attempts: {result.error}"
            for unit in item.units:
                self._record(item, unit, batch_id, None, None, reason, item.tokens)
            self.ledger.done(item.item_id)
            return
        reply = _expect_tool(result.reply, GROUP_SCHEMA_NAME if item.grouped else SCHEMA_NAME)
        item.tokens = item.tokens + reply.usage
        if item.grouped:
            self._settle_group(batch_id, item, reply.payload, reply.raw_response)
            return
        unit = item.units[0]
        try:
            answer = parse_answer(self.judge.part, reply.payload)
        except AnswerError as exc:
            self.session.summary.invalid_answers += 1
            item.invalid += 1
            if item.invalid <= policy.invalid_answer_retries:
                item.messages = [
                    *item.messages,
                    Message("assistant", truncate(reply.text)),
                    Message("user", render_invalid(str(exc), reply.text)),
                ]
                self.ledger.requeue(item, str(exc))
                return
            reason = f"invalid answer after {item.invalid} attempts: {exc}"
            self._record(item, unit, batch_id, reply.raw_response, None, reason, item.tokens)
            self.ledger.done(item.item_id)
            return
        raw_request = slim_request(batch_id, self.backend.body(self.request(item)))
        self.judge.remember(
            self.judge.key(self.judge.user(unit)),
            answer.payload(),
            item.tokens,
            raw_request,
            reply.raw_response,
        )
        self._record(item, unit, batch_id, reply.raw_response, answer, None, item.tokens)
        self.ledger.done(item.item_id)

    def _settle_group(
        self, batch_id: str, item: LedgerItem, payload: object, raw_response: dict[str, Any]
    ) -> None:
        assert self.groups is not None
        raw_request = slim_request(batch_id, self.backend.body(self.request(item)))
        done, alone = self.groups.settle(
            item.units,
            payload,
            item.tokens,
            (raw_request, raw_response),
            attempts=item.attempts,
            batch=True,
        )
        if not alone:  # the group's whole answer, for a later run's groups (as direct calls)
            key = self.groups.key(self.groups.request(item.units))
            template = self.groups.template
            self.judge.remember(
                key, payload, item.tokens, raw_request, raw_response, template=template
            )
        summary = self.session.summary
        summary.groups += 1
        summary.grouped_units += len(done)
        for out in done:
            self.session.record(out)
        if alone:
            summary.invalid_answers += len(alone)
            summary.judged_alone += len(alone)
            # the passages to judge again go on alone, carrying their share of the group
            for unit, part in alone:
                self.ledger.requeue_alone(unit, part, "no valid result in the group answer")
        self.ledger.done(item.item_id)

    def _record(
        self,
        item: LedgerItem,
        unit: Unit,
        batch_id: str,
        raw_response: dict[str, Any] | None,
        answer: Answer | None,
        reason: str | None,
        tokens: TokenUsage,
    ) -> None:
        usage = self.judge.usage(tokens, batch=True)
        ann = self.judge.annotation(unit, answer, reason=reason, usage=usage)
        body = self.backend.body(self.request(item))
        self.session.record(
            Outcome(
                ann,
                tokens,
                slim_request(batch_id, body),
                raw_response,
                cache_hit=False,
                attempts=item.attempts,
            )
        )


def _expect_tool(reply: ProviderReply, name: str) -> ProviderReply:
    """``reply``, holding no answer when it is a call of a tool other than ``name``.

    A batch result comes without its request, so the provider takes any tool's call
    (``extra["tool"]`` names it); a synchronous call is checked by the provider itself.
    """
    tool = reply.extra.get("tool")
    if tool is None or tool == name:
        return reply
    why = NoAnswer(f"no call of the tool `{name}` (a call of `{tool}` instead)")
    return dataclasses.replace(reply, payload=why)
