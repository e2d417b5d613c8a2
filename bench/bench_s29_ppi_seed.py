"""The corrected share's interval in the seed's regime, unit by unit (session 29, issue 30).

A check of ``bench/bench_ppi_coverage.py`` by another route: that bench draws counts
(multinomial/binomial) and calls the vectorised parts; this one draws every unit, a review
sample of them, and calls the functions a user calls, ``share_estimates`` (what the report
prints) and ``ppi_mean`` (the library API: its Wald interval, ``exact_low``/``exact_high``
and ``warning``), one replicate at a time.

Design (the seed's regime: 50-100 reviewed units, an accurate judge): judge accuracy 0.9 and
0.95 (sensitivity = specificity), reviewed units n 50 and 100, prevalence 0.05, 0.1, 0.2,
0.3, judged units N 2,000; plans ``uniform`` (a simple random sample of n) and ``by-code``
(stratified by the judge's code, proportional allocation with at least 2 per stratum, as
``failcodes review plan --stratify code`` draws it). The target is the prevalence ``p`` the
units are drawn from (PPI's estimand); ``fin`` is the coverage of the N units' own share.

Printed per cell: coverage and mean width of the corrected interval as reported (and of
ppi_mean's Wald interval on uniform plans, which always carries its note for 0/1 codes), and
how many replicates the library refused ("too small"). Part 2: how often ``ppi_mean``'s
not-a-random-draw clause fires on honest random draws and on draws where a judge-1 unit is
w times as likely to be reviewed (w = 1.5, 2, 3), at the threshold p < 0.05 and at 0.01.
Part 3: the mean error of the corrected share's point estimate (PPI++ with lam tuned on the
same reviewed units, as ``share_estimates`` prints it) beside the post-stratified estimate
the interval is built around, and the human-only one, on honest random draws.

Run: ``python bench/bench_s29_ppi_seed.py [--replicates 1000] [--seed 0]`` (about 4 minutes
at 1,000 replicates on 2 shared cores).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

from failcodes.errors import StatisticsError  # noqa: E402
from failcodes.stats.ppi import Stratum, ppi_mean, share_estimates  # noqa: E402


def population(
    rng: np.random.Generator, size: int, prevalence: float, accuracy: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's human code (the truth) and the judge's code (right with ``accuracy``)."""
    y = (rng.random(size) < prevalence).astype(float)
    right = rng.random(size) < accuracy
    return y, np.where(right, y, 1.0 - y)


def by_code_strata(
    rng: np.random.Generator, y: np.ndarray, yhat: np.ndarray, n: int
) -> list[Stratum]:
    """Proportional allocation over the judge's two codes, at least 2 reviewed per stratum."""
    strata = []
    ones = int(yhat.sum())
    n1 = min(max(2, round(n * ones / yhat.size)), ones) if ones else 0
    for code, k in ((1.0, n1), (0.0, n - n1)):
        where = np.flatnonzero(yhat == code)
        if where.size == 0:
            continue
        k = min(k, where.size)
        pick = rng.choice(where, size=k, replace=False)
        rest = np.setdiff1d(where, pick)
        strata.append(Stratum(y=y[pick], yhat=yhat[pick], yhat_unlabeled=yhat[rest]))
    return strata


def coverage_part(reps: int, seed: int) -> None:
    print("part 1: coverage of the corrected share (nominal 0.95), N = 2000")
    print(
        f"{'acc':>5} {'n':>4} {'prev':>5} {'plan':>8} | {'cover':>6} {'fin':>6} {'width':>6} "
        f"{'refused':>7} | {'wald':>6} {'w.width':>7} | {'lo<p':>5} {'hi<p':>5}"
    )
    big_n = 2000
    worst = (1.0, "")
    for accuracy in (0.9, 0.95):
        for n in (50, 100):
            for prevalence in (0.05, 0.1, 0.2, 0.3):
                for plan in ("uniform", "by-code"):
                    rng = np.random.default_rng(
                        [seed, int(accuracy * 100), n, int(prevalence * 100), plan == "uniform"]
                    )
                    hit = fin = refused = wald_hit = misses_low = misses_high = 0
                    widths, wald_widths = [], []
                    for _ in range(reps):
                        y, yhat = population(rng, big_n, prevalence, accuracy)
                        if plan == "uniform":
                            pick = rng.choice(big_n, size=n, replace=False)
                            rest = np.setdiff1d(np.arange(big_n), pick)
                            strata = [
                                Stratum(y=y[pick], yhat=yhat[pick], yhat_unlabeled=yhat[rest])
                            ]
                        else:
                            strata = by_code_strata(rng, y, yhat, n)
                        try:
                            est = share_estimates(strata)
                        except StatisticsError:
                            refused += 1
                            continue
                        low, high = est.corrected.ci_low, est.corrected.ci_high
                        hit += low <= prevalence <= high
                        misses_low += high < prevalence
                        misses_high += low > prevalence
                        fin += low <= y.mean() <= high
                        widths.append(high - low)
                        if plan == "uniform":
                            s = strata[0]
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                w = ppi_mean(s.y, s.yhat, s.yhat_unlabeled)
                            wald_hit += w.ci_low <= prevalence <= w.ci_high
                            wald_widths.append(w.ci_high - w.ci_low)
                    done = reps - refused
                    cover = hit / done if done else float("nan")
                    if done and cover < worst[0]:
                        worst = (cover, f"acc {accuracy} n {n} prev {prevalence} {plan}")
                    wald = (
                        f"{wald_hit / done:6.3f} {np.mean(wald_widths):7.3f}"
                        if wald_widths
                        else f"{'':>6} {'':>7}"
                    )
                    print(
                        f"{accuracy:5.2f} {n:4d} {prevalence:5.2f} {plan:>8} | {cover:6.3f} "
                        f"{fin / max(done, 1):6.3f} {np.mean(widths):6.3f} {refused:7d} | {wald} "
                        f"| {misses_low:5d} {misses_high:5d}",
                        flush=True,
                    )
    mc = 2 * np.sqrt(0.95 * 0.05 / reps)
    print(f"lowest coverage: {worst[0]:.3f} ({worst[1]}); 2 Monte Carlo SE = {mc:.3f}")


