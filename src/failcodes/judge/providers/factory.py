"""Build judges and batch backends from a spec (``offline``, ``anthropic:MODEL``, ``openai:MODEL``).

Kept apart from the protocol (:mod:`.base`): SDK modules are imported here only when their
provider is asked for, so the protocol and the batch protocol import no provider.
"""

from __future__ import annotations

from typing import Any

from failcodes.errors import ConfigError
from failcodes.judge.providers.base import DirectCoder, LLMProvider
from failcodes.judge.providers.batching import BatchBackend
from failcodes.redact import looks_like_key, redact_url

PROVIDERS = ("offline", "anthropic", "openai")

#: A judge spec holding an API key: refused, never echoed (a dry run printed it on stdout).
KEY_AS_MODEL = (
    "--judge: the model name is an API key; name the model (openai:gpt-5-mini) and give the "
    "key in the environment (OPENAI_API_KEY or ANTHROPIC_API_KEY)"
)


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``provider:model`` (or ``offline``) into its parts, validating the provider."""
    if not isinstance(spec, str):  # make_coder(None) from Python: an AttributeError
        raise ConfigError(
            f"judge: expected text, offline, anthropic:MODEL or openai:MODEL; got {spec!r}"
        )
    name, _, model = spec.partition(":")
    name = name.strip().lower()
    if name == "offline":
        from failcodes.judge.providers.offline import OFFLINE_MODEL

        return name, model or OFFLINE_MODEL
    if looks_like_key(spec):
        # written as the judge's name into the journal, summary.json and every annotation
        raise ConfigError(KEY_AS_MODEL)
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


def batch_backend(provider: LLMProvider) -> BatchBackend:
    """Return the batch API of ``provider`` (OpenAI or Anthropic)."""
    if provider.provider == "openai":
        from failcodes.judge.providers.openai import OpenAIProvider
        from failcodes.judge.providers.openai_batch import OpenAIBatch

        if isinstance(provider, OpenAIProvider):
            return OpenAIBatch(provider)
    if provider.provider == "anthropic":
        from failcodes.judge.providers.anthropic import AnthropicProvider
        from failcodes.judge.providers.anthropic_batch import AnthropicBatch

        if isinstance(provider, AnthropicProvider):
            return AnthropicBatch(provider)
    raise ConfigError(f"{provider.spec}: no batch API; batch mode needs openai: or anthropic:")


def endpoint(coder: Any) -> str | None:
    """The base URL a coder calls (redacted), or None for the vendor's default endpoint."""
    identity = coder.identity() if hasattr(coder, "identity") else {}
    url = identity.get("base_url") if isinstance(identity, dict) else None
    return redact_url(url) if isinstance(url, str) else None
