"""The saturation loop: draw, code, propose, deduplicate; record decisions; close rounds.

Every step reads and writes the project folder (:class:`~.store.ProjectStore`) and nothing
else, so the loop can stop at any moment and be continued from the files alone:

* a round is created (``round.json``, phase ``drawn``) before any coding;
* each coded unit is journaled at once; a resumed round codes only the units missing from the
  journal;
* proposals and the review file are written together (phase ``proposed``);
* decisions are appended as they are made; once every open proposal has one, the round is
  closed, the next codebook version (if any proposal was accepted) is written to the lineage,
  touched units are flagged for re-coding, and the stop rule is updated.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from failcodes import codebook as codebook_module
from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.codebook import Codebook
from failcodes.runlock import folder_lock, reading_lock
from failcodes.saturation.changes import Change, ChangeOp, migration_map, next_version, recode_flags
from failcodes.saturation.coders import Coder
from failcodes.saturation.dedupe import (
    KnownPattern,
    close_names,
    codebook_patterns,
    deduplicate,
    normalise_name,
    slug,
)
from failcodes.saturation.models import (
    ADDING_ACTIONS,
    AccumulationPoint,
    Action,
    Decision,
    ProjectConfig,
    Proposal,
    ProposalDraft,
    ProposalStatus,
    RoundPhase,
    RoundRecord,
    StopState,
)
from failcodes.saturation.proposers import Proposer
from failcodes.saturation.review import (
    latest_decisions,
    merge_targets,
    parse_review_file,
    proposal_lines,
    write_review_file,
)
from failcodes.saturation.store import ProjectStore, SaturationError
from failcodes.units import Unit


def init_project(
    root: Path, config: ProjectConfig, codebook: Codebook, units: Sequence[Unit]
) -> ProjectStore:
    """Create a project folder with its seed codebook and unit pool."""
    try:
        codebook.part(config.kind)
    except KeyError:
        raise SaturationError(f"codebook {codebook.name} has no {config.kind.value} part") from None
    return ProjectStore.create(root, config, codebook, units)


# ---------------------------------------------------------------------------------------
# drawing
# ---------------------------------------------------------------------------------------
def stratum(unit: Unit) -> str:
    """The system a unit is drawn under: the alphabetically first provenance system."""
    systems = sorted({p.system for p in unit.provenance})
    return systems[0] if systems else "(no system)"


def draw_batch(
    pool: Sequence[Unit],
    used: set[str],
    size: int,
    *,
    seed: int,
    round_number: int,
    stratify_by_system: bool = False,
) -> list[str]:
    """Choose up to ``size`` unused unit ids, reproducibly from (seed, round number).

    Unstratified: a simple random sample of the unused units (sorted by id first, so the pool's
    file order does not matter). Stratified: each system (see :func:`stratum`) gets a share of
    the batch proportional to its unused units (largest remainders, ties by system name), then
    a simple random sample within each system.
    """
    rng = random.Random(f"{seed}:{round_number}")
    available = sorted((u for u in pool if u.id not in used), key=lambda u: u.id)
    size = min(size, len(available))
    if not stratify_by_system:
        return [u.id for u in rng.sample(available, size)]
    groups: dict[str, list[Unit]] = defaultdict(list)
    for unit in available:
        groups[stratum(unit)].append(unit)
    total = len(available)
    quotas = {s: size * len(g) / total for s, g in groups.items()}
    counts = {s: int(q) for s, q in quotas.items()}
    short = size - sum(counts.values())
    for s in sorted(quotas, key=lambda s: (-(quotas[s] - counts[s]), s))[:short]:
        counts[s] += 1
    out: list[str] = []
    for s in sorted(groups):
        out.extend(u.id for u in rng.sample(groups[s], counts[s]))
    return out


# ---------------------------------------------------------------------------------------
# rounds
# ---------------------------------------------------------------------------------------
def _advance(
    store: ProjectStore, record: RoundRecord, phase: RoundPhase, **extra: object
) -> RoundRecord:
    stamp = {
        RoundPhase.CODED: "coded_at",
        RoundPhase.PROPOSED: "proposed_at",
        RoundPhase.CLOSED: "closed_at",
    }
    update: dict[str, object] = {"phase": phase, **extra}
    if phase in stamp:
        update[stamp[phase]] = datetime.now(UTC)
    new = record.model_copy(update=update)
    store.write_round(new)
    return new


def current_round(store: ProjectStore) -> RoundRecord | None:
    """The newest round, or None before the first."""
    numbers = store.round_numbers()
    return store.round(numbers[-1]) if numbers else None


def start_round(
    store: ProjectStore, coder: Coder, proposer: Proposer, *, force: bool = False
) -> RoundRecord:
    """Create the next round (phase ``drawn``) or return the unfinished one to resume.

    Refuses when the newest round awaits review, when the stop rule says the codebook is
    saturated (unless ``force``), or when the pool has no unused unit.
    """
    config = store.config()
    last = current_round(store)
    if last is not None and last.phase is RoundPhase.PROPOSED:
        raise SaturationError(
            f"round {last.number} awaits review: run `failcodes saturate review` first",
            path=store.review_path(last.number),
        )
    if last is not None and last.phase is not RoundPhase.CLOSED:
        return _resumable(store, last, coder, proposer)  # interrupted: resume it
    state = stop_state(store)
    if state.saturated and not force:
        raise SaturationError(
            f"saturated: {state.rounds_without_new} rounds in a row brought no new pattern "
            f"(K={state.k}); use --force to run another round"
        )
    used = {uid for r in store.rounds() for uid in r.unit_ids}
    number = (last.number + 1) if last else 1
    batch = draw_batch(
        store.pool(),
        used,
        config.batch_size,
        seed=config.seed,
        round_number=number,
        stratify_by_system=config.stratify_by_system,
    )
    if not batch:
        raise SaturationError("every unit of the pool has been used; add units or stop")
    record = RoundRecord(
        number=number,
        codebook_version=store.codebook().version,
        unit_ids=tuple(batch),
        seed=config.seed,
        judge=coder.name,
        judge_kind=coder.kind,
        proposer=proposer.name,
        proposer_kind=proposer.kind,
    )
    store.write_round(record)
    return record


def _resumable(
    store: ProjectStore, record: RoundRecord, coder: Coder, proposer: Proposer
) -> RoundRecord:
    """The interrupted round, if the coder and proposer asked for fit what it already did."""
    started = bool(store.round_annotations(record.number))
    if record.judge != coder.name:
        if started:
            raise SaturationError(
                f"round {record.number} was started with judge {record.judge!r}; resume it "
                f"with --judge {record.judge}"
            )
        record = record.model_copy(update={"judge": coder.name, "judge_kind": coder.kind})
    if record.proposer != proposer.name:  # proposals are not made yet (phase drawn/coded)
        record = record.model_copy(
            update={"proposer": proposer.name, "proposer_kind": proposer.kind}
        )
    store.write_round(record)
    return record


#: Who :func:`run_round`'s ``extra`` drafts (reviewers' free-text proposals) are by.
REVIEWERS = "reviewers (free-text proposals in their reviews)"


def run_round(
    store: ProjectStore,
    coder: Coder,
    proposer: Proposer,
    *,
    force: bool = False,
    extra: Sequence[ProposalDraft] = (),
) -> RoundRecord:
    """Run (or resume) one round up to review: code, propose, deduplicate, write review file.

    ``extra`` drafts (reviewers' proposals, :func:`~.proposers.reviewer_drafts`) follow the
    proposer's, by :data:`REVIEWERS` (human). A round with no open proposal after
    deduplication needs no review and is closed at once (it counts as a round without new
    patterns). Holds the project's write lock
    (:func:`failcodes.runlock.folder_lock`): a second writer exits at once, before any call.
    """
    with folder_lock(store.root, what="saturation project"):
        return _run_round(store, coder, proposer, force=force, extra=extra)


def _run_round(
    store: ProjectStore,
    coder: Coder,
    proposer: Proposer,
    *,
    force: bool = False,
    extra: Sequence[ProposalDraft] = (),
) -> RoundRecord:
    record = start_round(store, coder, proposer, force=force)
    codebook = store.codebook(record.codebook_version)
    by_id = {u.id: u for u in store.pool()}
    units = [by_id[i] for i in record.unit_ids]
    if record.phase is RoundPhase.DRAWN:
        done = {a.unit_id for a in store.round_annotations(record.number)}
        todo = [u for u in units if u.id not in done]
        for annotation in coder.code(todo, codebook, workdir=store.round_dir(record.number)):
            if annotation.unit_id in done:
                continue
            store.append_annotation(record.number, annotation)
            done.add(annotation.unit_id)
        missing = [u.id for u in units if u.id not in done]
        if missing:
            raise SaturationError(
                f"the coder returned no annotation for {len(missing)} unit(s), e.g. {missing[0]}"
            )
        record = _advance(store, record, RoundPhase.CODED)
    if record.phase is RoundPhase.CODED:
        annotations = store.round_annotations(record.number)
        drafts = proposer.propose(units, annotations, codebook, round_number=record.number)
        proposals = deduplicate(
            [*drafts, *extra],
            codebook=codebook,
            kind=store.config().kind,
            round_number=record.number,
            proposer=proposer.name,
            proposer_kind=proposer.kind,
            threshold=store.config().similarity_threshold,
            prior=prior_patterns(store),
        )
        by_reviewers = {"proposer": REVIEWERS, "proposer_kind": CoderKind.HUMAN}
        proposals = [
            p.model_copy(update=by_reviewers) if i >= len(drafts) else p
            for i, p in enumerate(proposals)
        ]
        store.write_proposals(record.number, proposals)
        write_review_file(store, record.number)
        record = _advance(store, record, RoundPhase.PROPOSED)
    if record.phase is RoundPhase.PROPOSED and not open_proposals(store, record.number):
        record = close_round(store, record.number)
    return record


def prior_patterns(store: ProjectStore) -> list[KnownPattern]:
    """Proposals of earlier rounds that reviewers rejected or merged (not new any more)."""
    latest = latest_decisions(store)
    out = []
    for number in store.round_numbers():
        for p in store.proposals(number):
            d = latest.get(p.id)
            if d is not None and d.action in (Action.REJECT, Action.MERGE):
                out.append(KnownPattern(p.id, p.name, p.definition, p.dimension))
    return out


def open_proposals(store: ProjectStore, number: int) -> list[Proposal]:
    """Proposals of a round that go to review."""
    return [p for p in store.proposals(number) if p.status is ProposalStatus.OPEN]


def undecided(store: ProjectStore, number: int) -> list[Proposal]:
    """Open proposals of a round with no decision yet."""
    latest = latest_decisions(store)
    return [p for p in open_proposals(store, number) if p.id not in latest]


class DecisionError(SaturationError):
    """A decision that cannot apply to its proposal; the message starts with the proposal's id.

    :attr:`proposal_id` and :attr:`field` (the decision's field at fault) let a review file's
    reader name the line and the field.
    """

    def __init__(self, proposal_id: str, message: str, *, field: str | None = None) -> None:
        super().__init__(f"{proposal_id}: {message}")
        self.proposal_id = proposal_id
        self.field = field


def validate_decision(store: ProjectStore, decision: Decision) -> None:
    """Raise DecisionError if a decision cannot apply to its proposal."""
    pid = decision.proposal_id
    try:
        record = store.round(decision.round)
    except SaturationError:
        raise DecisionError(pid, f"no round {decision.round}", field="round") from None
    if record.phase is not RoundPhase.PROPOSED:
        raise DecisionError(
            pid, f"round {record.number} is {record.phase.value}, not awaiting review"
        )
    proposal = next((p for p in open_proposals(store, record.number) if p.id == pid), None)
    if proposal is None:
        raise DecisionError(
            pid, f"no open proposal with this id in round {record.number}", field="id"
        )
    if decision.action is Action.MERGE:
        targets = merge_targets(store.codebook(), (store.config().kind.value, proposal.dimension))
        if decision.target not in targets:
            raise DecisionError(
                pid,
                f"merge target {decision.target!r} is not a subcode or leaf of "
                f"{proposal.dimension} (valid: {', '.join(targets)})",
                field="target",
            )
    if decision.action is Action.RENAME and not (decision.new_name or "").strip():
        raise DecisionError(pid, "rename needs a new name", field="new_name")


#: Why decisions are not recorded while another process writes the project.
_BUSY = (
    "this saturation project is in use by {holder}; wait for it to finish, then record the "
    "decisions"
)


def record_decisions(store: ProjectStore, decisions: Sequence[Decision]) -> list[RoundRecord]:
    """Validate and append decisions; close every round whose proposals are all decided.

    All decisions are validated before any is written: first under the shared lock, so a
    refused decision leaves the project as it was (its lock file too), then again under the
    project's write lock, which recording holds. Returns the rounds closed.
    """
    with reading_lock(store.root, busy=_BUSY):
        _validate_decisions(store, decisions)
    with folder_lock(store.root, what="saturation project"):
        return _record_decisions(store, decisions)


def record_review_file(store: ProjectStore, path: Path) -> tuple[list[Decision], list[RoundRecord]]:
    """Record the decisions of an edited review file: ``(decisions, rounds closed)``.

    A decision refused names the file, its proposal's line and the field at fault.
    """
    decisions = parse_review_file(path, project=store.config().name, rounds=store.round_numbers())
    try:
        return decisions, record_decisions(store, decisions)
    except DecisionError as exc:
        line = proposal_lines(path).get(exc.proposal_id)
        raise SaturationError(exc.reason, path=path, line=line, field=exc.field) from None


def _validate_decisions(store: ProjectStore, decisions: Sequence[Decision]) -> None:
    for d in decisions:
        validate_decision(store, d)
    latest = {**latest_decisions(store), **{d.proposal_id: d for d in decisions}}
    for number in sorted({d.round for d in decisions}):
        changes_for_round(store, number, latest)  # a name clash refuses before any is written


def _record_decisions(store: ProjectStore, decisions: Sequence[Decision]) -> list[RoundRecord]:
    _validate_decisions(store, decisions)  # again: another writer may have come between
    store.append_decisions(list(decisions))
    closed = []
    for number in sorted({d.round for d in decisions}):
        if not undecided(store, number):
            closed.append(close_round(store, number))
    return closed


def changes_for_round(
    store: ProjectStore, number: int, latest: dict[str, Decision] | None = None
) -> list[Change]:
    """The codebook edits the round's accepted and renamed proposals make.

    A name equal (normalised, as deduplication compares names) to a code of the codebook's
    part or to another addition of the round is refused: it would add the same pattern twice
    and count it as new in the stop rule and the accumulation curve.
    """
    latest = latest_decisions(store) if latest is None else latest
    codebook = store.codebook()
    taken = set(codebook.codes())
    known = {}
    for pattern in codebook_patterns(codebook, store.config().kind):
        known[normalise_name(pattern.ref.split(":", 1)[1])] = pattern
        known[normalise_name(pattern.name)] = pattern
    added: dict[str, str] = {}
    out = []
    for p in open_proposals(store, number):
        d = latest.get(p.id)
        if d is None or d.action not in ADDING_ACTIONS:
            continue
        name = p.name
        definition = p.definition
        if d.action is Action.RENAME:
            name = (d.new_name or name).strip()
            definition = (d.new_definition or definition).strip()
        _refuse_known_name(p, d, name, known, added)
        base = slug(name) if d.action is Action.RENAME else p.leaf_id
        new_id, n = base, 2
        while new_id in taken:
            new_id, n = f"{base}_{n}", n + 1
        taken.add(new_id)
        common = {
            "dimension": p.dimension,
            "label": name,
            "definition": definition,
            "source": p.id,
            "decided_by": d.reviewer,
        }
        if p.parent_subcode is None:
            out.append(Change(op=ChangeOp.ADD_SUBCODE, subcode=new_id, **common))
        else:
            out.append(
                Change(op=ChangeOp.ADD_LEAF, subcode=p.parent_subcode, leaf=new_id, **common)
            )
    return out


def _refuse_known_name(
    proposal: Proposal,
    decision: Decision,
    name: str,
    known: dict[str, KnownPattern],
    added: dict[str, str],
) -> None:
    """Refuse an addition named like a code of the codebook or another addition of its round."""
    norm = normalise_name(name)
    renamed = decision.action is Action.RENAME
    verb, field = ("renamed to", "new_name") if renamed else ("accepted as", "decision")
    match = known.get(norm)
    if match is not None:
        hint = (
            f"decide merge with target {match.ref}"
            if match.dimension == proposal.dimension
            else "give it another name"
        )
        raise DecisionError(
            proposal.id,
            f"{verb} {name!r}, the name of {match.ref} in {match.dimension} already: it would "
            f"add that pattern again and count it as new; {hint}",
            field=field,
        )
    if norm in added:
        raise DecisionError(
            proposal.id,
            f"{verb} {name!r}, as {added[norm]} is in this round: one pattern would be added "
            "twice; merge one into the other or give them different names",
            field=field,
        )
    added[norm] = proposal.id
    # a name the reviewer typed a few edits from a code ('Pediatric population' beside leaf
    # 'Paediatric population'): added and counted as a new pattern without a word (the
    # proposer's names are said in proposer_notes; a rename was not); a `note` saying why it
    # is another pattern lets it through (hypertension / hypotension are 2 edits apart too)
    near = rename_variant(proposal, decision, name, known.values())
    if near is not None:
        raise DecisionError(proposal.id, near, field="new_name")


def rename_variant(
    proposal: Proposal, decision: Decision, name: str, known: Iterable[KnownPattern]
) -> str | None:
    """Why a rename to a spelling variant of a code is refused (None: none is refused).

    None too when the decision's ``note`` says why it is another pattern.
    """
    if decision.action is not Action.RENAME or (decision.note or "").strip():
        return None
    codes = {k.ref: k for k in known if k.ref.startswith(("leaf:", "subcode:"))}
    hits = close_names(name, ((k.ref, k.name) for k in codes.values()))
    if not hits:
        return None
    ref, other, n = hits[0]
    how = (
        f"decide merge with target {ref} if it is the same pattern"
        if codes[ref].dimension == proposal.dimension
        else f"reject it if it is the same pattern (dimension {codes[ref].dimension})"
    )
    return (
        f"renamed to {name!r}, close to existing code {ref.split(':', 1)[1]!r} ({other!r}) "
        f"(edit distance {n}): a spelling variant would be added as a new code and counted as "
        f"a new pattern; {how}, or say in `note` why it is another pattern"
    )


def latest_annotations(store: ProjectStore) -> dict[str, Annotation]:
    """The newest annotation per unit across all rounds."""
    return {ann.unit_id: ann for ann in store.all_annotations()}


def apply_changes(
    store: ProjectStore, changes: Sequence[Change], title: str, *, source: str
) -> Codebook:
    """Write the next version (with changes record) and flag touched units for re-coding.

    The changes record holds the saturation changes (who decided what), the codebook module's
    diff and migration map, and how many units were flagged. With ``export_dir`` set in the
    project, the version is first saved there as taxonomy YAML (versions there are immutable).
    """
    config = store.config()
    current = store.codebook()
    try:
        new = next_version(current, config.kind, changes, title)
    except KeyError as exc:
        raise SaturationError(f"cannot apply changes: {exc.args[0]}") from None
    if config.export_dir is not None:
        codebook_module.save(new, Path(config.export_dir))
    flags = recode_flags(latest_annotations(store).values(), changes, new.version)
    code_diff = codebook_module.diff(current, new)
    record = {
        "version": new.version,
        "parent_version": current.version,
        "parent_hash": current.hash,
        "hash": new.hash,
        "source": source,
        "changelog": new.changelog,
        "changes": [c.model_dump(mode="json") for c in changes],
        "migration": migration_map(changes),
        "diff": [str(c) for c in code_diff.changes],
        "migration_map": codebook_module.migration_map(current, new).model_dump(mode="json"),
        "recode_units": len({f.unit_id for f in flags}),
    }
    store.write_codebook(new, record)
    store.append_recode_flags(flags)
    return new


def close_round(store: ProjectStore, number: int) -> RoundRecord:
    """Close a fully decided round: new version if anything was accepted; stop rule update."""
    record = store.round(number)
    if record.phase is RoundPhase.CLOSED:
        return record
    if record.phase is not RoundPhase.PROPOSED:
        raise SaturationError(f"round {number} is {record.phase.value}; it cannot be closed")
    left = undecided(store, number)
    if left:
        raise SaturationError(f"round {number} has {len(left)} undecided proposal(s)")
    changes = changes_for_round(store, number)
    produced = None
    if changes:
        new = apply_changes(store, changes, f"Saturation round {number}", source=f"round {number}")
        produced = new.version
    closed = _advance(
        store, record, RoundPhase.CLOSED, new_patterns=len(changes), produced_version=produced
    )
    store.write_stop_state(stop_state(store))
    return closed


# ---------------------------------------------------------------------------------------
# stop rule and accumulation curve
# ---------------------------------------------------------------------------------------
def stop_state(store: ProjectStore) -> StopState:
    """K consecutive closed rounds with no accepted new pattern means saturated.

    A round counts only when the judge scored at least half the batch size of its units: a
    judge whose every answer was invalid (all unscored) gave the proposer nothing to look at,
    and three such rounds read "saturated" (exit 0). Such a thin round neither counts nor
    breaks the run of rounds without new patterns; :attr:`StopState.thin_rounds` names it.
    """
    config = store.config()
    need = (config.batch_size + 1) // 2
    closed = [r for r in store.rounds() if r.phase is RoundPhase.CLOSED]
    trailing = 0
    thin: list[int] = []
    for r in reversed(closed):
        if r.new_patterns:
            break
        scored = sum(a.status is Status.SCORED for a in store.round_annotations(r.number))
        if scored < need:
            thin.append(r.number)
            continue
        trailing += 1
    return StopState(
        k=config.stop_k,
        closed_rounds=len(closed),
        rounds_without_new=trailing,
        saturated=trailing >= config.stop_k,
        thin_rounds=tuple(sorted(thin)),
        min_scored=need,
    )


def accumulation(store: ProjectStore) -> list[AccumulationPoint]:
    """New patterns per closed round and cumulatively, with the version after each round."""
    out = []
    total = 0
    for r in store.rounds():
        if r.phase is not RoundPhase.CLOSED:
            continue
        total += r.new_patterns or 0
        # the version it made, else the one it was coded under: carrying the last round's
        # version on missed a version `prune --apply` made between rounds (a round coded
        # under v4 shown as v3)
        version = r.produced_version or r.codebook_version
        out.append(
            AccumulationPoint(
                round=r.number,
                new_patterns=r.new_patterns or 0,
                cumulative=total,
                codebook_version=version,
            )
        )
    return out
