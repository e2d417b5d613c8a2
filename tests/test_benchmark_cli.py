"""``failcodes benchmark`` subcommands (in-process CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from failcodes.ingest.scifact import bundled_dir
from tests.cli_helpers import run_cli

ATOMIC = Path(__file__).parent / "data" / "atomic" / "facts.jsonl"


def test_benchmark_scifact_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["benchmark", "scifact", "--format", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    expected = json.loads(
        (bundled_dir() / "evaluator_fixture" / "expected_metrics_small.json").read_text()
    )
    assert data["fixture"] == expected  # official evaluator numbers, exactly
    assert [r["system"] for r in data["official"]] == [
        "multivers-scifact",
        "multivers-healthver",
        "multivers-covidfact",
        "multivers-fever",
    ]
    fever = next(r for r in data["evidence"] if r["system"] == "multivers-fever" and r["k"] == 1)
    # fever file: 27 claims with a predicted abstract -> 300 - 27 = 273 without, plus the 6 of
    # those 27 that list no rationale sentence (counted from the file) -> 279 retrieve nothing.
    assert fever["n_no_retrieval"] == 279
    assert fever["n_no_gold"] == 112  # SciFact dev NEI claims


def test_benchmark_atomic_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["benchmark", "atomic", str(ATOMIC)], capsys)
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("sysA\t"))
    # balanced accuracy (0.6 + 0.8) / 2, hand-computed in tests/test_atomic.py
    assert "\t0.7000\t" in row
    assert "hallucination 0.5000" in out


def test_benchmark_bad_k(capsys: pytest.CaptureFixture[str], shared: Any) -> None:
    code, _, err = run_cli(
        ["benchmark", "healthver", str(shared("healthver", "healthver_dev.csv")), "--k", "0"],
        capsys,
    )
    assert code == 2 and "--k" in err
