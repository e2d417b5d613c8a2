"""Outside red-team of the data path, session 21 (t21red1): shapes the other tests do not use.

Each test states the input, what main gave before the fix, and what it gives now, with the
hand computation beside the assertion.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli, write_text

#: One system, three sentences; s1 split into two claims (the second refuted).
_SPLIT = (
    "system,question_id,sentence_id,claim_id,claim,verdict\n"
    "gpt,q1,s1,s1c1,Aspirin thins blood,supported\n"
    "gpt,q1,s1,s1c2,Aspirin treats headache,refuted\n"
    "gpt,q1,s2,s2c1,Ibuprofen is safe in pregnancy,supported\n"
    "gpt,q2,s3,s3c1,Statins lower LDL,supported\n"
)


@pytest.mark.parametrize("command", ["metrics", "disagreements"])
def test_a_claim_label_naming_no_sentence_is_checked_at_sentence_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # Labels s1 and s3 per sentence, s2 through its claim s2c1 alone, the claim label's
    # sentence_id cell empty (a claim table keyed by claim id). Sentence-level metrics read
    # sentence labels only: main counted n 2 (s1 FP, s3 TN) and left out s2, an error the
    # system missed (by hand with s2: TP 0, FP 1, FN 1, TN 1), exit 0; the same claim label
    # with its sentence_id given was refused. Now it is refused the same way, its sentence
    # looked up in the traces (s2c1 -> s2).
    traces = write_text(tmp_path / "t.csv", _SPLIT)
    labels = write_text(
        tmp_path / "l.csv",
        "sentence_id,claim_id,has_error\ns1,,false\n,s2c1,true\ns3,,false\n",
    )
    args = [command, "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    args += ["--bootstrap", "0"] if command == "metrics" else ["-o", str(tmp_path / "d.jsonl")]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "sentence 's2' is labelled through its claims only ('s2c1'" in err
    assert "--level claim" in err
    assert not (tmp_path / "d.jsonl").exists()


def test_a_claim_label_naming_no_sentence_beside_its_sentence_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every sentence labelled, and claim labels without a sentence_id beside them: sentence
    # level reads the sentence labels (s1 FP, s2 FN, s3 TN: TP 0, FP 1, FN 1, TN 1), as before;
    # a claim labelled an error in a sentence labelled no error (s1c2 in s1) is refused as it
    # is when the claim label names its sentence.
    traces = write_text(tmp_path / "t.csv", _SPLIT)
    good = write_text(
        tmp_path / "good.csv",
        "sentence_id,claim_id,has_error\ns1,,false\ns2,,true\ns3,,false\n,s2c1,true\n",
    )
    args = ["metrics", "--traces", str(traces), "-m", "refuted", "--bootstrap", "0"]
    code, out, _ = run_cli([*args, "--labels", str(good), "--format", "csv"], capsys)
    assert code == 0
    assert metrics_counts(out, "refuted") == {"gpt": (0, 1, 1, 1)}
    bad = write_text(
        tmp_path / "bad.csv",
        "sentence_id,claim_id,has_error\ns1,,false\ns2,,true\ns3,,false\n,s1c2,true\n",
    )
    code, _, err = run_cli([*args, "--labels", str(bad)], capsys)
    assert code == 2
    assert "sentence 's1' is labelled no error but its claim 's1c2' an error" in err


def test_per_system_claim_labels_beside_another_systems_sentence_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Per-system labels: gpt labelled per claim (claim ids only), claude per sentence. main
    # gave gpt n 0 (every metric undefined) at exit 0: the all-claim-level check looked at
    # the whole file, which claude's sentence labels passed. Now gpt's first claim label is
    # refused (its sentence s1 has no gpt sentence label).
    gpt = write_text(tmp_path / "gpt.csv", _SPLIT)
    claude = write_text(tmp_path / "claude.csv", _SPLIT.replace("gpt,", "claude,"))
    labels = write_text(
        tmp_path / "l.csv",
        "system,sentence_id,claim_id,has_error\n"
        "gpt,,s1c1,false\ngpt,,s1c2,true\ngpt,,s2c1,true\ngpt,,s3c1,false\n"
        "claude,s1,,false\nclaude,s2,,true\nclaude,s3,,false\n",
    )
    args = ["metrics", "--traces", str(gpt), "--traces", str(claude), "--labels", str(labels)]
    code, _, err = run_cli([*args, "-m", "refuted", "--bootstrap", "0"], capsys)
    assert code == 2
    assert "sentence 's1' is labelled through its claims only ('s1c1'" in err


def test_a_sentence_id_one_system_writes_as_a_float(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A's traces (JSONL, numbers: 1.0 read as '1') and B's CSV (a pandas float column saved
    # as text: '1.0', '2.0', '3.0'), shared labels 1, 2, 3. main scored A on its 3 sentences
    # and B on none: n 0, every metric undefined, the first line reading it as "the 2
    # systems answered disjoint questions", exit 0 (by hand B has TP 1, FP 1, FN 1, TN 0:
    # s1 error not flagged, s2 flagged no error, s3 error flagged). Now refused as a
    # labelled sentence the traces write two ways, as '007' beside '7' is.
    rows = [(1, "refuted"), (2, "supported"), (3, "refuted")]
    a = tmp_path / "a.jsonl"
    a.write_text(
        "".join(
            f'{{"system":"A","question_id":{(n + 1) // 2}.0,"sentence_id":{n}.0,'
            f'"claim_id":{n}.0,"claim":"c{n}","verdict":"{v}"}}\n'
            for n, v in rows
        ),
        encoding="utf-8",
    )
    b = write_text(
        tmp_path / "b.csv",
        "system,question_id,sentence_id,claim_id,claim,verdict\n"
        "B,1.0,1.0,1.0,c1,supported\nB,1.0,2.0,2.0,c2,refuted\nB,2.0,3.0,3.0,c3,refuted\n",
    )
    labels = write_text(tmp_path / "l.csv", "sentence_id,has_error\n1,true\n2,false\n3,true\n")
    args = ["metrics", "--traces", str(a), "--traces", str(b), "--labels", str(labels)]
    code, _, err = run_cli([*args, "--bootstrap", "0"], capsys)
    assert code == 2
    assert "the traces write sentence '1' also as '1.0' (as a float" in err
    fixed = write_text(tmp_path / "b2.csv", b.read_text(encoding="utf-8").replace(".0", ""))
    args = ["metrics", "--traces", str(a), "--traces", str(fixed), "--labels", str(labels)]
    code, out, _ = run_cli([*args, "--bootstrap", "0", "--format", "csv"], capsys)
    assert code == 0
    # A: s1 TP, s2 TN, s3 TP; B as above
    assert metrics_counts(out, "refuted") == {"A": (2, 0, 0, 1), "B": (1, 1, 1, 0)}


def test_the_same_claim_on_a_row_per_retriever_names_a_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A long table, one row per (claim, retriever, passage): claim c1 on two rows (bm25,
    # dense). main refused the repeat with "claim ids numbered within each question? ...
    # --map claim_id= --option ids=claim --option sentence_ids=question"; taken, ids=claim
    # hashed both rows' same question and claim text into one id again and the error gave
    # the same advice: no way through. Now it names the shape and two ways; the second
    # taken gives each retriever its traces (bm25 3, dense 2 rows) and, by hand, both
    # TP 1 (c1 refuted, an error), TN 1 (c2), FN 1 (c3 an error; dense's question q2 counts
    # for it, --question-scope all, said on the first line).
    table = write_text(
        tmp_path / "t.csv",
        "claim_id,question_id,claim,verdict,retriever,passage,gold\n"
        "c1,q1,aspirin helps,refuted,bm25,text a1,wrong\n"
        "c1,q1,aspirin helps,refuted,dense,text a2,wrong\n"
        "c2,q1,statins ok,supported,bm25,text b1,ok\n"
        "c2,q1,statins ok,supported,dense,text b2,ok\n"
        "c3,q2,zinc cures,supported,bm25,text c1,wrong\n",
    )
    traces, labels = tmp_path / "o.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    args += ["--passage-column", "passage", "--label-rule", "gold = wrong -> error"]
    followed = ["--map", "claim_id=", "--option", "ids=claim", "--option", "sentence_ids=question"]
    for extra in ([], followed):
        code, _, err = run_cli([*args, "--system", "rag", *extra], capsys)
        assert code == 2
        assert "the same claim of one sentence on two rows" in err
        assert "--map retriever=system" in err
        assert not traces.exists()
    code, _, err = run_cli([*args, "--map", "retriever=system"], capsys)
    assert code == 0, err
    metrics = ["metrics", "--traces", str(traces), "--labels", str(labels), "--bootstrap", "0"]
    code, out, _ = run_cli([*metrics, "--format", "csv"], capsys)
    assert code == 0
    assert metrics_counts(out, "refuted") == {"bm25": (1, 0, 1, 1), "dense": (1, 0, 1, 1)}


def test_rows_dropped_for_no_verdict_say_which_labels_still_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two LLMs' verdicts, a column each; gpt has none on rows 2 and 4, claude none on row 4;
    # gold: 1, 2, 4 wrong. With no_verdict=drop, row 2's shared label is kept by claude's
    # row and counts for gpt as a sentence it made no claim for (FN), while row 4's label,
    # every row of it dropped, is not written: gpt's two failures on an error count two
    # ways. main's ingest note said "their claims count in no metric" alone, and metrics
    # named no way to leave row 2 out for gpt. Decided (session 20 chose to say the rule):
    # the numbers stay, the note says both kinds and the way, metrics' line names it too.
    table = write_text(
        tmp_path / "w.csv",
        "id,claim,gpt,claude,gold\n1,a,refuted,refuted,wrong\n2,b,NA,supported,wrong\n"
        "3,c,supported,supported,ok\n4,d,NA,NA,wrong\n5,e,refuted,supported,ok\n",
    )
    traces, labels = tmp_path / "t.parquet", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    args += ["--map", "id=sentence_id", "--verdict-column", "gpt", "--verdict-column", "claude"]
    args += ["--label-rule", "gold = wrong -> error", "--option", "no_verdict=drop"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert "its shared label kept by another system's row, counts for the first" in err
    assert "metrics --without-claims exclude leaves the first out too" in err
    metrics = ["metrics", "--traces", str(traces), "--labels", str(labels), "--bootstrap", "0"]
    code, out, _ = run_cli(metrics, capsys)
    assert code == 0
    assert "(--without-claims exclude leaves it out" in out.splitlines()[1]
    code, out, _ = run_cli([*metrics, "--format", "csv"], capsys)
    # gpt: 1 TP, 2 FN (claude's row keeps the label), 3 TN, 4 no label, 5 FP
    # claude: 1 TP, 2 FN, 3 TN, 4 no label, 5 TN
    assert metrics_counts(out, "refuted") == {"gpt": (1, 1, 1, 1), "claude": (1, 0, 1, 2)}
    code, out, _ = run_cli([*metrics, "--format", "csv", "--without-claims", "exclude"], capsys)
    # gpt's row 2 left out as row 4 is: 1 TP, 3 TN, 5 FP; claude as above
    assert metrics_counts(out, "refuted") == {"gpt": (1, 1, 0, 1), "claude": (1, 0, 1, 2)}


def test_atomic_records_with_number_ids_and_bool_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Seed 003's atomic format written by a program: answer/fact/chunk ids as JSON numbers,
    # the verdict a JSON bool. main refused the first line ("field 'answer_id': Input should
    # be a valid string (got 1)", then "field 'verdict': ... (got False)"), no way through,
    # though every other reader reads a number id as its text. Now read so. By hand: fact 1
    # FALSE confirmed TP, fact 2 TRUE not confirmed FN, fact 3 TRUE confirmed TN.
    path = write_text(
        tmp_path / "a.jsonl",
        '{"answer_id":1,"fact_id":1,"fact":"x1","verdict":false,"human_confirms":true,'
        '"chunks":[{"chunk_id":12345,"text":"t"}]}\n'
        '{"answer_id":1,"fact_id":2,"fact":"x2","verdict":true,"human_confirms":false}\n'
        '{"answer_id":2.0,"fact_id":3,"fact":"x3","verdict":"TRUE","human_confirms":true}\n',
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "atomic", str(path), "-o", str(traces), "--labels-out", str(labels)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert '"passage_id":"12345"' in traces.read_text(encoding="utf-8")
    metrics = ["metrics", "--traces", str(traces), "--labels", str(labels), "--level", "claim"]
    code, out, _ = run_cli([*metrics, "--bootstrap", "0", "--format", "csv"], capsys)
    assert code == 0
    assert metrics_counts(out, "refuted") == {"atomic": (1, 0, 1, 1)}


def test_csv_files_joined_with_their_headers_are_refused_at_the_repeated_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `cat la.csv lb.csv > labels.csv`: the second header is read as a data row. main wrote
    # the label sentence 'sentence_id', no_error ('gold' got the rule's implied opposite), at
    # exit 0; traces joined so were refused by ingest as "unknown verdict 'verdict' ...
    # --alias", a way through that does not fit. Now refused at the line that repeats the
    # header, in agree's words for the same row of a ratings table.
    labels = write_text(
        tmp_path / "l.csv", "sentence_id,gold\ns1,ok\ns2,wrong\nsentence_id,gold\ns3,ok\n"
    )
    out = tmp_path / "l.jsonl"
    args = ["ingest", "generic-labels", str(labels), "-o", str(out)]
    code, _, err = run_cli([*args, "--label-rule", "gold = wrong -> error"], capsys)
    assert code == 2
    assert f"{labels}:4: the header again (each cell is its column's name)" in err
    assert not out.exists()
    traces = write_text(tmp_path / "t.csv", _SPLIT + _SPLIT.splitlines(keepends=True)[0])
    code, _, err = run_cli(["ingest", "generic", str(traces), "-o", str(out)], capsys)
    assert code == 2
    assert f"{traces}:6: the header again (each cell is its column's name)" in err


def test_a_label_rule_beside_a_has_error_column_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A label table with both a has_error column and the column a --label-rule reads: main
    # let the rule overwrite has_error with no word (s1 has_error true, gold ok: written
    # has_error false; s2 the other way round), exit 0. Now refused naming both columns;
    # `--map has_error=` (the rule's labels) is the way through: s1 false, s2 true.
    table = write_text(
        tmp_path / "l.csv", "sentence_id,has_error,gold\ns1,true,ok\ns2,false,wrong\n"
    )
    out = tmp_path / "l.jsonl"
    args = ["ingest", "generic-labels", str(table), "-o", str(out)]
    args += ["--label-rule", "gold = wrong -> error"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "column 'has_error' gives has_error and --label-rule reads 'gold'" in err
    assert not out.exists()
    code, _, err = run_cli([*args, "--map", "has_error="], capsys)
    assert code == 0, err
    assert out.read_text(encoding="utf-8").splitlines() == [
        '{"sentence_id":"s1","has_error":false}',
        '{"sentence_id":"s2","has_error":true}',
    ]


def test_disagreements_say_the_rows_dropped_at_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The same wide table as above, ingested to the tool's Parquet (whose footer records the
    # 3 rows dropped: gpt 2, claude 1). main's metrics said them on its second line, its
    # disagreements nothing, though gpt's row 2 (no verdict, an error) is among them as an FN
    # 'with no claims' the judge and attribution get. Now the same line, second.
    table = write_text(
        tmp_path / "w.csv",
        "id,claim,gpt,claude,gold\n1,a,refuted,refuted,wrong\n2,b,NA,supported,wrong\n"
        "3,c,supported,supported,ok\n4,d,NA,NA,wrong\n5,e,refuted,supported,ok\n",
    )
    traces, labels = tmp_path / "t.parquet", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    args += ["--map", "id=sentence_id", "--verdict-column", "gpt", "--verdict-column", "claude"]
    args += ["--label-rule", "gold = wrong -> error", "--option", "no_verdict=drop"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    out = tmp_path / "d.jsonl"
    args = ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert stdout.splitlines()[1].startswith(
        "3 row(s) without a verdict dropped at ingest (--option no_verdict=drop; claude 1, "
        "gpt 2): the disagreements cover 7 of 10 rows (their claims); a labelled sentence"
    )
    # gpt: row 2 FN (no claims), row 5 FP; claude: row 2 FN: 3 disagreements
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


def test_a_label_whose_rows_were_dropped_at_ingest_is_named_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A separate labels file, and question q2's every row without a verdict (dropped at
    # ingest, the count in the Parquet footer). main refused "no trace has sentence_id '3'"
    # with no word of the cause; now the line adds the dropped rows and the way.
    table = write_text(
        tmp_path / "w.csv",
        "id,qid,claim,gpt\n1,q1,a,refuted\n2,q1,b,supported\n3,q2,c,NA\n4,q2,d,NA\n",
    )
    traces = tmp_path / "t.parquet"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--map", "id=sentence_id"]
    args += ["--map", "qid=question_id", "--verdict-column", "gpt", "--option", "no_verdict=drop"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    labels = write_text(tmp_path / "l.csv", "sentence_id,has_error\n1,true\n2,false\n3,true\n")
    for command in ("metrics", "disagreements"):
        args = [command, "--traces", str(traces), "--labels", str(labels)]
        args += ["-o", str(tmp_path / "d.jsonl")] if command == "disagreements" else []
        code, _, err = run_cli(args, capsys)
        assert code == 2
        assert "no trace has sentence_id '3'; 2 row(s) without a verdict dropped at ingest" in err
        assert "its rows among them? leave such labels out" in err


def test_compare_checks_a_claim_label_naming_no_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As test_a_claim_label_naming_no_sentence_is_checked_at_sentence_level, for compare:
    # gpt and claude, shared labels s1, s3 per sentence and s2 through its claim s2c1 alone
    # (sentence_id empty). main paired n 2 sentences (s2, an error, left out) at exit 0; now
    # refused as metrics and disagreements refuse it.
    gpt = write_text(tmp_path / "gpt.csv", _SPLIT)
    claude = write_text(tmp_path / "claude.csv", _SPLIT.replace("gpt,", "claude,"))
    labels = write_text(
        tmp_path / "l.csv", "sentence_id,claim_id,has_error\ns1,,false\n,s2c1,true\ns3,,false\n"
    )
    args = ["compare", "--traces", str(gpt), "--traces", str(claude), "--labels", str(labels)]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "sentence 's2' is labelled through its claims only ('s2c1'" in err


def test_two_retrievers_ranks_in_one_passage_list_name_a_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A trace whose passages hold bm25's rank 1 and dense's rank 1: refused "rank 1 appears
    # twice; ranks must be unique" with no way through; now it names the two.
    traces = write_text(
        tmp_path / "t.jsonl",
        '{"system":"rag","question_id":"q1","sentence_id":"s1","claim_id":"c1","claim":"a",'
        '"verdict":"refuted","passages":[{"passage_id":"p1","rank":1,"text":"x"},'
        '{"passage_id":"p2","rank":1,"text":"y"}]}\n',
    )
    labels = write_text(tmp_path / "l.csv", "sentence_id,has_error\ns1,true\n")
    code, _, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert code == 2
    assert "rank 1 appears twice; ranks must be unique (two retrievers' rankings" in err
