"""Outside red-team, session 12 (t12red2): review side, saturation and readers.

Each test is a shape that gave a wrong number or conclusion at exit 0 before its fix; the
expected values are worked by hand beside the assertions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.codebook import Codebook
from failcodes.saturation import (
    ProjectConfig,
    ProjectStore,
    ScriptedCoder,
    ScriptedProposer,
    init_project,
    run_round,
    stop_state,
)
from failcodes.units import Unit, UnitKind
from tests.saturation.satfixtures import make_pool, small_codebook


class _InvalidAnswers:
    """An LLM judge whose every answer failed validation: each unit comes back unscored."""

    name = "openai:tiny"
    kind = CoderKind.LLM

    def code(
        self, units: Sequence[Unit], codebook: Codebook, *, workdir: Path
    ) -> Iterator[Annotation]:
        del workdir
        for unit in units:
            yield Annotation(
                unit_id=unit.id,
                unit_kind=unit.kind,
                codebook=codebook.ref(),
                coder=self.name,
                coder_kind=CoderKind.LLM,
                status=Status.UNSCORED,
                reason="invalid answer after 2 attempts: no codes",
            )


def _project(tmp_path: Path) -> ProjectStore:
    config = ProjectConfig(
        name="demo", kind=UnitKind.RETRIEVAL, batch_size=5, seed=7, codebook_name="testbook"
    )
    return init_project(tmp_path / "proj", config, small_codebook(), make_pool())


def test_rounds_the_judge_scored_nothing_do_not_make_the_codebook_saturated(
    tmp_path: Path,
) -> None:
    """Three rounds of 5 units, every answer invalid: the proposer saw 0 coded units each time.

    Before: each round closed with 0 new patterns and stop_state said saturated (3/3), and the
    fourth round was refused as "saturated", exit 0 all along. A round now counts only with at
    least ceil(5 / 2) = 3 scored units; these scored 0, so 0 rounds count.
    """
    store = _project(tmp_path)
    proposer = ScriptedProposer({})
    for _ in range(3):
        run_round(store, _InvalidAnswers(), proposer)
    state = stop_state(store)
    assert (state.closed_rounds, state.rounds_without_new, state.saturated) == (3, 0, False)
    assert state.thin_rounds == (1, 2, 3)
    assert state.min_scored == 3  # (5 + 1) // 2
    assert state.line() == (
        "stop rule: 0/3 rounds without new patterns; not counted: round(s) 1, 2, 3 (the judge "
        "scored fewer than 3 of the round's units, half the batch size)"
    )


def test_a_thin_round_neither_counts_nor_breaks_the_run(tmp_path: Path) -> None:
    """Round 1 all unscored, rounds 2-4 scored 5 of 5, nothing new: 3 rounds count, saturated."""
    store = _project(tmp_path)
    proposer = ScriptedProposer({})
    run_round(store, _InvalidAnswers(), proposer)
    for _ in range(3):
        run_round(store, ScriptedCoder(), proposer)
    state = stop_state(store)
    assert (state.closed_rounds, state.rounds_without_new, state.saturated) == (4, 3, True)
    assert state.thin_rounds == (1,)  # in the run of rounds without new patterns, not counted
    assert state.line().startswith("stop rule: 3/3 rounds without new patterns - SATURATED; ")


def test_the_round_command_says_how_many_units_the_judge_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`saturate round` printed "5 units coded by openai:tiny" for 5 unscored units."""
    from failcodes.commands.saturate import SaturateRoundRequest
    from failcodes.saturation import inputs

    store = _project(tmp_path)
    monkeypatch.setattr(inputs, "resolve_coder", lambda *_a, **_k: _InvalidAnswers())
    done = SaturateRoundRequest(name="demo", folder=store.root, judge="offline").run()
    assert (
        "note: the judge scored 0 of 5 units (5 unscored, e.g. 'invalid answer after 2 "
        "attempts: no codes'); the proposer saw the scored ones only"
    ) in done.notes
    assert done.stop.thin_rounds == (1,)


