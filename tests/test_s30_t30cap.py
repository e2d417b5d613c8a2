"""Session 30, helper t30cap: report captions that said what their columns were not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

#: refuted claims per system; the labels' errors are q1s1 and q2s1
_REFUTED = {"A": {"q1s1", "q2s2"}, "B": {"q1s2"}}
_SENTENCES = ["q1s1", "q1s2", "q2s1", "q2s2"]

_STUDY = """name = "t30cap"
codebook = "medical-fact-check.v1.yaml"

[[datasets]]
name = "d"
{ingests}
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["labels.jsonl"]

[[datasets.pipelines]]
system = "*"
evidence = "retrieved"

[metrics]
mappings = ["refuted"]
bootstrap = 0

[judge]
judge = "offline"
"""


def _no_retriever_study(root: Path) -> Path:
    """Two systems whose traces name no retriever and no verifier (as the atomic adapter's)."""
    from failcodes.codebook import bundled_dir

    root.mkdir()
    for system, refuted in _REFUTED.items():
        rows = [
            {
                "system": system,
                "question_id": sid[:2],
                "sentence_id": sid,
                "claim_id": f"{system}-{sid}",
                "claim": f"drug {sid} lowers blood pressure",
                "verdict": "refuted" if sid in refuted else "supported",
                "reasoning": f"The passages about drug {sid} decide it.",
                "passages": [
                    {
                        "passage_id": f"{system}-{sid}-{k}",
                        "rank": k,
                        "text": f"Drug {sid} trial {k}.",
                    }
                    for k in (1, 2)
                ],
            }
            for sid in _SENTENCES
        ]
        (root / f"{system}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = [
        {"sentence_id": sid, "question_id": sid[:2], "has_error": sid in {"q1s1", "q2s1"}}
        for sid in _SENTENCES
    ]
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    ingests = "".join(
        f'\n[[datasets.ingest]]\nadapter = "generic"\npaths = ["{s}.jsonl"]\n' for s in _REFUTED
    )
    (root / "failcodes.toml").write_text(_STUDY.format(ingests=ingests))
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


def test_tables_8_9_columned_by_system_say_so_when_no_retriever_or_verifier_is_named(
    tmp_path: Path,
) -> None:
    # No trace names a retriever or a verifier (the atomic adapter's shape): attribution
    # groups each claim under its system, so Table 8's columns are 'A (n=4)', 'B (n=6)' and
    # Table 9's 'A (n=2)', 'B (n=3)'. Disagreements by hand (errors q1s1, q2s1):
    #   A refutes q1s1 (TP), q2s2 (FP); misses q2s1 (FN)          -> 2 disagreements
    #   B refutes q1s2 (FP); misses q1s1, q2s1 (FN)               -> 3 disagreements
    # one claim each, 2 passages each: Table 8 A 4, B 6; Table 9 A 2, B 3. Main's captions
    # said 'per retriever' / 'per verifier' over columns named A and B.
    import failcodes

    study = _no_retriever_study(tmp_path / "st")
    failcodes.run_study(study, say=lambda _line: None)
    tables = study / "report" / "tables"
    quality = (tables / "retrieval_quality.md").read_text()
    assert "| A (n=4) | B (n=6) |" in quality
    assert quality.startswith(
        "**Evidence-quality subcodes (%) per system (no retriever named: a column per system) "
    )
    steps = (tables / "reasoning_steps.md").read_text()
    assert "| A (n=2) | B (n=3) |" in steps
    assert steps.startswith(
        "**Reasoning-step subcodes (%) per system (no verifier named: a column per system) "
    )
    assert (
        (tables / "retrieval_quality_dominant.md")
        .read_text()
        .startswith(
            "**Dominant error subcodes per system (no retriever named: a column per system) "
        )
    )
    page = (study / "report" / "index.html").read_text()
    assert "Subcode shares per system (no retriever named: a column per system)" in page
    assert "Reasoning-step errors per system (%) (no verifier named: a column per system)" in page
    assert "per retriever (" not in quality.splitlines()[0]


def test_a_caption_names_the_columns_that_are_a_systems_own_among_retrievers() -> None:
    # A and B retrieve with bm25 (one column, pooled); C names no retriever, so its column
    # is C's own (its group is its system). Two data sets prefix the groups: 'd2/C' is C's.
    import pandas as pd

    from failcodes.report.tables import per_group

    coded = pd.DataFrame({"system": ["A", "B", "C"], "retriever": ["bm25", "bm25", "C"]})
    head = "Evidence-quality subcodes (%) per retriever"
    assert per_group(head, coded, "retriever") == (
        "Evidence-quality subcodes (%) per retriever (no retriever named for C: a system's own "
        "column)"
    )
    prefixed = pd.DataFrame({"system": ["A", "C"], "retriever": ["d1/bm25", "d2/C"]})
    assert per_group(head, prefixed, "retriever").endswith(
        "(no retriever named for d2/C: a system's own column)"
    )
    # every retriever named: the caption unchanged
    assert per_group(head, coded.iloc[:2], "retriever") == head


def test_corrected_rows_name_the_data_set_when_two_data_sets_use_one_retriever(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Data set ds: big_table's 90 units (bm25 u000-u059, dense u060-u089); a plan draws 40
    # of them and alice reviews each exact_entity. Alone, the corrected rows say 'bm25' (60
    # units, 24 reviewed: t30human's counts) and 'dense' (30 units, 16 reviewed). Then ds2
    # arrives, also bm25 and dense (90 other units, no plan): Table 8's columns become
    # 'ds/bm25' ... 'ds2/dense', and main's corrected rows still said 'bm25' for ds's 60
    # units alone. Now the rows say 'ds/bm25' (60, 24) and 'ds/dense' (30, 16).
    import pandas as pd

    from failcodes import codebook as codebooks
    from failcodes.reviewplan import read_plan
    from failcodes.study.layout import StudyLayout
    from tests.test_review_plan import big_table, human, run_cli

    layout = StudyLayout.of(tmp_path)
    table = layout.per_passage("ds")
    table.parent.mkdir(parents=True)
    big_table().to_csv(table, index=False)
    code, _, err = run_cli(capsys, "review", "plan", tmp_path, "-p", "retrieval", "-n", "40")
    assert code == 0, err
    plan = read_plan(tmp_path / "review" / "plans" / "ds.retrieval.json")
    alice = [human(u, "exact_entity") for u in sorted(plan.estimation_ids())]
    (tmp_path / "review" / "alice.jsonl").write_text(
        "".join(a.model_dump_json() + "\n" for a in alice), encoding="utf-8"
    )
    cb = codebooks.bundled()
    cb_file = codebooks.bundled_dir() / f"{cb.name}.v{cb.version}.yaml"

    def rows(out: Path) -> list[tuple[str, int, int]]:
        code, _, err = run_cli(capsys, "report", tmp_path, "--codebook", cb_file, "-o", out)
        assert code == 0, err
        got = pd.read_csv(out / "tables" / "retrieval_quality_corrected.csv")
        cells = got[got["code"] == "exact_entity"]
        return [
            (str(r), int(u), int(v)) for r, u, v in cells[["retriever", "units", "reviewed"]].values
        ]

    one = rows(tmp_path / "r1")  # one data set: the rows as before
    assert one == [("bm25", 60, 24), ("dense", 30, 16)]
    t2 = big_table()
    t2["unit_id"] = t2["unit_id"].str.replace("u", "v")
    table2 = layout.per_passage("ds2")
    table2.parent.mkdir(parents=True)
    t2.to_csv(table2, index=False)
    assert rows(tmp_path / "r2") == [("ds/bm25", 60, 24), ("ds/dense", 30, 16)]
    quality = (tmp_path / "r2" / "tables" / "retrieval_quality.md").read_text()
    assert "| ds/bm25 (n=60) | ds/dense (n=30) | ds2/bm25 (n=60) | ds2/dense (n=30) |" in quality
