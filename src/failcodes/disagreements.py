"""Disagreements: where a system's mapped verdict and the clinical label differ.

This table is the input of attribution and annotation (the judge). Each
:class:`Disagreement` is one sentence (or, at claim level, one claim) of one system under one
:class:`~failcodes.mapping.ErrorMapping`, typed:

- ``FN`` (clinician error missed): the clinician marked an error, but no claim of the
  sentence maps to an error. Every claim in ``claims`` was judged not-an-error; the judge
  asks why (bad retrieval? wrong verification?).
- ``FP`` (false alarm): the system flags an error the clinician did not mark.
  ``error_claim_ids`` names the claims whose verdicts raised it.

Each disagreement carries everything that produced it: all claims of the sentence with their
verdict, raw verdict, whether it maps to error, the claim's resolved clinical label, the
verifier's reasoning and the retrieved passages in rank order; plus the clinician's rationale,
severity and annotator. ``id`` is a content hash of (system, mapping, level, question_id,
sentence_id, claim_id): stable across runs, unique within a table.

Files: JSONL (one ``Disagreement.model_dump(mode="json")`` per line) or Parquet (the same
records as nested columns), chosen by suffix. Writes are atomic (temp file + rename).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from failcodes.dataio import AtomicBatch, iter_jsonl, pyarrow_modules
from failcodes.errors import InputError
from failcodes.hashing import content_hash
from failcodes.labels import Label, LabelIndex
from failcodes.mapping import (
    DEFAULT_MAPPING,
    ErrorMapping,
    aggregate_sentences,
    check_unique_claims,
    resolve_mapping,
)
from failcodes.metrics import DEFAULT_WITHOUT_CLAIMS, Level, WithoutClaimsPolicy
from failcodes.traces import EvidenceSource, Passage, Trace, declared_source
from failcodes.verdicts import Verdict

if TYPE_CHECKING:  # pandas (~0.2 s to import) only for disagreements_dataframe
    import pandas as pd


class DisagreementKind(StrEnum):
    """How the system's mapped verdict differs from the clinical label."""

    FN = "FN"  # clinician marked an error; the system flagged none (error missed)
    FP = "FP"  # the system flagged an error; the clinician marked none (false alarm)


class ClaimRecord(BaseModel):
    """One claim behind a disagreement, with everything the verifier saw and said."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    claim_id: str = Field(description="The claim's id (stable across systems).")
    claim: str = Field(description="The atomic claim text.")
    verdict: Verdict = Field(description="The verifier's canonical verdict.")
    raw_verdict: str | None = Field(
        default=None, description="The verdict as the pipeline wrote it."
    )
    maps_to_error: bool = Field(
        description="True if the verdict counts as error under the mapping."
    )
    label_has_error: bool | None = Field(
        default=None,
        description="The claim's clinical label (own claim label, else inherited from the "
        "sentence); None if unlabelled.",
    )
    reasoning: str | None = Field(default=None, description="The verifier's reasoning trace.")
    verifier: str | None = Field(default=None, description="The verifier model name.")
    retriever: str | None = Field(default=None, description="The retriever name.")
    passages: tuple[Passage, ...] = Field(default=(), description="Retrieved passages, rank order.")
    evidence_source: EvidenceSource | None = Field(
        default=None,
        description="The trace's evidence source (retrieved, provided, none); unset in files "
        "written before it existed (then derived as for traces).",
    )


class Disagreement(BaseModel):
    """One sentence (or claim) where a system's mapped verdict and the clinical label differ."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(
        description="Content hash of system, mapping, level, question, sentence, claim."
    )
    kind: DisagreementKind = Field(description="FN = clinician error missed; FP = false alarm.")
    level: Level = Field(description="sentence (any-error aggregation) or claim.")
    system: str = Field(description="The retriever x verifier x corpus configuration.")
    mapping: str = Field(description="Name of the error mapping applied.")
    error_verdicts: tuple[str, ...] = Field(description="Verdicts the mapping counts as error.")
    question_id: str = Field(description="The question (the bootstrap cluster).")
    sentence_id: str = Field(description="The answer sentence (the labelled unit).")
    sentence: str | None = Field(default=None, description="The sentence text, if known.")
    claim_id: str | None = Field(default=None, description="The claim (claim level only).")
    label_has_error: bool = Field(description="The clinical label of the sentence (or claim).")
    predicted_error: bool = Field(description="The system's mapped verdict (any-error).")
    label_rationale: str | None = Field(default=None, description="The clinician's rationale.")
    label_severity: str | None = Field(default=None, description="e.g. Mild/Moderate/Severe.")
    label_annotator: str | None = Field(default=None, description="Who gave the label.")
    claims: tuple[ClaimRecord, ...] = Field(
        description="All claims of the sentence (sentence level) or the one claim (claim "
        "level), in input order; empty only for a labelled sentence without claims counted "
        "under the no_error policy."
    )
    error_claim_ids: tuple[str, ...] = Field(
        default=(), description="Claims whose verdict maps to error (the cause of an FP)."
    )


