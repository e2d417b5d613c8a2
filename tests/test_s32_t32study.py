"""Session 32 (t32study): whole studies on designs no test used, the report read by hand."""

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
REFUTES = {"A": {"q1s1", "q2s2"}, "B": {"q1s2", "q3s1"}, "C": {"q1s1", "q3s2"}}


def _rows(system: str, retriever: str, closed: tuple[str, ...] = ()) -> str:
    """One JSONL line per sentence, two passages a claim; the questions in ``closed`` are
    closed-book claims (``evidence_source`` none, no passage), the others declared retrieved."""
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
        if s[:2] in closed:
            row["evidence_source"] = "none"
        else:
            row["retriever"] = retriever
            row["passages"] = [
                {"passage_id": f"{s}-{k}", "rank": k, "text": f"Drug {s} trial {k} lowers it."}
                for k in (1, 2)
            ]
            if closed:
                row["evidence_source"] = "retrieved"
        rows.append(json.dumps(row) + "\n")
    return "".join(rows)


def _study(root: Path) -> Path:
    """Data set d: A retrieved from pubmed; B given pubmed abstracts with each item (evidence
    provided, its retriever column also named pubmed); C retrieved from r2 for q1, q2 and
    closed-book for q3 (each trace declares its own evidence source)."""
    root.mkdir()
    (root / "A.jsonl").write_text(_rows("A", "pubmed"))
    (root / "B.jsonl").write_text(_rows("B", "pubmed"))
    (root / "C.jsonl").write_text(_rows("C", "r2", closed=("q3",)))
    (root / "labels.jsonl").write_text(
        "".join(
            json.dumps({"sentence_id": s, "question_id": s[:2], "has_error": s in ERRORS}) + "\n"
            for s in SENTENCES
        )
    )

    def ingest(system: str) -> str:
        return (
            f'[[datasets.ingest]]\nadapter = "generic"\npaths = ["{system}.jsonl"]\n'
            f'system = "{system}"\n\n'
        )

    def pipe(system: str, evidence: str) -> str:
        return f'[[datasets.pipelines]]\nsystem = "{system}"\nevidence = "{evidence}"\n\n'

    (root / "failcodes.toml").write_text(
        'name = "s32"\ncodebook = "medical-fact-check.v1.yaml"\n\n'
        f'[[datasets]]\nname = "d"\n\n{ingest("A")}{ingest("B")}{ingest("C")}'
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["labels.jsonl"]\n\n'
        f"{pipe('A', 'retrieved')}{pipe('B', 'provided')}"
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n\n[judge]\njudge = "offline"\n\n'
        "[review]\nlabelstudio = false\n"
    )
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The study above, run once through the Python layer; what the run said."""
    import failcodes

    root = _study(tmp_path_factory.mktemp("s32study") / "st")
    said: list[str] = []
    results = failcodes.run_study(root, say=said.append)
    assert all(r.outcome.value == "ran" for r in results), results
    return root, said


def test_a_column_pooling_provided_and_retrieved_evidence_says_both(
    study: tuple[Path, list[str]],
) -> None:
    """Table 8's column pubmed pools A (retrieved) and B (provided): it was captioned
    "pubmed: evidence provided (given with the item, not retrieved): n counts the passages
    given" as a whole, though 4 of its 10 units were retrieved for A.

    By hand: A refutes q1s1, q2s2, B q1s2, q3s1; errors q1s1, q2s1. A disagrees on q2s1 (FN),
    q2s2 (FP): 2 claims x 2 passages = 4 units; B on q1s1, q2s1 (FN), q1s2, q3s1 (FP): 8 units;
    A's and B's q2s1 are the same (claim, passage) units (the same claim text and passages),
    counted once: pubmed n = 4 + 8 - 2 = 10. C disagrees on q2s1 (FN, retrieved from r2: 2
    units) and q3s2 (FP, closed-book: none): r2 n = 2.
    """
    root, _ = study
    table8 = (root / "report" / "tables" / "retrieval_quality.md").read_text()
    first = table8.splitlines()[0]
    assert "| pubmed (n=10) | r2 (n=2) |" in table8
    assert "pubmed: evidence provided (given with the item, not retrieved): n counts" not in first
    assert (
        "; pubmed: evidence provided (given with the item, not retrieved) for B, retrieved for "
        "A: n counts both, the passages given and those retrieved for the disagreements' claims"
    ) in first
    dominant = (root / "report" / "tables" / "retrieval_quality_dominant.md").read_text()
    assert (
        "pubmed: evidence provided (given with the item, not retrieved) for B, retrieved"
        in (dominant.splitlines()[0])
    )


def test_a_system_partly_closed_book_is_said_under_table_8_and_by_the_run(
    study: tuple[Path, list[str]],
) -> None:
    """C's q3 claims are closed-book, its q1, q2 claims retrieved: of its 2 disagreements
    (q2s1 FN retrieved, q3s2 FP closed-book) one has no Table 8 unit and is never blamed on
    retrieval. attribute said it on its first line, which `failcodes run` kept in the step's
    log alone; the report said nothing of it.

    By hand: attribution d: A 2 + B 4 + C 2 = 8 disagreements, all verification (every
    passage high quality under the offline baseline; q3s2 closed-book).
    """
    from failcodes.report.rundir import load_run_dir

    root, said = study
    inputs = load_run_dir(root)
    assert inputs.attribution == {"verification": 8}
    assert inputs.notes["retrieval_quality"] == [
        "d: 1 of C's 2 disagreements have no passage judged as retrieved (evidence none: "
        "closed-book): Table 8 counts the units of its other 1 alone, and that one is never "
        "blamed on retrieval (docs/attribution.md)"
    ]
    assert [line for line in said if line.startswith("system 'C'")] == [
        "system 'C': 1 of its 2 claims here are closed-book (evidence source none), the others "
        "retrieved: attributed so, the closed-book ones to verification; if its retriever "
        "found nothing for them (a source derived from no passages), --evidence C=retrieved "
        "attributes them to retrieval (docs/attribution.md step 4)"
    ]


def test_a_table_attributed_before_a_re_code_is_refused_naming_why(
    study: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """The codebook split after the judge ran (v1 exact_entity -> v2 exact_entity_drug,
    exact_entity_other), both judge runs re-coded by hand (`failcodes recode --dataset d
    --kind ...`), the report built before `failcodes run` attributed again: per_passage.csv
    still holds v1's exact_entity. The report refused it as "'exact_entity' is not a subcode
    of dimension 'entity_match'" (a typo?), naming neither the codebook it read nor the
    re-code; now it names the version and the way (`failcodes run STUDY` attributes again),
    which then builds Table 8 under v2 (pubmed n = 10, every unit exact_entity_drug: the
    offline baseline takes the split's high code for an exact match).
    """
    import failcodes
    from failcodes import codebook
    from failcodes.codebook import Subcode

    root = tmp_path / "st"
    shutil.copytree(study[0], root)
    v1 = codebook.load(root / "medical-fact-check.v1.yaml")
    split = [
        Subcode(
            id="exact_entity_drug",
            label="Exact entity (drug)",
            definition="Same drug and outcome as the claim.",
            high_quality=True,
        ),
        Subcode(id="exact_entity_other", label="Exact entity (other)", definition="Not a drug."),
    ]
    codebook.save(codebook.split_subcode(v1, "exact_entity", split, changelog="split"), root)
    study_file = root / "failcodes.toml"
    study_file.write_text(study_file.read_text().replace(".v1.yaml", ".v2.yaml"))
    for kind in ("retrieval", "reasoning"):
        failcodes.run(failcodes.RecodeRequest(study=root, dataset="d", kind=kind), note=None)
    with pytest.raises(failcodes.FailcodesError) as caught:
        failcodes.run(failcodes.ReportRequest(run_dir=root), note=None)
    assert str(caught.value).endswith(
        "per_passage.csv:2, field 'entity_match': 'exact_entity' is not a subcode of dimension "
        "'entity_match' of codebook medical-fact-check v2 (the report's); coded under another "
        "version? A table attributed before a re-code holds the old codes: `failcodes run "
        "STUDY` attributes again"
    )
    failcodes.run_study(root, say=None)
    table8 = (root / "report" / "tables" / "retrieval_quality.md").read_text()
    assert "| pubmed (n=10) | r2 (n=2) |" in table8
    assert "| Entity match | Exact entity (drug) | 100.0 | 100.0 |" in table8
