"""A round killed with SIGKILL in the middle of coding resumes without re-coding finished units."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from failcodes.saturation import (
    ProjectConfig,
    ProjectStore,
    RoundPhase,
    ScriptedCoder,
    ScriptedProposer,
    init_project,
    run_round,
)
from failcodes.units import UnitKind
from tests.saturation.satfixtures import make_pool, small_codebook

SCRIPT = """
import sys
from pathlib import Path
from failcodes.saturation import ProjectStore, ScriptedCoder, ScriptedProposer, run_round
root, log = Path(sys.argv[1]), Path(sys.argv[2])
coder = ScriptedCoder(delay_s=0.3, calls_log=log)
run_round(ProjectStore.open(root), coder, ScriptedProposer({}))
"""


def journal_ids(path: Path) -> list[str]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().split("\n"):
        with contextlib.suppress(json.JSONDecodeError, KeyError):  # torn last line
            out.append(json.loads(line)["unit_id"])
    return out


def test_sigkill_mid_round_then_resume(tmp_path: Path) -> None:
    config = ProjectConfig(
        name="k", kind=UnitKind.RETRIEVAL, batch_size=12, seed=3, codebook_name="testbook"
    )
    store = init_project(tmp_path / "proj", config, small_codebook(), make_pool(30))
    log = tmp_path / "calls.txt"
    journal = store.annotations_path(1)
    child = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(store.root), str(log)],
        env={**os.environ},
    )
    try:
        deadline = time.monotonic() + 30
        while len(journal_ids(journal)) < 3:
            assert child.poll() is None, "the round finished before it could be killed"
            assert time.monotonic() < deadline, "the round never started coding"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL

    before = journal_ids(journal)
    assert 3 <= len(before) < 12, "killed midway"
    record = store.round(1)
    assert record.phase is RoundPhase.DRAWN
    calls_before = log.read_text().split()

    # resume in this process with a fresh coder that logs its calls separately
    log2 = tmp_path / "calls2.txt"
    resumed = run_round(
        ProjectStore.open(store.root), ScriptedCoder(calls_log=log2), ScriptedProposer({})
    )
    assert resumed.number == 1  # the same round, not a new draw
    assert resumed.phase is RoundPhase.CLOSED  # nothing proposed: closes without review
    after = journal_ids(journal)
    assert sorted(after) == sorted(record.unit_ids)  # every unit once, none lost
    assert len(after) == len(set(after)) == 12
    recoded = log2.read_text().split()
    assert set(recoded).isdisjoint(before)  # finished coding was not redone
    assert sorted(recoded) == sorted(set(record.unit_ids) - set(before))
    # the killed process may have started (not finished) at most one more unit
    assert len(set(calls_before) - set(before)) <= 1
