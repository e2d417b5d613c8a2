"""Coverage and width of judge-only, human-only and corrected (PPI++) shares on simulated judges.

Workload (issue 15): 8,080 units, each carrying one binary code with prevalence ``p``; a judge
with known confusion (sensitivity 0.8, specificity 0.9 by default) codes every unit; humans
review a uniform random sample of ``n`` units (200-800). Over 1,000 seeded replicates per
setting it prints the coverage of the nominal 95% interval and the mean width of:

- judge-only: the judge's share over all units (Wald) -- biased whenever the judge is;
- human-only: the reviewed units' share (Wilson score interval);
- corrected: prediction-powered inference with power tuning (PPI++,
  ``failcodes.stats.ppi``), the judge's codes on every unit corrected by the reviewed units,
  with the interval failcodes reports (``share_estimates``' rule): Wald's, or a Wilson-type
  score interval where fewer than 10 reviewed units carry (or lack) the code. The coverage of
  Wald's interval alone (``wald cov``) and of the score interval alone are printed for
  comparison.

The target is the population prevalence ``p`` (the estimand of PPI: the judged units are a
sample of the pipeline's output); coverage of the realised share of the 8,080 units is printed
too. Cohen's kappa between judge and truth (population value) says how good the judge is.
``score``: share of replicates where fewer than 10 reviewed units carry (or lack) the code,
so the rule picks the score interval (the report's note says so).

The issue asks for 1,000 replicates per setting (Monte Carlo error of one coverage figure
+-0.014); the rare-code corner (prevalence 0.05, 200 reviewed) is re-run with
``--corner-replicates`` (20,000 by default, +-0.003) because it is where the rule matters.

Units are exchangeable, so each replicate draws the reviewed units' judge x human table and
the unreviewed units' table as multinomial counts: no per-unit loop, the whole run takes
seconds. Run: ``python bench/bench_ppi.py [--replicates 1000] [--corner-replicates 20000]
[--sens 0.8 --spec 0.9] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from failcodes.stats.ppi import (
    Estimates,
    Moments,
    classical,
    few_codes,
    judge_only,
    ppi,
    score_interval,
    z_value,
)

N_UNITS = 8_080
PREVALENCES = (0.05, 0.1, 0.2, 0.3, 0.5)
REVIEWED = (200, 400, 800)


def kappa(p: float, sens: float, spec: float) -> float:
    """Population Cohen's kappa between a judge with this confusion and the truth."""
    both, neither = p * sens, (1 - p) * spec
    q = p * sens + (1 - p) * (1 - spec)  # judge's positive rate
    chance = p * q + (1 - p) * (1 - q)
    return (both + neither - chance) / (1 - chance)


def simulate(
    rng: np.random.Generator, p: float, n: int, sens: float, spec: float, reps: int
) -> tuple[Moments, np.ndarray]:
    """Counts per replicate: the moments of the reviewed/unreviewed units and the true share."""
    # cells: (human 1, judge 1), (human 1, judge 0), (human 0, judge 1), (human 0, judge 0)
    cells = np.array([p * sens, p * (1 - sens), (1 - p) * (1 - spec), (1 - p) * spec])
    reviewed = rng.multinomial(n, cells, size=reps)
    rest = rng.multinomial(N_UNITS - n, cells, size=reps)
    moments = Moments.from_binary_counts(
        both=reviewed[:, 0],
        human_only=reviewed[:, 1],
        judge_only=reviewed[:, 2],
        n=np.full(reps, float(n)),
        n_unlabeled=np.full(reps, float(N_UNITS - n)),
        unlabeled_positive=rest[:, 0] + rest[:, 2],
    )
    realised = (reviewed[:, 0] + reviewed[:, 1] + rest[:, 0] + rest[:, 1]) / N_UNITS
    return moments, realised


Bounds = tuple[np.ndarray, np.ndarray]


def wald(est: Estimates, z: float) -> Bounds:
    """Wald bounds clipped to [0, 1], per replicate."""
    se = np.sqrt(est.variance)
    return np.clip(est.estimate - z * se, 0, 1), np.clip(est.estimate + z * se, 0, 1)


def score(est: Estimates, moments: Moments, z: float) -> Bounds:
    """Wilson-type score bounds (``score_interval``), per replicate (one stratum each)."""
    # one stratum per replicate: a trailing strata axis of length 1
    low, high = score_interval(
        _one_stratum(moments), _one_stratum(est), np.ones((len(est.estimate), 1)), z
    )
    return low, high


def reported(est: Estimates, moments: Moments, z: float) -> tuple[Bounds, np.ndarray]:
    """The corrected interval as ``share_estimates`` picks it, and where it picked score."""
    few = few_codes(moments.sum_y, moments.n) | np.all(est.lam == 0)
    (wl, wh), (sl, sh) = wald(est, z), score(est, moments, z)
    return (np.where(few, sl, wl), np.where(few, sh, wh)), few


def coverage(bounds: Bounds, truth: float | np.ndarray) -> tuple[float, float]:
    """Share of replicates whose interval holds the truth, and the mean interval width."""
    low, high = bounds
    covered = (low <= truth) & (truth <= high)
    return float(covered.mean()), float((high - low).mean())


