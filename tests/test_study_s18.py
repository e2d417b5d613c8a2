"""Session 18 (t18study): the study and the library layer as a second researcher uses them.

Each test states the input, what main gave before the fix, and what it gives now.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import failcodes
from failcodes.errors import ConfigError, InputError
from tests.cli_helpers import run_cli


@pytest.mark.parametrize("command", [["judge", "retrieval", "--judge", "offline"], ["attribute"]])
def test_from_a_folder_says_it_is_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """``--from`` naming a folder (a run folder given for the disagreements file).

    It said "DIR: no such file" (exit 2): the folder exists, so the line sent the user
    looking for a missing file. Now the line every other reader gives: "is a folder,
    expected a file"; exit 2, nothing written.
    """
    folder = tmp_path / "disagreements.jsonl"
    folder.mkdir()
    out = tmp_path / "out"
    code, _, err = run_cli([*command, "--from", str(folder), "-o", str(out)], capsys)
    assert code == 2
    assert err.strip().splitlines() == [f"failcodes: error: {folder}: is a folder, expected a file"]
    assert not out.exists()


def test_a_request_from_a_folder_is_one_input_error(tmp_path: Path) -> None:
    """The same from Python: ``failcodes.run(JudgeRequest(source=FOLDER))``."""
    folder = tmp_path / "d.jsonl"
    folder.mkdir()
    request = failcodes.JudgeRequest(
        kind=failcodes.UnitKind.RETRIEVAL, source=folder, judge=["offline"], output=tmp_path / "o"
    )
    with pytest.raises(InputError) as caught:
        failcodes.run(request, note=lambda _: None)
    assert caught.value.one_line() == f"{folder}: is a folder, expected a file"
    assert not (tmp_path / "o").exists()


def test_a_bundled_input_is_the_same_wherever_failcodes_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A study ingesting ``bundled:`` data, then read by the same failcodes installed elsewhere.

    The ingest's fingerprint held the bundled file's absolute path in the installed package:
    the same failcodes in another venv or clone (the same bytes) made ``failcodes run`` re-run
    the ingest and ``failcodes report`` say "the study changed since `failcodes run` ran these
    steps: ingest ragchecker-example (their settings or input files)". Now the file counts as
    the study file names it (``bundled:ragchecker/checking_outputs.json``): nothing changed.
    """
    from importlib import resources

    from failcodes import bundled
    from failcodes.study.layout import StudyLayout
    from failcodes.study.state import changed_steps

    study = failcodes.init_study(tmp_path / "st").root  # the bundled RAGChecker example
    failcodes.run_study(study)
    layout = StudyLayout(study)
    assert changed_steps(layout) == []
    moved = tmp_path / "elsewhere" / "failcodes" / "bundled"
    shutil.copytree(Path(str(resources.files(bundled))), moved)
    files = resources.files
    monkeypatch.setattr(
        resources,
        "files",
        lambda package: moved if package in (bundled, bundled.__name__) else files(package),
    )
    assert str(bundled.path("ragchecker")).startswith(str(moved))
    assert [s.name for s in changed_steps(layout)] == []


def test_a_panel_then_one_judge_in_the_study_file_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``[judge] judge = ["offline", "offline"]`` run, then ``judge = "offline"``.

    The single judge's run was written into the panel's folder beside ``panel.json`` (exit 0)
    and attribute and the report went on reading the panel's consensus ("alice vs
    panel(offline#1+offline#2)"): the judge the study file names was in no number. Now the
    judge step stops in the line a changed judge gets, naming the folder; nothing written
    there. The other way (one judge, then a panel) is refused the same way.
    """
    study = failcodes.init_study(tmp_path / "st").root  # the bundled RAGChecker example
    toml = study / "failcodes.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace('judge = "offline"', 'judge = ["offline", "offline"]'))
    assert run_cli(["run", str(study)], capsys)[0] == 0
    run = study / "judge" / "ragchecker-example" / "retrieval"
    before = sorted(p.name for p in run.iterdir())
    assert before == ["panel", "panel.json"]
    toml.write_text(text)  # judge = "offline"
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 2
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(
            f"failcodes: error: {run} holds a run with judge='a judge panel (panel.json)', and the "
            "study file's [judge] now gives 'offline': a judge run folder holds one judge's codes; "
            "move the earlier judge's run folders (this one first) out of the study's judge/ folder"
        )
    )
    assert sorted(p.name for p in run.iterdir()) == before


def test_one_judge_then_a_panel_in_one_run_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``judge -o RUN --judge offline``, then ``--judge offline --judge offline -o RUN``."""
    study = failcodes.init_study(tmp_path / "st").root
    assert run_cli(["run", str(study)], capsys)[0] == 0
    source = study / "disagreements" / "ragchecker-example.jsonl"
    run = study / "judge" / "ragchecker-example" / "retrieval"
    panel = ["--judge", "offline", "--judge", "offline", "-o", str(run)]
    code, _, err = run_cli(["judge", "retrieval", "--from", str(source), *panel], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {run} holds a run with judge='offline', not 'a judge panel of "
        "offline, offline'; use another output folder (-o) for a different run"
    ]
    assert not (run / "panel.json").exists() and not (run / "panel").exists()


def test_agree_confidence_out_of_range_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``agree TABLE --confidence 5`` (a percent meant as 95?).

    It said "confidence level must be between 0 and 1, got 5.0", naming no flag (from Python:
    a StatisticsError at run time). Now the field's own bounds, as metrics' --confidence has:
    one line naming the flag, exit 2, nothing written; ``AgreeRequest(confidence=5)`` is the
    same ConfigError when built.
    """
    table = tmp_path / "r.csv"
    table.write_text("item,a,b\n1,x,x\n2,y,y\n3,x,y\n", encoding="utf-8")
    out = tmp_path / "agreement.json"
    code, _, err = run_cli(["agree", str(table), "--confidence", "5", "-o", str(out)], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        "failcodes: error: --confidence: Input should be less than 1"
    ]
    assert not out.exists()
    with pytest.raises(ConfigError, match=r"^--confidence: Input should be less than 1$"):
        failcodes.AgreeRequest(file=table, confidence=5)
