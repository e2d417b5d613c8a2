"""Coverage of the corrected, human-only and judge-only shares over the design grid: now and before.

Issue 26, item 1: the interval failcodes reports for a corrected share must cover 0.93-0.97
(nominal 95%) in every design researchers use, or carry a note saying it may not. Session 13:
the note the old interval carried selected its own failures (with a 0.8/0.99 judge,
prevalence 0.2 and 100 reviewed units it fired in 97.8% of replicates, and the 2.2% it left
unnoted, the draws with unusually many disagreements, covered 0.70). The interval reported
now (Clopper-Pearson per judge-code part of each stratum, MOVER over the parts:
``failcodes.stats.ppi.corrected_interval``) carries no note; every row prints it (NEW)
beside the one before (OLD: ``bench/ppi_old_posterior.py``, with how often its note fired,
its coverage where it did not, and that width).

Grids (``--grid``):

- ``issue26`` (default): judges (sensitivity / specificity) 0.6/0.6 (poor), 0.8/0.9,
  0.9/0.95, 0.95/0.99 (the seed's hand check), 0.99/0.99; reviewed units n 30, 50, 100,
  200, 400, 800; prevalence 0.01, 0.02, 0.05, 0.145 (Table 8's all-high rate), 0.3, 0.5;
  1,080 cells.
- ``regime``: the seed's own: sensitivity 0.7, 0.8, 0.9, 0.95 x specificity 0.9, 0.95, 0.99,
  0.995; prevalence 0.02, 0.05, 0.1, 0.2, 0.3; n 50, 100, 200; 1,440 cells.

- ``accuracy`` (session 15): judges of accuracy 0.7, 0.85, 0.95 (sensitivity = specificity),
  reviewed units 30, 50, 100, 300, prevalence 0.02, 0.1, 0.3, population N 2,000 and 20,000
  (not the three below); 144 cells. A compact table: coverage and mean width of every interval
  reported for a corrected share (judge-only Wald, human-only as reported, corrected, and
  ``ppi_mean``'s Wald) and of the candidate, Blaker's interval per part
  (``bench/ppi_blaker.py``), with the width it saves; "seed" marks the seed's regime
  (accuracy 0.85-0.95, 50-100 reviewed). ``--blaker`` adds the candidate to the other grids.

All: plans ``uniform`` (a simple random sample of the units) and ``by-code`` (stratified by
the judge's code, proportional allocation with at least 2 units per stratum, as
``failcodes review plan --stratify code`` draws it); population N (judged units in the cell)
1,000, 10,000, 100,000.

Each replicate draws a population's judge codes and the reviewed units' human codes from the
judge's confusion (units are exchangeable, so counts are multinomial/binomial draws: no
per-unit loop), and computes every interval with the library's own vectorised functions
(:mod:`failcodes.stats.ppi`). The target is the prevalence ``p`` of the population the units
come from (PPI's estimand).

Printed per cell: coverage and mean width of the judge-only interval (Wald), of the human-only
one (Clopper-Pearson, strata ignored), of the corrected one as reported (NEW; "no CI": the
replicates the library refuses, a stratum with units and < 2 reviewed), of the old posterior
interval (OLD) with its note's rate, its coverage and width where unnoted, and the Wald /
score rule older still. A cell "meets" the target when NEW covers 0.93-0.99 (2 Monte Carlo
SE allowed). The summary pools every printed interval without a note, NEW and OLD. Last
columns (uniform plans): ``ppi_mean``'s Wald interval (``ppi_py``'s), how often its note
before session 13 fired and its coverage where it did not; ``ppi_mean`` now notes every 0/1
sample and gives NEW's interval beside it (``exact_low`` / ``exact_high``).

Run: ``python bench/bench_ppi_coverage.py [--grid regime|accuracy] [--replicates 2000] [--seed 0]
[--quiet]`` (about 3 minutes per grid on 2 shared cores).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

if str(REPO / "bench") not in sys.path:
    sys.path.insert(0, str(REPO / "bench"))

import ppi_old_posterior  # noqa: E402
from failcodes.stats.ppi import (  # noqa: E402
    Estimates,
    Moments,
    clopper_pearson,
    combine_strata,
    corrected_interval,
    effective_n,
    human_interval,
    judge_cells,
    judge_only,
    mover_share,
    ppi,
    z_value,
)
from ppi_blaker import blaker as blaker_interval  # noqa: E402

JUDGES = ((0.6, 0.6), (0.8, 0.9), (0.9, 0.95), (0.95, 0.99), (0.99, 0.99))
REVIEWED = (30, 50, 100, 200, 400, 800)
PREVALENCES = (0.01, 0.02, 0.05, 0.145, 0.3, 0.5)
PLANS = ("uniform", "by-code")
POPULATIONS = (1_000, 10_000, 100_000)
#: The seed's own regime (``--grid regime``): accurate judges, 50-200 reviewed units.
REGIME = {
    "judges": tuple((se, sp) for se in (0.7, 0.8, 0.9, 0.95) for sp in (0.9, 0.95, 0.99, 0.995)),
    "reviewed": (50, 100, 200),
    "prevalences": (0.02, 0.05, 0.1, 0.2, 0.3),
    "plans": PLANS,
    "populations": POPULATIONS,
}

#: Session 15's grid (``--grid accuracy``): judges of accuracy 0.7, 0.85, 0.95 (sensitivity =
#: specificity, so the agreement with humans is the accuracy at every prevalence); the seed's
#: regime is accuracy 0.85-0.95 with 50-100 reviewed units of a few thousand.
ACCURACY = {
    "judges": ((0.7, 0.7), (0.85, 0.85), (0.95, 0.95)),
    "reviewed": (30, 50, 100, 300),
    "prevalences": (0.02, 0.1, 0.3),
    "plans": PLANS,
    "populations": (2_000, 20_000),
}

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


@dataclass(frozen=True)
class CellResult:
    """Coverage figures of one design: the interval reported now, and the one before (old)."""

    design: Design
    judge: tuple[float, float]
    human: tuple[float, float]
    corrected: tuple[float, float]
    flag: float  # replicates with no interval (a stratum with < 2 reviewed): no note otherwise
    cov_unflagged: float | None
    n_unflagged: int
    post: tuple[float, float]  # the posterior interval reported before, every replicate
    post_flag: float  # how often its note ("coverage not assured") fired
    post_unflagged: float | None  # its coverage where the note did not fire
    post_n_unflagged: int
    post_width_unflagged: float | None
    old: float
    lam: float
    n_eff: float
    undefined: float
    # ppi_mean (public API, ppi_py's Wald interval; one sample, so uniform plans only)
    mean_cov: float | None = None  # its Wald interval's coverage, every replicate
    mean_flag: float | None = None  # how often its old note (thin_evidence, se 0) fired
    mean_unnoted: float | None = None  # coverage where that note did not fire
    mean_n_unnoted: int = 0
    mean_width: float | None = None  # its Wald interval's mean width
    # the candidate: Blaker's exact interval per part instead of Clopper-Pearson's (MOVER alike)
    # the human-only interval as reported (MOVER over the plan's strata; human: strata ignored)
    human_rep: tuple[float, float] = (float("nan"), float("nan"))
    blaker: tuple[float, float] = (float("nan"), float("nan"))
    human_blaker: tuple[float, float] = (float("nan"), float("nan"))

    def meets(self) -> bool:
        """Coverage of the printed (unflagged) intervals in 0.93-0.99, allowing 2 MC SE."""
        return self.meets_unflagged(0.93, 0.99)

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


def run_cell(
    rng: np.random.Generator, d: Design, reps: int, confidence: float, blaker: bool = False
) -> CellResult:
    """Simulate one design and measure every interval (``blaker``: the candidate too)."""
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
    low, high = corrected_interval(safe, per, confidence)
    # the interval reported before and its note
    post = ppi_old_posterior.corrected_interval(safe, per, weights, confidence)
    post_flag = ppi_old_posterior.thin_evidence(safe).any() | ~defined
    # the old rule: Wald, or the score interval below 10 reviewed positives
    pos, nn = safe.sum_y.sum(-1), safe.n.sum(-1)
    few = (np.minimum(pos, nn - pos) < 10) | np.all(per.lam == 0, axis=-1)
    wl, wh = _wald(corrected.estimate, corrected.variance, z)
    sl, sh = old_score_interval(safe, per, weights, z)
    old = (np.where(few, sl, wl), np.where(few, sh, wh))
    hit = (low <= d.p) & (d.p <= high)
    mean = _ppi_mean_wald(safe, per, d, z) if d.plan == "uniform" else {}
    if blaker:
        n_c, x_c, units_c = judge_cells(safe)
        _, bl, bh = mover_share(n_c, x_c, units_c, confidence, part_interval=blaker_interval)
        point = np.clip(corrected.estimate, 0.0, 1.0)
        mean["blaker"] = _cover((np.minimum(bl, point), np.maximum(bh, point)), d.p, defined)
        _, hl, hh = mover_share(
            safe.n, safe.sum_y, units, confidence, part_interval=blaker_interval
        )
        mean["human_blaker"] = _cover((hl, hh), d.p, defined)
    post_hit = (post[0] <= d.p) & (d.p <= post[1])
    unflagged = defined & ~post_flag
    return CellResult(
        design=d,
        judge=_cover(_wald(judge.estimate, judge.variance, z), d.p, defined),
        human=_cover(clopper_pearson(pos, nn, confidence), d.p, defined),
        human_rep=_cover(human_interval(safe, confidence), d.p, defined),
        corrected=_cover((low, high), d.p, defined),
        flag=float((~defined).mean()),
        cov_unflagged=float(hit[defined].mean()) if defined.any() else None,
        n_unflagged=int(defined.sum()),
        post=_cover(post, d.p, defined),
        post_flag=float(post_flag.mean()),
        post_unflagged=float(post_hit[unflagged].mean()) if unflagged.any() else None,
        post_n_unflagged=int(unflagged.sum()),
        post_width_unflagged=(
            float((post[1] - post[0])[unflagged].mean()) if unflagged.any() else None
        ),
        old=_cover(old, d.p, defined)[0],
        lam=float(corrected.lam[defined].mean()),
        n_eff=float(np.median(effective_n(nn, pos, low, high, confidence)[defined])),
        undefined=float((~defined).mean()),
        **mean,
    )


def _ppi_mean_wald(safe: Moments, per: Estimates, d: Design, z: float) -> dict[str, Any]:
    """``ppi_mean``'s Wald interval (one stratum) and how its note before session 13 fired.

    Before: noted where ``thin_evidence`` fired or the SE was 0, so the replicates left unnoted
    were the draws with many disagreements. Now ``ppi_mean`` notes every 0/1 sample (no
    replicate is unnoted) and gives the exact interval beside it: NEW's, for a uniform plan.
    """
    theta, se = per.estimate[:, 0], np.sqrt(per.variance[:, 0])
    hit = (theta - z * se <= d.p) & (d.p <= theta + z * se)
    noted = ppi_old_posterior.thin_evidence(safe).any() | (se == 0)
    return {
        "mean_cov": float(hit.mean()),
        "mean_flag": float(noted.mean()),
        "mean_unnoted": float(hit[~noted].mean()) if (~noted).any() else None,
        "mean_n_unnoted": int((~noted).sum()),
        "mean_width": float((2 * z * se).mean()),
    }


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
    f"{'NEW cov':>7} {'width':>5} {'no CI':>5} | "
    f"{'OLD cov':>7} {'width':>5} {'noted':>5} {'cov unnoted':>11} {'width':>5} | "
    f"{'wald':>5} {'lam':>4} {'n_eff':>6} target | "
    f"{'ppi_mean':>8} {'noted':>5} {'unnoted':>7}"
)


def row(r: CellResult) -> str:
    """One printed line: the interval reported now (NEW) beside the one before (OLD)."""
    d = r.design
    width = "    -" if r.post_width_unflagged is None else f"{r.post_width_unflagged:.3f}"
    return (
        f"{d.plan:<8} {d.sens:>4}/{d.spec:<5} {d.kappa():>5.2f} {d.units:>6} {d.n:>4} {d.p:>5} | "
        f"{r.judge[0]:>9.3f} {r.judge[1]:>5.3f} | {r.human[0]:>9.3f} {r.human[1]:>5.3f} | "
        f"{r.corrected[0]:>7.3f} {r.corrected[1]:>5.3f} {r.flag:>5.2f} | "
        f"{r.post[0]:>7.3f} {r.post[1]:>5.3f} {r.post_flag:>5.2f} {_fmt(r.post_unflagged):>11} "
        f"{width:>5} | {r.old:>5.3f} {r.lam:>4.2f} {r.n_eff:>6.0f} "
        f"{'met' if r.meets() else 'MISSED':<6} | {_fmt(r.mean_cov):>8} "
        f"{_fmt(r.mean_flag):>5} {_fmt(r.mean_unnoted):>7}"
    )


COMPACT_HEADER = (
    f"{'plan':<8} {'acc':>4} {'kappa':>5} {'N':>6} {'n':>4} {'p':>4} | "
    f"{'judge':>5} {'width':>5} | {'human':>5} {'width':>5} | {'CP':>5} {'width':>5} | "
    f"{'Blkr':>5} {'width':>5} {'gain':>5} | {'hBlkr':>5} {'width':>5} | "
    f"{'Wald':>5} {'width':>5} | seed"
)


def seed_regime(d: Design) -> bool:
    """The seed's regime: an accurate judge (0.85-0.95), 50-100 reviewed of a few thousand."""
    return 0.85 <= d.sens <= 0.95 and 50 <= d.n <= 100 and d.units <= 20_000


