"""The bundled RAGChecker meta-evaluation labels and the demo's agreement step."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from failcodes import bundled
from failcodes.demo import STEPS, DemoContext
from failcodes.ratingsio import read_ratings_frame
from failcodes.stats import agreement as ag
from failcodes.stats.tables import ratings_from_frame
from tests.conftest import shared_data


def _bundled(dimension: str) -> np.ndarray:
    frame = read_ratings_frame(bundled.path("ragchecker", "meta_eval_human_labels.csv"))
    part = frame[frame["dimension"] == dimension]
    table = ratings_from_frame(
        part, unit_column="instance_id", raters=["annotator_1", "annotator_2"]
    )
    return table.values


@pytest.mark.parametrize("dimension", ["correctness", "completeness", "overall"])
def test_bundled_csv_equals_original_json(dimension: str) -> None:
    records = json.loads(shared_data("ragchecker", "human_labeled_data.json").read_text())
    by: dict[int, list[int]] = {}
    for rec in records:
        by.setdefault(rec["instance_id"], []).append(rec[f"{dimension}_label"])
    original = np.array([by[k] for k in sorted(by)], dtype=float)
    np.testing.assert_array_equal(_bundled(dimension), original)


@pytest.mark.parametrize(
    ("dimension", "cohen", "alpha_ordinal"),
    # ragchecker SOURCE.md (computed there): Cohen and Krippendorff ordinal per label
    [("correctness", 0.311, 0.587), ("completeness", 0.463, 0.683), ("overall", 0.413, 0.684)],
)
def test_bundled_reproduces_source_numbers(dimension: str, cohen: float, alpha_ordinal) -> None:
    data = _bundled(dimension)
    assert round(ag.agreement(data, "cohen").value or 0, 3) == cohen
    assert round(ag.agreement(data, "krippendorff", level="ordinal").value or 0, 3) == alpha_ordinal


def test_demo_agreement_step(tmp_path: Path) -> None:
    step = next(s for s in STEPS if s.name == "agreement")
    out = step.run(DemoContext(out_dir=tmp_path))
    path = tmp_path / "agreement" / "ragchecker_meta_eval.json"
    assert out.files == [path]
    rows = json.loads(path.read_text())
    got = {(r["dimension"], r["statistic"], r["weights"]): r for r in rows}
    assert round(got[("correctness", "cohen", "quadratic")]["value"], 3) == 0.633
    for row in rows:
        # percent agreement and PABAK of two raters count agreeing units: exact (t19red2);
        # AC1 holds Clopper-Pearson's of effective counts (session 32): correctness
        # [0.314, 0.464], the upper bound the effective counts' (BCa's 0.458)
        exact = row["statistic"] in ("percent", "pabak")
        if row["statistic"] == "gwet_ac1":
            assert "clopper_pearson_effective" in row["ci_method"]
        else:
            assert row["ci_method"] == ("clopper_pearson" if exact else "bootstrap_bca")
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
    assert not list(tmp_path.rglob("*.tmp"))


def test_source_md_hash_matches_bundled_csv() -> None:
    import hashlib
    import re

    folder = bundled.path("ragchecker")
    text = (folder / "SOURCE.md").read_text()
    section = text.split("## meta_eval_human_labels.csv", 1)[1]
    recorded = re.findall(r"SHA-256: `([0-9a-f]{64})`", section)
    actual = hashlib.sha256((folder / "meta_eval_human_labels.csv").read_bytes()).hexdigest()
    assert recorded == [actual]
