"""What a judge run is set to do besides the provider, the codebook and the units."""

from __future__ import annotations

from dataclasses import dataclass, field

from failcodes.judge.limits import Limits, RetryPolicy
from failcodes.judge.pricing import Price


@dataclass(frozen=True)
class JudgeSettings:
    """Everything about a run that is not the provider, the codebook or the units."""

    limits: Limits = field(default_factory=Limits)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_output_tokens: int = 1024
    budget_usd: float | None = None
    #: Output tokens assumed per unit by the budget reservation (dry runs size answers
    #: from the schema, or from the journal once it holds judged units).
    expected_output_tokens: int = 250
    #: The judge's price, given explicitly: overrides the price table, and is the only way a
    #: judge behind a non-vendor base URL (a local OpenAI-compatible server) gets a price.
    price: Price | None = None