def compact_row(r: CellResult) -> str:
    """Coverage and mean width of every interval reported for a corrected share, one design.

    judge: the judge-only share's Wald interval; human: the human-only one as reported
    (Clopper-Pearson, MOVER over the plan's strata); CP: the corrected one as reported;
    Blkr / hBlkr: the same two with Blaker's interval per part (gain: CP's width saved);
    Wald: ppi_mean's (ppi_py's) Wald interval, uniform plans only.
    """
    d = r.design
    gain = 1 - r.blaker[1] / r.corrected[1] if r.corrected[1] > 0 else 0.0
    wald = (
        f"{_fmt(r.mean_cov):>5} {_fmt(r.mean_width):>5}"
        if r.mean_cov is not None
        else f"{'-':>5} {'-':>5}"
    )
    return (
        f"{d.plan:<8} {d.sens:>4} {d.kappa():>5.2f} {d.units:>6} {d.n:>4} {d.p:>4} | "
        f"{r.judge[0]:.3f} {r.judge[1]:.3f} | {r.human_rep[0]:.3f} {r.human_rep[1]:.3f} | "
        f"{r.corrected[0]:.3f} {r.corrected[1]:.3f} | {r.blaker[0]:.3f} {r.blaker[1]:.3f} "
        f"{100 * gain:>4.1f}% | {r.human_blaker[0]:.3f} {r.human_blaker[1]:.3f} | {wald} | "
        f"{'yes' if seed_regime(d) else ''}"
    )


