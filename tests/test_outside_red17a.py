"""Outside red-team of the data path, session 17 (t17red1): shapes the other tests do not use.

Each test states the input, what main gave at exit 0 before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_jsonl, write_text

#: A retrieval pipeline B whose retriever found nothing for c2 (no passages, no retriever
#: named); both claims refuted, both sentences correct (no error): two FPs.
_MIXED = [
    {
        "system": "B",
        "question_id": "q1",
        "sentence_id": "s1",
        "claim_id": "c1",
        "claim": "c1",
        "verdict": "refuted",
        "passages": [{"passage_id": "p1", "rank": 1, "text": "t", "gold": True}],
    },
    {
        "system": "B",
        "question_id": "q1",
        "sentence_id": "s2",
        "claim_id": "c2",
        "claim": "c2",
        "verdict": "refuted",
        "passages": [],
    },
]
_NO_ERRORS = (
    '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n'
    '{"sentence_id": "s2", "question_id": "q1", "has_error": false}\n'
)


def _mixed_refusal(files: str) -> list[str]:
    return [
        f"failcodes: error: {files}, field 'passages': system 'B': 1 of its 2 traces have "
        "neither passages nor a retriever, the others passages: read trace by trace, those "
        "would be closed-book (evidence source none) and their disagreements blamed on "
        "verification, not on a retrieval that found nothing; declare the pipeline's evidence "
        "when ingesting the traces (failcodes ingest "
        f"generic {files} -o NEW.jsonl): --evidence B=retrieved (or provided, none; a study: "
        "its [[datasets.pipelines]] evidence), or --retriever NAME; a pipeline that retrieves "
        "for some claims only: each trace's evidence_source (a field or column)"
    ]


def _as(tmp_path: Path, records: list[dict[str, object]], suffix: str) -> Path:
    """The traces as JSONL, Parquet of the trace schema (no marker: scanned) or a trace CSV."""
    if suffix == ".jsonl":
        return write_jsonl(tmp_path / "t.jsonl", records)
    if suffix == ".parquet":
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        from failcodes.traceio import trace_arrow_schema

        path = tmp_path / "t.parquet"
        pq.write_table(pa.Table.from_pylist(records, schema=trace_arrow_schema()), path)
        return path
    head = "system,question_id,sentence_id,claim_id,claim,verdict\n"
    rows = "".join(f"B,q1,{r['sentence_id']},{r['claim_id']},x,refuted\n" for r in records)
    passages = "system,claim_id,passage_id,rank,text,gold\nB,c1,p1,1,t,true\n"
    write_text(tmp_path / "t.passages.csv", passages)
    return write_text(tmp_path / "t.csv", head + rows)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv"])
@pytest.mark.parametrize("level", ["sentence", "claim"])
def test_disagreements_refuse_a_system_partly_retrieved_as_ingest_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, level: str
) -> None:
    # Traces ingest never read (written in the trace format), B retrieving for c1, nothing
    # for c2. main wrote c2's derived source 'none' into the disagreements at exit 0, and
    # attribute gave B verification 2, retrieval 0, where docs/attribution.md step 4 gives
    # s1 verification (the gold passage was retrieved), s2 retrieval (nothing retrieved).
    traces = _as(tmp_path, _MIXED, suffix)
    labels = write_text(tmp_path / "l.jsonl", _NO_ERRORS)
    out = tmp_path / "d.jsonl"
    args = ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    code, stdout, err = run_cli([*args, "--level", level], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == _mixed_refusal(str(traces))
    assert not out.exists()


@pytest.mark.parametrize("how", ["ingest", "field"])
def test_declared_evidence_passes_and_attributes_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    # The way through: the traces ingested with --evidence B=retrieved, or each trace's own
    # evidence_source (adaptive retrieval). By hand (docs/attribution.md step 4): s1's gold
    # passage was retrieved and the verifier refuted a correct claim -> verification; s2
    # retrieved nothing -> retrieval: retrieval 1, verification 1.
    raw = write_jsonl(tmp_path / "raw.jsonl", _MIXED)
    traces = tmp_path / "t.jsonl"
    if how == "ingest":
        args = ["ingest", "generic", str(raw), "-o", str(traces), "--evidence", "B=retrieved"]
        assert run_cli(args, capsys)[0] == 0
    else:
        write_jsonl(traces, [{**r, "evidence_source": "retrieved"} for r in _MIXED])
    labels = write_text(tmp_path / "l.jsonl", _NO_ERRORS)
    out = tmp_path / "d.jsonl"
    args = ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [c["evidence_source"] for r in records for c in r["claims"]] == ["retrieved"] * 2
    code, stdout, err = run_cli(
        ["attribute", "--from", str(out), "-o", str(tmp_path / "att"), "--format", "json"], capsys
    )
    assert code == 0, err
    assert "closed-book" not in err
    [row] = json.loads(stdout)["stages"]
    assert (row["system"], row["retrieval"], row["verification"], row["total"]) == ("B", 1, 1, 2)


def test_metrics_of_a_partly_retrieved_system_is_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # metrics attributes nothing: B's two FPs are counted whatever the evidence (n 2, FP 2).
    traces = write_jsonl(tmp_path / "t.jsonl", _MIXED)
    labels = write_text(tmp_path / "l.jsonl", _NO_ERRORS)
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0, err
    [row] = json.loads(stdout)
    assert (row["system"], row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (
        "B",
        2,
        0,
        2,
        0,
        0,
    )


_DOUBLED = (
    "system,question_id,sentence,claim,verdict,error\n"
    "A,q1,S one,c one,refuted,yes\n"
    "A,q1,S two,c two,supported,no\n"
    "A,q1,S two,c two,supported,no\n"  # the export wrote line 3 twice
    "A,q2,S three,c three,refuted,no\n"
)


def test_a_row_repeated_cell_for_cell_under_ids_line_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A sentence table without ids (--option ids=line: each row its own sentence) whose export
    # doubled a row. main made line 4 a second sentence L4 beside L3: metrics n 4, TP 1, FP 1,
    # TN 2 (specificity 2/3), exit 0. By hand on the 3 sentences: S one refuted and an error
    # (TP), S two supported and clean (TN), S three refuted and clean (FP): TP 1, FP 1, TN 1.
    table = write_text(tmp_path / "t.csv", _DOUBLED)
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    rule = ["--label-rule", "error = yes -> error", "--labels-out", str(labels)]
    args = ["ingest", "generic", str(table), "-o", str(out), "--option", "ids=line", *rule]
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {table}:4: the row repeats line 3 cell for cell: with --option "
        "ids=line each row is a sentence of its own, so this one would count twice (a row "
        "the export copied?); delete the copy, or, if the answer says it twice, give each row "
        "its sentence id (a sentence_id column); rows a published data set holds twice: "
        "--option duplicates=keep keeps each as a sentence of its own"
    ]
    assert not out.exists() and not labels.exists()
    # the way through: the copy deleted, the hand count
    lines = _DOUBLED.splitlines(keepends=True)
    write_text(table, "".join(lines[:3] + lines[4:]))
    assert run_cli(args, capsys)[0] == 0
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0, err
    [row] = json.loads(stdout)
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (3, 1, 1, 0, 1)


def _passage(pid: str, gold: bool) -> dict[str, object]:
    return {"passage_id": pid, "rank": 1, "text": f"text {pid}", "gold": gold}


def test_a_disagreements_file_holding_its_records_twice_is_refused_by_attribute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # System A, both sentences correct (no error), every claim refuted (FPs). s1: c1 had its
    # gold passage (verification), c1b did not (retrieval) -> mixed; s2: c2 had its gold
    # passage -> verification. By hand: verification 1, mixed 1, total 2. The disagreements
    # file appended twice (cat d.jsonl d.jsonl): main attributed each twice, verification 2,
    # mixed 2, total 4, exit 0.
    def claim(sentence: str, cid: str, gold: bool) -> dict[str, object]:
        return {
            "system": "A",
            "question_id": "q1",
            "sentence_id": sentence,
            "claim_id": cid,
            "claim": f"claim {cid}",
            "verdict": "refuted",
            "passages": [_passage(f"p{cid}", gold)],
        }

    traces = write_jsonl(
        tmp_path / "t.jsonl",
        [claim("s1", "c1", True), claim("s1", "c1b", False), claim("s2", "c2", True)],
    )
    labels = write_text(tmp_path / "l.jsonl", _NO_ERRORS)
    once = tmp_path / "d.jsonl"
    args = ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(once)]
    assert run_cli(args, capsys)[0] == 0
    att = ["attribute", "-o", str(tmp_path / "att"), "--format", "json"]
    code, stdout, err = run_cli([*att, "--from", str(once)], capsys)
    assert code == 0, err
    [row] = json.loads(stdout)["stages"]
    assert (row["verification"], row["mixed"], row["retrieval"], row["total"]) == (1, 1, 0, 2)
    twice = write_text(tmp_path / "twice.jsonl", once.read_text() * 2)
    out = tmp_path / "att2"
    code, stdout, err = run_cli(
        ["attribute", "--from", str(twice), "-o", str(out), "--format", "json"], capsys
    )
    first_id = json.loads(once.read_text().splitlines()[0])["id"]
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {twice}:3, field 'id': the disagreement here has the id of the one "
        f"at line 1 ({first_id}: system 'A', question 'q1', sentence 's1'): it would be "
        "attributed (and counted) twice; a file holding its disagreements twice (appended "
        "again?), or two data sets' files joined whose systems and ids coincide: attribute "
        "each file apart"
    ]
    assert not out.exists()


#: A hallucination detector's output written in the trace format: true = hallucinated.
_DETECTOR = [
    {
        "system": "A",
        "question_id": "q1",
        "sentence_id": "s1",
        "claim_id": "a1",
        "claim": "x",
        "verdict": "true",
    },
    {
        "system": "A",
        "question_id": "q1",
        "sentence_id": "s2",
        "claim_id": "a2",
        "claim": "y",
        "verdict": "false",
    },
]
_S1_ERROR = (
    '{"question_id": "q1", "sentence_id": "s1", "has_error": true}\n'
    '{"question_id": "q1", "sentence_id": "s2", "has_error": false}\n'
)
_TRUTHS = (
    "2 verdict(s) true/false read as supported/refuted (true: the claim holds); if true marks "
    "an error, ingest the traces with --alias true=refuted --alias false=supported"
)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv", "-bool.jsonl"])
@pytest.mark.parametrize("command", ["metrics", "disagreements", "compare"])
def test_true_false_verdicts_are_said_on_the_first_line_of_the_analysis_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, command: str
) -> None:
    # The detector flags s1 (true: hallucinated) and clears s2; the clinicians found s1 wrong.
    # By hand, true as an error: s1 TP, s2 TN. Read by the default aliases (true: the claim
    # holds), s1 is supported (FN) and s2 refuted (FP): TP 0, FP 1, FN 1, TN 0. ingest says
    # so in a note; main's metrics, disagreements and compare said nothing, exit 0.
    records: list[dict[str, object]] = [dict(r) for r in _DETECTOR]
    if command == "compare":  # (a second system: compare pairs two)
        records += [{**r, "system": "B", "claim_id": f"b{r['claim_id']}"} for r in _DETECTOR]
    if suffix == "-bool.jsonl":  # JSON booleans
        records = [{**r, "verdict": r["verdict"] == "true"} for r in records]
    if suffix == ".csv":  # (Excel's spelling)
        head = "system,question_id,sentence_id,claim_id,claim,verdict\n"
        fields = head.strip().split(",")
        rows = "".join(",".join(str(r[k]) for k in fields) + "\n" for r in records)
        traces = write_text(tmp_path / "t.csv", head + rows.replace(",true", ",TRUE"))
    else:
        traces = _as(tmp_path, records, ".parquet" if suffix == ".parquet" else ".jsonl")
    labels = write_text(tmp_path / "l.jsonl", _S1_ERROR)
    args = [command, "--traces", str(traces), "--labels", str(labels)]
    if command == "disagreements":
        args += ["-o", str(tmp_path / "d.jsonl")]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    first = stdout.splitlines()[0]
    assert first.startswith("Assumed: ") and first.endswith(
        "; " + _TRUTHS.replace("2 verdict", f"{len(records)} verdict")
    )
    if command != "metrics":
        return
    code, stdout, err = run_cli([*args, "--format", "json"], capsys)
    [row] = json.loads(stdout)
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (0, 1, 1, 0)
    assert err.strip() == _TRUTHS  # the rows hold no field for it: said on stderr
    # the way through: ingested with the aliases, the hand count, nothing more said
    fixed = tmp_path / "fixed.jsonl"
    alias = ["--alias", "true=refuted", "--alias", "false=supported"]
    assert run_cli(["ingest", "generic", str(traces), "-o", str(fixed), *alias], capsys)[0] == 0
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(fixed), "--labels", str(labels), "--format", "json"], capsys
    )
    [row] = json.loads(stdout)
    assert (row["tp"], row["fp"], row["fn"], row["tn"], err) == (1, 0, 0, 1, "")
    code, stdout, _ = run_cli(["metrics", "--traces", str(fixed), "--labels", str(labels)], capsys)
    assert "true/false" not in stdout


def test_an_evidence_system_written_in_another_case_names_the_inputs_spelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A study's [[datasets.pipelines]] system = "b" for traces of system 'B' (or --evidence
    # b=retrieved): refused before, naming the systems, but not that 'b' is 'B' written in
    # another case; now the line says how the input writes it. Nothing written.
    traces = write_jsonl(tmp_path / "t.jsonl", _MIXED)
    out = tmp_path / "o.jsonl"
    args = ["ingest", "generic", str(traces), "-o", str(out), "--evidence", "b=retrieved"]
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        "failcodes: error: --evidence names system 'b', not in the input (systems: B); the "
        "input writes it 'B' (names are compared exactly: case, spacing)"
    ]
    assert not out.exists()


def test_a_disagreements_file_of_two_levels_is_refused_by_attribute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The traces of the test above: sentence level gives s1 mixed, s2 verification (total 2);
    # claim level c1 verification, c1b retrieval, c2 verification (retrieval 1, verification
    # 2, total 3). The two files joined: main summed 5 items for the one system, every error
    # counted as its sentence and again as its claims, exit 0.
    traces = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {
                "system": "A",
                "question_id": "q1",
                "sentence_id": s,
                "claim_id": c,
                "claim": f"claim {c}",
                "verdict": "refuted",
                "passages": [_passage(f"p{c}", gold)],
            }
            for s, c, gold in (("s1", "c1", True), ("s1", "c1b", False), ("s2", "c2", True))
        ],
    )
    labels = write_text(tmp_path / "l.jsonl", _NO_ERRORS)
    texts = []
    for level in ("sentence", "claim"):
        out = tmp_path / f"{level}.jsonl"
        args = ["disagreements", "--traces", str(traces), "--labels", str(labels)]
        assert run_cli([*args, "-o", str(out), "--level", level], capsys)[0] == 0
        code, stdout, err = run_cli(
            ["attribute", "--from", str(out), "-o", str(tmp_path / level), "--format", "json"],
            capsys,
        )
        [row] = json.loads(stdout)["stages"]
        counts = (row["retrieval"], row["verification"], row["mixed"], row["total"])
        assert counts == ((0, 1, 1, 2) if level == "sentence" else (1, 2, 0, 3))
        texts.append(out.read_text())
    joined = write_text(tmp_path / "joined.jsonl", "".join(texts))
    out = tmp_path / "att"
    code, stdout, err = run_cli(
        ["attribute", "--from", str(joined), "-o", str(out), "--format", "json"], capsys
    )
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {joined}:3, field 'level': the disagreement here is at level "
        "'claim', the first (line 1) at 'sentence': an error would be attributed (and "
        "counted) as its sentence and again as its claims; attribute one level's "
        "disagreements at a time (failcodes disagreements --level LEVEL -o FILE)"
    ]
    assert not out.exists()


def test_label_ids_written_as_floats_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A labels CSV saved by pandas from columns made float by a missing value: question and
    # sentence ids '1.0', '2.0' against the traces' 1 and 2 (JSON numbers, read as '1', '2').
    # Refused before as "no trace has sentence_id '1.0' and no trace has question_id '1.0'",
    # with no word of why; now the line says it and the way through. Nothing written.
    traces = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"system": "A", "question_id": 1, "sentence_id": s, "claim_id": f"a{s}"}
            | {"claim": "x", "verdict": v}
            for s, v in ((1, "refuted"), (2, "supported"))
        ],
    )
    labels = write_text(
        tmp_path / "l.csv", "question_id,sentence_id,has_error\n1.0,1.0,true\n1.0,2.0,false\n"
    )
    out = tmp_path / "m.json"
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {labels}:2, field 'sentence_id': no trace has sentence_id '1.0' and "
        "no trace has question_id '1.0' ('1.0': a whole number written as a float, as pandas "
        "writes a column with a missing value; write the ids as whole numbers) (1 more such "
        "labels)"
    ]
    assert not out.exists()
    # the way through: whole numbers, the hand count (s1 refuted, an error: TP; s2 TN)
    write_text(labels, "question_id,sentence_id,has_error\n1,1,true\n1,2,false\n")
    code, stdout, err = run_cli([*args[:-2], "--format", "json"], capsys)
    [row] = json.loads(stdout)
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 0, 1)
