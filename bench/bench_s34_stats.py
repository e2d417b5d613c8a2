"""Coverage in the seed's regime left unmeasured by sessions 32-33 (session 34, issue 30).

Part 1: the pooled rows of ``agree`` over multi-category dimensions, two raters, 50 (and 100)
units. Three dimensions of 3, 4 and 5 categories, each with one rare category (on ``r`` of the
units; the rare categories co-occur: dimension d is rare where ``z_unit + e_d > c``, z and e
standard normal) and the others drawn at fixed shares. Each rater gives the true category with
probability ``a_common`` (``a_rare`` where it is the rare one), else one of the others at
random. Pooled percent is over the unit x dimension rows (``agreements(..., clusters=unit)``,
cluster BCa, as ``annotation_agreement``'s pooled row); AC1 and Brennan-Prediger are pooled
kappa (``pooled_agreements``: cluster BCa held to the effective counts since session 33), each
dimension given its full category list. Truths: per dimension ``p_o = sum_k p_k (a_k^2 +
(1 - a_k)^2 / (q - 1))``, AC1's ``p_e = sum_j pi_j (1 - pi_j) / (q - 1)`` of the raters' margin
``pi``, Brennan-Prediger's ``1 / q``; pooled ``(mean p_o - mean p_e) / (1 - mean p_e)``.

Part 2: a review drawn by the judge's code. N = 2,000 judged units, one binary code on
``prev`` of them; the reviewer codes the truth, the judge with sensitivity/specificity
``sens``/``spec``. Plans: ``uniform``; ``code`` (two strata, the judge's 0 and 1, proportional by
largest remainders with at least 2 a stratum: ``failcodes.reviewplan``'s allocation);
``sys4xcode`` (4 systems of 500 units x the judge's code: 8 strata). Printed per plan: how often
the report's note on unequal review rates fires (a stratum's rate over 1.5 times another's,
``report.rundir._unequal_rates``), the per-code rows' coverage of the population coefficient
of the human-judge pair (percent and PABAK: Clopper-Pearson; Cohen and AC1: BCa, 1,000
resamples; each unweighted over the reviewed units, as ``_review_agreement`` computes them),
overall and where that note is silent, and the corrected share's (``share_estimates`` over the
plan's strata) coverage of the prevalence.

Run: ``python bench/bench_s34_stats.py [--parts 12] [--replicates 1000] [--resamples 1000]``.
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

from _simulate import mc, pair_truths  # noqa: E402
from failcodes.coderagreement import CODE_STATS  # noqa: E402
from failcodes.errors import StatisticsError  # noqa: E402
from failcodes.reviewplan import _allocate  # noqa: E402
from failcodes.stats.agreement import agreements, pooled_agreements  # noqa: E402
from failcodes.stats.ppi import Stratum, share_estimates  # noqa: E402

#: Each dimension's category shares, its rare category last.
SHARES = {
    3: (0.62, 0.35),
    4: (0.5, 0.3, 0.17),
    5: (0.4, 0.25, 0.2, 0.12),
}


def dim_shares(q: int, rare: float) -> np.ndarray:
    common = np.asarray(SHARES[q])
    return np.append(common / common.sum() * (1 - rare), rare)


def dim_truth(q: int, rare: float, a_common: float, a_rare: float) -> tuple[float, float]:
    """One dimension's population ``p_o`` and AC1 ``p_e`` (two raters)."""
    p = dim_shares(q, rare)
    acc = np.full(q, a_common)
    acc[-1] = a_rare
    po = float(np.sum(p * (acc**2 + (1 - acc) ** 2 / (q - 1))))
    say = np.where(np.eye(q, dtype=bool), acc[:, None], ((1 - acc) / (q - 1))[:, None])
    pi = p @ say  # P(a rater says j)
    return po, float(np.sum(pi * (1 - pi)) / (q - 1))


CELLS = ((0.03, 0.95, 0.85), (0.03, 0.99, 0.9), (0.01, 0.99, 0.9))


