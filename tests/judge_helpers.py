"""Small codebook and traces for the judge tests (built in code, independent of taxonomy/)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from failcodes.codebook import Codebook, Dimension, Part, Subcode
from failcodes.traces import Passage, Trace
from failcodes.units import UnitKind
from failcodes.verdicts import Verdict


def _dim(dim_id: str, label: str, high: str, *lows: str) -> Dimension:
    subs = [
        Subcode(id=high, label=high.replace("_", " "), definition=f"{label} ok.", high_quality=True)
    ]
    subs += [Subcode(id=c, label=c.replace("_", " "), definition=f"{label}: {c}.") for c in lows]
    return Dimension(
        id=dim_id, label=label, definition=f"How the unit fares on {label}.", subcodes=tuple(subs)
    )


def make_codebook(version: int = 1, *, multi_label: tuple[str, ...] = ()) -> Codebook:
    """The test codebook; dimensions named in ``multi_label`` are declared multi-label."""
    cb = _make_codebook(version)
    if not multi_label:
        return cb
    parts = tuple(
        part.model_copy(
            update={
                "dimensions": tuple(
                    d.model_copy(update={"multi_label": True}) if d.id in multi_label else d
                    for d in part.dimensions
                )
            }
        )
        for part in cb.parts
    )
    return cb.model_copy(update={"parts": parts})


def _make_codebook(version: int) -> Codebook:
    retrieval = Part(
        id=UnitKind.RETRIEVAL,
        label="Evidence quality",
        dimensions=(
            _dim("entity_match", "Entity match", "exact_entity", "partial_entity", "irrelevant"),
            _dim("scope", "Scope", "exact_scope", "broader_scope", "narrower_scope"),
            _dim("trustworthy", "Trustworthy source", "reliable", "unreliable", "unknown_source"),
            _dim("polarity", "Evidence polarity", "direct", "indirect", "no_polarity"),
            _dim("chunking", "Chunking", "complete_chunk", "incomplete_chunk"),
        ),
    )
    verification = Part(
        id=UnitKind.VERIFICATION,
        label="Reasoning steps",
        dimensions=(
            _dim(
                "evidence_selection",
                "Evidence selection",
                "complete_selection",
                "selective_coverage",
            ),
            _dim("comprehension", "Evidence comprehension", "understood", "misread"),
            _dim(
                "inference",
                "Inference",
                "valid_inference",
                "overreach",
                "conflict_synthesis_failure",
            ),
            _dim(
                "confidence", "Verbal confidence", "calibrated", "overconfident", "underconfident"
            ),
            _dim("label_consistency", "Label consistency", "consistent", "inconsistent"),
            _dim("grounding", "Grounding", "grounded", "ungrounded"),
        ),
    )
    return Codebook(name="test-codebook", version=version, parts=(retrieval, verification))


def write_codebook(path: Path, codebook: Codebook | None = None) -> Path:
    cb = codebook or make_codebook()
    path.write_text(yaml.safe_dump(cb.model_dump(mode="json"), sort_keys=False), "utf-8")
    return path


P_GOOD = Passage(
    passage_id="pm1",
    rank=1,
    text="Metformin lowers HbA1c in adults with type 2 diabetes by about 1 percentage point.",
    source="pubmed",
)
P_FRAGMENT = Passage(
    passage_id="pm2",
    rank=2,
    text="and the dose was titrated weekly in the cohort without",
    source="pubmed",
)
P_WEB = Passage(
    passage_id="w1",
    rank=3,
    text="Cinnamon tea is a popular drink in winter.",
    source="healthblog.example",
)


def make_traces(n_claims: int = 3) -> list[Trace]:
    """Two systems sharing passages; claim i gets a distinct number so units differ."""
    traces: list[Trace] = []
    for i in range(n_claims):
        claim = f"Metformin lowers HbA1c in adults with type 2 diabetes (claim {i})."
        for system in ("sysA", "sysB"):
            passages = (P_GOOD, P_FRAGMENT) if system == "sysA" else (P_GOOD, P_WEB)
            passages = tuple(p.model_copy(update={"rank": r}) for r, p in enumerate(passages, 1))
            traces.append(
                Trace(
                    system=system,
                    question_id=f"q{i}",
                    sentence_id=f"q{i}-s1",
                    claim_id=f"q{i}-c1",
                    claim=claim,
                    verdict=Verdict.SUPPORTED if system == "sysA" else Verdict.REFUTED,
                    reasoning=f"The passage says metformin lowers HbA1c in adults ({system}).",
                    retriever=system.replace("sys", "ret"),
                    verifier=system.replace("sys", "ver"),
                    passages=passages,
                )
            )
    return traces


def write_traces(path: Path, traces: list[Trace]) -> Path:
    path.write_text("".join(json.dumps(t.model_dump(mode="json")) + "\n" for t in traces), "utf-8")
    return path
