"""New versions: drafts, diffs, migration maps, migrating annotations, saving, lineages."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from failcodes import codebook
from failcodes.annotations import NOT_ASSESSABLE, Annotation, CoderKind, Status
from failcodes.codebook import (
    ChangeKind,
    CodebookDraft,
    CodeLevel,
    DiffKind,
    Leaf,
    MigrationEntry,
    Subcode,
)
from failcodes.errors import CodebookError
from failcodes.migration import migrate
from failcodes.units import UnitKind

REPO = Path(__file__).resolve().parent.parent
V1_PATH = REPO / "taxonomy" / "medical-fact-check.v1.yaml"
V1 = codebook.load(V1_PATH)

CLASS_LEAF = Leaf(
    id="class_for_agent",
    label="Class for agent",
    definition="The passage speaks of the drug class where the claim names one agent.",
    examples=("Claim on sertraline; passage on SSRIs.",),
)


def make_v2() -> codebook.Codebook:
    """Issue 3's test version: a leaf added and two subcodes merged."""
    draft = CodebookDraft(V1, "Round 1: a leaf for class-level evidence; scope narrowed down.")
    draft.add_leaf("partial_entity", CLASS_LEAF)
    draft.merge_subcodes(
        ["broader_scope", "narrower_scope"],
        into="scope_mismatch",
        label="Scope mismatch",
        definition="The passage covers a wider or narrower group than the claim.",
        note="coders could not tell broader from narrower reliably",
    )
    return draft.build()


def annotation(codes: dict[str, str], **extra: object) -> Annotation:
    fields: dict[str, object] = {
        "unit_id": "u1",
        "unit_kind": UnitKind.RETRIEVAL,
        "codebook": V1.ref(),
        "coder": "alice",
        "coder_kind": CoderKind.HUMAN,
        "codes": codes,
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
    }
    fields.update(extra)
    return Annotation.model_validate(fields)


RETRIEVAL_HQ = {
    "entity_match": "exact_entity",
    "scope": "exact_scope",
    "trustworthy": "trustworthy_source",
    "evidence_polarity": "direct_polarity",
    "chunking": "well_chunked",
}


def test_v2_has_version_parent_changelog_and_explicit_migration() -> None:
    v2 = make_v2()
    assert (v2.version, v2.parent_version) == (2, 1)
    assert v2.changelog.splitlines() == [
        "Round 1: a leaf for class-level evidence; scope narrowed down.",
        "- added leaf class_for_agent under partial_entity",
        "- merged broader_scope, narrower_scope into scope_mismatch: "
        "coders could not tell broader from narrower reliably",
    ]
    assert v2.migration == (
        MigrationEntry(
            kind=ChangeKind.MERGE,
            old=("broader_scope", "narrower_scope"),
            new=("scope_mismatch",),
            note="coders could not tell broader from narrower reliably",
        ),
    )
    scope = v2.dimension("scope")
    # merged subcode takes the place of the first merged one
    assert scope.code_ids() == ["exact_scope", "scope_mismatch", "different_context"]
    assert v2.leaf_parents() == {"class_for_agent": "partial_entity"}
    assert v2.hash != V1.hash


def test_diff_v1_v2_lists_exactly_the_added_leaf_and_the_merge() -> None:
    d = codebook.diff(V1, make_v2())
    assert [(c.kind, c.level, c.old, c.new, c.dimension) for c in d.changes] == [
        (
            DiffKind.MERGED,
            CodeLevel.SUBCODE,
            ("broader_scope", "narrower_scope"),
            ("scope_mismatch",),
            "scope",
        ),
        (DiffKind.ADDED, CodeLevel.LEAF, (), ("class_for_agent",), "entity_match"),
    ]
    assert d.suggestions == ()
    assert d.migration is not None
    assert d.migration.codes["broader_scope"] == "scope_mismatch"
    assert d.migration.codes["narrower_scope"] == "scope_mismatch"
    # every other v1 subcode maps to itself: 35 subcodes in issue 3's list, 2 merged
    identity = [k for k, v in d.migration.codes.items() if k == v]
    assert len(d.migration.codes) == 35
    assert len(identity) == 33


def test_migration_map_relabels_old_annotations() -> None:
    v2 = make_v2()
    mmap = codebook.migration_map(V1, v2)
    old = annotation({**RETRIEVAL_HQ, "scope": "narrower_scope"}, rationale="subgroup only")
    out = migrate(old, mmap)
    assert out.annotation.codes == {**RETRIEVAL_HQ, "scope": "scope_mismatch"}
    assert out.annotation.codebook == v2.ref()
    assert out.relabelled == {"narrower_scope": ("scope", "scope_mismatch")}
    assert not out.needs_recoding
    assert out.annotation.rationale == "subgroup only"
    assert old.codes["scope"] == "narrower_scope"  # the input is not mutated

    unchanged = migrate(annotation(dict(RETRIEVAL_HQ)), mmap)
    assert unchanged.annotation.codes == RETRIEVAL_HQ
    assert unchanged.relabelled == {}


