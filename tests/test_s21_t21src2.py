"""Session 21 (t21src2): one check sequence where two paths ran the same checks.

The Python API's :func:`ratings_from_frame` restated ``agree``'s wide-table checks
(:func:`ratings_tables`) in an order of its own, and lacked the refusal of one set of codes
joined two ways (bb26071 landed it on the CLI's path only).
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from failcodes.errors import InputError
from failcodes.stats.tables import ratings_from_frame, ratings_tables


def _refusals(frame: pd.DataFrame) -> tuple[str, str]:
    """The Python API's and the CLI's (``ratings_tables``) refusals of ``frame``."""
    with pytest.raises(InputError) as api:
        ratings_from_frame(frame)
    with pytest.raises(InputError) as cli:
        ratings_tables(frame)
    return str(api.value), str(cli.value)


def test_api_refuses_codes_joined_two_ways_as_the_cli_does() -> None:
    # units 1 and 3: the codes {x, y} from both raters, written 'x;y' and 'y;x'; x and y
    # never alone, so _no_code_sets does not see a set. Read as one category each, the
    # raters agree on unit 2 only: percent 1/4 = 0.25, where as sets they agree on 1, 2 and
    # 3: 3/4 = 0.75 (main's ratings_from_frame gave 0.25 with no word; the CLI refused)
    frame = pd.DataFrame(
        {"unit": ["1", "2", "3", "4"], "a": ["x;y", "z", "y;x", "z"], "b": ["y;x", "z", "x;y", "w"]}
    )
    api, cli = _refusals(frame)
    assert api == cli
    assert "'y;x' holds the codes of 'x;y' (line 2, column 'a')" in api


def test_api_checks_in_the_cli_order() -> None:
    # unit '2' on two rows and a date on line 5: agree names the unit on two rows (its
    # one_row_per_unit runs before no_dates); main's ratings_from_frame named the date
    frame = pd.DataFrame(
        {
            "unit": ["1", "2", "2", "3"],
            "a": ["yes", "no", "yes", dt.date(2024, 1, 2)],
            "b": ["yes", "no", "no", "yes"],
        }
    )
    api, cli = _refusals(frame)
    assert api == cli
    assert "unit '2' is on two rows (first at line 3)" in api
