"""A study's judge runs after a codebook bump: ``failcodes recode STUDY`` / ``failcodes run``
re-code exactly the units the migration map cannot carry (fake server: call count), migrate
the rest, survive kill -9, leave every unit on the new version, and the report shows it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from failcodes.annotations import Annotation, Status
from failcodes.codebook import UnitKind, bundled, dump
from failcodes.judge import read_annotations, read_summary
from failcodes.judge.panelrun import consensus_annotations, read_panel
from failcodes.labelstudio.config import UNIT_ID
from failcodes.recoding import RecodeEntry, RecodeMethod
from failcodes.saturation.changes import Change, ChangeOp, next_version
from failcodes.study import StudyLayout, load_study, plan_study
from failcodes.study.layout import RECODE_ENTRIES
from failcodes.study.recode import plan_kind, recode_status
from failcodes.study.runner import pending_steps
from tests.cli_helpers import exit_code
from tests.fakeserver import FakeServer

STUDY = """\
name = "rc"
codebook = "{codebook}"

[[datasets]]
name = "scifact-dev"
[[datasets.ingest]]
adapter = "scifact"
paths = ["bundled:scifact"]
labels = true
[[datasets.pipelines]]
system = "*"
evidence = "provided"

[judge]
judge = "openai:fake-model"
base_url = "{base_url}"
kinds = ["retrieval"]

