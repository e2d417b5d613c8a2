"""Simulation loops the coverage benches share (bench_s29_ppi_seed, bench_s31/s32/s33_stats).

A judged population (the truth and a judge's code of each unit), raters' codes given the truth,
the population value of the agreement coefficients for conditionally independent raters of
equal sensitivity and specificity, and one cell of the corrected share's coverage
(``share_estimates`` replicate after replicate). Each draws from the generator it is given in
the order the benches drew before it was shared, so a seed prints the same figures.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

from failcodes.errors import StatisticsError  # noqa: E402
from failcodes.stats.ppi import Stratum, share_estimates  # noqa: E402


def mc(reps: int) -> str:
    """Two Monte Carlo standard errors of a coverage of 0.95 over ``reps`` replicates."""
    return f"{2 * np.sqrt(0.95 * 0.05 / reps):.3f}"


def judged(
    rng: np.random.Generator, size: int, prevalence: float, sens: float, spec: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's truth (0/1) and the judge's code, of sensitivity ``sens``, specificity ``spec``.

    With ``sens == spec`` the judge is right with that accuracy whatever the truth.
    """
    y = (rng.random(size) < prevalence).astype(float)
    u = rng.random(size)
    return y, np.where(y == 1, u < sens, u >= spec).astype(float)


def by_code_strata(
    rng: np.random.Generator, y: np.ndarray, yhat: np.ndarray, n: int
) -> list[Stratum]:
    """Proportional allocation over the judge's two codes, at least 2 reviewed per stratum."""
    strata = []
    ones = int(yhat.sum())
    n1 = min(max(2, round(n * ones / yhat.size)), ones) if ones else 0
    for code, k in ((1.0, n1), (0.0, n - n1)):
        where = np.flatnonzero(yhat == code)
        if where.size == 0:
            continue
        k = min(k, where.size)
        pick = rng.choice(where, size=k, replace=False)
        rest = np.setdiff1d(where, pick)
        strata.append(Stratum(y=y[pick], yhat=yhat[pick], yhat_unlabeled=yhat[rest]))
    return strata


def reviewed(
    rng: np.random.Generator, y: np.ndarray, yhat: np.ndarray, n: int, plan: str
) -> list[Stratum]:
    """``n`` of the judged units reviewed per ``plan``: ``uniform`` (a simple random sample)
    or ``by-code`` (:func:`by_code_strata`, as ``review plan --stratify code`` draws it)."""
    if plan != "uniform":
        return by_code_strata(rng, y, yhat, n)
    pick = rng.choice(y.size, size=n, replace=False)
    rest = np.setdiff1d(np.arange(y.size), pick)
    return [Stratum(y[pick], yhat[pick], yhat[rest])]


def rated(
    rng: np.random.Generator, truth: np.ndarray, raters: int, se: float, sp: float
) -> np.ndarray:
    """``raters`` conditionally independent raters' 0/1 codes of units whose truth is given."""
    r = rng.random((truth.shape[0], raters))
    return np.where(truth.reshape(-1, 1), r < se, r >= sp).astype(float)


def rater_pair(p: float, se: float, sp: float) -> tuple[float, float]:
    """Two equal raters' agreement on a unit and one rater's share of 1s, in the population."""
    pos = p * se + (1 - p) * (1 - sp)
    po = p * (se**2 + (1 - se) ** 2) + (1 - p) * (sp**2 + (1 - sp) ** 2)
    return po, pos


def equal_raters(p: float, se: float, sp: float) -> dict[str, float]:
    """Population values of the coefficients for conditionally independent equal raters.

    Equal margins: Cohen = Scott = Fleiss = Krippendorff's alpha (its small-sample factor
    vanishing); AC1's chance term is Gwet's ``2 pi (1 - pi)``.
    """
    po, pos = rater_pair(p, se, sp)
    pe_kappa = pos**2 + (1 - pos) ** 2
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


@dataclass
class ShareCell:
    """One cell's replicates of the corrected share's interval (those not refused)."""

    hits: list[bool] = field(default_factory=list)  # the interval covered the prevalence
    fin: int = 0  # it covered the N units' own share
    refused: int = 0
    low_miss: int = 0
    high_miss: int = 0
    widths: list[float] = field(default_factory=list)
    ones: list[int] = field(default_factory=list)  # reviewed units the judge coded 1

    @property
    def cover(self) -> float:
        return float(np.mean(self.hits))

    def by_ones(self, counts: list[int]) -> str:
        """Coverage (replicates) where ``counts`` is 0, 1 and 2 or more."""
        few, h = np.asarray(counts), np.asarray(self.hits)
        parts = ""
        for label, sel in (("0", few == 0), ("1", few == 1), ("2+", few >= 2)):
            if sel.any():
                parts += f" {label}: {h[sel].mean():.3f} ({int(sel.sum())})"
        return parts


def share_cell(
    rng: np.random.Generator,
    reps: int,
    big_n: int,
    prevalence: float,
    sens: float,
    spec: float,
    n: int,
    plan: str,
    each: Callable[[list[Stratum]], None] | None = None,
) -> ShareCell:
    """``reps`` populations of ``big_n`` judged units, ``n`` reviewed per ``plan``
    (:func:`reviewed`), each's share; ``each`` is called on a replicate's strata not refused."""
    cell = ShareCell()
    for _ in range(reps):
        y, yhat = judged(rng, big_n, prevalence, sens, spec)
        strata = reviewed(rng, y, yhat, n, plan)
        try:
            est = share_estimates(strata)
        except StatisticsError:
            cell.refused += 1
            continue
        lo, hi = est.corrected.ci_low, est.corrected.ci_high
        cell.hits.append(lo <= prevalence <= hi)
        cell.low_miss += lo > prevalence
        cell.high_miss += hi < prevalence
        cell.fin += lo <= y.mean() <= hi
        cell.widths.append(hi - lo)
        cell.ones.append(int(sum(s.yhat.sum() for s in strata)))
        if each is not None:
            each(strata)
    return cell


def pair_truths(p: float, sens: float, spec: float) -> dict[str, float]:
    """The human-judge pair's coefficients in the population (the human codes the truth)."""
    judge = p * sens + (1 - p) * (1 - spec)
    po = p * sens + (1 - p) * spec
    pe_cohen = p * judge + (1 - p) * (1 - judge)
    pi = (p + judge) / 2
    pe_ac1 = 2 * pi * (1 - pi)
    return {
        "percent": po,
        "cohen": (po - pe_cohen) / (1 - pe_cohen),
        "gwet_ac1": (po - pe_ac1) / (1 - pe_ac1),
        "pabak": 2 * po - 1,
    }
