"""Detection metrics of a system's mapped verdicts against clinical labels.

The positive class is *has error*, per system x mapping, at sentence level (any-error
aggregation, :mod:`failcodes.mapping`) or claim level. TP/FP/FN/TN and each metric's formula
and when it is undefined (an :class:`Estimate` then carries ``value=None`` and an
``undefined_reason``): docs/statistics.md, "Detection metrics".

Confidence intervals: the studentized cluster bootstrap over questions
(:mod:`failcodes.stats.bootstrap`), the percentile interval where the standard error is 0 or
fewer than :data:`MIN_STUDENTIZED_EVENTS` units sit on the rarer side of a ratio (``method``);
a resample where a metric is undefined is left out of its interval and counted
(``defined_resamples``). Why, and the measured coverage: docs/statistics.md ("P/R/F1
intervals").
"""

from __future__ import annotations

import bisect
import functools
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field

from failcodes.contract import FrozenModel
from failcodes.errors import ConfigError, choice, listed, objects_not_a_file
from failcodes.labelcols import label_column
from failcodes.labels import Label, SentenceLabelCodes, check_in_memory, label_flags
from failcodes.labels import LabelIndex as LabelIndex  # re-exported (one index, in labels)
from failcodes.labelscope import (
    Answered,
    Coverage,
    DataShape,
    LabelScope,
    QuestionScope,
    QuestionShape,
    assumptions_line,
    coverage,
    question_shape,
    resolve_scope,
)
from failcodes.mapping import (
    DEFAULT_MAPPING,
    ErrorMapping,
    SentenceGroups,
    SentenceWithoutClaims,
    check_unique_claims,
    resolve_mapping,
    sentence_groups,
)
from failcodes.measurenames import DEFAULT_WITHOUT_CLAIMS as DEFAULT_WITHOUT_CLAIMS
from failcodes.measurenames import WITHOUT_CLAIMS_RULE as WITHOUT_CLAIMS_RULE
from failcodes.measurenames import Level as Level
from failcodes.measurenames import WithoutClaimsPolicy as WithoutClaimsPolicy
from failcodes.stats.bootstrap import (
    MIN_POSITIVES,
    FloatArray,
    IntArray,
    check_seed,
    cluster_rng,
    interval_warning,
    multinomial_weights,
    percentile_intervals,
)
from failcodes.stats.estimate import Estimate as Estimate  # re-exported: the one family
from failcodes.tracecols import VERDICTS, SentenceColumns, TraceColumns, VerdictCounts
from failcodes.traces import Trace
from failcodes.verdicts import Verdict

if TYPE_CHECKING:  # pandas costs ~0.4 s to import; only the DataFrame adapters need it
    import pandas as pd

#: Metric names in report order.
METRICS: tuple[str, ...] = (
    "precision",
    "recall",
    "f1",
    "specificity",
    "balanced_accuracy",
    "youden_j",
    "accuracy",
)

#: A metric's short name (the table's heads, the notes under it).
SHORT = {
    "precision": "P",
    "recall": "R",
    "f1": "F1",
    "specificity": "Spec",
    "balanced_accuracy": "BalAcc",
    "youden_j": "J",
    "accuracy": "Acc",
}
#: After an interval in the table: it carries a CI warning (the notes name why). The list is
#: cut at 6 cells per warning, so without the mark a cell past the cut ("and 1 more") showed
#: its interval with no word beside it.
WARNED = "*"

_NO_PRED = "no predicted errors (TP + FP = 0)"
_NO_POS = "no clinician-labelled errors (TP + FN = 0)"
_NO_NEG = "no clinician-labelled non-errors (TN + FP = 0)"
_NO_UNITS = "no labelled units (n = 0)"


#: Why the metrics of a labelled subset are the subset's (seed 001, appendix A.2).
SUBSET_RULE = (
    "precision, recall and F1 hold for the labelled subset only: they cannot be extrapolated "
    "to the full set (seed 001, appendix A.2: a gold subset's precision and F1 are not the "
    "whole set's, whose unlabelled units may hold other errors and other false alarms)"
)


def subset_note(system: str, level: str, labelled: int, unlabelled: int) -> str:
    """One line: labels cover ``labelled`` of the system's units; the metrics are the subset's.

    None of them (labels of other systems alone): no subset to hold for, and no metric.
    """
    if not labelled:
        return (
            f"{system}: no label applies to it (0 of its {unlabelled} {level}s labelled): it "
            "has no precision, recall or F1, and no disagreement"
        )
    return f"{system}: labels cover {labelled} of {labelled + unlabelled} {level}s; {SUBSET_RULE}"


def label_coverage(
    cols: TraceColumns | SentenceColumns, index: LabelIndex, level: Level = Level.SENTENCE
) -> dict[str, tuple[int, int]]:
    """Per system: (its trace units that have a label, all its trace units).

    A sentence is one (question, sentence) the system made claims in; shared labels are
    looked up by sentence id, per-system labels by the system's own (as the metrics do).
    At claim level (trace columns) a unit is a claim, labelled by its own label or its
    sentence's: the claims ``metrics --level claim`` counts (n, and n_unlabelled).
    """
    if level is Level.CLAIM:
        if not isinstance(cols, TraceColumns):
            raise ValueError("claim-level coverage needs the claims: trace columns, not groups")
        sys_codes, systems = cols.codes("system")
        s_codes, sentences = cols.codes("sentence_id")
        c_codes, claims = cols.codes("claim_id")
        flags = row_label_flags(sys_codes, systems, s_codes, sentences, c_codes, claims, index)
        k = len(systems)
        all_c = np.bincount(sys_codes, minlength=k) if len(sys_codes) else np.zeros(k)
        has = flags >= 0
        hit_c = np.bincount(sys_codes[has], minlength=k) if has.any() else np.zeros(k)
        return {name: (int(hit_c[i]), int(all_c[i])) for i, name in enumerate(systems)}
    groups = sentence_groups(cols)
    labelled = group_label_flags(groups, index) >= 0
    n = len(groups.systems)
    total = np.bincount(groups.system, minlength=n) if len(groups.system) else np.zeros(n)
    hit = np.bincount(groups.system[labelled], minlength=n) if labelled.any() else np.zeros(n)
    return {name: (int(hit[i]), int(total[i])) for i, name in enumerate(groups.systems)}


def coverage_line(
    coverage: dict[str, tuple[int, int]], level: str = "sentence", errors_only: bool = False
) -> str | None:
    """One line when labels cover only some of the units (None: all covered).

    ``labels cover N of M sentences ...; the other M-N are left out``, with the per-system
    counts when there are several systems (N and M summed over them). ``coverage`` is per
    system (units labelled, all units), e.g. :func:`label_coverage`. ``errors_only``: no
    label counted says a unit is correct, which the line says (:data:`ERRORS_ONLY`).
    """
    n = sum(c for c, _ in coverage.values())
    m = sum(t for _, t in coverage.values())
    if n == m:
        return None
    per = (
        " (" + ", ".join(f"{s}: {c} of {t}" for s, (c, t) in coverage.items()) + ")"
        if len(coverage) > 1
        else ""
    )
    line = f"labels cover {n} of {m} {level}s{per}; the other {m - n} are left out (unlabelled)"
    return line + ERRORS_ONLY.format(level=level, m=m - n) if errors_only else line


#: Said after the coverage line when every label counted is an error: clinicians who listed
#: the errors alone left the correct sentences unlabelled, and a system flagging all 6
#: sentences of 2 listed errors read P 100%, F1 100%, accuracy 100% for P 33%, F1 50%, exit 0.
ERRORS_ONLY = (
    "; no label counted says a {level} is correct (every one is an error): a list of the "
    "errors alone? then the other {m} are correct, not unknown, and precision and accuracy "
    "here count no false alarm (100% for a system that flags every {level}); give the others "
    "a label, has_error false"
)


def unlabelled_systems(coverage: dict[str, tuple[int, int]], level: str) -> str | None:
    """The systems no label names a unit of, beside others it does (None: none such).

    Said on the first line: their n 0 rows (every metric undefined, no disagreement) beside
    counted ones, from labels keyed by another system's claim ids.
    """
    unnamed = [s for s, (c, t) in coverage.items() if not c and t]
    if not unnamed or len(unnamed) == len(coverage):
        return None
    return (
        f"{', '.join(unnamed)}: no label names any of its {level}s (n 0: every metric "
        f"undefined, no disagreement; labels keyed by another system's {level} ids? label its "
        f"{level}s too" + (", or use --level sentence)" if level == "claim" else ")")
    )


