"""agree --sets: each code's own agreement beside the exact-set rows (co-occurring codes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import AGREE_JSON, run_cli

#: u1 A {relevance, scope} B {relevance}; u2 A {scope} B {scope, currency};
#: u3 A {relevance} B {relevance}; u4 A {currency} B {scope}
LONG = (
    "unit,rater,code\n"
    "u1,A,relevance\nu1,A,scope\nu1,B,relevance\n"
    "u2,A,scope\nu2,B,scope\nu2,B,currency\n"
    "u3,A,relevance\nu3,B,relevance\n"
    "u4,A,currency\nu4,B,scope\n"
)


def _rows(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> list[dict[str, Any]]:
    path = tmp_path / "codes.csv"
    path.write_text(text)
    code, out, err = run_cli(["agree", str(path), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 0, err
    return list(json.loads(out))


def test_each_code_of_a_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows(tmp_path, capsys, LONG)
    whole = {r["statistic"] for r in rows if r.get("code") is None}
    assert {"percent", "cohen", "krippendorff"} <= whole  # the exact-set rows stay
    got = {(r["code"], r["statistic"]): r["value"] for r in rows if r.get("code")}
    # by hand (A, B over u1..u4):
    # relevance 1010 / 1010: percent 1, kappa 1, AC1 1, PABAK 1
    # scope 1100 / 0101: percent 2/4; p_e = .5*.5 + .5*.5 = .5 -> kappa 0; PABAK 2*.5-1 = 0;
    #   AC1 (Gwet 2008): pi = .5, p_e = 2*.5*.5 = .5 -> 0
    # currency 0001 / 0100: percent 2/4; p_e = .25*.25 + .75*.75 = .625 ->
    #   kappa (.5-.625)/.375 = -1/3; PABAK 0; AC1: pi = .25, p_e = 2*.25*.75 = .375 ->
    #   (.5-.375)/.625 = .2
    want = {
        ("relevance", "percent"): 1.0,
        ("relevance", "cohen"): 1.0,
        ("relevance", "gwet_ac1"): 1.0,
        ("relevance", "pabak"): 1.0,
        ("scope", "percent"): 0.5,
        ("scope", "cohen"): 0.0,
        ("scope", "gwet_ac1"): 0.0,
        ("scope", "pabak"): 0.0,
        ("currency", "percent"): 0.5,
        ("currency", "cohen"): -1 / 3,
        ("currency", "gwet_ac1"): 0.2,
        ("currency", "pabak"): 0.0,
    }
    assert got == pytest.approx(want, abs=1e-12)
    prev = {r["code"]: r["prevalence"] for r in rows if r.get("code")}
    assert prev["currency"] == {"A": 0.25, "B": 0.25}
    assert prev["relevance"] == {"A": 0.5, "B": 0.5}


def test_a_code_one_rater_gives_on_every_unit_is_said_beside_its_kappa(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A gives scope on all 3 units, B on 2: kappa is 0 by construction (A's margin is
    # its chance agreement), percent 2/3, PABAK 2*(2/3)-1 = 1/3
    text = "unit,A,B\n1,scope;x,scope\n2,scope,scope;x\n3,scope,x\n"
    rows = _rows(tmp_path, capsys, text)
    cohen = next(r for r in rows if r.get("code") == "scope" and r["statistic"] == "cohen")
    assert cohen["value"] == pytest.approx(0.0, abs=1e-12)
    assert cohen["beside"] == "(degenerate: prevalence A 1)"
    assert "A gave scope on every unit compared" in cohen["warning"]
    pabak = next(r for r in rows if r.get("code") == "scope" and r["statistic"] == "pabak")
    assert pabak["value"] == pytest.approx(1 / 3)


def test_three_raters_per_code_fleiss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # code a over 4 units, raters A B C: 111, 110, 000, 000 (1 = the set holds a)
    # Fleiss: P_i = (k(k-1))^-1 sum n_ij(n_ij-1): 1, 1/3, 1, 1 -> P = 5/6; p_a = 5/12,
    # p_e = (5/12)^2 + (7/12)^2 = 74/144 -> (5/6 - 74/144)/(1 - 74/144) = 46/70
    text = "unit,A,B,C\n1,a,a,a;b\n2,a;b,a,b\n3,b,b,b\n4,b,b,b\n"
    rows = _rows(tmp_path, capsys, text)
    got = {r["statistic"]: r["value"] for r in rows if r.get("code") == "a"}
    assert set(got) == {"percent", "fleiss", "gwet_ac1", "brennan_prediger"}
    assert got["fleiss"] == pytest.approx(46 / 70)
    assert got["percent"] == pytest.approx(5 / 6)
