"""The YAML file format of a codebook and the rules a file must follow.

A file is a :class:`CodebookDocument`: a :class:`Codebook` whose leaves may also be listed
at the top level with a ``parent`` (the form :func:`save` writes, convenient for appending
leaves during saturation). Leaves nested under their subcode are accepted too.

Every rule violation raises :class:`~failcodes.errors.CodebookError` naming the file, the
YAML line and the rule (see :data:`RULES`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from failcodes import yamlio
from failcodes.codebook._models import (
    NAME_PATTERN,
    ChangeKind,
    Codebook,
    CodebookHeader,
    Dimension,
    Leaf,
    MigrationEntry,
    Part,
    Subcode,
)
from failcodes.errors import CodebookError
from failcodes.fileio import utf16_hint

RULES: dict[str, str] = {
    "yaml-syntax": "the file is not valid YAML",
    "not-a-mapping": "the document (or a part, dimension, subcode...) must be a mapping",
    "duplicate-key": "a key appears twice in the same mapping",
    "unknown-key": "a key the format does not define (typo?)",
    "missing-key": "a required key is absent",
    "wrong-type": "a value has the wrong type (text, integer, true/false, list)",
    "bad-value": "a value is out of range (e.g. version < 1)",
    "bad-id": "an id uses characters outside [a-z0-9_]",
    "bad-name": "the codebook name uses characters outside [a-z0-9_-]",
    "unknown-part": "a part id other than retrieval / verification",
    "missing-parts": "no parts, or a part / dimension with an empty list",
    "duplicate-part": "the same part twice",
    "duplicate-id": "an id used twice (dimension, subcode and leaf ids share one namespace)",
    "empty-definition": "a blank label or definition",
    "high-quality-count": "a dimension without exactly one high-quality subcode",
    "no-low-quality": "a dimension with no subcode besides the high-quality one",
    "leaf-parent-missing": "a top-level leaf whose parent is not a subcode of this codebook",
    "version-parent": "a version that does not follow its parent (version = parent + 1)",
    "bad-migration": "a malformed migration entry, or one in version 1",
    "migration-unknown-code": "a migration entry naming an id absent from parent or this version",
    "unexplained-removal": "a code of the parent missing here with no migration entry for it",
    "name-mismatch": "a file in a lineage with another codebook name or a file name that disagrees",
    "parent-missing": "a version whose parent version file is absent",
    "missing-file": "the codebook file does not exist",
    "version-exists": "saving a version whose file already exists (versions are immutable)",
    "unreadable": "the file cannot be read as UTF-8 text",
    "too-large": "a file over MAX_CODEBOOK_BYTES (1 MiB; the bundled codebook is 25 KB)",
}
"""Every rule a codebook file is checked against, with what it means."""

Loc = tuple[str | int, ...]

#: Largest codebook file read (the bundled one is 25 KB). YAML aliases are refused outright
#: (:class:`failcodes.yamlio.BoundedLoader`), so a small file cannot expand either.
MAX_CODEBOOK_BYTES = 1024 * 1024


class LeafEntry(Leaf):
    """A leaf listed at the top level of a file, naming the subcode it rolls up to."""

    parent: str = Field(description="Id of the subcode this leaf rolls up to.")


class CodebookDocument(CodebookHeader):
    """A codebook file (YAML or JSON) exactly as written on disk."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        title="failcodes codebook",
        json_schema_extra={
            "description": (
                "One version of a failcodes error codebook. File name: <name>.v<version>.yaml. "
                "Ids (dimensions, subcodes, leaves) are unique across the codebook and use "
                "[a-z0-9_]; each dimension has exactly one high_quality subcode."
            )
        },
    )

    leaves: tuple[LeafEntry, ...] = Field(
        default=(), description="Leaves listed with their parent subcode id."
    )
    migration: tuple[MigrationEntry, ...] = Field(
        default=(),
        description=(
            "Explicit renames, merges, splits and removals of the parent version's codes; "
            "every parent code missing from this version must appear here."
        ),
    )


def json_schema() -> dict[str, Any]:
    """JSON Schema of the codebook file format (for editors and the yaml-language-server)."""
    schema = CodebookDocument.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


# --------------------------------------------------------------------------- YAML with lines


@dataclass
class _Source:
    """Where a document came from, and the YAML line of every location in it."""

    path: str | None = None
    lines: dict[Loc, int] = field(default_factory=dict)
    # A fresh constructor per document: PyYAML caches constructed objects by node.
    scalars: yaml.SafeLoader = field(default_factory=lambda: yamlio.BoundedLoader(""))

    def line(self, loc: Sequence[str | int]) -> int | None:
        """Line of ``loc``, or of its closest enclosing location that has one."""
        key = tuple(loc)
        while True:
            if key in self.lines:
                return self.lines[key]
            if not key:
                return None
            key = key[:-1]

    def error(self, rule: str, message: str, loc: Sequence[str | int] = ()) -> CodebookError:
        """A :class:`CodebookError` at ``loc`` (file, YAML line and dotted field)."""
        return CodebookError(
            message, rule=rule, path=self.path, line=self.line(loc), field=_dotted(loc) or None
        )


