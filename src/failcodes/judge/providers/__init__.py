"""Judge providers: ``offline`` (heuristic baseline), ``anthropic:MODEL``, ``openai:MODEL``.

The protocol lives in :mod:`.base` (and :mod:`.batching` for batch APIs); the factory that
builds a provider from a spec in :mod:`.factory`. SDKs are imported only inside their
provider module, and only when that provider is used.
"""

from __future__ import annotations

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
from failcodes.judge.providers.factory import (
    PROVIDERS,
    batch_backend,
    endpoint,
    make_coder,
    parse_spec,
)
from failcodes.redact import redact_url

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
    "batch_backend",
    "endpoint",
    "make_coder",
    "parse_spec",
    "redact_url",
]
