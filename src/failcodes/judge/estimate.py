"""Dry run: the tokens and cost of a run before spending anything, in any run mode.

:func:`estimate_units` prices the units a run would judge the way the run will be billed
(journal and cache hits free, a cascade's direct first judge applied, groups, batch discount,
provider prompt caching), beside the *naive* run; the arithmetic over calls is one pure
function, :func:`call_tokens`, over :class:`CallShape` values. The model: docs/architecture.md,
"Module notes".
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from failcodes.annotations import CoderKind
from failcodes.contract import FrozenModel
from failcodes.errors import ConfigError
from failcodes.judge.grouping import chunked_groups, group_schema, group_user
from failcodes.judge.journal import Journal
from failcodes.judge.modes import Batch, Cascade, Mode, PerUnit, grouping
from failcodes.judge.pricing import estimate_tokens, length_tokens
from failcodes.judge.prompts import user_length
from failcodes.judge.providers.base import DirectCoder, ProviderReply, ProviderRequest, TokenUsage
from failcodes.judge.summary import RunSummary, endpoints_note, shapes_note
from failcodes.judge.unitjudge import UnitJudge
from failcodes.units import Unit, UnitKind

#: Judged units in the journal needed before their mean output length is used.
MIN_CALIBRATION = 20
#: Shortest prefix the providers cache (OpenAI; Anthropic's Sonnet 4/4.5, Opus 4/4.1), in tokens.
MIN_CACHEABLE_TOKENS = 1024
#: Anthropic models that cache only longer prefixes (their prompt-caching docs): Haiku 4.5 and
#: Opus 4.5/4.6 from 4,096 tokens, Haiku 3/3.5 from 2,048. The bundled codebook's prefix (~3,400
#: tokens) is cached for none of the first three: the dry run priced Haiku 4.5's every call as
#: a cache read of it ($0.10 per M), where the API bills it as input ($1 per M), 2.5x the cost.
LONGER_CACHE_MINIMUM = (
    (("claude-haiku-4-5", "claude-opus-4-5", "claude-opus-4-6"), 4096),
    (("claude-3-haiku", "claude-3-5-haiku", "claude-haiku-3"), 2048),
)


def cache_minimum(provider: str, model: str) -> int:
    """The shortest prefix ``provider``'s ``model`` caches, in tokens."""
    if provider == "anthropic":
        for names, tokens in LONGER_CACHE_MINIMUM:
            if model.startswith(names):
                return tokens
    return MIN_CACHEABLE_TOKENS


#: OpenAI serves cached prefixes in steps of this many tokens.
OPENAI_CACHE_STEP = 128
#: Typical lengths of a judge's rationale and quote, in characters (uncalibrated runs): the
#: prompt asks for a *short* rationale (one clause) and a verbatim quote (about a sentence).
RATIONALE_CHARS = 80
QUOTE_CHARS = 60


@dataclass(frozen=True)
class CallShape:
    """One call of a dry run: its prefix tokens, user-message tokens and answers.

    ``repeat`` > 1 stands for that many identical calls (each with these tokens): the
    columnar dry run prices ~400k calls at paper scale as two shapes.
    """

    prefix_tokens: int
    user_tokens: int
    answers: int = 1
    repeat: int = 1


@dataclass(frozen=True)
class CachingModel:
    """How the provider's prompt cache treats a run's prefix."""

    enabled: bool = True
    min_tokens: int = MIN_CACHEABLE_TOKENS
    #: Cached tokens are served in steps of this size (1: exact).
    step: int = 1
    #: Cache misses are billed at the cache-write rate (Anthropic).
    writes: bool = False
    #: Calls of one prefix that miss before it is cached (concurrent first calls).
    misses: int = 1

    def cached(self, prefix_tokens: int) -> int:
        """Tokens of ``prefix_tokens`` a cache hit serves."""
        if not self.enabled or prefix_tokens < self.min_tokens:
            return 0
        return prefix_tokens - prefix_tokens % max(1, self.step)


def call_tokens(
    calls: Iterable[CallShape], *, output_per_answer: float, caching: CachingModel
) -> tuple[TokenUsage, int]:
    """Total tokens of ``calls`` (prompt caching modelled) and the number of calls."""
    seen: dict[int, int] = {}
    inp = cached = write = out = n = 0
    group_wrapper = estimate_tokens('{"results": []}')
    per_item_key = estimate_tokens('{"passage": "p10", }')
    for call in calls:
        k = call.repeat
        n += k
        inp += k * (call.prefix_tokens + call.user_tokens)
        hit = caching.cached(call.prefix_tokens)
        if hit:
            count = seen.get(call.prefix_tokens, 0)
            seen[call.prefix_tokens] = count + k
            # the first ``misses`` calls of a prefix miss the cache (and write it)
            missing = min(k, max(0, caching.misses - count))
            cached += hit * (k - missing)
            if caching.writes:
                write += call.prefix_tokens * missing
        out += k * round(call.answers * output_per_answer)
        if call.answers > 1:
            out += k * (group_wrapper + call.answers * per_item_key)
    return TokenUsage(inp, cached, write, out), n


