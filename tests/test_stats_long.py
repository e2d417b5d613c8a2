"""Long ratings tables (one row per unit and rater): the layout many annotation tools export.

Each table here is a published wide table melted to long form, so the published values must
come out unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from failcodes.errors import InputError
from failcodes.ratingsio import read_ratings_frame
from failcodes.stats import tables as tb
from tests.cli_helpers import run_cli
from tests.conftest import reference_data

REF = "agreement-reference"
FLEISS_1971 = reference_data(REF, "fleiss1971_diagnoses_30patients_6raters.csv")
RAW_4RATERS = reference_data(REF, "gwet2014_raw_4raters_12units.csv")


@pytest.fixture
def agree(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``agree(*args) -> (exit code, stdout, stderr)`` of ``failcodes agree ARGS``."""
    capsys.readouterr()
    return lambda *args: run_cli(["agree", *map(str, args)], capsys)


def _long(wide: Path, tmp_path: Path, *, rater: str, rating: str, name: str) -> Path:
    frame = read_ratings_frame(wide)
    unit = str(frame.columns[0])  # patient / Units
    long = frame.melt(id_vars=[unit], var_name=rater, value_name=rating).dropna()
    long = long.sample(frac=1.0, random_state=1)  # export order is not unit order
    path = tmp_path / name
    long.to_csv(path, index=False)
    return path


def test_fleiss_1971_long_is_found_by_its_column_names(tmp_path: Path, agree) -> None:
    path = _long(FLEISS_1971, tmp_path, rater="annotator", rating="diagnosis", name="f.csv")
    code, out, err = agree(path, "--stat", "fleiss", "--format", "json")
    assert code == 0, err
    (row,) = json.loads(out)
    # Fleiss (1971), Psychological Bulletin 76:378, kappa = 0.430
    assert round(float(row["value"]), 3) == 0.430
    assert (row["n_units"], row["n_raters"], row["unit_column"]) == (30, 6, "patient")
    code, out, _ = agree(path, "--stat", "fleiss")
    assert "long table (one row per unit and rater): raters from column 'annotator'" in out


def test_missing_cells_are_absent_rows(tmp_path: Path, agree) -> None:
    # irrCAC cac.raw4raters (Gwet 2014, p. 120) has empty cells: in long form those rows are
    # simply absent. Fleiss 0.76117 (SE 0.15302), alpha 0.743 as for the wide table.
    path = _long(RAW_4RATERS, tmp_path, rater="who", rating="category", name="g.csv")
    code, out, err = agree(path, "--long", "who,category", "--format", "json")
    assert code == 0, err
    rows = {r["statistic"]: r for r in json.loads(out)}
    assert round(float(rows["fleiss"]["value"]), 5) == 0.76117
    assert round(float(rows["fleiss"]["se"]), 5) == 0.15302
    assert round(float(rows["krippendorff"]["value"]), 3) == 0.743


def test_long_by_dimension(tmp_path: Path, agree) -> None:
    path = _long(FLEISS_1971, tmp_path, rater="coder", rating="code", name="f.csv")
    one = pd.read_csv(path)
    # the same ratings under two dimensions: each gives the published 0.430
    both = pd.concat([one.assign(dimension="scope"), one.assign(dimension="trust")])
    both.to_csv(path, index=False)
    code, out, err = agree(path, "--by", "dimension", "--stat", "fleiss", "--format", "json")
    assert code == 0, err
    got = {r["dimension"]: round(float(r["value"]), 3) for r in json.loads(out)}
    assert got == {"scope": 0.430, "trust": 0.430}


def test_a_pair_rated_twice_names_its_line(tmp_path: Path, agree) -> None:
    path = tmp_path / "l.csv"
    path.write_text("item,rater,code\n1,a,yes\n1,b,no\n2,a,no\n1,a,no\n")
    code, _, err = agree(path)
    assert code == 2
    assert err.strip().endswith(
        "l.csv:5, field 'code': unit '1' is rated by 'a' twice (several codes per unit and "
        "rater, one row each? --sets ';' joins them into one code set)"
    )


def test_wide_duplicate_ids_point_to_long(tmp_path: Path, agree) -> None:
    # no column named like a rater: not detected, and the error says what to give
    path = tmp_path / "l.csv"
    path.write_text("item,who,code\n1,a,yes\n1,b,no\n2,a,no\n2,b,no\n")
    code, _, err = agree(path)
    assert code == 2 and "--long RATER_COLUMN,RATING_COLUMN" in err
    code, out, err = agree(path, "--long", "who,code", "--stat", "percent", "--format", "json")
    assert code == 0, err
    # unit 1: yes/no disagree; unit 2: no/no agree -> 1/2
    assert json.loads(out)[0]["value"] == 0.5


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (["who"], "--long takes two columns"),
        (["who", "who"], "--long takes two columns"),
        (["who", "nope"], "no column 'nope' for --long"),
    ],
)
def test_bad_long_columns(given: list[str], message: str) -> None:
    frame = pd.DataFrame({"item": ["1", "1"], "who": ["a", "b"], "code": ["x", "y"]})
    with pytest.raises(InputError, match=message):
        tb.long_columns(frame, given)


def test_detection_needs_one_rater_named_column_and_repeated_units() -> None:
    frame = pd.DataFrame({"item": ["1", "1"], "rater": ["a", "b"], "code": ["x", "y"]})
    assert tb.detect_long(frame) == tb.LongColumns(
        "item", "rater", "code", "one row per unit and rater"
    )
    assert tb.detect_long(frame.iloc[:1]) is None  # units do not repeat: a wide table
    assert tb.detect_long(frame.assign(extra="z")) is None  # a third column: not sure
