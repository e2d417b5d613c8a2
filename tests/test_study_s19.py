"""Session 19 (t19study): the study and the library layer as a second researcher uses them.

Each test states the input, what main gave before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.judge_helpers import make_traces, write_traces


def test_reasoning_dry_run_counts_traces_not_trace_passage_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``judge reasoning --dry-run``: a reasoning unit is one trace, not a (trace, passage).

    Input: make_traces(3) (3 claims x 2 systems = 6 traces, each its own reasoning) and a
    seventh trace, sysZ, a copy of the first but for its system: the same claim, passages,
    reasoning and verdict, so one reasoning unit with it. 7 traces -> 6 units. The line
    said "7 (trace, passage) rows -> 6 deduplicated units" (the 7 are traces; the traces hold
    14 (trace, passage) rows), and "naive one-call-per-row run". Now "7 traces" and
    "one-call-per-trace"; the retrieval line keeps its rows (7 traces x 2 passages = 14).
    """
    traces = make_traces(3)
    traces.append(traces[0].model_copy(update={"system": "sysZ"}))
    src = write_traces(tmp_path / "traces.jsonl", traces)
    base = ["--judge", "offline", "--from", str(src), "--dry-run", "-o", str(tmp_path / "run")]
    code, out, _ = run_cli(["judge", "reasoning", *base], capsys)
    assert code == 0, out
    assert "(per-unit): 7 traces -> 6 deduplicated units" in out, out
    assert "naive one-call-per-trace run: 0 calls" in out, out
    code, out, _ = run_cli(["judge", "retrieval", *base], capsys)
    assert code == 0, out
    assert "(per-unit): 14 (trace, passage) rows -> " in out, out
    assert "naive one-call-per-row run" in out, out


def test_python_run_makes_a_refused_file_the_cli_one_line(tmp_path: Path) -> None:
    """``failcodes.run(LabelStudioServeRequest(binary=FILE))``, FILE not executable.

    The CLI says "FILE: permission denied; check the path and its permissions" (exit 2,
    commandline.one_line_errors); from Python it was the raw PermissionError, so a caller
    catching the project's one exception base (FailcodesError) missed it. Now a
    FileSystemError (a FailcodesError) with the CLI's line.
    """
    import failcodes
    from failcodes.errors import FailcodesError

    binary = tmp_path / "label-studio"
    binary.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    binary.chmod(0o644)
    request = failcodes.LabelStudioServeRequest(
        binary=binary, data_dir=tmp_path / "data", timeout=5
    )
    with pytest.raises(FailcodesError) as caught:
        failcodes.run(request, note=lambda _: None)
    assert (
        caught.value.one_line()
        == f"{binary}: permission denied; check the path and its permissions"
    )


