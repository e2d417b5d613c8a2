"""``failcodes saturate``: grow a codebook until new data brings nothing new.

    failcodes saturate init NAME --codebook CB.yaml --units UNITS.jsonl|--from TRACES.jsonl
    failcodes saturate round NAME [--judge offline] [--proposer offline] [--auto-accept]
    failcodes saturate review NAME [--file REVIEW.yaml | --interactive --reviewer ME]
    failcodes saturate status NAME [--format json] [--figure curve.png]
    failcodes saturate prune NAME [--min-support N] [--apply prune-0001.yaml]
    failcodes saturate recode NAME [--judge offline|anthropic:MODEL|openai:MODEL] [--budget USD]

The project lives in ``annotations/NAME/`` unless ``--dir`` says otherwise.
"""

from __future__ import annotations

import getpass
import json
import os
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from failcodes.cli.main import command_group
from failcodes.cli.options import (
    DEFAULT_CACHE,
    BaseUrlOpt,
    BudgetOpt,
    CacheOpt,
    ConcurrencyOpt,
    NoCacheOpt,
    RetriesOpt,
    TopKOpt,
)
from failcodes.cli.output_format import FormatOpt, OutputFormat, require_format
from failcodes.commands.inputs import load_traces
from failcodes.errors import ConfigError
from failcodes.saturation.figure import accumulation_figure
from failcodes.saturation.inputs import (
    load_codebook,
    load_units,
    resolve_coder,
    resolve_proposer,
)
from failcodes.saturation.models import (
    DEFAULT_MIN_SUPPORT,
    DEFAULT_SIMILARITY_THRESHOLD,
    DEFAULT_STOP_K,
    ProjectConfig,
    RoundPhase,
)
from failcodes.saturation.prune import apply_prune_file, prune_candidates, write_prune_file
from failcodes.saturation.review import auto_accept, parse_review_file, write_review_file
from failcodes.saturation.rounds import (
    current_round,
    init_project,
    open_proposals,
    record_decisions,
    run_round,
    stop_state,
    undecided,
)
from failcodes.saturation.status import ProjectStatus, project_status
from failcodes.saturation.store import DEFAULT_ROOT, ProjectStore
from failcodes.saturation.terminal import review_interactively
from failcodes.units import UnitKind, build_units

saturate_app = command_group(
    "saturate", "Human-in-the-loop saturation: grow the codebook round by round until nothing new."
)

console = Console(highlight=False, markup=False, soft_wrap=True)

NameArg = Annotated[str, typer.Argument(help="Project name.")]
DirOpt = Annotated[
    Path | None,
    typer.Option("--dir", help="Project folder (default annotations/NAME).", show_default=False),
]
JudgeSpecOpt = Annotated[
    str,
    typer.Option(
        "--judge", help="Coder: offline, anthropic:MODEL, openai:MODEL; `round` also scripted:FILE."
    ),
]


def _root(name: str, folder: Path | None) -> Path:
    # the name is a folder under annotations/: '../x' or 'a/b' would leave it
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise ConfigError(
            f"project name {name!r}: use letters, digits, '.', '_' and '-' "
            "(it names the folder annotations/NAME)"
        )
    return folder if folder is not None else DEFAULT_ROOT / name


def _default_reviewer() -> str:
    try:
        return os.environ.get("FAILCODES_REVIEWER") or getpass.getuser()
    except (KeyError, OSError):  # no login name (containers)
        return ""


def _pool(
    units: Path | None, from_traces: Path | None, kind: UnitKind, top_k: int | None
) -> list[Any]:
    """The saturation pool: units of ``kind`` from a units file, or built from traces."""
    if units is not None:
        return [u for u in load_units(units) if u.kind is kind]
    assert from_traces is not None
    return build_units(load_traces(from_traces), kind, top_k=top_k)


