"""Outside red-team of the data path, session 14 (t14red1): shapes the other tests do not use.

Each test states the input, what main gave at exit 0 before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_jsonl

#: Shared sentence labels of two questions, two sentences each: q1s0 and q2s1 are errors.
_LABELS = {"q1s0": True, "q1s1": False, "q2s0": False, "q2s1": True}


def _system_file(path: Path, system: str, sid: str, refuted: set[str]) -> Path:
    """One system's traces: a claim per labelled sentence, its id written as ``sid`` makes it."""
    rows: list[dict[str, object]] = [
        {
            "system": system,
            "question_id": key[:2],
            "sentence_id": sid.format(q=key[:2], s=key[2:]),
            "claim_id": f"{key}c0",
            "claim": f"claim of {key}",
            "verdict": "refuted" if key in refuted else "supported",
        }
        for key in _LABELS
    ]
    return write_jsonl(path, rows)


def test_one_systems_file_numbering_its_sentences_another_way_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One file per system: sysA writes the labels' ids (q1s0), sysB's file q1-s0. Each flags
    # q1s0 and q2s1, the two errors: TP 2, FN 0 for both. main gave sysA TP 2 / TN 2 and
    # sysB TP 0, FN 2, TN 2 (recall 0/2 for 2/2) at exit 0: each labelled sentence was one
    # sysB "made no claim for" (no error flagged), its own four sentences unlabelled.
    a = _system_file(tmp_path / "a.jsonl", "sysA", "{q}{s}", {"q1s0", "q2s1"})
    b = _system_file(tmp_path / "b.jsonl", "sysB", "{q}-{s}", {"q1s0", "q2s1"})
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [{"sentence_id": k, "question_id": k[:2], "has_error": v} for k, v in _LABELS.items()],
    )
    for command in ("metrics", "disagreements"):
        out = tmp_path / f"{command}.json"
        args = [command, "--traces", str(a), "--traces", str(b), "--labels", str(labels)]
        code, _, err = run_cli([*args, "-m", "refuted", "-o", str(out)], capsys)
        assert code == 2
        assert err.strip().splitlines() == [
            f"failcodes: error: {labels}:1, field 'sentence_id': no sentence of system 'sysB' "
            "is labelled in the 2 labelled question(s) it made claims in (question 'q1': its "
            "'q1-s0', the labels' 'q1s0'): each labelled sentence would count as one it made no "
            "claim for (no error flagged) and its own as unlabelled; write its sentence ids as "
            "the labels do, or, if each system wrote its own answer, give the labels a system "
            "column (labels per system)"
        ]
        assert not out.exists()
    # written alike, both are scored on their own claims: TP 2, FP 0, FN 0, TN 2 each
    b = _system_file(tmp_path / "b.jsonl", "sysB", "{q}{s}", {"q1s0", "q2s1"})
    out = tmp_path / "m.json"
    args = ["metrics", "--traces", str(a), "--traces", str(b), "--labels", str(labels)]
    code, _, _ = run_cli([*args, "-m", "refuted", "-o", str(out)], capsys)
    assert code == 0
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("sysA", 2, 0, 0, 2),
        ("sysB", 2, 0, 0, 2),
    ]


def _own_answers(tmp_path: Path, level: str) -> tuple[Path, Path, Path]:
    """Two systems' own answers, numbered alike (s1, s2), and labels of sysA's (no system).

    sysA: s1 'Aspirin reduces fever.' (no error), s2 'Aspirin cures cancer.' (error), and
    flags s2; sysB wrote them the other way round and flags its s1, the false one. Each is
    right on its own answer: TP 1, FP 0, FN 0, TN 1.
    """
    true, false = "Aspirin reduces fever.", "Aspirin cures cancer."
    paths = []
    for system, texts in (("sysA", (true, false)), ("sysB", (false, true))):
        rows: list[dict[str, object]] = [
            {
                "system": system,
                "question_id": "q1",
                "sentence_id": f"s{i}",
                "claim_id": f"c{i}",
                "sentence": text,
                "claim": text,
                "verdict": "refuted" if text == false else "supported",
            }
            for i, text in enumerate(texts, 1)
        ]
        paths.append(write_jsonl(tmp_path / f"{system}.jsonl", rows))
    key = "claim_id" if level == "claim" else "sentence_id"
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {key: f"{key[0]}1", "question_id": "q1", "has_error": False},
            {key: f"{key[0]}2", "question_id": "q1", "has_error": True},
        ],
    )
    return paths[0], paths[1], labels


