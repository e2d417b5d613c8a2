"""Issue 30: a two-judge panel against one judge, same units, same concurrency (fake server).

The local fake server (its own process, real openai / anthropic SDK clients) answers every
call after a fixed latency. One judge (``PROVIDER:fake-a``) judges ``--units`` retrieval
units at ``--concurrency``; a panel of two (``PROVIDER:fake-a`` and ``PROVIDER:fake-b``, each
within the same ``--concurrency``) judges the same units into a fresh folder. That pair is
run ``--repeats`` times, the order swapped every other pair (the machine's load drifts).
Printed: each run's wall and client CPU seconds, the server's CPU, calls made; each pair's
panel wall over the single judge's, and their median with the spread (target <= 1.2x; the
members ran one after the other before, about 2x plus the consensus). The load average is
printed beside: on a shared machine the ratio follows it.

    python bench/bench_judge_panel.py [--units 512] [--concurrency 16] [--latency 0.5]
                                      [--repeats 5] [--provider openai|anthropic]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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


def _stats(url: str, provider: str) -> tuple[int, float]:
    """The fake server's calls of ``provider`` so far and its process's CPU seconds."""
    with urllib.request.urlopen(f"{url}/_stats", timeout=10) as resp:
        stats = json.loads(resp.read())
    return int(stats["calls"].get(provider, 0)), float(stats["process_cpu_s"])


def main() -> None:
    """Time one judge and a two-judge panel on the same units, in pairs; print the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=512)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=5, help="pairs (one judge, panel) to run")
    ap.add_argument("--provider", choices=("openai", "anthropic"), default="openai")
    args = ap.parse_args()
    provider = args.provider
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-bench-not-a-real-key")
    units = retrieval_units(synthetic_traces(args.units))
    settings = JudgeSettings(limits=Limits(concurrency=args.concurrency), retry=RetryPolicy())
    cb = bundled()
    print(
        f"{len(units)} units, {provider}, concurrency {args.concurrency}, fake server latency "
        f"{args.latency} s, {args.repeats} pairs, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    proc, url = start_server(args.latency)
    base = f"{url}/v1" if provider == "openai" else url
    rows: list[tuple[int, str, float, float, float, int, float]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)

            def timed(pair: int, label: str, fn: Any) -> None:
                calls0, server0 = _stats(url, provider)
                t0, c0 = time.perf_counter(), time.process_time()
                fn()
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                calls1, server1 = _stats(url, provider)
                load = os.getloadavg()[0]
                rows.append((pair, label, wall, cpu, server1 - server0, calls1 - calls0, load))

            def one(folder: Path) -> None:
                coder = make_coder(f"{provider}:fake-a", base_url=base)
                run_judge(units, coder, JudgeJob(cb, UnitKind.RETRIEVAL, folder, settings=settings))

            def panel(folder: Path) -> None:
                members = [
                    Member(spec, make_coder(spec, base_url=base))
                    for spec in (f"{provider}:fake-a", f"{provider}:fake-b")
                ]
                job = JudgeJob(cb, UnitKind.RETRIEVAL, folder, settings=settings)
                run_panel(units, members, job)

            # warm-up, untimed: the SDK's import (~1-2.5 s) and its first call's lazy imports
            # were the single judge's alone (timed first), flattering the panel's ratio
            warm = make_coder(f"{provider}:fake-w", base_url=base)
            run_judge(
                units[:2], warm, JudgeJob(cb, UnitKind.RETRIEVAL, root / "w", settings=settings)
            )
            for pair in range(args.repeats):
                runs = [("one judge", one), ("two-judge panel", panel)]
                for label, fn in runs if pair % 2 == 0 else runs[::-1]:
                    folder = root / f"{pair}-{label.split()[0]}"
                    timed(pair, label, lambda fn=fn, folder=folder: fn(folder))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ideal = len(units) / args.concurrency * args.latency
    print(
        f"{'pair':>4} {'run':<16} {'wall s':>7} {'CPU s':>6} {'server CPU s':>12} {'calls':>6} "
        f"{'load':>5}  (latency-bound floor {ideal:.1f} s)"
    )
    for pair, label, wall, cpu, server, calls, load in rows:
        print(f"{pair:>4} {label:<16} {wall:7.2f} {cpu:6.2f} {server:12.2f} {calls:6d} {load:5.1f}")
    walls = {(p, label.split()[0]): (wall, cpu) for p, label, wall, cpu, *_ in rows}
    ratios = [walls[p, "two-judge"][0] / walls[p, "one"][0] for p in range(args.repeats)]
    cpus = [walls[p, "two-judge"][1] / walls[p, "one"][1] for p in range(args.repeats)]
    loads = [r[-1] for r in rows]
    print("pairs' wall ratios (panel / one judge): " + ", ".join(f"{r:.2f}" for r in ratios))
    median = statistics.median(ratios)
    verdict = "met" if median <= TARGET else "MISSED"
    print(
        f"panel wall / one judge's wall: median {median:.2f}x over {len(ratios)} pairs "
        f"(min {min(ratios):.2f}, max {max(ratios):.2f}; client CPU ratio median "
        f"{statistics.median(cpus):.2f}x), load {min(loads):.1f}-{max(loads):.1f} "
        f"(target <= {TARGET}x) {verdict}"
    )


if __name__ == "__main__":
    main()
