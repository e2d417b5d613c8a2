"""Crash test beyond `judge` (issue 16): SIGKILL a saturation round and `failcodes run`, resume.

Sibling of bench_judge_crash.py (which kills `failcodes judge` itself). Two scenarios, each
against the fake server in its own process (OpenAI SDK, real CLI subprocesses):

- **saturation**: `saturate init` a project whose pool is the retrieval units of synthetic
  traces (one round = the whole batch), then `saturate round --judge openai:fake-model` is
  killed with SIGKILL at random moments (random unit counts of the round's judge journal), and
  finally run to the end. Checks: the round's annotations hold every unit of its batch exactly
  once, the round's judge journal has no duplicate, the round reached review.
- **study**: `failcodes init` (the bundled RAGChecker example) with the judge pointed at the
  fake server, then `failcodes run` is killed after random lifetimes (so kills fall in
  ingest, metrics, disagreements, judge, attribute...), then run to the end. Checks against an
  uninterrupted reference run of the same study: the same judged unit ids, none duplicated, in
  both journal and annotations.jsonl, and the same files in the study (report included).

Run: python bench/bench_crash_resume.py [--kills 5] [--seed 0] [--units 400]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _judge_common import REPO, start_server, synthetic_traces
from failcodes.codebook import bundled_dir
from failcodes.traceio import write_traces


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    if not db.exists():
        return []
    try:
        con = sqlite3.connect(db, timeout=10)
        try:
            return list(con.execute(sql))
        finally:
            con.close()
    except sqlite3.OperationalError:
        return []


def _journal_ids(db: Path) -> list[str]:
    return [str(r[0]) for r in _rows(db, "SELECT unit_id FROM annotations")]


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "OPENAI_API_KEY": "sk-bench-not-a-real-key",
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
    }


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failcodes", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def _kill_when(cmd: list[str], cwd: Path, ready: Callable[[float], bool]) -> str:
    """Start ``cmd``; SIGKILL it once ``ready(elapsed)`` is true; say how it ended."""
    p = subprocess.Popen(
        [sys.executable, "-m", "failcodes", *cmd],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    t0 = time.monotonic()
    while p.poll() is None and not ready(time.monotonic() - t0):
        time.sleep(0.01)
    finished = p.poll() is not None
    p.send_signal(signal.SIGKILL)
    p.wait()
    return "had already finished" if finished else f"killed at {time.monotonic() - t0:.2f} s"


def saturation(url: str, rng: random.Random, kills: int, n_units: int) -> bool:
    """Kill `saturate round` mid-judging, resume; every unit of the round coded once."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_traces(root / "traces.jsonl", synthetic_traces(n_units))
        codebook = next(bundled_dir().glob("*.v1.yaml"))
        init = _cli(
            *("saturate", "init", "p", "--codebook", str(codebook)),
            *("--from", str(root / "traces.jsonl"), "--batch-size", str(n_units)),
            *("--dir", str(root / "p")),
            cwd=root,
        )
        assert init.returncode == 0, init.stderr
        cmd = [
            *("saturate", "round", "p", "--dir", str(root / "p")),
            *("--judge", "openai:fake-model", "--base-url", f"{url}/v1"),
        ]
        journals = lambda: sorted((root / "p").rglob("journal.sqlite"))  # noqa: E731
        count = lambda: sum(len(_journal_ids(j)) for j in journals())  # noqa: E731
        targets = sorted(rng.sample(range(5, n_units - 5), kills))
        print(f"saturation: one round of {n_units} units, {kills} SIGKILLs (journal counts)")
        for k, target in enumerate(targets, start=1):
            before = count()
            state = _kill_when(cmd, root, lambda _t, target=target: count() >= target)
            print(f"  kill {k}: {state}; round journal {before} -> {count()} units")
        done = _cli(*cmd, cwd=root)
        assert done.returncode == 0, done.stderr
        round_dir = root / "p" / "rounds" / "r0001"
        batch = json.loads((round_dir / "round.json").read_text(encoding="utf-8"))
        expected = set(batch["unit_ids"])
        coded = [
            json.loads(line)["unit_id"]
            for line in (round_dir / "annotations.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        ids = [i for j in journals() for i in _journal_ids(j)]
        ok = (
            set(coded) == expected
            and len(coded) == len(set(coded))
            and len(ids) == len(set(ids))
            and batch["phase"] in ("proposed", "closed")
        )
        print(
            f"  final: round phase {batch['phase']}; {len(expected)} units in the batch, "
            f"round annotations {len(coded)} ({len(set(coded))} distinct), judge journal "
            f"{len(ids)} ({len(set(ids))} distinct); lost {len(expected - set(coded))}, "
            f"doubled {len(coded) - len(set(coded))}: {'PASS' if ok else 'FAIL'}"
        )
        return ok


def _study(root: Path, url: str) -> Path:
    init = _cli("init", "st", cwd=root)
    assert init.returncode == 0, init.stderr
    toml = root / "st" / "failcodes.toml"
    text = toml.read_text(encoding="utf-8")
    text = re.sub(
        r'judge = "offline"[^\n]*',
        f'judge = "openai:fake-model"\nbase_url = "{url}/v1"',
        text,
        count=1,
    )
    toml.write_text(text, encoding="utf-8")
    return root / "st"


def _study_state(study: Path) -> tuple[list[str], list[str], list[str]]:
    journal = [i for j in sorted(study.rglob("journal.sqlite")) for i in _journal_ids(j)]
    exported = [
        json.loads(line)["unit_id"]
        for f in sorted((study / "judge").rglob("annotations.jsonl"))
        for line in f.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    files = sorted(
        str(p.relative_to(study))
        for p in study.rglob("*")
        if p.is_file()
        and not p.name.startswith(".")
        and "-wal" not in p.name
        and "-shm" not in p.name
    )
    return journal, exported, files


def study(url: str, rng: random.Random, kills: int) -> bool:
    """Kill `failcodes run` at random moments, resume; same result as a clean run."""
    with tempfile.TemporaryDirectory() as tmp:
        ref_root, root = Path(tmp) / "ref", Path(tmp) / "crash"
        ref_root.mkdir()
        root.mkdir()
        t0 = time.monotonic()
        ref = _study(ref_root, url)
        done = _cli("run", "st", cwd=ref_root)
        assert done.returncode == 0, done.stderr
        full = time.monotonic() - t0
        ref_journal, ref_exported, ref_files = _study_state(ref)
        print(
            f"study: clean `failcodes run` {full:.1f} s, {len(ref_journal)} judged units, "
            f"{len(ref_files)} files; {kills} SIGKILLs at random moments of a run"
        )
        crash = _study(root, url)
        for k in range(1, kills + 1):
            # each resumed run skips finished steps: short random lives spread the kills
            # over the whole study (start-up, ingest, metrics, ... judge, attribute, report)
            at = rng.uniform(0.3, max(0.6, 1.6 * full / kills))
            state = _kill_when(["run", "st"], root, lambda t, at=at: t >= at)
            journal, _, files = _study_state(crash)
            print(f"  kill {k} (at {at:.2f} s): {state}; {len(journal)} judged, {len(files)} files")
        done = _cli("run", "st", cwd=root)
        assert done.returncode == 0, done.stderr
        journal, exported, files = _study_state(crash)
        ok = (
            sorted(journal) == sorted(ref_journal)
            and sorted(exported) == sorted(ref_exported)
            and len(exported) == len(set(exported))
            and files == ref_files
        )
        print(
            f"  final: journal {len(journal)} ({len(set(journal))} distinct) vs reference "
            f"{len(ref_journal)}; annotations {len(exported)} ({len(set(exported))} distinct); "
            f"files {'same as' if files == ref_files else 'DIFFER from'} the reference: "
            f"{'PASS' if ok else 'FAIL'}"
        )
        if files != ref_files:
            print(f"    only crash: {sorted(set(files) - set(ref_files))}")
            print(f"    only reference: {sorted(set(ref_files) - set(files))}")
        return ok


def main() -> None:
    """Run both scenarios; exit 1 if either loses or doubles anything."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--units", type=int, default=400)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    proc, url = start_server(0.05)
    try:
        results = [saturation(url, rng, args.kills, args.units), study(url, rng, args.kills)]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print("RESULT:", "PASS" if all(results) else "FAIL")
    if not all(results):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