def disagreement_id(
    system: str,
    mapping: str,
    level: Level,
    question_id: str,
    sentence_id: str,
    claim_id: str | None,
) -> str:
    """Return the stable content id of a disagreement."""
    return content_hash(
        {
            "system": system,
            "mapping": mapping,
            "level": level.value,
            "question_id": question_id,
            "sentence_id": sentence_id,
            "claim_id": claim_id,
        }
    )


def _claim_record(t: Trace, mapping: ErrorMapping, index: LabelIndex) -> ClaimRecord:
    lab = index.for_claim(t.question_id, t.sentence_id, t.claim_id)
    return ClaimRecord(
        claim_id=t.claim_id,
        claim=t.claim,
        verdict=t.verdict,
        raw_verdict=t.raw_verdict,
        maps_to_error=mapping.is_error(t.verdict),
        label_has_error=lab.has_error if lab is not None else None,
        reasoning=t.reasoning,
        verifier=t.verifier,
        retriever=t.retriever,
        passages=t.passages,
        evidence_source=t.evidence,
    )


def _make(
    *,
    system: str,
    mapping: ErrorMapping,
    level: Level,
    question_id: str,
    sentence_id: str,
    sentence: str | None,
    claim_id: str | None,
    label: Label,
    predicted: bool,
    claims: tuple[ClaimRecord, ...],
) -> Disagreement:
    return Disagreement(
        id=disagreement_id(system, mapping.name, level, question_id, sentence_id, claim_id),
        kind=DisagreementKind.FN if label.has_error else DisagreementKind.FP,
        level=level,
        system=system,
        mapping=mapping.name,
        error_verdicts=tuple(mapping.verdict_names()),
        question_id=question_id,
        sentence_id=sentence_id,
        sentence=sentence if sentence is not None else label.sentence,
        claim_id=claim_id,
        label_has_error=label.has_error,
        predicted_error=predicted,
        label_rationale=label.rationale,
        label_severity=label.severity,
        label_annotator=label.annotator,
        claims=claims,
        error_claim_ids=tuple(c.claim_id for c in claims if c.maps_to_error),
    )


def find_disagreements(
    traces: Sequence[Trace],
    labels: Iterable[Label],
    mapping: ErrorMapping | str = DEFAULT_MAPPING,
    *,
    level: Level | str = Level.SENTENCE,
    without_claims: WithoutClaimsPolicy | str = DEFAULT_WITHOUT_CLAIMS,
) -> list[Disagreement]:
    """Return every FN/FP of every system under ``mapping``, sorted by system, question, id.

    Uses the same label resolution and aggregation as :func:`failcodes.metrics.compute_metrics`
    (so the FN and FP counts here equal its ``fn`` and ``fp``). Raises :class:`InputError` on
    duplicate claims/labels or a label matching no trace.
    """
    lvl = Level(level)
    policy = WithoutClaimsPolicy(without_claims)
    m = mapping if isinstance(mapping, ErrorMapping) else resolve_mapping(mapping)
    index = LabelIndex(labels)
    known = index.labelled_sentences(traces)
    by_claim = {(t.system, t.question_id, t.claim_id): t for t in traces}
    out: list[Disagreement] = []
    if lvl is Level.CLAIM:
        check_unique_claims(traces)
        for t in traces:
            lab = index.for_claim(t.question_id, t.sentence_id, t.claim_id)
            pred = m.is_error(t.verdict)
            if lab is None or lab.has_error == pred:
                continue
            out.append(
                _make(
                    system=t.system,
                    mapping=m,
                    level=lvl,
                    question_id=t.question_id,
                    sentence_id=t.sentence_id,
                    sentence=t.sentence,
                    claim_id=t.claim_id,
                    label=lab,
                    predicted=pred,
                    claims=(_claim_record(t, m, index),),
                )
            )
    else:
        agg = aggregate_sentences(traces, m, known_sentences=known)
        for sv in agg.sentences:
            lab = index.for_sentence(sv.question_id, sv.sentence_id)
            if lab is None or lab.has_error == sv.predicted_error:
                continue
            claim_traces = [by_claim[(sv.system, sv.question_id, c)] for c in sv.claim_ids]
            out.append(
                _make(
                    system=sv.system,
                    mapping=m,
                    level=lvl,
                    question_id=sv.question_id,
                    sentence_id=sv.sentence_id,
                    sentence=next((t.sentence for t in claim_traces if t.sentence), None),
                    claim_id=None,
                    label=lab,
                    predicted=sv.predicted_error,
                    claims=tuple(_claim_record(t, m, index) for t in claim_traces),
                )
            )
        if policy is WithoutClaimsPolicy.NO_ERROR:
            for miss in agg.without_claims:
                lab = index.for_sentence(miss.question_id, miss.sentence_id)
                if lab is None or not lab.has_error:
                    continue
                out.append(
                    _make(
                        system=miss.system,
                        mapping=m,
                        level=lvl,
                        question_id=miss.question_id,
                        sentence_id=miss.sentence_id,
                        sentence=None,
                        claim_id=None,
                        label=lab,
                        predicted=False,
                        claims=(),
                    )
                )
    out.sort(key=lambda d: (d.system, d.question_id, d.sentence_id, d.claim_id or "", d.id))
    return out