def fisher_part(reps: int, seed: int) -> None:
    from scipy.stats import fisher_exact

    print("\npart 2: ppi_mean's not-a-random-draw test (judge codes, reviewed vs not); judge")
    print("accuracy 0.9; a judge-1 unit w times as likely to be reviewed. Fired: share of")
    print("replicates with p < .05 / .01 / .001; then share_estimates' corrected interval's")
    print("coverage of p and ppi_mean's (Wald) coverage and mean bias of its estimate")
    print(
        f"{'N':>5} {'prev':>5} {'n':>4} {'w':>4} | {'p<.05':>6} {'p<.01':>6} {'p<.001':>6} | "
        f"{'cover':>6} | {'wald':>6} {'bias':>7}"
    )
    rng = np.random.default_rng(seed + 1)
    for total, prevalence in ((2000, 0.05), (1000, 0.2), (200, 0.2)):
        for n in (50, 100):
            for w in (1.0, 1.5, 2.0, 3.0):
                ps = np.empty(reps)
                hit = wald_hit = 0
                bias = []
                for r in range(reps):
                    y, yhat = population(rng, total, prevalence, 0.9)
                    weight = np.where(yhat == 1, w, 1.0)
                    pick = rng.choice(total, size=n, replace=False, p=weight / weight.sum())
                    rest = np.setdiff1d(np.arange(total), pick)
                    a, k = int(yhat[pick].sum()), int(yhat.sum())
                    ps[r] = fisher_exact([[a, n - a], [k - a, total - n - (k - a)]]).pvalue
                    est = share_estimates([Stratum(y[pick], yhat[pick], yhat[rest])])
                    hit += est.corrected.ci_low <= prevalence <= est.corrected.ci_high
                    m = ppi_mean(y[pick], yhat[pick], yhat[rest])
                    wald_hit += m.ci_low <= prevalence <= m.ci_high
                    bias.append(m.estimate - prevalence)
                print(
                    f"{total:5d} {prevalence:5.2f} {n:4d} {w:4.1f} | {(ps < 0.05).mean():6.3f} "
                    f"{(ps < 0.01).mean():6.3f} {(ps < 0.001).mean():6.3f} | {hit / reps:6.3f} | "
                    f"{wald_hit / reps:6.3f} {np.mean(bias):+7.4f}",
                    flush=True,
                )


def bias_part(reps: int, seed: int) -> None:
    """The corrected share's point estimate (PPI++, tuned lam) beside the post-stratified one."""
    print("\npart 3: mean error of point estimates on honest random draws, N = 2000")
    print("(PPI++ as share_estimates prints it; post-stratified W1 a1 + W0 a0, the centre of")
    print("the parts the interval is built from; human-only) with the Monte Carlo SE and SD")
    rng = np.random.default_rng(seed + 2)
    big_n = 2000
    for accuracy in (0.9, 0.95):
        for n in (50, 100):
            for prevalence in (0.05, 0.2):
                ppi_est, post, human = [], [], []
                for _ in range(reps):
                    y, yhat = population(rng, big_n, prevalence, accuracy)
                    pick = rng.choice(big_n, size=n, replace=False)
                    rest = np.setdiff1d(np.arange(big_n), pick)
                    est = share_estimates([Stratum(y[pick], yhat[pick], yhat[rest])])
                    ppi_est.append(est.corrected.estimate)
                    human.append(est.human.estimate)
                    ones = yhat[pick] == 1
                    w1 = float(yhat.mean())
                    post.append(
                        w1 * y[pick][ones].mean() + (1 - w1) * y[pick][~ones].mean()
                        if ones.any() and (~ones).any()
                        else np.nan
                    )
                cols = []
                for values in (ppi_est, post, human):
                    v = np.asarray(values)
                    v = v[np.isfinite(v)]
                    cols.append(
                        f"{v.mean() - prevalence:+.4f} (se {v.std() / np.sqrt(v.size):.4f}, "
                        f"sd {v.std():.4f})"
                    )
                print(
                    f"acc {accuracy} n {n} prev {prevalence}: PPI++ {cols[0]} | post-strat "
                    f"{cols[1]} | human {cols[2]}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    coverage_part(args.replicates, args.seed)
    fisher_part(args.replicates, args.seed)
    bias_part(args.replicates, args.seed)
    print(f"\n{time.perf_counter() - start:.0f} s (machine shared with other sessions)")


if __name__ == "__main__":
    main()
