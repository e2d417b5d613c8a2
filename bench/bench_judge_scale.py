"""Issue 5/17 benchmark: cost of a retrieval workload per run mode, and dry run vs billed.

Default workload: 202 claims x 4 retrievers x top-10 passages, 5 of each top-10 shared by all
four retrievers (8,080 (trace, passage) rows, 5,050 distinct pairs), coded with the bundled
medical-fact-check v1 codebook at ``openai:gpt-5-mini`` prices against the local fake server
(a separate process; real openai SDK; the fake caches prompt prefixes as the APIs do: at
least 1,024 tokens, 128-token steps, cached once the first response is served). The issue's
400-row workload is ``--claims 20 --top-k 5 --shared 3``. Runs, side by side:

- naive: one call per row, no deduplication, no prompt caching (its billed cost ignores the
  cached tokens the fake server reports: a naive run would not use caching);
- sync: deduplicated units, one call each, provider prefix caching;
- grouped: one call per claim (``Grouped``);
- batch: through the Batch API at batch prices (``Batch``);
- grouped+batch: grouped requests as batch items (``Batch(group=Grouped())``).

For each mode the dry run (``estimate_run``, no pilot: the output length is the schema's
typical answer) is compared with what the fake server billed. Billed-equivalent tokens =
billed cost / input price per token (what the run costs, in uncached input tokens).

    python bench/bench_judge_scale.py [--claims 202] [--top-k 10] [--shared 5] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from _judge_common import REPO, start_server
from failcodes import codebook as codebook_mod
from failcodes.judge import (
    Batch,
    Grouped,
    JudgeJob,
    JudgeSettings,
    Limits,
    Mode,
    PerUnit,
    RetryPolicy,
    estimate_run,
    load_prices,
    make_coder,
    run_judge_async,
)
from failcodes.judge.providers.base import TokenUsage
from failcodes.units import Unit, UnitKind, retrieval_units
from workload import overlapping_traces

SPEC = "openai:gpt-5-mini"
PRICE = load_prices().lookup(SPEC)
assert PRICE is not None
# the fake server is not OpenAI's endpoint: the run is priced explicitly at gpt-5-mini's prices
SETTINGS = JudgeSettings(limits=Limits(concurrency=32), retry=RetryPolicy.no_wait(), price=PRICE)
MODES: dict[str, Mode] = {
    "sync": PerUnit(),
    "grouped": Grouped(),
    "batch": Batch(poll=0.2),
    "grp+batch": Batch(poll=0.2, group=Grouped()),
}


def _get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=30) as resp:
        out: dict[str, Any] = json.loads(resp.read())
    return out


def _reset(url: str) -> None:
    req = urllib.request.Request(f"{url}/_reset", data=b"{}", method="POST")
    urllib.request.urlopen(req, timeout=30).close()


def _billed(usage: dict[str, int], *, batch: bool, caching: bool = True) -> float:
    tokens = TokenUsage(
        input_tokens=usage.get("input_tokens", 0),
        cached_input_tokens=usage.get("cached_tokens", 0) if caching else 0,
        cache_write_tokens=usage.get("cache_write_tokens", 0) if caching else 0,
        output_tokens=usage.get("output_tokens", 0),
    )
    assert PRICE is not None
    return PRICE.cost(tokens, batch=batch)


def _equiv(cost: float) -> float:
    assert PRICE is not None
    return cost / PRICE.input * 1e6


def _naive_units(traces: list[Any]) -> list[Unit]:
    """One unit per (trace, passage) row: same content, distinct ids (no deduplication)."""
    out = []
    for t in traces:
        for u in retrieval_units([t]):
            out.append(u.model_copy(update={"id": f"{u.id}-{t.system}"}))
    return out


async def _mode(name: str, units: list[Unit], url: str, cb: Any, run: Path) -> dict[str, Any]:
    mode = MODES[name]
    coder = make_coder(SPEC, base_url=f"{url}/v1")
    est = estimate_run(
        units, coder, JudgeJob(cb, UnitKind.RETRIEVAL, run, mode=mode, settings=SETTINGS)
    )
    t0 = time.perf_counter()
    summary = await run_judge_async(
        units, coder, JudgeJob(cb, UnitKind.RETRIEVAL, run, mode=mode, settings=SETTINGS)
    )
    elapsed = time.perf_counter() - t0
    batch = isinstance(mode, Batch)
    usage = _get(f"{url}/_stats")["usage_batch" if batch else "usage"]
    _reset(url)
    billed = _billed(usage, batch=batch)
    return {
        "billed": billed,
        "estimate": est.cost_usd or 0.0,
        "journal": summary.cost_usd,
        "secs": elapsed,
        "est_out": est.output_tokens,
        "out": usage.get("output_tokens", 0),
        "est_in": est.input_tokens,
        "in": usage.get("input_tokens", 0),
        "est_cached": est.cached_input_tokens,
        "cached": usage.get("cached_tokens", 0),
        # calls or batch items: the dry run's count and the run's (a group call counts once)
        "est_calls": est.calls,
        "calls": summary.groups + summary.judged_alone if summary.groups else summary.judged,
    }


async def main_async(claims: int, top_k: int, shared: int, latency: float) -> None:
    cb = codebook_mod.load(REPO / "taxonomy" / "medical-fact-check.v1.yaml")
    traces = list(overlapping_traces(claims, top_k=top_k, shared=shared))
    units = retrieval_units(traces)
    rows = sum(len(u.provenance) for u in units)
    print(
        f"workload: {claims} claims x 4 retrievers x top-{top_k}, {shared} shared: {rows} rows, "
        f"{len(units)} distinct pairs ({len(units) / rows:.3f} of rows); judge {SPEC} prices; "
        f"server latency {latency} s, concurrency {SETTINGS.limits.concurrency}"
    )
    proc, url = start_server(latency)
    try:
        for _ in range(200):  # the port is bound before uvicorn serves it
            try:
                _get(f"{url}/_stats")
                break
            except OSError:
                time.sleep(0.1)
        with tempfile.TemporaryDirectory() as tmp:
            naive = _naive_units(traces)
            t0 = time.perf_counter()
            await run_judge_async(
                naive,
                make_coder(SPEC, base_url=f"{url}/v1"),
                JudgeJob(cb, UnitKind.RETRIEVAL, Path(tmp) / "naive", settings=SETTINGS),
            )
            naive_usage = _get(f"{url}/_stats")["usage"]
            naive_s = time.perf_counter() - t0
            _reset(url)
            naive_cost = _billed(naive_usage, batch=False, caching=False)
            print(
                f"naive: {len(naive)} calls, {naive_usage['input_tokens']} input + "
                f"{naive_usage['output_tokens']} output tokens, billed ${naive_cost:.4f} "
                f"= {_equiv(naive_cost):,.0f} billed-equivalent tokens ({naive_s:.0f} s)"
            )
            print(
                f"{'mode':10} {'billed $':>9} {'equiv tokens':>13} {'/ naive':>8} "
                f"{'dry run $':>10} {'error':>7} {'in err':>7} {'cached err':>10} "
                f"{'out err':>8} {'time s':>7} {'calls/items: dry run, run':>26}"
            )
            for name in MODES:
                r = await _mode(name, units, url, cb, Path(tmp) / name)
                billed = r["billed"]

                def rel(a: float, b: float) -> str:
                    return f"{a / b - 1:+.1%}" if b else "n/a"

                print(
                    f"{name:10} {billed:9.4f} {_equiv(billed):13,.0f} {billed / naive_cost:8.3f} "
                    f"{r['estimate']:10.4f} {rel(r['estimate'], billed):>7} "
                    f"{rel(r['est_in'], r['in']):>7} {rel(r['est_cached'], r['cached']):>10} "
                    f"{rel(r['est_out'], r['out']):>8} {r['secs']:7.0f} "
                    f"{r['est_calls']:>12,} {r['calls']:>12,}"
                )
            print(
                "targets: sync <= 0.30 of naive, batch <= 0.15; dry run (no pilot) within 15% "
                "of billed"
            )
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--claims", type=int, default=202)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--shared", type=int, default=5)
    # a server that takes time to answer: concurrent first calls miss the prompt cache, as
    # on the real APIs (a prefix is cached once its first response is served)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-fake")
    asyncio.run(main_async(args.claims, args.top_k, args.shared, args.latency))


if __name__ == "__main__":
    main()