@pytest.mark.parametrize("level", ["sentence", "claim"])
@pytest.mark.parametrize("merged", [False, True])
def test_shared_labels_of_ids_two_systems_give_different_texts_are_refused(
    level: str, merged: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each system wrote its own answer, numbered s1, s2 (claims c1, c2) in its own file; the
    # labels (no system column) are sysA's. main scored sysB on sysA's labels: TP 0, FP 1,
    # FN 1, TN 0 (P 0, R 0) for TP 1, TN 1, exit 0 (also from one merged Parquet file).
    a, b, labels = _own_answers(tmp_path, level)
    traces = ["--traces", str(a), "--traces", str(b)]
    if merged:  # a study's data/<ds>.traces.parquet: both systems in one file
        parquet = tmp_path / "ds.traces.parquet"
        assert run_cli(["ingest", "generic", str(a), str(b), "-o", str(parquet)], capsys)[0] == 0
        traces = ["--traces", str(parquet)]
    what = "claim 'c1'" if level == "claim" else "sentence 's1'"
    field = "claim_id" if level == "claim" else "sentence_id"
    kind = "claim" if level == "claim" else "sentence"
    for command in ("metrics", "disagreements"):
        out = tmp_path / (f"{command}.json" if command == "metrics" else f"{command}.jsonl")
        args = [command, *traces, "--labels", str(labels), "--level", level, "-o", str(out)]
        code, _, err = run_cli(args, capsys)
        assert code == 2
        assert err.strip().splitlines() == [
            f"failcodes: error: {labels}:1, field '{field}': {what} reads 'Aspirin reduces "
            "fever.' in the traces of system 'sysA' and 'Aspirin cures cancer.' in those of "
            "'sysB': this label, shared by every system (no system column), would apply to "
            f"two different {kind}s; if each system wrote its own answer, give the labels a "
            f"system column (labels per system), else write the {kind} one way in every "
            "traces file"
        ]
        assert not out.exists()
    # the labels given per system (sysB's own: its s1 is the error) score each TP 1, TN 1
    rows = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    own = [r | {"system": "sysA"} for r in rows] + [
        r | {"system": "sysB", "has_error": not r["has_error"]} for r in rows
    ]
    per_system = write_jsonl(tmp_path / "per_system.jsonl", own)
    out = tmp_path / "m.json"
    args = ["metrics", *traces, "--labels", str(per_system), "--level", level, "-o", str(out)]
    assert run_cli(args, capsys)[0] == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in got] == [
        ("sysA", 1, 0, 0, 1),
        ("sysB", 1, 0, 0, 1),
    ]