def disagreements_dataframe(items: Iterable[Disagreement]) -> pd.DataFrame:
    """One flat row per disagreement (claims summarised), for tables and quick inspection."""
    import pandas as pd

    rows = [
        {
            "id": d.id,
            "kind": d.kind.value,
            "level": d.level.value,
            "system": d.system,
            "mapping": d.mapping,
            "question_id": d.question_id,
            "sentence_id": d.sentence_id,
            "claim_id": d.claim_id,
            "sentence": d.sentence,
            "n_claims": len(d.claims),
            "verdicts": ",".join(c.verdict.value for c in d.claims),
            "error_claim_ids": ",".join(d.error_claim_ids),
            "n_passages": sum(len(c.passages) for c in d.claims),
            "label_rationale": d.label_rationale,
            "label_severity": d.label_severity,
        }
        for d in items
    ]
    return pd.DataFrame(rows)


def count_by_kind(items: Iterable[Disagreement]) -> dict[tuple[str, str], dict[str, int]]:
    """Return ``{(system, mapping): {"FN": n, "FP": n}}``."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for d in items:
        per = out.setdefault((d.system, d.mapping), {"FN": 0, "FP": 0})
        per[d.kind.value] += 1
    return out


# ---------------------------------------------------------------------------- files


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise InputError(
        f"unsupported disagreements file type {suffix!r} (use .jsonl or .parquet)", path=path
    )


def write_disagreements(
    path: str | Path, items: Iterable[Disagreement], *, batch: AtomicBatch | None = None
) -> Path:
    """Write disagreements as JSONL or Parquet (by suffix), atomically. Returns the path.

    With ``batch`` the file is staged in that :class:`~failcodes.dataio.AtomicBatch` (moved into
    place when the batch commits); otherwise it is committed at once.
    """
    target = Path(path)
    fmt = _format_of(target)
    records = [d.model_dump(mode="json") for d in items]
    with contextlib.nullcontext(batch) if batch is not None else AtomicBatch() as stage:
        tmp = stage.stage(target)
        if fmt == "jsonl":
            with tmp.open("w", encoding="utf-8") as fh:
                for rec in records:
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        else:
            pa, pq = pyarrow_modules()
            pq.write_table(pa.Table.from_pylist(records), tmp)
    return target


def _validate(rec: Any, path: Path, line: int | None) -> Disagreement:
    try:
        return Disagreement.model_validate(rec)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise InputError(err["msg"], path=path, line=line, field=field) from None


def read_disagreements(path: str | Path) -> list[Disagreement]:
    """Read a disagreements file written by :func:`write_disagreements` (JSONL or Parquet).

    Raises :class:`InputError` naming the file, line (JSONL) or row (Parquet) and field.
    """
    source = Path(path)
    fmt = _format_of(source)
    if not source.is_file():
        raise InputError("no such file", path=source)
    out: list[Disagreement] = []
    if fmt == "jsonl":
        return [_validate(rec, source, no) for no, rec in iter_jsonl(source)]
    pa, pq = pyarrow_modules()
    try:
        rows = pq.read_table(source).to_pylist()
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"unreadable Parquet file: {exc}", path=source) from None
    for no, rec in enumerate(rows, start=1):
        out.append(_validate(rec, source, no))
    return out


def with_evidence_source(
    disagreements: Iterable[Disagreement], declared: Mapping[str, EvidenceSource]
) -> list[Disagreement]:
    """The disagreements with every claim's ``evidence_source`` set from ``declared``."""
    out = []
    for d in disagreements:
        source = declared_source(declared, d.system)
        if source is None:
            out.append(d)
            continue
        claims = tuple(c.model_copy(update={"evidence_source": source}) for c in d.claims)
        out.append(d.model_copy(update={"claims": claims}))
    return out
