"""The error codebook as code: models, loading, validation, hashing, diffing, migration.

Notebook use: docs/codebook.md ("Python API": load, ref, lineage, diff, migrate, draft, save).

A file is YAML named ``<name>.v<version>.yaml`` (format: :class:`CodebookDocument`, JSON
Schema: :func:`json_schema`). Validation errors are :class:`~failcodes.errors.CodebookError`
naming file, YAML line and rule (:data:`RULES`).
"""

from failcodes.codebook._diff import CodebookDiff as CodebookDiff
from failcodes.codebook._diff import CodeChange as CodeChange
from failcodes.codebook._diff import DiffKind as DiffKind
from failcodes.codebook._diff import MigrationMap as MigrationMap
from failcodes.codebook._diff import Suggestion as Suggestion
from failcodes.codebook._diff import check_migration as check_migration
from failcodes.codebook._diff import compose as compose
from failcodes.codebook._diff import diff as diff
from failcodes.codebook._diff import migration_map as migration_map
from failcodes.codebook._diff import migration_path as migration_path
from failcodes.codebook._document import MAX_CODEBOOK_BYTES as MAX_CODEBOOK_BYTES
from failcodes.codebook._document import RULES as RULES
from failcodes.codebook._document import CodebookDocument as CodebookDocument
from failcodes.codebook._document import LeafEntry as LeafEntry
from failcodes.codebook._document import json_schema as json_schema
from failcodes.codebook._document import load as load
from failcodes.codebook._document import parse as parse
from failcodes.codebook._document import to_codebook as to_codebook
from failcodes.codebook._document import to_document as to_document
from failcodes.codebook._document import validate as validate
from failcodes.codebook._edit import CodebookDraft as CodebookDraft
from failcodes.codebook._edit import add_leaf as add_leaf
from failcodes.codebook._edit import add_subcode as add_subcode
from failcodes.codebook._edit import merge_subcodes as merge_subcodes
from failcodes.codebook._edit import next_version as next_version
from failcodes.codebook._edit import remove_code as remove_code
from failcodes.codebook._edit import rename_code as rename_code
from failcodes.codebook._edit import split_subcode as split_subcode
from failcodes.codebook._models import ID_PATTERN as ID_PATTERN
from failcodes.codebook._models import NAME_PATTERN as NAME_PATTERN
from failcodes.codebook._models import ChangeKind as ChangeKind
from failcodes.codebook._models import Codebook as Codebook
from failcodes.codebook._models import CodebookRef as CodebookRef
from failcodes.codebook._models import CodeInfo as CodeInfo
from failcodes.codebook._models import CodeLevel as CodeLevel
from failcodes.codebook._models import Dimension as Dimension
from failcodes.codebook._models import Leaf as Leaf
from failcodes.codebook._models import MigrationEntry as MigrationEntry
from failcodes.codebook._models import Origin as Origin
from failcodes.codebook._models import Part as Part
from failcodes.codebook._models import Subcode as Subcode
from failcodes.codebook._models import UnitKind as UnitKind
from failcodes.codebook._models import roll_up as roll_up
from failcodes.codebook._store import DEFAULT_NAME as DEFAULT_NAME
from failcodes.codebook._store import DEFAULT_VERSION as DEFAULT_VERSION
from failcodes.codebook._store import bundled as bundled
from failcodes.codebook._store import bundled_dir as bundled_dir
from failcodes.codebook._store import bundled_for as bundled_for
from failcodes.codebook._store import cited_in as cited_in
from failcodes.codebook._store import dump as dump
from failcodes.codebook._store import file_name as file_name
from failcodes.codebook._store import lineage_files as lineage_files
from failcodes.codebook._store import load_lineage as load_lineage
from failcodes.codebook._store import save as save
