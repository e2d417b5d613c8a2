"""Outside red-team of the data path, session 16 (t16red1): shapes the other tests do not use.

Each test states the input, what main gave at exit 0 before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_jsonl, write_text


def _trace(system: str, sentence: str, claim: str, verdict: str) -> dict[str, object]:
    return {
        "system": system,
        "question_id": "q1",
        "sentence_id": sentence,
        "claim_id": claim,
        "claim": f"claim of {sentence}",
        "verdict": verdict,
    }


_LABELS = (
    '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n'
    '{"sentence_id": "s2", "question_id": "q1", "has_error": true}\n'
)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv"])
@pytest.mark.parametrize(
    "command", [["metrics"], ["metrics", "--level", "claim"], ["disagreements"], ["compare"]]
)
def test_a_sentence_in_two_trace_files_is_refused_by_the_readers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, command: list[str]
) -> None:
    # sysB's file made from sysA's, its system field still sysA (claim ids its own), given
    # straight to the analysis commands (ingest refuses the merge since 7536acf). Labels: s1
    # no error, s2 an error. sysA flags s2 (TP 1, TN 1); sysB flags s1 (FP 1, FN 1). main
    # pooled each sentence's claims into one sysA row, exit 0: metrics 'sysA n 2, TP 1, FP 1,
    # FN 0, TN 0', disagreements one FP (s1, claims a1 and b1), no sysB anywhere.
    a = write_jsonl(
        tmp_path / "a.jsonl",
        [_trace("sysA", "s1", "a1", "supported"), _trace("sysA", "s2", "a2", "refuted")],
    )
    b = write_jsonl(
        tmp_path / "b.jsonl",
        [_trace("sysA", "s1", "b1", "refuted"), _trace("sysA", "s2", "b2", "supported")],
    )
    if suffix != ".jsonl":  # the same traces as the tool's own Parquet, or a trace CSV
        for name in ("a", "b"):
            src, dst = tmp_path / f"{name}.jsonl", tmp_path / f"{name}{suffix}"
            assert run_cli(["ingest", "generic", str(src), "-o", str(dst)], capsys)[0] == 0
        a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    labels = write_text(tmp_path / "l.jsonl", _LABELS)
    out = tmp_path / "out.json"
    args = [*command, "--traces", str(a), "--traces", str(b), "--labels", str(labels)]
    if command[0] != "compare":
        args += ["-o", str(out)]
    code, stdout, err = run_cli(args, capsys)
    line = 2 if suffix == ".csv" else 1  # the CSV's header is line 1
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {b}:{line}, field 'sentence_id': sentence 's1' of system 'sysA' "
        f"has claims in {a} and in this file: its claims would be pooled into one sentence "
        "(two runs, or another system's file naming this system?); name each file's system "
        "(ingest generic --system --map system=), or, if the files split one run, "
        "concatenate them"
    ]
    assert not out.exists()


def test_clinician_columns_beside_a_majority_truth_are_not_systems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three clinicians, their majority (the reference) and two systems. main read dr_a, dr_b
    # and dr_c as systems ("systems (5): dr_a, dr_b, dr_c, gpt, claude"), exit 0: Cochran's Q
    # with df 4 and 10 McNemar pairs under Holm, for the one pair of the two systems.
    table = write_text(
        tmp_path / "wide.csv",
        "unit_id,dr_a,dr_b,dr_c,majority,gpt,claude\n"
        "u1,1,1,0,1,1,0\nu2,0,0,0,0,1,0\nu3,1,1,1,1,1,1\n"
        "u4,0,1,0,0,0,1\nu5,1,0,1,1,0,1\nu6,0,0,1,0,0,0\n",
    )
    code, out, err = run_cli(["compare", str(table), "--truth", "majority"], capsys)
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {table}:1, field 'dr_a': column 'dr_a' is named like a clinician "
        "or rater (holds 'dr'), not a system: a rater's labels would enter every test as one "
        "more system; name the system columns with --systems (a human rater compared as a "
        "system too)"
    ]
    # the way through: the systems named. By hand on the majority's positives u1, u3, u5:
    # gpt hits u1, u3; claude u3, u5; discordant u1 (gpt only), u5 (claude only): McNemar
    # b 1, c 1, mid-p 1 - P(X = 1) / 2 = 1 - (2/4) / 2 = 0.75 (Fagerland et al. 2013; exact
    # p 1; their supplement "How to calculate the McNemar mid-p test": "If n12 = n21, the
    # mid-p-value equals 1 - 0.5 binompdf(n12, n, 0.5)", as R contingencytables'
    # McNemar_midP_test_paired_2x2 codes it: not 2 [P(X <= 1) - P(X = 1) / 2] = 1.0, checked
    # session 31), difference in rates 0, n 3; one pair, so Holm's p is p.
    args = ["compare", str(table), "--truth", "majority", "--systems", "gpt,claude"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    tests = json.loads(out)["tests"]
    assert {t["comparison"] for t in tests} == {"gpt vs claude"}
    mcnemar = next(t for t in tests if t["test"] == "mcnemar_midp")
    assert (mcnemar["n"], mcnemar["p_value"], mcnemar["p_holm"], mcnemar["effect"]) == (
        3,
        0.75,
        0.75,
        0.0,
    )


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (
            "gold",
            "system 'gold' is named like the reference or a consensus of the systems (holds "
            "'gold'): metrics would score it as one more system; the reference is the human "
            "evaluation of each system's facts (human_confirms); leave its records out",
        ),
        (
            "SysA ",
            "system 'SysA ' is 'sysA' ({src}:1) written another way (case, spacing or Unicode "
            "form): it would be scored as a system of its own; write it one way",
        ),
    ],
)
def test_atomic_refuses_a_reference_system_and_a_system_written_two_ways(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], second: str, message: str
) -> None:
    # main wrote 'gold' as one more system (metrics: a row of its own beside sysA's), and
    # 'SysA ' as a system apart from 'sysA', each scored on part of the facts, exit 0.
    fact = {"answer_id": "a1", "fact": "x", "verdict": "TRUE", "human_confirms": True}
    src = write_jsonl(
        tmp_path / "atomic.jsonl",
        [{"system": "sysA", "fact_id": "f1", **fact}, {"system": second, "fact_id": "f2", **fact}],
    )
    out = tmp_path / "t.jsonl"
    code, stdout, err = run_cli(["ingest", "atomic", str(src), "-o", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:2, field 'system': " + message.format(src=src)
    ]
    assert not out.exists()


def test_two_runs_of_a_question_with_given_sentence_ids_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # d4c1726's shape with sentence ids given (sid), not list places: sysA answered q1 twice
    # (two runs appended to one dump). Run 1: s1 refuted and an error (TP), s2 supported and
    # correct (TN); run 2: s1 supported and an error (FN), s2 refuted and correct (FP). By
    # hand over the four sentences: TP 1, FP 1, FN 1, TN 1. main pooled each run's s1 and s2
    # and gave n 2, TP 1, FP 1, FN 0, TN 0, exit 0.
    def run(claims: list[tuple[str, str, str, str]]) -> str:
        rows = [{"sid": s, "cid": c, "text": c, "verdict": v, "gold": g} for s, c, v, g in claims]
        return json.dumps({"qid": "q1", "answers": {"sysA": {"claims": rows}}}) + "\n"

    src = write_text(
        tmp_path / "runs.jsonl",
        run([("s1", "u1", "refuted", "bad"), ("s2", "u2", "supported", "ok")])
        + run([("s1", "u3", "supported", "bad"), ("s2", "u4", "refuted", "ok")]),
    )
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(src), "-o", str(out), "--labels-out", str(labels)]
    args += ["--option", "rows=answers.*.claims[]", "--option", "label_level=sentence"]
    for pair in ("qid=question_id", "sid=sentence_id", "answers.*=system", "cid=claim_id"):
        args += ["--map", pair]
    args += ["--map", "text=claim", "--label-rule", "gold = bad -> error"]
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:2, field 'sentence_id': sentence 's1' of system 'sysA' "
        "comes from this record and from the one at line 1: its claims would be pooled into "
        "one sentence (question 'q1' twice: two runs?); give each record its own question "
        "id, or each run its own system (row answers.sysA.claims[0])"
    ]
    assert not out.exists() and not labels.exists()
    # each run its own question id and sentence ids (q1-run2 / r2s1, r2s2): scored apart
    text = src.read_text(encoding="utf-8").splitlines()
    text[1] = text[1].replace('"q1"', '"q1-run2"').replace('"sid": "s', '"sid": "r2s')
    src.write_text("\n".join(text) + "\n", encoding="utf-8")
    assert run_cli(args, capsys)[0] == 0
    m = tmp_path / "m.json"
    metrics = ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted"]
    assert run_cli([*metrics, "--format", "json", "-o", str(m)], capsys)[0] == 0
    rows = json.loads(m.read_text(encoding="utf-8"))
    assert [(r["system"], r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("sysA", 4, 1, 1, 1, 1)
    ]


def test_a_study_says_the_evidence_its_pipelines_leave_undeclared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # [[datasets.pipelines]] declares A (retrieved) and not B, whose trace has no passage: B's
    # evidence is read from its trace (none, closed-book), so attribution blames B's false
    # alarm on verification ("no retrieval stage"). main said it nowhere (the ingest step's
    # log only held 'A 1, B 1'); `failcodes run` printed 'ingest d (1): done'.
    passage = [{"passage_id": "p1", "rank": 1, "text": "t", "gold": True}]
    write_jsonl(
        tmp_path / "t.jsonl",
        [
            _trace("A", "s1", "c1", "refuted") | {"passages": passage},
            _trace("B", "s1", "c1", "refuted"),
        ],
    )
    write_text(
        tmp_path / "l.jsonl", '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n'
    )
    assert run_cli(["init", str(tmp_path / "st")], capsys)[0] == 0
    (tmp_path / "st" / "failcodes.toml").write_text(
        'name = "ev"\ncodebook = "medical-fact-check.v1.yaml"\n\n[[datasets]]\nname = "d"\n\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["../t.jsonl"]\n\n'
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["../l.jsonl"]\n\n'
        '[[datasets.pipelines]]\nsystem = "A"\nevidence = "retrieved"\n\n'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n\n[judge]\njudge = "offline"\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", str(tmp_path / "st")], capsys)
    assert code == 0, err
    traces = tmp_path / "st" / "data" / "d.traces.parquet"
    assert (
        f"wrote 2 traces -> {traces} (2 system(s): A 1, B 1; evidence not "
        "declared for B (read from its traces: none, closed-book))"
    ) in err.splitlines()
    att = tmp_path / "st" / "attribution" / "d" / "attribution.jsonl"
    rows = [json.loads(x) for x in att.read_text(encoding="utf-8").splitlines()]
    assert sorted((r["system"], r["evidence_source"], r["stage"]) for r in rows) == [
        ("A", "retrieved", "verification"),
        ("B", "none", "verification"),
    ]


def test_compare_refuses_a_system_column_written_two_ways(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'gpt' and 'GPT ' (a table joined twice): main compared them as two systems ("systems
    # (3): gpt, GPT , claude"), exit 0, where --traces refuses the two spellings.
    table = write_text(
        tmp_path / "case.csv", "unit_id,gpt,GPT ,claude\nu1,1,1,0\nu2,0,0,1\nu3,1,1,1\nu4,0,1,0\n"
    )
    code, out, err = run_cli(["compare", str(table)], capsys)
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {table}:1, field 'GPT ': column 'GPT ' is 'gpt' written another "
        "way (case, spacing or Unicode form): they would be compared as two systems; keep "
        "one, or name the system columns with --systems"
    ]


def test_a_passage_list_ranked_in_part_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Parquet traces whose list<struct> passages have ranks 5 and 1 with an unranked one
    # between them: main ranked it 2 (its place in the list) with no word, exit 0; the
    # gold-evidence attribution and --top-k read that made-up rank.
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    passages = [
        {"passage_id": "p5", "text": "t5", "rank": 5},
        {"passage_id": "px", "text": "tx", "rank": None},
        {"passage_id": "p1", "text": "t1", "rank": 1},
    ]
    src = tmp_path / "t.parquet"
    pq.write_table(
        pa.Table.from_pylist([_trace("A", "s1", "c1", "refuted") | {"passages": passages}]), src
    )
    out = tmp_path / "t.jsonl"
    code, stdout, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:1, field 'passages[1].rank': passage 2 of 3 has no rank "
        "where others have one: its place in the list is no rank unless the list is in rank "
        "order; give every passage its rank, or none (the list's order then ranks them)"
    ]
    assert not out.exists()


def test_labels_numbered_from_zero_for_traces_numbered_from_one_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Traces number each answer's sentences from 1 (q1:1, q1:2, q2:1: a list's place); the
    # labels from 0 (a list's index: q1:0 error, q1:1 ok, q2:0 ok). By hand, label i on
    # sentence i+1: q1:1 refuted, an error (TP); q1:2 supported, ok (TN); q2:1 refuted, ok
    # (FP): TP 1, FP 1, TN 1. main took q1:0 and q2:0 for sentences without claims and put
    # q1:1's label on the wrong sentence: n 3, TP 0, FP 1, FN 1, TN 1, exit 0.
    traces = write_jsonl(
        tmp_path / "t.jsonl",
        [
            _trace("A", "q1:1", "c1", "refuted"),
            _trace("A", "q1:2", "c2", "supported"),
            _trace("A", "q2:1", "c3", "refuted") | {"question_id": "q2"},
        ],
    )
    labels = write_jsonl(
        tmp_path / "l.jsonl",
        [
            {"question_id": "q1", "sentence_id": "q1:0", "has_error": True},
            {"question_id": "q1", "sentence_id": "q1:1", "has_error": False},
            {"question_id": "q2", "sentence_id": "q2:0", "has_error": False},
        ],
    )
    m = tmp_path / "m.json"
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, out, err = run_cli([*args, "--format", "json", "-o", str(m)], capsys)
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {labels}:1, field 'sentence_id': the labels number sentences from "
        "0 ('q1:0', 'q2:0': no trace has them) where the traces of those 2 answers number "
        "them from 1 ('q1:1'): each label would fall on the next sentence, and sentence 0 "
        "count as one without claims; number the labels as the traces do (if both number "
        "from 0 and sentence 0 gave no claim, give these answers' labels their sentence's "
        "text, column 'sentence': the traces' texts are then compared instead)"
    ]
    assert not m.exists()
    # numbered as the traces are: the hand count
    write_jsonl(
        labels,
        [
            {"question_id": "q1", "sentence_id": "q1:1", "has_error": True},
            {"question_id": "q1", "sentence_id": "q1:2", "has_error": False},
            {"question_id": "q2", "sentence_id": "q2:1", "has_error": False},
        ],
    )
    code, _, err = run_cli([*args, "--format", "json", "-o", str(m)], capsys)
    assert code == 0, err
    rows = json.loads(m.read_text(encoding="utf-8"))
    assert [(r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [(3, 1, 1, 0, 1)]


def test_two_runs_in_a_minified_json_list_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The shape above as one .json list on one line (a minified dump): every record starts
    # on line 1, so main took the two runs for one record and pooled them, exit 0 (n 2, TP 1,
    # FP 1 for n 4, TP 1, FP 1, FN 1, TN 1). A record on a line holding several is told by
    # its place in the list.
    def run(qid: str, claims: list[tuple[str, str, str, str]]) -> dict[str, object]:
        rows = [{"sid": s, "cid": c, "text": c, "verdict": v, "gold": g} for s, c, v, g in claims]
        return {"qid": qid, "answers": {"sysA": {"claims": rows}}}

    def write(second: str) -> None:
        runs = [
            run("q1", [("s1", "u1", "refuted", "bad"), ("s2", "u2", "supported", "ok")]),
            run(second, [("t1", "u3", "supported", "bad"), ("t2", "u4", "refuted", "ok")]),
        ]
        if second == "q1":
            runs[1] = run("q1", [("s1", "u3", "supported", "bad"), ("s2", "u4", "refuted", "ok")])
        src.write_text(json.dumps(runs), encoding="utf-8")

    src = tmp_path / "runs.json"
    write("q1")
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(src), "-o", str(out), "--labels-out", str(labels)]
    args += ["--option", "rows=answers.*.claims[]", "--option", "label_level=sentence"]
    for pair in ("qid=question_id", "sid=sentence_id", "answers.*=system", "cid=claim_id"):
        args += ["--map", pair]
    args += ["--map", "text=claim", "--label-rule", "gold = bad -> error"]
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:1, field 'sentence_id': sentence 's1' of system 'sysA' "
        "comes from this record and from the one at line 1 (record [0]): its claims would be "
        "pooled into one sentence (question 'q1' twice: two runs?); give each record its own "
        "question id, or each run its own system (row [1].answers.sysA.claims[0])"
    ]
    assert not out.exists() and not labels.exists()
    write("q1-run2")  # each run its own question and sentence ids: the four sentences
    assert run_cli(args, capsys)[0] == 0
    m = tmp_path / "m.json"
    metrics = ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted"]
    assert run_cli([*metrics, "--format", "json", "-o", str(m)], capsys)[0] == 0
    rows = json.loads(m.read_text(encoding="utf-8"))
    assert [(r["system"], r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("sysA", 4, 1, 1, 1, 1)
    ]
