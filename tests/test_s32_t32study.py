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


def _rows(
    system: str, retriever: str, closed: tuple[str, ...] = (), given: tuple[str, ...] = ()
) -> str:
    """One JSONL line per sentence, two passages a claim; the questions in ``closed`` are
    closed-book claims (``evidence_source`` none, no passage), those in ``given`` provided
    (no retriever), the others declared retrieved."""
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
            if s[:2] not in given:
                row["retriever"] = retriever
            row["passages"] = [
                {"passage_id": f"{s}-{k}", "rank": k, "text": f"Drug {s} trial {k} lowers it."}
                for k in (1, 2)
            ]
            if closed or given:
                row["evidence_source"] = "provided" if s[:2] in given else "retrieved"
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


def test_the_plan_from_python_is_the_run_plan_of_the_cli(
    study: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`failcodes run STUDY --plan` had no Python face: a plan needed the study's internals
    (plan_study, load_state, is_finished). failcodes.plan_run gives it, each step's typed
    request on it.

    By hand, the study above plans 11 steps: ingest d (1)-(3) (A, B, C), (4) the labels,
    merge traces d, metrics d, disagreements d, judge retrieval d, judge reasoning d,
    attribute d, report. Fresh: none finished; once run: all 11 finished, and the lines are
    what `failcodes run STUDY --plan` prints.
    """
    import failcodes
    from tests.cli_helpers import run_cli

    fresh = _study(tmp_path / "fresh")
    plan = failcodes.plan_run(fresh)
    assert [p.step.name for p in plan.steps] == [
        "ingest d (1)",
        "ingest d (2)",
        "ingest d (3)",
        "ingest d (4)",
        "merge traces d",
        "metrics d",
        "disagreements d",
        "judge retrieval d",
        "judge reasoning d",
        "attribute d",
        "report",
    ]
    assert not any(p.finished for p in plan.steps) and len(plan.pending()) == 11
    assert isinstance(plan.steps[5].step.request, failcodes.MetricsRequest)
    root, _ = study
    done = failcodes.plan_run(root)
    assert [p.finished for p in done.steps] == [True] * 11 and done.pending() == []
    code, out, err = run_cli(["run", str(root), "--plan"], capsys)
    assert code == 0, err
    assert out.splitlines() == done.lines()
    assert done.lines()[5].endswith("-o " + str(root / "metrics" / "d.json") + "  # finished")


def test_run_study_takes_raw_csv_as_the_cli_does(tmp_path: Path) -> None:
    """`failcodes run --raw-csv` had no run_study argument (only the CLI's process-wide
    switch): from Python a claim id '+A-q2s1' was always written "'+A-q2s1" (neutralised
    against spreadsheet formulas). By hand: A's disagreements are q2s1 and q2s2, two passages
    each, so per_passage.csv's first two rows are A's q2s1 passages."""
    import failcodes

    root = _study(tmp_path / "st")
    path = root / "A.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text(
        "".join(json.dumps({**r, "claim_id": "+" + r["claim_id"]}) + "\n" for r in rows)
    )
    table = root / "attribution" / "d" / "per_passage.csv"

    def claim_ids() -> list[str]:
        return [line.split(",")[4] for line in table.read_text().splitlines()[1:3]]

    failcodes.run_study(root, say=None, raw_csv=True)
    assert claim_ids() == ["+A-q2s1", "+A-q2s1"]
    failcodes.run_study(root, say=None, force=True)
    assert claim_ids() == ["'+A-q2s1", "'+A-q2s1"]


def test_a_system_given_evidence_for_some_claims_alone_is_not_called_provided_whole(
    tmp_path: Path,
) -> None:
    """C retrieved from r2 for q1, q2 and was given its q3 passages (evidence provided, no
    retriever: its own column C). Table 8's caption said "C, r2: evidence provided (given with
    the item, not retrieved): n counts the passages given", though r2 holds C's retrieved
    passages alone.

    By hand: C refutes q1s1, q3s2; errors q1s1, q2s1: C disagrees on q2s1 (FN, retrieved from
    r2: 2 units) and q3s2 (FP, provided: 2 units in column C); pubmed n = 10 (A 4 + B 8 - the
    2 units of q2s1 both hold, as in the first test).
    per_passage.csv has no evidence column, so which of C's columns holds the given passages
    is not known to the report: the caption says the share (1 of C's 2) and "may count".
    """
    import failcodes

    root = _study(tmp_path / "st")
    (root / "C.jsonl").write_text(_rows("C", "r2", given=("q3",)))
    failcodes.run_study(root, say=None)
    table8 = (root / "report" / "tables" / "retrieval_quality.md").read_text()
    assert "| C (n=2) | pubmed (n=10) | r2 (n=2) |" in table8
    first = table8.splitlines()[0]
    assert "C, r2: evidence provided (given with the item, not retrieved): n counts" not in first
    assert (
        "; C, r2: evidence provided (given with the item, not retrieved) for 1 of C's 2 "
        "disagreements with a judged passage (retrieved for the others): n may count both, the "
        "passages given and those retrieved for the disagreements' claims"
    ) in first


def test_report_with_another_codebook_than_the_runs_names_the_runs_and_the_given_one(
    study: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """`report STUDY --codebook` naming the bundled v2 on runs coded under v1 (whose copy is
    in the study folder, and bundled) said "annotations were made under codebook
    medical-fact-check@1+7e76b8948be6, which is neither in the study folder nor bundled; pass
    --codebook with that exact version": false on both counts. (7e76b8948be6: the bundled v1's
    hash, as the study copied it.)"""
    import failcodes

    root, _ = study
    given = bundled_dir() / "medical-fact-check.v2.yaml"
    v2 = failcodes.load_codebook(given)
    request = failcodes.ReportRequest(run_dir=root, codebook=given, out=tmp_path / "rep")
    with pytest.raises(failcodes.FailcodesError) as caught:
        failcodes.run(request, note=None)
    assert str(caught.value) == (
        "annotations were made under codebook medical-fact-check@1+7e76b8948be6 (first: "
        f"judge/d/retrieval), not the --codebook given (medical-fact-check@2+{v2.hash[:12]}): a "
        "report reads the judge's codes under the codebook they were coded under; leave "
        "--codebook out (its copy in the study folder is read), or re-code the runs to it (name "
        "it in the study file's codebook: failcodes run STUDY plans failcodes recode)"
    )
    assert not (tmp_path / "rep").exists()


def test_a_partly_closed_book_system_without_a_table_8_names_no_table_8(tmp_path: Path) -> None:
    """With `[judge] kinds = ["reasoning"]` no passage is judged and there is no Table 8: the
    note on C's closed-book disagreement ("Table 8 counts the units of its other 1 alone") was
    put beside the attribution (by 470789b), of a table the report does not have. By hand:
    A 2 + B 4 + C 2 = 8 disagreements attributed (the stages are the rule's without retrieval
    codes; only the count is pinned here)."""
    import failcodes
    from failcodes.report.rundir import load_run_dir

    root = _study(tmp_path / "st")
    study_file = root / "failcodes.toml"
    study_file.write_text(
        study_file.read_text().replace(
            'judge = "offline"\n', 'judge = "offline"\nkinds = ["reasoning"]\n'
        )
    )
    failcodes.run_study(root, say=None)
    inputs = load_run_dir(root)
    assert inputs.per_passage is None
    assert sum((inputs.attribution or {}).values()) == 8  # A 2 + B 4 + C 2 disagreements
    assert not [n for n in inputs.notes["attribution"] if "of C's 2 disagreements" in n]
