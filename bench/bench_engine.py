"""Issue 30: metrics and disagreements of failcodes paired with a plain DuckDB script.

The data are bench_columnar's (``--scale 1``: 120,000 traces, 1.2M passage rows, 10,000
labelled sentences, four systems). Three trace files hold the same rows: the JSONL file, the
Parquet file ``failcodes ingest generic`` writes (the study's own validated Parquet, with the
tool's footer marker: the engine reads it as it is), and a Parquet file plain pyarrow wrote
(foreign: the strict readers check it first). Each step is its own child process, measured
from outside (``wait4``): CPU seconds (user + system, all threads), wall seconds, peak RSS.

Pairs (the tool against ``bench/duckdb_ingest.py`` / ``bench/duckdb_metrics.py`` /
``bench/duckdb_disagreements.py``, which import nothing from failcodes):

- ``ingest generic`` of the JSONL to Parquet, every strict check applied, against DuckDB
  reading the JSONL with the trace columns declared and writing them (no check at all): the
  two files must hold the same rows (DuckDB ``EXCEPT ALL`` both ways);
- ``metrics -m refuted -m non_supported --bootstrap 2000``: counts and point estimates must be
  equal, interval endpoints equal to 1e-12 (the bootstrap's sums in another order);
- ``disagreements`` of the same mappings, written as JSONL: the count of disagreements per
  (system, mapping, kind) must be equal; and the tool's own Parquet written as Parquet (no
  script: the figure of the issue's "at most 3x the floor"), as a multiple of the floors.

The floors: the stdlib ``json.loads`` of every JSONL line (no check at all: it keeps the
last of two equal keys and reads ``NaN``), the strict parse of every line with the stdlib
(``failcodes.jsonio.parse_json``: ``json.loads`` with the duplicate-key hook, ``NaN`` /
``Infinity``, depth and lone-surrogate checks; no schema), and reading every column of the
Parquet file. Each failcodes step on the JSONL file is printed as a multiple of both JSON
floors, measured again right before it (a shared machine's load changes CPU-s too). Wall
times vary with the load (printed first); CPU seconds are the steadier figure. Beside each
such multiple (never instead of it) the user CPU alone is printed as a multiple of the strict
parse's: the system CPU of reading and writing files follows the shared machine's page cache
(0.7 to 2.8 s for the same ``disagreements`` run, 5 December 2026), the user CPU much less.
``disagreements`` from the JSONL file writes ~500 MB of JSON, which neither floor does: a
third floor, measured right after it and printed beside (never instead of) the two, is the
strict stdlib parse followed by writing the same bytes, line by line through a 1 MB buffer
(read back from the tool's output: the read of a file just written is in it too).
``--jsonl-only`` runs the ``disagreements`` pair from the JSONL file alone.

Bytecode: every child runs as an installed tool does, its modules from compiled ``.pyc``
(written to a temporary folder by untimed first runs: ``PYTHONPYCACHEPREFIX``), also where
the environment sets ``PYTHONDONTWRITEBYTECODE`` (this machine does: each failcodes process
then compiles every module it imports, ~0.1-0.2 CPU-s). ``--source`` times that instead.

``--times N`` (after the pairs) builds an N-fold copy of the tool's own Parquet file (each
copy's question, sentence and claim ids suffixed ``~k``, so the rows stay validated traces
with no claim twice; the marker restamped for the new row count) and its labels, and pairs
``metrics`` on it (``--bootstrap 200``: the script draws its whole weight matrix at once,
2000 x 100,000 questions would be 1.6 GB) at 1x and Nx: the analysis step past this
machine's JSONL (100x of the JSONL would be 67 GB). With the ``disagreements`` pair,
``disagreements -o X.parquet`` of the tool runs at 1x and Nx too (~90 MB of output at 1x;
the copies' ids interleave in its output order) and its peak is printed over the 1x peak;
the script is left out there (it holds the joined claims in memory: 2.4-2.8 GB at 1x).

    python bench/bench_engine.py [--scale 1] [--workdir DIR --reuse] [--times 10,100]
        [--json out.json] [--pairs ingest,metrics,disagreements] [--source]
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
from pathlib import Path
from typing import Any

from _launch import LAST, measured

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
MAPS = ["-m", "refuted", "-m", "non_supported"]
PAIRS = ["ingest", "metrics", "disagreements"]

FLOOR_JSONL = """
import json, sys
with open(sys.argv[1], encoding="utf-8") as fh:
    for line in fh:
        if line.strip():
            json.loads(line)
