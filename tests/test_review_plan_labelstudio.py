"""A review plan through a real Label Studio server: push exactly the plan, pull, match back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from failcodes import attribution
from failcodes import codebook as codebooks
from failcodes.annotations import Annotation, CoderKind
from failcodes.cli.main import main
from failcodes.labelstudio.client import LabelStudioClient
from failcodes.labelstudio.tasks import choice_result
from failcodes.report.build import build_report
from failcodes.report.rundir import load_run_dir
from failcodes.reviewplan import read_plan
from failcodes.study.layout import StudyLayout
from failcodes.traceio import write_traces
from failcodes.traces import Passage, Trace
from failcodes.units import UnitKind, build_units
from failcodes.verdicts import Verdict
from tests.labelstudio_helpers import annotate, create_user
from tests.test_cli_labelstudio import run  # noqa: F401  (in-process CLI fixture)

pytestmark = pytest.mark.labelstudio


@pytest.fixture
def client(labelstudio_server: tuple[str, str]) -> Iterator[LabelStudioClient]:
    url, token = labelstudio_server
    with LabelStudioClient(url, token) as c:
        yield c


def cli(*args: str | Path) -> None:
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        assert not exc.code


def traces() -> list[Trace]:
    return [
        Trace(
            system=f"sys-{'bm25' if i < 15 else 'dense'}",
            retriever="bm25" if i < 15 else "dense",
            question_id=f"q{i}",
            sentence_id=f"q{i}:s0",
            claim_id=f"q{i}:c0",
            claim=f"Claim {i}: statins lower LDL cholesterol.",
            verdict=Verdict.SUPPORTED,
            passages=(Passage(passage_id=f"p{i}", rank=1, text=f"Passage {i} on statins."),),
        )
        for i in range(30)
    ]


def test_plan_push_pull_status_and_corrected_report(
    labelstudio_server: tuple[str, str],
    client: LabelStudioClient,
    tmp_path: Path,
    run: Any,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, token = labelstudio_server
    cb = codebooks.bundled()
    part = cb.part(UnitKind.RETRIEVAL)
    high = {d.id: d.high_quality_code for d in part.dimensions}
    tr = traces()
    write_traces(tmp_path / "traces.jsonl", tr)
    units = build_units(tr, UnitKind.RETRIEVAL)
    judge = [
        Annotation(
            unit_id=u.id,
            unit_kind=UnitKind.RETRIEVAL,
            codebook=cb.ref(),
            coder="offline",
            coder_kind=CoderKind.HEURISTIC,
            codes={**high, "entity_match": "exact_entity" if i % 2 else "partial_entity"},
        )
        for i, u in enumerate(units)
    ]
    layout = StudyLayout.of(tmp_path / "run")
    table = layout.per_passage("ds")
    table.parent.mkdir(parents=True)
    attribution.per_passage_codes(tr, judge, cb).to_csv(table, index=False)
    judged = layout.judge_run("ds", "retrieval") / "annotations.jsonl"  # as the judge exports
    judged.parent.mkdir(parents=True)
    judged.write_text("".join(a.model_dump_json() + "\n" for a in judge))

    cli("review", "plan", tmp_path / "run", "-p", "retrieval", "-n", "20", "--stratify", "system")
    capsys.readouterr()
    plan_path = layout.review_plan("ds.retrieval")
    plan = read_plan(plan_path)
    assert len(plan.estimation_ids()) == 20  # 10 per retriever: a cell needs 10 reviewed

    env = {"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": token}
    args = ("-p", "retrieval", "--project", "review plan round trip")
    proc = run("push", "traces.jsonl", *args, "--plan", plan_path, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "20 tasks imported, 0 already there" in proc.stdout
    pid = client.find_project("review plan round trip")
    assert pid is not None
    on_server = client.unit_task_ids(pid)
    assert set(on_server) == plan.estimation_ids()  # exactly the plan's units, nothing else

    # the reviewer says every sampled passage matches the entity exactly
    reviewer = create_user(client, "grace@failcodes.test")
    for uid, task in on_server.items():
        codes = {**high, "entity_match": "exact_entity"}
        result = [choice_result(d, c) for d, c in codes.items()]
        annotate(client, task, result, completed_by=reviewer, lead_time=3)
        del uid
    pulled = layout.review("grace")
    proc = run("pull", *args, "-o", pulled, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr

    cli("review", "status", plan_path, "--reviews", pulled)
    assert "estimation sample 20/20 reviewed" in capsys.readouterr().out

    build_report(load_run_dir(tmp_path / "run"), tmp_path / "report")
    corrected = pd.read_csv(tmp_path / "report" / "tables" / "retrieval_quality_corrected.csv")
    exact = corrected[corrected["code"] == "exact_entity"].set_index("retriever")
    assert exact.loc["bm25", "units"] == 15
    assert exact.loc["bm25", "reviewed"] == 10
    assert exact.loc["dense", "reviewed"] == 10
    # every reviewed unit is exact: the human-only (and corrected) share is 100%
    assert str(exact.loc["bm25", "human-only (%)"]).startswith("100.0 [")
