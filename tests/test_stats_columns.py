"""Which columns of a ratings table are raters and which holds the unit ids (issue 14, pt 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from failcodes.errors import InputError
from failcodes.ratingsio import read_ratings_frame
from failcodes.stats import tables as tb
from tests.conftest import reference_data

REF = "agreement-reference"
FLEISS_1971 = reference_data(REF, "fleiss1971_diagnoses_30patients_6raters.csv")
RAW_4RATERS = reference_data(REF, "gwet2014_raw_4raters_12units.csv")


def _by_stat(stdout: str) -> dict[str, dict[str, object]]:
    return {r["statistic"]: r for r in json.loads(stdout)}


def test_fleiss_1971_patient_column_through_cli(agree) -> None:
    code, out, err = agree(FLEISS_1971, "--format", "json")
    assert code == 0, err
    rows = _by_stat(out)
    # Fleiss (1971), Psychological Bulletin 76:378, kappa = 0.430 (0.286 with `patient` as a rater)
    assert round(float(rows["fleiss"]["value"]), 3) == 0.430
    assert rows["fleiss"]["n_raters"] == 6 and rows["fleiss"]["n_units"] == 30
    assert rows["fleiss"]["unit_column"] == "patient"


def test_irrcac_raw4raters_units_column_through_cli(agree) -> None:
    code, out, err = agree(RAW_4RATERS, "--format", "json")
    assert code == 0, err
    rows = _by_stat(out)
    # irrCAC cac.raw4raters (Gwet 2014, p. 120): Fleiss 0.76117, SE 0.15302; alpha 0.743;
    # AC1 0.77544, SE 0.14295 (irrCAC doctest, afergadis/irrCAC irrCAC/raw.py)
    assert round(float(rows["fleiss"]["value"]), 5) == 0.76117
    assert round(float(rows["fleiss"]["se"]), 5) == 0.15302
    assert round(float(rows["krippendorff"]["value"]), 3) == 0.743
    assert round(float(rows["gwet_ac1"]["value"]), 5) == 0.77544
    assert round(float(rows["gwet_ac1"]["se"]), 5) == 0.14295
    assert rows["fleiss"]["unit_column"] == "Units"


def test_table_output_names_the_unit_column(agree) -> None:
    code, out, _ = agree(FLEISS_1971, "--stat", "fleiss")
    assert code == 0
    assert "unit ids: column 'patient' (named like an id)" in out


def test_id_column_recognised_by_its_values(tmp_path: Path, agree) -> None:
    frame = read_ratings_frame(FLEISS_1971).rename(columns={"patient": "p"})
    path = tmp_path / "renamed.csv"
    frame.to_csv(path, index=False)
    code, out, err = agree(path, "--stat", "fleiss", "--format", "json")
    assert code == 0, err
    row = json.loads(out)[0]
    assert row["unit_column"] == "p" and round(row["value"], 3) == 0.430


def test_rating_columns_are_not_taken_for_ids() -> None:
    # column a is all-distinct, but its values are the categories the others use: a rater
    frame = pd.DataFrame({"a": ["1", "0", "2"], "b": ["1", "1", "2"], "c": ["0", "1", "2"]})
    choice = tb.choose_columns(frame)
    assert choice.unit_column is None and choice.raters == ["a", "b", "c"]


def test_ambiguous_table_is_refused_with_one_line(tmp_path: Path, agree) -> None:
    path = tmp_path / "two_ids.csv"
    path.write_text("patient,case,r1,r2\n1,a,1,1\n2,b,2,1\n3,c,2,2\n")
    code, _, err = agree(path)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "--unit-column" in err and "--raters" in err
    code, out, err = agree(
        path, "--unit-column", "patient", "--raters", "r1,r2", "--format", "json"
    )
    assert code == 0, err
    assert json.loads(out)[0]["unit_column"] == "patient"


def test_named_raters_keep_other_columns_out() -> None:
    frame = read_ratings_frame(FLEISS_1971)
    table = tb.ratings_from_frame(frame, raters=["rater1", "rater2"])
    assert table.raters == ["rater1", "rater2"] and table.unit_column == "patient"
    with pytest.raises(InputError, match="both the unit id and a rater"):
        tb.choose_columns(frame, unit_column="patient", raters=["patient", "rater1"])


def test_covariate_columns_are_not_read_as_raters(tmp_path: Path, agree) -> None:
    # A researcher's table: ratings beside an age, a ward name and a passage count. Those
    # share no value with the ratings (1..5), so they are not raters and Fleiss (1971)'s
    # published kappa 0.430 (Psychological Bulletin 76:378) is unchanged.
    frame = read_ratings_frame(FLEISS_1971)
    frame.insert(1, "age", [20 + 2 * i for i in range(len(frame))])
    frame["ward"] = ["cardiology" if i % 2 else "oncology" for i in range(len(frame))]
    frame["n_passages"] = [10 + i % 7 for i in range(len(frame))]
    path = tmp_path / "with_covariates.csv"
    frame.to_csv(path, index=False)
    code, out, err = agree(path, "--stat", "fleiss", "--format", "json")
    assert code == 0, err
    row = json.loads(out)[0]
    assert round(float(row["value"]), 3) == 0.430 and row["n_raters"] == 6
    code, out, _ = agree(path, "--stat", "fleiss")
    assert "not raters (they share no value with the raters' ratings): age, ward, n_passages" in out


def test_same_number_spelled_two_ways_links_raters() -> None:
    # a column with a blank reads as floats (1.0) beside an all-integer one (1): same ratings
    frame = pd.DataFrame({"a": [1.0, 2.0, None], "b": [1, 2, 2], "note": ["x", "x", "z"]})
    choice = tb.choose_columns(frame, unit_column=None)
    assert choice.raters == ["a", "b"] and choice.left_out == ("note",)


def test_two_groups_of_columns_of_one_size_are_ambiguous(tmp_path: Path, agree) -> None:
    path = tmp_path / "two_scales.csv"
    path.write_text("case,r1,r2,s1,s2\n1,yes,no,a,b\n2,no,no,b,b\n3,yes,yes,a,a\n")
    code, _, err = agree(path)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "r1, r2 / s1, s2" in err and "--raters" in err


def test_raters_chosen_on_the_whole_table_not_per_group(tmp_path: Path, agree) -> None:
    # In group B rater r3 said only "c", which no other rater used there; over the whole
    # table r3 shares values with r1/r2, so it stays a rater in every group (3 raters).
    path = tmp_path / "grouped.csv"
    path.write_text(
        "case,dim,r1,r2,r3\n1,A,a,a,c\n2,A,c,c,c\n3,A,a,c,a\n4,B,a,b,c\n5,B,b,a,c\n6,B,a,a,c\n"
    )
    code, out, err = agree(path, "--stat", "percent", "--by", "dim", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["n_raters"] for r in rows] == [3, 3]
    # group B, agreeing rater pairs per unit: (a,b,c) 0/3, (b,a,c) 0/3, (a,a,c) 1/3 -> 1/9
    assert rows[1]["value"] == pytest.approx(1 / 9)
