"""Outside red-team, session 11 (t11red1): shapes the other tests do not use.

Each test holds the value computed by hand beside its assertion, or the one-line refusal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.saturation import (
    Action,
    Decision,
    ProjectConfig,
    ProjectStore,
    ProposalDraft,
    SaturationError,
    ScriptedCoder,
    ScriptedProposer,
    accumulation,
    init_project,
    record_decisions,
    run_round,
)
from failcodes.units import UnitKind
from tests.saturation.satfixtures import make_pool, small_codebook

# ---------------------------------------------------------------------------------------
# saturate: a rename that restates a code of the codebook, or another addition of its round
# ---------------------------------------------------------------------------------------
_ANIMAL = ProposalDraft(
    dimension="scope",
    parent_subcode="different_context",
    name="Animal study",
    definition="The passage reports findings in animals, not in humans.",
)
_SCRIPT = {
    1: [_ANIMAL],
    2: [
        ProposalDraft(
            dimension="scope",
            parent_subcode="different_context",
            name="Paediatric population",
            definition="The passage studies children while the claim is about adults.",
        ),
        ProposalDraft(
            dimension="scope",
            parent_subcode="different_context",
            name="Dose regimen differs",
            definition="Another dose or schedule than the claim.",
        ),
        ProposalDraft(  # a new subcode: every unit coded on scope is flagged
            dimension="scope",
            parent_subcode=None,
            name="Outdated evidence",
            definition="The passage was superseded by later findings.",
        ),
    ],
}


def _decide(store: ProjectStore, number: int, choices: dict[str, dict[str, str]]) -> None:
    record_decisions(
        store,
        [
            Decision(proposal_id=pid, round=number, reviewer="alice", via="test", **kw)  # type: ignore[arg-type]
            for pid, kw in choices.items()
        ],
    )


def _project(root: Path, name: str = "red11") -> ProjectStore:
    """A retrieval saturation project of 30 pool units, rounds of 5, the small codebook."""
    config = ProjectConfig(
        name=name, kind=UnitKind.RETRIEVAL, batch_size=5, seed=7, codebook_name="testbook"
    )
    return init_project(root, config, small_codebook(), make_pool())


def two_rounds_project(root: Path) -> ProjectStore:
    """Round 1 accepted 'Animal study' (v2); round 2 awaits review with three proposals."""
    store = _project(root)
    proposer = ScriptedProposer(_SCRIPT)
    run_round(store, ScriptedCoder(), proposer)
    _decide(store, 1, {"r0001-p01": {"action": Action.ACCEPT}})
    run_round(store, ScriptedCoder(), proposer)
    return store


def _rename_p01(
    store: ProjectStore, new_name: str, more: dict[str, dict[str, str]] | None = None
) -> None:
    """Round 2's decisions: p01 renamed ``new_name``, p02 accepted, ``more`` (id: decision)."""
    renamed = {"action": Action.RENAME, "new_name": new_name}
    _decide(
        store, 2, {"r0002-p01": renamed, "r0002-p02": {"action": Action.ACCEPT}, **(more or {})}
    )


@pytest.fixture
def two_rounds(tmp_path: Path) -> ProjectStore:
    return two_rounds_project(tmp_path / "proj")


def test_rename_to_an_existing_leaf_is_refused_not_counted_as_new(
    two_rounds: ProjectStore,
) -> None:
    # Before: renaming round 2's p01 to 'Animal study' (the label of the leaf round 1 added)
    # added leaf animal_study_2 with the same label and counted it as a new pattern:
    # accumulation r2 +2 (=3) where the distinct patterns are 2 (animal study, dose regimen).
    before = len(two_rounds.decisions())  # 1 (round 1's accept)
    with pytest.raises(
        SaturationError,
        match=r"r0002-p01: renamed to 'animal studies'.*"
        r"leaf:animal_study.*merge with target leaf:animal_study",
    ):
        _rename_p01(two_rounds, "animal studies")
    assert len(two_rounds.decisions()) == before == 1  # nothing written
    assert [p.cumulative for p in accumulation(two_rounds)] == [1]  # round 1's one pattern


