"""Numeric input arrays of the statistics: coerced once, refused in one clear line."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from failcodes.errors import StatisticsError

FloatArray = npt.NDArray[np.float64]


def float_array(
    values: npt.ArrayLike, name: str, *, ndim: int, expect: str = "numeric", shape: str = ""
) -> FloatArray:
    """``values`` as a float64 array of ``ndim`` dimensions, else one StatisticsError.

    The error says ``{name} must be {expect}`` (values that are not numbers) or
    ``{name} must be {shape}`` (wrong number of dimensions; default ``"<ndim>-D"``).
    """
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StatisticsError(f"{name} must be {expect}: {exc}") from exc
    if arr.ndim != ndim:
        raise StatisticsError(f"{name} must be {shape or f'{ndim}-D'}, got shape {arr.shape}")
    return arr
