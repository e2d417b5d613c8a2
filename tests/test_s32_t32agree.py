"""Session 32, helper t32agree: agree on designs the other tests do not use (a long table with
a time column, two marks of one rating, each rater's codes in slot columns, ...).

Each test names what main gave and the value worked by hand (or by an independent package)
beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import AGREE_JSON, ratings_file, run_cli

#: unit, rater, code and the time each row was made (an annotation tool's export): r1 and r2
#: agree on u1 (A, A) and u3 (B, B), not on u2 (B, A).
LONG_WITH_TIME = (
    "unit,rater,code,created_at\n"
    "u1,r1,A,2026-01-01T10:00:00Z\nu1,r2,A,2026-01-02T09:30:00Z\n"
    "u2,r1,B,2026-01-01T10:01:00Z\nu2,r2,A,2026-01-02T09:31:00Z\n"
    "u3,r1,B,2026-01-01T10:02:00Z\nu3,r2,B,2026-01-02T09:32:00Z\n"
)


@pytest.mark.parametrize("column", ["created_at", "when"])
def test_a_long_table_with_a_time_column_is_read_as_long_and_the_column_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    """Before: refused 'unit 'u1' is on two rows ...: one row per unit and rater? name the
    columns with --long RATER_COLUMN,RATING_COLUMN (no rater column? add one ...)' though
    the rater column is there (a 'seconds' column was read as long). Now read as long, the
    time column said as not read. By hand: 2 of 3 units alike, percent 2/3; Cohen: r1 A 1/3,
    B 2/3, r2 A 2/3, B 1/3, chance 2/9 + 2/9 = 4/9, (2/3 - 4/9) / (5/9) = 0.4."""
    path = ratings_file(tmp_path, LONG_WITH_TIME.replace("created_at", column))
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 0, err
    rows = {r["statistic"]: r for r in json.loads(out)}
    assert rows["percent"]["value"] == pytest.approx(2 / 3)
    assert rows["cohen"]["value"] == pytest.approx(0.4)
    assert rows["percent"]["n_units"] == 3
    assert f"not read (the ratings are column 'code'): {column}" in rows["percent"]["notes"][0]


def test_a_long_table_not_found_as_long_names_its_rater_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two columns beside the rater (code and severity): which is the rating is the user's
    to say. Before the refusal said 'no rater column? add one' beside a column 'rater'."""
    text = "unit,rater,code,severity\nu1,r1,A,1\nu1,r2,A,2\nu2,r1,B,1\nu2,r2,A,2\n"
    code, _, err = run_cli(["agree", str(ratings_file(tmp_path, text)), *AGREE_JSON], capsys)
    assert code == 2
    assert "no rater column" not in err
    assert (
        "one row per unit and rater? name the columns with --long rater,RATING_COLUMN (the "
        "ratings: one of code, severity; the other columns are not read)"
    ) in err


def test_two_marks_for_one_rating_in_a_long_table_of_code_sets_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """r1's rows 'none' and '-' for u2 (no code, and a missing rating) were joined into the
    set {none, -}: exact-set percent 0.5 beside r2's 'none' (read 'none' alone: 3/4), a
    per-code row for '-', exit 0. Which mark holds no reader can tell: refused."""
    text = (
        "unit,rater,code\nu1,r1,A\nu1,r2,A\nu2,r1,none\nu2,r1,-\nu2,r2,none\n"
        "u3,r1,B\nu3,r2,B\nu4,r1,A\nu4,r2,B\n"
    )
    path = ratings_file(tmp_path, text)
    code, out, err = run_cli(["agree", str(path), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 2, out
    assert err.strip() == (
        f"failcodes: error: {path}:5, field 'code': '-' beside 'none' (line 4) for unit 'u2' "
        "and rater 'r1': their rows join into one code set, and two marks for one rating (no "
        "code, or a missing rating?): keep the row that holds (no code given: 'none' alone; a "
        "missing rating: no row)"
    )
