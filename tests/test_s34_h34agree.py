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


_AB = pd.DataFrame({"unit": [1, 2, 3, 4, 5, 6], "r1": list("aabbab"), "r2": list("abbbaa")})
_COUNTING = ["percent", "gwet_ac1", "brennan_prediger"]


def test_the_category_set_is_said_from_python(tmp_path: Path) -> None:
    """r1 a,a,b,b,a,b vs r2 a,b,b,b,a,a: p_o 4/6. On the 2 given (a, b): AC1 p_e
    (0.5 x 0.5) x 2 / (q - 1) = 0.5, (2/3 - 0.5) / 0.5 = 1/3; Brennan-Prediger (2/3 - 1/2) /
    (1/2) = 1/3. With c declared by the columns' categorical type (q 3): AC1 p_e 0.5 / 2 =
    0.25, (2/3 - 0.25) / 0.75 = 5/9; Brennan-Prediger (2/3 - 1/3) / (2/3) = 1/2 (Gwet 2014,
    by hand). agree said which set it counted on its first line; agreement_table's notes had no
    word, and a frame of a Parquet file's categorical columns read 5/9 from Python where agree
    on the file reads 1/3."""
    res = failcodes.agreement_table(failcodes.ratings_from_frame(_AB), _COUNTING)
    assert [r.value for r in res] == pytest.approx([2 / 3, 1 / 3, 1 / 3])
    said = "category set: the 2 given (a, b); gwet_ac1, brennan_prediger count them"
    assert any(n.startswith(said) for n in res.notes)
    assert any("ratings_from_frame(frame, categories=[...]) gives the full" in n for n in res.notes)
    table = failcodes.ratings_from_frame(_AB, categories=["a", "b", "c"])
    res = failcodes.agreement_table(table, _COUNTING)
    assert [r.value for r in res] == pytest.approx([2 / 3, 5 / 9, 1 / 2])
    said = "category set: the 3 of categories=[...], 1 given by no rater (c): gwet_ac1, "
    assert any(n.startswith(said) for n in res.notes)
    typed = _AB.astype({r: pd.CategoricalDtype(["a", "b", "c"]) for r in ("r1", "r2")})
    path = tmp_path / "typed.parquet"
    typed.to_parquet(path)
    res = failcodes.agreement_table(failcodes.ratings_from_frame(pd.read_parquet(path)), _COUNTING)
    assert [r.value for r in res] == pytest.approx([2 / 3, 5 / 9, 1 / 2])
    said = "category set: the 3 the rater columns' categorical type declares, 1 given by no "
    assert any(n.startswith(said) and "categories=['a', 'b']" in n for n in res.notes)
    rows = agree.AgreeRequest(file=path, stat=_COUNTING).run().rows
    assert [r["value"] for r in rows] == pytest.approx([2 / 3, 1 / 3, 1 / 3])
    assert "the column type declares 1 more never given (c)" in rows[0]["notes"][0]
    res = failcodes.agreement_table(failcodes.ratings_from_frame(_AB), ["percent", "cohen"])
    assert not any("category set" in n for n in res.notes)  # nothing counts the categories


def test_a_code_first_one_hot_grid_names_the_raters_columns_per_code(tmp_path: Path) -> None:
    """a_r1, a_r2, b_r1, b_r2, c_r1, c_r2 (code first, rater last, 0/1): the refusal told
    --raters a_r1,b_r1,c_r1 (if a, b, c are the raters), which compares r1's three codes with
    each other (Fleiss -0.350, exit 0). Now it names code a's two raters' columns: --raters
    a_r1,a_r2 reads r1 1,1,0,0,1,0 vs r2 1,1,1,0,1,1: percent 4/6, Cohen (2/3 - 1/2) / (1/2)
    = 1/3 (p_e 0.5 x 5/6 + 0.5 x 1/6, by hand). The rater-first grid keeps its hint."""
    sets = [("ab", "a"), ("a", "a"), ("b", "ab"), ("c", "c"), ("ac", "ac"), ("b", "a")]
    code_first = pd.DataFrame(
        {
            f"{c}_{r}": [int(c in s[i]) for s in sets]
            for c in "abc"
            for i, r in enumerate(["r1", "r2"])
        }
    )
    code_first.insert(0, "unit", range(1, 7))
    path = tmp_path / "grid.csv"
    code_first.to_csv(path, index=False)
    with pytest.raises(InputError) as caught:
        agree.AgreeRequest(file=path).run()
    assert "--raters a_r1,a_r2 (if r1, r2 are the raters)" in str(caught.value)
    rows = agree.AgreeRequest(file=path, raters="a_r1,a_r2", stat=["percent", "cohen"]).run().rows
    assert [r["value"] for r in rows] == pytest.approx([2 / 3, 1 / 3])
    with pytest.raises(InputError) as caught:
        failcodes.ratings_from_frame(code_first)
    assert "raters=['a_r1', 'a_r2'] (if r1, r2 are the raters)" in str(caught.value)
    rater_first = code_first.rename(columns=lambda c: "_".join(c.split("_")[::-1]))
    rater_first.to_csv(path, index=False)
    with pytest.raises(InputError) as caught:
        agree.AgreeRequest(file=path).run()
    assert "--raters r1_a,r2_a (if r1, r2 are the raters)" in str(caught.value)


