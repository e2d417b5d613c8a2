"""Making the next version of a codebook: edits that write their own changelog and migration.

A :class:`CodebookDraft` gathers several edits into one new version (a saturation round); the
one-edit shortcuts (``add_leaf(v1, ...)``, ``merge_subcodes(v1, ...)``...) return the next
version directly. Every edit appends a line to the changelog; the migration section is
regenerated from all edits so its entries always name codes of the parent and of the new
version (a rename followed by a merge becomes one merge entry). Use: docs/codebook.md
("Writing a new version").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from failcodes.codebook._diff import check_migration
from failcodes.codebook._document import validate
from failcodes.codebook._models import (
    ChangeKind,
    Codebook,
    CodeLevel,
    Dimension,
    Leaf,
    MigrationEntry,
    Part,
    Subcode,
)
from failcodes.errors import CodebookError

_FIELDS = ("label", "definition", "include", "exclude", "examples")


def _err(rule: str, message: str) -> CodebookError:
    return CodebookError(message, rule=rule)


class CodebookDraft:
    """The next version of ``parent`` being edited; :meth:`build` returns it, validated.

    Methods return the draft so edits chain. Ids are global in a codebook, so a code is
    named by its id alone (no part or dimension needed).
    """

    def __init__(self, parent: Codebook, changelog: str = "") -> None:
        validate(parent)
        self.parent = parent
        self.current = parent.model_copy(
            update={
                "version": parent.version + 1,
                "parent_version": parent.version,
                "changelog": "",
                "migration": (),
            }
        )
        self.summary = changelog.strip()
        self.lines: list[str] = []
        # Parent code -> the codes it became (empty: removed; several: split).
        self.fate: dict[str, tuple[str, ...]] = {c: (c,) for c in parent.codes()}
        self.notes: dict[str, str] = {}

    # ------------------------------------------------------------------ helpers

    def _info(self, code: str, level: CodeLevel | None = None) -> Any:
        info = self.current.codes().get(code)
        if info is None or (level is not None and info.level is not level):
            what = level.value if level is not None else "code"
            raise _err("migration-unknown-code", f"no {what} '{code}' in {self.current.id}")
        return info

    def _fresh(self, code: str) -> None:
        if code in self.current.codes():
            raise _err("duplicate-id", f"id '{code}' is already used in {self.current.id}")

    def _replace(self, old: Sequence[str], new: Sequence[str], note: str) -> None:
        olds = set(old)
        for parent_code, now in self.fate.items():
            if olds & set(now):
                merged: list[str] = []
                for code in now:
                    for repl in new if code in olds else (code,):
                        if repl not in merged:
                            merged.append(repl)
                self.fate[parent_code] = tuple(merged)
                if note:
                    self.notes[parent_code] = note

    def _map_dimension(self, dim_id: str, fn: Callable[[Dimension], Dimension | None]) -> None:
        parts: list[Part] = []
        for part in self.current.parts:
            dims: list[Dimension] = []
            for dim in part.dimensions:
                if dim.id == dim_id:
                    new = fn(dim)
                    if new is not None:
                        dims.append(new)
                else:
                    dims.append(dim)
            parts.append(part.model_copy(update={"dimensions": tuple(dims)}))
        self.current = self.current.model_copy(update={"parts": tuple(parts)})

    def _map_subcodes(self, dim_id: str, fn: Callable[[Subcode], Sequence[Subcode]]) -> None:
        def per_dim(dim: Dimension) -> Dimension:
            subs = [new for sub in dim.subcodes for new in fn(sub)]
            return dim.model_copy(update={"subcodes": tuple(subs)})

        self._map_dimension(dim_id, per_dim)

    def _update_code(self, code: str, info: Any, change: dict[str, Any]) -> None:
        """Apply ``model_copy(update=change)`` to the dimension, subcode or leaf ``code``."""
        if info.level is CodeLevel.DIMENSION:
            self._map_dimension(code, lambda d: d.model_copy(update=change))
        elif info.level is CodeLevel.SUBCODE:
            self._map_subcodes(
                info.dimension, lambda s: [s.model_copy(update=change) if s.id == code else s]
            )
        else:

            def per_subcode(sub: Subcode) -> list[Subcode]:
                leaves = tuple(
                    lf.model_copy(update=change) if lf.id == code else lf for lf in sub.leaves
                )
                return [sub.model_copy(update={"leaves": leaves})]

            self._map_subcodes(info.dimension, per_subcode)

    def _log(self, line: str, note: str = "") -> None:
        self.lines.append(f"- {line}" + (f": {note}" if note else ""))

    def _merged_text(
        self,
        olds: Sequence[Subcode] | Sequence[Leaf],
        ids: Sequence[str],
        into: str,
        label: str | None,
        definition: str | None,
        level: str,
    ) -> tuple[str, str]:
        """Label and definition of a merge's result: the given ones, else ``into``'s own.

        A new ``into`` (not one of ``ids``) must be a fresh id and needs both.
        """
        if into not in ids:
            self._fresh(into)
            if label is None or definition is None:
                raise _err(
                    "missing-key",
                    f"merging into new {level} '{into}' needs a label and a definition",
                )
        base = olds[list(ids).index(into)] if into in ids else None
        return (
            label if label is not None else (base.label if base else ""),
            definition if definition is not None else (base.definition if base else ""),
        )

    # ------------------------------------------------------------------ edits

    def add_leaf(self, subcode: str, leaf: Leaf, *, note: str = "") -> CodebookDraft:
        """Add ``leaf`` under ``subcode`` (a new concrete pattern found during saturation)."""
        info = self._info(subcode, CodeLevel.SUBCODE)
        self._fresh(leaf.id)
        self._map_subcodes(
            info.dimension,
            lambda s: [
                s.model_copy(update={"leaves": (*s.leaves, leaf)}) if s.id == subcode else s
            ],
        )
        self._log(f"added leaf {leaf.id} under {subcode}", note)
        return self

    def add_subcode(
        self, dimension: str, subcode: Subcode, *, after: str | None = None, note: str = ""
    ) -> CodebookDraft:
        """Add a (low-quality) subcode to ``dimension``, at the end or after ``after``."""
        self._info(dimension, CodeLevel.DIMENSION)
        self._fresh(subcode.id)
        for leaf in subcode.leaves:
            self._fresh(leaf.id)

        def per_dim(dim: Dimension) -> Dimension:
            subs = list(dim.subcodes)
            at = len(subs) if after is None else dim.code_ids().index(after) + 1
            subs.insert(at, subcode)
            return dim.model_copy(update={"subcodes": tuple(subs)})

        if after is not None:
            self._info(after, CodeLevel.SUBCODE)
        self._map_dimension(dimension, per_dim)
        self._log(f"added subcode {subcode.id} to {dimension}", note)
        return self

    def set_multi_label(
        self, dimension: str, multi_label: bool = True, *, note: str = ""
    ) -> CodebookDraft:
        """Let ``dimension``'s low-quality codes co-occur in one unit (or forbid it again).

        The codes stay the same, so no migration entry is written; the migration map lists
        the dimension as widened (:attr:`~failcodes.codebook.MigrationMap.widened`): an
        annotation of the parent version carries one code where several may apply now.
        """
        self._info(dimension, CodeLevel.DIMENSION)
        if self.current.dimension(dimension).multi_label == multi_label:
            state = "multi-label" if multi_label else "single-label"
            raise _err("bad-value", f"dimension '{dimension}' is already {state}")
        self._map_dimension(dimension, lambda d: d.model_copy(update={"multi_label": multi_label}))
        what = "multi-label (its low-quality codes may co-occur)" if multi_label else "single-label"
        self._log(f"made {dimension} {what}", note)
        return self

    def update(self, code: str, *, note: str = "", **fields: Any) -> CodebookDraft:
        """Reword a code (label, definition, include, exclude, examples); no migration needed."""
        unknown = set(fields) - set(_FIELDS)
        if unknown:
            raise _err("unknown-key", f"cannot update {sorted(unknown)} (allowed: {_FIELDS})")
        info = self._info(code)
        values = {k: tuple(v) if isinstance(v, list | tuple) else v for k, v in fields.items()}
        if info.level is CodeLevel.DIMENSION and set(values) - {"label", "definition"}:
            raise _err("unknown-key", "a dimension only has a label and a definition")
        self._update_code(code, info, values)
        self._log(f"reworded {code} ({', '.join(sorted(values))})", note)
        return self

    def rename(
        self, code: str, new_id: str, *, label: str | None = None, note: str = ""
    ) -> CodebookDraft:
        """Give a dimension, subcode or leaf a new id (same meaning): a ``rename`` entry."""
        info = self._info(code)
        self._fresh(new_id)
        change: dict[str, Any] = {"id": new_id}
        if label is not None:
            change["label"] = label
        self._update_code(code, info, change)
        self._replace([code], [new_id], note)
        self._log(f"renamed {code} to {new_id}", note)
        return self

    def merge_subcodes(
        self,
        subcodes: Sequence[str],
        into: str,
        *,
        label: str | None = None,
        definition: str | None = None,
        note: str = "",
        **fields: Any,
    ) -> CodebookDraft:
        """Merge subcodes of one dimension into ``into`` (one of them, or a new id).

        The result is high-quality if any merged subcode was; leaves move to it; a new id
        needs ``label`` and ``definition``; other fields (include, exclude, examples) may be
        given, else they are concatenated from the merged subcodes.
        """
        if len(set(subcodes)) < 2:
            raise _err("bad-migration", "merge needs at least two distinct subcodes")
        infos = [self._info(s, CodeLevel.SUBCODE) for s in subcodes]
        dims = {i.dimension for i in infos}
        if len(dims) != 1:
            raise _err("bad-migration", f"cannot merge subcodes of {sorted(dims)}: one dimension")
        dim = self.current.dimension(infos[0].dimension)
        olds = [dim.subcode(s) for s in subcodes]
        label, definition = self._merged_text(olds, subcodes, into, label, definition, "subcode")
        merged = Subcode(
            id=into,
            label=label,
            definition=definition,
            include=tuple(fields.get("include", [r for s in olds for r in s.include])),
            exclude=tuple(
                fields.get(
                    "exclude",
                    [r for s in olds for r in s.exclude if not any(o.id in r for o in olds)],
                )
            ),
            examples=tuple(fields.get("examples", [e for s in olds for e in s.examples])),
            high_quality=any(s.high_quality for s in olds),
            leaves=tuple(lf for s in olds for lf in s.leaves),
        )
        first = next(s.id for s in dim.subcodes if s.id in subcodes)
        self._map_subcodes(
            dim.id, lambda s: [merged] if s.id == first else ([] if s.id in subcodes else [s])
        )
        self._replace(subcodes, [into], note)
        self._log(f"merged {', '.join(subcodes)} into {into}", note)
        return self

    def merge_leaves(
        self,
        leaves: Sequence[str],
        into: str,
        *,
        label: str | None = None,
        definition: str | None = None,
        note: str = "",
    ) -> CodebookDraft:
        """Merge leaves of one dimension into ``into`` (one of them, or a new id).

        A new id goes under the first merged leaf's parent subcode.
        """
        if len(set(leaves)) < 2:
            raise _err("bad-migration", "merge needs at least two distinct leaves")
        infos = [self._info(lf, CodeLevel.LEAF) for lf in leaves]
        if len({i.dimension for i in infos}) != 1:
            raise _err("bad-migration", "merged leaves must belong to one dimension")
        olds = [self.current.leaf(lf) for lf in leaves]
        label, definition = self._merged_text(olds, leaves, into, label, definition, "leaf")
        merged = Leaf(
            id=into,
            label=label,
            definition=definition,
            include=tuple(r for lf in olds for r in lf.include),
            exclude=tuple(r for lf in olds for r in lf.exclude),
            examples=tuple(e for lf in olds for e in lf.examples),
        )
        home = infos[list(leaves).index(into)].subcode if into in leaves else infos[0].subcode

        def per_sub(s: Subcode) -> list[Subcode]:
            kept = [lf for lf in s.leaves if lf.id not in leaves]
            if s.id == home:
                first = next((i for i, lf in enumerate(s.leaves) if lf.id in leaves), len(s.leaves))
                before = [lf for lf in s.leaves[:first] if lf.id not in leaves]
                kept = [*before, merged, *[lf for lf in s.leaves[first:] if lf.id not in leaves]]
            return [s.model_copy(update={"leaves": tuple(kept)})]

        self._map_subcodes(infos[0].dimension, per_sub)
        self._replace(leaves, [into], note)
        self._log(f"merged leaves {', '.join(leaves)} into {into}", note)
        return self

    def split_subcode(
        self,
        subcode: str,
        into: Sequence[Subcode],
        *,
        leaf_parents: Mapping[str, str] | None = None,
        note: str = "",
    ) -> CodebookDraft:
        """Replace ``subcode`` by several subcodes; annotations carrying it need re-coding.

        Its leaves must each be assigned to one of the new subcodes via ``leaf_parents``.
        """
        if len(into) < 2:
            raise _err("bad-migration", "split needs at least two new subcodes")
        info = self._info(subcode, CodeLevel.SUBCODE)
        old = self.current.subcode(subcode)
        new_ids = [s.id for s in into]
        for new_id in new_ids:
            if new_id != subcode:
                self._fresh(new_id)
        assign = dict(leaf_parents or {})
        missing = [lf.id for lf in old.leaves if assign.get(lf.id) not in new_ids]
        if missing:
            raise _err(
                "leaf-parent-missing",
                f"assign leaves {missing} of '{subcode}' to one of {new_ids} (leaf_parents=)",
            )
        built = [
            s.model_copy(
                update={"leaves": (*s.leaves, *[lf for lf in old.leaves if assign[lf.id] == s.id])}
            )
            for s in into
        ]
        self._map_subcodes(info.dimension, lambda s: built if s.id == subcode else [s])
        self._replace([subcode], new_ids, note)
        self._log(f"split {subcode} into {', '.join(new_ids)}", note)
        return self

    def remove(self, code: str, *, note: str = "") -> CodebookDraft:
        """Remove a leaf, a subcode (with its leaves) or a dimension.

        Annotations carrying a removed code need re-coding.
        """
        info = self._info(code)
        gone = [code]
        if info.level is CodeLevel.DIMENSION:
            dim = self.current.dimension(code)
            gone += [c for s in dim.subcodes for c in (s.id, *(lf.id for lf in s.leaves))]
            self._map_dimension(code, lambda _d: None)
        elif info.level is CodeLevel.SUBCODE:
            gone += [lf.id for lf in self.current.subcode(code).leaves]
            self._map_subcodes(info.dimension, lambda s: [] if s.id == code else [s])
        else:
            self._map_subcodes(
                info.dimension,
                lambda s: [
                    s.model_copy(update={"leaves": tuple(lf for lf in s.leaves if lf.id != code)})
                ],
            )
        self._replace(gone, [], note)
        self._log(f"removed {info.level.value} {code}", note)
        return self

    # ------------------------------------------------------------------ result

    def migration(self) -> tuple[MigrationEntry, ...]:
        """Migration entries (relative to the parent) implied by the edits so far."""
        by_target: dict[str, list[str]] = {}
        entries: list[MigrationEntry] = []
        for code, now in self.fate.items():
            if len(now) == 1:
                by_target.setdefault(now[0], []).append(code)
        done: set[str] = set()
        for code, now in self.fate.items():
            note = self.notes.get(code, "")
            if not now:
                entries.append(MigrationEntry(kind=ChangeKind.REMOVE, old=(code,), note=note))
            elif len(now) > 1:
                entries.append(
                    MigrationEntry(kind=ChangeKind.SPLIT, old=(code,), new=now, note=note)
                )
            elif code not in done:
                group = by_target[now[0]]
                done.update(group)
                if len(group) > 1:
                    notes = {self.notes.get(c, "") for c in group} - {""}
                    entries.append(
                        MigrationEntry(
                            kind=ChangeKind.MERGE,
                            old=tuple(group),
                            new=now,
                            note="; ".join(sorted(notes)),
                        )
                    )
                elif now[0] != code:
                    entries.append(
                        MigrationEntry(kind=ChangeKind.RENAME, old=(code,), new=now, note=note)
                    )
        return tuple(entries)

    def build(self) -> Codebook:
        """The new version: validated, changelog and migration filled in."""
        changelog = "\n".join(x for x in [self.summary, "\n".join(self.lines)] if x)
        if not changelog:
            raise _err("missing-key", "a new version needs a changelog (give a summary or edit)")
        cb = self.current.model_copy(update={"changelog": changelog, "migration": self.migration()})
        cb = Codebook.model_validate(cb.model_dump())  # re-run field checks (patterns, sizes)
        validate(cb)
        check_migration(self.parent, cb)
        return cb


def next_version(parent: Codebook, changelog: str) -> CodebookDraft:
    """Start the version after ``parent`` (same as ``CodebookDraft(parent, changelog)``)."""
    return CodebookDraft(parent, changelog)


def add_leaf(cb: Codebook, subcode: str, leaf: Leaf, *, changelog: str = "") -> Codebook:
    """The next version of ``cb`` with ``leaf`` added under ``subcode``."""
    return CodebookDraft(cb, changelog).add_leaf(subcode, leaf).build()


def add_subcode(cb: Codebook, dimension: str, subcode: Subcode, *, changelog: str = "") -> Codebook:
    """The next version of ``cb`` with ``subcode`` added to ``dimension``."""
    return CodebookDraft(cb, changelog).add_subcode(dimension, subcode).build()


def rename_code(cb: Codebook, code: str, new_id: str, *, changelog: str = "") -> Codebook:
    """The next version of ``cb`` with ``code`` renamed to ``new_id``."""
    return CodebookDraft(cb, changelog).rename(code, new_id).build()


def merge_subcodes(
    cb: Codebook,
    subcodes: Sequence[str],
    into: str,
    *,
    label: str | None = None,
    definition: str | None = None,
    changelog: str = "",
) -> Codebook:
    """The next version of ``cb`` with ``subcodes`` merged into ``into``."""
    draft = CodebookDraft(cb, changelog)
    return draft.merge_subcodes(subcodes, into, label=label, definition=definition).build()


def split_subcode(
    cb: Codebook,
    subcode: str,
    into: Sequence[Subcode],
    *,
    leaf_parents: Mapping[str, str] | None = None,
    changelog: str = "",
) -> Codebook:
    """The next version of ``cb`` with ``subcode`` split into ``into``."""
    draft = CodebookDraft(cb, changelog)
    return draft.split_subcode(subcode, into, leaf_parents=leaf_parents).build()


def remove_code(cb: Codebook, code: str, *, changelog: str = "") -> Codebook:
    """The next version of ``cb`` without ``code``."""
    return CodebookDraft(cb, changelog).remove(code).build()
