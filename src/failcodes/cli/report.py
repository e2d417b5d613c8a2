"""``failcodes report RUN_DIR -o reports/NAME/``: tables, figures and a self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from failcodes.cli.main import app


@app.command("report")
def report(
    run_dir: Annotated[
        Path, typer.Argument(help="A study folder (docs/study.md), e.g. the demo's.")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Output folder of the report (default: the study's report/ for a study "
            "folder, else reports/report).",
        ),
    ] = None,
    codebook: Annotated[
        Path | None,
        typer.Option(
            "--codebook", help="Codebook YAML the annotations were made under (if not bundled)."
        ),
    ] = None,
) -> None:
    """Write paper tables (md, tex, csv), figures (png, pdf) and index.html for a run."""
    from failcodes import codebook as codebooks
    from failcodes.report.build import build_report
    from failcodes.report.corrected import corrected_notes_key
    from failcodes.report.rundir import load_run_dir
    from failcodes.study.layout import StudyLayout
    from failcodes.units import UnitKind

    layout = StudyLayout.of(run_dir)
    if out is None:
        out = layout.report_dir if layout.study_file.is_file() else Path("reports") / "report"
    cb = codebooks.load(codebook) if codebook is not None else None
    inputs = load_run_dir(run_dir, codebook=cb)
    index = build_report(inputs, out)
    typer.echo(f"report: {index}")
    for kind in UnitKind:  # a stale review plan: the report is built, uncorrected; say how to fix
        for line in inputs.notes.get(corrected_notes_key(kind), []):
            typer.echo(line, err=True)