def compact_summary(results: list[CellResult], reps: int) -> None:
    """Per interval: the lowest cell, the cells under 0.94, the mean width (all; seed regime)."""
    print()
    mc = (0.95 * 0.05 / reps) ** 0.5
    print(f"cells: {len(results)}; Monte Carlo SE of a coverage of 0.95 over {reps}: {mc:.4f}")
    for name, get in (
        ("judge-only Wald", lambda r: r.judge),
        ("human-only (reported)", lambda r: r.human_rep),
        ("corrected (reported, CP per part)", lambda r: r.corrected),
        ("corrected, Blaker per part", lambda r: r.blaker),
        ("human-only, Blaker per stratum", lambda r: r.human_blaker),
        ("ppi_mean Wald (uniform)", lambda r: (r.mean_cov, r.mean_width)),
    ):
        rows = [(r, get(r)) for r in results if get(r)[0] is not None]
        if not rows or np.isnan(rows[0][1][0]):
            continue
        low = min(rows, key=lambda t: t[1][0])
        under = [r for r, c in rows if c[0] < 0.94]
        seed_w = [c[1] for r, c in rows if seed_regime(r.design)]
        print(
            f"{name}: min coverage {low[1][0]:.3f} ({low[0].design}); cells under 0.94: "
            f"{len(under)} of {len(rows)}; mean width {np.mean([c[1] for _, c in rows]):.4f}"
            + (f", seed regime ({len(seed_w)} cells) {np.mean(seed_w):.4f}" if seed_w else "")
        )


