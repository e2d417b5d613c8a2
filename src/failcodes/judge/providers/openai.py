"""OpenAI judge (``openai:MODEL``): structured output through ``json_schema`` response format.

Also serves any OpenAI-compatible server (vLLM, Ollama, llama.cpp) through ``--base-url`` or
``OPENAI_BASE_URL``. The key comes from ``OPENAI_API_KEY`` only; a server on this machine
(localhost or a loopback address) may go without one. The SDK's own retries are off: the engine
retries, honouring retry-after. OpenAI caches long prompt prefixes automatically; cached
tokens are read from ``usage.prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

import ipaddress
import json
import os
from functools import partial
from typing import Any
from urllib.parse import urlsplit

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

KEY_VAR = "OPENAI_API_KEY"
BASE_URL_VAR = "OPENAI_BASE_URL"
#: Sent to a server on this machine when OPENAI_API_KEY is unset (the SDK needs some key).
LOCAL_SERVER_KEY = "no-key-local-server"
#: Model families that reject ``temperature`` and ``max_tokens`` (reasoning models).
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def _text_of(content: object) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # some compatible servers send [{"type": "text", ...}]
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return "" if content is None else json.dumps(content, default=str)


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def on_this_machine(base_url: str | None) -> bool:
    """Whether ``base_url`` names a server on this machine (localhost or a loopback address)."""
    if not base_url:
        return False
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def reply_from_completion(body: dict[str, Any], raw_request: dict[str, Any]) -> ProviderReply:
    """Turn a Chat Completions response body into a provider reply (direct calls and batches).

    Undecodable text is left as is: validation reports it and the engine asks again. A reply
    that holds no answer (a refusal, an answer cut off at the token limit, no content) carries
    a :class:`~failcodes.judge.schema.NoAnswer` saying why, as the Anthropic provider does.
    """
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = _mapping(_mapping(first).get("message"))
    text = _text_of(message.get("content"))
    payload: object = json_payload(text) if text.strip() else NoAnswer("the reply was empty")
    refusal = message.get("refusal")
    if refusal:
        text = text or f"(refusal) {refusal}"
        payload = NoAnswer(f"the model refused to answer: {refusal}")
    elif _mapping(first).get("finish_reason") == "length":
        payload = NoAnswer(
            "the answer was cut off at the output token limit (finish_reason length)"
        )
    if isinstance(payload, NoAnswer) and not text.strip():
        text = f"({payload})"
    # a compatible server's odd body (choices: [null], content: 5, prompt_tokens: "many")
    # raised AttributeError/TypeError/ValueError: it is an answer validation sends back
    u = _mapping(body.get("usage"))
    details = _mapping(u.get("prompt_tokens_details"))
    usage = TokenUsage(
        input_tokens=token_count(u.get("prompt_tokens")),
        cached_input_tokens=token_count(details.get("cached_tokens")),
        output_tokens=token_count(u.get("completion_tokens")),
    )
    return ProviderReply(
        payload=payload, text=text, usage=usage, raw_request=raw_request, raw_response=body
    )


class OpenAIProvider:
    """Judge through the Chat Completions API of OpenAI or a compatible server."""

    provider = "openai"
    coder_kind = CoderKind.LLM

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout: float = 120.0,
        temperature: float | None = None,
    ) -> None:
        self.base_url = checked_base_url(base_url, BASE_URL_VAR)
        # the key first: without one (a dry run) the SDK is never imported (~1 s). A server
        # on this machine (Ollama, vLLM, llama.cpp) usually checks none: it may go without.
        key = (
            LOCAL_SERVER_KEY
            if not os.environ.get(KEY_VAR) and on_this_machine(self.base_url)
            else api_key(KEY_VAR, "OpenAI", " (a server on this machine needs none)")
        )
        import openai  # a dependency, imported on use (start-up time)

        self.model = model
        self.spec = f"openai:{model}"
        reasoning = model.startswith(REASONING_PREFIXES)
        self.temperature = None if reasoning else (0.0 if temperature is None else temperature)
        # The official API wants max_completion_tokens; compatible servers know max_tokens.
        self._max_key = "max_completion_tokens" if self.base_url is None else "max_tokens"
        self.sdk: Any = openai
        self.client: Any = openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=timeout
        )

    def identity(self) -> dict[str, Any]:
        """Provider, model, endpoint and sampling parameters (never the key)."""
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
        }

    def build(self, request: ProviderRequest) -> dict[str, Any]:
        """Return the Chat Completions body for ``request`` (also stored as the raw request)."""
        messages: list[dict[str, str]] = [{"role": "system", "content": request.system}]
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema_name,
                    "schema": request.schema,
                    "strict": True,
                },
            },
            self._max_key: request.max_output_tokens,
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        """Send one request; map SDK errors onto the engine's retry classes."""
        body = self.build(request)
        auth = f"the server rejected the key in {KEY_VAR} (401); check it, or use --judge offline"
        # the bearer key only, as ``chat.completions.create`` sends it (never an admin key)
        bearer = {"security": {"bearer_auth": True}}
        read = partial(reply_from_completion, raw_request=body)
        return await post_json(self, "/chat/completions", body, auth, read, options=bearer)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.client.close()
