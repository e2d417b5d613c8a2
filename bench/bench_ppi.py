"""Coverage and width of judge-only, human-only and corrected (PPI++) shares on simulated judges.

Workload (issue 15): 8,080 units, each carrying one binary code with prevalence ``p``; a judge
with known confusion (sensitivity 0.8, specificity 0.9 by default) codes every unit; humans
review a uniform random sample of ``n`` units (200-800). Over 1,000 seeded replicates per
setting it prints the coverage of the nominal 95% interval and the mean width of:

- judge-only: the judge's share over all units (Wald) -- biased whenever the judge is;
- human-only: the reviewed units' share (Wilson score interval);
- corrected: prediction-powered inference with power tuning (PPI++,
  ``failcodes.stats.ppi``), the judge's codes on every unit corrected by the reviewed units,
  Wald interval as failcodes reports it (a Wilson-type score interval's coverage is printed
  at the end for comparison).

The target is the population prevalence ``p`` (the estimand of PPI: the judged units are a
sample of the pipeline's output); coverage of the realised share of the 8,080 units is printed
too. Cohen's kappa between judge and truth (population value) says how good the judge is.
``warned``: share of replicates where fewer than 10 reviewed units carry (or lack) the code,
which failcodes flags in the report as an interval that may under-cover.

Units are exchangeable, so each replicate draws the reviewed units' judge x human table and
the unreviewed units' table as multinomial counts: no per-unit loop, the whole run takes
seconds. Run: ``python bench/bench_ppi.py [--replicates 1000] [--sens 0.8 --spec 0.9]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from failcodes.stats.ppi import (
    FEW_POSITIVES,
    Estimates,
    Moments,
    classical,
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


def coverage(
    est: Estimates, truth: float | np.ndarray, z: float, moments: Moments | None = None
) -> tuple[float, float]:
    """Share of replicates whose interval holds the truth, and the mean interval width.

    With ``moments`` the interval is the score interval failcodes reports for shares;
    without, Wald's (the judge-only share).
    """
    if moments is None:
        se = np.sqrt(est.variance)
        low = np.clip(est.estimate - z * se, 0, 1)
        high = np.clip(est.estimate + z * se, 0, 1)
    else:
        # one stratum per replicate: a trailing strata axis of length 1
        low, high = score_interval(
            _one_stratum(moments), _one_stratum(est), np.ones((len(est.estimate), 1)), z
        )
    covered = (low <= truth) & (truth <= high)
    return float(covered.mean()), float((high - low).mean())


def _one_stratum(x: Moments | Estimates) -> Any:
    return type(x)(**{k: np.asarray(v)[..., None] for k, v in vars(x).items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
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
        f"{'lam':>5} {'n_eff':>6} {'warned':>6}"
    )
    print(header)
    print("-" * len(header))
    corrected_cov: list[float] = []
    score_cov: list[float] = []
    narrower_when_moderate: list[bool] = []
    for p in PREVALENCES:
        k = kappa(p, args.sens, args.spec)
        for n in REVIEWED:
            moments, realised = simulate(rng, p, n, args.sens, args.spec, args.replicates)
            judge, human, corrected = judge_only(moments), classical(moments), ppi(moments)
            j_cov, j_w = coverage(judge, p, z)
            h_cov, h_w = coverage(human, p, z, moments)
            c_cov, c_w = coverage(corrected, p, z)
            r_cov, _ = coverage(corrected, realised, z)
            s_cov, _ = coverage(corrected, p, z, moments)
            score_cov.append(s_cov)
            pos = moments.sum_y
            warned = float(np.mean(np.minimum(pos, n - pos) < FEW_POSITIVES))
            n_eff = float(np.mean(n * human.variance / np.maximum(corrected.variance, 1e-300)))
            corrected_cov.append(c_cov)
            if k >= 0.41:  # Landis & Koch: "moderate" from 0.41
                narrower_when_moderate.append(c_w < h_w)
            print(
                f"{p:>5.2f} {k:>6.2f} {n:>4} | {j_cov:>9.3f} {j_w:>6.3f} | {h_cov:>9.3f} "
                f"{h_w:>6.3f} | {c_cov:>9.3f} {c_w:>6.3f} {r_cov:>9.3f} "
                f"{float(np.mean(corrected.lam)):>5.2f} {n_eff:>6.0f} {warned:>6.2f}"
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
        f"(a Wilson-type score interval around the same PPI++ estimate, not adopted: coverage "
        f"min {min(score_cov):.3f}, max {max(score_cov):.3f})"
    )
    print(
        "corrected narrower than human-only in every setting with kappa >= 0.41: "
        f"{all(narrower_when_moderate)} "
        f"({sum(narrower_when_moderate)}/{len(narrower_when_moderate)})"
    )
    print(f"elapsed {elapsed:.1f} s")


if __name__ == "__main__":
    main()