[review]
labelstudio = false
"""

#: The change ``saturate`` would make on accepting a proposal: a new leaf under
#: scope/different_context. Units coded different_context on scope must be coded again (the
#: leaf may fit them); every other unit keeps its codes (same rule as saturate's flags).
CHANGE = Change(
    op=ChangeOp.ADD_LEAF,
    dimension="scope",
    subcode="different_context",
    leaf="animal_study",
    label="Animal study",
    definition="The passage reports an animal study while the claim is about humans.",
)


def make_study(root: Path, base_url: str) -> StudyLayout:
    layout = StudyLayout.of(root)
    root.mkdir(parents=True)
    v1 = bundled()
    (root / f"{v1.name}.v1.yaml").write_text(dump(v1), encoding="utf-8")
    text = STUDY.format(codebook=f"{v1.name}.v1.yaml", base_url=base_url)
    layout.study_file.write_text(text, encoding="utf-8")
    return layout


def bump(layout: StudyLayout) -> None:
    """Write v2 beside v1 (as saturate does) and point the study file at it."""
    v1 = bundled()
    v2 = next_version(v1, UnitKind.RETRIEVAL, [CHANGE], "accepted: animal study")
    (layout.root / f"{v2.name}.v2.yaml").write_text(dump(v2), encoding="utf-8")
    text = layout.study_file.read_text(encoding="utf-8").replace(".v1.yaml", ".v2.yaml")
    layout.study_file.write_text(text, encoding="utf-8")


def flagged(annotations: list[Annotation]) -> set[str]:
    return {a.unit_id for a in annotations if a.codes.get("scope") == "different_context"}


def test_run_after_a_bump_recodes_exactly_the_flagged_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-studyrecode")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    with FakeServer() as fake:
        layout = make_study(tmp_path / "rc", fake.openai_base_url)
        assert exit_code("run", str(layout.root)) == 0
        v1_anns = read_annotations(layout.judge_run("scifact-dev", "retrieval"))
        assert len(v1_anns) == 91  # the 91 SciFact-dev passage units (docs/your-own-data.md)
        assert fake.stats()["calls"]["openai"] == 91
        expected = flagged(v1_anns)
        assert 0 < len(expected) < 91
        bump(layout)
        study = load_study(layout.root)
        # the plan swaps the judge step for a recode step (the v1 journal refuses v2)
        names = [s.name for s in pending_steps(plan_study(study, layout), layout)]
        assert names == ["recode retrieval scifact-dev", "attribute scifact-dev", "report"]
        work = plan_kind(study, layout, "scifact-dev", "retrieval")
        assert set(work.recode) == expected
        assert len(work.migrated) == 91 - len(expected)
        fake.reset()
        capsys.readouterr()
        assert exit_code("run", str(layout.root)) == 0
        # one call per unit the map cannot carry, none for the migrated ones
        assert fake.stats()["calls"]["openai"] == len(expected)
        run = layout.judge_recode_run("scifact-dev", "retrieval", 2)
        assert layout.judge_current("scifact-dev", "retrieval") == run
        anns = read_annotations(run)
        assert len(anns) == 91 and {a.codebook.version for a in anns} == {2}
        entries = [
            RecodeEntry.model_validate_json(line)
            for line in (run / RECODE_ENTRIES).read_text(encoding="utf-8").splitlines()
        ]
        assert {e.unit_id for e in entries if e.method is RecodeMethod.RECODED} == expected
        recoded = [e for e in entries if e.method is RecodeMethod.RECODED]
        assert {(e.from_version, e.to_version, e.coder) for e in recoded} == {
            (1, 2, "openai:fake-model")
        }
        old = {a.unit_id: a for a in v1_anns}
        for e in entries:
            if e.method is RecodeMethod.MIGRATED:  # codes carried unchanged (map: identity)
                assert e.annotation.codes == old[e.unit_id].codes
        # status: every unit on v2
        [row] = recode_status(study, layout)
        assert row.versions == {2: 91} and row.stale == 0
        assert (row.recoded, row.migrated) == (len(expected), 91 - len(expected))
        capsys.readouterr()
        assert exit_code("recode", str(layout.root), "--status") == 0
        out = capsys.readouterr().out
        assert "scifact-dev/retrieval: v2: 91 (all on study v2)" in out
        # the report reads the re-coded run: it names v2, not v1
        html = (layout.report_dir / "index.html").read_text(encoding="utf-8")
        assert "medical-fact-check v2 (sha256 " in html
        assert "medical-fact-check v1" not in html
        # by hand, without --codebook: v2 is not bundled, the study folder holds it
        by_hand = tmp_path / "by-hand"
        assert exit_code("report", str(layout.root), "-o", str(by_hand)) == 0
        assert "medical-fact-check v2 (sha256 " in (by_hand / "index.html").read_text("utf-8")
        # nothing left: a second run or recode makes no call
        fake.reset()
        assert exit_code("run", str(layout.root)) == 0
        assert exit_code("recode", str(layout.root)) == 0
        assert fake.stats()["calls"].get("openai", 0) == 0


def test_recode_survives_kill_9(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-studyrecode")
    with FakeServer(latency=0.15) as fake:
        layout = make_study(tmp_path / "rc", fake.openai_base_url)
        fake.control(latency=0.0)
        assert exit_code("run", str(layout.root)) == 0
        expected = flagged(read_annotations(layout.judge_run("scifact-dev", "retrieval")))
        bump(layout)
        fake.control(latency=0.15)
        fake.reset()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        args = [sys.executable, "-m", "failcodes", "recode", str(layout.root)]
        proc = subprocess.Popen([*args, "--concurrency", "1"], env=env)
        run = layout.judge_recode_run("scifact-dev", "retrieval", 2)
        deadline = time.monotonic() + 60
        while fake.stats()["calls"].get("openai", 0) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        first = fake.stats()["calls"].get("openai", 0)
        assert 3 <= first < len(expected)
        assert not (run / RECODE_ENTRIES).exists()  # nothing half-written
        assert layout.judge_current("scifact-dev", "retrieval") == layout.judge_run(
            "scifact-dev", "retrieval"
        )
        fake.control(latency=0.0)
        assert exit_code("recode", str(layout.root)) == 0
        total = fake.stats()["calls"]["openai"]
        # nothing lost, nothing doubled (at most the one call in flight at the kill)
        assert len(expected) <= total <= len(expected) + 1
        anns = read_annotations(run)
        assert len(anns) == 91 and len({a.unit_id for a in anns}) == 91
        assert {a.codebook.version for a in anns} == {2}
        lines = (run / RECODE_ENTRIES).read_text(encoding="utf-8").splitlines()
        assert len(lines) == 91


def test_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    base = [sys.executable, "-m", "failcodes", "recode"]
    layout = make_study(tmp_path / "rc", "http://127.0.0.1:9")
    for args in (
        [str(tmp_path / "nowhere")],
        [str(layout.root), "--dataset", "nope"],
        [str(layout.root), "--kind", "nope"],
    ):
        done = subprocess.run([*base, *args], env=env, capture_output=True, text=True)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr


def test_missing_version_in_the_lineage_is_one_line_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # offline judge (heuristic baseline): no server needed to code v1
    layout = make_study(tmp_path / "rc", "http://127.0.0.1:9")
    text = layout.study_file.read_text(encoding="utf-8")
    text = text.replace('judge = "openai:fake-model"', 'judge = "offline"')
    layout.study_file.write_text(text.replace('base_url = "http://127.0.0.1:9"\n', ""), "utf-8")
    assert exit_code("run", str(layout.root)) == 0
    v1 = bundled()
    v2 = next_version(v1, UnitKind.RETRIEVAL, [CHANGE], "accepted: animal study")
    leaf = CHANGE.model_copy(update={"leaf": "in_vitro", "label": "In vitro"})
    v3 = next_version(v2, UnitKind.RETRIEVAL, [leaf], "accepted: in vitro")
    # v3 beside v1, but v2 nowhere: no migration path from v1 to v3
    (layout.root / f"{v3.name}.v3.yaml").write_text(dump(v3), encoding="utf-8")
    text = layout.study_file.read_text(encoding="utf-8").replace(".v1.yaml", ".v3.yaml")
    layout.study_file.write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert exit_code("recode", str(layout.root)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no migration path from medical-fact-check@1" in err[0], err
    assert not layout.judge_recode_run("scifact-dev", "retrieval", 3).exists()
    # with v2 beside it the path exists: v1 -> v3 migrates, nothing is re-coded twice
    (layout.root / f"{v2.name}.v2.yaml").write_text(dump(v2), encoding="utf-8")
    assert exit_code("recode", str(layout.root)) == 0
    [row] = recode_status(load_study(layout.root), layout)
    assert row.versions == {3: 91} and row.recoded + row.migrated == 91


def _study_with(root: Path, base_url: str, fields: str) -> StudyLayout:
    """The study with more ``[judge]`` settings (TOML lines)."""
    layout = make_study(root, base_url)
    text = layout.study_file.read_text(encoding="utf-8")
    text = text.replace('kinds = ["retrieval"]\n', f'kinds = ["retrieval"]\n{fields}\n')
    layout.study_file.write_text(text, encoding="utf-8")
    return layout


def test_recode_runs_in_the_study_judge_mode_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # [judge] batch = true: the judge step ran through the batch API, so does the re-code
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loop")
    with FakeServer() as fake:
        layout = _study_with(
            tmp_path / "rc", fake.openai_base_url, "batch = true\npoll_interval = 0.05"
        )
        assert exit_code("run", str(layout.root)) == 0
        expected = flagged(read_annotations(layout.judge_run("scifact-dev", "retrieval")))
        bump(layout)
        fake.reset()
        assert exit_code("run", str(layout.root)) == 0
        assert fake.stats()["calls"] == {}  # nothing through the synchronous endpoint
        assert fake.stats()["batch_calls"]["batches.create"] >= 1
        run = layout.judge_recode_run("scifact-dev", "retrieval", 2)
        summary = read_summary(run)
        assert summary is not None and summary.mode.startswith("batch")
        # one batch item per flagged unit, none for the migrated ones
        assert summary.calls == summary.judged == len(expected)
        anns = read_annotations(run)
        assert len(anns) == 91 and {a.codebook.version for a in anns} == {2}


def test_recode_runs_in_the_study_judge_mode_grouped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loop")
    with FakeServer() as fake:
        layout = _study_with(tmp_path / "rc", fake.openai_base_url, "group_by_claim = true")
        assert exit_code("run", str(layout.root)) == 0
        first = read_summary(layout.judge_run("scifact-dev", "retrieval"))
        assert first is not None and first.groups > 0  # the judge step grouped by claim
        expected = flagged(read_annotations(layout.judge_run("scifact-dev", "retrieval")))
        bump(layout)
        fake.reset()
        assert exit_code("recode", str(layout.root)) == 0
        summary = read_summary(layout.judge_recode_run("scifact-dev", "retrieval", 2))
        assert summary is not None and summary.mode == "grouped"
        # the flagged units only, grouped by claim: one call per group or lone unit
        assert summary.grouped_units + summary.judged_alone == len(expected)
        # (SciFact's flagged passages each come from a different claim: all judged alone)
        assert fake.stats()["calls"]["openai"] == summary.groups + summary.judged_alone


def test_a_judge_panel_is_recoded_as_a_panel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # [judge] names a second judge: the judge step runs a panel (panel.json); after the
    # bump each member re-codes the units ITS codes put at risk, into its own folder
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loop")
    with FakeServer() as fake:
        layout = _study_with(tmp_path / "rc", fake.openai_base_url, "")
        text = layout.study_file.read_text(encoding="utf-8").replace(
            'judge = "openai:fake-model"', 'judge = ["openai:fake-model", "openai:fake-model-b"]'
        )
        layout.study_file.write_text(text, encoding="utf-8")
        assert exit_code("run", str(layout.root)) == 0
        old = layout.judge_run("scifact-dev", "retrieval")
        old_panel = read_panel(old)
        assert old_panel is not None and len(old_panel.members) == 2
        assert fake.stats()["calls"]["openai"] == 2 * 91
        per_member = {
            name: flagged(read_annotations(old / sub)) for name, sub in old_panel.run_dirs.items()
        }
        bump(layout)
        study = load_study(layout.root)
        names = [s.name for s in pending_steps(plan_study(study, layout), layout)]
        assert names == ["recode retrieval scifact-dev", "attribute scifact-dev", "report"]
        fake.reset()
        capsys.readouterr()
        assert exit_code("run", str(layout.root)) == 0
        assert fake.stats()["calls"]["openai"] == sum(len(f) for f in per_member.values())
        run = layout.judge_recode_run("scifact-dev", "retrieval", 2)
        assert layout.judge_current("scifact-dev", "retrieval") == run
        panel = read_panel(run)
        assert panel is not None and panel.members == old_panel.members
        assert panel.codebook.startswith("medical-fact-check@2")
        entries = [
            RecodeEntry.model_validate_json(line)
            for line in (run / RECODE_ENTRIES).read_text(encoding="utf-8").splitlines()
        ]
        assert len(entries) == 2 * 91
        for name, sub in panel.run_dirs.items():
            anns = read_annotations(run / sub)
            assert len(anns) == 91 and {a.codebook.version for a in anns} == {2}
            recoded = {
                e.unit_id for e in entries if e.member == name and e.method is RecodeMethod.RECODED
            }
            assert recoded == per_member[name]
        [row] = recode_status(study, layout)
        assert row.versions == {2: 91} and row.stale == 0
        assert layout.attribution_table("scifact-dev").is_file()
        # nothing left: a second run makes no call
        fake.reset()
        assert exit_code("recode", str(layout.root)) == 0
        assert fake.stats()["calls"] == {}


def test_an_old_args_list_is_one_line_saying_what_to_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loop")
    with FakeServer() as fake:
        layout = make_study(tmp_path / "rc", fake.openai_base_url)
        assert exit_code("run", str(layout.root)) == 0
        bump(layout)
        text = layout.study_file.read_text(encoding="utf-8")
        text = text.replace(
            'kinds = ["retrieval"]\n', 'kinds = ["retrieval"]\nargs = ["--bogus"]\n'
        )
        layout.study_file.write_text(text, encoding="utf-8")
        capsys.readouterr()
        fake.reset()
        assert exit_code("recode", str(layout.root)) == 2
        err = capsys.readouterr().err.strip().splitlines()
        # the old free list is refused at load, naming what to write instead
        assert len(err) == 1 and "field 'judge.args'" in err[0], err
        assert "`args` is no longer read" in err[0] and "'--bogus': no such setting" in err[0]
        assert "failcodes.toml:" in err[0]
        assert fake.stats()["calls"] == {}
        assert not layout.judge_recode_run("scifact-dev", "retrieval", 2).exists()


def test_a_judge_panel_feeds_the_label_studio_step_its_consensus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # [review] labelstudio = true with a panel of three: the task file pre-selects the
    # panel's consensus, and a unit the members tie on carries no prediction
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loop")
    with FakeServer() as fake:
        layout = _study_with(tmp_path / "rc", fake.openai_base_url, "")
        text = layout.study_file.read_text(encoding="utf-8").replace(
            'judge = "openai:fake-model"',
            'judge = ["openai:fake-model", "openai:fake-model-b", "openai:fake-model-c"]',
        )
        layout.study_file.write_text(
            text.replace("labelstudio = false", "labelstudio = true"), encoding="utf-8"
        )
        assert exit_code("run", str(layout.root)) == 0
    run = layout.judge_run("scifact-dev", "retrieval")
    consensus = {a.unit_id: a for a in consensus_annotations(run, bundled())}
    tasks = json.loads(layout.labelstudio_tasks("scifact-dev", "retrieval").read_text())
    assert len(tasks) == len(consensus) == 91
    with_prediction = 0
    for task in tasks:
        ann = consensus[task["data"][UNIT_ID]]
        if ann.status is not Status.SCORED:
            assert "predictions" not in task
            continue
        with_prediction += 1
        [prediction] = task["predictions"]
        chosen = {r["from_name"]: r["value"]["choices"] for r in prediction["result"]}
        assert chosen == {d: sorted(ann.code_set(d)) for d in chosen}
        assert set(chosen) == {d for d, c in ann.codes.items() if c}
    assert with_prediction == sum(a.status is Status.SCORED for a in consensus.values())
    # issue 28: a tie is broken by the primary judge (the first --judge), so with three
    # single-label members that code every unit no unit is left undecided: every task is
    # pre-selected, the tied ones with the primary's code (was: 8 of 91 without a prediction)
    report = read_panel(run)
    assert report is not None and report.decided["undecided"] == 0
    assert report.decided["primary"] >= 1  # ties occur with this server
    assert with_prediction == 91


RAG_STUDY = """\
name = "rag-topk"
codebook = "{codebook}"

