"""A fast subset of bench/bench_ppi_coverage.py: coverage of the reported corrected interval.

The bench runs the whole grid of issue 26 (1,080 designs x 2,000 replicates); these are the
designs the issue's review found under-covering, with the same simulation and 2,000 seeded
replicates each (Monte Carlo standard error of a coverage of 0.95: 0.005).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_ppi_coverage.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_ppi_coverage", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("sens", "spec", "n", "p", "plan", "units", "old"),
    [
        # the seed's hand check: 50 reviewed, an accurate judge; the old rule covered 0.755
        (0.95, 0.99, 50, 0.5, "uniform", 10_000, (0.70, 0.80)),
        # prevalence 0.3 with 100 reviewed: the old rule 0.888
        (0.95, 0.99, 100, 0.3, "uniform", 10_000, (0.85, 0.92)),
        # Table-8-like, stratified by the judge's code: the old rule 0.90-0.91
        (0.9, 0.95, 100, 0.145, "by-code", 100_000, (0.86, 0.93)),
        # a moderate judge with plenty of disagreements: no note, nominal coverage
        (0.8, 0.9, 400, 0.3, "uniform", 10_000, (0.93, 0.97)),
    ],
)
def test_reported_interval_covers_where_the_old_one_did_not(
    sens: float, spec: float, n: int, p: float, plan: str, units: int, old: tuple[float, float]
) -> None:
    bench = _bench()
    design = bench.Design(sens, spec, n, p, plan, units)
    result = bench.run_cell(np.random.default_rng([7, n]), design, 2000, 0.95)
    assert old[0] <= result.old <= old[1]  # the design is the one the review measured
    # at least 0.93; the exact parts make it conservative where the judge is accurate (0.9995
    # at the seed's hand check, 50 reviewed at prevalence 0.5), so no upper bound of 0.99
    assert result.corrected[0] >= 0.93
    # no interval carries a note now, and none is refused in these designs
    assert result.flag == 0 and result.cov_unflagged == result.corrected[0]
    # narrower than the human-only interval: the judge still helps
    assert result.corrected[1] < result.human[1]


def test_the_seed_regime_where_the_old_note_left_its_failures_unnoted() -> None:
    # A 0.8/0.9 judge, prevalence 0.05, 200 reviewed of 10,000 (bench --grid regime): the old
    # interval's note ("coverage not assured") fired in 91.75% of replicates, and the 165 it
    # left unnoted, the draws with unusually many disagreements, covered 0.745 (seed [7, 200]).
    # The interval reported now carries no note and covers 0.9695.
    bench = _bench()
    design = bench.Design(0.8, 0.9, 200, 0.05, "uniform", 10_000)
    result = bench.run_cell(np.random.default_rng([7, 200]), design, 2000, 0.95)
    assert result.post_flag > 0.9
    assert result.post_unflagged is not None and result.post_unflagged < 0.85
    assert result.flag == 0 and 0.93 <= result.corrected[0] <= 0.99
    assert result.corrected[1] < result.human[1]
