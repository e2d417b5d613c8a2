"""Session 28 (t28red): shapes an outside checker may bring, each counted by hand."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_csv

CODEBOOK = Path(__file__).resolve().parents[1] / "taxonomy" / "medical-fact-check.v1.yaml"


def _verdict_correct_table(folder: Path) -> Path:
    """Four claims and whether the verifier's verdict on each was right (all right).

    By hand, the sentences' truth: s1, s3, s4 are errors (a right 'refuted'), s2 is none (a
    right 'supported'). Under -m refuted: TP 3 (s1, s3, s4), TN 1 (s2).
    """
    return write_csv(
        folder / "vc.csv",
        ["question_id", "sentence_id", "claim", "verdict", "verdict_correct"],
        [
            ["q1", "s1", "Aspirin cures cancer", "refuted", "yes"],
            ["q1", "s2", "Ibuprofen is an NSAID", "supported", "yes"],
            ["q2", "s3", "Statins raise LDL", "refuted", "yes"],
            ["q2", "s4", "Metformin always causes hypoglycemia", "refuted", "yes"],
        ],
    )


def test_a_label_rule_on_a_column_judging_the_verdict_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _verdict_correct_table(tmp_path)
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        [
            "ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels),
            "--system", "A", "--label-rule", "verdict_correct = no -> error",
        ],
        capsys,
    )  # fmt: skip
    # main: exit 0, 4 no-error labels, metrics FP 3, TN 1 for the right TP 3, TN 1 (every
    # right 'refuted' read as a correct sentence flagged)
    assert code == 2
    assert "'verdict_correct' is named as a judgement of the pipeline's verdict" in err
    assert len(err.strip().splitlines()) == 1
    assert not traces.exists() and not labels.exists()
    # the same column mapped to has_error of a labels table: refused, not told to use the rule
    lab = write_csv(
        tmp_path / "lv.csv",
        ["sentence_id", "predictionCorrect"],
        [["s1", "1"], ["s2", "1"], ["s3", "1"], ["s4", "1"]],
    )
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(lab), "-o", str(labels),
         "--map", "predictionCorrect=has_error"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert "judges the pipeline's verdict" in err and "--label-rule" not in err
    _truth_written_as_a_column_scores_by_hand(tmp_path / "way", capsys)
    _gold_verdict_column_named_correct_verdict_is_read(tmp_path / "gold", capsys)


def _truth_written_as_a_column_scores_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The way through: error = (verdict flagged an error) == (verdict right), by hand."""
    tmp_path.mkdir()
    table = _verdict_correct_table(tmp_path)
    with table.open(encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    truth = [
        "error" if (r[3] == "refuted") == (r[4] == "yes") else "none" for r in body
    ]  # s1 error, s2 none, s3 error, s4 error
    assert truth == ["error", "none", "error", "error"]
    table = write_csv(
        tmp_path / "truth.csv",
        [*header[:4], "truth"],
        [[*r[:4], t] for r, t in zip(body, truth, strict=True)],
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        [
            "ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels),
            "--system", "A", "--label-rule", "truth = error -> error",
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted",
         "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (3, 0, 0, 1)


def _gold_verdict_column_named_correct_verdict_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``correct_verdict`` holding verdict words is the gold verdict: read, not refused."""
    tmp_path.mkdir()
    table = write_csv(
        tmp_path / "g.csv",
        ["question_id", "sentence_id", "claim", "verdict", "correct_verdict"],
        [
            ["q1", "s1", "Aspirin cures cancer", "refuted", "REFUTED"],
            ["q1", "s2", "Ibuprofen is an NSAID", "refuted", "SUPPORTED"],
            ["q2", "s3", "Statins raise LDL", "supported", "REFUTED"],
        ],
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        [
            "ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels),
            "--system", "A", "--label-rule", "correct_verdict = REFUTED -> error",
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted",
         "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    (row,) = json.loads(out)
    # by hand: s1 error flagged TP; s2 no error flagged FP; s3 error missed FN
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 1, 1, 0)


def _contexts_table(folder: Path) -> Path:
    """Six claims, one retrieved context each or a missing mark where none was found."""
    return write_csv(
        folder / "ctx.csv",
        ["question_id", "sentence_id", "claim", "verdict", "context"],
        [
            ["q1", "s1", "Aspirin cures cancer.", "no_evidence", "N/A"],
            ["q1", "s2", "Ibuprofen is an NSAID.", "supported", "Ibuprofen is an NSAID."],
            ["q2", "s3", "Statins lower LDL.", "no_evidence", ""],
            ["q2", "s4", "Warfarin is an anticoagulant.", "no_evidence", "None"],
            ["q2", "s5", "Heparin is an anticoagulant.", "no_evidence", "-"],
            ["q2", "s6", "Insulin lowers glucose.", "no_evidence", "nan"],
        ],
    )


def test_a_missing_mark_in_a_passage_column_is_no_passage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _contexts_table(tmp_path)
    labels_csv = write_csv(
        tmp_path / "l.csv",
        ["sentence_id", "has_error"],
        [["s1", "true"], ["s2", "false"], ["s3", "false"], ["s4", "true"], ["s5", "false"],
         ["s6", "true"]],
    )  # fmt: skip
    traces = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        [
            "ingest", "generic", str(table), "-o", str(traces), "--system", "A",
            "--passage-column", "context=pubmed", "--option", "ids=line",
            "--evidence", "retrieved",
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    got = {
        t["sentence_id"]: [p["text"] for p in t["passages"]]
        for t in map(json.loads, traces.read_text(encoding="utf-8").splitlines())
    }
    # by hand: only s2 has a context (main: 'N/A', 'None', '-' and 'nan' were passages)
    assert got == {
        "s1": [], "s2": ["Ibuprofen is an NSAID."], "s3": [], "s4": [], "s5": [], "s6": [],
    }  # fmt: skip
    assert "4 passage cell(s) holding a missing mark" in err
    assert f"first at {table}:2" in err
    # downstream: the 3 FN (s1, s4, s6: errors called no_evidence under -m refuted) had no
    # passage, so there is nothing for the retrieval judge and attribution says why
    dis = tmp_path / "d.jsonl"
    code, _, err = run_cli(
        ["disagreements", "--traces", str(traces), "--labels", str(labels_csv),
         "-m", "refuted", "-o", str(dis)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    records = [json.loads(x) for x in dis.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["sentence_id"] for r in records) == ["s1", "s4", "s6"]
    assert all(c["passages"] == [] for r in records for c in r["claims"])
    code, _, err = run_cli(
        ["attribute", "--from", str(dis), "--codebook", str(CODEBOOK), "-o",
         str(tmp_path / "att")],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    with (tmp_path / "att" / "attribution.csv").open(encoding="utf-8") as f:
        reasons = {r["sentence_id"]: (r["stage"], r["reason"]) for r in csv.DictReader(f)}
    # main: 'none of the 1 retrieved passages is high quality ...' over the mark's text
    assert reasons == dict.fromkeys(("s1", "s4", "s6"), ("retrieval", "no passage retrieved"))


def test_a_span_begun_at_the_sentence_befores_full_stop_labels_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A MedExpert span selected from the full stop before its sentence (``'. Aspirin...'``)."""
    response = "Aspirin relieves pain. Aspirin cures cancer. Take it with food."
    start, end = response.index(". Aspirin cures"), response.index(" Take")
    assert response[start:end] == ". Aspirin cures cancer."
    task = {
        "id": 1,
        "data": {"title": "T-q1", "question": "What does aspirin do?", "response": response},
        "completions": [
            {
                "created_username": "dr_a",
                "result": [
                    {
                        "id": "x1",
                        "from_name": "factuality_label",
                        "to_name": "response",
                        "type": "labels",
                        "value": {
                            "start": start,
                            "end": end,
                            "text": response[start:end],
                            "labels": ["Severe"],
                        },
                    }
                ],
            }
        ],
    }
    export = tmp_path / "me.json"
    export.write_text(json.dumps([task]), encoding="utf-8")
    labels = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "medexpert", str(export), "-o", str(labels)], capsys)
    assert code == 0, err
    got = {
        lb["sentence_id"]: lb["has_error"]
        for lb in map(json.loads, labels.read_text(encoding="utf-8").splitlines())
    }
    # by hand: the span holds one letter-bearing sentence, s1 (main: s0 too, by its '.')
    assert got == {"T-q1:s0": False, "T-q1:s1": True, "T-q1:s2": False}
    assert "1 sentence(s) an error span touched with its edge alone" in err
    # a pipeline that refutes s1 alone: TP 1, TN 2 by hand (main: TP 1, FN 1, TN 1)
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        "".join(
            json.dumps(
                {"system": "A", "question_id": "T-q1", "sentence_id": f"T-q1:s{i}",
                 "claim_id": f"T-q1:s{i}", "claim": text, "verdict": verdict}
            ) + "\n"
            for i, (text, verdict) in enumerate(
                [("Aspirin relieves pain.", "supported"), ("Aspirin cures cancer.", "refuted"),
                 ("Take it with food.", "supported")]
            )
        ),
        encoding="utf-8",
    )  # fmt: skip
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted",
         "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 0, 2)


