"""The codebook models: parts, dimensions, subcodes, leaves, migration entries.

A codebook has parts (``retrieval`` applied to (claim, passage) units, ``verification``
applied to (claim, passages, reasoning, verdict) units). Each part has dimensions (steps, for
verification); each dimension has subcodes, exactly one of which is the high-quality
(correct) one; subcodes may hold finer leaves found during saturation.

Every id (dimension, subcode, leaf) is unique across one codebook, so a bare id names one
code; ids use only ``[a-z0-9_]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from enum import StrEnum
from functools import cached_property
from typing import Any, NamedTuple, Self, TypeVar

from pydantic import Field, model_validator

from failcodes.contract import FrozenModel
from failcodes.errors import LeafError, MissingPartError, choice
from failcodes.hashing import content_hash

ID_PATTERN = r"^[a-z0-9_]+$"
"""Allowed characters of dimension, subcode and leaf ids."""

NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"
"""Allowed characters of a codebook name (it becomes part of the file name)."""


#: What a :class:`Codebook` computes once from its content and keeps (forgotten by a copy).
_CACHED = ("hash", "_ref")

#: A subcode or a dimension (the models looked up by id).
_Code = TypeVar("_Code", "Subcode", "Dimension")


class UnitKind(StrEnum):
    """Which codebook part applies to a unit."""

    RETRIEVAL = "retrieval"
    VERIFICATION = "verification"


class CodebookRef(FrozenModel):
    """Exactly which codebook an annotation was made under (annotations cite the codebook)."""

    name: str
    version: int
    hash: str

    def __str__(self) -> str:
        return f"{self.name}@{self.version}+{self.hash[:12]}"


class _CodeFields(FrozenModel):
    """The fields a coder reads for a subcode or a leaf (their order is the file's)."""

    id: str = Field(pattern=ID_PATTERN, description="Unique across the codebook; [a-z0-9_].")
    label: str = Field(description="Short human-readable name.")
    definition: str = Field(description="What the pattern is, in one or two sentences.")
    include: tuple[str, ...] = Field(default=(), description="Inclusion rules.")
    exclude: tuple[str, ...] = Field(default=(), description="Exclusion rules.")
    examples: tuple[str, ...] = Field(default=(), description="Short concrete examples.")


def _by_id(codes: Iterable[_Code], code_id: str) -> _Code:
    """The first of ``codes`` whose id is ``code_id`` (KeyError if none)."""
    for code in codes:
        if code.id == code_id:
            return code
    raise KeyError(code_id)


class Leaf(_CodeFields):
    """A concrete pattern that rolls up to one subcode."""


class Origin(StrEnum):
    """Where a subcode comes from (shown in the codebook table and Tables 8-9)."""

    SEED = "seed"  # named in the seed paper's codebook (seed 001, Tables 8-9)
    SEED_SPLIT = "seed_split"  # one of the parts failcodes split a seed code into
    ADDED = "added"  # added by failcodes (or by a saturation round), not in the seed


class Subcode(_CodeFields):
    """One code a coder may assign within a dimension."""

    definition: str = Field(description="What the code means, in one or two sentences.")
    high_quality: bool = Field(
        default=False, description="The one high-quality (correct) subcode of its dimension."
    )
    leaves: tuple[Leaf, ...] = Field(
        default=(), description="Finer patterns rolling up to this subcode."
    )
    origin: Origin | None = Field(
        default=None,
        description="seed (from the seed paper's codebook), seed_split (part of a seed code "
        "failcodes split) or added (by failcodes or saturation); not part of the hash.",
    )
    seed_code: str | None = Field(
        default=None,
        description="The seed paper's name for this code where it differs (renamed or split).",
    )


class Dimension(FrozenModel):
    """An evidence-quality dimension (retrieval) or a reasoning step (verification)."""

    id: str = Field(pattern=ID_PATTERN, description="Unique across the codebook; [a-z0-9_].")
    label: str = Field(description="Short human-readable name.")
    definition: str = Field(description="The question this dimension answers.")
    subcodes: tuple[Subcode, ...] = Field(
        min_length=1, description="Exactly one high-quality subcode and at least one other."
    )
    multi_label: bool = Field(
        default=False,
        description="Several low-quality subcodes may co-occur in one unit (the high-quality "
        "subcode stands alone). Single-label (false) is the default.",
    )

    @property
    def high_quality_code(self) -> str:
        """The id of the dimension's single high-quality subcode."""
        return next(s.id for s in self.subcodes if s.high_quality)

    def code_ids(self) -> list[str]:
        """All subcode ids in order."""
        return [s.id for s in self.subcodes]

    def subcode(self, subcode_id: str) -> Subcode:
        """Return the subcode with this id (KeyError if absent)."""
        return _by_id(self.subcodes, subcode_id)


class Part(FrozenModel):
    """The retrieval or the verification half of a codebook."""

    id: UnitKind = Field(description="Which units this part codes: retrieval or verification.")
    label: str = Field(description="Short human-readable name.")
    definition: str = Field(default="", description="What this part is applied to.")
    dimensions: tuple[Dimension, ...] = Field(min_length=1)

    def dimension(self, dimension_id: str) -> Dimension:
        """Return the dimension with this id (KeyError if absent)."""
        return _by_id(self.dimensions, dimension_id)


class ChangeKind(StrEnum):
    """What a migration entry does to the codes of the parent version."""

    RENAME = "rename"  # one old id -> one new id, same meaning
    MERGE = "merge"  # several old ids -> one id (may be one of the old ones)
    SPLIT = "split"  # one old id -> several new ids: old annotations need re-coding
    REMOVE = "remove"  # old ids dropped without replacement: old annotations need re-coding


class MigrationEntry(FrozenModel):
    """One explicit change from the parent version, stored in the newer version's file."""

    kind: ChangeKind
    old: tuple[str, ...] = Field(min_length=1, description="Ids in the parent version.")
    new: tuple[str, ...] = Field(default=(), description="Ids in this version.")
    note: str = Field(default="", description="Why the change was made.")

    @model_validator(mode="after")
    def _arity(self) -> MigrationEntry:
        expected = {
            ChangeKind.RENAME: (len(self.old) == 1 and len(self.new) == 1, "1 old id and 1 new"),
            ChangeKind.MERGE: (len(self.old) >= 2 and len(self.new) == 1, ">= 2 old and 1 new"),
            ChangeKind.SPLIT: (len(self.old) == 1 and len(self.new) >= 2, "1 old and >= 2 new"),
            ChangeKind.REMOVE: (len(self.new) == 0, "old ids and no new ids"),
        }
        ok, need = expected[self.kind]
        if not ok:
            raise ValueError(
                f"a {self.kind.value} entry needs {need} (got old={list(self.old)}, "
                f"new={list(self.new)})"
            )
        return self

    def targets(self) -> dict[str, str | None]:
        """Old id -> new id, or None where old annotations must be re-coded."""
        if self.kind in (ChangeKind.RENAME, ChangeKind.MERGE):
            return dict.fromkeys(self.old, self.new[0])
        return dict.fromkeys(self.old)


class CodeLevel(StrEnum):
    """Where a code sits in the hierarchy."""

    DIMENSION = "dimension"
    SUBCODE = "subcode"
    LEAF = "leaf"


class CodeInfo(NamedTuple):
    """Where one id sits: its level, part, dimension and (for leaves) parent subcode."""

    level: CodeLevel
    part: UnitKind
    dimension: str
    subcode: str | None  # the subcode itself, or a leaf's parent; None for dimensions


class CodebookHeader(FrozenModel):
    """The fields a codebook version and its file form (``CodebookDocument``) share."""

    name: str = Field(pattern=NAME_PATTERN, description="Codebook name, shared by all versions.")
    version: int = Field(ge=1, description="1 for the first version, then parent_version + 1.")
    parent_version: int | None = Field(
        default=None, description="The version this one was derived from (null for version 1)."
    )
    changelog: str = Field(default="", description="What changed from the parent, and why.")
    parts: tuple[Part, ...] = Field(min_length=1)

    def header(self) -> dict[str, Any]:
        """Name, version, parent version and changelog: what both forms carry over as is."""
        return {
            "name": self.name,
            "version": self.version,
            "parent_version": self.parent_version,
            "changelog": self.changelog,
        }


class Codebook(CodebookHeader):
    """One version of a codebook."""

    migration: tuple[MigrationEntry, ...] = Field(
        default=(),
        description="Renames, merges, splits and removals of codes of the parent version.",
    )

    def part(self, kind: UnitKind | str) -> Part:
        """Return the part that applies to units of ``kind``.

        ``kind`` may be its word: ``cb.part("verification")``; a misspelt one
        (``"verificaton"``) was an AttributeError ('str' object has no attribute 'value').
        """
        kind = choice(UnitKind, kind, "kind")
        for part in self.parts:
            if part.id == kind:
                return part
        have = ", ".join(part.id for part in self.parts)
        raise MissingPartError(
            f"codebook {self.name}@{self.version} has no '{kind.value}' part (it has: {have}); "
            f"use a codebook with a '{kind.value}' part"
        )

    @cached_property
    def hash(self) -> str:
        """Content hash over everything that defines the codes.

        Not the changelog, the migration or a subcode's provenance (``origin``, ``seed_code``);
        ``multi_label`` only when true, so files written before the field existed keep their
        hash (and their annotations stay valid).

        Computed once per codebook (the model is frozen; :meth:`model_copy` forgets it): it
        was recomputed for every annotation read, 61-73% of ``attribute`` and ``labelstudio
        export`` at paper scale (issue 30).
        """
        body = self.model_dump(mode="json", exclude={"changelog", "migration"})
        for part in body["parts"]:
            for dim in part["dimensions"]:
                if not dim.get("multi_label"):
                    dim.pop("multi_label", None)
                for sub in dim["subcodes"]:
                    sub.pop("origin", None)
                    sub.pop("seed_code", None)
        return content_hash(body, length=64)

    @property
    def id(self) -> str:
        """``name@version``, the way people cite a codebook."""
        return f"{self.name}@{self.version}"

    def ref(self) -> CodebookRef:
        """The reference an annotation records: name, version and content hash."""
        return self._ref

    @cached_property
    def _ref(self) -> CodebookRef:
        return CodebookRef(name=self.name, version=self.version, hash=self.hash)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy (see pydantic), without the cached hash: an update changes the content."""
        copied = super().model_copy(update=update, deep=deep)
        for name in _CACHED:
            copied.__dict__.pop(name, None)
        return copied

    def dimensions(self) -> Iterator[tuple[Part, Dimension]]:
        """Every (part, dimension) pair in order."""
        for part in self.parts:
            for dim in part.dimensions:
                yield part, dim

    def dimension(self, dimension_id: str) -> Dimension:
        """Return the dimension with this id, whatever its part (KeyError if absent)."""
        return _by_id((dim for _, dim in self.dimensions()), dimension_id)

    def code_lists(self) -> dict[str, list[str]]:
        """Every dimension's full code list (dimension id -> its code ids, in order)."""
        return {dim.id: dim.code_ids() for _, dim in self.dimensions()}

    def subcode(self, subcode_id: str) -> Subcode:
        """Return the subcode with this id (KeyError if absent)."""
        info = self.codes().get(subcode_id)
        if info is None or info.level is not CodeLevel.SUBCODE:
            raise KeyError(subcode_id)
        return self.dimension(info.dimension).subcode(subcode_id)

    def leaf(self, leaf_id: str) -> Leaf:
        """Return the leaf with this id (KeyError if absent)."""
        info = self.codes().get(leaf_id)
        if info is None or info.level is not CodeLevel.LEAF or info.subcode is None:
            raise KeyError(leaf_id)
        return next(lf for lf in self.subcode(info.subcode).leaves if lf.id == leaf_id)

    def codes(self) -> dict[str, CodeInfo]:
        """Every id (dimensions, subcodes, leaves) with where it sits, in document order."""
        out: dict[str, CodeInfo] = {}
        for part, dim in self.dimensions():
            out[dim.id] = CodeInfo(CodeLevel.DIMENSION, part.id, dim.id, None)
            for sub in dim.subcodes:
                out[sub.id] = CodeInfo(CodeLevel.SUBCODE, part.id, dim.id, sub.id)
                for leaf in sub.leaves:
                    out[leaf.id] = CodeInfo(CodeLevel.LEAF, part.id, dim.id, sub.id)
        return out

    def leaf_parents(self) -> dict[str, str]:
        """Leaf id -> the subcode id it rolls up to."""
        return {
            code: info.subcode
            for code, info in self.codes().items()
            if info.level is CodeLevel.LEAF and info.subcode is not None
        }

    def high_quality_codes(self, kind: UnitKind) -> dict[str, str]:
        """Dimension id -> its high-quality subcode id, for the part coding ``kind``."""
        return {dim.id: dim.high_quality_code for dim in self.part(kind).dimensions}


def roll_up(cb: Codebook, leaves: dict[str, list[str]]) -> dict[str, str]:
    """Roll leaf codes up to subcodes: ``{dimension: [leaf ids]}`` -> ``{dimension: subcode}``.

    Every leaf must belong to the dimension it is listed under, and all leaves of one
    dimension must share a parent subcode (a unit gets one subcode per dimension).
    """
    parents = cb.leaf_parents()
    codes = cb.codes()
    out: dict[str, str] = {}
    for dim, ids in leaves.items():
        subs: set[str] = set()
        for leaf in ids:
            if leaf not in parents:
                raise LeafError(f"'{leaf}' is not a leaf of {cb.id}")
            if codes[leaf].dimension != dim:
                raise LeafError(f"leaf '{leaf}' belongs to '{codes[leaf].dimension}', not '{dim}'")
            subs.add(parents[leaf])
        if len(subs) > 1:
            raise LeafError(f"leaves of '{dim}' roll up to several subcodes: {sorted(subs)}")
        if subs:
            out[dim] = subs.pop()
    return out
