"""The error codebook as code: models, loading, validation, hashing, diffing, migration.

Notebook use::

    from failcodes import codebook
    cb = codebook.load("taxonomy/medical-fact-check.v1.yaml")   # or codebook.bundled()
    cb.ref()                      # CodebookRef(name, version, hash) for annotations
    cb.part(UnitKind.RETRIEVAL).dimension("scope").high_quality_code   # 'exact_scope'
    lineage = codebook.load_lineage("taxonomy")                # every version, checked
    d = codebook.diff(lineage[0], lineage[1])                  # changes + migration map
    migration.migrate(annotation, d.migration)                 # failcodes.migration
    v2 = codebook.CodebookDraft(cb, "round 3").add_leaf("partial_entity", leaf).build()
    codebook.save(v2, "taxonomy")                               # taxonomy/<name>.v2.yaml

A file is YAML named ``<name>.v<version>.yaml`` (format: :class:`CodebookDocument`, JSON
Schema: :func:`json_schema`). Validation errors are :class:`~failcodes.errors.CodebookError`
naming file, YAML line and rule (:data:`RULES`).
"""

from failcodes.codebook._diff import (
    CodebookDiff,
    CodeChange,
    DiffKind,
    MigrationMap,
    Suggestion,
    check_migration,
    compose,
    diff,
    migration_map,
    migration_path,
)
from failcodes.codebook._document import (
    MAX_CODEBOOK_BYTES,
    RULES,
    CodebookDocument,
    LeafEntry,
    json_schema,
    load,
    parse,
    to_codebook,
    to_document,
    validate,
)
from failcodes.codebook._edit import (
    CodebookDraft,
    add_leaf,
    add_subcode,
    merge_subcodes,
    next_version,
    remove_code,
    rename_code,
    split_subcode,
)
from failcodes.codebook._models import (
    ID_PATTERN,
    NAME_PATTERN,
    ChangeKind,
    Codebook,
    CodebookRef,
    CodeInfo,
    CodeLevel,
    Dimension,
    Leaf,
    MigrationEntry,
    Origin,
    Part,
    Subcode,
    UnitKind,
    roll_up,
)
from failcodes.codebook._store import (
    DEFAULT_NAME,
    DEFAULT_VERSION,
    bundled,
    bundled_dir,
    bundled_for,
    dump,
    file_name,
    lineage_files,
    load_lineage,
    save,
)

__all__ = [
    "DEFAULT_NAME",
    "DEFAULT_VERSION",
    "ID_PATTERN",
    "MAX_CODEBOOK_BYTES",
    "NAME_PATTERN",
    "RULES",
    "ChangeKind",
    "CodeChange",
    "CodeInfo",
    "CodeLevel",
    "Codebook",
    "CodebookDiff",
    "CodebookDocument",
    "CodebookDraft",
    "CodebookRef",
    "DiffKind",
    "Dimension",
    "Leaf",
    "LeafEntry",
    "MigrationEntry",
    "MigrationMap",
    "Origin",
    "Part",
    "Subcode",
    "Suggestion",
    "UnitKind",
    "add_leaf",
    "add_subcode",
    "bundled",
    "bundled_dir",
    "bundled_for",
    "check_migration",
    "compose",
    "diff",
    "dump",
    "file_name",
    "json_schema",
    "lineage_files",
    "load",
    "load_lineage",
    "merge_subcodes",
    "migration_map",
    "migration_path",
    "next_version",
    "parse",
    "remove_code",
    "rename_code",
    "roll_up",
    "save",
    "split_subcode",
    "to_codebook",
    "to_document",
    "validate",
]
