"""``saturate init|round|recode`` as use cases: typed requests, the CLI's flags built from them.

:class:`SaturateInitRequest` creates a project from a seed codebook and a pool of units
(``top_k`` cuts the passages as the judge does); :class:`SaturateRoundRequest` runs one round
(its coder and proposer named by spec strings: ``scripted:FILE`` is allowed there);
:class:`SaturateRecodeRequest` re-codes the flagged units with the same
:class:`~failcodes.commands.judge.JudgeOptions` as ``judge`` (endpoint, limits, retries,
budget, output tokens, run mode, prices, temperature: one definition, one default) through the
one re-coding engine (:mod:`failcodes.recoding`). Printing stays in ``failcodes.cli.saturate``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field, field_validator, model_validator

from failcodes.commands.base import Note, Request, ignore_note, option, top_k_option
from failcodes.commands.judge import DEFAULT_CACHE, MAX_PANEL, JudgeOptions, judge_list
from failcodes.errors import ConfigError
from failcodes.judge.spec import JudgeSpec
from failcodes.saturation.models import (
    DEFAULT_MIN_SUPPORT,
    DEFAULT_SIMILARITY_THRESHOLD,
    DEFAULT_STOP_K,
    ProjectConfig,
    RoundPhase,
)
from failcodes.saturation.review import auto_accept
from failcodes.saturation.rounds import (
    init_project,
    open_proposals,
    record_decisions,
    run_round,
    stop_state,
)
from failcodes.saturation.store import DEFAULT_ROOT, ProjectStore
from failcodes.units import UnitKind

if TYPE_CHECKING:
    from failcodes.recoding import RecodeResult
    from failcodes.saturation.models import Proposal, ProposalDraft, RoundRecord, StopState

NAME_HELP = "Project name."
DIR_HELP = "Project folder (default annotations/NAME)."


def project_root(name: str, folder: Path | None) -> Path:
    """The project's folder: ``folder``, else ``annotations/NAME`` (a plain name only)."""
    # the name is a folder under annotations/: '../x' or 'a/b' would leave it
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise ConfigError(
            f"project name {name!r}: use letters, digits, '.', '_' and '-' "
            "(it names the folder annotations/NAME)"
        )
    return folder if folder is not None else DEFAULT_ROOT / name


@dataclass
class InitResult:
    """A created project: where, its codebook, its pool and how it draws and stops."""

    name: str
    root: Path
    codebook: str
    units: int
    kind: UnitKind
    per_round: int
    stop_k: int

    def lines(self) -> list[str]:
        """The result as plain lines."""
        return [
            f"created saturation project {self.name} in {self.root}: codebook "
            f"{self.codebook}, {self.units} {self.kind.value} units, batches of "
            f"{self.per_round}, stop after {self.stop_k} rounds without new patterns"
        ]


class SaturateInitRequest(Request):
    """Create a saturation project from a seed codebook and a pool of units."""

    command: ClassVar[tuple[str, ...]] = ("saturate", "init")

    name: str = option(argument=True, help=NAME_HELP, metavar="NAME")
    codebook: Path = option(help="Seed codebook (taxonomy YAML or JSON).")
    units: Path | None = option(None, help="Unit pool: JSONL of units.")
    from_traces: Path | None = option(
        None, flags=("--from",), help="Build the pool from traces or disagreements (JSONL) instead."
    )
    top_k: int | None = top_k_option(strict=True)
    kind: UnitKind = option(UnitKind.RETRIEVAL, help="Codebook part to grow.")
    folder: Path | None = option(None, flags=("--dir",), help=DIR_HELP)
    batch_size: int = option(50, help="Units per round.", ge=1, strict=True)
    seed: int = option(0, help="Seed of the per-round draws.", strict=True)
    stratify_by_system: bool = option(
        False, help="Draw each batch proportionally across systems.", strict=True
    )
    stop_k: int = option(
        DEFAULT_STOP_K,
        help="Saturated after K rounds in a row with nothing new.",
        ge=1,
        strict=True,
    )
    min_support: int = option(
        DEFAULT_MIN_SUPPORT,
        help="Leaves with fewer supporting units are prunable.",
        ge=1,
        strict=True,
    )
    threshold: float = option(
        DEFAULT_SIMILARITY_THRESHOLD, help="Deduplication similarity threshold (0-1]."
    )
    created_by: str | None = option(None, help="Your name, recorded.")
    export_to: Path | None = option(
        None, help="Also save each new version there as taxonomy YAML (e.g. taxonomy)."
    )

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float) -> float:
        if not 0 < value <= 1:  # NaN too
            raise ValueError(f"--threshold must be in (0, 1], got {value}")
        return value

    def run(self, *, note: Note = ignore_note) -> InitResult:
        """Write the project (its config, seed codebook v1 and pool)."""
        from failcodes.saturation.inputs import load_codebook

        del note
        if (self.units is None) == (self.from_traces is None):
            raise ConfigError("give the unit pool with exactly one of --units or --from")
        root = project_root(self.name, self.folder)
        cb = load_codebook(self.codebook)
        pool = self._pool()
        config = ProjectConfig(
            name=self.name,
            kind=self.kind,
            batch_size=self.batch_size,
            seed=self.seed,
            stratify_by_system=self.stratify_by_system,
            stop_k=self.stop_k,
            min_support=self.min_support,
            similarity_threshold=self.threshold,
            codebook_name=cb.name,
            created_by=self.created_by,
            export_dir=str(self.export_to) if self.export_to is not None else None,
        )
        store = init_project(root, config, cb, pool)
        return InitResult(
            name=self.name,
            root=store.root,
            codebook=f"{cb.name}@{cb.version}",
            units=len(pool),
            kind=self.kind,
            per_round=self.batch_size,
            stop_k=self.stop_k,
        )

    def _pool(self) -> list[Any]:
        """The pool: units of the kind from a units file, or built from traces."""
        from failcodes.saturation.inputs import load_units

        if self.units is not None:
            return [u for u in load_units(self.units) if u.kind is self.kind]
        from failcodes.commands.inputs import source_units

        assert self.from_traces is not None
        return source_units(self.from_traces, self.kind, self.top_k)


