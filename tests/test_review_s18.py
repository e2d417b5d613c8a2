"""Review of session 18's refusals and readers (t19rev, issue 30).

Each test states the input, what main did, and what it does now; a refusal test asserts the
exact line, exit 2 and that nothing was written; a count asserts the hand count beside it.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from failcodes import jsonio, tableio
from tests.cli_helpers import run_cli, write_text

#: One answer's two sentences, one claim a row; the second row's sentence cell has a trailing
#: space and the fourth's a double space (a spreadsheet's hand-copied cells).
_ONE_ANSWER = (
    "system,question_id,sentence_id,claim_id,claim,sentence,verdict\n"
    "A,q1,s1,c1,Aspirin lowers MI risk.,Aspirin lowers MI and stroke risk.,supported\n"
    "A,q1,s1,c2,Aspirin lowers stroke risk.,Aspirin lowers MI and stroke risk. ,refuted\n"
    "A,q1,s2,c3,Statins lower LDL.,Statins lower LDL.,supported\n"
    "A,q1,s2,c4,Statins lower LDL a lot.,statins lower  LDL.,supported\n"
)


def test_one_sentence_written_with_other_spaces_or_case_is_one_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 4202fad refused a sentence id given two texts; the same text with a trailing space
    # (line 3) was refused too: "sentence 's1' of question 'q1' (system 'A') has another text
    # here than at line 2", exit 2, with no way through (the two are one sentence: another id
    # would split it). Case, runs of spaces and Unicode form are now folded (spelling_key).
    # By hand, labels s1 an error, s2 none: s1's claims flag c2 (refuted) -> TP; s2 none
    # flagged -> TN: n 2, TP 1, TN 1.
    src = write_text(tmp_path / "t.csv", _ONE_ANSWER)
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert code == 0, err
    labels = write_text(
        tmp_path / "l.jsonl",
        '{"sentence_id": "s1", "has_error": true}\n{"sentence_id": "s2", "has_error": false}\n',
    )
    args = ["metrics", "--traces", str(out), "--labels", str(labels), "--format", "json"]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    [row] = json.loads(stdout)
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (2, 1, 0, 0, 1)


def test_another_sentence_under_one_id_is_still_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the fold is no way past 4202fad's refusal: another sentence under s2 is refused
    text = _ONE_ANSWER.replace("statins lower  LDL.", "Statins raise HDL.")
    src = write_text(tmp_path / "t.csv", text)
    out = tmp_path / "t.jsonl"
    code, stdout, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:5, field 'sentence': sentence 's2' of question 'q1' (system "
        "'A') has another text here than at line 4: two sentences with one id would be one, "
        "their claims pooled; give each sentence its own id (ids repeated across sub-sets of "
        "the data: map the sub-set into the ids, or ingest each sub-set apart)"
    ]
    assert not out.exists()


@pytest.mark.parametrize("command", ["ingest", "agree"])
def test_a_csv_line_past_the_cell_limit_is_refused_before_it_is_held(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    # The csv module is given a line whole before its field limit: a 400 MB line (one
    # unquoted cell) took ingest 859 MB and agree 944 MB of peak RSS before their one line
    # (/usr/bin/time -v; 2 GB would take ~4). Now a line is read at most CSV_FIELD_LIMIT
    # characters at once (168 / 253 MB). Here the limit is 1 M characters and the line 16 M:
    # main held the line whole (over 16 MB traced, imports aside), now under 8 MB.
    monkeypatch.setattr(tableio, "CSV_FIELD_LIMIT", 1 << 20)
    if command == "ingest":
        head, cell = "system,question_id,sentence_id,claim_id,claim,verdict\n", "A,q1,s1,c1,"
        src = write_text(tmp_path / "t.csv", f"{head}{cell}{'a' * (16 << 20)},supported\n")
        out = tmp_path / "t.jsonl"
        args = ["ingest", "generic", str(src), "-o", str(out)]
    else:
        src = write_text(tmp_path / "r.csv", f"id,r1,r2\nu1,{'a' * (16 << 20)},yes\n")
        out = tmp_path / "agree.json"
        args = ["agree", str(src), "--bootstrap", "0", "-o", str(out)]
    run_cli(args, capsys)  # its imports (pandas...) not traced
    tracemalloc.start()
    try:
        code, stdout, err = run_cli(args, capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:2: a line of over 1 M characters (no trace or label row is "
        "that long)"
    ]
    assert not out.exists()
    assert peak < 8 << 20


def _passage(pid: str, gold: bool) -> dict[str, object]:
    return {"passage_id": pid, "rank": 1, "text": f"text {pid}", "gold": gold}


def test_attributes_refusal_of_a_repeated_disagreement_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 4291ed9 refused a disagreements file holding its records twice saying "disagreement 3
    # has the id of disagreement 1", naming no line: with a blank line after the first
    # record (a file edited by hand), record 3 is line 4. Now file:line, as every reader's.
    traces = tmp_path / "t.jsonl"
    claims = [("s1", "c1", True), ("s2", "c2", True)]
    traces.write_text(
        "".join(
            json.dumps(
                {"system": "A", "question_id": "q1", "sentence_id": s, "claim_id": c}
                | {"claim": f"claim {c}", "verdict": "refuted", "passages": [_passage(c, g)]}
            )
            + "\n"
            for s, c, g in claims
        )
    )
    labels = write_text(
        tmp_path / "l.jsonl",
        '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n'
        '{"sentence_id": "s2", "question_id": "q1", "has_error": false}\n',
    )
    once = tmp_path / "d.jsonl"
    args = ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(once)]
    assert run_cli(args, capsys)[0] == 0
    first, second = once.read_text().splitlines()
    twice = write_text(tmp_path / "twice.jsonl", f"{first}\n\n{second}\n{first}\n{second}\n")
    out = tmp_path / "att"
    code, stdout, err = run_cli(["attribute", "--from", str(twice), "-o", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {twice}:4, field 'id': the disagreement here has the id of the one "
        f"at line 1 ({json.loads(first)['id']}: system 'A', question 'q1', sentence 's1'): it "
        "would be attributed (and counted) twice; a file holding its disagreements twice "
        "(appended again?), or two data sets' files joined whose systems and ids coincide: "
        "attribute each file apart"
    ]
    assert not out.exists()


@pytest.mark.parametrize("command", ["attribute", "judge"])
def test_a_jsonl_first_line_past_the_limit_is_not_held_to_sniff_the_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    # attribute --from and judge --from look at a JSONL file's first line (disagreements or
    # traces?) before its reader, which refuses a line past MAX_LINE unheld: the sniff read
    # it whole, a 400 MB line 881 / 886 MB of peak RSS before the reader's one line
    # (/usr/bin/time -v); now 190 / 195 MB. Here the limit is 1 MB and the line 16 MB.
    monkeypatch.setattr(jsonio, "MAX_LINE", 1 << 20)
    src = write_text(tmp_path / "t.jsonl", '{"system": "A", "claim": "' + "a" * (16 << 20) + '"}\n')
    out = tmp_path / "out"
    if command == "attribute":
        args = ["attribute", "--from", str(src), "-o", str(out)]
    else:
        args = ["judge", "retrieval", "--from", str(src), "--judge", "offline", "-o", str(out)]
    run_cli(args, capsys)  # its imports not traced
    tracemalloc.start()
    try:
        code, stdout, err = run_cli(args, capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:1: a line of over 1 MB (no trace or label record is that "
        "long: a JSON document? name it .json)"
    ]
    assert not out.exists()
    assert peak < 8 << 20


#: A panel's pilot: 8 raters of 4 cases (yes/no): c1 8 yes; c2 6 yes, 2 no; c3 2 yes, 6 no;
#: c4 1 yes, 7 no.
_PILOT = [
    ("c1", "yyyyyyyy"),
    ("c2", "yyyyyynn"),
    ("c3", "nnyynnnn"),
    ("c4", "nnnnnnny"),
]


@pytest.mark.parametrize("rater", ["r", "reader"])
def test_raters_r1_to_r8_over_four_cases_are_a_panel_not_a_transposed_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rater: str
) -> None:
    # 72d20f0 read rater1..rater8 over 4 cases (every column named like a rater), but r1..r8
    # and reader1..reader8 under 'case' were refused as transposed ("8 rater columns (r1,
    # r2, r3, ...) for 4 rows: is the table one row per rater ...?"), exit 2. Fleiss by hand,
    # n = 8: P_i = (sum n_ij^2 - 8)/56 = 56, 32, 32, 42 /56, mean 162/224 = 81/112; p_yes =
    # 17/32, P_e = (17^2 + 15^2)/32^2 = 257/512; kappa = (81/112 - 257/512)/(255/512) =
    # 793/1785 = 0.44426.
    header = ",".join(f"{rater}{i}" for i in range(1, 9))
    rows = "".join(f"{case},{','.join(cells)}\n" for case, cells in _PILOT)
    table = write_text(tmp_path / "pilot.csv", f"case,{header}\n{rows}")
    args = ["agree", str(table), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    [row] = json.loads(stdout)
    assert (row["n_units"], row["n_raters"]) == (4, 8)
    assert row["value"] == pytest.approx(793 / 1785, abs=1e-9)
    # one row per reader and one column per response (r1..r8) is still refused
    moved = write_text(tmp_path / "readers.csv", table.read_text().replace("case,", "reader,", 1))
    code, stdout, err = run_cli([*args[:1], str(moved), *args[2:]], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip() == (
        f"failcodes: error: {moved}:1: 8 rater columns ({rater}1, {rater}2, {rater}3, ...) for "
        "4 rows: is the table one row per rater and one column per unit? agreement needs one "
        "row per unit: transpose it (to read it as given, name the raters with --raters)"
    )


def test_a_system_partly_retrieved_is_refused_naming_the_input_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 973afcf's refusal (ingest, disagreements, attribute --from traces) was a ConfigError
    # naming no file: "failcodes: error: system 'B': 1 of its 2 traces have neither ...".
    # B's two traces in two files, c1 with a passage, c2 none: the files are named now.
    def trace(sentence: str, passages: list[dict[str, object]]) -> str:
        record = {"system": "B", "question_id": "q1", "sentence_id": sentence}
        record |= {"claim_id": sentence, "claim": "x", "verdict": "refuted"}
        return json.dumps(record | {"passages": passages}) + "\n"

    first = write_text(tmp_path / "a.jsonl", trace("s1", [_passage("p1", True)]))
    second = write_text(tmp_path / "b.jsonl", trace("s2", []))
    out = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(first), str(second), "-o", str(out)]
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {first}, {second}, field 'passages': system 'B': 1 of its 2 traces "
        "have neither passages nor a retriever, the others passages: read trace by trace, "
        "those would be closed-book (evidence source none) and their disagreements blamed on "
        "verification, not on a retrieval that found nothing; declare the pipeline's evidence: "
        "--evidence B=retrieved (or provided, none; a study: its [[datasets.pipelines]] "
        "evidence), or --retriever NAME; a pipeline that retrieves for some claims only: each "
        "trace's evidence_source (a field or column)"
    ]
    assert not out.exists()


def test_a_rater_of_only_yes_beside_one_of_only_no_is_read_as_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # c7e6bc6 refused raters who share no rating, text among them, as "one scale written two
    # ways?": a pilot where r1 said yes to all 4 units and r2 no to all 4 was refused, exit
    # 2, though the two never agreed. By hand: percent 0/4 = 0; Cohen p_o 0, p_e = 1*0 + 0*1
    # = 0, kappa (0 - 0)/(1 - 0) = 0. TRUE beside 1 (one scale two ways) is still refused.
    table = write_text(
        tmp_path / "pilot.csv", "id,r1,r2\n" + "".join(f"u{i},yes,no\n" for i in range(4))
    )
    args = ["agree", str(table), "--stat", "percent", "--stat", "cohen", "--bootstrap", "0"]
    code, stdout, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    assert [(r["statistic"], r["value"], r["n_units"]) for r in json.loads(stdout)] == [
        ("percent", 0.0, 4),
        ("cohen", 0.0, 4),
    ]
    spelt = write_text(
        tmp_path / "two.csv", "id,r1,r2\n" + "".join(f"u{i},TRUE,1\n" for i in range(4))
    )
    code, stdout, err = run_cli(["agree", str(spelt), *args[2:]], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip() == (
        f"failcodes: error: {spelt}:1, field 'r2': rater columns 'r1' and 'r2' share no rating "
        "(r1: 'TRUE'; r2: '1'): one scale written two ways? read so they never agree (kappa at "
        "or below 0); write the ratings one way (to read them as given, name the raters with "
        "--raters)"
    )
