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


def test_an_asserting_pipeline_is_not_said_to_have_a_verifier(tmp_path: Path) -> None:
    """G asserts its claims (`verdict = "supported"`: a long-form answer, no verifier) beside A,
    a verifier; both retrieve from r1. G's two misses (q1s1, q2s1: errors it asserted) were
    attributed "...; the verifier had usable evidence", of a pipeline with no verifier.

    By hand: errors q1s1, q2s1; A refutes q1s1, q2s2: TP 1, FP 1, FN 1, TN 3; G flags nothing:
    TP 0, FP 0, FN 2, TN 4. Every passage repeats its claim's words (the offline baseline codes
    it all-high): each disagreement is verification, G's by "the system".
    """
    import failcodes

    root = tmp_path / "st"
    root.mkdir()
    for system, refuted in (("A", {"q1s1", "q2s2"}), ("G", None)):
        rows = []
        for s in SENTENCES[:6]:
            row: dict[str, object] = {
                "question_id": s[:2],
                "sentence_id": s,
                "claim_id": f"{system}-{s}",
                "claim": f"drug {s} lowers blood pressure",
                "retriever": "r1",
                "passages": [
                    {"passage_id": f"{s}-{k}", "rank": k, "text": f"Drug {s} trial {k} lowers it."}
                    for k in (1, 2)
                ],
            }
            if refuted is not None:
                row["verdict"] = "refuted" if s in refuted else "supported"
                row["reasoning"] = f"The passages about drug {s} decide it."
            rows.append(row)
        (root / f"{system}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "labels.jsonl").write_text(
        "".join(
            json.dumps({"sentence_id": s, "question_id": s[:2], "has_error": s in {"q1s1", "q2s1"}})
            + "\n"
            for s in SENTENCES
        )
    )
    (root / "failcodes.toml").write_text(
        'name = "asserting"\ncodebook = "medical-fact-check.v1.yaml"\n\n'
        '[[datasets]]\nname = "d"\n\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["A.jsonl"]\nsystem = "A"\n\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["G.jsonl"]\nsystem = "G"\n'
        'verdict = "supported"\n\n'
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["labels.jsonl"]\n\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n\n'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n\n[judge]\njudge = "offline"\n\n'
        "[review]\nlabelstudio = false\n"
    )
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    failcodes.run_study(root, say=None)
    prf = (root / "report" / "tables" / "prf_sentence.md").read_text()
    assert "| A | refuted | 50.0 | 50.0 | 50.0 | 1 | 1 | 1 | 3 |" in prf
    assert "| G | refuted | – | 0.0 | – | 0 | 0 | 2 | 4 |" in prf
    import csv

    with (root / "attribution" / "d" / "attribution.csv").open() as f:
        reasons = {
            (r["system"], r["sentence_id"]): (r["stage"], r["reason"]) for r in csv.DictReader(f)
        }
    high = "passage rank 1, 2 is high quality on every assessed retrieval dimension (of 5); "
    for s in ("q1s1", "q2s1"):
        assert reasons[("G", s)] == (
            "verification",
            high + "the system (it asserts its claims: no verifier) had usable evidence",
        )
    assert reasons[("A", "q2s1")] == ("verification", high + "the verifier had usable evidence")
    # the note on systems never flagged said of G "a support classifier never says refuted ...
    # a verifier that does not tell refuted from unsupported is measured with the non_supported
    # mapping" (G flags nothing under any mapping)
    page = (root / "report" / "index.html").read_text()
    assert "The mapping flagged no labelled sentence of: G" not in page
    assert (
        "G asserts every claim (no verifier: the verdict given at ingest, &#39;asserted by the "
        "system&#39;), so no mapping flags an error of it: recall 0 by construction, each "
        "labelled error it is scored on a miss."
    ) in page