"""
FLOOR_STRICT = """
import sys
from failcodes.jsonio import parse_json
with open(sys.argv[1], encoding="utf-8") as fh:
    for number, line in enumerate(fh, start=1):
        if line.strip():
            parse_json(line.rstrip("\\r\\n"), path=sys.argv[1], line=number)
"""
FLOOR_STRICT_WRITE = """
import sys
from failcodes.jsonio import parse_json
with open(sys.argv[1], encoding="utf-8") as fh:
    for number, line in enumerate(fh, start=1):
        if line.strip():
            parse_json(line.rstrip("\\r\\n"), path=sys.argv[1], line=number)
with open(sys.argv[2], "rb") as src, open(sys.argv[3], "wb", buffering=1 << 20) as out:
    for line in src:
        out.write(line)
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


#: The children's environment (set by main: compiled bytecode or not).
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


def measure(cmd: list[str], out: Path | None = None) -> dict[str, float]:
    """Run ``cmd`` (stdout to ``out``); its CPU-s, wall-s and own peak RSS (MB). Fails loudly."""
    sink = out.open("w") if out is not None else subprocess.DEVNULL
    try:
        cpu, wall, peak, code, err = measured(cmd, env=ENV, stdout=sink)
    finally:
        if out is not None and hasattr(sink, "close"):
            sink.close()  # type: ignore[union-attr]
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()[-2000:]}")
    return {"cpu_s": cpu, "wall_s": wall, "peak_mb": peak, "sys_s": LAST.get("sys_s", 0.0)}


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
    parser.add_argument("--times", default="", help="N-fold copies for metrics, e.g. 10,100.")
    parser.add_argument("--skip-pairs", action="store_true", help="Only the --times runs.")
    parser.add_argument("--pairs", default=",".join(PAIRS), help="Which pairs to run.")
    parser.add_argument(
        "--source", action="store_true", help="Compile every module in every run (no .pyc)."
    )
    parser.add_argument(
        "--jsonl-only", action="store_true", help="disagreements: from the JSONL file alone."
    )
    args = parser.parse_args()
    pairs = [p for p in args.pairs.split(",") if p]
    unknown = sorted(set(pairs) - set(PAIRS))
    if unknown:
        parser.error(f"--pairs: unknown {', '.join(unknown)} (pairs: {', '.join(PAIRS)})")
    with tempfile.TemporaryDirectory() as tmp:
        work = (args.workdir or Path(tmp)) / f"scale-{args.scale:g}"
        if args.source:
            ENV["PYTHONDONTWRITEBYTECODE"] = "1"
            ENV.pop("PYTHONPYCACHEPREFIX", None)
        else:  # as an installed tool runs (see bench_startup.py): modules read from .pyc
            ENV.pop("PYTHONDONTWRITEBYTECODE", None)
            ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        records = []
        if not args.skip_pairs:
            records = run(
                work, args.scale, args.seed, reuse=args.reuse, pairs=pairs, only=args.jsonl_only
            )
        if args.times:
            times = [int(t) for t in args.times.split(",")]
            records += scaled(work, times, reuse=args.reuse, pairs=pairs)
    if args.json is not None:
        args.json.write_text(json.dumps(records, indent=2) + "\n")


def same_rows(a: Path, b: Path) -> bool:
    """Whether two Parquet files hold the same rows (as a multiset; DuckDB ``EXCEPT ALL``)."""
    import duckdb

    con = duckdb.connect()
    for x, y in ((a, b), (b, a)):
        query = "SELECT count(*) FROM (FROM read_parquet(?) EXCEPT ALL FROM read_parquet(?))"
        if con.execute(query, [str(x), str(y)]).fetchone() != (0,):
            return False
    return True


