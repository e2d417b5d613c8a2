"""The demo's study step: the bundled data run through the same commands as `failcodes run`."""

import sqlite3

import pandas as pd

from failcodes.demo import STEPS, DemoContext
from failcodes.disagreementio import read_disagreements
from failcodes.study import StudyLayout, load_study, plan_study
from failcodes.study.runner import pending_steps


def test_demo_study_step_runs_the_study_commands_and_attributes(tmp_path) -> None:
    ctx = DemoContext(out_dir=tmp_path)
    study = next(s for s in STEPS if s.name == "study")
    out = study.run(ctx)
    layout = StudyLayout.of(tmp_path)
    steps = [s for s in plan_study(load_study(tmp_path), layout) if s.name != "report"]
    # the demo ran exactly the commands `failcodes run --plan` lists, and all are finished
    assert [line.removeprefix("$ ") for line in out.lines if line.startswith("$ ")] == [
        s.command() for s in steps
    ]
    assert pending_steps(steps, layout) == []
    assert any("heuristic baseline" in line for line in out.lines)
    # SciFact x MultiVerS: the verifier was given the cited abstracts (evidence = provided),
    # so no disagreement is blamed on a retriever, and each row says why
    att = pd.read_csv(layout.attribution_table("scifact-dev"))
    assert len(att) > 0
    assert set(att["evidence_source"]) == {"provided"}
    assert "retrieval" not in set(att["stage"])
    assert att["reason"].notna().all()
    # ... and the same number as the disagreements file holds (one attribution each)
    assert len(att) == len(read_disagreements(layout.disagreements("scifact-dev")))
    # running the step again runs nothing: every command is finished (journals untouched)
    again = study.run(ctx)
    assert not [line for line in again.lines if line.startswith("$ ")]
    for journal in (tmp_path / "judge").rglob("journal.sqlite"):
        con = sqlite3.connect(journal)
        assert len(con.execute("SELECT summary FROM sessions").fetchall()) == 1
        con.close()
