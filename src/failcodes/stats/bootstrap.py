"""Vectorised bootstrap over units and clusters: the one bootstrap module.

Every resampled statistic is a function of sums over units of per-unit columns, so all
resamples at once are one matrix product ``W @ X`` of unit (or question) multiplicities and
per-unit columns; no statistic is recomputed in a Python loop per resample. The cluster
bootstrap and its seed scheme (a paired bootstrap across systems): docs/architecture.md,
"Module notes".
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from failcodes.errors import StatisticsError
from failcodes.hashing import content_hash

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Resamples drawn per block: bounds memory at ``chunk x units`` float64 values.
DEFAULT_CHUNK = 256


def resampling_weights(
    n_units: int, n_resamples: int, rng: np.random.Generator, *, chunk: int = DEFAULT_CHUNK
) -> Iterator[FloatArray]:
    """Yield :func:`multinomial_weights` a block of ``chunk`` resamples at a time, as floats.

    The blocks continue one random stream (numpy's bounded integers draw 32 bits at a time
    from the generator), so they stack to ``multinomial_weights(n_units, n_resamples, rng)``
    exactly, while memory stays at one block.
    """
    if n_units < 1:
        raise StatisticsError("cannot bootstrap: no units")
    if n_resamples < 1:
        raise StatisticsError(f"number of bootstrap resamples must be >= 1, got {n_resamples}")
    if chunk < 1:
        raise StatisticsError(f"bootstrap chunk size must be >= 1, got {chunk}")
    done = 0
    while done < n_resamples:
        block = min(chunk, n_resamples - done)
        yield multinomial_weights(n_units, block, rng).astype(np.float64)
        done += block


@dataclass(frozen=True)
class KeyedBlock:
    """Per-unit one-hot columns stored as keys: unit ``u`` has a 1 in column ``keys[u]``.

    ``keys[u] < 0`` means the unit contributes nothing. Used for contingency-table cells
    (Cohen's kappa), where a dense units x q^2 matrix would be mostly zeros.
    """

    keys: IntArray
    width: int

    def dense(self) -> FloatArray:
        """The equivalent dense (units x width) matrix."""
        out = np.zeros((self.keys.size, self.width))
        rows = np.flatnonzero(self.keys >= 0)
        out[rows, self.keys[rows]] = 1.0
        return out


#: Per-unit columns of one statistic: a dense (units x c) matrix or a :class:`KeyedBlock`.
Block = FloatArray | KeyedBlock


def _keyed_sums(weights: FloatArray, keys: IntArray, width: int) -> FloatArray:
    """Sum the columns of ``weights`` (B x units) per key: (B x width)."""
    out = np.zeros((weights.shape[0], width))
    valid = np.flatnonzero(keys >= 0)
    if valid.size == 0:
        return out
    order = valid[np.argsort(keys[valid], kind="stable")]
    sorted_keys = keys[order]
    uniq, starts = np.unique(sorted_keys, return_index=True)
    out[:, uniq] = np.add.reduceat(weights[:, order], starts, axis=1)
    return out


def _dense_sums(weights: FloatArray, cols: FloatArray) -> FloatArray:
    if cols.size and np.count_nonzero(cols) * 4 < cols.size:  # mostly zeros: sparse product
        from scipy import sparse  # lazy: only large sparse inputs need it

        product = sparse.csr_matrix(cols).T @ weights.T
        return np.ascontiguousarray(np.asarray(product, dtype=np.float64).T)
    out: FloatArray = weights @ cols
    return out


def resampled_block_sums(
    blocks: Sequence[Block],
    n_resamples: int,
    rng: np.random.Generator,
    *,
    chunk: int = DEFAULT_CHUNK,
    compress: bool = True,
) -> list[FloatArray]:
    """Column sums of every block under resamples of units: one (B x c) per block.

    Each block gets the resamples it would get alone from ``rng``'s state (a copy of it per
    block), so a statistic's interval does not depend on which others are computed with it:
    ``agree --stat cohen --seed 0`` read [0.391, 0.545] alone and [0.391, 0.540] after
    ``--stat percent`` (the units were pooled by their rows in every block, so another block
    changed the groups and so the draws). With ``compress`` (the default), units whose rows
    are identical in the block are pooled first: summing Multinomial(n, 1/n) unit weights
    over groups of identical units gives exactly Multinomial(n, group size / n) group
    weights, so when rows take few distinct values (categorical ratings by a handful of
    raters) one draw per pattern replaces one per unit, with the same bootstrap
    distribution. Blocks with fewer than half their units duplicates take the dense path:
    (resamples x units) weights in blocks, the same for all of them.
    """
    if not blocks:
        return []
    sizes_n = {b.keys.size if isinstance(b, KeyedBlock) else int(b.shape[0]) for b in blocks}
    if len(sizes_n) != 1:
        raise StatisticsError("blocks bootstrapped together must have the same units")
    n = sizes_n.pop()
    if n < 1:
        raise StatisticsError("cannot bootstrap: no units")
    if n_resamples < 1:
        raise StatisticsError(f"number of bootstrap resamples must be >= 1, got {n_resamples}")
    dense_blocks = [
        b if isinstance(b, KeyedBlock) else np.asarray(b, dtype=np.float64) for b in blocks
    ]
    for b in dense_blocks:
        if not isinstance(b, KeyedBlock) and b.ndim != 2:
            raise StatisticsError(f"per-unit columns must be 2-D (units x columns), got {b.ndim}-D")
    state = copy.deepcopy(rng)  # each block draws from this state, as if alone
    outs: list[FloatArray] = [
        np.empty((n_resamples, b.width if isinstance(b, KeyedBlock) else b.shape[1]))
        for b in dense_blocks
    ]
    dense: list[int] = []
    for i, b in enumerate(dense_blocks):
        grouping = _group_units(b, n) if compress and n > 1 else None
        if grouping is None:
            dense.append(i)
            continue
        first, group_sizes = grouping
        draw = copy.deepcopy(state)
        counts = draw.multinomial(n, group_sizes / n, size=n_resamples).astype(np.float64)
        outs[i] = (
            _keyed_sums(counts, b.keys[first], b.width)
            if isinstance(b, KeyedBlock)
            else _dense_sums(counts, b[first])
        )
        rng.bit_generator.state = draw.bit_generator.state
    if not dense:
        return outs
    # the dense blocks side by side: one matrix product per block of resamples
    dense_idx = [i for i in dense if not isinstance(dense_blocks[i], KeyedBlock)]
    stacked = np.hstack([np.asarray(dense_blocks[i]) for i in dense_idx]) if dense_idx else None
    edges = np.cumsum([0, *(outs[i].shape[1] for i in dense_idx)])
    draw = copy.deepcopy(state)
    start = 0
    for w in resampling_weights(n, n_resamples, draw, chunk=chunk):
        stop = start + w.shape[0]
        if stacked is not None:
            product = w @ stacked
            for j, i in enumerate(dense_idx):
                outs[i][start:stop] = product[:, edges[j] : edges[j + 1]]
        for i in dense:
            b = dense_blocks[i]
            if isinstance(b, KeyedBlock):
                outs[i][start:stop] = _keyed_sums(w, b.keys, b.width)
        start = stop
    rng.bit_generator.state = draw.bit_generator.state
    return outs


def _group_units(block: FloatArray | KeyedBlock, n: int) -> tuple[IntArray, IntArray] | None:
    """Representative unit and size of each group of units identical in ``block``.

    Dense rows are keyed by a fixed random projection (a 1-D sort instead of a
    lexicographic one) and the grouping is verified exactly, so a key collision never merges
    different rows: it only sends the data down the dense path. Returns None when fewer than
    half the units repeat.
    """
    if isinstance(block, KeyedBlock):
        ids: IntArray = np.asarray(block.keys, dtype=np.int64)
    elif block.shape[1] == 0:
        ids = np.zeros(n, dtype=np.int64)
    else:
        key = block @ np.random.default_rng(0x5EED).standard_normal(block.shape[1])
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        if 2 * first.size > n or not np.array_equal(block[first][inverse], block):
            return None
        ids = np.asarray(inverse, dtype=np.int64).ravel()
    _, first, group_sizes = np.unique(ids, return_index=True, return_counts=True)
    if 2 * first.size > n:
        return None
    return np.asarray(first, dtype=np.int64), np.asarray(group_sizes, dtype=np.int64)


def percentile_interval(
    replicates: FloatArray, confidence: float = 0.95
) -> tuple[float | None, float | None, int]:
    """Percentile interval of the finite replicates; also returns how many were finite.

    Replicates where the statistic is undefined are NaN and are left out; the interval is
    ``None`` when fewer than two replicates are finite.
    """
    check_confidence(confidence)
    values = np.asarray(replicates, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if finite.size < 2:
        return None, None, int(finite.size)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return float(low), float(high), int(finite.size)


def check_confidence(confidence: float) -> None:
    """Raise :class:`StatisticsError` unless 0 < confidence < 1."""
    if not 0.0 < confidence < 1.0:
        raise StatisticsError(f"confidence level must be between 0 and 1, got {confidence}")


def make_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A numpy Generator from a seed (or pass one through)."""
    if isinstance(seed, np.random.Generator):
        return seed
    check_seed(seed)
    return np.random.default_rng(seed)


