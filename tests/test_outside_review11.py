"""Outside red-team of the human review side (session 11): Label Studio exports, review files,
human vs judge agreement and the corrected shares, on shapes the other tests do not use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from failcodes import codebook as codebooks
from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.labelstudio.results import annotations_from_export
from failcodes.labelstudio.tasks import build_tasks
from failcodes.report.corrected import corrected_rows, corrected_table
from failcodes.report.rundir import load_run_dir
from failcodes.reviewplan import read_plan
from failcodes.study.layout import StudyLayout
from failcodes.units import UnitKind
from tests.labelstudio_helpers import retrieval_unit, toy_codebook
from tests.test_review_plan import (
    HIGH,
    coded_table,
    half_reviewed_study,
    run_cli,
    write_half_plan,
    write_reviews,
)


def _choice(dim: str, *codes: str, **extra: Any) -> dict[str, Any]:
    item = {
        "from_name": dim,
        "to_name": "claim",
        "type": "choices",
        "value": {"choices": list(codes)},
    }
    item.update(extra)
    return item


def _task(n: int, annotations: list[dict[str, Any]]) -> dict[str, Any]:
    data = build_tasks([retrieval_unit(n)], toy_codebook(), UnitKind.RETRIEVAL)[0]["data"]
    return {"id": 100 + n, "data": data, "annotations": annotations, "project": 7}


def _ann(by: int, result: list[dict[str, Any]], at: str = "2026-11-30T00:00:00Z") -> dict[str, Any]:
    return {"completed_by": by, "result": result, "was_cancelled": False, "updated_at": at}


def test_a_dimension_chosen_twice_in_one_annotation_is_not_kept() -> None:
    # One annotation whose result holds 'entity' twice: exact_entity (the task's choice) and
    # irrelevant (a region's choice, id 'reg1'). Before: the later item replaced the earlier
    # without a word (codes {'entity': 'irrelevant'}, exit 0). Expected: neither is kept (the
    # reviewer's answer cannot be told), a problem names the dimension and both choices;
    # 'scope' is kept; the same choice given twice is one answer.
    result = [
        _choice("entity", "exact_entity"),
        _choice("scope", "exact_scope"),
        _choice("entity", "irrelevant", id="reg1"),
    ]
    same = [_choice("entity", "irrelevant"), _choice("scope", "exact_scope")] * 2
    got = annotations_from_export(
        [_task(0, [_ann(3, result)]), _task(1, [_ann(3, same)])],
        toy_codebook(),
        UnitKind.RETRIEVAL,
    )
    first, second = got.annotations
    assert first.status is Status.SCORED
    assert first.codes == {"scope": "exact_scope"}
    assert second.codes == {"entity": "irrelevant", "scope": "exact_scope"}
    assert [str(p) for p in got.problems] == [
        f"task 100 (unit {first.unit_id}), coder label-studio-user-3: two different choices "
        "in 'entity' (exact_entity and irrelevant); not kept"
    ]


def test_a_time_without_offset_is_utc_and_the_latest_annotation_is_kept() -> None:
    # One coder annotated task 0 twice: at 10:00 written without an offset, at 09:00Z. Before:
    # TypeError (offset-naive vs offset-aware), a traceback, exit 1. Label Studio's times are
    # UTC: 10:00 is the later, so its code (irrelevant) is kept, and a third annotation with no
    # time at all still compares.
    late = _ann(3, [_choice("entity", "irrelevant"), _choice("scope", "exact_scope")])
    late["updated_at"] = "2026-11-30T10:00:00"
    early = _ann(
        3,
        [_choice("entity", "exact_entity"), _choice("scope", "exact_scope")],
        "2026-11-30T09:00:00Z",
    )
    untimed = _ann(4, [_choice("entity", "exact_entity"), _choice("scope", "exact_scope")])
    del untimed["updated_at"]
    got = annotations_from_export(
        [_task(0, [late, early, untimed])], toy_codebook(), UnitKind.RETRIEVAL
    )
    by = {a.coder: a for a in got.annotations}
    assert by["label-studio-user-3"].codes["entity"] == "irrelevant"
    assert by["label-studio-user-3"].created_at.isoformat() == "2026-11-30T10:00:00+00:00"
    assert by["label-studio-user-4"].codes["entity"] == "exact_entity"


def test_an_annotation_without_a_time_does_not_win_by_the_import_clock() -> None:
    # One coder annotated task 0 twice: Label Studio annotation id 11 at 09:00Z (entity
    # irrelevant), then id 12 with its times trimmed from the export (exact_entity). Before:
    # the untimed one got the import's clock as its time and won over any timed one, also an
    # earlier one listed first (id 5, exact_entity, kept over id 11's later irrelevant).
    # Expected: ids (Label Studio gives them in creation order) decide when a time is missing,
    # so id 12 is kept in the first export and id 11 in the second; with neither a time nor an
    # id, the one listed last; the problem line says which rule chose.
    timed = _ann(3, [_choice("entity", "irrelevant"), _choice("scope", "exact_scope")])
    timed["id"] = 11
    untimed = _ann(3, [_choice("entity", "exact_entity"), _choice("scope", "exact_scope")])
    del untimed["updated_at"]
    untimed["id"] = 12
    first = annotations_from_export(
        [_task(0, [timed, untimed])], toy_codebook(), UnitKind.RETRIEVAL
    )
    assert [a.codes["entity"] for a in first.annotations] == ["exact_entity"]
    assert str(first.problems[-1]).endswith(
        "kept the one with the higher annotation id (no time on one)"
    )
    older = dict(untimed, id=5)
    second = annotations_from_export([_task(0, [older, timed])], toy_codebook(), UnitKind.RETRIEVAL)
    assert [a.codes["entity"] for a in second.annotations] == ["irrelevant"]
    bare = {k: v for k, v in older.items() if k != "id"}
    third = annotations_from_export([_task(0, [timed, bare])], toy_codebook(), UnitKind.RETRIEVAL)
    assert [a.codes["entity"] for a in third.annotations] == ["exact_entity"]
    assert str(third.problems[-1]).endswith("(no time and no id on one)")


def _entity(
    unit: str, code: str, coder: str = "alice", kind: CoderKind = CoderKind.HUMAN, **extra: Any
) -> Annotation:
    """One retrieval annotation of the bundled codebook: entity_match ``code``, the rest high."""
    return Annotation(
        unit_id=unit,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=codebooks.bundled().ref(),
        coder=coder,
        coder_kind=kind,
        codes={"entity_match": code, **HIGH},
        **extra,
    )


def _targeted_study(root: Path) -> None:
    """40 units of retriever A; a plan draws u00..u19 and targets u20..u29.

    The judge codes exact_entity on even units, partial_entity on odd ones; alice agrees on
    every drawn unit and flips every targeted one (they were targeted where the judge errs).
    """
    judge = {f"u{i:02d}": ("exact_entity" if i % 2 == 0 else "partial_entity") for i in range(40)}
    drawn = [f"u{i:02d}" for i in range(20)]
    targeted = [f"u{i:02d}" for i in range(20, 30)]
    flip = {"exact_entity": "partial_entity", "partial_entity": "exact_entity"}
    reviews = [_entity(u, judge[u]) for u in drawn]
    reviews += [_entity(u, flip[judge[u]]) for u in targeted]
    half_reviewed_study(root, judge, drawn, reviews, targeted=targeted)
    judged = [_entity(u, c, "judge-llm", CoderKind.LLM) for u, c in judge.items()]
    write_reviews(root / "judge" / "ds" / "retrieval" / "annotations.jsonl", judged)


def test_targeted_review_units_are_left_out_of_human_vs_judge_agreement(tmp_path: Path) -> None:
    # Before: agreement over all 30 reviewed units. exact_entity: judge 1 on 10 drawn + 5
    # targeted (even), alice 1 on the same 10 drawn + the 5 odd targeted: p_o = 20/30,
    # p_e = 0.5 * 0.5 + 0.5 * 0.5 = 0.5, kappa = (2/3 - 1/2) / (1/2) = 0.333, printed as the
    # judge's agreement (and in the codebook table) with no word of the targeted units.
    # On the 20 drawn units alice and the judge agree everywhere: kappa 1 (10 of 20 coded).
    _targeted_study(tmp_path)
    inputs = load_run_dir(tmp_path)
    assert inputs.agreement is not None
    rows = inputs.agreement.set_index(["subject", "statistic"])
    cohen = rows.loc[("entity_match: exact_entity", "cohen")]
    assert cohen["value"] == pytest.approx(1.0)
    assert cohen["n_units"] == 20
    assert inputs.notes["agreement"] == [
        "10 targeted review unit(s) (picked where the judge may be wrong, not drawn at random) "
        "are left out of human vs judge agreement: over them it is not the judge's agreement "
        "on the units it codes"
    ]
    assert inputs.codebook_table is not None
    table = inputs.codebook_table
    table = table.assign(code=[str(c).split()[0] for c in table["subcode"]]).set_index("code")
    assert str(table.loc["exact_entity", "Agreement"]).startswith("1.00")


def test_reviews_outside_every_plan_are_left_out_of_human_vs_judge_agreement(
    tmp_path: Path,
) -> None:
    # The targeted study, plus alice's flipped reviews of u30..u39: units no plan draws or
    # targets (picked by hand). Before: left out of the corrected shares (73bb49c) but counted
    # in agreement: 20 drawn agree + 10 outside disagree, exact_entity p_o = 20/30, p_e = 0.5,
    # kappa (2/3 - 1/2) / (1/2) = 0.333 for a judge that agrees on every drawn unit.
    # Expected: kappa 1 on the 20 drawn units, and a note for each kind left out.
    _targeted_study(tmp_path)
    flip = {0: "partial_entity", 1: "exact_entity"}
    extra = [_entity(f"u{i:02d}", flip[i % 2]) for i in range(30, 40)]
    with (tmp_path / "review" / "alice.jsonl").open("a", encoding="utf-8") as out:
        out.write("".join(a.model_dump_json() + "\n" for a in extra))
    inputs = load_run_dir(tmp_path)
    assert inputs.agreement is not None
    cohen = inputs.agreement.set_index(["subject", "statistic"]).loc[
        ("entity_match: exact_entity", "cohen")
    ]
    assert cohen["value"] == pytest.approx(1.0)
    assert cohen["n_units"] == 20
    assert inputs.notes["agreement"][1] == (
        "10 reviewed unit(s) outside every review plan (picked by hand, not drawn at random) "
        "are left out of human vs judge agreement"
    )


def _half_reviewed_study(root: Path, reviewed: list[str]) -> None:
    """100 units of retriever A (judge: exact_entity on even ones); u000..u049 drawn; the
    reviewer agrees with the judge on the ``reviewed`` units only."""
    judge = {f"u{i:03d}": ("exact_entity" if i % 2 == 0 else "partial_entity") for i in range(100)}
    drawn = [f"u{i:03d}" for i in range(50)]
    half_reviewed_study(root, judge, drawn, [_entity(u, judge[u]) for u in reviewed])


def test_reviews_of_only_the_judges_all_high_units_are_said_not_missing_at_random(
    tmp_path: Path,
) -> None:
    # The reviewer did the 25 drawn units the judge coded all high (exact_entity, u000, u002,
    # ...) and none of the 25 others. Before: "25 of 50 sampled units reviewed (25 not yet)"
    # and exact_entity corrected 100.0 [90.5, 100.0] against judge-only 50.0, with no word that
    # the missing reviews are exactly the judge's other code. Fisher's exact test on
    # [[25, 0], [0, 25]]: p = 2 / C(50, 25) = 2 / 1.2641e14 = 1.6e-14.
    _half_reviewed_study(tmp_path, [f"u{i:03d}" for i in range(0, 50, 2)])
    inputs = load_run_dir(tmp_path)
    [(caption, table)] = inputs.corrected[UnitKind.RETRIEVAL]
    skew = (
        "the reviewed units are not a random part of the drawn ones: the judge's all_high is "
        "true for 25 of 25 reviewed and 0 of 25 drawn but not reviewed (Fisher p = 1.6e-14); "
        "counting those as not drawn biases the human and corrected shares toward the units "
        "reviewed"
    )
    assert (
        "25 of 50 sampled units reviewed (25 not yet, counted as not drawn, which assumes they "
        f"are missing at random); {skew}"
    ) in caption
    assert inputs.notes["corrected:retrieval"] == [f"Plan 'p': {skew}"]
    exact = table[table["code"] == "exact_entity"].iloc[0]
    assert exact["corrected (%)"].startswith("100.0 [")
    assert exact["note"].startswith("the missing reviews are not missing at random (caption)")


def test_reviews_of_half_the_drawn_units_at_random_are_not_flagged(tmp_path: Path) -> None:
    # The first 25 drawn units reviewed: the judge's all_high is true for 13 of them (u000,
    # u002, ..., u024) and for 12 of the 25 others: Fisher p = 1, nothing to say but the
    # missing-at-random assumption.
    _half_reviewed_study(tmp_path, [f"u{i:03d}" for i in range(25)])
    inputs = load_run_dir(tmp_path)
    [(caption, table)] = inputs.corrected[UnitKind.RETRIEVAL]
    assert (
        "25 of 50 sampled units reviewed (25 not yet, counted as not drawn, which assumes they "
        "are missing at random)"
    ) in caption
    assert "not a random part" not in caption
    assert not inputs.notes.get("corrected:retrieval")
    assert not any("not missing at random" in str(n) for n in table["note"])


def test_a_review_time_without_offset_is_utc_when_one_coder_reviewed_a_unit_twice() -> None:
    # alice reviewed u00 twice: at 10:00 written without an offset (a hand-made review file),
    # exact_entity; at 09:00Z (pulled), irrelevant. Before: TypeError (offset-naive vs
    # offset-aware) and `failcodes report` stopped with a traceback, exit 1. The tools write
    # UTC: 10:00 is the later, so exact_entity counts, once.
    from datetime import datetime

    from failcodes.reviewversions import bring_reviews

    cb = codebooks.bundled()

    def review(code: str, when: datetime) -> Annotation:
        return _entity("u00", code, created_at=when)

    late = review("exact_entity", datetime.fromisoformat("2026-11-30T10:00:00"))
    early = review("irrelevant", datetime.fromisoformat("2026-11-30T09:00:00+00:00"))
    got = bring_reviews({"alice.jsonl": [late, early]}, cb, {cb.version: cb})
    assert [a.codes["entity_match"] for a in got.reviews] == ["exact_entity"]


def _duplicated_rows(root: Path, n_units: int, drawn: int) -> pd.DataFrame:
    """Retriever A with ``n_units`` units, each in two rows (a duplicated chunk), half drawn
    (u00, u01, ...); the judge codes exact_entity on even units; returns the cells' table."""
    cb = codebooks.bundled()
    judge = {
        f"u{i:02d}": ("exact_entity" if i % 2 == 0 else "partial_entity") for i in range(n_units)
    }
    table = StudyLayout.of(root).per_passage("ds")
    table.parent.mkdir(parents=True)
    once = coded_table(judge, dict.fromkeys(judge, "A"))
    pd.concat([once, once], ignore_index=True).to_csv(table, index=False)
    sample = [f"u{i:02d}" for i in range(drawn)]
    write_half_plan(root, "p", UnitKind.RETRIEVAL, table, sample, list(judge))
    humans = {u: _entity(u, judge[u]) for u in sample}
    plan = read_plan(root / "review" / "plans" / "p.json")
    rows = corrected_rows(pd.read_csv(table), plan, humans, cb.part(UnitKind.RETRIEVAL))
    return corrected_table(rows, "retriever").set_index("code")


