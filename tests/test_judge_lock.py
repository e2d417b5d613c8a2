"""Two judge processes on one run folder (issue 16): one works, the other exits 2 at once."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from failcodes.units import retrieval_units
from tests.fakeserver import FakeServer
from tests.judge_helpers import judge_command, make_traces, write_codebook, write_traces


def test_second_judge_on_the_same_run_folder_exits_2_before_any_call(tmp_path: Path) -> None:
    traces = make_traces(10)
    units = retrieval_units(traces)
    assert len(units) == 30  # 10 claims x 3 distinct passages
    src = write_traces(tmp_path / "t.jsonl", traces)
    cb = write_codebook(tmp_path / "cb.yaml")
    run = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-lock"}
    with FakeServer(latency=0.2) as fake:  # ~3 s of judging: the two overlap
        cmd = judge_command(src, cb, run, fake.openai_base_url, concurrency=2)
        procs = [
            subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(2)
        ]
        results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
        codes = sorted(code for code, _, _ in results)
        assert codes == [0, 2], results
        _, _, loser_err = next(r for r in results if r[0] == 2)
        lines = loser_err.strip().splitlines()
        assert len(lines) == 1, loser_err
        assert lines[0].startswith(
            f"failcodes: error: {run.resolve()}: this judge run is in use by process "
        )
        assert "Traceback" not in loser_err
        # exactly one call per unit: the loser made none
        assert fake.stats()["calls"]["openai"] == 30
    written = [
        line for line in (run / "annotations.jsonl").read_text().splitlines() if line.strip()
    ]
    assert len(written) == 30


def test_a_refused_second_judge_does_not_remove_the_first_ones_new_run(tmp_path: Path) -> None:
    """The race behind a red CI run: both judges saw a new folder; the one refused by the lock
    (while the other was judging, no summary written yet) removed the folder as "untouched",
    and the first judge's annotations were lost (0 of 30 written). The discard now happens
    only under the folder's own lock."""
    import sys
    import time

    from failcodes.judge.run import discard_if_untouched

    run = tmp_path / "run"
    run.mkdir()
    (run / "journal.sqlite").write_bytes(b"")  # a run in progress: no summary yet
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from failcodes.runlock import folder_lock\n"
            "with folder_lock(sys.argv[1], what='judge run'):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(60)\n",
            str(run),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert discard_if_untouched(run) is False
        assert (run / "journal.sqlite").exists()
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    time.sleep(0.1)
    # nobody holds it now: an empty-handed folder is removed as before
    assert discard_if_untouched(run) is True
    assert not run.exists()
