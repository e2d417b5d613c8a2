"""One-call entry points used by the CLI and the demo: judge units into a run directory.

A run directory holds ``journal.sqlite`` (the source of truth, resumable) and, after every
invocation, ``annotations.jsonl`` and ``summary.json`` exported from it (written atomically).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
from collections.abc import Iterable
from pathlib import Path

from failcodes.annotations import Annotation
from failcodes.codebook import Codebook
from failcodes.fileio import atomic_path, atomic_write_text
from failcodes.judge.cache import ResponseCache
from failcodes.judge.engine import (
    Estimate,
    JudgeEngine,
    JudgeSettings,
    ProgressCallback,
    RunSummary,
)
from failcodes.judge.journal import Journal
from failcodes.judge.pricing import PriceTable, load_prices
from failcodes.judge.providers import DirectCoder, LLMProvider
from failcodes.units import Unit, UnitKind

ANNOTATIONS_NAME = "annotations.jsonl"
SUMMARY_NAME = "summary.json"


def export_run(run_dir: str | Path, summary: RunSummary | None = None) -> Path:
    """Export the journal's annotations (and the summary) as JSONL/JSON files.

    Streams from the journal to a temp file (memory stays flat), then renames it into place.
    """
    run = Path(run_dir)
    out = run / ANNOTATIONS_NAME
    journal = Journal(run)
    try:
        with atomic_path(out) as tmp, tmp.open("w", encoding="utf-8") as fh:
            for ann in journal.annotations():
                fh.write(ann.model_dump_json() + "\n")
    finally:
        journal.close()
    if summary is not None:
        atomic_write_text(run / SUMMARY_NAME, summary.model_dump_json(indent=2) + "\n")
    return out


def read_summary(run_dir: str | Path) -> RunSummary | None:
    """Read the ``summary.json`` of the latest invocation of a run, if any."""
    path = Path(run_dir) / SUMMARY_NAME
    if not path.exists():
        return None
    return RunSummary.model_validate_json(path.read_text("utf-8"))


def read_annotations(run_dir: str | Path) -> list[Annotation]:
    """Read every annotation of a run (from its journal)."""
    journal = Journal(run_dir)
    try:
        return list(journal.annotations())
    finally:
        journal.close()


def _engine(
    coder: LLMProvider | DirectCoder,
    codebook: Codebook,
    kind: UnitKind,
    run_dir: Path,
    cache_path: Path | None,
    prices: PriceTable | None,
    settings: JudgeSettings,
) -> tuple[JudgeEngine, Journal, ResponseCache | None]:
    journal = Journal(run_dir)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    engine = JudgeEngine(
        coder,
        codebook,
        kind,
        journal=journal,
        cache=cache,
        prices=prices if prices is not None else load_prices(),
        settings=settings,
    )
    return engine, journal, cache


def estimate_run(
    units: Iterable[Unit],
    coder: LLMProvider | DirectCoder,
    codebook: Codebook,
    kind: UnitKind,
    *,
    run_dir: str | Path,
    cache_path: str | Path | None = None,
    prices: PriceTable | None = None,
    settings: JudgeSettings | None = None,
) -> Estimate:
    """Estimate a run (``--dry-run``): nothing is called, nothing is written but the journal."""
    engine, journal, cache = _engine(
        coder,
        codebook,
        kind,
        Path(run_dir),
        Path(cache_path) if cache_path else None,
        prices,
        settings or JudgeSettings(),
    )
    try:
        return engine.estimate(units)
    finally:
        journal.close()
        if cache is not None:
            cache.close()


async def run_judge_async(
    units: Iterable[Unit],
    coder: LLMProvider | DirectCoder,
    codebook: Codebook,
    kind: UnitKind,
    *,
    run_dir: str | Path,
    cache_path: str | Path | None = None,
    prices: PriceTable | None = None,
    settings: JudgeSettings | None = None,
    on_progress: ProgressCallback | None = None,
) -> RunSummary:
    """Judge ``units`` into ``run_dir`` (resuming it), export, and return the summary.

    On a budget stop or a provider failure the finished units stay committed and exported,
    and the error propagates; the engine's summary is still written to ``summary.json``.
    """
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
        return await engine.run(units, on_progress)
    finally:
        journal.close()
        if cache is not None:
            cache.close()
        if isinstance(coder, LLMProvider):
            await coder.aclose()
        export_run(run, engine.last_summary)


def run_judge(
    units: Iterable[Unit],
    coder: LLMProvider | DirectCoder,
    codebook: Codebook,
    kind: UnitKind,
    *,
    run_dir: str | Path,
    cache_path: str | Path | None = None,
    prices: PriceTable | None = None,
    settings: JudgeSettings | None = None,
    on_progress: ProgressCallback | None = None,
) -> RunSummary:
    """Synchronous wrapper of :func:`run_judge_async`.

    Works inside a running event loop too (Jupyter): the run then gets its own thread.
    """
    job = functools.partial(
        asyncio.run,
        run_judge_async(
            units,
            coder,
            codebook,
            kind,
            run_dir=run_dir,
            cache_path=cache_path,
            prices=prices,
            settings=settings,
            on_progress=on_progress,
        ),
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return job()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(job).result()


def summary_lines(summary: RunSummary) -> list[str]:
    """Human-readable closing summary (the CLI prints these)."""
    label = " (heuristic baseline)" if summary.coder_kind.value == "heuristic" else ""
    cost = f"${summary.cost_usd:.4f}" if summary.price_known else "unknown (no price for model)"
    return [
        f"judge: {summary.judge}{label}; {summary.kind.value} units: {summary.units} "
        f"({summary.already_done} already done, {summary.judged} judged now)",
        f"calls: {summary.calls} (retries {summary.retries}, invalid answers "
        f"{summary.invalid_answers}); cache hits: {summary.cache_hits}",
        f"scored: {summary.scored}; unscored: {summary.unscored}; quotes not found: "
        f"{summary.quotes_not_found}",
        f"tokens: input {summary.input_tokens} (cached {summary.cached_input_tokens}), "
        f"output {summary.output_tokens}; cost: {cost}; run total: "
        f"{summary.journal_units} units, ${summary.journal_cost_usd:.4f}",
        f"elapsed: {summary.elapsed_s:.1f} s"
        + ("; stopped by the budget" if summary.stopped_by_budget else ""),
    ]


def summary_json(summary: RunSummary) -> str:
    """The summary as JSON (``--format json``)."""
    return json.dumps(summary.model_dump(mode="json"), indent=2)