def test_rename_onto_another_addition_of_the_round_is_refused(two_rounds: ProjectStore) -> None:
    # Before: p01 renamed 'Dose regimen differs' took id dose_regimen_differ; p02 accepted
    # with that proposed id: the decisions were written, then closing failed on a duplicate
    # id (exit 2, the round stuck with recorded decisions).
    with pytest.raises(
        SaturationError,
        match=r"r0002-p02: accepted as 'Dose regimen differs', "
        r"as r0002-p01 is in this round",
    ):
        _rename_p01(two_rounds, "Dose regimen differs")
    assert len(two_rounds.decisions()) == 1
    # a distinct name closes the round with 2 new patterns: 1 + 2 = 3 cumulative
    _rename_p01(two_rounds, "Children only", {"r0002-p03": {"action": Action.REJECT}})
    assert [p.cumulative for p in accumulation(two_rounds)] == [1, 3]


# ---------------------------------------------------------------------------------------
# report: three tables of one data set count three different things; the captions say which
# ---------------------------------------------------------------------------------------
_ERRORS = {"q2s1", "q3s2", "q5s1", "q6s2"}  # the clinicians' errors among q1s1 .. q6s2
# refuted sentences per system (every other claim is supported); A has two claims in q1s1
# (both refuted) and in q5s2 (one refuted, one supported)
_REFUTED = {
    "A": {"q1s1", "q3s2", "q5s1", "q5s2", "q6s2"},
    "B": {"q1s2", "q3s1", "q4s2", "q5s1", "q6s2"},
    "C": {"q2s1", "q5s1", "q6s2"},
}
_STUDY = """name = "red11"
codebook = "medical-fact-check.v1.yaml"

[[datasets]]
name = "d"
{ingests}
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["labels.jsonl"]

[[datasets.pipelines]]
system = "A"
evidence = "retrieved"

[[datasets.pipelines]]
system = "B"
evidence = "retrieved"

[[datasets.pipelines]]
system = "C"
evidence = "none"

[metrics]
mappings = ["refuted"]
bootstrap = 0

[judge]
judge = "offline"

[review]
labelstudio = false
"""


def _trace(system: str, sid: str, claim_id: str, claim: str, verdict: str) -> dict[str, object]:
    row: dict[str, object] = {
        "system": system,
        "question_id": sid[:2],
        "sentence_id": sid,
        "claim_id": claim_id,
        "claim": claim,
        "verdict": verdict,
        "reasoning": f"The evidence about {claim} makes it {verdict}.",
        "verifier": "gpt",
    }
    if system != "C":  # C is closed-book: no retriever, no passages
        row["retriever"] = "bm25"
        row["passages"] = [
            {"passage_id": f"{sid}-{k}", "rank": k, "text": f"In mice, drug {sid} lowered it {k}."}
            for k in (1, 2)
        ]
    return row


