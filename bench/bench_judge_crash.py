"""Crash test: SIGKILL a 2,000-unit judge run (the real CLI) at 5 random moments, resume.

Each round starts ``failcodes judge retrieval`` (OpenAI SDK -> fake server in its own process,
50 ms latency, concurrency 32) and kills it with SIGKILL as soon as the journal passes a random
unit count (5 counts drawn uniformly over the run, so the kills fall at random moments from
start to end). After 5 kills the run is resumed to the end. Checks: 2,000
units in the journal and in annotations.jsonl, none duplicated, none lost; calls paid twice
(units in flight at a kill) are printed; a rerun of the finished job makes 0 calls.

Run: python bench/bench_judge_crash.py [--units 2000] [--kills 5] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _judge_common import REPO, start_server, synthetic_traces
from failcodes.codebook import bundled_dir
from failcodes.traceio import write_traces
from failcodes.units import retrieval_units


def _count(journal: Path) -> int:
    if not journal.exists():
        return 0
    try:
        con = sqlite3.connect(journal, timeout=10)
        try:
            return int(con.execute("SELECT COUNT(*) FROM annotations").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def _calls(url: str) -> int:
    with urllib.request.urlopen(f"{url}/_stats", timeout=10) as resp:
        return int(json.loads(resp.read())["calls"].get("openai", 0))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", type=int, default=2000)
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    traces = synthetic_traces(args.units)
    expected = {u.id for u in retrieval_units(traces)}
    assert len(expected) == args.units
    proc, url = start_server(0.05)
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-bench-not-a-real-key",
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            src = root / "traces.jsonl"
            write_traces(src, traces)
            run = root / "run"
            codebook = next(bundled_dir().glob("*.v1.yaml"))
            cmd = [
                sys.executable,
                "-m",
                "failcodes",
                "judge",
                "retrieval",
                "--from",
                str(src),
                "--codebook",
                str(codebook),
                "--judge",
                "openai:fake-model",
                "--base-url",
                f"{url}/v1",
                "--concurrency",
                str(args.concurrency),
                "--no-cache",
                "-o",
                str(run),
            ]
            print(
                f"crash test: {args.units} units, {args.kills} SIGKILLs at random moments "
                f"(seed {args.seed}), concurrency {args.concurrency}, 50 ms latency"
            )
            t0 = time.perf_counter()
            # kill moments: random points of progress spread over the whole run
            targets = sorted(rng.sample(range(20, args.units - 20), args.kills))
            for k, target in enumerate(targets, start=1):
                before = _count(run / "journal.sqlite")
                p = subprocess.Popen(
                    cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
                while _count(run / "journal.sqlite") < target and p.poll() is None:
                    time.sleep(0.01)
                finished = p.poll() is not None
                p.send_signal(signal.SIGKILL)
                p.wait()
                now = _count(run / "journal.sqlite")
                state = "had already finished" if finished else "killed"
                print(
                    f"  kill {k}: {state} once the journal passed {target} units; journal "
                    f"{before} -> {now} units; server calls so far {_calls(url)}"
                )
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stderr
            con = sqlite3.connect(run / "journal.sqlite")
            ids = [r[0] for r in con.execute("SELECT unit_id FROM annotations")]
            sessions = con.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
            con.close()
            lines = (run / "annotations.jsonl").read_text().splitlines()
            exported = [json.loads(x)["unit_id"] for x in lines]
            calls = _calls(url)
            print(
                f"final: journal {len(ids)} units ({len(set(ids))} distinct), "
                f"annotations.jsonl {len(exported)} lines ({len(set(exported))} distinct); "
                f"lost {len(expected - set(ids))}, duplicated {len(ids) - len(set(ids))}, "
                f"unexpected {len(set(ids) - expected)}; {sessions} sessions; "
                f"{time.perf_counter() - t0:.1f} s"
            )
            print(
                f"server calls {calls} for {args.units} units: {calls - args.units} calls were "
                "in flight at a kill and paid again (their units were never committed)"
            )
            rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            assert rerun.returncode == 0, rerun.stderr
            print(f"rerun of the finished job: {_calls(url) - calls} calls")
            ok = set(ids) == expected and len(ids) == len(set(ids)) and set(exported) == expected
            print("RESULT:", "PASS" if ok else "FAIL")
            if not ok:
                raise SystemExit(1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
