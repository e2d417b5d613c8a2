"""Python's number syntax groups digits with ``_`` (PEP 515): ``float("0_4")`` is 4.0 and
``float("1_0")`` 10.0. Readers that called float() on cell text read a support score ``0_4``
as 4.0 and a rating ``1_0`` as the category 10, exit 0; they now refuse it in one line
(session 31, t31us). Each expected value below is counted by hand from the rows written.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from failcodes.errors import ConfigError, InputError
from failcodes.ingest import AdapterOptions, get_adapter
from failcodes.stats.tables import ratings_from_frame

GENERIC = get_adapter("generic")
MAP = {"prob": ("verdict",)}


def _read(tmp_path: Path, rows: str, threshold: str) -> list[tuple[str, str]]:
    path = tmp_path / "minicheck.csv"
    path.write_text(rows)
    extra = {"verdict_threshold": threshold}
    options = AdapterOptions(column_map=MAP, extra=extra, system="minicheck")
    return [(t.claim_id, t.verdict.value) for t in GENERIC.read([path], options).traces]


def test_a_score_written_with_an_underscore_is_refused_naming_its_line(tmp_path: Path) -> None:
    # c2's score 0_4 is below 0.5 as a sheet reads it (0.4 or no number); float() read 4.0,
    # so on main c2 came out supported: [("c1", "supported"), ("c2", "supported")]
    rows = "claim_id,claim,prob\nc1,A.,0.91\nc2,B.,0_4\n"
    with pytest.raises(InputError) as info:
        _read(tmp_path, rows, "0.5")
    assert (info.value.line, info.value.field) == (3, "verdict")  # header line 1, c2 line 3
    assert "got '0_4': an underscore is no part of a number (it was read as 4)" in str(info.value)
    # the same rows with 0.4 written plainly: c1 0.91 >= 0.5 supported, c2 0.4 < 0.5 not
    plain = rows.replace("0_4", "0.4")
    assert _read(tmp_path, plain, "0.5") == [("c1", "supported"), ("c2", "no_evidence")]


def test_a_threshold_written_with_an_underscore_is_refused(tmp_path: Path) -> None:
    # verdict_threshold=0_5 was 5.0: both 0.91 and 0.4 fell below it (no_evidence, no_evidence)
    rows = "claim_id,claim,prob\nc1,A.,0.91\nc2,B.,0.4\n"
    with pytest.raises(ConfigError, match=r"verdict_threshold='0_5': expected a number, e\.g\. "):
        _read(tmp_path, rows, "0_5")


def test_a_rating_written_with_an_underscore_is_refused_naming_unit_and_rater() -> None:
    # r1 gives 1, 2, 1_0 beside r2's 1, 2, 1: on main three categories (1, 2, 10), the third
    # unit a disagreement (percent 2/3); 1_0 is no rating any sheet reads, so refused
    frame = pd.DataFrame(
        {"unit": ["u1", "u2", "u3"], "r1": ["1", "2", "1_0"], "r2": ["1", "2", "1"]}
    )
    with pytest.raises(InputError) as info:
        ratings_from_frame(frame, unit_column="unit")
    assert info.value.field == "r1"
    assert "rating '1_0' of unit 'u3' is not a number: an underscore is no part" in str(info.value)


def test_text_codes_with_underscores_are_still_codes() -> None:
    # codes that are no numbers ('low_risk') are text categories as before: 2 of 3 units agree
    frame = pd.DataFrame(
        {"unit": ["u1", "u2", "u3"], "r1": ["low_risk", "high_risk", "low_risk"],
         "r2": ["low_risk", "high_risk", "high_risk"]}
    )  # fmt: skip
    from failcodes.numbertext import underscore_clause  # new in t31us

    table = ratings_from_frame(frame, unit_column="unit")
    assert table.labels == ["high_risk", "low_risk"]
    assert underscore_clause("low_risk") == "an underscore is no part of a number"
    read = underscore_clause("1_000")
    assert read == "an underscore is no part of a number (it was read as 1000)"
    assert underscore_clause("0.4") is None


def test_a_weight_cell_written_with_an_underscore_is_refused(tmp_path: Path) -> None:
    # agree --weights FILE: row 2's '0_5' was the weight 5.0 (main: [[1.0, 0.5], [5.0, 1.0]],
    # a credit past full agreement); a half credit is 0.5 written plainly
    from failcodes.ratingsio import read_weight_matrix

    path = tmp_path / "w.csv"
    path.write_text("1,0.5\n0_5,1\n")
    with pytest.raises(InputError) as info:
        read_weight_matrix(path)
    assert info.value.line == 2
    assert "an underscore is no part of a number (it was read as 5)" in str(info.value)
    path.write_text("1,0.5\n0.5,1\n")
    assert read_weight_matrix(path) == [[1.0, 0.5], [0.5, 1.0]]


def test_a_category_written_with_an_underscore_is_refused() -> None:
    # categories=['1', '2', '1_0'] beside ratings 1, 2, 10: main read 1_0 as the category 10
    # (u3's 10 against 1 a disagreement, percent 2/3, no word)
    frame = pd.DataFrame(
        {"unit": ["u1", "u2", "u3"], "r1": ["1", "2", "10"], "r2": ["1", "2", "1"]}
    )
    with pytest.raises(ConfigError, match=r"'1_0' is not a number: an underscore is no part"):
        ratings_from_frame(frame, unit_column="unit", categories=["1", "2", "1_0"])
    table = ratings_from_frame(frame, unit_column="unit", categories=["1", "2", "10"])
    assert table.categories.tolist() == [1.0, 2.0, 10.0]
