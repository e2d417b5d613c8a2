"""Attribution of disagreements to retrieval, provided evidence or verification.

Seed 001 (Figure 1) splits errors into retrieval and verification but states no rule; the
rule here is failcodes' own, written out with its assumptions in docs/attribution.md.

First, the pipeline's evidence source (:class:`~failcodes.traces.EvidenceSource`, declared on
the trace or derived from it) decides which stages exist:

- ``none`` (closed-book): no retrieval stage -> always **verification**.
- ``post-hoc`` (evidence retrieved after the answer was written, to cite it): the claim did not
  depend on it -> always **verification**; the citations are never judged as passages.
- ``provided`` (evidence given with the item): no retriever to blame. The evidence is judged
  like retrieved passages; if it is judged insufficient (no gold passage / no all-high
  passage) -> **evidence** (the given evidence, not a retriever), else **verification**. No
  passage text -> **verification** (nothing to assess; the verifier worked with what it had).
- ``retrieved``: the two strategies below.

Two strategies, recorded with a reason per item:

- ``gold-evidence`` (closed benchmarks, where passages carry ``gold`` flags): no gold passage
  in the top k -> **retrieval**; a gold passage was retrieved -> **verification**.
- ``codebook`` (open-ended settings, no gold evidence): no top-k passage is high quality on
  every retrieval dimension (the five dimensions of the v1 codebook) -> **retrieval**;
  otherwise -> **verification**. Passages not coded (missing or unscored) make an item
  **undetermined** unless another passage is all-high.

``auto`` uses gold evidence for traces that carry gold flags and the codebook otherwise.
A disagreement is attributed through the claims that caused it (an FP's error claims, all
claims of an FN); if they split, it is **mixed**.

Also here: the per-passage and per-trace code tables, the all-high rate per retriever, the
all-correct rate per verifier and the dominant error subcodes (pandas adapters over the
annotations). Dedup-aware: a passage judged once counts once per retriever that returned it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import Field

from failcodes.annotations import NOT_ASSESSABLE, Annotation, CoderKind, Status
from failcodes.codebook import Codebook
from failcodes.contract import FrozenModel
from failcodes.disagreements import Disagreement, DisagreementKind
from failcodes.errors import InputError
from failcodes.traces import EvidenceSource, Trace
from failcodes.units import UnitKind, claim_trace, unit_id

if TYPE_CHECKING:  # pandas (~0.2 s to import) is imported by the table functions that use it
    import pandas as pd


class Strategy(StrEnum):
    """How an item is attributed."""

    AUTO = "auto"
    GOLD_EVIDENCE = "gold-evidence"
    CODEBOOK = "codebook"


class Stage(StrEnum):
    """Where a disagreement is attributed."""

    RETRIEVAL = "retrieval"
    VERIFICATION = "verification"
    EVIDENCE = "evidence"  # evidence provided with the item judged insufficient (no retriever)
    MIXED = "mixed"
    UNDETERMINED = "undetermined"


class ClaimAttribution(FrozenModel):
    """The attribution of one claim (one trace)."""

    system: str
    question_id: str
    sentence_id: str
    claim_id: str
    retriever: str | None = None
    verifier: str | None = None
    evidence_source: EvidenceSource = EvidenceSource.RETRIEVED
    strategy: Strategy
    stage: Stage
    reason: str
    high_quality_ranks: tuple[int, ...] = Field(
        default=(), description="Ranks of the top-k passages that are all-high (or gold)."
    )


class ItemAttribution(FrozenModel):
    """The attribution of one disagreement (or one trace, when no disagreements are given)."""

    item_id: str
    system: str
    question_id: str
    sentence_id: str
    claim_id: str | None = None
    kind: DisagreementKind | None = None
    stage: Stage
    strategy: str
    evidence_source: str = Field(
        default=EvidenceSource.RETRIEVED.value,
        description="The claims' evidence source(s) (retrieved, provided, none, post-hoc; "
        "'+'-joined if they differ).",
    )
    reason: str
    claims: tuple[ClaimAttribution, ...]


#: Joins the codes of a multi-label dimension in one cell of the wide tables
#: (``overreach|conflict_synthesis_failure``); a single-label cell holds one code.
CODE_SEPARATOR = "|"


def code_cell(ann: Annotation | None, dimension: str) -> str | None:
    """The wide-table cell of ``dimension``: its code(s), joined by :data:`CODE_SEPARATOR`."""
    if ann is None:
        return None
    codes = ann.code_set(dimension)
    return CODE_SEPARATOR.join(codes) if codes else None


def cell_codes(cell: object) -> list[str]:
    """The codes of one wide-table cell (empty for a missing cell)."""
    if not isinstance(cell, str) or not cell:
        return []
    return cell.split(CODE_SEPARATOR)


def index_annotations(
    annotations: Iterable[Annotation], codebook: Codebook, kind: UnitKind
) -> dict[str, Annotation]:
    """Map unit id -> annotation of ``kind``; refuse annotations made under another codebook."""
    out: dict[str, Annotation] = {}
    for ann in annotations:
        if ann.unit_kind is not kind:
            continue
        if ann.codebook.hash != codebook.hash:
            raise InputError(
                f"annotation of unit {ann.unit_id} was made under codebook {ann.codebook}, "
                f"not {codebook.name}@{codebook.version}; migrate it first "
                "(failcodes codebook migrate)"
            )
        out[ann.unit_id] = ann
    return out


def is_all_high(ann: Annotation | None, high: Mapping[str, str]) -> bool | None:
    """True if every assessed dimension got its high-quality code; None if not (validly) coded.

    A dimension coded :data:`~failcodes.annotations.NOT_ASSESSABLE` is left out (neither high
    nor low); an annotation with no assessed dimension at all is None (nothing to go by).
    """
    if ann is None or ann.status is not Status.SCORED:
        return None
    assessed = {dim: code for dim, code in high.items() if ann.codes.get(dim) != NOT_ASSESSABLE}
    if not assessed:
        return None
    return all(ann.codes.get(dim) == code for dim, code in assessed.items())


def assessed_dimensions(ann: Annotation | None, dims: Iterable[str]) -> int | None:
    """How many of ``dims`` were assessed (not coded not_assessable); None if not coded."""
    if ann is None or ann.status is not Status.SCORED:
        return None
    return sum(1 for dim in dims if ann.codes.get(dim) != NOT_ASSESSABLE)


def codebook_stage(flags: Sequence[bool | None], source: EvidenceSource) -> Stage:
    """The codebook rule on one claim's top-k passages, from their all-high decisions.

    A passage all-high on every assessed dimension -> verification; else a passage not coded
    (None) -> undetermined; else the stage that chose the evidence: retrieval, or (evidence
    provided with the item) evidence. The judge's codes and a reviewer's go through this same
    rule (:func:`attribute_trace`, :func:`human_attributions`).
    """
    if any(f is True for f in flags):
        return Stage.VERIFICATION
    if any(f is None for f in flags):
        return Stage.UNDETERMINED
    return Stage.RETRIEVAL if source is EvidenceSource.RETRIEVED else Stage.EVIDENCE


def combined_stage(stages: Sequence[Stage]) -> Stage:
    """An item's stage from its claims': the common one, or mixed (undetermined if none)."""
    distinct = set(stages)
    if not distinct:
        return Stage.UNDETERMINED
    return distinct.pop() if len(distinct) == 1 else Stage.MIXED


def _top(trace: Trace, top_k: int | None) -> list[tuple[int, str, bool | None]]:
    return [(p.rank, p.text, p.gold) for p in trace.passages if top_k is None or p.rank <= top_k]


def attribute_trace(
    trace: Trace,
    retrieval: Mapping[str, Annotation],
    codebook: Codebook,
    *,
    strategy: Strategy = Strategy.AUTO,
    top_k: int | None = None,
) -> ClaimAttribution:
    """Attribute one claim's outcome to a stage of its pipeline (with the reason).

    The rule (docs/attribution.md): closed-book -> verification; provided evidence judged
    insufficient -> evidence, else verification; retrieved passages -> retrieval when no
    top-k passage is usable evidence (gold, or all-high under the codebook), else verification.
    """
    passages = _top(trace, top_k)
    source = trace.evidence
    k = f"top {top_k}" if top_k is not None else source.value
    has_gold = any(p.gold is not None for p in trace.passages)
    use = strategy
    if strategy is Strategy.AUTO:
        use = Strategy.GOLD_EVIDENCE if has_gold else Strategy.CODEBOOK
    base = {
        "system": trace.system,
        "question_id": trace.question_id,
        "sentence_id": trace.sentence_id,
        "claim_id": trace.claim_id,
        "retriever": trace.retriever,
        "verifier": trace.verifier,
        "evidence_source": source,
        "strategy": use,
    }
    cited = f"; its {len(trace.passages)} citation(s) are not judged" if trace.passages else ""
    if source is EvidenceSource.NONE:
        return ClaimAttribution(
            **base,
            stage=Stage.VERIFICATION,
            reason="closed-book pipeline (evidence source none): no retrieval stage, the "
            f"verifier answered from its own knowledge{cited}",
        )
    if source is EvidenceSource.POST_HOC:
        return ClaimAttribution(
            **base,
            stage=Stage.VERIFICATION,
            reason="post-hoc citation (evidence source post-hoc): the answer was written "
            "before its evidence was retrieved, so retrieval did not cause the claim; a poor "
            f"citation is a citation failure, not this error's cause{cited}",
        )
    # Where no passage is usable evidence, the blame goes to the stage that chose the evidence:
    # the retriever, or (provided evidence) the evidence given with the item.
    weak = Stage.RETRIEVAL if source is EvidenceSource.RETRIEVED else Stage.EVIDENCE
    if not passages:
        if source is EvidenceSource.PROVIDED:
            return ClaimAttribution(
                **base,
                stage=Stage.VERIFICATION,
                reason="evidence provided with the item (no retrieval stage), but no passage "
                f"text {'in the top ' + str(top_k) if top_k is not None else 'given'} to "
                "assess; the verifier worked with what it was given",
            )
        return ClaimAttribution(**base, stage=Stage.RETRIEVAL, reason=f"no passage {k}")
    what = "provided evidence" if source is EvidenceSource.PROVIDED else f"the {k} passages"
    if use is Strategy.GOLD_EVIDENCE:
        if not has_gold:
            return ClaimAttribution(
                **base,
                stage=Stage.UNDETERMINED,
                reason="gold-evidence strategy, but no passage carries a gold flag",
            )
        gold = tuple(r for r, _, g in passages if g)
        if gold:
            found = "provided" if source is EvidenceSource.PROVIDED else "retrieved"
            return ClaimAttribution(
                **base,
                stage=Stage.VERIFICATION,
                reason=f"gold evidence {found} at rank {', '.join(map(str, gold))}; "
                "the verifier had it",
                high_quality_ranks=gold,
            )
        return ClaimAttribution(**base, stage=weak, reason=f"no gold passage among {what}")
    high = codebook.high_quality_codes(UnitKind.RETRIEVAL)
    n_dims = len(high)
    verdicts = [
        (rank, is_all_high(retrieval.get(unit_id(UnitKind.RETRIEVAL, trace.claim, (text,))), high))
        for rank, text, _ in passages
    ]
    good = tuple(r for r, v in verdicts if v)
    uncoded = [r for r, v in verdicts if v is None]
    stage = codebook_stage([v for _, v in verdicts], source)
    if stage is Stage.VERIFICATION:
        return ClaimAttribution(
            **base,
            stage=Stage.VERIFICATION,
            reason=f"passage rank {', '.join(map(str, good))} is high quality on every assessed "
            f"retrieval dimension (of {n_dims}); the verifier had usable evidence",
            high_quality_ranks=good,
        )
    if stage is Stage.UNDETERMINED:
        return ClaimAttribution(
            **base,
            stage=stage,
            reason=f"{len(uncoded)} of {len(verdicts)} {k} passages not coded (missing or "
            "unscored) and none of the coded ones is all-high",
        )
    if source is EvidenceSource.PROVIDED:
        reason = (
            f"none of the {len(verdicts)} passages of the provided evidence is high quality on "
            f"every assessed retrieval dimension (of {n_dims}); no retrieval stage, the "
            "evidence given with the item was insufficient"
        )
    else:
        reason = (
            f"none of the {len(verdicts)} {k} passages is high quality on every assessed "
            f"retrieval dimension (of {n_dims})"
        )
    return ClaimAttribution(**base, stage=stage, reason=reason)


def _combine(claims: Sequence[ClaimAttribution]) -> tuple[Stage, str]:
    if not claims:
        return Stage.UNDETERMINED, "no claims behind this disagreement"
    stage = combined_stage([c.stage for c in claims])
    if len(claims) == 1:
        return stage, claims[0].reason
    if stage is not Stage.MIXED:
        reasons = list(dict.fromkeys(c.reason for c in claims))
        if len(reasons) == 1:  # say why, not only where
            return stage, f"all {len(claims)} claims: {stage.value}; {reasons[0]}"
        shown = "; ".join(f"{c.claim_id}: {c.reason}" for c in claims[:3])
        more = f"; and {len(claims) - 3} more" if len(claims) > 3 else ""
        return stage, f"all {len(claims)} claims: {stage.value} ({shown}{more})"
    parts = "; ".join(f"{c.claim_id}: {c.stage.value}" for c in claims)
    return Stage.MIXED, f"claims split ({parts})"


def attribute(
    items: Sequence[Disagreement] | Sequence[Trace],
    retrieval_annotations: Iterable[Annotation],
    codebook: Codebook,
    *,
    strategy: Strategy = Strategy.AUTO,
    top_k: int | None = None,
) -> list[ItemAttribution]:
    """Attribute every disagreement (or trace) to retrieval, verification, or mixed."""
    index = index_annotations(retrieval_annotations, codebook, UnitKind.RETRIEVAL)
    out: list[ItemAttribution] = []
    for item in items:
        if isinstance(item, Trace):  # one claim: its own attribution
            item_id, kind, records = f"{item.system}/{item.claim_id}", None, [item]
        else:
            causes = set(item.error_claim_ids) if item.kind is DisagreementKind.FP else None
            item_id, kind = item.id, item.kind
            records = [
                claim_trace(item, rec)
                for rec in item.claims
                if causes is None or rec.claim_id in causes
            ]
        claims = [
            attribute_trace(trace, index, codebook, strategy=strategy, top_k=top_k)
            for trace in records
        ]
        stage, reason = _combine(claims)
        used = sorted({c.strategy.value for c in claims}) or [strategy.value]
        sources = sorted({c.evidence_source.value for c in claims})
        out.append(
            ItemAttribution(
                item_id=item_id,
                system=item.system,
                question_id=item.question_id,
                sentence_id=item.sentence_id,
                claim_id=item.claim_id,
                kind=kind,
                stage=stage,
                strategy="+".join(used),
                evidence_source="+".join(sources) or EvidenceSource.RETRIEVED.value,
                reason=reason,
                claims=tuple(claims),
            )
        )
    return out


class ReviewedAttribution(FrozenModel):
    """One attributed item with the judge's stage and, if its passages were reviewed, a human's."""

    item_id: str
    system: str
    judge: Stage = Field(description="The stage from the judge's codes (as attributed).")
    human: Stage | None = Field(
        description="The stage from the reviewer's codes by the same rule; None when a passage "
        "the item's stage rests on was not reviewed."
    )
    units: tuple[str, ...] = Field(
        description="Retrieval units (passages) the item's stage rests on; empty when no judge "
        "code enters it (closed-book, gold evidence, no passage)."
    )


def judged_by_codebook(claim: ClaimAttribution) -> bool:
    """Whether the claim's stage rests on the judge's codes of its passages (codebook rule)."""
    return claim.strategy is Strategy.CODEBOOK and claim.evidence_source in (
        EvidenceSource.RETRIEVED,
        EvidenceSource.PROVIDED,
    )


def human_attributions(
    items: Iterable[ItemAttribution],
    claim_units: Mapping[tuple[str, str], Sequence[str]],
    human_flags: Mapping[str, bool | None],
) -> list[ReviewedAttribution]:
    """Each item's stage again, from a reviewer's all-high decisions, by the same rule.

    ``claim_units`` maps (system, claim id) to the unit ids of the claim's top-k passages (the
    rows of :func:`per_passage_codes`); ``human_flags`` maps a reviewed unit to the reviewer's
    all-high decision (:func:`is_all_high` of the reviewer's codes: None when the reviewer
    assessed no dimension). A claim whose stage rests on its passages' codes
    (:func:`judged_by_codebook`) gets the human stage :func:`codebook_stage` gives with the
    reviewer's decisions, when every one of its passages was reviewed; other claims keep
    their stage (no judge code enters it). The item's human stage combines its claims'
    (:func:`combined_stage`), or is None when a claim's passages were not all reviewed.
    """
    out: list[ReviewedAttribution] = []
    for item in items:
        units: list[str] = []
        human: list[Stage] | None = []
        for claim in item.claims:
            passages = claim_units.get((claim.system, claim.claim_id), ())
            if not judged_by_codebook(claim) or not passages:
                if human is not None:
                    human.append(claim.stage)
                continue
            units.extend(passages)
            if human is not None and all(u in human_flags for u in passages):
                human.append(
                    codebook_stage([human_flags[u] for u in passages], claim.evidence_source)
                )
            else:
                human = None
        out.append(
            ReviewedAttribution(
                item_id=item.item_id,
                system=item.system,
                judge=item.stage,
                human=None if human is None else combined_stage(human),
                units=tuple(dict.fromkeys(units)),
            )
        )
    return out


# -- tables -----------------------------------------------------------------------------


def _group(trace: Trace, by: str) -> str:
    value = getattr(trace, by, None)
    return str(value) if value else trace.system


def per_passage_codes(
    traces: Iterable[Trace],
    retrieval_annotations: Iterable[Annotation],
    codebook: Codebook,
    *,
    top_k: int | None = None,
) -> pd.DataFrame:
    """One row per (trace, top-k passage) with its codes and ``all_high`` (None if uncoded).

    ``assessed_dimensions`` counts the dimensions not coded ``not_assessable``; ``all_high``
    is over those (see :func:`is_all_high`).
    """
    import pandas as pd

    index = index_annotations(retrieval_annotations, codebook, UnitKind.RETRIEVAL)
    high = codebook.high_quality_codes(UnitKind.RETRIEVAL)
    rows = []
    for t in traces:
        for p in t.evidence_passages:  # citations (none, post-hoc) are no Table 8 row
            if top_k is not None and p.rank > top_k:
                continue
            uid = unit_id(UnitKind.RETRIEVAL, t.claim, (p.text,))
            row: dict[str, object] = {
                "system": t.system,
                "retriever": _group(t, "retriever"),
                "question_id": t.question_id,
                "sentence_id": t.sentence_id,
                "claim_id": t.claim_id,
                "rank": p.rank,
                "passage_id": p.passage_id,
                "gold": p.gold,
            }
            rows.append(_coded_row(row, uid, index.get(uid), high, "all_high"))
    return pd.DataFrame(rows, columns=_columns(list(high), "all_high", passage=True))


def per_trace_steps(
    traces: Iterable[Trace],
    verification_annotations: Iterable[Annotation],
    codebook: Codebook,
    *,
    top_k: int | None = None,
) -> pd.DataFrame:
    """One row per trace with its step codes and ``all_correct`` (None if uncoded)."""
    import pandas as pd

    index = index_annotations(verification_annotations, codebook, UnitKind.VERIFICATION)
    high = codebook.high_quality_codes(UnitKind.VERIFICATION)
    rows = []
    for t in traces:
        if not t.reasoning or not t.reasoning.strip():
            continue
        passages = tuple(p.text for p in t.passages if top_k is None or p.rank <= top_k)
        uid = unit_id(UnitKind.VERIFICATION, t.claim, passages, t.reasoning, t.verdict)
        row: dict[str, object] = {
            "system": t.system,
            "verifier": _group(t, "verifier"),
            "question_id": t.question_id,
            "sentence_id": t.sentence_id,
            "claim_id": t.claim_id,
            "verdict": t.verdict.value,
        }
        rows.append(_coded_row(row, uid, index.get(uid), high, "all_correct"))
    return pd.DataFrame(rows, columns=_columns(list(high), "all_correct", passage=False))


def _coded_row(
    head: dict[str, object],
    uid: str,
    ann: Annotation | None,
    high: Mapping[str, str],
    flag: str,
) -> dict[str, object]:
    """``head`` (the unit's trace columns) + its unit id, coding, codes and all-high ``flag``."""
    row = {
        **head,
        "unit_id": uid,
        "status": ann.status.value if ann else "missing",
        "coder": ann.coder if ann else None,
        "coder_kind": ann.coder_kind.value if ann else None,
    }
    for dim in high:
        row[dim] = code_cell(ann, dim)
    row["assessed_dimensions"] = assessed_dimensions(ann, high)
    row[flag] = is_all_high(ann, high)
    return row


def _columns(dims: list[str], flag: str, *, passage: bool) -> list[str]:
    head = ["system", "retriever" if passage else "verifier", "question_id", "sentence_id"]
    head += ["claim_id"]
    head += ["rank", "passage_id", "gold"] if passage else ["verdict"]
    return [*head, "unit_id", "status", "coder", "coder_kind", *dims, "assessed_dimensions", flag]


def quality_rate(table: pd.DataFrame, *, by: str, flag: str) -> pd.DataFrame:
    """Share of coded rows with ``flag`` true, per ``by`` group (uncoded rows excluded).

    Columns: ``by``, rows, coded, ``flag`` (count), rate (``flag`` / coded; NaN-free: a
    group with nothing coded gets rate None), not_fully_assessed (coded rows with at least one
    dimension coded ``not_assessable``: their flag is over the assessed dimensions only).
    """
    import pandas as pd

    out = []
    for group, sub in table.groupby(by, sort=True):
        coded = sub[flag].notna()
        n_coded = int(coded.sum())
        n_true = int((sub.loc[coded, flag] == True).sum())  # noqa: E712 - object column
        partial = int((sub.loc[coded] == NOT_ASSESSABLE).any(axis=1).sum())
        out.append(
            {
                by: group,
                "rows": len(sub),
                "coded": n_coded,
                flag: n_true,
                "rate": (n_true / n_coded) if n_coded else None,
                "not_fully_assessed": partial,
            }
        )
    return pd.DataFrame(out, columns=[by, "rows", "coded", flag, "rate", "not_fully_assessed"])


def all_high_rate(per_passage: pd.DataFrame, *, by: str = "retriever") -> pd.DataFrame:
    """The five-dimension all-high rate per retriever (seed 001, Table 8 bottom line)."""
    return quality_rate(per_passage, by=by, flag="all_high")


def all_correct_rate(per_trace: pd.DataFrame, *, by: str = "verifier") -> pd.DataFrame:
    """The six-step all-correct rate per verifier (seed 001, Table 9)."""
    return quality_rate(per_trace, by=by, flag="all_correct")


def dominant_errors(
    table: pd.DataFrame,
    codebook: Codebook,
    kind: UnitKind,
    *,
    by: str,
    top: int = 3,
) -> pd.DataFrame:
    """The most frequent low-quality subcodes per group, as shares of the coded rows.

    Several subcodes of one row count separately (one per dimension, and each code of a
    multi-label dimension), as in seed 001's Table 9 where error cells of one step co-occur.
    """
    import pandas as pd

    part = codebook.part(kind)
    rows = []
    for group, sub in table.groupby(by, sort=True):
        coded = sub[sub["status"] == Status.SCORED.value]
        n = len(coded)
        if n == 0:
            continue
        found = []
        for dim in part.dimensions:
            counts = coded[dim.id].map(cell_codes).explode().value_counts()
            for sc in dim.subcodes:
                if sc.high_quality:
                    continue
                c = int(counts.get(sc.id, 0))
                if c:
                    found.append((c, dim.id, sc.id, sc.label))
        found.sort(key=lambda x: (-x[0], x[1], x[2]))
        for c, dim_id, sc_id, label in found[:top]:
            rows.append(
                {
                    by: group,
                    "dimension": dim_id,
                    "subcode": sc_id,
                    "label": label,
                    "count": c,
                    "coded": n,
                    "share": c / n,
                }
            )
    return pd.DataFrame(
        rows, columns=[by, "dimension", "subcode", "label", "count", "coded", "share"]
    )


def attribution_table(items: Iterable[ItemAttribution]) -> pd.DataFrame:
    """One row per attributed item: id, system, kind, stage, strategy, evidence source, reason."""
    import pandas as pd

    rows = [
        {
            "item_id": a.item_id,
            "system": a.system,
            "question_id": a.question_id,
            "sentence_id": a.sentence_id,
            "claim_id": a.claim_id,
            "kind": a.kind.value if a.kind else None,
            "stage": a.stage.value,
            "strategy": a.strategy,
            "evidence_source": a.evidence_source,
            "reason": a.reason,
        }
        for a in items
    ]
    return pd.DataFrame(
        rows,
        columns=[
            "item_id",
            "system",
            "question_id",
            "sentence_id",
            "claim_id",
            "kind",
            "stage",
            "strategy",
            "evidence_source",
            "reason",
        ],
    )


def attribution_summary(items: Iterable[ItemAttribution]) -> pd.DataFrame:
    """Counts of items per system and stage (the attribution table of Figure 1)."""
    import pandas as pd

    table = attribution_table(items)
    stages = [s.value for s in Stage]
    if table.empty:
        return pd.DataFrame(columns=["system", *stages, "total"])
    counts = pd.crosstab(table["system"], table["stage"]).reindex(columns=stages, fill_value=0)
    counts["total"] = counts.sum(axis=1)
    return counts.reset_index().rename_axis(None, axis=1)


def heuristic_coded(annotations: Iterable[Annotation]) -> bool:
    """True if any annotation comes from the offline heuristic baseline."""
    return any(a.coder_kind is CoderKind.HEURISTIC for a in annotations)
