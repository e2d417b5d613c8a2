"""``failcodes metrics``: P/R/F1 and friends per system x mapping, with bootstrap CIs."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer

from failcodes.cli.main import app
from failcodes.cli.options import RAW_CSV, make_console, raw_csv_cells
from failcodes.cli.output_format import FORMAT_PARAM, OutputFormat
from failcodes.cli.requests import add_command
from failcodes.commands.measure import MetricsRequest
from failcodes.errors import listed
from failcodes.labelscope import coverage_rows
from failcodes.metrics import (
    METRICS,
    MetricResult,
    MetricsReport,
    VerdictDistribution,
    WithoutClaimsPolicy,
    subset_note,
)
from failcodes.verdicts import Verdict

if TYPE_CHECKING:  # rich's tables: imported where drawn (``--format json`` draws none)
    from rich.table import Table

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


#: After an interval in the table: it carries a CI warning (the list below names why). The
#: list is cut at 6 cells per warning, so without the mark a cell past the cut ("and 1
#: more") showed its interval with no word beside it.
WARNED = "*"


def _cell(result: MetricResult, name: str) -> str:
    est = result.metrics[name]
    text = _pct(est.value)
    ci = result.intervals.get(name)
    if est.value is not None and ci is not None:
        text += f"\n[{_pct(ci.low)}, {_pct(ci.high)}]" if ci.low is not None else "\n[–]"
        if ci.warning:
            text += WARNED
    return text


def metrics_table(report: MetricsReport) -> Table:
    """Render metric results as a rich table (percentages; '–' = undefined, see notes)."""
    from rich.table import Table

    ci = ""
    if report.bootstrap is not None:
        b = report.bootstrap
        ci = f", {100 * b.confidence:g}% CI: {b.resamples} question resamples, seed {b.seed}"
    table = Table(title=f"{report.level.value}-level metrics (%){ci}")
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


def distribution_table(dists: Sequence[VerdictDistribution]) -> Table:
    """Render verdict distributions as a rich table (Table 5 shape; % of claims)."""
    from rich.table import Table

    shown = [v for v in Verdict if v is not Verdict.OUT_OF_SCOPE] + (
        [Verdict.OUT_OF_SCOPE] if any(d.counts[Verdict.OUT_OF_SCOPE] for d in dists) else []
    )
    table = Table(title="Verdict distribution (% of claims)")
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
            if ci is not None and ci.warning:  # every interval the table shows
                warned.setdefault(ci.warning, set()).add(f"{r.system}/{r.mapping}:{_SHORT[name]}")
        if r.n_unlabelled and r.mapping == report.results[0].mapping:
            out.append(subset_note(r.system, r.level.value, r.n, r.n_unlabelled))
    for reason, where in sorted(reasons.items()):
        out.append(f"– undefined ({reason}): {listed(sorted(where))}")
    if report.without_claims:
        by_system: dict[str, int] = {}
        for m in report.without_claims:
            by_system[m.system] = by_system.get(m.system, 0) + 1
        policy = report.results[0].without_claims_policy if report.results else None
        action = "counted as no error" if policy is WithoutClaimsPolicy.NO_ERROR else "left out"
        per_system = ", ".join(f"{s}: {n}" for s, n in sorted(by_system.items()))
        out.append(f"labelled sentences without claims ({action}): {per_system}")
    if warned:
        out.append(
            f"{WARNED} after an interval: it may not cover (small sample, boundary or zero "
            "width); the CI warnings below say why"
        )
    for warning, where in sorted(warned.items()):
        out.append(f"– CI warning ({warning}): {listed(sorted(where))}")
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


def coverage_table(report: MetricsReport) -> Table | None:
    """Per system: labelled questions and sentences, and how many were counted (or None).

    Sentence level only (the units counted are labelled sentences); the counts are those of
    the first mapping (every mapping counts the same units).
    """
    from rich.table import Table

    rows = coverage_rows(r.flat() for r in report.results)
    if not rows:
        return None
    table = Table(title="Coverage: labelled questions and sentences per system")
    for col in rows[0]:
        table.add_column(col, justify="left" if col in ("system", "not counted") else "right")
    for row in rows:
        table.add_row(*(str(v) for v in row.values()))
    return table


def _handle(request: MetricsRequest, fmt: OutputFormat, raw_csv: bool) -> None:
    raw_csv_cells(raw_csv)
    if fmt is not OutputFormat.TABLE:
        request = request.model_copy(update={"out_format": fmt.value})
    result = request.run()
    # the first line says what was assumed (printed JSON or CSV carries it as fields)
    assumed = result.assumed
    if result.written is not None:
        for line in result.lines():
            typer.echo(line)
    elif result.text is not None:
        sys.stdout.write(result.text)
        for said in (result.read, result.dropped):  # the rows printed hold no field for them
            if said:
                typer.echo(said, err=True)
    elif result.report is None or request.verdicts:
        if assumed:  # how true/false verdicts were read
            typer.echo(assumed)
        if result.dropped:
            typer.echo(result.dropped)
        make_console().print(distribution_table(result.distributions))
    else:
        if assumed:
            typer.echo(assumed)
        if result.coverage:  # the next line: how many units the labels leave out
            typer.echo(result.coverage)
        if result.dropped:  # and the rows the ingest left out
            typer.echo(result.dropped)
        console = make_console()
        console.print(metrics_table(result.report))
        cover = coverage_table(result.report)
        if cover is not None:
            console.print(cover)
        console.print(distribution_table(result.report.distributions))
        for line in notes(result.report):
            console.print(line, highlight=False)


add_command(app, MetricsRequest, _handle, extra=[FORMAT_PARAM, RAW_CSV])
