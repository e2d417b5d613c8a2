"""SciFact claims + MultiVerS predictions -> traces of four verifier systems and claim labels.

The inputs (``claims_dev.jsonl``, one predictions file per MultiVerS checkpoint, an optional
``rationales_dev.tsv``), the claim-level verdict rule, the label rule (``has_error`` = gold
CONTRADICT) and the ids: docs/benchmarks.md. Evidence source ``provided``: the passages are
the gold rationale texts where available.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from failcodes.contract import FrozenModel
from failcodes.errors import InputError
from failcodes.jsonio import iter_jsonl
from failcodes.labels import Label
from failcodes.tableio import validate_record
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.verdicts import Verdict

#: The four public MultiVerS checkpoints whose SciFact-dev predictions are bundled.
CHECKPOINTS: tuple[str, ...] = ("scifact", "healthver", "covidfact", "fever")

#: Gold labels and predicted labels of SciFact-style files.
GOLD_LABELS = frozenset({"SUPPORT", "CONTRADICT"})
PREDICTED_LABELS = frozenset({"SUPPORT", "CONTRADICT", "REFUTE", "NEI"})


class GoldRationale(FrozenModel):
    """One gold rationale: a minimal set of sentences that together justify the label."""

    sentences: tuple[int, ...] = Field(description="Sentence indices into the abstract.")
    label: str = Field(description="SUPPORT or CONTRADICT.")


class SciFactClaim(BaseModel):
    """One SciFact claim with its gold evidence."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: int
    claim: str
    evidence: dict[str, tuple[GoldRationale, ...]] = Field(default_factory=dict)
    cited_doc_ids: tuple[int, ...] = ()
    #: The claim has its ``evidence`` field (SciFact's test claims have none: no gold label).
    gold: bool = True

    @property
    def gold_label(self) -> str:
        """The claim-level gold label: SUPPORT, CONTRADICT or NEI (no evidence)."""
        labels = {r.label for rats in self.evidence.values() for r in rats}
        if not labels:
            return "NEI"
        if len(labels) > 1:  # never in SciFact; the official evaluator rejects it too
            raise ValueError(f"claim {self.id} has conflicting gold labels {sorted(labels)}")
        return labels.pop()


class PredictedDoc(BaseModel):
    """A system's prediction for one abstract."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    label: str
    sentences: tuple[int, ...] = ()
    label_probs: tuple[float, ...] | None = None


class SciFactPrediction(BaseModel):
    """A system's predictions for one claim (SciFact / MultiVerS prediction format)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: int
    evidence: dict[str, PredictedDoc] = Field(default_factory=dict)


def read_claims(path: str | Path) -> list[SciFactClaim]:
    """Read a SciFact claims file (JSONL), validating every line."""
    p = Path(path)
    out: list[SciFactClaim] = []
    seen: set[int] = set()
    for lineno, obj in iter_jsonl(p):
        claim = validate_record(SciFactClaim, obj, p, lineno)
        if isinstance(obj, dict) and "evidence" not in obj:
            claim = claim.model_copy(update={"gold": False})
        for doc, rats in claim.evidence.items():
            for rat in rats:
                if rat.label not in GOLD_LABELS:
                    raise InputError(
                        f"unknown gold label {rat.label!r} (expected SUPPORT or CONTRADICT)",
                        path=p,
                        line=lineno,
                        field=f"evidence.{doc}.label",
                    )
        try:
            claim.gold_label  # noqa: B018 - validates label consistency
        except ValueError as exc:
            raise InputError(str(exc), path=p, line=lineno, field="evidence") from None
        if claim.id in seen:
            raise InputError(f"duplicate claim id {claim.id}", path=p, line=lineno, field="id")
        seen.add(claim.id)
        out.append(claim)
    return out


