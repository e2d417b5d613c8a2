"""A multi-label step end to end: judge (fake server), Label Studio (real server), agree and
Table 9 (issue 14, point 5)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from failcodes.annotations import CoderKind, Status
from failcodes.attribution import per_trace_steps
from failcodes.coderagreement import annotation_agreement
from failcodes.judge import JudgeJob, make_coder, read_annotations, run_judge
from failcodes.labelstudio.client import LabelStudioClient
from failcodes.labelstudio.config import labeling_config
from failcodes.labelstudio.tasks import build_tasks, choice_result
from failcodes.report.tables import code_shares
from failcodes.units import UnitKind, verification_units
from tests.fakeserver import FakeServer
from tests.judge_helpers import make_codebook, make_traces
from tests.labelstudio_helpers import annotate, create_user

pytestmark = pytest.mark.labelstudio

CB = make_codebook(multi_label=("inference",))
PART = CB.part(UnitKind.VERIFICATION)
BOTH = ["overreach", "conflict_synthesis_failure"]


@pytest.fixture
def client(labelstudio_server: tuple[str, str]) -> Iterator[LabelStudioClient]:
    url, token = labelstudio_server
    with LabelStudioClient(url, token) as c:
        yield c


def test_multi_label_step_round_trip(
    tmp_path: Path, client: LabelStudioClient, monkeypatch
) -> None:
    traces = make_traces(6)
    units = verification_units(traces)
    # 1. the judge (fake server) answers the multi-label step with a set of codes
    monkeypatch.setenv("OPENAI_API_KEY", "sk-multilabel")
    with FakeServer() as fake:
        coder = make_coder("openai:multi-label", base_url=fake.openai_base_url)
        run_judge(units, coder, JudgeJob(CB, UnitKind.VERIFICATION, tmp_path / "judge"))
    judged = {a.unit_id: a for a in read_annotations(tmp_path / "judge")}
    assert len(judged) == len(units) and all(a.status is Status.SCORED for a in judged.values())
    assert all(a.code_sets["inference"] for a in judged.values())
    assert any(len(a.code_sets["inference"]) == 2 for a in judged.values())  # co-occurring

    # 2. Label Studio: a multiple-choice group; the judge's set is the prediction; a reviewer
    # keeps the judge's codes but marks both inference errors on every unit
    xml = labeling_config(CB, UnitKind.VERIFICATION)
    assert 'name="inference" toName="claim" choice="multiple"' in xml
    assert 'name="grounding" toName="claim" choice="single"' in xml
    tasks = build_tasks(units, CB, UnitKind.VERIFICATION, judged)
    report = client.push(tasks, xml, "multi-label")
    pid = report.projects["multi-label"]
    preds = client.predictions(pid)
    on_server = client.unit_task_ids(pid)
    for u in units:
        (pred,) = preds[on_server[u.id]]
        got = {r["from_name"]: r["value"]["choices"] for r in pred["result"]}
        assert got["inference"] == judged[u.id].code_sets["inference"]
    reviewer = create_user(client, "erin@failcodes.test")
    for u in units:
        codes = dict(judged[u.id].codes)
        result = [choice_result(d, c) for d, c in codes.items() if d != "inference"]
        result.append(choice_result("inference", *reversed(BOTH)))  # any order on the wire
        annotate(client, on_server[u.id], result, completed_by=reviewer)
    pulled = client.pull(CB, UnitKind.VERIFICATION, "multi-label")
    assert pulled.problems == []
    humans = pulled.annotations
    assert len(humans) == len(units)
    assert all(a.coder_kind is CoderKind.HUMAN for a in humans)
    assert all(a.code_sets == {"inference": BOTH} for a in humans)  # codebook order

    # 3. agree: per-code agreement is binary per code; the reviewer carries both codes on every
    # unit, so percent agreement on a code = share of units where the judge carries it too
    rows = annotation_agreement(
        [*judged.values(), *humans], categories=CB.code_lists(), codebook_hash=CB.hash
    )
    for code in ("valid_inference", *BOTH):
        carried = sum(code in a.code_sets["inference"] for a in judged.values())
        expected = (carried if code in BOTH else len(units) - carried) / len(units)
        [percent] = [
            r.result
            for r in rows
            if r.scope == "code"
            and r.dimension == "inference"
            and r.code == code
            and r.result.statistic == "percent"
        ]
        assert percent.value == pytest.approx(expected)
        assert percent.n_units == len(units)

    # 4. Table 9: share of traces carrying each code; the inference rows add up to 2, not 1
    wide = per_trace_steps(traces, humans, CB)
    shares = code_shares(wide, PART, by="verifier", flag="all_correct")
    inference = shares[shares["dimension"] == "inference"].set_index("code")
    for group in sorted(wide["verifier"].unique()):
        assert inference.loc["overreach", group] == 1.0
        assert inference.loc["conflict_synthesis_failure", group] == 1.0
        assert inference.loc["valid_inference", group] == 0.0
        assert inference[group].sum() == 2.0
        grounding = shares[shares["dimension"] == "grounding"][group].sum()
        assert grounding == pytest.approx(1.0)  # single-label steps still add up to 1
