"""Inter-rater agreement coefficients: arrays in, :class:`AgreementResult` out.

Input is a ratings matrix of shape (units, raters) holding numeric category values, with
``NaN`` for a missing rating. The category set is the sorted distinct observed values unless
``categories`` is given (its order is the rank order used by ordinal statistics and by linear
and quadratic weights, which treat categories as equally spaced ranks, as scikit-learn and
statsmodels do).

Formulas and references:

- Percent agreement, Fleiss' kappa, Gwet's AC1/AC2 and Brennan-Prediger use the unified
  multi-rater framework with missing ratings and weights of Gwet, *Handbook of Inter-Rater
  Reliability*, 4th ed. (2014), ch. 2-3 and 5 (implemented in R's irrCAC): observed agreement
  ``p_a`` averages, over units rated by two or more raters, the weighted share of agreeing
  rater pairs; category propensities ``pi_k`` average ``r_ik / r_i`` over units with at least
  one rating. Their standard errors are Gwet's linearised variance estimators (no finite
  population correction).
- Cohen's kappa (Cohen 1960; weighted, Cohen 1968) with the large-sample standard error of
  Fleiss, Cohen & Everitt (1969), as in statsmodels.
- Krippendorff's alpha point estimates come from the ``krippendorff`` package; its bootstrap
  resamples units using per-unit coincidence matrices (Krippendorff 2011).
- PABAK (Byrt, Bishop & Carlin 1993): ``(q * p_o - 1) / (q - 1)`` for two raters (``2 p_o - 1``
  for binary data).

All weights are *agreement* weights: 1 on the diagonal, in [0, 1] elsewhere.
Degenerate data never yield an unexplained NaN: the result has ``value=None`` and an
``undefined_reason``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, get_args

import krippendorff
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from failcodes.errors import StatisticsError
from failcodes.stats.bootstrap import (
    Block,
    FloatArray,
    KeyedBlock,
    check_confidence,
    make_rng,
    percentile_interval,
    resampled_block_sums,
)

Level = Literal["nominal", "ordinal", "interval", "ratio"]
WeightsName = Literal["none", "linear", "quadratic"]
StatisticName = Literal[
    "percent",
    "cohen",
    "fleiss",
    "krippendorff",
    "gwet_ac1",
    "gwet_ac2",
    "brennan_prediger",
    "pabak",
]
STATISTICS: tuple[str, ...] = get_args(StatisticName)
LEVELS: tuple[str, ...] = get_args(Level)
WEIGHTS: tuple[str, ...] = get_args(WeightsName)

#: Weights: a name or a custom (q x q) agreement-weight matrix.
Weights = WeightsName | npt.ArrayLike | None

_EPS = 1e-12


class AgreementResult(BaseModel):
    """One agreement coefficient with its uncertainty, or an explicit undefined reason."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    statistic: str = Field(description="Coefficient name, e.g. 'cohen', 'krippendorff'.")
    level: Level = Field(description="Level of measurement the data were analysed at.")
    weights: str = Field(description="'none', 'linear', 'quadratic' or 'custom'.")
    value: float | None = Field(description="Point estimate; None when undefined.")
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: Literal["bootstrap_percentile", "wald", "none"] = "none"
    confidence: float = 0.95
    se: float | None = Field(default=None, description="Analytic standard error, if known.")
    n_units: int = Field(description="Units that entered the coefficient.")
    n_raters: int = Field(description="Raters with at least one rating.")
    n_categories: int = Field(description="Size of the category set q.")
    observed_agreement: float | None = None
    chance_agreement: float | None = None
    n_bootstrap: int = 0
    n_bootstrap_valid: int = Field(
        default=0, description="Resamples on which the coefficient was defined."
    )
    undefined_reason: str | None = None


# --------------------------------------------------------------------------- input handling


@dataclass(frozen=True)
class Prepared:
    """Ratings reduced to category codes and per-unit category counts."""

    codes: npt.NDArray[np.int64]  # units x raters, -1 = missing
    counts: FloatArray  # units x q: raters per unit and category
    categories: FloatArray  # q category values (rank order)
    n_raters: int