def run(
    work: Path,
    scale: float,
    seed: int,
    *,
    reuse: bool,
    pairs: list[str] = PAIRS,
    only: bool = False,
) -> list[dict[str, Any]]:
    """The steps of ``pairs`` at one scale; one record per step."""
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

    tool = [py, "-m", "failcodes"]
    # untimed first runs write the modules' bytecode (and warm the file cache), as
    # bench_startup.py does: every timed run then starts as an installed tool does
    warm = [str(own), str(labels), *MAPS, "--bootstrap", "20"]
    measure([py, str(HERE / "duckdb_metrics.py"), *warm])
    measure([*tool, "metrics", "--traces", warm[0], "--labels", *warm[1:], "--format", "json"])
    step("floor: json.loads of the JSONL", [py, "-c", FLOOR_JSONL, str(traces)])
    step("floor: strict stdlib parse of the JSONL", [py, "-c", FLOOR_STRICT, str(traces)])
    step("floor: every column of own Parquet", [py, "-c", FLOOR_PARQUET, str(own)])
    step("start-up: failcodes metrics --help", [*tool, "metrics", "--help"])
    boot = ["--bootstrap", "2000", "--format", "json"]
    checks: list[str] = []
    if "ingest" in pairs:
        script_out, tool_out = work / "ingest-duckdb.parquet", work / "ingest-tool.parquet"
        vs = "duckdb script ingest, JSONL -> Parquet"
        step(vs, [py, str(HERE / "duckdb_ingest.py"), str(traces), str(script_out)])
        cmd = [*tool, "ingest", "generic", str(traces), "-o", str(tool_out)]
        step("failcodes ingest, JSONL -> Parquet", cmd, None, vs)
        same = same_rows(tool_out, script_out)
        checks.append(f"ingest: the two Parquet files hold {'the same' if same else 'OTHER'} rows")
        script_out.unlink()
        tool_out.unlink()
    for label, path in (("own Parquet", own), ("foreign Parquet", foreign), ("JSONL", traces)):
        if "metrics" not in pairs:
            break
        script_out = work / f"metrics-duckdb-{path.name}.json"
        tool_out = work / f"metrics-tool-{path.name}.json"
        script = [py, str(HERE / "duckdb_metrics.py"), str(path), str(labels), *MAPS]
        step(f"duckdb script metrics, {label}", [*script, "--bootstrap", "2000"], script_out)
        cmd = [*tool, "metrics", "--traces", str(path), "--labels", str(labels), *MAPS, *boot]
        floors = paired_floors(step, path) if label == "JSONL" else None
        rec = step(f"failcodes metrics, {label}", cmd, tool_out, f"duckdb script metrics, {label}")
        if floors is not None:
            checks.append(over_floors("metrics JSONL", rec, floors))
        same, worst = metrics_equal(tool_out, script_out)
        verdict = "equal" if same else "DIFFER"
        checks.append(f"metrics {label}: {verdict} (CI endpoints within {worst:.1e})")
    sources = [("JSONL", traces)] if only else [("own Parquet", own), ("JSONL", traces)]
    for label, path in sources:
        if "disagreements" not in pairs:
            break
        script_out, tool_out = work / "dis-duckdb.jsonl", work / "dis-tool.jsonl"
        counted = work / "dis-duckdb-counts.json"
        script = [py, str(HERE / "duckdb_disagreements.py"), str(path), str(labels)]
        step(f"duckdb script disagreements, {label}", [*script, str(script_out), *MAPS], counted)
        cmd = [*tool, "disagreements", "--traces", str(path), "--labels", str(labels), *MAPS]
        vs = f"duckdb script disagreements, {label}"
        floors = paired_floors(step, path) if label == "JSONL" else None
        rec = step(f"failcodes disagreements, {label}", [*cmd, "-o", str(tool_out)], None, vs)
        if floors is not None:
            checks.append(over_floors("disagreements JSONL", rec, floors))
            written = work / "dis-floor.jsonl"
            name = "  floor (paired): strict parse + write"
            cmd = [py, "-c", FLOOR_STRICT_WRITE, str(path), str(tool_out), str(written)]
            both = step(name, cmd)
            written.unlink()
            rec["x_strict_parse_write"] = rec["cpu_s"] / both["cpu_s"]
            checks.append(
                f"disagreements JSONL: {rec['x_strict_parse_write']:.2f}x the strict parse + "
                f"writing its {tool_out.stat().st_size / 1e6:.0f} MB ({both['cpu_s']:.2f} CPU-s, "
                f"system {both['sys_s']:.2f})"
            )
        rows = json.loads(counted.read_text("utf-8"))
        theirs = {(r["system"], r["mapping"], r["kind"]): r["n"] for r in rows}
        same = disagreement_counts(tool_out) == theirs
        checks.append(
            f"disagreements {label}: {sum(theirs.values()):,} "
            f"{'equal' if same else 'DIFFER'} per (system, mapping, kind)"
        )
        script_out.unlink()
        tool_out.unlink()
        if path == own:  # the tool's own Parquet to Parquet, against the JSONL's floors
            floors = paired_floors(step, traces)
            table_out = work / "dis-tool.parquet"
            name = "failcodes disagreements, own -> Parquet"
            rec = step(name, [*cmd, "-o", str(table_out)])
            checks.append(over_floors("disagreements own Parquet -> Parquet", rec, floors))
            table_out.unlink()
    for line in checks:
        print(line)
    start = next(r["cpu_s"] for r in records if r["step"].startswith("start-up"))
    print(f"(the tool's start-up, {start:.2f} CPU-s, is in each failcodes row)")
    return records


