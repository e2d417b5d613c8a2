"""Session 28, lead: small refusals left by the session's helpers (issue 30)."""

from __future__ import annotations

import pandas as pd
import pytest

import failcodes as fc
from failcodes.errors import ConfigError


def test_a_statistic_asked_twice_from_python_is_refused_as_agree_refuses_it() -> None:
    # t28red2's left item: agreement_table(table, ["cohen", "cohen"]) gave two equal rows,
    # where `failcodes agree --stat cohen,cohen` is refused ("--stat names 'cohen' twice").
    frame = pd.DataFrame({"r1": ["a", "a", "b", "b"], "r2": ["a", "b", "b", "b"]})
    table = fc.ratings_from_frame(frame)
    with pytest.raises(ConfigError, match="statistics names 'cohen' twice"):
        fc.agreement_table(table, ["cohen", "cohen"])
    # asked once, it is the one row: Cohen by hand, po = 3/4, pe = (2/4 * 1/4) + (2/4 * 3/4)
    # = 1/2, kappa = (0.75 - 0.5) / (1 - 0.5) = 0.5
    (row,) = fc.agreement_table(table, ["cohen"])
    assert row.value == pytest.approx(0.5)
