"""Shapes from redteam10's outside check (issue 30): each failed before its fix."""

from __future__ import annotations

import pandas as pd
import pytest

import failcodes as fc
from failcodes.errors import InputError


def _percent(frame: pd.DataFrame) -> float:
    (row,) = fc.agreement_table(fc.ratings_from_frame(frame), ["percent"])
    assert row.value is not None
    return row.value


def test_api_frame_with_a_rating_in_another_case_is_refused() -> None:
    # r1 wrote 'Yes' on item 3 where everyone else wrote 'yes'. Read as one category the
    # raters agree on all 5 items (percent 5/5 = 1.0); read as written, 'Yes' and 'yes' were
    # two categories and item 3 a disagreement: 4/5 = 0.8, exit 0 (the CLI refuses the same
    # table in one line; the Python API did not).
    frame = pd.DataFrame(
        {
            "item": [1, 2, 3, 4, 5],
            "r1": ["yes", "no", "Yes", "yes", "no"],
            "r2": ["yes", "no", "yes", "yes", "no"],
        }
    )
    with pytest.raises(InputError) as err:
        fc.ratings_from_frame(frame)
    assert err.value.field == "r1"
    assert "'Yes' is 'yes'" in str(err.value)
    frame.loc[2, "r1"] = "yes"
    assert _percent(frame) == pytest.approx(1.0)  # 5/5


def test_api_frame_with_a_date_rating_is_refused() -> None:
    # an Excel column read by pandas: 1/2 became a date; as a category it matched only
    # another identical date
    frame = pd.DataFrame(
        {"item": [1, 2], "r1": [pd.Timestamp("2024-01-02"), "3"], "r2": ["1/2", "3"]}
    )
    with pytest.raises(InputError, match="date or time"):
        fc.ratings_from_frame(frame)
