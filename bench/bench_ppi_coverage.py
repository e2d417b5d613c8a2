"""Coverage of the corrected (PPI++), human-only and judge-only shares over the whole design grid.

Issue 26, item 1: the interval failcodes reports for a corrected share must cover 0.93-0.97
(nominal 95%) in every design researchers use, or carry a note saying it may not. The grid:

- judges (sensitivity / specificity): 0.6/0.6 (poor), 0.8/0.9, 0.9/0.95, 0.95/0.99 (the seed's
  hand check: kappa ~0.86 at prevalence 0.15), 0.99/0.99;
- reviewed units n: 30, 50, 100, 200, 400, 800;
- prevalence of the code p: 0.01, 0.02, 0.05, 0.145 (Table 8's all-high rate), 0.3, 0.5;
- plans: ``uniform`` (a simple random sample of the units) and ``by-code`` (stratified by the
  judge's code, proportional allocation with at least 2 units per stratum, as
  ``failcodes review plan --stratify code`` draws it);
- population N (judged units in the cell): 1,000, 10,000, 100,000.

Each replicate draws a population's judge codes and the reviewed units' human codes from the
judge's confusion (units are exchangeable, so counts are multinomial/binomial draws: no
per-unit loop), and computes every interval with the library's own vectorised functions
(:mod:`failcodes.stats.ppi`). The target is the prevalence ``p`` of the population the units
come from (PPI's estimand).

Printed per cell: coverage and mean width of the judge-only interval (Wald), of the human-only
one (Jeffreys; with a by-code plan the judge-stratified human estimate: humans' codes weighted
by the judge's strata), of the corrected one as reported (``share_estimates``' rule) with how
often its note fires (``flag``), its coverage among the replicates without a note
(``cov unfl``) and with one (``cov fl``), and the old rule (Wald, or a score interval below 10
reviewed positives) for comparison. A cell "meets" the target when the corrected interval's
coverage among unflagged replicates is within 0.93-0.97 (allowing the Monte Carlo error of
that figure: 2 standard errors), or when the note fires in most (>= 50%) of its replicates.
The summary also checks replicate by replicate: in every cell where at least 10% of the
replicates carry no note, do those cover at least 0.93? (docs/review.md says where not, and why.)

Run: ``python bench/bench_ppi_coverage.py [--replicates 2000] [--seed 0] [--quiet]`` (1.5-2
minutes on 2 shared cores).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

from failcodes.stats.ppi import (  # noqa: E402
    Estimates,
    Moments,
    combine_strata,
    corrected_interval,
    effective_n,
    judge_only,
    ppi,
    thin_evidence,
    z_value,
)

JUDGES = ((0.6, 0.6), (0.8, 0.9), (0.9, 0.95), (0.95, 0.99), (0.99, 0.99))
REVIEWED = (30, 50, 100, 200, 400, 800)
PREVALENCES = (0.01, 0.02, 0.05, 0.145, 0.3, 0.5)
PLANS = ("uniform", "by-code")
POPULATIONS = (1_000, 10_000, 100_000)

FloatArray = npt.NDArray[np.float64]
Bounds = tuple[FloatArray, FloatArray]


@dataclass(frozen=True)
class Design:
    """One cell of the grid."""

    sens: float
    spec: float
    n: int
    p: float
    plan: str
    units: int

    def kappa(self) -> float:
        """Population Cohen's kappa between the judge and the truth."""
        both, neither = self.p * self.sens, (1 - self.p) * self.spec
        q = self.p * self.sens + (1 - self.p) * (1 - self.spec)
        chance = self.p * q + (1 - self.p) * (1 - q)
        return (both + neither - chance) / (1 - chance)


def _stack(parts: list[dict[str, FloatArray]]) -> Moments:
    """Moments with the strata on the last axis."""
    return Moments(**{k: np.stack([p[k] for p in parts], axis=-1) for k in parts[0]})


def _stratum(
    n: FloatArray,
    both: FloatArray,
    human: FloatArray,
    judge: FloatArray,
    big_n: FloatArray,
    u: FloatArray,
) -> dict[str, FloatArray]:
    return {
        "n": n,
        "sum_y": both + human,
        "sum_yhat": both + judge,
        "sum_y2": both + human,
        "sum_yhat2": both + judge,
        "sum_y_yhat": both,
        "n_unlabeled": big_n,
        "sum_u": u,
        "sum_u2": u,
    }


