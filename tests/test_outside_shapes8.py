"""Data shapes the eighth outside check tried (redteam8, 2026-12-02): values by hand.

Each test failed on the code before its fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest

from tests.cli_helpers import run_cli
from tests.review_versions import coded, write_annotations

if TYPE_CHECKING:
    from failcodes.annotations import Annotation

#: every retrieval dimension of the bundled codebook v1 at its high-quality code
HIGH = {
    "entity_match": "exact_entity",
    "scope": "exact_scope",
    "trustworthy": "trustworthy_source",
    "evidence_polarity": "direct_polarity",
    "chunking": "well_chunked",
}


def _judge_and_review(tmp_path: Path, second_scope: str) -> Path:
    """Two data sets whose judge runs both coded units r0..r3; alice reviewed them.

    Retrieval unit ids are the claim and the passage text, so two data sets of the same
    questions with one retriever hold the same units. The judge: scope exact_scope on r0, r1,
    broader_scope on r2, r3 (d2's run gives ``second_scope`` on r3). Alice: exact_scope on
    r0, broader_scope on r1, r2, r3; every other dimension as the judge (all high quality).
    """
    from failcodes import codebook as codebooks

    v1 = codebooks.bundled(version=1)

    def coded_scopes(coder: str, scopes: list[str]) -> list[Annotation]:
        return [
            coded(f"r{i}", v1.ref(), coder, {**HIGH, "scope": scope}, retrieval=True)
            for i, scope in enumerate(scopes)
        ]

    first = ["exact_scope", "exact_scope", "broader_scope", "broader_scope"]
    for name, scopes in (("d1", first), ("d2", [*first[:3], second_scope])):
        path = tmp_path / "judge" / name / "retrieval" / "annotations.jsonl"
        write_annotations(path, coded_scopes("judge", scopes))
    alice = ["exact_scope", "broader_scope", "broader_scope", "broader_scope"]
    write_annotations(tmp_path / "review" / "alice.jsonl", coded_scopes("alice", alice))
    return codebooks.bundled_dir() / f"{v1.name}.v1.yaml"


def test_two_data_sets_sharing_judged_units_give_one_judge_rating_per_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Units judged in two data sets stopped the report once a review was pulled (exit 2).

    Before: "coder 'judge' annotated unit 'r0' twice; keep one annotation per unit and
    coder", naming no file: each data set's judge annotation of a shared unit entered the
    review agreement as one more rating by the judge. Now one annotation per unit and judge.
    By hand, scope, alice vs judge on r0..r3: exact/exact, broader/exact, broader/broader,
    broader/broader: 3 of 4 agree, percent 3/4 over n = 4 units (not 8). Fleiss (Scott's pi
    for two): pooled margins exact 3/8, broader 5/8, p_e = 9/64 + 25/64 = 34/64;
    (3/4 - 34/64) / (1 - 34/64) = (14/64) / (30/64) = 7/15. Cohen on the code exact_scope
    (did each give it): alice 1 of 4, the judge 2 of 4; agree on r0, r2, r3: 3/4;
    p_e = 1/4 * 1/2 + 3/4 * 1/2 = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2.
    """
    cb_file = _judge_and_review(tmp_path, "broader_scope")
    out = tmp_path / "report"
    args = ["report", str(tmp_path), "--codebook", str(cb_file), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    agreement = pd.read_csv(out / "tables" / "agreement.csv")
    rows = {(r.subject, r.statistic): r for r in agreement.itertuples()}
    for key, value in {
        ("scope", "percent"): 3 / 4,
        ("scope", "fleiss"): 7 / 15,
        ("scope: exact_scope", "cohen"): 1 / 2,
    }.items():
        assert rows[key].coders == "alice vs judge"
        assert rows[key].n_units == 4
        assert rows[key].value == pytest.approx(value)


def test_a_unit_the_judge_coded_two_ways_in_two_data_sets_is_refused_naming_both_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge gave r3 broader_scope in d1 and exact_scope in d2: no telling which to use."""
    cb_file = _judge_and_review(tmp_path, "exact_scope")
    out = tmp_path / "report"
    args = ["report", str(tmp_path), "--codebook", str(cb_file), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    first = tmp_path / "judge" / "d1" / "retrieval" / "annotations.jsonl"
    second = tmp_path / "judge" / "d2" / "retrieval" / "annotations.jsonl"
    assert err.strip() == (
        f"failcodes: error: {second}: the judge 'judge' coded unit 'r3' (reviewed) one way in "
        f"{first} and another in this file, which both hold it (the same claim and text in "
        "two data sets): the review cannot be compared with both; judge the data sets with "
        "the judge's cache on, so a unit gets one answer"
    )
    assert not out.exists()


def test_one_coders_review_in_two_pulled_files_counts_once_the_latest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two pulls of one project saved under two names stopped the report (exit 2).

    `labelstudio pull` fetches every annotation, so a second pull saved as
    review/alice-2.jsonl holds the first one's reviews again. Before: "coder 'alice'
    annotated unit 'r0' twice; keep one annotation per unit and coder", naming no file. Now
    the latest review of each unit counts and the report says so, naming both files. The first
    pull (1 November) gave scope exact_scope on r0..r3; the second (2 November), alice
    changing her mind, exact_scope on r0 and broader_scope on r1..r3. The judge: exact on r0,
    r1, broader on r2, r3. By hand with the second pull: percent 3/4 over 4 units (the first
    pull would give 2/4).
    """
    from datetime import UTC, datetime

    from failcodes.annotations import Annotation

    cb_file = _judge_and_review(tmp_path, "broader_scope")
    second = tmp_path / "review" / "alice-2.jsonl"
    (tmp_path / "review" / "alice.jsonl").rename(second)
    first = [
        Annotation.model_validate_json(line).model_copy(
            update={
                "codes": {**HIGH, "scope": "exact_scope"},
                "created_at": datetime(2026, 11, 1, tzinfo=UTC),
            }
        )
        for line in second.read_text().splitlines()
    ]
    write_annotations(tmp_path / "review" / "alice.jsonl", first)
    lines = second.read_text().splitlines()
    write_annotations(
        second,
        [
            Annotation.model_validate_json(line).model_copy(
                update={"created_at": datetime(2026, 11, 2, tzinfo=UTC)}
            )
            for line in lines
        ],
    )
    (tmp_path / "judge" / "d2").rename(tmp_path / "d2-not-judged")
    out = tmp_path / "report"
    args = ["report", str(tmp_path), "--codebook", str(cb_file), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    note = (
        "review/alice.jsonl: 4 review(s) of units the same coder reviewed again (in "
        "review/alice-2.jsonl): the latest review of each counts, once"
    )
    assert note in err.splitlines()
    assert note in (out / "index.html").read_text()
    agreement = pd.read_csv(out / "tables" / "agreement.csv")
    row = agreement[(agreement["subject"] == "scope") & (agreement["statistic"] == "percent")]
    assert row["n_units"].tolist() == [4]
    assert row["value"].tolist() == [pytest.approx(3 / 4)]


def test_a_task_file_imported_twice_gives_one_annotation_per_unit_and_coder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A unit in two tasks (the task file imported twice) gave two annotations by one coder.

    `labelstudio import` wrote both; `agree` on its output then stopped (exit 2) with "coder
    'alice' annotated unit 'r0' twice". Now the latest counts and a warning names both
    tasks. Units r0..r3; bob: exact_scope on r0, r1, broader_scope on r2, r3. Alice:
    exact_scope on r0 in task 1 (1 November) and broader_scope on r0 in task 5 (2 November,
    the same unit imported again), exact_scope on r1, broader_scope on r2, r3. With her later
    answer: r0 differs, r1..r3 agree: percent 3/4 on scope, over 4 units (the earlier
    answer would give 4/4).
    """
    import json

    from failcodes import codebook as codebooks

    cb = codebooks.bundled(version=1)

    def task(tid: int, unit: str, answers: list[tuple[int, str, str]]) -> dict[str, object]:
        data = {
            "failcodes_unit_id": unit,
            "failcodes_unit_kind": "retrieval",
            "failcodes_codebook": str(cb.ref()),
        }
        anns = [
            {
                "id": 100 * tid + user,
                "completed_by": user,
                "created_at": when,
                "updated_at": when,
                "result": [
                    {
                        "from_name": dim,
                        "to_name": "claim",
                        "type": "choices",
                        "value": {"choices": [scope if dim == "scope" else code]},
                    }
                    for dim, code in HIGH.items()
                ],
            }
            for user, scope, when in answers
        ]
        return {"id": tid, "project": 3, "data": data, "annotations": anns}

    nov1, nov2 = "2026-11-01T10:00:00Z", "2026-11-02T10:00:00Z"
    alice = ["exact_scope", "exact_scope", "broader_scope", "broader_scope"]
    bob = ["exact_scope", "exact_scope", "broader_scope", "broader_scope"]
    tasks = [task(i + 1, f"r{i}", [(1, alice[i], nov1), (2, bob[i], nov1)]) for i in range(4)]
    tasks.append(task(5, "r0", [(1, "broader_scope", nov2)]))
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks))
    out = tmp_path / "human.jsonl"
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "--user", "1=alice"]
    code, _, err = run_cli([*args, "--user", "2=bob", "-o", str(out)], capsys)
    assert code == 0, err
    assert (
        "failcodes: warning: task 5 (unit r0), coder alice: several annotations by the same "
        "coder (also in task 1: imported twice?); kept the latest"
    ) in err.splitlines()
    assert len(out.read_text().splitlines()) == 8
    code, got, err = run_cli(["agree", str(out), "--format", "json"], capsys)
    assert code == 0, err
    rows = [r for r in json.loads(got) if r["dimension"] == "scope" and r["scope"] == "pair"]
    percent = next(r for r in rows if r["statistic"] == "percent")
    assert (percent["value"], percent["n_units"]) == (pytest.approx(3 / 4), 4)


def _small_study(root: Path, datasets: tuple[str, ...] = ("d",)) -> None:
    """A study of 2 questions x 2 sentences of system A, every sentence an error it missed.

    Each data set of ``datasets`` reads the same file.
    """
    data = root / "a.csv"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text(
        "question_id,sentence_id,claim,verdict,system,reasoning,passage,gold\n"
        + "".join(
            f"q{q},q{q}s{s},claim {q} {s},supported,A,because {q} {s},passage about {q} {s},"
            "incorrect\n"
            for q in range(2)
            for s in range(2)
        )
    )
    dataset = (
        '[[datasets]]\nname = "{}"\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["a.csv"]\nlabels = true\n'
        'passage_column = ["passage=wiki"]\nlabel_rule = "gold = incorrect -> error"\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n\n'
    )
    (root / "failcodes.toml").write_text(
        'name = "switch"\ncodebook = "medical-fact-check.v1.yaml"\n\n'
        + "".join(dataset.format(name) for name in datasets)
        + '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n\n[judge]\njudge = "offline"\n'
    )


def test_a_study_switched_from_the_offline_judge_to_an_llm_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_server: object, monkeypatch: object
) -> None:
    """The tutorial's way: run with the offline judge, then name an LLM judge in [judge].

    The run stopped with "judge/d/retrieval holds a run with judge='offline', not
    'openai:judge-x'; use another output folder (-o) for a different run": a study sets -o
    itself (and refuses it as a field). Now the line says to move or delete the earlier
    judge's run folders; done, the run codes the 4 retrieval units with the new judge.
    """
    from tests.judge_helpers import fresh_fake

    fake = fresh_fake(fake_server, monkeypatch, "sk-switch")  # type: ignore[arg-type]
    study = tmp_path / "st"
    code, _, err = run_cli(["init", str(study)], capsys)
    assert code == 0, err
    _small_study(study)
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 0, err
    toml = study / "failcodes.toml"
    toml.write_text(
        toml.read_text().replace(
            'judge = "offline"', f'judge = "openai:judge-x"\nbase_url = "{fake.openai_base_url}"'
        )
    )
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 2
    run = study / "judge" / "d" / "retrieval"
    log = study / ".failcodes" / "logs" / "judge_retrieval_d.log"
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {run} holds a run with judge='offline', and the study file's "
        "[judge] now gives 'openai:judge-x': a judge run folder holds one judge's codes; move "
        "the earlier judge's run folders (this one first) out of the study's judge/ folder, to "
        "keep their codes, or delete them, then run again: the steps after them follow the new "
        f"judge (step 'judge retrieval d' failed; its output: {log})"
    )
    (study / "judge" / "d").rename(tmp_path / "offline-runs")
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 0, err
    coders = {
        line.split('"coder":"')[1].split('"')[0]
        for line in (run / "annotations.jsonl").read_text().splitlines()
    }
    assert coders == {"openai:judge-x"}
    assert len((run / "annotations.jsonl").read_text().splitlines()) == 4


def test_a_study_codebook_edited_in_place_says_to_save_a_new_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A definition edited in the study's codebook (same version): the same -o advice."""
    study = tmp_path / "st"
    code, _, err = run_cli(["init", str(study)], capsys)
    assert code == 0, err
    _small_study(study)
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 0, err
    book = study / "medical-fact-check.v1.yaml"
    text = book.read_text()
    edited = text.replace("or reports mixed results.", "or reports mixed results (edited).", 1)
    assert edited != text
    book.write_text(edited)
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith(
        "failcodes: error: the study's codebook changed since "
        f"{study / 'judge' / 'd' / 'retrieval'} was coded under it (the run: "
        "medical-fact-check@1+7e76b8948be6, now medical-fact-check@1+"
    )
    assert "save the change as the next version (<name>.v<N+1>.yaml" in line
    book.write_text(text)  # "or restore the codebook"
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 0, err


def test_a_data_set_removed_from_the_study_file_is_not_reported_as_the_studys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A data set taken out of failcodes.toml stayed in the report, exit 0.

    The report reads the folder: 'old' (removed, or renamed to 'new') kept its P/R/F1 rows,
    verdicts and attribution beside the study's own, from the last run that had it. Now the
    report step stops naming the data set and its outputs; deleted, the report shows 'new'
    alone (one data set: its systems unprefixed): system A, 4 sentences, all errors, all
    missed: TP 0, FN 4.
    """
    study = tmp_path / "st"
    code, _, err = run_cli(["init", str(study)], capsys)
    assert code == 0, err
    _small_study(study, ("new", "old"))
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 0, err
    _small_study(study, ("new",))
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 2
    log = study / ".failcodes" / "logs" / "report.log"
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {study / 'failcodes.toml'}: the study file names no data set "
        "'old', but the folder holds its outputs (data/old.traces.parquet, metrics/old.json, "
        "judge/old, attribution/old): the report would show them as this study's (a data set "
        "removed or renamed in the study file keeps its old outputs); delete them, or name "
        f"the data set again (step 'report' failed; its output: {log})"
    )
    import shutil

    for path in ("data/old.traces.parquet", "metrics/old.json", "judge/old", "attribution/old"):
        target = study / path
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 0, err
    prf = pd.read_csv(study / "report" / "tables" / "prf_sentence.csv")
    assert prf["system"].tolist() == ["A"]
    assert (prf["TP"].tolist(), prf["FN"].tolist()) == ([0], [4])
