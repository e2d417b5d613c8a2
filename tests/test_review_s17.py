"""Review of session 17's refusals (t18rev, issue 30): real-looking inputs each refused falsely.

Each test states the input, what main did, and what it does now; a refusal test asserts the
exact line, exit 2 and that nothing was written; a count asserts the hand count beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_text
from tests.conftest import shared_data

#: COVID-Fact's shape (claim, label, evidence; no id column): claim A is in the file twice,
#: line for line, as 5 claims are in the published COVIDFACT_dataset.jsonl (lines 1639/2805).
_CLAIMS = [
    {"claim": "Masks reduce exposure", "label": "REFUTED", "evidence": ["e1"]},
    {"claim": "Vitamin D cures it", "label": "SUPPORTED", "evidence": ["e2"]},
    {"claim": "Masks reduce exposure", "label": "REFUTED", "evidence": ["e1"]},
]
_COVIDFACT_ARGS = [
    "--option",
    "ids=line",
    "--option",
    "unmapped=drop",
    "--map",
    "label=verdict",
    "--alias",
    "SUPPORTED=supported",
    "--alias",
    "REFUTED=refuted",
    "--passage-column",
    "evidence=covidfact-gold",
    "--label-rule",
    "label = REFUTED -> error",
    "--system",
    "covidfact-oracle",
    "--evidence",
    "provided",
]


def test_a_published_data_sets_repeated_rows_have_a_way_through_ids_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 64cce97 refused a row repeating an earlier one under ids=line with no way through for a
    # data set published so: docs/trace-format.md's COVID-Fact ingest exited 2 on line 2805
    # (its 4,086 claims hold 5 twice). Now the line names --option duplicates=keep, which
    # keeps each row a sentence of its own: by hand A refuted/error twice (TP 2), B supported
    # and clean (TN 1): n 3, the published count.
    src = write_text(tmp_path / "cf.jsonl", "".join(json.dumps(r) + "\n" for r in _CLAIMS))
    out, labels = tmp_path / "cf.parquet", tmp_path / "cf_labels.csv"
    args = ["ingest", "generic", str(src), "-o", str(out), "--labels-out", str(labels)]
    code, stdout, err = run_cli([*args, *_COVIDFACT_ARGS], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:3: the row repeats line 1 cell for cell: with --option "
        "ids=line each row is a sentence of its own, so this one would count twice (a row "
        "the export copied?); delete the copy, or, if the answer says it twice, give each row "
        "its sentence id (a sentence_id column); rows a published data set holds twice: "
        "--option duplicates=keep keeps each as a sentence of its own"
    ]
    assert not out.exists() and not labels.exists()
    keep = [*args, *_COVIDFACT_ARGS, "--option", "duplicates=keep"]
    assert run_cli(keep, capsys)[0] == 0
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0, err
    [row] = json.loads(stdout)
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (3, 2, 0, 0, 1)
    # keep without ids=line: given ids refuse a repeated claim id already
    code, _, err = run_cli([*args, "--option", "duplicates=keep", "--map", "label=verdict"], capsys)
    assert (code, err.strip()) == (
        2,
        "failcodes: error: --option duplicates=keep goes with --option ids=line",
    )


def test_the_documented_covidfact_ingest_gives_the_published_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/trace-format.md: '4,086 / 2,790 (the counts in the data set's SOURCE.md)'; main
    # refused it at line 2805 (a repeat of line 1639), exit 2
    src = shared_data("covidfact", "COVIDFACT_dataset.jsonl")
    out, labels = tmp_path / "cf.parquet", tmp_path / "cf_labels.csv"
    args = ["ingest", "generic", str(src), "-o", str(out), "--labels-out", str(labels)]
    code, stdout, err = run_cli([*args, *_COVIDFACT_ARGS, "--option", "duplicates=keep"], capsys)
    assert code == 0, err
    assert "wrote 4,086 traces" in stdout + err
    assert "2,790 error / 1,296 no-error" in stdout + err


AGREE_JSON = ["--bootstrap", "0", "--format", "json"]

#: Three clinicians' 0-100 confidence (a visual analogue scale); unit 6 rated 99, 95, 97.
_VAS = "item,r1,r2,r3\n1,20,25,30\n2,50,45,55\n3,70,75,65\n4,90,95,92\n5,10,15,12\n6,99,95,97\n"


def test_a_scales_top_beside_scores_near_it_is_a_rating_not_a_missing_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 92333d8 refused a missing-value code more than one step past the other ratings: 99 on a
    # 0-100 scale beside scores up to 97 was "a missing-value code?", exit 2, its only way
    # through --categories listing 101 values. Within a tenth of the others' range past
    # their top it is read: interval alpha 0.985907 (krippendorff.alpha(reliability_data=
    # [[20,50,70,90,10,99],[25,45,75,95,15,95],[30,55,65,92,12,97]], level_of_measurement=
    # 'interval') = 0.9859069588).
    table = write_text(tmp_path / "vas.csv", _VAS)
    args = ["agree", str(table), "--level", "interval", "--stat", "krippendorff", *AGREE_JSON]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(0.9859069588)
    # 999 beside them is still refused (999 - 97 > 87 / 10), and 9 beside 1-7 (a 9-point
    # scale with no 8, or SPSS's 9: the categories say which)
    write_text(table, _VAS.replace("99,95,97", "999,95,97"))
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "'999' among ratings 10-97: a missing-value code" in err


def test_many_raters_named_as_raters_over_few_units_are_not_a_transposed_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 92333d8 refused six or more rater columns over at most half as many rows as a table of
    # one row per rater: 8 clinicians rater1..rater8 over 4 cases (a panel's pilot) exited 2
    # with 'is the table one row per rater?', though each column is named as a rater (a
    # transposed table's columns are its units). Read now. Fleiss by hand: ones per case 5,
    # 4, 2, 4 of 8; P_i (34, 32, 40, 32 - 8) / 56 -> mean 53/112; p = 15/32, 17/32 -> P_e
    # 257/512; kappa (53/112 - 257/512) / (255/512) = -103/1785.
    rows = ["0,0,1,0,1,1,1,1", "0,0,1,0,1,1,0,1", "1,0,0,1,0,0,0,0", "1,0,1,0,0,1,1,0"]
    header = "case," + ",".join(f"rater{i}" for i in range(1, 9))
    text = header + "\n" + "".join(f"c{i},{r}\n" for i, r in enumerate(rows, 1))
    table = write_text(tmp_path / "panel.csv", text)
    code, stdout, err = run_cli(["agree", str(table), "--stat", "fleiss", *AGREE_JSON], capsys)
    assert code == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(-103 / 1785)
    # the same cells under unit-like names (Q1..Q8) are still refused as transposed
    write_text(table, text.replace("rater", "Q"))
    code, _, err = run_cli(["agree", str(table), "--stat", "fleiss", *AGREE_JSON], capsys)
    assert code == 2 and "is the table one row per rater and one column per unit?" in err


def test_a_study_file_missing_its_top_level_name_names_no_datasets_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # t17rev: the study file without its top-level `name` said "failcodes.toml:11, field
    # 'name'": line 11 is the [[datasets]] table's own name (which is there). A top-level key
    # is above the first table's header: no line of it, so none is named; a data set's
    # missing name points at its [[datasets]] header.
    study = tmp_path / "s"
    assert run_cli(["init", str(study)], capsys)[0] == 0
    toml = study / "failcodes.toml"
    text = toml.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    top = lines.index(f'name = "{study.name}"\n')
    write_text(toml, "".join(lines[:top] + lines[top + 1 :]))
    code, _, err = run_cli(["run", str(study), "--plan"], capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {toml}, field 'name': missing required field",
    )
    # the first data set's name removed instead: its [[datasets]] header's line
    first = next(i for i, line in enumerate(lines) if line.startswith("name = ") and i > top)
    header = lines.index("[[datasets]]\n")
    assert header < first
    write_text(toml, "".join(lines[:first] + lines[first + 1 :]))
    code, _, err = run_cli(["run", str(study), "--plan"], capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {toml}:{header + 1}, field 'datasets[0].name': missing required field",
    )


def test_a_json_list_on_one_line_under_ids_line_names_its_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pandas' df.to_json(path, orient="records") writes the list on one line: under --option
    # ids=line every record got the id L1 and the ingest said "duplicate (system, claim_id) =
    # ('s', 'L1'); first at line 1", exit 2, no way through named (the same list indented
    # was read). Now the line says why and names --map '#=sentence_id' (each record's place
    # in the list). By hand: A refuted + error (TP), B supported + clean (TN), C refuted +
    # error (TP): n 3, TP 2, TN 1.
    records = [
        {"sentence": "A", "verdict": "refuted", "err": "yes"},
        {"sentence": "B", "verdict": "supported", "err": "no"},
        {"sentence": "C", "verdict": "refuted", "err": "yes"},
    ]
    src = write_text(tmp_path / "d.json", json.dumps(records))
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(src), "-o", str(out), "--labels-out", str(labels)]
    args += ["--system", "s", "--label-rule", "err = yes -> error"]
    code, stdout, err = run_cli([*args, "--option", "ids=line"], capsys)
    assert (code, stdout) == (2, "")
    assert err.strip() == (
        f"failcodes: error: {src}:1: a second record starts on this line (a JSON list written "
        "on one line, as pandas' to_json writes it): --option ids=line numbers the rows by "
        "their line; number them by their place in the list with --map '#=sentence_id' instead"
    )
    assert not out.exists() and not labels.exists()
    assert run_cli([*args, "--map", "#=sentence_id"], capsys)[0] == 0
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0, err
    [row] = json.loads(stdout)
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (3, 2, 0, 0, 1)
