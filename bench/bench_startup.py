"""Issue 30 benchmark: the CLI's start-up and small-input cost, beside their floors.

Runs each command ``--runs`` times as its own process and prints the median and minimum wall
time and CPU seconds (user + system, from ``wait4``) of each, with the machine's load average
beside them (wall time is only meaningful on a quiet machine: load well under the number of
cores). Start-up is compared with ``python -c pass``; a command that reads files with the
*JSON parse floor* of its input: a process that only ``json.loads`` every line of the same
files (the issue's target: at most 3x). Inputs, written before timing (not timed): labels in
bench_study's shape, 300 (the demo's size) and ~2 MB (13,500), and the demo's SciFact data
(``failcodes ingest scifact bundled:scifact``) for ``metrics`` as the demo runs it.
Target (issue 30): ``failcodes --help`` under 0.3 s on a quiet machine.

Bytecode: the commands run as an installed tool does, from compiled ``.pyc`` files (written
to the work folder by a first, untimed run of each command: ``PYTHONPYCACHEPREFIX``), also
where the environment sets ``PYTHONDONTWRITEBYTECODE`` (this one does: every process then
compiles each failcodes module it imports, ~0.1-0.2 CPU-s a command). ``--source`` times
that instead.

    python bench/bench_startup.py [--runs 7] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 0.3
FC = [sys.executable, "-m", "failcodes"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "failcodes --help": [*FC, "--help"],
    "failcodes version": [*FC, "version"],
    "failcodes ingest --help": [*FC, "ingest", "--help"],
    "failcodes metrics --help": [*FC, "metrics", "--help"],
    "failcodes ingest generic-labels --help": [*FC, "ingest", "generic-labels", "--help"],
    "failcodes judge --help": [*FC, "judge", "--help"],
    "failcodes agree --help": [*FC, "agree", "--help"],
    "failcodes run --help": [*FC, "run", "--help"],
}
#: Parse every line of the files named on the command line, as ``ingest`` and ``metrics`` do.
FLOOR = "import json, sys\nfor name in sys.argv[1:]:\n    for line in open(name, 'rb'):\n" + (
    "        json.loads(line)\n"
)


def write_labels(path: Path, n: int, seed: int = 0) -> Path:
    """``n`` sentence labels in bench_study's shape (5 sentences a question, ~15% errors)."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for s in range(n):
            qid = f"q{s // 5:06d}"
            rec = {
                "sentence_id": f"{qid}:s{s % 5}",
                "question_id": qid,
                "has_error": rng.random() < 0.15,
                "rationale": "dose differs from the guideline",
                "annotator": "clinician-1",
            }
            fh.write(json.dumps(rec) + "\n")
    return path


def with_inputs(work: Path) -> dict[str, tuple[list[str], list[Path]]]:
    """Commands that read files: name -> (command, the files its floor parses)."""
    small = write_labels(work / "labels-300.jsonl", 300)
    large = write_labels(work / "labels-2mb.jsonl", 13_500)
    traces, labels = work / "scifact.traces.jsonl", work / "scifact.labels.jsonl"
    if not traces.exists():
        setup = [*FC, "ingest", "scifact", "bundled:scifact", "-o", str(traces)]
        setup += ["--labels-out", str(labels), "--evidence", "provided"]
        subprocess.run(setup, check=True, capture_output=True, env=ENV)
    metrics = [*FC, "metrics", "--traces", str(traces), "--labels", str(labels)]
    metrics += ["-m", "refuted", "-m", "refuted+no_evidence", "-m", "non_supported"]
    metrics += ["--bootstrap", "1000", "-o", str(work / "metrics.json")]
    return {
        f"ingest generic-labels ({small.stat().st_size / 1e3:.0f} KB)": (
            [*FC, "ingest", "generic-labels", str(small), "-o", str(work / "out-300.jsonl")],
            [small],
        ),
        f"ingest generic-labels ({large.stat().st_size / 1e6:.1f} MB)": (
            [*FC, "ingest", "generic-labels", str(large), "-o", str(work / "out-2mb.jsonl")],
            [large],
        ),
        "metrics, the demo's scifact-dev": (metrics, [traces, labels]),
    }


#: The commands' environment (set by main: compiled bytecode or not).
ENV = dict(os.environ)


def run_once(cmd: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one run of ``cmd``; fails loudly."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def timed(name: str, cmd: list[str], runs: int) -> tuple[float, float]:
    """Print and return the median (wall, CPU) of ``runs`` runs of ``cmd`` (after one more)."""
    run_once(cmd)  # (writes the bytecode; the first run also warms the file cache)
    results = [run_once(cmd) for _ in range(runs)]
    walls, cpus = [w for w, _ in results], [c for _, c in results]
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"{name:<48}{wall:>9.3f}{min(walls):>9.3f}{cpu:>9.3f}{min(cpus):>9.3f}", end="")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="Runs of each command.")
    parser.add_argument("--workdir", type=Path, help="Where the inputs go (default: a temp dir).")
    parser.add_argument(
        "--source", action="store_true", help="Compile every module in every run (no .pyc)."
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.source:
            ENV["PYTHONDONTWRITEBYTECODE"] = "1"
            ENV.pop("PYTHONPYCACHEPREFIX", None)
        else:
            ENV.pop("PYTHONDONTWRITEBYTECODE", None)
            ENV["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        inputs = with_inputs(work)
        load = os.getloadavg()
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
        where = "from source, compiled in every run" if args.source else "from compiled .pyc"
        print(f"modules imported {where}")
        head = f"{'command':<48}{'wall med':>9}{'wall min':>9}{'CPU med':>9}{'CPU min':>9}"
        print(f"{head}  (CPU med / python -c pass)")
        figures: dict[str, tuple[float, float]] = {}
        for name, cmd in COMMANDS.items():
            figures[name] = timed(name, cmd, args.runs)
            print(f"  {figures[name][1] / figures['python -c pass'][1]:>5.0f}x")
        print(f"{head}  (CPU med / JSON parse floor of the same files)")
        for name, (cmd, files) in inputs.items():
            _, floor = timed(
                f"  floor: json.loads of {len(files)} file(s)",
                [sys.executable, "-c", FLOOR, *map(str, files)],
                args.runs,
            )
            print()
            _, cpu = timed(name, cmd, args.runs)
            print(f"  {cpu / floor:>5.1f}x (target <= 3x)")
    wall, cpu = figures["failcodes --help"]
    base = figures["python -c pass"][1]
    cores = os.cpu_count() or 1
    end = os.getloadavg()[0]
    if max(load[0], end) >= cores / 2:  # other processes share the cores: wall says little
        verdict = f"not judged, the machine is not quiet (load {load[0]:.2f}-{end:.2f})"
    else:
        verdict = "met" if wall < TARGET_S else "MISSED"
    print(
        f"failcodes --help: median {wall:.3f} s wall (target < {TARGET_S} s on a quiet "
        f"machine: {verdict}), {cpu:.3f} CPU-s = {cpu / base:.0f}x python -c pass; "
        f"load at the end {end:.2f}"
    )


if __name__ == "__main__":
    main()
