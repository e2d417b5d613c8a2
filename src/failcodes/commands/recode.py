"""``recode STUDY`` as a use case: bring a study's judge runs onto the study's codebook.

Re-codes through the study's judge (its ``[judge]`` table: the same
:class:`~failcodes.commands.judge.JudgeOptions` the judge step ran with: run mode, panel,
temperature, timeout, rate limits, output tokens, prices, cache) only the units the migration
map cannot carry, and migrates the others without a call, into
``judge/<dataset>/<kind>.v<N>/``: :mod:`failcodes.study.recode` says where the study keeps its
units, earlier annotations and codebook lineage; the re-coding itself is the one engine
:mod:`failcodes.recoding` (``saturate recode``'s too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from failcodes.commands.base import Note, Request, ignore_note, option
from failcodes.errors import InputError
from failcodes.judge.limits import MAX_ATTEMPTS, MAX_CONCURRENCY

if TYPE_CHECKING:
    from failcodes.recoding import JudgeFn
    from failcodes.recoding import RecodeResult as Outcome


@dataclass
class RecodeResult:
    """One line per judge run: what was re-coded, migrated or already on the version."""

    said: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The result as plain lines."""
        return list(self.said)


class RecodeRequest(Request):
    """Re-code what a codebook bump touched in the study's judge runs; migrate the rest."""

    command: ClassVar[tuple[str, ...]] = ("recode",)

    study: Path = option(argument=True, help="The study folder.", metavar="STUDY")
    dataset: str | None = option(None, help="Only this data set of the study (default: all).")
    kind: Literal["retrieval", "reasoning"] | None = option(
        None, help="Only this judge kind: retrieval | reasoning."
    )
    status: bool = option(False, help="Show the codebook version of every judged unit.")
    concurrency: int | None = option(
        None,
        help="Calls in flight (default: the study's [judge] setting).",
        ge=1,
        le=MAX_CONCURRENCY,
    )
    max_attempts: int | None = option(
        None,
        help="Attempts per call (default: the study's [judge] setting).",
        ge=1,
        le=MAX_ATTEMPTS,
    )

    def run(self, *, note: Note = ignore_note) -> RecodeResult:
        """Re-code (or, with ``status``, describe) the study's judge runs."""
        from failcodes.study.config import load_study
        from failcodes.study.layout import StudyLayout

        del note
        layout = StudyLayout.of(self.study)
        study = load_study(layout.root)
        names = [ds.name for ds in study.datasets]
        if self.dataset is not None and self.dataset not in names:
            raise InputError(
                f"--dataset {self.dataset!r}: not a data set of the study (have: "
                f"{', '.join(names)})",
                path=layout.study_file,
            )
        if self.status:
            return RecodeResult(_status_lines(study, layout))
        return RecodeResult(self._recode(study, layout))

    def _recode(self, study: Any, layout: Any) -> list[str]:
        from failcodes.study.recode import judged, plan_kind, recode_kind

        options = study.judge.model_copy(
            update={
                k: v
                for k, v in (("concurrency", self.concurrency), ("max_attempts", self.max_attempts))
                if v is not None
            }
        )
        engines = recode_engines(options, layout.judge_cache)
        todo = [
            (d, k)
            for d, k in judged(study, layout)
            if (self.dataset is None or d == self.dataset) and (self.kind is None or k == self.kind)
        ]
        if not todo:
            return ["no judge run to re-code"]
        said = []
        for d, k in todo:
            if not options.panel:
                work = plan_kind(study, layout, d, k)
                result = recode_kind(work, engines[0], coder_name=options.judge[0].name)
            else:
                result = _recode_panel(study, layout, d, k, options, engines)
            if result.path is None:
                said.append(f"{d}/{k}: nothing to re-code: every unit is on v{result.version}")
                continue
            panel = f" (panel of {len(options.judge)}: per member)" if options.panel else ""
            said.append(
                f"{d}/{k}: v{result.version}: {result.recoded} unit(s) re-coded by "
                f"{options.who()}{panel}, {result.migrated} migrated without a call -> "
                f"{result.path.parent.relative_to(layout.root)}{result.unscored_note()}"
            )
        return said


def recode_engines(options: Any, cache: Path) -> list[JudgeFn]:
    """One re-coding judge per judge of ``options`` (a repeated panel member: no cache)."""
    from failcodes.recoding import EngineJudge

    settings = options.settings()
    prices = options.price_table()
    seen: set[str] = set()
    out: list[JudgeFn] = []
    for spec in options.judge:
        repeat = spec.name in seen  # a repeated panel member samples again: no cache (as judge)
        seen.add(spec.name)
        out.append(
            EngineJudge(
                spec.name,
                base_url=spec.endpoint(options.base_url),
                cache_path=None if spec.heuristic or repeat or options.no_cache else cache,
                settings=settings,
                make_mode=options.run_mode,
                timeout=options.timeout,
                temperature=options.temperature,
                prices=prices,
            )
        )
    return out


def _recode_panel(
    study: Any, layout: Any, dataset: str, kind: str, options: Any, engines: list[JudgeFn]
) -> Outcome:
    from failcodes.study.recode import PanelSeat, plan_kind, recode_panel

    # members name the panel in panel.json; their calls go through the engines, so they hold
    # no client (an offline judge has none anyway)
    members = options.members(stand_in=True)
    works = [
        plan_kind(study, layout, dataset, kind, member=PanelSeat(i, m.name))
        for i, m in enumerate(members, 1)
    ]
    return recode_panel(works, engines, members, kind)


def _status_lines(study: Any, layout: Any) -> list[str]:
    from failcodes.study.recode import recode_status

    lines = []
    for row in recode_status(study, layout):
        versions = (
            ", ".join(
                [f"v{v}: {n}" for v, n in row.versions.items()]
                + ([f"not coded: {row.uncoded}"] if row.uncoded else [])
            )
            or "no units"
        )
        state = "all on" if row.stale == 0 else f"{row.stale} unit(s) NOT on"
        lines.append(
            f"{row.dataset}/{row.kind}: {versions} ({state} study v{row.study_version}); "
            f"re-coded {row.recoded}, migrated {row.migrated}; "
            f"read from {row.run_dir.relative_to(layout.root)}"
        )
    return lines