def _ls_task(n: int, annotations: list[dict[str, Any]]) -> dict[str, Any]:
    from failcodes.labelstudio.tasks import build_tasks
    from tests.labelstudio_helpers import retrieval_unit, toy_codebook

    data = build_tasks([retrieval_unit(n)], toy_codebook(), UnitKind.RETRIEVAL)[0]["data"]
    return {"id": 100 + n, "data": data, "annotations": annotations, "project": 7}


def _ls_ann(by: int, entity: str) -> dict[str, Any]:
    result = [
        {"from_name": d, "to_name": "claim", "type": "choices", "value": {"choices": [c]}}
        for d, c in (("entity", entity), ("scope", "exact_scope"))
    ]
    return {"completed_by": by, "result": result, "updated_at": "2026-12-01T09:00:00Z"}


def test_a_pull_that_lacks_earlier_reviews_does_not_write_over_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Alice reviewed tasks 101 and 102; task 102 was then deleted in Label Studio.

    Importing the newer export into the file of the first import wrote 1 annotation over 2, exit
    0: unit 2's review was gone (its task and annotation went with the deletion). Now refused,
    naming the file and the first review it would lose; the file keeps both lines.
    """
    from tests.cli_helpers import run_cli
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import retrieval_unit, toy_codebook

    cb = write_codebook(tmp_path / "cb.yaml", toy_codebook())
    first, later = tmp_path / "first.json", tmp_path / "later.json"
    first.write_text(
        json.dumps(
            [_ls_task(1, [_ls_ann(3, "irrelevant")]), _ls_task(2, [_ls_ann(3, "exact_entity")])]
        )
    )
    later.write_text(json.dumps([_ls_task(1, [_ls_ann(3, "irrelevant")])]))
    out = tmp_path / "review" / "alice.jsonl"
    args = ["labelstudio", "import", "-p", "retrieval", "-c", str(cb), "--user", "3=alice"]
    code, _, err = run_cli([*args, str(first), "-o", str(out)], capsys)
    assert code == 0, err
    before = out.read_text()
    assert len(before.splitlines()) == 2
    code, _, err = run_cli([*args, str(first), "-o", str(out)], capsys)
    assert code == 0, err  # the same export again: nothing lost, written as before
    code, _, err = run_cli([*args, str(later), "-o", str(out)], capsys)
    assert code == 2
    unit2 = retrieval_unit(2).id
    assert err.strip().splitlines() == [
        f"failcodes: error: {out}: holds 1 annotation(s) that this export does not (first: unit "
        f"{unit2} by alice; tasks or annotations deleted in Label Studio?): writing would lose "
        "them; write to another file (-o), or move this one away first"
    ]
    assert out.read_text() == before


def test_chance_corrected_agreement_is_not_pooled_over_dimensions() -> None:
    """Two coders at chance level on two dimensions, 40 units.

    entity: alice exact on even units, bob on units 0-1, 4-5, ...: a 10/10/10/10 table, p_o =
    1/2, margins 1/2 each, p_e = 1/2, Fleiss 0. scope the same with other units: 0. Pooled over
    the 80 (unit, dimension) rows the four codes have margins 1/4 each: p_e = 4/16 = 1/4, and
    Fleiss read (1/2 - 1/4) / (3/4) = 1/3 (alpha 0.3375, AC1 and Brennan-Prediger 1/3), for
    coders agreeing by chance. de Vries et al. (2008, Field Methods 20) pool p_o and p_e within
    items: (1/2 - 1/2) / (1 - 1/2) = 0. Now the pooled row keeps its percent (40 of 80 rows agree:
    1/2) and gives no chance-corrected coefficient, saying why.
    """
    from failcodes.coderagreement import POOLED_CHANCE, annotation_agreement
    from tests.labelstudio_helpers import toy_codebook

    ref = toy_codebook().ref()
    anns = []
    for i in range(40):
        entity_a = "exact_entity" if i % 2 == 0 else "partial_entity"
        entity_b = "exact_entity" if (i // 2) % 2 == 0 else "partial_entity"
        alice = (entity_a, "exact_scope" if i < 20 else "broader_scope")
        bob = (entity_b, "exact_scope" if i % 2 == 0 else "broader_scope")
        for who, (entity, scope) in (("alice", alice), ("bob", bob)):
            anns.append(
                Annotation(
                    unit_id=f"u{i:02d}",
                    unit_kind=UnitKind.RETRIEVAL,
                    codebook=ref,
                    coder=who,
                    coder_kind=CoderKind.HUMAN,
                    codes={"entity": entity, "scope": scope},
                )
            )
    rows = {
        (r.scope, r.dimension, r.result.statistic): r.result for r in annotation_agreement(anns)
    }
    assert rows[("dimension", "entity", "fleiss")].value == pytest.approx(0.0, abs=1e-12)
    assert rows[("dimension", "scope", "fleiss")].value == pytest.approx(0.0, abs=1e-12)
    assert rows[("pooled", None, "percent")].value == pytest.approx(0.5)
    assert rows[("pooled", None, "percent")].n_rows == 80
    # t13red2: the kappas are now pooled the de Vries way, (1/2 - 1/2) / (1 - 1/2) = 0 (AC1
    # and Brennan-Prediger: p_e 1/2 per binary dimension too); alpha stays unpooled
    for stat in ("fleiss", "gwet_ac1", "brennan_prediger"):
        assert rows[("pooled", None, stat)].value == pytest.approx(0.0, abs=1e-12)
    pooled = rows[("pooled", None, "krippendorff")]
    assert pooled.value is None and pooled.undefined_reason == POOLED_CHANCE


def test_annotations_made_from_the_judges_predictions_are_not_reviews() -> None:
    """Label Studio 1.23.2's Data Manager action "Create Annotations From Predictions".

    Run on a real server (3 tasks with the judge's codes as predictions, alice reviewed task
    101 through the API with a lead time): the export then holds, per task, an annotation by
    the admin who clicked (user 1) whose result is the judge's prediction, with
    ``parent_prediction`` set, ``lead_time`` null and ``prediction`` {} (fields below as the
    server wrote them). Before: read as the admin's 3 reviews, each agreeing with the judge
    on every code, exit 0 (human vs judge kappa 1 on them). Now: alice's 1 review is kept,
    the 3 made from predictions are not, each with a warning.
    """
    from failcodes.labelstudio.results import annotations_from_export
    from tests.labelstudio_helpers import toy_codebook

    def made(task: int, prediction: int) -> dict[str, Any]:
        return {
            **_ls_ann(1, "exact_entity"),
            "id": 1 + task,
            "lead_time": None,
            "prediction": {},
            "parent_prediction": prediction,
            "bulk_created": False,
            "last_action": None,
        }

    alice = {**_ls_ann(2, "irrelevant"), "id": 1, "lead_time": 3.0, "parent_prediction": None}
    tasks = [_ls_task(1, [alice, made(1, 1)]), _ls_task(2, [made(2, 2)]), _ls_task(3, [made(3, 3)])]
    result = annotations_from_export(
        tasks, toy_codebook(), UnitKind.RETRIEVAL, users={1: "admin", 2: "alice"}
    )
    assert [(a.coder, a.codes["entity"]) for a in result.annotations] == [("alice", "irrelevant")]
    assert [(p.task_id, p.coder) for p in result.problems] == [
        (101, "admin"),
        (102, "admin"),
        (103, "admin"),
    ]
    assert result.problems[0].message == (
        "the judge's prediction made into an annotation in Label Studio (parent_prediction, no "
        "lead time: never reviewed in the editor); not kept"
    )


def test_the_codebook_tables_agreement_marks_an_interval_that_may_not_cover(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Alice vs the judge on 4 units (tests/test_outside_shapes8.py's study).

    Cohen on exact_scope, by hand: alice gives it on r0 only, the judge on r0 and r1; they
    agree on r0, r2, r3: p_o = 3/4, p_e = 1/4 * 1/2 + 3/4 * 1/2 = 1/2, kappa = 1/2. Its
    agreement-table row carries a warning (4 units); the codebook table showed "0.50 [0.00,
    1.00]" beside it with none. Now the cell ends in " *" and the legend says what it means.
    """
    import pandas as pd

    from failcodes.report.build import CODE_AGREEMENT_MARK
    from tests.cli_helpers import run_cli
    from tests.test_outside_shapes8 import _judge_and_review

    cb_file = _judge_and_review(tmp_path, "broader_scope")
    out = tmp_path / "report"
    code, _, err = run_cli(
        ["report", str(tmp_path), "--codebook", str(cb_file), "-o", str(out)], capsys
    )
    assert code == 0, err
    agreement = pd.read_csv(out / "tables" / "agreement.csv")
    cohen = (agreement["subject"] == "scope: exact_scope") & (agreement["statistic"] == "cohen")
    row = agreement[cohen]
    assert row["value"].tolist() == [pytest.approx(0.5)]
    assert str(row["warning"].iloc[0]).strip() not in ("", "nan")
    table = (out / "tables" / "codebook.md").read_text()
    (line,) = [x for x in table.splitlines() if "| exact_scope †" in x]
    cell = line.split(" | ")[5]
    assert cell.startswith("0.50 [") and cell.endswith("] *")
    # the legend names the pair it compares (session 24: the demo's SIMULATED reviewer read
    # as "the human review")
    named = CODE_AGREEMENT_MARK.replace("the judge on each", "the judge (alice vs judge) on each")
    assert table.splitlines()[0] == f"**Codebook. {named}**"
    assert "the interval may not cover" in (out / "index.html").read_text()


