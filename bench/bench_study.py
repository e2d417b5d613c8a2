"""Issue 30 benchmark: a whole study at paper scale, CPU and peak RSS per step.

Data: the traces of ``bench_columnar.py`` (10,000 answer sentences x 3 claims x 4 retrievers
x 10 passages of ~400 characters = 120,000 traces, 1.2M passage rows, ~706 MB of JSONL at
``--scales 1``) and its sentence labels, generated seeded (not timed). A study folder is
written around them (``generic`` and ``generic-labels`` ingest, ``[metrics]`` refuted and
non_supported with a 2,000-resample bootstrap, disagreements on refuted, the ``offline`` judge
-- a heuristic baseline -- on both kinds, Label Studio task files) and run the way
``failcodes run`` runs it: a driver process plans, runs the first pending step, records it,
plans again. Here each step runs as its own ``python -m failcodes ARGV`` child (the command
``failcodes run --plan`` prints), so its CPU seconds (user + system) and peak RSS are its own
(``wait4``); the driver's own planning and fingerprinting between steps is the ``run
overhead`` row (CPU of every plan; the driver's peak RSS).

Each step's floor is the CPU of parsing every file it reads with the standard library and
keeping nothing (``json.loads`` per JSONL line, ``json.load`` of a JSON file, ``csv.reader``
of a CSV; for the study's Parquet traces, pyarrow reading every column, less the CPU of
importing pyarrow), measured right after the step (a shared machine's load moves both); the
files a step reads are read once, untimed, right before it, as its floor reads them just
after it: cached (the reasoning task export took 6.0 CPU-s in this bench, run after the
retrieval export had written 776 MB, and 2.2-2.5 run by hand right after its inputs were
read, load ~10, 5 December 2026: reading from disk is system CPU a cached floor never pays,
the likely difference); the
ratio is the step's CPU over that floor; beside it (never instead of it) the ``user x``
column is the step's user CPU over the floor's, and ``sys s`` the step's system CPU: a step
writing a large file (the retrieval task file, ~780 MB at 1x) spends system CPU in the page
cache, which a loaded machine short of free memory swings (the same retrieval export: 2.9 and
4.3 system CPU-s beside ~5.1 user, 5 December 2026), and the parse floor writes nothing.
The report reads the whole folder:
its floor is the traces, labels, metrics, disagreements, judge annotations and attribution
tables. The judge steps are shown but left out of the total ("excluding the judge itself");
the judge's storage per unit (journal + annotations) is printed after them.

Bytecode: the steps run as an installed tool does, their modules read from compiled ``.pyc``
(``--src`` compiled first, untimed), also where the environment sets
``PYTHONDONTWRITEBYTECODE`` (this machine does: every step then compiled every failcodes module
it imports, ~0.1 CPU-s, a fifth of the labels ingest). Each step is its own process, so each
pays the CLI's start-up, which ``failcodes run`` pays once: the ``start s`` column is the CPU
of the step's own command line with ``--help`` added (Python, the CLI and the modules the
command imports; 0.13-0.28 CPU-s on 4 December); a step whose floor is under ~0.1 s (the
labels ingest) is mostly that start-up.

Targets (issue 30): total under 400 CPU-s without the judge, every step's peak under 1 GB and
at most 3x its floor; at 10x every step's peak within 1.5x of its 1x peak.

``--replicate-judge STUDY`` (e.g. the kept 1x study of an earlier ``--keep`` run) measures
every step but the judge at a larger scale without judging it (the offline judge took 114
CPU-s at 1x on 4 December, 77 retrieval + 37 reasoning: ~20 minutes at 10x): each judge step
is replaced by copying STUDY's journal of the same kind, row after row and over again, onto
this study's units, each row under the id the tool computes for the unit it now stands for
(units streamed by ``failcodes.unitstream``, the judge's own reader), then exported as the
judge exports a run. The codes are the copied ones, not a judgement of these units. Its rows
are labelled ``REPLICATED`` and are not judge measurements. Disk: the journals and
annotations of a real run of that size (about 5.3 KB a unit on 4 December: ~12.6 GB at 10x;
the whole 10x study folder peaked at ~26 GB beside its 6.8 GB of traces).

    python bench/bench_study.py --scales 1,10 [--src /tmp/base/src] [--workdir DIR] [--json F]
    python bench/bench_study.py --scales 10 --reuse --keep --replicate-judge DIR/scale-1/study
        [--baseline 1x.json]   (the 1x run's --json: each step's 10x peak over its 1x peak)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _launch import LAST
from _launch import measured as measured_cmd

REPO = Path(__file__).resolve().parent.parent
CODEBOOK = "medical-fact-check.v1.yaml"
TARGET_TOTAL_CPU = 400.0
TARGET_PEAK_MB = 1024.0
TARGET_RATIO = 3.0

STUDY_TOML = """\
# issue 30 benchmark study (bench/bench_study.py); the offline judge is a heuristic baseline
name = "bench"
codebook = "{codebook}"

