"""Vectorised cluster (by-question) bootstrap over per-cluster counts.

The cluster bootstrap resamples *questions* with replacement, keeping all the sentences (or
claims) of a drawn question together. Resample ``r`` is fully described by a weight vector
``w[r, q]`` = how many times question ``q`` was drawn; ``w[r]`` follows
Multinomial(Q, 1/Q, ..., 1/Q). Any additive statistic (here confusion counts) of resample
``r`` is then ``w[r] @ counts``, so all resamples of all systems are one matrix product:

    (resamples x questions) @ (questions x (systems * cells)) -> resamples x (systems * cells)

Seed scheme (shared by the fast path, the slow reference in the tests and the benchmark):
``cluster_rng(seed, cluster_ids)`` seeds a PCG64 generator from the user's seed and a hash of
the sorted cluster ids, and :func:`multinomial_weights` draws one uniform question index per
draw slot (``rng.integers(0, Q, size=(R, Q))``) and counts them per row. Systems evaluated on
the same questions therefore get the same resamples (a paired bootstrap), whatever other
systems are in the run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from failcodes.hashing import content_hash

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def cluster_rng(seed: int, cluster_ids: Sequence[str]) -> np.random.Generator:
    """Return the generator for a bootstrap over ``cluster_ids`` (order-independent)."""
    digest = int(content_hash(sorted(cluster_ids), length=16), 16)
    return np.random.default_rng([int(seed), digest])


def multinomial_weights(n_clusters: int, resamples: int, rng: np.random.Generator) -> IntArray:
    """Draw a ``(resamples, n_clusters)`` matrix of cluster multiplicities.

    Row ``r`` counts how often each of the ``n_clusters`` clusters is drawn when drawing
    ``n_clusters`` times uniformly with replacement; every row sums to ``n_clusters``.
    """
    if n_clusters < 1 or resamples < 1:
        raise ValueError("need at least one cluster and one resample")
    draws = rng.integers(0, n_clusters, size=(resamples, n_clusters), dtype=np.int64)
    flat = draws + (np.arange(resamples, dtype=np.int64) * n_clusters)[:, None]
    counts = np.bincount(flat.ravel(), minlength=resamples * n_clusters)
    return counts.reshape(resamples, n_clusters).astype(np.int64)


def resample_counts(weights: IntArray, counts: npt.NDArray[np.int64]) -> FloatArray:
    """Return ``weights @ counts`` for counts of shape ``(clusters, ...)``.

    The result has shape ``(resamples, ...)``; it is computed as one float64 matrix product
    (exact for counts below 2**53).
    """
    n_clusters = counts.shape[0]
    flat = counts.reshape(n_clusters, -1).astype(np.float64)
    out: FloatArray = weights.astype(np.float64) @ flat
    return out.reshape((weights.shape[0], *counts.shape[1:]))


def percentile_interval(
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
