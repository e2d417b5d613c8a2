"""Loading and validating codebook files: the bundled v1 and malformed variants.

Each malformed case edits the real v1 file (or a small codebook) and checks the one-line
error names the file, the YAML line of the offending text (found by searching the edited
text, not hard-coded) and the rule.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from failcodes import codebook
from failcodes.errors import CodebookError
from failcodes.units import UnitKind

REPO = Path(__file__).resolve().parent.parent

V1 = REPO / "taxonomy" / "medical-fact-check.v1.yaml"
V1_TEXT = V1.read_text(encoding="utf-8")

# Issue 3 lists these subcodes; the high-quality one is written first in each dimension.
ISSUE_3 = {
    UnitKind.RETRIEVAL: {
        "entity_match": ["exact_entity", "partial_entity", "entity_mismatch", "irrelevant"],
        "scope": ["exact_scope", "broader_scope", "narrower_scope", "different_context"],
        "trustworthy": ["trustworthy_source", "untrustworthy_source", "unverifiable_source"],
        "evidence_polarity": ["direct_polarity", "indirect", "neutral", "conflicting"],
        "chunking": ["well_chunked", "truncated", "merged_unrelated", "garbled"],
    },
    UnitKind.VERIFICATION: {
        "evidence_selection": ["complete_selection", "selective_coverage", "wrong_evidence"],
        "evidence_understanding": ["correct_understanding", "misreading"],
        "inference": ["valid_inference", "overreach", "conflict_synthesis_failure"],
        "verbal_confidence": ["calibrated", "overconfident", "underconfident"],
        "label_consistency": ["consistent", "label_reasoning_mismatch"],
        "grounding": ["grounded", "ungrounded_reasoning", "fabricated_quote"],
    },
}


def test_v1_matches_issue_3_exactly() -> None:
    cb = codebook.load(V1)
    assert (cb.name, cb.version, cb.parent_version) == ("medical-fact-check", 1, None)
    for kind, dims in ISSUE_3.items():
        part = cb.part(kind)
        assert [d.id for d in part.dimensions] == list(dims)
        for dim_id, subcodes in dims.items():
            dim = part.dimension(dim_id)
            assert dim.code_ids() == subcodes
            assert dim.high_quality_code == subcodes[0]
            assert [s.id for s in dim.subcodes if s.high_quality] == [subcodes[0]]
            for sub in dim.subcodes:
                assert sub.definition.strip() and sub.label.strip()
                assert len(sub.examples) == 1, sub.id
                assert sub.include and sub.exclude, sub.id


def test_v1_ref_records_name_version_and_hash() -> None:
    cb = codebook.load(V1)
    ref = cb.ref()
    assert (ref.name, ref.version, ref.hash) == (cb.name, 1, cb.hash)
    assert len(ref.hash) == 64
    # Changelog wording is not part of the identity; a definition is.
    assert cb.model_copy(update={"changelog": "x"}).hash == cb.hash
    part = cb.parts[0]
    changed = part.model_copy(update={"label": "Retrieval!"})
    assert cb.model_copy(update={"parts": (changed, *cb.parts[1:])}).hash != cb.hash


def test_hash_is_computed_once_per_codebook_and_copies_recompute_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the hash (model_dump + canonical JSON + sha256) was recomputed for every annotation
    # read: 61-73% of attribute and labelstudio export at paper scale (issue 30)
    from failcodes.codebook import _models

    calls: list[int] = []
    real = _models.content_hash

    def counting(*args: object, **kwargs: object) -> str:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_models, "content_hash", counting)
    cb = codebook.load(V1)
    digests = {cb.hash for _ in range(3)} | {cb.ref().hash for _ in range(3)}
    assert len(digests) == 1 and len(calls) == 1
    assert cb.ref() is cb.ref()
    # a copy with another version is another codebook: its own hash, that of the same
    # content loaded afresh (not the cached one of the original)
    bumped = cb.model_copy(update={"version": 2, "parent_version": 1})
    fresh = type(cb).model_validate(cb.model_dump() | {"version": 2, "parent_version": 1})
    assert bumped.hash == fresh.hash != cb.hash
    assert bumped.ref().version == 2 and len(calls) == 3
    assert bumped == fresh  # the cache is no field: equality and dumps are unchanged
    assert "hash" not in cb.model_dump()


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def test_one_taxonomy_folder() -> None:
    """taxonomy/ is a link to src/failcodes/taxonomy/, the folder the package ships: one copy
    (it was two, kept equal by hand and by a drift test); editing taxonomy/ edits what
    ``codebook.bundled()`` reads after a plain ``pip install``."""
    root, shipped = REPO / "taxonomy", REPO / "src" / "failcodes" / "taxonomy"
    assert root.is_symlink() and not shipped.is_symlink()
    assert root.resolve() == shipped.resolve()
    # what pyproject's package-data ships (**/*.yaml, **/*.json): the versions and the schema
    assert files_in(root) == [
        "codebook.schema.json",
        "medical-fact-check.v1.yaml",
        "medical-fact-check.v2.yaml",
    ]
    assert codebook.bundled() == codebook.load(V1)


def test_load_lineage_of_repo_taxonomy() -> None:
    lineage = codebook.load_lineage(REPO / "taxonomy")
    assert [cb.version for cb in lineage] == list(range(1, len(lineage) + 1))


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line of the ``occurrence``-th line containing ``needle``."""
    hits = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return hits[occurrence - 1]


