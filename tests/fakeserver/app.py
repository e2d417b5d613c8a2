"""The fake server's HTTP app (Starlette): OpenAI chat completions and Anthropic messages.

Control endpoints (not part of either API):
- ``POST /_control`` with ``{"faults": [...], "latency": s}``: queue faults served in order to
  the next requests, one per request: ``{"kind": "429", "retry_after": 2}``, ``{"kind":
  "500"}``, ``{"kind": "slow", "seconds": 3}`` (then a normal answer), ``{"kind":
  "invalid_json"}``, ``{"kind": "bad_code"}`` (a code outside the codebook), ``{"kind":
  "injected_code"}`` (a 5 KB code closing the delimiter and posing as instructions),
  ``think_fenced``, ``think_only``, ``unterminated_fence``, ``two_objects``,
  ``deep_nesting`` (a local reasoning model's wrappers, right and wrong); ``{"kind": "529",
  "retry_after": s}`` (Anthropic's overloaded_error), ``not_json`` (an HTML page with status
  200), ``broken_json`` (a JSON content type over a body cut short); the answer faults of
  :data:`~tests.fakeserver.answers.ANTHROPIC_ANSWER_FAULTS` (``refusal``, ``max_tokens``,
  ``empty_content``, ``no_usage`` also change an OpenAI answer the same way);
  ``latency`` sets the delay of every reply; ``prompt_cache`` ``{"min_tokens": n,
  "openai_step": n}`` sets the simulated prompt cache (defaults: the real APIs' 1024-token
  minimum, OpenAI's 128-token steps; reset by ``/_reset``).
- ``GET /_stats``: calls per endpoint, faults served, tokens, keys seen (as SHA-256
  digests), the most model calls answered at once, the server process's CPU seconds.
- ``POST /_reset``: forget calls, faults and the prefix cache.

Like the real Messages API, the Anthropic endpoint answers a request holding a message with
empty content with HTTP 400 (``invalid_request_error``).

Markers in the judged text (see :mod:`tests.fakeserver.answers`) make faults permanent for
one unit. Batch endpoints (files, batches, results of both providers) live in
:mod:`tests.fakeserver.batch`; ``/_control`` also takes ``batch_delay`` (seconds before a batch
ends), ``batch_fail_items`` (the next N batch items fail with a server error) and
``batch_item_faults`` (odd results of the next Anthropic batch items: see
:class:`~tests.fakeserver.batch.BatchState`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakeserver.answers import (
    ANTHROPIC_ANSWER_FAULTS,
    DEEP,
    MALFORMED_WRAPPERS,
    PrefixCache,
    anthropic_message,
    openai_completion,
)
from tests.fakeserver.batch import BatchState, batch_routes

#: Faults that change the answer's text (the others change the HTTP reply).
FAULT_ANSWERS = (
    "invalid_json",
    "bad_code",
    "injected_code",
    "think_fenced",
    *MALFORMED_WRAPPERS,
    *ANTHROPIC_ANSWER_FAULTS,
)


@dataclass
class FakeState:
    """Mutable state of one fake server."""

    latency: float = 0.0
    faults: deque[dict[str, Any]] = field(default_factory=deque)
    calls: Counter[str] = field(default_factory=Counter)
    faults_served: Counter[str] = field(default_factory=Counter)
    cache: PrefixCache = field(default_factory=PrefixCache)
    usage: Counter[str] = field(default_factory=Counter)
    key_digests: set[str] = field(default_factory=set)
    counter: int = 0
    #: Model calls being answered now, and the most ever at once (panel members in parallel).
    in_flight: int = 0
    max_in_flight: int = 0
    batch: BatchState = field(default_factory=BatchState)
    #: The last request bodies served (provider, body), for tests that check what was sent.
    requests: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=64))

    def reset(self) -> None:
        """Forget everything but the latency."""
        self.faults.clear()
        self.calls.clear()
        self.faults_served.clear()
        self.cache = PrefixCache()
        self.usage = Counter()
        self.key_digests.clear()
        self.counter = 0
        self.max_in_flight = self.in_flight
        self.batch.reset()
        self.requests.clear()


def _error(
    status: int, provider: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    kinds = {400: "invalid_request_error", 429: "rate_limit_error", 529: "overloaded_error"}
    kind = kinds.get(status, "api_error")
    if provider == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        body = {"error": {"message": message, "type": kind, "code": None, "param": None}}
    return JSONResponse(body, status_code=status, headers=headers)


#: The Messages API's 400 for a message with empty content (its wording).
_EMPTY_TURN = (
    "messages: all messages must have non-empty content except for the optional final "
    "assistant message"
)


def _empty_turn(body: dict[str, Any]) -> bool:
    """Whether a Messages request has a message with empty content (the real API's 400)."""
    for m in body.get("messages") or []:
        content = m.get("content") if isinstance(m, dict) else None
        if content == "" or content == []:
            return True
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "text" and not b.get("text") for b in content
        ):
            return True
    return False


