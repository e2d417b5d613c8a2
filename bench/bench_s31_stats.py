"""Coverage of the intervals researchers read at low prevalence (session 31, issue 30).

Part 1: the corrected share's interval as the report prints it (``share_estimates``), one
replicate at a time, in the cells session 29's bench left out: prevalence 0.01, 0.02, 0.05
with 30, 50 and 100 reviewed units, judge accuracy 0.9 and 0.95 (sensitivity = specificity),
N 2,000 judged units; plans ``uniform`` and ``by-code`` (proportional, at least 2 a stratum,
as ``review plan --stratify code`` draws it). Uniform replicates are split by the fewest
reviewed units in a judge-code part (0, 1, 2+) to show the coverage where a part gets 0 or 1
review. Printed: coverage of the prevalence p (PPI's estimand) and of the N units' own share,
misses below/above, mean width, refusals.

Part 2: agreement intervals at low prevalence: two raters (or three), one binary code seen on
about 2 of 100 units, raters of sensitivity ``se`` and specificity ``sp`` given the truth,
conditionally independent. The population value of each coefficient is computed from the
joint distribution (Cohen: the raters' own margins; Scott/Krippendorff's alpha and Fleiss:
the pooled margin, alpha's small-sample factor vanishing; AC1: Gwet's 2 pi (1 - pi)). Each
data set gets the tool's default intervals (BCa, ``--bootstrap`` resamples) and its warning;
printed: coverage overall, coverage where no warning was given, and how often a warning fired.

Run: ``python bench/bench_s31_stats.py [--parts 12] [--replicates 1000] [--resamples 1000]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
for p in (REPO / "src", REPO / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from bench_s29_ppi_seed import by_code_strata, population  # noqa: E402
from failcodes.errors import StatisticsError  # noqa: E402
from failcodes.stats.agreement import agreements, estimate, finish, prepare  # noqa: E402
from failcodes.stats.ppi import Stratum, share_estimates  # noqa: E402


def share_part(reps: int, seed: int) -> None:
    print("part 1: coverage of the corrected share (nominal 0.95), N = 2000; 2 MC se at")
    print(f"0.95 over {reps} replicates: {2 * np.sqrt(0.95 * 0.05 / reps):.3f}")
    print(
        f"{'acc':>5} {'n':>4} {'prev':>5} {'plan':>8} | {'cover':>6} {'fin':>6} {'width':>6} "
        f"{'ref':>4} | {'lo>p':>5} {'hi<p':>5} | uniform by fewest reviewed in a part: "
        "cover (replicates)"
    )
    big_n = 2000
    worst = (1.0, "")
    for accuracy in (0.9, 0.95):
        for n in (30, 50, 100):
            for prevalence in (0.01, 0.02, 0.05):
                for plan in ("uniform", "by-code"):
                    rng = np.random.default_rng(
                        [seed, int(accuracy * 100), n, int(prevalence * 1000), plan == "uniform"]
                    )
                    hit, fin, refused, low_miss, high_miss = [], 0, 0, 0, 0
                    widths, fewest = [], []
                    for _ in range(reps):
                        y, yhat = population(rng, big_n, prevalence, accuracy)
                        if plan == "uniform":
                            pick = rng.choice(big_n, size=n, replace=False)
                            rest = np.setdiff1d(np.arange(big_n), pick)
                            strata = [Stratum(y[pick], yhat[pick], yhat[rest])]
                            ones = int(yhat[pick].sum())
                        else:
                            strata = by_code_strata(rng, y, yhat, n)
                        try:
                            est = share_estimates(strata)
                        except StatisticsError:
                            refused += 1
                            continue
                        lo, hi = est.corrected.ci_low, est.corrected.ci_high
                        hit.append(lo <= prevalence <= hi)
                        low_miss += lo > prevalence
                        high_miss += hi < prevalence
                        fin += lo <= y.mean() <= hi
                        widths.append(hi - lo)
                        if plan == "uniform":
                            fewest.append(min(ones, n - ones))
                    cover = float(np.mean(hit))
                    if cover < worst[0]:
                        worst = (cover, f"acc {accuracy} n {n} prev {prevalence} {plan}")
                    parts = ""
                    if fewest:
                        few, h = np.asarray(fewest), np.asarray(hit)
                        for label, sel in (("0", few == 0), ("1", few == 1), ("2+", few >= 2)):
                            if sel.any():
                                parts += f" {label}: {h[sel].mean():.3f} ({int(sel.sum())})"
                    print(
                        f"{accuracy:5.2f} {n:4d} {prevalence:5.2f} {plan:>8} | {cover:6.3f} "
                        f"{fin / len(hit):6.3f} {np.mean(widths):6.3f} {refused:4d} | "
                        f"{low_miss:5d} {high_miss:5d} |{parts}",
                        flush=True,
                    )
    print(f"lowest coverage: {worst[0]:.3f} ({worst[1]})")


def truth_values(p: float, se: float, sp: float) -> dict[str, float]:
    """Population values of the coefficients for conditionally independent equal raters."""
    pos = p * se + (1 - p) * (1 - sp)  # a rater's share of 1s
    # two raters' agreement on a unit (any pair of them): both 1 or both 0
    po = p * (se**2 + (1 - se) ** 2) + (1 - p) * (sp**2 + (1 - sp) ** 2)
    pe_kappa = pos**2 + (1 - pos) ** 2  # equal margins: Cohen = Scott = Fleiss = alpha
    pe_ac1 = 2 * pos * (1 - pos)
    kappa = (po - pe_kappa) / (1 - pe_kappa)
    return {
        "percent": po,
        "cohen": kappa,
        "fleiss": kappa,
        "krippendorff": kappa,
        "gwet_ac1": (po - pe_ac1) / (1 - pe_ac1),
        "brennan_prediger": 2 * po - 1,
    }


STATS = ("percent", "cohen", "fleiss", "krippendorff", "gwet_ac1", "brennan_prediger")


def _draw(
    rng: np.random.Generator, units: int, raters: int, p: float, se: float, sp: float, boot: int
) -> tuple[dict[str, object], dict[str, object]]:
    """One data set's results as reported, and with the bootstrap's bounds alone (before)."""
    y = rng.random(units) < p
    r = rng.random((units, raters))
    codes = np.where(y[:, None], r < se, r >= sp).astype(float)
    wanted = STATS if raters == 2 else tuple(s for s in STATS if s != "cohen")
    seed = int(rng.integers(1 << 31))
    now = {
        a.statistic: a
        for a in agreements(codes, wanted, categories=[0, 1], n_bootstrap=boot, seed=seed)
    }
    prep = prepare(codes, [0, 1])
    # as main reported before session 31: percent exact only where it counts agreeing units,
    # Brennan-Prediger always resampled
    pct, bp = estimate(prep, "percent"), estimate(prep, "brennan_prediger")
    plain = [
        replace(pct, agreement_share=None),
        replace(bp, agreement_share=None, units_agreeing=None),
    ]
    before = {a.statistic: a for a in finish(plain, n_bootstrap=boot, seed=seed)}
    return now, before


def agreement_part(reps: int, resamples: int, seed: int, units_list: tuple[int, ...]) -> None:
    print("\npart 2: agreement intervals as reported (BCa), one binary code on a share p of")
    print("units, raters of sensitivity se and specificity sp, independent given the truth.")
    print("truth = the population value; cover = coverage of it; unw = coverage where no")
    print("warning was given (n: such data sets); lo>t / hi<t: bounds past the truth; undef:")
    print("no interval. 'boot' (percent, Brennan-Prediger): the bootstrap's bounds alone,")
    print("unwarned coverage (what main reported before session 31's effective-count bounds).")
    print(f"2 Monte Carlo se at 0.95 over {reps} data sets: {2 * np.sqrt(0.95 * 0.05 / reps):.3f}")
    print(
        f"{'units':>5} {'r':>2} {'p':>5} {'se/sp':>10} {'stat':>16} {'truth':>6} | {'cover':>6} "
        f"{'unw':>6} {'(n)':>4} {'undef':>5} | {'lo>t':>4} {'hi<t':>4} | {'boot':>6} {'w.now':>6} "
        f"{'w.boot':>6}"
    )
    for units in units_list:
        for raters in (2, 3, 4):
            for p, se, sp in ((0.02, 0.9, 0.99), (0.05, 0.9, 0.99), (0.02, 0.95, 0.995)):
                truth = truth_values(p, se, sp)
                rng = np.random.default_rng([seed, units, raters, int(p * 1000), int(se * 100)])
                rows: dict[str, list[tuple[float, ...]]] = {s: [] for s in STATS}
                undefined = dict.fromkeys(STATS, 0)
                for _ in range(reps):
                    now, before = _draw(rng, units, raters, p, se, sp, resamples)
                    for name, a in now.items():
                        if a.ci_low is None or a.ci_high is None:
                            undefined[name] += 1
                            continue
                        t, b = truth[name], before.get(name, a)
                        rows[name].append(
                            (
                                a.ci_low <= t <= a.ci_high,
                                a.warning is not None,
                                a.ci_low > t,
                                a.ci_high < t,
                                b.ci_low <= t <= b.ci_high,
                                a.ci_high - a.ci_low,
                                b.ci_high - b.ci_low,
                            )
                        )
                for name in STATS:
                    if not rows[name]:
                        continue
                    arr = np.asarray(rows[name], dtype=float)
                    quiet = arr[:, 1] == 0
                    unw = f"{arr[quiet, 0].mean():6.3f}" if quiet.any() else f"{'-':>6}"
                    boot = (
                        f"{arr[quiet, 4].mean():6.3f} {arr[:, 5].mean():6.3f} "
                        f"{arr[:, 6].mean():6.3f}"
                        if name in before and quiet.any()
                        else ""
                    )
                    print(
                        f"{units:5d} {raters:2d} {p:5.2f} {se:4.2f}/{sp:5.3f} {name:>16} "
                        f"{truth[name]:6.3f} | {arr[:, 0].mean():6.3f} {unw} {int(quiet.sum()):4d} "
                        f"{undefined[name]:5d} | {int(arr[:, 2].sum()):4d} "
                        f"{int(arr[:, 3].sum()):4d} | {boot}",
                        flush=True,
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", default="12")
    parser.add_argument("--units", default="50,100,200", help="part 2's units per data set")
    args = parser.parse_args()
    start = time.perf_counter()
    if "1" in args.parts:
        share_part(args.replicates, args.seed)
    if "2" in args.parts:
        units = tuple(int(u) for u in args.units.split(","))
        agreement_part(args.replicates, args.resamples, args.seed, units)
    print(f"\n{time.perf_counter() - start:.0f} s (machine shared with other sessions)")


if __name__ == "__main__":
    main()
