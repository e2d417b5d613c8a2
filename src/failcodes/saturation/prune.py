"""Rare-leaf pruning: list leaves with too little support for a person to delete or fold.

*Support* of a leaf is the number of distinct units that show it anywhere in the project:
units whose newest annotation carries the leaf, example units of the proposal accepted as the
leaf, and example units of later proposals merged into it or deduplicated against it.

A listing (``prune/prune-NNNN.yaml``) names every leaf with support below the project's
``min_support``; a person sets ``action`` per leaf (keep, delete, fold), writes their name in
``reviewer`` and hands it back; :func:`apply_prune_file` makes one new codebook version of the
deletions and folds (a fold turns the leaf's definition into an inclusion rule of its parent).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from failcodes import yamlio
from failcodes.codebook import Codebook
from failcodes.fileio import atomic_write_text
from failcodes.saturation.changes import Change, ChangeOp
from failcodes.saturation.models import Action, PruneAction, PruneCandidate, RoundPhase
from failcodes.saturation.review import latest_decisions
from failcodes.saturation.rounds import apply_changes, current_round, latest_annotations
from failcodes.saturation.store import ProjectStore, SaturationError


def leaf_support(store: ProjectStore) -> dict[str, set[str]]:
    """Distinct supporting unit ids per leaf id (see module docstring)."""
    support: dict[str, set[str]] = defaultdict(set)
    for ann in latest_annotations(store).values():
        for ids in ann.leaves.values():
            for leaf_id in ids:
                support[leaf_id].add(ann.unit_id)
    created: dict[str, str] = {}  # proposal id -> leaf id
    for version in store.versions():
        record = store.changes(version) or {}
        for change in record.get("changes", []):
            if change.get("op") == ChangeOp.ADD_LEAF.value and change.get("leaf"):
                created[change["source"]] = change["leaf"]
    merged: dict[str, str] = {}
    # the decision that counts (the last per proposal): a merge a reviewer changed to reject
    # before the round closed added its examples to the leaf's support all the same
    for d in latest_decisions(store).values():
        if d.action is Action.MERGE and d.target and d.target.startswith("leaf:"):
            merged[d.proposal_id] = d.target.removeprefix("leaf:")
    for number in store.round_numbers():
        for p in store.proposals(number):
            leaf: str | None = created.get(p.id) or merged.get(p.id)
            if leaf is None and p.duplicate_of and p.duplicate_of.startswith("leaf:"):
                leaf = p.duplicate_of.removeprefix("leaf:")
            if leaf is not None:
                support[leaf].update(p.example_unit_ids)
    return dict(support)


def prune_candidates(store: ProjectStore, min_support: int | None = None) -> list[PruneCandidate]:
    """Leaves of the current codebook part supported by fewer than ``min_support`` units."""
    config = store.config()
    limit = config.min_support if min_support is None else min_support
    codebook = store.codebook()
    support = leaf_support(store)
    out = []
    for dim in codebook.part(config.kind).dimensions:
        for sub in dim.subcodes:
            for leaf in sub.leaves:
                units = support.get(leaf.id, set())
                if len(units) < limit:
                    out.append(
                        PruneCandidate(
                            leaf_id=leaf.id,
                            dimension=dim.id,
                            parent_subcode=sub.id,
                            label=leaf.label,
                            support=len(units),
                            unit_ids=tuple(sorted(units)),
                        )
                    )
    return out


HEADER = """\
# failcodes rare-leaf pruning: project {project}, codebook version {version}
# Leaves supported by fewer than {limit} units. For each, set `action` to:
#   keep    - leave it in the codebook
#   delete  - remove the leaf (units keep its parent subcode)
#   fold    - remove the leaf and add its definition as an inclusion rule of the parent
# Write your name in `reviewer`, save, then run:
#   failcodes saturate prune {project} --apply {path}
"""


def write_prune_file(store: ProjectStore, min_support: int | None = None) -> Path:
    """Write a new listing under prune/ and return its path."""
    config = store.config()
    limit = config.min_support if min_support is None else min_support
    codebook = store.codebook()
    folder = store.root / "prune"
    number = len(list(folder.glob("prune-*.yaml"))) + 1 if folder.exists() else 1
    path = folder / f"prune-{number:04d}.yaml"
    body = {
        "project": config.name,
        "codebook_version": codebook.version,
        "min_support": limit,
        "reviewer": "",
        "leaves": [
            {**c.model_dump(mode="json"), "unit_ids": list(c.unit_ids), "action": ""}
            for c in prune_candidates(store, limit)
        ],
    }
    header = HEADER.format(project=config.name, version=codebook.version, limit=limit, path=path)
    text = header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True)
    atomic_write_text(path, text, fsync=True)
    return path


def _load(path: Path) -> dict[str, Any]:
    try:
        data = yamlio.safe_load(yamlio.read_yaml_text(path))
    except FileNotFoundError as exc:
        raise SaturationError("prune file not found", path=path) from exc
    except yaml.YAMLError as exc:
        raise SaturationError(f"not valid YAML: {exc}", path=path) from exc
    if not isinstance(data, dict) or not isinstance(data.get("leaves"), list):
        raise SaturationError("expected a mapping with a `leaves` list", path=path)
    return data


def prune_changes(path: Path, codebook: Codebook) -> list[Change]:
    """The delete/fold changes an edited listing asks for (validated)."""
    data = _load(path)
    if data.get("codebook_version") != codebook.version:
        raise SaturationError(
            f"listing was made for version {data.get('codebook_version')}, the project is at "
            f"version {codebook.version}: write a new listing",
            path=path,
            field="codebook_version",
        )
    reviewer = str(data.get("reviewer") or "").strip()
    out = []
    valid = ", ".join(a.value for a in PruneAction)
    for item in data["leaves"]:
        raw = str(item.get("action") or "").strip().lower()
        if not raw:
            continue
        try:
            action = PruneAction(raw)
        except ValueError:
            raise SaturationError(
                f"leaf {item.get('leaf_id')}: unknown action {raw!r} (valid: {valid})",
                path=path,
                field="action",
            ) from None
        if action is PruneAction.KEEP:
            continue
        if not reviewer:
            raise SaturationError(
                "pruning needs a reviewer: write your name in `reviewer`",
                path=path,
                field="reviewer",
            )
        out.append(
            Change(
                op=ChangeOp.DELETE_LEAF if action is PruneAction.DELETE else ChangeOp.FOLD_LEAF,
                dimension=str(item["dimension"]),
                subcode=str(item["parent_subcode"]),
                leaf=str(item["leaf_id"]),
                label=str(item.get("label", "")),
                source=Path(path).name,
                decided_by=reviewer,
            )
        )
    return out


def apply_prune_file(store: ProjectStore, path: Path) -> Codebook | None:
    """Apply an edited listing as one new version; None when it asks for nothing."""
    last = current_round(store)
    if last is not None and last.phase is not RoundPhase.CLOSED:
        raise SaturationError(
            f"round {last.number} is {last.phase.value}: finish it before pruning"
        )
    changes = prune_changes(path, store.codebook())
    if not changes:
        return None
    return apply_changes(store, changes, "Rare-leaf pruning", source=str(Path(path).name))
