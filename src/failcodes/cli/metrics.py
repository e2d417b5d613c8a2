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
from failcodes.labelscope import QUESTIONS_COUNTED, coverage_rows
from failcodes.verdicts import Verdict

if TYPE_CHECKING:  # rich's tables: imported where drawn (``--format json`` draws none)
    from rich.table import Table

    # (numpy: the metrics module is the command's, not its --help's)
    from failcodes.metrics import MetricResult, MetricsReport, VerdictDistribution


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _cell(result: MetricResult, name: str) -> str:
    from failcodes.metrics import WARNED

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

    from failcodes.metrics import METRICS, SHORT

    ci = ""
    if report.bootstrap is not None:
        b = report.bootstrap
        ci = f", {100 * b.confidence:g}% CI: {b.resamples} question resamples, seed {b.seed}"
    table = Table(title=f"{report.level.value}-level metrics (%){ci}")
    for col in ("system", "mapping", "n", "TP", "FP", "FN", "TN"):
        table.add_column(col, justify="left" if col in ("system", "mapping") else "right")
    for name in METRICS:
        table.add_column(SHORT[name], justify="right")
    for r in report.results:
        counts = map(str, (r.n, r.tp, r.fp, r.fn, r.tn))
        table.add_row(r.system, r.mapping, *counts, *(_cell(r, name) for name in METRICS))
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


def coverage_table(report: MetricsReport) -> Table | None:
    """Per system: labelled questions and sentences, and how many were counted (or None).

    Sentence level only (the units counted are labelled sentences); the counts are those of
    the first mapping (every mapping counts the same units).
    """
    from rich.table import Table

    rows = coverage_rows(r.flat() for r in report.results)
    if not rows:
        return None
    table = Table(
        title=f"Coverage: labelled questions and sentences per system ({QUESTIONS_COUNTED})"
    )
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
        for said in result.aside():  # the rows printed hold no field for them
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
        for line in result.later:
            console.print(line, highlight=False)


add_command(app, MetricsRequest, _handle, extra=[FORMAT_PARAM, RAW_CSV])
