"""Coverage of intervals in shapes session 31 left unmeasured (session 32, issue 30).

Part 1: Gwet's AC1 of 2-4 raters on one binary code at low prevalence (session 31 saw 0.936-0.940
overall at 3 raters, 100 units, prevalence 0.02 over 400 data sets: is it short of 0.95 beyond
Monte Carlo error?). Raters of sensitivity ``se`` and specificity ``sp`` given the truth,
conditionally independent; the population AC1 is ``(p_o - p_e) / (1 - p_e)`` with ``p_e = 2 pi
(1 - pi)`` of the pooled rater margin ``pi``. Printed: coverage as reported (BCa, ``--resamples``),
where no warning was given, bounds past the truth on each side, mean width; ``before``: the
same data set's interval without session 32's widening (the bootstrap's bounds alone, as main
gave them before: ``agreement_share`` None). ``--resamples 0``: Wald intervals (a judge panel's).

Part 2: the corrected share (``share_estimates``) in the seed's regime: an accurate judge
(accuracy 0.95-0.99, sensitivity = specificity, or sensitivity 0.9 beside specificity 0.995),
50-100 reviewed units drawn per the plan (``uniform`` or ``by-code``), codes on 0.5-2% of
N = 2,000 units.

Part 3: per-code agreement where codes co-occur: three codes per unit whose truths share a latent
unit difficulty (correlated within a unit), three raters coding each code yes/no (sensitivity
0.9, specificity 0.99); each code's AC1 and Fleiss kappa as `agree` reports a code's row (one
binary matrix per code, BCa). Printed per code: coverage, unwarned coverage, and the share of
data sets where every code's interval covered its truth (simultaneous: the per-code intervals
are each 95%, not jointly).

Part 4: pooled AC1 and Brennan-Prediger (``pooled_agreements``: de Vries et al.'s mean ``p_o``
and ``p_e`` over items, whole units resampled) over part 3's three co-occurring codes, at
prevalence 0.02 each or 0.01/0.02/0.05. Session 32 measured the cluster bootstrap's bounds
alone (Brennan-Prediger 0.929 at 100 units, unwarned); since session 33 AC1 and Brennan-Prediger
hold the effective-counts Clopper-Pearson interval fed by the cluster jackknife's se, as a single
item's do (the same seeds draw the same data sets). Printed: coverage, unwarned coverage, data
sets whose lower bound is above the truth, mean width.

Run: ``python bench/bench_s32_stats.py [--parts 1234] [--replicates 1000] [--resamples 1000]``.
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

from _simulate import equal_raters, mc, rated, rater_pair, share_cell  # noqa: E402
from failcodes.stats.agreement import (  # noqa: E402
    AgreementResult,
    agreements,
    estimate,
    finish,
    pooled_agreements,
    prepare,
    rare_ratings,
)


def ac1_truth(p: float, se: float, sp: float) -> float:
    return equal_raters(p, se, sp)["gwet_ac1"]


def kappa_truth(p: float, se: float, sp: float) -> float:
    return equal_raters(p, se, sp)["fleiss"]


def ac1_both(
    codes: np.ndarray, resamples: int, seed: int
) -> tuple[AgreementResult, AgreementResult]:
    """AC1 as reported, and with its bootstrap (or Wald) bounds alone (main before s32)."""
    prep = prepare(codes, [0, 1])
    est = estimate(prep, "gwet_ac1")
    rare = rare_ratings(prep)
    (now,) = finish([est], n_bootstrap=resamples, seed=seed, rare_ratings=rare)
    (before,) = finish(
        [replace(est, agreement_share=None)], n_bootstrap=resamples, seed=seed, rare_ratings=rare
    )
    return now, before


CELLS = ((0.02, 0.9, 0.99), (0.02, 0.95, 0.995), (0.05, 0.9, 0.99))


def ac1_part(
    reps: int,
    resamples: int,
    seed: int,
    units_list: tuple[int, ...],
    cells: tuple[tuple[float, float, float], ...] = CELLS,
) -> None:
    print(
        f"part 1: Gwet's AC1 ({'BCa' if resamples else 'Wald'}) on one binary code; "
        "2 MC se at 0.95:",
        mc(reps),
    )
    print(
        f"{'units':>5} {'r':>2} {'p':>5} {'se/sp':>10} {'truth':>6} | {'cover':>6} {'unw':>6} "
        f"{'(n)':>5} {'undef':>5} | {'lo>t':>4} {'hi<t':>4} {'width':>6} | {'before':>6} "
        f"{'lo>t':>4} {'hi<t':>4} {'width':>6}"
    )
    for units in units_list:
        for raters in (2, 3, 4):
            for p, se, sp in cells:
                truth = ac1_truth(p, se, sp)
                rng = np.random.default_rng([seed, units, raters, int(p * 1000), int(se * 100)])
                rows, undef = [], 0
                for _ in range(reps):
                    codes = rated(rng, rng.random(units) < p, raters, se, sp)
                    a, b = ac1_both(codes, resamples, int(rng.integers(1 << 31)))
                    if a.ci_low is None or a.ci_high is None or b.ci_low is None:
                        undef += 1
                        continue
                    lo, hi = b.ci_low, b.ci_high or b.ci_low
                    rows.append(
                        (
                            a.ci_low <= truth <= a.ci_high,
                            a.warning is not None,
                            a.ci_low > truth,
                            a.ci_high < truth,
                            a.ci_high - a.ci_low,
                            lo <= truth <= hi,
                            lo > truth,
                            hi < truth,
                            hi - lo,
                        )
                    )
                arr = np.asarray(rows, dtype=float)
                quiet = arr[:, 1] == 0
                unw = f"{arr[quiet, 0].mean():6.3f}" if quiet.any() else f"{'-':>6}"
                print(
                    f"{units:5d} {raters:2d} {p:5.2f} {se:4.2f}/{sp:5.3f} {truth:6.3f} | "
                    f"{arr[:, 0].mean():6.3f} {unw} {int(quiet.sum()):5d} {undef:5d} | "
                    f"{int(arr[:, 2].sum()):4d} {int(arr[:, 3].sum()):4d} "
                    f"{arr[:, 4].mean():6.3f} | "
                    f"{arr[:, 5].mean():6.3f} {int(arr[:, 6].sum()):4d} {int(arr[:, 7].sum()):4d} "
                    f"{arr[:, 8].mean():6.3f}",
                    flush=True,
                )


def share_part(reps: int, seed: int) -> None:
    print("\npart 2: corrected share (nominal 0.95), N = 2000; 2 MC se at 0.95:", mc(reps))
    print(
        f"{'sens':>5} {'spec':>5} {'n':>4} {'prev':>6} {'plan':>8} | {'cover':>6} {'fin':>6} "
        f"{'width':>6} {'ref':>4} | {'lo>p':>5} {'hi<p':>5} | judge-1 reviewed 0 / 1 / 2+: "
        "cover (replicates)"
    )
    worst = (1.0, "")
    for sens, spec in ((0.95, 0.95), (0.97, 0.97), (0.99, 0.99), (0.9, 0.995)):
        for n in (50, 100):
            for prevalence in (0.005, 0.01, 0.02):
                for plan in ("uniform", "by-code"):
                    rng = np.random.default_rng(
                        [
                            seed,
                            int(sens * 1000),
                            int(spec * 1000),
                            n,
                            int(prevalence * 1e4),
                            plan == "uniform",
                        ]
                    )
                    c = share_cell(rng, reps, 2000, prevalence, sens, spec, n, plan)
                    if c.cover < worst[0]:
                        worst = (c.cover, f"{sens}/{spec} n {n} prev {prevalence} {plan}")
                    print(
                        f"{sens:5.3f} {spec:5.3f} {n:4d} {prevalence:6.3f} {plan:>8} | "
                        f"{c.cover:6.3f} {c.fin / len(c.hits):6.3f} {np.mean(c.widths):6.4f} "
                        f"{c.refused:4d} | {c.low_miss:5d} {c.high_miss:5d} |{c.by_ones(c.ones)}",
                        flush=True,
                    )
    print(f"lowest coverage: {worst[0]:.3f} ({worst[1]})")


def cooccur_part(reps: int, resamples: int, seed: int, units_list: tuple[int, ...]) -> None:
    print("\npart 3: per-code AC1 and Fleiss where codes co-occur (3 codes, 3 raters, se 0.9,")
    print("sp 0.99); a unit's codes share a latent difficulty: code k is present when")
    print("z_unit + e_k > c_k (z, e standard normal, corr 0.5 between codes); 2 MC se:", mc(reps))
    print(
        f"{'units':>5} {'code':>4} {'prev':>6} {'stat':>9} {'truth':>6} | {'cover':>6} "
        f"{'unw':>6} {'(n)':>5} | {'all 3 covered':>13}"
    )
    from scipy.stats import norm

    prevs = (0.02, 0.05, 0.15)
    cuts = [float(norm.ppf(1 - q) * np.sqrt(2)) for q in prevs]
    se, sp, raters = 0.9, 0.99, 3
    for units in units_list:
        rng = np.random.default_rng([seed, units, 3])
        res: dict[str, list[list[tuple[bool, bool]]]] = {"gwet_ac1": [], "fleiss": []}
        co = 0
        for _ in range(reps):
            z = rng.standard_normal(units)[:, None] + rng.standard_normal((units, 3))
            truth = z > np.asarray(cuts)[None, :]
            co += int((truth.sum(axis=1) >= 2).sum())
            per_stat: dict[str, list[tuple[bool, bool]]] = {s: [] for s in res}
            for k in range(3):
                codes = rated(rng, truth[:, k], raters, se, sp)
                out = agreements(
                    codes,
                    ("gwet_ac1", "fleiss"),
                    categories=[0, 1],
                    n_bootstrap=resamples,
                    seed=int(rng.integers(1 << 31)),
                )
                for a in out:
                    t = (ac1_truth if a.statistic == "gwet_ac1" else kappa_truth)(prevs[k], se, sp)
                    ok = a.ci_low is not None and a.ci_high is not None
                    per_stat[a.statistic].append(
                        (ok and a.ci_low <= t <= a.ci_high, a.warning is not None or not ok)
                    )
            for s in res:
                res[s].append(per_stat[s])
        print(f"units {units}: units with 2+ codes per data set (mean): {co / reps:.1f}")
        for s, table in res.items():
            arr = np.asarray(table, dtype=float)  # reps x codes x (hit, warned)
            joint = arr[:, :, 0].all(axis=1).mean()
            for k in range(3):
                t = (ac1_truth if s == "gwet_ac1" else kappa_truth)(prevs[k], se, sp)
                quiet = arr[:, k, 1] == 0
                unw = f"{arr[quiet, k, 0].mean():6.3f}" if quiet.any() else f"{'-':>6}"
                tail = f"{joint:13.3f}" if k == 0 else ""
                print(
                    f"{units:5d} {k + 1:4d} {prevs[k]:6.3f} {s:>9} {t:6.3f} | "
                    f"{arr[:, k, 0].mean():6.3f} {unw} {int(quiet.sum()):5d} | {tail}",
                    flush=True,
                )


def pooled_part(reps: int, resamples: int, seed: int, units_list: tuple[int, ...]) -> None:
    print("\npart 4: pooled AC1 / Brennan-Prediger over 3 co-occurring binary codes (3 raters,")
    print("se 0.9, sp 0.99; cluster BCa over units held to the effective counts)")
    print("2 MC se at 0.95:", mc(reps))
    from scipy.stats import norm

    se, sp, raters = 0.9, 0.99, 3
    for prevs in ((0.02, 0.02, 0.02), (0.01, 0.02, 0.05)):
        cuts = [float(norm.ppf(1 - q) * np.sqrt(2)) for q in prevs]
        po = float(np.mean([ac1_parts(q, se, sp)[0] for q in prevs]))
        pe = float(np.mean([ac1_parts(q, se, sp)[1] for q in prevs]))
        truth = {"gwet_ac1": (po - pe) / (1 - pe), "brennan_prediger": 2 * po - 1}
        for units in units_list:
            rng = np.random.default_rng([seed, units, int(prevs[0] * 1000), 4])
            hits: dict[str, list[tuple[bool, bool, bool, float]]] = {s: [] for s in truth}
            for _ in range(reps):
                z = rng.standard_normal(units)[:, None] + rng.standard_normal((units, 3))
                present = z > np.asarray(cuts)[None, :]
                mats = []
                for k in range(3):
                    mats.append(rated(rng, present[:, k], raters, se, sp))
                for a in pooled_agreements(
                    mats,
                    tuple(truth),
                    categories=[[0, 1]] * 3,
                    n_bootstrap=resamples,
                    seed=int(rng.integers(1 << 31)),
                ):
                    t = truth[a.statistic]
                    low, high = a.ci_low, a.ci_high
                    ok = low is not None and high is not None and low <= t <= high
                    width = high - low if low is not None and high is not None else np.nan
                    hits[a.statistic].append(
                        (ok, a.warning is not None, low is not None and low > t, width)
                    )
            for name, h in hits.items():
                arr = np.asarray(h, dtype=float)
                quiet = arr[:, 1] == 0
                unw = f"{arr[quiet, 0].mean():.3f}" if quiet.any() else "-"
                print(
                    f"prevalence {prevs} units {units} {name}: truth {truth[name]:.4f} cover "
                    f"{arr[:, 0].mean():.3f} unwarned {unw} ({int(quiet.sum())}) lo>t "
                    f"{int(arr[:, 2].sum())} width {np.nanmean(arr[:, 3]):.4f}",
                    flush=True,
                )


def ac1_parts(p: float, se: float, sp: float) -> tuple[float, float]:
    """Two raters' agreement on a unit and AC1's chance term, in the population."""
    po, pos = rater_pair(p, se, sp)
    return po, 2 * pos * (1 - pos)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", default="1234")
    parser.add_argument("--units", default="50,100", help="parts 1 and 3: units per data set")
    parser.add_argument(
        "--cells",
        default="",
        help="part 1: prevalence:sensitivity:specificity,... (default: the rare-code cells)",
    )
    args = parser.parse_args()
    start = time.perf_counter()
    units = tuple(int(u) for u in args.units.split(","))
    if "1" in args.parts:
        cells = tuple(tuple(float(v) for v in c.split(":")) for c in args.cells.split(",") if c)
        chosen = cells or CELLS
        ac1_part(args.replicates, args.resamples, args.seed, units, chosen)  # type: ignore[arg-type]
    if "2" in args.parts:
        share_part(args.replicates, args.seed)
    if "3" in args.parts:
        cooccur_part(args.replicates, args.resamples, args.seed, units)
    if "4" in args.parts:
        pooled_part(args.replicates, args.resamples, args.seed, units)
    print(f"\n{time.perf_counter() - start:.0f} s (machine shared with other sessions)")


if __name__ == "__main__":
    main()
