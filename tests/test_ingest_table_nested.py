"""A pipeline's own JSONL through the generic adapters: nested passage objects with foreign
keys, integer ids, several claims per sentence, sentences numbered per answer, and labels
from a categorical column. Expected values are worked out by hand from the rows below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.errors import InputError
from failcodes.hashing import content_hash
from failcodes.ingest import AdapterOptions, get_adapter
from tests.test_cli_ingest import assert_one_line_error, run

GENERIC = get_adapter("generic")
LABELS = get_adapter("generic-labels")


def _row(qid: str, sent: int, fact: str, system: str, docs: list[dict[str, object]]) -> str:
    return json.dumps(
        {"qid": qid, "sent_no": sent, "atomic_fact": fact, "pred": "REFUTED",
         "docs": docs, "pipeline": system}
    )  # fmt: skip


DOC_A = {"content": "Aspirin 81 mg daily lowers stroke risk.", "pmid": 1001, "score": 0.9}
DOC_B = {"content": "No effect of aspirin on stroke was found.", "score": 0.4}
ROWS = [
    # question Q1, sentence 0 has two claims; both systems judge both claims
    _row("Q1", 0, "Aspirin lowers stroke risk.", "bm25", [DOC_A, DOC_B]),
    _row("Q1", 0, "The dose is 81 mg.", "bm25", [DOC_A]),
    _row("Q1", 0, "Aspirin lowers stroke risk.", "dense", [DOC_B, DOC_A]),
    _row("Q1", 0, "The dose is 81 mg.", "dense", []),
    # question Q2 numbers its sentences from 0 again
    _row("Q2", 0, "Statins cause diabetes.", "bm25", []),
]
MAP = {
    "qid": ("question_id",),
    "sent_no": ("sentence_id",),
    "atomic_fact": ("claim",),
    "pred": ("verdict",),
    "docs": ("passages",),
    "pipeline": ("system",),
    "content": ("text",),
    "pmid": ("passage_id",),
}
OPTIONS = AdapterOptions(column_map=MAP, extra={"ids": "claim", "sentence_ids": "question"})


def _jsonl(tmp_path: Path, rows: list[str], name: str = "pipeline.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(rows) + "\n")
    return path


def test_nested_passages_integer_ids_and_claim_ids(tmp_path: Path) -> None:
    traces = GENERIC.read([_jsonl(tmp_path, ROWS)], OPTIONS).traces
    bm25_1, bm25_2, dense_1, dense_2, q2 = traces
    # integer sentence numbers become text, qualified by their question
    assert (bm25_1.question_id, bm25_1.sentence_id) == ("Q1", "Q1:0")
    assert q2.sentence_id == "Q2:0"
    # claim ids from (question, sentence, claim text): one claim, one id in every system
    expected = f"Q1:0:c{content_hash(['Q1', 'Q1:0', 'Aspirin lowers stroke risk.'], length=10)}"
    assert bm25_1.claim_id == dense_1.claim_id == expected
    assert bm25_2.claim_id == dense_2.claim_id != bm25_1.claim_id
    # nested keys renamed; ranks from list order; pmid 1001 as text; no id -> text hash
    a, b = bm25_1.passages
    assert (a.rank, a.passage_id, a.text, a.score) == (1, "1001", DOC_A["content"], 0.9)
    b_id = f"sha256:{content_hash(DOC_B['content'])}"
    assert (b.rank, b.passage_id) == (2, b_id)
    # the same text keeps its id in the other system's list, at its own rank
    assert [(p.rank, p.passage_id) for p in dense_1.passages] == [(1, b_id), (2, "1001")]
    assert dense_2.passages == ()


def test_several_claims_per_sentence_without_claim_ids_say_how(tmp_path: Path) -> None:
    options = AdapterOptions(column_map=MAP)
    with pytest.raises(InputError) as info:
        GENERIC.read([_jsonl(tmp_path, ROWS)], options)
    # line 2 repeats (bm25, claim_id '0') of line 1: claim_id defaulted to sentence_id
    assert (info.value.line, info.value.field) == (2, "claim_id")
    assert "--option ids=claim" in str(info.value)


def test_unknown_key_inside_a_passage_names_it(tmp_path: Path) -> None:
    rows = [_row("Q1", 0, "c", "bm25", [{"content": "t", "pmid": 1, "url": "x"}])]
    with pytest.raises(InputError) as info:
        GENERIC.read([_jsonl(tmp_path, rows)], OPTIONS)
    assert (info.value.line, info.value.field) == (1, "passages[0].url")
    assert "unknown field" in str(info.value)
    # --option unmapped=drop leaves it out, inside passages too
    options = AdapterOptions(column_map=MAP, extra={**OPTIONS.extra, "unmapped": "drop"})
    (trace,) = GENERIC.read([_jsonl(tmp_path, rows)], options).traces
    assert trace.passages[0].passage_id == "1"


LABEL_CSV = "qid,sent_no,judgement\nQ1,0,incorrect\nQ2,0,correct\nQ2,1,unsure\n"


def test_labels_from_a_categorical_column_per_answer_sentences(tmp_path: Path) -> None:
    path = tmp_path / "clinician.csv"
    path.write_text(LABEL_CSV)
    options = AdapterOptions(
        column_map={"qid": ("question_id",), "sent_no": ("sentence_id",)},
        label_rule="judgement = incorrect -> error; judgement = correct -> no_error; "
        "otherwise -> skip",
        extra={"sentence_ids": "question"},
    )
    result = LABELS.read([path], options)
    assert [(lb.sentence_id, lb.has_error) for lb in result.labels] == [
        ("Q1:0", True),
        ("Q2:0", False),
    ]
    assert result.notes == ["1 row(s) skipped by the label rule"]


def test_per_answer_sentence_numbers_are_refused_with_the_way_out(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"question_id": "Q1", "sentence_id": "0", "has_error": true}\n'
        '{"question_id": "Q2", "sentence_id": "0", "has_error": false}\n'
    )
    proc = run("ingest", "generic-labels", path, "-o", tmp_path / "out.jsonl", cwd=tmp_path)
    assert_one_line_error(proc, "--option sentence_ids=question")
    assert "line 2" not in proc.stderr and ":2, field 'sentence_id'" in proc.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_cli_pipeline_to_metrics(tmp_path: Path) -> None:
    src = _jsonl(tmp_path, ROWS)
    maps = [arg for k, (v,) in MAP.items() for arg in ("--map", f"{k}={v}")]
    proc = run(
        "ingest", "generic", src, "-o", tmp_path / "t.jsonl", *maps,
        "--option", "ids=claim", "--option", "sentence_ids=question",
        "--evidence", "retrieved", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    labels = tmp_path / "clinician.csv"
    labels.write_text(LABEL_CSV)
    proc = run(
        "ingest", "generic-labels", labels, "-o", tmp_path / "l.jsonl",
        "--map", "qid=question_id", "--map", "sent_no=sentence_id",
        "--label-rule", "judgement = incorrect -> error; otherwise -> no_error",
        "--option", "sentence_ids=question", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = run(
        "metrics", "--traces", tmp_path / "t.jsonl", "--labels", tmp_path / "l.jsonl",
        "-m", "refuted", "--bootstrap", "0", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = {r["system"]: r for r in json.loads(proc.stdout)}
    # bm25 refutes every claim: Q1:0 (error) TP, Q2:0 (no error) FP; Q2:1 has no trace.
    # dense judged only Q1:0: TP.
    assert (rows["bm25"]["tp"], rows["bm25"]["fp"]) == (1, 1)
    assert (rows["dense"]["tp"], rows["dense"]["fp"]) == (1, 0)


def test_csv_cell_with_the_passage_list_as_json(tmp_path: Path) -> None:
    # a pandas export of the same rows: the docs list written as JSON text in its cell
    path = tmp_path / "pipeline.csv"
    docs = json.dumps([DOC_A, DOC_B]).replace('"', '""')
    path.write_text(
        "qid,sent_no,atomic_fact,pred,docs,pipeline\n"
        f'Q1,0,Aspirin lowers stroke risk.,REFUTED,"{docs}",bm25\n'
        'Q1,1,The dose is 81 mg.,REFUTED,"[""Aspirin 81 mg daily."", ""Low dose.""]",bm25\n'
        "Q2,0,Statins cause diabetes.,REFUTED,,bm25\n"
    )
    from_csv = GENERIC.read([path], OPTIONS).traces
    from_jsonl = GENERIC.read([_jsonl(tmp_path, ROWS[:1])], OPTIONS).traces
    assert from_csv[0] == from_jsonl[0]
    # a list of texts: one passage each, ranked in order, ids from their text
    texts = [(p.rank, p.text, p.passage_id) for p in from_csv[1].passages]
    assert texts == [
        (1, "Aspirin 81 mg daily.", f"sha256:{content_hash('Aspirin 81 mg daily.')}"),
        (2, "Low dose.", f"sha256:{content_hash('Low dose.')}"),
    ]
    assert from_csv[2].passages == ()  # an empty cell: no passages
    path.write_text("qid,sent_no,atomic_fact,pred,docs,pipeline\nQ1,0,c,REFUTED,not json,bm25\n")
    with pytest.raises(InputError) as info:
        GENERIC.read([path], OPTIONS)
    assert (info.value.line, info.value.field) == (2, "passages")
    assert "a passages cell holds a JSON list" in str(info.value)
