"""Issue 30: the study's two ingest steps against their JSON parse floor, paired, 1x and 10x.

The steps are those ``failcodes run`` runs first (``bench_study.py``'s study): ``ingest
generic-labels RAW/labels.jsonl -o OUT.jsonl`` and ``ingest generic RAW/traces.jsonl -o
OUT.parquet --evidence retrieved``. The floor is ``bench_study.py``'s: a ``python -c`` child
that ``json.loads`` every line of the same file and keeps nothing (interpreter start-up
included, as in the study bench). Each child is measured from outside (``wait4``): CPU seconds
(user + system), peak RSS; the 1-minute load average is printed beside each run (CPU seconds
grow on a loaded machine too).

With ``--base SRC`` (another checkout's ``src``, e.g. ``git archive main src | tar -x``) each
step runs paired: floor, base, new, new, base, floor; without it: floor, new, new, floor. The
summary gives each variant's mean CPU over the mean floor and its peak, then per step the peak
at the last RAW folder over the peak at the first (the done-when's "10x peak within 1.5x of
1x"). Every child runs from compiled ``.pyc`` (untimed first runs fill a temporary
``PYTHONPYCACHEPREFIX``), as an installed tool does. Outputs are written under ``--out`` and
deleted after each run, their SHA-256 kept: every run's output must be the same bytes.

    python bench/bench_ingest.py --raw DIR1 [--raw DIR10] [--steps labels,traces]
        [--base /tmp/base/src] [--out /tmp/NAME] [--json F]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_study  # (its launcher measures each child from outside)

REPO = Path(__file__).resolve().parent.parent

FLOOR = """
import json, sys
with open(sys.argv[1], encoding="utf-8") as fh:
    for line in fh:
        if line.strip():
            json.loads(line)
"""

STEPS: dict[str, tuple[str, list[str], str]] = {
    # name: (input file, extra options, output extension)
    "labels": ("labels.jsonl", ["generic-labels"], ".jsonl"),
    "traces": ("traces.jsonl", ["generic"], ".parquet"),
}


def _run(cmd: list[str], env: dict[str, str], out: Path) -> dict[str, Any]:
    load = os.getloadavg()[0]
    cpu, wall, peak = bench_study.measured(cmd, env, out.with_suffix(".log"))
    return {"cpu_s": cpu, "wall_s": wall, "peak_mb": peak, "load": load}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", type=Path, action="append", required=True)
    ap.add_argument("--steps", default="labels,traces")
    ap.add_argument("--base", type=Path, help="another checkout's src folder (paired runs)")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "bench_ingest")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    variants = {"new": REPO / "src"}
    if args.base is not None:
        variants["base"] = args.base.resolve()
    order = ["base", "new", "new", "base"] if "base" in variants else ["new", "new"]
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        envs = {}
        for name, src in variants.items():
            env = dict(os.environ, PYTHONPATH=str(src), PYTHONPYCACHEPREFIX=f"{tmp}/{name}")
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            envs[name] = env
        for raw in args.raw:
            for step in args.steps.split(","):
                source, adapter, ext = STEPS[step]
                path = raw / source
                outs = {name: args.out / f"{step}.{name}{ext}" for name in variants}
                argv = ["ingest", *adapter, str(path)]
                if step == "traces":
                    argv += ["--evidence", "retrieved"]

                def tool(
                    name: str, argv: list[str] = argv, outs: dict[str, Path] = outs
                ) -> list[str]:
                    return [sys.executable, "-m", "failcodes", *argv, "-o", str(outs[name])]

                for name in variants:  # untimed: compiles the modules once
                    bench_study.measured(
                        [sys.executable, "-m", "failcodes", "ingest", "--help"],
                        envs[name],
                        args.out / "warm.log",
                    )
                floor_cmd = [sys.executable, "-c", FLOOR, str(path)]
                runs = (
                    [("floor", floor_cmd)] + [(n, tool(n)) for n in order] + [("floor", floor_cmd)]
                )
                for name, cmd in runs:
                    env = envs.get(name, envs["new"])
                    rec = _run(cmd, env, args.out / f"{step}.{name}")
                    rec.update(step=step, raw=str(raw), variant=name)
                    records.append(rec)
                    print(
                        f"{_name(raw)}/{source:13s} {name:5s} {rec['cpu_s']:7.2f} CPU-s "
                        f"{rec['peak_mb']:7.0f} MB  load {rec['load']:.1f}",
                        flush=True,
                    )
                    if name != "floor":  # its digest, then gone (10x Parquet is GBs)
                        rec["sha256"] = _digest(outs[name])
                        outs[name].unlink()
                digests = {r["sha256"] for r in records[-len(runs) :] if "sha256" in r}
                same = len(digests) == 1
                print(f"  outputs byte-identical across runs and variants: {same}", flush=True)
    _summary(records, args.raw)
    if args.json is not None:
        args.json.write_text(json.dumps(records, indent=1))


def _summary(records: list[dict[str, Any]], raws: list[Path]) -> None:
    print("\nstep    folder            variant  CPU-s (mean)  x floor  peak MB (max)")
    peaks: dict[tuple[str, str, str], float] = {}
    for raw in raws:
        for step in STEPS:
            rows = [r for r in records if r["raw"] == str(raw) and r["step"] == step]
            if not rows:
                continue
            floor = _mean([r["cpu_s"] for r in rows if r["variant"] == "floor"])
            for variant in ("base", "new"):
                mine = [r for r in rows if r["variant"] == variant]
                if not mine:
                    continue
                cpu = _mean([r["cpu_s"] for r in mine])
                peak = max(r["peak_mb"] for r in mine)
                peaks[(str(raw), step, variant)] = peak
                print(
                    f"{step:7s} {_name(raw):17s} {variant:7s} {cpu:12.2f}  {cpu / floor:6.2f}x  "
                    f"{peak:12.0f}   (floor {floor:.2f} CPU-s)"
                )
    if len(raws) > 1:
        first, last = str(raws[0]), str(raws[-1])
        for step in STEPS:
            for variant in ("base", "new"):
                if (first, step, variant) in peaks and (last, step, variant) in peaks:
                    ratio = peaks[(last, step, variant)] / peaks[(first, step, variant)]
                    names = f"{_name(raws[-1])} / {_name(raws[0])}"
                    print(f"{step} {variant}: peak {names} = {ratio:.2f}x")


def _name(raw: Path) -> str:
    """The folder as the summary names it (``scale-1/raw``)."""
    return f"{raw.parent.name}/{raw.name}"


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


if __name__ == "__main__":
    main()
