"""Session 34's red team of the human loop (helper h34human): the faults it found.

Each test failed on main's src before its fix (issue 30).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.annotations import CoderKind
from failcodes.units import UnitKind
from tests.cli_helpers import run_cli
from tests.review_helpers import drawn_plan, judge_annotations
from tests.test_review_plan import coded_table


def test_review_status_says_a_plan_rejudged_after_the_draw_is_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plan of 10 of 30 units, the coded table re-judged after the draw (every unit now
    partial_entity), alice's reviews of the 10 drawn units: `review status` read '10/10
    reviewed' and nothing else at exit 0, where the report shows the part uncorrected and uses
    none of them (rundir's stale_reason). Now the line says the plan is stale and how to
    redraw it."""
    from failcodes.study.layout import StudyLayout

    root = tmp_path / "st"
    judge = {f"u{i:02d}": ("exact_entity" if i % 3 else "partial_entity") for i in range(30)}
    plan = drawn_plan(root, judge, size=10)
    table = StudyLayout.of(root).per_passage("ds")
    coded_table(dict.fromkeys(judge, "partial_entity"), dict.fromkeys(judge, "A")).to_csv(
        table, index=False
    )
    reviews = root / "review" / "alice.jsonl"
    reviews.write_text(
        "".join(
            a.model_copy(update={"coder_kind": CoderKind.HUMAN}).model_dump_json() + "\n"
            for a in judge_annotations(
                {u: judge[u] for u in sorted(plan.estimation_ids())}, coder="alice"
            )
        ),
        encoding="utf-8",
    )
    path = root / "review" / "plans" / "p.json"
    code, out, err = run_cli(["review", "status", str(path), "--reviews", str(reviews)], capsys)
    assert code == 0, err
    assert out == (
        "plan 'p' (retrieval): estimation sample 10/10 reviewed, targeted 0/0; 0 reviewed "
        "unit(s) outside the plan (not used); review plan 'p' is stale: "
        "attribution/ds/per_passage.csv changed since it was drawn (e.g. a codebook bump "
        "re-coded the units), so its tables are shown uncorrected (the report uses none of "
        f"these reviews); redraw it with: failcodes review plan {root} -p retrieval -n 10 "
        "--seed 0 --dataset ds --name p\n"
    )


def test_whole_float_ids_read_as_label_studio_ids() -> None:
    """t28ls's export (user 3 and user 4 disagree on task 101; user 3 annotated task 102 twice
    at one time stamp, annotation 4 with codes B after annotation 3 with codes A) with its ids
    written as whole floats, as an export passed through a data frame writes them (3.0,
    "4.0"). main read 3.0 as no annotator: 'unknown-annotator-1' beside alice's annotation
    '4.0', user 3's two reviews of task 102 two coders, 4 annotations from 4 coders, and a
    problem saying 'no completed_by'. By hand, as t28ls's string ids: 3 annotations, alice A and
    bob B on unit 0, alice B (the higher id, one time on both) on unit 1."""
    from failcodes.labelstudio.results import annotations_from_export
    from tests.labelstudio_helpers import retrieval_unit, toy_codebook
    from tests.test_s28_t28ls import _string_id_export

    tasks = _string_id_export()
    for task in tasks:
        task["id"], task["project"] = float(task["id"]), f"{task['project']}.0"
        for ann in task["annotations"]:  # user 3 a float, user 4 a string; ids alternate
            ann["completed_by"] = (
                float(ann["completed_by"]) if ann["completed_by"] == "3" else "4.0"
            )
            ann["id"] = float(ann["id"]) if ann["id"] in ("3", "4") else f"{ann['id']}.00"
    res = annotations_from_export(
        tasks,
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


def test_a_gap_leaves_a_review_out_of_the_all_high_rate_whatever_its_other_codes() -> None:
    """40 units, all drawn; the judge: exact_entity on u00-u19 (all high), partial_entity on
    u20-u39; the reviewer agrees on every code but her tool left scope empty on 10 units, 5 of
    each kind (u00-u04, u20-u24). main left out of the all-high rate only the 5 gaps whose
    other codes were high (cannot be told) and kept the 5 whose entity_match was low
    (decided: not all high): the gaps took out all-high units only, human share 15/35 = 42.9%
    [Clopper-Pearson 26.3, 60.6] for the 20/40 = 50% the reviewer's codes say. Now every review
    with a gap is out: 15 all high of the 30 complete reviews, 50.0%, Clopper-Pearson
    Beta(15, 16) at 2.5% and Beta(16, 15) at 97.5% (scipy.stats.beta)."""
    from scipy.stats import beta as beta_dist

    from failcodes import codebook as codebooks
    from failcodes.report.corrected import corrected_rows
    from failcodes.reviewplan import human_codes
    from tests.test_review_plan import human, plan_of

    part = codebooks.bundled().part(UnitKind.RETRIEVAL)
    entity = {f"u{i:02d}": "exact_entity" if i < 20 else "partial_entity" for i in range(40)}
    table = coded_table(entity, dict.fromkeys(entity, "bm25"))
    plan = plan_of(table, size=40)
    gaps = {f"u{i:02d}" for i in (*range(5), *range(20, 25))}
    reviews = []
    for uid in sorted(plan.estimation_ids()):
        ann = human(uid, entity[uid])
        if uid in gaps:
            ann = ann.model_copy(
                update={"codes": {k: v for k, v in ann.codes.items() if k != "scope"}}
            )
        reviews.append(ann)
    rows = corrected_rows(table, plan, human_codes(reviews, UnitKind.RETRIEVAL), part)
    summary = next(r for r in rows if r["code"] == "all_high_quality")
    assert (summary["reviewed"], summary["uncoded"]) == (30, 10)
    est = summary["estimates"]
    assert est is not None
    assert est.human.estimate == pytest.approx(15 / 30)
    assert est.human.ci_low == pytest.approx(beta_dist.ppf(0.025, 15, 16))
    assert est.human.ci_high == pytest.approx(beta_dist.ppf(0.975, 16, 15))
    # entity_match had no gap: all 40 reviewed, exact_entity 20/40
    exact = next(r for r in rows if r["code"] == "exact_entity")
    assert exact["reviewed"] == 40
    assert exact["estimates"].human.estimate == pytest.approx(0.5)
