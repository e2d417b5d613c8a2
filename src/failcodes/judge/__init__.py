"""The LLM-as-judge engine: apply a codebook to units through a provider.

Public API: :class:`JudgeEngine`, :class:`JudgeSettings`, :class:`RunSummary`,
:class:`Estimate`, :func:`run_judge`, :func:`estimate_run`, :func:`make_coder`,
:class:`Limits`, :class:`RetryPolicy`, :class:`Journal`, :class:`ResponseCache`,
:func:`load_prices`.
"""

from failcodes.judge.cache import ResponseCache
from failcodes.judge.engine import Estimate, JudgeEngine, JudgeSettings, RunSummary
from failcodes.judge.journal import Journal
from failcodes.judge.limits import Limits, RateLimiter, RetryPolicy
from failcodes.judge.pricing import Price, PriceTable, load_prices
from failcodes.judge.providers import make_coder, parse_spec
from failcodes.judge.run import (
    estimate_run,
    export_run,
    read_annotations,
    run_judge,
    run_judge_async,
)

__all__ = [
    "Estimate",
    "Journal",
    "JudgeEngine",
    "JudgeSettings",
    "Limits",
    "Price",
    "PriceTable",
    "RateLimiter",
    "ResponseCache",
    "RetryPolicy",
    "RunSummary",
    "estimate_run",
    "export_run",
    "load_prices",
    "make_coder",
    "parse_spec",
    "read_annotations",
    "run_judge",
    "run_judge_async",
]
