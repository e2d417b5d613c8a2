"""Outside red-team of agreement and review, session 15 (t15red2).

Shapes the other tests do not use. Each test states the input, what failcodes gave at exit 0
before the fix, and the value computed by hand (or by an independent package) beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import AGREE_JSON, run_cli

# r1, r2 on a 1-5 scale, 8 units; they agree on u2, u4, u5, u6, u8
ORDINAL = "unit,r1,r2\nu1,1,2\nu2,2,2\nu3,3,4\nu4,4,4\nu5,5,5\nu6,1,1\nu7,2,3\nu8,3,3\n"


def test_level_ordinal_without_weights_says_the_kappas_are_unweighted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agree --level ordinal` with no --weights: Cohen 0.529 is the unweighted kappa (p_o 5/8,
    margins r1 2,2,2,1,1 and r2 1,2,2,2,1: p_e 13/64, (40 - 13) / (64 - 13) = 27/51), where
    a reader of --level ordinal expects an ordinal kappa (linear: 0.745). Only 'none' in the
    weights column said it; the first line now does, naming the statistics it concerns."""
    table = tmp_path / "r.csv"
    table.write_text(ORDINAL, encoding="utf-8")
    code, out, err = run_cli(["agree", str(table), "--level", "ordinal", *AGREE_JSON], capsys)
    assert code == 0, err
    rows = {r["statistic"]: r for r in json.loads(out)}
    assert rows["cohen"]["value"] == pytest.approx(27 / 51)
    assert (
        "; --level ordinal weighs krippendorff (and gwet_ac2, quadratic by default) only: "
        "percent, cohen, fleiss, conger, brennan_prediger are unweighted (--weights linear "
        "or quadratic weighs them);" in rows["cohen"]["notes"][0]
    )
    code, out, err = run_cli(
        ["agree", str(table), "--stat", "cohen", "--level", "ordinal", "--bootstrap", "0"], capsys
    )
    assert code == 0, err
    assert out.splitlines()[0].endswith(
        "; --level ordinal weighs none of the statistics asked for: cohen is unweighted "
        "(--weights linear or quadratic weighs it)"
    )
