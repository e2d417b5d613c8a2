"""Outside red-team of the data path, session 18 (t18red1): shapes the other tests do not use.

Each test states the input, what main gave at exit 0 before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_jsonl, write_text
from tests.test_outside_red17a import _MIXED  # B: c2 with no passages, no retriever

_MIXED_REFUSAL = (
    "failcodes: error: {}, field 'passages': system 'B': 1 of its 2 traces have neither passages "
    "nor a retriever, the others passages: read trace by trace, those would be closed-book "
    "(evidence source none) and their disagreements blamed on verification, not on a retrieval "
    "that found nothing; declare the pipeline's evidence: --evidence B=retrieved (or provided, "
    "none; a study: its [[datasets.pipelines]] evidence), or --retriever NAME; a pipeline that "
    "retrieves for some claims only: each trace's evidence_source (a field or column)"
)


def _mixed_traces(tmp_path: Path, suffix: str) -> Path:
    if suffix == ".jsonl":
        return write_jsonl(tmp_path / "t.jsonl", _MIXED)
    head = "system,question_id,sentence_id,claim_id,claim,verdict\n"
    rows = "".join(f"B,q1,{r['sentence_id']},{r['claim_id']},x,refuted\n" for r in _MIXED)
    write_text(
        tmp_path / "t.passages.csv", "system,claim_id,passage_id,rank,text,gold\nB,c1,p1,1,t,true\n"
    )
    return write_text(tmp_path / "t.csv", head + rows)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_attribute_from_traces_refuses_a_system_partly_retrieved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    # attribute --from TRACES (no disagreements file): main attributed c2 (no passages) as
    # closed-book: B verification 2, retrieval 0, exit 0, with a note only. By hand
    # (docs/attribution.md step 4): c1's gold passage was retrieved and the verifier refuted
    # it -> verification; c2's retriever found nothing -> retrieval: 1 and 1. Now refused as
    # ingest and disagreements refuse it (traces.refuse_mixed_evidence); attribute takes
    # --evidence itself, so the way through is named without an ingest.
    traces = _mixed_traces(tmp_path, suffix)
    att = tmp_path / "att"
    code, stdout, err = run_cli(["attribute", "--from", str(traces), "-o", str(att)], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [_MIXED_REFUSAL.format(traces)]
    assert not att.exists()
    # the way through: the hand count, nothing said of closed-book claims
    args = ["attribute", "--from", str(traces), "-o", str(att), "--evidence", "B=retrieved"]
    code, stdout, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    assert "closed-book" not in err
    [row] = json.loads(stdout)["stages"]
    assert (row["system"], row["retrieval"], row["verification"], row["total"]) == ("B", 1, 1, 2)


def test_attribute_from_traces_declaring_each_claims_source_is_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Adaptive retrieval: each trace declares its own source (c2 none): not refused, and
    # attributed as declared (c2 closed-book -> verification): verification 2, said in a note.
    traces = write_jsonl(
        tmp_path / "t.jsonl",
        [{**r, "evidence_source": e} for r, e in zip(_MIXED, ("retrieved", "none"), strict=True)],
    )
    att = tmp_path / "att"
    code, stdout, err = run_cli(
        ["attribute", "--from", str(traces), "-o", str(att), "--format", "json"], capsys
    )
    assert code == 0, err
    [row] = json.loads(stdout)["stages"]
    assert (row["retrieval"], row["verification"], row["total"]) == (0, 2, 2)
    assert err.startswith("system 'B': 1 of its 2 claims here are closed-book")


_DETECTOR: list[dict[str, object]] = [
    {"system": "A", "question_id": "q1", "sentence_id": s, "claim_id": c, "claim": c}
    | {"verdict": v}
    for s, c, v in (("s1", "c1", "true"), ("s2", "c2", "false"), ("s3", "c3", "true"))
]
_TRUTHS = (
    "3 verdict(s) true/false read as supported/refuted (true: the claim holds); if true marks "
    "an error, ingest the traces with --alias true=refuted --alias false=supported"
)


@pytest.mark.parametrize("with_labels", [False, True])
def test_metrics_verdicts_says_how_true_false_verdicts_were_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], with_labels: bool
) -> None:
    # A detector's verdicts true, false, true. metrics --verdicts printed supported 66.7,
    # refuted 33.3 (2 of 3 true read as supported) and did not say so, where metrics does:
    # for a detector whose true marks an error the shares are the other way round. Now the
    # first line is the same line metrics gives (verdicts.truths_line).
    traces = write_jsonl(tmp_path / "t.jsonl", _DETECTOR)
    args = ["metrics", "--traces", str(traces), "--verdicts"]
    if with_labels:
        labels = write_text(
            tmp_path / "l.jsonl",
            "".join(
                json.dumps({"question_id": "q1", "sentence_id": s, "has_error": s == "s1"}) + "\n"
                for s in ("s1", "s2", "s3")
            ),
        )
        args += ["--labels", str(labels)]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert stdout.splitlines()[0] == _TRUTHS
    code, stdout, err = run_cli([*args, "--format", "json"], capsys)
    [row] = json.loads(stdout)
    assert (row["supported"], row["refuted"]) == (2, 1)  # by hand: true, true; false
    assert err.strip() == _TRUTHS  # the rows hold no field for it: said on stderr
    out = tmp_path / "v.csv"
    code, stdout, err = run_cli([*args, "-o", str(out)], capsys)
    assert stdout.splitlines()[0] == _TRUTHS
    # the way through: ingested with the aliases, nothing said, the other way round
    fixed = tmp_path / "fixed.jsonl"
    alias = ["--alias", "true=refuted", "--alias", "false=supported"]
    assert run_cli(["ingest", "generic", str(traces), "-o", str(fixed), *alias], capsys)[0] == 0
    args[2] = str(fixed)
    code, stdout, err = run_cli([*args, "--format", "json"], capsys)
    [row] = json.loads(stdout)
    assert (row["supported"], row["refuted"], err) == (1, 2, "")


def _ragchecker(path: Path, claims: list[str], answer: list[str], chunks: list[str]) -> Path:
    item = {
        "query_id": "q1",
        "query": "Q",
        "gt_answer": "G",
        "response": "R",
        "retrieved_context": [{"doc_id": "d1", "text": "t1"}],
        "response_claims": [c.split() for c in claims],
        "answer2response": answer,
        "retrieved2response": [[c] for c in chunks],
    }
    return write_text(path, json.dumps({"results": [item]}))


def test_two_ragchecker_systems_keep_their_own_reference_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two RAG systems checked by RAGChecker on one query: each response's claims are
    # numbered q1:c0, q1:c1, but they are each system's own claims. A's ground truth
    # contradicts its c0 (refuted by its chunk) and is Neutral on c1 (no label); B's is
    # Neutral on its c0 and contradicts its c1 (both entailed by B's chunk). By hand, each on
    # its own labels: A n 1, TP 1; B n 1, FN 1. main wrote the labels shared: merged
    # (duplicates=same) they labelled q1:c0 and q1:c1 errors for both systems: A n 2, TP 1,
    # FN 1; B n 2, FN 2, exit 0 (B's unlabelled claim took A's label).
    parts = []
    for name, claims, answer, chunks in (
        (
            "A",
            ["aspirin cures flu", "water is wet"],
            ["Contradiction", "Neutral"],
            ["Contradiction", "Entailment"],
        ),
        (
            "B",
            ["statins lower ldl", "salt is nacl"],
            ["Neutral", "Contradiction"],
            ["Entailment", "Entailment"],
        ),
    ):
        raw = _ragchecker(tmp_path / f"{name}.json", claims, answer, chunks)
        traces, labels = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.labels.jsonl"
        args = ["ingest", "ragchecker", str(raw), "--system", name, "-o", str(traces)]
        assert run_cli([*args, "--labels-out", str(labels)], capsys)[0] == 0
        parts.append((traces, labels))
    merged = tmp_path / "labels.jsonl"
    args = ["ingest", "generic-labels", *(str(lab) for _, lab in parts), "-o", str(merged)]
    assert run_cli([*args, "--option", "duplicates=same"], capsys)[0] == 0
    traces_args = [x for t, _ in parts for x in ("--traces", str(t))]
    code, stdout, err = run_cli(
        ["metrics", *traces_args, "--labels", str(merged), "--format", "json"], capsys
    )
    assert code == 0, err
    got = {r["system"]: (r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(stdout)}
    assert got == {"A": (1, 1, 0, 0, 0), "B": (1, 0, 0, 1, 0)}
    # a shared label beside them is refused (its line read 'this label name none')
    shared = write_text(
        tmp_path / "own.jsonl",
        '{"question_id": "q1", "sentence_id": "q1:c1", "has_error": false}\n',
    )
    args = [
        "ingest",
        "generic-labels",
        str(parts[0][1]),
        str(shared),
        "-o",
        str(tmp_path / "x.jsonl"),
    ]
    code, _, err = run_cli([*args, "--option", "duplicates=same"], capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {shared}:1, field 'system': this label names none, but "
        f"{parts[0][1]}:1 names one: either every label names the system whose answer it "
        "labels (per-system labels) or none does (shared by every system)",
    )


def test_healthver_dev_and_test_together_keep_their_claims_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # HealthVer's dev and test files share topics (47 of them, 161 claim ids on the
    # published files). Each file numbered its topic's claims from 1, so `ingest healthver
    # dev test` wrote hv-3-1 twice for two claims, exit 0, and every analysis of the file
    # refused it (duplicate (system, claim_id)). Now a claim's id holds its first pair id
    # (t20red1): dev's hv-3-p1, test's hv-3-p2. By hand: dev's claim Supports
    # (supported), test's Refutes (refuted): supported 1, refuted 1.
    head = "id,evidence,claim,label,topic_ip,question\n"
    dev = write_text(tmp_path / "healthver_dev.csv", head + "p1,e1,masks help,Supports,3,Q\n")
    test = write_text(tmp_path / "healthver_test.csv", head + "p2,e2,garlic cures,Refutes,3,Q\n")
    out = tmp_path / "hv.jsonl"
    code, _, err = run_cli(["ingest", "healthver", str(dev), str(test), "-o", str(out)], capsys)
    assert code == 0, err
    ids = [(r["claim_id"], r["claim"]) for r in map(json.loads, out.read_text().splitlines())]
    assert ids == [("hv-3-p1", "masks help"), ("hv-3-p2", "garlic cures")]
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--verdicts", "--format", "json"], capsys
    )
    assert code == 0, err
    [row] = json.loads(stdout)
    assert (row["n_claims"], row["supported"], row["refuted"]) == (2, 1, 1)


#: Question ids repeated across a table's sub-benchmarks (RAGChecker's meta-evaluation has
#: query '41' in kiwi and in bioasq): sentence '1' and '2' of each.
_SUBSETS = [
    ("kiwi", "1", "Corpora are big.", "supported"),
    ("kiwi", "2", "They are unlabeled.", "refuted"),
    ("bioasq", "1", "Aspirin thins blood.", "supported"),
    ("bioasq", "2", "Statins lower LDL.", "supported"),
]


def test_one_sentence_id_given_two_texts_is_refused_by_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The claim ids default to the sentence ids, so ingest refused the duplicate claim id and
    # named the way through, --option ids=claim. Taken, it wrote sentence ('41', '1') with
    # the claims of two sentences. Labels by id (s1 an error, s2 none, in each sub-set): main
    # gave n 2, FP 1, FN 1, exit 0. By hand, four sentences: kiwi s1 FN, kiwi s2 FP, bioasq
    # s1 FN, bioasq s2 TN: n 4, FP 1, FN 2, TN 1. Now ingest refuses the second text.
    raw = write_jsonl(
        tmp_path / "raw.jsonl",
        [
            {"dataset": d, "system": "A", "question_id": "41", "sentence_id": s}
            | {"sentence": text, "claim": text, "verdict": v}
            for d, s, text, v in _SUBSETS
        ],
    )
    out = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(raw), "-o", str(out), "--map", "dataset="]
    code, stdout, err = run_cli([*args, "--option", "ids=claim"], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {raw}:3, field 'sentence': sentence '1' of question '41' (system "
        "'A') has another text here than at line 1: two sentences with one id would be one, "
        "their claims pooled; give each sentence its own id (ids repeated across sub-sets "
        "of the data: map the sub-set into the ids, or ingest each sub-set apart)"
    ]
    assert not out.exists()
    # the way through: the sub-set in the ids (sentence ids are unique across the data set)
    fixed = write_jsonl(
        tmp_path / "fixed.jsonl",
        [
            {
                "system": "A",
                "question_id": f"{d}:41",
                "sentence_id": f"{d}:{s}",
                "claim_id": f"{d}:{s}",
            }
            | {"sentence": text, "claim": text, "verdict": v}
            for d, s, text, v in _SUBSETS
        ],
    )
    labels = write_jsonl(
        tmp_path / "l.jsonl",
        [
            {"question_id": f"{d}:41", "sentence_id": f"{d}:{s}", "has_error": s == "1"}
            for d in ("kiwi", "bioasq")
            for s in ("1", "2")
        ],
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(fixed), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0, err
    [row] = json.loads(stdout)
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (4, 0, 1, 2, 1)


def test_a_json_object_keyed_by_system_names_the_rows_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # {"A": [records], "B": [records]}: ingest read the object as one row of columns A, B
    # and asked for the verdict's column (--map COLUMN=verdict: --map A=verdict reads a list).
    # A refusal's wording: it now names the rows option that reads it; that way gives the hand
    # count (A: s1 refuted, error -> TP; s2 supported -> TN; B: s1 supported, error -> FN;
    # s2 refuted -> FP).
    def rec(s: str, v: str) -> dict[str, str]:
        return {"question_id": "q1", "sentence_id": s, "claim_id": s, "claim": s, "verdict": v}

    raw = write_text(
        tmp_path / "by-system.json",
        json.dumps(
            {
                "A": [rec("s1", "refuted"), rec("s2", "supported")],
                "B": [rec("s1", "supported"), rec("s2", "refuted")],
            }
        ),
    )
    out = tmp_path / "t.jsonl"
    code, stdout, err = run_cli(["ingest", "generic", str(raw), "-o", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {raw}:1, field 'verdict': no verdict (this row's columns A, B all "
        "hold lists: the records are nested in them); name the lists that hold the rows with "
        "--option rows=PATH, e.g. --option 'rows=*[]' --map '*=system' for the records listed "
        "under each system's name (docs/trace-format.md, nested output)"
    ]
    assert not out.exists()
    args = ["ingest", "generic", str(raw), "-o", str(out), "--option", "rows=*[]"]
    assert run_cli([*args, "--map", "*=system"], capsys)[0] == 0
    labels = write_text(
        tmp_path / "l.jsonl",
        '{"question_id": "q1", "sentence_id": "s1", "has_error": true}\n'
        '{"question_id": "q1", "sentence_id": "s2", "has_error": false}\n',
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0, err
    got = {r["system"]: (r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(stdout)}
    assert got == {"A": (1, 0, 0, 1), "B": (0, 1, 1, 0)}


def _scifact_without_evidence(tmp_path: Path, ids: set[int] | None) -> Path:
    """The bundled SciFact folder, the claims ``ids`` (None: all) without their evidence."""
    import shutil

    from failcodes.ingest.scifact import bundled_dir

    root = tmp_path / "scifact"
    shutil.copytree(bundled_dir() / "multivers_predictions_dev", root / "multivers_predictions_dev")
    lines = (bundled_dir() / "claims_dev.jsonl").read_text(encoding="utf-8").splitlines()
    claims = [json.loads(line) for line in lines]
    for c in claims:
        if ids is None or c["id"] in ids:
            del c["evidence"], c["cited_doc_ids"]  # as SciFact's claims_test.jsonl
    write_jsonl(root / "claims_dev.jsonl", claims)
    return root


def test_scifact_claims_without_evidence_get_no_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # SciFact's test claims carry no evidence field (labels withheld). The adapter read a
    # missing field as NOT ENOUGH INFO: each such claim a no-error label. Claims without it
    # throughout: 300 no-error labels, exit 0 (multivers-scifact P 0.0: FP 64, TN 236).
    # Now no label, and with --labels-out nothing to write: refused.
    root = _scifact_without_evidence(tmp_path, None)
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "scifact", str(root), "-o", str(out), "--labels-out", str(labels)]
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        "failcodes: error: adapter 'scifact' produced no labels for --labels-out"
    ]
    assert not out.exists() and not labels.exists()
    # One claim (42: gold CONTRADICT, multivers-scifact refuted, a TP) without it: the bundled
    # data gives multivers-scifact TP 64, TN 236 of 300; by hand without claim 42: n 299,
    # TP 63, FP 0, TN 236. main labelled 42 no error: n 300, TP 63, FP 1.
    root = _scifact_without_evidence(tmp_path / "one", {42})
    code, _, err = run_cli([*args[:2], str(root), *args[3:]], capsys)
    assert code == 0, err
    assert "1 of 300 claims carry no evidence field" in err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0, err
    row = next(r for r in json.loads(stdout) if r["system"] == "multivers-scifact")
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (299, 63, 0, 0, 236)
