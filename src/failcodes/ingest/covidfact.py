"""COVID-Fact (Saakyan et al. 2021): top-5 retrieval traces with a gold recall flag.

Input: a COVID-Fact directory (or the TSV itself) holding
``evidence_recall/test1_5_recall.tsv``, optionally with the refuted claims' retrieved
sentences and the dataset file. Passages: the claim's top-5 sentences (``gold`` from its gold
evidence) or their joined text (``gold`` = the recall flag); verdict: a *retrieval-bounded
oracle*; labels: ``has_error`` = the claim is REFUTED. The files and rules:
docs/benchmarks.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from failcodes.contract import FrozenModel
from failcodes.errors import InputError
from failcodes.ingest.base import AdapterOptions, FileAdapter, IngestResult, Output, only_path
from failcodes.jsonio import iter_jsonl, read_json
from failcodes.labels import Label
from failcodes.tableio import csv_rows
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.verdicts import Verdict

RECALL_TSV = Path("evidence_recall/test1_5_recall.tsv")
SPLIT_JSON = Path("evidence_recall/refuted_retrieved_evidence.json")
DATASET = Path("COVIDFACT_dataset.jsonl")


class CovidFactClaim(FrozenModel):
    """One row of the recall TSV, with what the optional files add."""

    claim_id: str
    claim: str
    label: str  # entailment | not_entailment
    recall: bool
    retrieved_joined: str
    retrieved: tuple[str, ...] | None
    gold_evidence: tuple[str, ...] | None


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def read_covidfact(root: str | Path) -> list[CovidFactClaim]:
    """Read the recall TSV (+ optional per-sentence lists and gold evidence)."""
    base = Path(root)
    tsv = base if base.is_file() else base / RECALL_TSV
    folder = tsv.parent.parent if base.is_file() else base
    if not tsv.is_file():
        raise InputError("recall TSV not found", path=tsv)
    split: dict[str, list[str]] = {}
    if (folder / SPLIT_JSON).is_file():
        split = read_json(folder / SPLIT_JSON)
        if not isinstance(split, dict) or not all(map(_strings, split.values())):
            raise InputError(
                "expected an object {claim: [retrieved sentences]}", path=folder / SPLIT_JSON
            )
    gold: dict[str, list[str]] = {}
    ds = folder / DATASET
    if ds.is_file():
        for lineno, obj in iter_jsonl(ds):
            claim, evidence = obj.get("claim"), obj.get("evidence") or []
            if not isinstance(claim, str):
                raise InputError("expected the claim text", path=ds, line=lineno, field="claim")
            if not _strings(evidence):
                raise InputError(
                    "expected a list of evidence sentences", path=ds, line=lineno, field="evidence"
                )
            gold.setdefault(claim, list(evidence))
    out: list[CovidFactClaim] = []
    columns = ("index", "sentence1", "sentence2", "label", "recall")
    for lineno, row in csv_rows(tsv, columns, delimiter="\t"):
        if row["label"] not in ("entailment", "not_entailment"):
            raise InputError(
                f"unknown label {row['label']!r}", path=tsv, line=lineno, field="label"
            )
        if row["recall"] not in ("0", "1"):
            raise InputError("recall must be 0 or 1", path=tsv, line=lineno, field="recall")
        claim = row["sentence2"].strip()
        sents = split.get(claim)
        out.append(
            CovidFactClaim(
                claim_id=f"covidfact-test1-{row['index']}",
                claim=claim,
                label=row["label"],
                recall=row["recall"] == "1",
                retrieved_joined=row["sentence1"].strip(),
                retrieved=tuple(sents) if sents else None,
                gold_evidence=tuple(gold[claim]) if claim in gold else None,
            )
        )
    if not out:
        raise InputError("no rows after the header (expected one per claim)", path=tsv)
    return out


def oracle_verdict(c: CovidFactClaim) -> Verdict:
    """Gold label if gold evidence was retrieved, else no_evidence (module docstring)."""
    if not c.recall:
        return Verdict.NO_EVIDENCE
    return Verdict.SUPPORTED if c.label == "entailment" else Verdict.REFUTED


def passages(c: CovidFactClaim) -> tuple[Passage, ...]:
    """Per-sentence passages where listed, else one joined passage (module docstring)."""
    if c.retrieved is not None:
        gold = set(c.gold_evidence) if c.gold_evidence is not None else None
        return tuple(
            Passage(
                passage_id=f"{c.claim_id}#{i}",
                rank=i,
                text=s,
                source="covidfact-retrieval",
                gold=(s in gold) if gold is not None else None,
            )
            for i, s in enumerate(c.retrieved, start=1)
        )
    return (
        Passage(
            passage_id=f"{c.claim_id}#top5",
            rank=1,
            text=c.retrieved_joined,
            source="covidfact-retrieval (top-5 joined)",
            gold=c.recall,
        ),
    )


def to_traces(claims: Sequence[CovidFactClaim], system: str) -> list[Trace]:
    """One trace per claim."""
    return [
        Trace(
            system=system,
            question_id=c.claim_id,
            sentence_id=c.claim_id,
            claim_id=c.claim_id,
            claim=c.claim,
            sentence=c.claim,
            verdict=oracle_verdict(c),
            raw_verdict=f"gold={c.label}; recall={int(c.recall)}",
            reasoning="Retrieval-bounded oracle: gold label if the top-5 retrieval recovered "
            "gold evidence, else no evidence.",
            verifier="oracle (gold label, retrieval-bounded)",
            retriever="COVID-Fact top-5 (Google + SBERT)",
            passages=passages(c),
            evidence_source=EvidenceSource.RETRIEVED,
        )
        for c in claims
    ]


def to_labels(claims: Sequence[CovidFactClaim]) -> list[Label]:
    """``has_error`` = the claim is refuted (COVID-Fact's counter-claims are false)."""
    return [
        Label(
            sentence_id=c.claim_id,
            question_id=c.claim_id,
            has_error=c.label == "not_entailment",
            rationale=f"COVID-Fact gold label {c.label}",
            annotator="COVID-Fact annotators",
            sentence=c.claim,
        )
        for c in claims
    ]


def _ingest(paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
    """COVID-Fact top-5 retrieval with gold recall flag -> traces + claim labels.

    Reads one COVID-Fact directory (or its recall TSV).
    """
    claims = read_covidfact(
        only_path(paths, "the covidfact adapter takes one directory or recall TSV")
    )
    split = sum(c.retrieved is not None for c in claims)
    notes = [
        f"{len(claims)} claims ({split} with per-sentence retrieval); verdict = "
        "retrieval-bounded oracle; has_error = REFUTED"
    ]
    return IngestResult(
        traces=to_traces(claims, options.system or "covidfact-top5"),
        labels=to_labels(claims),
        notes=notes,
    )


ADAPTER = FileAdapter("covidfact", Output.TRACES, _ingest, reads_folders=True)