def test_a_recode_plan_diffs_the_codebooks_once_per_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planning a re-code after a bump: the codebook diff per earlier version, not per unit.

    Input: the bundled SciFact dev set judged by two offline judges (retrieval), then v2 (a
    new leaf, tests.test_study_recode.bump). ``plan_kind`` called ``added_rules`` (two
    codebooks diffed) for every unit it migrated: 4,270 a member in a 6,000-trace study,
    ~90% of the 97 s before its first re-coded unit (measured, issue 30). Now once per
    version the units come from (all v1 here: one call a member), with the same plan.
    """
    import failcodes
    import failcodes.study.recode as study_recode
    from failcodes.study import StudyLayout, load_study
    from failcodes.study.recode import PanelSeat, plan_kind
    from tests.test_study_recode import bump, make_study

    layout = make_study(tmp_path / "st", "http://127.0.0.1:9")
    text = layout.study_file.read_text(encoding="utf-8")
    text = text.replace('judge = "openai:fake-model"', 'judge = ["offline", "offline"]')
    text = text.replace('base_url = "http://127.0.0.1:9"\n', "") + "\n[metrics]\nbootstrap = 0\n"
    layout.study_file.write_text(text, encoding="utf-8")
    failcodes.run_study(layout.root)
    bump(layout)
    calls: list[tuple[int, int]] = []
    diff = study_recode.added_rules

    def counted(books, old, new):  # type: ignore[no-untyped-def]
        calls.append((old, new))
        return diff(books, old, new)

    monkeypatch.setattr(study_recode, "added_rules", counted)
    study = load_study(layout.root)
    work = plan_kind(
        study,
        StudyLayout.of(layout.root),
        "scifact-dev",
        "retrieval",
        member=PanelSeat(1, "offline#1"),
    )
    assert len(work.migrated) > 1, work  # units the diff was made for, one by one
    assert calls == [(1, 2)]


def test_a_panel_recodes_its_members_at_the_same_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A two-judge panel re-coding after a bump, each member at concurrency 1.

    Input: the bundled SciFact dev set judged by openai:fake-model and openai:fake-model-b
    (fake server), v2 (a new leaf), then ``failcodes run`` with every answer 0.2 s late. The
    members re-coded one after the other (the server never held more than 1 call: a panel's
    re-code took the sum of its members' times, where ``judge`` takes about one's, issue 30).
    Now they re-code at the same time, each within its own limit of 1: 2 calls at once, and
    the same calls (each member its own flagged units, tests.test_study_recode).
    """
    from tests.fakeserver import FakeServer
    from tests.test_study_recode import _study_with, bump, exit_code

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loop")
    with FakeServer() as fake:
        layout = _study_with(tmp_path / "rc", fake.openai_base_url, "concurrency = 1")
        text = layout.study_file.read_text(encoding="utf-8").replace(
            'judge = "openai:fake-model"', 'judge = ["openai:fake-model", "openai:fake-model-b"]'
        )
        layout.study_file.write_text(text + "\n[metrics]\nbootstrap = 0\n", encoding="utf-8")
        assert exit_code("run", str(layout.root)) == 0
        bump(layout)
        fake.reset()
        fake.control(latency=0.2)
        assert exit_code("run", str(layout.root)) == 0
        stats = fake.stats()
    run = layout.judge_recode_run("scifact-dev", "retrieval", 2)
    entries = [json.loads(line) for line in (run / "recode.jsonl").read_text().splitlines()]
    recoded = Counter(e["member"] for e in entries if e["method"] == "recoded")
    assert min(recoded.values()) >= 1 and len(recoded) == 2, recoded  # both members have calls
    assert stats["calls"]["openai"] == sum(recoded.values())
    assert stats["max_in_flight"] == 2


def test_agree_request_takes_names_as_the_study_file_lists_them(tmp_path: Path) -> None:
    """``AgreeRequest(long=["annotator", "has_error"])``: the study file's form of the field.

    A study's ``[[agreements]]`` takes ``long = ["annotator", "has_error"]`` (and refuses a
    string: 'Input should be a valid list'); the Python request took only the CLI's
    "annotator,has_error" and refused the list ('--long: Input should be a valid string').
    Now either; the same coefficients. Input: 4 sentences x 2 annotators, agreeing on 3:
    percent 3/4 = 0.75 by hand.
    """
    import failcodes

    table = tmp_path / "labels.csv"
    rows = [("s1", 1, 1), ("s2", 0, 0), ("s3", 1, 0), ("s4", 0, 0)]
    lines = [f"{s},ann1,{a}\n{s},ann2,{b}\n" for s, a, b in rows]
    table.write_text("sentence_id,annotator,has_error\n" + "".join(lines), encoding="utf-8")
    common = {"file": table, "unit_column": "sentence_id", "stat": ["percent"], "bootstrap": 0}
    listed = failcodes.run(
        failcodes.AgreeRequest(long=["annotator", "has_error"], **common), note=lambda _: None
    )
    joined = failcodes.run(
        failcodes.AgreeRequest(long="annotator,has_error", **common), note=lambda _: None
    )
    assert [r["value"] for r in listed.rows] == [r["value"] for r in joined.rows] == [0.75]
