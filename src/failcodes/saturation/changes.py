"""From human decisions to the next codebook version, its migration map and re-coding flags.

A :class:`Change` is one edit a reviewer approved: add a leaf under a subcode, add a subcode to
a dimension, delete a rare leaf, or fold a rare leaf into its parent (its definition becomes an
inclusion rule of the parent). :func:`next_version` applies a batch of changes as one new
version (parent = current version) with a changelog naming who decided what.

Which units each change flags for re-coding: docs/saturation.md, step 6 ("Close"). A deleted or
folded leaf is a ``remove`` migration entry (the codebook module has no cross-level merge):
its units keep their parent subcode and are flagged for that dimension's leaves, as
:func:`failcodes.migration.migrate` reports too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from failcodes.annotations import Annotation, Status
from failcodes.codebook import (
    ChangeKind,
    Codebook,
    CodebookDraft,
    Dimension,
    Leaf,
    MigrationEntry,
    Part,
    Subcode,
    validate,
)
from failcodes.contract import FrozenModel
from failcodes.saturation.models import RecodeFlag
from failcodes.units import UnitKind


class ChangeOp(StrEnum):
    """Kinds of edits the saturation loop makes."""

    ADD_LEAF = "add_leaf"
    ADD_SUBCODE = "add_subcode"
    DELETE_LEAF = "delete_leaf"
    FOLD_LEAF = "fold_leaf"


class Change(FrozenModel):
    """One approved edit of the codebook."""

    op: ChangeOp
    dimension: str
    subcode: str  # the parent (leaf ops) or the new subcode's id (add_subcode)
    leaf: str | None = None
    label: str = ""
    definition: str = ""
    examples: tuple[str, ...] = ()
    source: str = ""  # proposal id or prune listing
    decided_by: str = ""

    def describe(self) -> str:
        """One changelog line."""
        who = f" ({self.source}, decided by {self.decided_by})" if self.decided_by else ""
        if self.op is ChangeOp.ADD_LEAF:
            return f"added leaf {self.leaf} under {self.dimension}.{self.subcode}{who}"
        if self.op is ChangeOp.ADD_SUBCODE:
            return f"added subcode {self.subcode} to {self.dimension}{who}"
        if self.op is ChangeOp.DELETE_LEAF:
            return f"deleted rare leaf {self.leaf} of {self.dimension}.{self.subcode}{who}"
        return f"folded rare leaf {self.leaf} into {self.dimension}.{self.subcode}{who}"


def _apply(draft: CodebookDraft, part: Part, change: Change) -> None:
    """Make ``change`` on ``draft`` (KeyError naming a missing dimension, subcode or leaf)."""
    dim: Dimension = part.dimension(change.dimension)  # KeyError if absent
    if change.op is ChangeOp.ADD_SUBCODE:
        if change.subcode in dim.code_ids():
            raise KeyError(f"subcode {change.subcode} already in {dim.id}")
        new = Subcode(id=change.subcode, label=change.label, definition=change.definition)
        draft.add_subcode(change.dimension, new, note=change.describe())
        return
    if change.subcode not in dim.code_ids():
        raise KeyError(f"subcode {change.subcode} not in {dim.id}")
    if change.op is ChangeOp.ADD_LEAF:
        leaf = Leaf(
            id=change.leaf or "",
            label=change.label,
            definition=change.definition,
            examples=change.examples,
        )
        draft.add_leaf(change.subcode, leaf, note=change.describe())
        return
    sub = draft.current.subcode(change.subcode)
    gone = next((leaf for leaf in sub.leaves if leaf.id == change.leaf), None)
    if gone is None:
        raise KeyError(f"leaf {change.leaf} not under {change.dimension}.{change.subcode}")
    if change.op is ChangeOp.FOLD_LEAF:  # its definition becomes an inclusion rule
        include = (*sub.include, f"{gone.label}: {gone.definition}")
        draft.update(change.subcode, include=include, note=change.describe())
    draft.remove(gone.id, note=change.describe())


def next_version(
    codebook: Codebook, kind: UnitKind, changes: Sequence[Change], title: str
) -> Codebook:
    """Apply ``changes`` to the ``kind`` part as version ``codebook.version + 1``.

    The edits go through the codebook module's one editing API
    (:class:`~failcodes.codebook.CodebookDraft`, which validates the result and checks its
    migration). The changelog is ``title`` followed by one line per change (who decided it,
    from which proposal); deleted and folded leaves get a ``remove`` migration entry, in the
    order decided. Raises KeyError naming a missing dimension, subcode or leaf.
    """
    draft = CodebookDraft(codebook, title)
    part = codebook.part(kind)
    for change in changes:
        _apply(draft, part, change)
    built = draft.build()
    changelog = "\n".join([title, *(f"- {c.describe()}" for c in changes)])
    migration = tuple(
        MigrationEntry(kind=ChangeKind.REMOVE, old=(c.leaf or "",), note=c.describe())
        for c in changes
        if c.op in (ChangeOp.DELETE_LEAF, ChangeOp.FOLD_LEAF)
    )
    return validate(built.model_copy(update={"changelog": changelog, "migration": migration}))


def migration_map(changes: Iterable[Change]) -> list[dict[str, str]]:
    """Machine-readable migration entries: what old annotations should do, per code."""
    out = []
    for c in changes:
        entry = {"dimension": c.dimension, "code": c.subcode}
        if c.op is ChangeOp.ADD_LEAF:
            reason = f"new leaf {c.leaf} may apply"
        elif c.op is ChangeOp.ADD_SUBCODE:
            entry["code"], reason = "*", f"new subcode {c.subcode}"
        else:
            entry["leaf"] = c.leaf or ""
            reason = f"leaf {c.leaf} removed; parent code kept, leaves to re-code"
        out.append({**entry, "action": "recode", "reason": reason})
    return out


def recode_flags(
    annotations: Iterable[Annotation], changes: Sequence[Change], new_version: int
) -> list[RecodeFlag]:
    """Flag exactly the annotated units a change touches (one flag per unit and dimension)."""
    flags: list[RecodeFlag] = []
    for ann in annotations:
        if ann.status is not Status.SCORED or ann.codebook.version >= new_version:
            continue
        for c in changes:
            code = ann.codes.get(c.dimension)
            if code is None:
                continue
            if c.op is ChangeOp.ADD_LEAF and code == c.subcode:
                reason = f"coded {code}; new leaf {c.leaf}"
            elif c.op is ChangeOp.ADD_SUBCODE:
                reason = f"coded {code}; new subcode {c.subcode} in {c.dimension}"
            elif c.leaf in ann.leaves.get(c.dimension, ()):
                reason = f"carried leaf {c.leaf}, removed (parent {c.subcode} kept)"
            else:
                continue
            flags.append(
                RecodeFlag(
                    unit_id=ann.unit_id,
                    coded_version=ann.codebook.version,
                    new_version=new_version,
                    dimension=c.dimension,
                    reason=reason,
                )
            )
    return flags
