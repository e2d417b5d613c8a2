"""A run folder resumes only the run it holds: kind, judge, model and codebook must match."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from failcodes.errors import ConfigError
from failcodes.judge.journal import JOURNAL_NAME, Journal
from tests.cli_helpers import run_cli
from tests.judge_helpers import make_traces, write_traces

META = {"kind": "retrieval", "judge": "offline", "model": "heuristic-v1", "codebook_hash": "c1"}


@pytest.mark.parametrize(
    ("key", "other"),
    [
        ("kind", "verification"),
        ("judge", "openai:gpt-5-mini"),
        ("model", "heuristic-v2"),
        ("codebook_hash", "c2"),
    ],
)
def test_a_different_run_is_refused_with_one_line(tmp_path: Path, key: str, other: str) -> None:
    journal = Journal(tmp_path)
    journal.bind(META)
    with pytest.raises(ConfigError) as err:
        journal.bind({**META, key: other})
    msg = str(err.value)
    assert "\n" not in msg
    assert f"{key}={META[key]!r}, not {other!r}" in msg and "another output folder (-o)" in msg
    journal.bind(META)  # the same run resumes
    journal.close()


def test_a_journal_written_before_the_model_key_is_not_checked_on_it(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.bind({k: v for k, v in META.items() if k != "model"})
    journal.bind({**META, "model": "heuristic-v2"})  # no stored model: nothing to compare
    assert journal.meta()["model"] == "heuristic-v2"
    journal.close()


def test_a_run_of_the_heuristic_before_its_quote_rule_changed_is_not_resumed(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # heuristic-v2 quoted the whole passage five times; 3acf590 quotes a 20-word span and kept
    # the name, so a v2 run resumed afterwards held units of both rules under one identity.
    # The model is now heuristic-v3: the old run is refused in one line, never mixed.
    traces = write_traces(workdir / "traces.jsonl", make_traces(2))
    args = ["judge", "retrieval", "--from", str(traces), "-o", "run"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    with sqlite3.connect(workdir / "run" / JOURNAL_NAME) as db:  # a run judged before 3acf590
        db.execute("UPDATE meta SET value = 'heuristic-v2' WHERE key = 'model'")
    db.close()
    code, _, err = run_cli(args, capsys)
    assert code != 0
    assert "model='heuristic-v2', not 'heuristic-v3'" in err
    assert [x for x in err.splitlines() if "error" in x] == [
        "failcodes: error: run holds a run with model='heuristic-v2', not 'heuristic-v3'; use "
        "another output folder (-o) for a different run"
    ]
