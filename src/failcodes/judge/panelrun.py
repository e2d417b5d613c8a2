"""Run a judge panel: every member judges the units into its own run folder.

``RUN_DIR/panel/<n>-<member>/`` holds each member's journal and ``annotations.jsonl`` (kept
apart, resumable like any run); ``RUN_DIR/panel.json`` the consensus per unit and dimension
(:func:`failcodes.panel.consensus`: majority, ties broken by the primary judge, the first
member; how many units each rule decided), the units the panel splits on, the inter-judge agreement
per dimension and per code, and each member's per-dimension quote checks. Cost and the dry run
count every member (:func:`estimate_panel`). A member repeated (one model sampled k times)
judges without the shared response cache, so each sample is a fresh call; its temperature is
recorded with the member.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from failcodes.annotationlines import AnnotationRead
from failcodes.annotations import (
    NOT_ASSESSABLE,
    Annotation,
    CoderKind,
    DimensionEvidence,
    Status,
    includes_heuristic,
)
from failcodes.codebook import Codebook
from failcodes.contract import StrictModel
from failcodes.errors import ConfigError, InputError
from failcodes.fileio import atomic_write_text
from failcodes.jsonio import json_field_line
from failcodes.judge.journal import JOURNAL_NAME, PANEL_FILE, iter_journal, iter_journal_lines
from failcodes.panel import (
    PanelAgreement,
    PanelUnit,
    QuoteShare,
    consensus,
    decided_counts,
    inter_judge_agreement,
    panel_warnings,
    quote_verification,
    split_units,
)
from failcodes.units import Unit, UnitKind

if TYPE_CHECKING:  # the engine is imported where a panel is judged (issue 30: attribute reads
    # a run's codes through this module and imported the whole engine, ~0.05 CPU-s)
    from failcodes.judge.estimate import CostEstimate
    from failcodes.judge.job import JudgeJob
    from failcodes.judge.summary import RunSummary
    from failcodes.judge.unitjudge import Coder

PANEL_DIR = "panel"


@dataclass(frozen=True)
class Member:
    """One panel member: a coder, its name in the panel and its sampling temperature."""

    name: str
    coder: Coder
    temperature: float | None = None


class PanelReport(StrictModel):
    """What ``panel.json`` holds."""

    kind: UnitKind
    codebook: str
    members: list[str]
    temperatures: dict[str, float | None] = Field(default_factory=dict)
    run_dirs: dict[str, str] = Field(description="Member -> its run folder (relative).")
    cost_usd: float = Field(description="Every member's cost, summed.")
    unpriced: list[str] = Field(
        default_factory=list,
        description="Members with no price (counted $0 in cost_usd: the cost is unknown).",
    )
    units: list[PanelUnit]
    split_units: list[str] = Field(description="Units the panel splits on, ties first.")
    agreement: list[PanelAgreement]
    quotes: list[QuoteShare]
    primary: str | None = Field(
        default=None,
        description="The member whose code breaks a tie (the first member); None in files "
        "written before the rule (their ties are undecided).",
    )
    decided: dict[str, int] = Field(
        default_factory=dict,
        description="Units per rule that decided them: unanimous, majority, primary (a tie "
        "the primary judge broke), undecided.",
    )
    warnings: list[str] = Field(default_factory=list, description="About the panel's rule.")

    @model_validator(mode="after")
    def _one_folder_per_member(self) -> PanelReport:
        _check_folders(self.members, self.run_dirs)
        return self


class _PanelFolders(BaseModel):
    """``panel.json``'s members and their run folders alone: its units are skipped."""

    model_config = ConfigDict(extra="ignore")

    members: list[str]
    run_dirs: dict[str, str]

    @model_validator(mode="after")
    def _one_folder_per_member(self) -> _PanelFolders:
        _check_folders(self.members, self.run_dirs)
        return self


