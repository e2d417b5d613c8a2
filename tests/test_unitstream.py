"""Units of a disagreements file streamed (issue 30): the units build_units gives, in order.

Every check compares with the exact path, ``build_units(disagreement_traces(
read_disagreements(path)), kind, top_k=...)``: ids, claims, passages, reasoning, verdicts,
and the verdict words a Label Studio task shows (from the provenance there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from failcodes import unitstream
from failcodes.disagreementio import read_disagreements
from failcodes.disagreements import find_disagreements
from failcodes.errors import InputError
from failcodes.labels import Label
from failcodes.labelstudio.tasks import verdict_text
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.units import Unit, UnitKind, build_units, disagreement_traces
from failcodes.unitstream import iter_disagreement_units
from failcodes.verdicts import ASSERTED, Verdict
from tests.judge_helpers import write_disagreements

SYSTEMS = ("bm25", "dense", "closed")


def _traces() -> list[Trace]:
    """3 systems x 4 sentences x 2 claims; bm25 and dense share claims and some passages.

    Passage k of claim c is shared by both retrievers for k < 2: passage 0 under one source
    (its unit repeats across systems), passage 1 under two (two units); ``closed`` is
    closed-book (its passages are citations: no retrieval unit). Raw verdicts: bm25
    'False'/'True', dense the canonical word, closed ASSERTED. Sentence 3's claims have no
    reasoning (no verification unit).
    """
    out = []
    for system in SYSTEMS:
        for s in range(4):
            for c in range(2):
                verdict = Verdict.REFUTED if (s + c) % 2 else Verdict.SUPPORTED
                raw = {
                    "bm25": "False" if verdict is Verdict.REFUTED else "True",
                    "dense": verdict.value,
                    "closed": ASSERTED,
                }[system]
                passages = tuple(
                    Passage(
                        passage_id=f"{system}-{s}-{c}-{k}",
                        rank=k + 1,
                        text=f"Passage {k} of claim {s}.{c}"
                        + ("" if k < 2 else f" seen by {system}"),
                        # what the judge is shown beside the text: passage 0 from pubmed under
                        # both (one unit), passage 1 from pubmed under bm25 and a blog under
                        # dense (two units of one text), a title or an empty one on passage 2
                        source=("pubmed", "pubmed" if system == "bm25" else "blog", "", None)[k],
                        title=(None, None, "T" if system == "bm25" else "", None)[k],
                    )
                    for k in range(4)
                )
                out.append(
                    Trace(
                        system=system,
                        question_id="q1",
                        sentence_id=f"q1:s{s}",
                        claim_id=f"c{s}.{c}",
                        claim=f"Claim {c} of sentence {s}.",
                        verdict=verdict,
                        raw_verdict=raw,
                        reasoning=None if s == 3 else f"Reasoning on {s}.{c}.",
                        passages=passages,
                        evidence_source=EvidenceSource.NONE if system == "closed" else None,
                    )
                )
    return out


def _labels() -> list[Label]:
    # every sentence has a refuted claim (claim c of sentence s is refuted when s + c is odd):
    # all predicted errors; s0, s2 are labelled errors (TP), s1, s3 not: FP on s1 and s3
    return [Label(question_id="q1", sentence_id=f"q1:s{s}", has_error=s % 2 == 0) for s in range(4)]


def _write(path: Path, mappings: tuple[str, ...] = ("refuted",)) -> Path:
    items = [d for m in mappings for d in find_disagreements(_traces(), _labels(), m)]
    write_disagreements(path, items)
    return path


def _check(path: Path, kind: UnitKind, top_k: int | None = None) -> int:
    exact = build_units(disagreement_traces(read_disagreements(path)), kind, top_k=top_k)
    streamed = list(iter_disagreement_units(path, kind, top_k=top_k))
    assert [s.id for s in streamed] == [u.id for u in exact]
    for s, u in zip(streamed, exact, strict=True):
        assert (s.kind, s.claim, s.reasoning, s.verdict) == (
            u.kind,
            u.claim,
            u.reasoning,
            u.verdict,
        )
        assert list(map(_passage, s.passages)) == list(map(_passage, u.passages))
        assert verdict_text(s) == verdict_text(u)
    return len(streamed)


def _passage(p: Any) -> tuple[object, ...]:
    """A passage's fields (the reader's record writes a missing title or source as empty)."""
    return (p.passage_id, p.rank, p.text, p.source or None, p.title or None, p.score, p.gold)


@pytest.fixture
def exact_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the stream handed to the exact reader."""
    from failcodes import disagreementio

    calls: list[Path] = []
    real = disagreementio.read_disagreements

    def counting(path: Path) -> list[object]:
        calls.append(Path(path))
        return real(path)

    monkeypatch.setattr(disagreementio, "read_disagreements", counting)
    return calls


