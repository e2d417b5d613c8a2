"""Human reviews after a codebook bump: carried to the current version, or stale.

:func:`bring_reviews` sorts each review pulled into a study's ``review/`` as **current**,
**migrated** (:func:`failcodes.migration.migrate`), **superseded** (reviewed again under the
target version by the same coder), **repeated** (the same coder's review held twice: the
latest by ``created_at``, the later file on a tie, counts; where one of them has no
``created_at`` of its own, the one read later, files by name and lines in order) or
**stale**; docs/study.md ("Reviews pulled before the bump") gives the rules and what the
report says of each.
Pure: annotations and codebooks in, the sorting out (no file is read here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from failcodes.annotations import Annotation, Status
from failcodes.codebook import Codebook, MigrationMap, migration_path
from failcodes.errors import CodebookError
from failcodes.migration import added_rules, finer_codes, migrate


@dataclass
class FileReviews:
    """What became of one review file's annotations."""

    current: int = 0
    migrated: int = 0
    #: made under an older version, the unit reviewed again under the target by the same coder
    superseded: int = 0
    #: the same coder's review of the unit again (here or in another file): the latest counts
    repeated: int = 0
    #: the files holding the reviews that count instead of this file's repeated ones
    repeated_in: set[str] = field(default_factory=set)
    #: of ``repeated``, those decided by reading order: a review of the unit and coder had no
    #: ``created_at`` of its own (a hand-written file)
    untimed: int = 0
    #: unit id -> why it is stale (one per annotation left out)
    stale: dict[str, str] = field(default_factory=dict)
    #: the versions its migrated and stale reviews were made under
    versions: set[int] = field(default_factory=set)
    #: steps its migrated reviews coded with one code that take several now (v1 -> v2): a
    #: co-occurring code the reviewer could not give may be missing
    widened: set[str] = field(default_factory=set)


@dataclass
class ReviewVersions:
    """Reviews brought to one codebook version: the usable ones and, per file, what happened."""

    target: Codebook
    reviews: list[Annotation] = field(default_factory=list)
    files: dict[str, FileReviews] = field(default_factory=dict)
    #: per file, the reviews left out (as they were made)
    stale_reviews: dict[str, list[Annotation]] = field(default_factory=dict)
    #: (unit id, unit kind, coder) of migrated scored reviews -> their widened steps
    widened: dict[tuple[str, object, str], tuple[str, ...]] = field(default_factory=dict)

    @property
    def migrated(self) -> int:
        """Reviews carried from an earlier version."""
        return sum(f.migrated for f in self.files.values())

    @property
    def stale(self) -> int:
        """Reviews left out (to be reviewed again under the target version)."""
        return sum(len(f.stale) for f in self.files.values())

    def stale_units(self, name: str, kind: object) -> list[str]:
        """Unit ids of file ``name``'s stale reviews of unit kind ``kind``, in file order."""
        by_unit = {a.unit_id: a for a in self.stale_reviews.get(name, [])}
        return [u for u, a in by_unit.items() if a.unit_kind == kind]


def _maps(books: Mapping[int, Codebook], target: Codebook) -> dict[int, MigrationMap | str]:
    """Per earlier version: the map to ``target``, or why there is none."""
    out: dict[int, MigrationMap | str] = {}
    lineage = list(books.values())
    for version in sorted(books):
        if version >= target.version:
            continue
        try:
            out[version] = migration_path(lineage, version, target.version)
        except CodebookError as exc:
            out[version] = f"no migration path from version {version} ({exc})"
    return out


