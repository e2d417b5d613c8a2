"""``codebook validate|show|diff|table|schema`` as use cases: codebook files as code.

Each request's ``run()`` returns a typed result whose ``lines()`` are what the CLI prints
(``--format json``: the result's JSON); PATH defaults to the codebook bundled with failcodes.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from failcodes import codebook as cbook
from failcodes.codebook import Codebook, CodebookDiff
from failcodes.commands.base import Note, Request, ignore_note, option
from failcodes.contract import FrozenModel
from failcodes.errors import ConfigError, InputError
from failcodes.fileio import atomic_write_text
from failcodes.units import UnitKind

PATH_HELP = "Codebook YAML file (default: the bundled codebook)."
OUTPUT_HELP = "Write here instead of stdout."


class TableFmt(StrEnum):
    """Formats of the rendered table."""

    MD = "md"
    LATEX = "latex"
    HTML = "html"


def _load(path: Path | None) -> Codebook:
    return cbook.bundled() if path is None else cbook.load(path)


class CodebookSummary(FrozenModel):
    """One codebook file checked: its id, hash and size."""

    path: str
    name: str
    version: int
    hash: str
    dimensions: int
    subcodes: int
    leaves: int

    @classmethod
    def of(cls, cb: Codebook, path: Path | None) -> CodebookSummary:
        """The summary of ``cb`` read from ``path`` (None: the bundled codebook)."""
        return cls(
            path=str(path) if path is not None else "(bundled)",
            name=cb.name,
            version=cb.version,
            hash=cb.hash,
            dimensions=sum(1 for _ in cb.dimensions()),
            subcodes=sum(len(d.subcodes) for _, d in cb.dimensions()),
            leaves=len(cb.leaf_parents()),
        )


class CodebookValidateResult(FrozenModel):
    """Every codebook checked (any error was raised: ``ok`` is always true)."""

    ok: bool = True
    codebooks: list[CodebookSummary]

    def json_text(self) -> str:
        """What ``--format json`` prints."""
        return json.dumps(self.model_dump(mode="json"), indent=2)

    def lines(self) -> list[str]:
        """One ``ok`` line per codebook, as the CLI prints them."""
        return [
            f"ok  {c.name}@{c.version}  {c.hash[:12]}  {c.dimensions} dimensions, "
            f"{c.subcodes} subcodes, {c.leaves} leaves  {c.path}"
            for c in self.codebooks
        ]


class CodebookValidateRequest(Request):
    """Check codebook files against every rule; the first error exits 2 with file:line."""

    command: ClassVar[tuple[str, ...]] = ("codebook", "validate")

    paths: list[Path] = option(
        default_factory=list,
        argument=True,
        help="Files or folders (a folder is checked as lineages: versions, migrations). "
        "Default: taxonomy/ if present, else the bundled codebook.",
    )

    def run(self, *, note: Note = ignore_note) -> CodebookValidateResult:
        """Load and check every codebook named (or taxonomy/, or the bundled one)."""
        del note
        targets = list(self.paths)
        if not targets and Path("taxonomy").is_dir():
            targets = [Path("taxonomy")]
        checked: list[CodebookSummary] = []
        if not targets:
            checked.append(CodebookSummary.of(cbook.bundled(), None))
        for target in targets:
            if target.is_dir():
                for name, files in cbook.lineage_files(target).items():
                    for cb in cbook.load_lineage(target, name):
                        checked.append(CodebookSummary.of(cb, files[cb.version]))
            else:
                checked.append(CodebookSummary.of(cbook.load(target), target))
        if not checked:
            raise InputError("no codebook files (<name>.v<N>.yaml) found", path=targets[0])
        return CodebookValidateResult(codebooks=checked)


class CodebookShowResult(FrozenModel):
    """A codebook, shown as an outline (``lines``) or as JSON with its hash."""

    codebook: Codebook

    def json_text(self) -> str:
        """What ``--format json`` prints: the codebook's JSON, with its hash."""
        data = {**self.codebook.model_dump(mode="json"), "hash": self.codebook.hash}
        return json.dumps(data, indent=2)

    def lines(self) -> list[str]:
        """The outline: parts, dimensions, subcodes and leaves."""
        cb = self.codebook
        lines = [f"{cb.id}  hash {cb.hash}"]
        if cb.parent_version is not None:
            lines.append(f"parent: version {cb.parent_version}")
        lines += [f"  {ln}" for ln in cb.changelog.splitlines()]
        for part in cb.parts:
            lines.append(f"{part.id.value}: {part.label}")
            for dim in part.dimensions:
                lines.append(f"  {dim.id}: {dim.label}")
                for sub in dim.subcodes:
                    mark = "  [high quality]" if sub.high_quality else ""
                    lines.append(f"    {sub.id}: {sub.label}{mark}")
                    lines += [f"      - {leaf.id}: {leaf.label}" for leaf in sub.leaves]
        return lines


class CodebookShowRequest(Request):
    """Print a codebook as an outline (or as JSON with --format json)."""

    command: ClassVar[tuple[str, ...]] = ("codebook", "show")

    path: Path | None = option(None, argument=True, help=PATH_HELP)

    def run(self, *, note: Note = ignore_note) -> CodebookShowResult:
        """Load the codebook."""
        del note
        return CodebookShowResult(codebook=_load(self.path))


