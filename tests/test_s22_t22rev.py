"""Session 22 (t22rev): provenance of the review layer and of a study's outputs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from failcodes import codebook as codebooks
from tests.cli_helpers import run_cli

EE, PE, IRR = "exact_entity", "partial_entity", "irrelevant"


def test_reviews_made_with_another_judges_codes_are_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # alice reviewed 6 units in Label Studio with openai:model-a's codes pre-selected (the
    # predictions' model_version, kept by labelstudio pull as shown_judge); the judge was run
    # again since (here the offline judge): the report compared her with it and said only "a
    # reviewer who keeps them agrees with the judge more": the judge it names is not the one
    # she saw
    from failcodes.report.rundir import load_run_dir
    from tests.test_outside_red16b import _review_study

    ref = codebooks.bundled().ref()
    seen = f"{ref} openai:model-a"
    root = _review_study(tmp_path, [EE, EE, PE, IRR, EE, IRR], {"alice": [EE, PE, PE, IRR, EE, EE]})
    review = root / "review" / "alice.jsonl"
    lines = [json.loads(line) for line in review.read_text(encoding="utf-8").splitlines()]
    review.write_text(
        "".join(json.dumps({**x, "judge_shown": True, "shown_judge": seen}) + "\n" for x in lines),
        encoding="utf-8",
    )
    said = (
        f"6 review(s) made with the codes of {seen} pre-selected, compared here with {ref} "
        "offline (heuristic baseline, not an LLM): not the judge they saw (run again since?), "
        "so human vs judge agreement is not the reviewers' check of it"
    )
    inputs = load_run_dir(root)
    assert said in inputs.notes["agreement"]
    assert f"Assumed: {said}" in inputs.notes["assumed"]  # stderr's lines of `report`
    # the value is unchanged: alice vs offline agree on u0, u2, u3, u4 -> 4/6; pooled margins
    # ee 6/12, pe 3/12, irr 3/12: p_e = 3/8, Fleiss (2/3 - 3/8) / (5/8) = 7/15
    rows = inputs.agreement
    assert rows is not None
    [value] = rows[(rows["subject"] == "entity_match") & (rows["statistic"] == "fleiss")]["value"]
    assert value == pytest.approx(7 / 15)
    # agree on the reviews and the judge's codes: its first line says it too
    both = tmp_path / "both.jsonl"
    judge = root / "judge" / "d" / "retrieval" / "annotations.jsonl"
    both.write_text(review.read_text(encoding="utf-8") + judge.read_text(encoding="utf-8"))
    code, out, err = run_cli(["agree", str(both), "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0, err
    assert f"; {said}; code lists: " in json.loads(out)[0]["notes"][0]
    # reviews made with the offline judge's own codes: nothing more is said
    same = f"{ref} offline (heuristic baseline, not an LLM)"
    review.write_text(
        "".join(json.dumps({**x, "judge_shown": True, "shown_judge": same}) + "\n" for x in lines),
        encoding="utf-8",
    )
    assert not any("not the judge they saw" in n for n in load_run_dir(root).notes["agreement"])


@pytest.mark.labelstudio
def test_a_pulled_review_names_the_judge_whose_codes_it_saw(
    labelstudio_server: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a real Label Studio: 4 tasks pushed with openai:model-a's codes as predictions; erin keeps
    # them but unit 0's entity. Pulled, the reviews said only judge_shown: compared with
    # model-b's codes (the judge run again), agree's first line named no judge
    from failcodes.commands.labelstudio import ReviewsResult
    from failcodes.labelstudio.client import LabelStudioClient
    from failcodes.labelstudio.config import labeling_config
    from failcodes.labelstudio.tasks import build_tasks, choice_result
    from failcodes.units import UnitKind
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import (
        ENTITY,
        SCOPE,
        annotate,
        create_user,
        judge_codes,
        judged,
        retrieval_unit,
        toy_codebook,
    )

    cb = toy_codebook()
    units = [retrieval_unit(7200 + i) for i in range(4)]
    model_a = {u.id: judged(u, cb, i, "openai:model-a") for i, u in enumerate(units)}
    title = "t22rev anchoring"
    url, token = labelstudio_server
    with LabelStudioClient(url, token) as client:
        tasks = build_tasks(units, cb, UnitKind.RETRIEVAL, model_a)
        pid = client.push(tasks, labeling_config(cb, UnitKind.RETRIEVAL), title).projects[title]
        on_server = client.unit_task_ids(pid)
        erin = create_user(client, "erin@failcodes.test")
        for i, u in enumerate(units):
            codes = judge_codes(i) if i else {"entity": ENTITY[1], "scope": SCOPE[0]}
            items = [choice_result(d, c) for d, c in codes.items()]
            annotate(client, on_server[u.id], items, completed_by=erin, lead_time=2.0)
        pulled = client.pull(cb, UnitKind.RETRIEVAL, title)
    seen = f"toy@1+{cb.hash[:12]} openai:model-a"  # tasks.model_version: codebook ref, judge
    assert [(a.judge_shown, a.shown_judge) for a in pulled.annotations] == [(True, seen)] * 4
    first = ReviewsResult(review=pulled, out=tmp_path / "erin.jsonl").lines()[0]
    assert first.startswith(
        "Assumed: 4 of 4 annotations were made with the judge's codes pre-selected (Label Studio "
        f"predictions of {seen}): "
    )
    # erin vs model-b (judge_codes(i + 1)): entity E1 E1 E2 E0 vs E1 E2 E0 E1 -> 1/4 agree;
    # vs model-a (judge_codes(i)): E0 E1 E2 E0 -> 3/4
    book = write_codebook(tmp_path / "toy.yaml", cb)
    humans = "".join(a.model_dump_json() + "\n" for a in pulled.annotations)
    said = (
        f"4 review(s) made with the codes of {seen} pre-selected, compared here with "
        f"toy@1+{cb.hash[:12]} openai:model-b: not the judge they saw"
    )
    for model, shift, percent in (("model-b", 1, 0.25), ("model-a", 0, 0.75)):
        codes = [judged(u, cb, i + shift, f"openai:{model}") for i, u in enumerate(units)]
        both = tmp_path / f"{model}.jsonl"
        both.write_text(humans + "".join(a.model_dump_json() + "\n" for a in codes))
        args = ["agree", str(both), "--codebook", str(book), "--bootstrap", "0", "--format", "json"]
        code, out, err = run_cli(args, capsys)
        assert code == 0, err
        rows = json.loads(out)
        [value] = [
            r["value"]
            for r in rows
            if r["dimension"] == "entity" and r["scope"] == "pair" and r["statistic"] == "percent"
        ]
        assert value == pytest.approx(percent)
        assert (said in rows[0]["notes"][0]) is (model == "model-b")


def test_an_agreement_written_to_stdout_inside_a_moved_study_is_still_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `agree --format json > STUDY/agreement/drs.json` (no -o) recorded its input by absolute
    # path: the study moved, the report said "not there now: not checked" and showed Cohen
    # 0.600 at exit 0 for ratings corrected since to 0.800 (t21rel's leftover)
    from tests.test_s21_t21rel import _ratings

    root = tmp_path / "st"
    (root / "agreement").mkdir(parents=True)
    _ratings(root / "ratings.csv", "no,yes")
    saved = root / "agreement" / "drs.json"
    src = str(Path(__file__).resolve().parent.parent / "src")
    args = [sys.executable, "-m", "failcodes", "agree", str(root / "ratings.csv"), "--stat"]
    args += ["cohen", "--bootstrap", "0", "--format", "json"]
    with saved.open("w", encoding="utf-8") as out:
        done = subprocess.run(
            args, stdout=out, env={**os.environ, "PYTHONPATH": src}, timeout=120, check=False
        )
    assert done.returncode == 0
    [row] = json.loads(saved.read_text(encoding="utf-8"))
    assert list(row["sha256"]) == ["ratings.csv"]  # as -o names it
    assert row["command"] == "failcodes agree ratings.csv --stat cohen --bootstrap 0"
    moved = tmp_path / "elsewhere" / "st"
    moved.parent.mkdir()
    shutil.move(root, moved)
    code, _, err = run_cli(["report", str(moved), "-o", str(tmp_path / "r1")], capsys)
    assert code == 0, err
    assert "not checked" not in (tmp_path / "r1/index.html").read_text(encoding="utf-8")
    # 8 of 10 agree, each says yes on 5 of 10: pe = 0.5, Cohen (0.8 - 0.5) / 0.5 = 0.600
    assert "| 0.600 [" in (tmp_path / "r1/tables/agreement.md").read_text(encoding="utf-8")
    # unit 8 corrected after the move (9 of 10 agree: Cohen 0.800): the old 0.600 is refused
    _ratings(moved / "ratings.csv", "yes,yes")
    code, _, err = run_cli(["report", str(moved), "-o", str(tmp_path / "r2")], capsys)
    assert code == 2 and not (tmp_path / "r2").exists()
    assert f"{moved / 'agreement/drs.json'}: was computed from ratings.csv as it was then" in err


def test_a_study_output_edited_by_hand_is_said_first_and_written_again_by_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # metrics/d.json edited after `run` (sysB's FN made a TP: F1 1.0): `report` showed it at
    # exit 0 with no word (the run state fingerprints a step's inputs, not what it wrote), and
    # `run` left it as it was
    from tests.test_s20_t20s2a import made_study

    root = made_study(tmp_path / "st")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    metrics = root / "metrics" / "d.json"
    rows = json.loads(metrics.read_text(encoding="utf-8"))
    # sysB: q1s0 refuted, an error (TP); q2s0 supported, an error (FN); q1s1, q2s1 TN
    assert [(r["system"], r["tp"], r["fn"], r["tn"]) for r in rows][1] == ("sysB", 1, 1, 2)
    assert rows[1]["f1"] == pytest.approx(2 / 3)  # 2 TP / (2 TP + FP + FN) = 2/3
    rows[1].update(tp=2, fn=0, f1=1.0, recall=1.0)
    metrics.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    table = root / "attribution" / "d" / "per_passage.csv"  # beside attribution.csv, unnamed
    table.write_text(table.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r1")], capsys)
    assert code == 0, err
    assert err.splitlines()[0] == (
        "these files changed since `failcodes run` wrote them (edited, or written again by "
        "hand?), shown as they are now: metrics/d.json (step metrics d), "
        f"attribution/d/per_passage.csv (step attribute d); run `failcodes run {root}` to "
        "bring them up to date"
    )
    # the way through: `run` writes them again (a step's file not as it wrote it)
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    rows = json.loads(metrics.read_text(encoding="utf-8"))
    assert (rows[1]["tp"], rows[1]["fn"], rows[1]["f1"]) == (1, 1, pytest.approx(2 / 3))
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r2")], capsys)
    assert code == 0 and "changed since" not in err
