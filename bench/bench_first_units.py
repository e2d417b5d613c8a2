"""Issue 30 benchmark: FirstUnits (failcodes.unitrepeats) over a paper-scale table in chunks.

The report and ``attribute`` read a per-passage table a chunk at a time (20,000 rows) and ask
:class:`failcodes.unitrepeats.FirstUnits` which rows repeat a (retriever, unit) an earlier row
held. Rows here: per chunk, three in four a unit not seen before and one in four a unit of an
earlier row (any chunk's, this one's included), its codes the first row's; each key a 64-bit
hash of the unit's number (splitmix64), so no table is held in memory. Each row count runs in
its own process (``bench/_launch.py``: CPU s and peak RSS of the whole process, numpy's import
and the chunks' generation included); ``calls s`` is the CPU of the ``repeated`` calls alone.

    python bench/bench_first_units.py [--rows 1200000,12000000] [--src SRC]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from _launch import measured

REPO = Path(__file__).resolve().parent.parent
CHUNK = 20_000


def _splitmix(x: object) -> object:
    import numpy as np

    z = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def run(rows: int) -> None:
    """The child: feed ``rows`` rows in chunks; print the calls' CPU and the counts."""
    import numpy as np

    from failcodes.unitrepeats import FirstUnits

    rng = np.random.default_rng(30)
    seen = FirstUnits()
    units = 0
    calls = 0.0
    with np.errstate(over="ignore"):
        for start in range(0, rows, CHUNK):
            n = min(CHUNK, rows - start)
            fresh = n - n // 4
            index = np.concatenate(
                [np.arange(units, units + fresh), rng.integers(0, units + fresh, n // 4)]
            )
            units += fresh
            keys = _splitmix(index)
            codes = _splitmix(index * np.uint64(3))
            ids = range(n)
            before = time.process_time()
            seen.repeated(keys, codes, ids)  # type: ignore[arg-type]
            calls += time.process_time() - before
    print(f"{calls:.2f} {units} {seen.repeats} {seen.differ}", file=sys.stderr)


def main() -> None:
    """Run each row count in its own process; print CPU s, calls s and peak MB."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1200000,12000000")
    parser.add_argument("--src", type=Path, default=REPO / "src")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        run(args.child)
        return
    env = {**os.environ, "PYTHONPATH": str(args.src.resolve())}
    print(f"src: {args.src.resolve()}; load {os.getloadavg()[0]:.2f}")
    print(f"{'rows':>10} {'units':>10} {'repeats':>9} {'CPU s':>7} {'calls s':>8} {'peak MB':>8}")
    for rows in (int(r) for r in args.rows.split(",")):
        cpu, _, peak, code, err = measured(
            [sys.executable, __file__, "--child", str(rows)], env=env
        )
        if code:
            raise SystemExit(err.decode())
        calls, units, repeats, _ = err.decode().split()[-4:]  # the child's last line
        print(f"{rows:>10} {units:>10} {repeats:>9} {cpu:7.1f} {float(calls):8.2f} {peak:8.0f}")


if __name__ == "__main__":
    main()
