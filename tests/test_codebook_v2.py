"""The bundled codebook version 2: reasoning steps whose low-quality codes co-occur (issue 25).

Seed 001 (Table 9) lets the low-quality codes of one reasoning step co-occur; version 1 makes
every dimension single-label. Version 2 differs from version 1 only in four multi_label flags,
made with the codebook's own draft/diff/migration machinery; version 1 stays the default.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from failcodes import codebook
from failcodes.annotations import Annotation, CoderKind
from failcodes.codebook import CodebookDraft, DiffKind
from failcodes.errors import CodebookError
from failcodes.judge.schema import answer_schema
from failcodes.labelstudio.config import labeling_config
from failcodes.migration import migrate
from failcodes.units import UnitKind

REPO = Path(__file__).resolve().parent.parent
V1 = codebook.load(REPO / "taxonomy" / "medical-fact-check.v1.yaml")
V2 = codebook.load(REPO / "taxonomy" / "medical-fact-check.v2.yaml")
WIDENED = ("evidence_selection", "inference", "verbal_confidence", "grounding")


def test_v2_is_v1_with_four_reasoning_steps_multi_label() -> None:
    assert (V2.version, V2.parent_version) == (2, 1)
    assert V2.code_lists() == V1.code_lists()  # the same codes, in the same order
    assert V2.hash != V1.hash  # multi_label is part of the hash when true
    multi = [d.id for _, d in V2.dimensions() if d.multi_label]
    assert tuple(multi) == WIDENED
    # the two steps left single-label have one low-quality code each: nothing to co-occur
    for dim_id in ("evidence_understanding", "label_consistency"):
        dim = V2.dimension(dim_id)
        assert not dim.multi_label and sum(not s.high_quality for s in dim.subcodes) == 1
    assert not any(d.multi_label for d in V2.part(UnitKind.RETRIEVAL).dimensions)


def test_v2_is_what_the_draft_machinery_makes_from_v1() -> None:
    draft = CodebookDraft(V1, V2.changelog.split("\n- ")[0])
    for dim in WIDENED:
        draft.set_multi_label(dim)
    built = draft.build()
    assert built.hash == V2.hash and built.changelog == V2.changelog
    assert built.migration == ()  # no code changed
    with pytest.raises(CodebookError, match="already multi-label"):
        CodebookDraft(V2, "x").set_multi_label("inference")


def test_diff_and_migration_map_v1_to_v2() -> None:
    d = codebook.diff(V1, V2)
    assert [(c.kind, c.new, c.fields) for c in d.changes] == [
        (DiffKind.CHANGED, (dim,), ("multi_label",)) for dim in WIDENED
    ]
    assert d.migration is not None
    assert all(old == new for old, new in d.migration.codes.items())
    assert d.migration.widened == WIDENED and d.migration.multi_label == WIDENED
    lineage = codebook.load_lineage(codebook.bundled_dir(), codebook.DEFAULT_NAME)
    assert [cb.hash for cb in lineage] == [V1.hash, V2.hash]


def test_a_v1_annotation_migrates_with_its_steps_as_sets_of_one() -> None:
    ann = Annotation(
        unit_id="u1",
        unit_kind=UnitKind.VERIFICATION,
        codebook=V1.ref(),
        coder="dr_a",
        coder_kind=CoderKind.HUMAN,
        codes={"inference": "overreach", "label_consistency": "consistent"},
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    mapping = codebook.diff(V1, V2).migration
    assert mapping is not None
    out = migrate(ann, mapping)
    assert out.annotation.codebook == V2.ref() and not out.needs_recoding
    assert out.annotation.codes == ann.codes
    assert out.annotation.code_sets == {"inference": ["overreach"]}
    assert out.widened == ("inference",)  # a co-occurring code may be missing there


def test_compose_keeps_widened_unless_narrowed_again() -> None:
    v3 = CodebookDraft(V2, "inference single-label again").set_multi_label("inference", False)
    v3_cb = v3.build()
    path = codebook.migration_path([V1, V2, v3_cb], 1, 3)
    assert path.widened == ("evidence_selection", "verbal_confidence", "grounding")


def test_default_stays_v1_and_v2_is_bundled() -> None:
    assert codebook.DEFAULT_VERSION == 1
    assert codebook.bundled().hash == V1.hash
    assert codebook.bundled(version=2).hash == V2.hash
    assert codebook.bundled_for(V2.ref()) == codebook.bundled(version=2)
    other = V2.ref().model_copy(update={"hash": "0" * 64})
    assert codebook.bundled_for(other) is None  # same name and version, other content


def test_judge_schema_and_labelstudio_config_follow_the_flag() -> None:
    part = V2.part(UnitKind.VERIFICATION)
    schema = answer_schema(part)
    props = schema["properties"]
    for dim in part.dimensions:
        record = props[dim.id]["properties"]
        if dim.multi_label:
            assert "codes" in record and "code" not in record
            assert record["codes"]["type"] == "array"
            assert record["codes"]["items"]["enum"] == dim.code_ids()
        else:
            assert "code" in record and "codes" not in record
    xml = labeling_config(V2, UnitKind.VERIFICATION)
    for dim in part.dimensions:
        choice = "multiple" if dim.id in WIDENED else "single"
        assert f'name="{dim.id}" toName="claim" choice="{choice}"' in xml
    # the default (v1) keeps one code per step
    assert 'choice="multiple"' not in labeling_config(V1, UnitKind.VERIFICATION)
    json.dumps(schema)  # serialisable as sent to a provider


def test_init_codebook_version_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from failcodes.cli.main import main

    with pytest.raises(SystemExit) as done:
        main(["init", str(tmp_path / "st"), "--codebook-version", "2"])
    assert done.value.code in (0, None)
    copied = tmp_path / "st" / "medical-fact-check.v2.yaml"
    assert codebook.load(copied).hash == V2.hash
    text = (tmp_path / "st" / "failcodes.toml").read_text(encoding="utf-8")
    assert 'codebook = "medical-fact-check.v2.yaml"' in text


def test_offline_judge_answers_the_multi_label_steps_with_sets() -> None:
    from failcodes.judge.providers.offline import OfflineCoder
    from failcodes.units import verification_units
    from tests.judge_helpers import make_traces

    part = V2.part(UnitKind.VERIFICATION)
    unit = verification_units(make_traces(1))[0]
    answer = OfflineCoder().code(unit, part).answer
    assert answer is not None
    assert set(answer.code_sets) == set(WIDENED)  # sets of one: the heuristic gives one code
    assert all(len(codes) == 1 for codes in answer.code_sets.values())