def test_true_false_verdicts_from_a_column_named_as_an_error_flag_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A hallucination detector's output: is_hallucination true on the two claims the
    # clinicians marked wrong. The default aliases read true as supported and false as
    # refuted, so main wrote every flagged claim supported and every clean one refuted:
    # metrics -m refuted gave TP 0, FP 2, FN 2, TN 0 (P 0, R 0) for TP 2, TN 2, exit 0.
    table = tmp_path / "detector.csv"
    table.write_text(
        "claim_id,claim,is_hallucination,gold\n"
        "c1,Aspirin cures cancer,TRUE,wrong\n"
        "c2,Aspirin reduces fever,FALSE,ok\n"
        "c3,Statins cure diabetes,TRUE,wrong\n"
        "c4,Insulin lowers glucose,FALSE,ok\n",
        encoding="utf-8",
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    base = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    base += ["--map", "is_hallucination=verdict", "--system", "detector"]
    base += ["--label-rule", "gold = wrong -> error"]
    code, _, err = run_cli(base, capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {table}:2, field 'is_hallucination': column 'is_hallucination' "
        "holds true/false, which read as supported/refuted (true: the claim holds), but its "
        "name says true marks an error: give --alias true=refuted --alias false=supported (or "
        "no_evidence for true), or, if true means the claim holds, --alias true=supported "
        "--alias false=refuted"
    ]
    assert not traces.exists() and not labels.exists()
    # said what true means: c1, c3 refuted and wrong (TP 2), c2, c4 supported and ok (TN 2)
    aliases = ["--alias", "true=refuted", "--alias", "false=supported"]
    assert run_cli([*base, *aliases], capsys)[0] == 0
    out = tmp_path / "m.json"
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    assert run_cli(args, capsys)[0] == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in got] == [(2, 0, 0, 2)]


def test_a_correctness_column_mapped_to_has_error_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Clinicians' sheet: is_correct true on s1 and s3, false on s2 and s4 (the two errors).
    # `--map is_correct=has_error` wrote s1, s3 as errors and s2, s4 as none: against a
    # verifier refuting s2 and s4, main gave TP 0, FP 2, FN 2, TN 0 for TP 2, TN 2, exit 0.
    sheet = tmp_path / "clinicians.csv"
    sheet.write_text(
        "sentence_id,is_correct\ns1,true\ns2,false\ns3,true\ns4,false\n", encoding="utf-8"
    )
    traces = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {
                "system": "v",
                "question_id": "q1",
                "sentence_id": sid,
                "claim_id": sid,
                "claim": f"claim {sid}",
                "verdict": "refuted" if sid in ("s2", "s4") else "supported",
            }
            for sid in ("s1", "s2", "s3", "s4")
        ],
    )
    labels = tmp_path / "labels.jsonl"
    base = ["ingest", "generic-labels", str(sheet), "-o", str(labels)]
    code, _, err = run_cli([*base, "--map", "is_correct=has_error"], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {sheet}:1, field 'is_correct': --map is_correct=has_error: the "
        "column's name says true means correct (no error), but has_error reads true as an "
        "error; give --label-rule 'is_correct = false -> error' instead (or, if true marks an "
        "error, rename the column)"
    ]
    assert not labels.exists()
    # the rule the refusal gives: s2, s4 errors, refuted (TP 2); s1, s3 supported (TN 2)
    assert run_cli([*base, "--label-rule", "is_correct = false -> error"], capsys)[0] == 0
    out = tmp_path / "m.json"
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    assert run_cli(args, capsys)[0] == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in got] == [(2, 0, 0, 2)]


