"""Hypothesis tests: the shared result model, Holm correction and rank diagnostics.

Rank diagnostics follow seed 000: Mann-Whitney U with the rank-biserial correlation
(Kerby 2014, ``r = 2 U_x / (n_x n_y) - 1``, positive when ``x`` tends to be larger) and the
normal-approximation z with tie correction; Spearman's rho. The p-values come from scipy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from pydantic import Field

from failcodes.contract import FrozenModel
from failcodes.errors import StatisticsError
from failcodes.stats.arrays import float_array


class TestResult(FrozenModel):
    """One hypothesis test (or one pairwise comparison within a family)."""

    __test__ = False  # not a pytest test class

    test: str = Field(description="e.g. 'cochran_q', 'mcnemar_midp', 'permutation_f1'.")
    comparison: str = Field(description="'all' or 'A vs B'.")
    statistic: float | None
    df: int | None = None
    z: float | None = Field(default=None, description="Normal-approximation z, if any.")
    p_value: float | None
    p_holm: float | None = Field(
        default=None, description="Holm-adjusted p-value within the family of comparisons."
    )
    effect: float | None = None
    effect_name: str | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int
    undefined_reason: str | None = None
    note: str | None = Field(
        default=None,
        description="What the test says of its own p at this sample size (Cochran's Q on "
        "few units: the chi-square may be off, the exact permutation p beside it).",
    )


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm (1979) step-down adjusted p-values; None kept.

    Sorted ascending, the i-th smallest of m is multiplied by m - i + 1, made non-decreasing
    (running maximum) and capped at 1: statsmodels ``multipletests(method="holm")``'s values,
    without its ``gc.collect()`` on every call (0.5 s a call in ``compare``: 3.1 of 29.5 s over
    its 6 families, the demo data with two mappings).
    """
    idx = [i for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    if not idx:
        return out
    vals = np.array([p_values[i] for i in idx], dtype=np.float64)
    if ((vals < 0) | (vals > 1)).any():
        raise StatisticsError(f"p-values must lie in [0, 1], got {vals.tolist()}")
    order = np.argsort(vals, kind="stable")
    stepped = np.maximum.accumulate(vals[order] * np.arange(len(vals), 0, -1))
    adjusted = np.empty_like(vals)
    adjusted[order] = np.minimum(stepped, 1.0)
    for i, p in zip(idx, adjusted, strict=True):
        out[i] = float(p)
    return out


def with_holm(results: Sequence[TestResult]) -> list[TestResult]:
    """Return copies of ``results`` with ``p_holm`` filled in across the whole family."""
    adjusted = holm([r.p_value for r in results])
    return [r.model_copy(update={"p_holm": p}) for r, p in zip(results, adjusted, strict=True)]


def mann_whitney(x: npt.ArrayLike, y: npt.ArrayLike, *, label: str = "x vs y") -> TestResult:
    """Two-sided Mann-Whitney U test of ``x`` against ``y`` with rank-biserial r and z.

    NaNs are dropped. ``statistic`` is U for ``x``; ``effect`` the rank-biserial correlation.
    """
    a = float_array(x, "x", ndim=1)
    b = float_array(y, "y", ndim=1)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    n1, n2 = a.size, b.size
    if n1 == 0 or n2 == 0:
        raise StatisticsError(f"Mann-Whitney needs values in both groups, got {n1} and {n2}")
    from scipy import stats as sps  # lazy: scipy.stats costs ~0.3 s at start-up

    res = sps.mannwhitneyu(a, b, alternative="two-sided", method="auto")
    u = float(res.statistic)
    r = 2.0 * u / (n1 * n2) - 1.0
    n = n1 + n2
    _, ties = np.unique(np.concatenate([a, b]), return_counts=True)
    tie_term = float((ties**3 - ties).sum()) / (n * (n - 1)) if n > 1 else 0.0
    var = n1 * n2 / 12.0 * ((n + 1) - tie_term)
    tied = var <= 0  # every value tied: z is undefined and p = 1
    return TestResult(
        test="mann_whitney",
        comparison=label,
        statistic=u,
        z=None if tied else float((u - n1 * n2 / 2.0) / np.sqrt(var)),
        p_value=1.0 if tied else float(res.pvalue),
        effect=0.0 if tied else r,
        effect_name="rank_biserial_r",
        n=n,
        undefined_reason="all values are tied: z is undefined and p = 1" if tied else None,
    )


def spearman(x: npt.ArrayLike, y: npt.ArrayLike, *, label: str = "x ~ y") -> TestResult:
    """Spearman's rank correlation with its two-sided p-value; pairs with a NaN are dropped."""
    a = float_array(x, "x", ndim=1)
    b = float_array(y, "y", ndim=1)
    if a.size != b.size:
        raise StatisticsError(f"x and y must have the same length, got {a.size} and {b.size}")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    n = int(a.size)
    reason = None
    if n < 3:
        reason = f"Spearman's rho needs at least 3 complete pairs, got {n}"
    elif np.all(a == a[0]) or np.all(b == b[0]):
        reason = "one variable is constant: rank correlation is undefined"
    rho = p = None
    if reason is None:
        from scipy import stats as sps  # lazy (see mann_whitney)

        res = sps.spearmanr(a, b)
        rho, p = float(res.statistic), float(res.pvalue)
    return TestResult(
        test="spearman",
        comparison=label,
        statistic=rho,
        p_value=p,
        effect=rho,
        effect_name="rho",
        n=n,
        undefined_reason=reason,
    )
