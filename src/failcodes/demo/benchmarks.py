"""Demo steps: the reference retrieve-then-verify evaluator and the SciFact benchmark."""

from __future__ import annotations

import json

import pandas as pd

from failcodes.demo._base import DemoContext, StepOutput
from failcodes.fileio import AtomicBatch


def rtv_step(ctx: DemoContext) -> StepOutput:
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


def scifact_benchmark_step(ctx: DemoContext) -> StepOutput:
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
