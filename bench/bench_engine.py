"""Issue 30: metrics and disagreements of failcodes paired with a plain DuckDB script.

The data are bench_columnar's (``--scale 1``: 120,000 traces, 1.2M passage rows, 10,000
labelled sentences, four systems). Three trace files hold the same rows: the JSONL file, the
Parquet file ``failcodes ingest generic`` writes (the study's own validated Parquet, with the
tool's footer marker: the engine reads it as it is), and a Parquet file plain pyarrow wrote
(foreign: the strict readers check it first). Each step is its own child process, measured
from outside (``wait4``): CPU seconds (user + system, all threads), wall seconds, peak RSS.

Pairs (the tool against ``bench/duckdb_metrics.py`` / ``bench/duckdb_disagreements.py``,
which import nothing from failcodes):

- ``metrics -m refuted -m non_supported --bootstrap 2000``: counts and point estimates must be
  equal, interval endpoints equal to 1e-12 (the bootstrap's sums in another order);
- ``disagreements`` of the same mappings, written as JSONL: the count of disagreements per
  (system, mapping, kind) must be equal.

The floors: the stdlib ``json.loads`` of every JSONL line (what the strict reader cannot
beat), and reading every column of the Parquet file. Wall times on a shared machine vary
with its load (printed first); CPU seconds are the steadier figure.

    python bench/bench_engine.py [--scale 1] [--workdir DIR --reuse] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
MAPS = ["-m", "refuted", "-m", "non_supported"]

FLOOR_JSONL = """
import json, sys
with open(sys.argv[1], encoding="utf-8") as fh:
    for line in fh:
        if line.strip():
            json.loads(line)
"""
FLOOR_PARQUET = """
import sys
import pyarrow.parquet as pq
for batch in pq.ParquetFile(sys.argv[1]).iter_batches(batch_size=10_000):
    pass
"""


def _columnar() -> Any:
    """bench_columnar (its generator), imported from its path."""
    spec = importlib.util.spec_from_file_location("bench_columnar", HERE / "bench_columnar.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(cmd: list[str], out: Path | None = None) -> dict[str, float]:
    """Run ``cmd`` (stdout to ``out``); its CPU-s, wall-s and peak RSS (MB). Fails loudly."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    sink = out.open("w") if out is not None else subprocess.DEVNULL
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=sink, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if out is not None and hasattr(sink, "close"):
        sink.close()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return {"cpu_s": cpu, "wall_s": wall, "peak_mb": usage.ru_maxrss / 1024}


def metrics_equal(tool: Path, script: Path) -> tuple[bool, float]:
    """Counts and points equal; the largest difference of an interval endpoint."""
    ours = {(r["system"], r["mapping"]): r for r in json.loads(tool.read_text("utf-8"))}
    theirs = {(r["system"], r["mapping"]): r for r in json.loads(script.read_text("utf-8"))}
    same = ours.keys() == theirs.keys()
    worst = 0.0
    for key in ours.keys() & theirs.keys():
        a, b = ours[key], theirs[key]
        same &= all(a[k] == b[k] for k in ("n", "tp", "fp", "fn", "tn"))
        for name in ("precision", "recall", "f1"):
            same &= a[name] == b[name]
            for end, their in (("ci_low", "low"), ("ci_high", "high")):
                x, y = a[f"{name}_{end}"], b[f"{name}_{their}"]
                if (x is None) != (y is None):
                    same = False
                elif x is not None:
                    worst = max(worst, abs(x - y))
    return same and worst <= 1e-12, worst


def disagreement_counts(path: Path) -> dict[tuple[str, str, str], int]:
    """Disagreements per (system, mapping, kind) in the tool's JSONL output."""
    counts: collections.Counter[tuple[str, str, str]] = collections.Counter()
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            counts[(d["system"], d["mapping"], d["kind"])] += 1
    return dict(counts)