@dataclass
class RoundResult:
    """What one round did: its record, proposals, notes and the stop rule after it."""

    record: RoundRecord
    proposals: list[Proposal]
    open_after_dedupe: int
    proposer_heuristic: bool
    notes: list[str]
    review_file: Path
    codebook_version: int
    stop: StopState
    auto_accepted_by: str | None = None


class SaturateRoundRequest(Request):
    """Run (or resume) one round: draw, code, propose, deduplicate, write the review file."""

    command: ClassVar[tuple[str, ...]] = ("saturate", "round")

    name: str = option(argument=True, help=NAME_HELP, metavar="NAME")
    folder: Path | None = option(None, flags=("--dir",), help=DIR_HELP)
    judge: str = option(
        "offline", help="Coder: offline, anthropic:MODEL, openai:MODEL or scripted:FILE."
    )
    proposer: str = option("offline", help="Proposer: offline, llm:PROVIDER:MODEL, scripted:FILE.")
    base_url: str | None = option(None, help="Endpoint of an OpenAI/Anthropic-compatible server.")
    force: bool = option(False, help="Run a round even when saturated.", strict=True)
    auto_accept: bool = option(
        False,
        flags=("--auto-accept",),
        help="Accept every proposal WITHOUT human review (recorded as auto-accept).",
        strict=True,
    )
    reviewer: str | None = option(None, help="Name recorded with --auto-accept.")
    reviews: list[Path] = option(
        default_factory=list,
        help="Human reviews (annotations JSONL, e.g. `labelstudio pull`): their free-text new "
        "codes are proposals of this round too (repeatable).",
    )

    def run(self, *, note: Note = ignore_note) -> RoundResult:
        """Run the round (and, with ``auto_accept``, accept every open proposal)."""
        from failcodes.saturation.inputs import resolve_coder, resolve_proposer

        del note
        store = ProjectStore.open(project_root(self.name, self.folder))
        coder = resolve_coder(self.judge, base_url=self.base_url)
        prop = resolve_proposer(self.proposer, base_url=self.base_url)
        extra, said, unplaced = self._reviewer_drafts(store)
        record = run_round(store, coder, prop, force=self.force, extra=extra)
        if unplaced:  # kept with the round: a later round says them once, not each time
            import json

            from failcodes.fileio import atomic_write_text
            from failcodes.saturation.proposers import UNPLACED_FILE

            path = store.round_dir(record.number) / UNPLACED_FILE
            held = path.read_text(encoding="utf-8") if path.is_file() else ""
            atomic_write_text(path, held + "".join(json.dumps(u) + "\n" for u in unplaced))
        proposals = store.proposals(record.number)
        n_open = len(open_proposals(store, record.number))
        notes = [f"note: {n}" for n in [*getattr(prop, "notes", []), *said]]
        notes += [f"note: proposal {p.id} ({p.name}): {n}" for p in proposals for n in p.notes]
        coded = store.round_annotations(record.number)
        unscored = [a for a in coded if a.status.value != "scored"]
        if unscored:
            notes.append(
                f"note: the judge scored {len(coded) - len(unscored)} of {len(coded)} units "
                f"({len(unscored)} unscored, e.g. {unscored[0].reason!r}); the proposer saw the "
                "scored ones only"
            )
        who = None
        if record.phase is RoundPhase.PROPOSED and self.auto_accept:
            who = self.reviewer or default_reviewer() or "unknown"
            record_decisions(store, auto_accept(open_proposals(store, record.number), who))
            record = store.round(record.number)
        return RoundResult(
            record=record,
            proposals=proposals,
            open_after_dedupe=n_open,
            proposer_heuristic=prop.kind.value == "heuristic",
            notes=notes,
            review_file=store.review_path(record.number),
            codebook_version=store.codebook().version,
            stop=stop_state(store),
            auto_accepted_by=who,
        )

    def _reviewer_drafts(
        self, store: ProjectStore
    ) -> tuple[list[ProposalDraft], list[str], list[dict[str, str]]]:
        """The reviews' free-text proposals as drafts, notes on those left out, the unplaced."""
        from failcodes.annotations import Annotation
        from failcodes.jsonio import iter_jsonl
        from failcodes.saturation.proposers import UNPLACED_FILE, reviewer_drafts
        from failcodes.tableio import read_models_jsonl

        if not self.reviews:
            return [], [], []
        anns = [a for path in self.reviews for a in read_models_jsonl(path, Annotation)]
        given = {n for r in store.round_numbers() for p in store.proposals(r) for n in p.notes}
        before: dict[str, str] = {}  # origin -> the round file listing it (unplaced)
        for r in store.round_numbers():
            path = store.round_dir(r) / UNPLACED_FILE
            if path.is_file():
                shown = str(path.relative_to(store.root))
                before.update(
                    (o, shown)
                    for _, row in iter_jsonl(path)
                    if isinstance(o := row.get("origin"), str)
                )
        part = store.codebook().part(store.config().kind)
        pool = {u.id for u in store.pool()}
        return reviewer_drafts(anns, part, pool, given, before)