def _check_folders(members: list[str], run_dirs: dict[str, str]) -> None:
    # a member without its folder was a KeyError traceback in `agree RUN`; a folder
    # given as an absolute path or with '..' was read as a member's run wherever it was
    if len(set(members)) != len(members):
        raise ValueError("a member is listed twice in members")
    if set(run_dirs) != set(members):
        raise ValueError(
            f"run_dirs names {sorted(run_dirs)}, members are {members}: one run folder per member"
        )
    for member, folder in run_dirs.items():
        parts = PurePosixPath(folder).parts
        if not parts or folder.startswith(("/", "\\")) or ".." in parts or ":" in folder:
            raise ValueError(
                f"member {member!r}: run folder {folder!r} must be a path inside the "
                f"panel's run folder (as the panel writes it, {PANEL_DIR}/1-NAME)"
            )


def member_names(specs: Sequence[str]) -> list[str]:
    """Member names: the spec, with ``#k`` when a spec repeats (``openai:m#1``, ``openai:m#2``)."""
    seen: dict[str, int] = {}
    total = {s: specs.count(s) for s in specs}
    out = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        out.append(f"{spec}#{seen[spec]}" if total[spec] > 1 else spec)
    return out


def member_dir(run_dir: Path, index: int, name: str) -> Path:
    """The run folder of member ``index`` (1-based)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")
    return run_dir / PANEL_DIR / f"{index}-{slug}"


def _member_jobs(members: Sequence[Member], job: JudgeJob) -> Iterator[JudgeJob]:
    """Each member's job: its own run folder; a repeated model judges without the cache."""
    if len(members) < 2:
        raise ConfigError("a judge panel needs at least two members (repeat --judge)")
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        raise ConfigError(f"panel member names must be distinct: {names}")
    seen: set[str] = set()
    for i, member in enumerate(members, 1):
        spec = member.coder.spec
        yield job.at(member_dir(job.run_dir, i, member.name), cached=spec not in seen)
        seen.add(spec)


def run_panel(
    units: Iterable[Unit], members: Sequence[Member], job: JudgeJob
) -> tuple[PanelReport, list[RunSummary]]:
    """Judge ``units`` with every member as ``job`` asks (each resumable), write ``panel.json``.

    The members judge at the same time, each within ``job``'s limits (its own concurrency,
    rates and budget): a panel takes about one judge's time, not the sum.
    """
    from failcodes.judge.run import run_judges

    units = list(units)
    summaries = run_judges(
        [
            (units, member.coder, member_job)
            for member, member_job in zip(members, _member_jobs(members, job), strict=True)
        ]
    )
    report = panel_report(
        job.run_dir, members, job.codebook, job.kind, summaries, only={u.id for u in units}
    )
    atomic_write_text(job.run_dir / PANEL_FILE, report.model_dump_json(indent=2) + "\n")
    return report, summaries


def panel_report(
    run: Path,
    members: Sequence[Member],
    codebook: Codebook,
    kind: UnitKind,
    summaries: Sequence[RunSummary],
    *,
    only: Set[str] | None = None,
) -> PanelReport:
    """Read every member's annotations and combine them (consensus, splits, agreement).

    The first member breaks ties (:func:`failcodes.panel.consensus`). ``only``: the units of
    the panel's input (a member's journal may hold an earlier input's, left out).
    """
    from failcodes.judge.run import read_annotations

    part = codebook.part(kind)
    panel = {
        m.name: [
            a
            for a in read_annotations(member_dir(run, i, m.name))
            if only is None or a.unit_id in only
        ]
        for i, m in enumerate(members, 1)
    }
    primary = members[0].name
    units = consensus(panel, part, primary)
    return PanelReport(
        kind=kind,
        codebook=str(codebook.ref()),
        members=[m.name for m in members],
        temperatures={m.name: m.temperature for m in members},
        run_dirs={
            m.name: str(member_dir(run, i, m.name).relative_to(run))
            for i, m in enumerate(members, 1)
        },
        cost_usd=sum(s.journal_cost_usd for s in summaries),
        unpriced=[m.name for m, s in zip(members, summaries, strict=True) if not s.price_known],
        units=units,
        split_units=split_units(units),
        primary=primary,
        decided=decided_counts(units),
        warnings=panel_warnings([m.name for m in members], primary),
        agreement=inter_judge_agreement(panel, part),
        quotes=[
            q.model_copy(update={"coder": name})
            for name, anns in panel.items()
            for q in quote_verification(anns)
        ],
    )


