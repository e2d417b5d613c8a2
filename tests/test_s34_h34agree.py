"""Session 34 (h34agree): agree / agreement_table red team (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import failcodes
from failcodes.commands import agree
from failcodes.errors import InputError

_ROUNDS = {
    "unit": [1, 2, 3, 1, 2, 3],
    "r1": [1, 2, 1, 2, 1, 2],
    "r2": [1, 2, 2, 2, 1, 2],
}


@pytest.mark.parametrize("name", ["batch", "t", "pass", "sitting"])
def test_a_round_column_under_another_name_is_named_as_the_rounds(
    tmp_path: Path, name: str
) -> None:
    """unit, r1, r2, batch with batch 1, 2 beside ratings 1, 2: batch (no name of ROUND_NAMES)
    was read as a rater, so the repeated units were told to pivot (--long / frame.pivot), not
    --by batch. Now found by content (a rater column named unlike r1, r2 holding units 1-3
    once under each value); --by batch reads round 1 Cohen 0.4 (r1 1,2,1 vs r2 1,2,2: p_o
    2/3, p_e 4/9, by hand) and round 2 1.0 (identical)."""
    frame = pd.DataFrame({**_ROUNDS, name: [1, 1, 1, 2, 2, 2]})
    path = tmp_path / "rounds.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InputError) as caught:
        agree.AgreeRequest(file=path).run()
    assert f"told apart by {name!r} (1, 2)" in str(caught.value)
    assert f"--by {name} gives each {name}'s agreement apart" in str(caught.value)
    rows = agree.AgreeRequest(file=path, by=name, stat=["cohen"]).run().rows
    assert [r["value"] for r in rows] == pytest.approx([0.4, 1.0])
    with pytest.raises(InputError) as caught:
        failcodes.ratings_from_frame(frame.set_index("unit"))
    assert f"ratings_from_frame(frame[frame[{name!r}] == value]" in str(caught.value)


def test_a_third_rater_on_repeated_units_is_no_round(tmp_path: Path) -> None:
    """A third rater named unlike r1, r2 whose ratings do not hold each unit once per value
    (senior 1, 1 for unit 1) is not named as rounds: the refusal still says --long."""
    frame = pd.DataFrame({**_ROUNDS, "senior": [1, 2, 1, 1, 2, 2]})
    path = tmp_path / "repeated.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InputError) as caught:
        agree.AgreeRequest(file=path).run()
    assert "told apart" not in str(caught.value)
    assert "--long RATER_COLUMN,RATING_COLUMN" in str(caught.value)
