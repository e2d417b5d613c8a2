"""Judging one unit: the piece every run mode (per unit, grouped, batch, cascade) shares.

:class:`UnitJudge` holds what is the same for every unit of a run (the coder, the codebook
part, the rendered system prefix and answer schema, the cache-key prefix, the price, the
rate limits) and does, for one unit or one request: build the request, compute the cache
key, call the provider through the one retry loop (:func:`~failcodes.judge.retry.
complete_with_retry`), validate the answer (an invalid answer is sent back with the
validation error; after the retry budget the unit is *unscored* with its reason, never given
a default code), check the quote, price the tokens and build the annotation. It writes
nothing but the response cache; committing outcomes to the journal is the session's job.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from failcodes.annotations import Annotation, Status, Usage
from failcodes.codebook import Codebook, Part
from failcodes.errors import ConfigError
from failcodes.judge._sqlite import blob_sha
from failcodes.judge.cache import (
    CachedResponse,
    CacheKey,
    ResponseCache,
    cache_key,
    prompt_prefix_digest,
    request_prefix_digest,
)
from failcodes.judge.journal import UNIT_IDS, UNIT_IDS_KEY
from failcodes.judge.limits import RateLimiter, Sleep
from failcodes.judge.pricing import Price, PriceTable, estimate_tokens, resolve_price
from failcodes.judge.prompts import (
    group_prompt_hash,
    group_template_hash,
    prompt_hash,
    render_invalid,
    render_system,
    render_user,
    template_hash,
    truncate,
)
from failcodes.judge.providers.base import (
    DirectCoder,
    LLMProvider,
    Message,
    ProviderReply,
    ProviderRequest,
    TokenUsage,
)
from failcodes.judge.providers.factory import endpoint
from failcodes.judge.retry import complete_with_retry
from failcodes.judge.schema import (
    SCHEMA_NAME,
    Answer,
    AnswerError,
    annotation_fields,
    answer_schema,
    parse_answer,
)
from failcodes.judge.settings import JudgeSettings
from failcodes.judge.summary import RunSummary
from failcodes.redact import redact_text
from failcodes.units import Unit, UnitKind

Coder = LLMProvider | DirectCoder


@dataclass
class Outcome:
    """One judged unit, ready to be committed to the journal."""

    annotation: Annotation
    tokens: TokenUsage
    raw_request: dict[str, Any] | None
    raw_response: dict[str, Any] | None
    cache_hit: bool
    attempts: int


class UnitJudge:
    """One coder applying one codebook part to units of one kind (see the module docstring)."""

    def __init__(
        self,
        coder: Coder,
        codebook: Codebook,
        kind: UnitKind,
        *,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        settings: JudgeSettings | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.coder = coder
        self.codebook = codebook
        self.kind = kind
        self.part: Part = codebook.part(kind)
        self.cache = cache
        self.settings = settings or JudgeSettings()
        self.sleep = sleep
        self.ref = codebook.ref()
        # what the coder is, decided once: a runtime Protocol's isinstance walks the
        # protocol's members every time (two checks a unit: 6% of the offline judge's CPU)
        self.llm: LLMProvider | None = coder if isinstance(coder, LLMProvider) else None
        self.direct: DirectCoder | None = coder if isinstance(coder, DirectCoder) else None
        self.is_llm = self.llm is not None
        #: Where the judge is called (credentials redacted); None for the vendor's endpoint.
        self.base_url = endpoint(coder) if self.is_llm else None
        raw_url = coder.identity().get("base_url") if isinstance(coder, LLMProvider) else None
        self.price: Price | None = None
        if self.is_llm:
            self.price = resolve_price(prices, coder.spec, raw_url, self.settings.price)
        if self.settings.budget_usd is not None and self.is_llm and self.price is None:
            where = f" at {self.base_url}" if self.base_url else ""
            raise ConfigError(
                f"a budget needs the price of {coder.spec}{where}: none in the price table"
                + (" (a non-vendor base URL is priced only when a price is given)" if where else "")
                + "; give one with --prices FILE --price-as KEY"
            )
        self.system = render_system(codebook, kind)
        self.schema = answer_schema(self.part)
        #: Static parts of every raw request, stored once per journal/cache (see _sqlite).
        self.blobs: dict[str, Any] = {
            blob_sha(self.system): self.system,
            blob_sha(self.schema): self.schema,
        }
        #: Digest of everything in a cache key that is the same for every unit of the run:
        #: the prompt the judge is shown, not the whole codebook (an edit to the other part
        #: keeps every answer), and the older keys' prefixes the cache may hold it under.
        self.prefix = ""
        self._legacy: tuple[str, ...] = ()
        self._salts = ("", "")  # a grouped request's (salt, older keys' salt)
        if isinstance(coder, LLMProvider):
            asked: dict[str, Any] = {
                "identity": coder.identity(),
                "params": {"max_output_tokens": self.settings.max_output_tokens},
                "system": self.system,
                "schema": self.schema,
            }
            prompt = prompt_hash(self.system, self.schema, kind)
            self.prefix = prompt_prefix_digest(**asked, prompt=prompt)
            self._salts = (group_prompt_hash(), group_template_hash())
            if cache is not None:
                older = [template_hash(), self._salts[1]]
                self._legacy = tuple(
                    request_prefix_digest(**asked, template_hash=template_hash(), codebook_hash=h)
                    for h in cache.legacy_codebooks(coder.provider, coder.model, older)
                )
        lim = self.settings.limits
        self._rpm = RateLimiter(lim.requests_per_minute) if lim.requests_per_minute else None
        self._tpm = RateLimiter(lim.tokens_per_minute) if lim.tokens_per_minute else None
        #: Estimated tokens of the byte-stable prefix (system prompt + answer schema).
        self.prefix_tokens = estimate_tokens(self.system) + estimate_tokens(json.dumps(self.schema))

    # -- identity and prices --------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        """The run identity stored in the journal (provider, model and endpoint included).

        An OpenAI judge's sampling temperature is part of it: a run resumed at another one
        mixed two samplings in one journal without a word. So is what an LLM judge is shown
        besides the unit (``prompt_hash``): a run resumed after an upgrade that changed the
        prompt templates mixed answers to two prompts.
        """
        llm = self.is_llm
        sampled = self.llm.identity().get("temperature") if self.llm is not None else None
        return {
            "kind": self.kind.value,
            "judge": self.coder.spec,
            "coder_kind": self.coder.coder_kind.value,
            "provider": self.coder.provider,
            "model": self.coder.model,
            "base_url": self.base_url or "",
            "codebook": str(self.ref),
            "codebook_hash": self.codebook.hash,
            "template_hash": template_hash(),
            UNIT_IDS_KEY: UNIT_IDS,
            **({"temperature": repr(float(sampled))} if sampled is not None else {}),
            **({"prompt_hash": prompt_hash(self.system, self.schema, self.kind)} if llm else {}),
        }

    def new_summary(self, *, units: int, already_done: int, mode: str) -> RunSummary:
        """An empty summary for one invocation of this judge."""
        return RunSummary(
            judge=self.coder.spec,
            coder_kind=self.coder.coder_kind,
            kind=self.kind,
            units=units,
            already_done=already_done,
            mode=mode,
            provider=self.coder.provider,
            model=self.coder.model,
            base_url=self.base_url,
            price_known=self.price is not None or not self.is_llm,
        )

    def cost(self, tokens: TokenUsage, *, batch: bool = False) -> float:
        """USD cost of ``tokens`` (0 when the price is unknown)."""
        return self.price.cost(tokens, batch=batch) if self.price is not None else 0.0

    def usage(self, tokens: TokenUsage, *, latency_s: float = 0.0, batch: bool = False) -> Usage:
        """The usage recorded on an annotation for ``tokens``."""
        return Usage(
            input_tokens=tokens.input_tokens,
            cached_input_tokens=tokens.cached_input_tokens,
            output_tokens=tokens.output_tokens,
            cost_usd=self.cost(tokens, batch=batch),
            latency_s=latency_s,
        )

    def reserve_usd(self, user: str, units: int = 1) -> float:
        """The budget reserved before a call whose user message is ``user`` (``units`` answers)."""
        tokens = TokenUsage(
            input_tokens=self.prefix_tokens + estimate_tokens(user),
            output_tokens=self.settings.expected_output_tokens * units,
        )
        return self.cost(tokens)

    # -- requests -------------------------------------------------------------------------

    def user(self, unit: Unit) -> str:
        """The user message of one unit."""
        return render_user(unit)

    def key(self, user: str, *, grouped: bool = False) -> CacheKey:
        """The response-cache key of a request whose user message is ``user``.

        ``grouped``: a grouped request (its template salts the key). With it, the keys an
        older failcodes stored the same request under, if the cache holds such entries.
        """
        salt, old_salt = self._salts if grouped else ("", "")
        legacy = tuple(cache_key(p + old_salt, user) for p in self._legacy)
        return CacheKey(cache_key(self.prefix + salt, user), legacy)

    def request(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        schema_name: str = SCHEMA_NAME,
        answers: int = 1,
    ) -> ProviderRequest:
        """A provider request with the run's system prefix (``answers`` sizes the output cap)."""
        return ProviderRequest(
            system=self.system,
            messages=tuple(messages),
            schema=self.schema if schema is None else schema,
            schema_name=schema_name,
            max_output_tokens=self.settings.max_output_tokens * answers,
        )

    async def call(self, request: ProviderRequest, tally: RunSummary) -> tuple[ProviderReply, int]:
        """Send ``request`` through the rate limits and the one retry loop."""
        coder = self.llm
        if coder is None:
            raise ConfigError(f"{self.coder.spec} is not an LLM judge: it makes no calls")
        est = self.prefix_tokens + sum(estimate_tokens(m.content) for m in request.messages)

        async def before() -> None:
            if self._rpm is not None:
                await self._rpm.acquire(1)
            if self._tpm is not None:
                await self._tpm.acquire(est + request.max_output_tokens)
            tally.calls += 1

        def retried() -> None:
            tally.retries += 1

        return await complete_with_retry(
            coder,
            request,
            self.settings.retry,
            sleep=self.sleep,
            before_attempt=before,
            on_retry=retried,
        )

    # -- answers --------------------------------------------------------------------------

    def annotation(
        self, unit: Unit, answer: Answer | None, *, reason: str | None, usage: Usage
    ) -> Annotation:
        """The annotation of ``unit``: scored with ``answer``, or unscored with ``reason``."""
        common = {
            "unit_id": unit.id,
            "unit_kind": unit.kind,
            "codebook": self.ref,
            "coder": self.coder.spec,
            "coder_kind": self.coder.coder_kind,
            "usage": usage,
        }
        if answer is None:
            # the reason can quote the model's answer (stored truncated) or a server's error
            # echoing the key (masked)
            shown = truncate(redact_text(reason)) if reason is not None else None
            return Annotation(status=Status.UNSCORED, reason=shown, **common)
        return Annotation(status=Status.SCORED, **common, **annotation_fields(answer, unit))

    def lookup(self, key: CacheKey, *, count: bool = True) -> CachedResponse | None:
        """The cached response under ``key``, if the run has a cache and it holds one.

        ``count``: count it as a hit (``cache stats``); a dry run's look does not.
        """
        return self.cache.find(key, count=count) if self.cache is not None else None

    def from_cache(self, unit: Unit, key: CacheKey) -> Outcome | None:
        """The outcome of ``unit`` from the response cache (None: miss, or a stale entry)."""
        hit = self.lookup(key)
        if hit is None:
            return None
        try:
            answer = parse_answer(self.part, hit.payload)
        except AnswerError:
            return None  # a stale or foreign entry: judge again
        ann = self.annotation(unit, answer, reason=None, usage=Usage())
        return Outcome(ann, TokenUsage(), hit.raw_request, hit.raw_response, True, 0)

    def remember(
        self,
        key: CacheKey,
        payload: object,
        tokens: TokenUsage,
        raw_request: dict[str, Any],
        raw_response: dict[str, Any],
        *,
        template: str | None = None,
    ) -> None:
        """Store a valid answer in the response cache (no-op without a cache)."""
        if self.cache is None or self.llm is None:
            return
        self.cache.put(
            key.key,
            provider=self.coder.provider,
            model=self.coder.model,
            template_hash=template or template_hash(),
            codebook_hash=self.codebook.hash,
            payload=payload,
            usage={
                "input_tokens": tokens.input_tokens,
                "cached_input_tokens": tokens.cached_input_tokens,
                "output_tokens": tokens.output_tokens,
            },
            raw_request=raw_request,
            raw_response=raw_response,
            blobs=self.blobs,
        )

    # -- one unit -------------------------------------------------------------------------

    def judge_direct(self, unit: Unit) -> Outcome:
        """Code ``unit`` with a direct coder (the offline heuristic baseline)."""
        coder = self.direct
        if coder is None:
            raise ConfigError(f"{self.coder.spec} is an LLM judge: use judge()")
        t0 = time.perf_counter()
        result = coder.code(unit, self.part)
        usage = Usage(latency_s=time.perf_counter() - t0)
        ann = self.annotation(unit, result.answer, reason=result.reason, usage=usage)
        return Outcome(ann, TokenUsage(), None, None, cache_hit=False, attempts=1)

    async def judge(self, unit: Unit, tally: RunSummary) -> Outcome:
        """Judge one unit: the cache, else calls until a valid answer or the retry budget."""
        if self.llm is None:
            out = self.judge_direct(unit)
            await asyncio.sleep(0)
            return out
        user = self.user(unit)
        key = self.key(user)
        cached = self.from_cache(unit, key)
        if cached is not None:
            return cached
        messages: list[Message] = [Message("user", user)]
        tokens = TokenUsage()
        attempts = 0
        t0 = time.perf_counter()
        reply: ProviderReply | None = None
        answer: Answer | None = None
        error: AnswerError | None = None
        rounds = 1 + self.settings.retry.invalid_answer_retries
        for _round in range(rounds):
            reply, n = await self.call(self.request(messages), tally)
            attempts += n
            tokens = tokens + reply.usage
            try:
                answer = parse_answer(self.part, reply.payload)
                break
            except AnswerError as exc:
                error = exc
                tally.invalid_answers += 1
                messages += [
                    Message("assistant", truncate(reply.text)),
                    Message("user", render_invalid(str(exc), reply.text)),
                ]
        assert reply is not None  # at least one round ran
        usage = self.usage(tokens, latency_s=time.perf_counter() - t0)
        reason = None
        if answer is None:
            reason = f"invalid answer after {rounds} attempts: {error}"
        else:
            payload = answer.payload()
            self.remember(key, payload, tokens, reply.raw_request, reply.raw_response)
        ann = self.annotation(unit, answer, reason=reason, usage=usage)
        return Outcome(ann, tokens, reply.raw_request, reply.raw_response, False, attempts)
