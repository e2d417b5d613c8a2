"""Data shapes an outside checker tried (redteam, 2026-12-02): each value computed by hand.

Every test here failed on the code before its fix: the tool printed a number that looked
right and was wrong, with exit 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from failcodes.cli.main import main


@dataclass
class Proc:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Callable[..., Proc]:
    """Run the CLI in-process (the root `main`, so errors exit 2 with one line)."""

    def _run(*args: str | Path) -> Proc:
        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return Proc(code, out.out, out.err)

    return _run


def _rows(out: str) -> dict[str, dict[str, object]]:
    return {r["statistic"]: r for r in json.loads(out)}


# ------------------------------------------------------ ratings written two ways (agree)

# A long table: two raters, three items. Written one way, every item is agreed on:
# item 1 yes/yes, item 2 no/no, item 3 no/no -> percent agreement 3/3 = 1.0, Cohen's kappa
# p_o = 1, p_e = (1/3)(1/3) + (2/3)(2/3) = 5/9 -> (1 - 5/9) / (1 - 5/9) = 1.0.
# Before the fix 'yes ' and 'No' were categories of their own: 4 categories, only item 3
# agreed, percent 1/3 = 0.333 with exit 0.
ONE_WAY = "item,rater,code\n1,ann1,yes\n1,ann2,yes\n2,ann1,no\n2,ann2,no\n3,ann1,no\n3,ann2,no\n"


def test_ratings_written_one_way_agree_fully(tmp_path: Path, run) -> None:
    path = tmp_path / "r.csv"
    path.write_text(ONE_WAY)
    res = run("agree", path, "--stat", "percent", "--stat", "cohen", "--bootstrap", "0",
              "--format", "json")  # fmt: skip
    assert res.returncode == 0, res.stderr
    rows = _rows(res.stdout)
    assert rows["percent"]["value"] == pytest.approx(1.0)
    assert rows["cohen"]["value"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("table", "line", "field", "needle"),
    [
        # a space after 'yes' on line 3 (item 1, ann2): was its own category
        (ONE_WAY.replace("1,ann2,yes\n", "1,ann2,yes \n"), 3, "code", "'yes '"),
        # 'No' on line 5 beside 'no' on line 4: was its own category
        (ONE_WAY.replace("2,ann2,no\n", "2,ann2,No\n"), 5, "code", "'no' (line 4"),
    ],
)
def test_a_rating_written_two_ways_is_refused(
    tmp_path: Path, run, table: str, line: int, field: str, needle: str
) -> None:
    path = tmp_path / "r.csv"
    path.write_text(table)
    res = run("agree", path, "--stat", "percent", "--bootstrap", "0")
    assert res.returncode == 2
    assert res.stdout == ""
    [err] = res.stderr.splitlines()
    assert err.startswith(f"failcodes: error: {path}:{line}, field '{field}': ")
    assert needle in err


def test_a_wide_table_with_a_rating_in_another_case_is_refused(tmp_path: Path, run) -> None:
    # wide: dr_a wrote 'Yes' on line 2 and 'yes' on line 3; read as given, Fleiss' kappa was
    # computed over three categories (yes, Yes, no)
    path = tmp_path / "w.csv"
    path.write_text("item,dr_a,dr_b\n1,Yes,yes\n2,yes,yes\n3,no,no\n")
    res = run("agree", path, "--bootstrap", "0")
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert err.startswith(f"failcodes: error: {path}:3, field 'dr_a': rating 'yes' is 'Yes'")
