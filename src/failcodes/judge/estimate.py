"""Dry run at scale: tokens and cost before spending, with dedup, grouping, caching, batch.

:func:`estimate_scale` walks the units a run would judge and prices them the way the run
will be billed: units already journaled or in the response cache are free; with a cascade
the cheap judge codes every unit now (it is free and deterministic) and only the units it
marks uncertain or cannot score are counted for the expensive judge; with grouping the claim
and prefix are counted once per group; provider prompt caching prices the byte-stable prefix
(system + schema) at the cached rate after the first call (and the first at the cache-write
rate) when it is long enough to be cached; batch mode applies the price table's batch
discount. The same walk prices the *naive* run (one call per (trace, passage) row, no
deduplication, no caching, no batch) for comparison. Tokens are counted as ``ceil(chars/4)``;
output tokens per unit come from the run's own journal when it has at least
``MIN_CALIBRATION`` judged units, else from a sample answer of the schema's shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from failcodes.annotations import CoderKind
from failcodes.errors import ConfigError
from failcodes.judge.engine import JudgeEngine, RunSummary, _unique
from failcodes.judge.grouping import DEFAULT_GROUP_SIZE, group_schema, groups_by_claim, render_group
from failcodes.judge.pricing import estimate_tokens
from failcodes.judge.prompts import render_user
from failcodes.judge.providers.base import (
    DirectCoder,
    ProviderReply,
    ProviderRequest,
    TokenUsage,
)
from failcodes.units import Unit

#: Judged units in the journal needed before their mean output length is used.
MIN_CALIBRATION = 20


@dataclass(frozen=True)
class ScaleOptions:
    """The scale features a run will use."""

    group_by_claim: bool = False
    group_size: int = DEFAULT_GROUP_SIZE
    batch: bool = False
    #: Model the provider's prompt cache (prefixes shorter than this are not cached).
    provider_caching: bool = True
    min_cacheable_tokens: int = 1024
    cascade_first: DirectCoder | None = None
    #: Lengths assumed for an answer's rationale and quote when uncalibrated.
    rationale_chars: int = 200
    quote_chars: int = 80


class ScaleEstimate(BaseModel):
    """A dry run's figures (and the naive run's, for comparison)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: str
    rows: int
    units: int
    already_done: int
    cache_hits: int
    cascade_kept: int
    to_judge: int
    calls: int
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    output_tokens_per_unit: float
    output_source: str
    cost_usd: float | None
    naive_calls: int
    naive_input_tokens: int
    naive_output_tokens: int
    naive_cost_usd: float | None
    batch: bool
    grouped: bool

    def lines(self) -> list[str]:
        """Human-readable dry run (the CLI prints these)."""
        cost = f"${self.cost_usd:.4f}" if self.cost_usd is not None else "unknown (no price)"
        naive = f"${self.naive_cost_usd:.4f}" if self.naive_cost_usd is not None else "unknown"
        ratio = (
            f" ({self.cost_usd / self.naive_cost_usd:.2f} of naive)"
            if self.cost_usd is not None and self.naive_cost_usd
            else ""
        )
        return [
            f"dry run, {self.judge}: {self.rows} (trace, passage) rows -> {self.units} "
            f"deduplicated units ({self.already_done} already done, {self.cache_hits} cached"
            + (f", {self.cascade_kept} kept by the cheap judge" if self.cascade_kept else "")
            + f"); {self.to_judge} to judge in {self.calls} "
            + ("batch items" if self.batch else "calls")
            + (" (grouped by claim)" if self.grouped else ""),
            f"tokens: ~{self.input_tokens} input (~{self.cached_input_tokens} from the "
            f"provider's prompt cache, ~{self.cache_write_tokens} cache writes), "
            f"~{self.output_tokens} output ({self.output_tokens_per_unit:.0f} per unit, "
            f"{self.output_source})",
            f"estimated cost {cost}{' at batch prices' if self.batch else ''}{ratio}; naive "
            f"one-call-per-row run: {self.naive_calls} calls, {naive}",
        ]


def _sample_output_tokens(engine: JudgeEngine, options: ScaleOptions) -> int:
    codes = {
        d.id: max(d.code_ids(), key=len) for d in engine.part.dimensions
    }  # a long code id per dimension: estimates err on the high side
    sample: dict[str, object] = {
        "codes": codes,
        "rationale": "x" * options.rationale_chars,
        "quote": "x" * options.quote_chars,
        "uncertain": False,
    }
    if "leaves" in engine.schema["properties"]:
        sample["leaves"] = {d: [] for d in codes}
    return estimate_tokens(json.dumps(sample))


