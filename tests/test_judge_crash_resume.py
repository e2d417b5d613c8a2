"""Kill a judge run (a real CLI subprocess) with SIGKILL mid-way, resume, count units."""

import json
import os
import signal
import sqlite3
import subprocess
import time

import pytest

from failcodes.disagreementio import read_disagreements
from failcodes.disagreements import find_disagreements
from failcodes.labels import Label
from failcodes.units import UnitKind, build_units, disagreement_traces, retrieval_units
from tests.fakeserver import FakeServer
from tests.judge_helpers import (
    journal_count,
    judge_command,
    make_traces,
    write_codebook,
    write_disagreements,
    write_traces,
)


def _disagreements(path, traces):
    """Sentence i labelled an error for even i: sysA (supported) misses it, sysB (refuted)
    flags odd i wrongly; each of the 60 sentences is one disagreement, 2 passages each."""
    labels = [
        Label(question_id=f"q{i}", sentence_id=f"q{i}-s1", has_error=i % 2 == 0) for i in range(60)
    ]
    write_disagreements(path, find_disagreements(traces, labels, "refuted"))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("source", ["traces", "disagreements"])
def test_sigkill_then_resume_judges_every_unit_exactly_once(tmp_path, source) -> None:
    traces = make_traces(60)
    if source == "traces":
        units = retrieval_units(traces)  # 60 claims x 3 distinct passages = 180 units
        src = write_traces(tmp_path / "t.jsonl", traces)
    else:  # read one at a time while judged (issue 30)
        src = _disagreements(tmp_path / "d.jsonl", traces)
        # 30 sysA sentences (P_GOOD, P_FRAGMENT) + 30 sysB (P_GOOD, P_WEB), claims all
        # distinct: 60 x 2 = 120 units
        units = build_units(disagreement_traces(read_disagreements(src)), UnitKind.RETRIEVAL)
    n = len(units)
    assert n == (180 if source == "traces" else 120)
    cb = write_codebook(tmp_path / "cb.yaml")
    run = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-crash"}
    with FakeServer(latency=0.02) as fake:
        cmd = judge_command(src, cb, run, fake.openai_base_url, concurrency=4)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while journal_count(run / "journal.sqlite") < 20:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        killed_at = journal_count(run / "journal.sqlite")
        assert 20 <= killed_at < n
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert f"units: {n} ({killed_at} already done, {n - killed_at} judged now)" in done.stdout
        con = sqlite3.connect(run / "journal.sqlite")
        ids = [r[0] for r in con.execute("SELECT unit_id FROM annotations")]
        con.close()
        assert sorted(ids) == sorted(u.id for u in units)  # none lost, none twice
        lines = (run / "annotations.jsonl").read_text().splitlines()
        assert sorted(json.loads(x)["unit_id"] for x in lines) == sorted(ids)
        calls = fake.stats()["calls"]["openai"]
        # only calls in flight at the kill may have been paid twice (4 workers)
        assert n <= calls <= n + 4
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        assert again.returncode == 0
        assert f"units: {n} ({n} already done, 0 judged now)" in again.stdout
        assert fake.stats()["calls"]["openai"] == calls  # the rerun made 0 calls
