"""Run the whole RtV evaluation and write its outputs (the I/O edge of failcodes.rtv)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from failcodes.fileio import atomic_write_text
from failcodes.rtv import metrics, semantic
from failcodes.rtv.evaluate import ItemResult, RtvConfig, build_indexes, run, to_labels, to_traces
from failcodes.rtv.items import OrdinalScale, RtvItem
from failcodes.rtv.judge import VerdictJudge

HEURISTIC_NOTE = (
    "Verdicts come from the offline heuristic judge: a rule-based heuristic baseline, not an "
    "LLM. Treat its rates as a floor/sanity check, not as the seed's GPT-5 judge."
)


class RtvRun(BaseModel):
    """Everything one ``failcodes rtv`` run computes."""

    config: RtvConfig
    judge: str
    judge_heuristic: bool
    note: str | None
    by_model: list[metrics.RtvSummary]
    by_model_group: list[metrics.RtvSummary]
    k_sensitivity: list[metrics.KSensitivityRow]
    fleiss: list[metrics.FleissResult]
    semantic: semantic.SemanticSummary | None
    semantic_skipped: str | None


def evaluate_all(
    items: Sequence[RtvItem],
    documents: dict[str, str],
    judge: VerdictJudge,
    config: RtvConfig,
    scale: OrdinalScale | None,
    sensitivity_k: Sequence[int] = (1, 3, 5),
    semantic_model: str | Path | None = None,
) -> tuple[RtvRun, list[ItemResult]]:
    """Index, retrieve, verify at ``config.k`` and each sensitivity k; compute every metric."""
    indexes = build_indexes(documents, config)
    main = run(items, indexes, judge, config.k)
    by_k = {config.k: main}
    for k in sensitivity_k:
        if k not in by_k:
            by_k[k] = run(items, indexes, judge, k)
    skipped = semantic.unavailable_reason(semantic_model)
    sem = semantic.run(main, semantic_model) if skipped is None and semantic_model else None
    result = RtvRun(
        config=config,
        judge=judge.name,
        judge_heuristic=judge.heuristic,
        note=HEURISTIC_NOTE if judge.heuristic else None,
        by_model=metrics.summarize(main, scale, ("model",)),
        by_model_group=metrics.summarize(main, scale, ("model", "group")),
        k_sensitivity=metrics.k_sensitivity({k: by_k[k] for k in sorted(set(sensitivity_k))}),
        fleiss=(
            metrics.fleiss_across_models(main, scale)
            + metrics.fleiss_across_models(main, scale, by_group=True)
            if scale is not None
            else []
        ),
        semantic=sem,
        semantic_skipped=skipped,
    )
    return result, main


def _jsonl(rows: Sequence[BaseModel]) -> str:
    return "".join(r.model_dump_json() + "\n" for r in rows)


def write_outputs(
    out_dir: str | Path,
    run_result: RtvRun,
    results: Sequence[ItemResult],
    scale: OrdinalScale | None,
) -> dict[str, Path]:
    """Write traces.jsonl, labels.jsonl (if human answers), results.jsonl and metrics.json.

    Every file is rendered in memory first and replaced atomically.
    """
    out = Path(out_dir)
    traces = to_traces(results, run_result.config)
    files: dict[str, str] = {
        "traces.jsonl": _jsonl(traces),
        "results.jsonl": _jsonl(list(results)),
        "metrics.json": json.dumps(run_result.model_dump(mode="json"), indent=2) + "\n",
    }
    labels = to_labels(results, scale) if scale is not None else []
    if labels:
        files["labels.jsonl"] = _jsonl(labels)
    written: dict[str, Path] = {}
    for name, text in files.items():
        atomic_write_text(out / name, text)
        written[name] = out / name
    return written


def as_rows(run_result: RtvRun) -> list[dict[str, Any]]:
    """The per-model summary as flat rows (for tables)."""
    return [
        {
            "model": s.group["model"],
            "n": s.n,
            "support": s.evidence_support_rate,
            "halluc_conservative": s.conservative_hallucination_rate,
            "halluc_strict": s.strict_hallucination_rate,
            "binary_acc": s.binary_accuracy,
            "exact_acc": s.exact_accuracy,
            "gap": s.accuracy_support_gap,
            "kappa_lin": s.kappa_linear,
            "kappa_quad": s.kappa_quadratic,
            "top1_bm25": s.mean_top1_bm25,
        }
        for s in run_result.by_model
    ]