class CodebookDiffResult(FrozenModel):
    """The differences of two codebook versions (``diff``: the JSON the CLI prints)."""

    diff: CodebookDiff

    def json_text(self) -> str:
        """What ``--format json`` prints: the diff."""
        return self.diff.model_dump_json(indent=2)

    def lines(self) -> list[str]:
        """Changes, the migration map and suggested migration entries."""
        result = self.diff
        lines = [f"{result.old} -> {result.new}"]
        lines += [f"  {change}" for change in result.changes] or ["  no differences"]
        if result.migration is not None:
            moved = {k: v for k, v in result.migration.codes.items() if k != v}
            if moved:
                lines.append("migration map (old code -> new code):")
                lines += [
                    f"  {k} -> {v if v is not None else 'NEEDS RE-CODING'}"
                    for k, v in moved.items()
                ]
            dims = {k: v for k, v in result.migration.dimensions.items() if k != v}
            lines += [
                f"  dimension {k} -> {v if v is not None else 'removed'}" for k, v in dims.items()
            ]
            lines += [
                f"  new dimension {d}: annotations need coding on it"
                for d in result.migration.added_dimensions
            ]
        elif result.migration_error is not None:
            lines.append(f"no migration map: {result.migration_error}")
        if result.suggestions:
            lines.append("suggested migration entries (add them to the newer file if right):")
            lines += [
                f"  - kind: {s.kind.value}  old: {list(s.old)}  new: {list(s.new)}  # {s.reason}"
                for s in result.suggestions
            ]
        return lines


class CodebookDiffRequest(Request):
    """List added, removed, renamed, merged, split and changed codes, and the migration map."""

    command: ClassVar[tuple[str, ...]] = ("codebook", "diff")

    old: Path = option(argument=True, help="Older version (YAML).")
    new: Path = option(argument=True, help="Newer version (YAML).")

    def run(self, *, note: Note = ignore_note) -> CodebookDiffResult:
        """Load both versions and compare them."""
        del note
        return CodebookDiffResult(diff=cbook.diff(cbook.load(self.old), cbook.load(self.new)))


class CodebookText(FrozenModel):
    """A rendered text, and the file it was written to (None: for stdout)."""

    text: str
    output: Path | None = None


def _write(text: str, output: Path | None) -> CodebookText:
    """Write atomically (temp file in the same folder, then rename) if ``output`` is given."""
    if output is not None:
        atomic_write_text(output, text)
    return CodebookText(text=text, output=output)


def _read_stats(path: Path) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    from failcodes.jsonio import read_json

    data = read_json(path)
    if not isinstance(data, dict) or set(data) - {"frequencies", "agreement"}:
        raise InputError(
            'expected {"frequencies": {code: value}, "agreement": {code: value}}', path=path
        )
    for key, values in data.items():
        if not isinstance(values, dict):
            raise InputError("must map code ids to values", path=path, field=key)
    return data.get("frequencies"), data.get("agreement")


class CodebookTableRequest(Request):
    """Render the codebook table (part, dimension, subcode, definition, example)."""

    command: ClassVar[tuple[str, ...]] = ("codebook", "table")

    path: Path | None = option(None, argument=True, help=PATH_HELP)
    fmt: TableFmt = option(TableFmt.MD, flags=("--format", "-f"), help="md, latex or html.")
    part: UnitKind | None = option(None, help="Only one part (default: both).")
    stats: Path | None = option(
        None,
        help='JSON {"frequencies": {code: value}, "agreement": {code: value}} for the '
        "optional Freq. and Agreement columns.",
    )
    leaves: bool = option(True, flags=("--leaves/--no-leaves",), help="Show leaves.")
    caption: str | None = option(None, help="Table caption.")
    output: Path | None = option(None, flags=("--output", "-o"), help=OUTPUT_HELP)

    def run(self, *, note: Note = ignore_note) -> CodebookText:
        """Render the table (written to ``output`` if given)."""
        # imported here: the table renderer needs pandas (~0.2 s), which --help should not pay
        from failcodes.report.codebook_table import render_codebook_table

        del note
        cb = _load(self.path)
        frequencies, agreement = _read_stats(self.stats) if self.stats is not None else (None, None)
        codes = cb.codes()
        for values in (frequencies or {}, agreement or {}):
            unknown = sorted(set(values) - set(codes))
            if unknown:
                raise ConfigError(f"--stats names codes not in {cb.id}: {', '.join(unknown[:5])}")
        text = render_codebook_table(
            cb,
            self.fmt.value,
            part=self.part,
            frequencies=frequencies,
            agreement=agreement,
            include_leaves=self.leaves,
            caption=self.caption,
        )
        return _write(text, self.output)


class CodebookSchemaRequest(Request):
    """Print the JSON Schema of the codebook file format (for editors)."""

    command: ClassVar[tuple[str, ...]] = ("codebook", "schema")

    output: Path | None = option(None, flags=("--output", "-o"), help=OUTPUT_HELP)

    def run(self, *, note: Note = ignore_note) -> CodebookText:
        """The schema's JSON text (written to ``output`` if given)."""
        del note
        text = json.dumps(cbook.json_schema(), indent=2, ensure_ascii=False) + "\n"
        return _write(text, self.output)