def bring_reviews(
    files: Mapping[str, Sequence[Annotation]], target: Codebook, books: Mapping[int, Codebook]
) -> ReviewVersions:
    """Sort the reviews of each file (name -> annotations) against ``target`` (module doc).

    ``books``: the codebook's versions by number (the study's lineage), ``target`` among them.
    """
    out = ReviewVersions(target=target)
    maps = _maps(books, target)
    here = (target.name, target.version, target.hash)

    def current(ann: Annotation) -> bool:
        return (ann.codebook.name, ann.codebook.version, ann.codebook.hash) == here

    # a unit the same coder reviewed again under the target version (any file): that review
    # counts, the older one is superseded (neither counted twice nor re-opened)
    again = {(a.unit_id, a.unit_kind, a.coder) for m in files.values() for a in m if current(a)}
    kept: list[tuple[str, Annotation]] = []  # (file, review) of the usable reviews, in order
    untimed: set[tuple[str, object, str]] = set()  # (unit, kind, coder) with an untimed review
    for name, made in files.items():
        mine = out.files.setdefault(name, FileReviews())
        for ann in made:
            if "created_at" not in ann.model_fields_set:  # the model's default: the read's clock
                untimed.add((ann.unit_id, ann.unit_kind, ann.coder))
            if current(ann):
                mine.current += 1
                kept.append((name, ann))
                continue
            mine.versions.add(ann.codebook.version)
            if (ann.unit_id, ann.unit_kind, ann.coder) in again:
                mine.superseded += 1
                continue
            ref = ann.codebook
            reason = _stale_reason(ann, target, books, maps)
            if reason is None:
                mapping = maps[ref.version]
                assert isinstance(mapping, MigrationMap)
                outcome = migrate(ann, mapping)
                finer = finer_codes(
                    outcome.annotation, added_rules(books, ref.version, target.version)
                )
                carried = not outcome.needs_recoding and not finer
                if carried or ann.status is not Status.SCORED:
                    mine.migrated += 1
                    kept.append((name, outcome.annotation))
                    if outcome.widened and ann.status is Status.SCORED:
                        mine.widened.update(outcome.widened)
                        out.widened[(ann.unit_id, ann.unit_kind, ann.coder)] = outcome.widened
                    continue
                reason = "; ".join(
                    [f"{dim}: {why}" for dim, why in sorted(outcome.recode.items())] + finer
                )
            mine.stale[ann.unit_id] = reason
            out.stale_reviews.setdefault(name, []).append(ann)
    out.reviews = _latest(kept, out.files, untimed)
    return out


def _latest(
    kept: Sequence[tuple[str, Annotation]],
    files: Mapping[str, FileReviews],
    untimed: set[tuple[str, object, str]],
) -> list[Annotation]:
    """One review per unit and coder: the latest; the others counted in their file.

    Where one of a unit and coder's reviews has no ``created_at`` of its own (``untimed``),
    the one read last counts: such a review took the clock of the read as its time, so a
    hand-written review file beat every pulled review of its units, however much later those
    were made, and the note called it the latest.
    """
    latest: dict[tuple[str, object, str], int] = {}
    for i, (_, ann) in enumerate(kept):
        key = (ann.unit_id, ann.unit_kind, ann.coder)
        if (
            key not in latest
            or key in untimed
            or _utc(ann.created_at) >= _utc(kept[latest[key]][1].created_at)
        ):
            latest[key] = i
    counted = set(latest.values())
    for i, (name, ann) in enumerate(kept):
        if i not in counted:
            key = (ann.unit_id, ann.unit_kind, ann.coder)
            files[name].repeated += 1
            files[name].untimed += key in untimed
            files[name].repeated_in.add(kept[latest[key]][0])
    return [ann for i, (_, ann) in enumerate(kept) if i in counted]


def _utc(when: datetime) -> datetime:
    """A review's time, one without an offset read as UTC (the tools write UTC).

    A hand-written review file's ``2026-11-30T10:00:00`` beside a pulled ``...Z`` stopped the
    report with a traceback (can't compare offset-naive and offset-aware datetimes).
    """
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _stale_reason(
    ann: Annotation,
    target: Codebook,
    books: Mapping[int, Codebook],
    maps: Mapping[int, MigrationMap | str],
) -> str | None:
    """Why ``ann`` cannot be migrated to ``target`` (None: a map can try)."""
    ref = ann.codebook
    if ref.name != target.name:
        return f"made under another codebook ({ref.name}), not {target.name}"
    if ref.version >= target.version:
        return f"made under version {ref.version}, not an earlier one than {target.version}"
    book = books.get(ref.version)
    if book is None:
        return f"version {ref.version} is not in the study's codebook lineage"
    if book.hash != ref.hash:
        return f"made under another content of version {ref.version} (hash {ref.hash[:12]})"
    mapping = maps.get(ref.version)
    if not isinstance(mapping, MigrationMap):
        return mapping or f"no migration path from version {ref.version}"
    return None
