"""Demo steps: codebook table, scale dry run of an LLM judge, Label Studio task files."""

from __future__ import annotations

from typing import Any

import pandas as pd

from failcodes import codebook
from failcodes.demo._base import DemoContext, StepOutput, write_csv
from failcodes.fileio import AtomicBatch, atomic_write_text, write_json
from failcodes.judge import Batch, Cascade, Grouped, JudgeJob, Mode, PerUnit, PricingOnlyCoder
from failcodes.judge.providers.offline import OfflineCoder
from failcodes.labelstudio import build_tasks, labeling_config, select_judged
from failcodes.report.codebook_table import render_codebook_table
from failcodes.study.layout import StudyLayout
from failcodes.units import UnitKind


def codebook_step(ctx: DemoContext) -> StepOutput:
    """Validate the bundled codebook lineage and write the default's table (Markdown, LaTeX).

    Also says which versions let codes co-occur (multi-label dimensions), and how the
    default departs from the seed there.
    """
    out = StepOutput()
    lineage = codebook.load_lineage(codebook.bundled_dir(), codebook.DEFAULT_NAME)
    cb = codebook.bundled()
    ctx.results["codebook"] = cb
    n_subcodes = sum(len(dim.subcodes) for _, dim in cb.dimensions())
    out.lines.append(
        f"{cb.id} valid ({len(lineage)} version(s), {cb.id} the default); hash "
        f"{cb.hash[:12]}; {sum(1 for _ in cb.dimensions())} dimensions, {n_subcodes} subcodes, "
        f"{len(cb.leaf_parents())} leaves"
    )
    for book in lineage:
        multi = [d.id for _, d in book.dimensions() if d.multi_label]
        out.lines.append(
            f"  {book.id}: "
            + (
                f"codes may co-occur on {', '.join(multi)} (multi-label, as seed 001 Table 9)"
                if multi
                else "single-label everywhere (departs from seed 001, where the low-quality "
                "codes of one reasoning step may co-occur; see docs/codebook.md)"
            )
        )
    with AtomicBatch() as batch:
        for suffix, fmt in (("md", "md"), ("tex", "latex")):
            dest = ctx.out_dir / "codebook" / f"codebook.{suffix}"
            batch.stage(dest).write_text(render_codebook_table(cb, fmt), encoding="utf-8")
            out.files.append(dest)
    return out


def scale_step(ctx: DemoContext) -> StepOutput:
    """Dry run of an LLM judge over the judged retrieval units: dedup, grouping, cache, batch."""
    from failcodes.judge import estimate_run

    out = StepOutput()
    spec = "openai:gpt-5-mini"
    cb = codebook.bundled()
    units = [
        u for runs in ctx.results.get("judge", {}).values() for u in runs[UnitKind.RETRIEVAL][0]
    ]
    if not units:
        out.lines.append("no retrieval units were judged: nothing to estimate")
        return out
    modes: dict[str, Mode] = {
        "one call per unit": PerUnit(),
        "grouped by claim": Grouped(),
        "batch": Batch(),
        "cascade (offline first) + batch": Cascade(OfflineCoder(), Batch()),
    }
    rows = []
    for mode, run_mode in modes.items():
        job = JudgeJob(cb, UnitKind.RETRIEVAL, ctx.out_dir / "scale" / "dry-run", mode=run_mode)
        est = estimate_run(units, PricingOnlyCoder(spec), job)
        rows.append(
            {
                "mode": mode,
                "rows": est.rows,
                "units": est.units,
                "to_judge": est.to_judge,
                "calls": est.calls,
                "input_tokens": est.input_tokens,
                "cached_input_tokens": est.cached_input_tokens,
                "output_tokens": est.output_tokens,
                "cost_usd": round(est.cost_usd or 0.0, 4),
                "naive_cost_usd": round(est.naive_cost_usd or 0.0, 4),
            }
        )
    table = pd.DataFrame(rows)
    out.files.append(write_csv(table, ctx.out_dir / "scale" / "dry_run.csv"))
    out.lines.append(
        f"dry run (no key, no call) of {spec} at list prices over the judged retrieval units; "
        "the cascade's first judge is the offline heuristic baseline"
    )
    out.tables.append((f"estimated cost of coding with {spec}", table))
    return out


def labelstudio_step(ctx: DemoContext) -> StepOutput:
    """Label Studio review files for the judged units: labeling configs and task files."""
    out = StepOutput()
    cb = codebook.bundled()
    folder = StudyLayout.of(ctx.out_dir).labelstudio_dir
    judged: dict[str, Any] = ctx.results.get("judge", {})
    if not judged:
        out.lines.append("labelstudio: no judged units (the judge step wrote none)")
        return out
    for kind in UnitKind:
        path = atomic_write_text(folder / f"{kind.value}.config.xml", labeling_config(cb, kind))
        out.files.append(path)
    for name, by_kind in judged.items():
        for kind, (units, judge_anns) in by_kind.items():
            if not units:
                continue
            tasks = build_tasks(units, cb, kind, select_judged(judge_anns, cb))
            path = write_json(folder / name / f"{kind.value}.tasks.json", tasks)
            out.files.append(path)
            with_pred = sum(1 for t in tasks if "predictions" in t)
            out.lines.append(
                f"{name}: {len(tasks)} {kind.value} tasks, {with_pred} with the heuristic "
                "baseline's codes pre-selected as predictions"
            )
    out.lines.append(
        "import the tasks into a project using the matching config (or run "
        "`failcodes labelstudio push` against a server)"
    )
    return out