def blaker_summary(results: list[CellResult]) -> None:
    """The candidate against the reported interval: coverage floor and width saved."""
    seed = [r for r in results if seed_regime(r.design)]
    for label, rows in (("all cells", results), ("seed regime", seed)):
        if not rows:
            continue
        gain = [1 - r.blaker[1] / r.corrected[1] for r in rows if r.corrected[1] > 0]
        print(
            f"Blaker per part vs CP per part, {label} ({len(rows)}): min coverage "
            f"{min(r.blaker[0] for r in rows):.3f} (CP {min(r.corrected[0] for r in rows):.3f}); "
            f"width saved mean {100 * np.mean(gain):.1f}%, min {100 * min(gain):.1f}%, "
            f"max {100 * max(gain):.1f}%; cells under 0.95: "
            f"{sum(r.blaker[0] < 0.95 for r in rows)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.add_argument(
        "--grid",
        choices=("issue26", "regime", "accuracy"),
        default="issue26",
        help="issue26: the whole design grid; regime: the seed's own (accurate judges, "
        "sensitivity 0.7-0.95, specificity 0.9-0.995, prevalence 0.02-0.3, 50-200 reviewed); "
        "accuracy: judges of accuracy 0.7/0.85/0.95, 30-300 reviewed of 2,000/20,000 units, "
        "prevalence 0.02/0.1/0.3 (compact table, with the Blaker candidate)",
    )
    parser.add_argument(
        "--blaker",
        action="store_true",
        help="also measure Blaker's exact interval per part (the candidate; --grid accuracy: on)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"{args.replicates} replicates per cell; nominal 95% intervals; truth = prevalence p. "
        "NEW: the interval reported now (Clopper-Pearson per judge-code part, MOVER), never "
        "noted ('no CI': replicates the library refuses to estimate); OLD: the posterior "
        "interval reported before, 'noted' = how often its 'coverage not assured' note fired, "
        "'cov unnoted' = its coverage where it did not; wald: PPI++ Wald / score (older still)"
    )
    compact = args.grid == "accuracy"
    blaker = args.blaker or compact
    if not args.quiet:
        print(COMPACT_HEADER if compact else HEADER)
    grid = designs(**{"regime": REGIME, "accuracy": ACCURACY}.get(args.grid, {}))
    results = []
    for i, d in enumerate(grid):
        rng = np.random.default_rng([args.seed, i])
        r = run_cell(rng, d, args.replicates, 0.95, blaker)
        results.append(r)
        if not args.quiet:
            print(compact_row(r) if compact else row(r), flush=True)
    if compact:
        compact_summary(results, args.replicates)
    else:
        summary(results, args.replicates)
    if blaker:
        blaker_summary(results)
    print(f"elapsed {time.perf_counter() - started:.0f} s")


