"""Outside red-team of the data path, session 20 (t20red1): shapes the other tests do not use.

Each test states the input, what main gave before the fix, and what it gives now, with the
hand computation beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli, write_text

#: Two LLMs' verdicts, a column each, as R's write.csv writes a missing cell (NA), with
#: Excel's #N/A and n/a beside it: the verifier gave no verdict on those rows.
_R_WIDE = (
    "id,claim,gpt,claude,gold\n"
    "1,a,supported,supported,ok\n"
    "2,b,refuted,NA,wrong\n"
    "3,c,NA,refuted,wrong\n"
    "4,d,n/a,supported,ok\n"
    "5,e,supported,#N/A,ok\n"
)


def test_a_verdict_written_na_is_a_row_without_a_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # main refused 'NA' as an unknown verdict, its way through `--alias NA=CANONICAL`; no
    # canonical verdict means "no verdict", and --alias NA=no_evidence (n/a, #N/A too) read a
    # failed verifier as one that found no evidence: gpt under non_supported TP 2 (rows 2, 3),
    # FP 1 (row 4), TN 2, exit 0. Now a missing mark is a row without a verdict, as an empty
    # cell: --option no_verdict=drop leaves it out, and its sentence's label counts as one the
    # system flagged no error in (the default --without-claims no_error).
    table = write_text(tmp_path / "wide.csv", _R_WIDE)
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    args += ["--map", "id=sentence_id", "--verdict-column", "gpt", "--verdict-column", "claude"]
    args += ["--label-rule", "gold = wrong -> error", "--option", "no_verdict=drop"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    # gpt rows 3 (NA), 4 (n/a); claude rows 2 (NA), 5 (#N/A)
    assert (
        "4 row(s) without a verdict left out (first at line 3; --option no_verdict=drop; "
        "claude 2, gpt 2)" in err
    )
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"]
    code, stdout, err = run_cli([*args, "-m", "refuted", "-m", "non_supported"], capsys)
    assert code == 0, err
    # labels: 1 ok, 2 wrong, 3 wrong, 4 ok, 5 ok.
    # gpt: 1 supported TN, 2 refuted TP, 3 dropped (wrong, no claim) FN, 4 dropped TN,
    #      5 supported TN -> TP 1, FP 0, FN 1, TN 3 (both mappings: no no_evidence left).
    # claude: 1 TN, 2 dropped FN, 3 refuted TP, 4 supported TN, 5 dropped TN -> 1, 0, 1, 3.
    for mapping in ("refuted", "non_supported"):
        assert metrics_counts(stdout, mapping) == {"gpt": (1, 0, 1, 3), "claude": (1, 0, 1, 3)}


def test_an_alias_naming_na_still_reads_it_and_metrics_names_the_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An alias names it: NA is that verdict (a verifier whose NA means "not applicable").
    table = write_text(tmp_path / "wide.csv", _R_WIDE)
    traces = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--map", "id=sentence_id"]
    args += ["--verdict-column", "gpt", "--verdict-column", "claude", "--map", "gold="]
    args += ["--alias", "NA=out_of_scope", "--option", "no_verdict=drop"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in traces.read_text().splitlines()]
    # NA on claude's row 2 and gpt's row 3; n/a (gpt 4) and #N/A (claude 5) dropped: 10 - 2
    assert len(rows) == 8
    assert sorted((r["system"], r["claim_id"]) for r in rows if r.get("raw_verdict") == "NA") == [
        ("claude", "2"),
        ("gpt", "3"),
    ]
    assert {r["verdict"] for r in rows if r.get("raw_verdict") == "NA"} == {"out_of_scope"}
    # metrics given such traces directly: the way through is ingest's option, not an alias
    direct = write_text(
        tmp_path / "direct.csv",
        "system,question_id,sentence_id,claim_id,claim,verdict\nA,q1,1,1,a,supported\n"
        "A,q1,2,2,b,NA\n",
    )
    labels = write_text(tmp_path / "l.csv", "sentence_id,has_error\n1,false\n2,true\n")
    code, _, err = run_cli(["metrics", "--traces", str(direct), "--labels", str(labels)], capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {direct}:3, field 'verdict': unknown verdict 'NA' (canonical "
        "verdicts: ambiguous, no_evidence, out_of_scope, refuted, supported; a missing mark: "
        "`ingest generic --option no_verdict=drop` leaves such rows out)",
    )


def test_healthver_claim_ids_do_not_depend_on_the_files_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # HealthVer's dev and test share topics. main numbered a topic's claims on across the
    # files given, so test's claims took other ids beside dev (on the published files 210 of
    # test's 230), and labels made on `ingest healthver test.csv` fell on dev's claims when
    # dev was given too: hv-3-1 (garlic, an error) named dev's 'masks help' (supported: FN),
    # hv-3-2 (vitamin C, no error) test's 'garlic cures' (refuted: FP): FP 1, FN 1, exit 0
    # (published files, labels = the oracle's refuted: TP 11, FP 27, FN 28, TN 164 for TP 39,
    # TN 191). Now a claim's id holds its first HealthVer pair id: the same in either run.
    head = "id,evidence,claim,label,topic_ip,question\n"
    dev = write_text(tmp_path / "healthver_dev.csv", head + "101,e1,masks help,Supports,3,Q\n")
    test = write_text(
        tmp_path / "healthver_test.csv",
        head + "201,e2,garlic cures,Refutes,3,Q\n202,e3,vitamin C cures,Neutral,3,Q\n",
    )
    alone, both = tmp_path / "test.jsonl", tmp_path / "both.jsonl"
    for files, out in (([test], alone), ([dev, test], both)):
        code, _, err = run_cli(["ingest", "healthver", *map(str, files), "-o", str(out)], capsys)
        assert code == 0, err
    ids = {r["claim"]: r["claim_id"] for r in map(json.loads, both.read_text().splitlines())}
    assert ids == {
        "masks help": "hv-3-101",
        "garlic cures": "hv-3-201",
        "vitamin C cures": "hv-3-202",
    }
    # a clinician's labels of test's claims, by the ids `ingest healthver test.csv` wrote
    wrong = {"garlic cures": True, "vitamin C cures": False}
    labels = write_text(
        tmp_path / "labels.jsonl",
        "".join(
            json.dumps({"claim_id": r["claim_id"], "has_error": wrong[r["claim"]]}) + "\n"
            for r in map(json.loads, alone.read_text().splitlines())
        ),
    )
    # by hand: garlic (an error) refuted TP; vitamin C (no error) no_evidence TN; masks
    # unlabelled: TP 1, FP 0, FN 0, TN 1 in both runs
    for traces in (alone, both):
        args = ["metrics", "--traces", str(traces), "--labels", str(labels), "--level", "claim"]
        code, stdout, err = run_cli([*args, "-m", "refuted", "--format", "csv"], capsys)
        assert code == 0, err
        assert metrics_counts(stdout, "refuted") == {"healthver-t5": (1, 0, 0, 1)}


def test_the_tools_own_parquet_says_a_system_read_closed_book_as_jsonl_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # System A's traces carry no passage and no retriever, and nothing declares its evidence:
    # read as closed-book, its disagreements blamed on verification. `disagreements` said so
    # on its Assumed line for the traces as JSONL; the same traces as the tool's own Parquet
    # (ingest's -o t.parquet) said nothing: the count was not read from that file. Now ingest
    # writes it in the Parquet footer and the line is the JSONL's, word for word.
    table = write_text(
        tmp_path / "t.csv",
        "id,claim,verdict,gold\n1,a,supported,wrong\n2,b,refuted,ok\n3,c,supported,ok\n",
    )
    labels = tmp_path / "l.jsonl"
    lines = []
    for out in (tmp_path / "t.jsonl", tmp_path / "t.parquet"):
        args = ["ingest", "generic", str(table), "-o", str(out), "--labels-out", str(labels)]
        code, _, err = run_cli(
            [
                *args,
                "--map",
                "id=sentence_id",
                "--system",
                "A",
                "--label-rule",
                "gold = wrong -> error",
            ],
            capsys,
        )
        assert code == 0, err
        disagreements = tmp_path / f"d-{out.suffix[1:]}.jsonl"
        code, stdout, err = run_cli(
            [
                "disagreements",
                "--traces",
                str(out),
                "--labels",
                str(labels),
                "-o",
                str(disagreements),
            ],
            capsys,
        )
        assert code == 0, err
        lines.append(stdout.splitlines()[0])
        # by hand: s1 an error, supported (FN); s2 no error, refuted (FP); s3 TN: 2 rows
        assert len(disagreements.read_text().splitlines()) == 2
    jsonl, parquet = lines
    assert "evidence not declared for A: read as closed-book (no passages or retriever on" in jsonl
    assert parquet == jsonl


def test_a_label_column_of_other_words_names_the_label_rule_that_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A clinician's sheet in German (ja/nein): has_error read as a boolean refused 'ja' with
    # "Input should be a valid boolean" and no way through. The line now names the label
    # rule, both outcomes spelt out (a single '-> error' clause with 'otherwise -> skip' would
    # have skipped every 'nein': no no_error label). Taken: TP 1, FP 1, FN 1, TN 1 by hand.
    traces = write_text(
        tmp_path / "t.csv",
        "system,question_id,sentence_id,claim_id,claim,verdict\n"
        "A,q1,7,7,a,refuted\nA,q1,8,8,b,supported\nA,q2,9,9,c,refuted\nA,q2,10,10,d,supported\n",
    )
    sheet = write_text(tmp_path / "l.csv", "sentence_id,has_error\n7,ja\n8,nein\n9,nein\n10,ja\n")
    code, _, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(sheet)], capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {sheet}:2, field 'has_error': expected true or false (or 1/0, "
        "yes/no), got 'ja'; labels written other than true/false or 1/0 "
        "(ja/nein, a scale, blanks)? failcodes ingest generic-labels FILE -o OUT --label-rule "
        "'has_error in {ERROR VALUES} -> error; has_error in {OTHER VALUES} -> no_error; "
        "otherwise -> skip'",
    )
    labels = tmp_path / "l.jsonl"
    rule = "has_error in {ja} -> error; has_error in {nein} -> no_error; otherwise -> skip"
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(sheet), "-o", str(labels), "--label-rule", rule], capsys
    )
    assert code == 0, err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    # 7 ja refuted TP; 8 nein supported TN; 9 nein refuted FP; 10 ja supported FN
    assert metrics_counts(stdout, "refuted") == {"A": (1, 1, 1, 1)}


def test_a_label_column_per_system_beside_verdict_columns_is_refused_with_its_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A wide sheet: a verdict column and a clinician's label column per system. `ingest
    # generic --verdict-column gpt --verdict-column claude --label-rule 'gpt_label = wrong ->
    # error'` gave every system's traces gpt_label's labels (claude_label left out in a note):
    # claude scored on GPT's labels, FP 1, FN 1, TN 1 for TP 1, TN 2 on its own, exit 0. The
    # rule's column is now refused as a mapped column named after a system is.
    sheet = write_text(
        tmp_path / "wide.csv",
        "id,claim,gpt,claude,gpt_label,claude_label\n"
        "1,a,supported,refuted,ok,wrong\n2,b,refuted,supported,wrong,ok\n"
        "3,c,supported,supported,ok,ok\n",
    )
    args = ["ingest", "generic", str(sheet), "--map", "id=sentence_id", "--option", "unmapped=drop"]
    both = ["--verdict-column", "gpt", "--verdict-column", "claude"]
    out = tmp_path / "t.jsonl"
    rule = ["--label-rule", "gpt_label = wrong -> error", "--labels-out", str(tmp_path / "l.jsonl")]
    code, _, err = run_cli([*args, *both, "-o", str(out), *rule], capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {sheet}:1, field 'gpt_label': column 'gpt_label' names system "
        "'gpt', but --verdict-column gives every system's trace the same columns (claude's "
        "would hold it too): ingest each system apart (its --verdict-column, its own --map; its "
        "own --label-rule, --option label_scope=system; the label files made one with ingest "
        "generic-labels A B -o OUT) and give the trace files together",
    )
    assert not out.exists()
    # the way through, as the line says it
    traces, labels = [], []
    for system in ("gpt", "claude"):
        t, lab = tmp_path / f"t_{system}.jsonl", tmp_path / f"l_{system}.jsonl"
        rule = ["--label-rule", f"{system}_label = wrong -> error", "--labels-out", str(lab)]
        own = ["--verdict-column", system, "-o", str(t), "--option", "label_scope=system"]
        code, _, err = run_cli([*args, *own, *rule], capsys)
        assert code == 0, err
        traces += ["--traces", str(t)]
        labels.append(str(lab))
    merged = tmp_path / "labels.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", *labels, "-o", str(merged)], capsys)
    assert code == 0, err
    code, stdout, err = run_cli(
        ["metrics", *traces, "--labels", str(merged), "-m", "refuted", "--format", "csv"], capsys
    )
    assert code == 0, err
    # gpt on gpt_label: 1 supported/ok TN, 2 refuted/wrong TP, 3 TN -> 1, 0, 0, 2
    # claude on claude_label: 1 refuted/wrong TP, 2 supported/ok TN, 3 TN -> 1, 0, 0, 2
    assert metrics_counts(stdout, "refuted") == {"gpt": (1, 0, 0, 2), "claude": (1, 0, 0, 2)}


def test_a_verdict_written_as_a_dash_or_none_is_a_row_without_a_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A spreadsheet's '-' and a program's 'None' in the verdict column: refused as unknown
    # verdicts, the way through '--alias -=CANONICAL' made them a verdict. Now rows without a
    # verdict, as NA is (test above): --option no_verdict=drop leaves them out.
    table = write_text(
        tmp_path / "t.csv",
        "id,claim,verdict,gold\n1,a,refuted,wrong\n2,b,-,wrong\n3,c,None,ok\n4,d,supported,ok\n",
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    args += ["--map", "id=sentence_id", "--system", "A", "--label-rule", "gold = wrong -> error"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.startswith(f"failcodes: error: {table}:3, field 'verdict': no verdict (")
    assert err.rstrip().endswith("--option no_verdict=drop leaves such rows out, counted in a note")
    code, _, err = run_cli([*args, "--option", "no_verdict=drop"], capsys)
    assert code == 0, err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    # 1 wrong refuted TP; 4 ok supported TN; rows 2 and 3 dropped, and with them their
    # labels (no system's row kept them: their claims count in no metric) -> TP 1, TN 1
    assert metrics_counts(stdout, "refuted") == {"A": (1, 0, 0, 1)}


def test_two_verifiers_under_one_system_name_are_refused_with_their_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A long table, one row per claim and model: the system column names the pipeline
    # ('rag'), the model column the verifier. With --map model=verifier and the duplicate
    # claim id's way through (--option ids=claim), ingest wrote one system whose sentence s1
    # held both models' claims: labels s1 error, s2 none -> rag TP 1, FP 1, exit 0, where
    # gpt-4o gives TP 1, TN 1 and llama FN 1, FP 1. Now refused at the row, naming the way.
    table = write_text(
        tmp_path / "long.csv",
        "model,system,qid,sid,claim,verdict\n"
        "gpt-4o,rag,q1,s1,a,refuted\ngpt-4o,rag,q1,s2,b,supported\n"
        "llama,rag,q1,s1,a2,supported\nllama,rag,q1,s2,b2,refuted\n",
    )
    labels = write_text(tmp_path / "l.csv", "sentence_id,has_error\ns1,true\ns2,false\n")
    traces = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--option", "ids=claim"]
    args += ["--map", "qid=question_id", "--map", "sid=sentence_id", "--map", "model=verifier"]
    code, _, err = run_cli(args, capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {table}:4, field 'verifier': sentence 's1' of question 'q1' "
        "(system 'rag') was checked by verifier 'llama' here and by another at line 2: two "
        "pipelines under one system name, their claims pooled into one sentence; give each "
        "its own system: --map model=system beside --map model=verifier (a system column "
        "kept: --map system=retriever, or --map system=)",
    )
    assert not traces.exists()
    code, _, err = run_cli([*args, "--map", "model=system", "--map", "system=retriever"], capsys)
    assert code == 0, err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    # gpt-4o: s1 refuted/error TP, s2 supported/none TN; llama: s1 supported FN, s2 refuted FP
    assert metrics_counts(stdout, "refuted") == {"gpt-4o": (1, 0, 0, 1), "llama": (0, 1, 1, 0)}


def test_the_same_label_in_two_files_names_duplicates_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The clinicians' shared labels carried in two files (one per system's sheet, sentence 8
    # in both): 'duplicate label for sentence '8' (first at a.csv:3)' and no way through; the
    # option that reads them is named now. Taken: labels 7 error, 8 none, 10 error.
    first = write_text(tmp_path / "a.csv", "sentence_id,has_error\n7,true\n8,false\n")
    second = write_text(tmp_path / "b.csv", "sentence_id,has_error\n8,false\n10,true\n")
    labels = tmp_path / "l.jsonl"
    args = ["ingest", "generic-labels", str(first), str(second), "-o", str(labels)]
    code, _, err = run_cli(args, capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {second}:2, field 'sentence_id': duplicate label for sentence '8' "
        f"(first at {first}:3); the same labels in several files? failcodes ingest "
        "generic-labels FILES -o OUT --option duplicates=same keeps one of each target "
        "labelled alike",
    )
    code, _, err = run_cli([*args, "--option", "duplicates=same"], capsys)
    assert code == 0, err
    traces = write_text(
        tmp_path / "t.csv",
        "system,question_id,sentence_id,claim_id,claim,verdict\n"
        "A,q1,7,7,a,refuted\nA,q1,8,8,b,supported\nA,q2,9,9,c,refuted\nA,q2,10,10,d,supported\n",
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    # 7 error refuted TP; 8 none supported TN; 10 error supported FN; 9 unlabelled
    assert metrics_counts(stdout, "refuted") == {"A": (1, 0, 1, 1)}


def test_a_per_system_label_of_a_question_only_another_system_answered_is_refused_by_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Per-system labels; gpt answered q1, q2, claude q1, q3. gpt's label of sentence 3 under
    # q3 points at nothing of gpt's: disagreements and compare refused it ("system 'gpt': no
    # trace has sentence_id '3' and no trace has question_id '3'"), while metrics, beside
    # gpt's other labels, took q3 for a question of gpt's and its sentence for one gpt made
    # no claim for: gpt n 3, TP 1, TN 2 for n 2, TP 1, TN 1 by hand, exit 0. Now metrics
    # refuses it as they do.
    rows = [("gpt", "1", "supported"), ("claude", "1", "supported")]
    rows += [("gpt", "2", "refuted"), ("claude", "3", "refuted")]
    traces = write_text(
        tmp_path / "t.jsonl",
        "".join(
            json.dumps({"system": s, "question_id": i, "sentence_id": i, "claim_id": i} | claim)
            + "\n"
            for s, i, claim in ((s, i, {"claim": f"c{i}", "verdict": v}) for s, i, v in rows)
        ),
    )
    marks = [("gpt", "1", False), ("gpt", "2", True), ("gpt", "3", False), ("claude", "1", True)]
    labels = write_text(
        tmp_path / "l.jsonl",
        "".join(
            json.dumps({"sentence_id": i, "question_id": i, "has_error": e, "system": s}) + "\n"
            for s, i, e in marks
        ),
    )
    line = (
        f"failcodes: error: {labels}:3, field 'sentence_id': system 'gpt': no trace has "
        "sentence_id '3' and no trace has question_id '3'"
    )
    for command in ("metrics", "disagreements"):
        out = ["-o", str(tmp_path / "d.jsonl")] if command == "disagreements" else []
        code, _, err = run_cli(
            [command, "--traces", str(traces), "--labels", str(labels), *out], capsys
        )
        assert (code, err.strip()) == (2, line), command
    # gpt's own: s1 no error, supported TN; s2 error, refuted TP -> n 2, TP 1, TN 1
    write_text(
        labels, "".join(r for i, r in enumerate(labels.read_text().splitlines(True)) if i != 2)
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"gpt": (1, 0, 0, 1), "claude": (0, 0, 1, 0)}


def test_a_foreign_parquet_with_passages_as_json_text_names_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A DataFrame whose passages column holds each list as JSON text (as a CSV's cell holds
    # it), saved as Parquet and given to metrics: "Input should be a valid tuple" and no way
    # through; ingest generic reads such a cell. Taken: 1 passage kept; TP 1, TN 1 by hand.
    import pyarrow as pa
    import pyarrow.parquet as pq

    passages = json.dumps([{"passage_id": "p1", "rank": 1, "text": "t"}])
    table = tmp_path / "t.parquet"
    pq.write_table(
        pa.table(
            {"system": ["A", "A"], "question_id": ["q1", "q1"], "sentence_id": ["s1", "s2"]}
            | {"claim_id": ["c1", "c2"], "claim": ["a", "b"], "verdict": ["refuted", "supported"]}
            | {"passages": [passages, "[]"]}
        ),
        table,
    )
    labels = write_text(tmp_path / "l.csv", "sentence_id,has_error\ns1,true\ns2,false\n")
    code, _, err = run_cli(["metrics", "--traces", str(table), "--labels", str(labels)], capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {table}:1, field 'passages': Input should be a valid tuple (got "
        f"{passages!r}); passages as JSON text? failcodes ingest generic FILE -o NEW.jsonl "
        "reads it",
    )
    traces = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(traces), "--evidence", "A=retrieved"], capsys
    )
    assert code == 0, err
    first = json.loads(traces.read_text().splitlines()[0])
    assert [p["passage_id"] for p in first["passages"]] == ["p1"]
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    # s1 error refuted TP; s2 no error supported TN
    assert metrics_counts(stdout, "refuted") == {"A": (1, 0, 0, 1)}


def test_a_workbook_with_an_unnamed_first_column_names_the_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pandas' to_excel writes its row index in column A under an empty header cell (a table
    # may also start in column B): 'empty header cell in column A (every column needs a
    # name)' and nothing else. The line now says which column to delete; deleted (index=False):
    # labels 7 error, 8 none -> on traces 7 refuted, 8 supported: TP 1, TN 1.
    import pandas as pd

    frame = pd.DataFrame({"sentence_id": ["7", "8"], "has_error": [True, False]})
    book = tmp_path / "l.xlsx"
    frame.to_excel(book)
    labels = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(book), "-o", str(labels)], capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {book}:1: empty header cell in column A (every column needs a "
        "name); pandas' row index (to_excel(index=False)) or a table that starts further "
        "right? delete column A",
    )
    frame.to_excel(book, index=False)
    code, _, err = run_cli(["ingest", "generic-labels", str(book), "-o", str(labels)], capsys)
    assert code == 0, err
    traces = write_text(
        tmp_path / "t.csv",
        "system,question_id,sentence_id,claim_id,claim,verdict\n"
        "A,q1,7,7,a,refuted\nA,q1,8,8,b,supported\n",
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {
        "A": (1, 0, 0, 1)
    }  # 7 error refuted, 8 none supported
