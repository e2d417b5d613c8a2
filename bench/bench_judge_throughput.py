"""Judge throughput against the local fake server (real openai/anthropic SDK clients).

- 1,280 retrieval units, fake server with 1 s latency, concurrency 64: achieved calls/s over
  the ideal (concurrency / latency = 64/s) and over a sequential loop. The sequential loop is
  measured on a few calls (concurrency 1) and extrapolated to 1,280 calls (said so below).
- Client CPU time per call (time.process_time of this process; the server runs in another
  process), at 1 s and at 200 ms latency, for the OpenAI and the Anthropic SDK; and the
  engine's own CPU per unit with a null provider (no SDK, no HTTP): render, cache key,
  validation, quote check, journal commit.
- The same engine with a provider that sleeps 1 s without HTTP: the engine's own scheduling
  efficiency, side by side with the SDK run.
- A rerun of the finished job makes 0 calls (the server's call counter is unchanged).

Run: python bench/bench_judge_throughput.py [--units 1280] [--concurrency 64]
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

from _judge_common import start_server, synthetic_traces
from failcodes.annotations import CoderKind
from failcodes.codebook import bundled
from failcodes.judge import (
    JudgeJob,
    JudgeSettings,
    Limits,
    RetryPolicy,
    make_coder,
    run_judge_async,
)
from failcodes.judge.providers.base import ProviderReply, ProviderRequest, TokenUsage
from failcodes.units import UnitKind, retrieval_units


def _stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/_stats", timeout=10) as resp:
        return dict(json.loads(resp.read()))


def _post(url: str, path: str, body: dict[str, Any]) -> None:
    req = urllib.request.Request(
        f"{url}{path}", data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    urllib.request.urlopen(req, timeout=10).read()


class NullProvider:
    """Answers instantly with a valid canned answer: measures the engine's own overhead."""

    spec = "openai:null"
    provider = "openai"
    model = "null"
    coder_kind = CoderKind.LLM

    def __init__(self, latency: float = 0.0) -> None:
        self.calls = 0
        self.latency = latency
        self.answer: dict[str, Any] | None = None

    def identity(self) -> dict[str, Any]:
        return {"provider": "null"}

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        self.calls += 1
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.answer is None:  # one valid answer of the schema, built once
            from tests.fakeserver.answers import fill_schema  # the repo root is on sys.path

            self.answer = fill_schema(request.schema, "")
        answer = self.answer
        return ProviderReply(answer, json.dumps(answer), TokenUsage(100, 0, 0, 20), {}, {})

    async def aclose(self) -> None:
        return None


def run(units, coder, run_dir: Path, concurrency: int) -> tuple[Any, float, float]:
    cb = bundled()
    settings = JudgeSettings(limits=Limits(concurrency=concurrency), retry=RetryPolicy())
    t0, c0 = time.perf_counter(), time.process_time()
    summary = asyncio.run(
        run_judge_async(units, coder, JudgeJob(cb, UnitKind.RETRIEVAL, run_dir, settings=settings))
    )
    return summary, time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", type=int, default=1280)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--sequential-calls", type=int, default=5)
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-bench-not-a-real-key")
    units = retrieval_units(synthetic_traces(args.units))
    assert len(units) == args.units
    n, conc = len(units), args.concurrency
    print(f"judge throughput: {n} units, fake server in its own process, {os.cpu_count()} CPUs")
    proc, url = start_server(1.0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            coder = make_coder("openai:fake-model", base_url=f"{url}/v1")
            load0 = os.getloadavg()[0]
            srv0 = _stats(url)["process_cpu_s"]
            s, wall, cpu = run(units, coder, root / "c64", conc)
            srv = _stats(url)["process_cpu_s"] - srv0
            assert s.judged == n and s.scored == n, s
            rate = s.calls / wall
            ideal = conc / 1.0
            print(
                f"[1 s latency, concurrency {conc}, openai SDK] {s.calls} calls in {wall:.1f} s "
                f"= {rate:.1f} calls/s; ideal {ideal:.0f}/s -> {rate / ideal:.2f} of ideal "
                f"(target >= 0.85); client CPU {1000 * cpu / s.calls:.2f} ms/call, fake-server "
                f"CPU {1000 * srv / s.calls:.2f} ms/call; load average {load0:.1f} -> "
                f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
            )
            k = args.sequential_calls
            coder = make_coder("openai:fake-model", base_url=f"{url}/v1")
            s1, wall1, _ = run(units[:k], coder, root / "seq", 1)
            per = wall1 / s1.calls
            seq_total = per * n
            print(
                f"[sequential, concurrency 1] measured {s1.calls} calls in {wall1:.2f} s "
                f"({per:.3f} s/call), EXTRAPOLATED to {n} calls: {seq_total:.0f} s = "
                f"{1 / per:.2f} calls/s -> concurrent run is {seq_total / wall:.1f}x faster"
            )
            before = _stats(url)["calls"].get("openai", 0)
            coder = make_coder("openai:fake-model", base_url=f"{url}/v1")
            s2, wall2, _ = run(units, coder, root / "c64", conc)
            after = _stats(url)["calls"].get("openai", 0)
            print(
                f"[rerun of the finished job] judged {s2.judged}, engine calls {s2.calls}, "
                f"server calls {after - before} ({wall2:.2f} s)"
            )
            _post(url, "/_control", {"latency": 0.2})
            for provider, base in (("openai", f"{url}/v1"), ("anthropic", url)):
                spec = "openai:fake-model" if provider == "openai" else "anthropic:fake-claude"
                coder = make_coder(spec, base_url=base)
                srv0 = _stats(url)["process_cpu_s"]
                s3, wall3, cpu3 = run(units, coder, root / f"fast-{provider}", conc)
                srv = _stats(url)["process_cpu_s"] - srv0
                print(
                    f"[200 ms latency, concurrency {conc}, {provider} SDK] {s3.calls / wall3:.1f} "
                    f"calls/s (ideal {conc / 0.2:.0f}/s -> {s3.calls / wall3 / (conc / 0.2):.2f}); "
                    f"client CPU {1000 * cpu3 / s3.calls:.2f} ms/call, fake-server CPU "
                    f"{1000 * srv / s3.calls:.2f} ms/call"
                )
            s5, wall5, _ = run(units, NullProvider(1.0), root / "sleep", conc)
            print(
                f"[engine alone, provider sleeping 1 s, no HTTP, concurrency {conc}] "
                f"{s5.calls / wall5:.1f} calls/s -> {s5.calls / wall5 / ideal:.2f} of ideal: the "
                "engine's own scheduling; the gap to the SDK run is SDK + server CPU on this "
                "machine's load"
            )
            null = NullProvider()
            s4, _, cpu4 = run(units, null, root / "null", conc)
            print(
                f"[engine alone, null provider] {s4.calls} units, client CPU "
                f"{1000 * cpu4 / s4.calls:.2f} ms/unit (render, key, validate, quote check, "
                "journal commit, export)"
            )
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
