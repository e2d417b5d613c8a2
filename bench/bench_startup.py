"""Issue 30 benchmark: the CLI's start-up, beside ``python -c pass``.

Runs each command ``--runs`` times as its own process and prints the median and minimum wall
time and CPU seconds (user + system, from ``wait4``) of each, with the machine's load average
beside them (wall time is only meaningful on a quiet machine: load well under the number of
cores). Target (issue 30): ``failcodes --help`` under 0.3 s on a quiet machine.

    python bench/bench_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

TARGET_S = 0.3
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "failcodes --help": [sys.executable, "-m", "failcodes", "--help"],
    "failcodes version": [sys.executable, "-m", "failcodes", "version"],
    "failcodes ingest --help": [sys.executable, "-m", "failcodes", "ingest", "--help"],
    "failcodes metrics --help": [sys.executable, "-m", "failcodes", "metrics", "--help"],
    "failcodes ingest generic-labels --help": [
        sys.executable,
        "-m",
        "failcodes",
        "ingest",
        "generic-labels",
        "--help",
    ],
}


def run_once(cmd: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one run of ``cmd``; fails loudly."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="Runs of each command.")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    print(f"{'command':<40}{'wall med':>9}{'wall min':>9}{'CPU med':>9}{'CPU min':>9}")
    figures: dict[str, tuple[float, float]] = {}
    for name, cmd in COMMANDS.items():
        runs = [run_once(cmd) for _ in range(args.runs)]
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        figures[name] = (statistics.median(walls), statistics.median(cpus))
        print(
            f"{name:<40}{figures[name][0]:>9.3f}{min(walls):>9.3f}"
            f"{figures[name][1]:>9.3f}{min(cpus):>9.3f}"
        )
    wall, cpu = figures["failcodes --help"]
    base = figures["python -c pass"][1]
    cores = os.cpu_count() or 1
    if load[0] >= cores / 2:  # other processes share the cores: wall time says little
        verdict = f"not judged, the machine is not quiet (load {load[0]:.2f} on {cores} cores)"
    else:
        verdict = "met" if wall < TARGET_S else "MISSED"
    print(
        f"failcodes --help: median {wall:.3f} s wall (target < {TARGET_S} s on a quiet "
        f"machine: {verdict}), {cpu:.3f} CPU-s = {cpu / base:.0f}x python -c pass"
    )


if __name__ == "__main__":
    main()
