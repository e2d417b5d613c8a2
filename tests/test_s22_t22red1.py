"""Outside red-team of the data path, session 22 (t22red1): shapes the other tests do not use.

Each test states the input, what main gave before the fix, and what it gives now, with the
hand computation beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli, write_text

#: Four sentences of one system, FEVER's verdict words.
_FEVER = (
    "system,question_id,sentence_id,claim_id,claim,verdict\n"
    "gpt,q1,s1,c1,Aspirin thins blood,SUPPORTS\n"
    "gpt,q1,s2,c2,Ibuprofen is safe in pregnancy,REFUTES\n"
    "gpt,q2,s3,c3,Statins cure diabetes,NOT ENOUGH INFO\n"
    "gpt,q2,s4,c4,Metformin causes lactic acidosis always,SUPPORTS\n"
)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        # one column per clinician beside a majority column
        ("w.csv", "sentence_id,dr_a,dr_b,dr_c,majority\ns1,0,0,1,0\ns2,1,1,0,1\n"),
        # one column per sentence, a row per clinician
        ("w.csv", "annotator,s1,s2,s3\ndr_a,0,1,1\n"),
        # the same as JSONL (the record validator's path, as a sheet's)
        ("w.jsonl", '{"annotator": "dr_a", "s1": 0, "s2": 1}\n'),
    ],
)
def test_a_wide_labels_table_is_refused_with_the_reshape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    # Main refused it as an unknown column naming --map alone (CSV), or with the label rule's
    # way (JSONL, xlsx: "labels written other than true/false ... --label-rule"), which has no
    # column to rule on; neither said the table must be one row per label.
    wide = write_text(tmp_path / name, text)
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(wide), "-o", str(tmp_path / "o.jsonl")], capsys
    )
    assert code == 2
    assert "a wide labels table" in err
    assert "df.melt(" in err and "--map COLUMN=has_error" in err
    assert "--label-rule" not in err
    assert not (tmp_path / "o.jsonl").exists()


def test_the_wide_hint_ways_through_give_the_hand_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The ways the line names, taken. Labels (majority column = majority of dr_a..dr_c):
    # s1 0, s2 1, s3 1, s4 0. Traces: s1 SUPPORTS, s2 REFUTES, s3 NEI, s4 SUPPORTS.
    # Under refuted by hand: s2 TP, s3 FN, s1 and s4 TN -> TP 1, FP 0, FN 1, TN 2.
    traces = write_text(tmp_path / "t.csv", _FEVER)
    wide = write_text(
        tmp_path / "w.csv",
        "sentence_id,dr_a,dr_b,dr_c,majority\ns1,0,0,1,0\ns2,1,1,0,1\ns3,1,0,1,1\ns4,0,0,0,0\n",
    )
    one = tmp_path / "one.jsonl"
    drop = ["--map", "dr_a=", "--map", "dr_b=", "--map", "dr_c="]
    args = ["ingest", "generic-labels", str(wide), "--map", "majority=has_error", *drop]
    assert run_cli([*args, "-o", str(one)], capsys)[0] == 0
    rows = ["sentence_id,annotator,has_error"]
    for line in wide.read_text().splitlines()[1:]:  # the melt, by hand
        sid, *votes = line.split(",")
        rows += [
            f"{sid},{who},{v}" for who, v in zip(("dr_a", "dr_b", "dr_c"), votes[:3], strict=True)
        ]
    long = write_text(tmp_path / "long.csv", "\n".join(rows) + "\n")
    melted = tmp_path / "melted.jsonl"
    args = ["ingest", "generic-labels", str(long), "--option", "consensus=majority"]
    assert run_cli([*args, "-o", str(melted)], capsys)[0] == 0
    for labels in (one, melted):
        args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
        code, out, err = run_cli([*args, "--bootstrap", "0", "--format", "csv"], capsys)
        assert code == 0, err
        assert metrics_counts(out, "refuted") == {"gpt": (1, 0, 1, 2)}
    assert json.loads(melted.read_text().splitlines()[2])["has_error"] is True  # s3: 2 of 3


@pytest.mark.parametrize("dash", ["\u2013", "\u2011", "\u2212"])  # en dash, nb hyphen, minus
@pytest.mark.parametrize("command", ["metrics", "ingest"])
def test_a_system_name_written_with_another_dash_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dash: str, command: str
) -> None:
    # GPT-4o's file (s1) and the same system's second file (s2) typed 'GPT–4o' (an en dash,
    # as a word processor writes it). Main scored them as two systems that look the same, exit
    # 0: GPT-4o TP 0, FN 1 (s2, no claim), TN 1 and GPT–4o TP 1, TN 1, for one system's TP 1,
    # TN 1 by hand; case or spacing alone ('gpt-4o', 'GPT 4o' with a no-break space) was
    # already refused.
    header = "system,question_id,sentence_id,claim_id,claim,verdict\n"
    one = write_text(tmp_path / "a.csv", header + "GPT-4o,q1,s1,c1,one,supported\n")
    two = write_text(tmp_path / "b.csv", header + f"GPT{dash}4o,q1,s2,c2,two,refuted\n")
    labels = write_text(tmp_path / "l.csv", "sentence_id,has_error\ns1,false\ns2,true\n")
    out = tmp_path / "o.jsonl"
    if command == "metrics":
        args = ["metrics", "--traces", str(one), "--traces", str(two), "--labels", str(labels)]
    else:
        args = ["ingest", "generic", str(one), str(two), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert f"system 'GPT{dash}4o' is 'GPT-4o'" in err and "b.csv:2" in err
    assert not out.exists()


def test_compare_columns_named_with_two_dashes_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A sheet of paired outcomes, gpt-4o's column twice (once typed with an en dash): main
    # compared them as two systems (McNemar of a system with itself, renamed).
    table = write_text(tmp_path / "c.csv", "gpt-4o,GPT\u20134o,truth\n1,1,1\n0,1,0\n1,0,1\n")
    code, _, err = run_cli(["compare", str(table), "--truth", "truth"], capsys)
    assert code == 2
    assert "column 'GPT\u20134o' is 'gpt-4o' written another way" in err


#: Labels of _FEVER's sentences: s1 no error, s2-s4 errors.
_FEVER_LABELS = "sentence_id,has_error\ns1,false\ns2,true\ns3,true\ns4,true\n"
#: What reading _FEVER's words assumed, as the first line now says it.
_FEVER_READ = (
    "verdicts read by the default aliases: 'not enough info' as no_evidence (1), 'refutes' "
    "as refuted (1), 'supports' as supported (2); if one means otherwise, ingest the traces "
    "with --alias WORD=CANONICAL"
)


@pytest.mark.parametrize("command", ["metrics", "disagreements"])
def test_fever_verdict_words_are_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # FEVER's SUPPORTS / REFUTES / NOT ENOUGH INFO are read by the default aliases; main said
    # only true/false on the first line, so a file whose NEI meant something else (a refusal
    # to answer, say) was read as no_evidence with no word. The counts are unchanged; by hand
    # under refuted: s2 REFUTES TP, s3 NEI and s4 SUPPORTS FN, s1 TN -> TP 1, FP 0, FN 2, TN 1.
    traces = write_text(tmp_path / "t.csv", _FEVER)
    labels = write_text(tmp_path / "l.csv", _FEVER_LABELS)
    args = [command, "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    extra = ["--bootstrap", "0"] if command == "metrics" else ["-o", str(tmp_path / "d.jsonl")]
    code, out, err = run_cli([*args, *extra], capsys)
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("Assumed: ") and first.endswith("; " + _FEVER_READ)
    if command == "metrics":
        code, out, err = run_cli([*args, *extra, "--format", "csv"], capsys)
        assert metrics_counts(out, "refuted") == {"gpt": (1, 0, 2, 1)}
        assert err.strip() == _FEVER_READ  # printed rows hold no field for it: stderr
    else:  # two disagreements: s3 and s4 missed
        assert len((tmp_path / "d.jsonl").read_text().splitlines()) == 2


def test_nli_words_from_jsonl_and_a_foreign_parquet_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The JSONL fast path (the voucher) and the foreign Parquet's vectorised path count the
    # words as the CSV reader does: entailment 2, contradiction 1, neutral 1, and a JSON true.
    import pandas as pd

    rows = [
        {"system": "nli", "question_id": "q1", "sentence_id": f"s{i}", "claim_id": f"c{i}"}
        | {"claim": f"claim {i}", "verdict": v}
        for i, v in enumerate(["entailment", "contradiction", "neutral", "Entailment"], 1)
    ]
    jsonl = write_text(tmp_path / "t.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    pd.DataFrame(rows).to_parquet(tmp_path / "t.parquet", index=False)
    labels = write_text(tmp_path / "l.csv", _FEVER_LABELS)
    said = (
        "verdicts read by the default aliases: 'contradiction' as refuted (1), 'entailment' as "
        "supported (2), 'neutral' as no_evidence (1)"
    )
    for traces in (jsonl, tmp_path / "t.parquet"):
        args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
        code, out, err = run_cli(args, capsys)
        assert code == 0, err
        assert said in out.splitlines()[0]
        # by hand, refuted: s2 TP, s3 (neutral) FN, s4 (entailment) FN, s1 TN
        code, out, _ = run_cli([*args, "--format", "csv"], capsys)
        assert metrics_counts(out, "refuted") == {"nli": (1, 0, 2, 1)}


def test_ingest_says_the_words_it_read_unless_aliased(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ingest generic's note said true/false only; --alias naming a word takes it out of the
    # note (the reader said what it means). Canonical words (supported, No Evidence) are
    # never said.
    traces = write_text(tmp_path / "t.csv", _FEVER + "gpt,q3,s5,c5,Zinc cures colds,No Evidence\n")
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(traces), "-o", str(out)], capsys)
    assert code == 0
    assert (
        "verdicts read by the default aliases: 'not enough info' as no_evidence (1), 'refutes' "
        "as refuted (1), 'supports' as supported (2); if one means otherwise, give --alias "
        "WORD=CANONICAL"
    ) in err
    args = [
        "ingest",
        "generic",
        str(traces),
        "-o",
        str(out),
        "--alias",
        "NOT ENOUGH INFO=ambiguous",
    ]
    code, _, err = run_cli(args, capsys)
    assert code == 0
    assert "'refutes' as refuted (1), 'supports' as supported (2);" in err
    assert "not enough info" not in err


def test_printed_json_rows_say_true_false_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `failcodes metrics --format json` printed (no -o) runs cli/direct.py's path, which
    # printed the dropped-rows line on stderr but not how true/false verdicts were read (the
    # typer path and docs/trace-format.md say it is on stderr): a detector's true
    # (hallucinated) read as supported with no word. JSON true, false, false, true (false read
    # as refuted); by hand under refuted: s2 and s3 TP, s4 (true -> supported) FN, s1 TN.
    import subprocess
    import sys

    rows = [
        {"system": "det", "question_id": "q1", "sentence_id": f"s{i}", "claim_id": f"c{i}"}
        | {"claim": f"claim {i}", "verdict": v}
        for i, v in enumerate([True, False, False, True], 1)
    ]
    traces = write_text(tmp_path / "t.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    labels = write_text(tmp_path / "l.csv", _FEVER_LABELS)
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    args += ["--format", "json"]
    direct = subprocess.run(
        [sys.executable, "-m", "failcodes", *args], capture_output=True, text=True, timeout=120
    )
    typer_code, typer_out, typer_err = run_cli(args, capsys)
    assert (direct.returncode, typer_code) == (0, 0)
    assert direct.stderr.startswith("4 verdict(s) true/false read as supported/refuted (true: ")
    assert direct.stderr == typer_err
    row = json.loads(direct.stdout)[0]
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (2, 0, 1, 1)
    assert direct.stdout == typer_out


#: One claim whose verdict is a JSON object (an LLM judge's structured output).
_NESTED = (
    '{"system": "gpt", "question_id": "q1", "sentence_id": "s1", "claim_id": "c1", '
    '"claim": "Aspirin thins blood", "verdict": {"label": "SUPPORTS", "score": 0.9}}\n'
    '{"system": "gpt", "question_id": "q1", "sentence_id": "s2", "claim_id": "c2", '
    '"claim": "Statins cure flu", "verdict": {"label": "REFUTES", "score": 0.2}}\n'
)


def test_a_verdict_object_and_a_map_naming_no_column_name_the_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A verdict written as a JSON object was refused "expected a verdict string, got dict"
    # with no way through; `--map verdict.label=verdict` (a key inside the object, which only
    # --option rows flattens) and a typo (`--map lable=verdict`) were refused "no verdict (did
    # the verifier fail on this claim? --option no_verdict=drop ...)", a way that drops every
    # row. Now each names the way; taken (pandas.json_normalize, then the --map), it gives
    # TP 1, TN 1 under refuted by hand (s1 SUPPORTS no error, s2 REFUTES an error).
    import pandas as pd

    nested = write_text(tmp_path / "n.jsonl", _NESTED)
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(nested), "-o", str(out)], capsys)
    assert code == 2
    assert "got dict {'label': 'SUPPORTS', 'score': 0.9}; flatten the records first" in err
    assert "--map verdict.KEY=verdict" in err
    args = ["ingest", "generic", str(nested), "-o", str(out), "--map", "verdict.label=verdict"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "no row so far gives column 'verdict.label' a value" in err
    assert "did the verifier fail" not in err
    flat = tmp_path / "flat.jsonl"
    records = [json.loads(line) for line in _NESTED.splitlines()]
    pd.json_normalize(records).to_json(flat, orient="records", lines=True)
    args = ["ingest", "generic", str(flat), "-o", str(out), "--map", "verdict.label=verdict"]
    assert run_cli([*args, "--map", "verdict.score="], capsys)[0] == 0
    labels = write_text(tmp_path / "l.csv", "sentence_id,has_error\ns1,false\ns2,true\n")
    args = ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted"]
    code, table, _ = run_cli([*args, "--format", "csv"], capsys)
    assert metrics_counts(table, "refuted") == {"gpt": (1, 0, 0, 1)}


@pytest.mark.parametrize("name", ["l.csv", "l.jsonl"])
def test_labels_keyed_by_sentence_text_name_the_join(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # A clinicians' sheet of sentence texts and their labels, no ids: refused "a label needs
    # a sentence_id or a claim_id" with no way through. Now the line names the join; taken
    # (pandas merge on the text), it gives under refuted by hand: s1 supported, no error ->
    # TN; s2 refuted, an error -> TP: TP 1, FP 0, FN 0, TN 1.
    import pandas as pd

    traces = write_text(
        tmp_path / "t.csv",
        "system,question_id,sentence_id,claim_id,claim,sentence,verdict\n"
        "gpt,q1,s1,c1,Aspirin thins blood,Aspirin thins blood.,supported\n"
        "gpt,q1,s2,c2,Statins cure flu,Statins cure flu.,refuted\n",
    )
    rows = [("Aspirin thins blood.", False), ("Statins cure flu.", True)]
    if name.endswith(".csv"):
        text = "sentence,has_error\n" + "".join(f"{s},{str(e).lower()}\n" for s, e in rows)
    else:
        text = "".join(json.dumps({"sentence": s, "has_error": e}) + "\n" for s, e in rows)
    labels = write_text(tmp_path / name, text)
    args = ["metrics", "--traces", str(traces), "-m", "refuted", "--format", "csv"]
    code, _, err = run_cli([*args, "--labels", str(labels)], capsys)
    assert code == 2
    assert "labels keyed by the sentence's text? give each the traces' sentence_id" in err
    texts = pd.read_csv(traces)[["sentence_id", "sentence"]]
    joined = pd.DataFrame(rows, columns=["sentence", "has_error"]).merge(texts, on="sentence")
    joined[["sentence_id", "has_error"]].to_csv(tmp_path / "joined.csv", index=False)
    code, out, err = run_cli([*args, "--labels", str(tmp_path / "joined.csv")], capsys)
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"gpt": (1, 0, 0, 1)}


def test_per_system_label_files_to_generic_labels_name_its_own_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One labels file per system (each system wrote its own answer, sentences s1.. in each),
    # given to generic-labels with duplicates=same: the conflict's way named
    # `--option label_scope=system`, an option generic-labels does not have ("adapter
    # 'generic-labels' has no option 'label_scope'"). Now it names --system NAME, one call per
    # file; taken: gpt s1 supported/no error TN, s2 refuted/error TP -> TP 1, FP 0, FN 0, TN 1;
    # claude s1 supported/error FN, s2 supported/no error TN, s3 refuted/error TP -> 1, 0, 1, 1.
    header = "system,question_id,sentence_id,claim_id,claim,verdict\n"
    gpt = write_text(
        tmp_path / "gpt.csv", header + "gpt,q1,s1,c1,a,supported\ngpt,q1,s2,c2,b,refuted\n"
    )
    claude = write_text(
        tmp_path / "claude.csv",
        header + "claude,q1,s1,c1,c,supported\nclaude,q1,s2,c2,d,supported\n"
        "claude,q1,s3,c3,e,refuted\n",
    )
    lg = write_text(tmp_path / "gpt.l.csv", "sentence_id,has_error\ns1,false\ns2,true\n")
    lc = write_text(
        tmp_path / "claude.l.csv", "sentence_id,has_error\ns1,true\ns2,false\ns3,true\n"
    )
    merged = tmp_path / "all.jsonl"
    args = ["ingest", "generic-labels", str(lg), str(lc), "-o", str(merged)]
    code, _, err = run_cli([*args, "--option", "duplicates=same"], capsys)
    assert code == 2
    assert "generic-labels: --system NAME, one call per file" in err
    for path, system in ((lg, "gpt"), (lc, "claude")):
        one = ["ingest", "generic-labels", str(path), "--system", system]
        assert run_cli([*one, "-o", str(tmp_path / f"{system}.jsonl")], capsys)[0] == 0
    both = [str(tmp_path / "gpt.jsonl"), str(tmp_path / "claude.jsonl")]
    assert run_cli(["ingest", "generic-labels", *both, "-o", str(merged)], capsys)[0] == 0
    args = ["metrics", "--traces", str(gpt), "--traces", str(claude), "--labels", str(merged)]
    code, out, err = run_cli([*args, "-m", "refuted", "--format", "csv"], capsys)
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"gpt": (1, 0, 0, 1), "claude": (1, 0, 1, 1)}


def test_a_study_says_the_verdict_words_its_ingest_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `failcodes run` said the ingest's note on the verdicts it read by the default aliases
    # (true/false, FEVER's words) only in the step's log: the metrics step reads the
    # canonical Parquet, so the run's output, the metrics and the report gave no word. Now
    # the run says it beside the evidence line, as IngestResult.said() does for that.
    import shutil

    from failcodes.codebook import bundled_dir

    root = tmp_path / "study"
    root.mkdir()
    write_text(root / "t.csv", _FEVER)
    write_text(root / "l.csv", _FEVER_LABELS)
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    write_text(
        root / "failcodes.toml",
        'name = "fever"\ncodebook = "medical-fact-check.v1.yaml"\n[[datasets]]\nname = "fv"\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["t.csv"]\n'
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["l.csv"]\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "none"\n'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n[judge]\njudge = "offline"\n'
        "[review]\nlabelstudio = false\n",
    )
    code, out, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    said = "verdicts read by the default aliases: 'not enough info' as no_evidence (1),"
    assert f"note: {root / 't.csv'}: {said}" in out + err  # the note names its input file
    rows = json.loads((root / "metrics" / "fv.json").read_text())
    rows = rows if isinstance(rows, list) else rows["results"]
    # by hand under refuted: s2 REFUTES TP, s3 NEI and s4 SUPPORTS FN, s1 TN
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [(1, 0, 2, 1)]


def test_a_verdict_with_a_full_stop_names_its_alias(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'Supported.' / 'REFUTED.' / 'Refuted!' (a verifier's sentence): refused with the bare
    # `--alias RAW=CANONICAL` way. Now the line names the word it is with punctuation and the
    # alias to give; taken, by hand under refuted: s1 supported/no error TN, s2 refuted/error
    # TP, s3 supported/error FN, s4 refuted/no error FP -> TP 1, FP 1, FN 1, TN 1.
    traces = write_text(
        tmp_path / "t.csv",
        "system,question_id,sentence_id,claim_id,claim,verdict\n"
        "gpt,q1,s1,c1,a,Supported.\ngpt,q1,s2,c2,b,REFUTED.\n"
        "gpt,q2,s3,c3,c,supported\ngpt,q2,s4,c4,d,Refuted!\n",
    )
    labels = write_text(
        tmp_path / "l.csv", "sentence_id,has_error\ns1,false\ns2,true\ns3,true\ns4,false\n"
    )
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "'supported' with punctuation: map it with `failcodes ingest --alias" in err
    assert "('Supported.=supported')" in err
    out = tmp_path / "o.jsonl"
    aliases = ["Supported.=supported", "REFUTED.=refuted", "Refuted!=refuted"]
    ingest = ["ingest", "generic", str(traces), "-o", str(out)]
    assert run_cli([*ingest, *(x for a in aliases for x in ("--alias", a))], capsys)[0] == 0
    code, table, _ = run_cli([*args[:2], str(out), *args[3:], "--format", "csv"], capsys)
    assert code == 0
    assert metrics_counts(table, "refuted") == {"gpt": (1, 1, 1, 1)}
