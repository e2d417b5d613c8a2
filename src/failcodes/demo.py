"""The offline demo: a list of named steps over the bundled real data (no key, no network).

``failcodes demo [-o reports/demo]`` runs :data:`STEPS` in order. Each step gets the shared
:class:`DemoContext` (output folder, loaded datasets, results of earlier steps under
``ctx.results``) and returns a :class:`StepOutput` (lines, DataFrames and files written); the
CLI prints it. Steps never print.

To add a step (other features): write ``def _my_step(ctx: DemoContext) -> StepOutput`` here
(or in your module), keep it small and fast, and append ``DemoStep("name", "what it shows",
_my_step)`` to :data:`STEPS`. Bundled datasets are loaded by :data:`BUNDLED_DATASETS`; a
dataset whose bundled files are absent is skipped (and said so), so the demo works with
whatever is bundled.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from failcodes import codebook, io
from failcodes.disagreements import (
    Disagreement,
    count_by_kind,
    find_disagreements,
    write_disagreements,
)
from failcodes.io import AtomicBatch
from failcodes.labels import Label
from failcodes.mapping import resolve_mappings
from failcodes.metrics import METRICS, MetricsReport, compute_metrics, distributions_dataframe
from failcodes.report.codebook_table import render_codebook_table
from failcodes.traces import Trace
from failcodes.verdicts import Verdict

DEFAULT_OUT = Path("reports") / "demo"

#: Mappings, resamples and seed the demo reports (seed 001's Table 2 mappings).
DEMO_MAPPINGS: tuple[str, ...] = ("refuted", "refuted+no_evidence", "non_supported")
DEMO_BOOTSTRAP = 1000
DEMO_SEED = 0


@dataclass
class Dataset:
    """A bundled dataset as core models."""

    name: str
    traces: list[Trace]
    labels: list[Label]
    source: str = ""


@dataclass
class DemoContext:
    """State shared by the steps of one demo run."""

    out_dir: Path
    datasets: dict[str, Dataset] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepOutput:
    """What a step reports: text lines, titled tables and the files it wrote."""

    lines: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class DemoStep:
    """One named demo step."""

    name: str
    description: str
    run: Callable[[DemoContext], StepOutput]


# ---------------------------------------------------------------------------- datasets


def _scifact() -> Dataset | None:
    from failcodes.ingest import scifact

    root = scifact.bundled_dir()
    if not (root / "claims_dev.jsonl").is_file():
        return None
    traces, labels = scifact.load(root)
    return Dataset(
        "scifact-dev",
        traces,
        labels,
        "SciFact dev claims (CC BY 4.0) x 4 MultiVerS checkpoints' predictions; "
        "has_error = gold CONTRADICT",
    )


def _adapter_dataset(
    name: str, adapter: str, folder: str, file: str, source: str
) -> Dataset | None:
    from failcodes import bundled
    from failcodes.ingest import AdapterOptions, get_adapter

    if folder not in bundled.names():
        return None
    result = get_adapter(adapter).read([bundled.path(folder, file)], AdapterOptions())
    notes = "; ".join(result.notes)
    return Dataset(name, result.traces, result.labels, f"{source}; {notes}" if notes else source)


def _ragchecker() -> Dataset | None:
    return _adapter_dataset(
        "ragchecker-example",
        "ragchecker",
        "ragchecker",
        "checking_outputs.json",
        "RAGChecker example checking outputs (Apache-2.0); labels from answer2response",
    )


def _medexpert() -> Dataset | None:
    return _adapter_dataset(
        "medexpert-sample",
        "medexpert",
        "medexpert-sample",
        "sample_data_export_from_JSL.json",
        "MedExpert sample (MIT): clinician error spans -> sentence labels, no system traces yet",
    )


#: Loaders of bundled datasets, in demo order; each returns None when its files are absent.
BUNDLED_DATASETS: list[tuple[str, Callable[[], Dataset | None]]] = [
    ("scifact-dev", _scifact),
    ("ragchecker-example", _ragchecker),
    ("medexpert-sample", _medexpert),
]


# ---------------------------------------------------------------------------- steps


def _ingest(ctx: DemoContext) -> StepOutput:
    out = StepOutput()
    for name, loader in BUNDLED_DATASETS:
        ds = loader()
        if ds is None:
            out.lines.append(f"{name}: not bundled, skipped")
            continue
        ctx.datasets[ds.name] = ds
        folder = ctx.out_dir / "data"
        with AtomicBatch() as batch:
            if ds.traces:
                out.files += io.write_traces(
                    folder / f"{ds.name}.traces.jsonl", ds.traces, batch=batch
                )
            io.write_labels(folder / f"{ds.name}.labels.jsonl", ds.labels, batch=batch)
        out.files.append(folder / f"{ds.name}.labels.jsonl")
        systems = sorted({t.system for t in ds.traces})
        n_err = sum(lab.has_error for lab in ds.labels)
        out.lines.append(
            f"{ds.name}: {len(ds.traces)} traces of {len(systems)} system(s), "
            f"{len(ds.labels)} labels ({n_err} has_error) — {ds.source}"
        )
    return out


def _format_report(report: MetricsReport) -> pd.DataFrame:
    rows = []
    for r in report.results:
        row: dict[str, object] = {"system": r.system, "mapping": r.mapping, "n": r.n}
        row.update({"TP": r.tp, "FP": r.fp, "FN": r.fn, "TN": r.tn})
        for name in ("precision", "recall", "f1"):
            est, ci = r.metrics[name], r.intervals.get(name)
            text = "–" if est.value is None else f"{100 * est.value:.1f}"
            if est.value is not None and ci is not None and ci.low is not None:
                assert ci.high is not None
                text += f" [{100 * ci.low:.1f}, {100 * ci.high:.1f}]"
            row[{"precision": "P", "recall": "R", "f1": "F1"}[name]] = text
        rows.append(row)
    return pd.DataFrame(rows)


def _metrics(ctx: DemoContext) -> StepOutput:
    out = StepOutput()
    maps = resolve_mappings(DEMO_MAPPINGS)
    reports: dict[str, MetricsReport] = {}
    for name, ds in ctx.datasets.items():
        if not ds.traces:
            out.lines.append(f"{name}: labels only (no system traces bundled), no metrics")
            continue
        report = compute_metrics(
            ds.traces, ds.labels, maps, bootstrap=DEMO_BOOTSTRAP, seed=DEMO_SEED
        )
        reports[name] = report
        path = ctx.out_dir / "metrics" / f"{name}.json"
        with AtomicBatch() as batch:
            tmp = batch.stage(path)
            tmp.write_text(
                json.dumps([r.flat() for r in report.results], indent=2, allow_nan=False) + "\n",
                encoding="utf-8",
            )
            csv_path = path.with_suffix(".csv")
            report.to_dataframe().to_csv(batch.stage(csv_path), index=False)
            dist_path = path.with_name(f"{name}.verdicts.csv")
            distributions_dataframe(report.distributions).to_csv(
                batch.stage(dist_path), index=False
            )
        out.files += [path, csv_path, dist_path]
        ci = f"{DEMO_BOOTSTRAP} question resamples, seed {DEMO_SEED}"
        out.tables.append(
            (f"{name}: sentence-level P/R/F1 (%), 95% CI from {ci}", _format_report(report))
        )
        dist = pd.DataFrame(
            [
                {"system": d.system, "claims": d.n_claims}
                | {
                    v.value: round(100 * (d.proportions[v].value or 0.0), 1)
                    for v in Verdict
                    if v is not Verdict.OUT_OF_SCOPE or d.counts[v]
                }
                for d in report.distributions
            ]
        )
        out.tables.append((f"{name}: verdict distribution (% of claims)", dist))
        undefined = sorted(
            {
                f"{r.system}/{r.mapping} {m}: {r.metrics[m].undefined_reason}"
                for r in report.results
                for m in ("precision", "recall", "f1")
                if r.metrics[m].undefined_reason
            }
        )
        out.lines += [f"{name}: undefined {u}" for u in undefined]
    ctx.results["metrics"] = reports
    out.lines.append(f"metrics (all {len(METRICS)} metrics + CIs) as JSON and CSV")
    return out


def _disagreements(ctx: DemoContext) -> StepOutput:
    out = StepOutput()
    found: dict[str, list[Disagreement]] = {}
    for name, ds in ctx.datasets.items():
        if not ds.traces:
            continue
        items = find_disagreements(ds.traces, ds.labels, "refuted")
        found[name] = items
        path = write_disagreements(ctx.out_dir / "disagreements" / f"{name}.jsonl", items)
        out.files.append(path)
        counts = count_by_kind(items)
        for system in sorted({t.system for t in ds.traces}):
            counts.setdefault((system, "refuted"), {"FN": 0, "FP": 0})
        out.tables.append(
            (
                f"{name}: disagreements under the 'refuted' mapping",
                pd.DataFrame(
                    [
                        {"system": s, "mapping": m, "FN (missed)": c["FN"], "FP": c["FP"]}
                        for (s, m), c in sorted(counts.items())
                    ]
                ),
            )
        )
    ctx.results["disagreements"] = found
    return out


def _codebook(ctx: DemoContext) -> StepOutput:
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


def _ragchecker_traces() -> list[Trace]:
    """Traces of the bundled RAGChecker example (claims x retrieved chunks), if bundled."""
    from failcodes import bundled
    from failcodes.errors import ConfigError
    from failcodes.ingest import get_adapter
    from failcodes.ingest.base import AdapterOptions

    try:
        path = bundled.path("ragchecker", "checking_outputs.json")
    except ConfigError:
        return []
    return get_adapter("ragchecker").read([path], AdapterOptions()).traces


def _write_csv(frame: pd.DataFrame, path: Path) -> Path:
    with AtomicBatch() as batch:
        frame.to_csv(batch.stage(path), index=False)
    return path


def _judge(ctx: DemoContext) -> StepOutput:
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
        rag = _ragchecker_traces()
        if rag:
            sources.append(("ragchecker-example", rag, None))
    coder = OfflineCoder()
    for name, traces, items in sources:
        run = ctx.out_dir / "judge" / name
        r_units = retrieval_units(traces)
        v_units = verification_units(traces)
        r_ann = v_ann = []
        if r_units:
            run_judge(r_units, coder, cb, UnitKind.RETRIEVAL, run_dir=run / "retrieval")
            r_ann = read_annotations(run / "retrieval")
        if v_units:
            run_judge(v_units, coder, cb, UnitKind.VERIFICATION, run_dir=run / "reasoning")
            v_ann = read_annotations(run / "reasoning")
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
            out.files.append(_write_csv(pt, run / "per_trace.csv"))
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
        out.files.append(_write_csv(pp, run / "per_passage.csv"))
        out.tables.append(
            (
                f"{name}: five-dimension all-high rate per retriever (heuristic baseline)",
                attr.all_high_rate(pp),
            )
        )
        items_or_traces: list[Disagreement] | list[Trace] = items if items is not None else traces
        attributed = attr.attribute(items_or_traces, r_ann, cb)
        table = attr.attribution_table(attributed)
        path = ctx.out_dir / "judge" / name / "attribution.csv"
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


def _scale(ctx: DemoContext) -> StepOutput:
    """Dry run of an LLM judge over the judged retrieval units: dedup, grouping, cache, batch."""
    from failcodes import codebook
    from failcodes.judge.engine import JudgeEngine
    from failcodes.judge.estimate import PricingOnlyCoder, ScaleOptions, estimate_scale
    from failcodes.judge.journal import Journal
    from failcodes.judge.pricing import load_prices
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
    journal = Journal(ctx.out_dir / "scale" / "dry-run")
    try:
        engine = JudgeEngine(
            PricingOnlyCoder(spec), cb, UnitKind.RETRIEVAL, journal=journal, prices=load_prices()
        )
        modes = {
            "one call per unit": ScaleOptions(),
            "grouped by claim": ScaleOptions(group_by_claim=True),
            "batch": ScaleOptions(batch=True),
            "cascade (offline first) + batch": ScaleOptions(
                batch=True, cascade_first=OfflineCoder()
            ),
        }
        rows = []
        for mode, opts in modes.items():
            est = estimate_scale(engine, units, opts)
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
    finally:
        journal.close()
    table = pd.DataFrame(rows)
    out.files.append(_write_csv(table, ctx.out_dir / "scale" / "dry_run.csv"))
    out.lines.append(
        f"dry run (no key, no call) of {spec} at list prices over the judged retrieval units; "
        "the cascade's first judge is the offline heuristic baseline"
    )
    out.tables.append((f"estimated cost of coding with {spec}", table))
    return out


def _agreement(ctx: DemoContext) -> StepOutput:
    """Inter-annotator agreement on RAGChecker's meta-evaluation labels (bundled)."""
    from failcodes import bundled
    from failcodes.errors import ConfigError
    from failcodes.stats.tables import agreement_table, ratings_from_frame, read_ratings_frame

    out = StepOutput()
    try:
        path = bundled.path("ragchecker", "meta_eval_human_labels.csv")
    except ConfigError:
        out.lines.append("ragchecker meta-evaluation labels: not bundled, skipped")
        return out
    frame = read_ratings_frame(path)
    rows: list[dict[str, Any]] = []
    for dim, part in frame.groupby("dimension", sort=False):
        table = ratings_from_frame(
            part, unit_column="instance_id", raters=["annotator_1", "annotator_2"], source=path
        )
        results = agreement_table(
            table,
            ["percent", "cohen", "gwet_ac1", "pabak"],
            n_bootstrap=DEMO_BOOTSTRAP,
            seed=DEMO_SEED,
        ) + agreement_table(
            table,
            ["cohen", "krippendorff", "gwet_ac2"],
            level="ordinal",
            weights="quadratic",
            n_bootstrap=DEMO_BOOTSTRAP,
            seed=DEMO_SEED,
        )
        for res in results:
            rows.append({"dimension": dim, **res.model_dump()})
    dest = ctx.out_dir / "agreement" / "ragchecker_meta_eval.json"
    with AtomicBatch() as batch:
        batch.stage(dest).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    out.files.append(dest)
    out.lines.append(
        "RAGChecker meta-evaluation: 280 instances x 2 annotators, preference on -2..2; "
        f"95% bootstrap CIs over instances ({DEMO_BOOTSTRAP} resamples, seed {DEMO_SEED})"
    )
    table_df = pd.DataFrame(
        [
            {
                "dimension": r["dimension"],
                "statistic": r["statistic"]
                + (f" ({r['level']})" if r["statistic"] == "krippendorff" else ""),
                "weights": r["weights"],
                "value": None if r["value"] is None else round(r["value"], 3),
                "95% CI": "-"
                if r["ci_low"] is None
                else f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]",
                "units": r["n_units"],
            }
            for r in rows
        ]
    )
    out.tables.append(("agreement between the two human annotators", table_df))
    ctx.results["agreement"] = rows
    return out