def paired_floors(step: Any, path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both JSON floors of ``path`` measured now (right before the step they are paired with)."""
    py = sys.executable
    plain = step("  floor (paired): json.loads", [py, "-c", FLOOR_JSONL, str(path)])
    strict = step("  floor (paired): strict stdlib parse", [py, "-c", FLOOR_STRICT, str(path)])
    return plain, strict


def over_floors(name: str, rec: dict[str, Any], floors: tuple[dict[str, Any], ...]) -> str:
    """``rec``'s CPU-s as a multiple of the paired floors (recorded in ``rec`` too)."""
    plain, strict = floors
    rec["x_json_loads"] = rec["cpu_s"] / plain["cpu_s"]
    rec["x_strict_parse"] = rec["cpu_s"] / strict["cpu_s"]
    # user CPU alone beside it (never instead): the system CPU of writing and reading files
    # follows the shared machine's page cache (0.7-2.8 s for the same disagreements run)
    user, strict_user = rec["cpu_s"] - rec["sys_s"], strict["cpu_s"] - strict["sys_s"]
    rec["x_strict_parse_user"] = user / strict_user
    return (
        f"{name}: {rec['x_json_loads']:.2f}x json.loads ({plain['cpu_s']:.2f} CPU-s), "
        f"{rec['x_strict_parse']:.2f}x the strict stdlib parse ({strict['cpu_s']:.2f} CPU-s); "
        f"user CPU alone {rec['x_strict_parse_user']:.2f}x ({user:.2f} against "
        f"{strict_user:.2f}; system {rec['sys_s']:.2f} against {strict['sys_s']:.2f})"
    )


def replicate(own: Path, labels: Path, times: int, out: Path) -> tuple[Path, Path]:
    """``times`` copies of the tool's Parquet and of the labels, ids suffixed per copy."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    sys.path.insert(0, str(REPO / "src"))
    from failcodes.engine import seal, validated_marker
    from failcodes.tableio import PARQUET_ROWS

    traces, labelled = out / f"own-x{times}.parquet", out / f"labels-x{times}.jsonl"
    table = pq.read_table(own)
    with pq.ParquetWriter(traces, table.schema) as writer:
        for k in range(times):
            copy = table
            for name in ("question_id", "sentence_id", "claim_id"):
                at = copy.schema.get_field_index(name)
                suffixed = pc.binary_join_element_wise(copy[name], pa.scalar(f"~{k}"), "")
                copy = copy.set_column(at, name, suffixed)
            writer.write_table(copy, row_group_size=PARQUET_ROWS)  # as the tool writes
        writer.add_key_value_metadata(validated_marker("traces", times * table.num_rows))
    seal(traces)  # as the tool's writer does (tableio.stage_table)
    rows = [json.loads(line) for line in labels.read_text("utf-8").splitlines()]
    with labelled.open("w", encoding="utf-8") as fh:
        for k in range(times):
            for r in rows:
                r2 = {**r, "sentence_id": f"{r['sentence_id']}~{k}"}
                r2["question_id"] = f"{r['question_id']}~{k}"
                fh.write(json.dumps(r2) + "\n")
    return traces, labelled


def scaled(
    work: Path, times: list[int], *, reuse: bool, pairs: list[str] = PAIRS
) -> list[dict[str, Any]]:
    """metrics on N-fold copies of the tool's own Parquet: the tool and the script.

    With ``disagreements`` in ``pairs``, the tool's ``disagreements -o X.parquet`` too.
    """
    py = sys.executable
    own, labels = work / "own.parquet", work / "labels.jsonl"
    records: list[dict[str, Any]] = []
    print(f"\n{'N-fold own Parquet, metrics':<40} {'CPU-s':>7} {'wall-s':>7} {'peak MB':>8}")
    for n in [1, *times]:
        if n == 1:
            traces, labelled = own, labels
        else:
            traces, labelled = work / f"own-x{n}.parquet", work / f"labels-x{n}.jsonl"
            if not (reuse and traces.exists() and labelled.exists()):
                # in a child: a step forked from a large parent starts with its peak RSS
                call = f"replicate(P({str(own)!r}), P({str(labels)!r}), {n}, P({str(work)!r}))"
                code = f"from bench_engine import replicate; from pathlib import Path as P; {call}"
                subprocess.run([py, "-c", code], check=True, cwd=HERE)
        size = traces.stat().st_size / 1e6
        outs = {}
        for who in ("duckdb script", "failcodes"):
            out = work / f"scaled-{who.split()[0]}-x{n}.json"
            if who == "failcodes":
                cmd = [py, "-m", "failcodes", "metrics", "--traces", str(traces)]
                cmd += ["--labels", str(labelled), *MAPS, "--bootstrap", "200", "--format", "json"]
            else:
                cmd = [py, str(HERE / "duckdb_metrics.py"), str(traces), str(labelled), *MAPS]
                cmd += ["--bootstrap", "200"]
            rec = {"times": n, "step": f"{who} metrics x{n}", **measure(cmd, out)}
            records.append(rec)
            outs[who] = out
            print(
                f"{rec['step'] + f' ({size:,.0f} MB)':<40} {rec['cpu_s']:7.2f} "
                f"{rec['wall_s']:7.2f} {rec['peak_mb']:8.0f}",
                flush=True,
            )
        same, worst = metrics_equal(outs["failcodes"], outs["duckdb script"])
        print(f"  x{n}: numbers {'equal' if same else 'DIFFER'} (CI endpoints within {worst:.1e})")
        if "disagreements" in pairs:
            out = work / f"scaled-dis-x{n}.parquet"
            cmd = [py, "-m", "failcodes", "disagreements", "--traces", str(traces)]
            cmd += ["--labels", str(labelled), *MAPS, "-o", str(out)]
            rec = {"times": n, "step": f"failcodes disagreements x{n}", **measure(cmd)}
            out.unlink()
            records.append(rec)
            base = next(r for r in records if r["step"] == "failcodes disagreements x1")
            print(
                f"{rec['step'] + ' -> Parquet':<40} {rec['cpu_s']:7.2f} {rec['wall_s']:7.2f} "
                f"{rec['peak_mb']:8.0f}  peak {rec['peak_mb'] / base['peak_mb']:.2f}x the 1x peak",
                flush=True,
            )
    return records


if __name__ == "__main__":
    main()
