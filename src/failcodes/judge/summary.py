"""The closing summary of one invocation of a judge run: the one counter every mode updates."""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import Field

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.contract import StrictModel
from failcodes.judge.journal import prompt_shape
from failcodes.judge.providers.base import TokenUsage
from failcodes.units import UnitKind

#: A count in a summary (a summary.json edited to -5 units was shown in the report as it was).
Count = Annotated[int, Field(ge=0)]
#: Dollars or seconds: finite and not negative.
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class CascadeInfo(StrictModel):
    """What the cheap first judge of a cascade did, and who coded the run's units."""

    first_judge: str
    first_coder_kind: CoderKind
    first_units: Count
    kept: Count
    escalated: Count
    coded_by: dict[str, Count]


class RunSummary(StrictModel):
    """The closing summary of one invocation (and the journal's totals)."""

    judge: str
    coder_kind: CoderKind
    kind: UnitKind
    units: Count
    already_done: Count
    mode: str = "per-unit"
    provider: str = ""
    model: str = ""
    #: The endpoint the judge was called at (credentials redacted); None: the vendor's own.
    base_url: str | None = None
    judged: Count = 0
    cache_hits: Count = 0
    scored: Count = 0
    unscored: Count = 0
    calls: Count = 0
    retries: Count = 0
    invalid_answers: Count = 0
    quotes_not_found: Count = 0
    input_tokens: Count = 0
    cached_input_tokens: Count = 0
    output_tokens: Count = 0
    cost_usd: Amount = 0.0
    price_known: bool = True
    elapsed_s: Amount = 0.0
    stopped_by_budget: bool = False
    journal_units: Count = 0
    journal_cost_usd: Amount = 0.0
    #: Units of the journal not of this invocation's input (an earlier ``--from`` or
    #: ``--top-k``): counted in ``journal_units``, left out of ``annotations.jsonl``.
    other_units: Count = 0
    #: Grouped modes: group requests made, units they coded, units judged alone.
    groups: Count = 0
    grouped_units: Count = 0
    judged_alone: Count = 0
    #: Batch mode: provider batches submitted by this invocation.
    batches: Count = 0
    #: Cascade mode: what the cheap first judge did.
    cascade: CascadeInfo | None = None
    #: Other endpoints this run's units were judged at before ("" the vendor's own): one run,
    #: called at two servers serving a model of one name (said first by :func:`summary_lines`).
    other_endpoints: list[str] = Field(default_factory=list)
    #: Other ways this run's units were asked before (:data:`~failcodes.judge.journal.
    #: SHAPES_KEY`): one unit a request, or grouped by claim (said first too).
    other_shapes: list[str] = Field(default_factory=list)

    def add(self, annotation: Annotation, tokens: TokenUsage, *, cache_hit: bool) -> None:
        """Count one unit committed to the journal."""
        self.judged += 1
        self.cache_hits += int(cache_hit)
        if annotation.status is Status.SCORED:
            self.scored += 1
        else:
            self.unscored += 1
        if annotation.quote_found is False:
            self.quotes_not_found += 1
        self.input_tokens += tokens.input_tokens
        self.cached_input_tokens += tokens.cached_input_tokens
        self.output_tokens += tokens.output_tokens
        self.cost_usd += annotation.usage.cost_usd


def endpoint_lines(summary: RunSummary) -> list[str]:
    """The lines saying a run's units were judged at two endpoints, or asked two ways (or none)."""
    return [
        *endpoints_note(summary.judge, summary.other_endpoints, summary.base_url, "called"),
        *shapes_note(summary.other_shapes, summary.mode, "asks"),
    ]


def shapes_note(others: list[str], mode: str, verb: str) -> list[str]:
    """The line saying the journal holds units asked ``others`` ways, and this one ``mode``'s.

    ``verb``: "asks" (a run), "would ask" (a dry run). Empty when ``others`` is.
    """
    if not others:
        return []
    return [
        f"note: this run's journal holds units asked {' and '.join(others)} (earlier "
        f"invocations), and this one {verb} them {prompt_shape(mode)} ({mode}): one run's "
        "codes from two prompt shapes (a grouped request shows the judge the claim's other "
        "passages beside each); to keep to one, resume in the earlier mode or judge again "
        "into another output folder (-o)"
    ]


