"""Judge providers: ``offline`` (heuristic baseline), ``anthropic:MODEL``, ``openai:MODEL``.

The protocol lives in :mod:`.base` (and :mod:`.batching` for batch APIs); the factory that
builds a provider from a spec in :mod:`.factory`. SDKs are imported only inside their
provider module, and only when that provider is used.
"""

from __future__ import annotations

from failcodes.judge.providers.base import DirectCoder as DirectCoder
from failcodes.judge.providers.base import DirectResult as DirectResult
from failcodes.judge.providers.base import LLMProvider as LLMProvider
from failcodes.judge.providers.base import Message as Message
from failcodes.judge.providers.base import ProviderReply as ProviderReply
from failcodes.judge.providers.base import ProviderRequest as ProviderRequest
from failcodes.judge.providers.base import RetryableProviderError as RetryableProviderError
from failcodes.judge.providers.base import TokenUsage as TokenUsage
from failcodes.judge.providers.factory import PROVIDERS as PROVIDERS
from failcodes.judge.providers.factory import batch_backend as batch_backend
from failcodes.judge.providers.factory import endpoint as endpoint
from failcodes.judge.providers.factory import make_coder as make_coder
from failcodes.judge.providers.factory import parse_spec as parse_spec
from failcodes.redact import redact_url as redact_url
