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

from __future__ import annotations

from typing import TYPE_CHECKING

from failcodes.deferredimport import lazy_exports

if TYPE_CHECKING:
    from failcodes.judge.cache import ResponseCache as ResponseCache
    from failcodes.judge.engine import JudgeEngine as JudgeEngine
    from failcodes.judge.estimate import CostEstimate as CostEstimate
    from failcodes.judge.estimate import PricingOnlyCoder as PricingOnlyCoder
    from failcodes.judge.job import JudgeJob as JudgeJob
    from failcodes.judge.journal import Journal as Journal
    from failcodes.judge.limits import Limits as Limits
    from failcodes.judge.limits import RateLimiter as RateLimiter
    from failcodes.judge.limits import RetryPolicy as RetryPolicy
    from failcodes.judge.modes import Batch as Batch
    from failcodes.judge.modes import Cascade as Cascade
    from failcodes.judge.modes import Grouped as Grouped
    from failcodes.judge.modes import Mode as Mode
    from failcodes.judge.modes import PerUnit as PerUnit
    from failcodes.judge.pricing import Price as Price
    from failcodes.judge.pricing import PriceTable as PriceTable
    from failcodes.judge.pricing import load_prices as load_prices
    from failcodes.judge.providers import make_coder as make_coder
    from failcodes.judge.providers import parse_spec as parse_spec
    from failcodes.judge.retry import complete_with_retry as complete_with_retry
    from failcodes.judge.run import estimate_run as estimate_run
    from failcodes.judge.run import export_run as export_run
    from failcodes.judge.run import read_annotations as read_annotations
    from failcodes.judge.run import read_summary as read_summary
    from failcodes.judge.run import run_judge as run_judge
    from failcodes.judge.run import run_judge_async as run_judge_async
    from failcodes.judge.settings import JudgeSettings as JudgeSettings
    from failcodes.judge.summary import RunSummary as RunSummary
    from failcodes.judge.summary import summary_json as summary_json
    from failcodes.judge.summary import summary_lines as summary_lines
    from failcodes.judge.unitjudge import Outcome as Outcome
    from failcodes.judge.unitjudge import UnitJudge as UnitJudge

#: Public name -> (module, attribute), imported on first use: a command that reads a run's
#: journal (``labelstudio export``, ``attribute``: :mod:`failcodes.judge.journal`) imported
#: the whole engine with this package, ~0.05 CPU-s of each (issue 30).
_LAZY, __getattr__ = lazy_exports(globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = sorted(_LAZY)  # (``from failcodes.judge import *``: every public name, as before)
