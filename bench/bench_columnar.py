"""Issue 18 benchmark: the analysis steps on paper-scale traces, wall time and peak memory.

Shape (full size, ``--scales 1``): 10,000 answer sentences (10 per question) x 3 claims x
4 retrievers (systems) x 10 passages of ~400 characters = 120,000 traces and 1.2M passage
rows. Claim texts and ids are shared by the four systems; each claim has a pool of 20
candidate passages and retriever ``r`` shows 10 of them starting at ``3 r``, so retrievers
overlap (the judge's units are deduplicated across them). Verdicts and labels are drawn
seeded (``--seed``); generation is excluded from every timing, and at 10x the files are
generated streaming to disk (memory flat).

For each scale the script runs, each as its own ``python -m failcodes`` subprocess (wall time
and the child's peak RSS from ``wait4``):

- ``floor jsonl``: read the traces JSONL and ``json.loads`` every line, keeping nothing
  (the parse floor every JSONL step is compared with);
- ``floor parquet``: read every column of the traces Parquet file batch by batch;
- ``ingest generic -> jsonl`` / ``-> parquet``: ``failcodes ingest generic`` of the traces
  JSONL, written as read to JSONL, and to Parquet a row group at a time (step ``ingest-parquet``);
- ``metrics``: ``failcodes metrics -m refuted -m non_supported --bootstrap 2000 --format json``
  from the JSONL, and again from the Parquet file;
- ``disagreements``: the same two mappings, written as JSONL; ``disagreements parquet``: the
  same from the Parquet file (its output compared byte for byte with the JSONL one's);
- ``floor disagreements``: parse floor of that output (input of the dry run);
- ``dry run``: ``failcodes judge retrieval --dry-run --judge openai:gpt-5-mini`` on the
  disagreements file (bundled medical-fact-check codebook, no cache).

Ratios are each step's wall time over the parse floor of its input measured in the same run.
``--src`` runs the steps on another checkout's ``src`` (e.g. an old commit exported with
``git archive``) to compare before and after on the same data.

    python bench/bench_columnar.py --scales 0.1,1 [--src /tmp/base/src] [--json out.json]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _launch import measured

REPO = Path(__file__).resolve().parent.parent
CODEBOOK = REPO / "taxonomy" / "medical-fact-check.v1.yaml"
SENTENCES = 10_000
PER_QUESTION = 10
CLAIMS = 3
SYSTEMS = ("bm25", "dense", "hybrid", "rerank")
PASSAGES = 10
POOL = 20
VERDICTS = ("supported", "refuted", "no_evidence", "ambiguous", "out_of_scope")
WORDS = [
    "patients",
    "treatment",
    "dose",
    "trial",
    "evidence",
    "risk",
    "outcome",
    "therapy",
    "clinical",
    "study",
    "mg",
    "daily",
    "adverse",
    "effect",
    "randomized",
    "placebo",
    "cohort",
    "guideline",
    "recommended",
    "reduced",
    "increased",
    "mortality",
    "infection",
    "chronic",
    "acute",
    "symptoms",
    "diagnosis",
    "screening",
    "vaccine",
    "insulin",
    "blood",
    "pressure",
    "cardiac",
    "renal",
    "hepatic",
    "pediatric",
    "elderly",
    "women",
    "pregnancy",
    "the",
    "of",
    "and",
    "with",
    "in",
    "for",
]


def _text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def _traces(scale: float, seed: int) -> Iterator[dict[str, Any]]:
    """Yield trace records (dicts in the JSONL shape) in file order, seeded."""
    rng = random.Random(seed)
    chunks = [_text(rng, 380) for _ in range(500)]
    reasons = [_text(rng, 200) for _ in range(200)]
    n_sentences = max(PER_QUESTION, round(SENTENCES * scale))
    weights = (0.85, 0.05, 0.07, 0.02, 0.01)
    for system_index, system in enumerate(SYSTEMS):
        srng = random.Random(seed * 1000 + system_index)
        for s in range(n_sentences):
            qid = f"q{s // PER_QUESTION:06d}"
            sid = f"{qid}:s{s % PER_QUESTION}"
            sentence = f"Sentence {s}: " + chunks[s % len(chunks)][:120]
            for c in range(CLAIMS):
                cid = f"{sid}:c{c}"
                picks = [(3 * system_index + j) % POOL for j in range(PASSAGES)]
                yield {
                    "system": system,
                    "question_id": qid,
                    "sentence_id": sid,
                    "claim_id": cid,
                    "claim": f"Claim {c} of sentence {s}: " + chunks[(s + c) % len(chunks)][:80],
                    "sentence": sentence,
                    "verdict": srng.choices(VERDICTS, weights)[0],
                    "reasoning": reasons[(s * 7 + c + system_index) % len(reasons)],
                    "verifier": "gpt-4o",
                    "retriever": system,
                    "passages": [
                        {
                            "passage_id": f"{cid}:p{k}",
                            "rank": rank,
                            "text": chunks[(s * 31 + c * 7 + k) % len(chunks)] + f" [{cid} {k}]",
                            "source": "pubmed",
                            "score": round(1.0 - rank / 20, 3),
                        }
                        for rank, k in enumerate(picks, start=1)
                    ],
                }


def generate(folder: Path, scale: float, seed: int) -> dict[str, Path]:
    """Write traces (JSONL + Parquet) and sentence labels for one scale, streaming."""
    sys.path.insert(0, str(REPO / "src"))
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from failcodes.traceio import trace_arrow_schema

    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "traces": folder / "traces.jsonl",
        "parquet": folder / "traces.parquet",
        "labels": folder / "labels.jsonl",
    }
    schema = trace_arrow_schema()
    batch: list[dict[str, Any]] = []
    with (
        paths["traces"].open("w", encoding="utf-8") as fh,
        pq.ParquetWriter(paths["parquet"], schema) as writer,
    ):
        for rec in _traces(scale, seed):
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            batch.append(rec)
            if len(batch) == 10_000:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch = []
        if batch:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    lrng = random.Random(seed + 7)
    n_sentences = max(PER_QUESTION, round(SENTENCES * scale))
    with paths["labels"].open("w", encoding="utf-8") as fh:
        for s in range(n_sentences):
            qid = f"q{s // PER_QUESTION:06d}"
            rec = {
                "sentence_id": f"{qid}:s{s % PER_QUESTION}",
                "question_id": qid,
                "has_error": lrng.random() < 0.15,
                "rationale": "dose differs from the guideline",
                "annotator": "clinician-1",
            }
            fh.write(json.dumps(rec) + "\n")
    return paths


FLOOR_JSONL = """
import json, sys
n = 0
with open(sys.argv[1], encoding="utf-8") as fh:
    for line in fh:
        if line.strip():
            json.loads(line)
            n += 1
