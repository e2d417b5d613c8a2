"""Issue 30 benchmark: where a judge run's bytes go, per unit (journal + annotations.jsonl).

Runs ``failcodes judge retrieval`` and ``failcodes judge reasoning`` on one input (a
disagreements or traces JSONL file, e.g. the first lines of a paper-scale study's
``disagreements/<ds>.jsonl``) with the ``offline`` judge (a heuristic baseline) and, with
``--llm``, with ``openai:fake-model`` through the local fake server (``tests/fakeserver``, the
real openai SDK, no cache), each as its own ``python -m failcodes`` child of the source tree
``--src`` (default: this checkout). Prints per unit: ``annotations.jsonl``, the journal file,
and inside the journal the annotation, raw request, raw response and blob columns (the rest is
SQLite's pages: other columns, the unit-id index, unused page space). Pair two trees by running
it once with ``--src BASE/src`` and once without, on the same input.

    python bench/bench_judge_storage.py --from FILE [--llm] [--src DIR/src] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from _judge_common import REPO, start_server

CODEBOOK = REPO / "src" / "failcodes" / "taxonomy" / "medical-fact-check.v1.yaml"


def storage(run: Path) -> dict[str, float]:
    """Bytes per unit of one run folder: the files and the journal's big columns."""
    conn = sqlite3.connect(f"{(run / 'journal.sqlite').resolve().as_uri()}?mode=ro", uri=True)
    try:
        units, ann, req, resp = conn.execute(
            "SELECT COUNT(*), SUM(LENGTH(CAST(annotation AS BLOB))), "
            "COALESCE(SUM(LENGTH(CAST(raw_request AS BLOB))), 0), "
            "COALESCE(SUM(LENGTH(CAST(raw_response AS BLOB))), 0) FROM annotations"
        ).fetchone()
        (blobs,) = conn.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM blobs").fetchone()
    finally:
        conn.close()
    n = max(int(units), 1)
    jsonl = (run / "annotations.jsonl").stat().st_size
    journal = (run / "journal.sqlite").stat().st_size
    return {
        "units": units,
        "jsonl": jsonl / n,
        "journal": journal / n,
        "annotation": ann / n,
        "raw_request": req / n,
        "raw_response": resp / n,
        "blobs": blobs / n,
        "total": (jsonl + journal) / n,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--from", dest="source", type=Path, required=True)
    ap.add_argument("--src", type=Path, default=REPO / "src")
    ap.add_argument("--llm", action="store_true", help="also the fake LLM judge")
    ap.add_argument("--codebook", type=Path, default=CODEBOOK)
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-judge-storage-"))
    env = {**os.environ, "PYTHONPATH": str(args.src.resolve()), "OPENAI_API_KEY": "sk-bench"}
    judges: list[tuple[str, list[str]]] = [("offline", ["--judge", "offline"])]
    server = None
    if args.llm:
        server, url = start_server(0.0)
        llm = ["--judge", "openai:fake-model", "--base-url", f"{url}/v1"]
        judges.append(("llm", [*llm, "--price-as", "openai:gpt-5-mini", "--no-cache"]))
    print(f"# src {args.src}; input {args.source}; bytes per unit (journal columns inside it)")
    print(
        f"{'judge':<8} {'kind':<10} {'units':>7} {'jsonl':>7} {'journal':>8} {'annot.':>7} "
        f"{'request':>8} {'response':>9} {'total':>7}"
    )
    try:
        for name, options in judges:
            for kind in ("retrieval", "reasoning"):
                run = work / f"{name}-{kind}"
                shutil.rmtree(run, ignore_errors=True)
                argv = [sys.executable, "-m", "failcodes", "judge", kind, "--from"]
                argv += [str(args.source), "--codebook", str(args.codebook), *options]
                argv += ["--concurrency", "16", "-o", str(run)]
                subprocess.run(argv, env=env, check=True, capture_output=True)
                s = storage(run)
                print(
                    f"{name:<8} {kind:<10} {s['units']:>7} {s['jsonl']:>7.0f} "
                    f"{s['journal']:>8.0f} {s['annotation']:>7.0f} {s['raw_request']:>8.0f} "
                    f"{s['raw_response']:>9.0f} {s['total']:>7.0f}",
                    flush=True,
                )
    finally:
        if server is not None:
            server.terminate()
            server.wait()
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