def read_predictions(path: str | Path) -> list[SciFactPrediction]:
    """Read a SciFact/MultiVerS prediction file (JSONL), validating every line."""
    p = Path(path)
    out: list[SciFactPrediction] = []
    for lineno, obj in iter_jsonl(p):
        pred = validate_record(SciFactPrediction, obj, p, lineno)
        for doc, dp in pred.evidence.items():
            if dp.label not in PREDICTED_LABELS:
                known = ", ".join(sorted(PREDICTED_LABELS))
                raise InputError(
                    f"unknown predicted label {dp.label!r} (expected one of {known})",
                    path=p,
                    line=lineno,
                    field=f"evidence.{doc}.label",
                )
        out.append(pred)
    return out


def read_rationale_texts(
    path: str | Path, claims: Sequence[SciFactClaim]
) -> dict[tuple[int, str], str]:
    """Align ``rationales_dev.tsv`` rows with the claims' gold documents.

    Returns ``{(claim id, doc id): rationale text}``. Each row's claim text and entailment
    label are checked against the claim it is aligned with; a mismatch is an InputError.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=p)
    expected = [(c, doc) for c in claims for doc in c.evidence]
    csv.field_size_limit(1 << 26)
    with p.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    for col in ("sentence1", "sentence2", "entailment"):
        if rows and col not in rows[0]:
            raise InputError("missing column", path=p, line=1, field=col)
    if len(rows) != len(expected):
        raise InputError(
            f"{len(rows)} rows but the claims have {len(expected)} gold documents", path=p
        )
    out: dict[tuple[int, str], str] = {}
    for i, ((claim, doc), row) in enumerate(zip(expected, rows, strict=True), start=2):
        if row["sentence2"].strip() != claim.claim.strip():
            raise InputError(
                f"row does not belong to claim {claim.id}", path=p, line=i, field="sentence2"
            )
        entails = row["entailment"].strip() == "entailment"
        if entails != (claim.gold_label == "SUPPORT"):
            raise InputError(
                f"entailment label disagrees with claim {claim.id}",
                path=p,
                line=i,
                field="entailment",
            )
        out[(claim.id, doc)] = row["sentence1"].strip()
    return out


def claim_verdict(prediction: SciFactPrediction) -> Verdict:
    """Claim-level verdict from per-abstract predicted labels (rule in the module docstring)."""
    labels = {d.label for d in prediction.evidence.values()} - {"NEI"}
    support = "SUPPORT" in labels
    refute = bool(labels & {"REFUTE", "CONTRADICT"})
    if support and refute:
        return Verdict.AMBIGUOUS
    if support:
        return Verdict.SUPPORTED
    if refute:
        return Verdict.REFUTED
    return Verdict.NO_EVIDENCE


def _raw_verdict(prediction: SciFactPrediction) -> str:
    if not prediction.evidence:
        return "(no abstract labelled)"
    return "; ".join(f"{doc}:{dp.label}" for doc, dp in prediction.evidence.items())


def _reasoning(prediction: SciFactPrediction) -> str:
    if not prediction.evidence:
        return "The verifier predicted no label and no rationale for any cited abstract."
    parts = []
    for doc, dp in prediction.evidence.items():
        sents = ", ".join(str(s) for s in dp.sentences) or "none"
        parts.append(f"abstract {doc}: {dp.label}, rationale sentences [{sents}]")
    return "Per-abstract predictions: " + "; ".join(parts) + "."


def gold_passages(
    claim: SciFactClaim, rationale_texts: Mapping[tuple[int, str], str]
) -> tuple[Passage, ...]:
    """The claim's gold rationale passages (where text is available), ranked by evidence order."""
    out: list[Passage] = []
    for doc, rats in claim.evidence.items():
        text = rationale_texts.get((claim.id, doc))
        if text is None:
            continue
        sents = sorted({s for r in rats for s in r.sentences})
        out.append(
            Passage(
                passage_id=f"{doc}:" + ",".join(str(s) for s in sents),
                rank=len(out) + 1,
                text=text,
                source=f"scifact-corpus:{doc}",
                gold=True,
            )
        )
    return tuple(out)