def _write_study(root: Path, labels: list[dict[str, object]] | None = None) -> Path:
    import json
    import shutil

    from failcodes.codebook import bundled_dir

    root.mkdir()
    sentences = [f"q{q}s{s}" for q in range(1, 7) for s in (1, 2)]
    for system, refuted in _REFUTED.items():
        rows = []
        for sid in sentences:
            verdict = "refuted" if sid in refuted else "supported"
            rows.append(
                _trace(system, sid, f"c-{sid}", f"drug {sid} lowers blood pressure", verdict)
            )
            if system == "A" and sid in ("q1s1", "q5s2"):
                second = "refuted" if sid == "q1s1" else "supported"
                rows.append(_trace(system, sid, f"c-{sid}b", f"drug {sid} is safe", second))
        (root / f"{system}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if labels is None:
        labels = [
            {"sentence_id": sid, "question_id": sid[:2], "has_error": sid in _ERRORS}
            for sid in sentences
        ]
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    ingests = "".join(
        f'\n[[datasets.ingest]]\nadapter = "generic"\npaths = ["{s}.jsonl"]\n' for s in _REFUTED
    )
    (root / "failcodes.toml").write_text(_STUDY.format(ingests=ingests))
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


def test_report_captions_say_what_each_table_counts(tmp_path: Path) -> None:
    import failcodes

    study = _write_study(tmp_path / "st")
    failcodes.run_study(study)
    tables = study / "report" / "tables"
    # Disagreements by hand (refuted = flagged; errors q2s1 q3s2 q5s1 q6s2):
    #   A: FP q1s1, FN q2s1, FP q5s2 (one of its 2 claims refuted)         -> 3 sentences
    #   B: FP q1s2, FN q2s1, FP q3s1, FN q3s2, FP q4s2                      -> 5 sentences
    #   C: FN q3s2                                                           -> 1 sentence
    # Attribution summary: 3 + 5 + 1 = 9 (sentences).
    # Table 9 (per claim): A 2 + 1 + 2 = 5 claims, B 5, C 1 -> gpt (n=11).
    # Table 8 (per distinct claim and passage of a retriever, C has none): A 5 claims x 2 =
    #   10, B 5 x 2 = 10 -> 20 rows, but B's q2s1 claim and passages are A's (2 units coded
    #   once, retrieved for both): 20 - 2 = 18 distinct units (session 25: counted twice before).
    attribution = (tables / "attribution.md").read_text()
    assert attribution.splitlines()[-1].startswith("| all |")
    assert attribution.splitlines()[-1].endswith("| 9 |")  # the total column
    assert "one count per disagreement (a labelled sentence" in attribution.splitlines()[0]
    steps = (tables / "reasoning_steps.md").read_text()
    assert "gpt (n=11)" in steps
    assert "n: the disagreements' claims, one per claim" in steps.splitlines()[0]
    # A's q5s2 is a false alarm through c-q5s2 alone; c-q5s2b (supported) is a row too
    assert "a false alarm's claims that raised no error too" in steps.splitlines()[0]
    quality = (tables / "retrieval_quality.md").read_text()
    assert "bm25 (n=18)" in quality
    first = quality.splitlines()[0]
    assert "n = distinct (claim, passage) units" in first
    assert "a unit retrieved for several systems counted once" in first
    # the dominant-errors tables count the same units ('coded' 18 and 11)
    dominant = (tables / "retrieval_quality_dominant.md").read_text()
    assert "n = distinct (claim, passage) units" in dominant.splitlines()[0]
    assert all(line.split("|")[5].strip() == "18" for line in dominant.splitlines()[4:5])
    steps_dominant = (tables / "reasoning_steps_dominant.md").read_text()
    assert "n: the disagreements' claims, one per claim" in steps_dominant.splitlines()[0]


# ---------------------------------------------------------------------------------------
# compare: which p-values 'p (Holm)' adjusts together
# ---------------------------------------------------------------------------------------
def test_compare_says_holm_is_per_test_and_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from tests.cli_helpers import run_cli

    # 3 systems x 4 units with a truth: McNemar, F1 and recall families of 3 pairs each
    table = tmp_path / "preds.csv"
    table.write_text("unit,label,A,B,C\nu1,1,1,0,1\nu2,1,1,1,0\nu3,0,0,1,0\nu4,1,0,0,1\n")
    args = ["compare", str(table), "--truth", "label", "--resamples", "50"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    # families with a Holm column: mcnemar, permutation_f1, permutation_recall = 3 (Cochran's Q
    # has none); pairs: 3 * 2 / 2 = 3
    assert (
        "p (Holm): adjusted within each family of one test's 3 system pair(s) (3 families "
        "here), not across the tests: for one correction over the whole table, adjust its p "
        "column together"
    ) in out
    code, out, _ = run_cli([*args, "--format", "json"], capsys)
    assert json.loads(out)["holm"].startswith("p (Holm): adjusted within each family")
    # one family (McNemar only, no truth): nothing to say
    code, out, _ = run_cli(
        ["compare", str(table), "--systems", "A,B,C", "--format", "json"], capsys
    )
    assert json.loads(out)["holm"] is None


# ---------------------------------------------------------------------------------------
# report: a data set, or a system, with no disagreement
# ---------------------------------------------------------------------------------------
_SENTENCES = [f"q{q}s{s}" for q in range(1, 7) for s in (1, 2)]


def _report_text(study: Path) -> str:
    import html
    import re

    page = (study / "report" / "index.html").read_text()
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_report_says_a_system_or_data_set_without_disagreements(tmp_path: Path) -> None:
    import failcodes

    # shared labels whose errors are exactly C's refuted sentences (q2s1 q5s1 q6s2): C has 0
    # disagreements; A flags q1s1 q3s2 q5s1 q5s2 q6s2 -> FP q1s1, FN q2s1, FP q3s2, FP q5s2 = 4;
    # B flags q1s2 q3s1 q4s2 q5s1 q6s2 -> FP q1s2, FN q2s1, FP q3s1, FP q4s2 = 4; all = 8
    errors = _REFUTED["C"]
    shared = [
        {"sentence_id": sid, "question_id": sid[:2], "has_error": sid in errors}
        for sid in _SENTENCES
    ]
    one = _write_study(tmp_path / "one", shared)
    failcodes.run_study(one)
    attribution = (one / "report" / "tables" / "attribution.md").read_text()
    assert "| C |" not in attribution
    rows = {line.split("|")[1].strip(): line for line in attribution.splitlines() if "|" in line}
    assert rows["A"].endswith("| 4 |") and rows["B"].endswith("| 4 |")
    assert rows["all"].endswith("| 8 |")
    assert (
        "d: no disagreement for C: nothing of it was judged, so the attribution summary has no "
        "row of it (0 disagreements)"
    ) in _report_text(one)

    # per-system labels equal to each system's own flags: no disagreement at all
    own = [
        {"system": system, "sentence_id": sid, "question_id": sid[:2], "has_error": sid in flagged}
        for system, flagged in _REFUTED.items()
        for sid in _SENTENCES
    ]
    none = _write_study(tmp_path / "none", own)
    failcodes.run_study(none)
    assert (none / "disagreements" / "d.jsonl").read_text() == ""
    assert not (none / "report" / "tables" / "attribution.md").exists()
    assert (
        "d: no disagreement between its systems' verdicts and the labels (disagreements/d.jsonl "
        "is empty): nothing was judged or attributed, so it has no attribution summary and no "
        "Tables 8-9"
    ) in _report_text(none)


# ---------------------------------------------------------------------------------------
# saturate status: how units reached their version, after two re-codes
# ---------------------------------------------------------------------------------------
def test_status_counts_each_unit_once_after_two_recodes(two_rounds: ProjectStore) -> None:
    import failcodes
    from failcodes.commands.saturate import SaturateRecodeRequest
    from failcodes.saturation.status import project_status

    def recode() -> None:
        request = SaturateRecodeRequest(
            name="red11", folder=two_rounds.root, judge=["offline"], no_cache=True
        )
        failcodes.run(request, note=lambda _: None)

    # round 1 coded 5 units under v1 (ScriptedCoder: high-quality codes); 'Animal study' made
    # v2, a leaf under scope/different_context: no unit coded different_context, 0 flagged
    recode()  # v2: 0 re-coded, 5 migrated; round 2 coded its 5 under v2
    assert [e.method.value for e in two_rounds.recode_entries()] == ["migrated"] * 5
    _decide(
        two_rounds,
        2,
        {
            "r0002-p01": {"action": Action.REJECT},
            "r0002-p02": {"action": Action.REJECT},
            "r0002-p03": {"action": Action.ACCEPT},  # new subcode of scope: all 10 flagged
        },
    )
    assert two_rounds.codebook().version == 3
    assert len({f.unit_id for f in two_rounds.recode_flags()}) == 10
    recode()  # v3: the 10 units re-coded by the offline judge
    info = project_status(two_rounds)
    assert info.unit_versions == {3: 10}
    # each unit counted once, by the re-code that brought it to v3: 10 re-coded, 0 migrated.
    # Before: any entry counted, so round 1's 5 units were also 'migrated' (to v2):
    # "v3: 10; 10 re-coded, 5 migrated" (15 of 10 units)
    assert (info.recoded_units, info.migrated_units) == (10, 0)


# ---------------------------------------------------------------------------------------
# saturate prune: a leaf's support counts the decision that counts
# ---------------------------------------------------------------------------------------
def test_prune_support_ignores_a_merge_changed_to_reject(two_rounds: ProjectStore) -> None:
    from failcodes.saturation.prune import leaf_support

    leaf = "animal_study"  # accepted in round 1 from r0001-p01
    r1_examples = set(two_rounds.proposals(1)[0].example_unit_ids)
    assert len(r1_examples) == 2  # ScriptedProposer: the batch's first 2 ids
    # round 2: p01 merged into the leaf, then (round still open) changed to reject
    _decide(two_rounds, 2, {"r0002-p01": {"action": Action.MERGE, "target": f"leaf:{leaf}"}})
    _decide(
        two_rounds,
        2,
        {
            "r0002-p01": {"action": Action.REJECT},
            "r0002-p02": {"action": Action.REJECT},
            "r0002-p03": {"action": Action.REJECT},
        },
    )
    # support = units carrying the leaf (none: the scripted coder gives no leaves) + round 1's
    # 2 examples; before: + round 2 p01's 2 examples (another batch) = 4 for 2
    assert leaf_support(two_rounds)[leaf] == r1_examples


# ---------------------------------------------------------------------------------------
# report: comparisons under several mappings (compare --format json saved in comparisons/)
# ---------------------------------------------------------------------------------------
def test_report_comparisons_keep_the_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from tests.cli_helpers import run_cli

    verdicts = {  # labels: s1, s2 errors; s3, s4 not
        "A": {"s1": "refuted", "s2": "no_evidence", "s3": "supported", "s4": "no_evidence"},
        "B": {"s1": "refuted", "s2": "refuted", "s3": "supported", "s4": "supported"},
    }
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        "".join(
            json.dumps(
                {
                    "system": system,
                    "question_id": "q1",
                    "sentence_id": sid,
                    "claim_id": sid,
                    "claim": f"claim {sid}",
                    "verdict": verdict,
                }
            )
            + "\n"
            for system, by_sentence in verdicts.items()
            for sid, verdict in by_sentence.items()
        )
    )
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"sentence_id": f"s{i}", "question_id": "q1", "has_error": i <= 2}) + "\n"
            for i in range(1, 5)
        )
    )
    study = tmp_path / "st"
    (study / "comparisons").mkdir(parents=True)
    args = ["compare", "--traces", str(traces), "--labels", str(labels), "--resamples", "20"]
    code, out, _ = run_cli(
        [*args, "-m", "refuted", "-m", "non_supported", "--format", "json"], capsys
    )
    assert code == 0
    (study / "comparisons" / "d.json").write_text(out)
    code, _, _ = run_cli(["report", str(study), "-o", str(study / "report")], capsys)
    assert code == 0
    table = (study / "report" / "tables" / "comparisons.md").read_text()
    assert "| data | mapping | test |" in table
    # F1 = 2TP / (2TP + FP + FN). refuted: A flags s1 (TP 1, FN 1) -> 2/3; B flags s1, s2 -> 1;
    # A - B = -0.333. non_supported: A flags s1, s2, s4 (TP 2, FP 1) -> 4/5; B 1; -0.200.
    # Before: both rows read "| d | permutation_f1 | A vs B | ..." with no mapping.
    assert "| d | refuted | permutation_f1 | A vs B | -0.333 |" in table
    assert "| d | non_supported | permutation_f1 | A vs B | -0.200 |" in table
    assert "not across tests, mappings or data sets" in table.splitlines()[0]


