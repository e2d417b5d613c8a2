"""Data shapes the fourth outside check tried (redteam4, 2026-12-02): values by hand.

Each test failed on the code before its fix (a refusal of the tool's own output, or a number
that looked right and was wrong, exit 0).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from failcodes import codebook as codebooks
from failcodes.report.rundir import load_run_dir
from failcodes.report.tables import code_shares
from failcodes.units import UnitKind
from tests.cli_helpers import run_cli
from tests.review_versions import V2_STEPS, v1_reviews_of_a_v2_judge, v2_codebook_file


def _v2_per_trace(root: Path) -> None:
    """A v2 study's per_trace.csv as `attribute` writes it for a judge giving code sets.

    Four traces of verifier v (a multi-label step's set joined by '|'), inference; grounding:
      t0: overreach|conflict_synthesis_failure; ungrounded_reasoning|fabricated_quote
      t1: overreach;                            grounded
      t2: conflict_synthesis_failure;           fabricated_quote
      t3: valid_inference;                      grounded
    every other step its correct code.
    """
    steps = [
        ("overreach|conflict_synthesis_failure", "ungrounded_reasoning|fabricated_quote"),
        ("overreach", "grounded"),
        ("conflict_synthesis_failure", "fabricated_quote"),
        ("valid_inference", "grounded"),
    ]
    rows = [
        {
            "verifier": "v",
            "unit_id": f"t{i}",
            "status": "scored",
            **V2_STEPS,
            "inference": inference,
            "grounding": grounding,
            "all_correct": i == 3,
        }
        for i, (inference, grounding) in enumerate(steps)
    ]
    folder = root / "attribution" / "ds"
    folder.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(folder / "per_trace.csv", index=False)


def test_report_reads_a_v2_coded_table_with_code_sets(tmp_path: Path) -> None:
    """A judge that gives two codes on a multi-label step made the report refuse its own table.

    `failcodes run` of a v2 study judged by an OpenAI-compatible model (73 traces) stopped at
    the report step: "per_trace.csv:3, field 'evidence_selection':
    'selective_coverage|wrong_evidence' is not a subcode" (exit 2). Table 9 by hand over the 4
    traces above: overreach 2/4 = 0.5 (t0, t1), conflict_synthesis_failure 2/4 (t0, t2),
    valid_inference 1/4 (t3); ungrounded_reasoning 1/4 (t0), fabricated_quote 2/4 (t0, t2),
    grounded 2/4 (t1, t3); all steps correct 1/4 (t3).
    """
    _v2_per_trace(tmp_path)
    inputs = load_run_dir(tmp_path, codebook=codebooks.bundled(version=2))
    assert inputs.per_trace is not None
    assert inputs.codebook is not None
    part = inputs.codebook.part(UnitKind.VERIFICATION)
    shares = code_shares(inputs.per_trace, part, by="verifier", flag="all_correct")
    got = {(r.dimension, r.code): r.v for r in shares.itertuples()}
    assert got[("inference", "overreach")] == 0.5
    assert got[("inference", "conflict_synthesis_failure")] == 0.5
    assert got[("inference", "valid_inference")] == 0.25
    assert got[("grounding", "ungrounded_reasoning")] == 0.25
    assert got[("grounding", "fabricated_quote")] == 0.5
    assert got[("grounding", "grounded")] == 0.5
    assert got[("all_correct", "all_correct")] == 0.25


def test_report_error_counts_and_codebook_frequencies_count_each_code_of_a_set(
    tmp_path: Path,
) -> None:
    """The attribution figure's top codes and the codebook table's Freq. column, v2 sets.

    Each counted the joined cell as a code of its own: the figure showed
    'overreach|conflict_synthesis_failure' 1, overreach 1, conflict_synthesis_failure 1 (and
    on the 73-trace study 'ungrounded_reasoning|fabricated_quote' 29 in its top 5, where the
    top codes were overconfident and underconfident, 40 each); the codebook table gave
    wrong_evidence 8 for 34. By hand over the 4 traces above: overreach 2 (t0, t1),
    conflict_synthesis_failure 2 (t0, t2), fabricated_quote 2 (t0, t2), ungrounded_reasoning
    1 (t0); valid_inference 1 (t3), grounded 2 (t1, t3), complete_selection 4.
    """
    _v2_per_trace(tmp_path)
    inputs = load_run_dir(tmp_path, codebook=codebooks.bundled(version=2))
    assert inputs.error_codes == {
        "verification": {
            "overreach": 2,
            "conflict_synthesis_failure": 2,
            "fabricated_quote": 2,
            "ungrounded_reasoning": 1,
        }
    }
    table = inputs.codebook_table
    assert table is not None
    freq = dict(zip(table["subcode"], table["Freq."], strict=True))  # rendered counts
    assert freq["overreach"] == "2"
    assert freq["conflict_synthesis_failure"] == "2"
    assert freq["fabricated_quote"] == "2"
    assert freq["ungrounded_reasoning"] == "1"
    assert freq["valid_inference †"] == "1"
    assert freq["grounded †"] == "2"
    assert freq["complete_selection †"] == "4"


def test_v1_reviews_of_a_v2_multi_label_step_say_their_sets_may_be_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reviews made under codebook v1 (one code per step) corrected a v2 judge's Table 9 quietly.

    20 traces of verifier v; the judge (v2) gives inference {overreach,
    conflict_synthesis_failure} on t0..t9 and valid_inference on t10..t19. A reviewer under v1
    agreed but could give one code: overreach on t0..t9 (the first in codebook order). Migrated
    to v2, each is a set of one, so the human share of conflict_synthesis_failure is 0/20 = 0.0
    where the judge has 10/20 = 50.0 and every reviewer saw it: a number that looks like a
    judge error and is the old codebook's limit. The report printed it (exit 0) with only "20
    migrated to v2" on stderr; it now says, on stderr and in the table's caption, that the
    widened steps' shares may undercount.
    """

    def plan() -> None:
        code, _, err = run_cli(
            ["review", "plan", str(tmp_path), "-p", "verification", "-n", "20"], capsys
        )
        assert code == 0, err

    v1_reviews_of_a_v2_judge(tmp_path, plan)
    cb_file = v2_codebook_file()
    out = tmp_path / "report"
    code, _, err = run_cli(
        ["report", str(tmp_path), "--codebook", str(cb_file), "-o", str(out)], capsys
    )
    assert code == 0, err
    steps = "evidence_selection, grounding, inference, verbal_confidence"
    assert (
        f"Assumed: 20 review(s) of plan 'ds.verification' were migrated from an earlier "
        f"codebook version; {steps} took one code under that version"
    ) in err
    corrected = pd.read_csv(out / "tables" / "reasoning_steps_corrected.csv")
    row = corrected[corrected["code"] == "conflict_synthesis_failure"].iloc[0]
    assert float(row["judge-only (%)"]) == 50.0
    assert str(row["human-only (%)"]).startswith("0.0 [")
    md = (out / "tables" / "reasoning_steps_corrected.md").read_text()
    assert f"20 review(s) made when {steps} took one code" in md


def test_a_hidden_sheet_after_the_first_is_no_reason_to_refuse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a hidden *first* sheet is refused (tests/test_bad_inputs.py, REDTEAM4_CASES): it was
    read without a word, its rows taken for the table the workbook shows. A hidden lookup sheet
    after the table changes nothing. Percent agreement by hand: units 1-4, coder_A yes yes no
    no, coder_B yes no no no: 3 of 4 units agree = 0.75."""
    from openpyxl import Workbook  # type: ignore[import-untyped]

    book = Workbook()
    shown = book.active
    for row in [["unit", "coder_A", "coder_B"], [1, "yes", "yes"], [2, "yes", "no"]]:
        shown.append(row)
    for row in [[3, "no", "no"], [4, "no", "no"]]:
        shown.append(row)
    lookup = book.create_sheet("codes")
    lookup.append(["code"])
    lookup.append(["yes"])
    lookup.sheet_state = "hidden"
    book.save(tmp_path / "r.xlsx")
    code, out, err = run_cli(
        ["agree", str(tmp_path / "r.xlsx"), "--stat", "percent", "--format", "json"], capsys
    )
    assert code == 0, err
    assert json.loads(out)[0]["value"] == 0.75


def test_compare_file_does_not_take_a_gold_column_for_a_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `gold` (or `majority`, `has_error`) column beside the systems was one more system.

    Outcomes of 6 units (1 = flags an error):
        sysA 1 1 1 1 0 0
        sysB 0 0 1 1 0 0
        sysC 1 1 0 0 0 0
        gold 1 1 1 1 0 1
    Read as four systems, Cochran's Q had df 3. Without the gold column (by hand): row sums
    r = 2, 2, 2, 2, 0, 0; column sums C = 4, 2, 2; T = 8, k = 3;
    Q = (k-1)(k sum C^2 - T^2) / (k T - sum r^2) = 2 (3 * 24 - 64) / (24 - 16) = 2.0, df 2.
    Now the table is refused, naming --truth. With --truth gold the tests run on the units gold
    marks (u4 left out: its all-0 row adds nothing to Q either way): Q = 2.0, df 2.
    """
    rows = ["unit_id,sysA,sysB,sysC,gold"]
    cells = [(1, 0, 1, 1), (1, 0, 1, 1), (1, 1, 0, 1), (1, 1, 0, 1), (0, 0, 0, 0), (0, 0, 0, 1)]
    rows += [f"u{i}," + ",".join(map(str, c)) for i, c in enumerate(cells)]
    path = tmp_path / "o.csv"
    path.write_text("\n".join(rows) + "\n")
    code, _, err = run_cli(["compare", str(path)], capsys)
    assert code == 2
    assert "column 'gold' is named like the reference" in err
    code, out, err = run_cli(["compare", str(path), "--truth", "gold", "--format", "json"], capsys)
    assert code == 0, err
    tests = json.loads(out)["tests"]
    q = next(t for t in tests if t["test"] == "cochran_q" and t["comparison"] == "all")
    assert q["statistic"] == 2.0
    assert q["df"] == 2


def test_a_study_run_from_another_working_directory_is_the_same_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resumable from anywhere: the fingerprints hold paths as they are inside the study.

    A study of one agreement step (and the report: 2 steps) run as `failcodes run st` from its
    parent, then as `failcodes run .` from inside it and by its absolute path, re-ran both
    steps each time ("2 step(s) run, 0 already finished"): the steps' requests and inputs were
    fingerprinted with the folder written as given. Now 0 run, 2 finished, until an input
    changes: a rating edited makes the agreement step and the report run again (2 run).
    """
    study = tmp_path / "st"
    code, _, err = run_cli(["init", str(study)], capsys)
    assert code == 0, err
    (tmp_path / "r.csv").write_text("unit,dr_a,dr_b\n1,yes,yes\n2,no,no\n3,yes,no\n")
    (study / "failcodes.toml").write_text(
        'name = "st"\ncodebook = "medical-fact-check.v1.yaml"\n\n[[agreements]]\n'
        'name = "docs"\npath = "../r.csv"\nraters = ["dr_a", "dr_b"]\n'
        'statistics = ["percent"]\nbootstrap = 0\n'
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["run", "st"], capsys)
    assert code == 0, err
    assert "2 step(s) run, 0 already finished" in out + err
    monkeypatch.chdir(study)
    for where in (".", str(study)):
        code, out, err = run_cli(["run", where], capsys)
        assert code == 0, err
        assert "0 step(s) run, 2 already finished" in out + err, where
    (tmp_path / "r.csv").write_text("unit,dr_a,dr_b\n1,yes,yes\n2,no,no\n3,no,no\n")
    code, out, err = run_cli(["run", "."], capsys)
    assert "2 step(s) run, 0 already finished" in out + err
    # percent agreement by hand after the edit: all 3 units agree = 1.0
    rows = json.loads((study / "agreement" / "docs.json").read_text())
    assert rows[0]["statistic"] == "percent"
    assert rows[0]["value"] == 1.0


def test_a_verdict_column_left_empty_is_named_as_a_system_in_no_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One column per system, one of them empty (its verifier failed on every claim).

    With --option no_verdict=drop the 'llama' system vanished from the traces, the metrics
    and every table, and the only word was "4 row(s) without a verdict left out": a study of
    two systems reported one. Now the note counts per system and names the system left with
    no trace. The other system by hand: gpt SUPPORTED, REFUTED, REFUTED, SUPPORTED against
    labels correct, incorrect, incorrect, correct: TP 2, TN 2 (claim level, `refuted`).
    """
    table = tmp_path / "w.csv"
    table.write_text(
        "question_id,sentence_id,claim_id,claim,gpt,llama,label\n"
        "q1,s1,c1,a,SUPPORTED,,correct\nq1,s2,c2,b,REFUTED,,incorrect\n"
        "q2,s3,c3,c,REFUTED,,incorrect\nq2,s4,c4,d,SUPPORTED,,correct\n"
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        [
            "ingest", "generic", str(table), "--verdict-column", "gpt",
            "--verdict-column", "llama", "--label-rule", "label = incorrect -> error",
            "--option", "no_verdict=drop", "-o", str(traces), "--labels-out", str(labels),
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "4 row(s) without a verdict left out (first at line 2; --option " in err
    assert "no_verdict=drop; llama 4)" in err
    assert "system(s) with no verdict on any row, so no trace and in no output: llama" in err
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted",
         "--level", "claim", "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("gpt", 2, 0, 0, 2)
    ]


def test_a_boolean_rating_beside_the_same_rating_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Parquet (or Excel) column of booleans beside a text column of 'true'/'false'.

    r1 (bool) True False True True False False; r2 (text) 'true' 'false' 'true' 'false'
    'false' 'false'. The boolean read as the category 'True', the text as 'true': four
    categories, percent agreement 0.0, exit 0, where the raters agree on 5 of 6 units. Now
    refused as one rating written two ways. Written one way (both boolean), by hand: percent
    5/6; Cohen p_o = 5/6, p_e = (3/6)(2/6) + (3/6)(4/6) = 1/2, kappa = (5/6 - 1/2) / (1/2) = 2/3.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    units = [f"u{i}" for i in range(1, 7)]
    r1 = [True, False, True, True, False, False]
    r2 = ["true", "false", "true", "false", "false", "false"]
    mixed = tmp_path / "mixed.parquet"
    pq.write_table(pa.table({"unit": units, "r1": r1, "r2": r2}), mixed)
    code, _, err = run_cli(["agree", str(mixed), "--stat", "percent"], capsys)
    assert code == 2
    assert "rating 'true' is 'True'" in err
    one_way = tmp_path / "bools.parquet"
    pq.write_table(pa.table({"unit": units, "r1": r1, "r2": [v == "true" for v in r2]}), one_way)
    code, out, err = run_cli(
        ["agree", str(one_way), "--stat", "percent", "--stat", "cohen", "--format", "json"],
        capsys,
    )
    assert code == 0, err
    rows = {r["statistic"]: r["value"] for r in json.loads(out)}
    assert rows["percent"] == pytest.approx(5 / 6)
    assert rows["cohen"] == pytest.approx(2 / 3)


def test_unit_ids_that_differ_only_in_case_are_named_above_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A long table where rater b wrote the unit 'U1' and rater a 'u1'.

    Read as two units of one rating each, neither enters a coefficient: percent agreement
    1/2 over units u2 (no/no) and u3 (yes/no), "units 2", exit 0, where the 3 items give
    2/3 (u1 yes/yes). Ids may differ in case on purpose, so the table is read as given, and
    the line above it now names the pair.
    """
    table = tmp_path / "l.csv"
    table.write_text("item,rater,code\nu1,a,yes\nU1,b,yes\nu2,a,no\nu2,b,no\nu3,a,yes\nu3,b,no\n")
    code, out, err = run_cli(["agree", str(table), "--stat", "percent"], capsys)
    assert code == 0, err
    assert (
        "unit ids that differ only in case, spacing or Unicode form are read as different "
        "units: 'U1' and 'u1'; write them one way if they name one unit"
    ) in out
    code, out, err = run_cli(["agree", str(table), "--stat", "percent", "--format", "json"], capsys)
    assert (json.loads(out)[0]["value"], json.loads(out)[0]["n_units"]) == (0.5, 2)
    table.write_text(table.read_text().replace("U1,b", "u1,b"))
    code, out, err = run_cli(["agree", str(table), "--stat", "percent", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(2 / 3)


def test_compare_says_a_system_that_never_flags_has_f1_zero_in_its_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """compare's F1 is 2TP / (2TP + FP + FN): 0 for a system that never flags an error.

    `metrics` shows that system's F1 as undefined (no predicted errors); compare printed
    "A vs C" with an F1 difference and no word. By hand, truth 1 1 1 0 0 0, A 1 1 0 0 1 0:
    TP 2, FP 1, FN 1, F1(A) = 4 / 6 = 2/3; C 0 0 0 0 0 0: F1 0; difference 2/3.
    """
    rows = ["unit_id,A,C,ref"]
    rows += [f"u{i},{a},0,{t}" for i, (a, t) in enumerate(zip("110010", "111000", strict=True))]
    path = tmp_path / "o.csv"
    path.write_text("\n".join(rows) + "\n")
    args = ["compare", str(path), "--truth", "ref", "--metrics", "f1", "--resamples", "200"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert (
        "C never flag(s) an error: F1 counted as 0 in the F1 tests (2TP / (2TP + FP + FN)), "
        "where metrics shows it undefined (no predicted errors)"
    ) in out.splitlines()[0]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    f1 = next(t for t in json.loads(out)["tests"] if t["test"] == "permutation_f1")
    assert f1["effect"] == pytest.approx(2 / 3)
