import sqlite3

from failcodes.demo import STEPS, DemoContext


def test_demo_judge_step_codes_and_attributes(tmp_path) -> None:
    ctx = DemoContext(out_dir=tmp_path)
    outputs = {step.name: step.run(ctx) for step in STEPS}
    out = outputs["judge"]
    assert any("heuristic baseline" in line for line in out.lines)
    titles = [t for t, _ in out.tables]
    assert titles and all("heuristic baseline" in t for t in titles)
    summaries = [df for t, df in out.tables if "attribution" in t]
    assert summaries
    for df in summaries:  # every attributed item is counted once
        stages = df[["retrieval", "verification", "mixed", "undetermined"]].sum(axis=1)
        assert (stages == df["total"]).all()
    # running the step again resumes the journals: nothing is judged twice
    judge = next(s for s in STEPS if s.name == "judge")
    judge.run(ctx)
    for journal in (tmp_path / "judge").rglob("journal.sqlite"):  # the judge step's journals
        con = sqlite3.connect(journal)
        sessions = con.execute("SELECT summary FROM sessions ORDER BY id").fetchall()
        assert len(sessions) == 2
        assert '"judged": 0' in sessions[1][0]
        con.close()
