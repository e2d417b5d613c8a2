"""Session 33 (h33agree2): agree's first-line clauses said from Python too (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import failcodes
from failcodes.commands import agree
from failcodes.errors import InputError


def _notes(frame: pd.DataFrame, stats: list[str], **kw: object) -> failcodes.Agreements:
    return failcodes.agreement_table(failcodes.ratings_from_frame(frame), stats, **kw)  # type: ignore[arg-type]


def test_a_constant_rater_is_said_from_python() -> None:
    """r1 'a' on all 5 units, r2 a,b,a,b,a: percent 3/5, Cohen 0 (p_o 0.6 = p_e 1 x 0.6, by
    hand) with no word in the notes, where agree's first line says it."""
    frame = pd.DataFrame({"r1": ["a"] * 5, "r2": ["a", "b", "a", "b", "a"]})
    res = _notes(frame, ["percent", "cohen"])
    assert [r.value for r in res] == pytest.approx([0.6, 0.0])
    assert any("r1 gave 'a' to all 5 units it rated" in n for n in res.notes)
    assert not any("of the ratings:" in n for n in res.notes)  # the skew is not said twice


def test_a_skewed_margin_is_said_from_python() -> None:
    """49 of 50 'no' from each rater, one 'yes' each on different units: percent 0.96, Cohen
    (0.96 - 0.9608) / (1 - 0.9608) = -0.0204 (p_e 0.98^2 + 0.02^2, by hand), no word."""
    r1 = ["no"] * 50
    r2 = ["no"] * 50
    r1[0], r2[1] = "yes", "yes"
    res = _notes(pd.DataFrame({"r1": r1, "r2": r2}), ["percent", "cohen", "pabak"])
    assert [r.value for r in res] == pytest.approx([0.96, -0.0008 / 0.0392, 0.92])
    said = "'no' is 98% of the ratings: cohen takes that skew as chance (cohen's chance "
    assert any(said + "agreement 0.961, observed 0.960)" in n for n in res.notes)
    assert any(n.endswith("gwet_ac1 and pabak beside do not") for n in res.notes)
    res = _notes(pd.DataFrame({"r1": r1, "r2": r2}), ["cohen"])
    assert any(n.endswith("gwet_ac1 and pabak (statistics=[...]) do not") for n in res.notes)


def test_two_identical_rater_columns_are_said_from_python() -> None:
    """dr_a pasted twice beside dr_b: Cohen dr_a vs its copy 1.0 (identical), Fleiss over the
    three raised; no word in the notes, where agree's first line says it."""
    a = ["x", "y"] * 5
    frame = pd.DataFrame({"dr_a": a, "dr_a (2)": a, "dr_b": ["x"] * 5 + ["y"] * 5})
    res = _notes(frame[["dr_a", "dr_a (2)"]], ["percent", "cohen"])
    assert [r.value for r in res] == pytest.approx([1.0, 1.0])
    res = _notes(frame, ["fleiss"])
    said = "dr_a and dr_a (2) gave the same rating to each of the 10 units both rated"
    assert any(said in n for n in res.notes)


def test_integer_codes_read_as_unordered_are_said_from_python() -> None:
    """1..3 read as nominal: r1 1,2,3,1,2,3, r2 1,2,3,2,3,1: p_o 0.5, p_e 1/3, Cohen 0.25 (by
    hand), no word that 1 against 2 counts as 1 against 3; with weights='linear' none."""
    frame = pd.DataFrame({"r1": [1, 2, 3, 1, 2, 3], "r2": [1, 2, 3, 2, 3, 1]})
    res = _notes(frame, ["cohen"])
    assert res[0].value == pytest.approx(0.25)
    said = (
        "the numbers 1, 2, 3 read as unordered categories (1 against 2 disagrees as much as "
        "against 3; level='ordinal' or weights='linear' for a scale)"
    )
    assert said in res.notes
    res = _notes(frame, ["cohen"], weights="linear")
    assert not any("unordered" in n for n in res.notes)


def test_a_round_column_read_as_a_rater_is_named_as_the_rounds(tmp_path: Path) -> None:
    """unit, r1, r2, round with round 1, 2 beside ratings 1, 2: round was read as a rater, so
    the repeated units were told to pivot (--long from agree, frame.pivot from Python), not
    --by round. Now both name the round column; --by round, and from Python one table per
    round without the round column, read round 1 Cohen 0.4 (r1 1,2,1 vs r2 1,2,2: p_o 2/3,
    p_e 4/9, by hand) and round 2 1.0 (identical)."""
    frame = pd.DataFrame(
        {
            "unit": [1, 2, 3, 1, 2, 3],
            "r1": [1, 2, 1, 2, 1, 2],
            "r2": [1, 2, 2, 2, 1, 2],
            "round": [1, 1, 1, 2, 2, 2],
        }
    )
    path = tmp_path / "rounds.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InputError) as caught:
        agree.AgreeRequest(file=path).run()
    assert "told apart by 'round' (1, 2)" in str(caught.value)
    assert "--by round gives each round's agreement apart" in str(caught.value)
    rows = agree.AgreeRequest(file=path, by="round", stat=["cohen"]).run().rows
    assert [r["value"] for r in rows] == pytest.approx([0.4, 1.0])
    indexed = frame.set_index("unit")
    with pytest.raises(InputError) as caught:
        failcodes.ratings_from_frame(indexed)
    way = "ratings_from_frame(frame[frame['round'] == value].drop(columns='round'))"
    assert way in str(caught.value)
    values = []
    for value in (1, 2):
        table = failcodes.ratings_from_frame(
            indexed[indexed["round"] == value].drop(columns="round")
        )
        assert table.raters == ["r1", "r2"]
        values.append(failcodes.agreement_table(table, ["cohen"])[0].value)
    assert values == pytest.approx([0.4, 1.0])
