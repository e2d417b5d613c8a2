"""``failcodes benchmark``: closed-benchmark evaluators (SciFact, COVID-Fact, HealthVer, atomic)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from failcodes.benchmarks import run as bench
from failcodes.cli.main import command_group
from failcodes.cli.options import int_list
from failcodes.cli.output_format import FormatOpt, OutputFormat, require_format

benchmark_app = command_group("benchmark")

KsOpt = Annotated[str, typer.Option("--k", help="Comma-separated cut-offs.")]


#: Bounds of --k: cut-offs past the longest retrieved list add nothing; each one is a pass.
MAX_K = 1000
MAX_KS = 20


def _ks(text: str) -> tuple[int, ...]:
    return int_list(text, "--k", high=MAX_K, most=MAX_KS)


def _fmt(x: object) -> str:
    return f"{x:.4f}" if isinstance(x, float) else ("-" if x is None else str(x))


def _emit(title: str, rows: list[dict[str, Any]], fmt: OutputFormat) -> None:
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="benchmark")
    if fmt is OutputFormat.JSON:
        typer.echo(json.dumps({"title": title, "rows": rows}, indent=2))
        return
    typer.echo(f"# {title}")
    if not rows:
        typer.echo("(no rows)")
        return
    cols = [c for c in rows[0] if not isinstance(rows[0][c], dict)]
    typer.echo("\t".join(cols))
    for r in rows:
        typer.echo("\t".join(_fmt(r[c]) for c in cols))


@benchmark_app.command("scifact")
def scifact_cmd(
    root: Annotated[
        Path | None, typer.Argument(help="SciFact folder (default: the bundled copy).")
    ] = None,
    k: KsOpt = "1,3,5",
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Official SciFact metrics + rationale evidence P/R@k of the four MultiVerS systems."""
    from failcodes.ingest.scifact import bundled_dir

    ks = _ks(k)  # before anything is printed
    base = root or bundled_dir()
    if fmt is OutputFormat.JSON:
        out = {
            "official": bench.scifact_official(base),
            "evidence": bench.scifact_evidence(base, ks),
            "fixture": bench.scifact_fixture(base)
            if (base / "evaluator_fixture").is_dir()
            else None,
        }
        typer.echo(json.dumps(out, indent=2))
        return
    _emit(
        "SciFact official evaluator (abstract / sentence P, R, F1)",
        bench.scifact_official(base),
        fmt,
    )
    _emit("Rationale-sentence evidence P/R/hit@k", bench.scifact_evidence(base, ks), fmt)
    if (base / "evaluator_fixture").is_dir():
        fx = bench.scifact_fixture(base)
        _emit("scifact-evaluator fixture (must equal expected_metrics_small.json)", [fx], fmt)


@benchmark_app.command("covidfact")
def covidfact_cmd(
    root: Annotated[Path, typer.Argument(help="COVID-Fact folder (or recall TSV).")],
    k: KsOpt = "1,3,5",
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Evidence P/R/hit@k of COVID-Fact's top-5 retrieval, plus the published recall flag."""
    _emit("COVID-Fact retrieval evidence", bench.covidfact_evidence(root, _ks(k)), fmt)


@benchmark_app.command("healthver")
def healthver_cmd(
    path: Annotated[Path, typer.Argument(help="healthver_dev.csv or healthver_test.csv.")],
    k: KsOpt = "1,3,5",
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Evidence P/R/hit@k of HealthVer's retrieved passages (gold = Supports/Refutes)."""
    _emit("HealthVer retrieved-passage evidence", bench.healthver_evidence(path, _ks(k)), fmt)


@benchmark_app.command("atomic")
def atomic_cmd(
    path: Annotated[Path, typer.Argument(help="Atomic fact-check JSONL (docs/atomic-format.md).")],
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Seed-003 metrics: sensitivity, precision, balanced accuracy, detection, outcomes, chunks."""
    rows = bench.atomic_rows(path)
    _emit("Atomic fact-check metrics", rows, fmt)
    if fmt is OutputFormat.JSON:
        return
    for r in rows:
        det = ", ".join(f"{c} {_fmt(v)}" for c, v in r["detection_rate"].items())
        out = ", ".join(f"{o} {_fmt(v)}" for o, v in r["outcome_shares"].items())
        typer.echo(f"{r['system']}: detection rate: {det}; answer outcomes: {out}")
