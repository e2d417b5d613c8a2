"""Round trips through a real Label Studio 1.23.2 server (see tests/labelstudio_server.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from failcodes import codebook as codebooks
from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.coderagreement import annotation_agreement
from failcodes.errors import LabelStudioError
from failcodes.labelstudio.client import LabelStudioClient
from failcodes.labelstudio.config import labeling_config
from failcodes.labelstudio.results import annotations_from_export
from failcodes.labelstudio.tasks import build_tasks, choice_result, model_version
from failcodes.units import UnitKind
from tests.labelstudio_helpers import (
    ENTITY,
    SCOPE,
    annotate,
    create_user,
    judge_codes,
    judged,
    retrieval_unit,
    toy_codebook,
    verification_unit,
)
from tests.test_cli_labelstudio import assert_one_line_error, run, write_codebook  # noqa: F401

pytestmark = pytest.mark.labelstudio

N = 1000
WORKERS = 4  # reviewers working in parallel; the dev server is threaded


def reviewer_codes(i: int, coder: str) -> dict[str, str]:
    """What each reviewer answers: alice changes the judge's entity code on every 5th unit,
    bob (who codes every 10th unit) shifts both codes by one."""
    codes = judge_codes(i)
    if coder == "alice" and i % 5 == 0:
        codes["entity"] = ENTITY[(i + 1) % 3]
    if coder == "bob":
        codes = {"entity": ENTITY[(i + 1) % 3], "scope": SCOPE[(i + 1) % 2]}
    return codes


@pytest.fixture
def client(labelstudio_server: tuple[str, str]) -> Iterator[LabelStudioClient]:
    url, token = labelstudio_server
    with LabelStudioClient(url, token) as c:
        yield c


def result_items(codes: dict[str, str]) -> list[dict[str, Any]]:
    return [choice_result(dim, code) for dim, code in codes.items()]


def test_push_annotate_pull_1000_units(
    tmp_path: Path,
    client: LabelStudioClient,
) -> None:
    cb = toy_codebook()
    units = [retrieval_unit(i) for i in range(N)]
    judge = {u.id: judged(u, cb, i) for i, u in enumerate(units)}
    tasks = build_tasks(units, cb, UnitKind.RETRIEVAL, judge)
    xml = labeling_config(cb, UnitKind.RETRIEVAL)
    title = "failcodes 1000"

    t0 = time.perf_counter()
    report = client.push(tasks, xml, title)
    push_s = time.perf_counter() - t0
    pid = report.projects[title]
    assert report.created_projects == [title]
    assert report.imported == {title: N}

    # Every task is on the server once, with the judge's codes as its one prediction.
    on_server = client.unit_task_ids(pid)
    assert set(on_server) == set(judge)
    preds = client.predictions(pid)
    assert len(preds) == N
    mv = model_version(cb, next(iter(judge.values())))
    for i, u in enumerate(units):
        (pred,) = preds[on_server[u.id]]
        assert pred["model_version"] == mv
        got = {r["from_name"]: r["value"]["choices"] for r in pred["result"]}
        assert got == {d: [c] for d, c in judge_codes(i).items()}

    # Pushing again creates no duplicates.
    t0 = time.perf_counter()
    again = client.push(tasks, xml, title)
    repush_s = time.perf_counter() - t0
    assert again.created_projects == []
    assert (again.imported, again.skipped) == ({title: 0}, {title: N})
    assert len(client.export_tasks(pid)) == N

    # Reviewers annotate through the API as a person would: alice all, bob every 10th unit,
    # and bob once picks a choice that is not in the codebook (the server accepts it).
    ids = {name: create_user(client, f"{name}@failcodes.test") for name in ("alice", "bob")}
    jobs: list[tuple[int, str, dict[str, str]]] = []
    for i in range(N):
        jobs.append((i, "alice", reviewer_codes(i, "alice")))
        if i % 10 == 0:
            jobs.append((i, "bob", reviewer_codes(i, "bob")))
    bogus = {"entity": "made_up_code", "scope": SCOPE[0]}
    jobs.append((1, "bob", bogus))

    def annotate_job(job: tuple[int, str, dict[str, str]]) -> None:
        i, name, codes = job
        annotate(
            client,
            on_server[units[i].id],
            result_items(codes),
            completed_by=ids[name],
            lead_time=1.0 + i / 100,
        )

    t0 = time.perf_counter()
    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(annotate_job, jobs))
    annotate_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    pulled = client.pull(cb, UnitKind.RETRIEVAL, title)
    pull_s = time.perf_counter() - t0

    # 1000 (alice) + 100 (bob, i % 10 == 0) + 1 (bob's bogus one) annotations come back.
    assert len(pulled.annotations) == N + N // 10 + 1
    assert pulled.tasks == N
    index = {u.id: i for i, u in enumerate(units)}
    seen = set()
    for a in pulled.annotations:
        i = index[a.unit_id]
        name = a.coder.split("@")[0]
        seen.add((i, name))
        assert a.coder == f"{name}@failcodes.test"
        assert a.coder_kind is CoderKind.HUMAN
        assert a.status is Status.SCORED
        assert a.codebook == cb.ref()
        assert a.lead_time_s == pytest.approx(1.0 + i / 100)
        if (i, name) == (1, "bob"):
            assert a.codes == {"scope": SCOPE[0]}  # the unknown choice is not kept
        else:
            assert a.codes == reviewer_codes(i, name)
    assert seen == {(i, name) for i, name, _ in jobs}
    (problem,) = pulled.problems
    assert (problem.unit_id, problem.coder, problem.dimension, problem.value) == (
        units[1].id,
        "bob@failcodes.test",
        "entity",
        "made_up_code",
    )

    # The pulled annotations feed the agreement statistics. Bob's 100 units are i % 10 == 0,
    # where alice moved entity to ENTITY[(i+1) % 3] (i % 5 == 0) exactly as bob did, and
    # scope is SCOPE[0] for alice (i even) but SCOPE[1] for bob: percent agreement 1 and 0.
    # Bob's extra annotation of unit 1 kept only scope = SCOPE[0], alice said SCOPE[1]: one
    # more scope pair, also a disagreement.
    pair = {
        r.dimension: r.result
        for r in annotation_agreement(
            pulled.annotations, categories=cb.code_lists(), codebook_hash=cb.hash
        )
        if r.scope == "pair" and r.result.statistic == "percent"
    }
    assert (pair["entity"].value, pair["entity"].n_units) == (1.0, N // 10)
    assert (pair["scope"].value, pair["scope"].n_units) == (0.0, N // 10 + 1)

    # The same export, saved to a file and imported without a server, maps identically.
    export_file = tmp_path / "export.json"
    export_file.write_text(json.dumps(client.export_tasks(pid)))
    users = {uid: f"{name}@failcodes.test" for name, uid in ids.items()}
    offline = annotations_from_export(
        json.loads(export_file.read_text()), cb, UnitKind.RETRIEVAL, users=users, project=pid
    )
    assert sorted(a.model_dump_json() for a in offline.annotations) == sorted(
        a.model_dump_json() for a in pulled.annotations
    )
    print(
        f"\nLabel Studio {N} units: push {push_s:.1f} s, re-push (no-op) {repush_s:.1f} s, "
        f"{len(jobs)} annotations via API ({WORKERS} threads) {annotate_s:.1f} s, "
        f"pull {pull_s:.1f} s"
    )


def test_blind_double_coding_gets_one_project_per_annotator(
    client: LabelStudioClient,
) -> None:
    cb = toy_codebook()
    units = [retrieval_unit(5000 + i) for i in range(3)]
    tasks = build_tasks(units, cb, UnitKind.RETRIEVAL)
    names = ["carol@failcodes.test", "dave@failcodes.test"]
    report = client.push(tasks, labeling_config(cb, UnitKind.RETRIEVAL), "blind", annotators=names)
    assert list(report.projects) == [f"blind [{n}]" for n in names]
    assert len(set(report.projects.values())) == 2
    assert report.imported == {f"blind [{n}]": 3 for n in names}
    for n in names:
        uid = create_user(client, n)
        on_server = client.unit_task_ids(report.projects[f"blind [{n}]"])
        for i, u in enumerate(units):
            annotate(client, on_server[u.id], result_items(judge_codes(i)), completed_by=uid)
    again = client.push(tasks, labeling_config(cb, UnitKind.RETRIEVAL), "blind", annotators=names)
    assert again.imported == {f"blind [{n}]": 0 for n in names}
    pulled = client.pull(cb, UnitKind.RETRIEVAL, "blind", annotators=names)
    assert sorted((a.coder, a.unit_id) for a in pulled.annotations) == sorted(
        (n, u.id) for n in names for u in units
    )
    assert pulled.problems == []


def test_reusing_a_project_made_for_another_part_is_refused(
    client: LabelStudioClient,
) -> None:
    cb = toy_codebook()
    client.push(
        build_tasks([retrieval_unit(7000)], cb, UnitKind.RETRIEVAL),
        labeling_config(cb, UnitKind.RETRIEVAL),
        "mixed parts",
    )
    with pytest.raises(LabelStudioError, match="has another labeling config"):
        client.push(
            build_tasks([verification_unit(1)], cb, UnitKind.VERIFICATION),
            labeling_config(cb, UnitKind.VERIFICATION),
            "mixed parts",
        )
    with pytest.raises(LabelStudioError, match="no Label Studio project titled 'nope'"):
        client.pull(cb, UnitKind.RETRIEVAL, "nope")


def test_wrong_token_is_one_line_exit_2(
    labelstudio_server: tuple[str, str],
    tmp_path: Path,
    run: Any,  # noqa: F811
) -> None:
    url, _ = labelstudio_server
    wrong = "0" * 40
    with (
        LabelStudioClient(url, wrong) as bad,
        pytest.raises(LabelStudioError, match=r"rejected the token \(HTTP 401\)"),
    ):
        bad.whoami()
    cb_path = write_codebook(tmp_path)
    (tmp_path / "units.jsonl").write_text(retrieval_unit(0).model_dump_json() + "\n")
    proc = run(
        "push",
        "units.jsonl",
        "-p",
        "retrieval",
        "-c",
        cb_path,
        "--project",
        "token test",
        cwd=tmp_path,
        env={"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": wrong},
    )
    assert_one_line_error(proc, f"Label Studio at {url} rejected the token (HTTP 401)")
    assert wrong not in proc.stderr + proc.stdout


def test_cli_push_then_pull(
    labelstudio_server: tuple[str, str],
    tmp_path: Path,
    run: Any,  # noqa: F811
    client: LabelStudioClient,
) -> None:
    url, token = labelstudio_server
    cb = toy_codebook()
    cb_path = write_codebook(tmp_path)
    units = [retrieval_unit(9000 + i) for i in range(4)]
    (tmp_path / "units.jsonl").write_text("".join(u.model_dump_json() + "\n" for u in units))
    anns = [judged(u, cb, i) for i, u in enumerate(units)]
    (tmp_path / "judged.jsonl").write_text("".join(a.model_dump_json() + "\n" for a in anns))
    env = {"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": token}
    args = ("-p", "retrieval", "-c", cb_path, "--project", "cli review")
    proc = run("push", "units.jsonl", *args, "--judged", "judged.jsonl", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "4 tasks imported, 0 already there" in proc.stdout
    proc = run("push", "units.jsonl", *args, "--judged", "judged.jsonl", cwd=tmp_path, env=env)
    assert "0 tasks imported, 4 already there" in proc.stdout
    pid = client.find_project("cli review")
    assert pid is not None
    uid = create_user(client, "erin@failcodes.test")
    on_server = client.unit_task_ids(pid)
    for i, u in enumerate(units):
        annotate(
            client,
            on_server[u.id],
            result_items(reviewer_codes(i, "bob")),
            completed_by=uid,
            lead_time=4,
        )
    proc = run("pull", *args, "-o", "human.jsonl", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "4 annotations from 1 coder(s) on 4 tasks" in proc.stdout
    rows = [json.loads(line) for line in (tmp_path / "human.jsonl").read_text().splitlines()]
    assert {r["unit_id"]: r["codes"] for r in rows} == {
        u.id: reviewer_codes(i, "bob") for i, u in enumerate(units)
    }
    assert {r["coder"] for r in rows} == {"erin@failcodes.test"}
    assert token not in proc.stdout + proc.stderr


def test_bundled_codebook_verification_part_round_trip(client: LabelStudioClient) -> None:
    cb = codebooks.bundled()
    part = cb.part(UnitKind.VERIFICATION)
    units = [verification_unit(100 + i) for i in range(3)]
    # the judge proposes each step's last subcode; the reviewer corrects to the high-quality one
    proposed = {d.id: d.code_ids()[-1] for d in part.dimensions}
    corrected = {d.id: d.high_quality_code for d in part.dimensions}
    judge = {
        u.id: Annotation(
            unit_id=u.id,
            unit_kind=u.kind,
            codebook=cb.ref(),
            coder="offline",
            coder_kind=CoderKind.HEURISTIC,
            codes=proposed,
        )
        for u in units
    }
    tasks = build_tasks(units, cb, UnitKind.VERIFICATION, judge)
    report = client.push(tasks, labeling_config(cb, UnitKind.VERIFICATION), "bundled verification")
    pid = report.projects["bundled verification"]
    on_server = client.unit_task_ids(pid)
    for preds in client.predictions(pid).values():
        (pred,) = preds
        assert pred["model_version"] == f"{cb.ref()} offline (heuristic baseline, not an LLM)"
        assert {r["from_name"]: r["value"]["choices"][0] for r in pred["result"]} == proposed
    uid = create_user(client, "frank@failcodes.test")
    for u in units:
        annotate(client, on_server[u.id], result_items(corrected), completed_by=uid, lead_time=7)
    pulled = client.pull(cb, UnitKind.VERIFICATION, "bundled verification")
    assert pulled.problems == []
    assert {a.unit_id: a.codes for a in pulled.annotations} == {u.id: corrected for u in units}
    assert {a.unit_kind for a in pulled.annotations} == {UnitKind.VERIFICATION}
