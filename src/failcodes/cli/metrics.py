"""``failcodes metrics``: P/R/F1 and friends per system x mapping, with bootstrap CIs."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from failcodes.cli.claims_option import WithoutClaimsOpt
from failcodes.cli.main import app
from failcodes.cli.options import MappingOpt, TracesOpt, make_console
from failcodes.cli.output_format import FormatOpt, OutputFormat
from failcodes.columnar import load_columns, load_sentence_columns, read_trace_columns
from failcodes.errors import ConfigError
from failcodes.fileio import atomic_write_text, check_not_input
from failcodes.labelio import refuse_claim_labels
from failcodes.mapping import DEFAULT_MAPPING, resolve_mappings
from failcodes.metrics import (
    DEFAULT_WITHOUT_CLAIMS,
    METRICS,
    Level,
    MetricResult,
    MetricsReport,
    VerdictDistribution,
    WithoutClaimsPolicy,
    compute_metrics,
    distributions_dataframe,
    verdict_distributions,
)
from failcodes.stats.bootstrap import MAX_RESAMPLES, check_seed
from failcodes.verdicts import Verdict

_SHORT = {
    "precision": "P",
    "recall": "R",
    "f1": "F1",
    "specificity": "Spec",
    "balanced_accuracy": "BalAcc",
    "youden_j": "J",
    "accuracy": "Acc",
}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _cell(result: MetricResult, name: str) -> str:
    est = result.metrics[name]
    text = _pct(est.value)
    ci = result.intervals.get(name)
    if est.value is not None and ci is not None:
        text += f"\n[{_pct(ci.low)}, {_pct(ci.high)}]" if ci.low is not None else "\n[–]"
    return text


def metrics_table(report: MetricsReport, *, title: str | None = None) -> Table:
    """Render metric results as a rich table (percentages; '–' = undefined, see notes)."""
    ci = ""
    if report.bootstrap is not None:
        b = report.bootstrap
        ci = f", {100 * b.confidence:g}% CI: {b.resamples} question resamples, seed {b.seed}"
    table = Table(title=title or f"{report.level.value}-level metrics (%){ci}")
    for col in ("system", "mapping", "n", "TP", "FP", "FN", "TN"):
        table.add_column(col, justify="left" if col in ("system", "mapping") else "right")
    for name in METRICS:
        table.add_column(_SHORT[name], justify="right")
    for r in report.results:
        table.add_row(
            r.system,
            r.mapping,
            str(r.n),
            str(r.tp),
            str(r.fp),
            str(r.fn),
            str(r.tn),
            *(_cell(r, name) for name in METRICS),
        )
    return table


def distribution_table(dists: Sequence[VerdictDistribution], *, title: str | None = None) -> Table:
    """Render verdict distributions as a rich table (Table 5 shape; % of claims)."""
    shown = [v for v in Verdict if v is not Verdict.OUT_OF_SCOPE] + (
        [Verdict.OUT_OF_SCOPE] if any(d.counts[Verdict.OUT_OF_SCOPE] for d in dists) else []
    )
    table = Table(title=title or "Verdict distribution (% of claims)")
    table.add_column("system")
    table.add_column("claims", justify="right")
    for v in shown:
        table.add_column(v.value, justify="right")
    for d in dists:
        table.add_row(d.system, str(d.n_claims), *(_pct(d.proportions[v].value) for v in shown))
    return table


def notes(report: MetricsReport) -> list[str]:
    """Human-readable notes: undefined metrics, unlabelled units, no claims, CI warnings."""
    out: list[str] = []
    reasons: dict[str, set[str]] = {}
    warned: dict[str, set[str]] = {}
    for r in report.results:
        for name in METRICS:
            reason = r.metrics[name].undefined_reason
            if reason:
                reasons.setdefault(reason, set()).add(f"{r.system}/{r.mapping}:{_SHORT[name]}")
            ci = r.intervals.get(name)
            if ci is not None and ci.warning and name in ("precision", "recall", "f1"):
                warned.setdefault(ci.warning, set()).add(f"{r.system}/{r.mapping}:{_SHORT[name]}")
        if r.n_unlabelled and r.mapping == report.results[0].mapping:
            out.append(f"{r.system}: {r.n_unlabelled} unlabelled {r.level.value}s left out")
    for reason, where in sorted(reasons.items()):
        shown = sorted(where)
        more = f" and {len(shown) - 6} more" if len(shown) > 6 else ""
        out.append(f"– undefined ({reason}): {', '.join(shown[:6])}{more}")
    if report.without_claims:
        by_system: dict[str, int] = {}
        for m in report.without_claims:
            by_system[m.system] = by_system.get(m.system, 0) + 1
        policy = report.results[0].without_claims_policy if report.results else None
        action = "counted as no error" if policy is WithoutClaimsPolicy.NO_ERROR else "left out"
        listed = ", ".join(f"{s}: {n}" for s, n in sorted(by_system.items()))
        out.append(f"labelled sentences without claims ({action}): {listed}")
    for warning, where in sorted(warned.items()):
        shown = sorted(where)
        more = f" and {len(shown) - 6} more" if len(shown) > 6 else ""
        out.append(f"– CI warning ({warning}): {', '.join(shown[:6])}{more}")
    out.extend(_never_flagged(report))
    return out


def _never_flagged(report: MetricsReport) -> list[str]:
    """Systems that never give a verdict a mapping flags: recall 0 by construction.

    A support classifier (MiniCheck, an NLI threshold) says supported or not; under the
    ``refuted`` mapping it flags nothing, and its recall of 0 says nothing about it.
    """
    out = []
    for mapping in report.mappings:
        for dist in report.distributions:
            if not dist.n_claims or any(dist.counts.get(v) for v in mapping.error_verdicts):
                continue
            given = ", ".join(f"{v.value} {n:,}" for v, n in dist.counts.items() if n)
            hint = (
                "; a verifier that does not tell refuted from unsupported is measured with "
                "-m non_supported"
                if Verdict.NO_EVIDENCE not in mapping.error_verdicts
                else ""
            )
            out.append(
                f"– {dist.system} never gives a verdict the '{mapping.name}' mapping counts as "
                f"an error (its verdicts: {given}), so it flags no sentence{hint}"
            )
    return out


def _emit(text: str, out: Path | None, what: str) -> None:
    """Print ``text``, or write it to ``out`` atomically and say so."""
    if out is None:
        sys.stdout.write(text)
    else:
        atomic_write_text(out, text)
        typer.echo(f"wrote {what} -> {out}")


def _print_distributions(
    dists: Sequence[VerdictDistribution], fmt: OutputFormat, out: Path | None
) -> None:
    """Verdict distributions as a table, JSON rows or CSV (to ``out`` if given)."""
    if fmt is OutputFormat.JSON:
        text = json.dumps([d.flat() for d in dists], indent=2, allow_nan=False) + "\n"
    elif fmt is OutputFormat.CSV:
        text = distributions_dataframe(dists).to_csv(index=False, lineterminator="\n")
    else:
        make_console().print(distribution_table(dists))
        return
    _emit(text, out, f"{len(dists)} verdict distribution rows")


@app.command("metrics")
def metrics(
    traces: TracesOpt,
    labels: Annotated[
        Path | None,
        typer.Option("--labels", help="Clinical labels file (not needed with --verdicts)."),
    ] = None,
    mapping: MappingOpt = None,
    level: Annotated[Level, typer.Option("--level", help="Unit of the metrics.")] = Level.SENTENCE,
    bootstrap: Annotated[
        int,
        typer.Option(
            "--bootstrap",
            min=0,
            max=MAX_RESAMPLES,
            help="Cluster-bootstrap resamples (0 = no CIs).",
        ),
    ] = 0,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    confidence: Annotated[
        float, typer.Option("--confidence", min=0.5, max=0.999, help="CI level.")
    ] = 0.95,
    without_claims: WithoutClaimsOpt = DEFAULT_WITHOUT_CLAIMS,
    fmt: FormatOpt = OutputFormat.TABLE,
    verdicts: Annotated[
        bool,
        typer.Option(
            "--verdicts",
            help="Print each system's verdict distribution (seed 001 Table 5 shape: counts "
            "and shares of the five canonical verdicts) instead of the metrics.",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Write the JSON or CSV here instead of printing it (format from --format, or "
            "from the extension .json/.csv); e.g. a study's metrics/<dataset>.json.",
        ),
    ] = None,
) -> None:
    """Precision, recall, F1, specificity, balanced accuracy, Youden J, accuracy per system."""
    if out is not None and fmt is OutputFormat.TABLE:
        by_suffix = {".json": OutputFormat.JSON, ".csv": OutputFormat.CSV}
        if out.suffix.lower() not in by_suffix:
            raise ConfigError(f"-o {out}: use a .json or .csv file, or pass --format json|csv")
        fmt = by_suffix[out.suffix.lower()]
    check_not_input([out], [*traces, labels])
    if bootstrap:
        check_seed(seed)  # an option error before any file is read
    maps = resolve_mappings(mapping or [DEFAULT_MAPPING])
    if labels is None:
        if not verdicts:
            raise ConfigError("--labels is required (only --verdicts works without labels)")
        _print_distributions(verdict_distributions(read_trace_columns(traces)), fmt, out)
        return
    if level is Level.SENTENCE:  # memory follows the sentences, not the claims
        columns, label_list = load_sentence_columns(traces, labels)
        refuse_claim_labels(label_list, labels)
    else:
        columns, label_list = load_columns(traces, labels)
    report = compute_metrics(
        columns,
        label_list,
        maps,
        level=level,
        bootstrap=bootstrap,
        seed=seed,
        confidence=confidence,
        without_claims=without_claims,
    )
    if verdicts:
        _print_distributions(report.distributions, fmt, out)
        return
    if fmt is not OutputFormat.TABLE:
        if fmt is OutputFormat.JSON:
            rows = [r.flat() for r in report.results]
            text = json.dumps(rows, indent=2, allow_nan=False) + "\n"
        else:
            text = report.to_dataframe().to_csv(index=False, lineterminator="\n")
        _emit(text, out, f"{len(report.results)} metric rows")
        return
    console = make_console()
    console.print(metrics_table(report))
    console.print(distribution_table(report.distributions))
    for line in notes(report):
        console.print(line, highlight=False)