class CostEstimate(FrozenModel):
    """A dry run's figures: one cost, and the naive run's for comparison."""

    judge: str
    mode: str
    #: What a row is: a (trace, passage) of a retrieval unit, a trace of a reasoning unit.
    kind: UnitKind
    rows: int
    units: int
    already_done: int
    cache_hits: int
    cascade_kept: int
    to_judge: int
    #: Units sent to the provider (0 for the offline heuristic baseline).
    to_call: int
    calls: int
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    output_tokens_per_unit: float
    output_source: str
    cost_usd: float | None
    price_known: bool
    naive_calls: int
    naive_input_tokens: int
    naive_output_tokens: int
    naive_cost_usd: float | None
    batch: bool
    grouped: bool
    base_url: str | None = None
    note: str
    #: The endpoints other than ``base_url`` the run's journal holds units judged at (a dry
    #: run of a resume at another ``--base-url``; see
    #: :meth:`~failcodes.judge.journal.Journal.bind`).
    other_endpoints: list[str] = Field(default_factory=list)
    #: The other ways the run's journal holds units asked (one unit a request, grouped by
    #: claim; see :data:`~failcodes.judge.journal.SHAPES_KEY`).
    other_shapes: list[str] = Field(default_factory=list)

    def endpoint_lines(self) -> list[str]:
        """The lines saying the run would be judged at a second endpoint, or asked a second way."""
        return [
            *endpoints_note(self.judge, self.other_endpoints, self.base_url, "would call"),
            *shapes_note(self.other_shapes, self.mode, "would ask"),
        ]

    def lines(self) -> list[str]:
        """Human-readable dry run (the CLI prints these)."""
        cost = f"${self.cost_usd:.4f}" if self.cost_usd is not None else "unknown (no price"
        if self.cost_usd is None:
            cost += (
                "; a non-vendor base URL: --price-as KEY"
                if self.base_url
                else f"; {self.judge} is not in the price table: --prices FILE or --price-as KEY"
            )
            cost += ")"
        naive = f"${self.naive_cost_usd:.4f}" if self.naive_cost_usd is not None else "unknown"
        ratio = (
            f" ({self.cost_usd / self.naive_cost_usd:.2f} of naive)"
            if self.cost_usd is not None and self.naive_cost_usd
            else ""
        )
        where = f" at {self.base_url}" if self.base_url else ""
        retrieval = self.kind is UnitKind.RETRIEVAL
        row, rows = ("row", "(trace, passage) rows") if retrieval else ("trace", "traces")
        return [
            *self.endpoint_lines(),
            f"dry run, {self.judge}{where} ({self.mode}): {self.rows} {rows} -> "
            f"{self.units} deduplicated units ({self.already_done} already done, "
            f"{self.cache_hits} cached"
            + (f", {self.cascade_kept} kept by the cheap judge" if self.cascade_kept else "")
            + f"); {self.to_call} to call in {self.calls} "
            + ("batch items" if self.batch else "calls")
            + (" (grouped by claim)" if self.grouped else ""),
            f"tokens: ~{self.input_tokens} input (~{self.cached_input_tokens} from the "
            f"provider's prompt cache, ~{self.cache_write_tokens} cache writes), "
            f"~{self.output_tokens} output ({self.output_tokens_per_unit:.0f} per unit, "
            f"{self.output_source})",
            f"estimated cost {cost}{' at batch prices' if self.batch else ''}{ratio}; naive "
            f"one-call-per-{row} run: {self.naive_calls} calls, {naive}",
            self.note,
        ]


def compare_lines(estimate: CostEstimate, summary: RunSummary) -> list[str]:
    """Estimate vs actual after a run (the CLI prints these)."""
    lines = [
        f"estimate vs actual: input tokens ~{estimate.input_tokens} vs {summary.input_tokens} "
        f"(cached ~{estimate.cached_input_tokens} vs {summary.cached_input_tokens}); output "
        f"~{estimate.output_tokens} vs {summary.output_tokens}"
    ]
    if estimate.cost_usd is not None and summary.price_known:
        ratio = f" ({summary.cost_usd / estimate.cost_usd:.2f}x)" if estimate.cost_usd else ""
        lines.append(
            f"cost: estimated ${estimate.cost_usd:.4f}, actual ${summary.cost_usd:.4f}{ratio}"
        )
    return lines


