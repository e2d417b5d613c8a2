"""Follow-ups of session 19 (t19fix): refusals that name their way through."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import exit_code, run_cli, write_jsonl
from tests.test_cli_ingest import run
from tests.test_study_shapes import _three_llms


def _row(question: str, claim: str, text: str) -> dict[str, str]:
    return {
        "system": "A",
        "question_id": question,
        "sentence_id": "s1",
        "claim_id": claim,
        "claim": text,
        "sentence": text,
        "verdict": "refuted",
    }


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, _, err = run_cli(list(argv), capsys)
    assert code == 2
    return err.strip()


def test_claim_ids_numbered_within_each_question_name_the_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # q1/c1 and q2/c1: two claims, one id; the refusal named no way through (t19red1)
    path = write_jsonl(
        tmp_path / "a.jsonl",
        [_row("q1", "c1", "Aspirin cures flu."), _row("q2", "c1", "Zinc helps colds.")],
    )
    out = tmp_path / "o.jsonl"
    way = (
        "duplicate (system, claim_id) = ('A', 'c1'); first at line 1; claim ids numbered "
        "within each question? give each claim its own id: --map claim_id= --option ids=claim "
        "--option sentence_ids=question"
    )
    assert _error(capsys, "ingest", "generic", str(path), "-o", str(out)) == (
        f"failcodes: error: {path}:2, field 'claim_id': {way}"
    )
    assert not out.exists()
    # the same rows as a trace file given to metrics: the same way, and where to give it
    assert _error(capsys, "metrics", "--traces", str(path), "--labels", str(path)) == (
        f"failcodes: error: {path}:2, field 'claim_id': {way} (failcodes ingest generic)"
    )
    # the way named works: two claims, two ids
    assert exit_code(*["ingest", "generic", str(path), "-o", str(out), "--map", "claim_id=",
                 "--option", "ids=claim", "--option", "sentence_ids=question"]) == 0  # fmt: skip
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def test_two_files_under_one_system_name_name_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one file per system, both given one name (t19out: two medscore files both 'medscore')
    one = write_jsonl(tmp_path / "b1.jsonl", [_row("q1", "c1", "Aspirin cures flu.")])
    two = write_jsonl(tmp_path / "b2.jsonl", [_row("q1", "c1", "Aspirin cures flu.")])
    way = "a file per system under one system name? ingest each file apart with --system NAME"
    out = tmp_path / "o.jsonl"
    assert _error(capsys, "ingest", "generic", str(one), str(two), "-o", str(out)) == (
        f"failcodes: error: {two}:1, field 'claim_id': duplicate (system, claim_id) = "
        f"('A', 'c1'); first at {one}:1; {way}"
    )
    assert not out.exists()
    assert _error(
        capsys, "metrics", "--traces", str(one), "--traces", str(two), "--labels", str(one)
    ) == (
        f"failcodes: error: {two}:1, field 'claim_id': duplicate (system, claim_id) = "
        f"('A', 'c1'); first at {one}:1; {way}"
    )


def test_a_study_merging_per_system_and_shared_labels_names_the_study_way(
    tmp_path: Path,
) -> None:
    # ragchecker's labels (labels = true) name their system; the clinicians' do not (t19rev)
    assert run("init", "study", cwd=tmp_path).returncode == 0
    study = tmp_path / "study"
    (study / "clin.jsonl").write_text(
        '{"sentence_id": "0:c1", "question_id": "0", "has_error": true}\n', encoding="utf-8"
    )
    (study / "failcodes.toml").write_text(
        'name = "rc"\ncodebook = "medical-fact-check.v1.yaml"\n\n[[datasets]]\n'
        'name = "rc"\n\n[[datasets.ingest]]\nadapter = "ragchecker"\n'
        'paths = ["bundled:ragchecker/checking_outputs.json"]\nlabels = true\n\n'
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["clin.jsonl"]\n',
        encoding="utf-8",
    )
    done = run("run", "study", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "failcodes: error: study/data/rc.parts/2-clin.labels.jsonl:1, field 'system': this "
        "label names none, but study/data/rc.parts/1-checking_outputs.labels.jsonl:1 names "
        "one: either every label names the system whose answer it labels (per-system labels) "
        "or none does (shared by every system); in the study file (parts numbered by "
        "[[datasets.ingest]] entry): drop one ingest's labels with labels = false on it (a "
        "traces ingest's own, as ragchecker's, which name their system), or give the shared "
        "labels a system column (a row per system) (step 'merge labels rc' failed; its "
        "output: study/.failcodes/logs/merge_labels_rc.log)"
    )
    assert not (study / "data" / "rc.labels.jsonl").exists()


def test_a_study_with_two_ingests_under_one_system_names_system_in_study_terms(
    tmp_path: Path,
) -> None:
    # claude's file declared as gpt-4o: two parts, one system name (t19out: two medscore
    # ingests both 'medscore'); the way through is the study file's system = , not --system
    _three_llms(tmp_path, claude_as="gpt-4o")
    done = run("run", "study", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "failcodes: error: study/data/claims.parts/3-claude.traces.jsonl:1, field 'claim_id': "
        "duplicate (system, claim_id) = ('gpt-4o', 'c1'); first at "
        "study/data/claims.parts/1-gpt4.traces.jsonl:1; a file per system under one system "
        "name? ingest each file apart with --system NAME; in the study file (parts numbered "
        "by [[datasets.ingest]] entry): give each ingest of one system's file its own "
        "system = \"NAME\" (step 'merge traces claims' failed; its output: "
        "study/.failcodes/logs/merge_traces_claims.log)"
    )
    assert not (tmp_path / "study" / "data" / "claims.traces.parquet").exists()


def test_review_status_says_a_hand_written_plan_is_not_its_seeds_draw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # t19red2's plan: the 14 units reviewers flagged, written by hand; the report showed it
    # uncorrected with the reason, `review status` said only "14/14 reviewed"
    from tests.test_outside_red17b import _entity_review
    from tests.test_outside_red19b import _forty_units, _hand_plan
    from tests.test_review_plan import write_reviews

    judge, table = _forty_units(tmp_path)
    flagged = [f"u{n:02d}" for n in (*range(13), 20)]
    plan = _hand_plan(tmp_path, table, flagged, list(judge))
    reviews = tmp_path / "review" / "alice.jsonl"
    write_reviews(reviews, [_entity_review(u, "irrelevant", "alice") for u in flagged])
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(reviews)], capsys)
    assert code == 0
    assert "estimation sample 14/14 reviewed" in out
    [said] = [line for line in err.splitlines() if "seed's draw" in line]
    assert said.startswith(
        "failcodes: warning: review plan 'p' is not its seed's draw: "
    ) and said.endswith(
        "shown uncorrected (give chosen units as a targeted sample: --targeted FILE); "
        f"redraw it with: failcodes review plan {tmp_path} -p retrieval -n 14 --seed 0 "
        "--dataset ds --name p"
    )
