"""A run folder resumes only the run it holds: kind, judge, model and codebook must match."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from failcodes.errors import ConfigError
from failcodes.judge.journal import JOURNAL_NAME, Journal
from tests.cli_helpers import run_cli
from tests.judge_helpers import make_traces, write_traces

META = {"kind": "retrieval", "judge": "offline", "model": "heuristic-v1", "codebook_hash": "c1"}


@pytest.mark.parametrize(
    ("key", "other"),
    [
        ("kind", "verification"),
        ("judge", "openai:gpt-5-mini"),
        ("model", "heuristic-v2"),
        ("codebook_hash", "c2"),
    ],
)
def test_a_different_run_is_refused_with_one_line(tmp_path: Path, key: str, other: str) -> None:
    journal = Journal(tmp_path)
    journal.bind(META)
    with pytest.raises(ConfigError) as err:
        journal.bind({**META, key: other})
    msg = str(err.value)
    assert "\n" not in msg
    assert f"{key}={META[key]!r}, not {other!r}" in msg and "another output folder (-o)" in msg
    journal.bind(META)  # the same run resumes
    journal.close()


def test_a_journal_written_before_the_model_key_is_not_checked_on_it(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.bind({k: v for k, v in META.items() if k != "model"})
    journal.bind({**META, "model": "heuristic-v2"})  # no stored model: nothing to compare
    assert journal.meta()["model"] == "heuristic-v2"
    journal.close()


@pytest.mark.parametrize(
    ("kind", "old"),
    [
        ("retrieval", "heuristic-v2"),
        ("reasoning", "heuristic-v3"),
        ("reasoning", "heuristic-v4"),
        ("retrieval", "heuristic-v5"),
    ],
)
def test_a_run_of_the_heuristic_before_its_rules_changed_is_not_resumed(
    workdir: Path, capsys: pytest.CaptureFixture[str], kind: str, old: str
) -> None:
    # heuristic-v2 quoted the whole passage five times; 3acf590 quotes a 20-word span and kept
    # the name, so a v2 run resumed afterwards held units of both rules under one identity.
    # heuristic-v3's grounding read the passage ids, which the prompt does not show; v4 reads
    # the titles it shows instead; v5 reads the ids again, which the verification prompt now
    # shows; v6 reads Chinese, Japanese and Korean text (t30red3). The model is now
    # heuristic-v6: an old run is refused in one line, never mixed.
    traces = write_traces(workdir / "traces.jsonl", make_traces(2))
    args = ["judge", kind, "--from", str(traces), "-o", "run"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    with sqlite3.connect(workdir / "run" / JOURNAL_NAME) as db:  # a run judged then
        db.execute("UPDATE meta SET value = ? WHERE key = 'model'", (old,))
    db.close()
    code, _, err = run_cli(args, capsys)
    assert code != 0
    assert [x for x in err.splitlines() if "error" in x] == [
        f"failcodes: error: run holds a run with model='{old}', not 'heuristic-v6'; use "
        "another output folder (-o) for a different run"
    ]


def test_a_refused_run_leaves_the_earlier_runs_summary_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The offline baseline coded the retrieval units of make_traces(2) into run/. A run of
    # gpt-5-mini into the same folder was refused at the journal's bind, but its empty
    # session was exported first: summary.json then said judge 'openai:gpt-5-mini',
    # coder_kind llm, units 0, journal_units 0, journal_cost_usd 0 (the report's judge cost
    # read it), and annotations.jsonl was rewritten. Now the folder is refused untouched,
    # through the CLI (checked before the lock) and through run_judge (bind before export).
    from failcodes import codebook as codebooks
    from failcodes.judge.estimate import PricingOnlyCoder
    from failcodes.judge.job import JudgeJob
    from failcodes.judge.journal import RunIdentityError
    from failcodes.judge.run import read_summary, run_judge
    from failcodes.units import UnitKind, build_units

    traces = write_traces(tmp_path / "traces.jsonl", make_traces(2))
    run = tmp_path / "run"
    args = ["judge", "retrieval", "--from", str(traces), "-o", str(run), "--no-cache"]
    assert run_cli(args, capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    offline = read_summary(run)
    assert offline is not None and offline.judge == "offline"
    units = build_units(make_traces(2), UnitKind.RETRIEVAL)
    assert offline.journal_units == len(units)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # refused before any call
    code, _, err = run_cli([*args, "--judge", "openai:gpt-5-mini"], capsys)
    assert code == 2 and "holds a run with judge='offline', not 'openai:gpt-5-mini'" in err
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before
    job = JudgeJob(codebooks.bundled(), UnitKind.RETRIEVAL, run)
    with pytest.raises(RunIdentityError):
        run_judge(units, PricingOnlyCoder("openai:gpt-5-mini"), job)
    after = read_summary(run)
    assert after is not None
    assert (after.judge, after.units, after.journal_units) == ("offline", len(units), len(units))


def test_a_run_folder_given_a_new_input_exports_and_reports_that_inputs_units_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # make_traces(3) judged into judge/d1/retrieval, then make_traces(3)[:2] (or --top-k 1):
    # the journal keeps the first input's units (resumable, a later input may hold them), but
    # annotations.jsonl exported all of them, so the report's quote checks said 5 dimensions
    # x every journaled unit ('dimensions coded 45', 9 units) for an input of 3, and a
    # panel's consensus and agreement took them in ('splits on 0 of 9 units'), exit 0. Now
    # the export, the report and the panel hold the latest input's units; the run says how
    # many others its journal keeps.
    import json

    import pandas as pd

    from failcodes.units import UnitKind, build_units

    every, fewer = make_traces(3), make_traces(3)[:2]
    a = write_traces(tmp_path / "a.jsonl", every)
    b = write_traces(tmp_path / "b.jsonl", fewer)
    n_every = len(build_units(every, UnitKind.RETRIEVAL))
    units = build_units(fewer, UnitKind.RETRIEVAL)
    assert len(units) < n_every
    for study in ("stale", "fresh"):
        run = tmp_path / study / "judge" / "d1" / "retrieval"
        inputs = (a, b) if study == "stale" else (b,)
        for src in inputs:
            code, out, err = run_cli(
                ["judge", "retrieval", "--from", str(src), "-o", str(run)], capsys
            )
            assert code == 0, err
        rows = [json.loads(x) for x in (run / "annotations.jsonl").read_text().splitlines()]
        assert sorted(r["unit_id"] for r in rows) == sorted(u.id for u in units)
        other = n_every - len(units) if study == "stale" else 0
        assert json.loads((run / "summary.json").read_text())["other_units"] == other
        if other:
            assert (
                f"run total: {n_every} units, $0.0000 ({other} of them not of this input, from an "
                "earlier --from or --top-k: kept in the journal, left out of annotations.jsonl)"
            ) in " ".join(out.split())
        code, _, err = run_cli(
            ["report", str(tmp_path / study), "-o", str(tmp_path / f"{study}.rep")], capsys
        )
        assert code == 0, err
        quotes = pd.read_csv(tmp_path / f"{study}.rep" / "tables" / "quote_checks.csv")
        # the bundled v1 retrieval part codes 5 dimensions, each quoted by the offline judge
        assert quotes["dimensions coded"].tolist() == [5 * len(units)]
    panel = tmp_path / "panel"
    for src in (a, b):
        args = ["judge", "retrieval", "--from", str(src), "-o", str(panel)]
        assert run_cli([*args, "--judge", "offline", "--judge", "offline"], capsys)[0] == 0
    report = json.loads((panel / "panel.json").read_text())
    assert len(report["units"]) == len(units)
    assert [q["dimensions_coded"] for q in report["quotes"]] == [5 * len(units)] * 2