def test_split_and_removal_flag_recoding() -> None:
    draft = CodebookDraft(V1, "Split indirect evidence; drop unverifiable sources.")
    draft.split_subcode(
        "indirect",
        [
            Subcode(id="mechanistic", label="Mechanistic", definition="Mechanism only."),
            Subcode(id="surrogate", label="Surrogate", definition="Surrogate outcome only."),
        ],
    )
    draft.remove("unverifiable_source")
    v2 = draft.build()
    assert {(e.kind, e.old, e.new) for e in v2.migration} == {
        (ChangeKind.SPLIT, ("indirect",), ("mechanistic", "surrogate")),
        (ChangeKind.REMOVE, ("unverifiable_source",), ()),
    }
    mmap = codebook.migration_map(V1, v2)
    assert sorted(k for k, v in mmap.codes.items() if v is None) == [
        "indirect",
        "unverifiable_source",
    ]
    old = annotation(
        {**RETRIEVAL_HQ, "evidence_polarity": "indirect", "trustworthy": "unverifiable_source"}
    )
    out = migrate(old, mmap)
    assert out.needs_recoding
    assert set(out.recode) == {"evidence_polarity", "trustworthy"}
    assert "split or removed in version 2" in out.recode["evidence_polarity"]
    assert out.annotation.codes == {
        k: v for k, v in RETRIEVAL_HQ.items() if k not in ("evidence_polarity", "trustworthy")
    }
    # a dimension coded not_assessable is not a code of either version: it is kept as it is
    kept = migrate(annotation({**RETRIEVAL_HQ, "trustworthy": NOT_ASSESSABLE}), mmap)
    assert kept.annotation.codes["trustworthy"] == NOT_ASSESSABLE
    assert "trustworthy" not in kept.recode


def test_rename_then_merge_in_one_draft_is_one_merge_entry() -> None:
    draft = CodebookDraft(V1, "Scope tidy-up.")
    draft.rename("broader_scope", "wider_scope")
    draft.merge_subcodes(["wider_scope", "narrower_scope"], into="wider_scope")
    v2 = draft.build()
    assert [(e.kind, e.old, e.new) for e in v2.migration] == [
        (ChangeKind.MERGE, ("broader_scope", "narrower_scope"), ("wider_scope",))
    ]


def test_leaves_roll_up_and_migrate() -> None:
    v2 = make_v2()
    v3 = (
        CodebookDraft(v2, "Two more leaves, then merged.")
        .add_leaf(
            "partial_entity",
            Leaf(id="other_outcome", label="Other outcome", definition="Related outcome."),
        )
        .merge_leaves(["class_for_agent", "other_outcome"], into="class_for_agent")
        .build()
    )
    assert codebook.roll_up(v3, {"entity_match": ["class_for_agent"]}) == {
        "entity_match": "partial_entity"
    }
    with pytest.raises(ValueError, match="belongs to 'entity_match', not 'scope'"):
        codebook.roll_up(v3, {"scope": ["class_for_agent"]})
    # other_outcome was new in v3's draft: no migration entry is needed for it
    assert v3.migration == ()
    ann = annotation(
        {**RETRIEVAL_HQ, "entity_match": "partial_entity"},
        codebook=v2.ref(),
        leaves={"entity_match": ["class_for_agent"]},
    )
    out = migrate(ann, codebook.migration_map(v2, v3))
    assert out.annotation.leaves == {"entity_match": ["class_for_agent"]}


def test_migration_path_composes_versions() -> None:
    v2 = codebook.rename_code(V1, "garbled", "corrupted_text", changelog="Clearer name.")
    v3 = codebook.merge_subcodes(
        v2, ["corrupted_text", "truncated"], into="corrupted_text", changelog="Merge."
    )
    path = codebook.migration_path([V1, v2, v3], 1, 3)
    assert path.codes["garbled"] == "corrupted_text"
    assert path.codes["truncated"] == "corrupted_text"
    assert path.to == v3.ref()
    out = migrate(annotation({**RETRIEVAL_HQ, "chunking": "garbled"}), path)
    assert out.annotation.codes["chunking"] == "corrupted_text"


def test_new_dimension_needs_recoding_and_annotation_from_other_content_is_refused() -> None:
    v2 = CodebookDraft(V1, "Temporal dimension (seed 001 limitations).").remove("chunking").build()
    mmap = codebook.migration_map(V1, v2)
    out = migrate(annotation(dict(RETRIEVAL_HQ)), mmap)
    assert out.dropped_dimensions == ("chunking",)
    assert "chunking" not in out.annotation.codes
    stale = annotation(dict(RETRIEVAL_HQ), codebook=V1.ref().model_copy(update={"hash": "0" * 64}))
    with pytest.raises(CodebookError, match="different content of version 1"):
        migrate(stale, mmap)