def _rtv(ctx: DemoContext) -> StepOutput:
    """Reference retrieve-then-verify (seed 000) on the bundled hand-written document set."""
    from failcodes import bundled
    from failcodes.errors import ConfigError
    from failcodes.rtv.documents import load_documents
    from failcodes.rtv.evaluate import RtvConfig
    from failcodes.rtv.items import ROB2_ITEM, read_items
    from failcodes.rtv.judge import OfflineHeuristicJudge
    from failcodes.rtv.report import as_rows, evaluate_all, write_outputs

    out = StepOutput()
    try:
        root = bundled.path("rtv-example")
    except ConfigError:
        out.lines.append("rtv-example: not bundled, skipped")
        return out
    config = RtvConfig(chunk_size=200, overlap=50, k=2)
    run_result, results = evaluate_all(
        read_items(root / "items.jsonl"),
        load_documents(root / "docs"),
        OfflineHeuristicJudge(),
        config,
        ROB2_ITEM,
        (1, 2, 3),
    )
    written = write_outputs(ctx.out_dir / "rtv", run_result, results, ROB2_ITEM)
    out.files += list(written.values())
    out.lines.append(f"NOTE: {run_result.note}")
    out.lines.append(
        "2 invented trial excerpts, 10 RoB 2 answers of 2 invented models; chunks 200/50 "
        "characters (small documents), BM25 top 2; traces in rtv/traces.jsonl"
    )
    table = pd.DataFrame(as_rows(run_result)).round(3)
    out.tables.append(("RtV evidence support and hallucination (heuristic baseline judge)", table))
    ctx.results["rtv"] = run_result
    return out