print(n)
"""

FLOOR_PARQUET = """
import sys
import pyarrow.parquet as pq
n = 0
for batch in pq.ParquetFile(sys.argv[1]).iter_batches(batch_size=10_000):
    n += batch.num_rows
print(n)
"""


def run(cmd: list[str], env: dict[str, str], cwd: Path, out: Path | None) -> tuple[float, float]:
    """Run ``cmd``; return (wall seconds, own peak RSS in MB) of the child. Fails loudly."""
    stdout = out.open("w") if out is not None else subprocess.DEVNULL
    try:
        _, wall, peak, code, err = measured(cmd, env=env, cwd=cwd, stdout=stdout)
    finally:
        if out is not None and hasattr(stdout, "close"):
            stdout.close()  # type: ignore[union-attr]
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{err.decode()[-2000:]}")
    return wall, peak


def bench_scale(
    scale: float, seed: int, src: Path, work: Path, steps: set[str], *, reuse: bool = False
) -> list[dict[str, Any]]:
    """Generate one scale (or reuse its files), run every step, return one record per step."""
    folder = work / f"scale-{scale:g}"
    started = time.perf_counter()
    paths = {
        "traces": folder / "traces.jsonl",
        "parquet": folder / "traces.parquet",
        "labels": folder / "labels.jsonl",
    }
    # generated in a child process: the parent stays small, so a forked step's peak RSS is
    # its own
    if not (reuse and all(p.exists() for p in paths.values())):
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--generate",
                str(folder),
                "--scales",
                str(scale),
                "--seed",
                str(seed),
            ],
            check=True,
        )
    gen = time.perf_counter() - started
    size_mb = paths["traces"].stat().st_size / 1e6
    print(
        f"# scale {scale:g}: generated {size_mb:.0f} MB JSONL, "
        f"{paths['parquet'].stat().st_size / 1e6:.0f} MB Parquet in {gen:.1f} s (not timed)",
        flush=True,
    )
    env = {**os.environ, "PYTHONPATH": str(src)}
    codebook = src.parent / "taxonomy" / CODEBOOK.name  # the codebook of the checkout run
    py = sys.executable
    cli = [py, "-m", "failcodes"]
    maps = ["-m", "refuted", "-m", "non_supported"]
    dis = folder / "disagreements.jsonl"
    records: list[dict[str, Any]] = []

    def step(name: str, cmd: list[str], floor: str | None, out: Path | None = None) -> None:
        wall, rss = run(cmd, env, folder, out)
        rec: dict[str, Any] = {"scale": scale, "step": name, "wall_s": wall, "peak_mb": rss}
        if floor is not None:
            base = next(r for r in records if r["step"] == floor)
            rec["ratio"] = wall / base["wall_s"]
        records.append(rec)
        ratio = f"{rec['ratio']:5.2f}x {floor}" if "ratio" in rec else ""
        print(f"{scale:>6g} {name:<22} {wall:8.2f} s {rss:8.0f} MB  {ratio}", flush=True)

    step("floor jsonl", [py, "-c", FLOOR_JSONL, str(paths["traces"])], None)
    step("floor parquet", [py, "-c", FLOOR_PARQUET, str(paths["parquet"])], None)
    # a pipeline's own JSONL through the generic adapter, streamed, to JSONL and to Parquet
    for name, suffix in (("ingest", ".jsonl"), ("ingest-parquet", ".parquet")):
        if name in steps:
            ingested = folder / f"ingested{suffix}"
            step(
                f"ingest generic -> {suffix[1:]}",
                [*cli, "ingest", "generic", str(paths["traces"]), "-o", str(ingested)],
                "floor jsonl",
            )
            ingested.unlink()
    metrics = [*cli, "metrics", "--labels", str(paths["labels"]), *maps, "--bootstrap", "2000"]
    if "metrics" in steps:
        step(
            "metrics jsonl",
            [*metrics, "--traces", str(paths["traces"]), "--format", "json"],
            "floor jsonl",
            folder / "metrics-jsonl.json",
        )
        step(
            "metrics parquet",
            [*metrics, "--traces", str(paths["parquet"]), "--format", "json"],
            "floor parquet",
            folder / "metrics-parquet.json",
        )
    disagree = [*cli, "disagreements", "--labels", str(paths["labels"]), *maps, "--traces"]
    # --steps dryrun --reuse: the dry run's input is kept from an earlier run (its floor
    # is still measured); otherwise the disagreements step writes it
    kept = reuse and "disagreements" not in steps and dis.exists()
    if "disagreements" in steps or ("dryrun" in steps and not kept):
        step("disagreements", [*disagree, str(paths["traces"]), "-o", str(dis)], "floor jsonl")
    if "disagreements-parquet" in steps:
        dis_pq = folder / "disagreements-from-parquet.jsonl"
        step(
            "disagreements parquet",
            [*disagree, str(paths["parquet"]), "-o", str(dis_pq)],
            "floor parquet",
        )
        if dis.exists():  # the same disagreements whichever format the traces came in
            same = filecmp.cmp(dis, dis_pq, shallow=False)
            print(f"{'':>6} {'':<22} output {'identical to' if same else 'DIFFERS from'} JSONL's")
        dis_pq.unlink()
    if "disagreements" in steps or "dryrun" in steps:
        step("floor disagreements", [py, "-c", FLOOR_JSONL, str(dis)], None)
    if "dryrun" in steps:
        with tempfile.TemporaryDirectory(dir=folder) as run_dir:
            step(
                "dry run",
                [
                    *cli,
                    "judge",
                    "retrieval",
                    "--from",
                    str(dis),
                    "--codebook",
                    str(codebook),
                    "--judge",
                    "openai:gpt-5-mini",
                    "--dry-run",
                    "--no-cache",
                    "--format",
                    "json",
                    "-o",
                    run_dir,
                ],
                "floor disagreements",
                folder / "dryrun.json",
            )
    together = [r for r in records if r["step"] in ("metrics jsonl", "disagreements", "dry run")]
    if len(together) == 3:
        wall = sum(r["wall_s"] for r in together)
        peak = max(r["peak_mb"] for r in together)
        records.append({"scale": scale, "step": "three steps", "wall_s": wall, "peak_mb": peak})
        print(f"{scale:>6g} {'three steps':<22} {wall:8.2f} s {peak:8.0f} MB", flush=True)
    return records


def main() -> None:
    """Parse arguments, run every scale, print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="0.1,1", help="Comma-separated, e.g. 0.1,1,10.")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--src", type=Path, default=REPO / "src", help="failcodes src to run.")
    parser.add_argument("--workdir", type=Path, default=None, help="Keep the data here.")
    parser.add_argument(
        "--steps",
        default="ingest,ingest-parquet,metrics,disagreements,disagreements-parquet,dryrun",
        help="Subset of the steps.",
    )
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="Reuse data already generated in --workdir (same scale and seed) instead of "
        "generating it again; with --steps dryrun also an earlier disagreements file.",
    )
    parser.add_argument("--generate", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate is not None:
        generate(args.generate, float(args.scales), args.seed)
        return
    steps = set(args.steps.split(","))
    print(f"src: {args.src}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    print(f"{'scale':>6} {'step':<22} {'wall':>10} {'peak RSS':>11}  ratio to floor")
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        for scale in (float(s) for s in args.scales.split(",")):
            records += bench_scale(
                scale, args.seed, args.src.resolve(), work, steps, reuse=args.reuse
            )
    if args.json is not None:
        args.json.write_text(json.dumps(records, indent=2) + "\n")


if __name__ == "__main__":
    main()