def test_reviews_made_with_the_judges_codes_pre_selected_are_said_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Label Studio records in each annotation the prediction the reviewer was shown.

    `push --judged` (docs/review.md's audit) pre-selects the judge's codes; the agreement and
    the corrected shares take the reviews as independent of the judge, which nothing said.
    Task 101's annotation was made with the prediction shown (the field as a 1.23.2 server
    wrote it), task 102's without (``{}``): 1 of 2 kept annotations, said on the first line.
    """
    from tests.cli_helpers import run_cli
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook

    shown = {"id": 1, "result": _ls_ann(3, "exact_entity")["result"], "model_version": "judge"}
    export = tmp_path / "export.json"
    tasks = [
        _ls_task(1, [{**_ls_ann(3, "irrelevant"), "lead_time": 3.0, "prediction": shown}]),
        _ls_task(2, [{**_ls_ann(3, "exact_entity"), "lead_time": 2.0, "prediction": {}}]),
    ]
    export.write_text(json.dumps(tasks))
    cb = write_codebook(tmp_path / "cb.yaml", toy_codebook())
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "-c", str(cb)]
    code, out, err = run_cli([*args, "-o", str(tmp_path / "h.jsonl")], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == (
        "Assumed: 1 of 2 annotations were made with the judge's codes pre-selected (Label "
        "Studio predictions of judge): a reviewer who keeps them agrees with the judge more "
        "than a blind one may, so human vs judge agreement and the corrected shares may lean "
        "toward the judge (push without --judged for a blind review)"
    )
    assert out.splitlines()[1].startswith("2 annotations from 1 coder(s) on 2 tasks")


def test_a_recode_the_judge_answered_for_no_unit_says_its_units_hold_no_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tests/saturation/test_recode.py's project: v2 flags 10 of 30 units (0, 3, ..., 27).

    The re-code's judge gave no valid answer for any of them: before, `saturate recode`
    said "10 flagged unit(s) re-coded" and `status` "coded units per codebook version: v2:
    30", while 10 units had no code left and no later re-code would code them again (their
    newest annotation is on v2). Now both say 10 are unscored.
    """
    from failcodes.saturation.recode import plan_recode, recode_project
    from failcodes.saturation.status import project_status
    from tests.cli_helpers import run_cli
    from tests.saturation.test_recode import accepted_project

    store, flagged = accepted_project(tmp_path / "rc")

    def no_valid_answer(units: list[Unit], codebook: Codebook, run_dir: Path) -> list[Annotation]:
        del run_dir
        return list(_InvalidAnswers().code(units, codebook, workdir=tmp_path))

    done = recode_project(store, no_valid_answer, coder_name="openai:tiny")
    assert (done.recoded, done.migrated, done.unscored) == (10, 20, 10)
    info = project_status(store)
    assert (info.unit_versions, info.unscored_units) == ({2: 30}, 10)
    assert plan_recode(store).empty  # a second re-code would not code them again
    code, out, err = run_cli(["saturate", "status", "rc", "--dir", str(store.root)], capsys)
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("coded units per codebook version")]
    assert line.endswith(
        "; 10 unscored: the judge gave no valid answer, so they hold no code (counted above, "
        "never coded again by a re-code)"
    )
    assert len(flagged) == 10


