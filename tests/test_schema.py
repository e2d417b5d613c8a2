"""The JSON Schemas committed under docs/schema/ equal the ones generated from the models."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from failcodes.cli.schema import MODELS, render
from tests.conftest import REPO


@pytest.mark.parametrize("name", sorted(MODELS))
def test_committed_schema_is_current(name: str) -> None:
    committed = (REPO / "docs" / "schema" / f"{name}.schema.json").read_text(encoding="utf-8")
    assert committed == render(name), (
        f"docs/schema/{name}.schema.json is stale: regenerate with "
        f"`failcodes schema {name} > docs/schema/{name}.schema.json`"
    )


def test_schema_cli_prints_trace_schema() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "failcodes", "schema", "trace"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    schema = json.loads(proc.stdout)
    assert schema["title"] == "Trace"
    assert schema["required"] == [
        "system",
        "question_id",
        "sentence_id",
        "claim_id",
        "claim",
        "verdict",
    ]
    assert schema["$defs"]["Verdict"]["enum"] == [
        "supported",
        "refuted",
        "no_evidence",
        "ambiguous",
        "out_of_scope",
    ]


def test_schema_cli_unknown_model() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "failcodes", "schema", "bogus"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "failcodes: error: unknown model 'bogus' (known: trace, label, sentence, annotation, unit, "
        "disagreement)"
    )