def test_unscored_annotation_is_carried_forward_without_recoding() -> None:
    v2 = make_v2()
    ann = annotation({}, status=Status.UNSCORED, reason="judge answer was not JSON")
    out = migrate(ann, codebook.migration_map(V1, v2))
    assert out.annotation.status is Status.UNSCORED
    assert out.annotation.codebook == v2.ref()
    assert not out.needs_recoding


def test_save_round_trip_and_lineage(tmp_path: Path) -> None:
    shutil.copy(V1_PATH, tmp_path / V1_PATH.name)
    v2 = make_v2()
    path = codebook.save(v2, tmp_path)
    assert path.name == "medical-fact-check.v2.yaml"
    loaded = codebook.load(path)
    assert loaded == v2
    assert loaded.hash == v2.hash
    assert codebook.load_lineage(tmp_path) == (V1, v2)
    text = path.read_text(encoding="utf-8")
    assert "  - id: class_for_agent\n    parent: partial_entity\n" in text  # top-level leaves
    assert "kind: merge" in text
    with pytest.raises(CodebookError, match="version-exists"):
        codebook.save(v2, tmp_path)
    # The v1 file written by save() also loads back identically.
    assert codebook.parse(codebook.dump(V1)) == V1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_diff_without_migration_suggests_but_does_not_map(tmp_path: Path) -> None:
    v2 = codebook.rename_code(V1, "garbled", "corrupted_text", changelog="x")
    hand_written = v2.model_copy(update={"migration": ()})
    d = codebook.diff(V1, hand_written)
    assert [(c.old, c.explicit) for c in d.of_kind(DiffKind.REMOVED)] == [(("garbled",), False)]
    assert d.migration is None
    assert d.migration_error is not None and "unexplained-removal" in d.migration_error
    assert [(s.kind, s.old, s.new, s.reason) for s in d.suggestions] == [
        (ChangeKind.RENAME, ("garbled",), ("corrupted_text",), "same label")
    ]


def test_lineage_rules_give_file_line(tmp_path: Path) -> None:
    shutil.copy(V1_PATH, tmp_path / V1_PATH.name)
    v2 = codebook.rename_code(V1, "garbled", "corrupted_text", changelog="x")
    text = codebook.dump(v2.model_copy(update={"migration": ()}))
    (tmp_path / "medical-fact-check.v2.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(CodebookError) as info:
        codebook.load_lineage(tmp_path)
    version_line = text.splitlines().index("version: 2") + 1
    assert info.value.rule == "unexplained-removal"
    assert str(info.value).startswith(f"{tmp_path / 'medical-fact-check.v2.yaml'}:{version_line}")

    bad = codebook.dump(v2).replace("      - garbled", "      - garbld")
    (tmp_path / "medical-fact-check.v2.yaml").write_text(bad, encoding="utf-8")
    with pytest.raises(CodebookError) as info:
        codebook.load_lineage(tmp_path)
    assert info.value.rule == "migration-unknown-code"
    assert info.value.line == bad.splitlines().index("    old:") + 1

    (tmp_path / "medical-fact-check.v2.yaml").unlink()
    (tmp_path / "medical-fact-check.v3.yaml").write_text(
        codebook.dump(v2).replace("version: 2", "version: 3"), encoding="utf-8"
    )
    with pytest.raises(CodebookError) as info:
        codebook.load_lineage(tmp_path)
    assert info.value.rule in {"version-parent", "parent-missing"}

    (tmp_path / "medical-fact-check.v3.yaml").write_text(codebook.dump(v2), encoding="utf-8")
    with pytest.raises(CodebookError, match="name-mismatch: file name says"):
        codebook.load_lineage(tmp_path)


def test_draft_refuses_bad_edits() -> None:
    with pytest.raises(CodebookError, match="duplicate-id"):
        CodebookDraft(V1).add_leaf("partial_entity", CLASS_LEAF.model_copy(update={"id": "scope"}))
    with pytest.raises(CodebookError, match="one dimension"):
        CodebookDraft(V1).merge_subcodes(["indirect", "truncated"], into="indirect")
    with pytest.raises(CodebookError, match="high-quality-count"):
        CodebookDraft(V1, "x").remove("exact_scope").build()
    with pytest.raises(CodebookError, match="needs a changelog"):
        CodebookDraft(V1).build()


def test_migration_path_with_a_gap_in_the_lineage_is_one_codebook_error() -> None:
    v2 = codebook.rename_code(V1, "garbled", "corrupted_text", changelog="Clearer name.")
    v3 = codebook.merge_subcodes(
        v2, ["corrupted_text", "truncated"], into="corrupted_text", changelog="Merge."
    )
    # v2 is missing: the path 1 -> 3 cannot be composed (was a bare KeyError: 2).
    with pytest.raises(CodebookError, match=r"no path from version 1 to 3 \(have: 1, 3\)"):
        codebook.migration_path([V1, v3], 1, 3)