def edit(old: str, new: str, count: int = 1) -> Callable[[], str]:
    def make() -> str:
        assert V1_TEXT.count(old) >= count
        return V1_TEXT.replace(old, new, count)

    return make


SMALL = """\
name: tiny
version: 1
parts:
  - id: retrieval
    label: Retrieval
    dimensions:
      - id: scope
        label: Scope
        definition: Same context?
        subcodes:
          - id: exact_scope
            label: Exact
            definition: Same context.
            high_quality: true
          - id: other_scope
            label: Other
            definition: Another context.
"""


def small(old: str, new: str) -> Callable[[], str]:
    def make() -> str:
        assert old in SMALL
        return SMALL.replace(old, new, 1)

    return make


# (case id, text maker, rule, text identifying the expected line, occurrence of that text)
CASES: list[tuple[str, Callable[[], str], str, str, int]] = [
    (
        "yaml syntax",
        edit("name: medical-fact-check", "name: medical: fact"),
        "yaml-syntax",
        "name: medical: fact",
        1,
    ),
    (
        "not a mapping",
        lambda: "- just\n- a list\n",
        "not-a-mapping",
        "- just",
        1,
    ),
    (
        "duplicate key",
        edit("version: 1\n", "version: 1\nversion: 2\n"),
        "duplicate-key",
        "version: 2",
        1,
    ),
    (
        "unknown key (typo)",
        edit("            label: Partial entity", "            lable: Partial entity"),
        "unknown-key",
        "lable: Partial entity",
        1,
    ),
    (
        "missing key",
        edit("            label: Partial entity\n", ""),
        "missing-key",
        "- id: partial_entity",
        1,
    ),
    (
        "wrong type: flag as text",
        edit("            high_quality: true", '            high_quality: "yes"'),
        "wrong-type",
        'high_quality: "yes"',
        1,
    ),
    (
        "wrong type: version as text",
        edit("version: 1\n", "version: one\n"),
        "wrong-type",
        "version: one",
        1,
    ),
    (
        "wrong type: include as text",
        small(
            "            high_quality: true\n",
            "            high_quality: true\n            include: just one rule\n",
        ),
        "wrong-type",
        "include: just one rule",
        1,
    ),
    ("bad value: version 0", edit("version: 1\n", "version: 0\n"), "bad-value", "version: 0", 1),
    (
        "bad id characters",
        edit("- id: partial_entity", "- id: Partial-Entity"),
        "bad-id",
        "- id: Partial-Entity",
        1,
    ),
    (
        "bad codebook name",
        edit("name: medical-fact-check", "name: Medical Fact Check"),
        "bad-name",
        "name: Medical Fact Check",
        1,
    ),
    ("unknown part", edit("- id: retrieval", "- id: retreival"), "unknown-part", "retreival", 1),
    ("no parts", lambda: "name: x\nversion: 1\nparts: []\n", "missing-parts", "parts: []", 1),
    (
        "empty subcodes",
        small(SMALL[SMALL.index("        subcodes:") :], "        subcodes: []\n"),
        "missing-parts",
        "subcodes: []",
        1,
    ),
    (
        "duplicate part",
        edit("  - id: verification", "  - id: retrieval"),
        "duplicate-part",
        "  - id: retrieval",
        2,
    ),
    (
        "duplicate id",
        edit("- id: irrelevant", "- id: neutral"),
        "duplicate-id",
        "- id: neutral",
        2,
    ),
    (
        "empty definition",
        small("definition: Another context.", 'definition: "  "'),
        "empty-definition",
        'definition: "  "',
        1,
    ),
    (
        "two high-quality subcodes",
        small(
            "definition: Another context.",
            "definition: Another context.\n            high_quality: true",
        ),
        "high-quality-count",
        "- id: scope",
        1,
    ),
    (
        "no high-quality subcode",
        small("            high_quality: true\n", ""),
        "high-quality-count",
        "- id: scope",
        1,
    ),
    (
        "no low-quality subcode",
        small(SMALL[SMALL.index("          - id: other_scope") :], ""),
        "no-low-quality",
        "subcodes:",
        1,
    ),
    (
        "leaf parent missing",
        edit(
            "leaves: []",
            "leaves:\n  - id: class_not_agent\n    parent: partial_entty\n"
            "    label: Class not agent\n    definition: A drug class instead of the drug.\n",
        ),
        "leaf-parent-missing",
        "parent: partial_entty",
        1,
    ),
    (
        "leaf parent is a dimension",
        edit(
            "leaves: []",
            "leaves:\n  - id: class_not_agent\n    parent: entity_match\n"
            "    label: Class not agent\n    definition: A drug class instead of the drug.\n",
        ),
        "leaf-parent-missing",
        "parent: entity_match",
        1,
    ),
    (
        "version without parent",
        edit("version: 1\n", "version: 2\n"),
        "version-parent",
        "parent_version: null",
        1,
    ),
    (
        "version skipping its parent",
        edit("version: 1\nparent_version: null", "version: 3\nparent_version: 1"),
        "version-parent",
        "parent_version: 1",
        1,
    ),
    (
        "migration in version 1",
        edit("leaves: []", "leaves: []\nmigration:\n  - kind: rename\n    old: [a]\n    new: [b]"),
        "bad-migration",
        "  - kind: rename",
        1,
    ),
]