def prepare(
    ratings: npt.ArrayLike,
    categories: Sequence[float] | npt.ArrayLike | None = None,
    *,
    drop_empty_units: bool = True,
) -> Prepared:
    """Validate a (units x raters) ratings matrix and code it against the category set."""
    try:
        data = np.asarray(ratings, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StatisticsError(
            "ratings must be numeric category values with NaN for missing "
            f"(map labels to numbers first): {exc}"
        ) from exc
    if data.ndim != 2:
        raise StatisticsError(
            f"ratings must be a 2-D array (units x raters), got shape {data.shape}"
        )
    if np.isinf(data).any():
        raise StatisticsError("ratings contain infinite values; use NaN for missing ratings")
    if drop_empty_units:
        data = data[~np.isnan(data).all(axis=1)]
    if data.shape[0] == 0:
        raise StatisticsError("no unit has any rating")
    observed = np.unique(data[~np.isnan(data)])
    if categories is None:
        cats = observed
    else:
        cats = np.asarray(categories, dtype=np.float64).ravel()
        if cats.size == 0:
            raise StatisticsError("the category list is empty")
        if np.unique(cats).size != cats.size:
            raise StatisticsError(f"the category list has duplicates: {cats.tolist()}")
        unknown = np.setdiff1d(observed, cats)
        if unknown.size:
            raise StatisticsError(
                f"ratings contain values outside the category list {cats.tolist()}: "
                f"{unknown.tolist()}"
            )
    codes = np.full(data.shape, -1, dtype=np.int64)
    present = ~np.isnan(data)
    order = np.argsort(cats, kind="stable")
    pos = np.searchsorted(cats[order], data[present])
    codes[present] = order[pos]
    q = cats.size
    n = data.shape[0]
    flat = (np.arange(n)[:, None] * q + codes)[present]
    counts = np.bincount(flat, minlength=n * q).reshape(n, q).astype(np.float64)
    n_raters = int(present.any(axis=0).sum())
    return Prepared(codes=codes, counts=counts, categories=cats, n_raters=n_raters)


def weight_matrix(weights: Weights, q: int) -> tuple[FloatArray, str]:
    """Agreement weights (q x q) and their name; custom matrices are validated."""
    if weights is None or (isinstance(weights, str) and weights == "none"):
        return np.eye(q), "none"
    if isinstance(weights, str):
        if weights not in WEIGHTS:
            raise StatisticsError(
                f"unknown weights {weights!r}; choose one of {', '.join(WEIGHTS)} "
                "or pass a (q x q) matrix"
            )
        if q < 2:
            return np.eye(q), weights
        idx = np.arange(q, dtype=np.float64)
        dist = np.abs(idx[:, None] - idx[None, :]) / (q - 1)
        return (1.0 - dist if weights == "linear" else 1.0 - dist**2), weights
    mat = np.asarray(weights, dtype=np.float64)
    if mat.shape != (q, q):
        raise StatisticsError(
            f"custom weight matrix must be {q} x {q} (one row per category), got {mat.shape}"
        )
    if not np.isfinite(mat).all() or (mat < 0).any() or (mat > 1).any():
        raise StatisticsError("custom agreement weights must be finite and within [0, 1]")
    if not np.allclose(np.diag(mat), 1.0):
        raise StatisticsError("custom agreement weights must be 1 on the diagonal")
    return mat, "custom"


def _check_level(level: str) -> Level:
    if level not in LEVELS:
        raise StatisticsError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")
    return level  # type: ignore[return-value]


# --------------------------------------------------------------------------- estimates


@dataclass(frozen=True)
class Plan:
    """A statistic as a function of column sums over units (drives the bootstrap).

    ``columns`` has one row per unit; ``finalize`` maps summed columns of shape
    (resamples, c) to the statistic per resample (NaN where undefined).
    """

    columns: Block
    finalize: Callable[[FloatArray], FloatArray]

    def value_from_sums(self, sums: FloatArray) -> FloatArray:
        """Evaluate the statistic on summed columns."""
        return self.finalize(np.atleast_2d(sums))


@dataclass(frozen=True)
class Estimate:
    """Internal point estimate of one statistic before intervals are attached."""

    statistic: str
    level: Level
    weights: str
    value: float | None
    se: float | None
    n_units: int
    n_raters: int
    n_categories: int
    observed: float | None = None
    chance: float | None = None
    undefined_reason: str | None = None
    plan: Plan | None = None


class _Sizes(NamedTuple):
    n_units: int
    n_raters: int
    n_categories: int


def _safe_div(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    ok = np.abs(den) > _EPS
    np.divide(num, den, out=out, where=ok)
    return out


def _undefined(
    statistic: str,
    level: Level,
    weights: str,
    reason: str,
    *,
    sizes: _Sizes,
    observed: float | None = None,
    chance: float | None = None,
) -> Estimate:
    return _make(
        statistic,
        level,
        weights,
        None,
        None,
        sizes=sizes,
        observed=observed,
        chance=chance,
        reason=reason,
    )


def _make(
    statistic: str,
    level: Level,
    weights: str,
    value: float | None,
    se: float | None,
    *,
    sizes: _Sizes,
    observed: float | None = None,
    chance: float | None = None,
    plan: Plan | None = None,
    reason: str | None = None,
) -> Estimate:
    return Estimate(
        statistic=statistic,
        level=level,
        weights=weights,
        value=value,
        se=se,
        n_units=sizes.n_units,
        n_raters=sizes.n_raters,
        n_categories=sizes.n_categories,
        observed=observed,
        chance=chance,
        undefined_reason=reason,
        plan=plan,
    )


_NO_PAIRS = "no unit has ratings from two or more raters"

GwetKind = Literal["percent", "fleiss", "gwet", "brennan_prediger"]


def _gwet_family(
    prep: Prepared, w: FloatArray, kind: GwetKind, statistic: str, level: Level, wname: str
) -> Estimate:
    """Percent agreement, Fleiss, AC1/AC2, Brennan-Prediger (Gwet 2014, missing ratings)."""
    r = prep.counts
    q = r.shape[1]
    ri = r.sum(axis=1)
    rated = ri >= 1
    two = ri >= 2
    n = int(rated.sum())
    n2 = int(two.sum())
    rstar = r @ w.T  # r*_ik = sum_l w_kl r_il
    num = (r * (rstar - 1.0)).sum(axis=1)
    den = ri * (ri - 1.0)
    a = np.where(two, num / np.where(two, den, 1.0), 0.0)  # per-unit agreement
    p = np.where(rated[:, None], r / np.where(rated, ri, 1.0)[:, None], 0.0)
    columns = np.column_stack([a, two.astype(float), rated.astype(float), p])
    t_w = float(w.sum())

    def chance(pi: FloatArray) -> FloatArray:
        if kind == "fleiss":
            return np.asarray(np.einsum("bk,kl,bl->b", pi, w, pi), dtype=np.float64)
        if kind == "gwet":
            if q < 2:
                return np.full(pi.shape[0], np.nan)
            return np.asarray(t_w / (q * (q - 1)) * (pi * (1.0 - pi)).sum(axis=1), dtype=np.float64)
        if kind == "brennan_prediger":
            return np.full(pi.shape[0], t_w / q**2)
        return np.zeros(pi.shape[0])

    def finalize(sums: FloatArray) -> FloatArray:
        pa = _safe_div(sums[:, 0], sums[:, 1])
        pi = sums[:, 3:] / sums[:, 2:3]
        pe = chance(pi)
        if kind == "percent":
            return pa
        return _safe_div(pa - pe, 1.0 - pe)

    plan = Plan(columns=columns, finalize=finalize)
    common = _Sizes(n_units=n2, n_raters=prep.n_raters, n_categories=q)
    if n2 == 0:
        return _undefined(statistic, level, wname, _NO_PAIRS, sizes=common)
    pa = float(a.sum() / n2)
    pi = p.sum(axis=0) / n
    if kind == "gwet" and q < 2:
        return _undefined(
            statistic,
            level,
            wname,
            "only one category in the category set: Gwet's chance agreement needs q >= 2 "
            "(pass the full category list)",
            observed=pa,
            sizes=common,
        )
    pe = float(chance(pi[None, :])[0])
    if kind == "percent":
        scaled = a * n / n2
        se = float(np.sqrt(((scaled - pa) ** 2).sum() / (n * (n - 1)))) if n > 1 else None
        return _make(statistic, level, wname, pa, se, observed=pa, plan=plan, sizes=common)
    if 1.0 - pe <= _EPS:
        reason = (
            "only one category in the category set: chance agreement is 1 and the "
            "coefficient is 0/0 (pass the full category list)"
            if q < 2
            else "chance agreement is 1 (all ratings fall in one category): the coefficient "
            "is 0/0, undefined"
        )
        return _undefined(statistic, level, wname, reason, observed=pa, chance=pe, sizes=common)
    value = (pa - pe) / (1.0 - pe)
    unit = (n / n2) * (a - pe * two) / (1.0 - pe)
    if kind == "gwet":
        pe_i = t_w / (q * (q - 1)) * (r @ (1.0 - pi)) / np.where(rated, ri, 1.0)
        unit = unit - 2.0 * (1.0 - value) * (pe_i - pe) / (1.0 - pe)
    elif kind == "fleiss":
        pi_w = (w @ pi + w.T @ pi) / 2.0
        pe_i = (r @ pi_w) / np.where(rated, ri, 1.0)
        unit = unit - 2.0 * (1.0 - value) * (pe_i - pe) / (1.0 - pe)
    unit = unit[rated]
    se = float(np.sqrt(((unit - value) ** 2).sum() / (n * (n - 1)))) if n > 1 else None
    return _make(
        statistic, level, wname, float(value), se, observed=pa, chance=pe, plan=plan, sizes=common
    )


def _two_raters(
    prep: Prepared, statistic: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    if prep.codes.shape[1] != 2:
        raise StatisticsError(
            f"{statistic} needs exactly two raters (columns), got {prep.codes.shape[1]}; "
            "use Fleiss' kappa, Krippendorff's alpha or Gwet's AC1 for more, or compute "
            "it per rater pair"
        )
    both: npt.NDArray[np.bool_] = np.asarray((prep.codes >= 0).all(axis=1))
    return prep.codes, both


def _cohen(prep: Prepared, w: FloatArray, level: Level, wname: str) -> Estimate:
    """Cohen's (weighted) kappa with the Fleiss-Cohen-Everitt (1969) standard error."""
    codes, both = _two_raters(prep, "Cohen's kappa")
    q = prep.categories.size
    n_all = codes.shape[0]
    rows = np.flatnonzero(both)
    # one column per (rater 1, rater 2) cell that occurs: never a dense units x q^2 matrix
    cells, which = np.unique(codes[rows, 0] * q + codes[rows, 1], return_inverse=True)
    keys = np.full(n_all, -1, dtype=np.int64)
    keys[rows] = which
    columns = KeyedBlock(keys=keys, width=int(cells.size))

    def finalize(sums: FloatArray) -> FloatArray:
        flat = np.zeros((sums.shape[0], q * q))
        flat[:, cells] = sums
        table = flat.reshape(-1, q, q)
        tot = table.sum(axis=(1, 2))
        prob = table / np.where(tot > 0, tot, 1.0)[:, None, None]
        po = (prob * w).sum(axis=(1, 2))
        row, col = prob.sum(axis=2), prob.sum(axis=1)
        pe = np.einsum("bk,kl,bl->b", row, w, col)
        out = _safe_div(po - pe, 1.0 - pe)
        out[tot <= 0] = np.nan
        return out

    plan = Plan(columns=columns, finalize=finalize)
    n = int(both.sum())
    common = _Sizes(n_units=n, n_raters=prep.n_raters, n_categories=q)
    if n == 0:
        return _undefined("cohen", level, wname, "no unit was rated by both raters", sizes=common)
    prob = np.bincount(cells[which], minlength=q * q).reshape(q, q) / n
    po = float((prob * w).sum())
    row, col = prob.sum(axis=1), prob.sum(axis=0)
    pe = float(row @ w @ col)
    if 1.0 - pe <= _EPS:
        return _undefined(
            "cohen",
            level,
            wname,
            "both raters used one and the same single category: chance agreement is 1 "
            "and kappa is 0/0, undefined",
            observed=po,
            chance=pe,
            sizes=common,
        )
    kappa = (po - pe) / (1.0 - pe)
    w_row = w @ col  # w_i. = sum_j p_.j w_ij
    w_col = row @ w  # w_.j = sum_i p_i. w_ij
    term = (prob * (w - (w_row[:, None] + w_col[None, :]) * (1.0 - kappa)) ** 2).sum()
    var = (term - (kappa - pe * (1.0 - kappa)) ** 2) / (n * (1.0 - pe) ** 2)
    se = float(np.sqrt(max(var, 0.0)))
    return _make(
        "cohen", level, wname, float(kappa), se, observed=po, chance=pe, plan=plan, sizes=common
    )


def _pabak(prep: Prepared, level: Level) -> Estimate:
    """Prevalence- and bias-adjusted kappa for two raters (Byrt, Bishop & Carlin 1993)."""
    codes, both = _two_raters(prep, "PABAK")
    q = prep.categories.size
    agree = (both & (codes[:, 0] == codes[:, 1])).astype(float)
    columns = np.column_stack([agree, both.astype(float)])

    def finalize(sums: FloatArray) -> FloatArray:
        po = _safe_div(sums[:, 0], sums[:, 1])
        return (q * po - 1.0) / (q - 1.0) if q >= 2 else np.full(po.shape, np.nan)

    n = int(both.sum())
    common = _Sizes(n_units=n, n_raters=prep.n_raters, n_categories=q)
    if n == 0:
        return _undefined("pabak", level, "none", "no unit was rated by both raters", sizes=common)
    po = float(agree.sum() / n)
    if q < 2:
        return _undefined(
            "pabak",
            level,
            "none",
            "only one category in the category set: PABAK needs q >= 2 (pass the full "
            "category list, e.g. both codes of a binary variable)",
            observed=po,
            sizes=common,
        )
    value = (q * po - 1.0) / (q - 1.0)
    se = q / (q - 1.0) * float(np.sqrt(po * (1.0 - po) / n))
    plan = Plan(columns=columns, finalize=finalize)
    return _make(
        "pabak", level, "none", value, se, observed=po, chance=1.0 / q, plan=plan, sizes=common
    )


def _delta(level: Level, values: FloatArray) -> FloatArray:
    """Fixed distance matrices (nominal, interval, ratio) as in Krippendorff (2011)."""
    a, b = values[:, None], values[None, :]
    if level == "nominal":
        return np.asarray(a != b, dtype=np.float64)
    if level == "interval":
        return (a - b) ** 2
    total = a + b
    ratio = np.divide(a - b, total, out=np.zeros_like(total), where=total != 0)
    return ratio**2


def _ordinal_delta(n_c: FloatArray) -> FloatArray:
    """Ordinal distances per resample: (sum_{g=c..k} n_g - (n_c + n_k)/2)^2, shape (B, q, q)."""
    cum = np.cumsum(n_c, axis=1)
    diff = cum[:, None, :] - cum[:, :, None] + (n_c[:, :, None] - n_c[:, None, :]) / 2.0
    return diff**2


def coincidence_columns(counts: FloatArray, level: Level, values: FloatArray) -> FloatArray:
    """Per-unit coincidence columns for Krippendorff's alpha (units x c).

    For nominal, interval and ratio data: the unit's observed-disagreement sum
    ``sum_ck o_uck delta_ck`` followed by its pairable value counts (q columns). For ordinal
    data (distances depend on the pooled value counts): the full flattened coincidence
    matrix ``o_u`` (q*q columns). Units with fewer than two values contribute zeros.
    """
    m = counts.sum(axis=1)
    pairable = m >= 2
    q = counts.shape[1]
    scale = np.where(pairable, 1.0 / np.where(pairable, m - 1.0, 1.0), 0.0)
    if level == "ordinal":
        o = counts[:, :, None] * counts[:, None, :]
        o[:, np.arange(q), np.arange(q)] -= counts
        out: FloatArray = (o * scale[:, None, None]).reshape(counts.shape[0], q * q)
        return out
    delta = _delta(level, values)
    # sum_ck (r_c r_k - [c=k] r_c) delta_ck; the diagonal of delta is 0
    disagreement = np.einsum("uc,ck,uk->u", counts, delta, counts) * scale
    return np.column_stack([disagreement, counts * pairable[:, None]])


def _alpha_finalizer(level: Level, values: FloatArray) -> Callable[[FloatArray], FloatArray]:
    q = values.size
    if level == "ordinal":

        def fin_ordinal(sums: FloatArray) -> FloatArray:
            o = sums.reshape(-1, q, q)
            n_c = o.sum(axis=2)
            delta = _ordinal_delta(n_c)
            d_o = (o * delta).sum(axis=(1, 2))
            d_e = np.einsum("bc,bck,bk->b", n_c, delta, n_c)
            n = n_c.sum(axis=1)
            return 1.0 - _safe_div((n - 1.0) * d_o, d_e)

        return fin_ordinal
    delta = _delta(level, values)

    def fin_fixed(sums: FloatArray) -> FloatArray:
        n_c = sums[:, 1:]
        d_e = np.einsum("bc,ck,bk->b", n_c, delta, n_c)
        n = n_c.sum(axis=1)
        return 1.0 - _safe_div((n - 1.0) * sums[:, 0], d_e)

    return fin_fixed


def _krippendorff(prep: Prepared, level: Level) -> Estimate:
    counts, values = prep.counts, prep.categories
    q = values.size
    if level == "ratio" and (values < 0).any():
        raise StatisticsError(
            "ratio level needs non-negative values (a natural zero); got "
            f"{values[values < 0].tolist()}"
        )
    pairable = counts.sum(axis=1) >= 2
    n_pairable = int(pairable.sum())
    columns = coincidence_columns(counts, level, values)
    plan = Plan(columns=columns, finalize=_alpha_finalizer(level, values))
    common = _Sizes(n_units=n_pairable, n_raters=prep.n_raters, n_categories=q)
    if n_pairable == 0:
        return _undefined("krippendorff", level, "none", _NO_PAIRS, sizes=common)
    pooled = counts[pairable].sum(axis=0)
    if q < 2 or (pooled > 0).sum() < 2:
        return _undefined(
            "krippendorff",
            level,
            "none",
            "all pairable values are identical: expected disagreement is 0 and alpha is "
            "undefined (no variation to be reliable about, Krippendorff 2011)",
            sizes=common,
        )
    value = float(
        krippendorff.alpha(
            value_counts=counts[pairable],
            value_domain=values,
            level_of_measurement=level,
        )
    )
    return _make("krippendorff", level, "none", value, None, plan=plan, sizes=common)


def estimate(
    ratings: npt.ArrayLike | Prepared,
    statistic: str,
    *,
    level: str = "nominal",
    weights: Weights = None,
    categories: Sequence[float] | npt.ArrayLike | None = None,
) -> Estimate:
    """Point estimate (and bootstrap plan) of one statistic; no interval yet."""
    lvl = _check_level(level)
    prep = ratings if isinstance(ratings, Prepared) else prepare(ratings, categories)
    q = prep.categories.size
    if statistic not in STATISTICS:
        raise StatisticsError(
            f"unknown statistic {statistic!r}; choose one of {', '.join(STATISTICS)}"
        )
    if statistic == "krippendorff":
        return _krippendorff(prep, lvl)
    if statistic == "pabak":
        return _pabak(prep, lvl)
    if statistic == "gwet_ac1":
        w, wname = weight_matrix("none", q)
    else:
        w, wname = weight_matrix(weights, q)
    if statistic == "cohen":
        return _cohen(prep, w, lvl, wname)
    kind: GwetKind = {
        "percent": "percent",
        "fleiss": "fleiss",
        "gwet_ac1": "gwet",
        "gwet_ac2": "gwet",
        "brennan_prediger": "brennan_prediger",
    }[statistic]  # type: ignore[assignment]
    return _gwet_family(prep, w, kind, statistic, lvl, wname)


# --------------------------------------------------------------------------- intervals


def finish(
    estimates: Sequence[Estimate],
    *,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
    compress: bool = True,
) -> list[AgreementResult]:
    """Attach confidence intervals; all estimates share the same bootstrap resamples.

    With ``n_bootstrap > 0`` the intervals are bootstrap percentile intervals over units
    (one matrix product per block of resamples for all statistics together); otherwise a
    Wald interval ``value +/- z * se`` where an analytic standard error exists.
    ``compress`` pools units with identical per-unit columns before resampling (exact; see
    :func:`failcodes.stats.bootstrap.resampled_sums`).
    """
    check_confidence(confidence)
    if n_bootstrap < 0:
        raise StatisticsError(f"number of bootstrap resamples must be >= 0, got {n_bootstrap}")
    replicates: dict[int, FloatArray] = {}
    plans = [(i, e.plan) for i, e in enumerate(estimates) if e.plan is not None]
    if n_bootstrap > 0 and plans:
        sums = resampled_block_sums(
            [p.columns for _, p in plans], n_bootstrap, make_rng(seed), compress=compress
        )
        for (i, p), block_sums in zip(plans, sums, strict=True):
            replicates[i] = p.finalize(block_sums)
    from scipy.stats import norm  # lazy: scipy.stats costs ~0.3 s at start-up

    z = float(norm.ppf(0.5 + confidence / 2.0))
    out: list[AgreementResult] = []
    for i, e in enumerate(estimates):
        low = high = None
        method: Literal["bootstrap_percentile", "wald", "none"] = "none"
        valid = 0
        if e.value is not None and i in replicates:
            low, high, valid = percentile_interval(replicates[i], confidence)
            method = "bootstrap_percentile" if low is not None else "none"
        elif e.value is not None and e.se is not None:
            low, high = e.value - z * e.se, min(e.value + z * e.se, 1.0)
            method = "wald"
        out.append(
            AgreementResult(
                statistic=e.statistic,
                level=e.level,
                weights=e.weights,
                value=e.value,
                ci_low=low,
                ci_high=high,
                ci_method=method,
                confidence=confidence,
                se=e.se,
                n_units=e.n_units,
                n_raters=e.n_raters,
                n_categories=e.n_categories,
                observed_agreement=e.observed,
                chance_agreement=e.chance,
                n_bootstrap=n_bootstrap if i in replicates else 0,
                n_bootstrap_valid=valid,
                undefined_reason=e.undefined_reason,
            )
        )
    return out


def agreement(
    ratings: npt.ArrayLike,
    statistic: str,
    *,
    level: str = "nominal",
    weights: Weights = None,
    categories: Sequence[float] | npt.ArrayLike | None = None,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
) -> AgreementResult:
    """Compute one agreement statistic on a (units x raters) ratings matrix (NaN = missing)."""
    est = estimate(ratings, statistic, level=level, weights=weights, categories=categories)
    return finish([est], n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)[0]


def agreements(
    ratings: npt.ArrayLike,
    statistics: Sequence[str] = STATISTICS,
    *,
    level: str = "nominal",
    weights: Weights = None,
    categories: Sequence[float] | npt.ArrayLike | None = None,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
) -> list[AgreementResult]:
    """Several statistics on one ratings matrix, bootstrapped on shared resamples.

    Two-rater statistics (Cohen, PABAK) are skipped when there are more than two raters.
    Gwet's AC2 uses quadratic weights when ``weights`` is none (AC2 with identity weights is
    AC1).
    """
    prep = prepare(ratings, categories)
    ests = []
    for stat in statistics:
        if stat in ("cohen", "pabak") and prep.codes.shape[1] != 2 and len(statistics) > 1:
            continue
        w = weights
        if stat == "gwet_ac2" and (w is None or (isinstance(w, str) and w == "none")):
            w = "quadratic"
        ests.append(estimate(prep, stat, level=level, weights=w))
    return finish(ests, n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)


def _one(
    statistic: str,
    ratings: npt.ArrayLike,
    *,
    level: str,
    weights: Weights,
    categories: Sequence[float] | npt.ArrayLike | None,
    n_bootstrap: int,
    seed: int | np.random.Generator | None,
    confidence: float,
) -> AgreementResult:
    return agreement(
        ratings,
        statistic,
        level=level,
        weights=weights,
        categories=categories,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )


def percent_agreement(
    ratings: npt.ArrayLike,
    *,
    weights: Weights = None,
    categories: Sequence[float] | npt.ArrayLike | None = None,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
) -> AgreementResult:
    """Share of agreeing rater pairs, averaged over units with two or more ratings."""
    return _one(
        "percent",
        ratings,
        level="nominal",
        weights=weights,
        categories=categories,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )


def cohen_kappa(
    ratings: npt.ArrayLike,
    *,
    weights: Weights = None,
    categories: Sequence[float] | npt.ArrayLike | None = None,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
) -> AgreementResult:
    """Cohen's kappa for two raters (columns); units missing either rating are dropped."""
    wname = weights if isinstance(weights, str) else "none"
    level = "nominal" if weights is None or wname == "none" else "ordinal"
    return _one(
        "cohen",
        ratings,
        level=level,
        weights=weights,
        categories=categories,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )


def fleiss_kappa(
    ratings: npt.ArrayLike,
    *,
    weights: Weights = None,
    categories: Sequence[float] | npt.ArrayLike | None = None,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
) -> AgreementResult:
    """Fleiss' kappa, generalised to missing ratings and weights (Gwet 2014)."""
    return _one(
        "fleiss",
        ratings,
        level="nominal",
        weights=weights,
        categories=categories,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )


def krippendorff_alpha(
    ratings: npt.ArrayLike,
    *,
    level: str = "nominal",
    categories: Sequence[float] | npt.ArrayLike | None = None,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
) -> AgreementResult:
    """Krippendorff's alpha at the given level of measurement; missing ratings allowed."""
    return _one(
        "krippendorff",
        ratings,
        level=level,
        weights=None,
        categories=categories,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )


def gwet_ac1(
    ratings: npt.ArrayLike,
    *,
    categories: Sequence[float] | npt.ArrayLike | None = None,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
) -> AgreementResult:
    """Gwet's AC1 (unweighted), any number of raters, missing ratings allowed."""
    return _one(
        "gwet_ac1",
        ratings,
        level="nominal",
        weights=None,
        categories=categories,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )


def gwet_ac2(
    ratings: npt.ArrayLike,
    *,
    weights: Weights = "quadratic",
    categories: Sequence[float] | npt.ArrayLike | None = None,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
) -> AgreementResult:
    """Gwet's AC2: AC1 with agreement weights for ordinal categories."""
    return _one(
        "gwet_ac2",
        ratings,
        level="ordinal",
        weights=weights,
        categories=categories,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )


def brennan_prediger(
    ratings: npt.ArrayLike,
    *,
    weights: Weights = None,
    categories: Sequence[float] | npt.ArrayLike | None = None,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
) -> AgreementResult:
    """Brennan-Prediger coefficient (chance agreement T_w / q^2), missing ratings allowed."""
    return _one(
        "brennan_prediger",
        ratings,
        level="nominal",
        weights=weights,
        categories=categories,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )


def pabak(
    ratings: npt.ArrayLike,
    *,
    categories: Sequence[float] | npt.ArrayLike | None = None,
    n_bootstrap: int = 0,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
) -> AgreementResult:
    """Prevalence- and bias-adjusted kappa for two raters: (q p_o - 1) / (q - 1)."""
    return _one(
        "pabak",
        ratings,
        level="nominal",
        weights=None,
        categories=categories,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )
