"""Session 12's left-over items (t13left): each shape gave a count nowhere or a refusal with
no file or line; the expected values are worked by hand beside the assertions."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.codebook import Codebook
from failcodes.units import Unit
from tests.cli_helpers import exit_code, run_cli


def test_study_recode_says_the_recoded_units_the_judge_gave_no_valid_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`failcodes recode STUDY` whose judge answered no flagged unit validly.

    Before: "scifact-dev/retrieval: v2: N unit(s) re-coded by ..., M migrated" and nothing
    else, while the N units hold no code on v2 (RecodeResult.unscored had the count). Every
    re-coded unit is unscored here, so the count is the flagged units': N of N.
    """
    from failcodes import commands
    from failcodes.judge import read_annotations
    from tests.fakeserver import FakeServer
    from tests.test_study_recode import bump, flagged, make_study

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-left13")

    def no_valid_answer(units: list[Unit], codebook: Codebook, run_dir: Path) -> list[Annotation]:
        del run_dir
        return [
            Annotation(
                unit_id=u.id,
                unit_kind=u.kind,
                codebook=codebook.ref(),
                coder="openai:fake-model",
                coder_kind=CoderKind.LLM,
                status=Status.UNSCORED,
                reason="invalid answer after 2 attempts: no codes",
            )
            for u in units
        ]

    with FakeServer() as fake:
        layout = make_study(tmp_path / "rc", fake.openai_base_url)
        assert exit_code("run", str(layout.root)) == 0
        n = len(flagged(read_annotations(layout.judge_run("scifact-dev", "retrieval"))))
        assert 0 < n < 91  # the units coded scope=different_context: re-coded under v2
        bump(layout)
        capsys.readouterr()  # the run's own output
        monkeypatch.setattr(
            commands.recode, "recode_engines", lambda options, cache: [no_valid_answer]
        )
        code, out, err = run_cli(["recode", str(layout.root)], capsys)
        again = run_cli(["recode", str(layout.root)], capsys)
    assert code == 0, err
    (line,) = out.splitlines()
    assert line.startswith(f"scifact-dev/retrieval: v2: {n} unit(s) re-coded by ")
    # 91 SciFact-dev units: n re-coded, 91 - n migrated; all n re-coded ones unscored
    assert f", {91 - n} migrated without a call -> " in line
    assert line.endswith(
        f"; {n} of the re-coded unscored: the judge gave no valid answer, so they hold no code "
        "(counted above, never coded again by a re-code)"
    )
    # "never coded again": the n units' newest annotation is on v2, so a second re-code has
    # nothing to do
    assert again[:2] == (0, "scifact-dev/retrieval: nothing to re-code: every unit is on v2\n")


def test_report_request_run_directly_says_the_study_changed(tmp_path: Path) -> None:
    """`ReportRequest(...).run()` called directly after an input edit since `failcodes run`.

    Before: the stale-study check ran only in failcodes.run (an import cycle kept it out of
    ReportRequest.run): said == [] and the run box held the last run's numbers with no word.
    The same study and edit as test_outside_red12c's failcodes.run test: s1's gold corrected.
    """
    import failcodes
    from tests.test_outside_red12 import _wide_study

    study = _wide_study(tmp_path / "st", {"w": "s1 s2 s3 s4 s5 s6"})
    failcodes.run_study(study)
    said: list[str] = []
    failcodes.ReportRequest(run_dir=study).run(note=said.append)
    assert said == []  # up to date: nothing to say
    table = study / "w.csv"
    table.write_text(
        table.read_text().replace(
            "Aspirin lowers fever,Supported ,supported,1,correct",
            "Aspirin lowers fever,Supported ,supported,1,wrong",
        )
    )
    failcodes.ReportRequest(run_dir=study).run(note=said.append)
    assert said[0].startswith("the study changed since `failcodes run` ran these steps: ingest w")
    page = " ".join((study / "report" / "index.html").read_text().split())
    assert "the study changed since `failcodes run` ran these steps: ingest w" in page


#: test_outside_red12's wide study, every row: llama's cell of s5 is empty, and the study's
#: ingest has --option no_verdict=drop. Rows read: 6 sentences x 3 systems = 18; dropped: 1
#: (llama, s5); kept: gpt 6 + claude 6 + llama 5 = 17.
DROPPED = "1 row(s) without a verdict dropped at ingest (--option no_verdict=drop; llama 1)"
#: What the metrics' line adds: the dropped row's label may still count (t19out).
SCORED = (
    " (their claims); a labelled sentence they leave with no claim of its system counts as the "
    "'Assumed' line's --without-claims and --question-scope say (--without-claims exclude leaves "
    "it out, as a sentence every system's row of which was dropped is: it has no label)"
)


