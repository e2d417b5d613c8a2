"""Metrics on the hand-made fixture (metrics_fixtures.py), degenerate cases, bootstrap."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcodes.errors import InputError
from failcodes.labels import Label
from failcodes.metrics import (
    METRICS,
    Estimate,
    Level,
    MetricResult,
    bootstrap_intervals,
    compute_metrics,
    confusion_metrics,
    counts_by_cluster,
    metric_arrays,
)
from failcodes.stats.bootstrap import (
    cluster_rng,
    multinomial_weights,
    percentile_intervals,
)
from failcodes.traces import Trace
from tests.metrics_fixtures import NE, R, S, labels, trace, traces_a

F = pytest.approx


def _values(r: MetricResult) -> dict[str, float | None]:
    return {k: v.value for k, v in r.metrics.items()}


# Sentence level, labels s1 T, s2 F, s3 T, s4 F, s5 T, s6 F (s7 T has no claim: excluded).
# Flagged sentences per mapping come from test_mapping.py's any-error table.
#   refuted            flags {s1}:               TP s1; FP -; FN s3,s5; TN s2,s4,s6 -> 1,0,2,3
#   refuted+no_evid.   flags {s1,s2,s6}:         TP s1; FP s2,s6; FN s3,s5; TN s4   -> 1,2,2,1
#   non_supported      flags {s1,s2,s3,s4,s6}:   TP s1,s3; FP s2,s4,s6; FN s5; TN - -> 2,3,1,0
#   strict             flags {s1,s2,s4,s6}:      TP s1; FP s2,s4,s6; FN s3,s5; TN - -> 1,3,2,0
#   refuted,ambiguous  flags {s1,s3}:            TP s1,s3; FP -; FN s5; TN s2,s4,s6 -> 2,0,1,3
SENTENCE_CASES = {
    # P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2TP/(2TP+FP+FN), Spec = TN/(TN+FP),
    # BA = (R+Spec)/2, J = R+Spec-1, Acc = (TP+TN)/6
    "refuted": (
        (1, 0, 2, 3),
        {
            "precision": 1.0,
            "recall": 1 / 3,
            "f1": 2 / 4,
            "specificity": 1.0,
            "balanced_accuracy": 2 / 3,
            "youden_j": 1 / 3,
            "accuracy": 4 / 6,
        },
    ),
    "refuted+no_evidence": (
        (1, 2, 2, 1),
        {
            "precision": 1 / 3,
            "recall": 1 / 3,
            "f1": 2 / 6,
            "specificity": 1 / 3,
            "balanced_accuracy": 1 / 3,
            "youden_j": -1 / 3,
            "accuracy": 2 / 6,
        },
    ),
    "non_supported": (
        (2, 3, 1, 0),
        {
            "precision": 2 / 5,
            "recall": 2 / 3,
            "f1": 4 / 8,
            "specificity": 0.0,
            "balanced_accuracy": 1 / 3,
            "youden_j": -1 / 3,
            "accuracy": 2 / 6,
        },
    ),
    "strict": (
        (1, 3, 2, 0),
        {
            "precision": 1 / 4,
            "recall": 1 / 3,
            "f1": 2 / 7,
            "specificity": 0.0,
            "balanced_accuracy": 1 / 6,
            "youden_j": -2 / 3,
            "accuracy": 1 / 6,
        },
    ),
    "refuted,ambiguous": (
        (2, 0, 1, 3),
        {
            "precision": 1.0,
            "recall": 2 / 3,
            "f1": 4 / 5,
            "specificity": 1.0,
            "balanced_accuracy": 5 / 6,
            "youden_j": 2 / 3,
            "accuracy": 5 / 6,
        },
    ),
}


@pytest.mark.parametrize("mapping", list(SENTENCE_CASES))
def test_sentence_metrics_match_hand_computation(mapping: str) -> None:
    counts, expected = SENTENCE_CASES[mapping]
    # hand computation over the sentences A made claims for (s7 left out explicitly)
    report = compute_metrics(traces_a(), labels(), [mapping], without_claims="exclude")
    (r,) = report.results
    assert (r.tp, r.fp, r.fn, r.tn) == counts
    assert r.n == 6 and r.n_questions == 3
    assert r.n_without_claims == 1  # s7
    assert _values(r) == F(expected)


def test_without_claims_reported_and_counted_as_missed_by_default() -> None:
    report = compute_metrics(traces_a(), labels(), ["refuted"])
    assert [(m.system, m.sentence_id) for m in report.without_claims] == [("A", "s7")]
    # default no_error (issue 14): s7 (True) is an FN: 1,0,3,3; recall 1/4.
    (r,) = report.results
    assert r.without_claims_policy.value == "no_error" and r.n_without_claims == 1
    assert (r.tp, r.fp, r.fn, r.tn) == (1, 0, 3, 3)
    assert r.metrics["recall"].value == F(1 / 4)
    # exclude (explicit): s7 left out: 1,0,2,3
    (r,) = compute_metrics(traces_a(), labels(), ["refuted"], without_claims="exclude").results
    assert (r.tp, r.fp, r.fn, r.tn) == (1, 0, 2, 3)


def test_claim_level_inherits_sentence_label_unless_claim_label() -> None:
    # Claim labels: c1 F (own label overrides s1), c2 T, c3 F, c4 T, c5 T, c6 F, c7 T, c8 F, c9 F.
    # refuted flags c2 only: TP c2; FP -; FN c4,c5,c7; TN c1,c3,c6,c8,c9 -> 1,0,3,5.
    (r,) = compute_metrics(traces_a(), labels(), ["refuted"], level="claim").results
    assert (r.tp, r.fp, r.fn, r.tn) == (1, 0, 3, 5)
    assert r.level is Level.CLAIM
    assert r.metrics["f1"].value == F(2 / 5)  # 2*1/(2+0+3)
    assert r.metrics["accuracy"].value == F(6 / 9)
    # Without the c1 claim label, c1 inherits s1's True and becomes an FN: 1,0,4,4.
    (r2,) = compute_metrics(
        traces_a(), labels(with_claim_label=False), ["refuted"], level="claim"
    ).results
    assert (r2.tp, r2.fp, r2.fn, r2.tn) == (1, 0, 4, 4)


def test_unlabelled_sentences_are_counted_not_scored() -> None:
    labs = [lab for lab in labels() if lab.sentence_id != "s5"]
    (r,) = compute_metrics(traces_a(), labs, ["refuted"], without_claims="exclude").results
    # s5 (a FN before) is unlabelled now: 1,0,1,3.
    assert (r.tp, r.fp, r.fn, r.tn) == (1, 0, 1, 3)
    assert r.n_unlabelled == 1


def test_verdict_distribution_table5_shape() -> None:
    (d,) = compute_metrics(traces_a(), labels()).distributions
    # 9 claims: supported c1,c5,c7,c8 = 4; refuted c2 = 1; no_evidence c3,c9 = 2;
    # ambiguous c4 = 1; out_of_scope c6 = 1.
    assert d.n_claims == 9
    assert {k.value: v for k, v in d.counts.items()} == {
        "supported": 4,
        "refuted": 1,
        "no_evidence": 2,
        "ambiguous": 1,
        "out_of_scope": 1,
    }
    assert d.proportions[S].value == F(4 / 9)


def test_label_for_missing_question_or_sentence_is_an_input_error() -> None:
    # Messages from failcodes.labels.check_labels_against_traces.
    with pytest.raises(InputError, match="no trace has question_id 'q9'"):
        compute_metrics(
            traces_a(), [*labels(), Label(sentence_id="x", question_id="q9", has_error=True)]
        )
    with pytest.raises(InputError, match="no trace has sentence_id 'nope'"):
        compute_metrics(traces_a(), [Label(sentence_id="nope", has_error=True)])
    with pytest.raises(InputError, match="no trace has claim_id 'c99'"):
        compute_metrics(traces_a(), [Label(claim_id="c99", has_error=True)])
    with pytest.raises(InputError, match="two labels for sentence 's1'"):
        compute_metrics(
            traces_a(), [*labels(), Label(sentence_id="s1", question_id="q1", has_error=False)]
        )


def test_labels_without_question_id_match_by_sentence_id() -> None:
    labs = [
        Label(sentence_id=lab.sentence_id, has_error=lab.has_error)
        for lab in labels(with_claim_label=False, with_empty_sentence=False)
    ]
    (r,) = compute_metrics(traces_a(), labs, ["refuted"]).results
    assert (r.tp, r.fp, r.fn, r.tn) == (1, 0, 2, 3)


# ------------------------------------------------------------------ degenerate cases


def test_degenerate_no_predictions_no_positives() -> None:
    # All-negative labels, nothing flagged: only TN. P, R, F1, BA, J undefined with reasons.
    m = confusion_metrics(0, 0, 0, 5)
    assert m["precision"] == Estimate(
        value=None, undefined_reason="no predicted errors (TP + FP = 0)"
    )
    assert m["recall"].value is None and "no clinician-labelled errors" in str(
        m["recall"].undefined_reason
    )
    assert m["f1"].value is None and "precision" in str(m["f1"].undefined_reason)
    assert m["balanced_accuracy"].value is None
    assert m["youden_j"].value is None
    assert m["specificity"].value == 1.0
    assert m["accuracy"].value == 1.0


def test_degenerate_empty() -> None:
    m = confusion_metrics(0, 0, 0, 0)
    assert all(not e.defined and e.undefined_reason for e in m.values())
    assert m["accuracy"].undefined_reason == "no labelled units (n = 0)"


def test_f1_zero_when_precision_and_recall_are_zero() -> None:
    m = confusion_metrics(0, 3, 2, 1)  # P = 0/3, R = 0/2: both defined and 0 -> F1 = 0
    assert m["f1"] == Estimate(value=0.0)


def test_no_predicted_errors_gives_undefined_f1_not_zero() -> None:
    m = confusion_metrics(0, 0, 4, 6)
    assert m["recall"].value == 0.0
    assert m["f1"].value is None
    assert m["f1"].undefined_reason == "precision: no predicted errors (TP + FP = 0)"


def test_estimate_requires_exactly_one_of_value_and_reason() -> None:
    with pytest.raises(ValueError, match="either a value or an undefined_reason"):
        Estimate(value=None)
    with pytest.raises(ValueError, match="either a value or an undefined_reason"):
        Estimate(value=0.5, undefined_reason="x")


def test_degenerate_system_in_report_has_undefined_interval() -> None:
    # Every claim supported -> nothing flagged; precision undefined, also in every resample.
    traces = [
        trace("A", q, s, c, S)
        for q, s, c, _ in [("q1", "s1", "c1", S), ("q2", "s3", "c4", S), ("q3", "s5", "c7", S)]
    ]
    labs = [
        Label(sentence_id=s, question_id=q, has_error=True)
        for q, s in (("q1", "s1"), ("q2", "s3"), ("q3", "s5"))
    ]
    (r,) = compute_metrics(traces, labs, ["refuted"], bootstrap=50, seed=1).results
    assert r.metrics["precision"].value is None
    ci = r.intervals["precision"]
    assert ci.low is None and ci.high is None and ci.defined_resamples == 0
    assert ci.undefined_reason == "undefined in all 50 resamples: no predicted errors (TP + FP = 0)"
    assert r.intervals["recall"].low == 0.0 and r.intervals["recall"].high == 0.0
    row = r.flat()
    assert row["precision"] is None and row["precision_ci_low"] is None
    assert not any(isinstance(v, float) and math.isnan(v) for v in row.values())


# ------------------------------------------------------------------ bootstrap


def _random_data(seed: int, n_questions: int = 12) -> tuple[list[Trace], list[Label]]:
    rnd = random.Random(seed)
    traces: list[Trace] = []
    labs: list[Label] = []
    verdicts = [S, S, S, R, NE]
    for q in range(n_questions):
        for s in range(rnd.randint(1, 4)):
            sid = f"q{q}s{s}"
            labs.append(Label(sentence_id=sid, question_id=f"q{q}", has_error=rnd.random() < 0.4))
            for system in ("A", "B"):
                for c in range(rnd.randint(1, 3)):
                    traces.append(trace(system, f"q{q}", sid, f"{sid}c{c}", rnd.choice(verdicts)))
    return traces, labs


def _counts(rows: list[tuple[bool, bool]]) -> tuple[int, int, int, int]:
    tp = sum(1 for y, p in rows if y and p)
    fp = sum(1 for y, p in rows if not y and p)
    fn = sum(1 for y, p in rows if y and not p)
    tn = sum(1 for y, p in rows if not y and not p)
    return tp, fp, fn, tn


# Each metric as offset + sum of coef * numerator / denominator over (tp, fp, fn, tn): the
# ratios a cluster-robust standard error linearises (written out, not imported).
_PARTS = {
    "precision": (0, [(1, lambda c: c[0], lambda c: c[0] + c[1])]),
    "recall": (0, [(1, lambda c: c[0], lambda c: c[0] + c[2])]),
    "f1": (0, [(1, lambda c: 2 * c[0], lambda c: 2 * c[0] + c[1] + c[2])]),
    "specificity": (0, [(1, lambda c: c[3], lambda c: c[3] + c[1])]),
    "balanced_accuracy": (
        0,
        [
            (0.5, lambda c: c[0], lambda c: c[0] + c[2]),
            (0.5, lambda c: c[3], lambda c: c[3] + c[1]),
        ],
    ),
    "youden_j": (
        -1,
        [(1, lambda c: c[0], lambda c: c[0] + c[2]), (1, lambda c: c[3], lambda c: c[3] + c[1])],
    ),
    "accuracy": (0, [(1, lambda c: c[0] + c[3], lambda c: sum(c))]),
}


def _value_and_se(
    clusters: list[tuple[int, int, int, int]], m: str
) -> tuple[float | None, float | None]:
    """A metric of pooled clusters and its linearised cluster-robust SE, in plain Python.

    SE^2 = G/(G-1) * sum_c (sum_j k_j (N_jc - R_j D_jc) / D_j)^2 over the G clusters drawn.
    """
    total = tuple(sum(c[i] for c in clusters) for i in range(4))
    offset, parts = _PARTS[m]
    if any(den(total) == 0 for _, _, den in parts):
        return None, None
    value = offset + sum(k * num(total) / den(total) for k, num, den in parts)
    influence = [
        sum(k * (num(c) - num(total) / den(total) * den(c)) / den(total) for k, num, den in parts)
        for c in clusters
    ]
    g = len(clusters)
    return value, math.sqrt(g / (g - 1) * sum(x * x for x in influence))


def _slow_reference(
    traces: list[Trace],
    labs: list[Label],
    system: str,
    mapping_errors: set,
    resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> dict[str, tuple[float, float]]:
    """Per-resample loop: rebuild each resample's questions, recount and studentize in Python.

    The bootstrap-t interval: t_r = (value_r - value) / se_r over the resamples with se_r > 0,
    then [value - t_(1-a) se, value - t_(a) se] clipped to the metric's range (numpy's
    default quantile interpolation). Where a ratio of the metric has fewer than 10 units on
    its rarer side, the percentile interval of the resampled values instead.
    """
    lab = {x.sentence_id: x.has_error for x in labs}
    sentences: dict[tuple[str, str], bool] = {}
    for t in traces:
        if t.system != system:
            continue
        key = (t.question_id, t.sentence_id)
        sentences[key] = sentences.get(key, False) or t.verdict in mapping_errors
    questions = sorted({q for q, _ in sentences})
    by_q = {
        q: _counts([(lab[s], p) for (qq, s), p in sentences.items() if qq == q]) for q in questions
    }
    weights = multinomial_weights(len(questions), resamples, cluster_rng(seed, questions))
    a = (1 - confidence) / 2
    out = {}
    total = tuple(sum(by_q[q][i] for q in questions) for i in range(4))
    for m in METRICS:
        value, se = _value_and_se([by_q[q] for q in questions], m)
        assert value is not None and se is not None and se > 0
        ts, values = [], []
        for r in range(resamples):
            drawn = [by_q[q] for qi, q in enumerate(questions) for _ in range(weights[r, qi])]
            v, s = _value_and_se(drawn, m)
            if v is not None:
                values.append(v)
            if v is not None and s is not None and s > 0:
                ts.append((v - value) / s)
        rare = min(min(num(total), den(total) - num(total)) for _, num, den in _PARTS[m][1])
        if rare < 10:
            out[m] = (float(np.quantile(values, a)), float(np.quantile(values, 1 - a)))
            continue
        low, high = (-1.0, 1.0) if m == "youden_j" else (0.0, 1.0)
        t_low, t_high = float(np.quantile(ts, a)), float(np.quantile(ts, 1 - a))
        out[m] = (
            min(max(value - t_high * se, low), high),
            min(max(value - t_low * se, low), high),
        )
    return out


@pytest.mark.parametrize(("seed", "questions"), [(7, 12), (8, 40)])
def test_bootstrap_matches_slow_reference(seed: int, questions: int) -> None:
    # 12 questions: few units, most metrics fall back to the percentile interval; 40: every
    # metric studentized
    traces, labs = _random_data(seed, questions)
    report = compute_metrics(traces, labs, ["refuted+no_evidence"], bootstrap=300, seed=11)
    methods = set()
    for r in report.results:
        ref = _slow_reference(traces, labs, r.system, {R, NE}, 300, 11)
        for m in METRICS:
            ci = r.intervals[m]
            methods.add(ci.method)
            assert (ci.low, ci.high) == F(ref[m], abs=1e-12), (r.system, m)
    assert methods == ({"percentile", "studentized"} if questions == 12 else {"studentized"})


def test_bootstrap_is_deterministic_per_seed_and_paired() -> None:
    traces, labs = _random_data(3)
    # exclude: a labelled sentence only system Z answered is not one of A's (no_error would
    # count it as A's miss, adding its question to A's clusters)
    opts = {"without_claims": "exclude"}
    a = compute_metrics(traces, labs, ["refuted"], bootstrap=200, seed=5, **opts)
    b = compute_metrics(traces, labs, ["refuted"], bootstrap=200, seed=5, **opts)
    c = compute_metrics(traces, labs, ["refuted"], bootstrap=200, seed=6, **opts)
    assert a == b
    assert a.results[0].intervals != c.results[0].intervals
    # Adding a system on other questions does not change A's resamples.
    extra = [trace("Z", "zq", "zs", "zc", R)]
    d = compute_metrics(
        [*traces, *extra],
        [*labs, Label(sentence_id="zs", question_id="zq", has_error=True)],
        ["refuted"],
        bootstrap=200,
        seed=5,
        **opts,
    )
    assert d.results[0].intervals == a.results[0].intervals


def test_multinomial_weights_rows_sum_to_clusters() -> None:
    w = multinomial_weights(17, 500, cluster_rng(0, [str(i) for i in range(17)]))
    assert w.shape == (500, 17)
    assert (w.sum(axis=1) == 17).all()
    # Each cluster is drawn 1 time per resample on average (Multinomial(17, 1/17) mean).
    assert abs(w.mean() - 1.0) < 0.05


def test_cluster_rng_ignores_order() -> None:
    x = cluster_rng(1, ["b", "a"]).integers(0, 1000, 5)
    y = cluster_rng(1, ["a", "b"]).integers(0, 1000, 5)
    assert (x == y).all()


def test_percentile_interval_matches_numpy_nanquantile() -> None:
    rng = np.random.default_rng(0)
    v = rng.random((101, 6))
    v[rng.random((101, 6)) < 0.3] = np.nan
    v[:, 5] = np.nan
    low, high, n = percentile_intervals(v, 0.9)
    assert (n == (~np.isnan(v)).sum(axis=0)).all()
    assert low[:5] == F(np.nanquantile(v[:, :5], 0.05, axis=0))
    assert high[:5] == F(np.nanquantile(v[:, :5], 0.95, axis=0))
    assert np.isnan(low[5]) and np.isnan(high[5])


def test_dataframe_adapter_has_ci_columns() -> None:
    report = compute_metrics(traces_a(), labels(), ["refuted", "strict"], bootstrap=20, seed=0)
    df = report.to_dataframe()
    assert list(df["mapping"]) == ["refuted", "strict"]
    for col in (
        "system",
        "level",
        "tp",
        "fp",
        "fn",
        "tn",
        "precision",
        "recall",
        "f1",
        "f1_ci_low",
        "f1_ci_high",
        "youden_j_ci_high",
    ):
        assert col in df.columns
    assert df.loc[0, "tp"] == 1


# ------------------------------------------------------------------ properties

counts = st.tuples(*(st.integers(min_value=0, max_value=10_000) for _ in range(4)))


@given(counts)
def test_metric_invariants(c: tuple[int, int, int, int]) -> None:
    tp, fp, fn, tn = c
    m = confusion_metrics(tp, fp, fn, tn)
    v = {k: e.value for k, e in m.items()}
    for name in ("precision", "recall", "f1", "specificity", "balanced_accuracy", "accuracy"):
        assert v[name] is None or 0.0 <= v[name] <= 1.0
    assert v["youden_j"] is None or -1.0 <= v["youden_j"] <= 1.0
    for e in m.values():
        assert (e.value is None) == (e.undefined_reason is not None)
    p, r, s = v["precision"], v["recall"], v["specificity"]
    if p is not None and r is not None:
        f1 = v["f1"]
        assert f1 is not None
        assert f1 == F(0.0 if p + r == 0 else 2 * p * r / (p + r))  # harmonic mean
        assert min(p, r) - 1e-12 <= f1 <= max(p, r) + 1e-12
    else:
        assert v["f1"] is None
    if r is not None and s is not None:
        assert v["balanced_accuracy"] == F((r + s) / 2)
        assert v["youden_j"] == F(2 * v["balanced_accuracy"] - 1)
    assert (v["accuracy"] is None) == (tp + fp + fn + tn == 0)


@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 4)), max_size=60))
def test_counts_partition_units(units: list[tuple[bool, bool, int]]) -> None:
    traces = [
        trace("A", f"q{q}", f"s{i}", f"c{i}", R if pred else S)
        for i, (_, pred, q) in enumerate(units)
    ]
    labs = [
        Label(sentence_id=f"s{i}", question_id=f"q{q}", has_error=y)
        for i, (y, _, q) in enumerate(units)
    ]
    if not units:
        assert compute_metrics(traces, labs).results == ()
        return
    (r,) = compute_metrics(traces, labs).results
    assert r.tp + r.fp + r.fn + r.tn == r.n == len(units)
    assert r.tp == sum(1 for y, p, _ in units if y and p)
    assert r.fn == sum(1 for y, p, _ in units if y and not p)


@given(st.lists(st.tuples(*(st.integers(0, 50) for _ in range(4))), min_size=1, max_size=30))
def test_vectorised_matches_scalar(rows: list[tuple[int, int, int, int]]) -> None:
    arr = np.array(rows)
    vec = metric_arrays(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3])
    for i, row in enumerate(rows):
        scalar = confusion_metrics(*row)
        for name in METRICS:
            got = vec[name][i]
            want = scalar[name].value
            assert (want is None and np.isnan(got)) or got == F(want)


def test_cluster_robust_se_and_effective_clusters_by_hand() -> None:
    from failcodes.metrics import effective_clusters, robust_se

    # Three questions (tp, fp, fn, tn): (2, 0, 1, 3), (1, 1, 0, 2), (0, 0, 2, 1).
    # Recall R = 3 / 6 = 0.5; each question's influence (tp_c - R pos_c) / POS:
    # (2 - 1.5) / 6, (1 - 0.5) / 6, (0 - 1) / 6; SE^2 = 3/2 * (0.25 + 0.25 + 1) / 36 = 2.25 / 36.
    # Precision P = 3 / 4: influences (2 - 1.5) / 4, (1 - 1.5) / 4, 0: SE^2 = 3/2 * 0.5 / 16.
    per = np.array([[[2, 0, 1, 3]], [[1, 1, 0, 2]], [[0, 0, 2, 1]]], dtype=np.int64)
    squares = np.einsum("cgi,cgj->gij", per, per).astype(float)  # sum of c c' over questions
    se = robust_se(per.sum(axis=0).astype(float), squares, 3)
    assert float(se["recall"][0]) == pytest.approx(1.5 / 6)
    assert float(se["precision"][0]) == pytest.approx(math.sqrt(1.5 * 0.5 / 16))
    # Kish's effective clusters of recall's denominator (positives 3, 1, 2): 6^2 / 14
    eff = effective_clusters(per)
    assert float(eff["recall"][0]) == pytest.approx(36 / 14)
    # precision's denominator (flagged 2, 2, 0): 4^2 / 8 = 2
    assert float(eff["precision"][0]) == pytest.approx(2.0)


def test_concentrated_questions_are_warned() -> None:
    # 30 questions, but one holds 100 of the 129 positives: 129^2 / (100^2 + 29) = 1.66 equal
    # questions (Kish), far below 15
    rng = np.random.default_rng(0)
    sizes = [100] + [1] * 29
    cluster = np.repeat(np.arange(30), [s * 2 for s in sizes])
    label = np.tile([True, False], sum(sizes))
    pred = rng.random(cluster.size) < 0.5
    per = counts_by_cluster(cluster, np.zeros(cluster.size, dtype=int), label, pred, 30, 1)
    ivs = bootstrap_intervals(per, multinomial_weights(30, 200, rng), 0.95)[0]
    warning = ivs["recall"].warning
    assert warning is not None
    assert "units concentrated in few clusters: worth 1.7 equal ones (< 15)" in warning
    assert ivs["recall"].method == "studentized"


def test_labels_on_a_subset_say_the_metrics_are_the_subsets() -> None:
    # Labels for questions q1 and q2 only (s1-s4): q3's sentences s5 and s6 are unlabelled.
    # Seed 001, appendix A.2: precision and F1 on a gold subset cannot be extrapolated.
    from failcodes.report.tables import subset_notes

    subset = [lab for lab in labels(with_claim_label=False) if lab.question_id in ("q1", "q2")]
    report = compute_metrics(traces_a(), subset, ["refuted"])
    (r,) = report.results
    assert (r.n, r.n_unlabelled) == (4, 2)
    line = (
        "A: labels cover 4 of 6 sentences; "
        "precision, recall and F1 hold for the labelled subset only"
    )
    assert any(n.startswith(line) for n in report.notes())
    assert [n.startswith(line) for n in subset_notes([r.flat()])] == [True]
    # every sentence labelled: no such line
    full = compute_metrics(traces_a(), labels(with_claim_label=False), ["refuted"])
    assert subset_notes([x.flat() for x in full.results]) == []
