"""Session 32 (t32stats): Gwet's AC1 interval holds Clopper-Pearson's of effective counts (at a
rare code it read [1, 1] where every unit was unanimous); a judge panel's report rows name the
interval's method (issue 30). Coverage lives in bench/bench_s32_stats.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from failcodes.stats.agreement import agreements, pooled_agreements
from tests.cli_helpers import run_cli


def test_ac1_of_units_all_unanimous_is_not_the_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three raters, 100 units, every one unanimous, 2 of them carrying the code (a code on 2%
    of units, where 17% of data sets of raters with sensitivity 0.95, specificity 0.995 are
    so). p_a = 1, pi = 6/300 = 0.02, p_e = 2 (0.02)(0.98) = 0.0392, AC1 = 1. Korn & Graubard's
    effective count at p = 1 is n = 100: Clopper-Pearson's lower bound of 100 of 100 is
    0.025**(1/100) = 0.963783 (statsmodels), mapped (0.963783 - 0.0392) / 0.9608 = 0.962306.
    main: [1.0, 1.0] (BCa and Wald alike: no resample or unit varies), which covered 0.799
    of such data sets overall (bench part 1)."""
    codes = np.zeros((100, 3))
    codes[:2] = 1
    cp_low, _ = proportion_confint(100, 100, alpha=0.05, method="beta")
    assert cp_low == pytest.approx(0.025 ** (1 / 100), abs=1e-9)
    pe = 2 * 0.02 * 0.98
    want = (cp_low - pe) / (1 - pe)
    assert want == pytest.approx(0.962306, abs=1e-6)
    for resamples in (0, 500):
        (a,) = agreements(codes, ("gwet_ac1",), categories=[0, 1], n_bootstrap=resamples, seed=1)
        assert a.value == 1.0
        assert a.chance_agreement == pytest.approx(pe, abs=1e-12)
        assert (a.ci_low, a.ci_high) == (pytest.approx(want, abs=1e-9), 1.0)
        assert a.ci_method.startswith("low clopper_pearson_effective, high ")
    # the CLI, two raters: the same counts (2 of 100 both 1), the same bound
    table = tmp_path / "r.csv"
    rows = ["unit,r1,r2"] + [f"u{i},{int(i < 2)},{int(i < 2)}" for i in range(100)]
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = run_cli(
        ["agree", str(table), "--stat", "gwet_ac1", "--format", "json"], capsys
    )
    assert code == 0, err
    [row] = [r for r in json.loads(out) if r["statistic"] == "gwet_ac1"]
    assert row["ci_low"] == pytest.approx(want, abs=1e-9)


def test_ac1_wald_lower_bound_is_the_effective_counts_one() -> None:
    """Three raters, 100 units: 95 all 0, 2 all 1, 3 split (two 0, one 1). By hand:
    p_a = (97 + 3 (1/3)) / 100 = 0.98; pi = (2*3 + 3) / 300 = 0.03, p_e = 2 (0.03)(0.97) = 0.0582;
    AC1 = (0.98 - 0.0582) / 0.9418 = 0.978764. Gwet's (2014) linearised unit terms
    (p_a,i - p_e)/(1 - p_e) - 2 (1 - AC1)(p_e,i - p_e)/(1 - p_e), p_e,i = sum_k (r_ik/3)(1 - pi_k):
    0.03 (all 0), 0.97 (all 1), 2/3 (0.03) + 1/3 (0.97) = 0.343333 (split); se = their sd /
    sqrt(100) = 0.0123777. Wald: 0.978764 - 1.96 (0.0123777) = 0.954504 (main's lower bound).
    On p_a's scale se (1 - p_e) = 0.0116574, n* = 0.98 (0.02) / that^2 = 144.230, x* = 141.345:
    Clopper-Pearson (statsmodels) [0.941589, 0.996033], mapped by p_e: [0.937979, 0.995788]:
    the lower bound is the effective counts', the upper Wald's (capped at 1)."""
    codes = np.zeros((100, 3))
    codes[:2] = 1
    codes[2:5, 0] = 1
    pa, pe = 0.98, 2 * 0.03 * 0.97
    ac1 = (pa - pe) / (1 - pe)
    terms = []
    for count, pa_i, pe_i in ((95, 1.0, 0.03), (2, 1.0, 0.97), (3, 1 / 3, 2 / 3 * 0.03 + 0.97 / 3)):
        terms += [(pa_i - pe) / (1 - pe) - 2 * (1 - ac1) * (pe_i - pe) / (1 - pe)] * count
    se = float(np.std(terms, ddof=1) / np.sqrt(100))
    assert (ac1, se) == (pytest.approx(0.978764, abs=1e-6), pytest.approx(0.0123777, abs=1e-7))
    n_eff = pa * (1 - pa) / (se * (1 - pe)) ** 2
    low, _ = proportion_confint(pa * n_eff, n_eff, alpha=0.05, method="beta")
    want = (low - pe) / (1 - pe)
    assert want == pytest.approx(0.937979, abs=1e-6)
    (a,) = agreements(codes, ("gwet_ac1",), categories=[0, 1])
    assert a.value == pytest.approx(ac1, abs=1e-12)
    assert a.se == pytest.approx(se, abs=1e-12)
    assert (a.ci_low, a.ci_high) == (pytest.approx(want, abs=1e-9), 1.0)
    assert a.ci_method == "low clopper_pearson_effective, high wald"


