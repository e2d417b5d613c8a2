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

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from failcodes.cli.main import command_group
from failcodes.cli.output_format import FormatOpt, OutputFormat, require_format
from failcodes.cli.requests import add_command
from failcodes.commands.saturate import (
    DIR_HELP,
    NAME_HELP,
    SaturateInitRequest,
    SaturateRecodeRequest,
    SaturateRoundRequest,
    default_reviewer,
    project_root,
)
from failcodes.errors import ConfigError
from failcodes.saturation.figure import accumulation_figure
from failcodes.saturation.models import RoundPhase
from failcodes.saturation.prune import apply_prune_file, prune_candidates, write_prune_file
from failcodes.saturation.review import write_review_file
from failcodes.saturation.rounds import current_round, record_review_file, stop_state, undecided
from failcodes.saturation.status import ProjectStatus, project_status
from failcodes.saturation.store import ProjectStore
from failcodes.saturation.terminal import review_interactively

saturate_app = command_group("saturate")

console = Console(highlight=False, markup=False, soft_wrap=True)

NameArg = Annotated[str, typer.Argument(help=NAME_HELP)]
DirOpt = Annotated[Path | None, typer.Option("--dir", help=DIR_HELP, show_default=False)]


def _init(request: SaturateInitRequest) -> None:
    for line in request.run().lines():
        console.print(line)


def _round(request: SaturateRoundRequest) -> None:
    done = request.run()
    record = done.record
    label = " (heuristic baseline)" if done.proposer_heuristic else ""
    console.print(
        f"round {record.number}: {len(record.unit_ids)} units coded by {record.judge} with "
        f"codebook v{record.codebook_version}; proposer {record.proposer}{label}: "
        f"{len(done.proposals)} proposal(s), {done.open_after_dedupe} after deduplication"
    )
    for line in done.notes:
        console.print(line, highlight=False)
    if done.auto_accepted_by is not None:
        console.print(
            f"AUTO-ACCEPTED {done.open_after_dedupe} proposal(s) without human review "
            f"(--auto-accept, recorded as requested by {done.auto_accepted_by})"
        )
    if record.phase is RoundPhase.PROPOSED:
        console.print(f"review file: {done.review_file}")
        console.print(
            f"edit it and run `failcodes saturate review {request.name} --file "
            f"{done.review_file}`, or `failcodes saturate review {request.name} --interactive`"
        )
    else:
        console.print(
            f"round {record.number} closed: {record.new_patterns} new pattern(s); codebook "
            f"v{done.codebook_version}"
        )
    console.print(done.stop.line(), highlight=False)


add_command(saturate_app, SaturateInitRequest, _init)
add_command(saturate_app, SaturateRoundRequest, _round)


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
    store = ProjectStore.open(project_root(name, folder))
    if file is not None and interactive:
        raise ConfigError("use either --file or --interactive, not both")
    if file is not None:
        decisions, closed = record_review_file(store, file)
        names = sorted({d.reviewer for d in decisions})
        console.print(f"recorded {len(decisions)} decision(s) by {', '.join(names) or 'nobody'}")
        for r in closed:
            _print_closed(store, r.number)
        _print_pending(store)
        return
    if interactive:
        who = str(reviewer or typer.prompt("Reviewer name", default=default_reviewer() or None))
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
        console.print(state.line(), highlight=False)
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
    store = ProjectStore.open(project_root(name, folder))
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
    from failcodes.recoding import UNSCORED_WORDS

    console.print(
        f"project {info.name} ({info.kind}) in {info.root}: codebook {info.codebook}, "
        f"versions {info.versions}; {info.used_units}/{info.pool_size} units used"
    )
    table = Table("round", "phase", "v", "units", "coded", "open", "dup", "decided", "new")
    for r in info.rounds:
        counts = map(str, (r.units, r.coded, r.open_proposals, r.duplicates, r.decided))
        new = "" if r.new_patterns is None else str(r.new_patterns)
        table.add_row(str(r.number), r.phase.value, str(r.codebook_version), *counts, new)
    console.print(table)
    for r in info.rounds:
        console.print(
            f"  round {r.number}: judge {r.judge}{_heuristic(r.judge_kind.value)}, proposer "
            f"{r.proposer}{_heuristic(r.proposer_kind.value)}"
        )
    curve = ", ".join(f"r{p.round}: +{p.new_patterns} (={p.cumulative})" for p in info.accumulation)
    console.print(f"accumulation: {curve or 'no closed round yet'}")
    s = info.stop
    console.print(s.line(), highlight=False)
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
        + (f"; {info.unscored_units} {UNSCORED_WORDS}" if info.unscored_units else "")
    )


def _recode(request: SaturateRecodeRequest) -> None:
    done = request.run()
    outcome = done.outcome
    label = " (heuristic baseline)" if done.heuristic else ""
    if outcome.path is None:
        console.print(f"nothing to re-code: every coded unit is on v{outcome.version}")
    else:
        console.print(
            f"v{outcome.version}: {outcome.recoded} flagged unit(s) re-coded by {done.judge}"
            f"{label}, {outcome.migrated} migrated without a call -> {outcome.path}"
            + outcome.unscored_note()
        )
    shown = ", ".join(f"v{v}: {n}" for v, n in done.unit_versions.items())
    console.print(f"coded units per version: {shown or 'none'}")


add_command(saturate_app, SaturateRecodeRequest, _recode)


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
    store = ProjectStore.open(project_root(name, folder))
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