class Interval(FrozenModel):
    """A cluster-bootstrap interval, or an explicit statement that it is undefined."""

    low: float | None
    high: float | None
    method: Literal["studentized", "percentile"] = Field(
        default="studentized",
        description="'studentized': bootstrap-t with the cluster-robust standard error; "
        "'percentile': percentile interval (used where that standard error is 0, or fewer "
        "than 10 units sit on the rarer side of the metric's ratio: it may under-cover, "
        "``warning`` says when). The JSON and CSV rows' ``<metric>_ci_method``.",
    )
    confidence: float = Field(description="e.g. 0.95")
    resamples: int = Field(description="Resamples drawn.")
    defined_resamples: int = Field(description="Resamples in which the metric was defined.")
    undefined_reason: str | None = None
    warning: str | None = Field(
        default=None,
        description="Why the interval may mislead: fewer than 20 questions (clusters), the "
        "metric's units concentrated in a few questions (fewer than 15 effective clusters), "
        "fewer than 10 positives behind the metric, zero width, a boundary estimate "
        "(failcodes.stats.bootstrap.interval_warning); for specificity, accuracy, balanced "
        "accuracy and J, and for P/R/F1 on 10 or more positives, a percentile interval on "
        "fewer than 10 units on its rarer side.",
    )


#: The units behind each metric's denominator (tp, fp, fn, tn indices): their count is the
#: "positives" an interval warning looks at.
_DENOMINATOR = {"recall": (0, 2), "f1": (0, 2), "precision": (0, 1)}


class BootstrapSettings(FrozenModel):
    """How intervals were computed."""

    resamples: int = Field(ge=1)
    seed: int
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    cluster: str = Field(default="question_id", description="The resampled cluster.")


#: :meth:`MetricResult.flat`'s plain fields before the metrics and after them, as dumped
#: (enums as their values; ``error_verdicts`` is joined by commas there).
_FLAT_HEAD = set("system mapping error_verdicts level n n_questions tp fp fn tn".split())  # noqa: SIM905
_FLAT_TAIL = set(
    """n_unlabelled n_without_claims without_claims_policy labels question_shape question_scope
    n_labelled_questions n_answered_questions n_labelled_sentences n_unanswered""".split()  # noqa: SIM905
)


class MetricResult(FrozenModel):
    """Confusion counts, metrics and (optionally) intervals of one system x mapping x level."""

    system: str
    mapping: str
    error_verdicts: tuple[str, ...] = Field(description="Verdicts the mapping counts as error.")
    level: Level
    n: int = Field(description="Labelled units counted (tp + fp + fn + tn).")
    n_questions: int = Field(
        description="Questions (bootstrap clusters) among them: those with a unit counted; a "
        "question whose answer holds no claim has no trace row and is not among them."
    )
    tp: int
    fp: int
    fn: int
    tn: int
    metrics: dict[str, Estimate]
    intervals: dict[str, Interval] = Field(default_factory=dict)
    n_unlabelled: int = Field(default=0, description="Units without a label (left out).")
    n_without_claims: int = Field(
        default=0, description="Labelled sentences this system has no claim for."
    )
    without_claims_policy: WithoutClaimsPolicy = DEFAULT_WITHOUT_CLAIMS
    labels: LabelScope = Field(
        default=LabelScope.SHARED,
        description="shared: one label per unit for every system; per_system: this system's "
        "own labels (failcodes.labelscope).",
    )
    question_shape: QuestionShape | None = Field(
        default=None,
        description="Shared labels, sentence level: common (every system answered every "
        "labelled question), disjoint (one system each) or partial.",
    )
    question_scope: QuestionScope | None = Field(
        default=None,
        description="Shared labels, sentence level: answered (only the labelled questions this "
        "system answered count) or all (every labelled sentence counts).",
    )
    n_labelled_questions: int | None = Field(
        default=None, description="Labelled questions whose labels apply to this system."
    )
    n_answered_questions: int | None = Field(
        default=None, description="Of those, the questions this system made a claim in."
    )
    n_labelled_sentences: int | None = Field(
        default=None, description="Labelled (question, sentence) units that apply to it."
    )
    n_unanswered: int | None = Field(
        default=None,
        description="Of those, the ones in questions it never answered (counted only under "
        "question_scope all).",
    )
    question_zeros: tuple[tuple[str, str], ...] = Field(
        default=(),
        description="Question ids of the traces that differ only in leading zeros, case, "
        "spacing or Unicode form ('01', "
        "'1'): different questions here, each counted and a bootstrap cluster of its own "
        "(a row holds the field only when there are some).",
    )
    claims_by_sentence: tuple[int, int] | None = Field(
        default=None,
        description="Claim level: (labelled claims that took their sentence's label, labelled "
        "claims), summed over systems, when some did (a row holds the field only then).",
    )

    def flat(self) -> dict[str, Any]:
        """Return one flat record: counts, each metric, ``<metric>_ci_low/_ci_high`` etc."""
        row = self.model_dump(mode="json", include=_FLAT_HEAD)
        row["error_verdicts"] = ",".join(self.error_verdicts)
        for name in METRICS:
            est = self.metrics[name]
            row[name] = est.value
            row[f"{name}_undefined_reason"] = est.undefined_reason
            ci = self.intervals.get(name)
            row[f"{name}_ci_low"] = ci.low if ci else None
            row[f"{name}_ci_high"] = ci.high if ci else None
            if ci is not None:
                # which interval (the text tables' '*' aside, the JSON said nothing of it):
                # studentized, or percentile (which may under-cover: its warning says when)
                row[f"{name}_ci_method"] = ci.method if ci.low is not None else None
                row[f"{name}_ci_defined_resamples"] = ci.defined_resamples
                row[f"{name}_ci_undefined_reason"] = ci.undefined_reason
                row[f"{name}_ci_warning"] = ci.warning
        if self.intervals:  # the report's captions name it (a --confidence 0.5 read as 95%)
            row["ci_confidence"] = next(iter(self.intervals.values())).confidence
        row.update(self.model_dump(mode="json", include=_FLAT_TAIL))
        if self.question_zeros:  # (the report's run box says them: labelscope.shape_of_rows)
            row["question_zeros"] = [list(pair) for pair in self.question_zeros]
        if self.claims_by_sentence:  # (as question_zeros: the run box's Data line says it)
            row["claims_by_sentence"] = list(self.claims_by_sentence)
        return row


class VerdictDistribution(FrozenModel):
    """How often a system gave each canonical verdict to its claims (seed 001, Table 5)."""

    system: str
    n_claims: int
    counts: dict[Verdict, int] = Field(description="Claims per verdict (all five verdicts).")
    proportions: dict[Verdict, Estimate] = Field(description="counts / n_claims.")

    def flat(self) -> dict[str, Any]:
        """Return ``system, n_claims, <verdict>, <verdict>_share`` as one record."""
        row: dict[str, Any] = {"system": self.system, "n_claims": self.n_claims}
        for v in Verdict:
            row[v.value] = self.counts[v]
            row[f"{v.value}_share"] = self.proportions[v].value
        return row