def test_six_reviewed_units_in_twelve_rows_are_too_few_to_estimate(tmp_path: Path) -> None:
    # 12 units, each in two rows; 6 drawn and reviewed (12 reviewed rows). Before: the cell
    # passed the 10-reviewed minimum on its rows and printed exact_entity 50.0 [30.3, 69.7]
    # with human-only 50.0 [24.3, 75.7] (Jeffreys for 6 of 12, where the reviews are 3 of 6:
    # Beta(3.5, 3.5) gives [16.7, 83.3]). 6 distinct reviewed units < 10: no estimate.
    # Session 25: a unit in two rows of one retriever's column counts once (as Table 8 counts
    # it), so the cell holds 12 units, 6 reviewed: too small on its units alone.
    got = _duplicated_rows(tmp_path, 12, 6).loc["exact_entity"]
    assert (got["units"], got["reviewed"]) == (12, 6)
    assert got["corrected (%)"] == "–"
    assert got["note"] == (
        "too small to estimate: 6 reviewed unit(s) in the cell (at least 10 needed)"
    )


def test_reviewed_rows_that_repeat_units_count_as_their_units(tmp_path: Path) -> None:
    # 24 units in two rows each, 12 drawn and reviewed: 24 reviewed rows are 12 units. The
    # estimate stands (both sides count the rows alike); the interval used to count 24 reviews
    # and said "too narrow"; now each unit counts once (Kish: 24^2 / (12 x 2^2) = 12).
    # Session 25: each (retriever, unit) counts once up front (Table 8's units): 24 units, 12
    # reviewed, no repeated rows left to say anything of.
    got = _duplicated_rows(tmp_path, 24, 12).loc["exact_entity"]
    assert (got["units"], got["reviewed"]) == (24, 12)
    assert got["corrected (%)"].startswith("50.0 [")
    assert got["note"] == ""


def test_review_status_warns_when_the_reviews_so_far_are_not_a_random_part(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The shape of the report test above, mid-review: `review status` said only "estimation
    # sample 25/50 reviewed"; the reviewer learned of the skew from the report's caption.
    _half_reviewed_study(tmp_path, [f"u{i:03d}" for i in range(0, 50, 2)])
    plan = tmp_path / "review" / "plans" / "p.json"
    code, out, err = run_cli(
        capsys, "review", "status", plan, "--reviews", tmp_path / "review" / "alice.jsonl"
    )
    assert code == 0, err
    assert "estimation sample 25/50 reviewed" in out
    assert err == (
        "failcodes: warning: the reviewed units are not a random part of the drawn ones: the "
        "judge's all_high is true for 25 of 25 reviewed and 0 of 25 drawn but not reviewed "
        "(Fisher p = 1.6e-14); counting those as not drawn biases the human and corrected "
        "shares toward the units reviewed\n"
    )
