"""Grouping: judge all passages of one claim in one call (retrieval units).

The units of one claim (after deduplication across retrievers) share one call: the claim is
sent once, the passages are listed under keys ``p1..pk``, and the answer is an array of
per-passage results under a schema that does not depend on k (so the request prefix, tools
included, stays byte-stable and cacheable). Every result is validated on its own; a passage
whose result is missing or invalid is judged again *alone* through the engine's ordinary
path (which sends the validation error back and, after its retry budget, records the unit
unscored). The group's tokens and cost are shared equally by the passages it coded.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from failcodes.annotations import Usage
from failcodes.codebook import Codebook
from failcodes.errors import BudgetExceededError, FailcodesError
from failcodes.judge.cache import cache_key
from failcodes.judge.engine import (
    JudgeEngine,
    JudgeSettings,
    ProgressCallback,
    RunSummary,
    _Outcome,
    _RunState,
    _unique,
)
from failcodes.judge.pricing import PriceTable
from failcodes.judge.prompts import _escaping_env, template_hash
from failcodes.judge.providers.base import LLMProvider, Message, ProviderRequest, TokenUsage
from failcodes.judge.schema import Answer, AnswerError, parse_answer
from failcodes.units import Unit, UnitKind

GROUP_SCHEMA_NAME = "record_codes_per_passage"
GROUP_TEMPLATE = "retrieval_group.j2"
#: Most passages per call (a claim with more is split into several calls).
DEFAULT_GROUP_SIZE = 25


def group_schema(item_schema: dict[str, Any]) -> dict[str, Any]:
    """The answer schema of a group: ``{"results": [{"passage": key, ...answer}]}``."""
    props = dict(item_schema["properties"])
    item = {
        "type": "object",
        "properties": {
            "passage": {"type": "string", "description": "The passage key (p1, p2, ...)."},
            **props,
        },
        "required": ["passage", *item_schema["required"]],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"results": {"type": "array", "items": item}},
        "required": ["results"],
        "additionalProperties": False,
    }


def group_template_hash() -> str:
    """Hash of the engine templates plus the group template (part of group cache keys)."""
    from importlib import resources

    source = resources.files("failcodes.judge.prompts").joinpath(GROUP_TEMPLATE).read_bytes()
    return hashlib.sha256(template_hash().encode() + source).hexdigest()


def render_group(units: list[Unit]) -> str:
    """The user message of one group: the claim once, the passages under keys p1..pk."""
    passages = [(f"p{i}", u.passages[0]) for i, u in enumerate(units, 1)]
    return (
        _escaping_env().get_template(GROUP_TEMPLATE).render(claim=units[0].claim, passages=passages)
    )


def groups_by_claim(units: Iterable[Unit], size: int = DEFAULT_GROUP_SIZE) -> list[list[Unit]]:
    """Group retrieval units by claim text (first-seen order), at most ``size`` per group."""
    by_claim: dict[str, list[Unit]] = {}
    for unit in units:
        by_claim.setdefault(unit.claim, []).append(unit)
    out: list[list[Unit]] = []
    for members in by_claim.values():
        out += [members[i : i + size] for i in range(0, len(members), size)]
    return out


def parse_group(part: Any, payload: object, keys: list[str]) -> dict[str, Answer | str]:
    """Validate a group answer item by item: key -> Answer, or the error for that key."""
    out: dict[str, Answer | str] = dict.fromkeys(keys, "no result for this passage")
    if isinstance(payload, str):
        return dict.fromkeys(keys, "the answer is not valid JSON")
    results = payload.get("results") if isinstance(payload, dict) else None
    if not isinstance(results, list):
        return dict.fromkeys(keys, "'results' must be an array of per-passage results")
    for entry in results:
        if not isinstance(entry, dict) or entry.get("passage") not in out:
            continue
        key = str(entry["passage"])
        if isinstance(out[key], Answer):
            out[key] = "several results for this passage"
            continue
        try:
            out[key] = parse_answer(part, {k: v for k, v in entry.items() if k != "passage"})
        except AnswerError as exc:
            out[key] = str(exc)
    return out


def _share(tokens: TokenUsage, n: int, i: int) -> TokenUsage:
    """The ``i``-th of ``n`` equal shares of ``tokens`` (remainders go to the first)."""

    def part(x: int) -> int:
        return x // n + (1 if i < x % n else 0)

    return TokenUsage(
        part(tokens.input_tokens),
        part(tokens.cached_input_tokens),
        part(tokens.cache_write_tokens),
        part(tokens.output_tokens),
    )


@dataclass
class GroupStats:
    """What grouping did in one invocation."""

    groups: int = 0
    grouped_units: int = 0
    alone: int = 0


class GroupRunner:
    """Runs an engine's retrieval units grouped by claim."""

    def __init__(self, engine: JudgeEngine, *, group_size: int = DEFAULT_GROUP_SIZE) -> None:
        if not isinstance(engine.coder, LLMProvider):
            raise FailcodesError("grouping needs an LLM judge (the offline judge codes alone)")
        if engine.kind is not UnitKind.RETRIEVAL:
            raise FailcodesError("grouping applies to retrieval units (passages of one claim)")
        self.engine = engine
        self.coder: LLMProvider = engine.coder
        self.group_size = max(1, group_size)
        self.schema = group_schema(engine.schema)
        self.stats = GroupStats()
        self._thash = group_template_hash()

    def request(self, units: list[Unit]) -> ProviderRequest:
        """The provider request of one group."""
        return ProviderRequest(
            system=self.engine.system,
            messages=(Message("user", render_group(units)),),
            schema=self.schema,
            schema_name=GROUP_SCHEMA_NAME,
            max_output_tokens=self.engine.settings.max_output_tokens * len(units),
        )

    async def run(
        self, units: Iterable[Unit], on_progress: ProgressCallback | None = None
    ) -> RunSummary:
        """Judge every unit not yet journaled, one call per group."""
        engine = self.engine
        started = time.monotonic()
        engine.journal.bind(engine.journal_meta())
        done = engine.journal.done_ids()
        unique = list(_unique(units))
        pending = [u for u in unique if u.id not in done]
        summary = RunSummary(
            judge=self.coder.spec,
            coder_kind=self.coder.coder_kind,
            kind=engine.kind,
            units=len(unique),
            already_done=len(unique) - len(pending),
            price_known=engine.price is not None,
        )
        groups = groups_by_claim(pending, self.group_size)
        engine.journal.start_session()
        state = _RunState(summary=summary, pending=iter(()), total=len(pending))
        queue: Iterator[list[Unit]] = iter(groups)
        outcome = "finished"
        try:
            workers = max(1, engine.settings.limits.concurrency)
            await asyncio.gather(*(self._worker(queue, state, on_progress) for _ in range(workers)))
            if state.error is not None:
                raise state.error
            if state.budget_hit:
                summary.stopped_by_budget = True
                outcome = "budget"
                raise BudgetExceededError(
                    f"budget of ${engine.settings.budget_usd:.4f} reached after spending "
                    f"${summary.cost_usd:.4f}; {summary.judged} units judged and committed "
                    "(rerun with a larger --budget to resume)"
                )
        except BaseException as exc:
            if outcome == "finished":
                outcome = f"error: {type(exc).__name__}"
            raise
        finally:
            engine.close_session(summary, outcome, started)
        return summary

    async def _worker(
        self, queue: Iterator[list[Unit]], state: _RunState, on_progress: ProgressCallback | None
    ) -> None:
        engine = self.engine
        while not state.stop:
            group = next(queue, None)
            if group is None:
                return
            if engine.settings.budget_usd is not None:
                user = render_group(group)
                est = engine._estimate_unit_tokens(user)
                reserve = engine._cost(
                    TokenUsage(est.input_tokens, 0, 0, est.output_tokens * len(group))
                )
                if state.summary.cost_usd + reserve > engine.settings.budget_usd:
                    state.budget_hit = True
                    state.stop = True
                    return
            try:
                outcomes = await self._judge_group(group, state)
            except Exception as exc:  # stop everyone, keep what is committed
                if state.error is None:
                    state.error = exc
                state.stop = True
                return
            for out in outcomes:
                engine.journal.record(
                    out.annotation,
                    tokens=out.tokens,
                    raw_request=out.raw_request,
                    raw_response=out.raw_response,
                    cache_hit=out.cache_hit,
                    attempts=out.attempts,
                )
                state.count(out)
            if on_progress is not None:
                on_progress(state.summary.judged, state.total)

    async def _judge_group(self, group: list[Unit], state: _RunState) -> list[_Outcome]:
        engine = self.engine
        if len(group) == 1:
            self.stats.alone += 1
            return [await engine._judge_llm(self.coder, group[0], state)]
        request = self.request(group)
        keys = [f"p{i}" for i in range(1, len(group) + 1)]
        key = cache_key(engine._prefix + self._thash, request.messages[0].content)
        t0 = time.perf_counter()
        hit = engine.cache.get(key) if engine.cache is not None else None
        if hit is not None:
            parsed = parse_group(engine.part, hit.payload, keys)
            tokens, attempts, cache_hit = TokenUsage(), 0, True
            raw_request, raw_response = hit.raw_request, hit.raw_response
        else:
            reply, attempts = await engine._call(self.coder, request, state)
            tokens, cache_hit = reply.usage, False
            raw_request, raw_response = reply.raw_request, reply.raw_response
            parsed = parse_group(engine.part, reply.payload, keys)
            if engine.cache is not None and all(isinstance(v, Answer) for v in parsed.values()):
                engine.cache.put(
                    key,
                    provider=self.coder.provider,
                    model=self.coder.model,
                    template_hash=self._thash,
                    codebook_hash=engine.codebook.hash,
                    payload=reply.payload,
                    usage={
                        "input_tokens": tokens.input_tokens,
                        "cached_input_tokens": tokens.cached_input_tokens,
                        "output_tokens": tokens.output_tokens,
                    },
                    raw_request=raw_request,
                    raw_response=raw_response,
                )
        latency = time.perf_counter() - t0
        self.stats.groups += 1
        n_good = sum(1 for k in keys if isinstance(parsed[k], Answer))
        self.stats.grouped_units += n_good
        outcomes: list[_Outcome] = []
        for i, (unit, k) in enumerate(zip(group, keys, strict=True)):
            share = _share(tokens, len(group), i)  # every passage carries its share
            answer = parsed[k]
            if isinstance(answer, Answer):
                usage = Usage(
                    input_tokens=share.input_tokens,
                    cached_input_tokens=share.cached_input_tokens,
                    output_tokens=share.output_tokens,
                    cost_usd=engine._cost(share),
                    latency_s=latency,
                )
                ann = engine._annotation(unit, answer, reason=None, usage=usage)
                outcomes.append(
                    _Outcome(ann, share, raw_request, raw_response, cache_hit, attempts)
                )
                continue
            state.summary.invalid_answers += 1
            self.stats.alone += 1
            alone = await engine._judge_llm(self.coder, unit, state)
            total = alone.tokens + share
            usage = alone.annotation.usage.model_copy(
                update={
                    "input_tokens": total.input_tokens,
                    "cached_input_tokens": total.cached_input_tokens,
                    "output_tokens": total.output_tokens,
                    "cost_usd": alone.annotation.usage.cost_usd + engine._cost(share),
                }
            )
            ann = alone.annotation.model_copy(update={"usage": usage})
            outcomes.append(
                _Outcome(ann, total, alone.raw_request, alone.raw_response, False, alone.attempts)
            )
        return outcomes


async def run_grouped_async(
    units: Iterable[Unit],
    coder: LLMProvider,
    codebook: Codebook,
    kind: UnitKind,
    *,
    run_dir: str | Path,
    cache_path: str | Path | None = None,
    prices: PriceTable | None = None,
    settings: JudgeSettings | None = None,
    group_size: int = DEFAULT_GROUP_SIZE,
    on_progress: ProgressCallback | None = None,
) -> tuple[RunSummary, GroupStats]:
    """Judge ``units`` into ``run_dir`` grouped by claim (resuming it), export the run."""
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
    try:
        runner = GroupRunner(engine, group_size=group_size)
        return await runner.run(units, on_progress), runner.stats
    finally:
        journal.close()
        if cache is not None:
            cache.close()
        await coder.aclose()
        export_run(run, engine.last_summary)
