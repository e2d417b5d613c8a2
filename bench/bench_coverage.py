"""Coverage of failcodes' nominal-95% intervals, by seeded simulation (issue 14).

Prints one table per part; not a timed test. A cell meets the target when its coverage is
within 0.93-0.97, or when the library's ``warning`` field flagged the interval in every
replicate of the cell ("flagged": share of replicates warned; "unflagged cov": coverage of
the intervals that carried no warning). The target applies to the library's default
interval (BCa when bootstrapping agreement, the cluster bootstrap for pooled agreement,
percentile for P/R/F1); the other methods are printed for comparison.

A. Cohen's kappa and Krippendorff's alpha (nominal), two raters, binary codes with
   prevalence 0.3, n = 30, 50, 100 units, true value 0.6, 0.86, 0.92. The cell
   probabilities p11 = pi^2 + k pi (1-pi), p00 = (1-pi)^2 + k pi (1-pi), p01 = p10 =
   (1-k) pi (1-pi) give population kappa = Scott's pi = alpha = k exactly.
   Intervals: Wald (analytic SE for kappa, jackknife SE for alpha), bootstrap percentile,
   bootstrap BCa (the library default when bootstrapping).
B. Pooled agreement over 5 dimensions of 30 and 100 units with a shared unit difficulty: a unit is
   hard with probability 0.3 (both raters code each dimension at random, prevalence 0.5),
   else both give the true code; population pooled Fleiss kappa = alpha = 0.7. Rows-as-units
   bootstrap (the old behaviour) vs the cluster bootstrap over units (``clusters=``).
C. Cluster-bootstrap (by question) recall and F1 with 15, 40, 200 questions: 1 + Poisson(4)
   sentences per question, per-question error rate Beta(2, 6), detection Beta(6, 4), false
   alarms Beta(1, 12); the population values are ratios of expectations, computed on
   2,000,000 simulated questions. Intervals: failcodes.metrics' percentile intervals on the
   multinomial question weights of failcodes.stats.bootstrap.

Run: python bench/bench_coverage.py [--reps N] [--boot B] [--seed S]
(defaults: 400 replicates, 1,000 resamples: a few minutes on 2 shared cores).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

from failcodes.metrics import bootstrap_intervals, counts_by_cluster  # noqa: E402
from failcodes.stats import agreement as ag  # noqa: E402
from failcodes.stats.bootstrap import multinomial_weights  # noqa: E402

PREVALENCE = 0.3


def _two_raters(rng: np.random.Generator, n: int, kappa: float) -> np.ndarray:
    pq = PREVALENCE * (1 - PREVALENCE)
    p11 = PREVALENCE**2 + kappa * pq
    p00 = (1 - PREVALENCE) ** 2 + kappa * pq
    p01 = (1 - kappa) * pq
    cells = rng.choice(4, size=n, p=[p00, p01, p01, p11])
    return np.column_stack([cells // 2, cells % 2]).astype(float)


Row = tuple[str, float, float, float | None, str]

#: Interval methods the library uses by default (the target applies to these rows; the
#: others are printed for comparison).
DEFAULTS = ("bca", "cluster bootstrap", "(percentile)")


def _row(label: str, hits: list[bool], flags: list[bool]) -> Row:
    cover = float(np.mean(hits))
    unflagged = [h for h, f in zip(hits, flags, strict=True) if not f]
    cond = float(np.mean(unflagged)) if unflagged else None
    if not label.endswith(DEFAULTS):
        verdict = "(comparison)"
    elif 0.93 <= cover <= 0.97 or all(flags):
        verdict = "met"
    else:
        verdict = "MISSED"
    return label, cover, float(np.mean(flags)), cond, verdict


def _print(title: str, rows: list[Row]) -> None:
    print(f"\n{title}")
    print(f"{'cell':<48} {'coverage':>8} {'flagged':>8} {'unflagged cov':>13}  target")
    for label, cover, flagged, cond, verdict in rows:
        shown = "-" if cond is None else f"{cond:.3f}"
        print(f"{label:<48} {cover:8.3f} {flagged:8.3f} {shown:>13}  {verdict}")


def part_a(reps: int, boot: int, seed: int) -> list[Row]:
    rows = []
    for n in (30, 50, 100):
        for true in (0.6, 0.86, 0.92):
            rng = np.random.default_rng([seed, n, int(true * 100)])
            hits: dict[str, list[bool]] = {}
            flags: dict[str, list[bool]] = {}
            for r in range(reps):
                data = _two_raters(rng, n, true)
                wald = ag.agreements(data, ["cohen", "krippendorff"])
                bca = ag.agreements(data, ["cohen", "krippendorff"], n_bootstrap=boot, seed=r)
                pct = ag.agreements(
                    data, ["cohen", "krippendorff"], n_bootstrap=boot, seed=r, interval="percentile"
                )
                for method, results in (("wald", wald), ("percentile", pct), ("bca", bca)):
                    for res in results:
                        key = f"{res.statistic:<12} n={n:<3} true={true:<4} {method}"
                        ok = (
                            res.ci_low is not None
                            and res.ci_high is not None
                            and res.ci_low <= true <= res.ci_high
                        )
                        hits.setdefault(key, []).append(ok)
                        flags.setdefault(key, []).append(res.warning is not None)
            rows.extend(_row(k, hits[k], flags[k]) for k in hits)
    return rows


def part_b(reps: int, boot: int, seed: int) -> list[Row]:
    dims, hard_p, true = 5, 0.3, 0.7
    hits: dict[str, list[bool]] = {}
    flags: dict[str, list[bool]] = {}
    for n_units in (30, 100):
        rng = np.random.default_rng([seed, 2, n_units])
        for r in range(reps):
            hard = rng.random(n_units) < hard_p
            truth = rng.random((n_units, dims)) < 0.5
            a = np.where(hard[:, None], rng.random((n_units, dims)) < 0.5, truth)
            b = np.where(hard[:, None], rng.random((n_units, dims)) < 0.5, truth)
            data = np.column_stack([a.ravel(), b.ravel()]).astype(float)
            clusters = np.repeat(np.arange(n_units), dims)
            for label, ids in (("rows as units", None), ("cluster bootstrap", clusters)):
                for res in ag.agreements(
                    data, ["fleiss", "krippendorff"], n_bootstrap=boot, seed=r, clusters=ids
                ):
                    key = f"pooled {res.statistic:<12} {n_units:>3} units {label}"
                    low, high = res.ci_low, res.ci_high
                    hits.setdefault(key, []).append(
                        low is not None and high is not None and low <= true <= high
                    )
                    flags.setdefault(key, []).append(res.warning is not None)
    return [_row(k, hits[k], flags[k]) for k in hits]


def _questions(rng: np.random.Generator, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sizes = 1 + rng.poisson(4, size=q)
    err = rng.beta(2, 6, size=q)
    det = rng.beta(6, 4, size=q)
    fa = rng.beta(1, 12, size=q)
    cluster = np.repeat(np.arange(q), sizes)
    label = rng.random(cluster.size) < err[cluster]
    pred = np.where(
        label, rng.random(cluster.size) < det[cluster], rng.random(cluster.size) < fa[cluster]
    )
    return cluster, label, pred


def part_c(reps: int, boot: int, seed: int) -> list[Row]:
    _, big_l, big_p = _questions(np.random.default_rng([seed, 3]), 2_000_000)
    tp = float(np.sum(big_l & big_p))
    fn = float(np.sum(big_l & ~big_p))
    fp = float(np.sum(~big_l & big_p))
    truth = {"recall": tp / (tp + fn), "f1": 2 * tp / (2 * tp + fp + fn)}
    rows = []
    for q in (15, 40, 200):
        rng = np.random.default_rng([seed, 4, q])
        hits: dict[str, list[bool]] = {}
        flags: dict[str, list[bool]] = {}
        for _ in range(reps):
            cluster, label, pred = _questions(rng, q)
            per = counts_by_cluster(cluster, np.zeros(cluster.size), label, pred, q, 1)
            weights = multinomial_weights(q, boot, rng)
            intervals = bootstrap_intervals(per, weights, 0.95)[0]
            for name in ("recall", "f1"):
                iv = intervals[name]
                key = f"{name:<7} {q:>3} questions (percentile)"
                ok = iv.low is not None and iv.high is not None and iv.low <= truth[name] <= iv.high
                hits.setdefault(key, []).append(ok)
                flags.setdefault(key, []).append(iv.warning is not None or iv.low is None)
        rows.extend(_row(k, hits[k], flags[k]) for k in hits)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--parts", default="abc")
    args = parser.parse_args()
    start = time.perf_counter()
    mc = np.sqrt(0.95 * 0.05 / args.reps)
    print(f"replicates {args.reps}, resamples {args.boot}, seed {args.seed}; Monte Carlo SE of a")
    print(f"coverage near 0.95: {mc:.3f}")
    if "a" in args.parts:
        _print("A. kappa / alpha, two raters, binary", part_a(args.reps, args.boot, args.seed))
    if "b" in args.parts:
        _print("B. pooled agreement, units x 5 dimensions", part_b(args.reps, args.boot, args.seed))
    if "c" in args.parts:
        _print("C. cluster-bootstrap recall / F1", part_c(args.reps, args.boot, args.seed))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
