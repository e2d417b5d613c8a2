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
records as nested columns), read and written by :mod:`failcodes.disagreementio` (this module does
no file I/O).
"""

from __future__ import annotations

import hashlib
import heapq
import operator
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from json.encoder import encode_basestring as _json_string  # the encoder json.dumps uses
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from failcodes.contract import FrozenModel
from failcodes.errors import choice, objects_not_a_file
from failcodes.labels import Label, LabelIndex, check_in_memory
from failcodes.labelscope import DataShape, QuestionScope
from failcodes.mapping import (
    DEFAULT_MAPPING,
    ErrorMapping,
    SentenceWithoutClaims,
    resolve_mapping,
)
from failcodes.measurenames import DEFAULT_WITHOUT_CLAIMS, Level, WithoutClaimsPolicy
from failcodes.traces import EvidenceSource, Passage, Trace, unique_ranks
from failcodes.verdicts import Verdict

if TYPE_CHECKING:  # numpy, the columns: imported where selected (`attribute --help` selects none)
    import numpy as np
    import numpy.typing as npt

    from failcodes.tracecols import SentenceColumns, TraceColumns


class DisagreementKind(StrEnum):
    """How the system's mapped verdict differs from the clinical label."""

    FN = "FN"  # clinician marked an error; the system flagged none (error missed)
    FP = "FP"  # the system flagged an error; the clinician marked none (false alarm)


class ClaimRecord(FrozenModel):
    """One claim behind a disagreement, with everything the verifier saw and said."""

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
        description="The trace's evidence source (retrieved, provided, none, post-hoc); unset in "
        "files written before it existed (then derived as for traces).",
    )

    @field_validator("passages")
    @classmethod
    def _unique_ranks(cls, passages: tuple[Passage, ...]) -> tuple[Passage, ...]:
        return unique_ranks(passages)


