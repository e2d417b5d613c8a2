"""Outside red-team of the data path, session 15 (t15red1): shapes the other tests do not use.

Each test states the input, what main gave at exit 0 before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_text

_HEADER = "system,question_id,sentence_id,claim_id,claim,verdict\n"


def _confusion(out: Path) -> list[tuple[object, ...]]:
    rows = json.loads(out.read_text(encoding="utf-8"))
    return [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows]


def test_a_system_flag_no_row_takes_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One file per system; sysB's was made from sysA's and its system column still says sysA
    # (claim ids b1, b2 of its own). Labels: s1 no error, s2 an error. sysA flags s2 only:
    # TP 1, TN 1. sysB flags s1 only: FP 1 (s1), FN 1 (s2). main read `--system sysB` as a
    # default the rows did not need, wrote both of sysB's claims as sysA's and, with exit 0,
    # scored one system sysA over the four claims: s1 flagged (b1), s2 flagged (a2):
    # TP 1, FP 1, FN 0, TN 0, and no sysB row at all.
    a = write_text(
        tmp_path / "a.csv", _HEADER + "sysA,q1,s1,a1,x,supported\nsysA,q1,s2,a2,y,refuted\n"
    )
    b = write_text(
        tmp_path / "b.csv", _HEADER + "sysA,q1,s1,b1,x,refuted\nsysA,q1,s2,b2,y,supported\n"
    )
    labels = write_text(
        tmp_path / "l.jsonl",
        '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n'
        '{"sentence_id": "s2", "question_id": "q1", "has_error": true}\n',
    )
    ta, tb = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run_cli(["ingest", "generic", str(a), "-o", str(ta), "--system", "sysA"], capsys)[0] == 0
    code, out, err = run_cli(
        ["ingest", "generic", str(b), "-o", str(tb), "--system", "sysB"], capsys
    )
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        "failcodes: error: --system 'sysB' names no trace: every record of the input names its "
        "own system (sysA 2), so its traces would be scored as those; drop --system to keep the "
        "records' systems, or leave their system field out (generic: --map system=) to name "
        "every trace 'sysB'"
    ]
    assert not tb.exists()
    # the way through: the column left out, --system names every trace
    args = ["ingest", "generic", str(b), "-o", str(tb), "--system", "sysB", "--map", "system="]
    assert run_cli(args, capsys)[0] == 0
    m = tmp_path / "m.json"
    args = ["metrics", "--traces", str(ta), "--traces", str(tb), "--labels", str(labels)]
    code, _, err = run_cli([*args, "-m", "refuted", "--format", "json", "-o", str(m)], capsys)
    assert code == 0, err
    assert _confusion(m) == [("sysA", 1, 0, 0, 1), ("sysB", 0, 1, 1, 0)]


def test_a_labels_ingest_gives_system_flag_to_its_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each system wrote its own answer (ids q1s1, q1s2 in both, no sentence text); the
    # clinicians' table has a label column per system. A's labels: q1s1 wrong, q1s2 ok; B's:
    # both ok. A flags q1s1: TP 1, TN 1. B flags nothing: TN 2 on its own labels.
    # main ignored `generic-labels --system A` and wrote A's labels shared: metrics on them
    # scored B on A's labels with exit 0 (q1s1 an error B did not flag: FN 1, TN 1, where B
    # has no label of its own in that file: n 0).
    traces = write_text(
        tmp_path / "t.jsonl",
        "".join(
            json.dumps(
                {"system": s, "question_id": "q1", "sentence_id": i, "claim_id": i}
                | {"claim": c, "verdict": v}
            )
            + "\n"
            for s, i, c, v in [
                ("A", "q1s1", "aspirin cures flu", "refuted"),
                ("A", "q1s2", "rest helps", "supported"),
                ("B", "q1s1", "fluids help", "supported"),
                ("B", "q1s2", "vaccines work", "supported"),
            ]
        ),
    )
    wide = write_text(
        tmp_path / "w.csv",
        "sentence_id,question_id,A_label,B_label\nq1s1,q1,wrong,ok\nq1s2,q1,ok,ok\n",
    )
    la, lb, both = (tmp_path / f"{n}.jsonl" for n in ("la", "lb", "both"))
    for system, out, other in (("A", la, "B"), ("B", lb, "A")):
        args = ["ingest", "generic-labels", str(wide), "-o", str(out), "--system", system]
        rule = f"{system}_label = wrong -> error; otherwise -> no_error"
        code, stdout, err = run_cli(
            [*args, "--label-rule", rule, "--map", f"{other}_label="], capsys
        )
        assert code == 0, err
        assert stdout.splitlines()[0] == (
            f"wrote 2 labels -> {out} (system {system!r} for 2 of them, from --system: "
            "per-system labels)"
        )
    m = tmp_path / "m.json"
    metrics = [
        "metrics",
        "--traces",
        str(traces),
        "-m",
        "refuted",
        "--format",
        "json",
        "-o",
        str(m),
    ]
    assert run_cli([*metrics, "--labels", str(la)], capsys)[0] == 0
    assert _confusion(m) == [("A", 1, 0, 0, 1), ("B", 0, 0, 0, 0)]
    assert run_cli(["ingest", "generic-labels", str(la), str(lb), "-o", str(both)], capsys)[0] == 0
    assert run_cli([*metrics, "--labels", str(both)], capsys)[0] == 0
    assert _confusion(m) == [("A", 1, 0, 0, 1), ("B", 0, 0, 0, 2)]
    # labels that name their own system take no --system: one line, nothing written
    code, out, err = run_cli(
        ["ingest", "generic-labels", str(la), "-o", str(tmp_path / "x.jsonl"), "--system", "B"],
        capsys,
    )
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        "failcodes: error: --system 'B' names no label: every label of the input names its own "
        "system; drop --system to keep them"
    ]
    assert not (tmp_path / "x.jsonl").exists()


def test_systems_option_leaves_out_a_reference_key_and_says_it_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Answers keyed by system with a `gold` key beside them (one record, two claims; the
    # expert marks the first an error). main refused `--option systems=sysA,sysB` ("not among
    # --option systems: add it, or leave its rows out"), and no option left them out: the
    # file had to be edited. Now gold's rows are left out and the first line says so.
    # By hand: sysA supported, refuted -> FN 1 (claim 1), FP 1 (claim 2); sysB refuted,
    # supported -> TP 1, TN 1.
    def answer(v1: str, v2: str) -> dict[str, object]:
        return {
            "claims": [
                {"claim": "x", "verdict": v1, "expert": "incorrect"},
                {"claim": "y", "verdict": v2, "expert": "correct"},
            ]
        }

    record = {
        "answers": {
            "sysA": answer("supported", "refuted"),
            "sysB": answer("refuted", "supported"),
            "gold": answer("refuted", "supported"),
        }
    }
    src = write_text(tmp_path / "answers.jsonl", json.dumps(record) + "\n")
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(src), "-o", str(out), "--labels-out", str(labels)]
    for opt in ("rows=answers.*.claims[]", "sentence_ids=question"):
        args += ["--option", opt]
    for pair in ("#=question_id", "answers.*.claims#=sentence_id", "answers.*=system"):
        args += ["--map", pair]
    args += ["--label-rule", "expert = incorrect -> error"]
    code, stdout, err = run_cli([*args, "--option", "systems=sysA,sysB"], capsys)
    assert code == 0, err
    assert stdout.splitlines()[0] == (
        f"wrote 4 traces -> {out} (2 system(s): sysA 2, sysB 2; left out, not among --option "
        "systems: gold 2; evidence not declared for sysA, sysB: read as closed-book (no "
        "passages or "
        "retriever on any trace), their disagreements blamed on verification, never on "
        "retrieval; a retrieval pipeline whose passages were not kept? declare it: "
        "--evidence sysA=retrieved)"
    )
    m = tmp_path / "m.json"
    metrics = ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted"]
    assert run_cli([*metrics, "--format", "json", "-o", str(m)], capsys)[0] == 0
    assert _confusion(m) == [("sysA", 0, 1, 1, 0), ("sysB", 1, 0, 0, 1)]
    # a listed name no row has (a typo would leave out the system it meant): refused
    out.unlink()
    code, stdout, err = run_cli([*args, "--option", "systems=sysA,sysb"], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}, field 'system': --option systems names 'sysb', which no row "
        "has (the rows' systems: gold, sysA, sysB)"
    ]
    assert not out.exists()


def test_record_place_ids_over_shards_of_one_dump_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One system's dump in two shards, one answer each, its claims with ids of their own
    # (u1..u4), numbered with --map '#=question_id' (the records carry no id). Shard 1: a
    # refuted error (TP), a supported correct one (TN); shard 2: a supported error (FN), a
    # refuted correct one (FP). By hand: n 4, TP 1, FP 1, FN 1, TN 1. main numbered record 1
    # of each shard question '1', made sentences '1:1' and '1:2' one sentence each of two
    # claims, and gave n 2, TP 1, FP 1, FN 0, TN 0 with exit 0.
    def shard(name: str, claims: list[tuple[str, str, str]]) -> Path:
        rows = [{"cid": c, "text": c, "verdict": v, "gold": g} for c, v, g in claims]
        return write_text(tmp_path / name, json.dumps({"claims": rows}) + "\n")

    one = shard("s1.jsonl", [("u1", "refuted", "bad"), ("u2", "supported", "ok")])
    two = shard("s2.jsonl", [("u3", "supported", "bad"), ("u4", "refuted", "ok")])
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["-o", str(out), "--labels-out", str(labels), "--system", "S"]
    for opt in ("rows=claims[]", "sentence_ids=question", "label_level=sentence"):
        args += ["--option", opt]
    for pair in ("#=question_id", "claims#=sentence_id", "cid=claim_id", "text=claim"):
        args += ["--map", pair]
    args += ["--label-rule", "gold = bad -> error"]
    code, stdout, err = run_cli(["ingest", "generic", str(one), str(two), *args], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {two}:1, field 'question_id': system 'S' has records in s1.jsonl "
        "and s2.jsonl, and '#', the record's place, counts from 1 in each file and fills "
        "question_id: record 1 of each would be one (its sentences' claims pooled); "
        "concatenate the files into one input, or map a column that names each record "
        "(row claims[0])"
    ]
    assert not out.exists() and not labels.exists()
    both = write_text(
        tmp_path / "both.jsonl",
        one.read_text(encoding="utf-8") + two.read_text(encoding="utf-8"),
    )
    assert run_cli(["ingest", "generic", str(both), *args], capsys)[0] == 0
    m = tmp_path / "m.json"
    metrics = ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted"]
    assert run_cli([*metrics, "--format", "json", "-o", str(m)], capsys)[0] == 0
    assert _confusion(m) == [("S", 1, 1, 1, 1)]


def test_a_sentence_labelled_no_error_whose_claim_is_an_error_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Clinicians labelled sentences, and some claims as well: s1 "no error", but its claim
    # s1c0 an error. A flags s1c0 (refuted); s2 is correct and unflagged. By the any-error
    # rule s1 holds an error A flagged: TP 1, TN 1. main read s1's label alone at sentence
    # level and gave FP 1, TN 1 (exit 0), with no word of the claim label it passed over.
    rows = [("s1", "s1c0", "refuted"), ("s1", "s1c1", "supported"), ("s2", "s2c0", "supported")]
    traces = write_text(
        tmp_path / "t.jsonl",
        "".join(
            json.dumps(
                {"system": "A", "question_id": "q1", "sentence_id": s, "claim_id": c}
                | {"claim": c, "verdict": v}
            )
            + "\n"
            for s, c, v in rows
        ),
    )
    labels = write_text(
        tmp_path / "l.jsonl",
        '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n'
        '{"sentence_id": "s2", "question_id": "q1", "has_error": false}\n'
        '{"claim_id": "s1c0", "sentence_id": "s1", "question_id": "q1", "has_error": true}\n',
    )
    m = tmp_path / "m.json"
    args = ["--traces", str(traces), "--labels", str(labels), "-m", "refuted", "-o", str(m)]
    for command in ("metrics", "disagreements"):
        code, out, err = run_cli([command, *args], capsys)
        assert (code, out) == (2, "")
        assert err.strip().splitlines() == [
            f"failcodes: error: {labels}:3, field 'has_error': sentence 's1' is labelled no error "
            "but its claim 's1c0' an error, and a sentence-level comparison reads the "
            "sentence's label alone (label the sentence an error); compare claims with "
            '--level claim (in a study: [metrics] level = "claim"), or give sentence labels'
        ]
        assert not m.exists()
    # claim level reads both: s1c0 its own label (TP), s1c1 s1's (TN), s2c0 s2's (TN)
    assert run_cli(["metrics", *args, "--level", "claim", "--format", "json"], capsys)[0] == 0
    assert _confusion(m) == [("A", 1, 0, 0, 2)]


def test_two_runs_of_a_question_numbered_by_list_place_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Answers keyed by system, one record per run: sysA answered q1 twice (two runs appended
    # to one dump), claims with ids of their own, sentences numbered by their place in the
    # claims list. Run 1: a refuted error (TP), a supported correct claim (TN); run 2: a
    # supported error (FN), a refuted correct one (FP). By hand over the four sentences:
    # TP 1, FP 1, FN 1, TN 1. main made sentences 'q1:1' and 'q1:2' of both runs one each
    # and gave n 2, TP 1, FP 1, FN 0, TN 0 with exit 0.
    def run(claims: list[tuple[str, str, str]]) -> str:
        rows = [{"cid": c, "text": c, "verdict": v, "gold": g} for c, v, g in claims]
        return json.dumps({"qid": "q1", "answers": {"sysA": {"claims": rows}}}) + "\n"

    src = write_text(
        tmp_path / "runs.jsonl",
        run([("u1", "refuted", "bad"), ("u2", "supported", "ok")])
        + run([("u3", "supported", "bad"), ("u4", "refuted", "ok")]),
    )
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(src), "-o", str(out), "--labels-out", str(labels)]
    for opt in ("rows=answers.*.claims[]", "sentence_ids=question", "label_level=sentence"):
        args += ["--option", opt]
    for pair in ("qid=question_id", "answers.*.claims#=sentence_id", "answers.*=system"):
        args += ["--map", pair]
    args += ["--map", "cid=claim_id", "--map", "text=claim", "--label-rule", "gold = bad -> error"]
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:2, field 'sentence_id': sentence 'q1:1' of system 'sysA' "
        "comes from this record and from the one at line 1: its id is a place in a list, "
        "counted from 1 in each record, so the two records' sentences would be one (question "
        "'q1' twice: two runs?); give each record its own question id, or each run its own "
        "system (row answers.sysA.claims[0])"
    ]
    assert not out.exists() and not labels.exists()
    # each run its own question id (q1, q1-run2): the four sentences, scored apart
    src.write_text(
        src.read_text(encoding="utf-8")
        .replace('"q1"', '"q1-run2"')
        .replace('"q1-run2"', '"q1"', 1),
        encoding="utf-8",
    )
    assert run_cli(args, capsys)[0] == 0
    m = tmp_path / "m.json"
    metrics = ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted"]
    assert run_cli([*metrics, "--format", "json", "-o", str(m)], capsys)[0] == 0
    assert _confusion(m) == [("sysA", 1, 1, 1, 1)]


def test_a_system_with_passages_on_some_traces_only_declares_its_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A retrieval pipeline B whose retriever found nothing for one claim: s1's claim c1 has a
    # gold passage, s2's c2 none; both are refuted, both sentences correct (two FPs).
    # Attribution by gold evidence (docs/attribution.md step 4, retrieved): s1 -> verification
    # (the verifier had the gold passage), s2 -> retrieval ("no passage retrieved"). main
    # derived each trace's evidence source on its own, read c2 as closed-book (none) and
    # blamed s2 on verification ("closed-book pipeline ... no retrieval stage"), exit 0:
    # verification 2, retrieval 0 for 1 and 1.
    gold = [{"passage_id": "p1", "rank": 1, "text": "t", "gold": True}]
    rows = [("s1", "c1", gold), ("s2", "c2", [])]
    src = write_text(
        tmp_path / "b.jsonl",
        "".join(
            json.dumps(
                {"system": "B", "question_id": "q1", "sentence_id": s, "claim_id": c}
                | {"claim": c, "verdict": "refuted", "passages": p}
            )
            + "\n"
            for s, c, p in rows
        ),
    )
    labels = write_text(
        tmp_path / "l.jsonl",
        '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n'
        '{"sentence_id": "s2", "question_id": "q1", "has_error": false}\n',
    )
    out = tmp_path / "t.jsonl"
    code, stdout, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}, field 'passages': system 'B': 1 of its 2 traces have neither "
        "passages nor a retriever, the others passages: read trace by trace, those would be "
        "closed-book (evidence source none) and their disagreements blamed on verification, not "
        "on a retrieval that found nothing; declare the pipeline's evidence: --evidence "
        "B=retrieved (or provided, none; a study: its [[datasets.pipelines]] evidence), or "
        "--retriever NAME; a pipeline that retrieves for some claims only: each trace's "
        "evidence_source (a field or column)"
    ]
    assert not out.exists()
    args = ["ingest", "generic", str(src), "-o", str(out), "--evidence", "B=retrieved"]
    assert run_cli(args, capsys)[0] == 0
    d = tmp_path / "d.jsonl"
    args = ["disagreements", "--traces", str(out), "--labels", str(labels), "-o", str(d)]
    assert run_cli(args, capsys)[0] == 0
    att = tmp_path / "att"
    assert run_cli(["attribute", "--from", str(d), "-o", str(att)], capsys)[0] == 0
    rows = [json.loads(x) for x in (att / "attribution.jsonl").read_text().splitlines()]
    assert sorted((r["sentence_id"], r["stage"]) for r in rows) == [
        ("s1", "verification"),
        ("s2", "retrieval"),
    ]


def test_a_study_of_one_file_per_system_declares_evidence_at_the_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The study's parts get no --evidence (the merge step declares it): the check above
    # refused sysA's part of a study whose pipelines declare `*` retrieved (b6ab2b6, 'ingest
    # d (1)' failed, exit 2). Parts are checked where the evidence is declared: the merge.
    gold = [{"passage_id": "p1", "rank": 1, "text": "t", "gold": True}]
    for system in ("A", "B"):
        rows = [("s1", "c1", gold), ("s2", "c2", [])]
        write_text(
            tmp_path / f"{system}.jsonl",
            "".join(
                json.dumps(
                    {"system": system, "question_id": "q1", "sentence_id": s, "claim_id": c}
                    | {"claim": c, "verdict": "refuted", "passages": p}
                )
                + "\n"
                for s, c, p in rows
            ),
        )
    write_text(
        tmp_path / "l.jsonl",
        '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n'
        '{"sentence_id": "s2", "question_id": "q1", "has_error": false}\n',
    )
    assert run_cli(["init", str(tmp_path / "st")], capsys)[0] == 0
    ingests = "".join(
        f'[[datasets.ingest]]\nadapter = "{a}"\npaths = ["../{f}"]\n\n'
        for a, f in (("generic", "A.jsonl"), ("generic", "B.jsonl"), ("generic-labels", "l.jsonl"))
    )
    study = tmp_path / "st" / "failcodes.toml"

    def write_study(declared: str) -> None:
        study.write_text(
            'name = "parts"\ncodebook = "medical-fact-check.v1.yaml"\n\n[[datasets]]\nname = "d"\n'
            f'\n{ingests}[[datasets.pipelines]]\nsystem = "{declared}"\nevidence = "retrieved"\n\n'
            '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n\n[judge]\njudge = "offline"\n',
            encoding="utf-8",
        )

    write_study("*")
    code, _, err = run_cli(["run", str(tmp_path / "st")], capsys)
    assert code == 0, err
    # s1: gold passage at rank 1 -> verification; s2: no passage retrieved -> retrieval
    att = tmp_path / "st" / "attribution" / "d" / "attribution.jsonl"
    rows = [json.loads(x) for x in att.read_text(encoding="utf-8").splitlines()]
    assert sorted((r["system"], r["sentence_id"], r["stage"]) for r in rows) == [
        ("A", "s1", "verification"),
        ("A", "s2", "retrieval"),
        ("B", "s1", "verification"),
        ("B", "s2", "retrieval"),
    ]
    # B undeclared: refused at the merge, where the evidence is declared
    write_study("A")
    code, _, err = run_cli(["run", str(tmp_path / "st"), "--force"], capsys)
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert (
        last.startswith("failcodes: error: ")
        and (
            ".traces.jsonl, field 'passages': system 'B': 1 of its 2 traces have neither passages "
            "nor a retriever"
        )
        in last
    )
    assert "(step 'merge traces d' failed" in err


def test_one_systems_sentence_in_two_input_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # test_a_system_flag_no_row_takes_is_refused's files, merged by one ingest (as a study's
    # merge step joins its parts), without --system: b.csv still names sysA. main wrote the
    # four claims as sysA's, and metrics gave one row sysA TP 1, FP 1, FN 0, TN 0 (exit 0)
    # for sysA TP 1, TN 1 and sysB FP 1, FN 1.
    a = write_text(
        tmp_path / "a.csv", _HEADER + "sysA,q1,s1,a1,x,supported\nsysA,q1,s2,a2,y,refuted\n"
    )
    b = write_text(
        tmp_path / "b.csv", _HEADER + "sysA,q1,s1,b1,x,refuted\nsysA,q1,s2,b2,y,supported\n"
    )
    out = tmp_path / "t.jsonl"
    code, stdout, err = run_cli(["ingest", "generic", str(a), str(b), "-o", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {b}:2, field 'sentence_id': sentence 's1' of system 'sysA' has "
        f"claims in {a} and in this file: its claims would be pooled into one sentence (two "
        "runs, or another system's file naming this system?); name each file's system "
        "(--system with --map system=), or, if the files split one run, concatenate them"
    ]
    assert not out.exists()
