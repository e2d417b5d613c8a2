"""Reviews made under an older codebook after a bump (issue 28): migrated or stale.

Before, `failcodes run` and `report` exited 2 after a codebook bump in a study with pulled
reviews ("annotations were made under different codebooks ... Bring them to one version
first (failcodes.migration.pool_annotations ...)": no file named, a Python API as the remedy).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.codebook import UnitKind, bundled, dump
from failcodes.reviewversions import bring_reviews
from failcodes.saturation.changes import next_version
from failcodes.study import StudyLayout
from tests.cli_helpers import exit_code, run_cli
from tests.test_study_recode import CHANGE, STUDY

V1 = bundled()
V2 = next_version(V1, UnitKind.RETRIEVAL, [CHANGE], "accepted: animal study")


def _review(uid: str, scope: str, cb: object = V1, coder: str = "alice") -> Annotation:
    part = V1.part(UnitKind.RETRIEVAL)
    codes = {d.id: d.high_quality_code for d in part.dimensions}
    return Annotation(
        unit_id=uid,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=cb.ref(),  # type: ignore[attr-defined]
        coder=coder,
        coder_kind=CoderKind.HUMAN,
        status=Status.SCORED,
        codes={**codes, "scope": scope},
    )


def test_reviews_are_carried_where_the_map_carries_them() -> None:
    files = {
        "review/alice.jsonl": [
            _review("u1", "exact_scope"),  # the map carries it: migrated
            _review("u2", "different_context"),  # gained a leaf in v2: stale
            _review("u3", "broader_scope", cb=V2),  # made under v2 already: current
        ],
        "review/bob.jsonl": [_review("u4", "exact_scope")],
    }
    got = bring_reviews(files, V2, {1: V1, 2: V2})
    assert sorted(a.unit_id for a in got.reviews) == ["u1", "u3", "u4"]
    assert {a.codebook.version for a in got.reviews} == {2}
    alice = got.files["review/alice.jsonl"]
    assert (alice.current, alice.migrated, alice.versions) == (1, 1, {1})
    assert alice.stale == {"u2": "scope: different_context gained a leaf"}
    assert got.stale_units("review/alice.jsonl", UnitKind.RETRIEVAL) == ["u2"]
    assert (got.migrated, got.stale) == (2, 1)


def test_a_unit_reviewed_again_under_the_new_version_supersedes_the_old_review() -> None:
    # alice reviewed u1, u2, u5 under v1, then u2 (re-opened, stale) and u5 again under v2;
    # bob reviewed u2 under v1 only
    files = {
        "review/alice.jsonl": [
            _review("u1", "exact_scope"),  # migrated
            _review("u2", "different_context"),  # stale, but reviewed again: superseded
            _review("u5", "exact_scope"),  # would migrate, but reviewed again: superseded
        ],
        "review/alice-v2.jsonl": [
            _review("u2", "exact_scope", cb=V2),
            _review("u5", "broader_scope", cb=V2),
        ],
        "review/bob.jsonl": [_review("u2", "different_context", coder="bob")],
    }
    got = bring_reviews(files, V2, {1: V1, 2: V2})
    # counted once per (unit, coder): alice's u1 (migrated), u2 and u5 (v2); bob's u2 is stale
    assert sorted((a.unit_id, a.coder, a.codebook.version) for a in got.reviews) == [
        ("u1", "alice", 2),
        ("u2", "alice", 2),
        ("u5", "alice", 2),
    ]
    alice = got.files["review/alice.jsonl"]
    assert (alice.current, alice.migrated, alice.superseded, alice.stale) == (0, 1, 2, {})
    assert got.stale_units("review/alice.jsonl", UnitKind.RETRIEVAL) == []  # nothing to re-open
    assert got.files["review/bob.jsonl"].stale == {"u2": "scope: different_context gained a leaf"}
    assert got.stale_units("review/bob.jsonl", UnitKind.RETRIEVAL) == ["u2"]


def test_reviews_without_a_path_to_the_version_are_stale() -> None:
    v3 = next_version(V2, UnitKind.RETRIEVAL, [], "v3")
    # v2 is not in the lineage: nothing carries a v1 review to v3
    got = bring_reviews({"r.jsonl": [_review("u1", "exact_scope")]}, v3, {1: V1, 3: v3})
    assert got.reviews == []
    assert got.files["r.jsonl"].stale["u1"].startswith("no migration path from version 1")
    # a review under another codebook altogether
    other = V1.model_copy(update={"name": "other-book"})
    got = bring_reviews({"r.jsonl": [_review("u1", "exact_scope", cb=other)]}, V2, {1: V1, 2: V2})
    assert got.files["r.jsonl"].stale["u1"] == (
        "made under another codebook (other-book), not medical-fact-check"
    )


def test_the_report_builds_after_a_bump_and_names_migrated_and_stale_reviews(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "rc"
    layout = StudyLayout.of(root)
    root.mkdir()
    (root / f"{V1.name}.v1.yaml").write_text(dump(V1), encoding="utf-8")
    study = STUDY.format(codebook=f"{V1.name}.v1.yaml", base_url="http://127.0.0.1:9/v1")
    study = study.replace('judge = "openai:fake-model"\nbase_url = "http://127.0.0.1:9/v1"', "")
    layout.study_file.write_text(study, encoding="utf-8")  # the offline judge: no server
    assert exit_code("run", str(root)) == 0
    # a reviewer went over 30 units under v1, 5 of them coded scope = different_context
    judged = layout.judge_run("scifact-dev", "retrieval") / "annotations.jsonl"
    first = [Annotation.model_validate_json(x) for x in judged.read_text().splitlines()[:30]]
    reviews = [
        _review(a.unit_id, "different_context" if i < 5 else "exact_scope")
        for i, a in enumerate(first)
    ]
    layout.review_dir.mkdir()
    (layout.review_dir / "alice.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in reviews)
    )
    # the bump: v2 beside v1, the study file pointing at it (as saturate leaves it)
    (root / f"{V2.name}.v2.yaml").write_text(dump(V2), encoding="utf-8")
    text = layout.study_file.read_text(encoding="utf-8").replace(".v1.yaml", ".v2.yaml")
    layout.study_file.write_text(text, encoding="utf-8")
    assert exit_code("run", str(root)) == 0  # was: exit 2, mixed codebooks
    log = (layout.logs_dir / "report.log").read_text()
    assert (
        "review/alice.jsonl: reviews made under medical-fact-check v1, the codebook is now v2; "
        "25 migrated to v2 through the migration map; 5 stale, left out of the agreement and "
        "the corrected tables (scope: different_context gained a leaf)"
    ) in log
    html = (layout.report_dir / "index.html").read_text()
    assert "Reviews made under an older codebook" in html
    # `failcodes report STUDY` on its own: exit 0, the same counts on stderr and the page
    capsys.readouterr()
    code, _, err = run_cli(["report", str(root)], capsys)
    assert code == 0, err
    lines = err.splitlines()
    assert lines[0] == (
        "review/alice.jsonl: reviews made under medical-fact-check v1, the codebook is now v2; "
        "25 migrated to v2 through the migration map; 5 stale, left out of the agreement and "
        "the corrected tables (scope: different_context gained a leaf)"
    )
    assert lines[1].startswith("review/alice.jsonl: re-open its 5 stale retrieval review(s)")
    assert "25 migrated to v2" in (layout.report_dir / "index.html").read_text()
    # human vs judge agreement over the 25 migrated reviews (the judge re-coded onto v2)
    agreement = (layout.report_dir / "tables" / "agreement.csv").read_text()
    assert ",25," in agreement
    # the one command that re-opens the 5 stale units, under v2, pre-selecting the judge's
    # v2 codes; run here as `export` (the same tasks, no server)
    line = next(ln for ln in log.splitlines() if "re-open its 5 stale retrieval" in ln)
    command = line.split("with: ", 1)[1].split("; then pull", 1)[0]
    argv = shlex.split(command)
    assert argv[:3] == ["failcodes", "labelstudio", "push"]
    assert "--codebook" in argv and argv[argv.index("--codebook") + 1].endswith(".v2.yaml")
    units = Path(argv[3])
    assert [json.loads(x)["id"] for x in units.read_text().splitlines()] == [
        r.unit_id for r in reviews[:5]
    ]
    project = argv.index("--project")
    export = ["labelstudio", "export", *argv[3:project], "-o", str(tmp_path / "tasks.json")]
    assert exit_code(*export) == 0
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    assert len(tasks) == 5
    assert {t["data"]["failcodes_codebook"].split("+")[0] for t in tasks} == {
        "medical-fact-check@2"
    }
    assert all(t["predictions"] for t in tasks)  # the judge's v2 codes pre-selected