[[datasets]]
name = "rag"
[[datasets.ingest]]
adapter = "ragchecker"
paths = ["bundled:ragchecker/checking_outputs.json"]
labels = true
[[datasets.pipelines]]
system = "*"
evidence = "retrieved"

[metrics]
mappings = ["refuted", "non_supported"]

[judge]
judge = {judge}
kinds = ["retrieval"]
{top_k}

[review]
labelstudio = false
"""


@pytest.mark.parametrize("judge", ['"offline"', '["offline", "offline"]'], ids=["one", "panel"])
def test_a_recoded_study_given_another_top_k_holds_and_counts_that_inputs_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], judge: str
) -> None:
    """A study re-coded onto v2, then its [judge] top_k changed (the input's units change).

    The RAGChecker example's one disagreement has 4 retrieved chunks (docs/your-own-data.md):
    top_k = 1 makes 1 retrieval unit, no top_k 4. Before: the recode step's fingerprint did
    not see the study file, so `run` skipped it: top_k 1 -> none left the re-code run's 1
    unit ('dimensions coded 5' for 4 units: 20), `recode --status` said 'v2: 1 (all on study
    v2)' with 3 units never coded; and a re-code with nothing to do left annotations.jsonl
    (and panel.json) as the earlier input's: top_k none -> 1 kept 4 units ('dimensions coded
    20' for 1 unit: 5; status 'v2: 4; re-coded 3, migrated 1' for 'v2: 1; re-coded 0,
    migrated 1').
    """
    from failcodes.judge.panelrun import read_panel
    from failcodes.study.recode import member_runs
    from tests.cli_helpers import run_cli

    layout = StudyLayout.of(tmp_path / "rag")
    layout.root.mkdir()
    v1 = bundled()
    (layout.root / f"{v1.name}.v1.yaml").write_text(dump(v1), encoding="utf-8")

    def study(version: int, top_k: str) -> None:
        text = RAG_STUDY.format(codebook=f"{v1.name}.v{version}.yaml", judge=judge, top_k=top_k)
        layout.study_file.write_text(text, encoding="utf-8")

    def units(journaled: int) -> list[str]:  # what attribute and the report read, per member
        run = layout.judge_recode_run("rag", "retrieval", 2)
        panel = read_panel(run)
        folders = [run] if panel is None else [run / sub for sub in panel.run_dirs.values()]
        exported = set()
        for folder in folders:
            lines = (folder / "annotations.jsonl").read_text(encoding="utf-8").splitlines()
            exported.add(tuple(sorted(json.loads(x)["unit_id"] for x in lines)))
        (ids,) = exported  # every member the same units
        # the run's summary: units of its journal not of this input (ef2bb54's other_units)
        # (none written while every unit was migrated without a call)
        said = [f / "summary.json" for f in folders if (f / "summary.json").is_file()]
        assert {json.loads(p.read_text())["other_units"] for p in said} <= {journaled - len(ids)}
        assert len(said) == (0 if journaled == 1 else len(folders))
        if panel is not None:
            assert sorted(u.unit_id for u in panel.units) == list(ids)
        return list(ids)

    def quotes() -> int:
        import pandas as pd

        table = pd.read_csv(layout.root / "report" / "tables" / "quote_checks.csv")
        return int(table["dimensions coded"].sum())

    def status() -> str:
        capsys.readouterr()  # the runs' own output
        code, out, err = run_cli(["recode", "--status", str(layout.root)], capsys)
        assert code == 0, err
        (line,) = out.splitlines()  # '<versions> (<state>); re-coded N, migrated M; read from'
        return line.split(" (")[0] + " ..." + line.split(";")[1]

    members = 1 if judge == '"offline"' else 2
    study(1, "top_k = 1")
    assert exit_code("run", str(layout.root)) == 0
    (first, *_) = member_runs(layout.judge_run("rag", "retrieval")).values()
    (rank1,) = [a.unit_id for a in read_annotations(first)]
    bump(layout)  # v2 beside v1, the study file pointed at it
    assert exit_code("run", str(layout.root)) == 0
    assert units(1) == [rank1]
    capsys.readouterr()
    study(2, "")  # every chunk: 3 units the re-code run never coded
    # before the run: said 'v2: 1 (all on study v2)', the 3 uncoded units not counted
    assert status() == "rag/retrieval: v2: 1, not coded: 3 ... re-coded 0, migrated 1"
    assert exit_code("run", str(layout.root)) == 0
    log = layout.logs_dir.glob("*recode*")
    said = "".join(p.read_text(encoding="utf-8") for p in log)
    # 4 units - 1 on v2 already = 3 re-coded ("not coded before"), per member
    assert f"rag/retrieval: v2: {3 * members} unit(s) re-coded by " in said
    # summary.json said other_units 1 here (the migrated rank-1 unit, of this input)
    assert len(units(4)) == 4 and rank1 in units(4)
    assert quotes() == 4 * 5 * members  # 4 units x 5 retrieval dimensions (v1 part), per judge
    assert status() == "rag/retrieval: v2: 4 ... re-coded 3, migrated 1"
    study(2, "top_k = 1")  # back to the first chunk: nothing to re-code, 3 units left out
    assert exit_code("run", str(layout.root)) == 0
    assert units(4) == [rank1]  # the journal keeps 4: 3 not of this input
    assert quotes() == 1 * 5 * members
    # rank1 was migrated by the first re-code (the offline judge's codes, carried to v2)
    assert status() == "rag/retrieval: v2: 1 ... re-coded 0, migrated 1"


def test_a_studys_top_k_reaches_its_attribution_and_label_studio_tasks(
    tmp_path: Path,
) -> None:
    """[judge] top_k = 1 on the RAGChecker example: 1 disagreement, 4 retrieved chunks
    (docs/your-own-data.md), so the judge codes 1 unit, the first chunk.

    Before: the study's attribute and labelstudio export steps were not given top_k, so the
    item was 'undetermined: 3 of 4 retrieved passages not coded' (retrieval 0, undetermined
    1 where `attribute --top-k 1` says retrieval 1: its one passage is not all-high) and 4
    Label Studio tasks were written for the judge's 1 unit; once the run had coded every
    chunk (no top_k), top_k = 1 kept all 4 passages in the attribution (Table 8 over 4).
    """
    import csv

    layout = StudyLayout.of(tmp_path / "rag")
    layout.root.mkdir()
    v1 = bundled()
    (layout.root / f"{v1.name}.v1.yaml").write_text(dump(v1), encoding="utf-8")

    def run(top_k: str) -> tuple[list[dict[str, str]], list[dict[str, str]], int]:
        text = RAG_STUDY.format(codebook=f"{v1.name}.v1.yaml", judge='"offline"', top_k=top_k)
        text = text.replace("labelstudio = false", "labelstudio = true")
        layout.study_file.write_text(text, encoding="utf-8")
        assert exit_code("run", str(layout.root)) == 0
        folder = layout.attribution("rag")
        with (folder / "attribution_summary.csv").open(encoding="utf-8") as fh:
            summary = list(csv.DictReader(fh))
        with (folder / "per_passage.csv").open(encoding="utf-8") as fh:
            passages = list(csv.DictReader(fh))
        tasks = json.loads(layout.labelstudio_tasks("rag", "retrieval").read_text("utf-8"))
        return summary, passages, len(tasks)

    summary, passages, tasks = run("top_k = 1")
    assert [(p["rank"], p["status"], p["all_high"]) for p in passages] == [("1", "scored", "False")]
    # its one passage is not high quality on every dimension: retrieval
    assert [(s["retrieval"], s["undetermined"], s["total"]) for s in summary] == [("1", "0", "1")]
    assert tasks == 1
    _, passages, tasks = run("")  # every chunk coded
    assert (len(passages), tasks) == (4, 4)
    summary, passages, tasks = run("top_k = 1")  # the run holds 4, the judge's input 1
    assert [p["rank"] for p in passages] == ["1"]
    assert [(s["retrieval"], s["undetermined"]) for s in summary] == [("1", "0")]
    assert tasks == 1