def pooled_part(
    reps: int,
    resamples: int,
    seed: int,
    units_list: tuple[int, ...],
    cells: tuple[tuple[float, float, float], ...] = CELLS,
) -> None:
    from scipy.stats import norm

    print("part 1: pooled rows over 3 dimensions of 3, 4, 5 categories (one rare each, rare")
    print("categories co-occurring), 2 raters; 2 MC se at 0.95:", mc(reps))
    print(
        f"{'units':>5} {'rare':>5} {'a_com':>5} {'a_rare':>6} {'stat':>16} {'truth':>7} | "
        f"{'cover':>6} {'unw':>6} {'(n)':>5} | {'lo>t':>5} {'hi<t':>5} | {'width':>6} {'disag':>5}"
    )
    qs = (3, 4, 5)
    for rare, a_common, a_rare in cells:
        parts = [dim_truth(q, rare, a_common, a_rare) for q in qs]
        po = float(np.mean([x[0] for x in parts]))
        pe_ac1 = float(np.mean([x[1] for x in parts]))
        pe_bp = float(np.mean([1 / q for q in qs]))
        truth = {
            "percent": po,
            "gwet_ac1": (po - pe_ac1) / (1 - pe_ac1),
            "brennan_prediger": (po - pe_bp) / (1 - pe_bp),
        }
        cut = float(norm.ppf(1 - rare) * np.sqrt(2))
        for units in units_list:
            rng = np.random.default_rng([seed, units, int(rare * 1000), int(a_common * 100), 1])
            rows: dict[str, list[tuple[float, float, float, float]]] = {s: [] for s in truth}
            disagree = 0
            for _ in range(reps):
                z = rng.standard_normal(units)[:, None] + rng.standard_normal((units, len(qs)))
                mats = []
                for d, q in enumerate(qs):
                    p = dim_shares(q, rare)
                    common = rng.choice(q - 1, size=units, p=p[:-1] / p[:-1].sum())
                    true = np.where(z[:, d] > cut, q - 1, common)
                    acc = np.where(true == q - 1, a_rare, a_common)
                    ratings = np.empty((units, 2))
                    for r in range(2):
                        right = rng.random(units) < acc
                        shift = rng.integers(1, q, size=units)  # another category, uniformly
                        ratings[:, r] = np.where(right, true, (true + shift) % q)
                    mats.append(ratings)
                disagree += int(sum((m[:, 0] != m[:, 1]).sum() for m in mats))
                stacked = np.vstack([m + 10 * d for d, m in enumerate(mats)])
                ids = np.tile(np.arange(units), len(qs))
                cats = [float(10 * d + k) for d, q in enumerate(qs) for k in range(q)]
                got = agreements(
                    stacked,
                    ("percent",),
                    categories=cats,
                    n_bootstrap=resamples,
                    seed=int(rng.integers(1 << 31)),
                    clusters=ids,
                )
                got += pooled_agreements(
                    mats,
                    ("gwet_ac1", "brennan_prediger"),
                    categories=[list(map(float, range(q))) for q in qs],
                    n_bootstrap=resamples,
                    seed=int(rng.integers(1 << 31)),
                )
                for a in got:
                    t = truth[a.statistic]
                    quiet = float(a.warning is None)
                    if a.ci_low is None or a.ci_high is None:
                        rows[a.statistic].append((0.0, quiet, 0.0, np.nan))
                        continue
                    side = 1.0 if a.ci_low > t else (-1.0 if a.ci_high < t else 0.0)
                    rows[a.statistic].append((float(side == 0), quiet, side, a.ci_high - a.ci_low))
            for stat, got_rows in rows.items():
                arr = np.asarray(got_rows, dtype=float)
                quiet = arr[:, 1] == 1
                unw = f"{arr[quiet, 0].mean():6.3f}" if quiet.any() else f"{'-':>6}"
                print(
                    f"{units:5d} {rare:5.3f} {a_common:5.2f} {a_rare:6.2f} {stat:>16} "
                    f"{truth[stat]:7.4f} | {arr[:, 0].mean():6.3f} {unw} {int(quiet.sum()):5d} | "
                    f"{int((arr[:, 2] > 0).sum()):5d} {int((arr[:, 2] < 0).sum()):5d} | "
                    f"{np.nanmean(arr[:, 3]):6.4f} {disagree / reps:5.1f}",
                    flush=True,
                )


def draw(
    rng: np.random.Generator, keys: np.ndarray, n: int
) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    """A plan's strata (each stratum's reviewed and other unit indices), and max/min rate."""
    labels = sorted(set(keys.tolist()))
    members = [np.flatnonzero(keys == k) for k in labels]
    alloc = _allocate([m.size for m in members], n)
    picked, rest, rates = [], [], []
    for m, k in zip(members, alloc, strict=True):
        pick = rng.choice(m, size=k, replace=False)
        picked.append(pick)
        rest.append(np.setdiff1d(m, pick))
        if k:
            rates.append(k / m.size)
    return picked, rest, max(rates) / min(rates)


