"""Carry annotations forward across codebook versions (annotations cite the codebook).

:func:`migrate` relabels one annotation through a :class:`~failcodes.codebook.MigrationMap`
(``codebook.diff(old, new).migration`` or ``codebook.migration_path(...)``) and says which
dimensions must be coded again. It lives outside :mod:`failcodes.codebook` because the
codebook is data: it knows nothing of annotations or units.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import Field

from failcodes.annotations import NOT_ASSESSABLE, Annotation, Status
from failcodes.codebook import Codebook, CodeLevel, DiffKind, MigrationMap, diff
from failcodes.contract import FrozenModel
from failcodes.errors import CodebookError, MixedCodebookError
from failcodes.spelling import unseen_note


class MigrationOutcome(FrozenModel):
    """One annotation carried forward: the migrated annotation and what needs re-coding."""

    annotation: Annotation
    recode: dict[str, str] = Field(
        default_factory=dict, description="Dimension id -> why it must be coded again."
    )
    relabelled: dict[str, tuple[str, str]] = Field(
        default_factory=dict, description="Code changes made: old id -> (dimension, new id)."
    )
    dropped_dimensions: tuple[str, ...] = ()
    widened: tuple[str, ...] = Field(
        default=(),
        description="Dimensions (new ids) coded single-label here that take several codes in "
        "the target version: the one code is kept (as a set of one), a co-occurring code may "
        "be missing.",
    )

    @property
    def needs_recoding(self) -> bool:
        """True when at least one dimension must be coded again."""
        return bool(self.recode)


def migrate(annotation: Annotation, mapping: MigrationMap) -> MigrationOutcome:
    """Carry one annotation to the map's target version, or flag what must be re-coded.

    Codes are relabelled through the map; a split or removed code, and a dimension new in
    the target version, put that dimension in ``recode`` (its code is left out). A dimension
    that became multi-label keeps its one code as a set of one and is listed in
    ``widened`` (a co-occurring code the old rules left out may be missing). The
    annotation must have been made under exactly the map's source version (same hash).
    """
    ref = annotation.codebook
    if ref.name != mapping.name or ref.version != mapping.from_version:
        raise CodebookError(
            f"annotation of unit {annotation.unit_id} was made under {ref}, but the map goes "
            f"from {mapping.name}@{mapping.from_version}",
            rule="version-parent",
        )
    if ref.hash != mapping.from_hash:
        raise CodebookError(
            f"annotation of unit {annotation.unit_id} was made under {ref}, a different "
            f"content of version {ref.version} (map expects hash {mapping.from_hash[:12]})",
            rule="version-parent",
        )
    target = mapping.to.version
    codes: dict[str, str] = {}
    leaves: dict[str, list[str]] = {}
    recode: dict[str, str] = {}
    relabelled: dict[str, tuple[str, str]] = {}
    dropped: list[str] = []

    def new_dim(dim: str) -> str | None:
        if dim not in mapping.dimensions:
            raise CodebookError(
                f"annotation of unit {annotation.unit_id} codes unknown dimension '{dim}'",
                rule="migration-unknown-code",
            )
        return mapping.dimensions[dim]

    def new_code(code: str) -> str | None:
        if code not in mapping.codes:
            raise CodebookError(
                f"annotation of unit {annotation.unit_id} uses '{code}', not a code of "
                f"{mapping.name}@{mapping.from_version}{unseen_note(code)}",
                rule="migration-unknown-code",
            )
        return mapping.codes[code]

    code_sets: dict[str, list[str]] = {}
    widened: list[str] = []
    for dim in annotation.codes:
        ndim = new_dim(dim)
        if ndim is None:
            dropped.append(dim)
            continue
        if annotation.codes[dim] == NOT_ASSESSABLE:  # not a code of any version: stays
            codes[ndim] = NOT_ASSESSABLE
            continue
        new_set: list[str] = []
        for code in annotation.code_set(dim):
            ncode = new_code(code)
            if ncode is None:
                recode[ndim] = f"'{code}' was split or removed in version {target}"
                break
            if ncode not in new_set:
                new_set.append(ncode)
            if ncode != code:
                relabelled[code] = (ndim, ncode)
        else:
            codes[ndim] = new_set[0]
            if dim in annotation.code_sets or ndim in mapping.widened:
                code_sets[ndim] = new_set
                if dim not in annotation.code_sets:
                    widened.append(ndim)
    for dim, ids in annotation.leaves.items():
        ndim = new_dim(dim)
        if ndim is None:
            continue
        kept: list[str] = []
        for leaf in ids:
            nleaf = new_code(leaf)
            if nleaf is None:
                recode.setdefault(ndim, f"leaf '{leaf}' was split or removed in version {target}")
            elif nleaf not in kept:
                kept.append(nleaf)
                if nleaf != leaf:
                    relabelled[leaf] = (ndim, nleaf)
        if kept:
            leaves[ndim] = kept
    if annotation.status is Status.SCORED:
        for dim, kind in mapping.added_dimensions.items():
            if kind == annotation.unit_kind:
                recode.setdefault(dim, f"dimension '{dim}' is new in version {target}")
    evidence = {
        ndim: ev
        for dim, ev in annotation.evidence.items()
        if (ndim := mapping.dimensions.get(dim)) is not None
    }
    migrated = annotation.model_copy(
        update={
            "codebook": mapping.to,
            "codes": codes,
            "code_sets": code_sets,
            "leaves": leaves,
            "evidence": evidence,
        }
    )
    return MigrationOutcome(
        annotation=migrated,
        recode=recode,
        relabelled=relabelled,
        dropped_dimensions=tuple(dropped),
        widened=tuple(widened),
    )


def added_rules(books: Mapping[int, Codebook], old: int, new: int) -> tuple[set[str], set[str]]:
    """Dimensions that gained a subcode and subcodes that gained a leaf, from ``old`` to ``new``.

    ``books``: the lineage's versions by number (every one from ``old`` to ``new``).
    """
    dims: set[str] = set()
    parents: set[str] = set()
    final = books[new].codes()
    for v in range(old, new):
        for change in diff(books[v], books[v + 1]).of_kind(DiffKind.ADDED):
            if change.level is CodeLevel.SUBCODE:
                dims.add(change.dimension)
            elif change.level is CodeLevel.LEAF:
                for leaf in change.new:
                    info = final.get(leaf)
                    if info is not None and info.subcode is not None:
                        parents.add(info.subcode)
    return dims, parents


def finer_codes(annotation: Annotation, added: tuple[set[str], set[str]]) -> list[str]:
    """Why a migrated annotation must still be coded again: a finer code now exists for it.

    ``added``: :func:`added_rules` of the versions it crossed. A dimension it coded gained a
    subcode, or a subcode it gave gained a leaf (the new code may fit the unit better): the
    rule ``saturate``'s re-code flags and ``failcodes recode`` follow. Empty: carried as is.
    """
    dims, parents = added
    codes = annotation.codes
    touched = [f"{d}: new subcode" for d in sorted(dims) if codes.get(d) is not None]
    touched += [f"{d}: {c} gained a leaf" for d, c in sorted(codes.items()) if c in parents]
    return touched


MigrationArg = MigrationMap | Sequence[MigrationMap] | Mapping[str, str] | None


def pool_annotations(
    annotations: Iterable[Annotation], migration: MigrationArg = None
) -> list[Annotation]:
    """Bring annotations to one codebook hash, or refuse.

    With a :class:`MigrationMap` (or several, applied in turn), annotations under a map's
    source hash are migrated (codes that must be re-coded are dropped, i.e. missing). With a
    plain ``{old_code: new_code}`` dict, annotations not under the newest codebook version
    have their codes relabelled and are counted as made under it. Without a migration,
    mixed hashes raise :class:`MixedCodebookError`.
    """
    items = list(annotations)
    if not items:
        return items
    if isinstance(migration, MigrationMap):
        maps: list[MigrationMap] = [migration]
    elif isinstance(migration, Sequence) and not isinstance(migration, str):
        maps = list(migration)
    else:
        maps = []
    for mapping in maps:
        items = [
            migrate(a, mapping).annotation if a.codebook.hash == mapping.from_hash else a
            for a in items
        ]
    refs = {a.codebook for a in items}
    if len(refs) > 1 and isinstance(migration, Mapping):
        target = max(refs, key=lambda r: r.version)
        if sum(1 for r in refs if r.version == target.version) > 1:
            raise MixedCodebookError(
                f"two codebooks share the newest version {target.version}: "
                f"{sorted(str(r) for r in refs)}; cannot tell which one to migrate to"
            )
        items = [
            a
            if a.codebook == target
            else a.model_copy(
                update={
                    "codebook": target,
                    "codes": {d: migration.get(c, c) for d, c in a.codes.items()},
                }
            )
            for a in items
        ]
        refs = {target}
    if len(refs) > 1:
        raise MixedCodebookError(
            "annotations were made under different codebooks "
            f"({', '.join(sorted(str(r) for r in refs))}); agreement would compare codes "
            "with different meanings. Pass a migration (failcodes.codebook.MigrationMap from "
            "`codebook.diff`, or a {old_code: new_code} map) to pool them"
        )
    return items
