"""Coverage in the seed's regime of what the report prints beside a review (session 33, issue 30).

The seed's regime: an accurate judge (accuracy 0.9-0.95: sensitivity = specificity 0.9 or 0.95,
or one of them 0.9 beside the other 0.95), 50-100 reviewed units, codes on 2-20% of units.
Sessions 29 and 32 measured the corrected share at prevalence 0.05-0.3 (sensitivity =
specificity) and 0.005-0.02 (accuracy 0.95-0.99); this fills the cells between and the
unequal judges.

Part 1: the per-code rows of human review vs judge (as ``set_code_agreement`` builds the
report's: percent, Cohen's kappa, AC1 and PABAK of a 0/1 table, BCa with the report's 1,000
resamples; a row counts as warned where its note says a coder never or always gave the code).
The reviewer codes the truth; the judge codes it with the given sensitivity and specificity;
``n`` units are reviewed (a simple random sample, so the target is the population coefficient
of the human-judge pair). Printed per statistic: coverage, coverage where the row carries no
warning (and how many), data sets whose lower bound is above the truth / upper bound below it,
mean width.

Part 2: the corrected share (``share_estimates``, what the report prints; it carries no
warning) over N = 2,000 judged units, ``uniform`` and ``by-code`` plans (proportional
allocation, at least 2 per stratum, as ``review plan --stratify code`` draws it). The target is
the prevalence the units are drawn from; ``fin`` the N units' own share.

Run: ``python bench/bench_s33_stats.py [--parts 12] [--replicates 1000] [--resamples 1000]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
for p in (REPO / "src", REPO / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from _simulate import mc, pair_truths, share_cell  # noqa: E402
from failcodes.coderagreement import CODE_STATS  # noqa: E402
from failcodes.stats.agreement import agreements  # noqa: E402

JUDGES = ((0.9, 0.9), (0.95, 0.95), (0.9, 0.95), (0.95, 0.9))
PREVALENCES = (0.02, 0.05, 0.1, 0.2)


def agreement_part(reps: int, resamples: int, seed: int, units: tuple[int, ...]) -> None:
    print("part 1: per-code human vs judge agreement (2 coders, BCa); 2 MC se at 0.95:", mc(reps))
    print(
        f"{'sens':>5} {'spec':>5} {'n':>4} {'prev':>5} {'stat':>8} {'truth':>7} | {'cover':>6} "
        f"{'unwarned':>8} {'(n)':>6} | {'lo>t':>5} {'hi<t':>5} | {'width':>6}"
    )
    worst: list[tuple[float, str]] = []
    for sens, spec in JUDGES:
        for n in units:
            for prevalence in PREVALENCES:
                rng = np.random.default_rng(
                    [seed, int(sens * 1000), int(spec * 1000), n, int(prevalence * 1000)]
                )
                truth = pair_truths(prevalence, sens, spec)
                rows: dict[str, list[tuple[float, float, float, float]]] = {
                    s: [] for s in CODE_STATS
                }
                for _ in range(reps):
                    y = rng.random(n) < prevalence
                    u = rng.random(n)
                    judge = np.where(y, u < sens, u >= spec)
                    # set_code_agreement's per-code rows (the report's), its note on a code
                    # one coder never (or always) gave included, without its other code's rows
                    given = (int(y.sum()), int(judge.sum()))
                    absent = min(given) == 0 or max(given) == n
                    for a in agreements(
                        np.column_stack([y, judge]).astype(float),
                        CODE_STATS,
                        categories=[0, 1],
                        n_bootstrap=resamples,
                        seed=0,
                    ):
                        t = truth[a.statistic]
                        quiet = float(a.warning is None and not absent)
                        if a.ci_low is None or a.ci_high is None:
                            rows[a.statistic].append((0.0, quiet, 0, 0))
                            continue
                        ok = a.ci_low <= t <= a.ci_high
                        side = 1.0 if a.ci_low > t else (-1.0 if a.ci_high < t else 0.0)
                        rows[a.statistic].append((float(ok), quiet, side, a.ci_high - a.ci_low))
                for stat in CODE_STATS:
                    arr = np.asarray(rows[stat], dtype=float)
                    quiet = arr[:, 1] == 1
                    unw = float(arr[quiet, 0].mean()) if quiet.any() else float("nan")
                    width = arr[arr[:, 3] > 0, 3]
                    line = (
                        f"{sens:5.3f} {spec:5.3f} {n:4d} {prevalence:5.3f} {stat:>8} "
                        f"{truth[stat]:7.4f} | {arr[:, 0].mean():6.3f} {unw:8.3f} "
                        f"{int(quiet.sum()):6d} | {int((arr[:, 2] > 0).sum()):5d} "
                        f"{int((arr[:, 2] < 0).sum()):5d} | "
                        f"{width.mean() if width.size else float('nan'):6.4f}"
                    )
                    print(line, flush=True)
                    if quiet.sum() >= reps / 10:
                        worst.append((unw, line))
    worst.sort()
    print("lowest unwarned coverage (cells with >= 10% of data sets unwarned):")
    for _, line in worst[:8]:
        print("  ", line)


def share_part(reps: int, seed: int, units: tuple[int, ...]) -> None:
    print("\npart 2: corrected share (nominal 0.95), N = 2000; 2 MC se at 0.95:", mc(reps))
    print(
        f"{'sens':>5} {'spec':>5} {'n':>4} {'prev':>5} {'plan':>8} | {'cover':>6} {'fin':>6} "
        f"{'width':>6} {'ref':>4} | {'lo>p':>5} {'hi<p':>5}"
    )
    worst: list[tuple[float, str]] = []
    for sens, spec in JUDGES:
        for n in units:
            for prevalence in PREVALENCES:
                for plan in ("uniform", "by-code"):
                    rng = np.random.default_rng(
                        [
                            seed,
                            int(sens * 1000),
                            int(spec * 1000),
                            n,
                            int(prevalence * 1000),
                            plan == "uniform",
                            2,
                        ]
                    )
                    c = share_cell(rng, reps, 2000, prevalence, sens, spec, n, plan)
                    line = (
                        f"{sens:5.3f} {spec:5.3f} {n:4d} {prevalence:5.3f} {plan:>8} | "
                        f"{c.cover:6.3f} {c.fin / len(c.hits):6.3f} {np.mean(c.widths):6.4f} "
                        f"{c.refused:4d} | {c.low_miss:5d} {c.high_miss:5d}"
                    )
                    print(line, flush=True)
                    worst.append((c.cover, line))
    worst.sort()
    print("lowest coverage:")
    for _, line in worst[:6]:
        print("  ", line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", default="12")
    parser.add_argument("--units", default="50,100", help="reviewed units per data set")
    args = parser.parse_args()
    start = time.perf_counter()
    units = tuple(int(u) for u in args.units.split(","))
    if "1" in args.parts:
        agreement_part(args.replicates, args.resamples, args.seed, units)
    if "2" in args.parts:
        share_part(args.replicates, args.seed, units)
    print(f"\n{time.perf_counter() - start:.0f} s (machine shared with other sessions)")


if __name__ == "__main__":
    main()
