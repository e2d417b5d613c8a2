"""``failcodes judge retrieval|reasoning``: code passages or reasoning traces with a judge."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from failcodes.annotations import CoderKind
from failcodes.cli._judge_inputs import (
    check_run_outputs,
    load_codebook,
    load_traces,
    load_unit_sizes,
    note_codebook,
)
from failcodes.cli.judge_panel import panel_command
from failcodes.cli.main import command_group
from failcodes.cli.options import (
    DEFAULT_CACHE,
    BaseUrlOpt,
    BudgetOpt,
    CacheOpt,
    CodebookFileOpt,
    ConcurrencyOpt,
    FromOpt,
    NoCacheOpt,
    RetriesOpt,
    TopKOpt,
    data_console,
)
from failcodes.cli.output_format import FormatOpt, OutputFormat, require_format
from failcodes.errors import BudgetExceededError, ConfigError, FailcodesError, InputError
from failcodes.judge import (
    Batch,
    Cascade,
    Grouped,
    JudgeJob,
    JudgeSettings,
    Limits,
    Mode,
    PerUnit,
    PricingOnlyCoder,
    RetryPolicy,
    estimate_run,
    load_prices,
    make_coder,
    parse_spec,
    read_summary,
    run_judge_async,
    summary_json,
    summary_lines,
)
from failcodes.judge.colestimate import columnar_mode, estimate_columns, needs_groups
from failcodes.judge.estimate import compare_lines
from failcodes.judge.run import discard_if_untouched, write_estimate
from failcodes.units import UnitKind, build_units, traces_without_reasoning

judge_app = command_group(
    "judge", "Code retrieved passages (retrieval) or verifier reasoning (reasoning) with a judge."
)

HEURISTIC_NOTE = (
    "note: the offline judge is a heuristic baseline (rule-based, no model), not an LLM judge"
)


JudgeOpt = Annotated[
    list[str],
    typer.Option(
        "--judge",
        help="offline | anthropic:MODEL | openai:MODEL. Repeat for a judge panel (each member "
        "judges into RUN_DIR/panel/, consensus and inter-judge agreement in RUN_DIR/panel.json);"
        " repeat one spec to sample that model several times (see --temperature).",
    ),
]
TemperatureOpt = Annotated[
    float | None,
    typer.Option(
        "--temperature",
        help="Sampling temperature of the LLM judge(s), recorded with the run (default: the "
        "provider's).",
    ),
]
RpmOpt = Annotated[float | None, typer.Option("--rpm", min=1, help="Requests-per-minute limit.")]
TpmOpt = Annotated[float | None, typer.Option("--tpm", min=1, help="Tokens-per-minute limit.")]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Estimate tokens and cost; call nothing.")
]
PricesOpt = Annotated[Path | None, typer.Option("--prices", help="Price table (YAML).")]
MaxTokOpt = Annotated[int, typer.Option("--max-output-tokens", min=16)]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds per call.")]
OutOpt = Annotated[Path | None, typer.Option("-o", "--output", help="Run directory.")]
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
PriceAsOpt = Annotated[
    str | None,
    typer.Option(
        "--price-as",
        help="Price the judge as this price-table entry (e.g. openai:gpt-5-mini); a judge "
        "behind a non-vendor --base-url is priced as unknown without it.",
    ),
]


@dataclass(frozen=True)
class ScaleFlags:
    """The run-mode options given on the command line."""

    group_by_claim: bool = False
    batch: bool = False
    cascade: str | None = None
    batch_size: int | None = None
    poll_interval: float = 30.0

    @property
    def any(self) -> bool:
        """Whether any option beyond one call per unit is on."""
        return self.group_by_claim or self.batch or self.cascade is not None

    def mode(self, *, dry_run: bool) -> Mode:
        """The run mode these flags ask for (a dry run builds no client for a cascade)."""
        base: PerUnit | Grouped | Batch = PerUnit()
        if self.batch:
            group = Grouped() if self.group_by_claim else None
            base = Batch(size=self.batch_size, poll=self.poll_interval, group=group)
        elif self.group_by_claim:
            base = Grouped()
        if self.cascade is None:
            return base
        try:
            first = make_coder(self.cascade)
        except ConfigError:
            parse_spec(self.cascade)
            if not dry_run:
                raise
            first = PricingOnlyCoder(self.cascade)
        return Cascade(first, base)


def _no_units_message(kind: UnitKind, traces: int) -> str:
    if kind is UnitKind.RETRIEVAL:
        return (
            f"nothing to judge: none of the {traces} trace(s) carries a retrieved passage "
            "(a closed-book or provided-evidence pipeline has no retrieval step to code); "
            "use `judge reasoning` for the verifier's reasoning"
        )
    return (
        f"nothing to judge: none of the {traces} trace(s) carries verifier reasoning "
        "(the reasoning field is empty)"
    )


def _run(
    kind: UnitKind,
    source: Path,
    codebook_path: Path | None,
    judges: list[str],
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
    flags: ScaleFlags | None = None,
    price_as: str | None = None,
    temperature: float | None = None,
) -> None:
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="judge")
    if temperature is not None and not 0 <= temperature <= 2:  # NaN too
        raise ConfigError(f"--temperature must be between 0 and 2, got {temperature}")
    judge = judges[0] if judges else "offline"
    flags = flags or ScaleFlags()
    out = data_console(soft_wrap=True)
    err = data_console(stderr=True, soft_wrap=True)
    codebook = load_codebook(codebook_path, kind)  # a missing part fails before any output
    # a dry run of one judge in a mode the columns can price reads no Unit objects (issue
    # 18); anything else, or an input the fast reader does not vouch for, reads traces
    planned = flags.mode(dry_run=True) if flags.cascade is None else None
    sizes = None
    if dry_run and len(judges) <= 1 and planned is not None and columnar_mode(planned, kind):
        sizes = load_unit_sizes(source, kind, top_k=top_k, grouped=needs_groups(planned))
    traces = load_traces(source) if sizes is None else []
    units = build_units(traces, kind, top_k=top_k) if sizes is None else []
    n_traces, n_units = (len(traces), len(units)) if sizes is None else (sizes.traces, sizes.units)
    if not n_units:
        raise InputError(_no_units_message(kind, n_traces), path=source)
    run_dir = output or Path("annotations") / f"judge-{kind.value}"
    prices = load_prices(prices_path)
    given = None
    if price_as is not None:
        given = prices.lookup(price_as)
        if given is None:
            raise ConfigError(
                f"--price-as {price_as}: no such entry in the price table"
                + (f" {prices_path}" if prices_path else " (add one with --prices FILE)")
            )
    settings = JudgeSettings(
        limits=Limits(concurrency=concurrency, requests_per_minute=rpm, tokens_per_minute=tpm),
        retry=RetryPolicy(max_attempts=max_attempts),
        max_output_tokens=max_output_tokens,
        budget_usd=budget,
        price=given,
    )
    if len(judges) > 1:
        for spec in judges:
            parse_spec(spec)
        mode = flags.mode(dry_run=dry_run)
        check_run_outputs(run_dir, None if no_cache else cache)
        note_codebook(codebook_path, codebook)
        job = JudgeJob(
            codebook,
            kind,
            run_dir,
            mode=mode,
            cache_path=None if no_cache else cache,
            prices=prices,
            settings=settings,
        )
        panel_command(
            units,
            judges,
            job,
            base_url=base_url,
            timeout=timeout,
            temperature=temperature,
            dry_run=dry_run,
            json_out=fmt is OutputFormat.JSON,
            out=out,
        )
        return
    try:
        coder = make_coder(judge, base_url=base_url, timeout=timeout, temperature=temperature)
    except ConfigError:
        parse_spec(judge)  # an unknown judge is an error even in a dry run
        if not dry_run:
            raise
        coder = PricingOnlyCoder(judge, base_url)  # a dry run needs no key: it calls nothing
    cache_path = None if no_cache or coder.coder_kind is CoderKind.HEURISTIC else cache
    heuristic = coder.coder_kind is CoderKind.HEURISTIC
    mode = flags.mode(dry_run=dry_run)
    check_run_outputs(run_dir, cache_path)  # one line, nothing created, before any call
    fresh = not run_dir.exists()
    note_codebook(codebook_path, codebook)
    job = JudgeJob(
        codebook, kind, run_dir, mode=mode, cache_path=cache_path, prices=prices, settings=settings
    )
    if kind is UnitKind.VERIFICATION:
        skipped = traces_without_reasoning(traces) if sizes is None else sizes.without_reasoning
        if skipped:
            err.print(f"{skipped} trace(s) without reasoning skipped (nothing to code)")
    if dry_run:
        est = None if sizes is None else estimate_columns(sizes, coder, job)
        if est is None:  # the object path (a response cache with entries, or no columns)
            if sizes is not None:
                units = build_units(load_traces(source), kind, top_k=top_k)
            est = estimate_run(units, coder, job)
        if fmt is OutputFormat.JSON:
            out.print_json(est.model_dump_json())
        else:
            for line in est.lines():
                out.print(line, highlight=False)
        if heuristic:
            err.print(HEURISTIC_NOTE, highlight=False)
        return
    before = None
    if flags.any and coder.coder_kind is CoderKind.LLM:
        try:
            before = estimate_run(units, coder, job)
        except ConfigError:
            before = None  # a cascade whose first judge is an LLM cannot be foreseen
        if before is not None:
            write_estimate(run_dir, before)
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
            summary = asyncio.run(run_judge_async(units, coder, job, on_progress=on_progress))
        except BudgetExceededError:
            # finished units are committed and exported: show the closing summary, then
            # let the CLI root print the one-line error (exit 2)
            stopped = read_summary(run_dir)
            if stopped is not None:
                for line in summary_lines(stopped):
                    err.print(line, highlight=False)
            raise
        except FailcodesError:
            if fresh:  # e.g. an endpoint that is not listening: no empty run left behind
                discard_if_untouched(run_dir)
            raise
    assert summary is not None
    if fmt is OutputFormat.JSON:
        out.print_json(summary_json(summary))
    else:
        for line in summary_lines(summary):
            out.print(line, highlight=False)
        if before is not None:
            for line in compare_lines(before, summary):
                out.print(line, highlight=False)
        out.print(f"annotations: {run_dir / 'annotations.jsonl'}", highlight=False)
    if heuristic:
        err.print(HEURISTIC_NOTE, highlight=False)


def _command(kind: UnitKind) -> None:
    def command(
        source: FromOpt,
        codebook: CodebookFileOpt = None,
        judge: JudgeOpt = ["offline"],  # noqa: B006 (typer reads the default, never mutates it)
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
        fmt: FormatOpt = OutputFormat.TABLE,
        group_by_claim: GroupOpt = False,
        batch: BatchOpt = False,
        cascade: CascadeOpt = None,
        batch_size: BatchSizeOpt = None,
        poll_interval: PollOpt = 30.0,
        price_as: PriceAsOpt = None,
        temperature: TemperatureOpt = None,
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
            ScaleFlags(group_by_claim, batch, cascade, batch_size, poll_interval),
            price_as,
            temperature,
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
