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
from failcodes.idzeros import spelled_twins
from failcodes.labels import Label, LabelIndex
from failcodes.labelscope import (
    DataShape,
    LabelScope,
    QuestionScope,
    QuestionShape,
    question_shape,
    resolve_scope,
)
from failcodes.mapping import DEFAULT_MAPPING, resolve_mapping, sentence_groups
from failcodes.metrics import DEFAULT_WITHOUT_CLAIMS, WithoutClaimsPolicy
from failcodes.tracecols import TraceColumns
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
    cols = TraceColumns.from_traces(traces)
    groups = sentence_groups(cols, index.labelled_sentences(traces))
    answered = groups.answered()
    shape = question_shape(answered, np.unique(groups.known[:, 0]))
    scope = resolve_scope(question_scope, shape)
    if shape is QuestionShape.DISJOINT and scope is QuestionScope.ANSWERED:
        raise StatisticsError(
            f"each labelled question was answered by one system only ({len(systems)} "
            "systems): no unit was answered by two systems, so paired tests do not apply; "
            "compare their metrics' intervals (failcodes metrics --bootstrap 2000) instead "
            "(--question-scope all counts another system's sentences as misses)"
        )
    per_question = answered.systems_per_question()
    everyone = {groups.questions[q] for q in np.flatnonzero(per_question >= len(systems))}
    calls: dict[tuple[str, str], dict[str, bool]] = {}
    flagged = groups.flags(cols.error_rows(error_mapping.error_verdicts))
    for s, q, sid, flag in zip(
        groups.system, groups.question, groups.sentence, flagged, strict=True
    ):
        key = (groups.questions[q], groups.sentences[sid])
        calls.setdefault(key, {})[groups.systems[s]] = bool(flag)
    missing: dict[str, int] = {}
    dropped: set[tuple[str, str]] = set()
    # a sentence out of a system's scope is out of every system's units (not paired)
    for m in groups.without_claims(answered if scope is QuestionScope.ANSWERED else None):
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
            question_zeros=tuple(spelled_twins(dict.fromkeys(qids))),
        ),
        unanswered=unanswered,
        questions=qids,
    )