class Disagreement(FrozenModel):
    """One sentence (or claim) where a system's mapped verdict and the clinical label differ."""

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
    """Return the stable content id of a disagreement.

    ``content_hash`` of ``{"system", "mapping", "level", "question_id", "sentence_id",
    "claim_id"}``: its canonical JSON (sorted keys, no blanks) written directly, each string
    by the encoder ``json.dumps`` uses (~5x faster than serialising the dict).
    """
    text = (
        '{"claim_id":'
        + (_json_string(claim_id) if claim_id is not None else "null")
        + ',"level":'
        + _json_string(level.value)
        + ',"mapping":'
        + _json_string(mapping)
        + ',"question_id":'
        + _json_string(question_id)
        + ',"sentence_id":'
        + _json_string(sentence_id)
        + ',"system":'
        + _json_string(system)
        + "}"
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _json(value: Any) -> Any:
    return value.value if isinstance(value, StrEnum) else value


_PASSAGE_FIELDS = tuple(Passage.model_fields)


@dataclass(frozen=True, slots=True)
class ClaimView:
    """The fields of a validated trace a claim record needs (its passages given as JSON).

    The disagreements command builds records for ~100k claims from lines it already
    validated; this plain view of a line costs a fraction of a :class:`Trace` model.
    """

    question_id: str
    sentence_id: str
    claim_id: str
    claim: str
    sentence: str | None
    verdict: Verdict
    raw_verdict: str | None
    reasoning: str | None
    verifier: str | None
    retriever: str | None
    evidence: EvidenceSource
    passages: tuple[Passage, ...] = ()


def claim_record_json(
    t: Trace | ClaimView,
    mapping: ErrorMapping,
    index: LabelIndex,
    passages: list[Any] | None = None,
) -> dict[str, Any]:
    """The claim record of one trace, JSON-ready (``ClaimRecord.model_dump(mode="json")``).

    ``passages``, when given, are the trace's passages already as JSON-ready dicts, or as
    the structs the trace reader decoded (fields in :class:`Passage` order; the disagreement
    writer encodes them as those dicts): no model per passage.
    """
    has_error = index.claim_has_error(t.sentence_id, t.claim_id)
    if passages is None:
        passages = [{n: _json(getattr(p, n)) for n in _PASSAGE_FIELDS} for p in t.passages]
    return {
        "claim_id": t.claim_id,
        "claim": t.claim,
        "verdict": t.verdict.value,
        "raw_verdict": t.raw_verdict,
        "maps_to_error": t.verdict in mapping.error_verdicts,
        "label_has_error": has_error,
        "reasoning": t.reasoning,
        "verifier": t.verifier,
        "retriever": t.retriever,
        "passages": passages,
        "evidence_source": t.evidence.value,
    }


@dataclass(frozen=True, slots=True)
class Selected:
    """One disagreement found on trace columns, before its claims' texts are fetched.

    ``rows`` are the trace rows of its claims in input order (empty for a labelled sentence
    without claims counted under the no_error policy). Found on sentence groups
    (:class:`GroupSelection`), ``group`` is its group in the :class:`SentenceColumns`
    (where the stream finds its claims) and ``rows`` the range of rows of a group whose
    claims are consecutive rows.
    """

    id: str
    system: str
    mapping: ErrorMapping
    level: Level
    question_id: str
    sentence_id: str
    claim_id: str | None
    label: Label
    predicted: bool
    rows: tuple[int, ...] | range
    group: int = -1

    @property
    def kind(self) -> DisagreementKind:
        """FN when the clinician marked an error, else FP."""
        return DisagreementKind.FN if self.label.has_error else DisagreementKind.FP


def disagreement_json(
    selected: Selected,
    claims: Sequence[Trace | ClaimView],
    index: LabelIndex,
    *,
    passages: Sequence[list[Any] | None] | None = None,
) -> dict[str, Any]:
    """The full record of a selected disagreement given its claims' traces (``rows`` order).

    Equal to ``Disagreement.model_dump(mode="json")`` of the same disagreement; built
    directly (the disagreements command writes hundreds of thousands of passages).
    """
    label, mapping = selected.label, selected.mapping
    given = passages if passages is not None else [None] * len(claims)
    own = index.of(selected.system)  # per-system labels: the system's own
    records = [claim_record_json(t, mapping, own, p) for t, p in zip(claims, given, strict=True)]
    if selected.level is Level.CLAIM:
        sentence = claims[0].sentence if claims else None
    else:
        sentence = next((t.sentence for t in claims if t.sentence), None)
    return {
        "id": selected.id,
        "kind": selected.kind.value,
        "level": selected.level.value,
        "system": selected.system,
        "mapping": mapping.name,
        "error_verdicts": mapping.verdict_names(),
        "question_id": selected.question_id,
        "sentence_id": selected.sentence_id,
        "sentence": sentence if sentence is not None else label.sentence,
        "claim_id": selected.claim_id,
        "label_has_error": label.has_error,
        "predicted_error": selected.predicted,
        "label_rationale": label.rationale,
        "label_severity": label.severity,
        "label_annotator": label.annotator,
        "claims": records,
        "error_claim_ids": [c["claim_id"] for c in records if c["maps_to_error"]],
    }


def select_with_shape(
    traces: Sequence[Trace] | TraceColumns,
    index: LabelIndex,
    mapping: ErrorMapping | str = DEFAULT_MAPPING,
    *,
    level: Level | str = Level.SENTENCE,
    without_claims: WithoutClaimsPolicy | str = DEFAULT_WITHOUT_CLAIMS,
    question_scope: QuestionScope | str = QuestionScope.AUTO,
) -> tuple[list[Selected], DataShape]:
    """Every FN/FP of every system under ``mapping`` as trace rows, and the data's shape.

    The selection is a join of the aggregated sentences (or claims) with their labels on the
    trace columns; no claim text is needed. Sorted by system, question, sentence, claim, id.
    Labels apply as in :func:`failcodes.metrics.compute_metrics` (per-system labels to their
    own system; shared ones within ``question_scope``). The shape is what the selection
    assumed of the data (the first line's facts).
    """
    lvl = choice(Level, level, "level")
    policy = choice(WithoutClaimsPolicy, without_claims, "without_claims")
    requested = choice(QuestionScope, question_scope, "question_scope")
    m = mapping if isinstance(mapping, ErrorMapping) else resolve_mapping(mapping)
    from failcodes.metrics import LabelledUnits, as_columns

    cols = as_columns(traces)
    if lvl is Level.CLAIM:
        index.labelled_units(cols)  # the labels' own errors, as ever, before any other
    units = LabelledUnits.of_index(cols, index, lvl, policy, requested)
    at, predicted = units.differing(m)
    out: list[Selected] = []
    if lvl is Level.CLAIM:
        # int32 codes as stored, no int64 copy (8 bytes a row each at 10x paper scale)
        sys_codes, systems = cols.small_codes("system")
        q_codes, questions = cols.small_codes("question_id")
        s_codes, sentences = cols.small_codes("sentence_id")
        c_codes, claims = cols.small_codes("claim_id")
        for row, pred in zip(at.tolist(), predicted.tolist(), strict=True):
            system = systems[sys_codes[row]]
            qid, sid, cid = questions[q_codes[row]], sentences[s_codes[row]], claims[c_codes[row]]
            lab = index.of(system).for_claim(qid, sid, cid)
            assert lab is not None  # (a labelled unit)
            out.append(_selected(m, lvl, system, qid, sid, cid, lab, pred, (row,)))
    else:
        import numpy as np

        groups = units.groups
        assert groups is not None
        order = np.argsort(groups.group, kind="stable")
        bounds = np.searchsorted(groups.group[order], np.arange(len(groups.system) + 1))
        # a label is fetched only for a disagreement (labels read as columns build it then)
        for g, pred in zip(at.tolist(), predicted.tolist(), strict=True):
            sid = groups.sentences[int(groups.sentence[g])]
            system = groups.systems[int(groups.system[g])]
            qid = groups.questions[int(groups.question[g])]
            rows = _rows(order[bounds[g] : bounds[g + 1]])
            lab = index.of(system).sentence[sid]
            out.append(_selected(m, lvl, system, qid, sid, None, lab, pred, rows))
        for miss in units.missed():
            lab = index.of(miss.system).for_sentence(miss.question_id, miss.sentence_id)
            assert lab is not None  # (a labelled error sentence)
            args = (miss.system, miss.question_id, miss.sentence_id, None, lab, False, ())
            out.append(_selected(m, lvl, *args))
    out.sort(key=_order)
    return out, units.facts.shape


def _selected(
    mapping: ErrorMapping,
    level: Level,
    system: str,
    qid: str,
    sid: str,
    cid: str | None,
    label: Label,
    predicted: bool,
    rows: tuple[int, ...] | range,
    group: int = -1,
) -> Selected:
    """A :class:`Selected` with its content id (:func:`disagreement_id`)."""
    return Selected(
        id=disagreement_id(system, mapping.name, level, qid, sid, cid),
        system=system,
        mapping=mapping,
        level=level,
        question_id=qid,
        sentence_id=sid,
        claim_id=cid,
        label=label,
        predicted=predicted,
        rows=rows,
        group=group,
    )


#: Disagreeing groups turned into Python values at a time by :class:`GroupSelection`.
_BLOCK = 1_024


def _order(d: Selected) -> tuple[str, str, str, str, str]:
    """The output order of disagreements: system, question, sentence, claim, id."""
    return (d.system, d.question_id, d.sentence_id, d.claim_id or "", d.id)


@dataclass(frozen=True)
class GroupSelection:
    """The disagreements of one mapping found on sentence groups, in output order (issue 18).

    Held as arrays (the disagreeing groups, their predictions) and the few labelled error
    sentences a system has no claim for; each :class:`Selected`, its label included, is
    built when iterated and not kept (270,000 of them at 10x paper scale cost ~120 MB as
    objects). The same disagreements, in the same order, as :func:`select_with_shape`
    gives on the trace columns.
    """

    cols: SentenceColumns
    index: LabelIndex
    mapping: ErrorMapping
    groups: npt.NDArray[np.int64]  # disagreeing group numbers, ascending (= output order)
    predicted: npt.NDArray[np.bool_]  # per disagreeing group: the system flags an error
    missing: tuple[SentenceWithoutClaims, ...]  # error sentences without claims: FN, sorted
    shape: DataShape | None = None  # what the selection assumed of the data

    def __len__(self) -> int:
        """Number of disagreements."""
        return len(self.groups) + len(self.missing)

    def __iter__(self) -> Iterator[Selected]:
        """Every disagreement as a :class:`Selected`, in output order."""
        origin = self.cols.origin
        for (system, qid, sid, uid), g, pred, first, run in self.keyed():
            rows: range | tuple[int, ...] = ()  # (a sentence without claims)
            if run:
                rows = range(first, first + run)
            elif origin is not None and origin.scattered is not None and g in origin.scattered:
                rows = tuple(row for row, *_ in origin.rows_of(g))
            elif g >= 0:
                raise ValueError("a group's claims are not located: see unlocated()")
            label = self.index.of(system).sentence_label(sid)
            level, mapping = Level.SENTENCE, self.mapping
            yield Selected(uid, system, mapping, level, qid, sid, None, label, pred, rows, g)

    def keyed(self) -> Iterator[tuple[tuple[str, str, str, str], int, bool, int, int]]:
        """Each disagreement in output order, with where its claims are (no label built).

        ``((system, question, sentence, id), group, predicted, first row, run)``: a labelled
        sentence without claims has group -1 and run 0; ``run`` is the group's rows when they
        are consecutive from the first, else 0.
        """
        name = self.mapping.name

        def key(system: str, question: str, sentence: str) -> tuple[str, str, str, str]:
            uid = disagreement_id(system, name, Level.SENTENCE, question, sentence, None)
            return system, question, sentence, uid

        located = ((key(s, q, t), g, p, f, r) for g, p, r, f, s, q, t in self.located())
        missing = (
            (key(x.system, x.question_id, x.sentence_id), -1, False, 0, 0) for x in self.missing
        )
        return heapq.merge(located, missing, key=operator.itemgetter(0))

    def located(self) -> Iterator[tuple[int, bool, int, int, str, str, str]]:
        """Each disagreeing group with where its claims are, in output order.

        ``(group, predicted, run, first row, system, question, sentence)``; ``run`` is its
        rows when they are consecutive from the first, else 0.
        """
        cols, origin = self.cols, self.cols.origin
        if origin is None:
            raise ValueError("groups read without locate: their claims cannot be found")
        for start in range(0, len(self.groups), _BLOCK):
            # a block at a time as Python values (all at once: ~7 MB at 10x paper scale)
            block = self.groups[start : start + _BLOCK]
            values = zip(
                block.tolist(),
                self.predicted[start : start + _BLOCK].tolist(),
                origin.run[block].tolist(),
                cols.first[block].tolist(),
                cols.system[block].tolist(),
                cols.question[block].tolist(),
                cols.sentence[block].tolist(),
                strict=True,
            )
            for g, pred, run, first, system, question, sentence in values:
                yield (
                    g,
                    pred,
                    run,
                    first,
                    cols.systems[system],
                    cols.questions[question],
                    cols.sentences[sentence],
                )

    def counts(self) -> dict[tuple[str, str], dict[str, int]]:
        """:func:`count_by_kind` of these disagreements (no :class:`Selected` built)."""
        import numpy as np

        n = len(self.cols.systems)
        system = self.cols.system[self.groups]
        fp = np.bincount(system[self.predicted], minlength=n).tolist()
        fn = np.bincount(system[~self.predicted], minlength=n).tolist()
        for miss in self.missing:
            fn[self.cols.systems.index(miss.system)] += 1
        return {
            (name, self.mapping.name): {"FN": fn[i], "FP": fp[i]}
            for i, name in enumerate(self.cols.systems)
            if fn[i] or fp[i]
        }

    def unlocated(self) -> npt.NDArray[np.int64]:
        """The disagreeing groups whose claims are not located (not one run of rows)."""
        origin = self.cols.origin
        if origin is None:
            return self.groups
        runless: npt.NDArray[np.int64] = self.groups[origin.run[self.groups] == 0]
        if origin.scattered is not None and len(runless):
            import numpy as np

            runless = runless[~np.isin(runless, origin.scattered.group)]
        return runless


def select_group_disagreements(
    cols: SentenceColumns,
    labels: Sequence[Label],
    index: LabelIndex | None,
    mappings: Sequence[ErrorMapping],
    *,
    without_claims: WithoutClaimsPolicy | str = DEFAULT_WITHOUT_CLAIMS,
    question_scope: QuestionScope | str = QuestionScope.AUTO,
) -> list[GroupSelection] | None:
    """Sentence-level :func:`select_with_shape` on groups, one selection per mapping.

    The labels are matched to the groups by code (:class:`~failcodes.metrics.GroupLabels`);
    None when they do not match there (claim labels, per-system labels, a label that fits no
    trace, two labels for one sentence): the trace columns then give the exact error, if
    any. ``index`` None: the selections look labels up through that match
    (:meth:`GroupLabels.label_index`).
    """
    from failcodes.metrics import GroupLabels, LabelledUnits

    policy = WithoutClaimsPolicy(without_claims)
    requested = QuestionScope(question_scope)
    matched = GroupLabels(cols, labels, requested)
    if not matched.valid:
        return None
    units = LabelledUnits.of_matched(cols, matched, policy, requested)
    if index is None:
        index = matched.label_index(cols, labels)
    missing = tuple(units.missed())
    out = []
    for m in mappings:
        groups, predicted = units.differing(m)
        out.append(GroupSelection(cols, index, m, groups, predicted, missing, units.facts.shape))
    return out


def _rows(rows: npt.NDArray[np.integer[Any]]) -> tuple[int, ...] | range:
    """Ascending trace rows as a ``range`` when consecutive, else a tuple.

    A sentence's claims usually are consecutive rows: a range costs 48 bytes where a tuple
    of Python ints costs ~180 (267k disagreements at 10x paper scale).
    """
    if len(rows) and int(rows[-1]) - int(rows[0]) + 1 == len(rows):
        return range(int(rows[0]), int(rows[-1]) + 1)
    return tuple(int(r) for r in rows)


def find_disagreements(
    traces: Sequence[Trace],
    labels: Iterable[Label],
    mapping: ErrorMapping | str = DEFAULT_MAPPING,
    *,
    level: Level | str = Level.SENTENCE,
    without_claims: WithoutClaimsPolicy | str = DEFAULT_WITHOUT_CLAIMS,
    question_scope: QuestionScope | str = QuestionScope.AUTO,
) -> list[Disagreement]:
    """Return every FN/FP of every system under ``mapping``, sorted by system, question, id.

    Uses the same label resolution and aggregation as :func:`failcodes.metrics.compute_metrics`
    (so the FN and FP counts here equal its ``fn`` and ``fp``). Raises :class:`InputError` on
    duplicate claims/labels or a label matching no trace. (For large trace files the
    ``disagreements`` command selects on columns and writes streaming instead.)
    """
    for name, given in (("traces", traces), ("labels", labels)):
        objects_not_a_file(name, given)  # a path was read letter by letter (AttributeError)
    items = list(traces)
    sentences = choice(Level, level, "level") is Level.SENTENCE
    index = LabelIndex(check_in_memory(labels, items, sentences))
    return [
        Disagreement.model_validate(disagreement_json(s, [items[r] for r in s.rows], index))
        for s in select_with_shape(
            items,
            index,
            mapping,
            level=level,
            without_claims=without_claims,
            question_scope=question_scope,
        )[0]
    ]


def count_by_kind(
    items: Iterable[Disagreement | Selected | GroupSelection],
) -> dict[tuple[str, str], dict[str, int]]:
    """Return ``{(system, mapping): {"FN": n, "FP": n}}`` (a selection counts as its items)."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for d in items:
        if isinstance(d, GroupSelection):
            for key, counts in d.counts().items():
                per = out.setdefault(key, {"FN": 0, "FP": 0})
                per["FN"] += counts["FN"]
                per["FP"] += counts["FP"]
            continue
        name = d.mapping if isinstance(d.mapping, str) else d.mapping.name
        per = out.setdefault((d.system, name), {"FN": 0, "FP": 0})
        per[d.kind.value] += 1
    return out