def test_rows_dropped_at_ingest_for_no_verdict_are_said_in_metrics_and_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: said by the ingest note alone (stderr, the step log); Table 5 read 'llama 5
    claims' and metrics counted 17 rows with no word of the 18th."""
    import failcodes
    from tests.test_outside_red12 import _wide_study

    study = _wide_study(tmp_path / "st", {"w": "s1 s2 s3 s4 s5 s6"})
    failcodes.run_study(study)
    verdicts = (study / "report" / "tables" / "verdicts.md").read_text().splitlines()[0]
    assert f"{DROPPED}: these shares cover 17 of 18 rows" in verdicts
    coverage = (study / "report" / "tables" / "coverage.md").read_text().splitlines()[0]
    assert f"{DROPPED}: the metrics cover 17 of 18 rows" in coverage
    traces, labels = study / "data" / "w.traces.parquet", study / "data" / "w.labels.jsonl"
    code, out, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert code == 0, err
    assert f"{DROPPED}: the metrics cover 17 of 18 rows{SCORED}" in out.splitlines()[:3]


def test_a_jsonl_output_says_it_does_not_carry_the_dropped_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSONL and CSV hold no footer: the ingest says metrics and report will not know."""
    from tests.test_outside_red12 import _WIDE

    table = tmp_path / "w.csv"
    table.write_text(_WIDE)
    out = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(out), "--option", "no_verdict=drop"]
    args += ["--verdict-column", "gpt", "--verdict-column", "claude", "--verdict-column", "llama"]
    args += ["--alias", "1=supported", "--alias", "0=refuted", "--map", "gold="]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert (
        f"note: 1 row(s) without a verdict are recorded in no field of {out}: metrics and "
        "report on it will not say them (only a .parquet output carries the count, and an "
        "ingest merging .parquet files keeps it; a study's parts keep it beside them)"
    ) in err.splitlines()


def test_a_column_named_after_one_system_is_refused_naming_the_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """f0c7730's refusal named the column alone (an option error): now the file, its header
    line (1) and the field; a headerless JSONL file: the file and the field."""
    wide = "question_id,sentence_id,claim,gpt,claude,gpt_reasoning\n"
    rows = ["q1,s1,A lowers B,supported,refuted,GPT: a trial shows it"]
    (tmp_path / "w.csv").write_text(wide + "\n".join(rows) + "\n")
    base = ["ingest", "generic", "--verdict-column", "gpt", "--verdict-column", "claude"]
    base += ["--map", "gpt_reasoning=reasoning", "-o", str(tmp_path / "t.jsonl")]
    reason = (
        "column 'gpt_reasoning' names system 'gpt', but --verdict-column gives every system's "
        "trace the same columns (claude's would hold it too): ingest each system apart (its "
        "--verdict-column, its own --map) and give the trace files together"
    )
    code, out, err = run_cli([*base, str(tmp_path / "w.csv")], capsys)
    assert (code, out) == (2, "")
    assert err == f"failcodes: error: {tmp_path}/w.csv:1, field 'gpt_reasoning': {reason}\n"
    record = (
        '{"question_id": "q1", "sentence_id": "s1", "claim": "A lowers B", "gpt": "supported", '
        '"claude": "refuted", "gpt_reasoning": "GPT: a trial shows it"}\n'
    )
    (tmp_path / "w.jsonl").write_text(record)
    code, out, err = run_cli([*base, str(tmp_path / "w.jsonl")], capsys)
    assert (code, out) == (2, "")
    assert err == f"failcodes: error: {tmp_path}/w.jsonl, field 'gpt_reasoning': {reason}\n"
    assert not (tmp_path / "t.jsonl").exists()


_CASE_STUDY = """\
name = "cs"
codebook = "medical-fact-check.v1.yaml"

[[datasets]]
name = "full"
[[datasets.ingest]]
adapter = "ragchecker"
paths = ["bundled:ragchecker/checking_outputs.json"]

