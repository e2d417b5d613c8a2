"""Ratings-table shapes of issue 30's outside check, session 10 (i36agree): each failed before.

Every value is worked by hand (the sum is beside it) or computed with statsmodels directly.
"""

from __future__ import annotations

import pandas as pd
import pytest

from failcodes.errors import InputError
from failcodes.stats.tables import ratings_from_frame


def test_the_python_api_names_both_lines_of_a_unit_on_two_rows() -> None:
    # ratings_from_frame (a frame of its own) checks one row per unit as the CLI does, in one
    # pass with the row without a unit id: before, its own check said 'duplicate unit ids:
    # ['2']' naming no line
    frame = pd.DataFrame({"item": ["1", "2", "2"], "r1": ["a", "b", "a"], "r2": ["a", "b", "b"]})
    with pytest.raises(InputError) as err:
        ratings_from_frame(frame, source="r.csv")
    assert str(err.value) == (
        "r.csv:4, field 'item': unit '2' is on two rows (first at line 3): one row per unit "
        "and rater? name the columns with --long RATER_COLUMN,RATING_COLUMN"
    )