def main() -> None:
    """Generate (or reuse) the data, run each pair, print and compare the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--workdir", type=Path, default=None, help="Keep the data here.")
    parser.add_argument("--reuse", action="store_true", help="Reuse data in --workdir.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = (args.workdir or Path(tmp)) / f"scale-{args.scale:g}"
        records = run(work, args.scale, args.seed, reuse=args.reuse)
    if args.json is not None:
        args.json.write_text(json.dumps(records, indent=2) + "\n")


def run(work: Path, scale: float, seed: int, *, reuse: bool) -> list[dict[str, Any]]:
    """All the steps at one scale; one record per step."""
    py = sys.executable
    traces, foreign = work / "traces.jsonl", work / "traces.parquet"
    labels, own = work / "labels.jsonl", work / "own.parquet"
    if not (reuse and all(p.exists() for p in (traces, foreign, labels))):
        _columnar().generate(work, scale, seed)
    if not (reuse and own.exists()):
        measure([py, "-m", "failcodes", "ingest", "generic", str(traces), "-o", str(own)])
    print(
        f"scale {scale:g}: {traces.stat().st_size / 1e6:.0f} MB JSONL, own Parquet "
        f"{own.stat().st_size / 1e6:.0f} MB; {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.2f}"
    )
    print(f"{'step':<40} {'CPU-s':>7} {'wall-s':>7} {'peak MB':>8}  CPU vs DuckDB script")
    records: list[dict[str, Any]] = []

    def step(name: str, cmd: list[str], out: Path | None = None, vs: str = "") -> dict[str, Any]:
        rec = {"scale": scale, "step": name, **measure(cmd, out)}
        if vs:
            base = next(r for r in records if r["step"] == vs)
            rec["cpu_ratio"] = rec["cpu_s"] / base["cpu_s"]
        records.append(rec)
        ratio = f"{rec['cpu_ratio']:5.2f}x" if vs else ""
        print(
            f"{name:<40} {rec['cpu_s']:7.2f} {rec['wall_s']:7.2f} {rec['peak_mb']:8.0f}  {ratio}",
            flush=True,
        )
        return rec

    step("floor: json.loads of the JSONL", [py, "-c", FLOOR_JSONL, str(traces)])
    step("floor: every column of own Parquet", [py, "-c", FLOOR_PARQUET, str(own)])
    tool = [py, "-m", "failcodes"]
    step("start-up: failcodes metrics --help", [*tool, "metrics", "--help"])
    boot = ["--bootstrap", "2000", "--format", "json"]
    checks: list[str] = []
    for label, path in (("own Parquet", own), ("foreign Parquet", foreign), ("JSONL", traces)):
        script_out = work / f"metrics-duckdb-{path.name}.json"
        tool_out = work / f"metrics-tool-{path.name}.json"
        script = [py, str(HERE / "duckdb_metrics.py"), str(path), str(labels), *MAPS]
        step(f"duckdb script metrics, {label}", [*script, "--bootstrap", "2000"], script_out)
        cmd = [*tool, "metrics", "--traces", str(path), "--labels", str(labels), *MAPS, *boot]
        step(f"failcodes metrics, {label}", cmd, tool_out, f"duckdb script metrics, {label}")
        same, worst = metrics_equal(tool_out, script_out)
        verdict = "equal" if same else "DIFFER"
        checks.append(f"metrics {label}: {verdict} (CI endpoints within {worst:.1e})")
    for label, path in (("own Parquet", own), ("JSONL", traces)):
        script_out, tool_out = work / "dis-duckdb.jsonl", work / "dis-tool.jsonl"
        counted = work / "dis-duckdb-counts.json"
        script = [py, str(HERE / "duckdb_disagreements.py"), str(path), str(labels)]
        step(f"duckdb script disagreements, {label}", [*script, str(script_out), *MAPS], counted)
        cmd = [*tool, "disagreements", "--traces", str(path), "--labels", str(labels), *MAPS]
        vs = f"duckdb script disagreements, {label}"
        step(f"failcodes disagreements, {label}", [*cmd, "-o", str(tool_out)], None, vs)
        rows = json.loads(counted.read_text("utf-8"))
        theirs = {(r["system"], r["mapping"], r["kind"]): r["n"] for r in rows}
        same = disagreement_counts(tool_out) == theirs
        checks.append(
            f"disagreements {label}: {sum(theirs.values()):,} "
            f"{'equal' if same else 'DIFFER'} per (system, mapping, kind)"
        )
        script_out.unlink()
        tool_out.unlink()
    for line in checks:
        print(line)
    start = next(r["cpu_s"] for r in records if r["step"].startswith("start-up"))
    print(f"(the tool's start-up, {start:.2f} CPU-s, is in each failcodes row)")
    return records


if __name__ == "__main__":
    main()