def _pooled(results: list[CellResult], new: bool) -> tuple[float, int]:
    """Coverage of every printed interval without a note, pooled over the cells."""
    if new:
        hits = sum((r.cov_unflagged or 0.0) * r.n_unflagged for r in results)
        count = sum(r.n_unflagged for r in results)
    else:
        hits = sum((r.post_unflagged or 0.0) * r.post_n_unflagged for r in results)
        count = sum(r.post_n_unflagged for r in results)
    return (hits / count if count else float("nan")), count


def summary(results: list[CellResult], reps: int) -> None:
    """The figures the issue asks for, over the whole grid: NEW beside OLD."""
    print()
    mc = (0.95 * 0.05 / reps) ** 0.5
    print(f"cells: {len(results)}; Monte Carlo SE of a coverage of 0.95 over {reps}: {mc:.4f}")
    covs = [r.cov_unflagged for r in results if r.cov_unflagged is not None]
    short = [r for r in results if not r.meets_unflagged(0.93, 1.0)]
    pooled, count = _pooled(results, new=True)
    print(
        f"NEW (no note): coverage per cell min {min(covs):.3f}, max {max(covs):.3f}; below 0.93 "
        f"beyond 2 MC SE in {len(short)} cells; pooled over {count} intervals {pooled:.3f}; "
        f"mean width {np.mean([r.corrected[1] for r in results]):.3f}; no interval (refused) "
        f"in {np.mean([r.flag for r in results]):.3f} of replicates"
    )
    for r in sorted(short, key=lambda r: r.cov_unflagged or 0.0):
        print("  " + row(r))
    some = [r for r in results if r.post_unflagged is not None and r.post_n_unflagged >= 20]
    post_short = [
        r
        for r in some
        if (r.post_unflagged or 0.0) + 2 * (0.95 * 0.05 / r.post_n_unflagged) ** 0.5 < 0.93
    ]
    pooled, count = _pooled(results, new=False)
    widths = [r.post_width_unflagged for r in results if r.post_width_unflagged is not None]
    print(
        f"OLD: note fired in {np.mean([r.post_flag for r in results]):.3f} of replicates; "
        f"unnoted intervals pooled over {count}: coverage {pooled:.3f}; cells with >= 20 "
        f"unnoted replicates: {len(some)}, covering below 0.93 beyond 2 MC SE in "
        f"{len(post_short)}"
        + (f" (min {min(r.post_unflagged or 0.0 for r in post_short):.3f})" if post_short else "")
        + f"; mean width (unnoted) {np.mean(widths) if widths else float('nan'):.3f}, "
        f"(all) {np.mean([r.post[1] for r in results]):.3f}"
    )
    _mean_summary(results)
    over = [r for r in results if r.corrected[0] > 0.99]
    print(f"NEW over-covers (> 0.99) in {len(over)} cells (conservative: exact parts)")
    old = [r.old for r in results]
    print(f"Wald / score rule: min {min(old):.3f}, max {max(old):.3f}")
    moderate = [r for r in results if r.design.kappa() >= 0.41]
    narrower = [r for r in moderate if r.corrected[1] < r.human[1]]
    print(
        f"NEW narrower than human-only where kappa >= 0.41: {len(narrower)} of "
        f"{len(moderate)} cells"
    )
    for r in moderate:
        if r.corrected[1] >= r.human[1]:
            print("  not narrower: " + row(r))