@pytest.fixture(params=[1, 2, 1000])
def batch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Units checked a trace at a time, two at a time, and all at once."""
    monkeypatch.setattr(unitstream, "BATCH", request.param)
    return int(request.param)


def test_streamed_units_are_build_units_in_order(
    tmp_path: Path, batch: int, exact_reads: list[Path]
) -> None:
    path = _write(tmp_path / "dis.jsonl")
    # by hand: FP on s1 and s3 for each system, 2 claims each. Retrieval: per claim passage
    # 0 both retrievers show under one source (1 unit) + passage 1 both show under two
    # sources (2) + 2 of bm25's own + 2 of dense's, closed-book none: 4 claims x 7 = 28
    # units; top-1: the shared rank-1 passage, 4 units. Verification: the s1 traces (s3's have
    # no reasoning), distinct per system (passages differ): 3 x 2 = 6.
    assert _check(path, UnitKind.RETRIEVAL) == 28
    assert _check(path, UnitKind.RETRIEVAL, top_k=1) == 4
    assert _check(path, UnitKind.VERIFICATION) == 6
    assert _check(path, UnitKind.VERIFICATION, top_k=3) == 6
    assert exact_reads == []  # the stream never needed the exact reader


def test_the_stream_builds_no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a paper-scale export built 620k pydantic models (traces, passages, units) it only read
    path = _write(tmp_path / "dis.jsonl")
    built: list[str] = []
    for model in (Trace, Passage, Unit):
        real = model.model_construct

        def counted(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            built.append("model")
            return _real(*args, **kwargs)

        monkeypatch.setattr(model, "model_construct", counted)
    for kind in UnitKind:
        assert list(iter_disagreement_units(path, kind))
    assert built == []


def test_a_trace_listed_twice_takes_the_exact_path(
    tmp_path: Path, batch: int, exact_reads: list[Path]
) -> None:
    # two mappings' disagreements in one file: here both select the same FP sentences, so
    # every claim is listed twice (the exact reader keeps its first record)
    path = _write(tmp_path / "two.jsonl", ("refuted", "non_supported"))
    items = read_disagreements(path)
    assert sum(len(d.claims) for d in items) == 2 * len(disagreement_traces(items)) == 24
    assert _check(path, UnitKind.RETRIEVAL) == 28
    assert _check(path, UnitKind.VERIFICATION) == 6
    assert exact_reads == [path] * 2  # one per kind


def test_a_late_line_the_fast_path_cannot_vouch_for(
    tmp_path: Path, batch: int, exact_reads: list[Path]
) -> None:
    # the last line lacks an optional field (valid, but not as write_disagreements writes
    # it): units already given are not given again by the exact reader
    path = _write(tmp_path / "dis.jsonl")
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])
    del last["claims"][0]["raw_verdict"]
    lines[-1] = json.dumps(last)
    path.write_text("\n".join(lines) + "\n")
    assert _check(path, UnitKind.RETRIEVAL) == 28
    assert _check(path, UnitKind.VERIFICATION) == 6
    assert exact_reads == [path] * 2


def test_a_bad_late_line_is_the_exact_readers_one_line_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "dis.jsonl")
    lines = path.read_text().splitlines()
    bad = json.loads(lines[-1])
    bad["claims"][0]["verdict"] = "maybe"
    lines[-1] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        list(iter_disagreement_units(path, UnitKind.RETRIEVAL))
    assert f"dis.jsonl:{len(lines)}, field 'claims.0.verdict'" in err.value.one_line()


def test_the_plan_reads_until_it_knows_and_remembers_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the plan (failcodes run plans again after every step) read the whole disagreements
    # file strictly and built every unit of both kinds to learn whether one existed (issue 30)
    from failcodes import disagreementio
    from failcodes.commands.judge import JudgeOptions
    from failcodes.study import steps

    path = _write(tmp_path / "dis.jsonl")
    claims_read: list[int] = []
    real = disagreementio.iter_disagreement_claims

    def counting(p: Path) -> object:
        for item in real(p):
            claims_read.append(1)
            yield item

    monkeypatch.setattr(disagreementio, "iter_disagreement_claims", counting)
    judge = JudgeOptions()
    both = ["retrieval", "reasoning"]
    # the first claim (bm25, s1, c0) has passages and reasoning: both known at once
    assert steps.judged_kinds(path, both, judge) == (True, both)
    assert len(claims_read) == 1
    assert steps.judged_kinds(path, both, judge) == (True, both)
    assert len(claims_read) == 1  # remembered for the file as it is
    # only the closed-book system's disagreements: citations only (no retrieval unit), and
    # their s3 claims have no reasoning; s1's do (read on until the end for retrieval)
    only_closed = [line for line in path.read_text().splitlines() if '"closed"' in line]
    closed = tmp_path / "closed.jsonl"
    closed.write_text("\n".join(only_closed) + "\n")
    assert steps.judged_kinds(closed, both, judge) == (True, ["reasoning"])
    assert len(claims_read) == 1 + 4  # closed's 2 sentences x 2 claims, all read
    # the same answers as building every unit
    traces = disagreement_traces(read_disagreements(closed))
    assert build_units(traces, UnitKind.RETRIEVAL) == []
    assert build_units(traces, UnitKind.VERIFICATION) != []
    # a rewritten file is read again
    closed.write_text(path.read_text())
    assert steps.judged_kinds(closed, both, judge) == (True, both)
    assert len(claims_read) == 1 + 4 + 1


def _annotations(run: Path) -> list[dict[str, object]]:
    """A run's annotations without what differs between two runs (time and latency)."""
    out = []
    for line in (run / "annotations.jsonl").read_text().splitlines():
        rec = json.loads(line)
        del rec["created_at"], rec["usage"]["latency_s"]
        out.append(rec)
    return out


