"""``failcodes.run_study(path)`` runs a study as ``failcodes run`` does (issue 27).

The same study, with an LLM judge behind the fake OpenAI server, is run once by the CLI (a
``python -m failcodes run`` child) and once from Python; the judge makes the same calls (the
fake server's request log) and every output is byte-identical, but for the judge's wall-clock
fields (``created_at``, ``latency_s``, ``elapsed_s``) and its SQLite files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import failcodes
from tests.fakeserver import FakeServer
from tests.test_study_recode import make_study

#: Fields that hold the time a run took or was made: not the same in two runs.
CLOCK = {"created_at", "latency_s", "elapsed_s"}


def _without_clock(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_clock(v) for k, v in value.items() if k not in CLOCK}
    if isinstance(value, list):
        return [_without_clock(v) for v in value]
    return value


def _files(root: Path) -> dict[str, Path]:
    return {
        str(p.relative_to(root)): p
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".sqlite" not in p.name and not p.name.endswith(".lock")
    }


def _content(rel: str, path: Path) -> Any:
    if rel.startswith("judge/") and path.suffix in (".json", ".jsonl"):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            return _without_clock(json.loads(text))
        return [_without_clock(json.loads(line)) for line in text.splitlines()]
    if rel == ".failcodes/run.json":
        # a step's fingerprint hashes its request and its inputs; the judge's outputs hold
        # clock fields, so only the steps before the judge have the same one in both runs
        steps = json.loads(path.read_text(encoding="utf-8"))["steps"]
        return {
            k: v for k, v in steps.items() if k.split()[0] in ("ingest", "metrics", "disagreements")
        }
    if rel.startswith(".failcodes/logs/"):
        lines = path.read_text(encoding="utf-8").splitlines()
        return [line for line in lines if not line.startswith("elapsed:")]
    return path.read_bytes()


def _calls(fake: FakeServer) -> list[str]:
    """The request bodies the server logged (its last 64), in the order they came."""
    return [json.dumps(body, sort_keys=True) for body in fake.requests()]


def _study(root: Path, base_url: str) -> None:
    """The SciFact study with one call in flight: the calls come in the order of the units."""
    layout = make_study(root, base_url)
    text = layout.study_file.read_text(encoding="utf-8")
    text = text.replace('kinds = ["retrieval"]\n', 'kinds = ["retrieval"]\nconcurrency = 1\n')
    layout.study_file.write_text(text, encoding="utf-8")


def test_run_study_makes_the_cli_s_calls_and_writes_its_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-runstudy")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # the report's "generated" time
    study = tmp_path / "st"
    with FakeServer() as fake:
        _study(study, fake.openai_base_url)
        env = {**os.environ, "NO_COLOR": "1"}
        proc = subprocess.run(
            [sys.executable, "-m", "failcodes", "run", str(study)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        by_cli, cli_stats = _calls(fake), fake.stats()["calls"]
        shutil.move(study, tmp_path / "by-cli")  # the Python run writes the same paths
        fake.reset()
        _study(study, fake.openai_base_url)
        results = failcodes.run_study(study)
        by_api, api_stats = _calls(fake), fake.stats()["calls"]
    # SciFact dev's 91 disagreement passages: one call each, the same requests
    assert cli_stats == api_stats == {"openai": 91}
    assert len(by_api) == 64 and by_api == by_cli  # the log keeps the last 64
    assert [r.step.name for r in results][-1] == "report"
    cli_files, api_files = _files(tmp_path / "by-cli"), _files(study)
    assert sorted(cli_files) == sorted(api_files)
    assert "report/index.html" in api_files and ".failcodes/run.json" in api_files
    differ = [
        rel for rel in api_files if _content(rel, cli_files[rel]) != _content(rel, api_files[rel])
    ]
    assert differ == []
