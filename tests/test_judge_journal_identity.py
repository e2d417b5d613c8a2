"""A run folder resumes only the run it holds: kind, judge, model and codebook must match."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.errors import ConfigError
from failcodes.judge.journal import Journal

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