# ---------------------------------------------------------------------------------------
# compare --question-scope answered: the paired units are the questions every system answered
# ---------------------------------------------------------------------------------------
def test_compare_answered_scope_says_the_questions_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from tests.cli_helpers import run_cli

    # A and B answered q1 and q2, C only q2 (one sentence each; labels: q1s1 error, q2s1 error)
    rows = [("A", "q1"), ("B", "q1"), ("A", "q2"), ("B", "q2"), ("C", "q2")]
    verdict = {"A": "refuted", "B": "supported", "C": "refuted"}
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        "".join(
            json.dumps(
                {
                    "system": system,
                    "question_id": q,
                    "sentence_id": f"{q}s1",
                    "claim_id": f"{q}c1",
                    "claim": f"claim of {q}",
                    "verdict": verdict[system],
                }
            )
            + "\n"
            for system, q in rows
        )
    )
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"sentence_id": f"{q}s1", "question_id": q, "has_error": True}) + "\n"
            for q in ("q1", "q2")
        )
    )
    args = ["compare", "--traces", str(traces), "--labels", str(labels)]
    code, out, _ = run_cli([*args, "--question-scope", "answered", "--resamples", "20"], capsys)
    assert code == 0
    first = out.splitlines()[0]
    # the tests pair q2 only: n = 1 positive unit in McNemar (A hit, B missed), though A and B
    # both answered q1. Before, the first line said "each is scored on the questions it
    # answered", and the 1 sentence of q1 left out for every system was said nowhere.
    assert "each is scored on the questions it answered" not in first
    assert (
        "the tests pair the questions every system answered (1 labelled sentence(s) of "
        "questions some system never answered are left out for every system)"
    ) in first
    code, out, _ = run_cli(
        [*args, "--question-scope", "answered", "--resamples", "20", "--format", "json"], capsys
    )
    tests = json.loads(out)["tests"]
    mcnemar = next(
        t for t in tests if t["test"].startswith("mcnemar") and t["comparison"] == "A vs B"
    )
    assert mcnemar["n"] == 1
    assert json.loads(out)["n_unanswered"] == 1


