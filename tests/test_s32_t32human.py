"""Session 32 (t32human): the human loop, fifth pass: what a Label Studio import says of the
proposals and exports it reads, reviews and saturation rounds (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _choice(dim: str, code: str) -> dict[str, Any]:
    return {"from_name": dim, "to_name": "claim", "type": "choices", "value": {"choices": [code]}}


def _text(name: str, text: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": "claim", "type": "textarea", "value": {"text": [text]}}


def _task(i: int, annotations: list[dict[str, Any]]) -> dict[str, Any]:
    """A task of the toy codebook's retrieval part as Label Studio 1.23.2 exports it (JSON)."""
    from failcodes.labelstudio.tasks import build_tasks
    from failcodes.units import UnitKind
    from tests.labelstudio_helpers import retrieval_unit, toy_codebook

    data = build_tasks([retrieval_unit(i)], toy_codebook(), UnitKind.RETRIEVAL)[0]["data"]
    return {"id": i, "project": 1, "annotations": annotations, "drafts": [], "data": data}


def _annotation(i: int, by: int, result: list[dict[str, Any]], when: str) -> dict[str, Any]:
    return {
        "id": i,
        "completed_by": by,
        "result": result,
        "was_cancelled": False,
        "ground_truth": False,
        "created_at": when,
        "updated_at": when,
        "lead_time": 5.0,
    }


# --- labelstudio import: a proposal named as a code the annotation did not give ---------------


def test_the_import_says_a_proposal_names_an_existing_code_the_annotation_did_not_give(
    tmp_path: Path, capsys: Any
) -> None:
    # alice (user 2) reviews three tasks and writes a new code in other_code on each:
    #   task 1: scope exact_scope, proposes 'Broader scope: the passage covers more' -> the
    #           toy codebook's scope/broader_scope (label 'Broader Scope'), which she did NOT give
    #   task 2: proposes 'Dose mismatch: another dose' -> no code of the codebook
    #   task 3: scope broader_scope, proposes 'Broader Scope' -> the code she gave
    # By hand: 3 proposals, 1 of them names an existing code the review did not give. main said
    # "3 propose a new code" and nothing else (only `saturate round --reviews` said it, 097e260).
    from tests.test_cli_labelstudio import write_codebook
    from tests.test_review_plan import run_cli

    when = "2026-12-06T01:00:00Z"
    hq, partial = _choice("scope", "exact_scope"), _choice("entity", "partial_entity")
    tasks = [
        _task(1, [_annotation(1, 2, [partial, hq, _text("other_code", "Broader scope: the "
                                                         "passage covers more")], when)]),
        _task(2, [_annotation(2, 2, [partial, hq, _text("other_code", "Dose mismatch: another "
                                                         "dose")], when)]),
        _task(3, [_annotation(3, 2, [partial, _choice("scope", "broader_scope"),
                                     _text("other_code", "Broader Scope")], when)]),
    ]  # fmt: skip
    export = tmp_path / "project-1.json"
    export.write_text(json.dumps(tasks), encoding="utf-8")
    out = tmp_path / "h.jsonl"
    code, stdout, err = run_cli(
        capsys,
        *("labelstudio", "import", export, "-p", "retrieval", "-c", write_codebook(tmp_path)),
        *("--user", "2=alice@x.org", "-o", out),
    )
    assert code == 0, err
    assert "3 propose a new code" in stdout
    assert (
        "(1 of them named as an existing code the annotation did not give: meant that code? "
        "correct the review; see the warnings)" in stdout
    )
    unit = tasks[0]["data"]["failcodes_unit_id"]
    assert err.strip().splitlines() == [
        f"failcodes: warning: task 1 (unit {unit}), coder alice@x.org: proposal 'Broader "
        "scope: the passage covers more': its name is the existing code scope/broader_scope, "
        "which this review did not give (scope: exact_scope): no new pattern; if the reviewer "
        "meant that code, correct the review (the corrected shares and the agreement read "
        "scope as exact_scope)"
    ]
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3  # every review kept