def build_traces(
    claims: Sequence[SciFactClaim],
    predictions: Mapping[str, Sequence[SciFactPrediction]],
    rationale_texts: Mapping[tuple[int, str], str] | None = None,
    *,
    path_hint: str | None = None,
) -> list[Trace]:
    """One trace per (system, claim). ``predictions`` maps system name -> predictions.

    Predictions must cover exactly the claims, in the same order (as the official evaluator
    requires).
    """
    texts = rationale_texts or {}
    ids = [c.id for c in claims]
    traces: list[Trace] = []
    for system, preds in predictions.items():
        if [p.id for p in preds] != ids:
            raise InputError(
                f"predictions of system {system!r} do not list the claims in the same order",
                path=path_hint,
                field="id",
            )
        for claim, pred in zip(claims, preds, strict=True):
            cid = str(claim.id)
            traces.append(
                Trace(
                    system=system,
                    question_id=cid,
                    sentence_id=cid,
                    claim_id=cid,
                    claim=claim.claim,
                    sentence=claim.claim,
                    verdict=claim_verdict(pred),
                    raw_verdict=_raw_verdict(pred),
                    reasoning=_reasoning(pred),
                    verifier=system,
                    retriever="oracle (cited abstracts)",
                    passages=gold_passages(claim, texts),
                    evidence_source=EvidenceSource.PROVIDED,
                )
            )
    return traces


def build_labels(claims: Sequence[SciFactClaim]) -> list[Label]:
    """Claim labels: ``has_error`` = gold CONTRADICT; the rationale names the gold label.

    A claim without its ``evidence`` field has no gold label, and gets no label: read as NOT
    ENOUGH INFO (an empty ``{}``), SciFact's test claims were 300 no-error labels
    (multivers-scifact P 0.0: FP 64, TN 236 on dev's claims without their evidence, exit 0).
    """
    return [
        Label(
            sentence_id=str(c.id),
            question_id=str(c.id),
            has_error=c.gold_label == "CONTRADICT",
            rationale=f"SciFact gold label {c.gold_label}",
            annotator="SciFact annotators",
            sentence=c.claim,
        )
        for c in claims
        if c.gold
    ]


def system_name(checkpoint: str) -> str:
    """The failcodes system name of a MultiVerS checkpoint's predictions."""
    return f"multivers-{checkpoint}"


def load_dir(
    root: str | Path, checkpoints: Sequence[str] = CHECKPOINTS
) -> tuple[list[SciFactClaim], dict[str, list[SciFactPrediction]], dict[tuple[int, str], str]]:
    """Read claims, the checkpoints' predictions and (if present) rationale texts from a dir.

    Accepts the shared-data layout (``rte_scifact_from_covidfact_repo/dev.tsv``) and the
    bundled one (``rationales_dev.tsv``).
    """
    base = Path(root)
    claims = read_claims(base / "claims_dev.jsonl")
    if not claims:
        raise InputError(
            "no claims (expected one JSON object per claim)", path=base / "claims_dev.jsonl"
        )
    preds = {
        system_name(ck): read_predictions(
            base / "multivers_predictions_dev" / f"{ck}_scifact_dev.jsonl"
        )
        for ck in checkpoints
    }
    texts: dict[tuple[int, str], str] = {}
    for cand in (base / "rationales_dev.tsv", base / "rte_scifact_from_covidfact_repo/dev.tsv"):
        if cand.is_file():
            texts = read_rationale_texts(cand, claims)
            break
    return claims, preds, texts


def load(root: str | Path) -> tuple[list[Trace], list[Label]]:
    """Traces of the four MultiVerS systems and claim labels from a SciFact directory."""
    claims, preds, texts = load_dir(root)
    return build_traces(claims, preds, texts, path_hint=str(root)), build_labels(claims)


def bundled_dir() -> Path:
    """The bundled SciFact directory (src/failcodes/bundled/scifact)."""
    return Path(__file__).resolve().parent.parent / "bundled" / "scifact"
