"""Judge providers: ``offline`` (heuristic baseline), ``anthropic:MODEL``, ``openai:MODEL``.

SDKs are imported only inside their provider module, and only when that provider is used.
"""

from __future__ import annotations

from failcodes.errors import ConfigError
from failcodes.judge.providers.base import (
    DirectCoder,
    DirectResult,
    LLMProvider,
    Message,
    ProviderReply,
    ProviderRequest,
    RetryableProviderError,
    TokenUsage,
)

PROVIDERS = ("offline", "anthropic", "openai")


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``provider:model`` (or ``offline``) into its parts, validating the provider."""
    name, _, model = spec.partition(":")
    name = name.strip().lower()
    if name == "offline":
        return name, model or "heuristic-v1"
    if name not in PROVIDERS or not model:
        raise ConfigError(
            f"unknown judge {spec!r}; use offline, anthropic:MODEL or openai:MODEL "
            "(e.g. openai:gpt-5-mini; an OpenAI-compatible server via --base-url)"
        )
    return name, model


def make_coder(
    spec: str,
    *,
    base_url: str | None = None,
    timeout: float = 120.0,
    temperature: float | None = None,
) -> LLMProvider | DirectCoder:
    """Build the coder named by ``spec``; keys come from the environment only."""
    name, model = parse_spec(spec)
    if name == "offline":
        from failcodes.judge.providers.offline import OfflineCoder

        return OfflineCoder()
    if name == "anthropic":
        from failcodes.judge.providers.anthropic import AnthropicProvider

        return AnthropicProvider(model, base_url=base_url, timeout=timeout)
    from failcodes.judge.providers.openai import OpenAIProvider

    return OpenAIProvider(model, base_url=base_url, timeout=timeout, temperature=temperature)


__all__ = [
    "PROVIDERS",
    "DirectCoder",
    "DirectResult",
    "LLMProvider",
    "Message",
    "ProviderReply",
    "ProviderRequest",
    "RetryableProviderError",
    "TokenUsage",
    "make_coder",
    "parse_spec",
]
