"""The names the statistics accept (statistics, levels, weights, set distances), the bound.

Kept apart from :mod:`failcodes.stats.agreement` and :mod:`failcodes.stats.bootstrap`,
which import numpy: the CLI builds its choices from these, so ``agree --help`` loads no numpy.
"""

from __future__ import annotations

from typing import Literal, get_args

Level = Literal["nominal", "ordinal", "interval", "ratio"]
WeightsName = Literal["none", "linear", "quadratic"]
StatisticName = Literal[
    "percent",
    "cohen",
    "fleiss",
    "conger",
    "krippendorff",
    "gwet_ac1",
    "gwet_ac2",
    "brennan_prediger",
    "pabak",
]
STATISTICS: tuple[str, ...] = get_args(StatisticName)
LEVELS: tuple[str, ...] = get_args(Level)
WEIGHTS: tuple[str, ...] = get_args(WeightsName)
SetDistanceName = Literal["masi", "jaccard"]
SET_DISTANCES: tuple[str, ...] = get_args(SetDistanceName)

#: Most resamples (or permutations) a command takes: far beyond the 2,000-10,000 intervals
#: need, and a typo (an extra digit, 1e20) is refused in one line instead of running for days.
MAX_RESAMPLES = 1_000_000
