"""The study folder: ``failcodes init``, the study file, ``failcodes run``, report via layout."""

from __future__ import annotations

import filecmp
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from failcodes.errors import InputError
from failcodes.study import StudyLayout, init_study, load_study, plan_study
from failcodes.study.config import parse_study
from failcodes.study.runner import pending_steps
from failcodes.study.steps import plan_notes
from tests.cli_helpers import exit_code


def run_sub(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failcodes", *args], cwd=cwd, capture_output=True, text=True
    )


def test_init_writes_a_valid_study_and_the_layout(tmp_path: Path) -> None:
    layout = init_study(tmp_path / "my-study")
    study = load_study(layout.root)
    assert study.name == "my-study"
    assert (layout.root / study.codebook).is_file()
    for folder in ("data", "metrics", "disagreements", "judge", "attribution", "review", "report"):
        assert (layout.root / folder).is_dir(), folder
    # the layout names each step's output once
    assert layout.per_passage("d") == layout.root / "attribution" / "d" / "per_passage.csv"
    assert layout.judge_run("d", "verification") == layout.root / "judge" / "d" / "reasoning"


def test_init_twice_is_one_line_exit_2(tmp_path: Path) -> None:
    assert run_sub("init", "s", cwd=tmp_path).returncode == 0
    again = run_sub("init", "s", cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        "failcodes: error: s/failcodes.toml: already a study (it has a study file)"
    ]


@pytest.mark.parametrize("fails", ["shutil.copyfile", "atomic_write_text"])
def test_a_failed_init_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fails: str
) -> None:
    # a failure after the first folders were made left them behind, empty (a full disk here)
    import errno

    import failcodes.study.create as create

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "a" / "b"))

    target = create.shutil if fails == "shutil.copyfile" else create
    monkeypatch.setattr(target, fails.rpartition(".")[2], full)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "keep.txt").write_text("mine", encoding="utf-8")
    code = exit_code("init", tmp_path / "a" / "b" / "st")
    assert code == 2
    assert capsys.readouterr().err == (
        f"failcodes: error: {tmp_path}/a/b: no space left on device; check the path and its "
        "permissions\n"
    )
    # the folder "a" was there before: kept with its file; "b", "st" and below are gone
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["keep.txt"]


BAD_FIELD = """\
name = "s"
codebook = "c.yaml"

[[datasets]]
name = "a"
[[datasets.ingest]]
adapter = "generic"
paths = ["a.jsonl"]

[[datasets]]
name = "b"
[[datasets.ingest]]
adapter = "generic"
paths = ["b.jsonl"]
[[datasets.pipelines]]
system = "x"
evidence = "closed-book"
"""


def test_bad_field_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "failcodes.toml"
    with pytest.raises(InputError) as info:
        parse_study(BAD_FIELD, path)
    # line 17 is the second data set's `evidence = "closed-book"`
    assert info.value.line == 17
    assert info.value.field == "datasets[1].pipelines[0].evidence"
    assert "'retrieved', 'provided', 'none' or 'post-hoc'" in str(info.value)


def test_unknown_field_and_toml_syntax(tmp_path: Path) -> None:
    path = tmp_path / "failcodes.toml"
    with pytest.raises(InputError) as info:
        parse_study(BAD_FIELD.replace('codebook = "c.yaml"', 'codebok = "c.yaml"'), path)
    assert (info.value.line, info.value.field) == (2, "codebok")
    assert info.value.reason.startswith("unknown field")
    with pytest.raises(InputError) as info:
        parse_study('name = "s"\ncodebook = \n', path)
    assert info.value.line == 2
    assert "not valid TOML" in str(info.value)