def check_seed(seed: int | None) -> None:
    """Raise :class:`StatisticsError` for a negative seed (numpy refuses it with a ValueError)."""
    if seed is not None and seed < 0:
        raise StatisticsError(f"--seed must be a non-negative integer, got {seed}")


# --------------------------------------------------------------------------- clusters, jackknife


def cluster_sums(columns: Block, clusters: npt.ArrayLike) -> FloatArray:
    """Sum per-row columns within clusters: (clusters x c), clusters in sorted-id order.

    Resampling the cluster sums resamples whole clusters (a unit with all its dimensions),
    which is exact for statistics written as functions of column sums.
    """
    dense = columns.dense() if isinstance(columns, KeyedBlock) else np.asarray(columns)
    _, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    out = np.zeros((int(inverse.max()) + 1 if inverse.size else 0, dense.shape[1]))
    np.add.at(out, inverse, dense)
    return out


def jackknife_values(columns: Block, finalize: Callable[[FloatArray], FloatArray]) -> FloatArray:
    """Leave-one-row-out values of a statistic of column sums (one vectorised call).

    Rows whose columns are all zero (units that did not enter the statistic, e.g. a unit with
    one rating for Krippendorff's alpha) are not left out: they are not units of the sample.
    """
    dense = columns.dense() if isinstance(columns, KeyedBlock) else np.asarray(columns)
    total = dense.sum(axis=0)
    dense = dense[np.any(dense != 0, axis=1)]
    with np.errstate(divide="ignore", invalid="ignore"):  # a left-out row may leave 0/0: NaN
        return np.asarray(finalize(total[None, :] - dense), dtype=np.float64)