@saturate_app.command("init")
def init(
    name: NameArg,
    codebook: Annotated[Path, typer.Option(help="Seed codebook (taxonomy YAML or JSON).")],
    units: Annotated[
        Path | None, typer.Option(help="Unit pool: JSONL of units.", show_default=False)
    ] = None,
    from_traces: Annotated[
        Path | None,
        typer.Option("--from", help="Build the pool from traces or disagreements (JSONL) instead."),
    ] = None,
    top_k: TopKOpt = None,
    kind: Annotated[UnitKind, typer.Option(help="Codebook part to grow.")] = UnitKind.RETRIEVAL,
    folder: DirOpt = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Units per round.")] = 50,
    seed: Annotated[int, typer.Option(help="Seed of the per-round draws.")] = 0,
    stratify_by_system: Annotated[
        bool, typer.Option(help="Draw each batch proportionally across systems.")
    ] = False,
    stop_k: Annotated[
        int, typer.Option(min=1, help="Saturated after K rounds in a row with nothing new.")
    ] = DEFAULT_STOP_K,
    min_support: Annotated[
        int, typer.Option(min=1, help="Leaves with fewer supporting units are prunable.")
    ] = DEFAULT_MIN_SUPPORT,
    threshold: Annotated[
        float, typer.Option(help="Deduplication similarity threshold (0-1].")
    ] = DEFAULT_SIMILARITY_THRESHOLD,
    created_by: Annotated[str | None, typer.Option(help="Your name, recorded.")] = None,
    export_to: Annotated[
        Path | None,
        typer.Option(help="Also save each new version there as taxonomy YAML (e.g. taxonomy)."),
    ] = None,
) -> None:
    """Create a saturation project from a seed codebook and a pool of units."""
    if not 0 < threshold <= 1:
        raise ConfigError(f"--threshold must be in (0, 1], got {threshold}")
    if (units is None) == (from_traces is None):
        raise ConfigError("give the unit pool with exactly one of --units or --from")
    cb = load_codebook(codebook)
    pool = _pool(units, from_traces, kind, top_k)
    config = ProjectConfig(
        name=name,
        kind=kind,
        batch_size=batch_size,
        seed=seed,
        stratify_by_system=stratify_by_system,
        stop_k=stop_k,
        min_support=min_support,
        similarity_threshold=threshold,
        codebook_name=cb.name,
        created_by=created_by,
        export_dir=str(export_to) if export_to is not None else None,
    )
    store = init_project(_root(name, folder), config, cb, pool)
    console.print(
        f"created saturation project {name} in {store.root}: codebook {cb.name}@{cb.version}, "
        f"{len(pool)} {kind.value} units, batches of {batch_size}, stop after {stop_k} rounds "
        "without new patterns"
    )


def _print_notes(prop: Any, proposals: Any) -> None:
    """What the proposer and each proposal noted."""
    for note in getattr(prop, "notes", []):
        console.print(f"note: {note}", highlight=False)
    for p in proposals:
        for note in p.notes:
            console.print(f"note: proposal {p.id} ({p.name}): {note}", highlight=False)


@saturate_app.command("round")
def round_(
    name: NameArg,
    folder: DirOpt = None,
    judge: JudgeSpecOpt = "offline",
    proposer: Annotated[
        str, typer.Option(help="Proposer: offline, llm:PROVIDER:MODEL, scripted:FILE.")
    ] = "offline",
    base_url: BaseUrlOpt = None,
    force: Annotated[bool, typer.Option(help="Run a round even when saturated.")] = False,
    auto_accept_all: Annotated[
        bool,
        typer.Option(
            "--auto-accept",
            help="Accept every proposal WITHOUT human review (recorded as auto-accept).",
        ),
    ] = False,
    reviewer: Annotated[str | None, typer.Option(help="Name recorded with --auto-accept.")] = None,
) -> None:
    """Run (or resume) one round: draw, code, propose, deduplicate, write the review file."""
    store = ProjectStore.open(_root(name, folder))
    coder = resolve_coder(judge, base_url=base_url)
    prop = resolve_proposer(proposer, base_url=base_url)
    record = run_round(store, coder, prop, force=force)
    proposals = store.proposals(record.number)
    n_open = len(open_proposals(store, record.number))
    label = " (heuristic baseline)" if prop.kind.value == "heuristic" else ""
    console.print(
        f"round {record.number}: {len(record.unit_ids)} units coded by {record.judge} with "
        f"codebook v{record.codebook_version}; proposer {record.proposer}{label}: "
        f"{len(proposals)} proposal(s), {n_open} after deduplication"
    )
    _print_notes(prop, proposals)
    if record.phase is RoundPhase.PROPOSED and auto_accept_all:
        who = reviewer or _default_reviewer() or "unknown"
        record_decisions(store, auto_accept(open_proposals(store, record.number), who))
        record = store.round(record.number)
        console.print(
            f"AUTO-ACCEPTED {n_open} proposal(s) without human review (--auto-accept, "
            f"recorded as requested by {who})"
        )
    if record.phase is RoundPhase.PROPOSED:
        console.print(f"review file: {store.review_path(record.number)}")
        console.print(
            f"edit it and run `failcodes saturate review {name} --file "
            f"{store.review_path(record.number)}`, or `failcodes saturate review {name} "
            "--interactive`"
        )
    else:
        console.print(
            f"round {record.number} closed: {record.new_patterns} new pattern(s); codebook "
            f"v{store.codebook().version}"
        )
    state = stop_state(store)
    console.print(
        f"stop rule: {state.rounds_without_new}/{state.k} rounds without new patterns"
        + (" - SATURATED" if state.saturated else "")
    )


