"""Issue 5 benchmark: 100,000 units through batch mode against the fake server, with a kill.

A worker process (the real openai SDK, Batch API) judges N distinct retrieval units streamed
from a generator (never held in a list) in batches of 10,000; the benchmark SIGKILLs it once
some batches are submitted and some collected, starts it again, and checks that every unit is
journaled exactly once. It prints the journal size and the worker's peak RSS, and the same
figures for a 10,000-unit run beside it (memory should not grow with the number of units).

    python bench/bench_judge_batch.py [--units 100000] [--small 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from _judge_common import REPO, start_server
from failcodes.judge import Batch, JudgeJob, JudgeSettings, RetryPolicy, make_coder, run_judge_async
from failcodes.traces import Passage
from failcodes.units import Unit, UnitKind, unit_id

SPEC = "openai:gpt-5-mini"
BATCH = 10_000


def units(n: int) -> Iterator[Unit]:
    """``n`` distinct retrieval units, generated one at a time."""
    for i in range(n):
        claim = f"Drug {i // 10} reduces symptom {i % 17} in adults with condition {i % 29}."
        text = (
            f"In a trial of {100 + i % 900} adults, drug {i // 10} reduced symptom {i % 17} "
            f"by {i % 40} percent compared with placebo (passage {i})."
        )
        p = Passage(passage_id=f"p{i}", rank=1 + i % 10, text=text, source="pubmed")
        yield Unit(
            id=unit_id(UnitKind.RETRIEVAL, claim, (text,)),
            kind=UnitKind.RETRIEVAL,
            claim=claim,
            passages=(p,),
        )


def worker(run_dir: str, url: str, n: int) -> None:
    """Judge ``n`` units in batch mode into ``run_dir``; print summary and peak RSS as JSON."""
    sys.path.insert(0, str(REPO))
    from tests.judge_helpers import make_codebook

    summary = asyncio.run(
        run_judge_async(
            units(n),
            make_coder(SPEC, base_url=f"{url}/v1"),
            JudgeJob(
                make_codebook(),
                UnitKind.RETRIEVAL,
                run_dir,
                mode=Batch(size=BATCH, poll=0.5),
                settings=JudgeSettings(retry=RetryPolicy.no_wait()),
            ),
        )
    )
    batches = summary.batches
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"judged": summary.judged, "batches": batches, "peak_rss_mb": peak_mb}))


def _stats(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/_stats", timeout=60) as resp:
        return json.loads(resp.read())


def _post(url: str, body: dict) -> None:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    urllib.request.urlopen(req, timeout=60).close()


def _spawn(run_dir: Path, url: str, n: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "src")])}
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", str(run_dir), url, str(n)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


def _journal(run_dir: Path) -> tuple[int, int, int]:
    db = sqlite3.connect(run_dir / "journal.sqlite")
    n, distinct = db.execute("SELECT COUNT(*), COUNT(DISTINCT unit_id) FROM annotations").fetchone()
    db.close()
    size = sum(p.stat().st_size for p in run_dir.glob("journal.sqlite*"))
    return n, distinct, size


def run(n: int, url: str, folder: Path, *, kill: bool) -> None:
    """One measured run of ``n`` units (killed once if ``kill``)."""
    _post(f"{url}/_reset", {})
    run_dir = folder / f"run{n}"
    t0 = time.perf_counter()
    kills = 0
    if kill:
        proc = _spawn(run_dir, url, n)
        # kill once the second batch is collected and more are in flight
        while True:
            time.sleep(0.5)
            s = _stats(url)["batch_calls"]
            if s.get("files.content", 0) >= 2 or proc.poll() is not None:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills = 1
        done_at_kill = _journal(run_dir)[0]
        print(f"  killed the worker with {done_at_kill} units journaled")
    proc = _spawn(run_dir, url, n)
    out, _ = proc.communicate()
    result = json.loads(out.strip().splitlines()[-1])
    elapsed = time.perf_counter() - t0
    count, distinct, size = _journal(run_dir)
    created = _stats(url)["batch_calls"].get("batches.create", 0)
    print(
        f"  {n} units: journaled {count} ({distinct} distinct), kills {kills}, "
        f"{created} batches created in all, {elapsed:.0f} s; journal {size / 1e6:.1f} MB "
        f"({size / max(count, 1):.0f} B/unit); resumed worker peak RSS "
        f"{result['peak_rss_mb']:.0f} MB"
    )
    assert count == distinct == n, "units lost or duplicated"


def main() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--worker", nargs=3, metavar=("RUN_DIR", "URL", "N"))
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-fake")
    if args.worker:
        worker(args.worker[0], args.worker[1], int(args.worker[2]))
        return
    proc, url = start_server(0.0)
    try:
        for _ in range(200):  # the port is bound before uvicorn serves it
            try:
                _stats(url)
                break
            except OSError:
                time.sleep(0.1)
        _post(f"{url}/_control", {"batch_delay": 1.0})
        with tempfile.TemporaryDirectory() as tmp:
            print(f"batch mode, {SPEC} via the fake server, batches of {BATCH}:")
            run(args.small, url, Path(tmp), kill=False)
            run(args.units, url, Path(tmp), kill=True)
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
