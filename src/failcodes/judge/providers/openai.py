"""OpenAI judge (``openai:MODEL``): structured output through ``json_schema`` response format.

Also serves any OpenAI-compatible server (vLLM, Ollama, llama.cpp) through ``--base-url`` or
``OPENAI_BASE_URL``. The key comes from ``OPENAI_API_KEY`` only (a local server that needs
no key still needs the variable set to any value). The SDK's own retries are off: the engine
retries, honouring retry-after. OpenAI caches long prompt prefixes automatically; cached
tokens are read from ``usage.prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from failcodes.annotations import CoderKind
from failcodes.errors import ConfigError, ProviderError
from failcodes.judge.providers.base import (
    ProviderReply,
    ProviderRequest,
    RetryableProviderError,
    TokenUsage,
    parse_retry_after,
)

KEY_VAR = "OPENAI_API_KEY"
BASE_URL_VAR = "OPENAI_BASE_URL"
#: Model families that reject ``temperature`` and ``max_tokens`` (reasoning models).
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


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
        try:
            import openai
        except ImportError:  # pragma: no cover - openai is a dependency
            raise ConfigError(
                "the openai judge needs the openai package: pip install openai"
            ) from None
        key = os.environ.get(KEY_VAR)
        if not key:
            raise ConfigError(
                f"no OpenAI API key: set {KEY_VAR} (any value for a local server), "
                "or use --judge offline"
            )
        self.model = model
        self.spec = f"openai:{model}"
        self.base_url = base_url or os.environ.get(BASE_URL_VAR) or None
        reasoning = model.startswith(_REASONING_PREFIXES)
        self.temperature = None if reasoning else (0.0 if temperature is None else temperature)
        # The official API wants max_completion_tokens; compatible servers know max_tokens.
        self._max_key = "max_completion_tokens" if self.base_url is None else "max_tokens"
        self._sdk = openai
        self._client = openai.AsyncOpenAI(
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
        sdk = self._sdk
        body = self.build(request)
        try:
            completion = await self._client.chat.completions.create(**body)
        except sdk.AuthenticationError:
            raise ConfigError(
                f"the server rejected the key in {KEY_VAR} (401); check it, or use --judge offline"
            ) from None
        except (sdk.RateLimitError, sdk.InternalServerError) as exc:
            raise RetryableProviderError(
                f"HTTP {exc.status_code}", retry_after=parse_retry_after(exc.response.headers)
            ) from None
        except sdk.APIStatusError as exc:
            if exc.status_code in (408, 409):
                raise RetryableProviderError(
                    f"HTTP {exc.status_code}", retry_after=parse_retry_after(exc.response.headers)
                ) from None
            raise ProviderError(f"{self.spec}: HTTP {exc.status_code}: {exc.message}") from None
        except sdk.APIConnectionError as exc:  # includes timeouts
            raise RetryableProviderError(type(exc).__name__) from None
        choice = completion.choices[0] if completion.choices else None
        text = (choice.message.content or "") if choice is not None else ""
        if choice is not None and choice.message.refusal:
            text = text or f"(refusal) {choice.message.refusal}"
        payload: object = text
        # Undecodable text is left as is: validation reports it and the engine asks again.
        with contextlib.suppress(json.JSONDecodeError):
            payload = json.loads(text)
        u = completion.usage
        usage = TokenUsage()
        if u is not None:
            details = u.prompt_tokens_details
            usage = TokenUsage(
                input_tokens=u.prompt_tokens,
                cached_input_tokens=(details.cached_tokens or 0) if details else 0,
                output_tokens=u.completion_tokens,
            )
        return ProviderReply(
            payload=payload,
            text=text,
            usage=usage,
            raw_request=body,
            raw_response=completion.model_dump(mode="json"),
        )

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()