class MetricsReport(FrozenModel):
    """Everything ``failcodes metrics`` computes for one level."""

    level: Level
    mappings: tuple[ErrorMapping, ...]
    bootstrap: BootstrapSettings | None = None
    results: tuple[MetricResult, ...] = Field(description="Sorted by mapping order, system.")
    distributions: tuple[VerdictDistribution, ...] = Field(description="One per system.")
    without_claims: tuple[SentenceWithoutClaims, ...] = Field(
        default=(), description="Labelled sentences a system has no claim for."
    )
    shape: DataShape | None = Field(
        default=None, description="What was assumed of the data (failcodes.labelscope)."
    )
    coverage: tuple[Coverage, ...] = Field(
        default=(), description="Per system: labelled questions and sentences (sentence level)."
    )

    def assumptions(self) -> str | None:
        """The one line naming what was assumed (:func:`failcodes.labelscope.assumptions_line`).

        With intervals, also when every question holds one unit: the cluster bootstrap then
        resamples the units as independent (a table without question ids, whose question
        each sentence is; sentences of one answer are not independent).
        """
        if self.shape is None:
            return None
        line, unit = assumptions_line(self.shape), self.level.value
        alone = self.units_alone()
        if alone is not None:
            line += f"; {alone}"
        rows = [r for r in self.results if r.mapping == self.results[0].mapping]
        unnamed = unlabelled_systems({r.system: (r.n, r.n + r.n_unlabelled) for r in rows}, unit)
        return line + (f"; {unnamed}" if unnamed else "")

    def units_alone(self) -> str | None:
        """With intervals, where every question holds one unit: that they were resampled alone.

        (The cluster bootstrap then resamples the units as independent; sentences of one
        answer are not, and their intervals may not cover. Rows printed as CSV or JSON carry
        no field for it: ``n_questions`` equal to ``n`` is all they show.)
        """
        unit = self.level.value
        counted = [r for r in self.results if r.n]
        if self.bootstrap is None or not counted or any(r.n_questions != r.n for r in counted):
            return None
        return (
            f"each question holds one {unit}: the bootstrap resamples {unit}s as "
            f"independent (if {unit}s share an answer, give its id as question_id)"
        )

    def notes(self) -> list[str]:
        """The lines under the table: unlabelled units, undefined metrics, no claims, CI warnings.

        ``failcodes metrics`` prints them; ``failcodes.run`` says them (``MetricsResult.later``).
        """
        out: list[str] = []
        reasons: dict[str, set[str]] = {}
        warned: dict[str, set[str]] = {}
        unsaid: dict[str, set[str]] = {}  # a defined metric without an interval
        for r in self.results:
            for name in METRICS:
                cell = f"{r.system}/{r.mapping}:{SHORT[name]}"
                reason = r.metrics[name].undefined_reason
                if reason:
                    reasons.setdefault(reason, set()).add(cell)
                ci = r.intervals.get(name)
                if ci is not None and ci.warning:  # every interval the table shows
                    warned.setdefault(ci.warning, set()).add(cell)
                if ci is not None and ci.undefined_reason and not reason:  # one question
                    unsaid.setdefault(ci.undefined_reason, set()).add(cell)
            if r.n_unlabelled and r.mapping == self.results[0].mapping:
                out.append(subset_note(r.system, r.level.value, r.n, r.n_unlabelled))
        for reason, where in sorted(reasons.items()):
            out.append(f"– undefined ({reason}): {listed(sorted(where))}")
        if self.without_claims:
            by_system: dict[str, int] = {}
            for m in self.without_claims:
                by_system[m.system] = by_system.get(m.system, 0) + 1
            policy = self.results[0].without_claims_policy if self.results else None
            action = "counted as no error" if policy is WithoutClaimsPolicy.NO_ERROR else "left out"
            per_system = ", ".join(f"{s}: {n}" for s, n in sorted(by_system.items()))
            out.append(f"labelled sentences without claims ({action}): {per_system}")
        if warned:
            out.append(
                f"{WARNED} after an interval: it may not cover (small sample, boundary or zero "
                "width); the CI warnings below say why"
            )
        for warning, where in sorted(warned.items()):
            out.append(f"– CI warning ({warning}): {listed(sorted(where))}")
        for why, where in sorted(unsaid.items()):
            out.append(f"– no interval ({why}): {listed(sorted(where))}")
        return out + self._never_flagged()

    def _never_flagged(self) -> list[str]:
        """Systems that never give a verdict a mapping flags: recall 0 by construction.

        A support classifier (MiniCheck, an NLI threshold) says supported or not; under the
        ``refuted`` mapping it flags nothing, and its recall of 0 says nothing about it.
        """
        out = []
        for mapping in self.mappings:
            for dist in self.distributions:
                if not dist.n_claims or any(dist.counts.get(v) for v in mapping.error_verdicts):
                    continue
                given = ", ".join(f"{v.value} {n:,}" for v, n in dist.counts.items() if n)
                hint = (
                    "; a verifier that does not tell refuted from unsupported is measured with "
                    "-m non_supported"
                    if Verdict.NO_EVIDENCE not in mapping.error_verdicts
                    else ""
                )
                out.append(
                    f"– {dist.system} never gives a verdict the '{mapping.name}' mapping counts "
                    f"as an error (its verdicts: {given}), so it flags no sentence{hint}"
                )
        return out

    def to_dataframe(self) -> pd.DataFrame:
        """The results as a DataFrame, one row per system x mapping (:meth:`MetricResult.flat`)."""
        import pandas as pd

        return pd.DataFrame([r.flat() for r in self.results])


def distributions_dataframe(dists: Iterable[VerdictDistribution]) -> pd.DataFrame:
    """Adapt verdict distributions to a flat DataFrame (see :meth:`VerdictDistribution.flat`)."""
    import pandas as pd

    return pd.DataFrame([d.flat() for d in dists])


# ---------------------------------------------------------------------------- numeric core


def metric_arrays(
    tp: npt.ArrayLike, fp: npt.ArrayLike, fn: npt.ArrayLike, tn: npt.ArrayLike
) -> dict[str, FloatArray]:
    """Compute every metric elementwise from count arrays; NaN marks an undefined value.

    This is the vectorised core used for point estimates and all bootstrap resamples;
    NaN never leaves this module (see :func:`confusion_metrics`).
    """
    a_tp, a_fp, a_fn, a_tn = (np.asarray(x, dtype=np.float64) for x in (tp, fp, fn, tn))
    with np.errstate(divide="ignore", invalid="ignore"):
        pred = a_tp + a_fp
        pos = a_tp + a_fn
        neg = a_tn + a_fp
        n = pos + neg
        precision = np.where(pred > 0, a_tp / pred, np.nan)
        recall = np.where(pos > 0, a_tp / pos, np.nan)
        specificity = np.where(neg > 0, a_tn / neg, np.nan)
        both = (pred > 0) & (pos > 0)
        denom = 2 * a_tp + a_fp + a_fn
        f1 = np.where(both, np.where(a_tp > 0, 2 * a_tp / denom, 0.0), np.nan)
        balanced = (recall + specificity) / 2.0
        youden = recall + specificity - 1.0
        accuracy = np.where(n > 0, (a_tp + a_tn) / n, np.nan)
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "specificity": specificity,
        "balanced_accuracy": balanced,
        "youden_j": youden,
        "accuracy": accuracy,
    }


def _reasons(tp: int, fp: int, fn: int, tn: int) -> dict[str, str | None]:
    pred, pos, neg = tp + fp, tp + fn, tn + fp
    p = None if pred else _NO_PRED
    r = None if pos else _NO_POS
    s = None if neg else _NO_NEG
    f1 = "; ".join(x for x in (p and f"precision: {p}", r and f"recall: {r}") if x) or None
    rs = "; ".join(x for x in (r and f"recall: {r}", s and f"specificity: {s}") if x) or None
    return {
        "precision": p,
        "recall": r,
        "f1": f1,
        "specificity": s,
        "balanced_accuracy": rs,
        "youden_j": rs,
        "accuracy": None if pos + neg else _NO_UNITS,
    }


def confusion_metrics(tp: int, fp: int, fn: int, tn: int) -> dict[str, Estimate]:
    """Return every metric of one confusion matrix as :class:`Estimate` values (see module doc)."""
    if min(tp, fp, fn, tn) < 0:
        raise ValueError("confusion counts must be non-negative")
    values = metric_arrays(tp, fp, fn, tn)
    reasons = _reasons(tp, fp, fn, tn)
    out: dict[str, Estimate] = {}
    for name in METRICS:
        reason = reasons[name]
        value = float(values[name])
        out[name] = (
            Estimate(value=None, undefined_reason=reason)
            if reason is not None
            else Estimate(value=value)
        )
    return out


def counts_by_cluster(
    cluster: npt.ArrayLike,
    group: npt.ArrayLike,
    label: npt.ArrayLike,
    pred: npt.ArrayLike,
    n_clusters: int,
    n_groups: int,
) -> IntArray:
    """Tally units into a ``(n_clusters, n_groups, 4)`` array of tp, fp, fn, tn counts.

    ``cluster`` and ``group`` are integer codes per unit; ``label``/``pred`` booleans
    (has error / flags error).
    """
    lab = np.asarray(label, dtype=bool)
    prd = np.asarray(pred, dtype=bool)
    # tp=0 (label, pred), fp=1 (no label, pred), fn=2 (label, no pred), tn=3: the cell is
    # 3 - 2 pred - label. Built in one int32 array (int64 past 2**31 cells), in place.
    cells = n_clusters * n_groups * 4
    flat: npt.NDArray[np.integer[Any]] = np.array(
        cluster, dtype=np.int32 if cells < 1 << 31 else np.int64
    )
    np.multiply(flat, n_groups, out=flat)
    np.add(flat, np.asarray(group), out=flat)  # codes < n_groups: no overflow
    np.multiply(flat, 4, out=flat)
    np.add(flat, 3, out=flat)
    np.subtract(flat, 2, out=flat, where=prd)
    np.subtract(flat, 1, out=flat, where=lab)
    counts = np.bincount(flat, minlength=cells)
    return counts.reshape(n_clusters, n_groups, 4).astype(np.int64)


#: Each metric as ``offset + sum_j coef_j * (u_j . counts) / (v_j . counts)`` over the count
#: vector (tp, fp, fn, tn): the ratios its cluster-robust standard error linearises.
_RATIOS: dict[str, tuple[float, tuple[tuple[float, tuple[int, ...], tuple[int, ...]], ...]]] = {
    "precision": (0.0, ((1.0, (1, 0, 0, 0), (1, 1, 0, 0)),)),
    "recall": (0.0, ((1.0, (1, 0, 0, 0), (1, 0, 1, 0)),)),
    "f1": (0.0, ((1.0, (2, 0, 0, 0), (2, 1, 1, 0)),)),
    "specificity": (0.0, ((1.0, (0, 0, 0, 1), (0, 1, 0, 1)),)),
    "balanced_accuracy": (
        0.0,
        ((0.5, (1, 0, 0, 0), (1, 0, 1, 0)), (0.5, (0, 0, 0, 1), (0, 1, 0, 1))),
    ),
    "youden_j": (-1.0, ((1.0, (1, 0, 0, 0), (1, 0, 1, 0)), (1.0, (0, 0, 0, 1), (0, 1, 0, 1)))),
    "accuracy": (0.0, ((1.0, (1, 0, 0, 1), (1, 1, 1, 1)),)),
}
#: Range of each metric (intervals are clipped to it).
_RANGE = {name: ((-1.0, 1.0) if name == "youden_j" else (0.0, 1.0)) for name in METRICS}


