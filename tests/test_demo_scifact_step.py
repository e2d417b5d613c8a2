"""The demo's SciFact benchmark step (bundled data, offline)."""

from __future__ import annotations

import json
from pathlib import Path

from failcodes.demo import STEPS, DemoContext


def test_scifact_benchmark_step(tmp_path: Path) -> None:
    step = next(s for s in STEPS if s.name == "scifact-benchmark")
    out = step.run(DemoContext(out_dir=tmp_path))
    payload = json.loads((tmp_path / "benchmarks" / "scifact.json").read_text())
    assert payload["fixture_matches_official"] is True
    assert len(payload["official"]) == 4
    assert {r["k"] for r in payload["evidence_at_k"]} == {1, 3, 5}
    assert "reproduced exactly: yes" in out.lines[0]


def test_rtv_step(tmp_path: Path) -> None:
    step = next(s for s in STEPS if s.name == "rtv")
    out = step.run(DemoContext(out_dir=tmp_path))
    assert "heuristic baseline" in out.lines[0]
    metrics = json.loads((tmp_path / "rtv" / "metrics.json").read_text())
    by_model = {r["group"]["model"]: r for r in metrics["by_model"]}
    # Same documents and items as tests/data/rtv (hand-checked there): model-A supported 1/5.
    assert by_model["model-A"]["evidence_support_rate"] == 0.2
    assert len((tmp_path / "rtv" / "traces.jsonl").read_text().splitlines()) == 10