# ---------------------------------------------------------------------------------------
# saturate status: the accumulation curve's version after a prune between rounds
# ---------------------------------------------------------------------------------------
def test_accumulation_names_the_version_a_prune_made(tmp_path: Path) -> None:
    from failcodes.saturation.prune import apply_prune_file, write_prune_file

    store = _project(tmp_path / "proj")
    proposer = ScriptedProposer(_SCRIPT)
    run_round(store, ScriptedCoder(), proposer)
    _decide(store, 1, {"r0001-p01": {"action": Action.ACCEPT}})  # v2: leaf animal_study
    listing = write_prune_file(store, min_support=10)  # support 2 (its 2 examples) < 10
    text = listing.read_text().replace("reviewer: ''", "reviewer: alice")
    listing.write_text(text.replace("action: ''", "action: delete"))
    apply_prune_file(store, listing)
    assert store.codebook().version == 3  # the prune's version
    run_round(store, ScriptedCoder(), proposer)  # round 2, coded under v3
    _decide(store, 2, {f"r0002-p0{i}": {"action": Action.REJECT} for i in (1, 2, 3)})
    # round 1 made v2; round 2 (coded under v3, nothing accepted) leaves v3 in force.
    # Before: the curve carried round 1's v2 on to round 2.
    assert [(p.round, p.codebook_version) for p in accumulation(store)] == [(1, 2), (2, 3)]


