"""Issue 5 benchmark: cost of coding a paper-scale retrieval workload, naive vs scale features.

Workload: 202 claims x 4 retrievers x top-10 passages, 5 of each top-10 shared by all four
retrievers (8,080 (trace, passage) rows, 5,050 distinct pairs), coded with the bundled
medical-fact-check v1 codebook by ``openai:gpt-5-mini`` prices against the local fake
server (a separate process; real openai SDK). Runs, side by side:

- naive: one call per row, no deduplication, no prompt caching (its billed cost ignores the
  cached tokens the fake server reports: a naive run would not use caching);
- sync: deduplicated units, one call each, provider prefix caching;
- grouped: deduplicated units, one call per claim (--group-by-claim), caching;
- batch: deduplicated units through the Batch API, caching, batch prices.

Billed-equivalent tokens = billed cost / input price per token (what the run costs, in
uncached input tokens). For each scale mode a 50-unit pilot runs first (2 claims), then the
dry-run estimate of the remaining units (calibrated on the pilot's output lengths, as a user
would after a pilot) is compared with what the fake server billed for them.

    python bench/bench_judge_scale.py [--claims 202]
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
from failcodes.judge.batch import BatchSettings, run_batch_async
from failcodes.judge.engine import JudgeEngine, JudgeSettings
from failcodes.judge.estimate import ScaleOptions, estimate_scale
from failcodes.judge.grouping import run_grouped_async
from failcodes.judge.journal import Journal
from failcodes.judge.limits import Limits, RetryPolicy
from failcodes.judge.pricing import load_prices
from failcodes.judge.providers import make_coder
from failcodes.judge.providers.base import TokenUsage
from failcodes.judge.run import run_judge_async
from failcodes.judge.workload import overlapping_traces
from failcodes.units import Unit, UnitKind, retrieval_units

SPEC = "openai:gpt-5-mini"
PRICE = load_prices().lookup(SPEC)
assert PRICE is not None
SETTINGS = JudgeSettings(limits=Limits(concurrency=32), retry=RetryPolicy.no_wait())
PILOT_CLAIMS = 2


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


async def _mode(mode: str, units: list[Unit], pilot: list[Unit], url: str, cb: Any, run: Path):
    coder = lambda: make_coder(SPEC, base_url=f"{url}/v1")  # noqa: E731
    batch = BatchSettings(poll_interval_s=0.2)

    async def go(todo: list[Unit]) -> None:
        common: dict[str, Any] = {"run_dir": run, "settings": SETTINGS}
        if mode == "batch":
            await run_batch_async(todo, coder(), cb, UnitKind.RETRIEVAL, batch=batch, **common)
        elif mode == "grouped":
            await run_grouped_async(todo, coder(), cb, UnitKind.RETRIEVAL, **common)
        else:
            await run_judge_async(todo, coder(), cb, UnitKind.RETRIEVAL, **common)

    await go(pilot)
    pilot_usage = _get(f"{url}/_stats")["usage_batch" if mode == "batch" else "usage"]
    _reset(url)
    opts = ScaleOptions(group_by_claim=mode == "grouped", batch=mode == "batch")
    c = coder()
    engine = JudgeEngine(c, cb, UnitKind.RETRIEVAL, journal=Journal(run), prices=load_prices())
    est = estimate_scale(engine, units, opts)
    engine.journal.close()
    await c.aclose()  # type: ignore[union-attr]
    t0 = time.perf_counter()
    await go(units)
    elapsed = time.perf_counter() - t0
    stats = _get(f"{url}/_stats")
    usage = stats["usage_batch" if mode == "batch" else "usage"]
    _reset(url)
    rest = _billed(usage, batch=mode == "batch")
    total = rest + _billed(pilot_usage, batch=mode == "batch")
    return total, est, rest, elapsed


async def main_async(claims: int) -> None:
    cb = codebook_mod.load(REPO / "taxonomy" / "medical-fact-check.v1.yaml")
    traces = list(overlapping_traces(claims))
    units = retrieval_units(traces)
    pilot_ids = {u.id for u in retrieval_units(traces[: 4 * PILOT_CLAIMS])}
    pilot = [u for u in units if u.id in pilot_ids]
    rows = sum(len(u.provenance) for u in units)
    print(
        f"workload: {claims} claims x 4 retrievers x top-10, 5 shared: {rows} rows, "
        f"{len(units)} distinct pairs ({len(units) / rows:.3f} of rows); judge {SPEC} prices"
    )
    proc, url = start_server(0.0)
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
                cb,
                UnitKind.RETRIEVAL,
                run_dir=Path(tmp) / "naive",
                settings=SETTINGS,
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
                f"{'mode':8} {'billed $':>9} {'equiv tokens':>13} {'/ naive':>8} "
                f"{'est. rest $':>11} {'billed rest $':>13} {'est. error':>10} {'time s':>7}"
            )
            for mode in ("sync", "grouped", "batch"):
                total, est, rest, secs = await _mode(mode, units, pilot, url, cb, Path(tmp) / mode)
                err = (est.cost_usd or 0.0) / rest - 1 if rest else float("nan")
                print(
                    f"{mode:8} {total:9.4f} {_equiv(total):13,.0f} {total / naive_cost:8.3f} "
                    f"{est.cost_usd or 0:11.4f} {rest:13.4f} {err:+10.1%} {secs:7.0f}"
                )
            print("targets: sync <= 0.30 of naive, batch <= 0.15; estimate within 15% of billed")
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--claims", type=int, default=202)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-fake")
    asyncio.run(main_async(args.claims))


if __name__ == "__main__":
    main()
