"""Issue 30: the scientific-notation id check on the trace fast paths, paired in one process.

A trace JSONL of the shape of ``bench_columnar.py`` (10 passages of ~400 characters a claim;
``--traces`` lines, seeded) is read as ingest's fast path reads it (``byte_blocks`` and
``Voucher.lines``, whose block check is :func:`failcodes.tracelines.shown_exponent`) with the
check as it is and replaced by one that finds nothing (the reader before it), alternated
``--rounds`` times; then its ids as columnar's Parquet scan checks them (one RE2 match a batch
of each id column). Prints CPU seconds of each and the ratio (the best round of each: a
shared machine's load moves both).

    python bench/bench_s30_sci_ids.py [--traces 24000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from failcodes import tracelines
from failcodes.jsonio import byte_blocks
from failcodes.tableio import NUMBER_ID_FIELDS, SHOWN_EXPONENT


def write(path: Path, traces: int, seed: int = 0) -> None:
    """``traces`` trace lines, 10 passages each, seeded (not timed)."""
    rng = random.Random(seed)
    words = ["aspirin", "dose", "renal", "patients", "mg", "daily", "risk", "trial", "the"]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(traces):
            sentence, claim = divmod(i, 12)
            passages = [
                {
                    "passage_id": f"p{sentence}-{claim}-{r}",
                    "rank": r + 1,
                    "text": " ".join(rng.choice(words) for _ in range(60)),
                    "score": round(rng.random(), 4),
                }
                for r in range(10)
            ]
            record = {
                "system": f"R{claim % 4}",
                "question_id": f"q{sentence // 5}",
                "sentence_id": f"q{sentence // 5}:s{sentence}",
                "claim_id": f"q{sentence // 5}:s{sentence}:c{claim // 4}",
                "claim": "Aspirin lowers the risk of stroke.",
                "verdict": rng.choice(["supported", "refuted"]),
                "passages": passages,
            }
            fh.write(json.dumps(record) + "\n")


def read_all(path: Path) -> tuple[float, int]:
    """CPU seconds of the ingest fast path's reader over ``path``, and lines it vouched for."""
    vouch = tracelines.Voucher()
    started = time.process_time()
    vouched = 0
    with path.open("rb", buffering=0) as fh:
        for lines, quotes in byte_blocks(fh, path):
            vouched += sum(rec is not None for rec in vouch.lines(lines, quotes))
    return time.process_time() - started, vouched


def scan_ids(path: Path) -> tuple[float, float]:
    """CPU seconds of reading the id columns of ``path`` (Parquet) and of the RE2 check."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    started = time.process_time()
    table = pq.read_table(path, columns=list(NUMBER_ID_FIELDS))
    read = time.process_time() - started
    started = time.process_time()
    for name in NUMBER_ID_FIELDS:
        pc.any(pc.match_substring_regex(table.column(name), f"^{SHOWN_EXPONENT}$")).as_py()
    return read, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=24_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        write(path, args.traces)
        real = tracelines.shown_exponent
        best = {"check": float("inf"), "none": float("inf")}
        for _ in range(args.rounds):
            for way in ("check", "none"):
                tracelines.shown_exponent = real if way == "check" else (lambda _: False)
                spent, vouched = read_all(path)
                assert vouched == args.traces, vouched
                best[way] = min(best[way], spent)
        tracelines.shown_exponent = real
        size = path.stat().st_size >> 20
        print(f"ingest fast-path reader, {args.traces:,} traces ({size} MB), best of {args.rounds}")
        print(f"  with the id check   {best['check']:.3f} CPU-s")
        print(f"  without             {best['none']:.3f} CPU-s")
        print(f"  ratio               {best['check'] / best['none']:.3f}")
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        table = pa.table({n: [r[n] for r in rows] for n in NUMBER_ID_FIELDS})
        pq.write_table(table, Path(folder) / "ids.parquet")
        ids = Path(folder) / "ids.parquet"
        reads, checks = zip(*(scan_ids(ids) for _ in range(args.rounds)), strict=True)
        print(f"Parquet scan's id check, {args.traces:,} rows x {len(NUMBER_ID_FIELDS)} ids")
        print(f"  reading the id columns {min(reads):.4f} CPU-s; the RE2 check {min(checks):.4f}")


if __name__ == "__main__":
    main()
