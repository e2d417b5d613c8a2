"""The LLM-as-judge engine: apply a codebook to units through a provider, in a run mode.

Public API:

- running: :func:`run_judge` / :func:`run_judge_async` (units, coder, :class:`JudgeJob`: the
  codebook, unit kind, run folder, ``mode`` :class:`PerUnit` (the default) | :class:`Grouped` |
  :class:`Batch` | :class:`Cascade`, cache, prices, settings); :func:`estimate_run`
  (dry run of the same job, one cost figure) -> :class:`CostEstimate`; :func:`read_annotations`,
  :func:`read_summary`, :func:`export_run`; :class:`RunSummary`, :class:`JudgeSettings`.
- one unit: :class:`UnitJudge` (request building, cache key, the one retry loop, annotation,
  price), :func:`complete_with_retry` (the retry loop alone, for any structured call).
- parts: :func:`make_coder`, :func:`parse_spec`, :class:`Limits`, :class:`RetryPolicy`,
  :class:`RateLimiter`, :class:`Journal`, :class:`ResponseCache`, :class:`Price`,
  :class:`PriceTable`, :func:`load_prices`, :class:`JudgeEngine` (a judge over an open journal).
"""

from failcodes.judge.cache import ResponseCache
from failcodes.judge.engine import JudgeEngine
from failcodes.judge.estimate import CostEstimate, PricingOnlyCoder
from failcodes.judge.job import JudgeJob
from failcodes.judge.journal import Journal
from failcodes.judge.limits import Limits, RateLimiter, RetryPolicy
from failcodes.judge.modes import Batch, Cascade, Grouped, Mode, PerUnit
from failcodes.judge.pricing import Price, PriceTable, load_prices
from failcodes.judge.providers import make_coder, parse_spec
from failcodes.judge.retry import complete_with_retry
from failcodes.judge.run import (
    estimate_run,
    export_run,
    read_annotations,
    read_summary,
    run_judge,
    run_judge_async,
)
from failcodes.judge.settings import JudgeSettings
from failcodes.judge.summary import RunSummary, summary_json, summary_lines
from failcodes.judge.unitjudge import Outcome, UnitJudge

__all__ = [
    "Batch",
    "Cascade",
    "CostEstimate",
    "Grouped",
    "Journal",
    "JudgeEngine",
    "JudgeJob",
    "JudgeSettings",
    "Limits",
    "Mode",
    "Outcome",
    "PerUnit",
    "Price",
    "PriceTable",
    "PricingOnlyCoder",
    "RateLimiter",
    "ResponseCache",
    "RetryPolicy",
    "RunSummary",
    "UnitJudge",
    "complete_with_retry",
    "estimate_run",
    "export_run",
    "load_prices",
    "make_coder",
    "parse_spec",
    "read_annotations",
    "read_summary",
    "run_judge",
    "run_judge_async",
    "summary_json",
    "summary_lines",
]
