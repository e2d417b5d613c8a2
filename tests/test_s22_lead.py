"""Session 22 (lead): a compare FILE in another shape names the reshape that reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.cli_helpers import run_cli

# units 1-4, truth 1,1,0,0; gpt flags 1,1,0,1; claude flags 0,1,0,0
LONG = (
    "unit,system,pred,truth\n1,gpt,1,1\n1,claude,0,1\n2,gpt,1,1\n2,claude,1,1\n"
    "3,gpt,0,0\n3,claude,0,0\n4,gpt,1,0\n4,claude,0,0\n"
)


@pytest.mark.parametrize(
    ("text", "field", "hint"),
    [
        (LONG, "system", "df.pivot(index=UNIT, columns=SYSTEM, values=CALL)"),
        (
            "system,u1,u2,u3,u4\ntruth,1,1,0,0\ngpt,1,1,0,1\nclaude,0,1,0,0\n",
            "system",
            "df.set_index(SYSTEM).T",
        ),
        (
            "unit,truth,gpt,claude\n1,1,Refuted,Supported\n2,1,Refuted,Refuted\n"
            "3,0,Supported,Supported\n",
            "gpt",
            "give verdict words as --traces with --labels",
        ),
    ],
)
def test_a_long_transposed_or_verdict_table_names_the_reshape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, field: str, hint: str
) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    truth = ["--truth", "truth"] if text.startswith("unit") else []
    code, _, err = run_cli(["compare", str(path), *truth], capsys)
    assert code == 2
    line = err.strip()
    assert "\n" not in line
    assert f"t.csv:2, field '{field}': expected 0/1 (or true/false)" in line
    assert hint in line


def test_one_stray_word_gets_no_reshape_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.csv"
    path.write_text("unit,gpt,claude\n1,1,0\n2,x,1\n3,0,0\n", encoding="utf-8")
    code, _, err = run_cli(["compare", str(path)], capsys)
    assert code == 2
    assert "got 'x'" in err
    assert "pivot" not in err


def test_the_long_table_pivoted_as_said_gives_the_hand_f1_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long = tmp_path / "long.csv"
    long.write_text(LONG, encoding="utf-8")
    frame = pd.read_csv(long)
    wide = frame.pivot(index="unit", columns="system", values="pred")
    wide["truth"] = frame.groupby("unit")["truth"].first()
    wide.reset_index().to_csv(tmp_path / "wide.csv", index=False)
    cmd = ["compare", str(tmp_path / "wide.csv"), "--truth", "truth", "--format", "json"]
    code, out, err = run_cli([*cmd, "--resamples", "50"], capsys)
    assert code == 0, err
    f1 = next(t for t in json.loads(out)["tests"] if t["test"].endswith("_f1"))
    # by hand: claude TP 1, FP 0, FN 1 -> F1 2/3; gpt TP 2, FP 1, FN 0 -> F1 4/5;
    # systems in column order (claude, gpt): 2/3 - 4/5 = -0.1333
    assert f1["comparison"] == "claude vs gpt"
    assert f1["statistic"] == pytest.approx(2 / 3 - 4 / 5, abs=1e-4)


KEY = "sk-proj-" + "Ab3dE" * 6  # a made-up key of the shape redact masks


@pytest.mark.parametrize("judge", [f"openai:{KEY}", KEY, f"anthropic:{KEY}@http://127.0.0.1:9"])
def test_a_key_typed_as_the_judge_is_refused_by_the_dry_run_and_never_echoed(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    judge: str,
) -> None:
    from tests.judge_helpers import make_traces, write_codebook, write_traces

    monkeypatch.chdir(tmp_path)
    traces = write_traces(tmp_path / "traces.jsonl", make_traces(2))
    cb = write_codebook(tmp_path / "cb.yaml")
    cmd = ["judge", "retrieval", "--from", str(traces), "--codebook", str(cb), "-o", "run"]
    # the dry run printed 'openai:sk-proj-...' on its first line at exit 0 (JudgeSpec had no
    # key check; the run itself refused it through factory.parse_spec)
    code, out, err = run_cli([*cmd, "--judge", judge, "--dry-run"], capsys)
    assert code == 2
    assert "the model name is an API key" in err
    assert "Ab3dE" not in out + err
    assert not (tmp_path / "run").exists()