def _dotted(loc: Sequence[str | int]) -> str:
    out = ""
    for item in loc:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else item)
    return out


def _plain(node: yaml.Node, loc: Loc, src: _Source) -> Any:
    """Turn a composed YAML node into JSON-compatible data, recording lines as it goes."""
    src.lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = src.scalars.construct_object(key_node)
            if not isinstance(key, str):
                raise src.error("wrong-type", f"mapping key {key!r} must be text", loc)
            if key in out:
                first = src.lines[(*loc, key)]
                raise CodebookError(
                    f"key '{key}' appears twice (first on line {first})",
                    rule="duplicate-key",
                    path=src.path,
                    line=key_node.start_mark.line + 1,
                    field=_dotted((*loc, key)),
                )
            src.lines[(*loc, key)] = key_node.start_mark.line + 1
            out[key] = _plain(value_node, (*loc, key), src)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_plain(item, (*loc, i), src) for i, item in enumerate(node.value)]
    try:
        value = src.scalars.construct_object(node)
    except yaml.YAMLError as exc:  # e.g. a !!python/object tag: not a plain value
        problem = getattr(exc, "problem", None) or "invalid YAML value"
        raise CodebookError(
            f"invalid YAML: {problem}",
            rule="yaml-syntax",
            path=src.path,
            line=node.start_mark.line + 1,
        ) from None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)  # dates, binary: kept as text, rejected where text is not expected


def _parse_yaml(text: str, src: _Source) -> Any:
    try:
        node = yamlio.compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or "invalid YAML"
        raise CodebookError(
            f"invalid YAML: {problem}",
            rule="yaml-syntax",
            path=src.path,
            line=mark.line + 1 if mark is not None else None,
        ) from None
    except yaml.YAMLError as exc:
        raise CodebookError(f"invalid YAML: {exc}", rule="yaml-syntax", path=src.path) from None
    if node is None:
        raise CodebookError("the file is empty", rule="not-a-mapping", path=src.path, line=1)
    return _plain(node, (), src)


# --------------------------------------------------------------------------- structural rules

_ALLOWED: dict[str, type[BaseModel]] = {
    "parts": Part,
    "dimensions": Dimension,
    "subcodes": Subcode,
    "migration": MigrationEntry,
}
_TYPE_NAMES = {
    "string_type": "text",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "int_parsing": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "tuple_type": "a list",
    "list_type": "a list",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "dict_type": "a mapping",
    "none_required": "null",
}


def _model_at(loc: Loc) -> type[BaseModel]:
    """The model whose keys are allowed at mapping ``loc``."""
    if len(loc) >= 2 and isinstance(loc[-1], int) and isinstance(loc[-2], str):
        if loc[-2] == "leaves":
            return LeafEntry if len(loc) == 2 else Leaf
        return _ALLOWED.get(loc[-2], CodebookDocument)
    return CodebookDocument


def _from_pydantic(exc: ValidationError, src: _Source) -> CodebookError:
    """Translate the first pydantic error into one rule with its file line."""
    errors = exc.errors(include_url=False)
    # A misspelt key shows up as both "unknown" and "missing": report the typo.
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc: Loc = tuple(x for x in err["loc"] if isinstance(x, str | int))
    kind = err["type"]
    key = loc[-1] if loc else ""
    got = err.get("input")
    if kind == "extra_forbidden":
        allowed = ", ".join(_model_at(loc[:-1]).model_fields)
        return src.error("unknown-key", f"unknown key '{key}' (allowed: {allowed})", loc)
    if kind == "missing":
        return src.error("missing-key", f"required key '{key}' is missing", loc)
    if kind == "string_pattern_mismatch":
        if loc == ("name",):
            return src.error("bad-name", f"name {got!r} must match {NAME_PATTERN}", loc)
        return src.error("bad-id", f"id {got!r} may only use a-z, 0-9 and _", loc)
    if kind == "enum" and key == "id":
        return src.error("unknown-part", f"part id {got!r} is not retrieval or verification", loc)
    if kind == "enum":
        return src.error("wrong-type", f"{got!r} is not one of the allowed values", loc)
    if kind == "too_short":
        return src.error("missing-parts", f"'{key}' must list at least one entry", loc)
    if kind in ("greater_than_equal", "greater_than"):
        return src.error("bad-value", f"'{key}' must be >= 1, got {got!r}", loc)
    if kind == "value_error":
        message = str(err["msg"]).removeprefix("Value error, ")
        return src.error("bad-migration", message, loc)
    if kind in _TYPE_NAMES:
        if kind.startswith("model") and loc == ():
            return src.error("not-a-mapping", "the document must be a mapping", loc)
        shown = json.dumps(got)[:40] if got is not None else "null"
        return src.error("wrong-type", f"'{key}' must be {_TYPE_NAMES[kind]}, got {shown}", loc)
    return src.error("wrong-type", str(err["msg"]), loc)