# ---------------------------------------------------------------------------------------
# report: a study with two saturation projects
# ---------------------------------------------------------------------------------------
def test_report_names_every_saturation_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli_helpers import run_cli

    study = tmp_path / "st"
    for name in ("a-retrieval", "b-retrieval"):
        store = _project(study / "saturation" / name, name)
        run_round(store, ScriptedCoder(), ScriptedProposer(_SCRIPT))
        _decide(store, 1, {"r0001-p01": {"action": Action.ACCEPT}})
    code, _, _ = run_cli(["report", str(study), "-o", str(study / "report")], capsys)
    assert code == 0
    text = _report_text(study)
    # 5 of 30 pool units used by round 1 of each project; round 1 accepted 1 pattern (v2)
    assert (
        "Project 'a-retrieval' (retrieval) (its accumulation curve is the figure): 5 of 30 pool "
        "units used, codebook versions [1, 2]"
    ) in text
    # before: the second project was said nowhere
    assert (
        "Project 'b-retrieval' (retrieval) (not drawn: the figure is project 'a-retrieval''s): "
        "5 of 30 pool units used, codebook versions [1, 2]"
    ) in text


def test_a_verifier_column_pooling_several_systems_is_named_in_the_caption() -> None:
    # Table 9 has a column per verifier: closed-book system C and retrieval system A both
    # verified by gpt-4o are one column (3 claims of A, 2 of C pooled), which no caption said.
    # B alone under llama pools nothing. Expected words: the verifier and its two systems.
    import pandas as pd

    from failcodes.report.tables import pooled_caption

    coded = pd.DataFrame(
        {
            "system": ["A", "A", "A", "C", "C", "B"],
            "verifier": ["gpt-4o"] * 5 + ["llama"],
        }
    )
    assert pooled_caption(coded, "verifier") == (
        "; a verifier's column pools the systems that share it (gpt-4o: A, C)"
    )
    assert pooled_caption(coded[coded["system"] != "C"], "verifier") == ""
