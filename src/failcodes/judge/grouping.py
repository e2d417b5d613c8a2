"""Grouping: judge all passages of one claim in one request (retrieval units).

The units of one claim (after deduplication across retrievers) share one request: the claim
is sent once, the passages are listed under keys ``p1..pk``, and the answer is an array of
per-passage results under a schema that does not depend on k (so the request prefix, tools
included, stays byte-stable and cacheable). Every result is validated on its own; a passage
whose result is missing or invalid is judged again *alone* through
:meth:`UnitJudge.judge <failcodes.judge.unitjudge.UnitJudge.judge>` (which sends the
validation error back and, after its retry budget, records the unit unscored). The group's
tokens and cost are shared equally by the passages it coded.

:class:`GroupJudge` serves both ways of sending requests: direct calls (:meth:`judge_group`)
and batch items (:meth:`request` + :meth:`settle`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from typing import Any

from failcodes.codebook import Part
from failcodes.errors import ConfigError
from failcodes.judge.cache import CacheKey
from failcodes.judge.prompts import group_template_hash, render_group
from failcodes.judge.providers.base import LLMProvider, Message, ProviderRequest, TokenUsage
from failcodes.judge.schema import Answer, AnswerError, NoAnswer, parse_answer
from failcodes.judge.summary import RunSummary
from failcodes.judge.unitjudge import Outcome, UnitJudge
from failcodes.units import Unit, UnitKind

GROUP_SCHEMA_NAME = "record_codes_per_passage"
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


def group_keys(n: int) -> list[str]:
    """The passage keys of a group of ``n``: p1..pn."""
    return [f"p{i}" for i in range(1, n + 1)]


def group_user(units: list[Unit]) -> str:
    """The user message of one group: the claim once, the passages under keys p1..pk."""
    keys = group_keys(len(units))
    keyed = [(k, u.passages[0]) for k, u in zip(keys, units, strict=True)]
    return render_group(units[0].claim, keyed)


def chunked_groups(
    units: Iterable[tuple[int, Unit]], size: int, every: int | None
) -> list[list[Unit]]:
    """The groups a run forms from ``(position, unit)`` pairs of the units it will send.

    ``position`` is the unit's place in the run's unit stream. A batch run queues its units
    ``every`` at a time and groups within each chunk (``Batch.commit_every``), so a claim
    whose units fall in two chunks makes two groups; ``every=None`` groups them all at once
    (a grouped run without batch). What the dry run prices, as the run sends it.
    """
    if every is None:
        return groups_by_claim((u for _, u in units), size)
    out: list[list[Unit]] = []
    for _, chunk in itertools.groupby(units, key=lambda pu: pu[0] // every):
        out += groups_by_claim((u for _, u in chunk), size)
    return out


def groups_by_claim(units: Iterable[Unit], size: int = DEFAULT_GROUP_SIZE) -> list[list[Unit]]:
    """Group retrieval units by claim text (first-seen order), at most ``size`` per group."""
    by_claim: dict[str, list[Unit]] = {}
    for unit in units:
        by_claim.setdefault(unit.claim, []).append(unit)
    out: list[list[Unit]] = []
    for members in by_claim.values():
        out += [members[i : i + size] for i in range(0, len(members), size)]
    return out


def parse_group(part: Part, payload: object, keys: list[str]) -> dict[str, Answer | str]:
    """Validate a group answer item by item: key -> Answer, or the error for that key."""
    out: dict[str, Answer | str] = dict.fromkeys(keys, "no result for this passage")
    if isinstance(payload, NoAnswer):
        return dict.fromkeys(keys, str(payload))
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


def share(tokens: TokenUsage, n: int, i: int) -> TokenUsage:
    """The ``i``-th of ``n`` equal shares of ``tokens`` (remainders go to the first)."""

    def part(x: int) -> int:
        return x // n + (1 if i < x % n else 0)

    return TokenUsage(
        part(tokens.input_tokens),
        part(tokens.cached_input_tokens),
        part(tokens.cache_write_tokens),
        part(tokens.output_tokens),
    )


class GroupJudge:
    """Judges the retrieval units of one claim together, through a :class:`UnitJudge`."""

    def __init__(self, judge: UnitJudge) -> None:
        if not isinstance(judge.coder, LLMProvider):
            raise ConfigError("grouping needs an LLM judge (the offline judge codes alone)")
        if judge.kind is not UnitKind.RETRIEVAL:
            raise ConfigError("grouping applies to retrieval units (passages of one claim)")
        self.judge = judge
        self.schema = group_schema(judge.schema)
        self.template = group_template_hash()

    def request(self, units: list[Unit]) -> ProviderRequest:
        """The provider request of one group."""
        return self.judge.request(
            [Message("user", group_user(units))],
            schema=self.schema,
            schema_name=GROUP_SCHEMA_NAME,
            answers=len(units),
        )

    def key(self, request: ProviderRequest) -> CacheKey:
        """The response-cache key of a group request."""
        return self.judge.key(request.messages[0].content, grouped=True)

    def reserve_usd(self, units: list[Unit]) -> float:
        """The budget reserved before a group call."""
        return self.judge.reserve_usd(group_user(units), units=len(units))

    def settle(
        self,
        group: list[Unit],
        payload: object,
        tokens: TokenUsage,
        raw: tuple[dict[str, Any] | None, dict[str, Any] | None],
        *,
        cache_hit: bool = False,
        attempts: int = 1,
        latency_s: float = 0.0,
        batch: bool = False,
    ) -> tuple[list[Outcome], list[tuple[Unit, TokenUsage]]]:
        """Split a group answer: outcomes of the valid results, and the units to judge alone.

        Each unit carries its equal share of the group's tokens; a unit to judge alone
        carries its share on to its own outcome.
        """
        keys = group_keys(len(group))
        parsed = parse_group(self.judge.part, payload, keys)
        done: list[Outcome] = []
        alone: list[tuple[Unit, TokenUsage]] = []
        for i, (unit, k) in enumerate(zip(group, keys, strict=True)):
            part = share(tokens, len(group), i)
            answer = parsed[k]
            if not isinstance(answer, Answer):
                alone.append((unit, part))
                continue
            usage = self.judge.usage(part, latency_s=latency_s, batch=batch)
            ann = self.judge.annotation(unit, answer, reason=None, usage=usage)
            done.append(Outcome(ann, part, raw[0], raw[1], cache_hit, attempts))
        return done, alone

    def with_share(self, out: Outcome, extra: TokenUsage) -> Outcome:
        """``out`` (a unit judged alone) also carrying its share of a group's tokens."""
        total = out.tokens + extra
        usage = out.annotation.usage.model_copy(
            update={
                "input_tokens": total.input_tokens,
                "cached_input_tokens": total.cached_input_tokens,
                "output_tokens": total.output_tokens,
                "cost_usd": out.annotation.usage.cost_usd + self.judge.cost(extra),
            }
        )
        ann = out.annotation.model_copy(update={"usage": usage})
        return Outcome(ann, total, out.raw_request, out.raw_response, out.cache_hit, out.attempts)

    async def judge_group(self, group: list[Unit], tally: RunSummary) -> list[Outcome]:
        """Judge one group by direct calls (a group of one is judged alone)."""
        judge = self.judge
        if len(group) == 1:
            tally.judged_alone += 1
            return [await judge.judge(group[0], tally)]
        request = self.request(group)
        key = self.key(request)
        t0 = time.perf_counter()
        hit = judge.lookup(key)
        if hit is not None:
            payload: object = hit.payload
            tokens, attempts, cache_hit = TokenUsage(), 0, True
            raw = (hit.raw_request, hit.raw_response)
        else:
            reply, attempts = await judge.call(request, tally)
            payload, tokens, cache_hit = reply.payload, reply.usage, False
            raw = (reply.raw_request, reply.raw_response)
        done, alone = self.settle(
            group,
            payload,
            tokens,
            raw,
            cache_hit=cache_hit,
            attempts=attempts,
            latency_s=time.perf_counter() - t0,
        )
        if hit is None and not alone and raw[0] is not None and raw[1] is not None:
            judge.remember(key, payload, tokens, raw[0], raw[1], template=self.template)
        tally.groups += 1
        tally.grouped_units += len(done)
        for unit, part in alone:
            tally.invalid_answers += 1
            tally.judged_alone += 1
            done.append(self.with_share(await judge.judge(unit, tally), part))
        order = {u.id: i for i, u in enumerate(group)}
        done.sort(key=lambda o: order[o.annotation.unit_id])
        return done
