"""Interactive review in a terminal, through two injected functions.

``ask(prompt) -> answer`` and ``say(text)`` are supplied by the CLI (``input`` and a console
print), so this module never prints by itself and a test can drive the real prompts through a
pseudo-terminal or piped stdin. Each decision is recorded the moment it is made, so quitting
half way keeps what was decided; the round closes when its last proposal is decided.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from failcodes.saturation.dedupe import codebook_patterns
from failcodes.saturation.models import Action, Decision, Proposal
from failcodes.saturation.review import example_view, merge_targets, proposer_label
from failcodes.saturation.rounds import (
    current_round,
    record_decisions,
    rename_variant,
    undecided,
)
from failcodes.saturation.store import ProjectStore, SaturationError

Ask = Callable[[str], str]
Say = Callable[[str], None]

CHOICES = "[a]ccept / [m]erge / [r]ename / re[j]ect / [s]kip / [q]uit"
_KEYS = {
    "a": "accept",
    "accept": "accept",
    "m": "merge",
    "merge": "merge",
    "r": "rename",
    "rename": "rename",
    "j": "reject",
    "reject": "reject",
    "s": "skip",
    "skip": "skip",
    "q": "quit",
    "quit": "quit",
}


@dataclass
class TerminalOutcome:
    """What an interactive session did."""

    decisions: list[Decision]
    skipped: int
    quit: bool
    closed_round: bool


def _show(say: Say, p: Proposal, index: int, total: int) -> None:
    where = f"{p.dimension} > {p.parent_subcode or 'NEW SUBCODE'}"
    say(f"\n[{index}/{total}] {p.id}  {where}")
    say(f"  proposer:   {proposer_label(p)}")
    say(f"  name:       {p.name}")
    say(f"  definition: {p.definition}")
    for note in p.notes:
        say(f"  note:       {note}")


def _show_examples(say: Say, store: ProjectStore, p: Proposal) -> None:
    pool = {u.id: u for u in store.pool()}
    if not p.example_unit_ids:
        say("  examples:   (none)")
        return
    say(f"  examples ({len(p.example_unit_ids)}):")
    for uid in p.example_unit_ids:
        if uid not in pool:
            continue
        view = example_view(pool[uid])
        say(f"    - unit {view.pop('unit')}")
        for key, value in view.items():
            say(f"        {key}: {value}")


def _ask_choice(ask: Ask, say: Say) -> str:
    while True:
        answer = ask(f"Decision {CHOICES}: ").strip().lower()
        if answer in _KEYS:
            return _KEYS[answer]
        say(f"  please answer one of: {CHOICES}")


def _ask_target(ask: Ask, say: Say, targets: list[str]) -> str | None:
    say("  merge into:")
    for i, t in enumerate(targets, start=1):
        say(f"    {i}. {t}")
    while True:
        answer = ask("Target number or id (empty to go back): ").strip()
        if not answer:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(targets):
            return targets[int(answer) - 1]
        if answer in targets:
            return answer
        say(f"  not a valid target: {answer!r}")


def review_interactively(store: ProjectStore, reviewer: str, ask: Ask, say: Say) -> TerminalOutcome:
    """Walk the reviewer through the undecided proposals of the round awaiting review."""
    if not reviewer.strip():
        raise SaturationError("a reviewer name is required")
    record = current_round(store)
    if record is None:
        raise SaturationError("no round yet: run `failcodes saturate round` first")
    number = record.number
    pending = undecided(store, number)
    codebook = store.codebook()
    kind = store.config().kind.value
    made: list[Decision] = []
    skipped = 0
    closed = False
    say(f"Round {number}: {len(pending)} proposal(s) to review, reviewer {reviewer}.")
    for index, p in enumerate(pending, start=1):
        _show(say, p, index, len(pending))
        _show_examples(say, store, p)
        decision: Decision | None = None
        while decision is None:
            try:
                choice = _ask_choice(ask, say)
            except EOFError:
                choice = "quit"
            if choice == "quit":
                return TerminalOutcome(made, skipped + len(pending) - index + 1, True, closed)
            if choice == "skip":
                skipped += 1
                break
            target = new_name = new_definition = None
            if choice == "merge":
                target = _ask_target(ask, say, merge_targets(codebook, (kind, p.dimension)))
                if target is None:
                    continue
            if choice == "rename":
                new_name = ask("New name: ").strip()
                if not new_name:
                    say("  a rename needs a name")
                    continue
                new_definition = ask("New definition (empty keeps it): ").strip() or None
            note = None
            if choice == "rename":  # a spelling variant of a code: said, a reason asked
                draft = Decision(
                    proposal_id=p.id,
                    round=number,
                    action=Action.RENAME,
                    reviewer=reviewer,
                    via="terminal",
                    new_name=new_name,
                )
                known = codebook_patterns(codebook, store.config().kind)
                near = rename_variant(p, draft, new_name or "", known)
                if near is not None:
                    say(f"  {near}")
                    note = ask("Why is it another pattern? (empty: choose again): ").strip()
                    if not note:
                        continue
            decision = Decision(
                proposal_id=p.id,
                round=number,
                action=Action(choice),
                reviewer=reviewer,
                via="terminal",
                target=target,
                new_name=new_name,
                new_definition=new_definition,
                note=note,
            )
        if decision is None:
            continue
        closed = bool(record_decisions(store, [decision])) or closed
        made.append(decision)
        say(f"  recorded: {decision.action.value} by {reviewer}")
    return TerminalOutcome(made, skipped, False, closed)
