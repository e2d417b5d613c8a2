"""SIGTERM finishes a judge run like Ctrl-C (issue 16): annotations.jsonl + summary.json written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.fakeserver import FakeServer
from tests.judge_helpers import (
    journal_count,
    judge_command,
    make_traces,
    write_codebook,
    write_traces,
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_mid_run_exports_what_is_done(tmp_path: Path, sig: signal.Signals) -> None:
    src = write_traces(tmp_path / "t.jsonl", make_traces(40))  # 120 units
    cb = write_codebook(tmp_path / "cb.yaml")
    run = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-term"}
    with FakeServer(latency=0.1) as fake:
        cmd = judge_command(src, cb, run, fake.openai_base_url, concurrency=2)
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 120
        while journal_count(run / "journal.sqlite") < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err  # as after Ctrl-C, not -15 (killed)
    assert "Traceback" not in err
    done = journal_count(run / "journal.sqlite")
    assert 4 <= done < 120
    lines = (run / "annotations.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == done
    assert len({json.loads(line)["unit_id"] for line in lines}) == done
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["units"] == 120
