"""A saturation project on disk: plain JSON/JSONL/YAML files a person can read and continue.

The layout of a project folder (default ``annotations/<name>/``), file by file:
docs/saturation.md ("On disk").

Whole files are written atomically (temp file in the same folder, fsync, ``os.replace``);
journals are appended one fsynced line at a time, and a torn last line left by a killed
process is ignored on read and cut off before the next append.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from failcodes.annotations import Annotation
from failcodes.codebook import Codebook
from failcodes.errors import InputError
from failcodes.fileio import atomic_write_text, write_json
from failcodes.jsonio import parse_json, read_json
from failcodes.recoding import RecodeEntry
from failcodes.saturation.models import (
    Decision,
    ProjectConfig,
    Proposal,
    RecodeFlag,
    RoundRecord,
    StopState,
)
from failcodes.units import Unit

M = TypeVar("M", bound=BaseModel)

DEFAULT_ROOT = Path("annotations")


class SaturationError(InputError):
    """A saturation project is missing, inconsistent, or asked to do something out of order."""


def _repair_tail(path: Path) -> None:
    """Cut a torn last line (no trailing newline) left by a killed writer."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
        fh.seek(0)
        data = fh.read()
        keep = data.rfind(b"\n") + 1
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())


def append_jsonl(path: Path, records: Iterable[BaseModel]) -> None:
    """Append records as JSON lines, fsynced, after repairing a torn tail."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _repair_tail(path)
    with path.open("a", encoding="utf-8") as fh:
        for record in records:
            fh.write(record.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    """Read a JSONL journal; a torn (unterminated, unparsable) last line is ignored."""
    if not path.exists():
        return []
    raw = path.read_text(encoding="utf-8")
    lines = raw.split("\n")
    torn_tail = not raw.endswith("\n")
    out: list[M] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(model.model_validate(parse_json(line, path=path, line=number)))
        except (ValidationError, InputError) as exc:
            if torn_tail and number == len(lines):
                break
            if isinstance(exc, InputError):
                raise
            raise SaturationError(
                f"invalid {model.__name__} record: {exc.errors()[0]['msg']}", path=path, line=number
            ) from exc
    return out


def _read_model(path: Path, model: type[M]) -> M:
    try:
        return model.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SaturationError("file missing from the saturation project", path=path) from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise SaturationError(err["msg"], path=path, field=field) from exc


def _write_model(path: Path, obj: BaseModel) -> None:
    write_json(path, obj, fsync=True)


PROJECT_README = """\
# Saturation project `{name}`

Created by `failcodes saturate init`. Everything the loop knows is in this folder; continue it
from here (any machine, any person) with:

    failcodes saturate status {name} --dir {root}      # where it stands, stop rule, curve
    failcodes saturate round {name} --dir {root}       # next round (or resume a killed one)
    failcodes saturate review {name} --dir {root} --file rounds/rNNNN/review.yaml
    failcodes saturate review {name} --dir {root} --interactive --reviewer YOUR_NAME
    failcodes saturate prune {name} --dir {root}       # list rare leaves; --apply FILE

