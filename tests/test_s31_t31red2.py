"""Session 31, helper t31red2: agree / compare and the Python API on new designs (a tick box
exported as 'x' and blank, code sets whose blank cells meant 'no code', ...).

Each test names what main gave and the value worked by hand (or by an independent package)
beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import failcodes as fc
from tests.cli_helpers import run_cli

#: Two raters ticking a box on 20 units, exported 'x' / blank: r1 ticks u1-u6, r2 u1-u4, u7,
#: u8. Both tick 4, r1 alone 2, r2 alone 2, neither 12.
TICKS = [("x" if i <= 6 else "", "x" if i <= 4 or i in (7, 8) else "") for i in range(1, 21)]


def _write(path: Path, rows: list[tuple[str, ...]], header: tuple[str, ...]) -> Path:
    frame = pd.DataFrame(rows, columns=list(header[1:]))
    frame.insert(0, header[0], [f"u{i}" for i in range(1, len(rows) + 1)])
    frame.to_csv(path, index=False)
    return path


def test_a_tick_box_of_one_value_and_blanks_is_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: blank read as not rated left the 4 units both ticked: percent 1.000, every
    kappa 0/0, exit 0, and the first line said only 'missing ratings: r1 rated 6, r2 rated 6
    of 20 units'. Now the first line asks whether blank means 'not ticked'."""
    path = _write(tmp_path / "ticks.csv", TICKS, ("unit", "r1", "r2"))
    args = ["agree", str(path), "--bootstrap", "0"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    assert (
        "every rating given is 'x' (12 of 40 cells; the 28 others blank, read as not rated): "
        "a tick box, blank = not ticked? give the blank cells a code of their own (e.g. 0) to "
        "count them"
    ) in out.splitlines()[0]
    # the Python layer says it on the table too
    table = fc.ratings_from_frame(pd.read_csv(path, keep_default_na=False))
    assert any("every rating given is 'x'" in n for n in table.notes)
    # the way it names: blanks as 0. By hand, 20 units: agreement (4 + 12) / 20 = 0.8; each
    # rater ticks 6/20 = 0.3, chance 0.3^2 + 0.7^2 = 0.58; Cohen (0.8 - 0.58) / 0.42 = 11/21
    filled = _write(
        tmp_path / "filled.csv", [tuple(c or "0" for c in r) for r in TICKS], ("unit", "r1", "r2")
    )
    code, out, _ = run_cli(["agree", str(filled), "--bootstrap", "0", "--format", "json"], capsys)
    rows = {r["statistic"]: r["value"] for r in json.loads(out)}
    assert rows["percent"] == pytest.approx(0.8)
    assert rows["cohen"] == pytest.approx(11 / 21)
    # two values beside a skipped unit are no tick box (a control)
    two = _write(tmp_path / "two.csv", [("a", "a"), ("b", ""), ("b", "a")], ("unit", "r1", "r2"))
    code, out, _ = run_cli(["agree", str(two), "--bootstrap", "0"], capsys)
    assert code == 0
    assert "tick box" not in out.splitlines()[0]


def _sets(blank: bool) -> list[tuple[str, str]]:
    """100 units, codes X (r1 on u1, u2; r2 on u1, u3) and Y (r1 on u1-u50; r2 on u1-u45 and
    u51-u53); a unit with no code is blank, or 'none'."""
    rows = []
    for i in range(1, 101):
        one = ["X"] * (i in (1, 2)) + ["Y"] * (i <= 50)
        two = ["X"] * (i in (1, 3)) + ["Y"] * (i <= 45 or i in (51, 52, 53))
        empty = "" if blank else "none"
        rows.append((";".join(one) or empty, ";".join(two) or empty))
    return rows


def test_code_sets_whose_blank_cells_may_mean_no_code_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the blank cells (no code given, in a multi-label export) were read as not
    rated, said only as 'missing ratings: r1 rated 50, r2 rated 48 of 100 units': code Y read
    percent 1.000 and kappa 0/0 on the 45 units both gave codes. Now the first line says a
    blank is not 'no code'. With 'none' written (the way it names), by hand on 100 units:
    X: both 1, one only 2, neither 97: percent 0.98; chance 0.02^2 + 0.98^2 = 0.9608, Cohen
    0.0192 / 0.0392 = 0.489796; AC1 (Gwet 2008) pi = 0.02, chance 2 * 0.02 * 0.98 = 0.0392,
    (0.98 - 0.0392) / 0.9608 = 0.979184; PABAK (Byrt 1993) 2 * 0.98 - 1 = 0.96.
    Y: both 45, one only 8, neither 47: percent 0.92, chance 0.5 * 0.48 + 0.5 * 0.52 = 0.5,
    Cohen 0.84; AC1 pi 0.49, chance 0.4998, 0.4202 / 0.5002 = 0.840064; PABAK 0.84."""
    path = _write(tmp_path / "sets.csv", _sets(blank=True), ("unit", "r1", "r2"))
    args = ["agree", str(path), "--sets", ";", "--bootstrap", "0"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    assert (
        "102 blank cell(s) read as not rated, not as 'no code': a unit given no code needs a "
        "code of its own (e.g. 'none'), else the exact-set and per-code rows leave it out"
    ) in out.splitlines()[0]
    named = _write(tmp_path / "named.csv", _sets(blank=False), ("unit", "r1", "r2"))
    code, out, _ = run_cli(
        ["agree", str(named), "--sets", ";", "--bootstrap", "0", "--format", "json"], capsys
    )
    assert code == 0
    got = {(r.get("code"), r["statistic"]): r["value"] for r in json.loads(out)}
    assert got["X", "percent"] == pytest.approx(0.98)
    assert got["X", "cohen"] == pytest.approx(0.0192 / 0.0392)
    assert got["X", "gwet_ac1"] == pytest.approx(0.9408 / 0.9608)
    assert got["X", "pabak"] == pytest.approx(0.96)
    assert got["Y", "cohen"] == pytest.approx(0.84)
    assert got["Y", "gwet_ac1"] == pytest.approx(0.4202 / 0.5002)
    # exact-set, MASI and Jaccard alpha: nltk 3.10 AnnotationTask on the same sets
    # (binary_distance 0.8081372927, masi_distance 0.8187378009, jaccard_distance
    # 0.8241358995; kappa 0.8072474942)
    assert got[None, "cohen"] == pytest.approx(0.8072474942, abs=1e-9)
    alphas = [r["value"] for r in json.loads(out) if r["statistic"] == "krippendorff"][:3]
    assert alphas == pytest.approx([0.8081372927, 0.8187378009, 0.8241358995], abs=1e-9)


#: Two raters' code sets on 8 units (a list column, as a notebook keeps it).
LISTS = [
    (["X", "Y"], ["X", "Y"]),
    (["X"], ["X", "Y"]),
    (["Y"], ["Y"]),
    (["Y", "X"], ["Y"]),
    (["X"], ["X"]),
    (["Y"], ["X"]),
    (["X", "Y", "Z"], ["X", "Y"]),
    (["Z"], ["Z"]),
]


@pytest.mark.parametrize("sep", [",", ";"])
@pytest.mark.parametrize("writer", ["pandas", "json"])
def test_a_list_written_as_text_in_a_csv_cell_is_read_as_its_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sep: str, writer: str
) -> None:
    """pandas' to_csv writes a list cell as "['X', 'Y']" (json.dumps: '["X", "Y"]'). Before,
    under --sets ',' the cell was split into the codes "['X'" and "'Y']" ("['X']" a third):
    exact-set Cohen 0.308 on the 6-unit table (0.25 by hand), a per-code row for each fake
    code, exit 0; under --sets ';' it was refused ("cells are split on ';' only"). Now read as
    a JSONL list is. By hand, exact sets: agreement u1, u3, u5, u8 = 4/8; r1's sets XY 2, X 2,
    Y 2, XYZ 1, Z 1, r2's XY 3, Y 2, X 2, Z 1: chance (6 + 4 + 4 + 1) / 64 = 15/64, Cohen
    (32 - 15) / (64 - 15) = 17/49 (nltk AnnotationTask kappa 0.3469387755). Code X: r1 on 5,
    r2 on 5, both 4, neither 2: percent 6/8, chance 34/64, Cohen 14/30. Alpha: nltk 3.10
    AnnotationTask, binary 0.3814432990, masi 0.4530154278, jaccard 0.5023696682."""
    frame = pd.DataFrame(LISTS, columns=["r1", "r2"])
    if writer == "json":
        frame = frame.map(json.dumps)
    frame.insert(0, "unit", [f"u{i}" for i in range(1, 9)])
    path = tmp_path / "lists.csv"
    frame.to_csv(path, index=False)
    args = ["agree", str(path), "--sets", sep, "--bootstrap", "0", "--format", "json"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    rows = json.loads(out)
    assert sorted({r["code"] for r in rows if r.get("code")}) == ["X", "Y", "Z"]
    got = {(r.get("code"), r["statistic"], r["weights"]): r["value"] for r in rows}
    assert got[None, "percent", "none"] == pytest.approx(0.5)
    assert got[None, "cohen", "none"] == pytest.approx(17 / 49)
    assert got[None, "krippendorff", "none"] == pytest.approx(0.3814432990, abs=1e-9)
    assert got[None, "krippendorff", "masi"] == pytest.approx(0.4530154278, abs=1e-9)
    assert got[None, "krippendorff", "jaccard"] == pytest.approx(0.5023696682, abs=1e-9)
    assert got["X", "percent", "none"] == pytest.approx(0.75)
    assert got["X", "cohen", "none"] == pytest.approx(14 / 30)


def test_a_pair_with_units_is_not_said_to_have_none_when_a_third_system_skipped_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """sysB left every unit blank; sysA and sysC gave all 4. Before: the pair sysA vs sysC
    was undefined with 'no unit has an outcome for both systems' (the pairs are tested on the
    units every system has: none here), a false reason. Now it says so and names the way;
    that way tests the 4 units: b = 1 (u1: A 1, C 0), c = 1 (u2: A 0, C 1): two-sided
    mid-p P(|S| > 0) + P(S = 0) / 2 = 0.5 + 0.25 = 0.75 (classification._sign_flip_p)."""
    path = tmp_path / "out.csv"
    path.write_text("id,sysA,sysB,sysC\n1,1,,0\n2,0,,1\n3,1,,1\n4,0,,0\n", encoding="utf-8")
    code, out, _ = run_cli(["compare", str(path), "--format", "json"], capsys)
    assert code == 0
    tests = {t["comparison"]: t for t in json.loads(out)["tests"] if t["test"] == "mcnemar_midp"}
    assert tests["sysA vs sysC"]["undefined_reason"] == (
        "no unit has an outcome for every system (the pairs are tested on the units all 3 "
        "have; this pair has 4: --systems sysA,sysC tests it on them)"
    )
    assert tests["sysA vs sysB"]["undefined_reason"] == "no unit has an outcome for both systems"
    args = ["compare", str(path), "--systems", "sysA,sysC", "--format", "json"]
    code, out, _ = run_cli(args, capsys)
    pair = next(t for t in json.loads(out)["tests"] if t["test"] == "mcnemar_midp")
    assert (pair["n"], pair["p_value"]) == (4, pytest.approx(0.75))


def test_none_beside_a_code_in_a_code_set_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: 'none;X' was read as the set {none, X}, exit 0, and a per-code row for
    'none': exact-set percent 1/4 (u1 {X, Y}/{X} no, u2 {none, X}/{X} no, u3 {Y}/{Y} yes, u4
    {X}/{none} no). Now refused in one line naming the cell; with u2 written 'X' by hand, u2
    and u3 agree: 2/4."""
    path = tmp_path / "r.csv"
    path.write_text("unit,r1,r2\nu1,X;Y,X\nu2,none;X,X\nu3,Y,Y\nu4,X,none\n", encoding="utf-8")
    code, _, err = run_cli(["agree", str(path), "--sets", ";", "--bootstrap", "0"], capsys)
    assert code == 2
    assert "r.csv:3, field 'r1': 'none;X' holds 'none' beside other codes" in err
    path.write_text("unit,r1,r2\nu1,X;Y,X\nu2,X,X\nu3,Y,Y\nu4,X,none\n", encoding="utf-8")
    args = ["agree", str(path), "--sets", ";", "--bootstrap", "0", "--format", "json"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    assert json.loads(out)[0]["value"] == pytest.approx(2 / 4)


def test_one_level_written_two_ways_by_two_raters_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """r1 writes the middle level 'mid', r2 'medium' (neither ever writes the other's word).
    Before: four categories, 'mid' and 'medium' never agreeing, with no word: percent 4/10;
    r1 low 3, mid 4, high 3, r2 low 3, medium 5, high 2: chance .09 + .06 = .15, Cohen
    (.4 - .15) / .85 = 0.294. Now the first line asks; one word (by hand): percent 8/10,
    chance .09 + .4 * .5 + .06 = .35, Cohen (.8 - .35) / .65 = 9/13."""
    r1 = ["low", "low", "mid", "mid", "mid", "high", "high", "low", "mid", "high"]
    r2 = ["low", "medium", "medium", "medium", "medium", "high", "low", "low", "medium", "high"]
    path = _write(tmp_path / "r.csv", list(zip(r1, r2, strict=True)), ("unit", "r1", "r2"))
    args = ["agree", str(path), "--bootstrap", "0"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    assert (
        "'medium' (given by r2 alone) and 'mid' (by r1 alone) fall on the same 4 units: one "
        "category written two ways? (read as two, they never agree; write it one way)"
    ) in out.splitlines()[0]
    table = fc.ratings_from_frame(pd.read_csv(path))
    assert any("'medium' (given by r2 alone)" in n for n in table.notes)
    one = [
        ("mid" if a == "medium" else a, "mid" if b == "medium" else b)
        for a, b in zip(r1, r2, strict=True)
    ]
    path = _write(tmp_path / "one.csv", one, ("unit", "r1", "r2"))
    code, out, _ = run_cli(["agree", str(path), "--bootstrap", "0", "--format", "json"], capsys)
    got = {r["statistic"]: r["value"] for r in json.loads(out)}
    assert (got["percent"], got["cohen"]) == (pytest.approx(0.8), pytest.approx(9 / 13))