def robust_se(sums: FloatArray, squares: FloatArray, n_clusters: int) -> dict[str, FloatArray]:
    """Cluster-robust (linearised) standard error of every metric.

    ``sums``: count totals ``(..., 4)``; ``squares``: totals of each cluster's outer product of
    its counts ``(..., 4, 4)`` (weighted by how often a resample drew the cluster). For a metric
    ``sum_j k_j N_j / D_j`` the per-cluster influence is ``g . c`` with ``g = sum_j k_j (u_j -
    R_j v_j) / D_j``; the variance is ``G / (G - 1) * g' S g`` over ``G`` clusters (Cameron &
    Miller's CR1 without its regression factor). NaN where a ratio is undefined.
    """
    out: dict[str, FloatArray] = {}
    scale = n_clusters / (n_clusters - 1) if n_clusters > 1 else np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, (_, parts) in _RATIOS.items():
            g = np.zeros(sums.shape, dtype=np.float64)
            for coef, u, v in parts:
                ua, va = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
                num, den = sums @ ua, sums @ va
                ratio = num / den
                g = g + coef * (ua - ratio[..., None] * va) / den[..., None]
            var = np.einsum("...i,...ij,...j->...", g, squares, g) * scale
            out[name] = np.sqrt(np.maximum(var, 0.0))
    return out


