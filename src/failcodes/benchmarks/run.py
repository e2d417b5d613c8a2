"""Closed-benchmark summaries from files (the I/O edge of failcodes.benchmarks).

Used by ``failcodes benchmark ...`` and the demo. Each function reads a dataset with its
ingest adapter and returns flat rows (one per system, or per system x k).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from failcodes.benchmarks import evidence, scifact_eval
from failcodes.benchmarks.atomic import evaluate as atomic_evaluate
from failcodes.ingest import covidfact, healthver, scifact
from failcodes.ingest.atomic import read_atomic

DEFAULT_KS: tuple[int, ...] = (1, 3, 5)


def _evidence_rows(
    system: str, queries: Sequence[evidence.EvidenceQuery], ks: Sequence[int], unit: str
) -> list[dict[str, Any]]:
    rows = []
    for k in ks:
        r = evidence.evidence_at_k(queries, k)
        rows.append(
            {
                "system": system,
                "unit": unit,
                "k": k,
                "precision_at_k": r.precision,
                "recall_at_k": r.recall,
                "hit_at_k": r.hit_rate,
                "n_queries": r.n_queries,
                "n_no_retrieval": r.n_no_retrieval,
                "n_no_gold": r.n_no_gold,
            }
        )
    return rows


def scifact_official(root: str | Path) -> list[dict[str, Any]]:
    """The official SciFact metrics of each MultiVerS system (REFUTE->CONTRADICT, NEI dropped)."""
    claims, preds, _ = scifact.load_dir(root)
    rows = []
    files = {scifact.system_name(ck): ck for ck in scifact.CHECKPOINTS}
    for system, pr in preds.items():
        path = Path(root) / "multivers_predictions_dev" / f"{files[system]}_scifact_dev.jsonl"
        m = scifact_eval.evaluate(claims, [scifact_eval.from_multivers(p) for p in pr], path=path)
        rows.append({"system": system, **m.official()})
    return rows


def scifact_fixture(root: str | Path) -> dict[str, float]:
    """The official metrics on the scifact-evaluator fixture (``evaluator_fixture/``)."""
    base = Path(root) / "evaluator_fixture"
    gold = scifact.read_claims(base / "gold_small.jsonl")
    preds = scifact.read_predictions(base / "predictions_small.jsonl")
    return scifact_eval.evaluate(gold, preds, path=base / "predictions_small.jsonl").official()


def scifact_evidence(root: str | Path, ks: Sequence[int] = DEFAULT_KS) -> list[dict[str, Any]]:
    """Rationale-sentence evidence P/R/hit@k of each MultiVerS system."""
    claims, preds, _ = scifact.load_dir(root)
    rows: list[dict[str, Any]] = []
    for system, pr in preds.items():
        q = evidence.scifact_rationale_queries(claims, pr)
        rows += _evidence_rows(system, q, ks, "rationale sentence")
    return rows


def covidfact_evidence(root: str | Path, ks: Sequence[int] = DEFAULT_KS) -> list[dict[str, Any]]:
    """Evidence P/R/hit@k of COVID-Fact's top-5 retrieval (claims listed per sentence)."""
    claims = covidfact.read_covidfact(root)
    listed = [c for c in claims if c.retrieved is not None and c.gold_evidence is not None]
    traces = covidfact.to_traces(listed, "covidfact-top5")
    n_gold = {c.claim_id: len(c.gold_evidence or ()) for c in listed}
    rows = _evidence_rows(
        "covidfact-top5",
        evidence.queries_from_traces(traces, n_gold),
        ks,
        "retrieved sentence (listed claims)",
    )
    hit = sum(c.recall for c in claims) / len(claims) if claims else None
    rows.append(
        {
            "system": "covidfact-top5",
            "unit": "published recall flag (all claims)",
            "k": 5,
            "precision_at_k": None,
            "recall_at_k": None,
            "hit_at_k": hit,
            "n_queries": len(claims),
            "n_no_retrieval": 0,
            "n_no_gold": 0,
        }
    )
    return rows


def healthver_evidence(path: str | Path, ks: Sequence[int] = DEFAULT_KS) -> list[dict[str, Any]]:
    """Evidence P/R/hit@k of HealthVer's retrieved passages.

    Gold = Supports/Refutes; rank = file order; recall is within the retrieved list.
    """
    traces = healthver.read_healthver(path)
    return _evidence_rows(
        "healthver-t5", evidence.queries_from_traces(traces), ks, "passage (within retrieved list)"
    )


def atomic_rows(path: str | Path) -> list[dict[str, Any]]:
    """Seed-003 figures per system of an atomic fact-check file."""
    data = read_atomic(path)
    return [r.model_dump() for r in atomic_evaluate(data.facts, data.answers)]