def estimate_panel(
    units: Iterable[Unit], members: Sequence[Member], job: JudgeJob
) -> list[CostEstimate]:
    """One dry-run estimate per member (the panel costs their sum)."""
    from failcodes.judge.run import estimate_run

    units = list(units)
    return [
        estimate_run(units, member.coder, member_job)
        for member, member_job in zip(members, _member_jobs(members, job), strict=True)
    ]


def panel_annotations(run_dir: str | Path) -> list[Annotation]:
    """Every member's annotations, each named by its member (``openai:m#1``...).

    Samples of one model then count as distinct coders (``failcodes agree RUN_DIR``).
    """
    from failcodes.judge.run import read_annotations

    run = Path(run_dir)
    report = read_panel(run)
    if report is None:
        raise InputError("not a judge panel run (no panel.json)", path=run)
    out: list[Annotation] = []
    for member in report.members:
        for ann in read_annotations(run / report.run_dirs[member]):
            out.append(ann.model_copy(update={"coder": member}))
    return out


def consensus_annotations(run_dir: str | Path, codebook: Codebook) -> list[Annotation]:
    """One annotation per unit carrying the panel's consensus codes (coder ``panel(a+b)``).

    A tie the primary judge broke carries the primary's code. A dimension whose consensus code
    a member gave and flagged uncertain is flagged uncertain (its evidence names the members
    that doubted it): the consensus read as certain. A unit left undecided on any
    dimension (a tie the primary did not break: it gave none of the tied codes, or the panel
    file predates the rule) is *unscored* with those dimensions as its reason: it has no
    consensus to report, and tables leave it out rather than guess.
    """
    run = Path(run_dir)
    report = read_panel(run)
    if report is None:
        raise InputError("not a judge panel run (no panel.json)", path=run)
    part = codebook.part(report.kind)
    _check_consensus(run / PANEL_FILE, report, codebook)
    multi = {d.id for d in part.dimensions if d.multi_label}
    coder = f"panel({'+'.join(report.members)})"
    # the offline judge's copies agree by construction: their consensus is the heuristic's
    # (per_passage.csv said coder_kind llm for it, and the tables dropped 'heuristic baseline')
    offline = all(includes_heuristic(f"panel({m})") for m in report.members)
    kind = CoderKind.HEURISTIC if offline else CoderKind.LLM
    out: list[Annotation] = []
    for unit in report.units:
        common = {
            "unit_id": unit.unit_id,
            "unit_kind": report.kind,
            "codebook": codebook.ref(),
            "coder": coder,
            "coder_kind": kind,
        }
        if unit.undecided or len(unit.dimensions) < len(part.dimensions):
            why = ", ".join(unit.undecided) or "not every dimension coded by the members"
            broke = f" (not broken by the primary judge {report.primary})" if report.primary else ""
            out.append(
                Annotation(
                    status=Status.UNSCORED,
                    reason=f"judge panel tie on {why}{broke}",
                    **common,
                )
            )
            continue
        codes = {d: v.consensus[0] for d, v in unit.dimensions.items()}
        sets = {d: list(v.consensus) for d, v in unit.dimensions.items() if d in multi}
        # a consensus code a member doubted is doubted (Label Studio: "[judge uncertain]")
        evidence = {
            d: DimensionEvidence(
                rationale=f"judge panel consensus; flagged uncertain by {', '.join(v.uncertain)}",
                uncertain=True,
            )
            for d, v in unit.dimensions.items()
            if v.consensus_uncertain
        }
        out.append(
            Annotation(
                status=Status.SCORED,
                codes=codes,
                code_sets=sets,
                evidence=evidence,
                uncertain=bool(evidence),
                **common,
            )
        )
    return out