def endpoints_note(judge: str, others: list[str], now: str | None, verb: str) -> list[str]:
    """The line saying the journal holds units judged at ``others``, and this one ``verb`` ``now``.

    ``verb``: "called" (a run), "would call" (a dry run). Empty when ``others`` is.
    """
    if not others:
        return []
    named = [url or "the vendor's own API" for url in others]
    here = now or "the vendor's own API"
    return [
        f"note: this run's journal holds units judged at {' and '.join(named)} (earlier "
        f"invocations), and this one {verb} {here}: one run of {judge} at two "
        "endpoints; if they serve different models or versions under that name, judge again "
        "into another output folder (-o)"
    ]


def summary_lines(summary: RunSummary) -> list[str]:
    """Human-readable closing summary (the CLI prints these)."""
    label = " (heuristic baseline)" if summary.coder_kind is CoderKind.HEURISTIC else ""
    cost = f"${summary.cost_usd:.4f}" if summary.price_known else "unknown (no price for model"
    if not summary.price_known:
        cost += (
            "; a non-vendor base URL: --price-as KEY"
            if summary.base_url
            else f"; {summary.judge} is not in the price table: --prices FILE or --price-as KEY"
        )
        cost += ")"
    # an unpriced run counts $0 a unit: its journal's total is no dollar figure
    total = f"${summary.journal_cost_usd:.4f}" if summary.price_known else "cost unknown"
    where = f" at {summary.base_url}" if summary.base_url else ""
    lines = endpoint_lines(summary)
    lines += [
        f"judge: {summary.judge}{label}{where}, {summary.mode}; {summary.kind.value} units: "
        f"{summary.units} ({summary.already_done} already done, {summary.judged} judged now)",
        f"calls: {summary.calls} (retries {summary.retries}, invalid answers "
        f"{summary.invalid_answers}); cache hits: {summary.cache_hits}",
        f"scored: {summary.scored}; unscored: {summary.unscored}; quotes not found: "
        f"{summary.quotes_not_found}",
        f"tokens: input {summary.input_tokens} (cached {summary.cached_input_tokens}), "
        f"output {summary.output_tokens}; cost: {cost}; run total: "
        f"{summary.journal_units} units, {total}"
        + (
            f" ({summary.other_units} of them not of this input, from an earlier --from or "
            "--top-k: kept in the journal, left out of annotations.jsonl)"
            if summary.other_units
            else ""
        ),
        f"elapsed: {summary.elapsed_s:.1f} s"
        + ("; stopped by the budget" if summary.stopped_by_budget else ""),
    ]
    if summary.groups or summary.judged_alone:
        lines.append(
            f"grouped by claim: {summary.groups} group call(s) coded {summary.grouped_units} "
            f"units; {summary.judged_alone} unit(s) judged alone"
        )
    if summary.batches:
        lines.append(f"batch mode: {summary.batches} provider batch(es) submitted")
    c = summary.cascade
    if c is not None:
        first = c.first_judge + (
            " (heuristic baseline)" if c.first_coder_kind is CoderKind.HEURISTIC else ""
        )
        by = ", ".join(f"{coder}: {n}" for coder, n in sorted(c.coded_by.items()))
        lines += [
            f"cascade: {first} coded {c.first_units} units, kept {c.kept} it was confident "
            f"about and sent {c.escalated} (uncertain or unscored) to {summary.judge}",
            f"coded by: {by}",
        ]
        if c.first_coder_kind is CoderKind.HEURISTIC:
            lines.append("note: units kept by the offline judge are coded by a heuristic baseline")
    return lines


def summary_json(summary: RunSummary) -> str:
    """The summary as JSON (``--format json``)."""
    return json.dumps(summary.model_dump(mode="json"), indent=2)