def test_the_panel_rows_of_a_report_name_the_interval_method(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge panel's agreement is computed without resampling: every interval is Wald's
    (or, for AC1, one bound Clopper-Pearson's of effective counts). The report's panel rows
    showed ci_low/ci_high and no method (t31mcn's Left): now an 'interval' column, 'not
    recorded' for a panel.json written before the method was kept, '-' with no interval."""
    from failcodes.judge import JudgeJob, make_coder
    from failcodes.judge.panelrun import Member, run_panel
    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind, retrieval_units
    from tests.fakeserver import FakeServer
    from tests.judge_helpers import make_codebook, make_traces

    codebook = make_codebook()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-panel-method")
    run = tmp_path / "study" / "judge" / "demo" / "retrieval"
    with FakeServer() as fake:
        members = [
            Member(spec, make_coder(spec, base_url=fake.openai_base_url))
            for spec in ("openai:panel-a", "openai:panel-b")
        ]
        report, _ = run_panel(
            retrieval_units(make_traces(3)), members, JudgeJob(codebook, UnitKind.RETRIEVAL, run)
        )
    methods = {r.ci_method for r in report.agreement if r.ci_low is not None}
    assert "wald" in methods and methods <= {
        "wald",
        "clopper_pearson_effective",
        "low clopper_pearson_effective, high wald",
        "low wald, high clopper_pearson_effective",
    }
    inputs = load_run_dir(tmp_path / "study", codebook=codebook)
    rows = inputs.panel_agreement
    assert rows is not None
    shown = {
        (r["statistic"], r["dimension"], r["code"]): r["interval"] for r in rows.to_dict("records")
    }
    for r in report.agreement:
        want = r.ci_method if r.ci_low is not None else "-"
        assert shown[(r.statistic, r.dimension, r.code or "-")] == want
    # a panel.json from before the method was kept
    path = run / "panel.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    for r in old["agreement"]:
        r.pop("ci_method")
    path.write_text(json.dumps(old), encoding="utf-8")
    rows = load_run_dir(tmp_path / "study", codebook=codebook).panel_agreement
    assert rows is not None
    assert set(rows["interval"]) <= {"not recorded", "-"} and "not recorded" in set(
        rows["interval"]
    )


def test_pooled_brennan_prediger_holds_the_effective_counts_interval() -> None:
    """Pooled over two codes (de Vries et al. 2008), three raters, 20 units: code 1 split 2-1
    on one unit (1 of 3 pairs agree), every other rating 0. By hand: p_a = ((19 + 1/3)/20 + 1)/2
    = 0.983333, Brennan-Prediger 2 p_a - 1 = 0.966667. Delete-one-unit jackknife: without the
    split unit 1.0, without any other (2 ((18 + 1/3)/19 + 1)/2 - 1) = 0.964912; se =
    sqrt(19/20 (0.033333^2 + 19 (0.001754)^2)) = 0.033333; Wald's lower bound 0.901335 (main).
    On p_a's scale se / 2 = 0.016667, n* = 0.983333 (0.016667) / 0.016667^2 = 59.0: Clopper-
    Pearson (statsmodels) [0.909606, 0.999600], mapped (x - 0.5)/0.5: [0.819213, 0.999200]. The
    pooled coefficient of three codes on 2% of 100 units covered 0.929 (BCa, cluster bootstrap,
    1500 data sets; bench part 4), 0.957 now."""
    one = np.zeros((20, 3))
    one[0, 0] = 1
    pa = ((19 + 1 / 3) / 20 + 1) / 2
    left = np.array([1.0] + [2 * ((18 + 1 / 3) / 19 + 1) / 2 - 1] * 19)
    se = float(np.sqrt(19 / 20 * ((left - left.mean()) ** 2).sum()))
    assert se == pytest.approx(1 / 30, abs=1e-9)
    n_eff = pa * (1 - pa) / (se / 2) ** 2
    assert n_eff == pytest.approx(59.0, abs=1e-9)
    low, _ = proportion_confint(pa * n_eff, n_eff, alpha=0.05, method="beta")
    want = (low - 0.5) / 0.5
    assert want == pytest.approx(0.819213, abs=1e-6)
    [bp] = pooled_agreements(
        [one, np.zeros((20, 3))], ("brennan_prediger",), categories=[[0, 1], [0, 1]]
    )
    assert (bp.value, bp.se) == (pytest.approx(2 * pa - 1), pytest.approx(se))
    assert (bp.ci_low, bp.ci_high) == (pytest.approx(want, abs=1e-9), 1.0)
    assert bp.ci_method == "low clopper_pearson_effective, high wald"