@pytest.mark.parametrize("kind", ["empty", "foreign"])
def test_report_on_empty_or_foreign_folder(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    if kind == "foreign":
        (folder / "notes.txt").write_text("hello\n", encoding="utf-8")
        (folder / "data").mkdir()
        (folder / "data" / "x.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    proc = run_sub("report", "f", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("failcodes: error: f: holds nothing to report")
    assert not (tmp_path / "out").exists()


def test_run_builds_the_report_and_skips_finished_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    layout = init_study("st")
    study = load_study(layout.root)
    steps = plan_study(study, layout)
    assert [s.name for s in steps] == [
        "ingest ragchecker-example",
        "metrics ragchecker-example",
        "disagreements ragchecker-example",
        "judge retrieval ragchecker-example",
        "judge reasoning ragchecker-example",
        "attribute ragchecker-example",
        "labelstudio export retrieval ragchecker-example",
        "labelstudio export reasoning ragchecker-example",
        "report",
    ]
    assert exit_code("run", "st") == 0
    # the RAGChecker example carries no verifier reasoning: once the disagreements are
    # written, the plan drops `judge reasoning` (the judge would refuse to judge nothing)
    steps = plan_study(study, layout)
    assert "judge reasoning ragchecker-example" not in [s.name for s in steps]
    assert plan_notes(study, layout) == [
        "judge reasoning ragchecker-example: not planned, the verifier wrote no reasoning"
    ]
    assert pending_steps(steps, layout) == []
    # attribute wrote what the report reads: the bundled RAGChecker example has one
    # disagreement under 'refuted' (claim 0:c10, labelled Contradiction, verdict no_evidence)
    att = pd.read_csv(layout.attribution_table("ragchecker-example"))
    assert len(att) == 1
    pp = pd.read_csv(layout.per_passage("ragchecker-example"))
    assert len(pp) == 4  # its four retrieved chunks
    html = (layout.report_dir / "index.html").read_text(encoding="utf-8")
    assert "Attribution" in html
    capsys.readouterr()
    assert exit_code("run", "st") == 0
    out = capsys.readouterr().out
    assert "0 step(s) run, 7 already finished" in out
    # changing the study file reruns the steps whose command changed (and what follows)
    text = layout.study_file.read_text(encoding="utf-8").replace(
        "bootstrap = 1000", "bootstrap = 0"
    )
    layout.study_file.write_text(text, encoding="utf-8")
    assert [s.name for s in pending_steps(plan_study(load_study("st"), layout), layout)] == [
        "metrics ragchecker-example",
        "report",
    ]
    # Label Studio tasks: exactly the disagreement's units (its 4 retrieved chunks)
    tasks = json.loads(
        layout.labelstudio_tasks("ragchecker-example", "retrieval").read_text(encoding="utf-8")
    )
    assert len(tasks) == 4


def test_step_by_step_report_is_byte_identical_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        root.mkdir()
        monkeypatch.chdir(root)
        init_study("st")
    monkeypatch.chdir(a)
    assert exit_code("run", "st") == 0
    monkeypatch.chdir(b)
    layout = StudyLayout.of("st")
    done: list[str] = []
    while True:  # what a user types, one by one, as `failcodes run --plan` lists them
        todo = [s.command() for s in plan_study(load_study("st"), layout)]
        command = next((c for c in todo if c not in done), None)
        if command is None:
            break
        argv = shlex.split(command)
        assert argv[0] == "failcodes"
        assert exit_code(*argv[1:]) == 0, command
        done.append(command)
    # no verifier reasoning in the RAGChecker example: no judge reasoning, one task export
    assert len(done) == 7
    report_a, report_b = a / "st" / "report", b / "st" / "report"
    files_a = sorted(p.relative_to(report_a) for p in report_a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(report_b) for p in report_b.rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) > 5
    _, mismatch, errors = filecmp.cmpfiles(report_a, report_b, [str(f) for f in files_a], False)
    assert (mismatch, errors) == ([], [])


def test_plan_prints_commands(tmp_path: Path) -> None:
    assert run_sub("init", "st", cwd=tmp_path).returncode == 0
    proc = run_sub("run", "st", "--plan", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == (
        "failcodes ingest ragchecker bundled:ragchecker/checking_outputs.json "
        "-o st/data/ragchecker-example.traces.parquet "
        "--labels-out st/data/ragchecker-example.labels.jsonl --evidence retrieved"
    )
    # the report names the study's codebook (a re-coded study is on a version not bundled)
    assert lines[-1] == (
        "failcodes report st --codebook st/medical-fact-check.v1.yaml -o st/report"
    )
    assert json.loads(json.dumps(lines))  # plain text lines


def test_plan_redacts_credentials(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `run --plan` printed a base URL's password that every other printed line redacts
    from tests.cli_helpers import run_cli

    layout = init_study(tmp_path / "st")
    text = layout.study_file.read_text(encoding="utf-8").replace(
        '# base_url = "http://127.0.0.1:8000/v1"',
        'base_url = "http://alice:s3cret@127.0.0.1:8000/v1?key=abc&model=m"',
    )
    layout.study_file.write_text(text, encoding="utf-8")
    code, out, err = run_cli(["run", str(layout.root), "--plan"], capsys)
    assert code == 0, err
    judge = [line for line in out.splitlines() if line.startswith("failcodes judge ")]
    assert len(judge) == 2  # retrieval and reasoning
    assert all("--base-url 'http://***@127.0.0.1:8000/v1?key=***&model=m'" in j for j in judge)
    assert "s3cret" not in out + err and "abc" not in out + err


def test_step_logs_redact_credentials(tmp_path: Path) -> None:
    # a step's log began with its command line, a base URL's password in it
    from dataclasses import dataclass

    from failcodes.commands.base import Note, Request, option
    from failcodes.study.runner import run_request
    from failcodes.study.steps import Step

    @dataclass
    class Said:
        url: str

        def lines(self) -> list[str]:
            return [f"done with {self.url}"]

    class Call(Request):
        command = ("call",)
        base_url: str = option("", help="endpoint")

        def run(self, *, note: Note) -> Said:
            note(f"calling {self.base_url}")
            return Said(self.base_url)

    url = "http://alice:s3cret@127.0.0.1:8000/v1"
    run_request(Step("call", Call(base_url=url)), tmp_path / "call.log")
    assert (tmp_path / "call.log").read_text(encoding="utf-8").splitlines() == [
        "$ failcodes call --base-url http://***@127.0.0.1:8000/v1",
        "calling http://***@127.0.0.1:8000/v1",
        "done with http://***@127.0.0.1:8000/v1",
    ]


def test_a_step_that_did_nothing_is_not_finished(tmp_path: Path) -> None:
    # `[judge] args = ["--dry-run"]` made `run` exit 0 with "6 step(s) run", nothing judged:
    # a step whose result says it left work undone stops the run and stays pending
    from dataclasses import dataclass

    from failcodes.commands.base import Note, Request
    from failcodes.study.runner import StepNotFinishedError, load_state, run_steps
    from failcodes.study.steps import Step

    @dataclass
    class Done:
        left: int

        def lines(self) -> list[str]:
            return []

        def unfinished(self) -> str | None:
            return f"{self.left} units left unjudged" if self.left else None

    class Work(Request):
        command = ("work",)
        left: int = 0

        def run(self, *, note: Note) -> Done:
            return Done(self.left)

    layout = StudyLayout.of(tmp_path)
    steps = [Step("first", Work()), Step("judge", Work(left=3)), Step("after", Work())]
    ran = []
    with pytest.raises(StepNotFinishedError) as info:
        ran += [r.step.name for r in run_steps(lambda: steps, layout)]
    assert str(info.value) == (
        "3 units left unjudged: the step is not finished, and the steps after it did not run; "
        "run the study again to finish it"
    )
    assert sorted(load_state(layout)) == ["first"]  # the judge step is still pending
    log = (layout.logs_dir / "judge.log").read_text(encoding="utf-8").splitlines()
    assert log == ["$ failcodes work --left 3", "not finished: 3 units left unjudged"]


def test_judge_result_says_what_it_left_unjudged(tmp_path: Path) -> None:
    from failcodes.annotations import CoderKind
    from failcodes.commands.judge import JudgeResult
    from failcodes.judge.summary import RunSummary
    from failcodes.units import UnitKind

    def summary(units: int, done: int, judged: int, budget: bool = False) -> RunSummary:
        return RunSummary(
            judge="offline",
            coder_kind=CoderKind.HEURISTIC,
            kind=UnitKind.RETRIEVAL,
            units=units,
            already_done=done,
            judged=judged,
            stopped_by_budget=budget,
        )

    def result(s: RunSummary) -> JudgeResult:
        return JudgeResult(UnitKind.RETRIEVAL, tmp_path, heuristic=True, summary=s)

    assert result(summary(10, 4, 6)).unfinished() is None  # 4 from before + 6 now
    assert result(summary(10, 4, 3)).unfinished() == (
        f"judge retrieval: 3 of 10 units left unjudged (stopped early; {tmp_path})"
    )
    assert result(summary(10, 0, 2, budget=True)).unfinished() == (
        f"judge retrieval: 8 of 10 units left unjudged (stopped by the budget; {tmp_path})"
    )
    panel = JudgeResult(
        UnitKind.RETRIEVAL,
        tmp_path,
        heuristic=True,
        members=["a", "b"],
        summaries=[summary(5, 0, 5), summary(5, 0, 1)],
    )
    assert panel.unfinished() == (
        f"judge retrieval (b): 4 of 5 units left unjudged (stopped early; {tmp_path})"
    )


def test_study_defaults_follow_the_commands() -> None:
    from failcodes.metrics import DEFAULT_WITHOUT_CLAIMS, Level, WithoutClaimsPolicy
    from failcodes.study.config import DisagreementsSpec, MetricsSpec

    assert MetricsSpec().without_claims == DEFAULT_WITHOUT_CLAIMS.value
    assert DisagreementsSpec().without_claims is None  # follows [metrics] (next test)
    assert set(WithoutClaimsPolicy) == {"no_error", "exclude"}
    assert {lv.value for lv in Level} == {"sentence", "claim"}


def test_disagreements_follow_the_metrics_level_unless_set(tmp_path: Path) -> None:
    """A claim-level study's disagreements are the claim-level errors the metrics counted."""
    layout = init_study(tmp_path / "st")
    toml = layout.root / "failcodes.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(
        text.replace('level = "sentence"', 'level = "claim"\nwithout_claims = "exclude"'),
        encoding="utf-8",
    )

    def disagreements_args() -> list[str]:
        steps = plan_study(load_study(layout.root), layout)
        request = next(s for s in steps if s.name.startswith("disagreements")).request
        return [request.level.value, request.without_claims.value]

    assert disagreements_args() == ["claim", "exclude"]
    toml.write_text(
        toml.read_text(encoding="utf-8").replace(
            'mapping = "refuted"', 'mapping = "refuted"\nlevel = "sentence"'
        ),
        encoding="utf-8",
    )
    assert disagreements_args() == ["sentence", "exclude"]


def test_run_takes_the_study_lock(tmp_path: Path) -> None:
    from failcodes.runlock import folder_lock

    init_study(tmp_path / "st")
    with folder_lock(tmp_path / "st", what="study"):  # another writer holds the study
        proc = run_sub("run", "st", cwd=tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "study" in proc.stderr
    assert not (tmp_path / "st" / "data" / "ragchecker-example.traces.parquet").exists()


def _imports(package: Path) -> set[tuple[str, str]]:
    """``(module file, imported module)`` for every import under ``package``."""
    import ast

    found: set[tuple[str, str]] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add((path.name, node.module))
            elif isinstance(node, ast.Import):
                found.update((path.name, a.name) for a in node.names)
    return found


def test_imports_run_one_way() -> None:
    src = Path(__file__).resolve().parent.parent / "src" / "failcodes"
    # saturation no longer imports the demo (its demo step lives in demo/saturation.py)
    assert not {m for _, m in _imports(src / "saturation") if m.startswith("failcodes.demo")}
    # the study machinery and the demo never import the CLI (the CLI passes its executor down)
    for package in ("study", "demo"):
        assert not {m for _, m in _imports(src / package) if m.startswith("failcodes.cli")}
    # only the study layout spells the attribution tables' file names
    for path in src.rglob("*.py"):
        if path.name != "layout.py":
            text = path.read_text(encoding="utf-8")
            assert '"per_passage.csv"' not in text and '"per_trace.csv"' not in text, path


def test_a_data_sets_attribution_rule_is_the_studys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`attribution = ...` in a data set is the strategy `run` attributes it by.

    The demo re-attributed scifact-dev by the codebook rule outside its study file, so
    `failcodes run .` in the demo folder put it back to the gold-evidence rule: 67 of its 120
    disagreements moved from `evidence` to `verification`, exit 0.
    """
    monkeypatch.chdir(tmp_path)
    layout = init_study("st")
    assert exit_code("run", "st") == 0
    table = layout.attribution_table("ragchecker-example")
    # the example's one disagreement (claim 0:c10, FN): auto = the codebook rule, as its
    # passages carry no gold flag; none of its 4 passages is high on every dimension
    assert pd.read_csv(table)[["stage", "strategy"]].values.tolist() == [["retrieval", "codebook"]]
    text = layout.study_file.read_text(encoding="utf-8").replace(
        'description = "RAGChecker\'s example: retrieved chunks, GPT-4 checker verdicts"',
        'description = "RAGChecker\'s example: retrieved chunks, GPT-4 checker verdicts"\n'
        'attribution = "gold-evidence"',
    )
    layout.study_file.write_text(text, encoding="utf-8")
    assert [s.name for s in pending_steps(plan_study(load_study("st"), layout), layout)] == [
        "attribute ragchecker-example",
        "report",
    ]
    assert exit_code("run", "st") == 0
    # gold-evidence with no gold flag: it cannot tell
    assert pd.read_csv(table)[["stage", "strategy"]].values.tolist() == [
        ["undetermined", "gold-evidence"]
    ]
