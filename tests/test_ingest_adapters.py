"""Every adapter on its real file (skipped without ../shared/data) and on hand-made fixtures.

Expected counts are computed independently here from the raw JSON (or quoted from the data's
SOURCE.md), never from the adapter under test.
"""

from __future__ import annotations

import collections
import copy
import hashlib
import itertools
import json
from pathlib import Path

import pytest

from failcodes import bundled
from failcodes.errors import ConfigError, InputError
from failcodes.ingest import AdapterOptions, get_adapter, names
from failcodes.traces import EvidenceSource
from failcodes.verdicts import Verdict
from tests.conftest import REPO, reference_data, shared_data

FIXTURES = Path(__file__).parent / "fixtures"


def test_registry_lists_all_adapters() -> None:
    assert {"generic", "generic-labels", "medscore", "medexpert", "ragchecker", "scifact"} <= set(
        names()
    )
    with pytest.raises(ConfigError, match="unknown adapter 'nope'"):
        get_adapter("nope")


@pytest.mark.parametrize(
    ("name", "known"),
    [
        ("atomic", "none"),
        ("covidfact", "none"),
        ("generic-labels", "sentence_ids, rows, consensus, ties, duplicates, label_level"),
        ("healthver", "none"),
        ("medexpert", "annotator"),
        ("medscore", "ids, verdict_from, verifier"),
        ("ragchecker", "neutral"),
        ("scifact", "none"),
    ],
)
def test_an_unknown_option_is_refused_before_any_file_is_read(
    tmp_path: Path, name: str, known: str
) -> None:
    # FileAdapter.read checks --option names first: the path does not even exist
    with pytest.raises(ConfigError) as err:
        get_adapter(name).read([tmp_path / "absent"], AdapterOptions(extra={"nope": "1"}))
    assert str(err.value) == f"adapter {name!r} has no option 'nope' (its options: {known})"


def test_an_adapter_describes_itself_with_its_readers_docstring_summary() -> None:
    assert get_adapter("covidfact").description == (
        "COVID-Fact top-5 retrieval with gold recall flag -> traces + claim labels"
    )
    assert get_adapter("generic-labels").description == (
        "Clinical labels in the failcodes label format (JSONL, CSV, Parquet, Excel)"
    )


# ---------------------------------------------------------------- MedScore


