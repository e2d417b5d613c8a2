"""Codebook files on disk: lineages of versions, the bundled codebook, writing new versions."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from failcodes.codebook._diff import check_migration
from failcodes.codebook._document import load_with_lines, parse, to_document, validate
from failcodes.codebook._models import Codebook, CodebookRef
from failcodes.errors import CodebookError
from failcodes.fileio import atomic_write_text

DEFAULT_NAME = "medical-fact-check"
"""The codebook failcodes ships (seed 001, Tables 8 and 9)."""

DEFAULT_VERSION = 1
"""The version of :data:`DEFAULT_NAME` used when none is named (``bundled()``, ``init``).

Version 1 is single-label everywhere; version 2 lets the low-quality codes of a reasoning
step co-occur, as seed 001 does. The default stays 1 so that annotations, studies and
reviews made under it keep pooling without a migration; docs/codebook.md says where this
departs from the seed and how to choose version 2 (``failcodes init --codebook-version 2``,
``bundled(version=2)``, ``--codebook``).
"""

SCHEMA_FILE = "codebook.schema.json"
"""JSON Schema of the file format, kept beside the YAML files in taxonomy/."""

_FILE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9_-]*)\.v(?P<version>[0-9]+)\.ya?ml$")


def file_name(name: str, version: int) -> str:
    """The file name of one version: ``<name>.v<version>.yaml``."""
    return f"{name}.v{version}.yaml"


def bundled_dir() -> Path:
    """The taxonomy folder shipped inside the package (the repo's taxonomy/ links to it)."""
    return Path(str(resources.files("failcodes") / "taxonomy"))


def bundled(name: str = DEFAULT_NAME, version: int | None = None) -> Codebook:
    """Load a codebook shipped with failcodes.

    Without ``version``: :data:`DEFAULT_VERSION` of the default codebook, the latest version
    of any other.
    """
    lineage = load_lineage(bundled_dir(), name)
    if version is None and name == DEFAULT_NAME:
        version = DEFAULT_VERSION
    if version is None:
        return lineage[-1]
    for cb in lineage:
        if cb.version == version:
            return cb
    have = ", ".join(str(cb.version) for cb in lineage)
    raise CodebookError(f"no version {version} of '{name}' (have: {have})", rule="missing-file")


def bundled_for(ref: CodebookRef) -> Codebook | None:
    """The bundled codebook an annotation cites (same name, version and hash), or None.

    Lets a reader of annotations know every code of their codebook without being given it.
    """
    return cited_in(bundled_dir(), ref)


def cited_in(folder: str | Path, ref: CodebookRef) -> Codebook | None:
    """The codebook ``ref`` cites from ``folder``'s ``<name>.v<N>.yaml`` files, or None."""
    files = lineage_files(folder, ref.name).get(ref.name, {}) if Path(folder).is_dir() else {}
    path = files.get(ref.version)
    if path is None:
        return None
    cb = load_with_lines(path)[0]
    return cb if cb.hash == ref.hash else None


def lineage_files(folder: str | Path, name: str | None = None) -> dict[str, dict[int, Path]]:
    """Codebook files in ``folder`` by name then version (only ``<name>.v<N>.yaml`` files)."""
    out: dict[str, dict[int, Path]] = {}
    root = Path(folder)
    if not root.is_dir():
        raise CodebookError("not a folder", rule="missing-file", path=root)
    for file in sorted(root.iterdir()):
        match = _FILE.match(file.name)
        if match is None or (name is not None and match["name"] != name):
            continue
        out.setdefault(match["name"], {})[int(match["version"])] = file
    return out


def load_lineage(folder: str | Path, name: str | None = None) -> tuple[Codebook, ...]:
    """Load every version of one codebook from ``folder``, oldest first, checking the chain.

    Each file must be named ``<name>.v<N>.yaml`` and hold that name and version; versions
    run 1..N without gaps; each version's migration section is checked against its parent
    (see :func:`failcodes.codebook.check_migration`). ``name`` may be omitted when the folder
    holds a single codebook.
    """
    found = lineage_files(folder, name)
    if name is None:
        if len(found) != 1:
            names = ", ".join(sorted(found)) or "none"
            raise CodebookError(
                f"give a codebook name (codebooks here: {names})", rule="name-mismatch", path=folder
            )
        name = next(iter(found))
    files = found.get(name)
    if not files:
        raise CodebookError(f"no {file_name(name, 1)} here", rule="missing-file", path=folder)
    books: list[Codebook] = []
    for version in sorted(files):
        path = files[version]
        cb, lines = load_with_lines(path)
        if cb.name != name or cb.version != version:
            raise CodebookError(
                f"file name says {name}@{version} but the file holds {cb.name}@{cb.version}",
                rule="name-mismatch",
                path=path,
                line=1,
            )
        if version > 1 and version - 1 not in files:
            raise CodebookError(
                f"parent version {version - 1} ({file_name(name, version - 1)}) is missing",
                rule="parent-missing",
                path=path,
            )
        if books:
            check_migration(books[-1], cb, path=path, lines=lines)
        books.append(cb)
    if books[0].version != 1:
        raise CodebookError(
            f"version 1 ({file_name(name, 1)}) is missing",
            rule="parent-missing",
            path=files[books[0].version],
        )
    return tuple(books)


def dump(cb: Codebook) -> str:
    """The YAML text :func:`save` writes for ``cb`` (leaves listed at the top level)."""
    doc = to_document(cb).model_dump(mode="json", exclude_defaults=True)
    ordered: dict[str, Any] = {
        "name": doc["name"],
        "version": doc["version"],
        "parent_version": cb.parent_version,
        "changelog": cb.changelog,
    }
    ordered.update({k: v for k, v in doc.items() if k not in ordered})
    if "leaves" in ordered:
        ordered["leaves"] = [
            {"id": leaf["id"], "parent": leaf["parent"], **leaf} for leaf in ordered["leaves"]
        ]
    header = (
        f"# yaml-language-server: $schema={SCHEMA_FILE}\n"
        f"# failcodes codebook {cb.name}@{cb.version} (hash {cb.hash[:12]}), written by "
        "failcodes.codebook.save.\n"
    )
    body = yaml.dump(
        ordered, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=96, indent=2
    )
    return header + body


class _Dumper(yaml.SafeDumper):
    """Block style, list items indented under their key, multi-line text as ``|`` blocks."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:  # noqa: ARG002
        super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def save(cb: Codebook, folder: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``cb`` to ``folder/<name>.v<version>.yaml`` atomically; return the path.

    The written file loads back equal to ``cb`` (same models, same hash). An existing file
    is only replaced with ``overwrite=True``: a published version should never change.
    """
    validate(cb)
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    target = root / file_name(cb.name, cb.version)
    if target.exists() and not overwrite:
        raise CodebookError(
            f"{cb.id} already exists; versions are immutable (write version "
            f"{cb.version + 1} instead)",
            rule="version-exists",
            path=target,
        )
    text = dump(cb)
    if parse(text, target) != cb:  # pragma: no cover - guards the round trip
        raise CodebookError("the YAML written would not load back identically", path=target)
    return atomic_write_text(target, text)
