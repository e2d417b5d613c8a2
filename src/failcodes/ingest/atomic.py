"""Atomic fact-check pipelines (seed 003): per-fact TRUE/FALSE verdicts with human evaluation.

Input: one JSONL file of fact and answer records (``"type"``, default ``"fact"``); the fields
and how they become traces (one per fact) and claim-level labels (``has_error`` = the fact is
wrong) are docs/atomic-format.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from failcodes.atomic import AnswerOutcome, AtomicAnswer, AtomicFact, ErrorCategory
from failcodes.contract import FrozenModel, StrictModel
from failcodes.errors import InputError
from failcodes.ingest.base import AdapterOptions, FileAdapter, IngestResult, Output
from failcodes.ingest.table import check_system_name
from failcodes.jsonio import iter_jsonl
from failcodes.labels import Label
from failcodes.tableio import id_text, validate_record
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.verdicts import Verdict


class _Chunk(FrozenModel):
    chunk_id: str
    text: str
    score: float | None = None


class _FactRecord(FrozenModel):
    type: str = "fact"
    system: str | None = None
    answer_id: str
    question: str | None = None
    sentence_id: str | None = None
    fact_id: str
    fact: str
    verdict: str
    human_confirms: bool
    error_category: ErrorCategory | None = None
    correct_chunk_rank: int | None = Field(default=None, ge=1)
    chunks: list[_Chunk] = Field(default_factory=list)


class _AnswerRecord(FrozenModel):
    type: str
    system: str | None = None
    answer_id: str
    outcome: AnswerOutcome


class AtomicData(StrictModel):
    """Everything read from an atomic fact-check file."""

    facts: list[AtomicFact]
    answers: list[AtomicAnswer]
    traces: list[Trace]
    labels: list[Label]


#: The way past a system named like the reference (a ``gold`` pipeline scored as one more).
_REMEDY = (
    "the reference is the human evaluation of each system's facts (human_confirms); leave "
    "its records out"
)


def _as_text(obj: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    """Number ids as their text, as every reader takes them; a JSON bool verdict as TRUE/FALSE.

    ``"answer_id": 1`` (or a chunk's PubMed id) and ``"verdict": false`` were refused with
    "Input should be a valid string", no way through.
    """
    out = {k: id_text(v, path=path, line=line, field=k) if k in _IDS else v for k, v in obj.items()}
    if isinstance(out.get("verdict"), bool):
        out["verdict"] = "TRUE" if out["verdict"] else "FALSE"
    chunks = obj.get("chunks")
    if isinstance(chunks, list):
        out["chunks"] = [_as_text(c, path, line) if isinstance(c, dict) else c for c in chunks]
    return out


_IDS = frozenset({"answer_id", "fact_id", "sentence_id", "chunk_id"})


def read_atomic(path: str | Path, default_system: str = "atomic") -> AtomicData:
    """Read an atomic fact-check JSONL file (format in the module docstring)."""
    p = Path(path)
    facts: list[AtomicFact] = []
    answers: list[AtomicAnswer] = []
    traces: list[Trace] = []
    labels: list[Label] = []
    seen_f: set[tuple[str, str]] = set()
    seen_a: set[tuple[str, str]] = set()
    folded: dict[str, tuple[str, Path, int]] = {}
    for lineno, record in iter_jsonl(p):
        obj = _as_text(record, p, lineno)
        kind = obj.get("type", "fact")
        if kind == "answer":
            a = validate_record(_AnswerRecord, obj, p, lineno)
            system = a.system or default_system
            check_system_name(folded, system, p, lineno, remedy=_REMEDY)
            if (system, a.answer_id) in seen_a:
                raise InputError(
                    f"duplicate answer {a.answer_id!r}", path=p, line=lineno, field="answer_id"
                )
            seen_a.add((system, a.answer_id))
            answers.append(AtomicAnswer(system=system, answer_id=a.answer_id, outcome=a.outcome))
            continue
        if kind != "fact":
            raise InputError(
                f"unknown record type {kind!r} (fact or answer)", path=p, line=lineno, field="type"
            )
        f = validate_record(_FactRecord, obj, p, lineno)
        v = f.verdict.strip().upper()
        if v not in ("TRUE", "FALSE"):
            raise InputError(
                f"verdict must be TRUE or FALSE, got {f.verdict!r}",
                path=p,
                line=lineno,
                field="verdict",
            )
        system = f.system or default_system
        check_system_name(folded, system, p, lineno, remedy=_REMEDY)
        if (system, f.fact_id) in seen_f:
            raise InputError(f"duplicate fact {f.fact_id!r}", path=p, line=lineno, field="fact_id")
        seen_f.add((system, f.fact_id))
        fact = AtomicFact(
            system=system,
            answer_id=f.answer_id,
            fact_id=f.fact_id,
            fact=f.fact,
            verdict_false=v == "FALSE",
            human_confirms=f.human_confirms,
            error_category=f.error_category,
            chunk_annotated="correct_chunk_rank" in obj,
            correct_chunk_rank=f.correct_chunk_rank,
        )
        if fact.error_category is not None and not fact.is_wrong:
            raise InputError(
                "error_category given for a fact the human judged correct",
                path=p,
                line=lineno,
                field="error_category",
            )
        facts.append(fact)
        traces.append(
            Trace(
                system=system,
                question_id=f.answer_id,
                sentence_id=f.sentence_id or f.fact_id,
                claim_id=f.fact_id,
                claim=f.fact,
                verdict=Verdict.REFUTED if fact.verdict_false else Verdict.SUPPORTED,
                raw_verdict=v,
                passages=tuple(
                    Passage(passage_id=c.chunk_id, rank=i, text=c.text, score=c.score)
                    for i, c in enumerate(f.chunks, start=1)
                ),
                evidence_source=EvidenceSource.RETRIEVED,
            )
        )
        labels.append(
            Label(
                claim_id=f.fact_id,
                sentence_id=f.sentence_id or f.fact_id,
                question_id=f.answer_id,
                has_error=fact.is_wrong,
                rationale=fact.error_category.value if fact.error_category else None,
                annotator="human evaluation",
            )
        )
    if not facts and not answers:
        raise InputError("no records (expected one JSON object per fact or answer)", path=p)
    return AtomicData(facts=facts, answers=answers, traces=traces, labels=labels)


def _ingest(paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
    """Atomic fact-check JSONL (TRUE/FALSE verdicts + human evaluation) -> traces + labels.

    ``--system`` fills records without a system.
    """
    labels: list[Label] = []  # (the result holds them as a Sequence)
    result = IngestResult(labels=labels)
    for path in paths:
        data = read_atomic(path, options.system or "atomic")
        result.traces.extend(data.traces)
        labels.extend(data.labels)
    result.notes.append(
        "labels: has_error = fact actually wrong (FALSE confirmed or TRUE not confirmed)"
    )
    # a fact id is unique per system: when two systems use one, each human evaluation is
    # its own system's (per-system labels), else one label would stand for both facts
    owners: dict[str, str] = {}
    shared_ids = False
    for trace in result.traces:
        shared_ids |= owners.setdefault(trace.claim_id, trace.system) != trace.system
    if shared_ids:
        result.labels = [
            label.model_copy(update={"system": trace.system})
            for label, trace in zip(result.labels, result.traces, strict=True)
        ]
        result.notes.append(
            "labels per system: a fact id is used by several systems, so each label names "
            "the system whose fact it evaluates"
        )
    return result


ADAPTER = FileAdapter("atomic", Output.TRACES, _ingest)
