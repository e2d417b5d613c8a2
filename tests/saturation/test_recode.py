"""`saturate recode`: re-code exactly the flagged units through the judge engine, migrate the
rest without a call, resume after kill -9, and leave every unit on the newest version."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from failcodes.recoding import RecodeMethod
from failcodes.saturation import (
    Action,
    Decision,
    ProjectConfig,
    ProjectStore,
    ScriptedCoder,
    ScriptedProposer,
    init_project,
    record_decisions,
    run_round,
)
from failcodes.saturation.recode import plan_recode
from failcodes.saturation.rounds import latest_annotations
from failcodes.saturation.status import project_status
from tests.fakeserver import FakeServer
from tests.judge_helpers import journal_count
from tests.saturation.satfixtures import make_pool, small_codebook
from tests.saturation.test_cli import cli
from tests.saturation.test_loop import SCRIPT, scripted_codes

REPO = Path(__file__).resolve().parents[2]


def accepted_project(root: Path, n: int = 30) -> tuple[ProjectStore, set[str]]:
    """Round 1 codes all ``n`` units under v1; accepting 'Animal study' (a new leaf under
    scope/different_context) makes v2 and flags the units coded different_context."""
    pool = make_pool(n)
    config = ProjectConfig(
        name="rc", kind=pool[0].kind, batch_size=n, seed=1, codebook_name="testbook"
    )
    store = init_project(root, config, small_codebook(), pool)
    ids = [u.id for u in pool]
    run_round(store, ScriptedCoder(codes=scripted_codes(ids)), ScriptedProposer(SCRIPT))
    record_decisions(
        store,
        [
            Decision(
                proposal_id="r0001-p01", round=1, reviewer="alice", via="test", action=Action.ACCEPT
            ),
            Decision(
                proposal_id="r0001-p03", round=1, reviewer="alice", via="test", action=Action.REJECT
            ),
        ],
    )
    assert store.codebook().version == 2
    flagged = {f.unit_id for f in store.recode_flags()}
    # units 0, 3, 6, ... were coded different_context on scope: exactly those are flagged
    assert flagged == {uid for i, uid in enumerate(ids) if i % 3 == 0}
    return store, flagged


def test_recode_calls_the_judge_once_per_flagged_unit(tmp_path: Path) -> None:
    store, flagged = accepted_project(tmp_path / "rc")
    before = latest_annotations(store)
    work = plan_recode(store)
    assert set(work.recode) == flagged
    assert set(work.migrated) == set(before) - flagged
    with FakeServer() as fake, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "sk-test-recode")
        args = ["--dir", str(store.root), "--judge", "openai:fake-model"]
        args += ["--base-url", fake.openai_base_url, "--no-cache"]
        done = cli("recode", "rc", *args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert fake.stats()["calls"]["openai"] == len(flagged) == 10
        assert "v2: 10 flagged unit(s) re-coded by openai:fake-model, 20 migrated" in done.stdout
        assert "coded units per version: v2: 30" in done.stdout
        again = cli("recode", "rc", *args, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert "nothing to re-code: every coded unit is on v2" in again.stdout
        assert fake.stats()["calls"]["openai"] == 10  # no second call
    entries = {e.unit_id: e for e in store.recode_entries()}
    assert {u for u, e in entries.items() if e.method is RecodeMethod.RECODED} == flagged
    for uid, e in entries.items():
        assert (e.from_version, e.to_version) == (1, 2)
        assert e.annotation.codebook == store.codebook().ref()
        if e.method is RecodeMethod.MIGRATED:
            assert e.coder is None
            assert e.annotation.codes == before[uid].codes  # carried as they were
        else:
            assert e.coder == "openai:fake-model"
    info = project_status(store)
    assert info.unit_versions == {2: 30}
    assert (info.recoded_units, info.migrated_units, info.stale_units) == (10, 20, 0)
    status = cli("status", "rc", "--dir", str(store.root), cwd=tmp_path)
    assert "coded units per codebook version: v2: 30; 10 re-coded, 20 migrated" in status.stdout


@pytest.mark.slow
def test_recode_survives_kill_9_and_resumes(tmp_path: Path) -> None:
    store, flagged = accepted_project(tmp_path / "rc", n=60)
    assert len(flagged) == 20
    journal = store.recoded_path(2).parent / "judge" / "journal.sqlite"
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-test-recode",
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
    }
    with FakeServer(latency=0.15) as fake:
        cmd = [sys.executable, "-m", "failcodes", "saturate", "recode", "rc"]
        cmd += ["--dir", str(store.root), "--judge", "openai:fake-model", "--concurrency", "1"]
        cmd += ["--base-url", fake.openai_base_url, "--no-cache"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while journal_count(journal) < 5:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        killed_at = journal_count(journal)
        assert 5 <= killed_at < 20
        assert not store.recoded_path(2).exists()  # nothing half-written into the project
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        calls = fake.stats()["calls"]["openai"]
        assert 20 <= calls <= 20 + 1  # at most the one call in flight at the kill, twice
    entries = store.recode_entries()
    assert sorted(e.unit_id for e in entries if e.method is RecodeMethod.RECODED) == sorted(flagged)
    assert project_status(store).unit_versions == {2: 60}