def simulate(rng: np.random.Generator, d: Design, reps: int) -> Moments:
    """Moments of ``reps`` replicates of one design: shape (reps, strata)."""
    p, se, sp = d.p, d.sens, d.spec
    q = p * se + (1 - p) * (1 - sp)  # the judge's positive rate
    f = np.float64
    if d.plan == "uniform":
        cells = np.array([p * se, p * (1 - se), (1 - p) * (1 - sp), (1 - p) * sp])
        rev = rng.multinomial(d.n, cells, size=reps).astype(f)
        rest = rng.binomial(d.units - d.n, q, size=reps).astype(f)
        n = np.full(reps, f(d.n))
        return _stack([_stratum(n, rev[:, 0], rev[:, 1], rev[:, 2], d.units - n, rest)])
    # by the judge's code: stratum 1 = the judge gave the code, 0 = it did not
    big1 = rng.binomial(d.units, q, size=reps).astype(f)
    big0 = d.units - big1
    n1 = np.clip(np.round(d.n * big1 / d.units), np.minimum(2, big1), big1)
    n0 = np.clip(d.n - n1, np.minimum(2, big0), big0)
    n1 = np.clip(d.n - n0, np.minimum(2, big1), big1)
    ppv = p * se / q  # human positive among the judge's positives
    fom = p * (1 - se) / (1 - q)  # human positive among the judge's negatives
    x1 = rng.binomial(n1.astype(np.int64), ppv).astype(f)
    x0 = rng.binomial(n0.astype(np.int64), fom).astype(f)
    zero = np.zeros(reps)
    s1 = _stratum(n1, x1, zero, n1 - x1, big1 - n1, big1 - n1)
    s0 = _stratum(n0, zero, x0, zero, big0 - n0, zero)
    return _stack([s1, s0])


def _wald(est_mean: FloatArray, var: FloatArray, z: float) -> Bounds:
    se = np.sqrt(var)
    return np.clip(est_mean - z * se, 0, 1), np.clip(est_mean + z * se, 0, 1)


def old_score_interval(m: Moments, est: Estimates, weights: FloatArray, z: float) -> Bounds:
    """The score interval failcodes reported before issue 26 (for comparison only).

    Every stratum's share shifted by the same amount, the human codes' variance and their
    covariance with the judge's evaluated at the shifted share; bounds are the roots of a
    quadratic.
    """
    n, big_n, lam, t = m.n, m.n_unlabeled, est.lam, est.estimate
    mean_u = np.divide(m.sum_u, big_n, out=np.zeros_like(big_n), where=big_n > 0)
    var_u = np.maximum(mean_u - mean_u**2, 0.0)
    q = m.sum_yhat / n
    p11 = m.sum_y_yhat / n
    var_h = np.maximum(q - q**2, 0.0)
    imputed = lam**2 * np.divide(var_u, big_n, out=np.zeros_like(big_n), where=big_n > 0)
    v0 = np.maximum(imputed + (t * (1 - t) - 2 * lam * (p11 - t * q) + lam**2 * var_h) / n, 0.0)
    slope = 1 - 2 * t + 2 * lam * q
    w = weights / weights.sum(axis=-1, keepdims=True)
    w2n = w * w / n
    qa = 1 + z * z * w2n.sum(axis=-1)
    qb = -z * z * (w2n * slope).sum(axis=-1)
    qc = -z * z * (w * w * v0).sum(axis=-1)
    disc = np.sqrt(np.maximum(qb * qb - 4 * qa * qc, 0.0))
    centre = (w * t).sum(axis=-1)
    low = np.clip(centre + (-qb - disc) / (2 * qa), 0.0, 1.0)
    high = np.clip(centre + (-qb + disc) / (2 * qa), 0.0, 1.0)
    return low, high


def srs_interval(x: FloatArray, n: FloatArray, confidence: float) -> Bounds:
    """Jeffreys' interval of x positives in n: the human-only share, strata ignored."""
    from scipy.special import betaincinv

    tail = (1 - confidence) / 2
    return betaincinv(x + 0.5, n - x + 0.5, tail), betaincinv(x + 0.5, n - x + 0.5, 1 - tail)


