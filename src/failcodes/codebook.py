"""The error codebook as code: models, loading, validation, hashing, diffing, migration.

A codebook has parts (``retrieval`` applied to (claim, passage) units, ``verification``
applied to (claim, passages, reasoning, verdict) units). Each part has dimensions (steps, for
verification); each dimension has subcodes, exactly one of which is the high-quality
(correct) one; subcodes may hold finer leaves found during saturation.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from failcodes.hashing import content_hash
from failcodes.units import UnitKind


class Leaf(BaseModel):
    """A concrete pattern that rolls up to one subcode."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    label: str
    definition: str
    examples: tuple[str, ...] = ()


class Subcode(BaseModel):
    """One code a coder may assign within a dimension."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    label: str
    definition: str
    include: tuple[str, ...] = Field(default=(), description="Inclusion rules.")
    exclude: tuple[str, ...] = Field(default=(), description="Exclusion rules.")
    examples: tuple[str, ...] = ()
    high_quality: bool = Field(
        default=False, description="The one high-quality (correct) subcode of its dimension."
    )
    leaves: tuple[Leaf, ...] = ()


class Dimension(BaseModel):
    """An evidence-quality dimension (retrieval) or a reasoning step (verification)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    label: str
    definition: str
    subcodes: tuple[Subcode, ...]

    @property
    def high_quality_code(self) -> str:
        """The id of the dimension's single high-quality subcode."""
        return next(s.id for s in self.subcodes if s.high_quality)

    def code_ids(self) -> list[str]:
        """All subcode ids in order."""
        return [s.id for s in self.subcodes]


class Part(BaseModel):
    """The retrieval or the verification half of a codebook."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: UnitKind
    label: str
    dimensions: tuple[Dimension, ...]

    def dimension(self, dimension_id: str) -> Dimension:
        """Return the dimension with this id (KeyError if absent)."""
        for dim in self.dimensions:
            if dim.id == dimension_id:
                return dim
        raise KeyError(dimension_id)


class Codebook(BaseModel):
    """One version of a codebook."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: int = Field(ge=1)
    parent_version: int | None = None
    changelog: str = ""
    parts: tuple[Part, ...]

    def part(self, kind: UnitKind) -> Part:
        """Return the part that applies to units of ``kind``."""
        for part in self.parts:
            if part.id == kind:
                return part
        raise KeyError(kind.value)

    @property
    def hash(self) -> str:
        """Content hash over everything that defines the codes (not the changelog)."""
        body = self.model_dump(mode="json", exclude={"changelog"})
        return content_hash(body, length=64)
