"""Session 21: the Python library's requests (t21api, after t21red3's "Left / doubtful")."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.errors import ConfigError, InputError
from failcodes.units import UnitKind
from tests.cli_helpers import run_cli


def test_a_bool_for_a_number_field_is_refused_naming_the_field(tmp_path: Path) -> None:
    # pydantic read `bootstrap=True` as 1 resample (every interval then "only 1 bootstrap
    # resamples", [0.4, 0.4] beside a recall of 0.222), `seed=True` as seed 1 and
    # `budget=True` as $1, where a study file's `bootstrap = true` was refused.
    import failcodes as fc

    cases = [
        (fc.MetricsRequest, {"traces": [tmp_path / "t.jsonl"], "bootstrap": True}),
        (fc.MetricsRequest, {"traces": [tmp_path / "t.jsonl"], "seed": True}),
        (fc.JudgeRequest, {"source": tmp_path / "t.jsonl", "budget": True}),
        (fc.JudgeRequest, {"source": tmp_path / "t.jsonl", "rpm": True}),
    ]
    said = []
    for model, values in cases:
        with pytest.raises(ConfigError) as caught:
            model(**values)
        said.append(str(caught.value))
    assert said == [
        "--bootstrap: expected a whole number, not True",
        "--seed: expected a whole number, not True",
        "--budget: expected a number, not True",
        "--rpm: expected a number, not True",
    ]
    # a bool field takes a bool, a number a number
    assert fc.MetricsRequest(traces=[tmp_path / "t.jsonl"], bootstrap=1).bootstrap == 1
    assert fc.JudgeRequest(source=tmp_path / "t.jsonl", batch=True).batch is True


def test_a_bool_for_a_judge_number_in_a_study_file_is_refused(tmp_path: Path) -> None:
    # `[judge] rpm = true` (JudgeOptions, the study's [judge] table) read as 1 request a
    # minute, where `[metrics] bootstrap = true` and `[judge] concurrency = true` were refused.
    import failcodes as fc

    layout = fc.init_study(tmp_path / "st")
    text = layout.study_file.read_text(encoding="utf-8")
    text = text.replace('judge = "offline"', 'judge = "offline"\nrpm = true')
    layout.study_file.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        fc.load_study(layout.root)
    assert "field 'judge.rpm': expected a number, not True" in str(caught.value)


def test_the_judge_kind_takes_the_cli_word_reasoning(tmp_path: Path) -> None:
    # `failcodes judge reasoning` is the CLI's word; from Python `kind="reasoning"` was
    # refused as "--kind: Input should be 'retrieval' or 'verification'".
    import failcodes as fc

    request = fc.JudgeRequest(kind="reasoning", source=tmp_path / "t.jsonl")
    assert request.kind is UnitKind.VERIFICATION
    assert request.argv() == ["judge", "reasoning", "--from", str(tmp_path / "t.jsonl")]


def test_agree_from_python_says_the_notes_the_cli_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `failcodes.run(AgreeRequest(...))` said the first ("Assumed") line through `note`, not
    # the lines the CLI prints under it (here the bootstrap's Monte Carlo note).
    import failcodes as fc
    from failcodes.commands.agree import AgreeRequest

    table = tmp_path / "r.csv"
    rows = ["a,a,a", "a,a,b", "b,b,b", "b,a,b", "a,b,b", "a,a,a", "b,b,a", "a,a,a"]
    table.write_text(
        "unit,r1,r2,r3\n" + "".join(f"u{i},{r}\n" for i, r in enumerate(rows)), encoding="utf-8"
    )
    said: list[str] = []
    result = fc.run(
        AgreeRequest(file=table, stat=["fleiss"], bootstrap=200, seed=3), note=said.append
    )
    code, out, _ = run_cli(
        ["agree", str(table), "--stat", "fleiss", "--bootstrap", "200", "--seed", "3"], capsys
    )
    assert code == 0
    printed = out.splitlines()[: len(result.notes)]  # the lines above the table
    assert said == printed == result.notes
    assert said[1] == (
        "bootstrap intervals: 200 resamples, seed 3; '±' after an interval is the Monte Carlo "
        "error of its endpoints (another seed moves them by about that; more --bootstrap "
        "resamples shrink it)"
    )
