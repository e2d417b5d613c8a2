"""Demo steps: codebook, offline judge + attribution, scale dry run, saturation, Label Studio."""

from __future__ import annotations

from typing import Any

import pandas as pd

from failcodes import codebook
from failcodes.dataio import AtomicBatch
from failcodes.demo._base import DemoContext, StepOutput, write_csv
from failcodes.demo.datasets import ragchecker_traces
from failcodes.disagreements import Disagreement
from failcodes.report.codebook_table import render_codebook_table
from failcodes.study.layout import StudyLayout
from failcodes.traces import Trace


def codebook_step(ctx: DemoContext) -> StepOutput:
    """Validate the bundled codebook lineage and write its table (Markdown and LaTeX)."""
    out = StepOutput()
    lineage = codebook.load_lineage(codebook.bundled_dir(), codebook.DEFAULT_NAME)
    cb = lineage[-1]
    ctx.results["codebook"] = cb
    n_subcodes = sum(len(dim.subcodes) for _, dim in cb.dimensions())
    out.lines.append(
        f"{cb.id} valid ({len(lineage)} version(s)); hash {cb.hash[:12]}; "
        f"{sum(1 for _ in cb.dimensions())} dimensions, {n_subcodes} subcodes, "
        f"{len(cb.leaf_parents())} leaves"
    )
    with AtomicBatch() as batch:
        for suffix, fmt in (("md", "md"), ("tex", "latex")):
            dest = ctx.out_dir / "codebook" / f"codebook.{suffix}"
            batch.stage(dest).write_text(render_codebook_table(cb, fmt), encoding="utf-8")
            out.files.append(dest)
    return out


def judge_step(ctx: DemoContext) -> StepOutput:
    """Offline judge over the disagreements' passages and reasoning, then attribution."""
    from failcodes import attribution as attr
    from failcodes import codebook
    from failcodes.judge.providers.offline import OfflineCoder
    from failcodes.judge.run import read_annotations, run_judge
    from failcodes.units import (
        UnitKind,
        disagreement_traces,
        retrieval_units,
        verification_units,
    )

    out = StepOutput()
    out.lines.append(
        "judge: offline = heuristic baseline (rule-based content-word/number overlap, "
        "negation and hedge cues, source metadata); its codes are not LLM or human judgements"
    )
    cb = codebook.bundled()
    sources: list[tuple[str, list[Trace], list[Disagreement] | None]] = [
        (name, disagreement_traces(items), items)
        for name, items in ctx.results.get("disagreements", {}).items()
    ]
    if not any(t.passages for _, traces, _ in sources for t in traces):
        rag = ragchecker_traces()
        if rag:
            sources.append(("ragchecker-example", rag, None))
    coder = OfflineCoder()
    layout = StudyLayout.of(ctx.out_dir)
    for name, traces, items in sources:
        r_units = retrieval_units(traces)
        v_units = verification_units(traces)
        r_ann = v_ann = []
        if r_units:
            run_dir = layout.judge_run(name, "retrieval")
            run_judge(r_units, coder, cb, UnitKind.RETRIEVAL, run_dir=run_dir)
            r_ann = read_annotations(run_dir)
        if v_units:
            run_dir = layout.judge_run(name, "reasoning")
            run_judge(v_units, coder, cb, UnitKind.VERIFICATION, run_dir=run_dir)
            v_ann = read_annotations(run_dir)
        ctx.results.setdefault("judge", {})[name] = {
            UnitKind.RETRIEVAL: (r_units, r_ann),
            UnitKind.VERIFICATION: (v_units, v_ann),
        }
        out.lines.append(
            f"{name}: {len(traces)} traces -> {len(r_units)} distinct (claim, passage) units "
            f"and {len(v_units)} reasoning units coded by the heuristic baseline "
            f"({cb.name}@{cb.version})"
        )
        if v_ann:
            pt = attr.per_trace_steps(traces, v_ann, cb)
            out.files.append(write_csv(pt, layout.per_trace(name)))
            out.tables.append(
                (
                    f"{name}: six-step all-correct rate per verifier (heuristic baseline)",
                    attr.all_correct_rate(pt),
                )
            )
        if not r_units:
            out.lines.append(
                f"{name}: the traces carry no passage texts, so there is no retrieval coding "
                "and no attribution for them"
            )
            continue
        pp = attr.per_passage_codes(traces, r_ann, cb)
        out.files.append(write_csv(pp, layout.per_passage(name)))
        out.tables.append(
            (
                f"{name}: five-dimension all-high rate per retriever (heuristic baseline)",
                attr.all_high_rate(pp),
            )
        )
        items_or_traces: list[Disagreement] | list[Trace] = items if items is not None else traces
        attributed = attr.attribute(items_or_traces, r_ann, cb)
        table = attr.attribution_table(attributed)
        path = layout.attribution_table(name)
        with AtomicBatch() as batch:
            table.to_csv(batch.stage(path), index=False)
        out.files.append(path)
        out.tables.append(
            (
                f"{name}: attribution to retrieval or verification (codes: heuristic baseline)",
                attr.attribution_summary(attributed),
            )
        )
    return out


def scale_step(ctx: DemoContext) -> StepOutput:
    """Dry run of an LLM judge over the judged retrieval units: dedup, grouping, cache, batch."""
    from failcodes import codebook
    from failcodes.judge import (
        Batch,
        Cascade,
        Grouped,
        Mode,
        PerUnit,
        PricingOnlyCoder,
        estimate_run,
    )
    from failcodes.judge.providers.offline import OfflineCoder
    from failcodes.units import UnitKind

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
        est = estimate_run(
            units,
            PricingOnlyCoder(spec),
            cb,
            UnitKind.RETRIEVAL,
            run_dir=ctx.out_dir / "scale" / "dry-run",
            mode=run_mode,
        )
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


def saturation_step(ctx: DemoContext) -> StepOutput:
    """One offline saturation round; the review file is left for a human."""
    from failcodes.saturation.demo_step import saturation_step as one_round

    return one_round(ctx)


def labelstudio_step(ctx: DemoContext) -> StepOutput:
    """Label Studio review files for the judged units: labeling configs and task files."""
    from failcodes import codebook
    from failcodes.labelstudio import build_tasks, labeling_config, select_judged
    from failcodes.labelstudio.files import write_json_atomic, write_text_atomic
    from failcodes.units import UnitKind

    out = StepOutput()
    cb = codebook.bundled()
    folder = StudyLayout.of(ctx.out_dir).labelstudio_dir
    judged: dict[str, Any] = ctx.results.get("judge", {})
    if not judged:
        out.lines.append("labelstudio: no judged units (the judge step wrote none)")
        return out
    for kind in UnitKind:
        path = write_text_atomic(folder / f"{kind.value}.config.xml", labeling_config(cb, kind))
        out.files.append(path)
    for name, by_kind in judged.items():
        for kind, (units, judge_anns) in by_kind.items():
            if not units:
                continue
            tasks = build_tasks(units, cb, kind, select_judged(judge_anns, cb))
            path = write_json_atomic(folder / name / f"{kind.value}.tasks.json", tasks)
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
