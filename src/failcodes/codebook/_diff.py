"""Differences between codebook versions, migration maps, and carrying annotations forward.

Nothing is inferred silently: renames, merges, splits and removals are read from the newer
version's ``migration`` section. A diff may *suggest* entries (a removed and an added code
with the same label or a near-identical definition), but only explicit entries drive
:func:`migrate`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path

from pydantic import Field

from failcodes.codebook._models import (
    ChangeKind,
    Codebook,
    CodebookRef,
    CodeInfo,
    CodeLevel,
    UnitKind,
)
from failcodes.contract import FrozenModel
from failcodes.errors import CodebookError

Loc = tuple[str | int, ...]


class DiffKind(StrEnum):
    """Kinds of difference a diff reports."""

    ADDED = "added"
    REMOVED = "removed"
    RENAMED = "renamed"
    MERGED = "merged"
    SPLIT = "split"
    CHANGED = "changed"  # same id, different wording, flag or position


class CodeChange(FrozenModel):
    """One difference between two versions."""

    kind: DiffKind
    level: CodeLevel
    old: tuple[str, ...] = ()
    new: tuple[str, ...] = ()
    dimension: str = Field(description="Dimension the codes sit in (in the newer version).")
    fields: tuple[str, ...] = Field(default=(), description="What changed, for 'changed'.")
    explicit: bool = Field(
        default=True, description="Backed by a migration entry (False: plain add or removal)."
    )
    note: str = ""

    def __str__(self) -> str:
        olds, news = ", ".join(self.old), ", ".join(self.new)
        text = {
            DiffKind.ADDED: f"+ {self.level.value} {news} ({self.dimension})",
            DiffKind.REMOVED: f"- {self.level.value} {olds} ({self.dimension})",
            DiffKind.RENAMED: f"~ {self.level.value} {olds} -> {news}",
            DiffKind.MERGED: f"> {self.level.value}s {olds} merged into {news}",
            DiffKind.SPLIT: f"< {self.level.value} {olds} split into {news}",
            DiffKind.CHANGED: f"* {self.level.value} {news}: {', '.join(self.fields)} changed",
        }[self.kind]
        if self.kind is DiffKind.REMOVED and not self.explicit:
            text += " [no migration entry]"
        return text + (f"  # {self.note}" if self.note else "")


class Suggestion(FrozenModel):
    """A migration entry a diff proposes for an unexplained removal (never applied alone)."""

    kind: ChangeKind
    old: tuple[str, ...]
    new: tuple[str, ...]
    reason: str


class MigrationMap(FrozenModel):
    """How every code of one version maps onto the next (or a later) version.

    ``codes`` covers every subcode and leaf id of the old version: the new id, or ``None``
    when annotations carrying it must be re-coded (split or removed codes).
    """

    name: str
    from_version: int
    from_hash: str
    to: CodebookRef
    codes: dict[str, str | None]
    dimensions: dict[str, str | None] = Field(
        description="Old dimension id -> new id, or None if the dimension was removed."
    )
    added_dimensions: dict[str, UnitKind] = Field(
        default_factory=dict, description="Dimensions new in the target version, by part."
    )
    multi_label: tuple[str, ...] = Field(
        default=(), description="The target version's multi-label dimensions."
    )
    widened: tuple[str, ...] = Field(
        default=(),
        description="Dimensions (target ids) single-label in the source version and "
        "multi-label in the target: an old annotation gives one code where several may apply.",
    )


class CodebookDiff(FrozenModel):
    """Everything that differs between two versions, plus the migration map when one exists."""

    old: CodebookRef
    new: CodebookRef
    changes: tuple[CodeChange, ...]
    migration: MigrationMap | None = Field(
        default=None, description="Present when the newer version is the child of the older."
    )
    migration_error: str | None = Field(
        default=None, description="Why no migration map could be built for a child version."
    )
    suggestions: tuple[Suggestion, ...] = ()

    def of_kind(self, kind: DiffKind) -> list[CodeChange]:
        """The changes of one kind."""
        return [c for c in self.changes if c.kind is kind]


# --------------------------------------------------------------------------- checks


def _fail(rule: str, message: str, path: str | Path | None, line: int | None) -> CodebookError:
    return CodebookError(message, rule=rule, path=path, line=line)


def check_migration(
    parent: Codebook,
    child: Codebook,
    *,
    path: str | Path | None = None,
    lines: Mapping[Loc, int] | None = None,
) -> None:
    """Check that ``child``'s migration section explains every change from ``parent``.

    Each entry's old ids must exist in the parent and its new ids in the child, at the same
    level (dimension, subcode or leaf) and in the same dimension; no old id may appear in
    two entries; every parent code absent from the child needs an entry.
    """
    where = dict(lines or {})

    def line(*loc: str | int) -> int | None:
        key: Loc = tuple(loc)
        while key and key not in where:
            key = key[:-1]
        return where.get(key, 1 if where else None)

    if child.name != parent.name or child.parent_version != parent.version:
        raise _fail(
            "version-parent",
            f"{child.id} (parent_version {child.parent_version}) is not a child of {parent.id}",
            path,
            line("parent_version"),
        )
    old_codes, new_codes = parent.codes(), child.codes()
    dim_rename = {
        e.old[0]: e.new[0]
        for e in child.migration
        if e.kind is ChangeKind.RENAME and old_codes.get(e.old[0], _NO).level is CodeLevel.DIMENSION
    }
    claimed: dict[str, int] = {}
    for m, entry in enumerate(child.migration):
        levels: set[CodeLevel] = set()
        for side, listed, known, version in (
            ("old", entry.old, old_codes, parent.version),
            ("new", entry.new, new_codes, child.version),
        ):
            for code in listed:
                if code not in known:
                    raise _fail(
                        "migration-unknown-code",
                        f"'{code}' is not a code of version {version}",
                        path,
                        line("migration", m, side),
                    )
                if side == "old":
                    if code in claimed:
                        raise _fail(
                            "bad-migration",
                            f"'{code}' appears in migration entries {claimed[code]} and {m}",
                            path,
                            line("migration", m, side),
                        )
                    claimed[code] = m
                levels.add(known[code].level)
        if len(levels) != 1:
            raise _fail(
                "bad-migration",
                f"a {entry.kind.value} entry must stay at one level (got "
                f"{', '.join(sorted(lv.value for lv in levels))})",
                path,
                line("migration", m),
            )
        level = levels.pop()
        dim_kinds = (ChangeKind.RENAME, ChangeKind.REMOVE)
        if level is CodeLevel.DIMENSION and entry.kind not in dim_kinds:
            raise _fail(
                "bad-migration",
                f"dimensions can only be renamed or removed, not {entry.kind.value}d",
                path,
                line("migration", m),
            )
        if level is not CodeLevel.DIMENSION:
            dims = {dim_rename.get(d, d) for d in (old_codes[c].dimension for c in entry.old)}
            dims |= {new_codes[c].dimension for c in entry.new}
            if len(dims) != 1:
                raise _fail(
                    "bad-migration",
                    f"a {entry.kind.value} entry must stay within one dimension (got "
                    f"{', '.join(sorted(dims))})",
                    path,
                    line("migration", m),
                )
    for code, info in old_codes.items():
        if code in new_codes and new_codes[code].level is info.level:
            continue
        if code in claimed:
            continue
        raise _fail(
            "unexplained-removal",
            f"{info.level.value} '{code}' of version {parent.version} is gone from version "
            f"{child.version} without a migration entry (add rename/merge/split/remove)",
            path,
            line("migration") if ("migration",) in where else line("version"),
        )


_NO = CodeInfo(CodeLevel.LEAF, UnitKind.RETRIEVAL, "", None)  # sentinel for .get()


# --------------------------------------------------------------------------- maps


def migration_map(parent: Codebook, child: Codebook) -> MigrationMap:
    """The map from ``parent``'s codes to ``child``'s, read from ``child.migration``."""
    check_migration(parent, child)
    old_codes, new_codes = parent.codes(), child.codes()
    explicit: dict[str, str | None] = {}
    for entry in child.migration:
        explicit.update(entry.targets())
    codes: dict[str, str | None] = {}
    dimensions: dict[str, str | None] = {}
    for code, info in old_codes.items():
        target = explicit.get(code, code)
        if info.level is CodeLevel.DIMENSION:
            dimensions[code] = target
        else:
            codes[code] = target
    kept = set(dimensions.values())
    added = {
        code: info.part
        for code, info in new_codes.items()
        if info.level is CodeLevel.DIMENSION and code not in kept
    }
    widened = tuple(
        new
        for old, new in dimensions.items()
        if new is not None
        and child.dimension(new).multi_label
        and not parent.dimension(old).multi_label
    )
    return MigrationMap(
        name=parent.name,
        from_version=parent.version,
        from_hash=parent.hash,
        to=child.ref(),
        codes=codes,
        dimensions=dimensions,
        added_dimensions=added,
        multi_label=tuple(d.id for _, d in child.dimensions() if d.multi_label),
        widened=widened,
    )


def compose(first: MigrationMap, second: MigrationMap) -> MigrationMap:
    """The map of ``first`` followed by ``second`` (v1->v2 then v2->v3 gives v1->v3)."""
    if first.to.version != second.from_version or first.to.hash != second.from_hash:
        raise CodebookError(
            f"cannot chain {first.name}@{first.from_version}->{first.to.version} with "
            f"{second.name}@{second.from_version}->{second.to.version}",
            rule="version-parent",
        )
    codes = {k: (None if v is None else second.codes[v]) for k, v in first.codes.items()}
    dims = {k: (None if v is None else second.dimensions[v]) for k, v in first.dimensions.items()}
    added = dict(second.added_dimensions)
    for dim, kind in first.added_dimensions.items():
        renamed = second.dimensions.get(dim)
        if renamed is not None:
            added[renamed] = kind
    # widened in either step, unless the second made it single-label again
    widened = [
        w
        for d in first.widened
        if (w := second.dimensions.get(d)) is not None and w in second.multi_label
    ]
    widened += [d for d in second.widened if d not in widened]
    return MigrationMap(
        name=first.name,
        from_version=first.from_version,
        from_hash=first.from_hash,
        to=second.to,
        codes=codes,
        dimensions=dims,
        added_dimensions=added,
        multi_label=second.multi_label,
        widened=tuple(widened),
    )


def migration_path(lineage: Sequence[Codebook], from_version: int, to_version: int) -> MigrationMap:
    """Compose the maps of a lineage (from :func:`load_lineage`) from one version to a later."""
    by_version = {cb.version: cb for cb in lineage}
    if from_version >= to_version or any(
        v not in by_version for v in range(from_version, to_version + 1)
    ):
        have = ", ".join(str(v) for v in sorted(by_version))
        raise CodebookError(
            f"no path from version {from_version} to {to_version} (have: {have})",
            rule="parent-missing",
        )
    result = migration_map(by_version[from_version], by_version[from_version + 1])
    for version in range(from_version + 1, to_version):
        result = compose(result, migration_map(by_version[version], by_version[version + 1]))
    return result


# --------------------------------------------------------------------------- diff

_LEVEL_EXCLUDE: dict[CodeLevel, set[str]] = {
    CodeLevel.DIMENSION: {"subcodes"},
    CodeLevel.SUBCODE: {"leaves"},
    CodeLevel.LEAF: set(),
}


def _content(cb: Codebook, code: str, info: CodeInfo) -> dict[str, object]:
    if info.level is CodeLevel.DIMENSION:
        body = cb.dimension(code).model_dump(mode="json", exclude=_LEVEL_EXCLUDE[info.level])
    elif info.level is CodeLevel.SUBCODE:
        body = cb.subcode(code).model_dump(mode="json", exclude=_LEVEL_EXCLUDE[info.level])
        body["dimension"] = info.dimension
    else:
        body = cb.leaf(code).model_dump(mode="json")
        body["parent"] = info.subcode
    return body


def _label_and_definition(cb: Codebook, code: str, info: CodeInfo) -> tuple[str, str]:
    body = _content(cb, code, info)
    return str(body["label"]), str(body["definition"])


def diff(old: Codebook, new: Codebook) -> CodebookDiff:
    """Compare two versions: added, removed, renamed, merged, split and changed codes.

    Renames, merges and splits come from ``new.migration`` when ``new`` is the child of
    ``old``; otherwise (or for codes the section misses) codes only appear as added or
    removed, and :attr:`CodebookDiff.suggestions` proposes entries to write.
    """
    old_codes, new_codes = old.codes(), new.codes()
    is_child = new.name == old.name and new.parent_version == old.version
    entries = new.migration if is_child else ()
    changes: list[CodeChange] = []
    covered_old: set[str] = set()
    covered_new: set[str] = set()
    kinds = {
        ChangeKind.RENAME: DiffKind.RENAMED,
        ChangeKind.MERGE: DiffKind.MERGED,
        ChangeKind.SPLIT: DiffKind.SPLIT,
        ChangeKind.REMOVE: DiffKind.REMOVED,
    }
    for entry in entries:
        info = old_codes.get(entry.old[0])
        if info is None:
            continue
        dim = new_codes[entry.new[0]].dimension if entry.new else info.dimension
        changes.append(
            CodeChange(
                kind=kinds[entry.kind],
                level=info.level,
                old=entry.old,
                new=entry.new,
                dimension=dim,
                note=entry.note,
            )
        )
        covered_old.update(entry.old)
        covered_new.update(c for c in entry.new if c not in old_codes)
    removed = [
        c
        for c, info in old_codes.items()
        if (c not in new_codes or new_codes[c].level is not info.level) and c not in covered_old
    ]
    added = [
        c
        for c, info in new_codes.items()
        if (c not in old_codes or old_codes[c].level is not info.level) and c not in covered_new
    ]
    for code in removed:
        info = old_codes[code]
        changes.append(
            CodeChange(
                kind=DiffKind.REMOVED,
                level=info.level,
                old=(code,),
                dimension=info.dimension,
                explicit=False,
            )
        )
    for code in added:
        info = new_codes[code]
        changes.append(
            CodeChange(kind=DiffKind.ADDED, level=info.level, new=(code,), dimension=info.dimension)
        )
    for code, info in new_codes.items():
        before = old_codes.get(code)
        if before is None or before.level is not info.level:
            continue
        a, b = _content(old, code, before), _content(new, code, info)
        fields = tuple(k for k in b if a.get(k) != b[k])
        if fields:
            changes.append(
                CodeChange(
                    kind=DiffKind.CHANGED,
                    level=info.level,
                    old=(code,),
                    new=(code,),
                    dimension=info.dimension,
                    fields=fields,
                )
            )
    suggestions = _suggest(old, new, removed, added)
    mmap: MigrationMap | None = None
    error: str | None = None
    if is_child:
        try:
            mmap = migration_map(old, new)
        except CodebookError as exc:
            error = exc.one_line()
    return CodebookDiff(
        old=old.ref(),
        new=new.ref(),
        changes=tuple(changes),
        migration=mmap,
        migration_error=error,
        suggestions=tuple(suggestions),
    )


def _suggest(
    old: Codebook, new: Codebook, removed: list[str], added: list[str]
) -> list[Suggestion]:
    """Propose renames for removed codes that look like an added one (same level)."""
    old_codes, new_codes = old.codes(), new.codes()
    out: list[Suggestion] = []
    for gone in removed:
        info = old_codes[gone]
        label, definition = _label_and_definition(old, gone, info)
        best: tuple[float, str, str] | None = None
        for code in added:
            cand = new_codes[code]
            if cand.level is not info.level:
                continue
            nlabel, ndefinition = _label_and_definition(new, code, cand)
            if nlabel.casefold() == label.casefold():
                score, why = 1.0, "same label"
            else:
                score = difflib.SequenceMatcher(None, definition, ndefinition).ratio()
                why = f"definitions {score:.0%} similar"
            if score >= 0.8 and (best is None or score > best[0]):
                best = (score, code, why)
        if best is not None:
            out.append(
                Suggestion(kind=ChangeKind.RENAME, old=(gone,), new=(best[1],), reason=best[2])
            )
        else:
            out.append(
                Suggestion(
                    kind=ChangeKind.REMOVE,
                    old=(gone,),
                    new=(),
                    reason="no similar code in the new version; annotations will need re-coding",
                )
            )
    return out
