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

from _simulate import judged, reviewed, share_cell  # noqa: E402
from failcodes.errors import StatisticsError  # noqa: E402
from failcodes.stats.ppi import Stratum, ppi_mean, share_estimates  # noqa: E402


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
                    wald: list[tuple[bool, float]] = []

                    def wald_of(
                        strata: list[Stratum],
                        out: list[tuple[bool, float]] = wald,
                        p: float = prevalence,
                    ) -> None:
                        s = strata[0]
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            w = ppi_mean(s.y, s.yhat, s.yhat_unlabeled)
                        out.append((w.ci_low <= p <= w.ci_high, w.ci_high - w.ci_low))

                    c = share_cell(
                        rng, reps, big_n, prevalence, accuracy, accuracy, n, plan,
                        wald_of if plan == "uniform" else None,
                    )  # fmt: skip
                    hit, fin, refused = sum(c.hits), c.fin, c.refused
                    done = reps - refused
                    cover = hit / done if done else float("nan")
                    if done and cover < worst[0]:
                        worst = (cover, f"acc {accuracy} n {n} prev {prevalence} {plan}")
                    shown = (
                        f"{sum(h for h, _ in wald) / done:6.3f} "
                        f"{np.mean([w for _, w in wald]):7.3f}"
                        if wald
                        else f"{'':>6} {'':>7}"
                    )
                    print(
                        f"{accuracy:5.2f} {n:4d} {prevalence:5.2f} {plan:>8} | {cover:6.3f} "
                        f"{fin / max(done, 1):6.3f} {np.mean(c.widths):6.3f} {refused:7d} | "
                        f"{shown} | {c.high_miss:5d} {c.low_miss:5d}",
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
                    y, yhat = judged(rng, total, prevalence, 0.9, 0.9)
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
    """The corrected share's printed point (post-stratified) beside PPI++'s and human-only."""
    print("\npart 3: mean error (bias) of the point estimates on honest random draws, N = 2000:")
    print("post-strat = share_estimates' corrected.estimate (W1 a1 + W0 a0 per stratum, the")
    print("centre of its interval; a part with no reviewed unit takes its stratum's human")
    print("share); PPI++ = its corrected_ppi (lam tuned on the same units, ppi_py's number);")
    print("human = human.estimate. MC se of a bias: sd / sqrt(reps). 'by parts' splits the")
    print("uniform replicates by the fewest reviewed units in a judge-code part (0, 1-2, 3+):")
    print("bias post-strat / PPI++ (replicates). 'out': printed points outside their interval.")
    print(
        f"{'acc':>5} {'n':>4} {'prev':>5} {'plan':>8} | {'post':>8} {'PPI++':>8} {'human':>8} "
        f"{'mc.se':>6} | {'sd.post':>7} {'sd.ppi':>7} | {'rmse.po':>7} {'rmse.pp':>7} | "
        f"{'ref':>4} {'out':>3} | by parts"
    )
    big_n = 2000
    worse = []
    for accuracy in (0.8, 0.9, 0.95):
        for n in (30, 50, 100):
            for prevalence in (0.02, 0.05, 0.2):
                for plan in ("uniform", "by-code"):
                    rng = np.random.default_rng(
                        [seed + 2, int(accuracy * 100), n, int(prevalence * 100), plan == "uniform"]
                    )
                    post, ppi_pt, human, fewest = [], [], [], []
                    refused = outside = 0
                    for _ in range(reps):
                        y, yhat = judged(rng, big_n, prevalence, accuracy, accuracy)
                        strata = reviewed(rng, y, yhat, n, plan)
                        if plan == "uniform":
                            ones = int(strata[0].yhat.sum())
                            fewest.append(min(ones, n - ones))
                        try:
                            est = share_estimates(strata)
                        except StatisticsError:
                            refused += 1
                            if plan == "uniform":
                                fewest.pop()
                            continue
                        c = est.corrected
                        outside += not c.ci_low <= c.estimate <= c.ci_high
                        post.append(c.estimate)
                        ppi_pt.append(est.corrected_ppi)
                        human.append(est.human.estimate)
                    po, pp, hu = (np.asarray(v) - prevalence for v in (post, ppi_pt, human))
                    mc = max(po.std(), pp.std()) / np.sqrt(po.size)
                    parts = ""
                    if fewest:
                        few = np.asarray(fewest)
                        for label, sel in (
                            ("0", few == 0),
                            ("1-2", (few >= 1) & (few <= 2)),
                            ("3+", few >= 3),
                        ):
                            if sel.any():
                                parts += (
                                    f" {label}: {po[sel].mean():+.4f}/{pp[sel].mean():+.4f}"
                                    f" ({int(sel.sum())})"
                                )
                    if abs(po.mean()) > abs(pp.mean()) + 2 * mc:
                        worse.append(f"acc {accuracy} n {n} prev {prevalence} {plan}")
                    print(
                        f"{accuracy:5.2f} {n:4d} {prevalence:5.2f} {plan:>8} | {po.mean():+8.4f} "
                        f"{pp.mean():+8.4f} {hu.mean():+8.4f} {mc:6.4f} | {po.std():7.4f} "
                        f"{pp.std():7.4f} | {np.sqrt((po**2).mean()):7.4f} "
                        f"{np.sqrt((pp**2).mean()):7.4f} | {refused:4d} {outside:3d} |{parts}",
                        flush=True,
                    )
    print(
        "cells where the post-stratified point is more biased than PPI++'s by over 2 MC se: "
        + (", ".join(worse) or "none")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--parts", default="123", help="which parts to run, e.g. 3 (default: 123, all)"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    if "1" in args.parts:
        coverage_part(args.replicates, args.seed)
    if "2" in args.parts:
        fisher_part(args.replicates, args.seed)
    if "3" in args.parts:
        bias_part(args.replicates, args.seed)
    print(f"\n{time.perf_counter() - start:.0f} s (machine shared with other sessions)")


if __name__ == "__main__":
    main()