def _saturation(ctx: DemoContext) -> StepOutput:
    from failcodes.saturation.demo_step import saturation_step

    return saturation_step(ctx)


def _compare(ctx: DemoContext) -> StepOutput:
    """Seed 001 appendix A.9 on the demo systems: Cochran's Q, Holm-adjusted McNemar, F1."""
    from failcodes.errors import StatisticsError
    from failcodes.stats.classification import compare_against_truth
    from failcodes.stats.tables import paired_outcomes_from_traces

    out = StepOutput()
    for name, ds in ctx.datasets.items():
        try:
            paired = paired_outcomes_from_traces(ds.traces, ds.labels, "refuted")
        except StatisticsError as exc:
            out.lines.append(f"{name}: no system comparison ({exc})")
            continue
        results = compare_against_truth(
            paired.truth,
            paired.predictions,
            paired.systems,
            metrics=("recall", "f1"),
            n_resamples=DEMO_BOOTSTRAP,
            seed=DEMO_SEED,
        )
        rows = [r.model_dump() for r in results]
        dest = ctx.out_dir / "comparisons" / f"{name}.json"
        with AtomicBatch() as batch:
            batch.stage(dest).write_text(
                json.dumps({"systems": paired.systems, "tests": rows}, indent=2) + "\n",
                encoding="utf-8",
            )
        out.files.append(dest)
        out.tables.append(
            (
                f"{name}: Cochran's Q and pairwise McNemar on the labelled errors (recall), "
                f"paired permutation tests of recall and F1 ({DEMO_BOOTSTRAP} permutations), "
                "Holm-adjusted",
                pd.DataFrame(
                    [
                        {
                            "test": r.test,
                            "comparison": r.comparison,
                            "statistic": None if r.statistic is None else round(r.statistic, 3),
                            "p": None if r.p_value is None else round(r.p_value, 4),
                            "p (Holm)": None if r.p_holm is None else round(r.p_holm, 4),
                        }
                        for r in results
                    ]
                ),
            )
        )
    return out


