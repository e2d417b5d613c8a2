"""How a run sends its units: the run mode, a strategy passed to :func:`~failcodes.judge.run_judge`.

- :class:`PerUnit`: one request per unit, concurrent direct calls (the default);
- :class:`Grouped`: one request per claim for all its passages (retrieval units);
- :class:`Batch`: through the provider's batch API (half price, slower), per unit or grouped;
- :class:`Cascade`: a cheap judge first; only its uncertain units go to the judge, in any of
  the modes above.

Modes are plain values (no I/O); :mod:`failcodes.judge.run` executes them and
:func:`~failcodes.judge.estimate_run` prices them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from failcodes.judge.grouping import DEFAULT_GROUP_SIZE
from failcodes.judge.providers.base import DirectCoder, LLMProvider

#: Why a batch run takes no budget (its items are paid when the provider runs them).
BUDGET_WITH_BATCH = (
    "--budget is not supported with --batch (batches are paid when they run): leave it out, "
    "and see the cost first with --dry-run"
)


@dataclass(frozen=True)
class PerUnit:
    """One request per unit."""

    #: Short name (summaries, journal).
    name: ClassVar[str] = "per-unit"


@dataclass(frozen=True)
class Grouped:
    """All passages of one claim in one request, at most ``size`` per request."""

    size: int = DEFAULT_GROUP_SIZE
    #: Short name (summaries, journal).
    name: ClassVar[str] = "grouped"


@dataclass(frozen=True)
class Batch:
    """Through the provider's batch API; ``group`` sends grouped requests as batch items."""

    size: int | None = None
    poll: float = 30.0
    group: Grouped | None = None
    #: Rows written per ledger transaction.
    commit_every: int = 500

    @property
    def name(self) -> str:
        """Short name (summaries, journal)."""
        return "batch, grouped" if self.group is not None else "batch"


@dataclass(frozen=True)
class Cascade:
    """``first`` (a cheap judge) codes every unit; its doubtful units go on in ``then``."""

    first: LLMProvider | DirectCoder
    then: PerUnit | Grouped | Batch = field(default_factory=PerUnit)

    @property
    def name(self) -> str:
        """Short name (summaries, journal)."""
        return f"cascade ({self.first.spec} first), {self.then.name}"


Mode = PerUnit | Grouped | Batch | Cascade


def grouping(mode: Mode) -> Grouped | None:
    """How ``mode`` (a cascade: its second judge's) groups units by claim; None: one a call."""
    then = mode.then if isinstance(mode, Cascade) else mode
    return then.group if isinstance(then, Batch) else then if isinstance(then, Grouped) else None