def test_medscore_real_output() -> None:
    path = shared_data("medscore", "medscore_output.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    raws = collections.Counter(c["raw"] for r in records for c in r["claims"])
    # SOURCE.md: 10,067 records, 4,662 with claims, 25,537 claims, 20,682 True / 4,855 False.
    assert len(records) == 10_067
    assert sum(1 for r in records if r["claims"]) == 4_662
    assert raws == {"True": 20_682, "False": 4_855}
    result = get_adapter("medscore").read([path], AdapterOptions())
    verdicts = collections.Counter(t.verdict for t in result.traces)
    assert len(result.traces) == 25_537
    assert verdicts == {Verdict.SUPPORTED: 20_682, Verdict.REFUTED: 4_855}
    # ids QUESTION_N: one sentence per record with claims, questions = distinct prefixes
    assert len({t.sentence_id for t in result.traces}) == 4_662
    prefixes = {r["id"].rsplit("_", 1)[0] for r in records if r["claims"]}
    assert {t.question_id for t in result.traces} == prefixes
    first = result.traces[0]  # line 3 of the file: "1010005_0", first claim
    assert (first.question_id, first.sentence_id, first.claim_id, first.raw_verdict) == (
        "1010005",
        "1010005_0",
        "1010005_0:c0",
        "True",
    )
    assert result.notes == [
        f"{path}: ids read as QUESTION_N, one sentence per record (--option ids=sentence: "
        "every id ends in _<digits>, no record's claims come from two sentences): '1787136_0' "
        "is sentence 0 of question '1787136'; if a record is a whole answer, give --option "
        "ids=response",
        "5,405 record(s) have no claims and produce no trace (sentences without verifiable claims)",
    ]


def test_medscore_medrag_and_provided_forms() -> None:
    result = get_adapter("medscore").read(
        [FIXTURES / "medscore_medrag.jsonl"], AdapterOptions(system="medscore-medrag")
    )
    a, b, c = result.traces
    assert (a.claim_id, a.verdict, a.retriever, a.sentence_id) == (
        "q7_0:c0",
        Verdict.SUPPORTED,
        "MedRAG",
        "q7_0",
    )
    assert [(p.passage_id, p.rank, p.title, p.score) for p in a.passages] == [
        ("pubmed23n0973_8682", 1, "Ibuprofen", 71.25),
        ("article-2231_3", 2, "NSAIDs", 69.5),
    ]
    assert a.sentence == "Ibuprofen, an NSAID, can upset the stomach."
    assert (b.verdict, b.passages[0].passage_id, b.passages[0].score) == (
        Verdict.REFUTED,
        "q7_0:c1:p1",
        None,
    )
    assert (c.verdict, c.raw_verdict, c.retriever) == (Verdict.SUPPORTED, "TRUE", None)
    assert [(p.passage_id, p.source) for p in c.passages] == [("q8:provided", "provided")]
    # MedScore's verifier kinds -> evidence source: medrag list / provided string
    assert [t.evidence_source for t in (a, b, c)] == [
        EvidenceSource.RETRIEVED,
        EvidenceSource.RETRIEVED,
        EvidenceSource.PROVIDED,
    ]


def test_medscore_response_id_scheme(tmp_path: Path) -> None:
    src = tmp_path / "m.jsonl"
    claim = {"evidence": None, "raw": "True", "score": 1.0}
    src.write_text(
        json.dumps(
            {
                "id": "answer-1",
                "claims": [
                    {**claim, "claim": "a", "sentence": "S one."},
                    {**claim, "claim": "b", "sentence": "S two."},
                    {**claim, "claim": "c", "sentence": "S one."},
                    {**claim, "claim": "d", "sentence": None},
                ],
            }
        )
        + "\n"
    )
    traces = get_adapter("medscore").read([src], AdapterOptions()).traces
    assert [(t.question_id, t.sentence_id) for t in traces] == [
        ("answer-1", "answer-1:s0"),
        ("answer-1", "answer-1:s1"),
        ("answer-1", "answer-1:s0"),
        ("answer-1", "answer-1:c3"),
    ]
    # evidence null: MedScore's internal (closed-book) verifier
    assert {t.evidence_source for t in traces} == {EvidenceSource.NONE}


def test_medscore_free_text_raw_needs_alias_or_score(tmp_path: Path) -> None:
    src = tmp_path / "m.jsonl"
    rec = {"id": "q_0", "claims": [{"claim": "x", "evidence": None, "raw": "False.", "score": 0.0}]}
    src.write_text("\n" + json.dumps(rec) + "\n")
    with pytest.raises(InputError) as info:
        get_adapter("medscore").read([src], AdapterOptions())
    assert (info.value.line, info.value.field) == (2, "claims[0].raw")
    traces = (
        get_adapter("medscore").read([src], AdapterOptions(extra={"verdict_from": "score"})).traces
    )
    assert traces[0].verdict is Verdict.REFUTED
    traces = (
        get_adapter("medscore")
        .read([src], AdapterOptions(aliases={"False.": Verdict.REFUTED}))
        .traces
    )
    assert traces[0].verdict is Verdict.REFUTED


# ---------------------------------------------------------------- MedExpert


def _medexpert_tasks() -> list[dict[str, object]]:
    return json.loads(
        bundled.path("medexpert-sample", "sample_data_export_from_JSL.json").read_text()
    )


def test_medexpert_real_sample() -> None:
    path = reference_data("medexpert-sample", "sample_data_export_from_JSL.json")
    tasks = json.loads(path.read_text())
    spans = [
        r
        for t in tasks
        for c in t["completions"]
        for r in c["result"]
        if r["from_name"] == "factuality_label"
    ]
    assert (len(tasks), len(spans)) == (11, 4)
    result = get_adapter("medexpert").read([path], AdapterOptions())
    errors = [lb for lb in result.labels if lb.has_error]
    # Hand-read from the file: the sentence around each span, its severity and rationale.
    assert [(lb.question_id, lb.sentence, lb.severity) for lb in errors] == [
        (
            "MH-gemma2-q26-iaa",
            "Aim for at least 30 minutes of moderate-intensity exercise most days of the week.",
            "Mild",
        ),
        (
            "MH-olmo2-q10",
            "Heavy drinking is not recommended while on Prozac due to the increased risk of "
            "adverse effects.",
            "Moderate",
        ),
        (
            "MH-gemma2-q17",
            "* **Major Depressive Disorder (MDD):**  Involves periods of persistent sadness, "
            "hopelessness, loss of interest, and other symptoms lasting for at least two weeks.",
            "Mild",
        ),
        (
            "MH-gemma2-q17",
            "* **Bipolar Disorder:** Characterized by cycles of both depression *and* mania or "
            "hypomania.",
            "Mild",
        ),
    ]
    assert errors[1].rationale == "the wording here seems to imply that light drinking is ok."
    assert errors[3].annotator == "rmoore5"
    # one label per sentence, sentences cover each response exactly once, in order
    assert [lb.sentence_id for lb in result.labels] == [s.sentence_id for s in result.sentences]
    by_q = collections.defaultdict(list)
    for s in result.sentences:
        by_q[s.question_id].append(s)
    for task in tasks:
        response = task["data"]["response"]
        sents = by_q[task["data"]["title"]]
        assert all(response[s.start : s.end] == s.text for s in sents)
        assert all(a.end <= b.start for a, b in itertools.pairwise(sents))
        covered = "".join(response[s.start : s.end] for s in sents)
        assert "".join(covered.split()) == "".join(response.split())  # no text is lost
    # the bundled copy is the same file
    assert bundled.path("medexpert-sample", "sample_data_export_from_JSL.json").read_bytes() == (
        path.read_bytes()
    )


def test_medexpert_two_annotators_need_a_choice(tmp_path: Path) -> None:
    tasks = _medexpert_tasks()[:1]
    extra = copy.deepcopy(tasks[0]["completions"][0])  # type: ignore[index]
    extra["created_username"] = "Second"
    extra["result"] = []
    tasks[0]["completions"].append(extra)  # type: ignore[index]
    src = tmp_path / "two.json"
    src.write_text(json.dumps(tasks))
    with pytest.raises(InputError, match="pick one annotator") as info:
        get_adapter("medexpert").read([src], AdapterOptions())
    assert info.value.field == "[0].completions"
    labels = (
        get_adapter("medexpert").read([src], AdapterOptions(extra={"annotator": "Second"})).labels
    )
    assert not any(lb.has_error for lb in labels)
    labels = (
        get_adapter("medexpert")
        .read([src], AdapterOptions(extra={"annotator": "AliceBrown"}))
        .labels
    )
    assert sum(lb.has_error for lb in labels) == 1


def test_medexpert_span_text_mismatch_is_an_error(tmp_path: Path) -> None:
    tasks = _medexpert_tasks()[:1]
    result = tasks[0]["completions"][0]["result"]  # type: ignore[index]
    label = next(r for r in result if r["from_name"] == "factuality_label")
    label["value"]["start"] += 3
    label["value"] = {"start_marker": "HERE", **label["value"]}  # a first key to find its line
    src = tmp_path / "bad.json"
    text = json.dumps(tasks, indent=1)
    src.write_text(text)
    with pytest.raises(InputError, match="is not response") as info:
        get_adapter("medexpert").read([src], AdapterOptions())
    assert info.value.field == "[0].completions[0].result[1].value.text"
    marker = next(i for i, ln in enumerate(text.splitlines(), 1) if '"HERE"' in ln)
    assert info.value.line == marker + 3  # start_marker, start, end, then text


# ---------------------------------------------------------------- RAGChecker


def test_ragchecker_real_outputs() -> None:
    path = reference_data("ragchecker", "checking_outputs.json")
    results = json.loads(path.read_text())["results"]
    n_claims = [len(r["response_claims"]) for r in results]
    assert n_claims == [11, 5]
    result = get_adapter("ragchecker").read([path], AdapterOptions())
    assert len(result.traces) == 16
    assert {t.system for t in result.traces} == {"ragchecker-example"}
    # RAGChecker's published per-query faithfulness = share of claims entailed by any chunk
    # = our share of 'supported' (0.3636... = 4/11 and 1.0 = 5/5 in the file's metrics).
    for r, n in zip(results, n_claims, strict=True):
        supported = sum(
            t.verdict is Verdict.SUPPORTED for t in result.traces if t.question_id == r["query_id"]
        )
        assert supported == round(r["metrics"]["faithfulness"] * n)
    assert collections.Counter(t.verdict for t in result.traces) == {
        Verdict.SUPPORTED: 9,
        Verdict.NO_EVIDENCE: 7,
    }
    first = result.traces[0]
    assert first.claim == "Nile is longest river in the world"
    assert [p.passage_id for p in first.passages] == ["000", "001", "002", "003"]
    assert first.raw_verdict == "Neutral|Entailment|Neutral|Neutral"
    # labels: RAGChecker precision = share of Entailment in answer2response (0.7272 = 8/11,
    # 0.8 = 4/5): those are the has_error=False labels; Contradiction -> True; Neutral skipped.
    refs = collections.Counter(x for r in results for x in r["answer2response"])
    assert refs == {"Entailment": 12, "Neutral": 3, "Contradiction": 1}
    assert [
        round(r["metrics"]["precision"] * n) for r, n in zip(results, n_claims, strict=True)
    ] == [8, 4]
    assert collections.Counter(lb.has_error for lb in result.labels) == {False: 12, True: 1}
    (err,) = [lb for lb in result.labels if lb.has_error]
    assert err.sentence_id == "0:c10"
    neutral_as_error = (
        get_adapter("ragchecker").read([path], AdapterOptions(extra={"neutral": "error"})).labels
    )
    assert collections.Counter(lb.has_error for lb in neutral_as_error) == {False: 12, True: 4}


def test_ragchecker_bad_matrix(tmp_path: Path) -> None:
    data = json.loads(bundled.path("ragchecker", "checking_outputs.json").read_text())
    data["results"][1]["retrieved2response"][2][1] = "Maybe"
    src = tmp_path / "bad.json"
    text = json.dumps(data, indent=2)
    src.write_text(text)
    with pytest.raises(InputError, match="unknown entailment label 'Maybe'") as info:
        get_adapter("ragchecker").read([src], AdapterOptions())
    assert info.value.field == "results[1].retrieved2response[2][1]"
    # the line is found from the field path: the only line holding "Maybe"
    (expected,) = [i for i, ln in enumerate(text.splitlines(), 1) if '"Maybe"' in ln]
    assert info.value.line == expected


# ---------------------------------------------------------------- bundled data


@pytest.mark.parametrize("name", ["medexpert-sample", "ragchecker"])
def test_bundled_files_match_their_source_md(name: str) -> None:
    folder = bundled.path(name)
    listed = {}
    for line in (folder / "SOURCE.md").read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and len(parts[0]) == 64:
            listed[parts[1]] = parts[0]
    data_files = sorted(p.name for p in folder.iterdir() if p.suffix in {".json", ".jsonl"})
    assert sorted(listed) == data_files
    for fname, digest in listed.items():
        assert hashlib.sha256((folder / fname).read_bytes()).hexdigest() == digest
    assert any(p.name.startswith("LICENSE") for p in folder.iterdir())
    assert folder.is_relative_to(REPO / "src" / "failcodes" / "bundled")


def test_bundled_path_errors() -> None:
    with pytest.raises(ConfigError, match="no bundled data set 'nope'"):
        bundled.path("nope")
    with pytest.raises(ConfigError, match=r"has no 'missing\.json'"):
        bundled.path("ragchecker", "missing.json")


def test_scifact_adapter_on_bundled_folder() -> None:
    root = bundled.path("scifact")
    claims = [json.loads(x) for x in (root / "claims_dev.jsonl").read_text().splitlines() if x]
    contradict = sum(
        1
        for c in claims
        if any(r["label"] == "CONTRADICT" for e in c["evidence"].values() for r in e)
    )
    result = get_adapter("scifact").read([root], AdapterOptions())
    assert len(claims) == 300
    assert len(result.traces) == 4 * 300  # four MultiVerS checkpoints
    assert sum(lb.has_error for lb in result.labels) == contradict
    with pytest.raises(ConfigError, match="drop --system"):
        get_adapter("scifact").read([root], AdapterOptions(system="x"))


def test_medscore_verifications_form_keeps_sentence_and_claim_indices() -> None:
    result = get_adapter("medscore").read(
        [FIXTURES / "medscore_verifications.jsonl"], AdapterOptions()
    )
    assert [(t.question_id, t.sentence_id, t.claim_id, t.verdict) for t in result.traces] == [
        ("a1", "a1:s0", "a1:s0:c0", Verdict.SUPPORTED),
        ("a1", "a1:s0", "a1:s0:c1", Verdict.REFUTED),
        ("a2", "a2:s0", "a2:s0:c0", Verdict.SUPPORTED),
    ]
    assert result.traces[1].passages[0].passage_id == "statpearls_9_0"
    assert result.traces[2].passages == ()
    assert result.notes == [
        "1 record(s) have no claims and produce no trace (sentences without verifiable claims)"
    ]


def test_medscore_verifications_duplicate_claim(tmp_path: Path) -> None:
    lines = (FIXTURES / "medscore_verifications.jsonl").read_text().splitlines()
    src = tmp_path / "v.jsonl"
    src.write_text("\n".join([*lines, lines[1]]) + "\n")
    with pytest.raises(InputError, match="duplicate") as info:
        get_adapter("medscore").read([src], AdapterOptions())
    assert (info.value.line, info.value.field) == (5, "claim_id")