def _mean_summary(results: list[CellResult]) -> None:
    """ppi_mean's Wald interval: where its old note left it unnoted, and now (always noted)."""
    mean = [r for r in results if r.mean_cov is not None]
    if not mean:
        return
    some = [r for r in mean if r.mean_unnoted is not None and r.mean_n_unnoted >= 20]
    short = [
        r
        for r in some
        if (r.mean_unnoted or 0.0) + 2 * (0.95 * 0.05 / r.mean_n_unnoted) ** 0.5 < 0.93
    ]
    hits = sum((r.mean_unnoted or 0.0) * r.mean_n_unnoted for r in mean)
    count = sum(r.mean_n_unnoted for r in mean)
    print(
        f"ppi_mean Wald (uniform plans, {len(mean)} cells): coverage per cell min "
        f"{min(r.mean_cov or 0.0 for r in mean):.3f}; BEFORE its note fired in "
        f"{np.mean([r.mean_flag for r in mean]):.3f} of replicates, unnoted pooled over {count}: "
        f"{hits / count if count else float('nan'):.3f}; cells with >= 20 unnoted: {len(some)}, "
        f"below 0.93 beyond 2 MC SE in {len(short)}"
        + (f" (min {min(r.mean_unnoted or 0.0 for r in short):.3f})" if short else "")
        + "; NOW noted in every replicate (0 unnoted), beside exact_low/high (NEW: per cell "
        f"min {min(r.corrected[0] for r in mean):.3f}, mean width "
        f"{np.mean([r.corrected[1] for r in mean]):.3f})"
    )
    for r in sorted(short, key=lambda r: r.mean_unnoted or 0.0)[:5]:
        print("  " + row(r))


if __name__ == "__main__":
    main()