# retrieval: 28 units (test_streamed_units_are_build_units_in_order); reasoning shown only the
# rank-1 passage, whose text all three systems share, with the same reasoning and verdict,
# but under each system's own passage id, which the verification prompt shows: the s1 traces
# of a claim are three units, 6 in all (one per claim before the prompt showed the id)
@pytest.mark.parametrize(("kind", "top_k", "units"), [("retrieval", None, 28), ("reasoning", 1, 6)])
def test_the_judge_reads_a_disagreements_files_units_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, top_k: int | None, units: int
) -> None:
    # the judge held every trace and unit of its input (1.3 GB at paper scale; issue 30):
    # it now takes them one at a time, and judges the same units into the same annotations
    from failcodes.commands import inputs
    from failcodes.commands.judge import JudgeRequest

    path = _write(tmp_path / "dis.jsonl")
    unit_kind = UnitKind.RETRIEVAL if kind == "retrieval" else UnitKind.VERIFICATION

    def run(out: str) -> object:
        request = JudgeRequest(kind=unit_kind, source=path, top_k=top_k, output=tmp_path / out)
        return request.run().summary

    with monkeypatch.context() as held:  # the path that builds every unit first
        held.setattr(inputs, "load_unit_stream", lambda *a, **k: None)
        built = run("built")

    def no_traces(p: object) -> object:
        raise AssertionError("the judge read the traces whole")

    monkeypatch.setattr(inputs, "load_traces", no_traces)
    streamed = run("streamed")
    assert (built.units, built.judged) == (streamed.units, streamed.judged) == (units, units)
    assert _annotations(tmp_path / "streamed") == _annotations(tmp_path / "built")
    assert len(_annotations(tmp_path / "built")) == units
    # a second invocation resumes: every unit already done, none judged again
    again = run("streamed")
    assert (again.units, again.already_done, again.judged) == (units, units, 0)


def test_labelstudio_export_of_a_disagreements_file_imports_no_judge(tmp_path: Path) -> None:
    # the export asked commands.inputs whether its input holds disagreements, and that module
    # imports the judge package (asyncio, ssl, tenacity, the engine): ~370 M instructions of
    # a paper-scale reasoning export's start-up (issue 30)
    import subprocess
    import sys

    path, out = _write(tmp_path / "dis.jsonl"), tmp_path / "tasks.json"
    code = (
        "import sys\n"
        "from failcodes.cli.main import main\n"
        f"sys.argv = ['failcodes', 'labelstudio', 'export', {str(path)!r}, '--part',\n"
        f"            'verification', '-o', {str(out)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(proc.stdout.split())
    assert "failcodes.judge" not in loaded
    assert "asyncio" not in loaded
    # the command ran: a task per unit, in order (6: test_streamed_units_are_build_units_in_order)
    tasks = json.loads(out.read_text(encoding="utf-8"))
    units = [u.id for u in iter_disagreement_units(path, UnitKind.VERIFICATION)]
    assert [t["data"]["failcodes_unit_id"] for t in tasks] == units
    assert len(units) == 6