@dataclass(frozen=True)
class CellResult:
    """Coverage figures of one design."""

    design: Design
    judge: tuple[float, float]
    human: tuple[float, float]
    corrected: tuple[float, float]
    flag: float
    cov_unflagged: float | None
    n_unflagged: int
    cov_flagged: float | None
    old: float
    lam: float
    n_eff: float
    undefined: float
    by_reason: dict[str, float]
    reasons: dict[str, float]

    def meets(self) -> bool:
        """Coverage of unflagged replicates in 0.93-0.97 (+- 2 MC SE), or flagged mostly."""
        return self.flag >= 0.5 or self.meets_unflagged(0.93, 0.97)

    def meets_unflagged(self, low: float, high: float) -> bool:
        """Coverage of the unflagged replicates within [low, high], allowing 2 MC SE."""
        if self.cov_unflagged is None:
            return True
        mc = 2 * (0.95 * 0.05 / self.n_unflagged) ** 0.5
        return self.cov_unflagged + mc >= low and self.cov_unflagged - mc <= high


def _cover(bounds: Bounds, truth: float, keep: npt.NDArray[np.bool_]) -> tuple[float, float]:
    low, high = bounds
    hit = (low <= truth) & (truth <= high)
    return float(hit[keep].mean()), float((high - low)[keep].mean())


def run_cell(rng: np.random.Generator, d: Design, reps: int, confidence: float) -> CellResult:
    """Simulate one design and measure every interval."""
    z = z_value(confidence)
    m = simulate(rng, d, reps)
    units = m.n + m.n_unlabeled
    # a stratum with units but fewer than 2 reviewed: the library refuses the cell
    defined = ~np.any((units > 0) & (m.n < 2), axis=-1)
    weights = units
    safe = Moments(**{k: np.where(m.n < 2, np.maximum(v, 0), v) for k, v in vars(m).items()})
    safe = Moments(**{**vars(safe), "n": np.maximum(safe.n, 2.0)})
    per = ppi(safe)
    corrected = combine_strata(per, weights)
    judge = combine_strata(judge_only(safe), weights)
    # the interval as reported, its note, and the human-only one (lam = 0)
    low, high = corrected_interval(safe, per, weights, confidence)
    thin = thin_evidence(safe)
    # the old rule: Wald, or the score interval below 10 reviewed positives
    pos, nn = safe.sum_y.sum(-1), safe.n.sum(-1)
    few = (np.minimum(pos, nn - pos) < 10) | np.all(per.lam == 0, axis=-1)
    wl, wh = _wald(corrected.estimate, corrected.variance, z)
    sl, sh = old_score_interval(safe, per, weights, z)
    old = (np.where(few, sl, wl), np.where(few, sh, wh))
    flag = thin.any() | ~defined
    j_cov = _cover(_wald(judge.estimate, judge.variance, z), d.p, defined)
    h_cov = _cover(srs_interval(pos, nn, confidence), d.p, defined)
    c_cov = _cover((low, high), d.p, defined)
    unfl = defined & ~flag
    fl = defined & flag
    hit = (low <= d.p) & (d.p <= high)
    n_eff = effective_n(safe, per.lam, weights)
    by_reason = {
        name: float(hit[defined & getattr(thin, name)].mean())
        for name in ("disagreements", "positives", "small_stratum")
        if (defined & getattr(thin, name)).any()
    }
    return CellResult(
        design=d,
        judge=j_cov,
        human=h_cov,
        corrected=c_cov,
        flag=float(flag.mean()),
        cov_unflagged=float(hit[unfl].mean()) if unfl.any() else None,
        n_unflagged=int(unfl.sum()),
        cov_flagged=float(hit[fl].mean()) if fl.any() else None,
        old=_cover(old, d.p, defined)[0],
        lam=float(corrected.lam[defined].mean()),
        n_eff=float(np.median(n_eff[defined])),
        undefined=float((~defined).mean()),
        by_reason=by_reason,
        reasons={
            name: float(getattr(thin, name)[defined].mean())
            for name in ("disagreements", "positives", "small_stratum")
        },
    )


def designs(
    judges: tuple[tuple[float, float], ...] = JUDGES,
    reviewed: tuple[int, ...] = REVIEWED,
    prevalences: tuple[float, ...] = PREVALENCES,
    plans: tuple[str, ...] = PLANS,
    populations: tuple[int, ...] = POPULATIONS,
) -> Iterator[Design]:
    """Every cell of the grid."""
    for plan in plans:
        for sens, spec in judges:
            for units in populations:
                for n in reviewed:
                    for p in prevalences:
                        yield Design(sens, spec, n, p, plan, units)


def _fmt(x: float | None) -> str:
    return "    -" if x is None else f"{x:.3f}"


HEADER = (
    f"{'plan':<8} {'judge':>9} {'kappa':>5} {'N':>6} {'n':>4} {'p':>5} | "
    f"{'judge cov':>9} {'width':>5} | {'human cov':>9} {'width':>5} | "
    f"{'corr cov':>8} {'width':>5} {'flag':>5} {'cov unfl':>8} {'cov fl':>6} "
    f"{'old cov':>7} {'lam':>4} {'n_eff':>6} target"
)