def test_a_missing_mark_in_a_reasoning_column_is_no_reasoning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = write_csv(
        tmp_path / "r.csv",
        ["question_id", "sentence_id", "claim", "verdict", "explanation"],
        [
            ["q1", "s1", "Aspirin cures cancer.", "supported", "N/A"],
            ["q1", "s2", "Ibuprofen is an NSAID.", "refuted", "None"],
            ["q2", "s3", "Statins lower LDL.", "refuted", "The passage says so."],
            ["q2", "s4", "Warfarin is an anticoagulant.", "supported", "nan"],
        ],
    )
    labels_csv = write_csv(
        tmp_path / "l.csv",
        ["sentence_id", "has_error"],
        [["s1", "true"], ["s2", "false"], ["s3", "false"], ["s4", "false"]],
    )
    traces = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(traces), "--system", "A",
         "--map", "explanation=reasoning", "--evidence", "none"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    got = {
        t["sentence_id"]: t.get("reasoning")
        for t in map(json.loads, traces.read_text(encoding="utf-8").splitlines())
    }
    # by hand: one verifier reasoning, s3's (main: 'N/A', 'None' and 'nan' were reasonings)
    assert got == {"s1": None, "s2": None, "s3": "The passage says so.", "s4": None}
    assert f"3 reasoning cell(s) holding a missing mark (first at {table}:2)" in err
    # the 3 disagreements (s1 FN, s2 FP, s3 FP): judge reasoning codes s3's alone (main: 3)
    dis = tmp_path / "d.jsonl"
    code, _, err = run_cli(
        ["disagreements", "--traces", str(traces), "--labels", str(labels_csv),
         "-o", str(dis)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, out, err = run_cli(
        ["judge", "reasoning", "--from", str(dis), "--judge", "offline", "--codebook",
         str(CODEBOOK), "-o", str(tmp_path / "jr")],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "scored: 1;" in out + err


def test_a_passage_text_that_is_a_link_alone_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = write_csv(
        tmp_path / "u.csv",
        ["question_id", "sentence_id", "claim", "verdict", "source_1"],
        [
            ["q1", "s1", "Aspirin cures cancer.", "supported", "Aspirin does not cure cancer."],
            ["q1", "s2", "Ibuprofen is an NSAID.", "supported",
             "https://pubmed.ncbi.nlm.nih.gov/12345678/"],
        ],
    )  # fmt: skip
    traces = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(traces), "--system", "A",
         "--passage-column", "source_1", "--evidence", "retrieved"],
        capsys,
    )  # fmt: skip
    # main: exit 0, the link a passage the judge coded (irrelevant) and attribution blamed
    # retrieval on ("none of the 1 retrieved passages is high quality")
    assert code == 2
    assert f"{table}:3, field 'source_1': a passage's text is a reference alone" in err
    assert not traces.exists()
    # a passage object whose text key holds a DOI, or a PMID: refused alike
    for ref in ("doi:10.1000/xyz123", "PMID: 23456789"):
        doc = tmp_path / "d.jsonl"
        doc.write_text(
            json.dumps(
                {"system": "A", "question_id": "q1", "sentence_id": "s1", "claim": "x",
                 "verdict": "supported", "docs": [{"t": "Aspirin is an NSAID."}, {"t": ref}]}
            ) + "\n",
            encoding="utf-8",
        )  # fmt: skip
        code, _, err = run_cli(
            ["ingest", "generic", str(doc), "-o", str(traces), "--map", "docs=passages",
             "--map", "t=text"],
            capsys,
        )  # fmt: skip
        assert code == 2
        assert "field 'passages[1].text': a passage's text is a reference alone" in err


def test_passages_whose_scores_run_in_no_order_of_their_ranks_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A retrieval list written unsorted: ranked by its place, as said on stderr."""
    doc = tmp_path / "r.jsonl"
    docs = [(111, 0.12, "Aspirin is sold in pharmacies."), (222, 0.91, "Aspirin does not cure "
            "cancer."), (333, 0.40, "Cancer is treated by oncologists.")]  # fmt: skip
    sorted_docs = [(444, 0.95, "Ibuprofen is an NSAID."), (555, 0.5, "Paracetamol is not."),
                   (666, 0.2, "Naproxen is an NSAID.")]  # fmt: skip
    doc.write_text(
        "".join(
            json.dumps(
                {"system": "A", "question_id": "q1", "sentence_id": sid, "claim": claim,
                 "verdict": "supported",
                 "docs": [{"pmid": str(i), "score": sc, "content": t} for i, sc, t in ds]}
            ) + "\n"
            for sid, claim, ds in [("s1", "Aspirin cures cancer.", docs),
                                   ("s2", "Ibuprofen is an NSAID.", sorted_docs)]
        ),
        encoding="utf-8",
    )  # fmt: skip
    traces = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(doc), "-o", str(traces), "--map", "docs=passages",
         "--map", "content=text", "--map", "pmid=passage_id", "--evidence", "retrieved"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    first = json.loads(traces.read_text(encoding="utf-8").splitlines()[0])
    # ranks are the list's places (as before): rank 1 is the 0.12 passage
    assert [(p["rank"], p["passage_id"]) for p in first["passages"]] == [
        (1, "111"), (2, "222"), (3, "333")
    ]  # fmt: skip
    # by hand: s1's scores by rank 0.12, 0.91, 0.4 rise then fall (no order); s2's fall
    assert (
        f"1 row(s) whose passages' scores follow no order of their ranks (first at {doc}:1, "
        "scores by rank 0.12, 0.91, 0.4)"
    ) in err


def test_a_ragchecker_output_whose_chunks_have_no_doc_id_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """RAGChecker's RetrievedDoc defaults doc_id to None: its output writes null."""
    import hashlib

    from failcodes import bundled

    data = json.loads(
        bundled.path("ragchecker", "checking_outputs.json").read_text(encoding="utf-8")
    )
    for result in data["results"]:
        for chunk in result["retrieved_context"]:
            chunk["doc_id"] = None
    src = tmp_path / "out.json"
    src.write_text(json.dumps(data), encoding="utf-8")
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "ragchecker", str(src), "-o", str(traces), "--labels-out", str(labels)],
        capsys,
    )  # fmt: skip
    # main: exit 2, "missing required field" doc_id
    assert code == 0, err
    rows = [json.loads(x) for x in traces.read_text(encoding="utf-8").splitlines()]
    # docs/trace-format.md, the bundled example: 16 traces (9 supported, 7 no_evidence)
    assert len(rows) == 16
    assert sum(r["verdict"] == "supported" for r in rows) == 9
    passage = rows[0]["passages"][0]
    # the id of a chunk without one: sha256 of its text as canonical JSON, first 16 digits
    digest = hashlib.sha256(json.dumps(passage["text"]).encode("utf-8")).hexdigest()[:16]
    assert passage["passage_id"] == f"sha256:{digest}"