def _one_stratum(x: Moments | Estimates) -> Any:
    return type(x)(**{k: np.asarray(v)[..., None] for k, v in vars(x).items()})


def corner(rng: np.random.Generator, args: argparse.Namespace, z: float) -> None:
    """The rare-code corner (p 0.05, 200 reviewed), many replicates: each interval's coverage."""
    p, n, reps = PREVALENCES[0], REVIEWED[0], args.corner_replicates
    moments, _ = simulate(rng, p, n, args.sens, args.spec, reps)
    corrected = ppi(moments)
    (r_cov, r_w), (w_cov, w_w) = (
        coverage(reported(corrected, moments, z)[0], p),
        coverage(wald(corrected, z), p),
    )
    s_cov, s_w = coverage(score(corrected, moments, z), p)
    h_cov, h_w = coverage(score(classical(moments), moments, z), p)
    mc = 1.96 * (0.95 * 0.05 / reps) ** 0.5
    print(
        f"corner p={p} n={n}, {reps} replicates (+-{mc:.3f}): corrected (rule) {r_cov:.3f} "
        f"width {r_w:.3f}; Wald alone {w_cov:.3f} width {w_w:.3f}; score alone {s_cov:.3f} "
        f"width {s_w:.3f}; human-only {h_cov:.3f} width {h_w:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--corner-replicates", type=int, default=20_000)
    parser.add_argument("--sens", type=float, default=0.8)
    parser.add_argument("--spec", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    z = z_value(0.95)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(
        f"{N_UNITS} units, judge sensitivity {args.sens}, specificity {args.spec}, "
        f"{args.replicates} replicates per setting, nominal 95% intervals (truth = prevalence p)"
    )
    header = (
        f"{'p':>5} {'kappa':>6} {'n':>4} | {'judge cov':>9} {'width':>6} | "
        f"{'human cov':>9} {'width':>6} | {'PPI++ cov':>9} {'width':>6} {'cov(real)':>9} "
        f"{'wald cov':>8} {'lam':>5} {'n_eff':>6} {'score':>5}"
    )
    print(header)
    print("-" * len(header))
    corrected_cov: list[float] = []
    wald_cov: list[float] = []
    score_cov: list[float] = []
    narrower_when_moderate: list[bool] = []
    for p in PREVALENCES:
        k = kappa(p, args.sens, args.spec)
        for n in REVIEWED:
            moments, realised = simulate(rng, p, n, args.sens, args.spec, args.replicates)
            judge, human, corrected = judge_only(moments), classical(moments), ppi(moments)
            j_cov, j_w = coverage(wald(judge, z), p)
            h_cov, h_w = coverage(score(human, moments, z), p)
            bounds, picked_score = reported(corrected, moments, z)
            c_cov, c_w = coverage(bounds, p)
            r_cov, _ = coverage(bounds, realised)
            w_cov, _ = coverage(wald(corrected, z), p)
            s_cov, _ = coverage(score(corrected, moments, z), p)
            wald_cov.append(w_cov)
            score_cov.append(s_cov)
            n_eff = float(np.mean(n * human.variance / np.maximum(corrected.variance, 1e-300)))
            corrected_cov.append(c_cov)
            if k >= 0.41:  # Landis & Koch: "moderate" from 0.41
                narrower_when_moderate.append(c_w < h_w)
            print(
                f"{p:>5.2f} {k:>6.2f} {n:>4} | {j_cov:>9.3f} {j_w:>6.3f} | {h_cov:>9.3f} "
                f"{h_w:>6.3f} | {c_cov:>9.3f} {c_w:>6.3f} {r_cov:>9.3f} {w_cov:>8.3f} "
                f"{float(np.mean(corrected.lam)):>5.2f} {n_eff:>6.0f} "
                f"{float(np.mean(picked_score)):>5.2f}"
            )
    elapsed = time.perf_counter() - started
    met = min(corrected_cov) >= 0.93 and max(corrected_cov) <= 0.97
    mc = 1.96 * (0.95 * 0.05 / args.replicates) ** 0.5
    print()
    print(f"Monte Carlo error of one coverage figure: +-{mc:.3f} (95%)")
    print(
        f"corrected coverage: min {min(corrected_cov):.3f}, max {max(corrected_cov):.3f} "
        f"(target 0.93-0.97): {'met' if met else 'NOT met'}"
    )
    print(
        f"(for comparison, around the same PPI++ estimate: Wald's interval alone min "
        f"{min(wald_cov):.3f}, max {max(wald_cov):.3f}; the score interval alone min "
        f"{min(score_cov):.3f}, max {max(score_cov):.3f})"
    )
    print(
        "corrected narrower than human-only in every setting with kappa >= 0.41: "
        f"{all(narrower_when_moderate)} "
        f"({sum(narrower_when_moderate)}/{len(narrower_when_moderate)})"
    )
    print(f"elapsed {elapsed:.1f} s")
    if args.corner_replicates > 0:
        corner(rng, args, z)


if __name__ == "__main__":
    main()
