"""CSV writer and reader agree (issue 16): every value the JSONL path round-trips, CSV does too."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes import traceio
from failcodes.traces import Passage, Trace
from failcodes.verdicts import Verdict

BIG = "evidence " * 30_000  # 270 KB: over the csv module's default 128 KiB cell limit


def _hard_traces() -> list[Trace]:
    return [
        Trace(
            system="s",
            question_id="q",
            sentence_id="q:s0",
            claim_id="c-empty",
            claim="  a claim in spaces  ",  # (an empty claim is refused: no claim to judge)
            verdict=Verdict.SUPPORTED,
            reasoning="",  # an empty optional text is missing in both formats
            passages=(Passage(passage_id="p1", rank=1, text=""),),  # an empty passage text
        ),
        Trace(
            system="s",
            question_id="q",
            sentence_id="q:s1",
            claim_id="c-big",
            claim='quotes " and, commas\nand a newline; unicode: β-blocker ≥ 5 mg 😀',
            verdict=Verdict.REFUTED,
            reasoning=BIG,
            passages=(
                Passage(passage_id="p1", rank=1, text=BIG, title="  spaces  ", score=-0.0),
                Passage(passage_id="p2", rank=2, text="\r\nCRLF inside\r\n", score=1e-300),
            ),
        ),
    ]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_hard_values_round_trip(tmp_path: Path, suffix: str) -> None:
    traces = _hard_traces()
    path = tmp_path / f"t{suffix}"
    traceio.write_traces(path, traces)
    # a passage whose text is blank reads as no passage in every format (as 'N/A' does): it
    # was a passage to judge, counted in Table 8 (session 29, t29red3)
    blank = traces[0].model_copy(update={"passages": ()})
    assert traceio.read_traces(path) == [blank, *traces[1:]]


def test_csv_and_jsonl_read_back_the_same(tmp_path: Path) -> None:
    raw = [t.model_copy(update={"sentence": ""}) for t in _hard_traces()]
    traceio.write_traces(tmp_path / "t.csv", raw)
    traceio.write_traces(tmp_path / "t.jsonl", raw)
    assert traceio.read_traces(tmp_path / "t.csv") == traceio.read_traces(tmp_path / "t.jsonl")
    assert traceio.read_traces(tmp_path / "t.csv")[0].sentence is None


# OWASP CSV injection (https://owasp.org/www-community/attacks/CSV_Injection): a cell that
# begins with = + - @ tab or CR is run as a formula by a spreadsheet; a quote in front makes it
# text. Numbers stay numbers. Each value below is written, then read back unchanged.
FORMULAS = [
    ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
    ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
    ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),  # starts like a number, is not
    ("@SUM(1+1)", "'@SUM(1+1)"),
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("-", "'-"),
    ("'=x", "''=x"),  # a quote the user typed survives: one is added, one taken off
    ("-3.5", "-3.5"),  # numbers are left as they are
    ("+1e-3", "+1e-3"),
    ("-12", "-12"),
    ("'plain", "'plain"),  # a quote before ordinary text is no neutralised cell
    ("a=b", "a=b"),
]


@pytest.mark.parametrize(("value", "cell"), FORMULAS)
def test_formula_cells_neutralised_and_restored(value: str, cell: str) -> None:
    from failcodes.csvcells import neutralise, raw_cells, restore

    assert neutralise(value) == cell
    assert restore(cell) == value
    with raw_cells():
        assert neutralise(value) == value


def test_formula_claims_round_trip_through_a_traces_csv(tmp_path: Path) -> None:
    from failcodes.csvcells import raw_cells

    values = [v for v, _ in FORMULAS]
    traces = [
        Trace(
            system="@s",
            question_id="q",
            sentence_id=f"q:s{i}",
            claim_id=f"c{i}",
            claim=v,
            verdict=Verdict.SUPPORTED,
            # (a passage whose text is '-' is no passage: a missing mark, as ingest reads it)
            passages=(Passage(passage_id="p1", rank=1, text=v),) if v != "-" else (),
        )
        for i, v in enumerate(values)
    ]
    path = tmp_path / "t.csv"
    traceio.write_traces(path, traces)
    text = path.read_text(encoding="utf-8")
    assert "\n'@s,q,q:s0,c0,\"'=HYPERLINK(" in text  # the system and the claim, quoted
    import csv
    import io

    cells = [c for row in csv.reader(io.StringIO(text, newline="")) for c in row]
    leads = [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert leads == ["-3.5", "+1e-3", "-12"]  # the numbers only
    assert traceio.read_traces(path) == traces
    with raw_cells():
        traceio.write_traces(path, traces)
    assert '\n@s,q,q:s0,c0,"=HYPERLINK(' in path.read_text(encoding="utf-8")


def test_a_nul_the_reader_refuses_is_not_written(tmp_path: Path) -> None:
    # the writer wrote a NUL into the CSV that its own reader refuses as binary data
    from failcodes.errors import InputError

    trace = _hard_traces()[1]
    bad = [trace.model_copy(update={"claim_id": "c0", "claim": "a\nb"}), trace]
    bad[1] = bad[1].model_copy(update={"claim": "x\x00y"})
    with pytest.raises(InputError) as info:
        traceio.write_traces(tmp_path / "t.csv", bad)
    # row 2 starts on line 4: the header is line 1, row 1 lines 2-3 (its claim holds a break)
    assert str(info.value).startswith(f"{tmp_path / 't.csv'}:4, field 'claim': a NUL character")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing half-written
    traceio.write_traces(tmp_path / "t.jsonl", bad)  # JSON carries it (\u0000)
    assert traceio.read_traces(tmp_path / "t.jsonl")[1].claim == "x\x00y"


def test_frames_neutralised_numbers_kept() -> None:
    import pandas as pd

    from failcodes.csvcells import restore_frame, safe_frame

    frame = pd.DataFrame({"system": ["=a", "b"], "f1": [-0.5, 1.0], "n": ["-1", "@x"]})
    text = safe_frame(frame, "o.csv").to_csv(index=False, lineterminator="\n")
    assert text == "system,f1,n\n'=a,-0.5,-1\nb,1.0,'@x\n"
    assert frame.loc[0, "system"] == "=a"  # the caller's frame is untouched
    import io

    back = restore_frame(pd.read_csv(io.StringIO(text), dtype={"n": str}))
    assert back["system"].tolist() == ["=a", "b"] and back["n"].tolist() == ["-1", "@x"]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "=1",
        "a\n=1",
        "a\n''+1",
        "a\r=1",  # a carriage return is no line start for ``^`` (only after ``\n``)
        "a\n\n-",
        "'a\n'b",
        "a=1\nb@c",
        "a\n\t",
        "''\n'''x",
        "x\n'",
        "\n",
        "\n'@",
    ],
)
def test_leads_like_a_formula_is_the_multiline_pattern(text: str) -> None:
    # issue 31: the check looks for a newline first; it finds what ``^'*[=+\-@\t\r]`` (each
    # line's start) finds, by hand: "=1", "a\n=1", "a\n''+1", "a\n\n-", "a\n\t", "\n'@" lead
    import re

    from failcodes.csvcells import leads_like_a_formula

    multiline = re.compile(r"^'*[=+\-@\t\r]", re.MULTILINE)
    assert leads_like_a_formula(text) is (multiline.search(text) is not None)
    leads = {"=1", "a\n=1", "a\n''+1", "a\n\n-", "a\n\t", "\n'@"}
    assert leads_like_a_formula(text) is (text in leads)
