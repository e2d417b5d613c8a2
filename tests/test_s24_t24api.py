"""Session 24: a second researcher doing each use case from Python, not argv (t24api)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

#: A claim and a system a spreadsheet would run as a formula (OWASP CSV injection).
FORMULA = '=HYPERLINK("http://x","y")'


def _formula_traces(path: Path) -> Path:
    from failcodes import Passage, Trace, Verdict, traceio

    trace = Trace(
        system="@s",
        question_id="q",
        sentence_id="q:s0",
        claim_id="c0",
        claim=FORMULA,
        verdict=Verdict.SUPPORTED,
        passages=(Passage(passage_id="p1", rank=1, text=FORMULA),),
    )
    traceio.write_traces(path, [trace])
    return path


def test_raw_csv_reaches_python_as_the_clis_flag(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `failcodes ingest generic t.jsonl -o t.csv --raw-csv` writes the cells as they are (for a
    # program that reads the CSV); from Python the flag had no way in: no request field, and
    # failcodes.run() took no such argument, so a script got the neutralised '=HYPERLINK
    # cells (or had to find failcodes.csvcells.raw_cells, a private context manager).
    import failcodes as fc

    src = _formula_traces(workdir / "t.jsonl")
    code, _, err = run_cli(["ingest", "generic", str(src), "-o", "cli.csv", "--raw-csv"], capsys)
    assert code == 0, err
    cli = (workdir / "cli.csv").read_bytes()
    assert b'\n@s,q,q:s0,c0,"=HYPERLINK(' in cli  # as it is: no quote in front
    request = fc.IngestRequest(adapter="generic", paths=[src], out=workdir / "api.csv")
    fc.run(request, note=lambda _: None, raw_csv=True)
    assert (workdir / "api.csv").read_bytes() == cli  # byte-identical to the CLI's file
    # and without it, the default stays the CLI's default: neutralised, as without the flag
    run_cli(["ingest", "generic", str(src), "-o", "cli0.csv"], capsys)
    fc.run(request.model_copy(update={"out": workdir / "api0.csv"}), note=lambda _: None)
    neutral = (workdir / "cli0.csv").read_bytes()
    assert b"\n'@s,q,q:s0,c0,\"'=HYPERLINK(" in neutral
    assert (workdir / "api0.csv").read_bytes() == neutral
