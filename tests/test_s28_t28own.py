"""Session 28 (t28own): the tool's own trace format read at ingest as a table's rows are.

A JSONL line already in the trace format (docs/trace-format.md) was taken as it is: a
``"reasoning": "N/A"`` was coded by ``judge reasoning`` as the verifier's reasoning (Table 9),
a passage whose text is ``"N/A"`` was a retrieved passage (Table 8), one whose text is a link
was judged as evidence and blamed by attribution. Each read now as the table path reads it
(commits 13ec95f, 548c99c): a missing mark is none, with a note; a link is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from failcodes.ingest import table
from failcodes.traceio import write_traces
from failcodes.traces import Trace
from tests.cli_helpers import run_cli


def _trace(n: int, reasoning: str, texts: list[str], **extra: Any) -> dict[str, Any]:
    passages = [
        {"passage_id": f"p{n}{rank}", "rank": rank, "text": text}
        for rank, text in enumerate(texts, start=1)
    ]
    return {
        "system": "bm25",
        "question_id": "q1",
        "sentence_id": f"q1s{n}",
        "claim_id": f"c{n}",
        "claim": f"Claim {n} holds.",
        "verdict": "supported" if n != 2 else "refuted",
        "reasoning": reasoning,
        "passages": passages,
        **extra,
    }


def _write(path: Path, traces: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in traces), encoding="utf-8")
    return path


#: How a line is read: the text reader's voucher, the byte blocks' voucher (a file of
#: 256 MB or more), or the exact reader (a null no voucher takes).
READS = ["text", "bytes", "record"]


def _read_as(how: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    if how == "bytes":
        monkeypatch.setattr(table, "BYTE_LINES_FROM", 0)
    return {"retriever": None} if how == "record" else {}


@pytest.mark.parametrize("how", READS)
def test_missing_marks_in_trace_lines_are_no_passage_and_no_reasoning_with_notes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    extra = _read_as(how, monkeypatch)
    src = _write(
        tmp_path / "t.jsonl",
        [
            _trace(1, "N/A", ["Aspirin reduces pain.", "N/A"], **extra),
            _trace(2, "Because it says so.", ["None", "Ibuprofen is an NSAID."], **extra),
            _trace(3, " nan ", ["-", "Zinc shortens colds."], **extra),
        ],
    )
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert code == 0, err
    got = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    # by hand: the marked passages p12 (N/A), p21 (None), p31 (-) are no passage, 3 in all;
    # the others keep their ranks (p22 and p32 stay rank 2, as a blank passage column's next
    # one does); reasoning 'N/A' (line 1) and ' nan ' (line 3) are none, 2 in all
    assert [[(p["passage_id"], p["rank"]) for p in t["passages"]] for t in got] == [
        [("p11", 1)],
        [("p22", 2)],
        [("p32", 2)],
    ]
    assert [t.get("reasoning") for t in got] == [None, "Because it says so.", None]
    assert (
        "3 passage(s) whose text is blank or a missing mark (NA, N/A, #N/A, nan, null, None or -; "
        f"first at {src}:1)" in err
    )
    assert f"2 reasoning(s) that are a missing mark (first at {src}:1)" in err


@pytest.mark.parametrize("how", READS)
@pytest.mark.parametrize(
    "link",
    [
        "https://pubmed.ncbi.nlm.nih.gov/123/",
        "PMID: 31978945",
        "doi:10.1056/NEJMoa2001017",
        "\u3000HTTPS://x.org/1",
    ],
)
def test_a_trace_lines_passage_that_is_a_link_alone_is_refused_naming_line_and_field(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
    link: str,
) -> None:
    extra = _read_as(how, monkeypatch)
    src = _write(
        tmp_path / "t.jsonl",
        [
            _trace(1, "Fine.", ["Aspirin reduces pain."], **extra),
            _trace(2, "Fine.", ["Ibuprofen is an NSAID.", link], **extra),
        ],
    )
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    # line 2's second passage (index 1): one line naming file, line and field, nothing written
    assert code != 0
    assert f"{src}:2, field 'passages[1].text': a passage's text is a reference alone" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_passage_that_only_begins_as_a_mark_or_a_link_is_read_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'None of the trials...' and 'https://x.org says aspirin...' are passages: kept, no note
    texts = ["None of the trials found harm.", "https://x.org reports aspirin reduces pain."]
    src = _write(tmp_path / "t.jsonl", [_trace(1, "NA values were excluded.", texts)])
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert code == 0, err
    got = json.loads(out.read_text(encoding="utf-8"))
    assert [p["text"] for p in got["passages"]] == texts
    assert got["reasoning"] == "NA values were excluded."
    assert "missing mark" not in err


def test_the_tools_own_parquet_traces_are_read_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the tool's own Parquet (its footer's marker: read by _own_rows' voucher), written from
    # models that hold the marks as text, as main's ingest wrote them
    models = [
        Trace.model_validate(_trace(1, "N/A", ["Aspirin reduces pain.", "N/A"])),
        Trace.model_validate(_trace(2, "Because it says so.", ["#N/A", "Ibuprofen is an NSAID."])),
    ]
    src = tmp_path / "t.parquet"
    write_traces(src, models)
    assert table._own_traces(src)
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert code == 0, err
    got = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    # by hand: p12 (N/A) and p21 (#N/A) are no passage, 2 in all; line 1's reasoning none, 1
    assert [[p["passage_id"] for p in t["passages"]] for t in got] == [["p11"], ["p22"]]
    assert [t.get("reasoning") for t in got] == [None, "Because it says so."]
    assert "2 passage(s) whose text is blank or a missing mark" in err
    assert f"1 reasoning(s) that are a missing mark (first at {src}:1)" in err