# --- labelstudio import: a CSV export saved under .json or .txt -------------------------------

#: The first line and a row of the CSV export Label Studio 1.23.2 wrote in session 31 (a real
#: server), and the same as TSV.
_CSV = (
    '"annotation_id","annotator","claim","comment","created_at","entity",'
    '"failcodes_codebook","failcodes_unit_id","failcodes_unit_kind","id","lead_time",'
    '"other_code","passage","proposal","scope","updated_at"\n'
    '2,"3","Claim 7000: statins lower LDL.","","2026-12-06T01:23:37.992908Z","irrelevant",'
    '"toy@1+b291405dd489","1e070bc0143a4b15","retrieval",1,12.0,"","p","j","broader_scope",'
    '"2026-12-06T01:23:37.992934Z"\n'
)


def test_a_csv_export_saved_as_json_or_txt_is_refused_as_csv_not_as_jsonl(
    tmp_path: Path, capsys: Any
) -> None:
    # main read its quoted first name "annotation_id" as one JSON value and refused the file
    # as "malformed JSON (Extra data at column 16); more than one JSON value: a JSONL file?
    # expected one JSON document": the reviewer is sent to JSONL, not to a JSON export.
    from tests.test_cli_labelstudio import write_codebook
    from tests.test_review_plan import run_cli

    cb = write_codebook(tmp_path)
    tsv = _CSV.replace('","', '"\t"').replace(",", "\t")
    for name, text, sep in [("a.json", _CSV, "comma"), ("b.txt", _CSV, "comma"),
                            ("c.json", tsv, "tab")]:  # fmt: skip
        export = tmp_path / name
        export.write_text(text, encoding="utf-8")
        code, _, err = run_cli(
            capsys,
            *("labelstudio", "import", export, "-p", "retrieval", "-c", cb),
            *("-o", tmp_path / "h.jsonl"),
        )
        assert (code, err.strip()) == (
            2,
            f"failcodes: error: {export}: a CSV or TSV export saved as {export.suffix} (its "
            f"first line is a header of 16 {sep}-separated names: annotation_id, annotator, "
            "claim, ...) (one row per submitted annotation: a skipped task is left out, and so "
            "is the judge's prediction the reviewer was shown): export the project as JSON",
        )
        assert not (tmp_path / "h.jsonl").exists()


# --- labelstudio import: an annotation another user edited ------------------------------------


def test_an_annotation_edited_by_another_user_is_said_to_hold_that_users_codes(
    tmp_path: Path, capsys: Any
) -> None:
    # As a real Label Studio 1.23.2 server exported them (session 32): dave (user 4) annotated
    # task 6 exact/exact at 04:48:54; the admin (user 1) then edited it to irrelevant /
    # broader_scope at 04:48:57: the export names dave (completed_by 4) with the admin under
    # updated_by, and main read the admin's codes as dave's review, no word. Dave's edit of his
    # own annotation (task 4, updated_by 4) and an annotation the admin made on alice's behalf
    # through the API (task 2, updated_by 1 at the time it was made) are no edit by another.
    # By hand: one warning (task 6), 3 reviews kept, dave's task 6 codes irrelevant/broader.
    from tests.test_cli_labelstudio import write_codebook
    from tests.test_review_plan import run_cli

    def made(i: int, by: int, upd: int, codes: tuple[str, str], at: str, then: str) -> Any:
        ann = _annotation(i, by, [_choice("entity", codes[0]), _choice("scope", codes[1])], at)
        return {**ann, "updated_at": then, "updated_by": upd}

    tasks = [
        _task(2, [made(2, 2, 1, ("exact_entity", "exact_scope"), "2026-12-06T04:42:17.191489Z",
                       "2026-12-06T04:42:17.191523Z")]),
        _task(4, [made(9, 4, 4, ("partial_entity", "exact_scope"), "2026-12-06T04:48:58.1Z",
                       "2026-12-06T04:49:01.2Z")]),
        _task(6, [made(8, 4, 1, ("irrelevant", "broader_scope"), "2026-12-06T04:48:54.2Z",
                       "2026-12-06T04:48:57.4Z")]),
    ]  # fmt: skip
    export = tmp_path / "project-1.json"
    export.write_text(json.dumps(tasks), encoding="utf-8")
    out = tmp_path / "h.jsonl"
    code, _, err = run_cli(
        capsys,
        *("labelstudio", "import", export, "-p", "retrieval", "-c", write_codebook(tmp_path)),
        *("--user", "2=alice@x.org", "--user", "4=dave@x.org", "--user", "1=admin@x.org"),
        *("-o", out),
    )
    assert code == 0, err
    unit = tasks[2]["data"]["failcodes_unit_id"]
    assert err.strip().splitlines() == [
        f"failcodes: warning: task 6 (unit {unit}), coder dave@x.org: last updated by "
        "admin@x.org, not by its annotator, 3 s after it was made: its codes are as admin@x.org "
        "left them (a correction by a manager or an admin?), read as dave@x.org's review"
    ]
    kept = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(a["coder"], a["codes"]["entity"]) for a in kept] == [
        ("alice@x.org", "exact_entity"),
        ("dave@x.org", "partial_entity"),
        ("dave@x.org", "irrelevant"),
    ]


