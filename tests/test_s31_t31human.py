"""Session 31 (t31human): the human loop, fourth pass: exports as reviewers download them,
reviews given twice, reviewers' proposals (issue 30)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# --- one coder's review of a unit twice, one of them with no created_at ----------------------


def _drawn_study(tmp_path: Path, capsys: Any) -> tuple[list[str], dict[str, str]]:
    """big_table's study with a plan of 40 of its 90 units: (drawn units, judge's entity code)."""
    from failcodes.reviewplan import read_plan
    from failcodes.study.layout import StudyLayout
    from tests.test_review_plan import big_table, run_cli

    table = StudyLayout.of(tmp_path).per_passage("ds")
    table.parent.mkdir(parents=True)
    coded = big_table()
    coded.to_csv(table, index=False)
    code, _, err = run_cli(capsys, "review", "plan", tmp_path, "-p", "retrieval", "-n", "40")
    assert code == 0, err
    plan = tmp_path / "review" / "plans" / "ds.retrieval.json"
    drawn = sorted(read_plan(plan).estimation_ids())
    return drawn, dict(zip(coded["unit_id"], coded["entity_match"], strict=True))


OTHER = {"exact_entity": "partial_entity", "partial_entity": "exact_entity"}


def test_an_untimed_review_does_not_beat_a_later_timed_one_unsaid(
    tmp_path: Path, capsys: Any
) -> None:
    # 40 of big_table's 90 units drawn (bm25 24 of them, dense 16). alice's review file written
    # by hand (no created_at) gives the judge's entity code on all 40; she then reviewed the
    # plan's first 10 units (sorted; all bm25: u000 u006 judge partial, the 8 others exact)
    # again in Label Studio and gave the other code, pulled into review/alice_ls.jsonl
    # (created_at 2026-12-05T10:00Z). main took the report's clock as the hand file's time, so
    # it beat the later reviews and the note called it the latest: bm25 exact_entity
    # human-only 16/24 = 66.7, disagree 0. Now the untimed pair goes by reading order (files
    # by name: alice_ls after alice) and the note says so. By hand: 16 - 8 + 2 = 10 of 24 =
    # 41.7, 10 disagreements.
    import pandas as pd

    from failcodes import codebook as codebooks
    from tests.test_review_plan import human, run_cli

    drawn, judge = _drawn_study(tmp_path, capsys)
    other = OTHER
    assert [judge[u] for u in drawn[:10]].count("partial_entity") == 2
    assert all(int(u[1:]) < 60 for u in drawn[:10])  # bm25's
    lines = []
    for uid in drawn:
        record = json.loads(human(uid, judge[uid]).model_dump_json())
        del record["created_at"]
        lines.append(json.dumps(record))
    (tmp_path / "review" / "alice.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    when = datetime(2026, 12, 5, 10, tzinfo=UTC)
    again = [
        human(uid, other[judge[uid]]).model_copy(update={"created_at": when}) for uid in drawn[:10]
    ]
    (tmp_path / "review" / "alice_ls.jsonl").write_text(
        "".join(a.model_dump_json() + "\n" for a in again), encoding="utf-8"
    )
    cb = codebooks.bundled()
    cb_file = codebooks.bundled_dir() / f"{cb.name}.v{cb.version}.yaml"
    code, _, err = run_cli(capsys, "report", tmp_path, "--codebook", cb_file, "-o", tmp_path / "r")
    assert code == 0, err
    corrected = pd.read_csv(tmp_path / "r" / "tables" / "retrieval_quality_corrected.csv")
    cell = corrected[(corrected["code"] == "exact_entity") & (corrected["retriever"] == "bm25")]
    assert (cell.iloc[0]["reviewed"], cell.iloc[0]["disagree"]) == (24, 10)
    assert cell.iloc[0]["human-only (%)"].startswith("41.7 [")
    assert (
        "review/alice.jsonl: 10 review(s) of units the same coder reviewed again (in "
        "review/alice_ls.jsonl): the latest review of each counts, once; 10 of them beside a "
        "review with no created_at (written by hand?), so of unknown order: there the one read "
        "later counts (files by name, lines in order), not the one made later"
    ) in err.splitlines()


# --- Label Studio's JSON-MIN export, imported with --user --------------------------------------


def test_a_json_min_export_with_user_names_is_refused_as_json_min(
    tmp_path: Path, capsys: Any
) -> None:
    # The rows of a JSON-MIN export as Label Studio 1.23.2 wrote them (a real server, session
    # 31: one row per submitted annotation, the user id under 'annotator'; alice's skip of a
    # second task is not among them). Imported with the --user names a reviewer gives a JSON
    # export, main refused it as "--user 2=alice@x.org: no annotation in the export is by user
    # id 2 (the ids it holds: none: it names its annotators itself)", though the rows name
    # users 2 and 3; the export's format is what is wrong.
    from failcodes.labelstudio.tasks import build_tasks
    from failcodes.units import UnitKind
    from tests.labelstudio_helpers import retrieval_unit, toy_codebook
    from tests.test_cli_labelstudio import write_codebook
    from tests.test_review_plan import run_cli

    data = build_tasks([retrieval_unit(0)], toy_codebook(), UnitKind.RETRIEVAL)[0]["data"]
    rows = [
        {**data, "id": 1, "entity": "irrelevant", "scope": "broader_scope", "annotator": 3,
         "annotation_id": 2, "created_at": "2026-12-06T01:23:37.992908Z", "lead_time": 12.0},
        {**data, "id": 1, "entity": "exact_entity", "scope": "exact_scope", "annotator": 2,
         "annotation_id": 1, "created_at": "2026-12-06T01:23:37.788331Z", "lead_time": 10.0},
    ]  # fmt: skip
    export = tmp_path / "project-1-min.json"
    export.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    cb = write_codebook(tmp_path)
    code, _, err = run_cli(
        capsys,
        *("labelstudio", "import", export, "-p", "retrieval", "-c", cb),
        *("--user", "2=alice@x.org", "--user", "3=bob@x.org", "-o", tmp_path / "h.jsonl"),
    )
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {export}: task 1 is a JSON-MIN row (one row per submitted "
        "annotation: a skipped task is left out, and so is the judge's prediction the reviewer "
        "was shown): export the project as JSON instead",
    )
    assert not (tmp_path / "h.jsonl").exists()


# --- saturate round --reviews: a reviewer proposes a code that exists already -----------------


def test_a_reviewer_proposal_named_as_an_existing_code_says_the_review_did_not_give_it(
    tmp_path: Path,
) -> None:
    # r0 codes entity_match entity_mismatch (its one low-quality code), scope exact_scope, and
    # proposes 'Different context: another setting than the claim': scope's own code
    # different_context (label 'Different context'). Placed under entity_match, deduplication
    # reads it as subcode:different_context (the same name in another dimension: similarity
    # 1.0) and main said only where it was placed: the round closed with no open proposal, and
    # the review, read by the corrected shares and the agreement as scope exact_scope, was
    # never questioned. Now a note says the review did not give that code.
    from tests.saturation.satfixtures import make_pool
    from tests.saturation.test_cli import cli, setup_project
    from tests.test_s29_t29human import _review

    unit = make_pool(12)[0].id
    coder, proposer = setup_project(tmp_path, {})
    reviews = tmp_path / "reviews.jsonl"
    codes = {"entity_match": "entity_mismatch", "scope": "exact_scope"}
    text = "Different context: another setting than the claim"
    reviews.write_text(_review(0, "r0", codes, text) + "\n", encoding="utf-8")
    args = ("round", "trial", "--judge", f"scripted:{coder}", "--proposer", f"scripted:{proposer}")
    done = cli(*args, "--reviews", str(reviews), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 proposal(s), 0 after deduplication" in done.stdout
    assert (
        "note: proposal r0001-p01 (Different context): its name is the existing code "
        "scope/different_context, which this review did not give (scope: exact_scope): no new "
        "pattern; if the reviewer meant that code, correct the review (the corrected shares and "
        "the agreement read scope as exact_scope)"
    ) in done.stdout.splitlines()
    assert f"proposed by reviewer r0 in their review of unit {unit}" in done.stdout


# --- one reviewer under two spellings ----------------------------------------------------------


def test_one_reviewer_under_two_spellings_is_refused(tmp_path: Path, capsys: Any) -> None:
    # alice's 40 reviews as 'alice@x.org' (the judge's codes), and her correction of the first
    # 10 drawn units written by hand as 'alice@x.org ' (a trailing space). main read two
    # reviewers: each of the 10 units 'reviewed more than once', the first coder by name
    # ('alice@x.org') counted, the correction left out: bm25 exact_entity 66.7 (16/24), exit 0,
    # the Assumed line naming 'alice@x.org , alice@x.org'. Now refused in one line, naming both
    # spellings and where each is (report and review status alike).
    from failcodes import codebook as codebooks
    from tests.test_review_plan import human, run_cli

    drawn, judge = _drawn_study(tmp_path, capsys)
    review = tmp_path / "review"
    (review / "alice.jsonl").write_text(
        "".join(human(u, judge[u], "alice@x.org").model_dump_json() + "\n" for u in drawn)
    )
    fix = [human(u, OTHER[judge[u]], "alice@x.org ").model_dump_json() for u in drawn[:10]]
    (review / "alice_fix.jsonl").write_text("\n".join(fix) + "\n")
    said = (
        f"{review / 'alice_fix.jsonl'}:1, field 'coder': coder 'alice@x.org ' and 'alice@x.org' "
        f"({review / 'alice.jsonl'}:1) differ only in case, spaces or Unicode form: one "
        "reviewer under two spellings? write one (as two they are two reviewers: the first by "
        "name counts, the other's reviews left out)"
    )
    cb = codebooks.bundled()
    cb_file = codebooks.bundled_dir() / f"{cb.name}.v{cb.version}.yaml"
    code, _, err = run_cli(capsys, "report", tmp_path, "--codebook", cb_file, "-o", tmp_path / "r")
    assert (code, said in err) == (2, True), err
    assert not (tmp_path / "r" / "index.html").exists()
    plan = review / "plans" / "ds.retrieval.json"
    args = ("--reviews", review / "alice.jsonl", "--reviews", review / "alice_fix.jsonl")
    code, _, err = run_cli(capsys, "review", "status", plan, *args)
    assert (code, said in err) == (2, True), err


# --- review status: drawn units the reviewer skipped ---------------------------------------------


def test_review_status_says_the_drawn_units_answered_with_no_code(
    tmp_path: Path, capsys: Any
) -> None:
    # 40 units drawn; alice reviewed 35 and skipped 5 in Label Studio (unscored, 'skipped in
    # Label Studio'). main's status: '35/40 reviewed', read as 5 still to do, where the report's
    # caption says '5 answered with no code (skipped or not assessable: counted as not drawn,
    # which assumes they are missing at random)'. By hand: 35 reviewed, 5 answered with no code.
    from failcodes.annotations import Status
    from failcodes.labelstudio.results import SKIPPED
    from tests.test_review_plan import human, run_cli

    drawn, judge = _drawn_study(tmp_path, capsys)
    reviews = [human(u, judge[u]) for u in drawn[:35]]
    skips = [
        human(u, judge[u]).model_copy(
            update={"status": Status.UNSCORED, "reason": SKIPPED, "codes": {}}
        )
        for u in drawn[35:]
    ]
    path = tmp_path / "review" / "alice.jsonl"
    path.write_text("".join(a.model_dump_json() + "\n" for a in [*reviews, *skips]))
    plan = tmp_path / "review" / "plans" / "ds.retrieval.json"
    code, out, err = run_cli(capsys, "review", "status", plan, "--reviews", path)
    assert code == 0, err
    assert out.startswith(
        "plan 'ds.retrieval' (retrieval): estimation sample 35/40 reviewed (5 of the others "
        "answered with no code: skipped or not assessable, counted as not drawn, as the report "
        "counts them), targeted 0/0; 0 reviewed unit(s) outside the plan (not used)"
    ), out


# --- the report: reviews of units of no plan's data ---------------------------------------------


def test_the_report_says_which_outside_reviews_are_no_unit_of_the_data(
    tmp_path: Path, capsys: Any
) -> None:
    # alice's file: the 40 drawn units, 10 undrawn units of the data (picked by hand) and 30
    # units 'x000'..'x029' of no unit of the data (another study's review file, joined in).
    # main: '40 reviews of units outside the review plan are left out of the corrected shares
    # (not a random sample)', read as 40 of this study's units picked by hand, where review
    # status says '30 of them no unit of the plan's data'. By hand: outside 10 + 30 = 40, 30
    # of them foreign.
    from failcodes import codebook as codebooks
    from tests.test_review_plan import human, run_cli

    drawn, judge = _drawn_study(tmp_path, capsys)
    undrawn = sorted(set(judge) - set(drawn))[:10]
    reviews = [human(u, judge[u]) for u in [*drawn, *undrawn]]
    reviews += [human(f"x{i:03d}", "exact_entity") for i in range(30)]
    path = tmp_path / "review" / "alice.jsonl"
    path.write_text("".join(a.model_dump_json() + "\n" for a in reviews))
    cb = codebooks.bundled()
    cb_file = codebooks.bundled_dir() / f"{cb.name}.v{cb.version}.yaml"
    code, _, err = run_cli(capsys, "report", tmp_path, "--codebook", cb_file, "-o", tmp_path / "r")
    assert code == 0, err
    said = (
        "40 reviews of units outside the review plan are left out of the corrected shares (not "
        "a random sample; 30 of them no unit of the plan's data: another study's or run's "
        "reviews?)"
    )
    assert said in err.splitlines()
    caption = (tmp_path / "r" / "tables" / "retrieval_quality_corrected.md").read_text()
    assert said in caption
