"""``failcodes judge retrieval|reasoning``: code passages or reasoning traces with a judge."""

from __future__ import annotations

import asyncio
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TypedDict

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from failcodes.annotations import CoderKind
from failcodes.cli import _judge_scale
from failcodes.cli._judge_inputs import load_codebook, load_traces
from failcodes.cli.main import app
from failcodes.errors import BudgetExceededError, ConfigError
from failcodes.judge.engine import JudgeSettings
from failcodes.judge.estimate import PricingOnlyCoder
from failcodes.judge.limits import Limits, RetryPolicy
from failcodes.judge.pricing import PriceTable, load_prices
from failcodes.judge.providers import make_coder, parse_spec
from failcodes.judge.run import (
    estimate_run,
    read_summary,
    run_judge_async,
    summary_json,
    summary_lines,
)
from failcodes.units import UnitKind, build_units, traces_without_reasoning

judge_app = typer.Typer(
    help="Code retrieved passages (retrieval) or verifier reasoning (reasoning) with a judge.",
    no_args_is_help=True,
)
app.add_typer(judge_app, name="judge")

DEFAULT_CACHE = Path("annotations") / "judge-cache.sqlite"
HEURISTIC_NOTE = (
    "note: the offline judge is a heuristic baseline (rule-based, no model), not an LLM judge"
)


class _RunKw(TypedDict):
    """The keyword arguments every judge entry point takes (run, dry run, scale modes)."""

    run_dir: Path
    cache_path: Path | None
    prices: PriceTable
    settings: JudgeSettings


class OutputFormat(StrEnum):
    """How results are printed."""

    TEXT = "text"
    JSON = "json"


FromOpt = Annotated[
    Path, typer.Option("--from", help="Traces or disagreements (JSONL).", show_default=False)
]
CodebookOpt = Annotated[Path, typer.Option("--codebook", help="Codebook file (YAML/JSON).")]
JudgeOpt = Annotated[str, typer.Option("--judge", help="offline | anthropic:MODEL | openai:MODEL.")]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="Endpoint of an OpenAI/Anthropic-compatible server."),
]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Calls in flight.")]
RpmOpt = Annotated[float | None, typer.Option("--rpm", min=1, help="Requests-per-minute limit.")]
TpmOpt = Annotated[float | None, typer.Option("--tpm", min=1, help="Tokens-per-minute limit.")]
TopKOpt = Annotated[int | None, typer.Option("--top-k", min=1, help="Only passages ranked <= K.")]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Estimate tokens and cost; call nothing.")
]
BudgetOpt = Annotated[
    float | None, typer.Option("--budget", min=0, help="Stop cleanly after spending USD.")
]
PricesOpt = Annotated[Path | None, typer.Option("--prices", help="Price table (YAML).")]
CacheOpt = Annotated[Path, typer.Option("--cache", help="Response cache (SQLite).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the cache.")]
MaxTokOpt = Annotated[int, typer.Option("--max-output-tokens", min=16)]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds per call.")]
RetriesOpt = Annotated[int, typer.Option("--max-attempts", min=1, help="Attempts per call.")]
OutOpt = Annotated[Path | None, typer.Option("-o", "--output", help="Run directory.")]
FormatOpt = Annotated[OutputFormat, typer.Option("--format")]
GroupOpt = Annotated[
    bool, typer.Option("--group-by-claim", help="One call per claim for all its passages.")
]
BatchOpt = Annotated[
    bool, typer.Option("--batch", help="Use the provider's batch API (half price, slower).")
]
CascadeOpt = Annotated[
    str | None,
    typer.Option(
        "--cascade",
        help="Cheap judge first (e.g. offline); only its uncertain units go to --judge.",
    ),
]
BatchSizeOpt = Annotated[int | None, typer.Option("--batch-size", min=1, help="Items per batch.")]
PollOpt = Annotated[float, typer.Option("--poll-interval", min=0.01, help="Seconds between polls.")]


