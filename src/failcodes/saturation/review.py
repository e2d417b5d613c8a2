"""The review file: a YAML file a person edits and hands back, and the reading of it.

:func:`render_review_file` lists a round's open proposals (with example units, valid merge
targets and any decision already recorded) and the duplicates that deduplication filtered
out; :func:`parse_review_file` turns an edited file back into :class:`Decision` records
(``via="file"``) naming the reviewer written in it. Errors name the file and the line of the
offending proposal.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from failcodes import yamlio
from failcodes.codebook import Codebook
from failcodes.fileio import atomic_write_text
from failcodes.saturation.models import Action, Decision, Proposal, ProposalStatus
from failcodes.saturation.store import SaturationError
from failcodes.spelling import unseen_note
from failcodes.units import Unit, UnitKind

if TYPE_CHECKING:
    from failcodes.saturation.store import ProjectStore

SNIPPET = 240


def snippet(text: str | None, limit: int = SNIPPET) -> str:
    """One-line excerpt of ``text`` at most ``limit`` characters long."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def example_view(unit: Unit) -> dict[str, str]:
    """What a reviewer sees of an example unit."""
    view = {"unit": unit.id, "claim": snippet(unit.claim)}
    if unit.kind is UnitKind.RETRIEVAL and unit.passages:
        view["passage"] = snippet(unit.passages[0].text)
    if unit.reasoning:
        view["reasoning"] = snippet(unit.reasoning)
    if unit.verdict is not None:
        view["verdict"] = unit.verdict.value
    systems = sorted({p.system for p in unit.provenance})
    if systems:
        view["systems"] = ", ".join(systems)
    return view


def proposer_label(p: Proposal) -> str:
    """The proposer, labelled a heuristic baseline when it is one."""
    if p.proposer_kind.value == "heuristic":
        return f"{p.proposer} (heuristic baseline, not an LLM)"
    return p.proposer


HEADER = """\
# failcodes saturation review: project {project}, round {round}, codebook version {version}
#
# For each proposal under `proposals`, set `decision` to one of:
#   accept  - add it as proposed (a leaf under parent_subcode, or a new subcode)
#   merge   - it is already covered: set `target` to one of its merge_targets
#   rename  - add it under `new_name` (and optionally `new_definition`)
#   reject  - not a pattern worth a code
# Leave `decision` empty to decide later. Write your name in `reviewer`, save, then run:
#   failcodes saturate review {project} --file {path}
# `duplicates` lists what deduplication filtered out (for information; not decided here).
"""


def latest_decisions(store: ProjectStore) -> dict[str, Decision]:
    """The last decision recorded for each proposal id."""
    return {d.proposal_id: d for d in store.decisions()}


def merge_targets(codebook: Codebook, kind_dimension: tuple[str, str]) -> list[str]:
    """Valid merge targets in one dimension: ``subcode:ID`` and ``leaf:ID``."""
    kind, dimension = kind_dimension
    part = next(p for p in codebook.parts if p.id.value == kind)
    dim = part.dimension(dimension)
    out = []
    for sub in dim.subcodes:
        out.append(f"subcode:{sub.id}")
        out.extend(f"leaf:{leaf.id}" for leaf in sub.leaves)
    return out


def render_review_file(store: ProjectStore, number: int) -> str:
    """The review file text for round ``number``."""
    config = store.config()
    record = store.round(number)
    codebook = store.codebook()
    pool = {u.id: u for u in store.pool()}
    latest = latest_decisions(store)
    items: list[dict[str, Any]] = []
    duplicates: list[dict[str, Any]] = []
    for p in store.proposals(number):
        if p.status is ProposalStatus.DUPLICATE:
            duplicates.append(
                {
                    "id": p.id,
                    "name": p.name,
                    "duplicate_of": p.duplicate_of,
                    "similarity": p.similarity,
                }
            )
            continue
        item: dict[str, Any] = {
            "id": p.id,
            "dimension": p.dimension,
            "parent_subcode": p.parent_subcode or "new subcode",
            "name": p.name,
            "definition": p.definition,
            "proposed_id": p.leaf_id,
            "proposer": proposer_label(p),
            "examples": [example_view(pool[u]) for u in p.example_unit_ids if u in pool],
            "merge_targets": merge_targets(codebook, (config.kind.value, p.dimension)),
        }
        if p.notes:  # what failcodes changed in the proposer's answer
            item["proposer_notes"] = list(p.notes)
        done = latest.get(p.id)
        if done is not None:
            item["recorded"] = (
                f"{done.action.value} by {done.reviewer} at {done.decided_at:%Y-%m-%d %H:%M} UTC"
                " (a new decision here replaces it)"
            )
        item.update(decision="", target="", new_name="", new_definition="", note="")
        items.append(item)
    body = {
        "project": config.name,
        "round": number,
        "codebook_version": record.codebook_version,
        "reviewer": "",
        "proposals": items,
        "duplicates": duplicates,
    }
    path = store.review_path(number)
    header = HEADER.format(
        project=config.name, round=number, version=record.codebook_version, path=path
    )
    return header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100)


