"""The generic adapter on foreign claim/sentence tables: ids, copies, passage columns, label rules.

Every expected value below is worked out by hand from the small tables written in each test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from failcodes.errors import ConfigError, InputError
from failcodes.ingest import AdapterOptions, get_adapter
from failcodes.ingest.label_rule import Outcome, parse_label_rule
from failcodes.verdicts import Verdict
from tests.test_cli_ingest import assert_one_line_error, run

GENERIC = get_adapter("generic")

# A claim-level fact-check table (the shape of HealthFC / COVID-Fact): no question or
# sentence ids, a gold label column, a model verdict column, an evidence text column.
CLAIMS_CSV = (
    "cid,text,model_says,gold,article,notes\n"
    "c1,Masks reduce infections.,SUPPORTS,true,Studies show masks slow spread.,x\n"
    "c2,Vitamin C cures colds.,SUPPORTS,false,No trial found a cure.,y\n"
    'c3,Garlic lowers blood pressure.,NOT ENOUGH INFO,mixture,"",z\n'
)
CLAIM_OPTIONS = AdapterOptions(
    column_map={
        "cid": ("claim_id",),
        "text": ("claim", "sentence"),
        "model_says": ("verdict",),
        "notes": (),
    },
    aliases={"SUPPORTS": Verdict.SUPPORTED, "NOT ENOUGH INFO": Verdict.NO_EVIDENCE},
    passage_columns=(("article", "factcheck.example"),),
    label_rule="gold in {false, mixture} -> error",
    system="gpt-judge",
    verifier="gpt-x",
)


def _csv(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_claim_table_with_copies_passage_column_and_label_rule(tmp_path: Path) -> None:
    result = GENERIC.read([_csv(tmp_path, CLAIMS_CSV)], CLAIM_OPTIONS)
    t1, t2, t3 = result.traces
    # ids default to each other: question = sentence = claim id
    assert (t1.question_id, t1.sentence_id, t1.claim_id) == ("c1", "c1", "c1")
    # one column copied into two fields
    assert (t2.claim, t2.sentence) == ("Vitamin C cures colds.", "Vitamin C cures colds.")
    assert (t1.verdict, t1.raw_verdict, t3.verdict) == (
        Verdict.SUPPORTED,
        "SUPPORTS",
        Verdict.NO_EVIDENCE,
    )
    assert (t1.system, t1.verifier, t1.retriever) == ("gpt-judge", "gpt-x", None)
    # the article text is one passage with its source; the empty cell gives none
    assert [(p.passage_id, p.rank, p.source, p.text) for p in t1.passages] == [
        ("c1:article", 1, "factcheck.example", "Studies show masks slow spread.")
    ]
    assert t3.passages == ()
    # label rule: false and mixture are errors, true is not; labels at sentence level
    assert [(lb.sentence_id, lb.claim_id, lb.has_error) for lb in result.labels] == [
        ("c1", None, False),
        ("c2", None, True),
        ("c3", None, True),
    ]
    assert result.notes == [
        "label rule 'gold in {false, mixture} -> error': 2 error / 1 no-error sentence labels"
    ]


def test_sentence_level_jsonl_with_claims_and_label_fields(tmp_path: Path) -> None:
    # Two claims of one sentence: labels go on the claims (claim ids differ from sentence ids)
    rows = [
        {"q": "a1", "s": "a1:s0", "c": "a1:s0:c0", "claim": "X helps.", "v": "True", "y": "no"},
        {"q": "a1", "s": "a1:s0", "c": "a1:s0:c1", "claim": "Y hurts.", "v": "False", "y": "yes"},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r | {"why": "checked"}) + "\n" for r in rows))
    options = AdapterOptions(
        column_map={
            "q": ("question_id",),
            "s": ("sentence_id",),
            "c": ("claim_id",),
            "v": ("verdict",),
            "why": ("label_rationale",),
        },
        label_rule="y = yes -> error",
        system="sys",
    )
    result = GENERIC.read([path], options)
    assert [(t.question_id, t.sentence_id, t.verdict) for t in result.traces] == [
        ("a1", "a1:s0", Verdict.SUPPORTED),
        ("a1", "a1:s0", Verdict.REFUTED),
    ]
    assert [(lb.claim_id, lb.has_error, lb.rationale) for lb in result.labels] == [
        ("a1:s0:c0", False, "checked"),
        ("a1:s0:c1", True, "checked"),
    ]


def test_parquet_list_cell_gives_one_passage_per_item_and_line_ids(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    table = pa.table(
        {
            "claim": ["A is B.", "C is D."],
            "label": ["REFUTED", "SUPPORTED"],
            "evidence": [["first.", "second."], []],
            "url": ["http://x", "http://y"],
        }
    )
    pq.write_table(table, path)
    options = AdapterOptions(
        column_map={"label": ("verdict",)},
        aliases={"REFUTED": Verdict.REFUTED, "SUPPORTED": Verdict.SUPPORTED},
        passage_columns=(("evidence", None),),
        label_rule="label = REFUTED -> error",
        system="oracle",
        extra={"ids": "line", "unmapped": "drop"},
    )
    result = GENERIC.read([path], options)
    a, b = result.traces
    assert (a.claim_id, b.claim_id) == ("L1", "L2")  # Parquet rows are numbered from 1
    assert [(p.passage_id, p.rank, p.source) for p in a.passages] == [
        ("L1:evidence:1", 1, None),
        ("L1:evidence:2", 2, None),
    ]
    assert b.passages == ()
    assert [lb.has_error for lb in result.labels] == [True, False]


def test_several_systems_share_one_label_and_must_agree(tmp_path: Path) -> None:
    text = "system,cid,text,verdict,gold\nA,c1,x,supported,1\nB,c1,x,refuted,1\n"
    options = AdapterOptions(
        column_map={"cid": ("claim_id",), "text": ("claim",)}, label_rule="gold in {1} -> error"
    )
    result = GENERIC.read([_csv(tmp_path, text)], options)
    assert len(result.traces) == 2 and len(result.labels) == 1
    bad = _csv(tmp_path, "system,cid,text,verdict,gold\nA,c1,x,supported,1\nB,c1,x,refuted,0\n")
    with pytest.raises(InputError) as info:
        GENERIC.read([bad], options)
    assert (info.value.line, info.value.field) == (3, "sentence_id")
    assert "has_error=false here but true at line 2" in str(info.value)


def test_label_rule_grammar() -> None:
    rule = parse_label_rule('label in {False, "mixed, mostly false"} -> error; otherwise -> skip')
    assert rule.column == "label"
    assert rule.outcome("false") is Outcome.ERROR  # case-insensitive
    assert rule.outcome(" Mixed, mostly false ") is Outcome.ERROR
    assert rule.outcome("true") is Outcome.SKIP and rule.outcome(None) is Outcome.SKIP
    single = parse_label_rule("score in {2} -> no_error")
    assert single.outcome(2.0) is Outcome.NO_ERROR and single.outcome(1) is Outcome.ERROR
    assert parse_label_rule("ok = true -> no_error").outcome(False) is Outcome.ERROR
    three = parse_label_rule("g in {2} -> error; g in {0} -> no_error; g in {1} -> skip")
    with pytest.raises(InputError, match=re.escape("value '3' is not named by --label-rule")):
        three.outcome("3", path="t.csv", line=4)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("label is false", "cannot read 'label is false'"),
        ("label in {false} -> bad", "unknown outcome 'bad' (expected error, no_error or skip)"),
        ("label in {a, } -> error", "empty value in {a, }"),
        ("a in {x} -> error; b in {y} -> no_error", "every clause must name the same column"),
        ("a in {x} -> error; a in {X} -> no_error", "value 'X' appears in two clauses"),
        ("a in {x} -> skip", "a rule that only skips gives no label"),
        ("otherwise -> error", "no clause names a column"),
        ("a in {x} -> error; otherwise -> skip; otherwise -> error", "'otherwise' given twice"),
        (" ; ", "--label-rule is empty"),
    ],
)
def test_bad_label_rules(rule: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_label_rule(rule)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (AdapterOptions(column_map={"cid": ("claim_ids",)}), "'claim_ids' is not a trace field"),
        (
            AdapterOptions(column_map={"cid": ("claim_id",), "text": ("claim_id",)}),
            "field 'claim_id' is filled from both 'cid' and 'text'",
        ),
        (
            AdapterOptions(passage_columns=(("a", None), ("a", "x"))),
            "--passage-column 'a' given twice",
        ),
        (AdapterOptions(extra={"ids": "rows"}), "--option ids='rows' is not one of: columns, line"),
        (AdapterOptions(extra={"nope": "1"}), "adapter 'generic' has no option 'nope'"),
    ],
)
def test_bad_table_options(tmp_path: Path, options: AdapterOptions, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        GENERIC.read([_csv(tmp_path, CLAIMS_CSV)], options)


@pytest.mark.parametrize(
    ("text", "options", "where", "message"),
    [
        # a column nobody mapped: named, with the way out
        (CLAIMS_CSV, AdapterOptions(system="s"), (1, "cid"), "unknown column"),
        # no id column at all
        (
            "text,verdict\nx,supported\n",
            AdapterOptions(column_map={"text": ("claim",)}, system="s"),
            (1, "claim_id"),
            "or claim_id from row numbers with --option ids=line",
        ),
        # the label rule's column is not in the table
        (
            "claim_id,claim,verdict\nc,x,supported\n",
            AdapterOptions(system="s", label_rule="gold in {1} -> error"),
            (1, "gold"),
            "missing column",
        ),
        # a cell the verdict aliases do not know: the row and the field
        (
            "claim_id,claim,verdict\nc1,x,supported\nc2,y,maybe\n",
            AdapterOptions(system="s"),
            (3, "verdict"),
            "unknown verdict 'maybe'",
        ),
        # a column copied onto a field that the table also has
        (
            "claim_id,claim,text,verdict\nc1,x,y,supported\n",
            AdapterOptions(system="s", column_map={"text": ("claim", "sentence")}),
            (2, "claim"),
            "field 'claim' comes from both column",
        ),
    ],
)
def test_bad_tables_name_line_and_field(
    tmp_path: Path,
    text: str,
    options: AdapterOptions,
    where: tuple[int, str],
    message: str,
) -> None:
    with pytest.raises(InputError) as info:
        GENERIC.read([_csv(tmp_path, text)], options)
    assert (info.value.line, info.value.field) == where
    assert message in str(info.value)


def test_cli_table_to_traces_and_labels(tmp_path: Path) -> None:
    src = _csv(tmp_path, CLAIMS_CSV)
    proc = run(
        "ingest", "generic", src, "-o", tmp_path / "t.jsonl", "--labels-out", tmp_path / "l.csv",
        "--map", "cid=claim_id", "--map", "text=claim", "--map", "text=sentence",
        "--map", "model_says=verdict", "--map", "notes=",
        "--alias", "SUPPORTS=supported", "--alias", "NOT ENOUGH INFO=no_evidence",
        "--passage-column", "article=factcheck.example",
        "--label-rule", "gold in {false, mixture} -> error",
        "--system", "gpt-judge", "--verifier", "gpt-x", "--evidence", "provided",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    traces = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [(t["claim_id"], t["sentence"], t["evidence_source"]) for t in traces] == [
        ("c1", "Masks reduce infections.", "provided"),
        ("c2", "Vitamin C cures colds.", "provided"),
        ("c3", "Garlic lowers blood pressure.", "provided"),
    ]
    labels = (tmp_path / "l.csv").read_text().splitlines()
    assert [row.split(",")[3] for row in labels[1:]] == ["false", "true", "true"]
    assert "2 error / 1 no-error sentence labels" in proc.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--map", "a=claim", "--map", "a=claim"), "--map a=claim given twice"),
        (("--map", "a=", "--map", "a=claim"), "--map a= drops column 'a'"),
        (("--passage-column", "=src"), "--passage-column expects COLUMN or COLUMN=SOURCE"),
        (("--label-rule", "gold -> error"), "--label-rule 'gold -> error': cannot read"),
    ],
)
def test_cli_bad_table_options(tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    src = _csv(tmp_path, CLAIMS_CSV)
    proc = run("ingest", "generic", src, "-o", tmp_path / "t.jsonl", *args, cwd=tmp_path)
    assert_one_line_error(proc, needle)
    assert not (tmp_path / "t.jsonl").exists()


def test_cli_table_options_belong_to_generic(tmp_path: Path) -> None:
    proc = run(
        "ingest", "medscore", tmp_path / "x.jsonl", "-o", tmp_path / "t.jsonl",
        "--label-rule", "a in {b} -> error", "--verifier", "v", cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_error(proc, "--verifier, --label-rule: generic adapter only (not 'medscore')")
    proc = run(
        "ingest", "medscore", tmp_path / "x.jsonl", "-o", tmp_path / "t.jsonl",
        "--map", "a=b", cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_error(proc, "--map applies to the generic adapters, not 'medscore'")
