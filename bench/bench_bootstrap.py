"""Cluster-bootstrap CIs: vectorised (multinomial weights @ per-question counts) vs naive loop.

Synthetic data: 24 systems x 10,000 labelled sentences in 500 questions (~20 sentences per
question, drawn with a Poisson size so clusters are uneven), a per-question error propensity
(so errors cluster by question, as in real answers) and system-specific detection rates.
2,000 resamples, 95% percentile intervals of all seven metrics for every system.

- vectorised: failcodes.metrics (counts_by_cluster -> multinomial_weights -> one matrix product
  -> metric arrays -> percentiles), timed end to end from the unit arrays, best of 5 runs.
- naive: a per-resample pandas loop (draw questions with replacement, concatenate their rows,
  groupby system, compute the metrics) timed on a subset of resamples and extrapolated
  linearly to 2,000 (printed as such).

Run: python bench/bench_bootstrap.py [--naive-resamples N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from failcodes.metrics import METRICS, bootstrap_intervals, counts_by_cluster
from failcodes.stats.bootstrap import cluster_rng, multinomial_weights

N_SYSTEMS = 24
N_SENTENCES = 10_000
MEAN_PER_QUESTION = 20
RESAMPLES = 2_000
SEED = 0


def synthetic(seed: int = SEED) -> pd.DataFrame:
    """One row per (system, sentence): system, question, label, pred (booleans)."""
    rng = np.random.default_rng(seed)
    sizes: list[int] = []
    while sum(sizes) < N_SENTENCES:
        sizes.append(max(1, int(rng.poisson(MEAN_PER_QUESTION))))
    sizes[-1] -= sum(sizes) - N_SENTENCES
    question = np.repeat(np.arange(len(sizes)), sizes)
    propensity = rng.beta(1.0, 8.0, size=len(sizes))  # ~11% errors, clustered by question
    label = rng.random(N_SENTENCES) < propensity[question]
    frames = []
    for s in range(N_SYSTEMS):
        sens, fpr = rng.uniform(0.1, 0.9), rng.uniform(0.01, 0.2)
        pred = np.where(label, rng.random(N_SENTENCES) < sens, rng.random(N_SENTENCES) < fpr)
        frames.append(
            pd.DataFrame({"system": s, "question": question, "label": label, "pred": pred})
        )
    return pd.concat(frames, ignore_index=True)


def vectorised(df: pd.DataFrame, resamples: int, seed: int) -> tuple[float, list[dict]]:
    """Time the library path from unit arrays to intervals."""
    start = time.perf_counter()
    n_q = int(df["question"].max()) + 1
    per_q = counts_by_cluster(
        df["question"].to_numpy(),
        df["system"].to_numpy(),
        df["label"].to_numpy(),
        df["pred"].to_numpy(),
        n_q,
        N_SYSTEMS,
    )
    rng = cluster_rng(seed, [str(q) for q in range(n_q)])
    weights = multinomial_weights(n_q, resamples, rng)
    intervals = bootstrap_intervals(per_q, weights, 0.95)
    return time.perf_counter() - start, intervals


def _metrics(g: pd.DataFrame) -> pd.DataFrame:
    lab, prd = g["label"], g["pred"]
    tp = (lab & prd).groupby(g["system"]).sum()
    fp = (~lab & prd).groupby(g["system"]).sum()
    fn = (lab & ~prd).groupby(g["system"]).sum()
    tn = (~lab & ~prd).groupby(g["system"]).sum()
    p = tp / (tp + fp)
    r = tp / (tp + fn)
    s = tn / (tn + fp)
    return pd.DataFrame(
        {
            "precision": p,
            "recall": r,
            "f1": 2 * p * r / (p + r),
            "specificity": s,
            "balanced_accuracy": (r + s) / 2,
            "youden_j": r + s - 1,
            "accuracy": (tp + tn) / (tp + fp + fn + tn),
        }
    )


def naive(df: pd.DataFrame, resamples: int, seed: int) -> float:
    """Time a per-resample pandas loop over ``resamples`` resamples."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    by_q = df.set_index("question").sort_index()
    questions = by_q.index.unique().to_numpy()
    results = []
    for _ in range(resamples):
        draw = rng.choice(questions, size=len(questions), replace=True)
        sample = by_q.loc[draw].reset_index()
        results.append(_metrics(sample))
    stacked = pd.concat(results, keys=range(resamples))
    stacked.groupby(level=1).quantile([0.025, 0.975])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--naive-resamples", type=int, default=20)
    args = parser.parse_args()
    df = synthetic()
    n_q = df["question"].nunique()
    print(
        f"data: {N_SYSTEMS} systems x {N_SENTENCES:,} sentences in {n_q} questions "
        f"(mean {N_SENTENCES / n_q:.1f} per question), {RESAMPLES:,} resamples, 7 metrics"
    )
    # Sanity check: resample 0 of the vectorised path equals recounting its rows by hand.
    rng = cluster_rng(SEED, [str(q) for q in range(n_q)])
    w0 = multinomial_weights(n_q, 1, rng)[0]
    rows = df.loc[df["question"].map(lambda q: w0[q]).to_numpy().astype(bool)]
    rep = rows.loc[rows.index.repeat(w0[rows["question"].to_numpy()])]
    tp_loop = int((rep["label"] & rep["pred"])[rep["system"] == 0].sum())
    per_q = counts_by_cluster(df["question"], df["system"], df["label"], df["pred"], n_q, 24)
    assert tp_loop == int(w0 @ per_q[:, 0, 0]), "vectorised counts disagree with the loop"

    times = []
    for _ in range(5):
        t, intervals = vectorised(df, RESAMPLES, SEED)
        times.append(t)
    vec = min(times)
    print(
        f"vectorised: {vec:.3f} s for {RESAMPLES:,} resamples "
        f"(best of 5; all runs: {', '.join(f'{t:.3f}' for t in times)} s)"
    )
    ex = intervals[0]["f1"]
    print(f"  e.g. system 0 F1 95% CI [{ex.low:.3f}, {ex.high:.3f}]; metrics: {', '.join(METRICS)}")
    k = args.naive_resamples
    t_naive = naive(df, k, SEED)
    extrapolated = t_naive * RESAMPLES / k
    print(
        f"naive pandas loop: {t_naive:.2f} s for {k} resamples -> extrapolated "
        f"{extrapolated:.1f} s for {RESAMPLES:,} (linear in resamples; measured on {k})"
    )
    print(f"speed-up: {extrapolated / vec:.0f}x  (target: vectorised < 0.5 s and >= 200x)")


if __name__ == "__main__":
    main()