def effective_clusters(per_cluster: IntArray) -> dict[str, FloatArray]:
    """Kish's effective number of clusters of each metric's denominator, per group.

    ``(sum_c d_c)**2 / sum_c d_c**2`` with ``d_c`` a cluster's units in the metric's
    denominator (positives for recall, flagged units for precision, ...): the number of
    equal-sized questions the units are worth. A few large questions holding most of them make
    it small, whatever the number of questions. ``per_cluster``: ``(clusters, groups, 4)``.
    """
    out: dict[str, FloatArray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, (_, parts) in _RATIOS.items():
            values = []
            for _, _, v in parts:
                d = per_cluster @ np.asarray(v, dtype=np.float64)  # (clusters, groups)
                values.append(d.sum(axis=0) ** 2 / (d * d).sum(axis=0))
            lowest = np.where(np.isnan(values[0]), np.inf, values[0])
            for v in values[1:]:
                lowest = np.minimum(lowest, np.where(np.isnan(v), np.inf, v))
            out[name] = np.asarray(np.where(np.isinf(lowest), np.nan, lowest), dtype=np.float64)
    return out


#: Below this many units on the rarer side of any of a metric's ratios (e.g. 1 false alarm
#: behind a specificity of 235/236) the t statistics of the bootstrap-t are lumpy and the
#: interval can collapse onto the estimate: the percentile interval is used instead.
MIN_STUDENTIZED_EVENTS = 10


def minority_counts(totals: IntArray) -> dict[str, IntArray]:
    """Per metric and group: the least ``min(numerator, denominator - numerator)`` of its ratios."""
    out: dict[str, IntArray] = {}
    for name, (_, parts) in _RATIOS.items():
        counts = []
        for _, u, v in parts:
            num = totals @ np.asarray(u, dtype=np.int64)
            den = totals @ np.asarray(v, dtype=np.int64)
            counts.append(np.minimum(num, den - num))
        out[name] = np.asarray(np.min(np.stack(counts), axis=0), dtype=np.int64)
    return out


def _summed(per_cluster: IntArray) -> FloatArray:
    """Each cluster's counts and their outer product side by side, ``(clusters, 20 groups)``.

    What a resample sums, weighted by how often it drew each cluster (a matrix product).
    Made in place as floats (integer counts: exact), not as integers and then copied.
    """
    n, cells = per_cluster.shape[0], int(np.prod(per_cluster.shape[1:], dtype=np.int64))
    out = np.empty((n, 5 * cells), dtype=np.float64)
    out[:, :cells] = per_cluster.reshape(n, cells)
    c = out[:, :cells].reshape(per_cluster.shape)
    np.multiply(c[..., :, None], c[..., None, :], out=out[:, cells:].reshape(*c.shape, 4))
    return out


#: Clusters whose :func:`_summed` rows a resample block's product takes at a time (at 10x
#: paper scale the whole matrix of 10,000 questions was 6.4 MB a mapping, made for each).
_SUMMED_CLUSTERS = 2048


def bootstrap_t_arrays(
    per_cluster: IntArray, weights: IntArray, point: dict[str, FloatArray]
) -> tuple[dict[str, FloatArray], dict[str, FloatArray]]:
    """Metrics and t statistics ``(value - point) / se`` of every resample, ``(R, groups)``.

    The weights' product with :func:`_summed` is taken :data:`_SUMMED_CLUSTERS` clusters at
    a time: exact (integer counts below 2**53), so the sums are those of any order.
    """
    shape = per_cluster.shape[1:]
    cells = int(np.prod(shape, dtype=np.int64))
    product = np.zeros((len(weights), 5 * cells), dtype=np.float64)
    for at in range(0, per_cluster.shape[0], _SUMMED_CLUSTERS):
        part = slice(at, at + _SUMMED_CLUSTERS)
        product += weights[:, part].astype(np.float64) @ _summed(per_cluster[part])
    # contiguous, as each product gave them: the einsum's summation order follows the layout
    res = np.ascontiguousarray(product[:, :cells]).reshape((len(weights), *shape))
    squares = np.ascontiguousarray(product[:, cells:]).reshape((*res.shape, 4))
    del product
    values = metric_arrays(res[..., 0], res[..., 1], res[..., 2], res[..., 3])
    se = robust_se(res, squares, per_cluster.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = {
            name: np.where(se[name] > 0, (values[name] - point[name][None, :]) / se[name], np.nan)
            for name in METRICS
        }
    return values, t


#: Cluster weights drawn at a time by :func:`shared_bootstrap_intervals` (memory bound: a
#: block costs ~16 bytes a cell at its peak, 4 MB; 1 << 20 cells cost ~40 MB, a third of a
#: paper-scale metrics run, issue 18).
_WEIGHT_CELLS = 1 << 18

#: Resamples a block draws at least, while it holds at most :data:`_MAX_WEIGHT_CELLS` cells.
#: Each block makes :func:`_summed` of every cluster again (~40 bytes a count cell), so a
#: block of a few resamples spends more there than in its product: at 100x paper scale
#: (100,000 questions) :data:`_WEIGHT_CELLS` alone gave 2 resamples a block, 100 blocks a
#: mapping for ``--bootstrap 200``, ~80% of the bootstrap's time in :func:`_summed` (the
#: work growing with the square of the questions; issue 30).
_MIN_BLOCK_RESAMPLES = 16
_MAX_WEIGHT_CELLS = 1 << 22


def _block_resamples(per_cluster: IntArray) -> int:
    """Resamples a block of :func:`shared_bootstrap_intervals` draws for ``per_cluster``."""
    # a block holds its weights (resamples x clusters) and each group's 4 x 4 count squares
    # (resamples x groups x 16): 400 systems of 3 questions drew all 10,000 resamples in one
    # block, 512 MB of squares alone
    n_clusters = per_cluster.shape[0]
    groups = int(np.prod(per_cluster.shape[1:-1], dtype=np.int64)) if per_cluster.ndim > 2 else 1
    cells = max(1, n_clusters, 16 * groups)  # a resample's
    floor = min(_MIN_BLOCK_RESAMPLES, _MAX_WEIGHT_CELLS // cells)
    return max(1, _WEIGHT_CELLS // cells, floor)


def shared_bootstrap_intervals(
    subs: Sequence[IntArray],
    resamples: int,
    rng: np.random.Generator,
    confidence: float,
    pool: Executor | None = None,
) -> list[list[dict[str, Interval]]]:
    """:func:`bootstrap_intervals` of each of ``subs``, the weights drawn a block at a time.

    The blocks continue one random stream (numpy's bounded integers draw 32 bits at a time
    from the generator), and integer counts make the matrix products exact, so each result
    equals ``bootstrap_intervals(sub, multinomial_weights(n, resamples, rng), ...)`` to the
    last digit, while memory stays at one block instead of ``resamples x clusters``. ``subs``
    count the same clusters (two mappings' counts over the same questions) and draw blocks of
    the same size (:func:`_block_resamples`), so each block is drawn once for all of them.
    With ``pool``, the resamples of ``subs[1:]`` are computed there while this thread does
    ``subs[0]``'s.
    """
    n_clusters = subs[0].shape[0]
    step = _block_resamples(subs[0])
    if any(s.shape[0] != n_clusters or _block_resamples(s) != step for s in subs):
        raise ValueError("shared bootstrap: every count array needs the same clusters and step")
    points = [_point(s) for s in subs]
    blocks: list[list[tuple[dict[str, FloatArray], dict[str, FloatArray]]]] = [[] for _ in subs]
    for start in range(0, resamples, step):
        weights = multinomial_weights(n_clusters, min(step, resamples - start), rng)
        rest = (
            [
                pool.submit(bootstrap_t_arrays, sub, weights, point)
                for sub, point in zip(subs[1:], points[1:], strict=True)
            ]
            if pool is not None
            else []
        )
        blocks[0].append(bootstrap_t_arrays(subs[0], weights, points[0]))
        for k, sub in enumerate(subs[1:], start=1):
            drawn = rest[k - 1].result() if rest else bootstrap_t_arrays(sub, weights, points[k])
            blocks[k].append(drawn)
    out = []
    for sub, drawn_blocks in zip(subs, blocks, strict=True):
        values = {name: np.concatenate([b[0][name] for b in drawn_blocks]) for name in METRICS}
        t = {name: np.concatenate([b[1][name] for b in drawn_blocks]) for name in METRICS}
        out.append(_intervals(values, t, sub, resamples, confidence))
    return out


def bootstrap_intervals(
    per_cluster: IntArray, weights: IntArray, confidence: float
) -> list[dict[str, Interval]]:
    """Studentized cluster-bootstrap intervals per group from per-cluster counts and weights."""
    values, t = bootstrap_t_arrays(per_cluster, weights, _point(per_cluster))
    return _intervals(values, t, per_cluster, weights.shape[0], confidence)


def _point(per_cluster: IntArray) -> dict[str, FloatArray]:
    totals = per_cluster.sum(axis=0)
    return metric_arrays(totals[:, 0], totals[:, 1], totals[:, 2], totals[:, 3])


#: An interval over fewer than this share of its resamples says how many it left out (as
#: agree's coefficients do).
UNDEFINED_SHARE = 0.9

#: Why a metric whose units all sit in one question has no interval: the cluster bootstrap
#: draws whole questions, so every resample is the sample itself.
ONE_QUESTION = (
    "one question: nothing to resample; the bootstrap draws whole questions, so every "
    "resample is the sample itself"
)


def _intervals(
    values: dict[str, FloatArray],
    t: dict[str, FloatArray],
    per_cluster: IntArray,
    resamples: int,
    confidence: float,
) -> list[dict[str, Interval]]:
    totals = per_cluster.sum(axis=0)
    point = _point(per_cluster)
    n_clusters = (per_cluster.sum(axis=2) > 0).sum(axis=0)
    se0 = robust_se(
        totals.astype(np.float64),
        np.einsum("c...i,c...j->...ij", per_cluster, per_cluster, dtype=np.int64).astype(
            np.float64
        ),
        per_cluster.shape[0],
    )
    effective = effective_clusters(per_cluster)
    minority = minority_counts(totals)
    out: list[dict[str, Interval]] = [{} for _ in range(per_cluster.shape[1])]
    for name in METRICS:
        low, high, n_def = percentile_intervals(values[name], confidence)
        t_low, t_high, n_t = percentile_intervals(t[name], confidence)
        for g in range(per_cluster.shape[1]):
            if n_def[g] == 0:
                reason = _reasons(*(int(x) for x in totals[g]))[name] or "undefined"
                none = f"undefined in all {resamples} resamples: {reason}"
            else:  # one question: every resample is the sample itself: [81.8, 81.8]* was
                # printed as an interval, with "zero-width interval; only 1 clusters (< 20)"
                none = ONE_QUESTION if n_clusters[g] == 1 else ""
            if none:
                out[g][name] = Interval(
                    low=None,
                    high=None,
                    confidence=confidence,
                    resamples=resamples,
                    defined_resamples=int(n_def[g]),
                    undefined_reason=none,
                )
                continue
            value = float(point[name][g])
            se = float(se0[name][g])
            studentized = (
                se > 0
                and n_t[g] >= 2
                and np.isfinite(value)
                and minority[name][g] >= MIN_STUDENTIZED_EVENTS
            )
            if studentized:
                bottom, top = _RANGE[name]
                lo = min(max(value - float(t_high[g]) * se, bottom), top)
                hi = min(max(value - float(t_low[g]) * se, bottom), top)
            else:
                lo, hi = float(low[g]), float(high[g])
            cells = _DENOMINATOR.get(name)
            rare = int(minority[name][g])
            positives = None if cells is None else int(totals[g, list(cells)].sum())
            # a percentile interval on few events may not cover; a count of positives below
            # MIN_POSITIVES says it for P/R/F1, but not its rarer side: precision 64/68 (4
            # false alarms) read [88.1, 98.6] unwarned, where such intervals cover 0.91
            few = (
                se > 0
                and not studentized
                and rare < MIN_STUDENTIZED_EVENTS
                and (positives is None or positives >= MIN_POSITIVES)
            )
            warning = interval_warning(
                None if np.isnan(value) else value,
                lo,
                hi,
                n_clusters=int(n_clusters[g]),
                effective_clusters=float(effective[name][g]),
                n_positives=positives,
                bounds=_RANGE[name],
                resamples=resamples,
            )
            if few:  # covered 0.88-0.91 unwarned (docs/statistics.md)
                note = (
                    f"only {rare} units on the rarer side of its ratio "
                    f"(< {MIN_STUDENTIZED_EVENTS}): a percentile interval, which under-covers"
                )
                warning = f"{warning}; {note}" if warning else note
            defined = int(n_t[g]) if studentized else int(n_def[g])
            if defined < UNDEFINED_SHARE * resamples:
                # F1 of one positive question among ten: undefined wherever a resample left it
                # out (35% of them), the interval over the others alone, unsaid where agree
                # says it
                note = (
                    f"undefined in {resamples - defined} of {resamples} resamples (left out: "
                    "the interval is over those where it is defined, and may not cover)"
                )
                warning = f"{warning}; {note}" if warning else note
            out[g][name] = Interval(
                low=lo,
                high=hi,
                method="studentized" if studentized else "percentile",
                confidence=confidence,
                resamples=resamples,
                defined_resamples=defined,
                warning=warning,
            )
    return out


# ---------------------------------------------------------------------------- units


class _Units:
    """Labelled units of one level as parallel arrays (one row per system x unit).

    ``question`` codes index ``questions`` (sorted); ``system`` codes index the sorted systems.
    """

    def __init__(
        self,
        system: npt.NDArray[np.integer[Any]],
        question: npt.NDArray[np.integer[Any]],
        questions: Sequence[str],
        label: npt.NDArray[np.bool_],
        pred: npt.NDArray[np.bool_],
    ) -> None:
        self.system = system
        self.question = question
        self.questions = list(questions)
        self.label = label
        self.pred = pred


def as_columns(traces: Sequence[Trace] | TraceColumns) -> TraceColumns:
    """The traces as columns (in-memory traces are converted; columns are returned as is)."""
    return traces if isinstance(traces, TraceColumns) else TraceColumns.from_traces(traces)


def _count_by(
    codes: npt.NDArray[np.integer[Any]], n: int, systems: Sequence[str]
) -> dict[str, int]:
    counts = np.bincount(codes, minlength=n) if len(codes) else np.zeros(n, dtype=np.int64)
    return {systems[i]: int(c) for i, c in enumerate(counts) if c}


def _systems(cols: TraceColumns | SentenceColumns) -> list[str]:
    """The systems of the traces, sorted."""
    return cols.systems if isinstance(cols, SentenceColumns) else cols.small_codes("system")[1]


def group_label_flags(groups: SentenceGroups, index: LabelIndex) -> npt.NDArray[np.int8]:
    """Per sentence group: 1 (its label has an error), 0 (no error) or -1 (no label).

    Shared labels are looked up by sentence id; per-system labels by the group's system
    and sentence id (another system's label of the same id is another sentence's).
    """
    if index.per_system is None:
        flags: npt.NDArray[np.int8] = label_flags(groups.sentences, index.sentence)[groups.sentence]
        return flags
    out = np.full(len(groups.system), -1, dtype=np.int8)
    for s, name in enumerate(groups.systems):
        mine = groups.system == s
        own = label_flags(groups.sentences, index.of(name).sentence)
        out[mine] = own[groups.sentence[mine]]
    return out


def labelled_without_claims(
    groups: SentenceGroups, index: LabelIndex, scope: QuestionScope
) -> list[SentenceWithoutClaims]:
    """The labelled sentences a system has no claim for that count for it, sorted.

    Per-system labels: each system's own. Shared labels under the ``answered`` scope: only
    those of questions the system made a claim in (:mod:`failcodes.labelscope`).
    """
    answered = groups.answered() if scope is QuestionScope.ANSWERED else None
    return [
        m
        for m in groups.without_claims(answered)
        if index.of(m.system).for_sentence(m.question_id, m.sentence_id)
    ]


class GroupLabels:
    """Sentence labels matched to :class:`SentenceColumns` by code (issue 18).

    What sentence-level metrics need of the labels, in memory that follows the labels
    (arrays, no index dict, no tuple per labelled sentence): ``flag`` per sentence code of
    the traces (1 error, 0 no error, -1 unlabelled), the labelled sentences no trace has
    (``(question_id, sentence_id, has_error)``, question in the traces) and, per system,
    the labelled sentences it has no claim for (sorted, as
    :meth:`SentenceGroups.without_claims` after the label filter gives them).
    """

    def __init__(
        self,
        cols: SentenceColumns,
        labels: Sequence[Label],
        scope: QuestionScope | str = QuestionScope.AUTO,
    ) -> None:
        self.missing: list[SentenceWithoutClaims] = []
        self.flag = np.zeros(0, dtype=np.int8)
        self.extra: list[tuple[str, str, bool]] = []
        #: Each sentence code's label position (-1: none); labelled sentences no trace has.
        self.position = np.zeros(0, dtype=np.int32)
        self.others: dict[str, int] = {}
        #: The shape of the labelled questions, the scope applied, per-system coverage.
        self.shape = QuestionShape.COMMON
        self.scope = QuestionScope.ALL
        self.coverage: list[Coverage] = []
        self.valid = self._match(cols, labels, QuestionScope(scope))

    def _match(self, cols: SentenceColumns, labels: Sequence[Label], scope: QuestionScope) -> bool:
        """Match the labels; False when the generic path must run instead.

        That is for claim labels, per-system labels, a duplicate target or a label that fits
        no trace (the generic path raises its exact error).
        """
        if any(cid is not None for cid in label_column(labels, "claim_id")):
            return False
        if any(system is not None for system in label_column(labels, "system")):
            return False
        codes = SentenceLabelCodes.match(labels, cols)
        if codes.problem_mask().any():
            return False
        present = codes.sentence >= 0
        traced = np.sort(codes.sentence[present])
        if len(traced) > 1 and bool((traced[1:] == traced[:-1]).any()):
            return False  # two labels for one sentence: LabelIndex's error
        del traced
        sids = label_column(labels, "sentence_id")
        absent = np.flatnonzero(~present).tolist()
        if len({sids[i] for i in absent}) != len(absent):
            return False
        has_error = np.fromiter(label_column(labels, "has_error"), dtype=bool, count=len(labels))
        self.flag = np.full(len(cols.sentences), -1, dtype=np.int8)
        self.flag[codes.sentence[present]] = has_error[present]
        qids = label_column(labels, "question_id")
        self.extra = [(qids[i], sids[i], bool(has_error[i])) for i in absent]
        self.position = np.full(len(cols.sentences), -1, dtype=np.int32)
        self.position[codes.sentence[present]] = np.flatnonzero(present)
        self.others = {sids[i]: i for i in absent}
        self.missing = self._without_claims(cols, scope)
        return True

    def _without_claims(
        self, cols: SentenceColumns, requested: QuestionScope
    ) -> list[SentenceWithoutClaims]:
        """The labelled sentences each system has no claim for, in its scope.

        Also settles :attr:`shape`, :attr:`scope` and :attr:`coverage` (they need the same
        labelled pairs).
        """
        labelled = self.flag[cols.sentence] >= 0
        width = max(1, len(cols.sentences))
        key = cols.question[labelled].astype(np.int64)
        key *= width
        key += cols.sentence[labelled]
        system = cols.system[labelled]
        del labelled
        pairs = np.unique(key)
        # each labelled (question, sentence)'s question: the groups', then those no trace has
        extra_q = np.array(
            [bisect.bisect_left(cols.questions, q) for q, _, _ in self.extra], dtype=np.int64
        )
        pair_question = np.concatenate([pairs // width, extra_q])
        answered = Answered.of(cols.system, cols.question, len(cols.systems), len(cols.questions))
        self.shape = question_shape(answered, np.unique(pair_question))
        self.scope = resolve_scope(requested, self.shape)
        self.coverage = coverage(cols.systems, answered, None, pair_question)
        out: list[SentenceWithoutClaims] = []
        for s, name in enumerate(cols.systems):
            have = key[system == s]  # unique: one group per (system, question, sentence)
            mine = answered.questions_of(s) if self.scope is QuestionScope.ANSWERED else None
            gone: list[tuple[str, str]] = [
                (q, sid)
                for (q, sid, _), qc in zip(self.extra, extra_q.tolist(), strict=True)
                if mine is None or mine[qc]
            ]
            if len(have) != len(pairs):
                for code in np.setdiff1d(pairs, have, assume_unique=True).tolist():
                    if mine is None or mine[code // width]:
                        gone.append((cols.questions[code // width], cols.sentences[code % width]))
            out.extend(
                SentenceWithoutClaims(system=name, question_id=q, sentence_id=sid)
                for q, sid in sorted(gone)
            )
        return out

    def label_index(self, cols: SentenceColumns, labels: Sequence[Label]) -> LabelIndex:
        """The labels' :class:`LabelIndex` through this match (no dict of positions)."""
        return LabelIndex.of_sorted_sentences(labels, cols.sentences, self.position, self.others)

    def has_error(self, cols: SentenceColumns, missing: SentenceWithoutClaims) -> bool:
        """The label of a labelled sentence without claims."""
        sid = missing.sentence_id
        at = bisect.bisect_left(cols.sentences, sid)
        if at < len(cols.sentences) and cols.sentences[at] == sid:
            return bool(self.flag[at] == 1)
        return next(err for _, s, err in self.extra if s == sid)


def row_label_flags(
    sys_codes: npt.NDArray[np.integer[Any]],
    systems: Sequence[str],
    s_codes: npt.NDArray[np.integer[Any]],
    sentences: Sequence[str],
    c_codes: npt.NDArray[np.integer[Any]],
    claims: Sequence[str],
    index: LabelIndex,
) -> npt.NDArray[np.int8]:
    """Per trace row: its claim's own label, else its sentence's (1 error, 0 no, -1 none).

    Rows given by their system, sentence and claim codes; per-system labels apply to their
    own system's rows only.
    """
    return row_label_sources(sys_codes, systems, s_codes, sentences, c_codes, claims, index)[0]


def row_label_sources(
    sys_codes: npt.NDArray[np.integer[Any]],
    systems: Sequence[str],
    s_codes: npt.NDArray[np.integer[Any]],
    sentences: Sequence[str],
    c_codes: npt.NDArray[np.integer[Any]],
    claims: Sequence[str],
    index: LabelIndex,
) -> tuple[npt.NDArray[np.int8], int]:
    """:func:`row_label_flags`, and how many labelled rows took their sentence's label.

    A claim no label names takes its sentence's: with sentence labels alone every claim of a
    sentence labelled an error is an error (the first line says so: ``DataShape``).
    """
    out = np.full(len(sys_codes), -1, dtype=np.int8)
    by_sentence = 0
    for s, name in enumerate(systems) if index.per_system is not None else [(-1, "")]:
        mine = sys_codes == s if s >= 0 else slice(None)
        own = index.of(name) if s >= 0 else index
        claim = label_flags(claims, own.claim)[c_codes[mine]]
        sentence = label_flags(sentences, own.sentence)[s_codes[mine]]
        out[mine] = np.where(claim >= 0, claim, sentence)
        by_sentence += int(((claim < 0) & (sentence >= 0)).sum())
    return out, by_sentence


@dataclass(frozen=True)
class LabelledUnits:
    """The units of one level with their labels, before any mapping (issue 30).

    Sentence groups (labels matched to them by code, :meth:`of_matched`, or looked up in an
    index, :meth:`of_index`) or claim rows: each unit's system and question codes and
    ``label`` (1 error, 0 no error, -1 unlabelled); :meth:`predicted` is its any-error under
    a mapping. The one label path of metrics (which counts the labelled units) and
    disagreements (which select those whose label and prediction differ): the FN and FP
    counts of both are the same by construction. ``missing``: the labelled sentences a system
    has no claim for, in its scope, sorted (under the no_error policy, units predicted no
    error); ``error_of`` the label of one.
    """

    cols: TraceColumns | SentenceColumns
    system: npt.NDArray[np.integer[Any]]
    question: npt.NDArray[np.integer[Any]]
    questions: list[str]
    label: npt.NDArray[np.int8]
    facts: ScopeFacts
    policy: WithoutClaimsPolicy
    #: Sentence groups looked up in an index (trace columns: each row's group); else None.
    groups: SentenceGroups | None = None
    missing: list[SentenceWithoutClaims] = field(default_factory=list)
    error_of: Callable[[SentenceWithoutClaims], bool] = lambda _: False  # (claims: none)

    @classmethod
    def of_matched(
        cls,
        cols: SentenceColumns,
        matched: GroupLabels,
        policy: WithoutClaimsPolicy,
        requested: QuestionScope,
    ) -> LabelledUnits:
        """Sentence groups and shared labels matched to them by code."""
        facts = ScopeFacts.of_matched(matched, Level.SENTENCE, policy, requested)
        facts = facts.with_zeros(cols.questions)
        label = matched.flag[cols.sentence]
        error_of = functools.partial(matched.has_error, cols)
        units = cls(cols, cols.system, cols.question, cols.questions, label, facts, policy)
        return replace(units, missing=matched.missing, error_of=error_of)

    @classmethod
    def of_index(
        cls,
        cols: TraceColumns | SentenceColumns,
        index: LabelIndex,
        level: Level,
        policy: WithoutClaimsPolicy,
        requested: QuestionScope,
    ) -> LabelledUnits:
        """Sentence groups or claim rows, labels looked up in ``index`` (shared or per system).

        A claim's label is its own, else its sentence's; per-system labels apply to their
        own system's rows only.
        """
        if level is Level.CLAIM:
            assert isinstance(cols, TraceColumns)  # (claim-level groups are refused before)
            check_unique_claims(cols)
            sys_codes, systems = cols.small_codes("system")
            q_codes, questions = cols.small_codes("question_id")
            s_codes, sentences = cols.small_codes("sentence_id")
            c_codes, claims = cols.small_codes("claim_id")
            label, by_sentence = row_label_sources(
                sys_codes, systems, s_codes, sentences, c_codes, claims, index
            )
            facts = ScopeFacts.of_level(index, level, len(systems)).with_zeros(questions)
            facts = facts.by_sentence(by_sentence, int((label >= 0).sum()))
            return cls(cols, sys_codes, q_codes, questions, label, facts, policy)
        groups = sentence_groups(cols, index.labelled_units(cols))
        facts = ScopeFacts.of_groups(groups, index, level, policy, requested)
        facts = facts.with_zeros(groups.questions)
        missing = labelled_without_claims(groups, index, facts.scope)
        label = group_label_flags(groups, index)
        error_of = functools.partial(_sentence_error, index)
        units = cls(cols, groups.system, groups.question, groups.questions, label, facts, policy)
        return replace(units, groups=groups, missing=missing, error_of=error_of)

    def predicted(self, mapping: ErrorMapping) -> npt.NDArray[np.bool_]:
        """Per unit: one of its claims has one of the mapping's error verdicts."""
        if isinstance(self.cols, SentenceColumns):
            return self.cols.flags(mapping.error_verdicts)
        rows = self.cols.error_rows(mapping.error_verdicts)
        return rows if self.groups is None else self.groups.flags(rows)

    def differing(self, mapping: ErrorMapping) -> tuple[IntArray, npt.NDArray[np.bool_]]:
        """The labelled units whose label and prediction differ (ascending), and predictions."""
        pred = self.predicted(mapping)
        at = np.flatnonzero((self.label >= 0) & ((self.label == 1) != pred))
        return at, pred[at]

    def missed(self) -> list[SentenceWithoutClaims]:
        """The labelled error sentences without claims: FN under the no_error policy."""
        if self.policy is not WithoutClaimsPolicy.NO_ERROR:
            return []
        return [m for m in self.missing if self.error_of(m)]

    def counted(self, mapping: ErrorMapping) -> tuple[_Units, dict[str, int]]:
        """The labelled units under ``mapping`` and each system's count of unlabelled ones.

        Under the no_error policy the labelled sentences without claims are units too,
        predicted no error.
        """
        systems = _systems(self.cols)
        scored = self.label >= 0
        unlabelled = _count_by(self.system[~scored], len(systems), systems)
        system, question = self.system[scored], self.question[scored]
        lab, prd = self.label[scored] == 1, self.predicted(mapping)[scored]
        del scored
        if self.policy is WithoutClaimsPolicy.NO_ERROR and self.missing:
            sys_code = {name: i for i, name in enumerate(systems)}
            system = np.concatenate([system, [sys_code[m.system] for m in self.missing]])
            question = np.concatenate(
                [
                    question,
                    [bisect.bisect_left(self.questions, m.question_id) for m in self.missing],
                ]
            )
            lab = np.concatenate([lab, [self.error_of(m) for m in self.missing]])
            prd = np.concatenate([prd, np.zeros(len(self.missing), dtype=bool)])
        return _Units(system, question, self.questions, lab, prd), unlabelled


def _sentence_error(index: LabelIndex, miss: SentenceWithoutClaims) -> bool:
    """The label of a labelled sentence without claims (looked up in ``index``)."""
    lab = index.of(miss.system).for_sentence(miss.question_id, miss.sentence_id)
    return lab is not None and lab.has_error


def verdict_distributions(
    traces: Iterable[Trace] | TraceColumns | SentenceColumns | VerdictCounts,
) -> list[VerdictDistribution]:
    """Count each system's claim verdicts (all five canonical verdicts, sorted by system)."""
    n_v = len(VERDICTS)
    if not isinstance(traces, SentenceColumns | VerdictCounts):
        cols = traces if isinstance(traces, TraceColumns) else as_columns(list(traces))
        traces = VerdictCounts.of_columns(cols)
    systems = traces.systems
    tally: npt.NDArray[np.int64] = traces.verdict_counts.reshape(-1)
    out = []
    for s, system in enumerate(systems):
        per = {v: int(tally[s * n_v + i]) for i, v in enumerate(VERDICTS)}
        n = sum(per.values())
        out.append(
            VerdictDistribution(
                system=system,
                n_claims=n,
                counts=per,
                proportions={v: Estimate(value=per[v] / n) for v in Verdict},
            )
        )
    return out


def compute_metrics(
    traces: Sequence[Trace] | TraceColumns | SentenceColumns,
    labels: Iterable[Label],
    mappings: Sequence[ErrorMapping | str] = (DEFAULT_MAPPING,),
    *,
    level: Level | str = Level.SENTENCE,
    bootstrap: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
    without_claims: WithoutClaimsPolicy | str = DEFAULT_WITHOUT_CLAIMS,
    question_scope: QuestionScope | str = QuestionScope.AUTO,
) -> MetricsReport:
    """Compute metrics for every system in ``traces`` under every mapping.

    ``traces`` are trace models or their columns (:func:`failcodes.columnar.read_trace_columns`
    reads large files straight into columns). With ``bootstrap > 0``, adds percentile
    intervals from that many cluster-bootstrap resamples over questions (seeded by ``seed``;
    see :mod:`failcodes.stats.bootstrap`). Raises :class:`InputError` on duplicate claims/labels
    or a label matching no trace; on in-memory traces the label checks the CLI's readers make
    too (an id the traces write another way, a sentence labelled through its claims alone).

    Labels that name their ``system`` apply to that system's traces only; shared labels
    (none names one) to every system's, within ``question_scope``
    (:mod:`failcodes.labelscope`: ``auto`` leaves a question a system never answered out of
    its scope when every labelled question was answered by one system only). The report's
    :attr:`MetricsReport.shape` says what was assumed.
    """
    lvl = choice(Level, level, "level")
    policy = choice(WithoutClaimsPolicy, without_claims, "without_claims")
    requested = choice(QuestionScope, question_scope, "question_scope")
    if isinstance(mappings, str | ErrorMapping):  # one mapping, as find_disagreements takes
        mappings = (mappings,)  # ('refuted' was read letter by letter: "unknown mapping 'r'")
    maps = [m if isinstance(m, ErrorMapping) else resolve_mapping(m) for m in mappings]
    for name, number in (("bootstrap", bootstrap), ("seed", seed)):
        # True read as 1 resample; 2.0 or "20" a TypeError, seed 1.5 pydantic's 4 lines
        whole = isinstance(number, int | np.integer) and not isinstance(number, bool)
        if not whole or (name == "bootstrap" and number < 0):  # a seed: check_seed below
            raise ConfigError(f"{name}: expected a whole number >= 0, not {number!r}")
    if bootstrap:
        check_seed(seed)  # before any work: numpy refuses a negative seed with a ValueError
        if not 0 < confidence < 1:
            raise ConfigError(f"confidence: expected a level in (0, 1), not {confidence!r}")
    for name, given in (("traces", traces), ("labels", labels)):
        objects_not_a_file(name, given)
    if isinstance(traces, SentenceColumns) and lvl is Level.CLAIM:
        raise ValueError("claim-level metrics need the claims: read_trace_columns, not groups")
    if not isinstance(traces, TraceColumns | SentenceColumns):  # in memory: the CLI's checks
        traces = list(traces)  # a generator is read once: the checks used it up
        labels = check_in_memory(labels, traces, lvl is Level.SENTENCE)
    cols = traces if isinstance(traces, SentenceColumns) else as_columns(traces)
    units: LabelledUnits | None = None
    systems = _systems(cols)
    if isinstance(cols, SentenceColumns) and isinstance(labels, Sequence) and maps:
        # level is SENTENCE (claim level was refused above); labels matched by code, or
        # (claim labels, a duplicate target, a label that fits no trace) the generic path
        # below, which gives the exact error
        matched = GroupLabels(cols, labels, requested)
        if matched.valid:
            units = LabelledUnits.of_matched(cols, matched, policy, requested)
    if units is None:
        index = LabelIndex(labels)
        if maps:  # (sentence level: the groups are the same under every mapping: formed once)
            units = LabelledUnits.of_index(cols, index, lvl, policy, requested)
    facts = units.facts if units is not None else ScopeFacts.of_level(index, lvl, len(systems))
    missing = units.missing if units is not None else []
    tallied: list[tuple[IntArray, list[str], dict[str, int]]] = []
    for mapping in maps:
        assert units is not None
        counted, unlabelled = units.counted(mapping)
        # tallied here: one mapping's units held at a time (two held ~10 MB more at 10x
        # paper scale); the bootstrap's memory its blocks bound
        per_q, questions = _tally(counted, len(systems))
        del counted
        tallied.append((per_q, questions, unlabelled))
    intervals = _all_intervals(
        [(per_q, questions) for per_q, questions, _ in tallied],
        len(systems),
        bootstrap,
        seed,
        confidence,
    )
    results = [
        r
        for (per_q, _, unlabelled), mapping, ivs in zip(tallied, maps, intervals, strict=True)
        for r in _score(per_q, unlabelled, missing, mapping, lvl, policy, systems, facts, ivs)
    ]
    settings = (
        BootstrapSettings(resamples=bootstrap, seed=seed, confidence=confidence)
        if bootstrap
        else None
    )
    return MetricsReport(
        level=lvl,
        mappings=tuple(maps),
        bootstrap=settings,
        results=tuple(results),
        distributions=tuple(verdict_distributions(cols)),
        without_claims=tuple(missing),
        shape=facts.shape,
        coverage=tuple(facts.coverage.values()),
    )


@dataclass(frozen=True)
class ScopeFacts:
    """What was assumed of the data, and each system's coverage (the report's first line)."""

    shape: DataShape
    scope: QuestionScope  # the question scope applied (all: no filter)
    coverage: dict[str, Coverage]

    @classmethod
    def of_matched(
        cls,
        matched: GroupLabels,
        level: Level,
        policy: WithoutClaimsPolicy,
        requested: QuestionScope,
    ) -> ScopeFacts:
        """Shared sentence labels matched to groups by code."""
        shape = DataShape(
            labels=LabelScope.SHARED,
            level=level.value,
            systems=len(matched.coverage),
            questions=matched.shape,
            question_scope=matched.scope,
            scope_given=requested is not QuestionScope.AUTO,
            without_claims=policy.value,
        )
        return cls(shape, matched.scope, {c.system: c for c in matched.coverage})

    @classmethod
    def of_groups(
        cls,
        groups: SentenceGroups,
        index: LabelIndex,
        level: Level,
        policy: WithoutClaimsPolicy,
        requested: QuestionScope,
    ) -> ScopeFacts:
        """Sentence groups and the labels' index (shared or per-system labels)."""
        answered = groups.answered()
        pair_question = groups.known[:, 0]
        table = coverage(groups.systems, answered, groups.known_system, pair_question)
        if index.per_system is not None:
            shape = DataShape(
                labels=LabelScope.PER_SYSTEM,
                level=level.value,
                systems=len(groups.systems),
                without_claims=policy.value,
            )
            return cls(shape, QuestionScope.ALL, {c.system: c for c in table})
        questions = question_shape(answered, np.unique(pair_question))
        scope = resolve_scope(requested, questions)
        shape = DataShape(
            labels=LabelScope.SHARED,
            level=level.value,
            systems=len(groups.systems),
            questions=questions,
            question_scope=scope,
            scope_given=requested is not QuestionScope.AUTO,
            without_claims=policy.value,
        )
        return cls(shape, scope, {c.system: c for c in table})

    @classmethod
    def of_level(cls, index: LabelIndex, level: Level, systems: int) -> ScopeFacts:
        """Claim level (no sentence without claims: no question scope, no coverage)."""
        shape = DataShape(labels=index.scope, level=level.value, systems=systems)
        return cls(shape, QuestionScope.ALL, {})

    def with_zeros(self, questions: Sequence[str]) -> ScopeFacts:
        """These facts naming the question ids told apart only by how they are written.

        Leading zeros, case, spacing or Unicode form: :func:`failcodes.idzeros.spelled_twins`.
        """
        from failcodes.idzeros import spelled_twins

        pairs = tuple(spelled_twins(questions))
        if not pairs:
            return self
        return replace(self, shape=self.shape.model_copy(update={"question_zeros": pairs}))

    def by_sentence(self, taken: int, labelled: int) -> ScopeFacts:
        """These facts saying ``taken`` of the ``labelled`` claims took their sentence's label."""
        if not taken:
            return self
        update = {"claims_by_sentence": (taken, labelled)}
        return replace(self, shape=self.shape.model_copy(update=update))

    def fields(self, system: str) -> dict[str, Any]:
        """The facts a :class:`MetricResult` of ``system`` carries."""
        cov = self.coverage.get(system)
        shape = self.shape
        return {
            "question_zeros": shape.question_zeros,
            "claims_by_sentence": shape.claims_by_sentence,
            "labels": shape.labels,
            "question_shape": shape.questions,
            "question_scope": shape.question_scope,
            "n_labelled_questions": cov.labelled_questions if cov else None,
            "n_answered_questions": cov.answered_questions if cov else None,
            "n_labelled_sentences": cov.labelled_sentences if cov else None,
            "n_unanswered": cov.unanswered_sentences if cov else None,
        }


def _tally(units: _Units, n_systems: int) -> tuple[IntArray, list[str]]:
    """The units' ``(questions, systems, 4)`` counts and the questions present (sorted)."""
    # the questions present, in code order (sorted), and each unit's index among them: what
    # np.unique(return_inverse=True) gives, without its sorted copies (codes are bounded)
    seen = np.bincount(units.question, minlength=len(units.questions)) > 0
    present = np.flatnonzero(seen)
    position = (np.cumsum(seen) - 1).astype(np.int32)
    del seen
    questions = [units.questions[int(i)] for i in present]  # sorted: codes follow the order
    per_q = counts_by_cluster(
        position[units.question], units.system, units.label, units.pred, len(questions), n_systems
    )
    return per_q, questions


def _all_intervals(
    tallies: Sequence[tuple[IntArray, list[str]]],
    n_systems: int,
    bootstrap: int,
    seed: int,
    confidence: float,
) -> list[list[dict[str, Interval]]]:
    """Per mapping, per system: the bootstrap intervals (empty without ``bootstrap``).

    Systems scored on the same questions share resamples (paired bootstrap), and so do
    mappings: the weights depend on the seed and the questions alone, so every block of them
    is drawn once for all the mappings counted over the same questions
    (:func:`shared_bootstrap_intervals`; ``-m refuted -m non_supported --bootstrap 2000`` drew
    them twice). Separate draws run on threads of their own (numpy lets go of the GIL).
    """
    out: list[list[dict[str, Interval]]] = [[{} for _ in range(n_systems)] for _ in tallies]
    if not bootstrap:
        return out
    jobs: dict[tuple[tuple[str, ...], int], list[tuple[int, list[int], IntArray]]] = {}
    for mi, (per_q, questions) in enumerate(tallies):
        if not questions:
            continue
        present = per_q.sum(axis=2) > 0  # (questions, systems)
        groups: dict[tuple[int, ...], list[int]] = {}
        for s in range(n_systems):
            qs = tuple(int(i) for i in np.flatnonzero(present[:, s]))
            if qs:
                groups.setdefault(qs, []).append(s)
        for qs, members in groups.items():
            sub = per_q[np.ix_(list(qs), members)]
            key = (tuple(questions[i] for i in qs), _block_resamples(sub))
            jobs.setdefault(key, []).append((mi, members, sub))

    def put(same: list[tuple[int, list[int], IntArray]], drawn: list[Any]) -> None:
        for (mi, members, _), ivs in zip(same, drawn, strict=True):
            for s, iv in zip(members, ivs, strict=True):
                out[mi][s] = iv

    workers = max(1, min(len(jobs) + 1, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        alone: list[tuple[list[tuple[int, list[int], IntArray]], Future[Any]]] = []
        for (qids, _), same in jobs.items():
            subs = [sub for _, _, sub in same]
            rng = cluster_rng(seed, list(qids))
            if len(same) == 1:  # on a thread of its own
                future = pool.submit(shared_bootstrap_intervals, subs, bootstrap, rng, confidence)
                alone.append((same, future))
            else:  # drawn here, the resamples of the other mappings on the pool
                put(same, shared_bootstrap_intervals(subs, bootstrap, rng, confidence, pool))
        for same, future in alone:
            put(same, future.result())
    return out


def _score(
    per_q: IntArray,
    unlabelled: dict[str, int],
    missing: list[SentenceWithoutClaims],
    mapping: ErrorMapping,
    level: Level,
    policy: WithoutClaimsPolicy,
    systems: list[str],
    facts: ScopeFacts,
    intervals: list[dict[str, Interval]],
) -> list[MetricResult]:
    n_missing: dict[str, int] = {}
    for m in missing:
        n_missing[m.system] = n_missing.get(m.system, 0) + 1
    out = []
    for s, system in enumerate(systems):
        tp, fp, fn, tn = (int(x) for x in per_q[:, s, :].sum(axis=0))
        n_q = int((per_q[:, s, :].sum(axis=1) > 0).sum())
        out.append(
            MetricResult(
                system=system,
                mapping=mapping.name,
                error_verdicts=tuple(mapping.verdict_names()),
                level=level,
                n=tp + fp + fn + tn,
                n_questions=n_q,
                tp=tp,
                fp=fp,
                fn=fn,
                tn=tn,
                metrics=confusion_metrics(tp, fp, fn, tn),
                intervals=intervals[s],
                n_unlabelled=unlabelled.get(system, 0),
                n_without_claims=n_missing.get(system, 0),
                without_claims_policy=policy,
                **facts.fields(system),
            )
        )
    return out