def default_reviewer() -> str:
    """Who is reviewing: $FAILCODES_REVIEWER, else the login name ('' when there is none)."""
    import getpass

    try:
        return os.environ.get("FAILCODES_REVIEWER") or getpass.getuser()
    except (KeyError, OSError):  # no login name (containers)
        return ""


@dataclass
class SaturateRecodeResult:
    """What a re-code did, and the coded units per codebook version after it."""

    outcome: RecodeResult
    judge: str
    heuristic: bool
    unit_versions: dict[int, int] = field(default_factory=dict)


class SaturateRecodeRequest(JudgeOptions, Request):
    """Re-code the flagged units under the newest version; migrate the others without a call.

    Resumable: the judge's journal under recode/vNNNN/judge/ keeps every finished unit.
    """

    command: ClassVar[tuple[str, ...]] = ("saturate", "recode")

    name: str = option(argument=True, help=NAME_HELP, metavar="NAME")
    folder: Path | None = option(None, flags=("--dir",), help=DIR_HELP)
    judge: Annotated[
        list[JudgeSpec], BeforeValidator(judge_list), Field(min_length=1, max_length=MAX_PANEL)
    ] = option(
        default_factory=lambda: [JudgeSpec.of("offline")],
        help="offline | anthropic:MODEL | openai:MODEL[@URL]: the judge that re-codes (one).",
    )
    # the project's pool is fixed: no passage cut-off here
    top_k: int | None = option(None, cli=False)
    cache: Path = option(DEFAULT_CACHE, help="Response cache (SQLite).")

    @model_validator(mode="after")
    def _one_judge(self) -> SaturateRecodeRequest:
        if len(self.judge) > 1:
            raise ValueError("saturate recode re-codes with one judge (no panel)")
        if self.top_k is not None:
            raise ValueError("saturate recode re-codes the project's pool: no passage cut-off")
        return self

    def run(self, *, note: Note = ignore_note) -> SaturateRecodeResult:
        """Re-code the flagged units and migrate the rest (:mod:`failcodes.recoding`)."""
        from failcodes.commands.recode import recode_engines
        from failcodes.saturation.recode import recode_project
        from failcodes.saturation.status import project_status

        del note
        store = ProjectStore.open(project_root(self.name, self.folder))
        spec = self.judge[0]
        [engine] = recode_engines(self, self.cache)
        outcome = recode_project(store, engine, coder_name=spec.name)
        info = project_status(store)
        return SaturateRecodeResult(outcome, spec.name, spec.heuristic, dict(info.unit_versions))