def _run(
    kind: UnitKind,
    source: Path,
    codebook_path: Path,
    judge: str,
    base_url: str | None,
    concurrency: int,
    rpm: float | None,
    tpm: float | None,
    top_k: int | None,
    dry_run: bool,
    budget: float | None,
    prices_path: Path | None,
    cache: Path,
    no_cache: bool,
    max_output_tokens: int,
    timeout: float,
    max_attempts: int,
    output: Path | None,
    fmt: OutputFormat,
    flags: _judge_scale.ScaleFlags | None = None,
) -> None:
    flags = flags or _judge_scale.ScaleFlags()
    out = Console(soft_wrap=True)
    err = Console(stderr=True, soft_wrap=True)
    codebook = load_codebook(codebook_path)
    traces = load_traces(source)
    units = build_units(traces, kind, top_k=top_k)
    run_dir = output or Path("annotations") / f"judge-{kind.value}"
    try:
        coder = make_coder(judge, base_url=base_url, timeout=timeout)
    except ConfigError:
        parse_spec(judge)  # an unknown judge is an error even in a dry run
        if not dry_run:
            raise
        coder = PricingOnlyCoder(judge)  # a dry run needs no key: it calls nothing
    prices = load_prices(prices_path)
    settings = JudgeSettings(
        limits=Limits(concurrency=concurrency, requests_per_minute=rpm, tokens_per_minute=tpm),
        retry=RetryPolicy(max_attempts=max_attempts),
        max_output_tokens=max_output_tokens,
        budget_usd=budget,
    )
    cache_path = None if no_cache or coder.coder_kind is CoderKind.HEURISTIC else cache
    heuristic = coder.coder_kind is CoderKind.HEURISTIC
    job = (units, coder, codebook, kind)
    run_kw = _RunKw(run_dir=run_dir, cache_path=cache_path, prices=prices, settings=settings)
    if kind is UnitKind.VERIFICATION:
        skipped = traces_without_reasoning(traces)
        if skipped:
            err.print(f"{skipped} trace(s) without reasoning skipped (nothing to code)")
    if dry_run and flags.any and fmt is OutputFormat.JSON:
        scale = _judge_scale.estimate(*job, **run_kw, flags=flags)
        out.print_json(scale.model_dump_json())
        return
    if dry_run:
        est = estimate_run(*job, **run_kw)
        if fmt is OutputFormat.JSON:
            out.print_json(est.model_dump_json())
        else:
            cost = f"${est.cost_usd:.4f}" if est.cost_usd is not None else "unknown (no price)"
            out.print(
                f"dry run, {est.judge}: {est.units} units ({est.already_done} already done, "
                f"{est.cache_hits} cached, {est.to_call} to call); ~{est.input_tokens} input "
                f"+ ~{est.output_tokens} output tokens; estimated cost {cost}",
                highlight=False,
            )
            out.print(est.note, highlight=False)
            scale = _judge_scale.estimate(*job, **run_kw, flags=flags)
            for line in scale.lines():
                out.print(line, highlight=False)
        if heuristic:
            err.print(HEURISTIC_NOTE, highlight=False)
        return
    if flags.any:
        _judge_scale.run(*job, **run_kw, flags=flags, out=out)
        return
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not err.is_terminal,
    )
    with progress:
        task = progress.add_task(f"judging {kind.value}", total=None)

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        summary = None
        try:
            summary = asyncio.run(run_judge_async(*job, **run_kw, on_progress=on_progress))
        except BudgetExceededError:
            # finished units are committed and exported: show the closing summary, then
            # let the CLI root print the one-line error (exit 2)
            stopped = read_summary(run_dir)
            if stopped is not None:
                for line in summary_lines(stopped):
                    err.print(line, highlight=False)
            raise
    assert summary is not None
    if fmt is OutputFormat.JSON:
        out.print_json(summary_json(summary))
    else:
        for line in summary_lines(summary):
            out.print(line, highlight=False)
        out.print(f"annotations: {run_dir / 'annotations.jsonl'}", highlight=False)
    if heuristic:
        err.print(HEURISTIC_NOTE, highlight=False)


def _command(kind: UnitKind) -> None:
    def command(
        source: FromOpt,
        codebook: CodebookOpt,
        judge: JudgeOpt = "offline",
        base_url: BaseUrlOpt = None,
        concurrency: ConcurrencyOpt = 8,
        rpm: RpmOpt = None,
        tpm: TpmOpt = None,
        top_k: TopKOpt = None,
        dry_run: DryRunOpt = False,
        budget: BudgetOpt = None,
        prices: PricesOpt = None,
        cache: CacheOpt = DEFAULT_CACHE,
        no_cache: NoCacheOpt = False,
        max_output_tokens: MaxTokOpt = 1024,
        timeout: TimeoutOpt = 120.0,
        max_attempts: RetriesOpt = 6,
        output: OutOpt = None,
        fmt: FormatOpt = OutputFormat.TEXT,
        group_by_claim: GroupOpt = False,
        batch: BatchOpt = False,
        cascade: CascadeOpt = None,
        batch_size: BatchSizeOpt = None,
        poll_interval: PollOpt = 30.0,
    ) -> None:
        _run(
            kind,
            source,
            codebook,
            judge,
            base_url,
            concurrency,
            rpm,
            tpm,
            top_k,
            dry_run,
            budget,
            prices,
            cache,
            no_cache,
            max_output_tokens,
            timeout,
            max_attempts,
            output,
            fmt,
            _judge_scale.ScaleFlags(group_by_claim, batch, cascade, batch_size, poll_interval),
        )

    name = "retrieval" if kind is UnitKind.RETRIEVAL else "reasoning"
    what = (
        "Code every (claim, passage) pair: evidence quality on each retrieval dimension."
        if kind is UnitKind.RETRIEVAL
        else "Code every verifier reasoning trace: each verification step."
    )
    command.__doc__ = what
    judge_app.command(name)(command)


_command(UnitKind.RETRIEVAL)
_command(UnitKind.VERIFICATION)

__all__ = ["judge_app"]
