"""Demo step: the HTML report over everything the earlier steps wrote."""

from __future__ import annotations

from failcodes.demo._base import DemoContext, StepOutput
from failcodes.study.layout import StudyLayout


def report_step(ctx: DemoContext) -> StepOutput:
    """The HTML report over everything the earlier steps wrote (tables, figures, metadata)."""
    from failcodes.report.build import build_report
    from failcodes.report.rundir import load_run_dir

    out = StepOutput()
    inputs = load_run_dir(ctx.out_dir)
    index = build_report(inputs, StudyLayout.of(ctx.out_dir).report_dir)
    n_tables = len(list((index.parent / "tables").glob("*.md")))
    n_figures = len(list((index.parent / "figures").glob("*.png")))
    out.lines.append(
        f"report: {n_tables} tables (md, tex, csv) and {n_figures} figures (png, pdf); "
        "open the page in a browser (self-contained, works offline)"
    )
    out.files.append(index)
    ctx.results["report"] = index
    return out