def write_review_file(store: ProjectStore, number: int) -> Path:
    """Write (or refresh) the round's review file; returns its path."""
    path = store.review_path(number)
    atomic_write_text(path, render_review_file(store, number), fsync=True)
    return path


def _item_lines(text: str) -> list[int]:
    """1-based line of each item of the top-level ``proposals`` sequence."""
    node = yamlio.compose(text)
    if not isinstance(node, yaml.MappingNode):
        return []
    for key, value in node.value:
        if key.value == "proposals" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def proposal_lines(path: Path) -> dict[str, int]:
    """The 1-based line of each proposal of a review file, by id (an unreadable file: none)."""
    try:
        text = yamlio.read_yaml_text(path)
        data = yamlio.safe_load(text)
        lines = _item_lines(text)
    except (OSError, yaml.YAMLError):
        return {}
    items = data.get("proposals") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return {}
    return {
        _text(item, "id"): line
        for item, line in zip(items, lines, strict=False)
        if isinstance(item, dict)
    }


def _text(item: dict[str, Any], key: str) -> str:
    value = item.get(key)
    return "" if value is None else str(value).strip()


def parse_review_file(
    path: Path, *, project: str | None = None, rounds: Sequence[int] | None = None
) -> list[Decision]:
    """Decisions written in an edited review file (undecided items are skipped).

    With ``project``, the file's ``project:`` must name it (proposal ids such as
    ``r0001-p01`` repeat across projects, so a file of another project would otherwise
    decide this one's proposals); with ``rounds``, its ``round:`` must be one of them.
    """
    path = Path(path)
    try:
        text = yamlio.read_yaml_text(path)
        data = yamlio.safe_load(text)
        lines = _item_lines(text)
    except FileNotFoundError as exc:
        raise SaturationError("review file not found", path=path) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise SaturationError(
            f"not valid YAML: {getattr(exc, 'problem', exc)}",
            path=path,
            line=mark.line + 1 if mark is not None else None,
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("proposals"), list):
        raise SaturationError("expected a mapping with a `proposals` list", path=path)
    if project is not None and _text(data, "project") != project:
        raise SaturationError(
            f"this review file is for project {_text(data, 'project') or '(none)'!r}, "
            f"not {project!r}; review it in its own project",
            path=path,
            field="project",
        )
    try:
        number = int(data["round"])
    except (KeyError, TypeError, ValueError):
        raise SaturationError("missing or invalid `round`", path=path, field="round") from None
    if rounds is not None and number not in rounds:
        shown = ", ".join(map(str, rounds)) or "none yet"
        raise SaturationError(
            f"round {number} is not a round of this project (rounds: {shown})",
            path=path,
            field="round",
        )
    reviewer = _text(data, "reviewer")
    stamp = datetime.now(UTC)
    out: list[Decision] = []
    valid = ", ".join(a.value for a in Action)
    for index, item in enumerate(data["proposals"]):
        line = lines[index] if index < len(lines) else None
        if not isinstance(item, dict) or not _text(item, "id"):
            raise SaturationError("proposal item without an `id`", path=path, line=line)
        raw = _text(item, "decision").lower()
        if not raw:
            continue
        try:
            action = Action(raw)
        except ValueError:
            raise SaturationError(
                f"unknown decision {raw!r}{unseen_note(raw)} (valid: {valid})",
                path=path,
                line=line,
                field="decision",
            ) from None
        if not reviewer:
            raise SaturationError(
                "decisions need a reviewer: write your name in `reviewer`",
                path=path,
                field="reviewer",
            )
        target = _text(item, "target") or None
        if action is Action.MERGE and target is None:
            raise SaturationError(
                "merge needs a `target` (one of merge_targets)",
                path=path,
                line=line,
                field="target",
            )
        new_name = _text(item, "new_name") or None
        if action is Action.RENAME and new_name is None:
            raise SaturationError(
                "rename needs a `new_name`", path=path, line=line, field="new_name"
            )
        out.append(
            Decision(
                proposal_id=_text(item, "id"),
                round=number,
                action=action,
                reviewer=reviewer,
                decided_at=stamp,
                via="file",
                target=target if action is Action.MERGE else None,
                new_name=new_name if action is Action.RENAME else None,
                new_definition=(_text(item, "new_definition") or None)
                if action is Action.RENAME
                else None,
                note=_text(item, "note") or None,
            )
        )
    return out


def auto_accept(proposals: Sequence[Proposal], reviewer: str) -> list[Decision]:
    """Accept every proposal, labelled ``via="auto-accept"``.

    An explicit opt-in, not a human review: the reviewer string records who asked for it.
    """
    return [
        Decision(
            proposal_id=p.id,
            round=p.round,
            action=Action.ACCEPT,
            reviewer=reviewer,
            via="auto-accept",
            note="accepted without human review (--auto-accept)",
        )
        for p in proposals
    ]
