"""Shared helpers of the judge benchmarks: fake server process, synthetic units."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for p in (REPO, REPO / "src"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from failcodes.traces import Passage, Trace  # noqa: E402
from failcodes.verdicts import Verdict  # noqa: E402


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """Start ``python -m tests.fakeserver`` in its own process; return it and its URL."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "src")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakeserver", "--latency", str(latency)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    port = int(line.split()[1])
    deadline = time.monotonic() + 30
    while True:  # the server prints its port before it listens
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"fake server not listening on port {port}") from None
            time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}"


def synthetic_traces(n_units: int) -> list[Trace]:
    """Traces whose (claim, passage) pairs are all distinct: ``n_units`` retrieval units."""
    traces = []
    per = 10
    for i in range((n_units + per - 1) // per):
        k = min(per, n_units - i * per)
        claim = f"Drug {i} reduces symptom {i % 17} in adults with condition {i % 29}."
        passages = tuple(
            Passage(
                passage_id=f"d{i}-{r}",
                rank=r,
                text=f"In a trial of {100 + r} adults, drug {i} reduced symptom {i % 17} "
                f"by {r * 3} percent compared with placebo (passage {r}).",
                source="pubmed",
            )
            for r in range(1, k + 1)
        )
        traces.append(
            Trace(
                system="bench",
                question_id=f"q{i}",
                sentence_id=f"q{i}-s",
                claim_id=f"q{i}-c",
                claim=claim,
                verdict=Verdict.SUPPORTED,
                reasoning=f"Passage 1 shows drug {i} works.",
                passages=passages,
            )
        )
    return traces
