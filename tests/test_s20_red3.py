"""Session 20 red team of the study and Python-library layers (t20red3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.redact import redact_url
from failcodes.study import init_study
from tests.cli_helpers import run_cli


def test_a_base_urls_dashed_key_parameter_is_redacted_in_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `?api-key=` (Azure's spelling: a dash) and `?subscription-key=` were printed as given by
    # `run --plan` and written into every judge step's log (.failcodes/logs/*.log), while
    # `?api_key=` was masked: the names were compared exactly with ("key", "api_key", ...)
    layout = init_study(tmp_path / "st")
    text = layout.study_file.read_text(encoding="utf-8").replace(
        '# base_url = "http://127.0.0.1:8000/v1"',
        'base_url = "http://127.0.0.1:8000/v1?api-key=CANARY1&Subscription-Key=CANARY2&v=1"',
    )
    layout.study_file.write_text(text, encoding="utf-8")
    code, out, err = run_cli(["run", str(layout.root), "--plan"], capsys)
    assert code == 0, err
    judge = [line for line in out.splitlines() if line.startswith("failcodes judge ")]
    assert len(judge) == 2  # retrieval and reasoning
    expected = "--base-url 'http://127.0.0.1:8000/v1?api-key=***&Subscription-Key=***&v=1'"
    assert all(expected in line for line in judge)
    assert "CANARY" not in out + err


def test_redact_url_reads_key_like_names_by_their_ending() -> None:
    url = "https://h.example/v1?x-api-key=a&access_token=b&code=c&model=m&api-version=2024"
    assert redact_url(url) == (
        "https://h.example/v1?x-api-key=***&access_token=***&code=***&model=m&api-version=2024"
    )
