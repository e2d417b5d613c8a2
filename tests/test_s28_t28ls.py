"""Session 28 (t28ls): the human loop on shapes a second team's data brings (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from failcodes import codebook as codebooks
from failcodes.errors import InputError
from failcodes.labelstudio import config as cfg
from failcodes.labelstudio.results import annotations_from_export
from failcodes.labelstudio.tasks import build_tasks
from failcodes.units import UnitKind
from tests.labelstudio_helpers import retrieval_unit, toy_codebook
from tests.saturation.test_cli import decide, scripted_round
from tests.test_cli_labelstudio import run  # noqa: F401  (in-process CLI fixture)
from tests.test_labelstudio_tasks import choice

A = [choice("entity", "exact_entity"), choice("scope", "exact_scope")]
B = [choice("entity", "partial_entity"), choice("scope", "broader_scope")]


def _annotation(ann_id: Any, by: Any, result: list[dict[str, Any]], minute: int) -> dict[str, Any]:
    stamp = f"2026-11-30T00:{minute:02d}:00Z"
    return {
        "id": ann_id,
        "completed_by": by,
        "result": result,
        "was_cancelled": False,
        "created_at": stamp,
        "updated_at": stamp,
        "lead_time": 5.0,
    }


def _string_id_export() -> list[dict[str, Any]]:
    """Two tasks with every id a string, as a converted or hand-edited export writes them.

    Task "101": user "3" and user "4" disagree. Task "102": user "3" annotated twice at one
    time stamp, annotation "4" (codes B) after annotation "3" (codes A) by id.
    """
    data = build_tasks([retrieval_unit(i) for i in range(2)], toy_codebook(), UnitKind.RETRIEVAL)
    return [
        {
            "id": "101",
            "project": "7",
            "data": data[0]["data"],
            "annotations": [_annotation("1", "3", A, 1), _annotation("2", "4", B, 2)],
        },
        {
            "id": "102",
            "project": "7",
            "data": data[1]["data"],
            "annotations": [_annotation("4", "3", B, 5), _annotation("3", "3", A, 5)],
        },
    ]


def test_string_ids_read_as_label_studio_ids() -> None:
    # main read "3" as no annotator: 4 coders 'unknown-annotator-...' (one a review), user 3's
    # two reviews of task 102 two reviewers, and the last listed (A) kept as if by another
    # coder. By hand: 2 coders; task 101 alice A, bob B; task 102 alice once, annotation "4"
    # (the higher id, one time on both) = B.
    res = annotations_from_export(
        _string_id_export(),
        toy_codebook(),
        UnitKind.RETRIEVAL,
        users={3: "alice@x.org", 4: "bob@x.org"},
        project=7,
    )
    got = sorted((a.unit_id, a.coder, a.codes["entity"]) for a in res.annotations)
    u0, u1 = retrieval_unit(0).id, retrieval_unit(1).id
    assert got == sorted(
        [
            (u0, "alice@x.org", "exact_entity"),
            (u0, "bob@x.org", "partial_entity"),
            (u1, "alice@x.org", "partial_entity"),
        ]
    )
    [twice] = res.problems
    assert twice.task_id == 102
    assert "kept the one with the higher annotation id (one time on both)" in twice.message


def test_string_user_ids_named_by_user_option(tmp_path: Path, run: Any) -> None:  # noqa: F811
    # main refused '--user 3=alice@x.org: no annotation in the export is by user id 3 (the ids
    # it holds: none: it names its annotators itself)': the export holds "3" and "4"
    cb = toy_codebook()
    cb_path = tmp_path / codebooks.file_name(cb.name, cb.version)
    cb_path.write_text(codebooks.dump(cb), encoding="utf-8")
    (tmp_path / "export.json").write_text(json.dumps(_string_id_export()), encoding="utf-8")
    proc = run(
        "import", "export.json", "-p", "retrieval", "-c", cb_path, "--user", "3=alice@x.org",
        "--user", "4=bob@x.org", "-o", "human.jsonl", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "3 annotations from 2 coder(s) on 2 tasks" in proc.stdout
    lines = (tmp_path / "human.jsonl").read_text(encoding="utf-8").splitlines()
    coders = [json.loads(line)["coder"] for line in lines]
    assert sorted(coders) == ["alice@x.org", "alice@x.org", "bob@x.org"]


def test_email_as_completed_by_is_the_coder() -> None:
    # an export naming annotators by email string: main made each annotation a coder of its
    # own, so one person's two annotations of a unit were two reviewers. By hand: one coder.
    tasks = _string_id_export()[1:]
    for ann in tasks[0]["annotations"]:
        ann["completed_by"] = "carol@x.org"
    res = annotations_from_export(tasks, toy_codebook(), UnitKind.RETRIEVAL)
    assert [(a.coder, a.codes["entity"]) for a in res.annotations] == [
        ("carol@x.org", "partial_entity")
    ]


@pytest.mark.parametrize(
    ("made", "words"),
    [
        (1, "made under version 1 of this codebook, an older one: import with that version's"),
        (3, "made under version 3 of this codebook, a newer one"),
        (2, "the same name and version, another content hash"),
    ],
)
def test_tasks_of_another_codebook_version_say_which(made: int, words: str) -> None:
    # tasks pushed under toy v1, the study bumped to v2: main said 'the export is from another
    # project'. The codebook of the import is toy v2.
    now = toy_codebook().model_copy(update={"version": 2})
    data = build_tasks([retrieval_unit(0)], now, UnitKind.RETRIEVAL)[0]["data"]
    data[cfg.CODEBOOK] = f"toy@{made}+0123456789ab"  # not now's hash
    task = {"id": 5, "data": data, "annotations": [_annotation(1, 3, A, 1)]}
    with pytest.raises(InputError) as err:
        annotations_from_export([task], now, UnitKind.RETRIEVAL)
    assert words in str(err.value)
    assert "another project" not in str(err.value)


# --- saturation: a pattern already in the codebook under an accented spelling -------------

SJOGREN = {
    "dimension": "scope",
    "parent_subcode": "different_context",
    "name": "Sjogren syndrome population",
    "definition": "Patients with Sjogren syndrome instead of the claim's population.",
}


def test_accented_spelling_of_a_leaf_is_no_new_pattern(tmp_path: Path) -> None:
    # round 1 adds 'Sjogren syndrome population'; round 2's proposer gives 'Sjögren syndrome
    # population'. main split on non a-z ('sj gren ...'): a new leaf sj_gren_syndrome_population,
    # accumulation r2 +1, v3. By hand: both names normalise to 'sjogren syndrome population',
    # a duplicate of the leaf: round 2 has no open proposal, +0, 1/2 rounds without new ones.
    from tests.saturation.test_cli import cli, setup_project

    again = {**SJOGREN, "name": "Sjögren syndrome population"}
    again["definition"] = "Passage about a Sjögren cohort; the claim is about another group."
    coder, proposer = setup_project(tmp_path, {"1": [SJOGREN], "2": [again]})
    scripted_round(tmp_path, coder, proposer)
    assert decide(tmp_path, 1, {"decision": "accept"}).returncode == 0
    out = scripted_round(tmp_path, coder, proposer)
    assert "1 proposal(s), 0 after deduplication" in out
    assert "round 2 closed: 0 new pattern(s)" in out
    status = cli("status", "trial", cwd=tmp_path).stdout
    assert "accumulation: r1: +1 (=1), r2: +0 (=1)" in status
    assert "stop rule: 1/2 rounds without new patterns" in status


def test_rename_to_an_accented_spelling_of_another_addition_is_refused(tmp_path: Path) -> None:
    # one round, two proposals: p01 accepted as 'Sjogren syndrome population', p02 renamed by
    # the reviewer to 'Sjögren Syndrome Populations'. main added both (2 new patterns, leaves
    # sjogren_syndrome_population and sj_gren_syndrome_population); by hand one pattern twice.
    from tests.saturation.test_cli import setup_project

    other = {**SJOGREN, "name": "Autoimmune cohort", "definition": "Another disease group."}
    coder, proposer = setup_project(tmp_path, {"1": [SJOGREN, other]})
    scripted_round(tmp_path, coder, proposer)
    done = decide(
        tmp_path,
        1,
        {"decision": "accept"},
        {"decision": "rename", "new_name": "Sjögren Syndrome Populations"},
    )
    assert done.returncode == 2
    assert "as r0001-p01 is in this round: one pattern would be added twice" in done.stderr


def test_slug_and_tokens_fold_accents_and_keep_ascii_as_before() -> None:
    from failcodes.saturation.dedupe import normalise_name, slug, tokens

    assert slug("Ménière disease") == "meniere_disease"  # main: 'm_ni_re_disease'
    assert normalise_name("Naïve comparator") == normalise_name("Naive comparator")
    # ASCII names: as before (stop words out, plural s, ies -> y)
    assert tokens("Animal studies in the Mice_models") == ["animal", "study", "mice", "model"]
    # a name in another script keeps its words (main: no token, so every such name was one)
    assert normalise_name("Μελέτη σε ζώα") == "μελετη σε ζωα"
    assert slug("Μελέτη σε ζώα") == "pattern"  # an id is [a-z0-9_]


def test_true_false_written_as_strings() -> None:
    # a converted export writes flags as strings. main read "false" as true (a non-empty
    # string): all 3 annotations skips, no review kept. By hand: alice's two annotations are
    # reviews (lead time 12.5 s from "12.5"), bob's "true" a skip; alice's "true" ground truth.
    tasks = _string_id_export()
    first, second = tasks[0]["annotations"]
    first.update(was_cancelled="false", lead_time="12.5")
    second.update(was_cancelled="true", ground_truth="false")
    tasks[1]["annotations"] = [tasks[1]["annotations"][0]]
    tasks[1]["annotations"][0].update(was_cancelled="False", ground_truth="true")
    res = annotations_from_export(
        tasks, toy_codebook(), UnitKind.RETRIEVAL, users={3: "alice@x.org", 4: "bob@x.org"}
    )
    got = sorted((a.coder, a.status.value, a.lead_time_s or 0.0) for a in res.annotations)
    assert got == [
        ("alice@x.org", "scored", 5.0),
        ("alice@x.org", "scored", 12.5),
        ("bob@x.org", "unscored", 5.0),
    ]
    assert res.ground_truth == {"alice@x.org": 1}
    tasks[0]["annotations"][0]["was_cancelled"] = "maybe"
    with pytest.raises(InputError, match=r"annotation 1 has was_cancelled 'maybe' \(expected"):
        annotations_from_export(tasks, toy_codebook(), UnitKind.RETRIEVAL)


def test_import_says_how_many_reviewers_proposed_a_new_code(tmp_path: Path, run: Any) -> None:  # noqa: F811
    # the config's free-text 'other_code' is kept in Annotation.proposal and no command reads
    # it: main's summary line said nothing of it. Here 1 of the 3 annotations proposes one.
    from tests.test_labelstudio_tasks import text

    cb = toy_codebook()
    cb_path = tmp_path / codebooks.file_name(cb.name, cb.version)
    cb_path.write_text(codebooks.dump(cb), encoding="utf-8")
    tasks = _string_id_export()
    tasks[0]["annotations"][1]["result"] = [*B, text("other_code", "paediatric population")]
    (tmp_path / "export.json").write_text(json.dumps(tasks), encoding="utf-8")
    proc = run(
        "import", "export.json", "-p", "retrieval", "-c", cb_path, "-o", "h.jsonl", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "; 1 proposes a new code (the annotations' `proposal` field" in proc.stdout


def test_an_export_that_is_no_list_is_said_so_with_user_names(tmp_path: Path, run: Any) -> None:  # noqa: F811
    # {"tasks": [...]} (an API answer, not an export) with --user 3=alice: main refused
    # '--user 3=alice@x.org: no annotation in the export is by user id 3 (the ids it holds:
    # none: it names its annotators itself)' though user 3 annotated; without --user it said
    # what is wrong. Now it says so with --user too.
    cb = toy_codebook()
    cb_path = tmp_path / codebooks.file_name(cb.name, cb.version)
    cb_path.write_text(codebooks.dump(cb), encoding="utf-8")
    (tmp_path / "x.json").write_text(json.dumps({"tasks": _string_id_export()}), encoding="utf-8")
    proc = run(
        "import",
        "x.json",
        "-p",
        "retrieval",
        "-c",
        cb_path,
        "--user",
        "3=alice@x.org",
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "failcodes: error: x.json: not a Label Studio JSON export (expected a list of tasks)"
    ]


def test_a_plan_too_small_for_its_strata_says_the_size_it_takes() -> None:
    # 11 units: system A 9 (3 coded entity_mismatch, 6 exact_entity), B 2 (one of each), by
    # system x code: 4 strata of 6, 3, 1, 1 units, which take 2 + 2 + 1 + 1 = 6 reviews (a
    # 1-unit stratum is a census). main said each needs 2 (8) and no size.
    import pandas as pd

    from failcodes.reviewplan import StratifyBy, draw_plan
    from tests.test_review_plan import coded_table

    entity = {f"u{i:02d}": "exact_entity" if i % 3 else "entity_mismatch" for i in range(11)}
    table: pd.DataFrame = coded_table(entity, {u: "AB"[i >= 9] for i, u in enumerate(entity)})
    with pytest.raises(InputError, match="it takes --size 6 at least"):
        draw_plan(
            table, UnitKind.RETRIEVAL, name="p", size=4, seed=0, source="x.csv",
            source_sha256="0" * 64, stratify=[StratifyBy.SYSTEM, StratifyBy.CODE],
        )  # fmt: skip
