"""Demo step: the bundled data as a study, run through the same commands as ``failcodes run``.

The demo's output folder is a study folder (docs/study.md): this step writes its study file
(:data:`DEMO_STUDY`: SciFact dev x four MultiVerS checkpoints, whose verifier was *given*
the cited abstracts, so ``evidence = "provided"``; the RAGChecker example with retrieved
chunks; the MedExpert sample's clinician labels) and runs ingest -> metrics ->
disagreements -> judge (offline heuristic baseline) -> attribute exactly as ``failcodes run``
does (the report comes last, after the demo's extra steps). Then it loads what the commands
wrote for the later demo steps.
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from failcodes import labelio, traceio
from failcodes.codebook import UnitKind
from failcodes.csvcells import read_frame
from failcodes.demo._base import (
    DEMO_BOOTSTRAP,
    DEMO_MAPPINGS,
    DEMO_SEED,
    Dataset,
    DemoContext,
    StepOutput,
)
from failcodes.disagreements import count_by_kind
from failcodes.errors import listed
from failcodes.fileio import atomic_write_text
from failcodes.judge.run import read_annotations
from failcodes.labelscope import assumptions_line, shape_of_rows
from failcodes.metrics import SHORT, WARNED
from failcodes.study.config import load_study
from failcodes.study.layout import StudyLayout
from failcodes.study.runner import Outcome, log_path, run_request, run_steps
from failcodes.study.steps import plan_study
from failcodes.units import build_units, disagreement_traces

#: The demo's study file, ``demo/study.toml`` beside this module (``{codebook}``,
#: ``{mappings}``, ``{bootstrap}`` and ``{seed}`` filled in by :func:`write_demo_study`).
DEMO_STUDY = (resources.files("failcodes.demo") / "study.toml").read_text(encoding="utf-8")


def write_demo_study(layout: StudyLayout) -> Path:
    """Write the demo's study file and codebook copy into ``layout`` (same text each time)."""
    from failcodes.study.create import bundled_codebook_file

    source = bundled_codebook_file()
    layout.root.mkdir(parents=True, exist_ok=True)
    if not (layout.root / source.name).is_file():
        shutil.copyfile(source, layout.root / source.name)
    text = DEMO_STUDY.format(
        codebook=source.name,
        mappings=json.dumps(list(DEMO_MAPPINGS)),
        bootstrap=DEMO_BOOTSTRAP,
        seed=DEMO_SEED,
    )
    current = layout.study_file.read_text(encoding="utf-8") if layout.study_file.is_file() else ""
    if current != text:
        atomic_write_text(layout.study_file, text)
    return layout.study_file


def _pct(row: dict[str, Any], name: str) -> str:
    value, low, high = row.get(name), row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    if value is None:
        return "–"
    text = f"{100 * value:.1f}"
    if low is None or high is None:
        return text
    # as `metrics` marks it: an interval that may not cover (zero width, boundary, few units)
    warned = WARNED if row.get(f"{name}_ci_warning") else ""
    return text + f" [{100 * low:.1f}, {100 * high:.1f}]{warned}"


def _warnings_lines(path: Path) -> list[str]:
    """What the table's marks mean, as ``metrics`` says it: each CI warning and its cells."""
    found: dict[str, list[str]] = {}
    for r in json.loads(path.read_text(encoding="utf-8")):
        for name in ("precision", "recall", "f1"):
            if r.get(name) is not None and r.get(f"{name}_ci_warning"):
                cell = f"{r['system']}/{r['mapping']}:{SHORT[name]}"
                found.setdefault(r[f"{name}_ci_warning"], []).append(cell)
    head = [f"{WARNED} after an interval: it may not cover (the CI warnings below say why)"]
    return [*head, *(f"– CI warning ({why}): {listed(c)}" for why, c in sorted(found.items()))]


def _metrics_table(path: Path) -> pd.DataFrame:
    rows = json.loads(path.read_text(encoding="utf-8"))
    return pd.DataFrame(
        [
            {
                "system": r["system"],
                "mapping": r["mapping"],
                "n": r["n"],
                "TP": r["tp"],
                "FP": r["fp"],
                "FN": r["fn"],
                "TN": r["tn"],
                "P": _pct(r, "precision"),
                "R": _pct(r, "recall"),
                "F1": _pct(r, "f1"),
            }
            for r in rows
        ]
    )