[[datasets]]
name = "Full"
[[datasets.ingest]]
adapter = "ragchecker"
paths = ["bundled:ragchecker/checking_outputs.json"]
"""


def test_data_set_names_differing_in_case_are_refused_at_the_second_names_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """e15626e's refusal named the file and field 'datasets', no line: now the repeat's own
    field and line (line 11: `name = "Full"`, counted in _CASE_STUDY above)."""
    study = tmp_path / "st"
    study.mkdir()
    (study / "failcodes.toml").write_text(_CASE_STUDY)
    assert _CASE_STUDY.splitlines()[10] == 'name = "Full"'  # line 11
    code, out, err = run_cli(["run", str(study), "--plan"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"failcodes: error: {study}/failcodes.toml:11, field 'datasets[1].name': data set name "
        "'Full' is used twice ('full' differs only in case: one file name on macOS and "
        "Windows)\n"
    )


def test_report_says_reviewer_names_it_cannot_check_are_taken_as_people(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """85524ae tells one Label Studio annotation under two names by its lead time; a review
    file made by hand has none, so two names with the same codes are taken as people
    unchecked: said first, and in the run box.

    test_outside_shapes8's reviewed folder (alice: r0..r3) and bob's file, made by hand with
    alice's codes on r0..r3: one person under two names, or two who agree; the report cannot
    tell (4 shared units, same codes, no lead time). Alice alone: nothing to say; carol, who
    differs from alice on r1 (exact_scope where alice gave broader_scope), is not a copy.
    """
    import json

    from tests.test_outside_shapes8 import _judge_and_review

    codebook = _judge_and_review(tmp_path, "broader_scope")
    args = ["report", str(tmp_path), "--codebook", str(codebook), "-o", str(tmp_path / "rep")]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert "Assumed: reviewers" not in err  # one name: nothing assumed
    alice = [json.loads(x) for x in (tmp_path / "review" / "alice.jsonl").read_text().splitlines()]
    carol = [{**r, "coder": "carol"} for r in alice]
    assert carol[1]["codes"]["scope"] == "broader_scope"
    carol[1]["codes"] = {**carol[1]["codes"], "scope": "exact_scope"}
    (tmp_path / "review" / "carol.jsonl").write_text("".join(json.dumps(r) + "\n" for r in carol))
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert "Assumed: reviewers" not in err  # alice and carol differ on r1: not one copy
    bob = [{**r, "coder": "bob"} for r in alice]
    (tmp_path / "review" / "bob.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bob))
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    said = (
        "Assumed: reviewers 'alice' and 'bob' are two people: on the 4 unit(s) both reviewed "
        "they gave the same codes, and their reviews carry no Label Studio lead time (made by "
        "hand or converted), so one person's reviews under two names cannot be told from two "
        "reviewers who agree; counted as two reviewers"
    )
    assert err.splitlines()[0] == said
    page = " ".join((tmp_path / "rep" / "index.html").read_text().split())
    assert f"<td>Reviewers</td><td>{said.replace(chr(39), '&#39;')}</td>" in page  # run box


def test_metrics_rows_to_stdout_say_the_dropped_rows_on_stderr(tmp_path: Path) -> None:
    """`failcodes metrics ... --format json` runs without typer (cli/direct.py): its rows on
    stdout hold no field for the rows the ingest left out, so stderr says them, as the typer
    path does (the wide table: llama's s5 dropped, 17 of 18 rows kept)."""
    import os
    import subprocess
    import sys

    from tests.test_outside_red12 import _WIDE

    (tmp_path / "w.csv").write_text(_WIDE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    fc = [sys.executable, "-m", "failcodes"]
    traces, labels = str(tmp_path / "t.parquet"), str(tmp_path / "l.jsonl")
    ingest = ["ingest", "generic", str(tmp_path / "w.csv"), "-o", traces, "--labels-out", labels]
    ingest += ["--option", "no_verdict=drop", "--label-rule", "gold = wrong -> error"]
    for system in ("gpt", "claude", "llama"):
        ingest += ["--verdict-column", system]
    ingest += ["--alias", "1=supported", "--alias", "0=refuted"]
    subprocess.run([*fc, *ingest], env=env, check=True, capture_output=True)
    metrics = ["metrics", "--traces", traces, "--labels", labels, "--format", "json"]
    done = subprocess.run([*fc, *metrics], env=env, capture_output=True, text=True, check=True)
    assert done.stderr == f"{DROPPED}: the metrics cover 17 of 18 rows{SCORED}\n"
    assert done.stdout.startswith("[")
