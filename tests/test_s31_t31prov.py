"""Session 31 (t31prov): Table 8 and evidence that was not retrieved (provided, closed-book)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from failcodes.codebook import bundled_dir

#: 3 questions x 2 sentences; the clinicians' errors are q1s1 and q2s1.
SENTENCES = ["q1s1", "q1s2", "q2s1", "q2s2", "q3s1", "q3s2"]
ERRORS = {"q1s1", "q2s1"}
#: the sentences each system refutes (one claim per sentence)
REFUTES = {"A": {"q1s1", "q2s2"}, "B": {"q1s2", "q3s1"}}


def _rows(system: str, retriever: str | None, passages: bool) -> str:
    rows = []
    for s in SENTENCES:
        row: dict[str, object] = {
            "question_id": s[:2],
            "sentence_id": s,
            "claim_id": f"{system}-{s}",
            "claim": f"drug {s} lowers blood pressure",
            "verdict": "refuted" if s in REFUTES[system] else "supported",
            "reasoning": f"The passages about drug {s} decide it.",
        }
        if retriever:
            row["retriever"] = retriever
        if passages:
            row["passages"] = [
                {"passage_id": f"{s}-{k}", "rank": k, "text": f"Drug {s} trial {k} lowers it."}
                for k in (1, 2)
            ]
        rows.append(json.dumps(row) + "\n")
    return "".join(rows)


def _study(root: Path) -> Path:
    """Data set d: A retrieved (retriever r1), B provided (evidence given with each item, no
    retriever), two passages a claim; data set d2: A closed-book (evidence none, no passage)."""
    root.mkdir()
    (root / "A.jsonl").write_text(_rows("A", "r1", True))
    (root / "B.jsonl").write_text(_rows("B", None, True))
    (root / "A_cb.jsonl").write_text(_rows("A", None, False))
    (root / "labels.jsonl").write_text(
        "".join(
            json.dumps({"sentence_id": s, "question_id": s[:2], "has_error": s in ERRORS}) + "\n"
            for s in SENTENCES
        )
    )
    labels = '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["labels.jsonl"]\n\n'

    def ingest(path: str, system: str) -> str:
        return (
            f'[[datasets.ingest]]\nadapter = "generic"\npaths = ["{path}"]\nsystem = "{system}"\n\n'
        )

    def pipe(system: str, evidence: str) -> str:
        return f'[[datasets.pipelines]]\nsystem = "{system}"\nevidence = "{evidence}"\n\n'

    (root / "failcodes.toml").write_text(
        'name = "prov"\ncodebook = "medical-fact-check.v1.yaml"\n\n'
        f'[[datasets]]\nname = "d"\n\n{ingest("A.jsonl", "A")}{ingest("B.jsonl", "B")}{labels}'
        f"{pipe('A', 'retrieved')}{pipe('B', 'provided')}"
        f'[[datasets]]\nname = "d2"\n\n{ingest("A_cb.jsonl", "A")}{labels}{pipe("A", "none")}'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n\n[judge]\njudge = "offline"\n\n'
        "[review]\nlabelstudio = false\n"
    )
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study above, run once through the Python layer (``failcodes.run_study``)."""
    import failcodes

    root = _study(tmp_path_factory.mktemp("s31prov") / "st")
    results = failcodes.run_study(root, say=None)
    assert all(r.outcome.value == "ran" for r in results), results
    return root


def test_table_8_caption_names_the_column_of_provided_evidence(study: Path) -> None:
    """Table 8 said "units retrieved ... per retriever" of a system whose evidence was given.

    By hand (data set d): A refutes q1s1, q2s2 and B q1s2, q3s1; the errors are q1s1, q2s1.
    A disagrees on q2s1 (FN), q2s2 (FP); B on q1s1, q2s1 (FN), q1s2, q3s1 (FP). Two passages
    a claim: A's column r1 n = 2 x 2 = 4, B's (no retriever: its own column) n = 4 x 2 = 8.
    B's evidence is provided (given with the item): its 8 were not retrieved, and the caption
    must say which column that is; A's r1 is not named so.
    """
    table8 = (study / "report" / "tables" / "retrieval_quality.md").read_text()
    first = table8.splitlines()[0]
    assert "d/B (n=8)" in table8 and "d/r1 (n=4)" in table8
    assert "; d/B: evidence provided (given with the item, not retrieved)" in first
    assert "d/r1: evidence provided" not in first
    dominant = (study / "report" / "tables" / "retrieval_quality_dominant.md").read_text()
    assert "d/B: evidence provided" in dominant.splitlines()[0]