[[datasets]]
name = "paper"
[[datasets.ingest]]
adapter = "generic"
paths = ["{traces}"]
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["{labels}"]
[[datasets.pipelines]]
system = "*"
evidence = "retrieved"

[metrics]
mappings = ["refuted", "non_supported"]
bootstrap = 2000
seed = 0

[disagreements]
mapping = "refuted"

[judge]
judge = "offline"
"""

FLOOR = """
import csv, json, sys
for name in sys.argv[1:]:
    if name.endswith(".jsonl"):
        with open(name, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    json.loads(line)
    elif name.endswith(".json"):
        with open(name, encoding="utf-8") as fh:
            json.load(fh)
    elif name.endswith(".csv"):
        with open(name, encoding="utf-8", newline="") as fh:
            for _ in csv.reader(fh):
                pass
    elif name.endswith(".parquet"):
        import pyarrow.parquet as pq
        pq.read_table(name)
"""


def generate(folder: Path, scale: float, seed: int) -> None:
    """Write ``traces.jsonl`` and ``labels.jsonl`` (bench_columnar's shapes), streaming."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_columnar as columnar

    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "traces.jsonl").open("w", encoding="utf-8") as fh:
        for rec in columnar._traces(scale, seed):
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    lrng = random.Random(seed + 7)
    n_sentences = max(columnar.PER_QUESTION, round(columnar.SENTENCES * scale))
    with (folder / "labels.jsonl").open("w", encoding="utf-8") as fh:
        for s in range(n_sentences):
            qid = f"q{s // columnar.PER_QUESTION:06d}"
            rec = {
                "sentence_id": f"{qid}:s{s % columnar.PER_QUESTION}",
                "question_id": qid,
                "has_error": lrng.random() < 0.15,
                "rationale": "dose differs from the guideline",
                "annotator": "clinician-1",
            }
            fh.write(json.dumps(rec) + "\n")


def measured(cmd: list[str], env: dict[str, str] | None, log: Path) -> tuple[float, float, float]:
    """Run ``cmd`` (output to ``log``); return (CPU s, wall s, own peak RSS MB). Fails loudly.

    Its system CPU seconds are ``_launch.LAST["sys_s"]`` until the next call.

    Through bench/_launch.py's small launcher (the driver is large after planning, and a
    child started from it would count the driver's memory as its own peak).
    """
    with log.open("w") as fh:
        cpu, wall, peak, code, _ = measured_cmd(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT)
    if code != 0:
        tail = log.read_text(errors="replace")[-2000:]
        raise SystemExit(f"{' '.join(cmd)} failed:\n{tail}")
    return cpu, wall, peak


REPLICATED = "REPLICATED, not a judge measurement"


def replicate(source_run: Path, step_json: Path) -> None:
    """Fill a judge step's run folder from ``source_run``'s journal (see the module docstring).

    Rows are copied in ``seq`` order, over again as often as needed; each takes the id of the
    next unit of the step's input (``iter_disagreement_units``: the judge's order, its ids),
    in its column and in its annotation. Then the run is exported (``annotations.jsonl``,
    ``summary.json``) as ``failcodes judge`` exports it.
    """
    import sqlite3

    from failcodes.codebook import UnitKind
    from failcodes.judge.journal import JOURNAL_NAME, Journal
    from failcodes.judge.run import export_run, read_summary
    from failcodes.unitstream import iter_disagreement_units

    spec = json.loads(step_json.read_text())
    kind, source, out = UnitKind(spec["kind"]), Path(spec["source"]), Path(spec["output"])
    top_k = spec.get("top_k")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    src = Journal(source_run)
    meta = src.meta()
    src.close()
    journal = Journal(out)  # the schema, by the tool's migrations
    journal.bind(meta)
    journal.close()
    source_db = f"file:{source_run / JOURNAL_NAME}?mode=ro"
    with sqlite3.connect(source_db, uri=True) as peek:
        table = peek.execute("PRAGMA table_info(annotations)").fetchall()
    columns = [r[1] for r in table if r[1] != "seq"]
    at_id, at_ann = columns.index("unit_id"), columns.index("annotation")
    marks = ", ".join("?" * len(columns))
    insert = f"INSERT INTO annotations ({', '.join(columns)}) VALUES ({marks})"
    select = f"SELECT {', '.join(columns)} FROM annotations ORDER BY seq"

    def source_rows() -> Any:
        while True:  # the source's rows, over again from the first
            src_con = sqlite3.connect(source_db, uri=True)
            given = 0
            for row in src_con.execute(select):
                given += 1
                yield row
            src_con.close()
            if not given:
                raise SystemExit(f"{source_run}: no journal rows to replicate")

    con = sqlite3.connect(out / JOURNAL_NAME, isolation_level=None)
    con.execute("BEGIN")
    rows = source_rows()
    batch: list[list[Any]] = []
    units = 0
    for item in iter_disagreement_units(source, kind, top_k=top_k, words=False):
        values = list(next(rows))
        old, new = values[at_id], item.id
        values[at_id] = new
        values[at_ann] = values[at_ann].replace(f'"unit_id":"{old}"', f'"unit_id":"{new}"', 1)
        batch.append(values)
        units += 1
        if len(batch) >= 10_000:
            con.executemany(insert, batch)
            batch = []
    con.executemany(insert, batch)
    con.execute("COMMIT")
    con.close()
    summary = read_summary(source_run)
    if summary is not None:
        summary = summary.model_copy(update={"units": units, "judged": units, "already_done": 0})
        summary.journal_units = units
    export_run(out, summary)
    print(f"{REPLICATED}: {units} units from {source_run}")


def drive(study: Path, record: Path, replicate_from: Path | None = None) -> None:
    """The driver: ``failcodes run``'s loop, each step a measured child; one JSON line a step.

    ``replicate_from``: a judge step is :func:`replicate` from that study's run of its kind.
    """
    import resource

    from failcodes.study.config import load_study
    from failcodes.study.layout import StudyLayout
    from failcodes.study.runner import log_path, run_steps
    from failcodes.study.steps import Step, plan_study

    layout = StudyLayout.of(study)
    config = load_study(layout.root)
    plans: list[float] = []

    def plan() -> list[Step]:
        t0 = time.process_time()
        steps = plan_study(config, layout)
        plans.append(time.process_time() - t0)
        return steps

    def execute(step: Step) -> None:
        log = log_path(layout, step)
        log.parent.mkdir(parents=True, exist_ok=True)
        # the command line `failcodes run --plan` prints for the step (its request)
        argv = getattr(step, "argv", None) or shlex.split(step.command())[1:]
        cmd = [sys.executable, "-m", "failcodes", *argv]
        name = step.name
        if replicate_from is not None and step.name.startswith("judge "):
            req = step.request
            run = Path(req.output)
            spec = log.with_suffix(".replicate.json")
            spec.write_text(
                json.dumps(
                    {
                        "kind": req.kind.value,
                        "source": str(req.source),
                        "output": str(run),
                        "top_k": req.top_k,
                    }
                )
            )
            source_run = replicate_from / "judge" / run.parent.name / run.name
            cmd = [sys.executable, __file__, "--replicate", str(source_run), "--record", str(spec)]
            name = f"{step.name} ({REPLICATED})"
        files = _reads(step.name, [str(p) for p in step.inputs], layout.root)
        for f in files:  # read once, untimed: the step and its floor both read them cached
            with f.open("rb", buffering=0) as fh:
                while fh.read(1 << 23):
                    pass
        cpu, wall, rss = measured(cmd, None, log)
        system = LAST.get("sys_s", 0.0)
        startup = None
        if replicate_from is None or not step.name.startswith("judge "):
            startup, _, _ = measured([*cmd, "--help"], None, log.with_suffix(".startup.log"))
        floors = [(_floor(f, log.with_suffix(".floor.log")), LAST.get("sys_s", 0.0)) for f in files]
        rec = {
            "step": name,
            "cpu_s": cpu,
            "sys_s": system,
            "wall_s": wall,
            "peak_mb": rss,
            "startup_s": startup,
            "reads_mb": sum(f.stat().st_size for f in files) / 1e6,
            "floor_s": sum(f for f, _ in floors),
            "floor_sys_s": sum(s for _, s in floors),
        }
        with record.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")

    t0 = time.process_time()
    for _ in run_steps(plan, layout, execute):
        pass
    total = time.process_time() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rec = {"step": "run overhead", "cpu_s": total, "peak_mb": peak, "plans": plans}
    with record.open("a") as fh:
        fh.write(json.dumps(rec) + "\n")


def _floor(path: Path, log: Path) -> float:
    """CPU seconds of the stdlib parse of ``path`` (see the module docstring)."""
    py = sys.executable
    floor, _, _ = measured([py, "-c", FLOOR, str(path)], None, log)
    if path.suffix == ".parquet":  # the read, not the import of pyarrow
        imported, _, _ = measured([py, "-c", "import pyarrow.parquet"], None, log)
        floor = max(floor - imported, 0.0)
    return floor


def _reads(step: str, listed: list[str], root: Path) -> list[Path]:
    """The data files a step reads (the report's folder: what it may show)."""
    if step != "report":
        return [
            Path(p) for p in listed if Path(p).suffix in (".jsonl", ".json", ".csv", ".parquet")
        ]
    return [
        *sorted((root / "data").glob("*.jsonl")),
        *sorted((root / "data").glob("*.parquet")),
        *sorted((root / "metrics").glob("*.json")),
        *sorted((root / "disagreements").glob("*.jsonl")),
        *sorted((root / "judge").glob("*/*/annotations.jsonl")),
        *sorted((root / "attribution").glob("*/*.csv")),
    ]


def _judge_storage(root: Path) -> tuple[float, int, str]:
    """Bytes of every judge run folder (journal + annotations + summary), units coded, and
    bytes per unit of each kind's journal and annotations (``bench_judge_storage.py`` says
    where in the journal they go)."""
    size = sum(p.stat().st_size for p in (root / "judge").rglob("*") if p.is_file())
    size -= sum(p.stat().st_size for p in (root / "judge").glob("cache.sqlite*"))
    units = 0
    kinds: dict[str, list[int]] = {}
    for ann in sorted((root / "judge").glob("*/*/annotations.jsonl")):
        with ann.open("rb") as fh:
            n = sum(1 for _ in fh)
        units += n
        journal = ann.parent / "journal.sqlite"
        tally = kinds.setdefault(ann.parent.name, [0, 0, 0])
        tally[0] += n
        tally[1] += journal.stat().st_size if journal.exists() else 0
        tally[2] += ann.stat().st_size
    per_kind = "; ".join(
        f"{kind} {(j + a) / max(n, 1) / 1e3:.2f} KB a unit (journal {j / max(n, 1) / 1e3:.2f} "
        f"+ annotations {a / max(n, 1) / 1e3:.2f})"
        for kind, (n, j, a) in kinds.items()
    )
    return size, units, per_kind


def bench_scale(scale: float, args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    """Generate one scale, run its study, measure the floors; print and return the rows."""
    folder = work / f"scale-{scale:g}"
    raw = folder / "raw"
    py = sys.executable
    if not (args.reuse and (raw / "traces.jsonl").exists()):
        started = time.perf_counter()
        subprocess.run(
            [
                py,
                __file__,
                "--generate",
                str(raw),
                "--scales",
                str(scale),
                "--seed",
                str(args.seed),
            ],
            check=True,
        )
        mb = (raw / "traces.jsonl").stat().st_size / 1e6
        print(
            f"# scale {scale:g}: generated {mb:.0f} MB of traces in "
            f"{time.perf_counter() - started:.0f} s (not timed)",
            flush=True,
        )
    study = folder / "study"
    if study.exists():
        shutil.rmtree(study)
    study.mkdir()
    shutil.copy(args.src.parent / "taxonomy" / CODEBOOK, study / CODEBOOK)
    (study / "failcodes.toml").write_text(
        STUDY_TOML.format(
            codebook=CODEBOOK, traces=raw / "traces.jsonl", labels=raw / "labels.jsonl"
        )
    )
    env = {**os.environ, "PYTHONPATH": str(args.src)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # read from .pyc, as installed (module docstring)
    subprocess.run([py, "-m", "compileall", "-q", str(args.src)], env=env, check=True)
    record = folder / "steps.jsonl"
    record.unlink(missing_ok=True)
    started = time.perf_counter()
    driver = [py, __file__, "--drive", str(study), "--record", str(record)]
    if args.replicate_judge is not None:
        driver += ["--replicate-judge", str(args.replicate_judge.resolve())]
    measured(driver, env, folder / "drive.log")  # (its CPU and peak include the floors')
    wall = time.perf_counter() - started
    startup, _, _ = measured([py, "-m", "failcodes", "--help"], env, folder / "startup.log")
    rows = [json.loads(line) for line in record.read_text().splitlines()]
    for row in rows:
        row["scale"] = scale
        if "floor_s" in row:
            row["ratio"] = row["cpu_s"] / row["floor_s"] if row["floor_s"] > 0 else None
        if "floor_sys_s" in row and row["floor_s"] > row["floor_sys_s"]:
            floor_user = row["floor_s"] - row["floor_sys_s"]
            row["user_ratio"] = (row["cpu_s"] - row["sys_s"]) / floor_user
    storage, units, per_kind = _judge_storage(study)
    cpu = sum(r["cpu_s"] for r in rows)
    print(
        f"# scale {scale:g}: whole run {wall:.0f} s wall (floors measured too); CPU {cpu:.1f} s "
        f"(steps and run overhead); CLI start-up (failcodes --help) {startup:.2f} CPU-s, more in "
        f"every step (start s: its own --help; a step's floor under ~0.1 s: its ratio is mostly "
        f"start-up); judge "
        f"storage {storage / 1e6:.0f} MB for "
        f"{units} annotations ({storage / max(units, 1) / 1e3:.2f} KB each: {per_kind})"
    )
    print(
        f"{'scale':>6} {'step':<38} {'CPU s':>8} {'wall s':>8} {'peak MB':>8} "
        f"{'reads MB':>9} {'floor s':>8} {'ratio':>6} {'start s':>7} {'user x':>6} {'sys s':>6}"
    )
    for row in rows:
        ratio = f"{row['ratio']:5.2f}x" if row.get("ratio") else ""
        user = f"{row['user_ratio']:5.2f}x" if row.get("user_ratio") else ""
        system = f"{row['sys_s']:6.1f}" if "sys_s" in row else ""
        floor = f"{row['floor_s']:8.2f}" if "floor_s" in row else ""
        start = f"{row['startup_s']:7.2f}" if row.get("startup_s") is not None else ""
        reads = f"{row['reads_mb']:9.0f}" if "reads_mb" in row else ""
        wall_s = f"{row['wall_s']:8.1f}" if "wall_s" in row else ""
        print(
            f"{scale:>6g} {row['step']:<38} {row['cpu_s']:8.1f} {wall_s:>8} "
            f"{row['peak_mb']:8.0f} {reads:>9} {floor:>8} {ratio:>6} {start:>7} {user:>6} "
            f"{system:>6}"
        )
    judged = [r for r in rows if r["step"].startswith(("judge ", "recode "))]
    rest = [r for r in rows if r not in judged]
    total = sum(r["cpu_s"] for r in rest)
    peak = max(r["peak_mb"] for r in rest)
    worst = max((r for r in rest if r.get("ratio")), key=lambda r: r["ratio"])
    print(f"{scale:>6g} {'total without the judge':<38} {total:8.1f} {'':>8} {peak:8.0f}")
    print(
        f"{'':>6} targets: total {total:.0f} / {TARGET_TOTAL_CPU:.0f} CPU-s "
        f"{'met' if total <= TARGET_TOTAL_CPU else 'MISSED'}; peak {peak:.0f} / "
        f"{TARGET_PEAK_MB:.0f} MB {'met' if peak <= TARGET_PEAK_MB else 'MISSED'}; worst "
        f"ratio {worst['ratio']:.2f}x ({worst['step']}) "
        f"{'met' if worst['ratio'] <= TARGET_RATIO else 'MISSED'}",
        flush=True,
    )
    rows.append({"scale": scale, "step": "judge storage", "bytes": storage, "units": units})
    if not args.keep:
        shutil.rmtree(study)
    return rows


def scales_of(rows: list[dict[str, Any]]) -> set[float]:
    """The scales of ``rows``."""
    return {r["scale"] for r in rows}


def print_peak_ratios(rows: list[dict[str, Any]]) -> None:
    """Each step's peak at the largest scale over its peak at the smallest (if two)."""
    by = {(r["scale"], r["step"]): r for r in rows if "peak_mb" in r}
    scales = sorted(scales_of(rows))
    if len(scales) < 2:
        return
    low, high = scales[0], scales[-1]
    print(f"peak RSS {high:g}x over {low:g}x per step (target <= 1.5):")
    for (scale, step), row in by.items():
        low_step = step.replace(f" ({REPLICATED})", "")  # a replicated judge's 1x step
        if scale == high and (low, low_step) in by:
            print(f"  {step:<38} {row['peak_mb'] / by[(low, low_step)]['peak_mb']:5.2f}")


def main() -> None:
    """Parse arguments, run every scale, print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1", help="Comma-separated, e.g. 0.1,1,10.")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--src", type=Path, default=REPO / "src", help="failcodes src to run.")
    parser.add_argument("--workdir", type=Path, default=None, help="Keep the data here.")
    parser.add_argument("--reuse", action="store_true", help="Reuse generated traces.")
    parser.add_argument("--keep", action="store_true", help="Keep each study folder.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    parser.add_argument(
        "--replicate-judge",
        type=Path,
        default=None,
        metavar="STUDY",
        help="Do not judge: copy STUDY's judge journals onto this study's units (labelled "
        "REPLICATED; not a judge measurement).",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="JSON",
        help="The --json of an earlier run (e.g. --scales 1): print each step's peak over its "
        "peak there (a 10x run needs the 1x study first, for --replicate-judge).",
    )
    parser.add_argument("--replicate", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--generate",
        type=Path,
        default=None,
        metavar="DIR",
        help="Only write DIR/traces.jsonl and DIR/labels.jsonl of one scale (--scales N, "
        "--seed), untimed, and stop (what a run does first).",
    )
    parser.add_argument("--drive", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--record", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate is not None:
        generate(args.generate, float(args.scales), args.seed)
        return
    if args.replicate is not None:
        replicate(args.replicate, args.record)
        return
    if args.drive is not None:
        drive(args.drive, args.record, args.replicate_judge)
        return
    args.src = args.src.resolve()
    print(f"src: {args.src}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        for scale in (float(s) for s in args.scales.split(",")):
            rows += bench_scale(scale, args, work)
    earlier = json.loads(args.baseline.read_text()) if args.baseline is not None else []
    print_peak_ratios(rows + [r for r in earlier if r["scale"] not in scales_of(rows)])
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
