"""Shapes from i34red's outside check (issue 30): each failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def test_a_long_table_whose_units_were_each_rated_once_compares_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # item, annotator, code: A rated items 1-3, B items 4-6, so no unit has two ratings and
    # every coefficient is undefined (by hand: no rater pair on any unit). The ids did not
    # repeat, so the table was read as wide, its 'annotator' and 'code' columns as two raters
    # (no value in common): percent 0.000, Fleiss -0.358, exit 0.
    path = tmp_path / "r.csv"
    path.write_text("item,annotator,code\n1,A,x\n2,A,y\n3,A,x\n4,B,y\n5,B,x\n6,B,x\n")
    code, out, _ = run_cli(["agree", str(path), "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert {r["statistic"] for r in rows} >= {"percent", "fleiss", "krippendorff"}
    assert all(r["value"] is None for r in rows)
    assert rows[0]["raters"] == ["A", "B"]
    # the control: a wide table whose 'judge' column rates as 'human' does stays wide
    path.write_text("item,judge,human\n1,x,x\n2,y,x\n3,x,x\n")
    code, out, _ = run_cli(
        ["agree", str(path), "--bootstrap", "0", "--stat", "percent", "--format", "json"], capsys
    )
    assert code == 0
    assert json.loads(out)[0]["value"] == pytest.approx(2 / 3)  # items 1 and 3 of 3


def _zeros_case(tmp_path: Path, b_ids: list[str]) -> tuple[Path, Path, Path]:
    # A's CSV keeps '007'; B's ids are whatever b_ids says. Labels by hand: 007 and 010 are
    # errors; A and B refute 007 and 009 and support 008 and 010.
    ids = ["007", "008", "009", "010"]
    header = "system,question_id,sentence_id,claim_id,claim,verdict\n"
    verdicts = ["refuted", "supported", "refuted", "supported"]
    rows = [
        f"{s},{1 + i // 2},{sid},c{i},x,{verdicts[i]}\n"
        for s, sids in (("A", ids), ("B", b_ids))
        for i, sid in enumerate(sids)
    ]
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(header + "".join(rows[:4]))
    b.write_text(header + "".join(rows[4:]))
    labels = tmp_path / "l.csv"
    labels.write_text("question_id,sentence_id,has_error\n1,007,true\n1,008,false\n")
    with labels.open("a") as out:
        out.write("2,009,false\n2,010,true\n")
    return a, b, labels


def test_a_labelled_sentence_one_system_writes_without_leading_zeros_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # B's file lost the zeros (a JSON number 7, a spreadsheet's 7). By hand both systems
    # score TP 1 (007), FP 1 (009), FN 1 (010), TN 1 (008). The labels named A's ids only:
    # B's claims were unlabelled and its four labelled sentences "without claims" counted as
    # no error flagged: B TP 0, FP 0, FN 2, TN 2, exit 0.
    a, b, labels = _zeros_case(tmp_path, ["7", "8", "9", "10"])
    args = ["--traces", str(a), "--traces", str(b), "--labels", str(labels), "-m", "refuted"]
    code, out, err = run_cli(["metrics", *args, "--bootstrap", "0"], capsys)
    assert code == 2 and not out
    assert err.count("\n") == 1 and "with other leading zeros" in err and "l.csv:" in err
    a, b, labels = _zeros_case(tmp_path, ["007", "008", "009", "010"])  # the control
    code, out, _ = run_cli(["metrics", *args, "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out)] == [
        ("A", 1, 1, 1, 1),
        ("B", 1, 1, 1, 1),
    ]


ANSWERS = Path(__file__).parent.parent / "docs" / "tutorial" / "answers-by-system.jsonl"


def _answers_labels(tmp_path: Path, rule: str, capsys: pytest.CaptureFixture[str]) -> tuple:
    # the tutorial's answers keyed by system, sysB's first claim of question 2 unlabelled (no
    # 'expert' key: the expert did not rate it)
    records = [json.loads(line) for line in ANSWERS.read_text().splitlines()]
    del records[1]["answers"]["sysB"]["claims"][0]["expert"]
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    labels = tmp_path / "l.jsonl"
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(path), "-o", str(tmp_path / "t.jsonl")),
            *("--labels-out", str(labels), "--option", "rows=answers.*.claims[]"),
            *("--option", "sentence_ids=question", "--option", "label_scope=system"),
            *("--map", "#=question_id", "--map", "answers.*.claims#=sentence_id"),
            *("--map", "answers.*=system", "--map", "question=", "--map", "cited="),
            *("--map", "answers.*.model=verifier", "--verdict", "supported"),
            *("--label-rule", rule),
        ],
        capsys,
    )
    return code, err, labels


def test_a_row_without_the_label_rules_value_is_not_given_the_opposite_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'expert = incorrect -> error' gives every *other value* no_error; the unrated claim has
    # no value, and read as no_error it was one more true negative of sysB: 4 labelled
    # sentences, FN 2, TN 2, where by hand the expert labelled 3 of sysB's 4 claims
    # (1:1 correct, 2:2 and 4:1 incorrect): FN 2, TN 1.
    code, err, labels = _answers_labels(tmp_path, "expert = incorrect -> error", capsys)
    assert code == 2 and err.count("\n") == 1
    assert "a.jsonl:2, field 'expert': no value, and --label-rule" in err
    rule = "expert = incorrect -> error; expert = correct -> no_error; otherwise -> skip"
    code, err, labels = _answers_labels(tmp_path, rule, capsys)
    assert code == 0, err
    sys_b = [json.loads(line) for line in labels.read_text().splitlines()]
    sys_b = [(r["sentence_id"], r["has_error"]) for r in sys_b if r["system"] == "sysB"]
    assert sys_b == [("1:1", False), ("2:2", True), ("4:1", True)]


def test_a_consolidated_column_is_left_out_of_the_raters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three doctors and the 'consolidated' label (their majority) on 12 cases: too few rows for
    # the value rule, and the name held no consensus word, so it was a fourth rater: Fleiss
    # 0.500 for the three doctors' 0.333 (statsmodels' fleiss_kappa, below), exit 0.
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    a = [1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0]
    b = [1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0]
    c = [1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1]
    consolidated = [int(x + y + z >= 2) for x, y, z in zip(a, b, c, strict=True)]
    rows = zip(range(1, 13), a, b, c, consolidated, strict=True)
    path = tmp_path / "r.csv"
    path.write_text(
        "case_no,dr_a,dr_b,dr_c,consolidated\n"
        + "".join(",".join(map(str, row)) + "\n" for row in rows)
    )
    three = fleiss_kappa(aggregate_raters(list(zip(a, b, c, strict=True)))[0])
    four = fleiss_kappa(aggregate_raters(list(zip(a, b, c, consolidated, strict=True)))[0])
    assert (round(three, 3), round(four, 3)) == (0.333, 0.5)
    args = ["agree", str(path), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    (row,) = json.loads(out)
    assert row["raters"] == ["dr_a", "dr_b", "dr_c"] and "consolidated" in row["left_out"]
    assert row["value"] == pytest.approx(three)


def test_unit_ids_that_differ_only_in_leading_zeros_are_named_above_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Rater a's sheet kept '007', rater b's lost the zeros: two units of one rating each,
    # which enter no coefficient, so percent 1/2 over items 2 and 3 ("units 2"), where the
    # three items give 2/3 (007 yes/yes, 2 no/no, 3 yes/no), with no word.
    table = tmp_path / "l.csv"
    table.write_text("item,rater,code\n007,a,yes\n7,b,yes\n2,a,no\n2,b,no\n3,a,yes\n3,b,no\n")
    args = ["agree", str(table), "--stat", "percent", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["value"], row["n_units"]) == (0.5, 2)  # read as given: said, not changed
    assert any(
        "leading zeros are read as different units: '007' and '7'" in n for n in row["notes"]
    )
    table.write_text(table.read_text().replace("7,b", "007,b"))
    code, out, _ = run_cli(args, capsys)
    assert json.loads(out)[0]["value"] == pytest.approx(2 / 3)


GAPPED = (
    "item,r1,r2\n1,1,1\n2,1,2\n3,2,2\n4,2,5\n5,5,5\n6,1,2\n7,5,5\n8,2,1\n9,1,1\n10,5,2\n"
    "11,2,2\n12,1,5\n"
)


def test_weights_on_a_scale_with_unused_levels_are_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A 1-5 scale on which nobody gave 3 or 4. Linear weights are on the ranks of the values
    # given (as scikit-learn's cohen_kappa_score): 2 against 5 weighs as one step, kappa
    # 0.333; on the whole scale (sklearn with labels=[1..5]) 0.366. Both are read as
    # documented, but nothing said which scale the default assumed.
    from sklearn.metrics import cohen_kappa_score

    path = tmp_path / "r.csv"
    path.write_text(GAPPED)
    pairs = [line.split(",")[1:] for line in GAPPED.splitlines()[1:]]
    r1, r2 = [int(a) for a, _ in pairs], [int(b) for _, b in pairs]
    ranks = cohen_kappa_score(r1, r2, weights="linear")
    scale = cohen_kappa_score(r1, r2, weights="linear", labels=[1, 2, 3, 4, 5])
    assert (round(ranks, 3), round(scale, 3)) == (0.333, 0.366)
    args = ["agree", str(path), "--stat", "cohen", "--weights", "linear", "--bootstrap", "0"]
    code, out, _ = run_cli([*args, "--format", "json"], capsys)
    assert code == 0
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(ranks)
    assert (
        row["notes"][0].startswith("Assumed: ")
        and (
            "weights on the ranks of the values given (1, 2, 5), 3, 4 never given (--categories "
            "1,2,3,4,5 weighs the whole scale)"
        )
        in row["notes"][0]
    )
    code, out, _ = run_cli([*args, "--categories", "1,2,3,4,5", "--format", "json"], capsys)
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(scale) and "never given" not in row["notes"][0]
    code, out, _ = run_cli([*args[:-4], "--bootstrap", "0", "--format", "json"], capsys)
    assert "never given" not in json.loads(out)[0]["notes"][0]  # unweighted: nothing to say


MIXED_TRACES = (
    "system,question_id,sentence_id,claim_id,claim,verdict\n"
    "A,q1,s1,c1,x,refuted\nA,q1,s1,c2,y,supported\nA,q1,s2,c3,z,supported\nA,q2,s3,c4,w,refuted\n"
)


def test_a_sentence_labelled_through_its_claims_only_is_refused_at_sentence_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # s1 is labelled per claim (c1 an error, c2 not), s2 and s3 per sentence. By hand, at
    # sentence level with the any-error rule s1 is an error A flags (c1 refuted): TP 2 (s1,
    # s3), TN 1 (s2). Sentence-level metrics read sentence labels only, so s1 counted as
    # unlabelled: n 2, TP 1, TN 1 ("labels cover 2 of 3 sentences"), exit 0.
    traces, labels = tmp_path / "t.csv", tmp_path / "l.csv"
    traces.write_text(MIXED_TRACES)
    labels.write_text("sentence_id,claim_id,has_error\ns1,c1,true\ns1,c2,false\n")
    with labels.open("a") as out:
        out.write("s2,,false\ns3,,true\n")
    args = ["--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    for command in (
        ["metrics", *args, "--bootstrap", "0"],
        ["disagreements", *args, "-o", str(tmp_path / "d.jsonl")],
    ):
        code, out, err = run_cli(command, capsys)
        assert code == 2 and not out and not (tmp_path / "d.jsonl").exists(), command
        assert err.count("\n") == 1 and "sentence 's1' is labelled through its claims" in err
    code, out, _ = run_cli(["metrics", *args, "--level", "claim", "--format", "json"], capsys)
    assert code == 0  # the claim labels serve the claim level
    with labels.open("a") as out_file:
        out_file.write("s1,,true\n")  # the sentence's own label, as the rule gives it
    code, out, _ = run_cli(["metrics", *args, "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0
    (row,) = json.loads(out)
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (3, 2, 0, 0, 1)


def test_the_python_api_makes_the_label_checks_the_cli_makes(tmp_path: Path) -> None:
    # compute_metrics on traces read with failcodes.read_traces (the walkthrough's way) made
    # none of the CLI loader's label checks: the two shapes above, refused by the CLI, read
    # B TP 0, FP 0, FN 2, TN 2 (for TP 1, FP 1, FN 1, TN 1) and n 2, TP 1, TN 1 (for n 3,
    # TP 2, TN 1), no error raised.
    import failcodes as fc
    from failcodes.errors import FailcodesError

    a, b, labels = _zeros_case(tmp_path, ["7", "8", "9", "10"])
    traces = fc.read_traces(a) + fc.read_traces(b)
    with pytest.raises(FailcodesError, match="with other leading zeros"):
        fc.compute_metrics(traces, fc.read_labels(labels), ["refuted"])
    with pytest.raises(FailcodesError, match="with other leading zeros"):
        # B's four labelled sentences read as without claims: FN 007 and 010 for FP 009, FN 010
        fc.find_disagreements(traces, fc.read_labels(labels), "refuted")
    mixed, mixed_labels = tmp_path / "m.csv", tmp_path / "ml.csv"
    mixed.write_text(MIXED_TRACES)
    mixed_labels.write_text("sentence_id,claim_id,has_error\ns1,c1,true\ns2,,false\ns3,,true\n")
    with pytest.raises(FailcodesError, match="labelled through its claims only"):
        fc.compute_metrics(fc.read_traces(mixed), fc.read_labels(mixed_labels), ["refuted"])
    a, b, labels = _zeros_case(tmp_path, ["007", "008", "009", "010"])  # the control
    report = fc.compute_metrics(
        fc.read_traces(a) + fc.read_traces(b), fc.read_labels(labels), ["refuted"]
    )
    assert [(r.system, r.tp, r.fp, r.fn, r.tn) for r in report.results] == [
        ("A", 1, 1, 1, 1),
        ("B", 1, 1, 1, 1),
    ]
    found = fc.find_disagreements(
        fc.read_traces(a) + fc.read_traces(b), fc.read_labels(labels), "refuted"
    )
    assert sorted((d.system, d.kind, d.sentence_id) for d in found) == [
        ("A", "FN", "010"),
        ("A", "FP", "009"),
        ("B", "FN", "010"),
        ("B", "FP", "009"),
    ]