@pytest.mark.parametrize(
    ("make", "rule", "needle", "occurrence"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_malformed_codebook_gives_one_line_file_line_rule(
    tmp_path: Path, make: Callable[[], str], rule: str, needle: str, occurrence: int
) -> None:
    text = make()
    path = tmp_path / "book.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CodebookError) as info:
        codebook.load(path)
    err = info.value
    expected_line = line_of(text, needle, occurrence)
    assert err.rule == rule
    assert (err.path, err.line) == (str(path), expected_line)
    message = err.one_line()
    assert message == str(err)  # already one line
    assert "\n" not in message
    assert message.startswith(f"{path}:{expected_line}")
    assert f": {rule}: " in message


def test_at_least_ten_rules_are_exercised() -> None:
    rules = {c[2] for c in CASES}
    assert len(rules) >= 10
    assert rules <= set(codebook.RULES)


def test_merge_entry_arity_is_checked(tmp_path: Path) -> None:
    text = V1_TEXT.replace("version: 1\nparent_version: null", "version: 2\nparent_version: 1")
    text = text.replace(
        "leaves: []",
        "leaves: []\nmigration:\n  - kind: merge\n    old: [indirect]\n    new: [neutral]\n",
    )
    path = tmp_path / "book.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CodebookError) as info:
        codebook.load(path)
    assert info.value.rule == "bad-migration"
    assert info.value.line == line_of(text, "  - kind: merge")
    assert "needs >= 2 old and 1 new" in str(info.value)


def test_missing_file_is_a_codebook_error(tmp_path: Path) -> None:
    with pytest.raises(CodebookError, match="missing-file: no such file"):
        codebook.load(tmp_path / "nope.yaml")


def test_validate_in_memory_codebook_without_file() -> None:
    cb = codebook.load(V1)
    dim = cb.parts[0].dimensions[0]
    bad_sub = dim.subcodes[1].model_copy(update={"high_quality": True})
    bad_dim = dim.model_copy(update={"subcodes": (dim.subcodes[0], bad_sub, *dim.subcodes[2:])})
    part = cb.parts[0].model_copy(update={"dimensions": (bad_dim, *cb.parts[0].dimensions[1:])})
    bad = cb.model_copy(update={"parts": (part, *cb.parts[1:])})
    with pytest.raises(CodebookError) as info:
        codebook.validate(bad)
    assert info.value.rule == "high-quality-count"
    assert str(info.value).startswith("field 'parts[0].dimensions[0].id': high-quality-count")
    assert codebook.validate(cb) is cb