def sample_answer(schema: dict[str, Any], name: str = "") -> Any:
    """A typical answer of ``schema`` (any shape, per-dimension answers included).

    Enums take a value of their mean length, rationales and quotes typical lengths, other
    strings a short word; code lists one code, other arrays are empty, booleans false.
    """
    kind = schema.get("type")
    if "enum" in schema:  # a value of the mean length: any code is as likely
        values = [str(v) for v in schema["enum"]] or [""]
        mean = sum(map(len, values)) / len(values)
        return "x" * round(mean)
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: sample_answer(sub, key) for key, sub in props.items()}
    if kind == "array":  # a list of codes holds one, typically; other lists are empty
        items = schema.get("items") or {}
        return [sample_answer(items, name)] if "enum" in items else []
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return 0
    if "rationale" in name or "reason" in name:
        return "x" * RATIONALE_CHARS
    if "quote" in name:
        return "x" * QUOTE_CHARS
    return "x" * 8


def caching_model(judge: UnitJudge, mode: Mode) -> CachingModel:
    """The prompt-caching model of ``judge``'s provider in ``mode``."""
    provider = getattr(judge.coder, "provider", "")
    then = mode.then if isinstance(mode, Cascade) else mode
    workers = 1 if isinstance(then, Batch) else max(1, judge.settings.limits.concurrency)
    return CachingModel(
        enabled=provider in ("openai", "anthropic"),
        min_tokens=cache_minimum(provider, getattr(judge.coder, "model", "")),
        step=OPENAI_CACHE_STEP if provider == "openai" else 1,
        writes=provider == "anthropic",
        misses=workers,
    )


@dataclass(frozen=True)
class Counted:
    """What a dry run counted before pricing (the object and the columnar path fill one)."""

    rows: int
    units: int
    already_done: int
    #: Units that will be sent to the provider.
    to_call: int
    naive_calls: int
    naive_input_tokens: int
    cache_hits: int = 0
    cascade_kept: int = 0


def answer_tokens(judge: UnitJudge, journal: Journal) -> tuple[float, str]:
    """Output tokens per answer, and their source: the journal's mean, else the schema's."""
    calibrated = journal.mean_output_tokens(MIN_CALIBRATION)
    if calibrated is not None:
        return calibrated, "mean of the journal"
    return estimate_tokens(json.dumps(sample_answer(judge.schema))), "typical answer length"


def priced(
    judge: UnitJudge,
    mode: Mode,
    counted: Counted,
    shapes: Iterable[CallShape],
    answer: tuple[float, str],
    *,
    grouped: bool,
    journal: Journal | None = None,
) -> CostEstimate:
    """Price the calls ``shapes`` (and the naive run) into one :class:`CostEstimate`.

    ``journal``: the run's, which says the endpoints besides the judge's and the other ways
    its units were asked.
    """
    per_unit_out, source = answer
    then = mode.then if isinstance(mode, Cascade) else mode
    batch = isinstance(then, Batch)
    tokens, calls = call_tokens(
        shapes, output_per_answer=per_unit_out, caching=caching_model(judge, mode)
    )
    naive_out = round(counted.naive_calls * per_unit_out)
    cost = naive_cost = None
    if judge.price is not None:
        cost = judge.price.cost(tokens, batch=batch)
        naive_cost = judge.price.cost(TokenUsage(counted.naive_input_tokens, 0, 0, naive_out))
    if not judge.is_llm:
        cost = naive_cost = 0.0
    note = (
        "offline heuristic baseline: no calls, no cost"
        if not judge.is_llm
        else "tokens at ~4 characters per token (a Chinese, Japanese or Korean character ~1, a "
        "Greek, Hebrew, Indic or Thai letter ~1/2, an Arabic one ~3/8); "
        "provider prompt caching of the codebook "
        f"prefix modelled; output {per_unit_out:.0f} tokens per unit ({source})"
    )
    return CostEstimate(
        judge=judge.coder.spec,
        mode=mode.name,
        kind=judge.kind,
        rows=counted.rows,
        units=counted.units,
        already_done=counted.already_done,
        cache_hits=counted.cache_hits,
        cascade_kept=counted.cascade_kept,
        to_judge=counted.to_call if judge.is_llm else counted.units - counted.already_done,
        to_call=counted.to_call,
        calls=calls,
        input_tokens=tokens.input_tokens,
        cached_input_tokens=tokens.cached_input_tokens,
        cache_write_tokens=tokens.cache_write_tokens,
        output_tokens=tokens.output_tokens,
        output_tokens_per_unit=per_unit_out,
        output_source=source,
        cost_usd=cost,
        price_known=judge.price is not None or not judge.is_llm,
        naive_calls=counted.naive_calls,
        naive_input_tokens=counted.naive_input_tokens,
        naive_output_tokens=naive_out,
        naive_cost_usd=naive_cost,
        batch=batch,
        grouped=grouped,
        base_url=judge.base_url,
        note=note,
        other_endpoints=journal.other_endpoints(judge.meta()) if journal is not None else [],
        other_shapes=journal.other_shapes(judge.meta(), mode.name) if journal is not None else [],
    )