def review_part(
    reps: int,
    resamples: int,
    seed: int,
    units: tuple[int, ...],
    judges: tuple[tuple[float, float], ...] = ((0.9, 0.95), (0.95, 0.95)),
    prevalences: tuple[float, ...] = (0.02, 0.05, 0.1),
) -> None:
    print("\npart 2: a review drawn by the judge's code, N = 2000; per-code rows (unweighted over")
    print("the reviewed units) vs the population coefficient, and the corrected share; 2 MC se:")
    print(mc(reps))
    print(
        f"{'sens':>4} {'spec':>4} {'n':>3} {'prev':>5} {'plan':>9} {'note':>5} | "
        + " ".join(f"{s[:7]:>7} {'quiet':>5}" for s in CODE_STATS)
        + f" | {'share':>6}"
    )
    big_n = 2000
    systems = np.repeat(np.arange(4), big_n // 4)
    for sens, spec in judges:
        for n in units:
            for prevalence in prevalences:
                truth = pair_truths(prevalence, sens, spec)
                for plan in ("uniform", "code", "sys4xcode"):
                    rng = np.random.default_rng(
                        [seed, int(sens * 100), int(spec * 100), n, int(prevalence * 1000), 2]
                    )
                    hits = {s: [0, 0, 0] for s in CODE_STATS}  # covered, quiet, quiet covered
                    noted = share_hit = share_done = 0
                    for _ in range(reps):
                        y = (rng.random(big_n) < prevalence).astype(float)
                        u = rng.random(big_n)
                        yhat = np.where(y == 1, u < sens, u >= spec).astype(float)
                        keys = {
                            "uniform": np.zeros(big_n, dtype=int),
                            "code": yhat.astype(int),
                            "sys4xcode": systems * 2 + yhat.astype(int),
                        }[plan]
                        picked, rest, ratio = draw(rng, keys, n)
                        note = ratio > 1.5
                        noted += note
                        pick = np.concatenate(picked)
                        try:
                            est = share_estimates(
                                [
                                    Stratum(y[pk], yhat[pk], yhat[rs])
                                    for pk, rs in zip(picked, rest, strict=True)
                                    if pk.size
                                ]
                            )
                            lo, hi = est.corrected.ci_low, est.corrected.ci_high
                            share_hit += lo <= prevalence <= hi
                            share_done += 1
                        except StatisticsError:
                            pass
                        both = np.column_stack([y[pick], yhat[pick]])
                        given = (int(both[:, 0].sum()), int(both[:, 1].sum()))
                        absent = min(given) == 0 or max(given) == pick.size
                        for a in agreements(
                            both,
                            CODE_STATS,
                            categories=[0, 1],
                            n_bootstrap=resamples,
                            seed=0,
                        ):
                            t = truth[a.statistic]
                            ok = a.ci_low is not None and a.ci_high is not None
                            ok = ok and a.ci_low <= t <= a.ci_high  # type: ignore[operator]
                            quiet = a.warning is None and not absent and not note
                            h = hits[a.statistic]
                            h[0] += ok
                            h[1] += quiet
                            h[2] += ok and quiet
                    cols = " ".join(
                        f"{h[0] / reps:7.3f} {h[2] / h[1] if h[1] else float('nan'):5.3f}"
                        for h in hits.values()
                    )
                    print(
                        f"{sens:4.2f} {spec:4.2f} {n:3d} {prevalence:5.3f} {plan:>9} "
                        f"{noted / reps:5.2f} | {cols} | "
                        f"{share_hit / max(share_done, 1):6.3f}",
                        flush=True,
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", default="12")
    parser.add_argument("--units", default="50,100", help="units (part 1) / reviewed (part 2)")
    parser.add_argument("--cells", default="", help="part 1: rare:a_common:a_rare,...")
    parser.add_argument("--judges", default="0.9:0.95,0.95:0.95", help="part 2: sens:spec,...")
    parser.add_argument("--prevalences", default="0.02,0.05,0.1", help="part 2")
    args = parser.parse_args()
    start = time.perf_counter()
    units = tuple(int(u) for u in args.units.split(","))
    if "1" in args.parts:
        cells = tuple(
            (float(c.split(":")[0]), float(c.split(":")[1]), float(c.split(":")[2]))
            for c in args.cells.split(",")
            if c
        )
        pooled_part(args.replicates, args.resamples, args.seed, units, cells or CELLS)
    if "2" in args.parts:
        judges = tuple(
            (float(j.split(":")[0]), float(j.split(":")[1])) for j in args.judges.split(",")
        )
        prevalences = tuple(float(p) for p in args.prevalences.split(","))
        review_part(args.replicates, args.resamples, args.seed, units, judges, prevalences)
    print(f"\n{time.perf_counter() - start:.0f} s (machine shared with other sessions)")


if __name__ == "__main__":
    main()
