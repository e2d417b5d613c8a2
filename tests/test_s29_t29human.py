"""Session 29 (t29human): the human loop, second pass: reviewers' proposals reach `saturate`,
spelling variants are said, and new shapes (issue 30)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.saturation.test_cli import cli, decide, scripted_round, setup_project
from tests.test_cli_labelstudio import run  # noqa: F401  (in-process CLI fixture)

PAEDIATRIC = {
    "dimension": "scope",
    "parent_subcode": "different_context",
    "name": "Paediatric population",
    "definition": "Children instead of the claim's adults.",
}


PEDIATRIC = {"name": "Pediatric population", "definition": "Patients under 18 years."}


# --- (b) spelling variants are said, not joined ------------------------------------------


def test_a_spelling_variant_of_a_leaf_is_said_not_joined(tmp_path: Path) -> None:
    # round 1 adds the leaf 'Paediatric population'; round 2's proposer gives 'Pediatric
    # population' ('Patients under 18 years.'). Normalised 'paediatric population' / 'pediatric
    # population': one edit (delete the 'a'), not equal; similarity max(J_name 1/3, (1/3 +
    # J_all 1/11) / 2) = 1/3 < 0.5 (J_all: 'population' of 11 tokens): main opened it as a new
    # pattern without a word. It stays open (a few edits also part hypertension/hypotension),
    # and the round's output and the review file say it.
    coder, proposer = setup_project(
        tmp_path, {"1": [PAEDIATRIC], "2": [{**PAEDIATRIC, **PEDIATRIC}]}
    )
    scripted_round(tmp_path, coder, proposer)
    assert decide(tmp_path, 1, {"decision": "accept"}).returncode == 0
    out = scripted_round(tmp_path, coder, proposer)
    assert "1 proposal(s), 1 after deduplication" in out
    said = (
        "note: proposal r0002-p01 (Pediatric population): new pattern 'Pediatric population' is "
        "close to existing code 'paediatric_population' ('Paediatric population') (edit "
        "distance 1): a spelling variant is not joined by itself; merge with target "
        "leaf:paediatric_population if it is the same pattern"
    )
    assert said in out
    review = tmp_path / "annotations" / "trial" / "rounds" / "r0002" / "review.yaml"
    item = yaml.safe_load(review.read_text(encoding="utf-8"))["proposals"][0]
    assert item["proposer_notes"] == [said.split("): ", 1)[1]]
    # merged, the round adds nothing: the stop rule counts it (1/2), as by hand
    done = decide(tmp_path, 2, {"decision": "merge", "target": "leaf:paediatric_population"})
    assert done.returncode == 0, done.stderr
    status = cli("status", "trial", cwd=tmp_path).stdout
    assert "accumulation: r1: +1 (=1), r2: +0 (=1)" in status


def test_close_names_by_hand() -> None:
    from failcodes.saturation.dedupe import close_names, edit_distance

    assert edit_distance("tumour", "tumor") == 1  # delete u
    assert edit_distance("haemorrhage", "hemorrhage") == 1  # delete a
    assert edit_distance("hypertension", "hypotension") == 2  # e->o, delete r
    assert close_names("Tumour invasion", [("leaf:t", "Tumor invasion")]) == [
        ("leaf:t", "Tumor invasion", 1)
    ]
    # 'rat'/'cat': 1 edit in 3 letters, more than one per 5: not said
    assert close_names("Rat", [("leaf:c", "Cat")]) == []
    # equal once normalised: a duplicate, not a variant
    assert close_names("Animal studies", [("leaf:a", "Animal study")]) == []


# --- (a) reviewers' free-text proposals reach `saturate round --reviews` ---------------------


def _review(unit: int, coder: str, codes: dict[str, str], proposal: str | None) -> str:
    from failcodes.annotations import Annotation, CoderKind
    from tests.saturation.satfixtures import make_pool, small_codebook

    return Annotation(
        unit_id=make_pool(12)[unit].id,
        unit_kind="retrieval",
        codebook=small_codebook().ref(),
        coder=coder,
        coder_kind=CoderKind.HUMAN,
        codes=codes,
        proposal=proposal,
    ).model_dump_json()


def test_reviewers_proposals_are_proposals_of_the_next_round(tmp_path: Path) -> None:
    # alice: entity exact, scope different_context (her one low-quality code), proposes
    # 'Paediatric population: children instead of adults' -> a leaf proposal under
    # scope/different_context named 'Paediatric population', defined 'children instead of
    # adults', example her unit. bob: two low-quality codes, proposes 'Wrong dose': its
    # dimension is not known -> said, not proposed. carol: no proposal. The proposer proposes
    # nothing: main read the `proposal` field nowhere (round 1: 0 proposals, closed at once).
    from failcodes.saturation.rounds import REVIEWERS
    from tests.saturation.satfixtures import make_pool

    pool = make_pool(12)
    coder, proposer = setup_project(tmp_path, {})
    reviews = tmp_path / "reviews.jsonl"
    ok, wide = "exact_entity", "different_context"
    reviews.write_text(
        "\n".join(
            [
                _review(
                    0,
                    "alice",
                    {"entity_match": ok, "scope": wide},
                    "Paediatric population: children instead of adults",
                ),
                _review(1, "bob", {"entity_match": "entity_mismatch", "scope": wide}, "Wrong dose"),
                _review(2, "carol", {"entity_match": ok, "scope": "exact_scope"}, None),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    args = ("round", "trial", "--judge", f"scripted:{coder}", "--proposer", f"scripted:{proposer}")
    done = cli(*args, "--reviews", str(reviews), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 proposal(s), 1 after deduplication" in done.stdout
    assert (
        "note: reviewer bob's proposal on unit " + pool[1].id + " ('Wrong dose') is not "
        "proposed: its dimension is not known (the review's low-quality codes: "
        "entity_match=entity_mismatch, scope=different_context; one places it)"
    ) in done.stdout
    review = tmp_path / "annotations" / "trial" / "rounds" / "r0001" / "review.yaml"
    item = yaml.safe_load(review.read_text(encoding="utf-8"))["proposals"][0]
    assert (item["dimension"], item["parent_subcode"]) == ("scope", "different_context")
    assert (item["name"], item["definition"]) == (
        "Paediatric population",
        "children instead of adults",
    )
    assert item["proposer"] == REVIEWERS
    assert [e["unit"] for e in item["examples"]] == [pool[0].id]
    assert item["proposer_notes"] == [
        f"proposed by reviewer alice in their review of unit {pool[0].id} (codebook testbook v1)",
        "placed under scope/different_context, the review's only low-quality code (the "
        "reviewer named no dimension: reject it if it belongs elsewhere)",
    ]
    assert decide(tmp_path, 1, {"decision": "accept"}).returncode == 0
    # the same file again: alice's proposal was given to round 1 (accepted: a leaf now)
    again = cli(*args, "--reviews", str(reviews), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "0 proposal(s), 0 after deduplication" in again.stdout
    assert "note: 1 reviewer proposal(s) already given to an earlier round" in again.stdout


def test_review_status_counts_the_reviews_proposing_a_new_code(tmp_path: Path) -> None:
    # 3 reviews of drawn units, one (bob's) proposing a new code: main's status line said
    # nothing of it (the proposal is in no estimate).
    from failcodes.commands.reviewplan import ReviewStatusRequest
    from tests.test_review_plan import big_table, human, plan_of

    plan = plan_of(big_table())
    path = tmp_path / "plan.json"
    path.write_text(plan.model_dump_json(), encoding="utf-8")
    ids = sorted(plan.estimation_ids())[:3]
    rows = [human(ids[0], "exact_entity"), human(ids[1], "partial_entity", coder="bob")]
    rows[1] = rows[1].model_copy(update={"proposal": "Wrong dose: another dose than claimed"})
    rows.append(human(ids[2], "exact_entity", coder="carol"))
    reviews = tmp_path / "r.jsonl"
    reviews.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    line = ReviewStatusRequest(plan_path=path, reviews=[reviews]).run().lines()[0]
    assert "estimation sample 3/20 reviewed" in line
    assert line.endswith(
        "; 1 review(s) propose a new code (free text, in no estimate: `failcodes saturate round "
        "NAME --reviews FILE` makes them proposals)"
    )


def test_review_status_names_strata_the_report_cannot_estimate_yet(tmp_path: Path) -> None:
    # a plan by system over big_table (bm25 60 units, dense 30): 12 drawn, bm25 8, dense 4
    # (proportional: 12 x 60/90, 12 x 30/90). Two bm25 units reviewed, none of dense; zed
    # reviewed u001 (in the data, not drawn) and u999 (no unit of the data). main: '2/12
    # reviewed ... 2 reviewed unit(s) outside the plan (not used)', no word that the report
    # gives dense's cells no corrected share (a stratum with unreviewed units needs 2 reviewed,
    # stats.ppi) nor that u999 is no unit of the plan's data.
    from failcodes.commands.reviewplan import ReviewStatusRequest
    from failcodes.reviewplan import StratifyBy
    from tests.test_review_plan import big_table, human, plan_of

    plan = plan_of(big_table(), stratify=[StratifyBy.SYSTEM], size=12)
    assert [(s.key, s.population, s.sampled) for s in plan.strata] == [
        ("retriever=bm25", 60, 8),
        ("retriever=dense", 30, 4),
    ]
    path = tmp_path / "plan.json"
    path.write_text(plan.model_dump_json(), encoding="utf-8")
    bm25 = [u.unit_id for u in plan.units if u.stratum == "retriever=bm25"]
    assert "u001" not in plan.estimation_ids()
    rows = [human(bm25[0], "exact_entity"), human(bm25[1], "exact_entity")]
    rows += [human("u001", "exact_entity", coder="zed"), human("u999", "exact_entity", "zed")]
    reviews = tmp_path / "r.jsonl"
    reviews.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    line = ReviewStatusRequest(plan_path=path, reviews=[reviews]).run().lines()[0]
    assert line == (
        "plan 'p' (retrieval): estimation sample 2/12 reviewed, targeted 0/0; 2 reviewed "
        "unit(s) outside the plan (not used; 1 of them no unit of the plan's data); strata "
        "with fewer than 2 reviewed (the report gives no corrected share for cells holding "
        "their units until 2 are): retriever=dense 0/4"
    )


def test_a_dimension_one_coder_left_empty_is_taken_from_the_other(
    tmp_path: Path, capsys: Any
) -> None:
    # 40 units drawn of big_table's 90 (one stratum; bm25 = u000-u059, dense the rest):
    # 24 bm25 units with the default seed. alice (first by name) reviewed all 40 but left
    # scope empty; bob reviewed the same 40 with every dimension, scope broader_scope on 2 bm25
    # units and exact_scope elsewhere. main took alice's review only: scope's cells had 0
    # reviewed units ('too small to estimate'), bob's 40 scope codes unread. By hand: bm25's
    # exact_scope cell reviewed 24, human-only 22/24 = 91.7%, Clopper-Pearson [Beta(.025; 22,
    # 3), Beta(.975; 23, 2)] = [73.0, 99.0] (one stratum: exactly Clopper-Pearson's).
    import pandas as pd

    from failcodes import codebook as codebooks
    from failcodes.reviewplan import read_plan
    from failcodes.study.layout import StudyLayout
    from tests.test_review_plan import _cp, big_table, human, run_cli

    table = StudyLayout.of(tmp_path).per_passage("ds")
    table.parent.mkdir(parents=True)
    big_table().to_csv(table, index=False)
    code, _, err = run_cli(capsys, "review", "plan", tmp_path, "-p", "retrieval", "-n", "40")
    assert code == 0, err
    drawn = sorted(read_plan(tmp_path / "review" / "plans" / "ds.retrieval.json").estimation_ids())
    bm25 = [u for u in drawn if int(u[1:]) < 60]
    assert len(bm25) == 24
    alice = [human(u, "exact_entity") for u in drawn]
    alice = [a.model_copy(update={"codes": {k: v for k, v in a.codes.items() if k != "scope"}})
             for a in alice]  # fmt: skip
    bob = [human(u, "exact_entity", coder="bob") for u in drawn]
    for a in bob:
        if a.unit_id in bm25[:2]:
            a.codes["scope"] = "broader_scope"
    for name, anns in (("alice", alice), ("bob", bob)):
        (tmp_path / "review" / f"{name}.jsonl").write_text(
            "".join(a.model_dump_json() + "\n" for a in anns), encoding="utf-8"
        )
    cb = codebooks.bundled()
    cb_file = codebooks.bundled_dir() / f"{cb.name}.v{cb.version}.yaml"
    out = tmp_path / "report"
    code, _, err = run_cli(capsys, "report", tmp_path, "--codebook", cb_file, "-o", out)
    assert code == 0, err
    corrected = pd.read_csv(out / "tables" / "retrieval_quality_corrected.csv")
    cell = corrected[(corrected["code"] == "exact_scope") & (corrected["retriever"] == "bm25")]
    low, high = _cp(22, 24)
    assert (round(100 * low, 1), round(100 * high, 1)) == (73.0, 99.0)
    assert cell.iloc[0]["reviewed"] == 24
    assert cell.iloc[0]["human-only (%)"] == "91.7 [73.0, 99.0]"


# --- Label Studio: push, then push again asking for another showing (real server) ------------


def test_a_second_push_says_what_the_tasks_already_there_show(
    labelstudio_server: tuple[str, str],
    tmp_path: Path,
    run: Any,  # noqa: F811
) -> None:
    # 4 units pushed blind, then pushed again with --judged: main stopped with exit 2 'Label
    # Studio ... refused to set the model version of project 1: Validation error' (no
    # prediction of the project has that version: none was imported, the 4 were there). Now
    # '0 tasks imported, 4 already there' and that those 4 hold no judge prediction, so the
    # judged review asked for shows nothing pre-selected. By hand: 4 of 4 show otherwise.
    # The other way round (judged first, then blind): the 4 show the judge's codes, no blind
    # review.
    from tests.labelstudio_helpers import judged, retrieval_unit, toy_codebook
    from tests.test_cli_labelstudio import write_codebook

    url, token = labelstudio_server
    cb = toy_codebook()
    cb_path = write_codebook(tmp_path)
    units = [retrieval_unit(9100 + i) for i in range(4)]
    (tmp_path / "units.jsonl").write_text("".join(u.model_dump_json() + "\n" for u in units))
    anns = [judged(u, cb, i) for i, u in enumerate(units)]
    (tmp_path / "judged.jsonl").write_text("".join(a.model_dump_json() + "\n" for a in anns))
    env = {"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": token}
    for first, then, said in (
        ((), ("--judged", "judged.jsonl"), "4 of them hold no judge prediction (pushed without"),
        (("--judged", "judged.jsonl"), (), "4 of them hold the judge's prediction (pushed with"),
    ):
        title = f"s29 second push {len(first)}"
        args = ("-p", "retrieval", "-c", cb_path, "--project", title)
        proc = run("push", "units.jsonl", *args, *first, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip().endswith("4 tasks imported, 0 already there")
        proc = run("push", "units.jsonl", *args, *then, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
        assert f"0 tasks imported, 4 already there; {said}" in proc.stdout
        # the same push again: nothing shows otherwise, the line as before
        proc = run("push", "units.jsonl", *args, *first, cwd=tmp_path, env=env)
        assert proc.stdout.strip().endswith("0 tasks imported, 4 already there")
