"""Session 30, helper t30cap: report captions that said what their columns were not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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
