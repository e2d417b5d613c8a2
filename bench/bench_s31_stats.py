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

from _simulate import equal_raters, mc, rated, share_cell  # noqa: E402
from failcodes.stats.agreement import agreements, estimate, finish, prepare  # noqa: E402


def share_part(reps: int, seed: int) -> None:
    print("part 1: coverage of the corrected share (nominal 0.95), N = 2000; 2 MC se at")
    print(f"0.95 over {reps} replicates: {mc(reps)}")
    print(
        f"{'acc':>5} {'n':>4} {'prev':>5} {'plan':>8} | {'cover':>6} {'fin':>6} {'width':>6} "
        f"{'ref':>4} | {'lo>p':>5} {'hi<p':>5} | uniform by fewest reviewed in a part: "
        "cover (replicates)"
    )
    worst = (1.0, "")
    for accuracy in (0.9, 0.95):
        for n in (30, 50, 100):
            for prevalence in (0.01, 0.02, 0.05):
                for plan in ("uniform", "by-code"):
                    rng = np.random.default_rng(
                        [seed, int(accuracy * 100), n, int(prevalence * 1000), plan == "uniform"]
                    )
                    c = share_cell(rng, reps, 2000, prevalence, accuracy, accuracy, n, plan)
                    if c.cover < worst[0]:
                        worst = (c.cover, f"acc {accuracy} n {n} prev {prevalence} {plan}")
                    parts = ""
                    if plan == "uniform":
                        parts = c.by_ones([min(ones, n - ones) for ones in c.ones])
                    print(
                        f"{accuracy:5.2f} {n:4d} {prevalence:5.2f} {plan:>8} | {c.cover:6.3f} "
                        f"{c.fin / len(c.hits):6.3f} {np.mean(c.widths):6.3f} {c.refused:4d} | "
                        f"{c.low_miss:5d} {c.high_miss:5d} |{parts}",
                        flush=True,
                    )
    print(f"lowest coverage: {worst[0]:.3f} ({worst[1]})")


STATS = ("percent", "cohen", "fleiss", "krippendorff", "gwet_ac1", "brennan_prediger")


def _draw(
    rng: np.random.Generator, units: int, raters: int, p: float, se: float, sp: float, boot: int
) -> tuple[dict[str, object], dict[str, object]]:
    """One data set's results as reported, and with the bootstrap's bounds alone (before)."""
    codes = rated(rng, rng.random(units) < p, raters, se, sp)
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
    print(f"2 Monte Carlo se at 0.95 over {reps} data sets: {mc(reps)}")
    print(
        f"{'units':>5} {'r':>2} {'p':>5} {'se/sp':>10} {'stat':>16} {'truth':>6} | {'cover':>6} "
        f"{'unw':>6} {'(n)':>4} {'undef':>5} | {'lo>t':>4} {'hi<t':>4} | {'boot':>6} {'w.now':>6} "
        f"{'w.boot':>6}"
    )
    for units in units_list:
        for raters in (2, 3, 4):
            for p, se, sp in ((0.02, 0.9, 0.99), (0.05, 0.9, 0.99), (0.02, 0.95, 0.995)):
                truth = equal_raters(p, se, sp)
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
