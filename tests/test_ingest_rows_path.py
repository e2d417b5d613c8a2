"""Nested pipeline output (one record per answer, sentences and claims inside) through
``ingest generic --option rows=...``, and a whole-JSON ``.json`` file. Every expected value is
worked out by hand from the document below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.errors import ConfigError, InputError
from failcodes.hashing import content_hash
from failcodes.ingest import AdapterOptions, get_adapter
from failcodes.ingest.nested import parse_rows_path
from failcodes.verdicts import Verdict
from tests.test_cli_ingest import assert_one_line_error, run

GENERIC = get_adapter("generic")
LABELS = get_adapter("generic-labels")

# A FActScore/VeriScore-shaped dump: a list of answers, each with sentences, each with claims.
DOC = [
    {
        "id": "q1",
        "gold": "wrong",
        "meta": {"model": "gpt-x"},
        "answer": {
            "sentences": [
                {
                    "text": "Aspirin lowers stroke risk at 81 mg.",
                    "claims": [
                        {"id": 7, "claim": "Aspirin lowers stroke risk.", "label": "S",
                         "evidence": [{"snippet": "Aspirin reduces strokes.", "pmid": 11}]},
                        {"id": 8, "claim": "The dose is 81 mg.", "label": "R", "evidence": []},
                    ],
                },
                {"text": "Ask your doctor.", "claims": []},
            ]
        },
    },
    {
        "id": "q2",
        "gold": "fine",
        "meta": {"model": "gpt-x"},
        "answer": {
            "sentences": [
                {"text": "Statins are safe.", "claims": [{"id": 9, "claim": "Statins are safe.",
                                                          "label": "S"}]},
            ]
        },
    },
]  # fmt: skip
MAP = {
    "id": ("question_id",),
    "answer.sentences#": ("sentence_id",),
    "answer.sentences.text": ("sentence",),
    "answer.sentences.claims.id": ("claim_id",),
    "label": ("verdict",),
    "evidence": ("passages",),
    "snippet": ("text",),
    "pmid": ("passage_id",),
    "meta.model": ("verifier",),
    "gold": (),
}
EXTRA = {"rows": "answer.sentences[].claims[]", "sentence_ids": "question"}
ALIASES = {"S": Verdict.SUPPORTED, "R": Verdict.REFUTED}


def _options(label_rule: str | None = None, **extra: str) -> AdapterOptions:
    return AdapterOptions(
        column_map=MAP,
        extra={**EXTRA, **extra},
        aliases=ALIASES,
        system="pipe",
        label_rule=label_rule,
    )


def _doc(tmp_path: Path, doc: object = DOC) -> Path:
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def test_claims_nested_in_sentences_become_one_row_each(tmp_path: Path) -> None:
    result = GENERIC.read([_doc(tmp_path)], _options())
    got = [
        (t.question_id, t.sentence_id, t.claim_id, t.claim, t.sentence, t.verdict.value)
        for t in result.traces
    ]
    # three claim objects; the sentence with an empty list gives none; the claim's "id" is
    # named by its path because the record has an "id" too
    assert got == [
        ("q1", "q1:1", "7", "Aspirin lowers stroke risk.",
         "Aspirin lowers stroke risk at 81 mg.", "supported"),
        ("q1", "q1:1", "8", "The dose is 81 mg.", "Aspirin lowers stroke risk at 81 mg.",
         "refuted"),
        ("q2", "q2:1", "9", "Statins are safe.", "Statins are safe.", "supported"),
    ]  # fmt: skip
    first = result.traces[0]
    assert first.verifier == "gpt-x"  # meta.model, a nested object flattened
    assert [(p.passage_id, p.rank, p.text) for p in first.passages] == [
        ("11", 1, "Aspirin reduces strokes.")
    ]
    assert result.traces[1].passages == ()


def test_record_level_label_column_gives_sentence_labels_on_request(tmp_path: Path) -> None:
    opts = _options("gold = wrong -> error", label_level="sentence")
    result = GENERIC.read([_doc(tmp_path)], opts)
    labels = {(lb.sentence_id, lb.claim_id, lb.has_error) for lb in result.labels}
    # claim ids differ from sentence ids, so "auto" would label claims; asked for sentences
    assert labels == {("q1:1", None, True), ("q2:1", None, False)}
    claim_labels = GENERIC.read([_doc(tmp_path)], _options("gold = wrong -> error")).labels
    assert sorted((lb.claim_id, lb.has_error) for lb in claim_labels) == [
        ("7", True),
        ("8", True),
        ("9", False),
    ]


def test_a_list_of_plain_texts_is_one_column_named_by_its_path(tmp_path: Path) -> None:
    doc = {"qid": "a", "claims": ["X is Y.", "Z is W."], "verdicts": "ignored"}
    path = tmp_path / "one.json"
    path.write_text(json.dumps(doc))
    opts = AdapterOptions(
        column_map={"qid": ("question_id",), "claims": ("claim",), "claims#": ("claim_id",),
                    "verdicts": ()},
        extra={"rows": "claims[]"}, system="s", verifier="v",
    )  # fmt: skip
    with pytest.raises(InputError) as info:  # no verdict column at all
        GENERIC.read([path], opts)
    assert (info.value.line, info.value.field) == (1, "verdict")
    assert "(row claims[0])" in str(info.value)


def test_errors_name_the_record_line_and_the_path(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(DOC))
    bad[1]["answer"]["sentences"] = {"text": "not a list"}
    path = _doc(tmp_path, bad)
    with pytest.raises(InputError) as info:
        GENERIC.read([path], _options())
    record_line = path.read_text().splitlines().index("  {", 2) + 1  # the second record
    assert info.value.line == record_line
    assert info.value.field == "answer.sentences"
    assert "expected a list of rows" in str(info.value)
    bad = json.loads(json.dumps(DOC))
    bad[0]["answer"]["sentences"][0]["claims"][1]["label"] = "maybe"
    with pytest.raises(InputError) as info:
        GENERIC.read([_doc(tmp_path, bad)], _options())
    assert (info.value.line, info.value.field) == (2, "verdict")
    assert "(row answer.sentences[0].claims[1])" in str(info.value)


@pytest.mark.parametrize(
    "text", ["claims", "claims[].", "a..b[]", "[]", "claims[]x[]", "a[]#[]", "claims[][]"]
)
def test_malformed_rows_paths_are_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="--option rows="):
        parse_rows_path(text)


def test_rows_path_levels() -> None:
    path = parse_rows_path("answer.sentences[].claims[]")
    assert path.levels == (("answer", "sentences"), ("claims",))
    assert path.names == ("answer.sentences", "answer.sentences.claims")


def test_jsonl_records_explode_too_with_their_own_line(tmp_path: Path) -> None:
    path = tmp_path / "dump.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in DOC))
    traces = GENERIC.read([path], _options()).traces
    assert [t.claim_id for t in traces] == ["7", "8", "9"]
    assert traces[0].passages[0].passage_id == "11"
    # a passage without an id gets the hash of its text, as in any table
    doc = json.loads(json.dumps(DOC))
    del doc[0]["answer"]["sentences"][0]["claims"][0]["evidence"][0]["pmid"]
    path.write_text("".join(json.dumps(r) + "\n" for r in doc))
    first = GENERIC.read([path], _options()).traces[0]
    assert first.passages[0].passage_id == f"sha256:{content_hash('Aspirin reduces strokes.')}"


def test_cli_whole_loop_and_the_claim_level_refusal(tmp_path: Path) -> None:
    src = _doc(tmp_path)
    maps = [arg for k, v in MAP.items() for arg in ("--map", f"{k}={''.join(v)}")]
    common = [
        *maps, "--alias", "S=supported", "--alias", "R=refuted", "--system", "pipe",
        "--option", "rows=answer.sentences[].claims[]", "--option", "sentence_ids=question",
        "--label-rule", "gold = wrong -> error", "--evidence", "retrieved",
    ]  # fmt: skip
    out, lab = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    proc = run("ingest", "generic", src, "-o", out, "--labels-out", lab, *common, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # the labels came out claim-level: sentence-level metrics refuse with the way out
    proc = run("metrics", "--traces", out, "--labels", lab, "-m", "refuted", cwd=tmp_path)
    assert_one_line_error(proc, "all 3 labels are claim-level", "--level claim")
    proc = run(
        "disagreements", "--traces", out, "--labels", lab, "-o", tmp_path / "d.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_error(proc, "all 3 labels are claim-level")
    assert not (tmp_path / "d.jsonl").exists()
    other = tmp_path / "t2.jsonl"  # a second system on the same claims
    other.write_text(out.read_text().replace('"system":"pipe"', '"system":"other"'))
    proc = run(
        "compare", "--traces", out, "--traces", other, "--labels", lab, "-m", "refuted",
        cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_error(proc, "all 3 labels are claim-level", "compare pairs sentences")
    proc = run(
        "ingest", "generic", src, "-o", out, "--labels-out", lab, *common,
        "--option", "label_level=sentence", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = run(
        "metrics", "--traces", out, "--labels", lab, "-m", "refuted", "--format", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    # q1:1 (error) has a refuted claim: TP; q2:1 (no error) only supported: TN
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 0, 1)


def test_record_place_column_numbers_answers_without_ids(tmp_path: Path) -> None:
    # a SAFE-style dump whose records carry no id: '#' is the record's 1-based place
    column_map = {**{k: v for k, v in MAP.items() if k != "id"}, "id": (), "#": ("question_id",)}
    opts = AdapterOptions(column_map=column_map, extra=EXTRA, aliases=ALIASES, system="pipe")
    traces = GENERIC.read([_doc(tmp_path)], opts).traces
    assert [(t.question_id, t.sentence_id, t.claim_id) for t in traces] == [
        ("1", "1:1", "7"),
        ("1", "1:1", "8"),
        ("2", "2:1", "9"),
    ]
    # a flat CSV too: the header is line 1, the records are numbered from 1
    flat = tmp_path / "flat.csv"
    flat.write_text("claim,verdict\nA is B.,S\nC is D.,R\n")
    opts = AdapterOptions(column_map={"#": ("claim_id",)}, aliases=ALIASES, system="pipe")
    assert [t.claim_id for t in GENERIC.read([flat], opts).traces] == ["1", "2"]


def test_a_row_without_any_verdict_column_lists_its_columns(tmp_path: Path) -> None:
    path = _doc(tmp_path)
    opts = AdapterOptions(
        column_map={"id": ("question_id",)}, extra={"rows": "answer.sentences[].claims[]"}
    )
    with pytest.raises(InputError) as info:
        GENERIC.read([path], opts)
    reason = info.value.reason
    assert (info.value.line, info.value.field) == (2, "verdict")
    # the claim object's own keys and the enclosing ones by path, then the way out
    assert (
        "this row's columns: id, gold, meta.model, answer.sentences.text, "
        "answer.sentences.claims.id, claim, label, evidence)" in reason
    )
    assert "--map COLUMN=verdict" in reason and "--option no_verdict=drop" in reason
    # mapped but empty in this row: a verifier that failed
    bad = json.loads(json.dumps(DOC))
    bad[0]["answer"]["sentences"][0]["claims"][0]["label"] = ""
    with pytest.raises(InputError) as info:
        GENERIC.read([_doc(tmp_path, bad)], _options())
    assert info.value.reason.startswith("no verdict (did the verifier fail on this claim?")


def test_validation_names_every_missing_and_unknown_field(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"claim": "X.", "verdict": "S", "model": "m", "run": 3}) + "\n")
    opts = AdapterOptions(column_map={"claim": ("claim", "claim_id")}, aliases=ALIASES, system="s")
    with pytest.raises(InputError) as info:
        GENERIC.read([path], opts)
    assert str(info.value) == (
        f"{path}:1, field 'model': unknown field (also run) (rename foreign fields with --map "
        "FOREIGN=ours, leave one out with --map FOREIGN=)"
    )


def test_label_tables_take_the_label_targets_of_trace_tables(tmp_path: Path) -> None:
    # `--map clinician=label_annotator` is how a traces table names the label's annotator
    path = tmp_path / "labels.csv"
    path.write_text("sid,clinician,verdict\ns1,dr_a,incorrect\ns2,dr_a,correct\n")
    opts = AdapterOptions(
        column_map={"sid": ("sentence_id",), "clinician": ("label_annotator",)},
        label_rule="verdict = incorrect -> error",
    )
    labels = LABELS.read([path], opts).labels
    assert [(lb.sentence_id, lb.has_error, lb.annotator) for lb in labels] == [
        ("s1", True, "dr_a"),
        ("s2", False, "dr_a"),
    ]


def test_a_list_place_as_claim_id_repeats_and_says_how_to_qualify_it(tmp_path: Path) -> None:
    # VeriScore-shaped: claims in a flat list per answer; their place restarts in each record
    records = [
        {"claims": [{"claim": "A.", "v": "S"}, {"claim": "B.", "v": "R"}]},
        {"claims": [{"claim": "C.", "v": "S"}]},
    ]
    path = tmp_path / "dump.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    column_map = {"#": ("question_id",), "claims#": ("claim_id",), "v": ("verdict",)}
    opts = AdapterOptions(column_map=column_map, extra={"rows": "claims[]"}, aliases=ALIASES,
                          system="s")  # fmt: skip
    with pytest.raises(InputError) as info:
        GENERIC.read([path], opts)
    assert (info.value.line, info.value.field) == (2, "claim_id")
    assert "duplicate (system, claim_id) = ('s', '1'); first at line 1" in info.value.reason
    assert "claims# counts from 1 in every record: map it to sentence_id with --option " in (
        info.value.reason
    )
    # the way out it names: qualified by the record's number, every claim has its own id
    fixed = AdapterOptions(
        column_map={**column_map, "claims#": ("sentence_id",)},
        extra={"rows": "claims[]", "sentence_ids": "question"},
        aliases=ALIASES,
        system="s",
    )
    assert [t.claim_id for t in GENERIC.read([path], fixed).traces] == ["1:1", "1:2", "2:1"]


# issue 28: answers keyed by system name, each with its claims (a record may lack a system)
KEYED = [
    {"qid": "q1", "answers": {
        "sysA": {"model": "gpt-x",
                 "claims": [{"claim": "A1.", "v": "S"}, {"claim": "A2.", "v": "R"}]},
        "sysB": {"model": "llm-y", "claims": [{"claim": "B1.", "v": "S"}]},
    }},
    {"qid": "q2", "answers": {"sysA": {"model": "gpt-x", "claims": [{"claim": "A3.", "v": "S"}]}}},
    {"qid": "q3", "answers": {}},
]  # fmt: skip
KEYED_MAP = {
    "qid": ("question_id",),
    "answers.*": ("system",),
    "answers.*.model": ("verifier",),
    "answers.*.claims#": ("sentence_id",),
    "v": ("verdict",),
}


def test_a_star_on_the_rows_path_binds_each_key_to_a_field(tmp_path: Path) -> None:
    path = tmp_path / "keyed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in KEYED))
    opts = AdapterOptions(
        column_map=KEYED_MAP,
        extra={"rows": "answers.*.claims[]", "sentence_ids": "question"},
        aliases=ALIASES,
    )
    result = GENERIC.read([path], opts)
    got = [(t.system, t.verifier, t.claim_id, t.claim, t.verdict.value) for t in result.traces]
    # q1: sysA's two claims, sysB's one; q2: sysA's one (no sysB, no rows); q3: {} no rows
    assert got == [
        ("sysA", "gpt-x", "q1:1", "A1.", "supported"),
        ("sysA", "gpt-x", "q1:2", "A2.", "refuted"),
        ("sysB", "llm-y", "q1:1", "B1.", "supported"),
        ("sysA", "gpt-x", "q2:1", "A3.", "supported"),
    ]
    # the empty answers object of q3 is the one missing-or-empty place
    assert result.notes == [
        "1 list(s) or object(s) on the rows path missing or empty: no rows from them"
    ]


def test_a_record_missing_a_named_key_gives_no_rows(tmp_path: Path) -> None:
    # rows=answers.sysB.claims[]: q2 and q3 have no sysB; was "expected an object ... NoneType"
    path = tmp_path / "keyed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in KEYED))
    opts = AdapterOptions(
        column_map={"qid": ("question_id",), "answers.sysB.claims#": ("sentence_id",),
                    "v": ("verdict",)},
        extra={"rows": "answers.sysB.claims[]", "sentence_ids": "question", "unmapped": "drop"},
        aliases=ALIASES,
        system="sysB",
    )  # fmt: skip
    result = GENERIC.read([path], opts)
    assert [(t.system, t.claim_id, t.claim) for t in result.traces] == [("sysB", "q1:1", "B1.")]
    assert result.notes == [
        "2 list(s) or object(s) on the rows path missing or empty: no rows from them"
    ]


def test_a_star_where_the_path_meets_no_object_names_the_record(tmp_path: Path) -> None:
    path = tmp_path / "keyed.jsonl"
    path.write_text(json.dumps({"qid": "q1", "answers": {"sysA": ["not an object"]}}) + "\n")
    opts = AdapterOptions(column_map=KEYED_MAP, extra={"rows": "answers.*.claims[]"})
    with pytest.raises(InputError) as info:
        GENERIC.read([path], opts)
    assert (info.value.line, info.value.field) == (1, "answers.sysA")
    assert "expected an object at answers.sysA for --option rows=answers.*.claims[], got list" in (
        info.value.reason
    )


def test_rows_path_with_a_star() -> None:
    path = parse_rows_path("answers.*.claims[]")
    assert path.levels == (("answers", "*", "claims"),)
    assert path.names == ("answers.*.claims",)
    with pytest.raises(ConfigError, match=r"rows='answers\.\*x\.claims\[\]'"):
        parse_rows_path("answers.*x.claims[]")