@saturate_app.command("review")
def review(
    name: NameArg,
    folder: DirOpt = None,
    file: Annotated[
        Path | None, typer.Option("--file", help="An edited review file to record.")
    ] = None,
    interactive: Annotated[
        bool, typer.Option("--interactive", "-i", help="Review in the terminal.")
    ] = False,
    reviewer: Annotated[str | None, typer.Option(help="Your name (interactive review).")] = None,
    write: Annotated[
        bool, typer.Option("--write", help="(Re)write the review file of the open round.")
    ] = False,
) -> None:
    """Record review decisions from an edited file or interactively; closes decided rounds."""
    store = ProjectStore.open(_root(name, folder))
    if file is not None and interactive:
        raise ConfigError("use either --file or --interactive, not both")
    if file is not None:
        decisions = parse_review_file(
            file, project=store.config().name, rounds=store.round_numbers()
        )
        closed = record_decisions(store, decisions)
        names = sorted({d.reviewer for d in decisions})
        console.print(f"recorded {len(decisions)} decision(s) by {', '.join(names) or 'nobody'}")
        for r in closed:
            _print_closed(store, r.number)
        _print_pending(store)
        return
    if interactive:
        who = str(reviewer or typer.prompt("Reviewer name", default=_default_reviewer() or None))
        outcome = review_interactively(store, who, input, console.print)
        console.print(
            f"recorded {len(outcome.decisions)} decision(s) by {who}"
            + (f"; {outcome.skipped} left for later" if outcome.skipped else "")
        )
        record = current_round(store)
        if record is not None and outcome.closed_round:
            _print_closed(store, record.number)
        _print_pending(store)
        return
    record = current_round(store)
    if record is None or record.phase is not RoundPhase.PROPOSED:
        console.print("no round awaits review")
        return
    path = store.review_path(record.number)
    if write or not path.exists():
        path = write_review_file(store, record.number)
    _print_pending(store)


def _print_closed(store: ProjectStore, number: int) -> None:
    r = store.round(number)
    console.print(
        f"round {number} closed: {r.new_patterns} new pattern(s)"
        + (f"; codebook v{r.produced_version} written" if r.produced_version else "")
    )
    changes = store.changes(r.produced_version) if r.produced_version else None
    if changes:
        console.print(f"  {changes['recode_units']} unit(s) flagged for re-coding")


def _print_pending(store: ProjectStore) -> None:
    record = current_round(store)
    if record is None or record.phase is not RoundPhase.PROPOSED:
        state = stop_state(store)
        console.print(
            f"stop rule: {state.rounds_without_new}/{state.k} rounds without new patterns"
            + (" - SATURATED" if state.saturated else "")
        )
        return
    left = undecided(store, record.number)
    console.print(
        f"round {record.number}: {len(left)} proposal(s) still undecided; review file: "
        f"{store.review_path(record.number)}"
    )


@saturate_app.command("status")
def status(
    name: NameArg,
    folder: DirOpt = None,
    output_format: FormatOpt = OutputFormat.TABLE,
    figure: Annotated[
        Path | None, typer.Option(help="Write the accumulation curve (.png or .pdf).")
    ] = None,
) -> None:
    """Show rounds, versions, the stop rule and the accumulation curve."""
    require_format(output_format, OutputFormat.TABLE, OutputFormat.JSON, command="saturate status")
    store = ProjectStore.open(_root(name, folder))
    info = project_status(store)
    if figure is not None:
        accumulation_figure(info.accumulation, figure, stop_k=info.stop.k)
    if output_format is OutputFormat.JSON:
        typer.echo(json.dumps(info.model_dump(mode="json"), indent=2))
        return
    _print_status(info)
    if figure is not None:
        console.print(f"accumulation curve: {figure}")


def _heuristic(kind: str) -> str:
    return " (heuristic baseline)" if kind == "heuristic" else ""


