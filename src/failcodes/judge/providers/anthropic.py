"""Anthropic judge (``anthropic:MODEL``): structured output through forced tool use.

The codebook prefix goes in the system block with ``cache_control`` so Anthropic's prompt
cache can serve it; the answer schema is a strict tool the model must call. The key comes
from ``ANTHROPIC_API_KEY`` only; ``ANTHROPIC_BASE_URL`` (or ``--base-url``) points the SDK at
any compatible endpoint. The SDK's own retries are off: the engine retries, honouring
retry-after.
"""

from __future__ import annotations

import json
from typing import Any

from failcodes.annotations import CoderKind
from failcodes.judge.providers.base import ProviderReply, ProviderRequest, TokenUsage
from failcodes.judge.providers.credentials import api_key
from failcodes.judge.providers.credentials import base_url as checked_base_url
from failcodes.judge.providers.sdkerrors import sdk_errors

KEY_VAR = "ANTHROPIC_API_KEY"
BASE_URL_VAR = "ANTHROPIC_BASE_URL"


def reply_from_message(
    message: Any, schema_name: str | None, raw_request: dict[str, Any]
) -> ProviderReply:
    """Turn a Messages API ``Message`` into a provider reply (direct calls and batches).

    The payload is the input of the tool named ``schema_name`` (any tool when None).
    """
    payload: object = None
    text = ""
    for block in message.content:
        if block.type == "tool_use" and schema_name in (None, block.name):
            payload = block.input
            text = json.dumps(block.input, ensure_ascii=False)
            break
    else:
        text = "".join(getattr(b, "text", "") for b in message.content)
        payload = text
    u = message.usage
    read = u.cache_read_input_tokens or 0
    write = u.cache_creation_input_tokens or 0
    usage = TokenUsage(
        input_tokens=u.input_tokens + read + write,
        cached_input_tokens=read,
        cache_write_tokens=write,
        output_tokens=u.output_tokens,
    )
    return ProviderReply(
        payload=payload,
        text=text,
        usage=usage,
        raw_request=raw_request,
        raw_response=message.model_dump(mode="json"),
    )


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
        with sdk_errors(self.sdk, spec=self.spec, auth_message=auth):
            message = await self.client.messages.create(**body)
        return reply_from_message(message, request.schema_name, body)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.client.close()
