"""The scale options of ``failcodes judge`` (issue 5): grouping, batch, cascade, scale dry run.

Kept apart from ``cli/judge.py`` so that module stays small: it calls :func:`dry_run` and
:func:`run` when one of ``--group-by-claim``, ``--batch`` or ``--cascade`` is given.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from failcodes.annotations import CoderKind
from failcodes.codebook import Codebook
from failcodes.errors import ConfigError
from failcodes.fileio import atomic_write_text
from failcodes.judge.batch import BatchSettings, run_batch_async
from failcodes.judge.cascade import CascadeSummary, run_cascade
from failcodes.judge.engine import JudgeSettings, RunSummary
from failcodes.judge.estimate import ScaleEstimate, ScaleOptions, compare_lines, estimate_scale
from failcodes.judge.grouping import run_grouped_async
from failcodes.judge.pricing import PriceTable
from failcodes.judge.providers import DirectCoder, LLMProvider, make_coder
from failcodes.judge.run import _engine, run_judge_async, summary_lines
from failcodes.units import Unit, UnitKind


@dataclass(frozen=True)
class ScaleFlags:
    """The scale options given on the command line."""

    group_by_claim: bool = False
    batch: bool = False
    cascade: str | None = None
    batch_size: int | None = None
    poll_interval: float = 30.0

    @property
    def any(self) -> bool:
        """Whether any scale option is on."""
        return self.group_by_claim or self.batch or self.cascade is not None


def _first_coder(flags: ScaleFlags) -> LLMProvider | DirectCoder | None:
    if flags.cascade is None:
        return None
    return make_coder(flags.cascade)


def estimate(
    units: list[Unit],
    coder: LLMProvider | DirectCoder,
    codebook: Codebook,
    kind: UnitKind,
    *,
    run_dir: Path,
    cache_path: Path | None,
    prices: PriceTable,
    settings: JudgeSettings,
    flags: ScaleFlags,
) -> ScaleEstimate:
    """The scale-aware dry run (dedup, grouping, provider caching, batch discount, cascade)."""
    first = _first_coder(flags)
    if first is not None and not isinstance(first, DirectCoder):
        raise ConfigError("a dry run can only foresee a cascade whose first judge is offline")
    engine, journal, cache = _engine(coder, codebook, kind, run_dir, cache_path, prices, settings)
    try:
        return estimate_scale(
            engine,
            units,
            ScaleOptions(
                group_by_claim=flags.group_by_claim, batch=flags.batch, cascade_first=first
            ),
        )
    finally:
        journal.close()
        if cache is not None:
            cache.close()


def run(
    units: list[Unit],
    coder: LLMProvider | DirectCoder,
    codebook: Codebook,
    kind: UnitKind,
    *,
    run_dir: Path,
    cache_path: Path | None,
    prices: PriceTable,
    settings: JudgeSettings,
    flags: ScaleFlags,
    out: Console,
) -> RunSummary | None:
    """Run with the scale options; print the summary and the estimate vs the actual figures."""
    if not isinstance(coder, LLMProvider):
        raise ConfigError(
            "--group-by-claim, --batch and --cascade need an LLM judge "
            "(--judge openai:MODEL or anthropic:MODEL)"
        )
    if flags.group_by_claim and flags.batch:
        raise ConfigError("use --group-by-claim or --batch, not both")
    llm: LLMProvider = coder
    before = None
    first = _first_coder(flags)
    if first is None or isinstance(first, DirectCoder):
        before = estimate(
            units,
            coder,
            codebook,
            kind,
            run_dir=run_dir,
            cache_path=cache_path,
            prices=prices,
            settings=settings,
            flags=flags,
        )
        atomic_write_text(run_dir / "estimate.json", before.model_dump_json(indent=2) + "\n")

    async def second(todo: list[Unit]) -> RunSummary:
        common = {"run_dir": run_dir, "cache_path": cache_path, "prices": prices}
        if flags.batch:
            summary, batches = await run_batch_async(
                todo,
                llm,
                codebook,
                kind,
                settings=settings,
                batch=BatchSettings(
                    batch_size=flags.batch_size, poll_interval_s=flags.poll_interval
                ),
                **common,  # type: ignore[arg-type]
            )
            out.print(f"batch mode: {batches} provider batch(es) submitted", highlight=False)
            return summary
        if flags.group_by_claim:
            summary, stats = await run_grouped_async(
                todo,
                llm,
                codebook,
                kind,
                settings=settings,
                **common,  # type: ignore[arg-type]
            )
            out.print(
                f"grouped by claim: {stats.groups} group call(s) coded {stats.grouped_units} "
                f"units; {stats.alone} unit(s) judged alone",
                highlight=False,
            )
            return summary
        return await run_judge_async(
            todo,
            llm,
            codebook,
            kind,
            settings=settings,
            **common,  # type: ignore[arg-type]
        )

    cascade: CascadeSummary | None = None
    if first is not None:
        cascade = asyncio.run(
            run_cascade(units, first, codebook, kind, run_dir=run_dir, second=second)
        )
        summary = cascade.second
    else:
        summary = asyncio.run(second(units))
    if summary is not None:
        for line in summary_lines(summary):
            out.print(line, highlight=False)
    if cascade is not None:
        for line in cascade.lines():
            out.print(line, highlight=False)
        if cascade.first.coder_kind is CoderKind.HEURISTIC:
            out.print(
                "note: units kept by the offline judge are coded by a heuristic baseline",
                highlight=False,
            )
    if before is not None and summary is not None:
        for line in compare_lines(before, summary):
            out.print(line, highlight=False)
    out.print(f"annotations: {run_dir / 'annotations.jsonl'}", highlight=False)
    return summary
