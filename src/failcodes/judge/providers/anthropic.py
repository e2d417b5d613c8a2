"""Anthropic judge (``anthropic:MODEL``): structured output through forced tool use.

The codebook prefix goes in the system block with ``cache_control`` so Anthropic's prompt
cache can serve it; the answer schema is a strict tool the model must call. The key comes
from ``ANTHROPIC_API_KEY`` only; ``ANTHROPIC_BASE_URL`` (or ``--base-url``) points the SDK at
any compatible endpoint. The SDK's own retries are off: the engine retries, honouring
retry-after.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from failcodes.annotations import CoderKind
from failcodes.judge.providers.base import (
    ProviderReply,
    ProviderRequest,
    TokenUsage,
    token_count,
)
from failcodes.judge.providers.credentials import api_key
from failcodes.judge.providers.credentials import base_url as checked_base_url
from failcodes.judge.providers.jsontext import json_payload
from failcodes.judge.providers.sdkerrors import post_json
from failcodes.judge.schema import NoAnswer

KEY_VAR = "ANTHROPIC_API_KEY"
BASE_URL_VAR = "ANTHROPIC_BASE_URL"


def reply_from_body(
    body: dict[str, Any], schema_name: str | None, raw_request: dict[str, Any]
) -> ProviderReply:
    """Turn a Messages API message (its JSON) into a provider reply (direct calls and batches).

    The payload is the input of the tool named ``schema_name`` (any tool when None: a batch
    result, whose ``extra["tool"]`` then names the tool called, for the caller to check). A reply
    that holds no answer (a refusal, an answer cut off at ``max_tokens``, no call of the tool
    and no JSON text) carries a :class:`~failcodes.judge.schema.NoAnswer` saying why:
    validation sends it back, then the unit ends unscored with that reason. A compatible
    server's odd message (no usage, a block of an unknown type, ``null`` counts) is read as
    far as it goes, never raising. ``body`` is kept as the reply's raw response.
    """
    content = body.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    calls = [b for b in blocks if b.get("type") == "tool_use"]
    call = next((b for b in calls if schema_name in (None, b.get("name"))), None)
    texts = [b.get("text") for b in blocks if b.get("type") == "text"]
    text = "".join(t for t in texts if isinstance(t, str))
    payload: object
    if call is not None:
        payload = call.get("input")
        text = json.dumps(payload, ensure_ascii=False)
    else:
        payload = json_payload(text) if text.strip() else None
        if payload is None or isinstance(payload, str):  # prose, or nothing
            payload = NoAnswer(_no_call(schema_name, blocks, calls))
    stop = body.get("stop_reason")
    if stop == "refusal":
        payload = NoAnswer("the model refused to answer (stop_reason refusal)")
    elif stop == "max_tokens":
        payload = NoAnswer(
            "the answer was cut off at the output token limit (stop_reason max_tokens)"
        )
    if isinstance(payload, NoAnswer) and not text.strip():
        # sent back as the assistant turn: the API refuses an empty text block
        text = f"({payload})"
    u = body.get("usage")
    u = u if isinstance(u, dict) else {}
    read = token_count(u.get("cache_read_input_tokens"))
    write = token_count(u.get("cache_creation_input_tokens"))
    usage = TokenUsage(
        input_tokens=token_count(u.get("input_tokens")) + read + write,
        cached_input_tokens=read,
        cache_write_tokens=write,
        output_tokens=token_count(u.get("output_tokens")),
    )
    return ProviderReply(
        payload=payload,
        text=text,
        usage=usage,
        raw_request=raw_request,
        raw_response=body,
        extra={"tool": call.get("name")} if call is not None and schema_name is None else {},
    )


def _no_call(schema_name: str | None, blocks: list[dict[str, Any]], calls: list[Any]) -> str:
    """Why a reply holds no answer: what came instead of the call of the answer tool."""
    tool = f"the tool `{schema_name}`" if schema_name else "the answer tool"
    if calls:
        names = ", ".join(f"`{c.get('name')}`" for c in calls)
        return f"no call of {tool} (a call of {names} instead)"
    if not blocks:
        return f"no call of {tool}: the reply was empty"
    kinds = ", ".join(sorted({str(b.get("type")) for b in blocks}))
    return f"no call of {tool}, and no JSON answer (content: {kinds})"


class AnthropicProvider:
    """Judge through the Anthropic Messages API."""

    provider = "anthropic"
    coder_kind = CoderKind.LLM

    def __init__(self, model: str, *, base_url: str | None = None, timeout: float = 120.0) -> None:
        # the key first: without one (a dry run) the SDK is never imported (~1 s)
        key = api_key(KEY_VAR, "Anthropic")
        import anthropic  # a dependency, imported on use (start-up time)

        self.model = model
        self.spec = f"anthropic:{model}"
        self.base_url = checked_base_url(base_url, BASE_URL_VAR)
        self.sdk: Any = anthropic
        self.client: Any = anthropic.AsyncAnthropic(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=timeout
        )

    def identity(self) -> dict[str, Any]:
        """Provider, model and endpoint (never the key)."""
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url}

    def build(self, request: ProviderRequest) -> dict[str, Any]:
        """Return the Messages API body for ``request`` (also stored as the raw request)."""
        return {
            "model": self.model,
            "max_tokens": request.max_output_tokens,
            "system": [
                {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
            ],
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "tools": [
                {
                    "name": request.schema_name,
                    "description": "Record the codes, rationale and quote for the judged material.",
                    "input_schema": request.schema,
                    "strict": True,
                }
            ],
            "tool_choice": {"type": "tool", "name": request.schema_name},
        }

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        """Send one request; map SDK errors onto the engine's retry classes."""
        body = self.build(request)
        auth = f"Anthropic rejected the key in {KEY_VAR} (401); check it, or use --judge offline"
        read = partial(reply_from_body, schema_name=request.schema_name, raw_request=body)
        return await post_json(self, "/v1/messages", body, auth, read)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.client.close()