def _report(ctx: DemoContext) -> StepOutput:
    """The HTML report over everything the earlier steps wrote (tables, figures, metadata)."""
    from failcodes.report.build import build_report
    from failcodes.report.rundir import load_run_dir

    out = StepOutput()
    inputs = load_run_dir(ctx.out_dir)
    index = build_report(inputs, ctx.out_dir / "report")
    n_tables = len(list((ctx.out_dir / "report" / "tables").glob("*.md")))
    n_figures = len(list((ctx.out_dir / "report" / "figures").glob("*.png")))
    out.lines.append(
        f"report: {n_tables} tables (md, tex, csv) and {n_figures} figures (png, pdf); "
        "open the page in a browser (self-contained, works offline)"
    )
    out.files.append(index)
    ctx.results["report"] = index
    return out


def _scifact_benchmark(ctx: DemoContext) -> StepOutput:
    """SciFact closed benchmark: official evaluator + rationale evidence P/R@k per system."""
    from failcodes.benchmarks import run as bench
    from failcodes.ingest.scifact import bundled_dir

    out = StepOutput()
    root = bundled_dir()
    if not (root / "claims_dev.jsonl").is_file():
        out.lines.append("scifact: not bundled, skipped")
        return out
    fixture = bench.scifact_fixture(root)
    expected = json.loads(
        (root / "evaluator_fixture" / "expected_metrics_small.json").read_text(encoding="utf-8")
    )
    official = bench.scifact_official(root)
    evidence = bench.scifact_evidence(root, (1, 3, 5))
    dest = ctx.out_dir / "benchmarks" / "scifact.json"
    payload = {
        "fixture": fixture,
        "fixture_matches_official": fixture == expected,
        "official": official,
        "evidence_at_k": evidence,
    }
    with AtomicBatch() as batch:
        batch.stage(dest).write_text(json.dumps(payload, indent=2), encoding="utf-8")
    out.files.append(dest)
    out.lines.append(
        "scifact-evaluator fixture reproduced exactly: "
        + ("yes" if fixture == expected else "NO (bug)")
        + "; MultiVerS labels mapped REFUTE->CONTRADICT, NEI abstracts dropped"
    )
    keep = (
        "abstract_label_only_f1",
        "abstract_rationalized_f1",
        "sentence_selection_f1",
        "sentence_label_f1",
    )
    out.tables.append(
        (
            "official SciFact metrics (dev, oracle abstracts) per MultiVerS checkpoint",
            pd.DataFrame(
                [{"system": r["system"], **{k: round(r[k], 3) for k in keep}} for r in official]
            ),
        )
    )
    out.tables.append(
        (
            "rationale-sentence evidence precision/recall@k (macro over claims)",
            pd.DataFrame(
                [
                    {
                        "system": r["system"],
                        "k": r["k"],
                        "precision@k": None
                        if r["precision_at_k"] is None
                        else round(r["precision_at_k"], 3),
                        "recall@k": None
                        if r["recall_at_k"] is None
                        else round(r["recall_at_k"], 3),
                    }
                    for r in evidence
                ]
            ),
        )
    )
    ctx.results["scifact_benchmark"] = payload
    return out


