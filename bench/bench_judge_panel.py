"""Issue 30: a two-judge panel against one judge, same units, same concurrency (fake server).

The local fake server (its own process, real openai SDK clients) answers every call after a
fixed latency. One judge (``openai:fake-a``) judges ``--units`` retrieval units at
``--concurrency``; then a panel of two (``openai:fake-a`` and ``openai:fake-b``, each within
the same ``--concurrency``) judges the same units into a fresh folder. Printed: wall and
client CPU seconds of each, calls made, and the panel's wall over the single judge's (target
<= 1.2x; the members ran one after the other before, about 2x plus the consensus).

    python bench/bench_judge_panel.py [--units 512] [--concurrency 16] [--latency 0.5]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from _judge_common import start_server, synthetic_traces
from failcodes.codebook import bundled
from failcodes.judge import JudgeJob, JudgeSettings, Limits, RetryPolicy, make_coder, run_judge
from failcodes.judge.panelrun import Member, run_panel
from failcodes.units import UnitKind, retrieval_units

TARGET = 1.2


def _stats(url: str) -> tuple[int, float]:
    """The fake server's OpenAI calls so far and its process's CPU seconds."""
    with urllib.request.urlopen(f"{url}/_stats", timeout=10) as resp:
        stats = json.loads(resp.read())
    return int(stats["calls"].get("openai", 0)), float(stats["process_cpu_s"])


def main() -> None:
    """Time one judge, then a two-judge panel, on the same units; print the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=512)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.5)
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    units = retrieval_units(synthetic_traces(args.units))
    settings = JudgeSettings(limits=Limits(concurrency=args.concurrency), retry=RetryPolicy())
    cb = bundled()
    print(
        f"{len(units)} units, concurrency {args.concurrency}, fake server latency "
        f"{args.latency} s, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    proc, url = start_server(args.latency)
    rows: list[tuple[str, float, float, float, int]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)

            def timed(label: str, fn: Any) -> None:
                calls0, server0 = _stats(url)
                t0, c0 = time.perf_counter(), time.process_time()
                fn()
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                calls1, server1 = _stats(url)
                rows.append((label, wall, cpu, server1 - server0, calls1 - calls0))

            def one() -> None:
                coder = make_coder("openai:fake-a", base_url=f"{url}/v1")
                job = JudgeJob(cb, UnitKind.RETRIEVAL, root / "one", settings=settings)
                run_judge(units, coder, job)

            def panel() -> None:
                members = [
                    Member(spec, make_coder(spec, base_url=f"{url}/v1"))
                    for spec in ("openai:fake-a", "openai:fake-b")
                ]
                job = JudgeJob(cb, UnitKind.RETRIEVAL, root / "panel", settings=settings)
                run_panel(units, members, job)

            # warm-up, untimed: the SDK's import (~1-2.5 s) and its first call's lazy imports
            # were the single judge's alone (timed first), flattering the panel's ratio
            warm = make_coder("openai:fake-w", base_url=f"{url}/v1")
            run_judge(
                units[:2], warm, JudgeJob(cb, UnitKind.RETRIEVAL, root / "w", settings=settings)
            )
            timed("one judge", one)
            timed("two-judge panel", panel)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ideal = len(units) / args.concurrency * args.latency
    print(
        f"{'run':<18} {'wall s':>8} {'CPU s':>8} {'server CPU s':>13} {'calls':>6}  "
        f"(latency-bound floor {ideal:.1f} s)"
    )
    for label, wall, cpu, server, calls in rows:
        print(f"{label:<18} {wall:8.2f} {cpu:8.2f} {server:13.2f} {calls:6d}")
    print(f"load after: {os.getloadavg()[0]:.1f}")
    ratio = rows[1][1] / rows[0][1]
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"panel wall / one judge's wall: {ratio:.2f}x (target <= {TARGET}x) {verdict}")


if __name__ == "__main__":
    main()
