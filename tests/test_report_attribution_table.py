"""The report's attribution summary keeps each pipeline's split (a study comparing two
pipelines must not see only their pooled counts). Counts are written by hand below."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from failcodes.report.rundir import load_run_dir


def _attribution(root: Path, dataset: str, rows: list[tuple[str, str]]) -> None:
    folder = root / "attribution" / dataset
    folder.mkdir(parents=True)
    frame = pd.DataFrame(
        [{"item_id": f"{dataset}-{i}", "system": s, "stage": st} for i, (s, st) in enumerate(rows)]
    )
    frame.to_csv(folder / "attribution.csv", index=False)


def test_attribution_summary_per_dataset_and_system_with_a_total(tmp_path: Path) -> None:
    _attribution(
        tmp_path,
        "run-a",
        [
            ("bm25", "retrieval"),
            ("bm25", "retrieval"),
            ("bm25", "verification"),
            ("dense", "retrieval"),
        ],
    )
    _attribution(tmp_path, "run-b", [("safe", "verification"), ("safe", "evidence")])
    table = load_run_dir(tmp_path).attribution_table
    assert table is not None
    assert table.to_dict("records") == [
        {"system": "run-a/bm25", "retrieval": 2, "verification": 1, "evidence": 0, "total": 3},
        {"system": "run-a/dense", "retrieval": 1, "verification": 0, "evidence": 0, "total": 1},
        {"system": "run-b/safe", "retrieval": 0, "verification": 1, "evidence": 1, "total": 2},
        {"system": "all", "retrieval": 3, "verification": 2, "evidence": 1, "total": 6},
    ]


def test_one_system_has_no_total_row(tmp_path: Path) -> None:
    _attribution(tmp_path, "only", [("s", "retrieval"), ("s", "verification")])
    table = load_run_dir(tmp_path).attribution_table
    assert table is not None
    assert table.to_dict("records") == [
        {"system": "s", "retrieval": 1, "verification": 1, "total": 2}
    ]