def test_one_coders_two_annotations_at_one_time_keep_the_later_id() -> None:
    """Two annotations by user 3 on task 101, both at 2026-12-01T09:00:00Z (an export trimmed
    to seconds): id 5 (irrelevant) listed first, id 4 (exact_entity) second. Label Studio gives
    ids in creation order, so id 5 is the later one. Before: the one listed last (id 4) was
    kept, said as "kept the latest"."""
    from failcodes.labelstudio.results import annotations_from_export
    from tests.labelstudio_helpers import toy_codebook

    later = {**_ls_ann(3, "irrelevant"), "id": 5}
    earlier = {**_ls_ann(3, "exact_entity"), "id": 4}
    result = annotations_from_export(
        [_ls_task(1, [later, earlier])], toy_codebook(), UnitKind.RETRIEVAL
    )
    assert [a.codes["entity"] for a in result.annotations] == ["irrelevant"]
    assert [p.message for p in result.problems] == [
        "several annotations by the same coder; kept the one with the higher annotation id "
        "(one time on both)"
    ]


def test_the_reports_saturation_notes_say_the_rounds_the_judge_scored_nothing_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three rounds of 5 units, every answer invalid, in a study's saturation/ folder.

    Before: "Round 1 (closed): 5 units coded by openai:tiny" and, before 18adc4c, "3 of 3
    consecutive rounds without a new pattern (saturated)". Now 0 of 3, the rounds left out
    named, and each round says its 5 units are unscored.
    """
    from tests.cli_helpers import run_cli
    from tests.test_outside_red11 import _report_text

    study = tmp_path / "st"
    config = ProjectConfig(
        name="sat", kind=UnitKind.RETRIEVAL, batch_size=5, seed=7, codebook_name="testbook"
    )
    store = init_project(study / "saturation" / "sat", config, small_codebook(), make_pool())
    for _ in range(3):
        run_round(store, _InvalidAnswers(), ScriptedProposer({}))
    code, _, err = run_cli(["report", str(study), "-o", str(study / "report")], capsys)
    assert code == 0, err
    text = _report_text(study)
    assert (
        "stop rule: 0 of 3 consecutive rounds without a new pattern; not counted: round(s) 1, "
        "2, 3 (the judge scored fewer than 3 of the round's units, half the batch size)."
    ) in text
    assert (
        "Round 1 (closed): 5 units coded by openai:tiny (5 unscored: no valid answer); proposer"
    ) in text