# --------------------------------------------------------------------------- semantic rules


def _semantic_checks(doc: CodebookDocument, src: _Source) -> None:
    """Rules pydantic cannot express: ids, high-quality subcodes, leaf parents, versions."""
    seen_parts: dict[str, int] = {}
    seen: dict[str, Loc] = {}
    subcodes: set[str] = set()

    def claim(code_id: str, loc: Loc, what: str) -> None:
        if code_id in seen:
            first = src.line(seen[code_id])
            where = f" (first on line {first})" if first is not None else ""
            raise src.error("duplicate-id", f"{what} id '{code_id}' is already used{where}", loc)
        seen[code_id] = loc

    def text(value: str, loc: Loc) -> None:
        if not value.strip():
            raise src.error("empty-definition", f"'{loc[-1]}' must not be blank", loc)

    def code(item: Dimension | Subcode | Leaf, loc: Loc, what: str) -> None:
        """Claim the code's id; its label and definition must not be blank."""
        claim(item.id, (*loc, "id"), what)
        text(item.label, (*loc, "label"))
        text(item.definition, (*loc, "definition"))

    for p, part in enumerate(doc.parts):
        ploc: Loc = ("parts", p)
        if part.id.value in seen_parts:
            raise src.error("duplicate-part", f"part '{part.id.value}' appears twice", ploc)
        seen_parts[part.id.value] = p
        text(part.label, (*ploc, "label"))
        for d, dim in enumerate(part.dimensions):
            dloc: Loc = (*ploc, "dimensions", d)
            code(dim, dloc, "dimension")
            high = [s.id for s in dim.subcodes if s.high_quality]
            if len(high) != 1:
                found = ", ".join(high) if high else "none"
                raise src.error(
                    "high-quality-count",
                    f"dimension '{dim.id}' needs exactly one high_quality subcode (found: {found})",
                    (*dloc, "id"),
                )
            if len(dim.subcodes) < 2:
                raise src.error(
                    "no-low-quality",
                    f"dimension '{dim.id}' needs at least one subcode besides '{high[0]}'",
                    (*dloc, "subcodes"),
                )
            for s, sub in enumerate(dim.subcodes):
                sloc: Loc = (*dloc, "subcodes", s)
                code(sub, sloc, "subcode")
                subcodes.add(sub.id)
                for x, leaf in enumerate(sub.leaves):
                    lloc: Loc = (*sloc, "leaves", x)
                    code(leaf, lloc, "leaf")
    for x, entry in enumerate(doc.leaves):
        code(entry, ("leaves", x), "leaf")
    kinds = dict(_all_ids(doc))
    for x, entry in enumerate(doc.leaves):
        if entry.parent not in subcodes:
            kind = kinds.get(entry.parent)
            what = f"is a {kind}, not a subcode" if kind else "does not exist"
            raise src.error(
                "leaf-parent-missing",
                f"leaf '{entry.id}': parent '{entry.parent}' {what}",
                ("leaves", x, "parent"),
            )
    _check_version(doc, src)


def _check_version(doc: CodebookDocument, src: _Source) -> None:
    if doc.version == 1 and doc.parent_version is not None:
        raise src.error(
            "version-parent",
            f"version 1 cannot have a parent (parent_version: {doc.parent_version})",
            ("parent_version",),
        )
    if doc.version > 1 and doc.parent_version != doc.version - 1:
        raise src.error(
            "version-parent",
            f"version {doc.version} must have parent_version {doc.version - 1}, "
            f"got {doc.parent_version}",
            ("parent_version",) if "parent_version" in doc.model_fields_set else ("version",),
        )
    if doc.version == 1 and doc.migration:
        raise src.error(
            "bad-migration", "version 1 has no parent to migrate from", ("migration", 0)
        )
    for m, entry in enumerate(doc.migration):
        if entry.kind in (ChangeKind.RENAME, ChangeKind.MERGE, ChangeKind.SPLIT):
            for new_id in entry.new:
                if new_id not in {c for c, _ in _all_ids(doc)}:
                    raise src.error(
                        "migration-unknown-code",
                        f"{entry.kind.value} target '{new_id}' is not a code of version "
                        f"{doc.version}",
                        ("migration", m, "new"),
                    )


