"""The judge engine: applies a codebook to units through a provider, concurrently.

For every unit not yet in the run's journal it renders the prompt, looks the request up in
the response cache, otherwise calls the provider (rate-limited, retried with backoff that
honours retry-after), validates the structured answer against the codebook (an invalid
answer is sent back with the validation error; after the retry budget the unit is recorded
*unscored* with its reason, never given a default code), checks the quote against the judged
text, prices the call, and commits the unit to the journal at once. ``--budget`` stops
scheduling new calls before the limit would be crossed, lets calls in flight finish and be
committed, then raises :class:`~failcodes.errors.BudgetExceededError`.

Extension points (judging at scale): units arrive deduplicated (``failcodes.units``); a
grouped request is a :class:`ProviderRequest` whose schema holds k per-unit answers, split
and validated one by one with :func:`parse_answer` before each unit is journaled; a batch
backend only has to produce the same journal rows (``Journal.record``) keyed by unit id, so
resume works unchanged; a cascade runs a cheap coder first and sends the units whose
annotation is ``uncertain`` to the next one (each annotation names its coder and kind).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from failcodes.annotations import Annotation, CodebookRef, CoderKind, Status, Usage
from failcodes.codebook import Codebook, Part
from failcodes.errors import BudgetExceededError, FailcodesError, ProviderError
from failcodes.judge._sqlite import blob_sha
from failcodes.judge.cache import ResponseCache, cache_key, request_prefix_digest
from failcodes.judge.journal import Journal
from failcodes.judge.limits import Limits, RateLimiter, RetryPolicy, Sleep
from failcodes.judge.pricing import Price, PriceTable, estimate_tokens, require_price
from failcodes.judge.prompts import render_invalid, render_system, render_user, template_hash
from failcodes.judge.providers.base import (
    DirectCoder,
    LLMProvider,
    Message,
    ProviderReply,
    ProviderRequest,
    RetryableProviderError,
    TokenUsage,
)
from failcodes.judge.schema import SCHEMA_NAME, Answer, AnswerError, answer_schema, parse_answer
from failcodes.judge.schema import quote_found as check_quote
from failcodes.units import Unit, UnitKind

Coder = LLMProvider | DirectCoder
ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class JudgeSettings:
    """Everything about a run that is not the provider, the codebook or the units."""

    limits: Limits = field(default_factory=Limits)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_output_tokens: int = 1024
    budget_usd: float | None = None
    #: Output tokens assumed per unit by estimates (dry run, budget reservation).
    expected_output_tokens: int = 250


class Estimate(BaseModel):
    """What a run would cost before spending anything (``--dry-run``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: str
    units: int
    already_done: int
    cache_hits: int
    to_call: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    price_known: bool
    note: str


class RunSummary(BaseModel):
    """The closing summary of one invocation (and the journal's totals)."""

    model_config = ConfigDict(extra="forbid")

    judge: str
    coder_kind: CoderKind
    kind: UnitKind
    units: int
    already_done: int
    judged: int = 0
    cache_hits: int = 0
    scored: int = 0
    unscored: int = 0
    calls: int = 0
    retries: int = 0
    invalid_answers: int = 0
    quotes_not_found: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    price_known: bool = True
    elapsed_s: float = 0.0
    stopped_by_budget: bool = False
    journal_units: int = 0
    journal_cost_usd: float = 0.0


def codebook_ref(codebook: Codebook) -> CodebookRef:
    """Return the reference recorded on every annotation made under ``codebook``."""
    return CodebookRef(name=codebook.name, version=codebook.version, hash=codebook.hash)


def judged_texts(unit: Unit) -> list[str]:
    """The texts a quote may come from: the passages, the claim, and the reasoning."""
    texts = [p.text for p in unit.passages]
    texts.append(unit.claim)
    if unit.reasoning:
        texts.append(unit.reasoning)
    return texts


@dataclass
class _Outcome:
    annotation: Annotation
    tokens: TokenUsage
    raw_request: dict[str, Any] | None
    raw_response: dict[str, Any] | None
    cache_hit: bool
    attempts: int


class JudgeEngine:
    """Runs one coder over units of one kind, journaled, cached and rate-limited."""

    def __init__(
        self,
        coder: Coder,
        codebook: Codebook,
        kind: UnitKind,
        *,
        journal: Journal,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        settings: JudgeSettings | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.coder = coder
        self.codebook = codebook
        self.kind = kind
        self.part: Part = codebook.part(kind)
        self.journal = journal
        self.cache = cache
        self.settings = settings or JudgeSettings()
        self._sleep = sleep
        self.last_summary: RunSummary | None = None
        self.ref = codebook_ref(codebook)
        self.is_llm = isinstance(coder, LLMProvider)
        self.price: Price | None = None
        if prices is not None and self.is_llm:
            self.price = prices.lookup(coder.spec)
        if self.settings.budget_usd is not None and self.is_llm:
            if prices is None:
                raise FailcodesError("a budget needs a price table")
            self.price = require_price(prices, coder.spec)
        self.system = render_system(codebook, kind)
        self.schema = answer_schema(self.part)
        #: Static parts of every raw request, stored once per journal/cache (see _sqlite).
        self.blobs: dict[str, Any] = {
            blob_sha(self.system): self.system,
            blob_sha(self.schema): self.schema,
        }
        self._prefix = ""
        if isinstance(coder, LLMProvider):
            self._prefix = request_prefix_digest(
                identity=coder.identity(),
                params={"max_output_tokens": self.settings.max_output_tokens},
                system=self.system,
                schema=self.schema,
                template_hash=template_hash(),
                codebook_hash=codebook.hash,
            )
        lim = self.settings.limits
        self._rpm = RateLimiter(lim.requests_per_minute) if lim.requests_per_minute else None
        self._tpm = RateLimiter(lim.tokens_per_minute) if lim.tokens_per_minute else None
        self._system_tokens = estimate_tokens(self.system) + estimate_tokens(
            json.dumps(self.schema)
        )

    # -- bookkeeping ----------------------------------------------------------------------

    def journal_meta(self) -> dict[str, str]:
        """The run identity stored in the journal."""
        return {
            "kind": self.kind.value,
            "judge": self.coder.spec,
            "coder_kind": self.coder.coder_kind.value,
            "codebook": str(self.ref),
            "codebook_hash": self.codebook.hash,
            "template_hash": template_hash(),
        }

    def _estimate_unit_tokens(self, user: str) -> TokenUsage:
        return TokenUsage(
            input_tokens=self._system_tokens + estimate_tokens(user),
            output_tokens=self.settings.expected_output_tokens,
        )

    def _cost(self, tokens: TokenUsage) -> float:
        return self.price.cost(tokens) if self.price is not None else 0.0

    def _key(self, user: str) -> str:
        return cache_key(self._prefix, user)

    # -- dry run --------------------------------------------------------------------------

    def estimate(self, units: Iterable[Unit]) -> Estimate:
        """Estimate tokens and cost of judging ``units`` (journal and cache hits are free)."""
        done = self.journal.done_ids()
        total = already = hits = to_call = 0
        tokens = TokenUsage()
        for unit in _unique(units):
            total += 1
            if unit.id in done:
                already += 1
                continue
            if not self.is_llm:
                continue
            user = render_user(unit)
            if self.cache is not None and self.cache.get(self._key(user), count=False):
                hits += 1
                continue
            to_call += 1
            tokens = tokens + self._estimate_unit_tokens(user)
        cost = self._cost(tokens) if self.price is not None else None
        note = (
            "offline heuristic baseline: no calls, no cost"
            if not self.is_llm
            else "tokens estimated at ~4 characters per token, output at "
            f"{self.settings.expected_output_tokens} tokens per unit, no provider prompt "
            "caching assumed (an upper bound)"
        )
        return Estimate(
            judge=self.coder.spec,
            units=total,
            already_done=already,
            cache_hits=hits,
            to_call=to_call,
            input_tokens=tokens.input_tokens,
            output_tokens=tokens.output_tokens,
            cost_usd=cost if self.is_llm else 0.0,
            price_known=self.price is not None or not self.is_llm,
            note=note,
        )

    # -- the run --------------------------------------------------------------------------

    async def run(
        self, units: Iterable[Unit], on_progress: ProgressCallback | None = None
    ) -> RunSummary:
        """Judge every unit not yet journaled; return the closing summary.

        Raises :class:`BudgetExceededError` when the budget stopped the run, after committing
        every finished unit; the summary of a stopped run is in :attr:`last_summary`.
        """
        started = time.monotonic()
        self.journal.bind(self.journal_meta())
        done = self.journal.done_ids()
        unique = list(_unique(units))
        pending = [u for u in unique if u.id not in done]
        summary = RunSummary(
            judge=self.coder.spec,
            coder_kind=self.coder.coder_kind,
            kind=self.kind,
            units=len(unique),
            already_done=len(unique) - len(pending),
            price_known=self.price is not None or not self.is_llm,
        )
        self.journal.start_session()
        state = _RunState(summary=summary, pending=iter(pending), total=len(pending))
        workers = self.settings.limits.concurrency if self.is_llm else 1
        outcome = "finished"
        try:
            await asyncio.gather(
                *(self._worker(state, on_progress) for _ in range(max(1, workers)))
            )
            if state.error is not None:
                raise state.error
            if state.budget_hit:
                summary.stopped_by_budget = True
                outcome = "budget"
                raise BudgetExceededError(
                    f"budget of ${self.settings.budget_usd:.4f} reached after spending "
                    f"${summary.cost_usd:.4f}; {summary.judged} units judged and committed, "
                    f"{len(pending) - summary.judged} left (rerun with a larger --budget "
                    "to resume)"
                )
        except BaseException as exc:
            if outcome == "finished":
                outcome = f"error: {type(exc).__name__}"
            raise
        finally:
            self.close_session(summary, outcome, started)
        return summary

    def close_session(self, summary: RunSummary, outcome: str, started: float) -> None:
        """Finish the journal session: elapsed time, journal totals, outcome, last summary.

        Shared by every way of running units (per unit, grouped by claim, batch APIs).
        """
        summary.elapsed_s = time.monotonic() - started
        totals = self.journal.totals()
        summary.journal_units = totals.units
        summary.journal_cost_usd = totals.cost_usd
        self.journal.finish_session(outcome, summary.model_dump(mode="json"))
        self.last_summary = summary

    async def _worker(self, state: _RunState, on_progress: ProgressCallback | None) -> None:
        while not state.stop:
            reserve = 0.0
            unit = next(state.pending, None)
            if unit is None:
                return
            if self.settings.budget_usd is not None:
                reserve = self._cost(self._estimate_unit_tokens(render_user(unit)))
                if state.summary.cost_usd + state.reserved + reserve > self.settings.budget_usd:
                    state.budget_hit = True
                    state.stop = True
                    return
            state.reserved += reserve
            try:
                if isinstance(self.coder, LLMProvider):
                    out = await self._judge_llm(self.coder, unit, state)
                else:
                    out = self._judge_direct(self.coder, unit)
                    await asyncio.sleep(0)
            except Exception as exc:  # stop everyone, keep what is committed
                if state.error is None:
                    state.error = exc
                state.stop = True
                return
            finally:
                state.reserved -= reserve
            self.journal.record(
                out.annotation,
                tokens=out.tokens,
                raw_request=out.raw_request,
                raw_response=out.raw_response,
                cache_hit=out.cache_hit,
                attempts=out.attempts,
                blobs=self.blobs,
            )
            state.count(out)
            if on_progress is not None:
                on_progress(state.summary.judged, state.total)

    def _annotation(
        self,
        unit: Unit,
        answer: Answer | None,
        *,
        reason: str | None,
        usage: Usage,
    ) -> Annotation:
        if answer is None:
            return Annotation(
                unit_id=unit.id,
                unit_kind=unit.kind,
                codebook=self.ref,
                coder=self.coder.spec,
                coder_kind=self.coder.coder_kind,
                status=Status.UNSCORED,
                reason=reason,
                usage=usage,
            )
        return Annotation(
            unit_id=unit.id,
            unit_kind=unit.kind,
            codebook=self.ref,
            coder=self.coder.spec,
            coder_kind=self.coder.coder_kind,
            status=Status.SCORED,
            codes=answer.codes,
            leaves=answer.leaves,
            rationale=answer.rationale,
            quote=answer.quote or None,
            quote_found=check_quote(answer.quote, judged_texts(unit)),
            uncertain=answer.uncertain,
            usage=usage,
        )

    def _judge_direct(self, coder: DirectCoder, unit: Unit) -> _Outcome:
        t0 = time.perf_counter()
        result = coder.code(unit, self.part)
        usage = Usage(latency_s=time.perf_counter() - t0)
        ann = self._annotation(unit, result.answer, reason=result.reason, usage=usage)
        return _Outcome(ann, TokenUsage(), None, None, cache_hit=False, attempts=1)

    async def _judge_llm(self, coder: LLMProvider, unit: Unit, state: _RunState) -> _Outcome:
        user = render_user(unit)
        key = self._key(user)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    cached = parse_answer(self.part, hit.payload)
                except AnswerError:
                    pass  # a stale or foreign entry: judge again
                else:
                    ann = self._annotation(unit, cached, reason=None, usage=Usage())
                    return _Outcome(ann, TokenUsage(), hit.raw_request, hit.raw_response, True, 0)
        messages: list[Message] = [Message("user", user)]
        tokens = TokenUsage()
        attempts = 0
        t0 = time.perf_counter()
        reply: ProviderReply | None = None
        answer: Answer | None = None
        error: AnswerError | None = None
        for _round in range(1 + self.settings.retry.invalid_answer_retries):
            request = ProviderRequest(
                system=self.system,
                messages=tuple(messages),
                schema=self.schema,
                schema_name=SCHEMA_NAME,
                max_output_tokens=self.settings.max_output_tokens,
            )
            reply, n = await self._call(coder, request, state)
            attempts += n
            tokens = tokens + reply.usage
            try:
                answer = parse_answer(self.part, reply.payload)
                break
            except AnswerError as exc:
                error = exc
                state.summary.invalid_answers += 1
                messages += [
                    Message("assistant", reply.text),
                    Message("user", render_invalid(str(exc))),
                ]
        latency = time.perf_counter() - t0
        cost = self._cost(tokens)
        usage = Usage(
            input_tokens=tokens.input_tokens,
            cached_input_tokens=tokens.cached_input_tokens,
            output_tokens=tokens.output_tokens,
            cost_usd=cost,
            latency_s=latency,
        )
        assert reply is not None  # at least one round ran
        reason = None
        if answer is None:
            reason = (
                f"invalid answer after {1 + self.settings.retry.invalid_answer_retries} "
                f"attempts: {error}"
            )
        elif self.cache is not None:
            self.cache.put(
                key,
                provider=coder.provider,
                model=coder.model,
                template_hash=template_hash(),
                codebook_hash=self.codebook.hash,
                payload=answer.model_dump(mode="json"),
                usage={
                    "input_tokens": tokens.input_tokens,
                    "cached_input_tokens": tokens.cached_input_tokens,
                    "output_tokens": tokens.output_tokens,
                },
                raw_request=reply.raw_request,
                raw_response=reply.raw_response,
                blobs=self.blobs,
            )
        ann = self._annotation(unit, answer, reason=reason, usage=usage)
        return _Outcome(ann, tokens, reply.raw_request, reply.raw_response, False, attempts)

    async def _call(
        self, coder: LLMProvider, request: ProviderRequest, state: _RunState
    ) -> tuple[ProviderReply, int]:
        policy = self.settings.retry
        est = self._system_tokens + sum(estimate_tokens(m.content) for m in request.messages)
        for attempt in range(1, policy.max_attempts + 1):
            if self._rpm is not None:
                await self._rpm.acquire(1)
            if self._tpm is not None:
                await self._tpm.acquire(est + request.max_output_tokens)
            state.summary.calls += 1
            try:
                return await coder.complete(request), attempt
            except RetryableProviderError as exc:
                if attempt == policy.max_attempts:
                    raise ProviderError(
                        f"{coder.spec}: giving up after {attempt} attempts: {exc}"
                    ) from exc
                state.summary.retries += 1
                await self._sleep(policy.wait(attempt, exc.retry_after))
        raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class _RunState:
    summary: RunSummary
    pending: Iterator[Unit]
    total: int
    stop: bool = False
    budget_hit: bool = False
    reserved: float = 0.0
    error: BaseException | None = None

    def count(self, out: _Outcome) -> None:
        s = self.summary
        s.judged += 1
        s.cache_hits += int(out.cache_hit)
        if out.annotation.status is Status.SCORED:
            s.scored += 1
        else:
            s.unscored += 1
        if out.annotation.quote_found is False:
            s.quotes_not_found += 1
        s.input_tokens += out.tokens.input_tokens
        s.cached_input_tokens += out.tokens.cached_input_tokens
        s.output_tokens += out.tokens.output_tokens
        s.cost_usd += out.annotation.usage.cost_usd


def _unique(units: Iterable[Unit]) -> Iterator[Unit]:
    seen: set[str] = set()
    for unit in units:
        if unit.id not in seen:
            seen.add(unit.id)
            yield unit
