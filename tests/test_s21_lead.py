"""Session 21 (lead): what `compare` assumed reaches the study report beside its tests."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from failcodes.codebook import bundled, dump
from tests.cli_helpers import run_cli
from tests.test_s20_t20s2a import STUDY, _labels, _traces


def test_the_report_says_compare_took_the_question_as_the_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "st"
    root.mkdir()
    (root / "medical-fact-check.v1.yaml").write_text(dump(bundled()), encoding="utf-8")
    (root / "traces.jsonl").write_text(_traces(), encoding="utf-8")
    (root / "labels.jsonl").write_text(_labels(True), encoding="utf-8")
    (root / "failcodes.toml").write_text(STUDY, encoding="utf-8")
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