def _all_ids(doc: CodebookDocument) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for part in doc.parts:
        for dim in part.dimensions:
            out.append((dim.id, "dimension"))
            for sub in dim.subcodes:
                out.append((sub.id, "subcode"))
                out.extend((leaf.id, "leaf") for leaf in sub.leaves)
    out.extend((leaf.id, "leaf") for leaf in doc.leaves)
    return out


# --------------------------------------------------------------------------- conversions


def _with_leaves(
    parts: Sequence[Part], leaves: Callable[[Subcode], Sequence[Leaf]]
) -> tuple[Part, ...]:
    """Copies of ``parts`` where every subcode's leaves are ``leaves(subcode)``."""

    def dim_copy(dim: Dimension) -> Dimension:
        subs = tuple(sub.model_copy(update={"leaves": tuple(leaves(sub))}) for sub in dim.subcodes)
        return dim.model_copy(update={"subcodes": subs})

    return tuple(
        part.model_copy(update={"dimensions": tuple(dim_copy(d) for d in part.dimensions)})
        for part in parts
    )


def to_codebook(doc: CodebookDocument) -> Codebook:
    """Fold top-level leaves into their parent subcodes."""
    extra: dict[str, list[Leaf]] = {}
    for entry in doc.leaves:
        extra.setdefault(entry.parent, []).append(
            Leaf.model_validate(entry.model_dump(exclude={"parent"}))
        )
    parts = _with_leaves(doc.parts, lambda sub: (*sub.leaves, *extra.get(sub.id, ())))
    return Codebook(**doc.header(), parts=parts, migration=doc.migration)


def to_document(cb: Codebook, *, top_level_leaves: bool = True) -> CodebookDocument:
    """The file form of ``cb``; leaves listed at the top level unless told otherwise."""
    leaves: list[LeafEntry] = []
    parts = cb.parts
    if top_level_leaves:
        for _, dim in cb.dimensions():
            for sub in dim.subcodes:
                leaves.extend(LeafEntry(parent=sub.id, **leaf.model_dump()) for leaf in sub.leaves)
        parts = _with_leaves(cb.parts, lambda _sub: ())
    return CodebookDocument(
        **cb.header(), parts=parts, leaves=tuple(leaves), migration=cb.migration
    )


# --------------------------------------------------------------------------- entry points


def parse(text: str, path: str | Path | None = None) -> Codebook:
    """Parse and validate codebook YAML ``text``; ``path`` is only used in error messages."""
    return parse_with_lines(text, path)[0]


def parse_with_lines(text: str, path: str | Path | None = None) -> tuple[Codebook, dict[Loc, int]]:
    """:func:`parse`, also returning the YAML line of every location (for later checks)."""
    src = _Source(path=str(path) if path is not None else None)
    if len(text) > MAX_CODEBOOK_BYTES:
        raise src.error("too-large", f"{len(text)} characters, over the limit")
    data = _parse_yaml(text, src)
    if not isinstance(data, Mapping):
        raise src.error("not-a-mapping", "the document must be a mapping of keys to values")
    try:
        doc = CodebookDocument.model_validate_json(json.dumps(data), strict=True)
    except ValidationError as exc:
        raise _from_pydantic(exc, src) from None
    _semantic_checks(doc, src)
    return to_codebook(doc), src.lines


def validate(cb: Codebook) -> Codebook:
    """Check an in-memory codebook against every single-file rule; return it unchanged."""
    _semantic_checks(to_document(cb, top_level_leaves=False), _Source())
    return cb


def load(path: str | Path) -> Codebook:
    """Load and validate one codebook file (YAML; JSON is YAML too)."""
    return load_with_lines(path)[0]


def load_with_lines(path: str | Path) -> tuple[Codebook, dict[Loc, int]]:
    """:func:`load`, also returning the YAML line of every location."""
    file = Path(path)
    try:
        if file.exists() and not file.is_file() and not file.is_dir():
            # a FIFO named like the next version hung `recode`; /dev/zero read forever
            raise CodebookError(
                "not a regular file (a FIFO, socket or device, or a link to one); give the "
                "codebook's YAML file",
                rule="unreadable",
                path=file,
            )
        if file.is_file() and file.stat().st_size > MAX_CODEBOOK_BYTES:
            raise CodebookError(
                f"{file.stat().st_size} bytes, over the {MAX_CODEBOOK_BYTES} byte limit",
                rule="too-large",
                path=file,
            )
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CodebookError("no such file", rule="missing-file", path=file) from None
    except UnicodeDecodeError as exc:
        raise CodebookError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start}){utf16_hint(file)}",
            rule="unreadable",
            path=file,
        ) from None
    except OSError as exc:
        raise CodebookError(f"cannot read: {exc}", rule="unreadable", path=file) from None
    return parse_with_lines(text, file)