def study_step(ctx: DemoContext) -> StepOutput:
    """Write the demo's study file and run its steps (all but the report) as commands."""
    out = StepOutput()
    layout = StudyLayout.of(ctx.out_dir)
    out.files.append(write_demo_study(layout))
    study = load_study(layout.root)
    out.lines.append(
        f"study file {layout.study_file}: {len(study.datasets)} data sets; the commands below "
        f"are what `failcodes run {layout.root}` runs (its output per step: {layout.logs_dir}/)"
    )

    def plan() -> list[Any]:
        return [s for s in plan_study(study, layout) if s.name != "report"]

    def execute(step: Any) -> None:
        run_request(step, log_path(layout, step))

    for result in run_steps(plan, layout, execute):
        done = result.outcome is Outcome.SKIPPED
        out.lines.append(("(finished earlier) " if done else "$ ") + result.step.command())
        out.files += [p for p in result.step.outputs if p.is_file()]
    out.lines.append(
        "judge: offline = heuristic baseline (rule-based content-word/number overlap, negation "
        "and hedge cues, source metadata); its codes are not LLM or human judgements"
    )
    _load(ctx, study, layout, out)
    return out


def _load(ctx: DemoContext, study: Any, layout: StudyLayout, out: StepOutput) -> None:
    """Read what the commands wrote into the context the later demo steps use."""
    from failcodes.disagreementio import read_disagreements

    found: dict[str, Any] = {}
    judged: dict[str, Any] = {}
    for ds in study.datasets:
        traces = (
            traceio.read_traces(layout.traces(ds.name)) if layout.traces(ds.name).is_file() else []
        )
        labels = labelio.read_labels(layout.labels(ds.name))
        ctx.datasets[ds.name] = Dataset(ds.name, traces, labels, ds.description)
        n_err = sum(lab.has_error for lab in labels)
        systems = sorted({t.system for t in traces})
        out.lines.append(
            f"{ds.name}: {len(traces)} traces of {len(systems)} system(s), {len(labels)} labels "
            f"({n_err} has_error) — {ds.description}"
        )
        if layout.metrics(ds.name).is_file():
            shape = shape_of_rows(json.loads(layout.metrics(ds.name).read_text(encoding="utf-8")))
            if shape is not None:  # what the metrics assumed of the data (their first line)
                out.lines.append(f"{ds.name} metrics: {assumptions_line(shape)}")
            ci = f"{DEMO_BOOTSTRAP} question resamples, seed {DEMO_SEED}"
            out.tables.append(
                (
                    f"{ds.name}: sentence-level P/R/F1 (%), 95% CI from {ci}",
                    _metrics_table(layout.metrics(ds.name)),
                )
            )
            warned = _warnings_lines(layout.metrics(ds.name))
            if len(warned) > 1:
                out.lines += [f"{ds.name} metrics: {line}" for line in warned]
        if not layout.disagreements(ds.name).is_file():
            continue
        items = read_disagreements(layout.disagreements(ds.name))
        found[ds.name] = items
        counts = count_by_kind(items)
        out.tables.append(
            (
                f"{ds.name}: disagreements under the 'refuted' mapping",
                pd.DataFrame(
                    [
                        {"system": s, "mapping": m, "FN (missed)": c["FN"], "FP": c["FP"]}
                        for (s, m), c in sorted(counts.items())
                    ]
                ),
            )
        )
        dtraces = disagreement_traces(items)
        runs: dict[Any, Any] = {}
        for kind, unit_kind in (
            ("retrieval", UnitKind.RETRIEVAL),
            ("reasoning", UnitKind.VERIFICATION),
        ):
            run_dir = layout.judge_run(ds.name, kind)
            units = build_units(dtraces, unit_kind)
            anns = read_annotations(run_dir) if (run_dir / "annotations.jsonl").is_file() else []
            runs[unit_kind] = (units if anns else [], anns)
        judged[ds.name] = runs
        if layout.attribution_table(ds.name).is_file():
            att = read_frame(layout.attribution_table(ds.name))
            summary = att.groupby(["system", "stage"]).size().unstack(fill_value=0).reset_index()
            out.tables.append(
                (
                    f"{ds.name}: attribution of the disagreements (codes: heuristic baseline)",
                    summary,
                )
            )
    ctx.results["disagreements"] = found
    ctx.results["judge"] = judged