def estimate_units(
    judge: UnitJudge, journal: Journal, units: Iterable[Unit], mode: Mode | None = None
) -> CostEstimate:
    """Estimate what judging ``units`` with ``judge`` in ``mode`` will cost."""
    mode = mode or PerUnit()
    first: DirectCoder | None = None
    then = mode
    if isinstance(mode, Cascade):
        if not isinstance(mode.first, DirectCoder):
            raise ConfigError("a dry run can only foresee a cascade whose first judge is offline")
        first, then = mode.first, mode.then
    group = grouping(mode)
    every = then.commit_every if isinstance(then, Batch) else None
    journal.check(judge.meta())  # another run's units are not done for this one
    done = journal.done_ids()
    rows = total = already = hits = kept = 0
    todo: list[Unit] = []
    positions: list[int] = []  # each todo unit's place in the stream (a batch's chunk)
    seen: set[str] = set()
    user_tokens: dict[str, int] = {}
    naive_in = naive_calls = 0
    answer = answer_tokens(judge, journal)
    prefix = judge.prefix_tokens
    for position, unit in enumerate(units):
        if unit.id in seen:
            continue
        seen.add(unit.id)
        total += 1
        n_rows = max(1, len(unit.provenance))
        rows += n_rows
        if not judge.is_llm:
            already += int(unit.id in done)
            continue
        # without a response cache there is no key to look up: the length is enough
        user = judge.user(unit) if judge.cache is not None else None
        user_tokens[unit.id] = (
            estimate_tokens(user) if user is not None else length_tokens(user_length(unit))
        )
        naive_calls += n_rows
        naive_in += n_rows * (prefix + user_tokens[unit.id])
        if unit.id in done:
            already += 1
            continue
        # a dry run's look is no hit: `cache stats` counted one per unit per dry run
        if user is not None and judge.lookup(judge.key(user), count=False) is not None:
            hits += 1
            continue
        if first is not None:
            result = first.code(unit, judge.part)
            if result.answer is not None and not result.answer.uncertain:
                kept += 1
                continue
        todo.append(unit)
        positions.append(position)
    shapes: list[CallShape] = []
    called = len(todo)
    if group is not None and todo:
        group_prefix = estimate_tokens(judge.system) + estimate_tokens(
            json.dumps(group_schema(judge.schema))
        )
        # a grouped run finds a group's whole answer in the cache (by direct calls or in
        # batches): the dry run said 70 calls where the run made none
        cached = judge.cache is not None
        for members in chunked_groups(zip(positions, todo, strict=True), group.size, every):
            if len(members) == 1:
                shapes.append(CallShape(prefix, user_tokens[members[0].id]))
                continue
            user = group_user(members)
            if cached and judge.lookup(judge.key(user, grouped=True), count=False) is not None:
                hits += len(members)
                called -= len(members)
                continue
            shapes.append(CallShape(group_prefix, estimate_tokens(user), len(members)))
    else:
        shapes = [CallShape(prefix, user_tokens[u.id]) for u in todo]
    counted = Counted(
        rows=rows,
        units=total,
        already_done=already,
        to_call=called,
        naive_calls=naive_calls,
        naive_input_tokens=naive_in,
        cache_hits=hits,
        cascade_kept=kept,
    )
    return priced(judge, mode, counted, shapes, answer, grouped=group is not None, journal=journal)


class PricingOnlyCoder:
    """Stands for an LLM judge in a dry run: a spec to price, no client, no key, no calls."""

    coder_kind = CoderKind.LLM

    def __init__(self, spec: str, base_url: str | None = None) -> None:
        self.spec = spec
        self.provider, _, self.model = spec.partition(":")
        self.base_url = base_url

    def identity(self) -> dict[str, Any]:
        """Provider, model and endpoint (a dry run's cache keys match no real run's)."""
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "dry_run": True,
        }

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        """Never called: a dry run calls nothing."""
        del request
        raise ConfigError(f"{self.spec}: a pricing-only coder cannot make calls")

    async def aclose(self) -> None:
        """Nothing to close."""