# --- report: reviews with no review plan (a convenience sample) --------------------------------


def test_reviews_with_no_plan_are_said_not_drawn_at_random_beside_human_vs_judge(
    tmp_path: Path,
) -> None:
    # The offline judge coded 20 units: u0-u13 exact_entity, u14-u19 partial_entity. With no
    # review plan, alice reviewed the 6 it coded partial (the ones it flagged: a convenience
    # sample) and gave partial on u14 and u17, exact on the 4 others. Human vs judge percent is
    # 2/6 = 0.333 over those 6 units, and main said nothing beside it (agreement notes empty),
    # though it speaks for the judge's flagged units, not the 20 it coded.
    import pytest

    from failcodes.annotations import CoderKind
    from failcodes.report.rundir import load_run_dir
    from tests.test_outside_red16b import _review_study
    from tests.test_report_review import _ann, _write

    ee, pe = "exact_entity", "partial_entity"
    root = _review_study(tmp_path, [ee] * 14 + [pe] * 6, {})
    codes = [pe, ee, ee, pe, ee, ee]
    reviews = [_ann(f"u{14 + i}", c, "alice", CoderKind.HUMAN) for i, c in enumerate(codes)]
    _write(root / "review" / "alice.jsonl", reviews)
    inputs = load_run_dir(root)
    rows = inputs.agreement
    assert rows is not None
    [value] = rows[(rows["subject"] == "entity_match") & (rows["statistic"] == "percent")]["value"]
    assert value == pytest.approx(2 / 6)
    assert inputs.notes["agreement"] == [
        "no review plan of the retrieval part: its 6 reviewed unit(s) were not drawn at random "
        "(picked by hand, or the units the judge flagged?), so human vs judge agreement there, "
        "and its interval, is over the units reviewed, not the units the judge codes (draw them "
        "with `failcodes review plan`)"
    ]
    # every unit the judge coded reviewed (a census): no draw needed, no note; alice agrees on
    # u14, u17 and the 14 exact ones she gave exact: percent 16/20 (tests/test_outside_red17b
    # reviews all 6 units with no plan alike)
    census = [_ann(f"u{i}", ee, "alice", CoderKind.HUMAN) for i in range(14)]
    _write(root / "review" / "alice.jsonl", census + reviews)
    inputs = load_run_dir(root)
    rows = inputs.agreement
    assert rows is not None
    [value] = rows[(rows["subject"] == "entity_match") & (rows["statistic"] == "percent")]["value"]
    assert value == pytest.approx(16 / 20)
    assert inputs.notes["agreement"] == []
