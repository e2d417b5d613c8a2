"""Demo steps: ingest, metrics with CIs, disagreements, system comparisons."""

from __future__ import annotations

import json

import pandas as pd

from failcodes import dataio
from failcodes.dataio import AtomicBatch
from failcodes.demo._base import DEMO_BOOTSTRAP, DEMO_MAPPINGS, DEMO_SEED, DemoContext, StepOutput
from failcodes.demo.datasets import BUNDLED_DATASETS
from failcodes.disagreements import Disagreement, count_by_kind, find_disagreements
from failcodes.mapping import resolve_mappings
from failcodes.metrics import METRICS, MetricsReport, compute_metrics, distributions_dataframe
from failcodes.study.layout import StudyLayout
from failcodes.verdicts import Verdict


def ingest_step(ctx: DemoContext) -> StepOutput:
    """Load the bundled datasets and write them as traces + labels."""
    out = StepOutput()
    for name, loader in BUNDLED_DATASETS:
        ds = loader()
        if ds is None:
            out.lines.append(f"{name}: not bundled, skipped")
            continue
        ctx.datasets[ds.name] = ds
        layout = StudyLayout.of(ctx.out_dir)
        with AtomicBatch() as batch:
            if ds.traces:
                out.files += dataio.write_traces(layout.traces(ds.name), ds.traces, batch=batch)
            dataio.write_labels(layout.labels(ds.name), ds.labels, batch=batch)
        out.files.append(layout.labels(ds.name))
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


def metrics_step(ctx: DemoContext) -> StepOutput:
    """Metrics with cluster-bootstrap CIs per system x mapping, and verdict shares."""
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
        path = StudyLayout.of(ctx.out_dir).metrics(name)
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


def disagreements_step(ctx: DemoContext) -> StepOutput:
    """Write every FN/FP disagreement under the 'refuted' mapping (input of the judge)."""
    out = StepOutput()
    found: dict[str, list[Disagreement]] = {}
    for name, ds in ctx.datasets.items():
        if not ds.traces:
            continue
        items = find_disagreements(ds.traces, ds.labels, "refuted")
        found[name] = items
        path = dataio.write_disagreements(StudyLayout.of(ctx.out_dir).disagreements(name), items)
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


def compare_step(ctx: DemoContext) -> StepOutput:
    """Seed 001 appendix A.9 on the demo systems: Cochran's Q, Holm-adjusted McNemar, F1."""
    from failcodes.errors import StatisticsError
    from failcodes.outcomes import paired_outcomes_from_traces
    from failcodes.stats.classification import compare_against_truth

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
        dest = StudyLayout.of(ctx.out_dir).comparisons(name)
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