def test_an_adjudication_of_two_raters_is_said_beside_them(tmp_path: Path) -> None:
    """alice, bob and key (their adjudication: alice and bob's rating where they agree, one
    of theirs where not) on 30 units: key read as a third rater, Fleiss 0.663 for alice and
    bob's 0.495 (statsmodels fleiss_kappa, aggregate_raters), with no word (the shared level
    p < 0.0033 needs more units: 0.8^20 = 0.0115). Now the first line asks, as for four
    columns: never departing where they agree (p < 0.05) and siding with one of them where
    they differ. Said, not left out: the values stay."""
    alice = "caaaacbbababbbaaccbabbbbbbbbcc"
    bob = "ccbaacabcaababaaccaabbcbccbbcc"
    key = "ccaaacabcaabbbaaccbabbbbcbbbcc"
    frame = pd.DataFrame({"unit": range(1, 31), "alice": list(alice), "bob": list(bob)})
    frame["key"] = list(key)
    path = tmp_path / "adjudicated.csv"
    frame.to_csv(path, index=False)
    result = agree.AgreeRequest(file=path, stat=["fleiss"]).run()
    assert result.rows[0]["value"] == pytest.approx(0.6631736526946105)
    said = "key equals the row-wise majority of the other columns on 20 of 20 rows"
    assert said in result.notes[0]
    assert (
        "a consensus of alice and bob? read here as a rater (--raters alice,bob"
        in (result.notes[0])
    )
    rows = agree.AgreeRequest(file=path, raters="alice,bob", stat=["fleiss"]).run().rows
    assert rows[0]["value"] == pytest.approx(0.4945240101095197)
    table = failcodes.ratings_from_frame(frame)
    assert any("a consensus of alice and bob?" in n for n in table.notes)
    # a third rater who once gives neither's rating where they differ (unit 2: 'b' for a/c)
    frame.loc[1, "key"] = "b"
    frame.to_csv(path, index=False)
    assert "a consensus" not in agree.AgreeRequest(file=path, stat=["fleiss"]).run().notes[0]


def test_units_rated_once_and_skipped_units_are_said_from_python() -> None:
    """r1 a,b,a,b,a,b,a,a; r2 skips units 4 and 8: percent 5/6 and Cohen 2/3 on the 6 both
    rated (p_e (4x3 + 2x3)/36 = 0.5, by hand); Fleiss 0.6614 in Gwet's missing-data form, the
    two units rated once in its margins (pi_a = 4.5/8, p_e 0.5078: (5/6 - 0.5078) / 0.4922, by
    hand), where statsmodels' fleiss_kappa on the complete rows reads 0.657. agree's first
    line said both; agreement_table's notes had no word."""
    frame = pd.DataFrame(
        {"unit": range(1, 9), "r1": list("abababaa"), "r2": [*"abb", None, *"aba", None]}
    )
    res = failcodes.agreement_table(
        failcodes.ratings_from_frame(frame), ["percent", "cohen", "fleiss"]
    )
    pi_a = 4.5 / 8
    chance = pi_a**2 + (1 - pi_a) ** 2
    assert [r.value for r in res] == pytest.approx([5 / 6, 2 / 3, (5 / 6 - chance) / (1 - chance)])
    assert (
        "2 units rated by one rater only ('4', '8') enter the chance-agreement margins"
        in (res.notes[1])
    )
    assert "missing ratings: r2 rated 6 of 8 units (a unit enters with two or more ratings)" in (
        res.notes
    )


def test_ordinal_words_read_as_unordered_are_said(tmp_path: Path) -> None:
    """r1 low,medium,high,low,medium,high,low,medium vs r2 low,high,high,medium,medium,
    medium,low,low: unweighted Cohen 0.238, quadratic 0.590 (scikit-learn cohen_kappa_score)
    on the scale given; the first line said nothing of low/medium/high read as unordered."""
    r1 = ["low", "medium", "high", "low", "medium", "high", "low", "medium"]
    r2 = ["low", "high", "high", "medium", "medium", "medium", "low", "low"]
    frame = pd.DataFrame({"unit": range(1, 9), "r1": r1, "r2": r2})
    path = tmp_path / "ordinal.csv"
    frame.to_csv(path, index=False)
    result = agree.AgreeRequest(file=path, stat=["cohen"]).run()
    assert result.rows[0]["value"] == pytest.approx(0.23809523809523814)
    said = "the words low, medium, high read as unordered categories (low against medium"
    assert said in result.notes[0]
    assert (
        "--categories low,medium,high with --level ordinal or --weights linear" in (result.notes[0])
    )
    weighted = agree.AgreeRequest(
        file=path, stat=["cohen"], categories="low,medium,high", weights="quadratic"
    ).run()
    assert weighted.rows[0]["value"] == pytest.approx(0.5897435897435898)
    assert "read as unordered" not in weighted.notes[0]
    res = failcodes.agreement_table(failcodes.ratings_from_frame(frame), ["cohen"])
    assert any(
        said in n and "categories=['low', 'medium', 'high']) with level='ordinal'" in n
        for n in res.notes
    )