def _print_status(info: ProjectStatus) -> None:
    console.print(
        f"project {info.name} ({info.kind}) in {info.root}: codebook {info.codebook}, "
        f"versions {info.versions}; {info.used_units}/{info.pool_size} units used"
    )
    table = Table("round", "phase", "v", "units", "coded", "open", "dup", "decided", "new")
    for r in info.rounds:
        table.add_row(
            str(r.number),
            r.phase.value,
            str(r.codebook_version),
            str(r.units),
            str(r.coded),
            str(r.open_proposals),
            str(r.duplicates),
            str(r.decided),
            "" if r.new_patterns is None else str(r.new_patterns),
        )
    console.print(table)
    for r in info.rounds:
        console.print(
            f"  round {r.number}: judge {r.judge}{_heuristic(r.judge_kind.value)}, proposer "
            f"{r.proposer}{_heuristic(r.proposer_kind.value)}"
        )
    curve = ", ".join(f"r{p.round}: +{p.new_patterns} (={p.cumulative})" for p in info.accumulation)
    console.print(f"accumulation: {curve or 'no closed round yet'}")
    s = info.stop
    console.print(
        f"stop rule: {s.rounds_without_new}/{s.k} rounds without new patterns"
        + (" - SATURATED" if s.saturated else "")
    )
    console.print(
        f"re-coding: {info.recode_units} unit(s) flagged; decisions: {info.decisions} by "
        f"{', '.join(info.reviewers) or 'nobody yet'}"
    )
    shown = ", ".join(f"v{v}: {n}" for v, n in info.unit_versions.items())
    console.print(
        f"coded units per codebook version: {shown or 'none'}; {info.recoded_units} re-coded, "
        f"{info.migrated_units} migrated"
        + (
            f"; {info.stale_units} on an older version (run `failcodes saturate recode "
            f"{info.name}`)"
            if info.stale_units
            else ""
        )
    )


@saturate_app.command("recode")
def recode(
    name: NameArg,
    folder: DirOpt = None,
    judge: JudgeSpecOpt = "offline",
    base_url: BaseUrlOpt = None,
    budget: BudgetOpt = None,
    concurrency: ConcurrencyOpt = 8,
    max_attempts: RetriesOpt = 6,
    cache: CacheOpt = DEFAULT_CACHE,
    no_cache: NoCacheOpt = False,
) -> None:
    """Re-code the flagged units under the newest version; migrate the others without a call.

    Resumable: the judge's journal under recode/vNNNN/judge/ keeps every finished unit.
    """
    from failcodes.judge import JudgeSettings, Limits, RetryPolicy
    from failcodes.judge.spec import JudgeSpec
    from failcodes.recoding import judge_with_engine
    from failcodes.saturation.recode import recode_project

    if judge.startswith("scripted:"):
        raise ConfigError("saturate recode codes through the judge engine: use offline or an LLM")
    store = ProjectStore.open(_root(name, folder))
    heuristic = JudgeSpec.of(judge).heuristic
    settings = JudgeSettings(
        limits=Limits(concurrency=concurrency),
        retry=RetryPolicy(max_attempts=max_attempts),
        budget_usd=budget,
    )
    engine = judge_with_engine(
        judge,
        base_url=base_url,
        cache_path=None if no_cache or heuristic else cache,
        settings=settings,
    )
    result = recode_project(store, engine, coder_name=judge)
    label = " (heuristic baseline)" if heuristic else ""
    if result.path is None:
        console.print(f"nothing to re-code: every coded unit is on v{result.version}")
    else:
        console.print(
            f"v{result.version}: {result.recoded} flagged unit(s) re-coded by {judge}{label}, "
            f"{result.migrated} migrated without a call -> {result.path}"
        )
    info = project_status(store)
    shown = ", ".join(f"v{v}: {n}" for v, n in info.unit_versions.items())
    console.print(f"coded units per version: {shown or 'none'}")


@saturate_app.command("prune")
def prune(
    name: NameArg,
    folder: DirOpt = None,
    min_support: Annotated[
        int | None, typer.Option(min=1, help="Override the project's minimum support.")
    ] = None,
    apply: Annotated[
        Path | None, typer.Option("--apply", help="An edited prune listing to apply.")
    ] = None,
) -> None:
    """List rare leaves for deletion or folding, or apply an edited listing."""
    store = ProjectStore.open(_root(name, folder))
    if apply is not None:
        new = apply_prune_file(store, apply)
        if new is None:
            console.print("the listing asks for no deletion or fold; nothing changed")
        else:
            console.print(f"codebook v{new.version} written:\n{new.changelog}")
        return
    candidates = prune_candidates(store, min_support)
    path = write_prune_file(store, min_support)
    limit = min_support or store.config().min_support
    console.print(f"{len(candidates)} leaf/leaves supported by fewer than {limit} units")
    for c in candidates:
        console.print(f"  {c.leaf_id} ({c.dimension} > {c.parent_subcode}): {c.support} unit(s)")
    console.print(f"prune listing: {path}")
    console.print(f"set `action` per leaf and run `failcodes saturate prune {name} --apply {path}`")