def build_app(state: FakeState) -> Starlette:
    """Return the Starlette app serving ``state``."""

    async def handle(request: Request, provider: str) -> Response:
        state.in_flight += 1
        state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            return await answer(request, provider)
        finally:
            state.in_flight -= 1

    async def answer(request: Request, provider: str) -> Response:
        state.calls[provider] += 1
        state.counter += 1
        # the prompt cache and token totals as they are now: a request still in flight after a
        # /_reset (a client that timed out) must not fill the next test's cache or counts
        cache, totals = state.cache, state.usage
        key = request.headers.get("x-api-key") or request.headers.get("authorization", "")
        key = key.removeprefix("Bearer ")
        state.key_digests.add(hashlib.sha256(key.encode()).hexdigest())
        try:
            body = json.loads(await request.body())
        except ClientDisconnect:  # the client was killed mid-request (crash tests)
            return Response(status_code=499)
        state.requests.append({"provider": provider, "body": body})
        if provider == "anthropic" and _empty_turn(body):
            # the real API refuses an empty message (a client sending back an empty answer)
            return _error(400, provider, _EMPTY_TURN)
        fault = state.faults.popleft() if state.faults else None
        kind = fault.get("kind") if fault else None
        if kind is not None:
            state.faults_served[str(kind)] += 1
        if kind in ("429", "500", "503", "529") and state.latency:
            await asyncio.sleep(state.latency)
        headers = {}
        if fault and fault.get("retry_after") is not None:
            headers["retry-after"] = str(fault["retry_after"])
        if kind == "429":
            return _error(429, provider, "rate limited (fake)", headers)
        if kind in ("500", "503"):
            return _error(int(kind), provider, "server error (fake)")
        if kind == "529":  # Anthropic's overloaded_error
            return _error(529, provider, "Overloaded (fake)", headers)
        if kind == "not_json":  # a proxy's error page served with status 200
            return Response("<html><body>Bad gateway</body></html>", media_type="text/html")
        if kind == "broken_json":  # a JSON content type over a body cut short
            return Response('{"id": "msg_fake", "content": [', media_type="application/json")
        if kind == "slow" and fault:
            await asyncio.sleep(float(fault.get("seconds", 1.0)))
        make = anthropic_message if provider == "anthropic" else openai_completion
        out = make(
            body,
            kind if kind in FAULT_ANSWERS else None,
            cache,
            state.counter,
        )
        if state.latency:  # the model "generates"; a prefix is cached once this is served
            await asyncio.sleep(state.latency)
        cache.flush()
        usage = Counter(out.get("usage") or {})  # an odd answer may have none
        if provider == "anthropic":
            totals["input_tokens"] += (
                usage["input_tokens"]
                + usage["cache_read_input_tokens"]
                + usage["cache_creation_input_tokens"]
            )
            totals["cached_tokens"] += usage["cache_read_input_tokens"]
            totals["cache_write_tokens"] += usage["cache_creation_input_tokens"]
        else:
            totals["input_tokens"] += usage["prompt_tokens"]
            totals["cached_tokens"] += (usage["prompt_tokens_details"] or {}).get(
                "cached_tokens", 0
            )
            usage_out = usage["completion_tokens"]
            totals["output_tokens"] += usage_out
        if provider == "anthropic":
            totals["output_tokens"] += usage["output_tokens"]
        if kind == "deep_tool_input":  # json.dumps itself cannot nest that deep
            text = json.dumps(out).replace(f'"{DEEP}"', "[" * 100_000 + "]" * 100_000)
            return Response(text, media_type="application/json")
        return JSONResponse(out)

    async def openai_route(request: Request) -> Response:
        return await handle(request, "openai")

    async def anthropic_route(request: Request) -> Response:
        return await handle(request, "anthropic")

    async def control(request: Request) -> Response:
        body = json.loads(await request.body() or b"{}")
        for fault in body.get("faults", []):
            state.faults.append(fault)
        if "latency" in body:
            state.latency = float(body["latency"])
        if "batch_delay" in body:
            state.batch.delay = float(body["batch_delay"])
        if "batch_fail_items" in body:
            state.batch.fail_items = int(body["batch_fail_items"])
        state.batch.item_faults.extend(body.get("batch_item_faults", []))
        if "batch_retrieve_overloaded" in body:
            state.batch.retrieve_overloaded = int(body["batch_retrieve_overloaded"])
        if "prompt_cache" in body:
            settings = body["prompt_cache"]
            state.cache.min_tokens = int(settings.get("min_tokens", state.cache.min_tokens))
            state.cache.openai_step = int(settings.get("openai_step", state.cache.openai_step))
        return JSONResponse({"queued": len(state.faults), "latency": state.latency})

    async def stats(_request: Request) -> Response:
        return JSONResponse(
            {
                "calls": dict(state.calls),
                "faults_served": dict(state.faults_served),
                "faults_queued": len(state.faults),
                "max_in_flight": state.max_in_flight,
                "usage": dict(state.usage),
                "batch_calls": dict(state.batch.calls),
                "usage_batch": dict(state.batch.usage),
                "key_digests": sorted(state.key_digests),
                "process_cpu_s": time.process_time(),
            }
        )

    async def requests(_request: Request) -> Response:
        return JSONResponse(list(state.requests))

    async def reset(_request: Request) -> Response:
        state.reset()
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", openai_route, methods=["POST"]),
            Route("/v1/messages", anthropic_route, methods=["POST"]),
            *batch_routes(state.batch, lambda: state.cache),
            Route("/_control", control, methods=["POST"]),
            Route("/_stats", stats, methods=["GET"]),
            Route("/_reset", reset, methods=["POST"]),
            Route("/_requests", requests, methods=["GET"]),
        ]
    )
