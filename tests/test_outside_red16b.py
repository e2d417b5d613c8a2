"""Outside red-team of agreement and review, session 16 (t16red2).

Each test states the input, what failcodes gave before the fix, and the value computed by
hand (or published) beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import AGREE_JSON, run_cli

# a long table where a rater gives several codes to a unit, one row each: unit 1 both {x, y},
# unit 2 a {x} b {y}, unit 3 a {z} b {x, z}, unit 4 both {y}
SEVERAL = (
    "unit,rater,code\n1,a,x\n1,a,y\n1,b,x\n1,b,y\n2,a,x\n2,b,y\n3,a,z\n3,b,z\n3,b,x\n4,a,y\n4,b,y\n"
)


def test_a_long_table_of_several_codes_per_unit_and_rater_is_read_as_code_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was refused "unit '1' is rated by 'a' twice" with no way through; the refusal now
    names --sets, and --sets ';' joins a (unit, rater) pair's rows into one code set."""
    table = tmp_path / "l.csv"
    table.write_text(SEVERAL, encoding="utf-8")
    code, _, err = run_cli(["agree", str(table), "--bootstrap", "0"], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:3, field 'code': unit '1' is rated by 'a' twice (several "
        "codes per unit and rater, one row each? --sets ';' joins them into one code set)"
    )
    code, out, err = run_cli(["agree", str(table), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 0, err
    rows = {(r["statistic"], r["weights"]): r for r in json.loads(out)}
    # exact sets: agree on units 1 and 4 -> p_o 2/4; margins a {x,y},{x},{z},{y}, b {x,y},{y},
    # {x,z},{y}: p_e = (1/4)(1/4) + (1/4)(2/4) = 3/16; kappa = (1/2 - 3/16)/(13/16) = 5/13
    assert rows[("percent", "none")]["value"] == pytest.approx(0.5)
    assert rows[("cohen", "none")]["value"] == pytest.approx(5 / 13)
    assert rows[("cohen", "none")]["n_units"] == 4
    assert (
        "3 row(s) gave one more code to a (unit, rater) pair: each pair's codes joined into "
        "one code set on ';'" in rows[("cohen", "none")]["notes"]
    )
    # the same sets written wide, one cell each: the same rows
    wide = tmp_path / "w.csv"
    wide.write_text("unit,a,b\n1,x;y,x;y\n2,x,y\n3,z,x;z\n4,y,y\n", encoding="utf-8")
    code, out, err = run_cli(["agree", str(wide), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 0, err
    same = {(r["statistic"], r["weights"]): r["value"] for r in json.loads(out)}
    assert same == {k: r["value"] for k, r in rows.items()}


def test_agree_prints_the_level_its_intervals_are_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agree --confidence 0.5`: the table's column said "95% CI" over a 50% interval."""
    table = tmp_path / "w.csv"
    table.write_text("unit,a,b\n1,x,x\n2,x,y\n3,y,y\n4,y,y\n5,x,x\n6,y,x\n", encoding="utf-8")
    args = ["agree", str(table), "--bootstrap", "0", "--confidence", "0.5", "--stat", "percent"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    header, row = out.splitlines()[2], out.splitlines()[4]
    assert "50% CI" in header and "95%" not in out
    # p_o 4/6, Wald se sqrt(p(1 - p)/(n - 1)) = sqrt((2/9)/5) = 0.2108, z(0.75) 0.6745:
    # 0.667 -+ 0.142 = [0.524, 0.809]
    assert "[0.524, 0.809] wald" in row


# three raters, c and b leaving units blank: units 3 and 5 rated by a alone
MISSING3 = "unit,a,b,c\n1,x,x,x\n2,x,y,\n3,y,,\n4,y,y,x\n5,x,,\n6,y,x,y\n"


def test_single_rated_units_in_the_margins_are_counted_in_their_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Units rated by one rater enter Gwet's missing-data margins (the first line says so),
    but every row said n_single_rated 0 (ratings tables, and `agree --missing-data` on
    annotations): the reader of the JSON saw 4 units and nothing else."""
    table = tmp_path / "m.csv"
    table.write_text(MISSING3, encoding="utf-8")
    code, out, err = run_cli(["agree", str(table), *AGREE_JSON], capsys)
    assert code == 0, err
    fleiss = next(r for r in json.loads(out) if r["statistic"] == "fleiss")
    # Gwet (2014) missing-data form: p_a over the 4 units with 2+ ratings: (1 + 0 + 1/3 + 1/3)
    # / 4 = 5/12; pi_x = mean over all 6 units of r_ix / r_i = (1 + 1/2 + 0 + 1/3 + 1 + 1/3)/6
    # = 19/36; p_e = (19/36)^2 + (17/36)^2
    p_e = (19 / 36) ** 2 + (17 / 36) ** 2
    assert fleiss["value"] == pytest.approx((5 / 12 - p_e) / (1 - p_e))
    assert (fleiss["n_units"], fleiss["n_single_rated"]) == (4, 2)
    # annotations: the judge coded 6 units, alice 4 of them; with --missing-data the 2 units
    # the judge coded alone enter the margins, and are counted as before without it
    from failcodes.annotations import CoderKind
    from tests.test_report_review import _ann

    judge = ["exact_entity", "exact_entity", "partial_entity", "irrelevant", "irrelevant"]
    alice = ["exact_entity", "partial_entity", "partial_entity", "irrelevant"]
    anns = [_ann(f"u{i}", c, "judge", CoderKind.HEURISTIC) for i, c in enumerate([*judge, *judge])]
    anns = anns[:6] + [_ann(f"u{i}", c, "alice", CoderKind.HUMAN) for i, c in enumerate(alice)]
    path = tmp_path / "a.jsonl"
    path.write_text("".join(a.model_dump_json() + "\n" for a in anns), encoding="utf-8")
    for extra in ((), ("--missing-data",)):
        code, out, err = run_cli(["agree", str(path), *AGREE_JSON, *extra], capsys)
        assert code == 0, err
        percent = next(
            r for r in json.loads(out) if r["scope"] == "dimension" and r["statistic"] == "percent"
        )
        # agree on u0, u2, u3 of the 4 both coded
        assert percent["value"] == pytest.approx(3 / 4)
        assert (percent["n_units"], percent["n_single_rated"]) == (4, 2), extra
