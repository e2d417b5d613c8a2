"""Session 25, helper t25rep: the report, the panel and the ingest notes say what they know.

Each test is a reader misreading a number (or reading a note twice) on main before it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def _notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("note: ")]


def test_a_merge_of_the_tools_own_traces_does_not_say_their_alias_notes_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A study data set of several ingests: each part's ingest said "verdicts read by the
    # default aliases" for its file, then the merge step (ingest generic of the parts, the
    # tool's own traces: verdict canonical, the pipeline's word kept in raw_verdict) said every
    # note again for the parts (a study of 3 data sets of 8 + 6 + 3 parts: 17 notes more).
    # The merge reads canonical verdicts: no alias read them, nothing to say.
    from tests.cli_helpers import run_cli

    sheet = tmp_path / "gpt.csv"
    sheet.write_text("id,claim,label\nc1,claim one,true\nc2,claim two,nei\nc3,claim three,false\n")
    part = tmp_path / "part.jsonl"
    args = ["--map", "id=claim_id", "--map", "label=verdict", "--system", "gpt"]
    code, _, err = run_cli(["ingest", "generic", str(sheet), *args, "-o", str(part)], capsys)
    assert code == 0, err
    # the part's own ingest says it once: 2 of true/false, 1 'nei'
    assert _notes(err) == [
        f"note: {sheet}: 2 verdict(s) true/false read as supported/refuted (true: the claim "
        "holds); if true marks an error, give --alias true=refuted --alias false=supported; "
        "verdicts read by the default aliases: 'nei' as no_evidence (1); if one means "
        "otherwise, give --alias WORD=CANONICAL"
    ]
    rows = [json.loads(line) for line in part.read_text().splitlines()]
    assert [(r["verdict"], r["raw_verdict"]) for r in rows] == [
        ("supported", "true"),
        ("no_evidence", "nei"),
        ("refuted", "false"),
    ]
    # the merge as a study writes it (lines read as they are), and with an option that sends
    # every line through the record reader (--verifier): no alias note either way
    for extra in ([], ["--verifier", "gpt-4o"]):
        out = tmp_path / f"merged{len(extra)}.jsonl"
        code, _, err = run_cli(["ingest", "generic", str(part), *extra, "-o", str(out)], capsys)
        assert code == 0, err
        assert _notes(err) == [], extra
    # a trace line whose verdict cell is itself a default alias is still said, though it
    # carries a raw_verdict of its own (the note counts the cell the alias read)
    own = tmp_path / "own.jsonl"
    line = {"system": "s", "question_id": "q", "sentence_id": "s1", "claim_id": "c1"}
    line |= {"claim": "x", "verdict": "nei", "raw_verdict": "NEI?"}
    own.write_text(json.dumps(line) + "\n")
    for extra in ([], ["--verifier", "v"]):
        out = tmp_path / f"own{len(extra)}.jsonl"
        code, _, err = run_cli(["ingest", "generic", str(own), *extra, "-o", str(out)], capsys)
        assert code == 0, err
        assert _notes(err) == [
            f"note: {own}: verdicts read by the default aliases: 'nei' as no_evidence (1); if "
            "one means otherwise, give --alias WORD=CANONICAL"
        ], extra
