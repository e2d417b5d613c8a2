"""Session 26 leftovers (t26left): each test states the input, what failcodes gave before the
fix, and the value computed by hand beside the assertion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def _reviewed_where_the_panel_doubted(root: Path) -> None:
    """The t23red2 study (40 units, `review plan -n 20 --seed 0`) with a panel whose members a
    and b both code exact_entity on every unit (no split), a flagging its code uncertain on
    10 of the 20 drawn units: the consensus (unanimous) rests on a doubted code there, and
    Label Studio shows those 10 '[judge uncertain]'. alice reviewed just those 10."""
    from failcodes.annotations import Annotation
    from failcodes.codebook import bundled
    from failcodes.judge.panelrun import PanelReport
    from failcodes.panel import consensus, split_units, uncertain_units
    from failcodes.study.layout import StudyLayout
    from failcodes.units import UnitKind
    from tests.review_helpers import drawn_plan_study, judge_annotations
    from tests.test_review_plan import human, write_reviews

    cb = bundled()
    judge = {f"u{n:02d}": "exact_entity" for n in range(40)}
    drawn = drawn_plan_study(root, judge)
    doubted = drawn[:10]
    panel: dict[str, list[Annotation]] = {
        "openai:a": judge_annotations(judge, coder="openai:a", uncertain=doubted),
        "openai:b": judge_annotations(judge, coder="openai:b"),
    }
    units = consensus(panel, cb.part(UnitKind.RETRIEVAL), "openai:a")
    report = PanelReport(
        kind=UnitKind.RETRIEVAL,
        codebook=str(cb.ref()),
        members=list(panel),
        run_dirs={"openai:a": "panel/1-openai_a", "openai:b": "panel/2-openai_b"},
        cost_usd=0.0,
        units=units,
        split_units=split_units(units),
        agreement=[],
        quotes=[],
        primary="openai:a",
    )
    assert report.split_units == [] and sorted(uncertain_units(units)) == sorted(doubted)
    run = StudyLayout.of(root).judge_run("ds", "retrieval")
    run.mkdir(parents=True)
    (run / "panel.json").write_text(report.model_dump_json(), encoding="utf-8")
    write_reviews(root / "review" / "alice.jsonl", [human(u, "partial_entity") for u in doubted])


#: Fisher's exact test on the 20 drawn units, reviewed (10) vs not (10), of the split "the
#: consensus rests on a doubted code": 10 of 10 vs 0 of 10; two-sided p = 2 / C(20, 10) =
#: 2 / 184756 = 1.08e-5. The only split that divides the drawn units (the consensus is
#: exact_entity and all high on all 40, the panel splits on none), so no Bonferroni factor.
SKEW_ON_DOUBTED_CONSENSUS = (
    "the reviewed units are not a random part of the drawn ones: the judge panel's consensus "
    "rests on a code a member doubted on 10 of 10 reviewed and 0 of 10 drawn but not reviewed "
    "(Fisher p = 1.1e-05); counting those as not drawn biases the human and corrected shares "
    "toward the units reviewed"
)


def test_reviews_of_the_units_whose_panel_consensus_was_doubted_are_said_not_at_random(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: judge_doubts gave a panel its split units alone, so a reviewer who took the 10
    # units Label Studio shows '[judge uncertain]' (a doubted consensus) read partial_entity
    # corrected 100.0 [69.2, 100.0] (Clopper-Pearson 10/10: 0.025^(1/10) = 0.692) with the
    # caption's "assumes they are missing at random" and no word; a single judge's doubted
    # units were already one of the checked splits (t22ppi).
    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind

    _reviewed_where_the_panel_doubted(tmp_path)
    inputs = load_run_dir(tmp_path)
    [(caption, table)] = inputs.corrected[UnitKind.RETRIEVAL]
    assert caption.endswith(
        "(10 not yet, counted as not drawn, which assumes they are missing at random); "
        f"{SKEW_ON_DOUBTED_CONSENSUS}"
    )
    partial = table[table["code"] == "partial_entity"].iloc[0]
    assert partial["corrected (%)"] == "100.0 [69.2, 100.0]"
    assert partial["note"] == "the missing reviews are not missing at random (caption)"
    plan = tmp_path / "review" / "plans" / "p.json"
    reviews = tmp_path / "review" / "alice.jsonl"
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(reviews)], capsys)
    assert code == 0 and "estimation sample 10/20 reviewed" in out
    assert err == f"failcodes: warning: {SKEW_ON_DOUBTED_CONSENSUS}\n"


#: The label-rule way every has_error refusal ends with (tableio._validation_error).
_LABEL_WAY = (
    "; labels written other than true/false or 1/0 (ja/nein, a scale, blanks)? failcodes "
    "ingest generic-labels FILE -o OUT --label-rule 'has_error in {ERROR VALUES} -> error; "
    "has_error in {OTHER VALUES} -> no_error; otherwise -> skip'"
)

_TWO_CLAIMS = (
    '{"system": SYS, "question_id": "q1", "sentence_id": "s1", "claim_id": "c1", "claim": "x", '
    '"verdict": "supported"}\n'
    '{"system": SYS, "question_id": "q1", "sentence_id": "s2", "claim_id": "c2", "claim": "y", '
    '"verdict": "refuted"}\n'
)


@pytest.mark.parametrize(
    ("name", "content", "line", "got"),
    [
        ("l.jsonl", '{"sentence_id": "s1", "has_error": "maybe"}\n', 1, "'maybe'"),
        ("l.jsonl", '{"sentence_id": "s1", "has_error": 2}\n', 1, "the number 2"),
        ("l.csv", "sentence_id,has_error\ns1,maybe\n", 2, "'maybe'"),
        ("l.csv", "sentence_id,has_error\ns1,2\n", 2, "'2'"),
    ],
)
def test_a_has_error_that_is_no_boolean_is_refused_in_the_tools_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str, line: int, got: str
) -> None:
    # Before: "field 'has_error': Input should be a valid boolean, unable to interpret input
    # (got 'maybe')" / "(got 2)": pydantic's words, where 0.5 and NaN said "expected true or
    # false (or 1/0), got the number 0.5" (ca01f07). pydantic reads 1/0, yes/no (y/n, t/f,
    # on/off) in any case, so the line names yes/no too.
    traces = tmp_path / "t.jsonl"
    traces.write_text(_TWO_CLAIMS.replace("SYS", '"a"'))
    labels = tmp_path / name
    labels.write_text(content)
    code, out, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"failcodes: error: {labels}:{line}, field 'has_error': expected true or false (or 1/0, "
        f"yes/no), got {got}{_LABEL_WAY}\n"
    )

    # the words it names are read: s1 'no' (supported: TN), s2 'YES' (refuted: TP)
    labels = tmp_path / "yes_no.csv"
    labels.write_text("sentence_id,has_error\ns1,no\ns2,YES\n")
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    [row] = json.loads(out)
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 0, 1)


def test_a_system_numbered_in_json_is_read_as_its_text_as_csv_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A pipeline naming its systems 1..n: JSONL's "system": 7 (and a Parquet integer column)
    # was refused "field 'system': expected text, got the number 7", where the same traces as
    # CSV read system '7' (a CSV cell is text), and JSONL's sentence_id 7 reads as '7' (the
    # ids' one rule, tableio.id_text). Now read as '7' alike: per-system labels naming system
    # 7 (a JSON number) or '7' (CSV text) join the traces. By hand: s1 supported, no error:
    # TN; s2 refuted, an error: TP -> TP 1, FP 0, FN 0, TN 1 for system '7'.
    import pyarrow as pa
    import pyarrow.parquet as pq

    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(_TWO_CLAIMS.replace("SYS", "7"))
    parquet = tmp_path / "t.parquet"
    pq.write_table(
        pa.Table.from_pylist([json.loads(s) for s in jsonl.read_text().split("\n")[:2]]), parquet
    )
    assert pq.read_schema(parquet).field("system").type == pa.int64()
    number = tmp_path / "l.jsonl"
    number.write_text(
        '{"system": 7, "sentence_id": "s1", "has_error": false}\n'
        '{"system": 7, "sentence_id": "s2", "has_error": true}\n'
    )
    text = tmp_path / "l.csv"
    text.write_text("system,sentence_id,has_error\n7,s1,false\n7,s2,true\n")
    for traces, labels in ((jsonl, number), (jsonl, text), (parquet, number)):
        args = ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"]
        code, out, err = run_cli(args, capsys)
        assert code == 0, err
        [row] = json.loads(out)
        assert row["system"] == "7"
        assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 0, 1)
    # a system 7.5 is refused as an id 7.5 is (1.10 and 1.1 would be one system)
    jsonl.write_text(_TWO_CLAIMS.replace("SYS", "7.5"))
    code, _, err = run_cli(["metrics", "--traces", str(jsonl), "--labels", str(text)], capsys)
    assert code == 2
    assert err.startswith(
        f"failcodes: error: {jsonl}:1, field 'system': id 7.5 is a number with a fraction"
    )


def test_a_blank_passage_column_keeps_the_ranks_of_the_columns_after_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A top-3 retriever's wide table, passage_2 blank on s1's row (a passage the pipeline
    # left out, a deduplicated hit). Before: s1's passage_3 became rank 2, so `--top-k 2`
    # (judge, units, attribution) took the third hit as a top-2 one. Now each text column
    # keeps its place in the order given: s1's passages rank 1 and 3, s2's 1, 2 and 3.
    table = tmp_path / "w.csv"
    table.write_text(
        "system,question_id,sentence_id,claim,verdict,passage_1,passage_2,passage_3\n"
        "a,q1,s1,x,supported,first text,,third text\n"
        "a,q1,s2,y,refuted,p one,p two,p three\n"
    )
    out = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(out)]
    for column in ("passage_1", "passage_2", "passage_3"):
        args += ["--passage-column", column]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    s1, s2 = (json.loads(line) for line in out.read_text().splitlines())
    assert [(p["passage_id"], p["rank"]) for p in s1["passages"]] == [
        ("s1:passage_1", 1),
        ("s1:passage_3", 3),
    ]
    assert [p["rank"] for p in s2["passages"]] == [1, 2, 3]


def test_the_hint_for_records_wrapped_in_one_key_names_the_option_that_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # {"data": [...]} (an API's envelope): the hint named --option 'rows=*[]' --map '*=system'
    # (records listed under each system's name) alone, which reads 'data' as a system. The
    # option that reads it is rows=data[] (run below: 2 traces of system a); the other way
    # stays named for one list under a system's name.
    rows = [
        {"system": "a", "question_id": "q1", "sentence_id": f"s{n}", "claim_id": f"c{n}"}
        | {"claim": "x", "verdict": "supported"}
        for n in (1, 2)
    ]
    wrapped = tmp_path / "w.json"
    wrapped.write_text(json.dumps({"data": rows}))
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(wrapped), "-o", str(out)], capsys)
    assert code == 2
    assert err == (
        f"failcodes: error: {wrapped}:1, field 'verdict': no verdict (this row's column data "
        "holds a list: the records are nested in it); name the list that holds the rows with "
        "--option rows=PATH: --option 'rows=data[]' (or, if 'data' names a system, --option "
        "'rows=*[]' --map '*=system') (docs/trace-format.md, nested output)\n"
    )
    args = ["ingest", "generic", str(wrapped), "-o", str(out), "--option", "rows=data[]"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert [json.loads(line)["sentence_id"] for line in out.read_text().splitlines()] == [
        "s1",
        "s2",
    ]


def test_figure_1s_subcode_axis_says_what_tables_8_and_9_count() -> None:
    # Figure 1's subcode bars are rundir._error_counts over Tables 8-9's tallies: since
    # 56407e3 a (claim, passage) unit retrieved for several systems (one retriever) counts
    # once (row_weights gives its repeats weight 0: 3 systems x 8 questions, bm25 81 rows
    # over 69 distinct units), a claim once per system (a verifier's run per system). The axis
    # said 'coded rows: retrieval one per claim and passage, verification one per claim':
    # rows, not units, and a claim once where each system's trace counts.
    from failcodes.report.build import FREQ_NOTE
    from failcodes.report.figures import attribution_flow

    fig = attribution_flow({"retrieval": 2}, {"retrieval": {"broader_scope": 69}})
    _, right = fig.axes
    assert right.get_xlabel() == (
        "as Tables 8-9 count: retrieval a (claim, passage)\n"
        "unit once per retriever and data set,\nverification a claim once per system"
    )
    # the same words as the note under the codes table (Freq.)
    assert "a (claim, passage) unit once per retriever and data set" in FREQ_NOTE
    assert "a trace once per system" in FREQ_NOTE
