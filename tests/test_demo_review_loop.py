"""The demo's human-loop step: plan -> SIMULATED reviewer from SciFact gold -> corrected table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import beta as beta_dist

from failcodes.annotations import Annotation
from failcodes.demo import STEPS, DemoContext
from failcodes.demo.humanloop import SIMULATED_CODER
from failcodes.reviewplan import read_plan
from failcodes.tableio import read_models_jsonl

NEEDED = ("study", "codebook", "review-loop", "report")


def test_review_loop_step_feeds_the_corrected_table(tmp_path: Path) -> None:
    ctx = DemoContext(out_dir=tmp_path)
    outputs = {s.name: s.run(ctx) for s in STEPS if s.name in NEEDED}
    lines = outputs["review-loop"].lines
    assert any("SIMULATED reviewer" in line and "no person" in line for line in lines)
    plan = read_plan(tmp_path / "review" / "plans" / "scifact-dev.retrieval.json")
    coded = pd.read_csv(tmp_path / plan.source)
    assert plan.strata[0].population == coded["unit_id"].nunique()
    reviews = read_models_jsonl(tmp_path / "review" / "simulated-scifact-gold.jsonl", Annotation)
    assert {a.unit_id for a in reviews} == plan.estimation_ids()
    assert {a.coder for a in reviews} == {SIMULATED_CODER}
    # every bundled SciFact passage is a gold rationale -> the simulated answer is direct
    assert coded["gold"].all()
    assert all(a.codes["evidence_polarity"] == "direct_polarity" for a in reviews)

    table = pd.read_csv(tmp_path / "report" / "tables" / "retrieval_quality_corrected.csv")
    row = table[table["code"] == "direct_polarity"].iloc[0]
    judge_share = (coded["evidence_polarity"] == "direct_polarity").mean()
    assert row["judge-only (%)"] == pytest.approx(round(100 * judge_share, 1))
    n = len(reviews)
    # all reviewed units direct: the judge gets no weight, corrected = human-only:
    # Clopper-Pearson's interval for n of n, [0.025^(1/n), 1] (Beta(n, 1) at 2.5%)
    low = beta_dist.ppf(0.025, n, 1)
    assert low == pytest.approx(0.025 ** (1 / n))
    assert row["human-only (%)"] == f"100.0 [{100 * low:.1f}, 100.0]"
    # corrected: the PPI++ estimate is the human one (lam 0), but its interval splits the
    # reviewed units by the judge's code, each part with its own (wider) exact interval
    assert row["corrected (%)"].startswith("100.0 [")
    assert float(row["corrected (%)"].split("[")[1].split(",")[0]) <= round(100 * low, 1)
    # Figure 1 corrected: scifact-dev attributed by the codebook rule, the simulated reviewer's
    # codes give each fully reviewed item its own stage (tests/test_review_plan.py checks the
    # numbers by hand)
    att = pd.read_csv(tmp_path / "report" / "tables" / "attribution_corrected.csv")
    assert {"judge-only (%)", "human-only (%)", "corrected (%)"} <= set(att.columns)
    assert set(att["stage"]) <= {"verification", "evidence"}  # evidence was given: no retriever
    assert (tmp_path / "report" / "figures" / "attribution_corrected.png").is_file()
    html = (tmp_path / "report" / "index.html").read_text()
    assert "Attribution corrected by human review" in html
    assert f"by {SIMULATED_CODER}" in html
    assert "SIMULATED reviewer" in html
    assert "prediction-powered inference" in html