def row(r: CellResult) -> str:
    """One printed line."""
    d = r.design
    return (
        f"{d.plan:<8} {d.sens:>4}/{d.spec:<4} {d.kappa():>5.2f} {d.units:>6} {d.n:>4} {d.p:>5} | "
        f"{r.judge[0]:>9.3f} {r.judge[1]:>5.3f} | {r.human[0]:>9.3f} {r.human[1]:>5.3f} | "
        f"{r.corrected[0]:>8.3f} {r.corrected[1]:>5.3f} {r.flag:>5.2f} "
        f"{_fmt(r.cov_unflagged):>8} {_fmt(r.cov_flagged):>6} {r.old:>7.3f} {r.lam:>4.2f} "
        f"{r.n_eff:>6.0f} {'met' if r.meets() else 'MISSED'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"{args.replicates} replicates per cell; nominal 95% intervals; truth = prevalence p; "
        "flag = share of replicates whose corrected interval carries a note"
    )
    if not args.quiet:
        print(HEADER)
    results = []
    for i, d in enumerate(designs()):
        rng = np.random.default_rng([args.seed, i])
        r = run_cell(rng, d, args.replicates, 0.95)
        results.append(r)
        if not args.quiet:
            print(row(r))
    summary(results, args.replicates)
    print(f"elapsed {time.perf_counter() - started:.0f} s")


def summary(results: list[CellResult], reps: int) -> None:
    """The figures the issue asks for, over the whole grid."""
    unflagged = [r for r in results if r.flag < 0.5 and r.cov_unflagged is not None]
    missed = [r for r in results if not r.meets()]
    covs = [r.cov_unflagged for r in unflagged if r.cov_unflagged is not None]
    print()
    print(f"cells: {len(results)}; flagged in most replicates: {len(results) - len(unflagged)}")
    if covs:
        print(
            f"corrected coverage of unflagged replicates in the other {len(unflagged)} cells: "
            f"min {min(covs):.3f}, max {max(covs):.3f} (target 0.93-0.97)"
        )
    print(f"cells missing the target: {len(missed)}")
    for r in missed:
        print("  " + row(r))
    # The same test replicate by replicate: wherever at least 10% of a cell's replicates carry
    # no note, do those cover? (The cell criterion above lets a cell noted in 50-90% of its
    # replicates pass whatever its unnoted ones do.)
    some = [r for r in results if r.cov_unflagged is not None and r.n_unflagged >= 0.1 * reps]
    short = [r for r in some if not r.meets_unflagged(0.93, 1.0)]
    print(
        f"cells where >= 10% of replicates carry no note: {len(some)}; their unnoted replicates "
        f"cover below 0.93 (beyond 2 MC SE) in {len(short)}"
        + (f", min {min(r.cov_unflagged or 0.0 for r in short):.3f}:" if short else "")
    )
    for r in sorted(short, key=lambda r: r.cov_unflagged or 0.0):
        print("  " + row(r))
    overall = [r.corrected[0] for r in results]
    print(
        f"corrected coverage over all replicates, every cell: min {min(overall):.3f}, "
        f"max {max(overall):.3f}"
    )
    for name in ("disagreements", "positives", "small_stratum"):
        cov = [r.by_reason[name] for r in results if r.reasons[name] >= 0.2 and name in r.by_reason]
        if cov:
            print(
                f"coverage of replicates noted for {name} (cells where it fires in >= 20%): "
                f"min {min(cov):.3f}, max {max(cov):.3f} over {len(cov)} cells"
            )
    old = [r.old for r in results]
    print(f"old rule (Wald / score below 10 positives): min {min(old):.3f}, max {max(old):.3f}")
    moderate = [r for r in results if r.design.kappa() >= 0.41]
    narrower = [r for r in moderate if r.corrected[1] < r.human[1]]
    print(
        f"corrected narrower than human-only where kappa >= 0.41: {len(narrower)} of "
        f"{len(moderate)} cells"
    )
    for r in moderate:
        if r.corrected[1] >= r.human[1]:
            print("  not narrower: " + row(r))
    print(
        f"Monte Carlo SE of a coverage of 0.95 over {reps} replicates: "
        f"{(0.95 * 0.05 / reps) ** 0.5:.4f}"
    )


if __name__ == "__main__":
    main()