def _calibrated_output(engine: JudgeEngine) -> float | None:
    row = engine.journal._conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(output_tokens), 0) FROM annotations WHERE output_tokens > 0"
    ).fetchone()
    n, total = int(row[0]), int(row[1])
    return total / n if n >= MIN_CALIBRATION else None


def estimate_scale(
    engine: JudgeEngine, units: Iterable[Unit], options: ScaleOptions | None = None
) -> ScaleEstimate:
    """Estimate what judging ``units`` with ``engine`` under ``options`` will cost."""
    opts = options or ScaleOptions()
    done = engine.journal.done_ids()
    rows = total = already = hits = kept = 0
    todo: list[Unit] = []
    naive_in = naive_out = naive_calls = 0
    calibrated = _calibrated_output(engine)
    per_unit_out = calibrated if calibrated is not None else _sample_output_tokens(engine, opts)
    source = "mean of the journal" if calibrated is not None else "assumed answer length"
    prefix = engine._system_tokens
    for unit in _unique(units):
        total += 1
        n_rows = max(1, len(unit.provenance))
        rows += n_rows
        user = render_user(unit)
        naive_calls += n_rows
        naive_in += n_rows * (prefix + estimate_tokens(user))
        naive_out += round(n_rows * per_unit_out)
        if unit.id in done:
            already += 1
            continue
        if engine.cache is not None and engine.cache.get(engine._key(user)) is not None:
            hits += 1
            continue
        if opts.cascade_first is not None:
            first = opts.cascade_first.code(unit, engine.part)
            if first.answer is not None and not first.answer.uncertain:
                kept += 1
                continue
        todo.append(unit)
    # calls: (prefix tokens, user tokens, units) per call
    calls: list[tuple[int, int, int]] = []
    if opts.group_by_claim:
        group_prefix = estimate_tokens(engine.system) + estimate_tokens(
            json.dumps(group_schema(engine.schema))
        )
        for group in groups_by_claim(todo, opts.group_size):
            if len(group) == 1:
                calls.append((prefix, estimate_tokens(render_user(group[0])), 1))
            else:
                calls.append((group_prefix, estimate_tokens(render_group(group)), len(group)))
    else:
        calls = [(prefix, estimate_tokens(render_user(u)), 1) for u in todo]
    tokens = TokenUsage()
    seen_prefixes: set[int] = set()
    anthropic = getattr(engine.coder, "provider", "") == "anthropic"
    for pre, user_tokens, n in calls:
        cached = write = 0
        if opts.provider_caching and pre >= opts.min_cacheable_tokens:
            if pre in seen_prefixes:
                cached = pre
            else:
                seen_prefixes.add(pre)
                write = pre if anthropic else 0
        out = round(n * per_unit_out) + (estimate_tokens('{"results": []}') if n > 1 else 0)
        if n > 1:
            out += n * estimate_tokens('{"passage": "p10", }')
        tokens = tokens + TokenUsage(pre + user_tokens, cached, write, out)
    cost = naive_cost = None
    if engine.price is not None:
        cost = engine.price.cost(tokens, batch=opts.batch)
        naive_cost = engine.price.cost(TokenUsage(naive_in, 0, 0, naive_out))
    if not engine.is_llm:
        cost = naive_cost = 0.0
    return ScaleEstimate(
        judge=engine.coder.spec,
        rows=rows,
        units=total,
        already_done=already,
        cache_hits=hits,
        cascade_kept=kept,
        to_judge=len(todo),
        calls=len(calls),
        input_tokens=tokens.input_tokens,
        cached_input_tokens=tokens.cached_input_tokens,
        cache_write_tokens=tokens.cache_write_tokens,
        output_tokens=tokens.output_tokens,
        output_tokens_per_unit=per_unit_out,
        output_source=source,
        cost_usd=cost,
        naive_calls=naive_calls,
        naive_input_tokens=naive_in,
        naive_output_tokens=naive_out,
        naive_cost_usd=naive_cost,
        batch=opts.batch,
        grouped=opts.group_by_claim,
    )


def compare_lines(estimate: ScaleEstimate, summary: RunSummary) -> list[str]:
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


class PricingOnlyCoder:
    """Stands for an LLM judge in a dry run: a spec to price, no client, no key, no calls."""

    coder_kind = CoderKind.LLM

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.provider, _, self.model = spec.partition(":")

    def identity(self) -> dict[str, Any]:
        """Provider and model (cache keys of a dry run match no real run's: nothing is hit)."""
        return {"provider": self.provider, "model": self.model, "dry_run": True}

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        """Never called: a dry run calls nothing."""
        del request
        raise ConfigError(f"{self.spec}: a pricing-only coder cannot make calls")

    async def aclose(self) -> None:
        """Nothing to close."""
