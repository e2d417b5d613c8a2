"""The ``ragchecker`` adapter: RAGChecker ``checking_outputs.json`` -> traces + reference labels.

Input: ``{"results": [{query_id, query, gt_answer, response, retrieved_context: [{doc_id,
text}], response_claims: [[s, p, o], ...], answer2response: [...], retrieved2response:
[[...per chunk...] per response claim], ...}]}``. RAGChecker names a check ``X2Y`` when the
text X checks the claims of Y: ``answer2response[i]`` is the ground-truth answer's verdict on
response claim *i* (its precision is the share of ``Entailment``), ``retrieved2response[i][j]``
is chunk *j*'s verdict on response claim *i*; ``response2answer`` and ``retrieved2answer``
are about the ground-truth answer's claims and are not used here.

The rules (one trace per response claim, passages, verdicts, reference labels and
``--option neutral``) are docs/trace-format.md's ``ragchecker`` section.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from failcodes import jsonio
from failcodes.errors import InputError
from failcodes.hashing import content_hash
from failcodes.ingest.base import AdapterOptions, FileAdapter, IngestResult, Output, check_unique
from failcodes.labels import Label
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.verdicts import Verdict

DEFAULT_SYSTEM = "ragchecker-example"
ENTAILMENT_LABELS = ("Entailment", "Neutral", "Contradiction")
NEUTRAL_CHOICES = ("skip", "error", "no_error")


def chunk_verdict(row: Sequence[str]) -> Verdict:
    """Apply the rule: any Entailment -> supported, else any Contradiction -> refuted."""
    if "Entailment" in row:
        return Verdict.SUPPORTED
    if "Contradiction" in row:
        return Verdict.REFUTED
    return Verdict.NO_EVIDENCE


def _load(path: Path) -> list[dict[str, Any]]:
    data = jsonio.read_json(path)
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise InputError("expected an object with a 'results' list", path=path, field="results")
    for i, item in enumerate(results):
        if not isinstance(item, dict):
            raise InputError("expected an object", path=path, field=f"results[{i}]")
    return results


def _get(
    item: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path, where: str
) -> Any:
    value = item.get(key)
    if value is None:
        raise InputError("missing required field", path=path, field=f"{where}.{key}")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise InputError(
            f"expected {' or '.join(k.__name__ for k in kinds)}, got {type(value).__name__}",
            path=path,
            field=f"{where}.{key}",
        )
    return value


def _check_label(value: object, path: Path, field: str) -> str:
    if value not in ENTAILMENT_LABELS:
        raise InputError(
            f"unknown entailment label {value!r} (expected {', '.join(ENTAILMENT_LABELS)})",
            path=path,
            field=field,
        )
    assert isinstance(value, str)
    return value


def _ingest(paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
    """RAGChecker checking_outputs.json: claim x chunk entailment -> traces + labels.

    Reads every file; query ids must be unique across files.
    """
    neutral = options.option("neutral", NEUTRAL_CHOICES, "skip")
    system = options.system or DEFAULT_SYSTEM
    labels: list[Label] = []  # (the result holds them as a Sequence)
    result = IngestResult(labels=labels)
    seen: dict[str, Path] = {}
    mixed = skipped = 0
    for path in paths:
        for i, item in enumerate(_load(path)):
            where = f"results[{i}]"
            qid = str(_get(item, "query_id", (str, int), path, where))
            check_unique(
                seen, qid, path, what=f"duplicate query_id {qid!r}", field=f"{where}.query_id"
            )
            chunks = _get(item, "retrieved_context", list, path, where)
            passages: list[Passage] = []
            for j, chunk in enumerate(chunks):
                cw = f"{where}.retrieved_context[{j}]"
                if not isinstance(chunk, dict):
                    raise InputError("expected an object", path=path, field=cw)
                text = _get(chunk, "text", str, path, cw)
                # RAGChecker's RetrievedDoc has doc_id None unless given: its output writes
                # null (refused as a missing field); the text's hash names it, as generic does
                doc_id = (
                    f"sha256:{content_hash(text)}"
                    if chunk.get("doc_id") is None
                    else str(_get(chunk, "doc_id", (str, int), path, cw))
                )
                passages.append(Passage(passage_id=doc_id, rank=j + 1, text=text))
            claims = _get(item, "response_claims", list, path, where)
            matrix = _get(item, "retrieved2response", list, path, where)
            answer = _get(item, "answer2response", list, path, where)
            for name, values in (("retrieved2response", matrix), ("answer2response", answer)):
                if len(values) != len(claims):
                    raise InputError(
                        f"has {len(values)} entries but there are {len(claims)} response_claims",
                        path=path,
                        field=f"{where}.{name}",
                    )
            for c, (triplet, row, ref) in enumerate(zip(claims, matrix, answer, strict=True)):
                cw = f"{where}.response_claims[{c}]"
                if not isinstance(triplet, list) or not all(isinstance(t, str) for t in triplet):
                    raise InputError("expected a list of strings", path=path, field=cw)
                rw = f"{where}.retrieved2response[{c}]"
                if not isinstance(row, list) or len(row) != len(passages):
                    raise InputError(
                        f"expected a list of {len(passages)} labels (one per chunk)",
                        path=path,
                        field=rw,
                    )
                cells = [_check_label(v, path, f"{rw}[{k}]") for k, v in enumerate(row)]
                ref_label = _check_label(ref, path, f"{where}.answer2response[{c}]")
                claim_id = f"{qid}:c{c}"
                verdict = chunk_verdict(cells)
                mixed += "Entailment" in cells and "Contradiction" in cells
                result.traces.append(
                    Trace(
                        system=system,
                        question_id=qid,
                        sentence_id=claim_id,
                        claim_id=claim_id,
                        claim=" ".join(t.strip() for t in triplet),
                        verdict=verdict,
                        raw_verdict="|".join(cells),
                        passages=tuple(passages),
                        evidence_source=EvidenceSource.RETRIEVED,
                    )
                )
                if ref_label == "Neutral" and neutral == "skip":
                    skipped += 1
                    continue
                has_error = ref_label == "Contradiction" or (
                    ref_label == "Neutral" and neutral == "error"
                )
                labels.append(
                    Label(
                        system=system,  # this system's claim (another's q1:c0 is another)
                        sentence_id=claim_id,
                        question_id=qid,
                        has_error=has_error,
                        rationale=f"ground-truth answer vs claim: {ref_label}",
                        annotator="ragchecker:answer2response",
                    )
                )
    if mixed:
        result.notes.append(
            f"{mixed} claim(s) have both Entailment and Contradiction chunks (verdict "
            "supported by the any-Entailment rule)"
        )
    if skipped:
        result.notes.append(
            f"{skipped} claim(s) are Neutral against the ground-truth answer and get no "
            "label (--option neutral=error|no_error to label them)"
        )
    return result


ADAPTER = FileAdapter(
    "ragchecker", Output.TRACES, _ingest, options=("neutral",), json_document=True
)