def test_a_hallucination_score_read_as_support_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A detector's hallucination_score, high on the two claims the clinicians marked wrong
    # (0.9, 0.8) and low on the others (0.1, 0.2). --option verdict_threshold=0.5 read a
    # score at or above 0.5 as supported: main gave -m non_supported TP 0, FP 2, FN 2, TN 0
    # for TP 2, TN 2, exit 0 (its note: "2 of 4 scores at or above it (supported)").
    table = tmp_path / "scores.csv"
    table.write_text(
        "claim_id,claim,hallucination_score,gold\n"
        "c1,Aspirin cures cancer,0.9,wrong\n"
        "c2,Aspirin reduces fever,0.1,ok\n"
        "c3,Statins cure diabetes,0.8,wrong\n"
        "c4,Insulin lowers glucose,0.2,ok\n",
        encoding="utf-8",
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    base = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    base += ["--map", "hallucination_score=verdict", "--option", "verdict_threshold=0.5"]
    base += ["--system", "detector", "--label-rule", "gold = wrong -> error"]
    code, _, err = run_cli(base, capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {table}:2, field 'hallucination_score': column "
        "'hallucination_score' holds scores read as support (at or above 0.5: supported), "
        "but its name says a high score marks an error: give --option score_means=error (or "
        "score_means=support if a high score means the claim holds)"
    ]
    assert not traces.exists() and not labels.exists()
    # score_means=error: c1, c3 (0.9, 0.8) no_evidence and wrong (TP 2), c2, c4 supported
    # and ok (TN 2); the note says which side is which
    code, _, err = run_cli([*base, "--option", "score_means=error"], capsys)
    assert code == 0
    assert (
        "note: --option verdict_threshold=0.5: 2 of 4 scores at or above it (no_evidence), "
        "2 below (supported); the scores run from 0.1 to 0.9"
    ) in err.splitlines()
    out = tmp_path / "m.json"
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    assert run_cli([*args, "-m", "non_supported"], capsys)[0] == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in got] == [(2, 0, 0, 2)]


def test_intervals_over_questions_of_one_sentence_say_the_sentences_are_resampled_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A claim table without question ids: ingest makes each sentence its own question, so
    # the cluster bootstrap resampled 4 single-sentence "questions", the sentences as if
    # independent, and the first line said nothing of it (sentences of one long answer are
    # not: their intervals were too narrow, with no word).
    table = tmp_path / "claims.csv"
    table.write_text(
        "sentence_id,claim,verdict,gold\ns1,a,refuted,bad\ns2,b,supported,ok\n"
        "s3,c,refuted,ok\ns4,d,supported,bad\n",
        encoding="utf-8",
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    args += ["--system", "v", "--label-rule", "gold = bad -> error"]
    assert run_cli(args, capsys)[0] == 0
    metrics = ["metrics", "--traces", str(traces), "--labels", str(labels)]
    code, out, _ = run_cli([*metrics, "--bootstrap", "50"], capsys)
    assert code == 0
    assert out.splitlines()[0] == (
        "Assumed: shared labels (each label applies to every system's traces of its "
        "sentence); a labelled sentence it made no claim for counts as no error flagged "
        "(--without-claims no_error); each question holds one sentence: the bootstrap "
        "resamples sentences as independent (if sentences share an answer, give its id as "
        "question_id)"
    )
    # without intervals there is nothing to say
    code, out, _ = run_cli(metrics, capsys)
    assert "each question holds one sentence" not in out.splitlines()[0]


@pytest.mark.parametrize("parquet", [False, True])
def test_a_label_whose_sentence_text_is_another_sentence_is_refused(
    parquet: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Labels made on an earlier run's answer, numbered alike: the label of s1 gives its text
    # 'Aspirin cures cancer.' (an error), but the traces' s1 is 'Aspirin reduces fever.'
    # (supported) and their s2 'Aspirin cures cancer.' (refuted). By the texts the verifier
    # missed the error and flagged the true sentence (TP 0, FP 1, FN 1, TN 0); main scored
    # the ids, TP 1, TN 1, exit 0.
    a, _, _ = _own_answers(tmp_path, "sentence")
    traces = a
    if parquet:
        traces = tmp_path / "a.parquet"
        assert run_cli(["ingest", "generic", str(a), "-o", str(traces)], capsys)[0] == 0
    labels = write_jsonl(
        tmp_path / "earlier.jsonl",
        [
            {"sentence_id": "s1", "has_error": True, "sentence": "Aspirin cures cancer."},
            {"sentence_id": "s2", "has_error": False, "sentence": "Aspirin reduces fever."},
        ],
    )
    out = tmp_path / "m.json"
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {labels}:1, field 'sentence': the label's sentence 'Aspirin cures "
        "cancer.' is not sentence 's1' of the traces of system 'sysA', 'Aspirin reduces "
        "fever.': the label was made on another answer, or its id names another sentence; "
        "label the traces' sentences by their ids"
    ]
    assert not out.exists()
    # the same texts written otherwise (case, spaces, punctuation) are the same sentences
    labels = write_jsonl(
        tmp_path / "same.jsonl",
        [
            {"sentence_id": "s1", "has_error": False, "sentence": "aspirin  reduces fever"},
            {"sentence_id": "s2", "has_error": True, "sentence": "Aspirin cures cancer!"},
        ],
    )
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    assert run_cli(args, capsys)[0] == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in got] == [(1, 0, 0, 1)]


