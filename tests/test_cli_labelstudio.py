"""`failcodes labelstudio` through a real subprocess (no server): outputs and one-line errors."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from failcodes import codebook as codebooks
from failcodes import traceio
from failcodes.cli.main import main
from failcodes.disagreements import find_disagreements
from failcodes.labels import Label
from failcodes.labelstudio.tasks import build_tasks
from failcodes.traces import Passage, Trace
from failcodes.units import UnitKind, build_units
from failcodes.verdicts import Verdict
from tests.judge_helpers import write_disagreements
from tests.labelstudio_helpers import judged, retrieval_unit, toy_codebook
from tests.test_labelstudio_tasks import exported

SECRET = "f" * 40


def run_subprocess(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "failcodes", "labelstudio", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=full,
    )


@pytest.fixture
def run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the CLI in-process (fast), returning what a subprocess would."""

    def runner(
        *args: str | Path, cwd: Path, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        with monkeypatch.context() as m:
            m.chdir(cwd)
            for key, value in (env or {}).items():
                m.setenv(key, value)
            argv = ["labelstudio", *map(str, args)]
            code = 0
            try:
                main(argv)
            except SystemExit as exc:
                code = int(exc.code or 0)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(argv, code, out.out, out.err)

    return runner


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def write_codebook(folder: Path, text: str | None = None) -> Path:
    cb = toy_codebook()
    path = folder / codebooks.file_name(cb.name, cb.version)
    path.write_text(text if text is not None else codebooks.dump(cb), encoding="utf-8")
    return path


def test_config_export_import_round_trip(tmp_path: Path, run: Any) -> None:
    cb_path = write_codebook(tmp_path)
    cb = codebooks.load(cb_path)
    assert cb.hash == toy_codebook().hash
    proc = run("config", "-p", "retrieval", "-c", cb_path, "-o", "cfg/retrieval.xml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert '<Choices name="entity"' in (tmp_path / "cfg/retrieval.xml").read_text()

    units = [retrieval_unit(i) for i in range(4)]
    (tmp_path / "units.jsonl").write_text("".join(u.model_dump_json() + "\n" for u in units))
    anns = [judged(u, cb, i) for i, u in enumerate(units[:3])]
    (tmp_path / "judged.jsonl").write_text("".join(a.model_dump_json() + "\n" for a in anns))
    proc = run(
        "export",
        "units.jsonl",
        "-p",
        "retrieval",
        "-c",
        cb_path,
        "--judged",
        "judged.jsonl",
        "-o",
        "tasks.json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 tasks (3 with predictions)" in proc.stdout
    got = json.loads((tmp_path / "tasks.json").read_text())
    assert got == build_tasks(units, cb, UnitKind.RETRIEVAL, {a.unit_id: a for a in anns})

    (tmp_path / "export.json").write_text(json.dumps(exported()))
    proc = run(
        "import",
        "export.json",
        "-p",
        "retrieval",
        "-c",
        cb_path,
        "--user",
        "3=alice@example.org",
        "-o",
        "out/human.jsonl",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "out/human.jsonl").read_text().splitlines()
    # exported(): 4 annotations, 3 problems (see test_labelstudio_tasks)
    assert len(lines) == 4
    assert "4 annotations from 3 coder(s) on 2 tasks" in proc.stdout
    assert proc.stderr.count("failcodes: warning:") == 3
    assert "unknown choice 'not_a_code'" in proc.stderr


def test_code_id_label_studio_misreads_exits_2_and_writes_nothing(tmp_path: Path, run: Any) -> None:
    # "10" is a valid codebook id ([a-z0-9_]) but Label Studio reads it as the number 10
    text = codebooks.dump(toy_codebook()).replace("id: broader_scope", "id: '10'")
    cb_path = write_codebook(tmp_path, text)
    proc = run("config", "-p", "retrieval", "-c", cb_path, "-o", "cfg.xml", cwd=tmp_path)
    assert_one_line_error(proc, "code id '10' (dimension 'scope')", "start with a letter")
    assert not (tmp_path / "cfg.xml").exists()
    assert list(tmp_path.iterdir()) == [cb_path]


def test_import_of_export_from_another_project_exits_2(tmp_path: Path, run: Any) -> None:
    cb_path = write_codebook(tmp_path)
    data = exported()
    for t in data:
        t["data"].pop("failcodes_unit_id")
    (tmp_path / "export.json").write_text(json.dumps(data))
    proc = run(
        "import", "export.json", "-p", "retrieval", "-c", cb_path, "-o", "h.jsonl", cwd=tmp_path
    )
    assert_one_line_error(proc, "export.json: task 101 has no failcodes_unit_id")
    assert not (tmp_path / "h.jsonl").exists()
    (tmp_path / "export.json").write_text(json.dumps(exported(project=5)))
    proc = run(
        "import",
        "export.json",
        "-p",
        "retrieval",
        "-c",
        cb_path,
        "--project-id",
        "6",
        "-o",
        "h.jsonl",
        cwd=tmp_path,
    )
    assert_one_line_error(proc, "belongs to Label Studio project 5, not 6")
    assert not (tmp_path / "h.jsonl").exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_push_to_a_server_that_is_down_exits_2_without_leaking_the_token(
    tmp_path: Path, run: Any
) -> None:
    cb_path = write_codebook(tmp_path)
    (tmp_path / "units.jsonl").write_text(retrieval_unit(0).model_dump_json() + "\n")
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    proc = run_subprocess(
        "push",
        "units.jsonl",
        "-p",
        "retrieval",
        "-c",
        cb_path,
        "--project",
        "review",
        "--url",
        url,
        cwd=tmp_path,
        env={"LABEL_STUDIO_API_KEY": SECRET},
    )
    assert_one_line_error(proc, f"cannot reach Label Studio at {url}")
    assert SECRET not in proc.stderr + proc.stdout
    proc = run(
        "pull",
        "-p",
        "retrieval",
        "-c",
        cb_path,
        "--project",
        "review",
        cwd=tmp_path,
        env={"LABEL_STUDIO_API_KEY": SECRET, "LABEL_STUDIO_URL": url},
    )
    assert_one_line_error(proc, "cannot reach Label Studio")
    assert not (tmp_path / "annotations").exists()


def test_push_without_token_or_with_too_long_title(
    tmp_path: Path, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cb_path = write_codebook(tmp_path)
    (tmp_path / "units.jsonl").write_text(retrieval_unit(0).model_dump_json() + "\n")
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    args = ("push", "units.jsonl", "-p", "retrieval", "-c", cb_path, "--url", "http://127.0.0.1:9")
    proc = run(*args, "--project", "review", cwd=tmp_path)
    assert_one_line_error(proc, "no Label Studio token: set LABEL_STUDIO_API_KEY")
    proc = run(*args, "--project", "x" * 45, "--annotator", "alice@example.org", cwd=tmp_path)
    assert_one_line_error(proc, "must be 3-50 characters long (it is 65)")


def test_export_builds_units_from_a_traces_file(tmp_path: Path, run: Any) -> None:
    cb_path = write_codebook(tmp_path)
    traces = [
        Trace(
            system=f"sys{s}",
            question_id="q1",
            sentence_id="q1:s0",
            claim_id="c1",
            claim="Statins lower LDL.",
            verdict=Verdict.SUPPORTED,
            reasoning="The passage says so.",
            passages=(
                Passage(passage_id="a", rank=1, text="Statins reduce LDL cholesterol."),
                Passage(passage_id="b", rank=2, text="Unrelated passage."),
            ),
        )
        for s in range(2)
    ]
    (tmp_path / "traces.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in traces))
    proc = run(
        "export",
        "traces.jsonl",
        "-p",
        "retrieval",
        "-c",
        cb_path,
        "--top-k",
        "1",
        "-o",
        "tasks.json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    # two systems retrieved the same top passage for the same claim: one unit, one task
    assert len(tasks) == 1
    units = build_units(traces, UnitKind.RETRIEVAL, top_k=1)
    assert tasks == build_tasks(units, toy_codebook(), UnitKind.RETRIEVAL)
    assert tasks[0]["data"]["passage"] == "[1] a\nStatins reduce LDL cholesterol."


def _three_sentences() -> tuple[list[Trace], list[Label]]:
    """sysA on 3 sentences, one claim each; its raw verdicts are 'False'/'True'/'True'."""
    traces = [
        Trace(
            system="sysA",
            question_id="q1",
            sentence_id=f"q1:s{i}",
            claim_id=f"c{i}",
            claim=f"Claim {i}.",
            verdict=verdict,
            raw_verdict=raw,
            reasoning=f"Reasoning {i}.",
            passages=(Passage(passage_id=f"p{i}", rank=1, text=f"Passage {i}."),),
        )
        for i, (verdict, raw) in enumerate(
            [(Verdict.REFUTED, "False"), (Verdict.SUPPORTED, "True"), (Verdict.SUPPORTED, "True")]
        )
    ]
    # s0: no error but refuted -> FP; s1: error but supported -> FN; s2: agree
    labels = [
        Label(question_id="q1", sentence_id=f"q1:s{i}", has_error=err)
        for i, err in enumerate([False, True, False])
    ]
    return traces, labels


def test_export_from_disagreements_exports_exactly_their_units(tmp_path: Path, run: Any) -> None:
    # Before: the disagreements file was read as traces ("field 'claim_id': missing required
    # field; and 12 more problems"), and from traces every trace became a task.
    cb_path = write_codebook(tmp_path)
    traces, labels = _three_sentences()
    write_disagreements(tmp_path / "dis.jsonl", find_disagreements(traces, labels, "refuted"))
    traceio.write_traces(tmp_path / "traces.jsonl", traces)
    base = ("-p", "verification", "-c", cb_path)
    proc = run("export", "dis.jsonl", *base, "-o", "dis_tasks.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    tasks = json.loads((tmp_path / "dis_tasks.json").read_text())
    # the two disagreements (FP on s0, FN on s1): two tasks, the agreeing s2 is not there
    assert [t["data"]["claim"] for t in tasks] == ["Claim 0.", "Claim 1."]
    # reviewers see the verifier's own word next to the canonical verdict
    assert [t["data"]["verdict"] for t in tasks] == [
        "refuted (the pipeline wrote: False)",
        "supported (the pipeline wrote: True)",
    ]
    proc = run("export", "traces.jsonl", *base, "-o", "all_tasks.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads((tmp_path / "all_tasks.json").read_text())) == 3


def test_export_from_a_study_folder(tmp_path: Path, run: Any) -> None:
    cb_path = write_codebook(tmp_path)
    traces, labels = _three_sentences()
    study = tmp_path / "study"
    (study / "disagreements").mkdir(parents=True)
    (study / "failcodes.toml").write_text("")  # only its presence marks a study here
    write_disagreements(study / "disagreements" / "ds1.jsonl", find_disagreements(traces, labels))
    base = ("-p", "verification", "-c", cb_path, "-o", "t.json")
    proc = run("export", study, *base, "--dataset", "ds1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "2 tasks (0 with predictions)" in proc.stdout
    proc = run("export", study, *base, "--dataset", "nope", cwd=tmp_path)
    assert_one_line_error(proc, "no disagreements for dataset 'nope'")
    # a misspelt name is told the data sets there are (it said 'run `failcodes run` first')
    assert proc.stderr.rstrip().endswith("; its data sets with disagreements: ds1)")
    proc = run("export", tmp_path, *base, cwd=tmp_path)
    assert_one_line_error(proc, "not a study folder (no failcodes.toml)")
    proc = run("export", study, "-p", "retrieval", "-c", cb_path, "-o", "r.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr  # retrieval units of the same two claims
    assert len(json.loads((tmp_path / "r.json").read_text())) == 2