def _labelstudio(ctx: DemoContext) -> StepOutput:
    """Label Studio review files for the judged units: labeling configs and task files."""
    from failcodes import codebook
    from failcodes.labelstudio import build_tasks, labeling_config, select_judged
    from failcodes.labelstudio.files import write_json_atomic, write_text_atomic
    from failcodes.units import UnitKind

    out = StepOutput()
    cb = codebook.bundled()
    folder = ctx.out_dir / "labelstudio"
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


#: The demo, in order. Append your step here (see module docstring).
STEPS: list[DemoStep] = [
    DemoStep("ingest", "load the bundled datasets and write them as traces + labels", _ingest),
    DemoStep("metrics", "metrics with bootstrap CIs per system x mapping", _metrics),
    DemoStep("disagreements", "write the FN/FP table (input of the judge)", _disagreements),
    DemoStep("codebook", "validate the bundled codebook and write its table", _codebook),
    DemoStep(
        "judge",
        "offline heuristic-baseline judge codes passages and reasoning; attribution",
        _judge,
    ),
    DemoStep(
        "scale",
        "dry run of an LLM judge: dedup, grouping, prompt caching, batch, cascade (no calls)",
        _scale,
    ),
    DemoStep(
        "agreement",
        "inter-annotator agreement (kappa, alpha, AC1/AC2, PABAK) on RAGChecker labels",
        _agreement,
    ),
    DemoStep(
        "saturation",
        "one codebook saturation round (offline heuristic baseline); review file for a human",
        _saturation,
    ),
    DemoStep("rtv", "reference retrieve-then-verify (heuristic baseline judge)", _rtv),
    DemoStep(
        "scifact-benchmark",
        "official SciFact evaluator and evidence P/R@k for the four MultiVerS systems",
        _scifact_benchmark,
    ),
    DemoStep(
        "labelstudio",
        "Label Studio labeling configs and review tasks for the judged units (no server)",
        _labelstudio,
    ),
    DemoStep("compare", "Cochran's Q, McNemar and F1/recall tests between systems", _compare),
    DemoStep("report", "HTML report with paper tables and figures", _report),
]


def run_demo(
    out_dir: str | Path = DEFAULT_OUT, steps: Sequence[DemoStep] | None = None
) -> Iterator[tuple[DemoStep, StepOutput]]:
    """Run the demo steps in order, yielding each step with its output as it finishes."""
    ctx = DemoContext(out_dir=Path(out_dir))
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    for step in STEPS if steps is None else steps:
        yield step, step.run(ctx)
