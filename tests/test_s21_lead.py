"""Session 21 (lead): what `compare` assumed reaches the study report beside its tests."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.test_s20_t20s2a import made_study


def test_the_report_says_compare_took_the_question_as_the_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = made_study(tmp_path / "st")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    data = root / "data"
    compare = ["compare", "--traces", str(data / "d.traces.parquet"), "--labels"]
    compare += [str(data / "d.labels.jsonl"), "--resamples", "20", "--format", "json"]
    code, out, err = run_cli(compare, capsys)
    assert code == 0, err
    assumed = json.loads(out)["assumed"]
    # q1 holds q1s0, q1s1 and q2 holds q2s0, q2s1: 2 of 2 questions hold several of the 4
    # sentences, so the tests resample and permute questions (0b02879); the report showed the
    # p-values with no word of it (only `compare`'s own first line said it)
    assert "the tests take the question as the unit: 2 of 2 questions" in assumed
    (root / "comparisons").mkdir()
    (root / "comparisons" / "d.json").write_text(out, encoding="utf-8")
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r")], capsys)
    assert code == 0, err
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="comparisons">') :]
    assert (
        f"d.json: {html.escape(assumed)}".replace("&#x27;", "&#39;")
        in section[: section.index("</section>")]
    )


def test_two_readers_over_question_columns_are_a_transposed_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one row per reader, one column per question, two readers: no unit column is found (two
    # distinct names are too few to tell ids by their values), `reader` is set aside as holding
    # no rating, and q1..q3 were read as 3 raters of 2 units at exit 0; with three readers the
    # same table was refused (1f4cb44). The list of columns ended ", ..." after exactly three
    table = tmp_path / "readers.csv"
    table.write_text("reader,q1,q2,q3\nr1,1,0,1\nr2,1,1,0\n", encoding="utf-8")
    code, out, err = run_cli(["agree", str(table)], capsys)
    assert code == 2 and out == ""
    assert err == (
        f"failcodes: error: {table}:1: 3 rater columns (q1, q2, q3) named like units: is the "
        "table one row per rater and one column per unit? agreement needs one row per unit: "
        "transpose it (to read it as given, name the raters with --raters)\n"
    )
    code, out, err = run_cli(["agree", str(table), "--raters", "q1,q2,q3"], capsys)
    assert code == 0, err  # the way through reads it as given
