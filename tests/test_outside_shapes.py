"""Data shapes an outside checker tried (redteam, 2026-12-02): each value computed by hand.

Every test here failed on the code before its fix: the tool printed a number that looked
right and was wrong, with exit 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


@dataclass
class Proc:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Callable[..., Proc]:
    """Run the CLI in-process (the root `main`, so errors exit 2 with one line)."""

    def _run(*args: str | Path) -> Proc:
        capsys.readouterr()
        code, out, err = run_cli([str(a) for a in args], capsys)
        return Proc(code, out, err)

    return _run


def _rows(out: str) -> dict[str, dict[str, object]]:
    return {r["statistic"]: r for r in json.loads(out)}


# ------------------------------------------------------ ratings written two ways (agree)

# A long table: two raters, three items. Written one way, every item is agreed on:
# item 1 yes/yes, item 2 no/no, item 3 no/no -> percent agreement 3/3 = 1.0, Cohen's kappa
# p_o = 1, p_e = (1/3)(1/3) + (2/3)(2/3) = 5/9 -> (1 - 5/9) / (1 - 5/9) = 1.0.
# Before the fix 'yes ' and 'No' were categories of their own: 4 categories, only item 3
# agreed, percent 1/3 = 0.333 with exit 0.
ONE_WAY = "item,rater,code\n1,ann1,yes\n1,ann2,yes\n2,ann1,no\n2,ann2,no\n3,ann1,no\n3,ann2,no\n"


def test_ratings_written_one_way_agree_fully(tmp_path: Path, run) -> None:
    path = tmp_path / "r.csv"
    path.write_text(ONE_WAY)
    res = run(
        "agree",
        path,
        "--stat",
        "percent",
        "--stat",
        "cohen",
        "--bootstrap",
        "0",
        "--format",
        "json",
    )
    assert res.returncode == 0, res.stderr
    rows = _rows(res.stdout)
    assert rows["percent"]["value"] == pytest.approx(1.0)
    assert rows["cohen"]["value"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("table", "line", "field", "needle"),
    [
        # a space after 'yes' on line 3 (item 1, ann2): was its own category
        (ONE_WAY.replace("1,ann2,yes\n", "1,ann2,yes \n"), 3, "code", "'yes '"),
        # 'No' on line 5 beside 'no' on line 4: was its own category
        (ONE_WAY.replace("2,ann2,no\n", "2,ann2,No\n"), 5, "code", "'no' (line 4"),
    ],
)
def test_a_rating_written_two_ways_is_refused(
    tmp_path: Path, run, table: str, line: int, field: str, needle: str
) -> None:
    path = tmp_path / "r.csv"
    path.write_text(table)
    res = run("agree", path, "--stat", "percent", "--bootstrap", "0")
    assert res.returncode == 2
    assert res.stdout == ""
    [err] = res.stderr.splitlines()
    assert err.startswith(f"failcodes: error: {path}:{line}, field '{field}': ")
    assert needle in err


def test_a_wide_table_with_a_rating_in_another_case_is_refused(tmp_path: Path, run) -> None:
    # wide: dr_a wrote 'Yes' on line 2 and 'yes' on line 3; read as given, Fleiss' kappa was
    # computed over three categories (yes, Yes, no)
    path = tmp_path / "w.csv"
    path.write_text("item,dr_a,dr_b\n1,Yes,yes\n2,yes,yes\n3,no,no\n")
    res = run("agree", path, "--bootstrap", "0")
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert err.startswith(f"failcodes: error: {path}:3, field 'dr_a': rating 'yes' is 'Yes'")


# ------------------------------------- one file per system, ids written two ways (metrics)


def _system_file(path: Path, system: str, question: str, verdicts: list[str]) -> Path:
    rows = [
        {
            "system": system,
            "question_id": q,
            "sentence_id": s,
            "claim_id": s,
            "claim": f"claim {s}",
            "verdict": v,
        }
        for (q, s), v in zip(
            [(question, "7"), (question, "8"), ("12", "12")], verdicts, strict=True
        )
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


LABELS_7_8_12 = "sentence_id,has_error\n7,true\n8,false\n12,true\n"


def test_one_file_per_system_with_question_ids_written_two_ways(tmp_path: Path, run) -> None:
    # System A's file numbers the question '007', system B's '7' (a spreadsheet dropped the
    # zeros); the shared labels name sentences 7, 8, 12. Before the fix sentences 7 and 8
    # were counted once under '007' and once under '7' for each system: n = 5 from 3 labels
    # (A: TP 1, FN 2, TN 2), exit 0. Now refused, naming the label and both questions.
    labels = tmp_path / "labels.csv"
    labels.write_text(LABELS_7_8_12)
    a = _system_file(tmp_path / "a.jsonl", "A", "007", ["supported", "supported", "refuted"])
    b = _system_file(tmp_path / "b.jsonl", "B", "7", ["refuted", "supported", "supported"])
    for command in ("metrics", "disagreements", "compare"):
        extra = ("-o", tmp_path / "d.jsonl") if command == "disagreements" else ()
        res = run(
            command, "--traces", a, "--traces", b, "--labels", labels, "-m", "refuted", *extra
        )
        assert res.returncode == 2, (command, res.stdout)
        [err] = res.stderr.splitlines()
        assert err.startswith(
            f"failcodes: error: {labels}:2, field 'sentence_id': sentence '7' is under 2 "
            "questions in the traces ('007', '7')"
        ), err
    assert not (tmp_path / "d.jsonl").exists()
    # written one way, each system has 3 sentences, by hand under 'refuted':
    # A: 7 error / supported -> FN, 8 no error / supported -> TN, 12 error / refuted -> TP
    # B: 7 error / refuted -> TP, 8 -> TN, 12 error / supported -> FN
    b = _system_file(tmp_path / "b.jsonl", "B", "007", ["refuted", "supported", "supported"])
    res = run(
        "metrics",
        "--traces",
        a,
        "--traces",
        b,
        "--labels",
        labels,
        "-m",
        "refuted",
        "--bootstrap",
        "0",
        "--format",
        "json",
    )
    assert res.returncode == 0, res.stderr
    got = {
        r["system"]: (r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(res.stdout)
    }
    assert got == {"A": (3, 1, 0, 1, 1), "B": (3, 1, 0, 1, 1)}


def test_a_sentence_id_under_two_questions_of_one_system(tmp_path: Path, run) -> None:
    # one label for s1, which the traces put under q1 (refuted) and q2 (supported): it was
    # counted twice (n = 2: TP 1, FN 1) from one label; the sentence cannot be told
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        '{"system":"C","question_id":"q1","sentence_id":"s1","claim_id":"c1","claim":"a",'
        '"verdict":"refuted"}\n'
        '{"system":"C","question_id":"q2","sentence_id":"s1","claim_id":"c2","claim":"b",'
        '"verdict":"supported"}\n'
    )
    labels = tmp_path / "l.jsonl"
    labels.write_text('{"sentence_id":"s1","has_error":true}\n')
    res = run("metrics", "--traces", traces, "--labels", labels, "--bootstrap", "0")
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert err.startswith(f"failcodes: error: {labels}:1, field 'sentence_id': sentence 's1' ")
    # per-system labels: each system's sentence 7 is its own, so A's '007' and B's '7' are
    # fine: A 7 error/supported FN, 8 TN; B 7 error/refuted TP, 8 TN
    a = _system_file(tmp_path / "a.jsonl", "A", "007", ["supported", "supported", "refuted"])
    b = _system_file(tmp_path / "b.jsonl", "B", "7", ["refuted", "supported", "supported"])
    labels.write_text(
        "".join(
            json.dumps({"system": s, "sentence_id": i, "has_error": i == "7"}) + "\n"
            for s in "AB"
            for i in ("7", "8")
        )
    )
    res = run(
        "metrics",
        "--traces",
        a,
        "--traces",
        b,
        "--labels",
        labels,
        "-m",
        "refuted",
        "--bootstrap",
        "0",
        "--format",
        "json",
    )
    assert res.returncode == 0, res.stderr
    got = {
        r["system"]: (r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(res.stdout)
    }
    assert got == {"A": (2, 0, 0, 1, 1), "B": (2, 1, 0, 0, 1)}


# ------------------------------------------------- a label rule naming a misspelt value


LABEL_TABLE = (
    "question_id,sentence_id,claim,verdict,label\n"
    "q1,s1,a,refuted,incorrect\n"
    "q1,s2,b,supported,correct\n"
    "q2,s3,c,refuted,partially correct\n"
    "q2,s4,d,supported,incorrect\n"
    "q3,s5,e,supported,correct\n"
)


def test_a_misspelt_label_rule_value_is_refused(tmp_path: Path, run) -> None:
    # 'incorect' is in no row; 'incorrect' (lines 2 and 5) is not in the rule, so before the
    # fix both rows became no-error labels: 1 error (s3) / 4 no-error, exit 0, and metrics
    # then counted s1 (refuted) as a false alarm.
    table = tmp_path / "t.csv"
    table.write_text(LABEL_TABLE)
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    res = run(
        "ingest",
        "generic",
        table,
        "--system",
        "S",
        "-o",
        out,
        "--labels-out",
        labels,
        "--label-rule",
        "label in {incorect, partially correct} -> error",
    )
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert err.startswith(
        f"failcodes: error: {table}:2, field 'label': --label-rule 'label in {{incorect, "
        "partially correct} -> error' names 'incorect', which no row has, and not 'incorrect'"
    ), err
    assert not out.exists() and not labels.exists()
    # spelt right: s1, s3, s4 errors; under 'refuted' s1 TP, s3 TP, s4 FN (supported),
    # s2 and s5 TN -> TP 2, FP 0, FN 1, TN 2
    res = run(
        "ingest",
        "generic",
        table,
        "--system",
        "S",
        "-o",
        out,
        "--labels-out",
        labels,
        "--label-rule",
        "label in {incorrect, partially correct, mixture} -> error",
    )
    assert res.returncode == 0, res.stderr
    # a value merely absent from this sample is said, not refused
    assert "no row has 'mixture'" in res.stderr
    res = run(
        "metrics",
        "--traces",
        out,
        "--labels",
        labels,
        "-m",
        "refuted",
        "--bootstrap",
        "0",
        "--format",
        "json",
    )
    [row] = json.loads(res.stdout)
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (2, 0, 1, 2)


def test_a_misspelt_value_in_a_separate_label_table(tmp_path: Path, run) -> None:
    labels = tmp_path / "l.csv"
    labels.write_text("sentence_id,md\n7,wrong\n8,ok\n12,Wrong\n")
    res = run(
        "ingest",
        "generic-labels",
        labels,
        "-o",
        tmp_path / "l.jsonl",
        "--label-rule",
        "md in {wrnog} -> error",
    )
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert err.startswith(f"failcodes: error: {labels}:2, field 'md': --label-rule ")
    assert "names 'wrnog', which no row has, and not 'wrong'" in err


# ------------------------------------ a tiny sample: every interval shown carries its warning


def test_every_interval_in_the_table_has_its_warning(tmp_path: Path, run) -> None:
    # 3 sentences in 2 questions: 7 error/supported FN, 8 no error/supported TN, 12
    # error/refuted TP. Specificity = TN / (TN + FP) = 1/1 = 1.0; every bootstrap resample
    # (2 questions) gives 1.0 or no value, so its interval is [100.0, 100.0]: zero width,
    # on the boundary, from 2 clusters. The table showed that interval and the notes warned
    # for P, R and F1 only.
    labels = tmp_path / "labels.csv"
    labels.write_text(LABELS_7_8_12)
    a = _system_file(tmp_path / "a.jsonl", "A", "q7", ["supported", "supported", "refuted"])
    res = run("metrics", "--traces", a, "--labels", labels, "-m", "refuted", "--bootstrap", "200")
    assert res.returncode == 0, res.stderr
    assert "[100.0, 100.0]" in res.stdout
    # a long warning wraps: each warning is its line and the lines that continue it
    notes = res.stdout.split("\n– ")
    warned = ["– " + " ".join(n.split()) for n in notes[1:] if n.startswith("CI warning")]
    spec = [line for line in warned if "A/refuted:Spec" in line]
    assert spec and "zero-width interval" in spec[0] and "only 2 clusters (< 20)" in spec[0]
    for short in ("BalAcc", "J", "Acc"):
        assert any(f"A/refuted:{short}" in line for line in warned), short


# -------------------------------------- co-occurring codes in a ratings table (agree --sets)

# Three raters, eight units; a cell joins co-occurring codes with ';' (u5's third rating is
# missing). Computed apart from failcodes (/tmp/rt/s2ref.py of the redteam run: each cell a
# frozenset; Fleiss with missing ratings as Gwet 2014; Krippendorff's alpha from its
# definition, D_o = sum_u sum_{i != j} d(v_ui, v_uj) / (m_u - 1) / n, D_e over all pairs of
# the n pairable values, d = 0/1, MASI 1 - J * M, Jaccard 1 - J):
#   percent 0.666667 (= mean over units of agreeing pairs: 1/3,1,1/3,1,1,1/3,1,1/3 -> 16/24)
#   Fleiss 0.553488, alpha nominal 0.553299, alpha MASI 0.585687, alpha Jaccard 0.604790.
# Read as one category per cell (before: no refusal), 'conflict;overreach' and
# 'overreach;conflict' on u5 disagreed.
SETS_TABLE = (
    "unit_id,r1,r2,r3\n"
    "u1,overreach;conflict,overreach,overreach;conflict\n"
    "u2,overreach,overreach,overreach\n"
    "u3,conflict,conflict;overreach,conflict\n"
    "u4,none,none,none\n"
    "u5,overreach;conflict,conflict;overreach,\n"
    "u6,none,overreach,none\n"
    "u7,conflict,conflict,conflict\n"
    "u8,overreach,none,overreach\n"
)


def test_cells_that_look_like_code_sets_are_refused_then_read_with_sets(
    tmp_path: Path, run
) -> None:
    path = tmp_path / "sets.csv"
    path.write_text(SETS_TABLE)
    res = run("agree", path, "--bootstrap", "0")
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert err.startswith(
        f"failcodes: error: {path}:2, field 'r1': 'overreach;conflict' looks like a set of codes"
    ), err
    assert "--sets ';'" in err
    res = run("agree", path, "--bootstrap", "0", "--sets", ";", "--format", "json")
    assert res.returncode == 0, res.stderr
    got = {  # the exact-set rows (each code's own rows carry its name)
        (r["statistic"], r["weights"]): r["value"]
        for r in json.loads(res.stdout)
        if not r.get("code")
    }
    assert got == pytest.approx(
        {
            ("percent", "none"): 16 / 24,
            ("fleiss", "none"): 0.5534883720930232,
            ("krippendorff", "none"): 0.5532994923857868,
            ("krippendorff", "masi"): 0.5856873822975521,
            ("krippendorff", "jaccard"): 0.6047904191616766,
        },
        abs=1e-9,
    )
    assert all(r["sets"] for r in json.loads(res.stdout) if not r.get("code"))  # codes: 0/1
    first = run("agree", path, "--bootstrap", "0", "--sets", ";").stdout.splitlines()[0]
    assert first.startswith("Assumed: raters (3): r1, r2, r3;")
    assert "code sets per cell, split on ';'" in first


def test_a_long_table_of_code_sets_by_hand(tmp_path: Path, run) -> None:
    # units 1 ({x,y} vs {x}), 2 ({y} vs {y}), 3 ({x} vs {x,y}): percent 1/3; Cohen on exact
    # sets: each rater used {x,y}, {x}, {y} once, p_e = 3 * (1/3)(1/3) = 1/3, p_o = 1/3 -> 0;
    # alpha MASI: d({x,y},{x}) = 1 - (1/2)(2/3) = 2/3, D_o = 2 * 2 * (2/3) / 6 = 4/9,
    # D_e = (8 * 2/3 + 8 * 2/3 + 8 * 1) / 30 = 28/45 -> 1 - (4/9)/(28/45) = 2/7
    path = tmp_path / "long.csv"
    path.write_text("item,rater,codes\n1,a,x;y\n1,b,x\n2,a,y\n2,b,y\n3,a,x\n3,b,x;y\n")
    assert run("agree", path, "--bootstrap", "0").returncode == 2  # looks like sets
    res = run("agree", path, "--bootstrap", "0", "--sets", ";", "--format", "json")
    got = {  # the exact-set rows (each code's own rows carry its name)
        (r["statistic"], r["weights"]): r["value"]
        for r in json.loads(res.stdout)
        if not r.get("code")
    }
    assert got[("percent", "none")] == pytest.approx(1 / 3)
    assert got[("cohen", "none")] == pytest.approx(0.0, abs=1e-12)
    assert got[("krippendorff", "masi")] == pytest.approx(2 / 7)
    # --sets none reads each cell as one category (and says so on the first line)
    res = run("agree", path, "--bootstrap", "0", "--sets", "none", "--stat", "percent")
    assert res.returncode == 0
    assert "one category per cell (not code sets)" in res.stdout.splitlines()[0]


# ------------------------------------- raters as rows and units as columns (a transposed table)


def test_a_transposed_ratings_table_is_refused(tmp_path: Path, run) -> None:
    # one row per rater: read as given, the 10 units were taken for raters and the 3 raters
    # for units (the 'rater' column as unit ids, "values all distinct"): Fleiss -0.122,
    # exit 0. The same ratings one row per unit give Fleiss 0.266 (computed apart from
    # failcodes: p_a = 19/30 = 0.6333, pi_yes = 4.8333/10 -> p_e = 0.4833^2 + 0.5167^2 = 0.5006
    # -> (0.6333 - 0.5006) / (1 - 0.5006) = 0.2659)
    units = [
        "yes,yes,no",
        "no,no,no",
        "yes,yes,yes",
        "no,yes,",
        "yes,no,yes",
        "no,no,",
        "yes,yes,yes",
        "no,no,yes",
        "yes,yes,no",
        "no,no,no",
    ]
    wide = tmp_path / "wide.csv"
    wide.write_text("item,dr_a,dr_b,dr_c\n" + "".join(f"{i},{u}\n" for i, u in enumerate(units)))
    res = run("agree", wide, "--bootstrap", "0", "--stat", "fleiss", "--format", "json")
    assert json.loads(res.stdout)[0]["value"] == pytest.approx(0.26585094549499455)
    cells = [u.split(",") for u in units]
    rows = [
        f"{name}," + ",".join(c[r] for c in cells)
        for r, name in enumerate(["dr_a", "dr_b", "dr_c"])
    ]
    header = "rater," + ",".join(f"u{i}" for i in range(len(units)))
    transposed = tmp_path / "t.csv"
    transposed.write_text(header + "\n" + "\n".join(rows) + "\n")
    res = run("agree", transposed, "--bootstrap", "0", "--stat", "fleiss")
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert err.startswith(
        f"failcodes: error: {transposed}, field 'rater': column 'rater' is named like a rater"
    ), err


# ------------------------------- paired outcomes with a missing one (compare FILE): say it


def test_compare_file_says_which_units_a_missing_outcome_leaves_out(tmp_path: Path, run) -> None:
    # unit 4 has no outcome for B, so it is in no test (paired): 7 units. Cochran's Q by hand
    # on them: column totals A 4, B 2, C 6 (N = 12), row totals 2,3,1,0,2,2,2 (sum of
    # squares 26): Q = (3-1) * (3 * (16 + 4 + 36) - 144) / (3 * 12 - 26) = 2 * 24 / 10 = 4.8
    # (statsmodels cochrans_q: 4.8, p 0.0907). Before, nothing said a unit was left out.
    path = tmp_path / "po.csv"
    path.write_text(
        "unit_id,A,B,C\n1,1,0,1\n2,1,1,1\n3,0,0,1\n4,1,,0\n5,0,0,0\n6,1,0,1\n7,1,0,1\n8,0,1,1\n"
    )
    res = run("compare", path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == (
        "Assumed: systems (3): A, B, C; unit ids: column(s) 'unit_id'; 1 of 8 units have a "
        "missing outcome and are left out of every test (the tests pair the units that have "
        "all outcomes)"
    )
    res = run("compare", path, "--format", "json")
    [q] = [t for t in json.loads(res.stdout)["tests"] if t["test"] == "cochran_q"]
    assert (q["statistic"], q["n"]) == (pytest.approx(4.8), 7)


# ------------------------------- answers keyed by system, one key written in another case


def test_a_system_written_two_ways_is_refused_at_ingest(tmp_path: Path, run) -> None:
    # record 1 keys its answer 'GPT-4', record 2 'gpt-4': read as given, two systems (GPT-4
    # n = 2, gpt-4 n = 1, "3 systems" on the first line), exit 0. Written one way, GPT-4 has
    # 3 sentences (b and d incorrect: asserted -> FN 2, a correct -> TN 1).
    records = [
        {
            "question": "Q1",
            "answers": {
                "GPT-4": {
                    "claims": [
                        {"claim": "a", "expert": "correct"},
                        {"claim": "b", "expert": "incorrect"},
                    ]
                },
                "llama": {"claims": [{"claim": "c", "expert": "correct"}]},
            },
        },
        {
            "question": "Q2",
            "answers": {
                "gpt-4": {"claims": [{"claim": "d", "expert": "incorrect"}]},
                "llama": {"claims": [{"claim": "e", "expert": "incorrect"}]},
            },
        },
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    argv = [
        *("ingest", "generic", path, "-o", out, "--labels-out", labels),
        *("--option", "rows=answers.*.claims[]", "--option", "sentence_ids=question"),
        *("--option", "label_scope=system", "--map", "#=question_id"),
        *("--map", "answers.*.claims#=sentence_id", "--map", "answers.*=system"),
        *("--map", "question=", "--label-rule", "expert = incorrect -> error"),
        *("--verdict", "supported"),
    ]
    res = run(*argv)
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert err == (
        f"failcodes: error: {path}:2, field 'system': system 'gpt-4' is 'GPT-4' ({path}:1) "
        "written another way (case, spacing or Unicode form): it would be scored as a system "
        "of its own; write it one way"
    )
    assert not out.exists() and not labels.exists()
    path.write_text(path.read_text().replace('"gpt-4"', '"GPT-4"'))
    assert run(*argv).returncode == 0
    res = run(
        "metrics", "--traces", out, "--labels", labels, "--bootstrap", "0", "--format", "json"
    )
    got = {
        r["system"]: (r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(res.stdout)
    }
    assert got == {"GPT-4": (3, 0, 0, 2, 1), "llama": (2, 0, 0, 1, 1)}


def test_a_two_rater_statistic_asked_of_three_raters_is_refused(tmp_path: Path, run) -> None:
    # --stat cohen --stat percent on 3 raters printed the percent row alone (Cohen skipped
    # without a word), exit 0. Two raters named: dr_a and dr_b agree on 8 of 10 units
    # (units 4 and 5 differ), each says yes on 5 -> p_e = 0.5*0.5 + 0.5*0.5 = 0.5,
    # kappa = (0.8 - 0.5) / (1 - 0.5) = 0.6
    path = tmp_path / "r.csv"
    path.write_text(
        "item,dr_a,dr_b,dr_c\n1,yes,yes,no\n2,no,no,no\n3,yes,yes,yes\n4,no,yes,\n5,yes,no,yes\n"
        "6,no,no,\n7,yes,yes,yes\n8,no,no,yes\n9,yes,yes,no\n10,no,no,no\n"
    )
    res = run("agree", path, "--bootstrap", "0", "--stat", "cohen", "--stat", "percent")
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert err.startswith("failcodes: error: --stat cohen: it needs exactly two raters, the ")
    res = run(
        "agree",
        path,
        "--bootstrap",
        "0",
        "--stat",
        "cohen",
        "--stat",
        "percent",
        "--raters",
        "dr_a,dr_b",
        "--format",
        "json",
    )
    got = {r["statistic"]: r["value"] for r in json.loads(res.stdout)}
    assert got == pytest.approx({"cohen": 0.6, "percent": 0.8})


@pytest.mark.parametrize("rule", ["md != ok -> error", "md not in {ok} -> error"])
def test_a_negated_label_rule_says_so(tmp_path: Path, run, rule: str) -> None:
    # 'md != ok' was read as column 'md !', so the error named 'md' an unknown field
    labels = tmp_path / "l.csv"
    labels.write_text("sentence_id,md\n7,wrong\n8,ok\n")
    res = run("ingest", "generic-labels", labels, "-o", tmp_path / "l.jsonl", "--label-rule", rule)
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert "is not a rule operator; name the values instead" in err, err
    # the rule it points to: 8 (ok) no error, 7 (wrong) error
    res = run(
        "ingest",
        "generic-labels",
        labels,
        "-o",
        tmp_path / "l.jsonl",
        "--label-rule",
        "md = ok -> no_error",
    )
    assert res.returncode == 0, res.stderr
    rows = [json.loads(line) for line in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert {r["sentence_id"]: r["has_error"] for r in rows} == {"7": True, "8": False}


def test_a_long_table_rater_in_another_case_is_refused(tmp_path: Path, run) -> None:
    # 'Ann2' on line 5 beside 'ann2': three raters (Ann2, ann1, ann2), Cohen impossible and
    # item 2's pair split, exit 0. Written one way: items 1 yes/yes, 2 no/no, 3 no/yes ->
    # percent 2/3; ann1 says yes on 1/3, ann2 on 2/3 -> p_e = (1/3)(2/3) + (2/3)(1/3) = 4/9,
    # Cohen = (2/3 - 4/9) / (1 - 4/9) = (2/9) / (5/9) = 0.4
    table = "item,rater,code\n1,ann1,yes\n1,ann2,yes\n2,ann1,no\n2,Ann2,no\n3,ann1,no\n3,ann2,yes\n"
    path = tmp_path / "l.csv"
    path.write_text(table)
    res = run("agree", path, "--bootstrap", "0", "--stat", "percent")
    assert res.returncode == 2
    [err] = res.stderr.splitlines()
    assert err.startswith(f"failcodes: error: {path}:5, field 'rater': rater 'Ann2' is 'ann2'")
    path.write_text(table.replace("Ann2", "ann2"))
    res = run(
        "agree",
        path,
        "--bootstrap",
        "0",
        "--stat",
        "percent",
        "--stat",
        "cohen",
        "--format",
        "json",
    )
    got = {r["statistic"]: r["value"] for r in json.loads(res.stdout)}
    assert got == pytest.approx({"percent": 2 / 3, "cohen": 0.4})


def test_a_system_written_two_ways_across_files_is_refused(tmp_path: Path, run) -> None:
    # one file per system: 'gpt-4' in a.jsonl, 'GPT-4' in b.jsonl were two systems (the first
    # line said "2 systems"), exit 0; refused by metrics, disagreements and compare, naming
    # the first row of the later name in sorted order ('gpt-4', a.jsonl line 1)
    labels = tmp_path / "labels.csv"
    labels.write_text(LABELS_7_8_12)
    a = _system_file(tmp_path / "a.jsonl", "gpt-4", "q7", ["supported", "supported", "refuted"])
    b = tmp_path / "b.jsonl"
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    b.write_text("".join(json.dumps({**r, "system": "GPT-4"}) + "\n" for r in rows))
    for command in ("metrics", "disagreements", "compare"):
        extra = ("-o", tmp_path / "d.jsonl") if command == "disagreements" else ()
        res = run(command, "--traces", a, "--traces", b, "--labels", labels, *extra)
        assert res.returncode == 2, (command, res.stdout)
        [err] = res.stderr.splitlines()
        assert err == (
            f"failcodes: error: {a}:1, field 'system': system 'gpt-4' is 'GPT-4' written "
            "another way (case, spacing or Unicode form): they would be scored as two "
            "systems; write it one way"
        ), err