def jackknife_se(values: FloatArray) -> float | None:
    """Jackknife standard error ``sqrt((n-1)/n * sum (theta_i - mean)^2)`` (Efron 1982)."""
    finite = values[np.isfinite(values)]
    n = finite.size
    if n < 2 or n < values.size:
        return None
    return float(np.sqrt((n - 1) / n * ((finite - finite.mean()) ** 2).sum()))


def bca_interval(
    replicates: FloatArray, estimate: float, jackknife: FloatArray, confidence: float = 0.95
) -> tuple[float | None, float | None, int]:
    """Bias-corrected and accelerated bootstrap interval (Efron 1987).

    Bias correction ``z0`` from the share of replicates below the estimate, acceleration from
    the jackknife values (Efron & Tibshirani 1993, ch. 14). Falls back to the percentile
    interval when either is undefined (all replicates on one side, constant jackknife).
    """
    from scipy.stats import norm  # lazy: scipy.stats costs ~0.3 s at start-up

    check_confidence(confidence)
    values = np.asarray(replicates, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if finite.size < 2:
        return None, None, int(finite.size)
    below = (np.sum(finite < estimate) + 0.5 * np.sum(finite == estimate)) / finite.size
    jack = np.asarray(jackknife, dtype=np.float64)
    jack = jack[np.isfinite(jack)]
    d = jack.mean() - jack if jack.size else jack
    denom = 6.0 * float((d**2).sum()) ** 1.5
    if not 0.0 < below < 1.0 or denom <= 0.0:
        return percentile_interval(finite, confidence)
    z0 = float(norm.ppf(below))
    acc = float((d**3).sum()) / denom
    tail = (1.0 - confidence) / 2.0
    probs = []
    for zq in (norm.ppf(tail), norm.ppf(1.0 - tail)):
        shifted = z0 + zq
        probs.append(float(norm.cdf(z0 + shifted / (1.0 - acc * shifted))))
    low, high = np.quantile(finite, probs)
    return float(low), float(high), int(finite.size)


#: Batches the resamples are split into to estimate the Monte Carlo error of an interval's
#: endpoints (:func:`endpoint_mc_error`).
MC_BATCHES = 10
#: Fewer resamples than this give no Monte Carlo error (batches of fewer than 20).
MIN_MC_RESAMPLES = 20 * MC_BATCHES


def endpoint_mc_error(
    replicates: FloatArray,
    endpoints: Callable[[FloatArray], tuple[float | None, float | None, int]],
    batches: int = MC_BATCHES,
) -> float | None:
    """Monte Carlo standard error of a bootstrap interval's endpoints (the larger of the two).

    The resamples are split into ``batches`` equal batches and the interval is computed on
    each; an endpoint's variance over ``B`` resamples is about ``batches`` times smaller than
    over ``B / batches``, so its standard error is the batches' standard deviation over
    ``sqrt(batches)`` (batch means, e.g. Efron & Tibshirani 1993, ch. 19). None with fewer
    than 20 resamples per batch or an undefined endpoint.
    """
    values = np.asarray(replicates, dtype=np.float64)
    size = values.size // batches
    if size < 20:
        return None
    lows, highs = [], []
    for b in range(batches):
        low, high, _ = endpoints(values[b * size : (b + 1) * size])
        if low is None or high is None:
            return None
        lows.append(low)
        highs.append(high)
    spread = max(float(np.std(lows, ddof=1)), float(np.std(highs, ddof=1)))
    return spread / float(np.sqrt(batches))


# --------------------------------------------------------------------------- warnings

#: Agreement intervals on fewer units than this carry a warning.
MIN_UNITS = 50
#: Chance-corrected coefficients (kappa, alpha, AC1...) on fewer units than this carry a
#: warning: measured coverage of nominal-95% BCa intervals at n = 50 was 0.92 at kappa 0.86
#: and 0.81 at 0.92, at n = 100 0.95-0.97 (bench/bench_coverage.py, docs/statistics.md).
KAPPA_MIN_UNITS = 100
#: Cluster-bootstrap intervals on fewer clusters than this carry a warning.
MIN_CLUSTERS = 20
#: Cluster-bootstrap intervals whose units are worth fewer equal-sized clusters than this
#: (Kish's effective number, ``(sum d_c)**2 / sum d_c**2``) carry a warning: a few large
#: questions holding most units. Set from bench/bench_coverage.py part C (docs/statistics.md):
#: with heavy-tailed question sizes the studentized interval covers at least 0.93 wherever
#: neither this nor MIN_CLUSTERS fires.
MIN_EFFECTIVE_CLUSTERS = 15
#: Recall/precision intervals resting on fewer positives than this carry a warning.
MIN_POSITIVES = 10
#: compare's percentile intervals of a recall/F1 difference: at 10-14 positives they covered
#: 0.934 (recall) and 0.911 in t20s2c's run, at 15 or more 0.946 (docs/statistics.md).
DIFF_MIN_POSITIVES = 15
#: Kappa-type intervals that reach within CEILING_MARGIN of the top of the scale, or whose
#: estimate is at least CEILING, on fewer than CEILING_UNITS units, are "near the ceiling":
#: measured coverage 0.81 at n = 50, kappa = 0.92 (bench/bench_coverage.py, docs/statistics.md).
CEILING = 0.9
#: An interval at most this wide is zero-width: a standard error that is 0 but for rounding
#: (Cohen's kappa with one rater constant: exactly 0, computed 2.6e-8, so [-0.000, 0.000]
#: was shown without the warning that the same zero-width interval of Conger's carried).
ZERO_WIDTH = 1e-6
CEILING_MARGIN = 0.02
CEILING_UNITS = 100


def interval_warning(
    value: float | None,
    low: float | None,
    high: float | None,
    *,
    n: int | None = None,
    min_n: int = MIN_UNITS,
    n_clusters: int | None = None,
    effective_clusters: float | None = None,
    n_positives: int | None = None,
    min_positives: int = MIN_POSITIVES,
    bounds: tuple[float, float] = (-1.0, 1.0),
    ceiling: float | None = None,
    ceiling_units: int | None = CEILING_UNITS,
    resamples: int | None = None,
) -> str | None:
    """Why an interval may mislead, or None: every reason found, joined by '; '.

    Reasons: no interval; zero width; fewer than ``min_n`` units; fewer than
    :data:`MIN_CLUSTERS` clusters, and (``effective_clusters``) units worth fewer than
    :data:`MIN_EFFECTIVE_CLUSTERS` equal clusters (below MIN_CLUSTERS clusters, fewer than
    15/20 of their count: one cluster, or ten equal ones, are not "concentrated"); fewer than
    ``min_positives`` positives;
    an estimate on the boundary of its range; with ``ceiling`` (kappa-type statistics) on fewer than
    ``ceiling_units`` units (:data:`CEILING_UNITS`; None: any number, as for Wald intervals,
    which cover 0.88-0.93 there even with 100-400 units), an estimate at or above ``ceiling``
    or an upper bound within :data:`CEILING_MARGIN` of the top of the scale; a bootstrap
    interval from fewer than :data:`MIN_MC_RESAMPLES` ``resamples`` (its endpoints near their
    extremes, no Monte Carlo error: 95% intervals from 5 / 20 covered 0.61 / 0.83).
    """
    if value is None:
        return None
    reasons: list[str] = []
    if low is None or high is None:
        reasons.append("no interval")
    elif high - low <= ZERO_WIDTH:
        reasons.append("zero-width interval")
    if n is not None and n < min_n:
        reasons.append(f"only {n} units (< {min_n})")
    if n_clusters is not None and n_clusters < MIN_CLUSTERS:
        reasons.append(f"only {n_clusters} clusters (< {MIN_CLUSTERS})")
    if (
        effective_clusters is not None
        and effective_clusters < MIN_EFFECTIVE_CLUSTERS
        # below 20 clusters, only where sizes differ as much (10 equal ones are worth 10: not
        # concentrated; one question holding 20 of 29 positives of 10 is, worth 2.1)
        and (
            n_clusters is None
            or effective_clusters < n_clusters * MIN_EFFECTIVE_CLUSTERS / MIN_CLUSTERS
        )
    ):
        reasons.append(
            f"units concentrated in few clusters: worth {effective_clusters:.1f} equal ones "
            f"(< {MIN_EFFECTIVE_CLUSTERS})"
        )
    if n_positives is not None and n_positives < min_positives:
        reasons.append(f"only {n_positives} positives (< {min_positives})")
    if value <= bounds[0] + 1e-12 or value >= bounds[1] - 1e-12:
        reasons.append(f"estimate on the boundary ({value:g})")
    elif (
        ceiling is not None
        and (n is None or ceiling_units is None or n < ceiling_units)
        and (value >= ceiling or (high is not None and high >= bounds[1] - CEILING_MARGIN))
    ):
        reasons.append(
            "near the ceiling: Wald's interval under-covers there (use the bootstrap)"
            if ceiling_units is None
            else f"near the ceiling on fewer than {ceiling_units} units"
        )
    if resamples and resamples < MIN_MC_RESAMPLES and low is not None:
        reasons.append(
            f"interval from only {resamples} bootstrap resamples (fewer than "
            f"{MIN_MC_RESAMPLES}: its endpoints are near the resamples' extremes; 2000 or more "
            "for a 95% interval)"
        )
    return "; ".join(reasons) or None


# --------------------------------------------------------------------------- clusters (questions)


def cluster_rng(seed: int, cluster_ids: Sequence[str]) -> np.random.Generator:
    """Return the generator for a bootstrap over ``cluster_ids`` (order-independent)."""
    check_seed(seed)
    digest = int(content_hash(sorted(cluster_ids), length=16), 16)
    return np.random.default_rng([int(seed), digest])


def multinomial_weights(n_clusters: int, resamples: int, rng: np.random.Generator) -> IntArray:
    """Draw a ``(resamples, n_clusters)`` matrix of cluster multiplicities.

    Row ``r`` counts how often each of the ``n_clusters`` clusters is drawn when drawing
    ``n_clusters`` times uniformly with replacement; every row sums to ``n_clusters``. The
    draws are uniform indices counted with one ``bincount``, much faster than
    ``Generator.multinomial`` for many clusters; every bootstrap here draws its weights so.
    """
    if n_clusters < 1 or resamples < 1:
        raise ValueError("need at least one cluster and one resample")
    draws = rng.integers(0, n_clusters, size=(resamples, n_clusters), dtype=np.int64)
    draws += (np.arange(resamples, dtype=np.int64) * n_clusters)[:, None]  # in place
    counts = np.bincount(draws.ravel(), minlength=resamples * n_clusters)
    del draws
    return counts.reshape(resamples, n_clusters).astype(np.int64, copy=False)


def percentile_intervals(
    values: FloatArray, confidence: float
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Percentile interval over axis 0, ignoring NaN (undefined) resamples.

    Returns ``(low, high, n_defined)``, each of shape ``values.shape[1:]``; ``low`` and
    ``high`` are NaN where no resample is defined (callers turn that into an explicit
    undefined value). Quantiles use numpy's default linear interpolation.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    alpha = (1.0 - confidence) / 2.0
    defined = ~np.isnan(values)
    n_defined = defined.sum(axis=0).astype(np.int64)
    low = np.full(values.shape[1:], np.nan)
    high = np.full(values.shape[1:], np.nan)
    if values.shape[0] == 0:
        return low, high, n_defined
    # Sort with NaN last, then interpolate inside the defined prefix of each column.
    ordered = np.sort(values, axis=0)
    for q, out in ((alpha, low), (1.0 - alpha, high)):
        pos = q * (n_defined - 1)
        lo_i = np.floor(pos).astype(np.int64)
        hi_i = np.minimum(lo_i + 1, np.maximum(n_defined - 1, 0))
        lo_i = np.maximum(lo_i, 0)
        frac = pos - np.floor(pos)
        a = np.take_along_axis(ordered, lo_i[None, ...], axis=0)[0]
        b = np.take_along_axis(ordered, hi_i[None, ...], axis=0)[0]
        res = a + (b - a) * frac
        out[...] = np.where(n_defined > 0, res, np.nan)
    return low, high, n_defined
