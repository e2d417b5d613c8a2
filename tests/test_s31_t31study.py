"""Session 31 (t31study): whole studies on designs the tests did not use, checked by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from failcodes.codebook import bundled_dir
from tests.cli_helpers import run_cli

#: 3 questions x 2 sentences; the clinicians' errors are q1s1 and q2s1.
SENTENCES = ["q1s1", "q1s2", "q2s1", "q2s2", "q3s1", "q3s2"]
ERRORS = {"q1s1", "q2s1"}
#: the sentences each system refutes (one claim per sentence); A uses r1, B r2
REFUTES = {"A": {"q1s1", "q2s2"}, "B": {"q1s2", "q3s1"}}
RETRIEVER = {"A": "r1", "B": "r2"}


def _two_system_study(root: Path) -> Path:
    """A study of one data set d: A and B, one JSONL each, two passages per claim, a label file.

    The passages carry no source metadata (the offline baseline codes trustworthiness
    not_assessable) and repeat the claim's words (every other dimension high quality).
    """
    root.mkdir()
    for system, refuted in REFUTES.items():
        rows = [
            {
                "question_id": s[:2],
                "sentence_id": s,
                "claim_id": f"{system}-{s}",
                "claim": f"drug {s} lowers blood pressure",
                "verdict": "refuted" if s in refuted else "supported",
                "retriever": RETRIEVER[system],
                "reasoning": f"The passages about drug {s} decide it.",
                "passages": [
                    {
                        "passage_id": f"{s}-{k}",
                        "rank": k,
                        "text": f"Drug {s} trial {k} lowers blood pressure.",
                    }
                    for k in (1, 2)
                ],
            }
            for s in SENTENCES
        ]
        (root / f"{system}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "labels.jsonl").write_text(
        "".join(
            json.dumps({"sentence_id": s, "question_id": s[:2], "has_error": s in ERRORS}) + "\n"
            for s in SENTENCES
        )
    )
    ingests = "".join(
        f'[[datasets.ingest]]\nadapter = "generic"\npaths = ["{s}.jsonl"]\nsystem = "{s}"\n\n'
        for s in REFUTES
    )
    (root / "failcodes.toml").write_text(
        'name = "two"\ncodebook = "medical-fact-check.v1.yaml"\n\n[[datasets]]\nname = "d"\n\n'
        f'{ingests}[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["labels.jsonl"]\n\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n\n'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n\n[judge]\njudge = "offline"\n\n'
        "[review]\nlabelstudio = false\n"
    )
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


def test_figure_1_counts_no_not_assessable_dimension_as_an_error_subcode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Figure 1's "frequent error subcodes" panel drew "retrieval: not_assessable" 12.

    By hand: A (r1) disagrees on q2s1 (FN) and q2s2 (FP), B (r2) on q1s1, q2s1 (FN) and q1s2,
    q3s1 (FP): Table 8 counts r1 4 and r2 8 (claim, passage) units, 12 in all. The offline
    baseline codes every one of them high quality on entity, scope, polarity and chunking and
    not_assessable on trustworthiness (no source metadata): no error subcode at all, as the
    dominant-error tables say ("none: the judge coded no unit with an error subcode"). A
    dimension the coder could not assess is no error of the passage.
    """
    study = _two_system_study(tmp_path / "st")
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 0, err
    from failcodes.report.rundir import load_run_dir

    inputs = load_run_dir(study)
    assert inputs.attribution == {"verification": 6}  # 2 of A + 4 of B
    assert inputs.per_passage is not None
    table8 = (study / "report" / "tables" / "retrieval_quality.md").read_text()
    assert "r1 (n=4)" in table8 and "r2 (n=8)" in table8
    assert "| Trustworthiness | Not assessable | 100.0 | 100.0 |" in table8
    assert inputs.error_codes == {}  # main: {'retrieval': {'not_assessable': 12}}