Files: project.json (settings), pool.jsonl (units), codebooks/ (every version, and the
changes/migration record that produced it), rounds/rNNNN/ (batch, coding journal, proposals,
review file), decisions.jsonl (every human decision: who, when, what), recode.jsonl (units
to re-code after a version change), stop.json (the stop rule and its state), prune/.
Do not edit these by hand except the review and prune files.
"""


class ProjectStore:
    """Read and write one saturation project folder. Holds no state beyond its path."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.config_path = self.root / "project.json"
        self.pool_path = self.root / "pool.jsonl"
        self.decisions_path = self.root / "decisions.jsonl"
        self.recode_path = self.root / "recode.jsonl"
        self.stop_path = self.root / "stop.json"

    # -- creation and config -------------------------------------------------------------
    @classmethod
    def create(
        cls, root: Path, config: ProjectConfig, codebook: Codebook, units: Iterable[Unit]
    ) -> ProjectStore:
        """Create a new project folder; refuses to overwrite an existing project."""
        store = cls(root)
        if store.config_path.exists():
            raise SaturationError("a saturation project already exists here", path=store.root)
        pool = list(units)
        seen: set[str] = set()
        for unit in pool:
            if unit.kind != config.kind:
                raise SaturationError(
                    f"unit {unit.id} is a {unit.kind.value} unit; project grows {config.kind.value}"
                )
            if unit.id in seen:
                raise SaturationError(f"unit {unit.id} appears twice in the pool")
            seen.add(unit.id)
        if not pool:
            raise SaturationError("the unit pool is empty")
        store.root.mkdir(parents=True, exist_ok=True)
        atomic_write_text(
            store.pool_path, "".join(u.model_dump_json() + "\n" for u in pool), fsync=True
        )
        store.write_codebook(codebook)
        atomic_write_text(
            store.root / "README.md",
            PROJECT_README.format(name=config.name, root=store.root),
            fsync=True,
        )
        # project.json last: its presence marks a complete project
        _write_model(store.config_path, config)
        return store

    @classmethod
    def open(cls, root: Path) -> ProjectStore:
        """Open an existing project folder (error naming the path if there is none)."""
        store = cls(root)
        if not store.config_path.exists():
            raise SaturationError(
                "no saturation project here (run `failcodes saturate init` first)", path=store.root
            )
        return store

    def config(self) -> ProjectConfig:
        """The project's settings."""
        return _read_model(self.config_path, ProjectConfig)

    def pool(self) -> list[Unit]:
        """All units of the pool, in file order."""
        return read_jsonl(self.pool_path, Unit)

    # -- codebook lineage ----------------------------------------------------------------
    def codebook_path(self, version: int) -> Path:
        """Path of one version's codebook."""
        return self.root / "codebooks" / f"v{version:04d}.json"

    def changes_path(self, version: int) -> Path:
        """Path of the changelog/migration record that produced ``version``."""
        return self.root / "codebooks" / f"v{version:04d}.changes.json"

    def versions(self) -> list[int]:
        """Versions in the lineage, ascending."""
        folder = self.root / "codebooks"
        if not folder.exists():
            return []
        out = []
        for path in folder.glob("v*.json"):
            stem = path.name.removesuffix(".json")
            if stem[1:].isdigit():
                out.append(int(stem[1:]))
        return sorted(out)

    def codebook(self, version: int | None = None) -> Codebook:
        """One version of the codebook (the newest by default)."""
        if version is None:
            versions = self.versions()
            if not versions:
                raise SaturationError("the project has no codebook", path=self.root)
            version = versions[-1]
        return _read_model(self.codebook_path(version), Codebook)

    def write_codebook(self, codebook: Codebook, changes: dict[str, Any] | None = None) -> None:
        """Add a version to the lineage (the changes record first, then the codebook)."""
        if changes is not None:
            write_json(self.changes_path(codebook.version), changes, fsync=True)
        _write_model(self.codebook_path(codebook.version), codebook)

    def changes(self, version: int) -> dict[str, Any] | None:
        """The changes record that produced ``version`` (None for the seed version)."""
        path = self.changes_path(version)
        if not path.exists():
            return None
        data: dict[str, Any] = read_json(path)
        return data

    # -- rounds --------------------------------------------------------------------------
    def round_dir(self, number: int) -> Path:
        """Folder of one round."""
        return self.root / "rounds" / f"r{number:04d}"

    def round_numbers(self) -> list[int]:
        """Numbers of rounds that have a record, ascending."""
        folder = self.root / "rounds"
        if not folder.exists():
            return []
        return sorted(
            int(p.name[1:])
            for p in folder.iterdir()
            if p.name.startswith("r") and p.name[1:].isdigit() and (p / "round.json").exists()
        )

    def rounds(self) -> list[RoundRecord]:
        """All round records, ascending."""
        return [self.round(n) for n in self.round_numbers()]

    def round(self, number: int) -> RoundRecord:
        """One round's record."""
        return _read_model(self.round_dir(number) / "round.json", RoundRecord)

    def write_round(self, record: RoundRecord) -> None:
        """Write (replace) a round's record."""
        _write_model(self.round_dir(record.number) / "round.json", record)

    def annotations_path(self, number: int) -> Path:
        """The round's coding journal."""
        return self.round_dir(number) / "annotations.jsonl"

    def round_annotations(self, number: int) -> list[Annotation]:
        """Annotations journaled for a round (first one per unit wins)."""
        seen: dict[str, Annotation] = {}
        for ann in read_jsonl(self.annotations_path(number), Annotation):
            seen.setdefault(ann.unit_id, ann)
        return list(seen.values())

    def append_annotation(self, number: int, annotation: Annotation) -> None:
        """Commit one finished unit to the round's journal."""
        append_jsonl(self.annotations_path(number), [annotation])

    def proposals_path(self, number: int) -> Path:
        """The round's proposals file."""
        return self.round_dir(number) / "proposals.json"

    def proposals(self, number: int) -> list[Proposal]:
        """The round's proposals (empty if not proposed yet)."""
        path = self.proposals_path(number)
        if not path.exists():
            return []
        data = read_json(path)
        return [Proposal.model_validate(p) for p in data]

    def write_proposals(self, number: int, proposals: list[Proposal]) -> None:
        """Write the round's proposals atomically."""
        write_json(self.proposals_path(number), proposals, fsync=True)

    def review_path(self, number: int) -> Path:
        """The round's review file."""
        return self.round_dir(number) / "review.yaml"

    # -- decisions, flags, stop state ----------------------------------------------------
    def decisions(self) -> list[Decision]:
        """Every decision ever recorded, in order."""
        return read_jsonl(self.decisions_path, Decision)

    def append_decisions(self, decisions: list[Decision]) -> None:
        """Record decisions (append-only, fsynced)."""
        append_jsonl(self.decisions_path, decisions)

    def recode_flags(self) -> list[RecodeFlag]:
        """Every re-coding flag ever raised."""
        return read_jsonl(self.recode_path, RecodeFlag)

    def append_recode_flags(self, flags: list[RecodeFlag]) -> None:
        """Record re-coding flags."""
        if flags:
            append_jsonl(self.recode_path, flags)

    def write_stop_state(self, state: StopState) -> None:
        """Write the stop rule's state."""
        _write_model(self.stop_path, state)

    def all_annotations(self) -> Iterator[Annotation]:
        """Every annotation of every round (ascending), then every re-code (versions ascending).

        Rounds only code units not coded before, and a re-code only moves units to a newer
        version, so the last annotation of a unit in this order is its newest.
        """
        for number in self.round_numbers():
            yield from self.round_annotations(number)
        for entry in self.recode_entries():
            yield entry.annotation

    def recoded_path(self, version: int) -> Path:
        """``recode/vNNNN/recoded.jsonl``: units brought onto ``version``."""
        return self.root / "recode" / f"v{version:04d}" / "recoded.jsonl"

    def recode_entries(self) -> list[RecodeEntry]:
        """Every re-code entry, versions ascending."""
        out: list[RecodeEntry] = []
        for version in self.versions():
            out.extend(read_jsonl(self.recoded_path(version), RecodeEntry))
        return out
