"""Session 31 (t31read): the readers attacked with files nobody had tried.

Each test writes the file a real program writes (a spreadsheet in another language's CSV,
pyarrow, openpyxl) and asserts what is read, or the one line that refuses it; expected
values are hand-counted from the rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

# s1 correct, s2 and s3 errors, s4 correct: 2 error labels of 4
_GERMAN = (
    "question_id,sentence_id,claim,verdict,system,is_wrong\n"
    "q1,s1,Aspirin helps,supported,A,FALSCH\n"
    "q1,s2,Dose is 5g,refuted,A,WAHR\n"
    "q2,s3,Water is wet,supported,A,WAHR\n"
    "q2,s4,Sky green,refuted,A,FALSCH\n"
)


@pytest.mark.parametrize(
    ("true", "false"),
    [
        ("WAHR", "FALSCH"),  # German Excel saving a TRUE/FALSE column as CSV
        ("VRAI", "FAUX"),  # French
        ("VERDADERO", "FALSO"),  # Spanish
        ("ja", "nein"),
    ],
)
@pytest.mark.parametrize("named", ["true", "1", "yes"])
def test_a_rule_naming_true_on_truth_words_of_another_language_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], true: str, false: str, named: str
) -> None:
    # `is_wrong = true -> error` on a column a German spreadsheet saved (WAHR/FALSCH) matched
    # no row: every row got no_error, '0 error / 4 no-error sentence labels' for 2 / 2, exit 0
    # with a note. 'Y'/'N' or '1'/'0' there were already refused as the same truth value
    # written another way; so is WAHR now, named at its first row (s2, line 3).
    table = tmp_path / "t.csv"
    table.write_text(_GERMAN.replace("WAHR", true).replace("FALSCH", false), encoding="utf-8")
    out, labels = tmp_path / "o.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--labels-out", str(labels),
         "--label-rule", f"is_wrong = {named} -> error"], capsys
    )  # fmt: skip
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:3, field 'is_wrong': --label-rule 'is_wrong = {named} -> "
        f"error' names '{named}', which no row has, and not '{true}', which rows have (the "
        "same truth value written another way? those rows got the 'no_error' label): name the "
        "values as the column writes them"
    )
    assert not out.exists() and not labels.exists()


def test_a_rule_naming_the_columns_own_truth_word_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the way through: name the word the column writes; s2 and s3 (WAHR) are the errors
    table = tmp_path / "t.csv"
    table.write_text(_GERMAN, encoding="utf-8")
    labels = tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl"), "--labels-out",
         str(labels), "--label-rule", "is_wrong = wahr -> error"], capsys
    )  # fmt: skip
    assert code == 0, err
    read = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    assert [(x["sentence_id"], x["has_error"]) for x in read] == [
        ("s1", False),
        ("s2", True),
        ("s3", True),
        ("s4", False),
    ]