def test_a_closed_book_data_set_is_said_to_have_no_table_8_column(study: Path) -> None:
    """Data set d2 (A closed-book: evidence none, no passage) had no Table 8 column, unsaid.

    By hand: d2/A disagrees on q2s1 and q2s2 (as d/A), both attributed to verification (no
    passage: a closed-book claim is never blamed on retrieval); Table 8 has d/B and d/r1 alone.
    """
    from failcodes.report.rundir import load_run_dir

    inputs = load_run_dir(study)
    assert inputs.attribution == {"verification": 8}  # d: A 2 + B 4; d2: A 2
    table8 = (study / "report" / "tables" / "retrieval_quality.md").read_text()
    assert "d2/" not in table8.splitlines()[2]  # the header row: d/B and d/r1 alone
    assert inputs.notes["retrieval_quality"] == [
        "d2: evidence none (closed-book) for A: no passage of it is judged as retrieved, so "
        "Table 8 counts no unit of it and has no column for it (its disagreements are never "
        "blamed on retrieval: docs/attribution.md)"
    ]
    page = (study / "report" / "index.html").read_text()
    assert "d2: evidence none (closed-book) for A: no passage of it" in page


def test_a_study_with_no_table_8_says_why_beside_the_attribution(tmp_path: Path) -> None:
    """Every system closed-book: no Table 8 section at all; the note goes to the attribution.

    By hand: d/A and d/B closed-book (no passage), 2 + 4 disagreements, all verification.
    """
    import failcodes
    from failcodes.report.rundir import load_run_dir

    root = _study(tmp_path / "st")
    study = root / "failcodes.toml"
    text = study.read_text().replace("B.jsonl", "B_cb.jsonl")
    (root / "B_cb.jsonl").write_text(_rows("B", None, False))
    (root / "A.jsonl").write_text(_rows("A", None, False))
    text = text.replace('evidence = "retrieved"', 'evidence = "none"')
    text = text.replace('evidence = "provided"', 'evidence = "none"')
    study.write_text(text)
    failcodes.run_study(root, say=None)
    inputs = load_run_dir(root)
    assert inputs.per_passage is None
    assert inputs.attribution == {"verification": 8}
    assert "d: evidence none (closed-book) for A, B: no passage of them" in " ".join(
        inputs.notes["attribution"]
    )
    assert not (root / "report" / "tables" / "retrieval_quality.md").exists()


def test_closed_book_and_post_hoc_systems_are_named_by_their_evidence() -> None:
    """Systems whose every disagreement's evidence is none or post-hoc are said, grouped.

    By hand: B and C none (closed-book), A post-hoc (citations); D has closed-book and
    retrieved claims (it has Table 8 rows: not said), E provided (a Table 8 column).
    """
    from failcodes.report.rundir import _closed_book_notes

    notes = _closed_book_notes(
        {
            "d": {
                "A": {"post-hoc"},
                "B": {"none"},
                "C": {"none"},
                "D": {"none", "retrieved"},
                "E": {"provided"},
            }
        }
    )
    assert notes == [
        "d: evidence none (closed-book) for B, C: no passage of them is judged as retrieved, "
        "so Table 8 counts no unit of them and has no column for them (their disagreements are "
        "never blamed on retrieval: docs/attribution.md)",
        "d: evidence post-hoc (its passages are citations) for A: no passage of it is judged "
        "as retrieved, so Table 8 counts no unit of it and has no column for it (its "
        "disagreements are never blamed on retrieval: docs/attribution.md)",
    ]
