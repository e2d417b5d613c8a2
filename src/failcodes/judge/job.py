"""What a judge run is asked to do, as one value shared by every judge entry point.

:class:`JudgeJob` holds the codebook, the unit kind, the run folder, the run mode, the response
cache, the price table and the settings. :func:`~failcodes.judge.run_judge`,
:func:`~failcodes.judge.estimate_run`, :func:`~failcodes.judge.panelrun.run_panel` and
:func:`~failcodes.judge.panelrun.estimate_panel` take the units, the coder (or the panel's
members) and one job; a cascade's first judge and a panel's members run variants of it
(:meth:`JudgeJob.at`)::

    job = JudgeJob(codebook, UnitKind.RETRIEVAL, run_dir="runs/r1", mode=Grouped(25))
    print(estimate_run(units, coder, job).cost_usd)
    summary = run_judge(units, coder, job)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from failcodes.codebook import Codebook
from failcodes.errors import choice
from failcodes.judge.cache import ResponseCache
from failcodes.judge.journal import Journal
from failcodes.judge.modes import Mode, PerUnit
from failcodes.judge.pricing import PriceTable, load_prices
from failcodes.judge.providers.base import DirectCoder, LLMProvider
from failcodes.judge.settings import JudgeSettings
from failcodes.judge.unitjudge import UnitJudge
from failcodes.units import UnitKind


@dataclass(frozen=True)
class JudgeJob:
    """A judge run's request: what to apply, where the run lives, and how to send it.

    ``run_dir`` holds the run's journal and exports (resumable); ``cache_path`` a response
    cache shared across runs (None: no cache); ``prices`` a price table (None: the bundled
    vendor list); ``settings`` limits, retries, budget (None: the defaults).
    """

    codebook: Codebook
    kind: UnitKind
    run_dir: Path
    mode: Mode = field(default_factory=PerUnit)
    cache_path: Path | None = None
    prices: PriceTable | None = None
    settings: JudgeSettings | None = None

    def __post_init__(self) -> None:
        # accept str paths (the fields are declared Path; a frozen dataclass normalises once)
        object.__setattr__(self, "run_dir", Path(self.run_dir))
        # and the kind's word: JudgeJob(cb, "verification") was an AttributeError deep in the
        # run ('str' object has no attribute 'value'), a misspelt word accepted until then
        object.__setattr__(self, "kind", choice(UnitKind, self.kind, "kind"))
        if self.cache_path is not None:
            object.__setattr__(self, "cache_path", Path(self.cache_path))

    def at(
        self, run_dir: Path, *, mode: Mode | None = None, cached: bool = True, settings: bool = True
    ) -> JudgeJob:
        """The same job in another run folder (a panel member's, a cascade's first stage).

        ``mode`` replaces the mode; ``cached=False`` drops the response cache (a repeated
        panel member samples afresh); ``settings=False`` runs with the default settings.
        """
        return dataclasses.replace(
            self,
            run_dir=run_dir,
            mode=self.mode if mode is None else mode,
            cache_path=self.cache_path if cached else None,
            settings=self.settings if settings else None,
        )

    @contextmanager
    def opened(self, coder: LLMProvider | DirectCoder) -> Iterator[tuple[Journal, UnitJudge]]:
        """Open the journal and the response cache, build the judge; close both at the end."""
        with ExitStack() as stack:
            journal = Journal(self.run_dir)
            stack.callback(journal.close)
            cache = ResponseCache(self.cache_path) if self.cache_path is not None else None
            if cache is not None:
                stack.callback(cache.close)
            yield journal, self.unit_judge(coder, cache)

    def unit_judge(
        self, coder: LLMProvider | DirectCoder, cache: ResponseCache | None
    ) -> UnitJudge:
        """The :class:`UnitJudge` of this job for ``coder`` (the bundled prices by default)."""
        return UnitJudge(
            coder,
            self.codebook,
            self.kind,
            cache=cache,
            prices=self.prices if self.prices is not None else load_prices(),
            settings=self.settings,
        )
