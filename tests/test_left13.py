"""Session 12's left-over items (t13left): each shape gave a count nowhere or a refusal with
no file or line; the expected values are worked by hand beside the assertions."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.codebook import Codebook
from failcodes.units import Unit
from tests.cli_helpers import exit_code, run_cli


def test_study_recode_says_the_recoded_units_the_judge_gave_no_valid_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`failcodes recode STUDY` whose judge answered no flagged unit validly.

    Before: "scifact-dev/retrieval: v2: N unit(s) re-coded by ..., M migrated" and nothing
    else, while the N units hold no code on v2 (RecodeResult.unscored had the count). Every
    re-coded unit is unscored here, so the count is the flagged units': N of N.
    """
    from failcodes import commands
    from failcodes.judge import read_annotations
    from tests.fakeserver import FakeServer
    from tests.test_study_recode import bump, flagged, make_study

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-left13")

    def no_valid_answer(units: list[Unit], codebook: Codebook, run_dir: Path) -> list[Annotation]:
        del run_dir
        return [
            Annotation(
                unit_id=u.id,
                unit_kind=u.kind,
                codebook=codebook.ref(),
                coder="openai:fake-model",
                coder_kind=CoderKind.LLM,
                status=Status.UNSCORED,
                reason="invalid answer after 2 attempts: no codes",
            )
            for u in units
        ]

    with FakeServer() as fake:
        layout = make_study(tmp_path / "rc", fake.openai_base_url)
        assert exit_code("run", str(layout.root)) == 0
        n = len(flagged(read_annotations(layout.judge_run("scifact-dev", "retrieval"))))
        assert 0 < n < 91  # the units coded scope=different_context: re-coded under v2
        bump(layout)
        capsys.readouterr()  # the run's own output
        monkeypatch.setattr(
            commands.recode, "recode_engines", lambda options, cache: [no_valid_answer]
        )
        code, out, err = run_cli(["recode", str(layout.root)], capsys)
        again = run_cli(["recode", str(layout.root)], capsys)
    assert code == 0, err
    (line,) = out.splitlines()
    assert line.startswith(f"scifact-dev/retrieval: v2: {n} unit(s) re-coded by ")
    # 91 SciFact-dev units: n re-coded, 91 - n migrated; all n re-coded ones unscored
    assert f", {91 - n} migrated without a call -> " in line
    assert line.endswith(
        f"; {n} of the re-coded unscored: the judge gave no valid answer, so they hold no code "
        "(counted above, never coded again by a re-code)"
    )
    # "never coded again": the n units' newest annotation is on v2, so a second re-code has
    # nothing to do
    assert again[:2] == (0, "scifact-dev/retrieval: nothing to re-code: every unit is on v2\n")


def test_report_request_run_directly_says_the_study_changed(tmp_path: Path) -> None:
    """`ReportRequest(...).run()` called directly after an input edit since `failcodes run`.

    Before: the stale-study check ran only in failcodes.run (an import cycle kept it out of
    ReportRequest.run): said == [] and the run box held the last run's numbers with no word.
    The same study and edit as test_outside_red12c's failcodes.run test: s1's gold corrected.
    """
    import failcodes
    from tests.test_outside_red12 import _wide_study

    study = _wide_study(tmp_path / "st", {"w": "s1 s2 s3 s4 s5 s6"})
    failcodes.run_study(study)
    said: list[str] = []
    failcodes.ReportRequest(run_dir=study).run(note=said.append)
    assert said == []  # up to date: nothing to say
    table = study / "w.csv"
    table.write_text(
        table.read_text().replace(
            "Aspirin lowers fever,Supported ,supported,1,correct",
            "Aspirin lowers fever,Supported ,supported,1,wrong",
        )
    )
    failcodes.ReportRequest(run_dir=study).run(note=said.append)
    assert said[0].startswith("the study changed since `failcodes run` ran these steps: ingest w")
    page = " ".join((study / "report" / "index.html").read_text().split())
    assert "the study changed since `failcodes run` ran these steps: ingest w" in page
