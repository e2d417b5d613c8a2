"""A study data set of several traces ingests: parts written as JSONL or as the tool's Parquet.

Session 27 (t27drop) wrote a study's traces parts as Parquet so that a part's record of rows
it left out (a system whose every row had no verdict) reaches the merged traces; this measured
the merge of Parquet parts at 3.9x the CPU of JSONL parts, so the parts are JSONL again, with
the record beside each (``dropped.beside``). The generic reader built a model per row of the
tool's own Parquet; since session 28 a file carrying the marker of validated traces is read as
vouched trace structs, as JSONL lines are (``ingest.table.TableStream._own_rows``): at
``--rows 20000`` (load 7-8) the merge went from 2.95x (2.21 / 0.74 CPU-s) to 1.26x
(0.93 / 0.74) the JSONL parts' merge; at ``--rows 60000`` (load 9) 1.23x (1.50 / 1.22), for
session 27's 3.90x (5.38 / 1.38). This prints
the CPU time (user + sys) and peak memory of each step, for both part formats, in one run:
two systems of ``--rows`` claims each, one ingest each (the parts), then the merge
(``ingest generic PARTS -o merged.parquet``) as ``failcodes run`` plans it.

    PYTHONPATH=src python bench/bench_study_parts.py --rows 60000
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

VERDICTS = ("supported", "refuted", "not_enough_info")


def _tables(folder: Path, rows: int) -> list[Path]:
    rng = random.Random(0)
    paths = []
    for system in ("A", "B"):
        path = folder / f"{system}.csv"
        with path.open("w", encoding="utf-8") as f:
            f.write("question_id,sentence_id,claim_id,claim,verdict\n")
            for i in range(rows):
                q = i // 30
                f.write(f"q{q},q{q}s{i // 3},c{i},claim {i} about a dose,{rng.choice(VERDICTS)}\n")
        paths.append(path)
    return paths


def _step(args: list[str]) -> tuple[float, int]:
    """CPU seconds (user + sys) and peak RSS (MB) of ``failcodes ARGS`` in a child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "failcodes", *args],
        check=True,
        capture_output=True,
        env=os.environ.copy(),
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss // 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=60000, help="claims per system")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        tables = _tables(folder, opts.rows)
        totals = {}
        for ext in ("jsonl", "parquet"):
            parts = [folder / f"{n}.{ext}" for n in (1, 2)]
            total = 0.0
            for system, table, part in zip("AB", tables, parts, strict=True):
                cpu, rss = _step(
                    ["ingest", "generic", str(table), "--system", system, "-o", str(part)]
                )
                print(f"{ext:8} part {system}: {cpu:6.2f} CPU-s")
                total += cpu
            merged = folder / f"merged_{ext}.parquet"
            cpu, rss = _step(["ingest", "generic", *map(str, parts), "-o", str(merged)])
            print(f"{ext:8} merge : {cpu:6.2f} CPU-s (children's peak RSS so far {rss} MB)")
            totals[ext] = (total + cpu, cpu)
        (j_all, j_merge), (p_all, p_merge) = totals["jsonl"], totals["parquet"]
        print(f"merge   parquet/jsonl: {p_merge / j_merge:.2f}x ({p_merge:.2f} / {j_merge:.2f})")
        print(f"parts+merge parquet/jsonl: {p_all / j_all:.2f}x ({p_all:.2f} / {j_all:.2f})")
        print(f"load: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
