"""Session 33 (h33study): whole studies on designs the tests did not use, read by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from failcodes.codebook import bundled_dir

#: 3 questions x 2 sentences x 2 claims; the clinicians labelled sentences alone (q1s1, q2s1
#: errors). A verdicts by claim (the rest supported): q1s1-c1 refuted, q2s1-c1 and q2s2-c2
#: no_evidence; B: q1s2-c1 refuted, q3s1-c2 no_evidence.
SENTENCES = ["q1s1", "q1s2", "q2s1", "q2s2", "q3s1", "q3s2"]
VERDICTS = {
    "A": {"q1s1-c1": "refuted", "q2s1-c1": "no_evidence", "q2s2-c2": "no_evidence"},
    "B": {"q1s2-c1": "refuted", "q3s1-c2": "no_evidence"},
}


def _claims_over_sentences(root: Path) -> Path:
    """Metrics at sentence level (refuted, non_supported); `[disagreements] level = "claim"`,
    mapping non_supported. A retrieved from r1, B from r2, two passages a claim."""
    root.mkdir()
    for system, retriever in (("A", "r1"), ("B", "r2")):
        rows = [
            {
                "question_id": s[:2],
                "sentence_id": s,
                "claim_id": f"{s}-{c}",
                "claim": f"drug {s}-{c} lowers blood pressure",
                "verdict": VERDICTS[system].get(f"{s}-{c}", "supported"),
                "reasoning": f"The passages about drug {s}-{c} decide it.",
                "retriever": retriever,
                "passages": [
                    {"passage_id": f"{s}-{c}-{k}", "rank": k, "text": f"Drug {s}-{c} trial {k}."}
                    for k in (1, 2)
                ],
            }
            for s in SENTENCES
            for c in ("c1", "c2")
        ]
        (root / f"{system}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "labels.jsonl").write_text(
        "".join(
            json.dumps({"sentence_id": s, "question_id": s[:2], "has_error": s in {"q1s1", "q2s1"}})
            + "\n"
            for s in SENTENCES
        )
    )
    ingests = "".join(
        f'[[datasets.ingest]]\nadapter = "generic"\npaths = ["{s}.jsonl"]\nsystem = "{s}"\n\n'
        for s in ("A", "B")
    )
    (root / "failcodes.toml").write_text(
        'name = "mix"\ncodebook = "medical-fact-check.v1.yaml"\n\n[[datasets]]\nname = "d"\n\n'
        f'{ingests}[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["labels.jsonl"]\n\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n\n'
        '[metrics]\nmappings = ["refuted", "non_supported"]\nbootstrap = 0\n\n'
        '[disagreements]\nmapping = "non_supported"\nlevel = "claim"\n\n'
        '[judge]\njudge = "offline"\n\n[review]\nlabelstudio = false\n'
    )
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


def test_claim_level_disagreements_over_sentence_metrics_say_their_label_rule(
    tmp_path: Path,
) -> None:
    """`[disagreements] level = "claim"` over sentence-level metrics and sentence labels: each
    claim took its sentence's label, so A's q1s1-c2 (A flagged q1s1 through c1) and q2s1-c2 are
    disagreements (misses); the run box's Data line is the metrics' (sentence level) and the
    captions said "(claim level)" alone, the rule unsaid.

    By hand, non_supported. Sentences: A flags q1s1, q2s1, q2s2: TP 2, FP 1, FN 0, TN 3; B
    flags q1s2, q3s1: TP 0, FP 2, FN 2, TN 2. Claims (each its sentence's label): A flags
    q1s1-c1 (TP), q2s1-c1 (TP), q2s2-c2 (FP), misses q1s1-c2, q2s1-c2: 3 disagreements; B
    flags q1s2-c1, q3s1-c2 (FP), misses the 4 claims of q1s1, q2s1: 6.
    """
    import failcodes

    root = _claims_over_sentences(tmp_path / "st")
    failcodes.run_study(root, say=None)
    tables = root / "report" / "tables"
    prf = (tables / "prf_sentence.md").read_text()
    assert "| A | non_supported | 66.7 | 100.0 | 80.0 | 2 | 1 | 0 | 3 |" in prf
    assert "| B | non_supported | 0.0 | 0.0 | 0.0 | 0 | 2 | 2 | 2 |" in prf
    summary = (tables / "attribution.md").read_text()
    assert "| A | 3 | 3 |" in summary
    assert "| B | 6 | 6 |" in summary
    said = (
        "error mapping non_supported (claim level: a claim's own label, else its sentence's; "
        "the P/R/F1 table counts sentences)"
    )
    for name in ("attribution", "retrieval_quality", "reasoning_steps"):
        assert said in (tables / f"{name}.md").read_text().splitlines()[0], name
