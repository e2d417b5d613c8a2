"""The notebooks run from top to bottom in a real kernel (nbclient), so they never rot."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tests.conftest import REPO


def test_walkthrough_executes(tmp_path: Path) -> None:
    nb = nbformat.read(REPO / "notebooks" / "walkthrough.ipynb", as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = {
        i: "".join(
            o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for o in c.outputs
        )
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
    }
    text = "\n".join(outputs.values())
    assert "1200 traces of 4 systems" in text  # 300 SciFact dev claims x 4 MultiVerS checkpoints
    assert "\\begin{tabular}" in text and "\\bottomrule" in text
    # the metrics say what they assumed and, beside each recall interval, why it may not cover
    # (SciFact's recall 1.0 [1.0, 1.0]: zero width, on the boundary); t22api
    assert "Assumed: shared labels" in outputs[3] and "– CI warning (zero-width" in outputs[3]
    assert "recall_ci_warning" in outputs[3]
    assert "('cohen', 0.311)" in text  # RAGChecker correctness, SOURCE.md: Cohen 0.311
    # a study run from Python (run_study): its seven steps, then a dry run through a request
    assert "7 steps: ingest ragchecker-example, metrics ragchecker-example" in text
    assert "dry run, openai:gpt-5-mini (per-unit): 4 (trace, passage) rows" in text
    assert outputs[max(outputs)].strip().endswith("True")