def test_compare_traces_refuses_a_system_named_like_the_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A wide table's gold column given to --verdict-column beside gpt and claude is a system
    # of the traces: main's compare --traces put it in Cochran's Q (df 2 for the 2 systems)
    # and the Holm correction of 3 pairs (claude vs gpt, permutation F1 p 0.2507 read 0.752),
    # exit 0, where compare FILE refuses a gold column.
    table = tmp_path / "wide.csv"
    table.write_text(
        "claim_id,claim,gpt,claude,gold,label\n"
        "c1,a,refuted,supported,refuted,bad\nc2,b,supported,supported,supported,ok\n"
        "c3,c,refuted,refuted,refuted,bad\nc4,d,supported,refuted,supported,ok\n"
        "c5,e,refuted,supported,refuted,bad\nc6,f,supported,supported,supported,ok\n",
        encoding="utf-8",
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    for column in ("gpt", "claude", "gold"):
        args += ["--verdict-column", column]
    # ingest refuses the gold system unless listed (tests/test_ingest_systems14.py): kept here
    args += ["--option", "systems=gpt,claude,gold"]
    assert run_cli([*args, "--label-rule", "label = bad -> error"], capsys)[0] == 0
    base = ["compare", "--traces", str(traces), "--labels", str(labels), "--format", "json"]
    code, out, err = run_cli(base, capsys)
    assert code == 2 and not out
    assert err.strip().splitlines() == [
        f"failcodes: error: {traces}:3, field 'system': system 'gold' is named like the "
        "reference or a consensus of the systems (holds 'gold'): as one more system it would "
        "enter every test; leave its traces out, or name the systems with --systems (a "
        "majority vote compared as a system too)"
    ]
    # the systems named: Cochran's Q of the two has df 1, one pair under Holm
    code, out, _ = run_cli([*base, "--systems", "gpt,claude"], capsys)
    assert code == 0
    rows = json.loads(out)["tests"]
    assert {(r["test"], r["comparison"], r["df"]) for r in rows if r["test"] == "cochran_q"} == {
        ("cochran_q", "gpt vs claude", 1)
    }
    assert {r["comparison"] for r in rows} == {"gpt vs claude"}


def test_true_false_verdicts_say_what_true_was_read_as(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A neutrally named column of true/false (`prediction`): the default aliases read true as
    # supported. main said nothing, so a detector whose true meant "hallucinated" was scored
    # inverted with no word; now a note says how true was read and how to read it otherwise.
    table = tmp_path / "p.csv"
    table.write_text("claim_id,claim,prediction\nc1,a,true\nc2,b,FALSE\nc3,c,True\n", "utf-8")
    args = ["ingest", "generic", str(table), "-o", str(tmp_path / "t.jsonl"), "--system", "v"]
    code, _, err = run_cli([*args, "--map", "prediction=verdict"], capsys)
    assert code == 0
    assert err.strip().splitlines() == [
        f"note: {table}: 3 verdict(s) true/false read as supported/refuted (true: the claim "
        "holds); if true marks an error, give --alias true=refuted --alias false=supported"
    ]
    # said with --alias: nothing to say
    aliases = ["--alias", "true=supported", "--alias", "false=refuted"]
    code, _, err = run_cli([*args, "--map", "prediction=verdict", *aliases], capsys)
    assert code == 0 and not err.strip()
