"""Sentence-level outcomes of several systems on the same clinician-labelled sentences.

The table adapter between traces + labels and the paired tests of
:mod:`failcodes.stats.classification` (which take arrays): one row per labelled sentence,
one column per system, under the one rule for sentences without claims
(:data:`failcodes.metrics.DEFAULT_WITHOUT_CLAIMS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from failcodes.errors import StatisticsError
from failcodes.labels import Label, LabelIndex
from failcodes.labelscope import (
    Answered,
    DataShape,
    LabelScope,
    QuestionScope,
    QuestionShape,
    question_shape,
    resolve_scope,
)
from failcodes.mapping import DEFAULT_MAPPING, aggregate_sentences, resolve_mapping
from failcodes.metrics import DEFAULT_WITHOUT_CLAIMS, WithoutClaimsPolicy
from failcodes.traces import Trace

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PairedOutcomes:
    """Sentence-level has-error calls of several systems on the same labelled sentences."""

    unit_ids: list[str]  # "question_id/sentence_id"
    systems: list[str]
    truth: FloatArray  # 1 = the clinician marked an error
    predictions: FloatArray  # units x systems, 1 = the system flags an error
    without_claims: dict[str, int] = field(default_factory=dict)  # labelled, no claims
    policy: WithoutClaimsPolicy = DEFAULT_WITHOUT_CLAIMS
    shape: DataShape | None = None  # what was assumed of the data (labelscope)
    unanswered: int = 0  # labelled units left out: a system never answered their question
    questions: list[str] = field(default_factory=list)  # each unit's question (its cluster)


def paired_outcomes_from_traces(
    traces: Sequence[Trace],
    labels: Sequence[Label],
    mapping: str = DEFAULT_MAPPING,
    *,
    without_claims: WithoutClaimsPolicy | str = DEFAULT_WITHOUT_CLAIMS,
    question_scope: QuestionScope | str = QuestionScope.AUTO,
) -> PairedOutcomes:
    """Pair every system's sentence verdict (any-error rule, ``mapping``) on labelled sentences.

    The one rule of :data:`failcodes.metrics.DEFAULT_WITHOUT_CLAIMS`: a labelled sentence a
    system extracted no claim from counts as "no error flagged" for that system, so every
    system has an outcome on every labelled sentence and the tests stay paired. With
    ``exclude`` such sentences are left out for every system (pairing needs the same units).
    ``without_claims`` in the result counts them per system.

    Paired tests need one truth on units every system was scored on: per-system labels,
    and shared labels of questions each answered by one system only, are refused
    (:class:`StatisticsError`, naming what to do instead). With ``question_scope``
    ``answered`` the units are those of the questions every system answered.
    """
    policy = WithoutClaimsPolicy(without_claims)
    if not traces:
        raise StatisticsError("no traces given")
    error_mapping = resolve_mapping(mapping)
    index = LabelIndex(labels)
    systems = sorted({t.system for t in traces})
    if len(systems) < 2:
        raise StatisticsError(f"comparing systems needs at least 2 systems, got {systems}")
    if index.per_system is not None:
        raise StatisticsError(
            "per-system labels (a system column): each system was judged on its own answer, so "
            "no unit has one truth for two systems and paired tests do not apply; compare "
            "their metrics' intervals (failcodes metrics --bootstrap 2000) instead"
        )
    known = index.labelled_sentences(traces)
    agg = aggregate_sentences(traces, error_mapping, known_sentences=known)
    answered = {(t.system, t.question_id) for t in traces}
    questions = sorted({k.question_id for k in known})
    shape = _question_shape(systems, questions, answered)
    scope = resolve_scope(question_scope, shape)
    if shape is QuestionShape.DISJOINT and scope is QuestionScope.ANSWERED:
        raise StatisticsError(
            f"each labelled question was answered by one system only ({len(systems)} "
            "systems): no unit was answered by two systems, so paired tests do not apply; "
            "compare their metrics' intervals (failcodes metrics --bootstrap 2000) instead "
            "(--question-scope all counts another system's sentences as misses)"
        )
    everyone = {q for q in questions if all((s, q) in answered for s in systems)}
    calls: dict[tuple[str, str], dict[str, bool]] = {}
    for sv in agg.sentences:
        calls.setdefault((sv.question_id, sv.sentence_id), {})[sv.system] = sv.predicted_error
    missing: dict[str, int] = {}
    dropped: set[tuple[str, str]] = set()
    for m in agg.without_claims:
        if scope is QuestionScope.ANSWERED and (m.system, m.question_id) not in answered:
            continue  # out of its scope (and the unit out of every system's: not paired)
        calls.setdefault((m.question_id, m.sentence_id), {})[m.system] = False
        missing[m.system] = missing.get(m.system, 0) + 1
        if policy is WithoutClaimsPolicy.EXCLUDE:
            dropped.add((m.question_id, m.sentence_id))
    ids: list[str] = []
    qids: list[str] = []
    truth: list[float] = []
    preds: list[list[float]] = []
    unanswered = 0
    for (qid, sid), per in sorted(calls.items()):
        lab = index.for_sentence(qid, sid)
        if lab is None or (qid, sid) in dropped:
            continue
        if scope is QuestionScope.ANSWERED and qid not in everyone:
            unanswered += 1  # (paired: left out for every system)
            continue
        ids.append(f"{qid}/{sid}")
        qids.append(qid)
        truth.append(float(lab.has_error))
        preds.append([float(per.get(s, False)) for s in systems])
    if not ids:
        raise StatisticsError("no labelled sentence matches the traces")
    return PairedOutcomes(
        ids,
        systems,
        np.array(truth),
        np.array(preds),
        without_claims={s: missing.get(s, 0) for s in systems},
        policy=policy,
        shape=DataShape(
            labels=LabelScope.SHARED,
            level="sentence",
            systems=len(systems),
            questions=shape,
            question_scope=scope,
            scope_given=QuestionScope(question_scope) is not QuestionScope.AUTO,
            without_claims=policy.value,
        ),
        unanswered=unanswered,
        questions=qids,
    )


def _question_shape(
    systems: Sequence[str], questions: Sequence[str], answered: set[tuple[str, str]]
) -> QuestionShape:
    """:func:`failcodes.labelscope.question_shape` of (system, question) pairs by name."""
    s_code = {name: i for i, name in enumerate(systems)}
    q_code = {q: i for i, q in enumerate(questions)}
    sys_codes: list[int] = []
    q_codes: list[int] = []
    for name, q in answered:
        if q in q_code:
            sys_codes.append(s_code[name])
            q_codes.append(q_code[q])
    table = Answered.of(
        np.array(sys_codes, dtype=np.int64),
        np.array(q_codes, dtype=np.int64),
        len(systems),
        len(questions),
    )
    return question_shape(table, np.arange(len(questions), dtype=np.int64))
