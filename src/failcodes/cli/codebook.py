"""``failcodes codebook``: validate, show, diff, render and describe codebook files.

    failcodes codebook validate [PATH ...]          files or folders (default: taxonomy/)
    failcodes codebook show [PATH] [--format text|json]
    failcodes codebook diff OLD NEW [--format text|json]
    failcodes codebook table [PATH] [--format md|latex|html] [--part P] [--stats S.json] [-o F]
    failcodes codebook schema [-o codebook.schema.json]

PATH defaults to the codebook bundled with failcodes.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from failcodes import codebook as cbook
from failcodes.cli.main import command_group
from failcodes.cli.output_format import OutputFormat, require_format
from failcodes.codebook import Codebook
from failcodes.errors import ConfigError, InputError
from failcodes.fileio import atomic_write_text
from failcodes.jsonio import read_json
from failcodes.units import UnitKind

codebook_app = command_group("codebook")


class TableFmt(StrEnum):
    """Formats of the rendered table."""

    MD = "md"
    LATEX = "latex"
    HTML = "html"


PathArg = Annotated[
    Path | None,
    typer.Argument(help="Codebook YAML file (default: the bundled codebook).", show_default=False),
]
FmtOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="table (text) or json.")]
OutOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write here instead of stdout.", show_default=False),
]


def _load(path: Path | None) -> Codebook:
    return cbook.bundled() if path is None else cbook.load(path)


def _write(text: str, output: Path | None) -> None:
    """Print, or write atomically (temp file in the same folder, then rename)."""
    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
        return
    atomic_write_text(output, text)


def _summary(cb: Codebook, path: Path | None) -> dict[str, Any]:
    return {
        "path": str(path) if path is not None else "(bundled)",
        "name": cb.name,
        "version": cb.version,
        "hash": cb.hash,
        "dimensions": sum(1 for _ in cb.dimensions()),
        "subcodes": sum(len(d.subcodes) for _, d in cb.dimensions()),
        "leaves": len(cb.leaf_parents()),
    }


@codebook_app.command("validate")
def validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Files or folders (a folder is checked as lineages: versions, migrations). "
            "Default: taxonomy/ if present, else the bundled codebook.",
            show_default=False,
        ),
    ] = None,
    fmt: FmtOpt = OutputFormat.TABLE,
) -> None:
    """Check codebook files against every rule; the first error exits 2 with file:line."""
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="codebook validate")
    targets = list(paths or [])
    if not targets and Path("taxonomy").is_dir():
        targets = [Path("taxonomy")]
    checked: list[dict[str, Any]] = []
    if not targets:
        checked.append(_summary(cbook.bundled(), None))
    for target in targets:
        if target.is_dir():
            for name, files in cbook.lineage_files(target).items():
                for cb in cbook.load_lineage(target, name):
                    checked.append(_summary(cb, files[cb.version]))
        else:
            checked.append(_summary(cbook.load(target), target))
    if not checked:
        raise InputError("no codebook files (<name>.v<N>.yaml) found", path=targets[0])
    if fmt is OutputFormat.JSON:
        typer.echo(json.dumps({"ok": True, "codebooks": checked}, indent=2))
        return
    for item in checked:
        typer.echo(
            f"ok  {item['name']}@{item['version']}  {item['hash'][:12]}  "
            f"{item['dimensions']} dimensions, {item['subcodes']} subcodes, "
            f"{item['leaves']} leaves  {item['path']}"
        )


@codebook_app.command("show")
def show(path: PathArg = None, fmt: FmtOpt = OutputFormat.TABLE) -> None:
    """Print a codebook as an outline (or as JSON with --format json)."""
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="codebook show")
    cb = _load(path)
    if fmt is OutputFormat.JSON:
        typer.echo(json.dumps({**cb.model_dump(mode="json"), "hash": cb.hash}, indent=2))
        return
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
    typer.echo("\n".join(lines))


@codebook_app.command("diff")
def diff(
    old: Annotated[Path, typer.Argument(help="Older version (YAML).")],
    new: Annotated[Path, typer.Argument(help="Newer version (YAML).")],
    fmt: FmtOpt = OutputFormat.TABLE,
) -> None:
    """List added, removed, renamed, merged, split and changed codes, and the migration map."""
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="codebook diff")
    result = cbook.diff(cbook.load(old), cbook.load(new))
    if fmt is OutputFormat.JSON:
        typer.echo(result.model_dump_json(indent=2))
        return
    lines = [f"{result.old} -> {result.new}"]
    lines += [f"  {change}" for change in result.changes] or ["  no differences"]
    if result.migration is not None:
        moved = {k: v for k, v in result.migration.codes.items() if k != v}
        if moved:
            lines.append("migration map (old code -> new code):")
            lines += [
                f"  {k} -> {v if v is not None else 'NEEDS RE-CODING'}" for k, v in moved.items()
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
    typer.echo("\n".join(lines))


def _read_stats(path: Path) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    data = read_json(path)
    if not isinstance(data, dict) or set(data) - {"frequencies", "agreement"}:
        raise InputError(
            'expected {"frequencies": {code: value}, "agreement": {code: value}}', path=path
        )
    for key, values in data.items():
        if not isinstance(values, dict):
            raise InputError("must map code ids to values", path=path, field=key)
    return data.get("frequencies"), data.get("agreement")


@codebook_app.command("table")
def table(
    path: PathArg = None,
    fmt: Annotated[TableFmt, typer.Option("--format", "-f", help="md, latex or html.")] = (
        TableFmt.MD
    ),
    part: Annotated[
        UnitKind | None,
        typer.Option("--part", help="Only one part (default: both).", show_default=False),
    ] = None,
    stats: Annotated[
        Path | None,
        typer.Option(
            "--stats",
            help='JSON {"frequencies": {code: value}, "agreement": {code: value}} for the '
            "optional Freq. and Agreement columns.",
            show_default=False,
        ),
    ] = None,
    leaves: Annotated[bool, typer.Option("--leaves/--no-leaves", help="Show leaves.")] = True,
    caption: Annotated[str | None, typer.Option(help="Table caption.", show_default=False)] = None,
    output: OutOpt = None,
) -> None:
    """Render the codebook table (part, dimension, subcode, definition, example)."""
    # imported here: the table renderer needs pandas (~0.2 s), which --help should not pay
    from failcodes.report.codebook_table import render_codebook_table

    cb = _load(path)
    frequencies, agreement = _read_stats(stats) if stats is not None else (None, None)
    codes = cb.codes()
    for values in (frequencies or {}, agreement or {}):
        unknown = sorted(set(values) - set(codes))
        if unknown:
            raise ConfigError(f"--stats names codes not in {cb.id}: {', '.join(unknown[:5])}")
    text = render_codebook_table(
        cb,
        fmt.value,
        part=part,
        frequencies=frequencies,
        agreement=agreement,
        include_leaves=leaves,
        caption=caption,
    )
    _write(text, output)


@codebook_app.command("schema")
def schema(output: OutOpt = None) -> None:
    """Print the JSON Schema of the codebook file format (for editors)."""
    _write(json.dumps(cbook.json_schema(), indent=2, ensure_ascii=False) + "\n", output)
