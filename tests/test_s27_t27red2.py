"""Session 27, t27red2: outside shapes for agreement, review and corrected shares (issue 30)."""

from __future__ import annotations

import json

import pytest

from tests.cli_helpers import run_cli

# Five LLMs (rows) x three claims (columns): a table of one row per rater, as a spreadsheet of
# model outputs is often kept.
_MODELS_AS_ROWS = (
    "model,claim_1,claim_2,claim_3\n"
    "gpt,SUPPORTED,REFUTED,SUPPORTED\n"
    "claude,SUPPORTED,REFUTED,REFUTED\n"
    "llama,SUPPORTED,SUPPORTED,REFUTED\n"
    "mistral,SUPPORTED,REFUTED,REFUTED\n"
    "qwen,REFUTED,REFUTED,SUPPORTED\n"
)


@pytest.mark.parametrize("header", ["model", "LLM", "model_name"])
def test_a_table_of_one_row_per_model_is_refused(tmp_path, capsys, header) -> None:
    # main read the claims as 3 raters and the 5 models as units (the 'model' column taken as
    # the unit id by its distinct values) at exit 0: Fleiss -0.339 (statsmodels fleiss_kappa
    # over the rows as given: -0.3393), where the models' agreement over the 3 claims is
    # 0.0625 (fleiss_kappa on the transpose; by hand: P_bar = (0.6 + 0.6 + 0.4) / 3 = 0.5333,
    # p_SUPPORTED = 7/15, P_e = (7/15)^2 + (8/15)^2 = 0.5022, (0.5333 - 0.5022) / 0.4978).
    # 'coder' or 'judge' in that place was refused so already.
    table = tmp_path / "models.csv"
    table.write_text(_MODELS_AS_ROWS.replace("model,", f"{header},", 1))
    args = ["agree", str(table), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert (code, out, err.splitlines()) == (
        2,
        "",
        [
            f"failcodes: error: {table}, field '{header}': column '{header}' is named like a "
            "rater and holds one value per row: is the table one row per rater and one column "
            "per unit? agreement needs one row per unit: transpose it (or give --unit-column "
            "if that column holds unit ids)"
        ],
    )
    # transposed, it reads the models' agreement
    flipped = tmp_path / "flipped.csv"
    flipped.write_text(
        "unit,gpt,claude,llama,mistral,qwen\n"
        "claim_1,SUPPORTED,SUPPORTED,SUPPORTED,SUPPORTED,REFUTED\n"
        "claim_2,REFUTED,REFUTED,SUPPORTED,REFUTED,REFUTED\n"
        "claim_3,SUPPORTED,REFUTED,REFUTED,REFUTED,SUPPORTED\n"
    )
    code, out, err = run_cli(["agree", str(flipped), *args[2:]], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(0.0625)
    # named as the unit column, with the raters named, it is read as given
    raters = ["--raters", "claim_1,claim_2,claim_3"]
    code, out, err = run_cli([*args, "--unit-column", header, *raters], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(-0.3392857142857)


def test_a_wide_table_with_a_model_column_of_repeated_values_is_read(tmp_path, capsys) -> None:
    # 'model' as a covariate (the system each unit came from, values repeating) is no table of
    # one row per rater: r1 and r2 agree on 3 of 4 units (by hand), as before.
    table = tmp_path / "wide.csv"
    table.write_text("id,model,r1,r2\n1,gpt,a,a\n2,gpt,b,b\n3,llama,a,b\n4,llama,b,b\n")
    args = ["agree", str(table), "--stat", "percent", "--bootstrap", "0", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(3 / 4)


@pytest.mark.parametrize(
    "header", ["name,claim_1,claim_2,claim_3", "reader,Passage 1,Passage 2,Passage 3"]
)
def test_a_table_whose_rater_columns_are_named_like_claims_is_refused(
    tmp_path, capsys, header
) -> None:
    # The same five LLMs as rows under a header no rater word names: main read the claims as
    # raters at exit 0 (Fleiss -0.339 for the models' 0.0625, as above), where 'q1' or
    # 'case_1' columns were refused already.
    table = tmp_path / "models.csv"
    table.write_text(header + "\n" + _MODELS_AS_ROWS.split("\n", 1)[1])
    args = ["agree", str(table), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    first = header.split(",")[1:]
    assert (code, out, err.splitlines()) == (
        2,
        "",
        [
            f"failcodes: error: {table}:1: 3 rater columns ({', '.join(first)}) named like "
            "units: is the table one row per rater and one column per unit? agreement needs "
            "one row per unit: transpose it (to read it as given, name the raters with --raters)"
        ],
    )


def test_a_long_table_with_a_time_column_is_read_as_long(tmp_path, capsys) -> None:
    # unit,annotator,label and each annotation's seconds (as annotation tools export them):
    # main refused it asking for --raters ('seconds named like ... a time and 1 other column
    # left; name the raters with --raters'), which would read annotator and label as two
    # raters of a wide table. Read as long, A and B agree on 3 of 4 units; Cohen by hand:
    # p_o 0.75, A says yes on 2/4, B on 3/4: p_e = 0.5 * 0.75 + 0.5 * 0.25 = 0.5, kappa 0.5.
    table = tmp_path / "long.csv"
    table.write_text(
        "unit,annotator,label,seconds\n1,A,yes,12\n1,B,yes,30\n2,A,no,11\n2,B,yes,9\n"
        "3,A,no,15\n3,B,no,20\n4,A,yes,8\n4,B,yes,7\n"
    )
    args = ["agree", str(table), "--stat", "cohen", "--bootstrap", "0", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["value"], row["raters"], row["n_units"]) == (pytest.approx(0.5), ["A", "B"], 4)
    assert row["notes"][0].endswith("not read (the ratings are column 'label'): seconds")