def _check_consensus(path: Path, report: PanelReport, codebook: Codebook) -> None:
    """Refuse consensus codes the codebook part does not have (a tampered or foreign file)."""
    part = codebook.part(report.kind)
    allowed = {d.id: {*d.code_ids(), NOT_ASSESSABLE} for d in part.dimensions}
    for i, unit in enumerate(report.units):
        for dim, vote in unit.dimensions.items():
            field = f"units[{i}].dimensions.{dim}"
            if dim not in allowed:
                why = f"dimension {dim!r} is not one of the codebook's {report.kind.value} part"
            elif unknown := [c for c in vote.consensus if c not in allowed[dim]]:
                field += ".consensus"
                why = f"consensus code {unknown[0]!r} is not a code of dimension {dim!r}"
            else:
                continue
            raise InputError(
                f"{why} ({codebook.name} v{codebook.version}): the panel report does not match the "
                "codebook; run the panel again",
                path=path,
                line=json_field_line(path, field),
                field=field,
            )


_A = TypeVar("_A")


def run_codes(run_dir: str | Path, codebook: Codebook) -> list[Annotation]:
    """The codes a judge run folder stands for: a panel's consensus, else its annotations.

    What ``attribute --retrieval RUN`` and ``labelstudio export --judged RUN`` read, so a
    study's panel feeds both steps like a single judge does.
    """
    return list(_run_codes(run_dir, codebook, iter_journal))


def iter_run_codes(run_dir: str | Path, codebook: Codebook) -> Iterator[AnnotationRead]:
    """:func:`run_codes` one annotation at a time (a single judge's journal is not held).

    A journal row msgspec can vouch for is its struct (:func:`~failcodes.judge.journal.
    iter_journal_lines`). A folder with no judge run raises here, before the first
    annotation is asked for.
    """
    return _run_codes(run_dir, codebook, iter_journal_lines)


def _run_codes(
    run_dir: str | Path, codebook: Codebook, journal: Callable[[Path], Iterator[_A]]
) -> Iterator[Annotation | _A]:
    run = Path(run_dir)
    if (run / PANEL_FILE).is_file():  # a judge panel: its consensus, ties unscored
        return iter(consensus_annotations(run, codebook))
    if not (run / JOURNAL_NAME).is_file():
        raise InputError(f"no judge run here (missing {JOURNAL_NAME})", path=run)
    return journal(run)


def read_panel(run_dir: str | Path) -> PanelReport | None:
    """Read ``RUN_DIR/panel.json`` if the run is a panel run."""
    from failcodes.tableio import read_model_if_exists

    return read_model_if_exists(Path(run_dir) / PANEL_FILE, PanelReport, what="not a panel report")


def panel_folders(run_dir: str | Path) -> dict[str, Path] | None:
    """Each member's run folder of a panel run, by member; None when the run is no panel.

    Reads ``panel.json``'s members and folders alone: a study's plan asks before each step,
    and :func:`read_panel` validated every unit's consensus (1 s a read of a 6,000-trace
    study's panel, 38 reads in its re-code; issue 30). A file it cannot read is
    :func:`read_panel`'s one line.
    """
    run = Path(run_dir)
    path = run / PANEL_FILE
    if not path.exists() and not path.is_symlink():
        return None
    head: _PanelFolders | PanelReport | None
    try:
        head = _PanelFolders.model_validate_json(path.read_bytes())
    except (ValidationError, OSError):
        head = read_panel(run)  # its error names the file, the line and the field
        if head is None:
            return None
    return {name: run / folder for name, folder in head.run_dirs.items()}
