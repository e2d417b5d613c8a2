"""Vectorised bootstrap over units.

Every statistic in :mod:`failcodes.stats` that is resampled is written as a function of
*sums over units* of per-unit columns (coincidence counts, agreement contributions, category
proportions...). A bootstrap resample is then a vector of unit multiplicities ``w`` (how often
each unit was drawn), and the resampled sums for all resamples at once are one matrix
product ``W @ X`` with ``W`` of shape (resamples, units) and ``X`` of shape (units, columns).
No statistic is recomputed in a Python loop per resample.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from failcodes.errors import StatisticsError

FloatArray = npt.NDArray[np.float64]

#: Resamples drawn per block: bounds memory at ``chunk x units`` float64 values.
DEFAULT_CHUNK = 256


def resampling_weights(
    n_units: int,
    n_resamples: int,
    rng: np.random.Generator,
    *,
    chunk: int = DEFAULT_CHUNK,
) -> Iterator[FloatArray]:
    """Yield blocks of multinomial unit multiplicities, shape (block, n_units).

    Each row counts how often each unit is drawn when ``n_units`` units are sampled with
    replacement (a Multinomial(n_units, 1/n_units) vector). Rows are drawn as uniform indices
    and counted with one ``bincount`` per block, which is much faster than
    ``Generator.multinomial`` for many units.
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
        idx = rng.integers(0, n_units, size=(block, n_units))
        idx += (np.arange(block) * n_units)[:, None]
        counts = np.bincount(idx.ravel(), minlength=block * n_units)
        yield counts.reshape(block, n_units).astype(np.float64)
        done += block


def resampled_sums(
    columns: FloatArray,
    n_resamples: int,
    rng: np.random.Generator,
    *,
    chunk: int = DEFAULT_CHUNK,
    compress: bool = True,
) -> FloatArray:
    """Return the column sums of ``columns`` (units x c) under each resample: (resamples x c).

    With ``compress`` (the default), units whose per-unit rows are identical are pooled
    first: summing Multinomial(n, 1/n) unit weights over groups of identical rows gives
    exactly Multinomial(n, group size / n) group weights, so when the rows take few distinct
    values (categorical ratings by a handful of raters: at most C(q + m, m) count patterns)
    one draw per pattern replaces one per unit, with the same bootstrap distribution. When
    fewer than half the rows are duplicates the dense (resamples x units) path is used.
    """
    cols = np.asarray(columns, dtype=np.float64)
    if cols.ndim != 2:
        raise StatisticsError(f"per-unit columns must be 2-D (units x columns), got {cols.ndim}-D")
    n = cols.shape[0]
    if n < 1:
        raise StatisticsError("cannot bootstrap: no units")
    if n_resamples < 1:
        raise StatisticsError(f"number of bootstrap resamples must be >= 1, got {n_resamples}")
    if compress and n > 1:
        grouped = _identical_rows(cols)
        if grouped is not None:
            patterns, sizes = grouped
            counts = rng.multinomial(n, sizes / n, size=n_resamples)
            pooled: FloatArray = counts.astype(np.float64) @ patterns
            return pooled
    out = np.empty((n_resamples, cols.shape[1]), dtype=np.float64)
    start = 0
    for w in resampling_weights(cols.shape[0], n_resamples, rng, chunk=chunk):
        out[start : start + w.shape[0]] = w @ cols
        start += w.shape[0]
    return out


def _identical_rows(cols: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int64]] | None:
    """Distinct rows and their multiplicities, or None if under half the rows repeat.

    Rows are keyed by a fixed random projection (one 1-D sort instead of a lexicographic
    one) and the grouping is then verified exactly, so a key collision can never merge two
    different rows: it only sends the data down the dense path.
    """
    n = cols.shape[0]
    key = cols @ np.random.default_rng(0x5EED).standard_normal(cols.shape[1])
    _, first, inverse, sizes = np.unique(
        key, return_index=True, return_inverse=True, return_counts=True
    )
    if 2 * first.size > n:
        return None
    patterns = cols[first]
    if not np.array_equal(patterns[inverse], cols):
        return None
    return patterns, sizes


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
    return np.random.default_rng(seed)
