"""Session 27, lead: outside shapes the helpers' reports left (issue 30's standard)."""

from __future__ import annotations

import json
from typing import Any

from tests.cli_helpers import run_cli


def test_a_system_column_filled_on_its_first_rows_alone_beside_system_is_refused(
    tmp_path, capsys
) -> None:
    # t27red's report, left: a system column named on each system's first row alone (the rows
    # under it blank, filled down by eye) beside a --system constant. main read llama's blank
    # q2 row as gpt's: 'wrote 4 traces (gpt 3, llama 1)' at exit 0, and metrics scored llama's
    # supported q2:s2 claim as gpt's. By hand the file holds 2 traces of each system.
    table = tmp_path / "t.csv"
    table.write_text(
        "system,question_id,sentence_id,claim_id,claim,verdict\n"
        "llama,q1,s1,c1,a,refuted\n,q2,s2,c2,b,supported\n"
        "gpt,q1,s1,c3,a,supported\ngpt,q2,s2,c4,b,supported\n"
    )
    out = tmp_path / "o" / "t.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(out), "--system", "gpt"]
    code, _, err = run_cli(args, capsys)
    assert (code, err.splitlines()) == (
        2,
        [
            f"failcodes: error: {table}:3, field 'system': no system here, where line 2 gives "
            "one: a row without one is read as system 'gpt' (--system) (a sheet that names "
            "each system on its first row alone? fill the column on every row, or leave it out "
            "of every row)"
        ],
    )
    assert not out.parent.exists()
    # filled on every row: 2 traces a system (by hand), with or without --system's default
    table.write_text(table.read_text().replace("\n,q2", "\nllama,q2"))
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert code == 0, err
    systems = [json.loads(x)["system"] for x in out.read_text().splitlines()]
    assert sorted(systems) == ["gpt", "gpt", "llama", "llama"]
    # no system column at all: every row is --system's, as before
    table.write_text(
        "question_id,sentence_id,claim_id,claim,verdict\nq1,s1,c1,a,refuted\nq2,s2,c2,b,supported\n"
    )
    out.unlink()
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert [json.loads(x)["system"] for x in out.read_text().splitlines()] == ["gpt", "gpt"]


def test_a_judge_job_takes_its_kind_as_a_word(tmp_path) -> None:
    # t27api's report, left: JudgeJob(cb, "verification") from a notebook ran into
    # "AttributeError: 'str' object has no attribute 'value'" inside run_judge, and a misspelt
    # kind was accepted by JudgeJob. tests/judge_helpers' traces give 6 verification units
    # (checked with UnitKind.VERIFICATION in the same run, below).
    import pytest

    from failcodes.errors import ConfigError
    from failcodes.judge import JudgeJob, run_judge
    from failcodes.judge.providers.offline import OfflineCoder
    from failcodes.units import UnitKind, verification_units
    from tests.judge_helpers import make_codebook, make_traces

    codebook, units = make_codebook(), verification_units(make_traces())
    word: Any = "verification"
    typo: Any = "verificaton"
    with pytest.raises(ConfigError, match=r"^kind: 'verificaton' is not one of retrieval, ver"):
        JudgeJob(codebook, typo, tmp_path / "x")
    by_word = run_judge(units, OfflineCoder(), JudgeJob(codebook, word, tmp_path / "a"))
    job = JudgeJob(codebook, UnitKind.VERIFICATION, tmp_path / "b")
    by_enum = run_judge(units, OfflineCoder(), job)
    assert (by_word.kind, by_word.units, by_word.judged) == (UnitKind.VERIFICATION, 6, 6)
    assert (by_enum.kind, by_enum.units, by_enum.judged) == (UnitKind.VERIFICATION, 6, 6)


def test_read_annotations_of_no_run_and_make_coder_of_none_say_so(tmp_path) -> None:
    # t27api's report, left: read_annotations of a folder holding no judge run said
    # "journal.sqlite: not a readable judge journal (unable to open database file); judge
    # again into a fresh -o folder" (the run is not damaged: it is not there), and
    # make_coder(None) was "AttributeError: 'NoneType' object has no attribute 'partition'".
    # The CLI's words for the first (judge/panelrun._run_codes) are used.
    import pytest

    from failcodes.errors import ConfigError, InputError
    from failcodes.judge import make_coder
    from failcodes.judge.run import read_annotations

    for run in (tmp_path, tmp_path / "nowhere"):
        with pytest.raises(InputError) as caught:
            read_annotations(run)
        assert str(caught.value) == f"{run}: no judge run here (missing journal.sqlite)"
    nothing: Any = None
    with pytest.raises(ConfigError) as made:
        make_coder(nothing)
    assert str(made.value) == (
        "judge: expected text, offline, anthropic:MODEL or openai:MODEL; got None"
    )


def test_a_row_per_code_of_a_sentence_is_refused_with_the_way_through(tmp_path, capsys) -> None:
    # t27red's shape 21: several codes of one sentence on repeated rows of a labels table
    # ('s1,dosage' and 's1,interaction') was refused as "duplicate label for sentence 's1'
    # (first at line 2)" naming no way through. The way it names now, followed: s1 error
    # (both rows error under the rule), s2 no error: 2 labels (by hand).
    table = tmp_path / "codes.csv"
    table.write_text("sentence_id,error_type\ns1,dosage\ns1,interaction\ns2,none\n")
    out = tmp_path / "o" / "l.jsonl"
    rule = "error_type in {dosage, interaction} -> error; otherwise -> no_error"
    args = ["ingest", "generic-labels", str(table), "-o", str(out), "--label-rule", rule]
    code, _, err = run_cli(args, capsys)
    assert (code, err.splitlines()) == (
        2,
        [
            f"failcodes: error: {table}:3, field 'sentence_id': duplicate label for sentence "
            "'s1' (first at line 2); a row per code of one sentence (several codes)? failcodes "
            "ingest generic-labels FILE -o OUT --option duplicates=same keeps one of each "
            "target labelled alike; labels of several systems' answers stacked? ingest each "
            "system's with --system NAME (or --option label_scope=system) so each label names "
            "its system"
        ],
    )
    assert not out.parent.exists()
    code, _, err = run_cli([*args, "--option", "duplicates=same"], capsys)
    assert code == 0, err
    labels = [json.loads(x) for x in out.read_text().splitlines()]
    assert labels == [
        {"sentence_id": "s1", "has_error": True},
        {"sentence_id": "s2", "has_error": False},
    ]
