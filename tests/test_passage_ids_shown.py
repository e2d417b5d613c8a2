"""A verification prompt shows each passage's id, and a verification unit's id holds it.

Verifier reasoning cites passages by id (bundled SciFact: "abstract 13734012 ... rationale
sentences [4]", passage "13734012:4"; other pipelines: "PMID 31234"). The prompt showed
rank, source, title and text, not the id: an LLM judge could not trace such a citation to
the evidence shown, and coded it ungrounded (the heuristic baseline, told to read only what
the prompt shows, did the same: 288 of SciFact's 700 units grounded, 399 when it read ids).
Now the prompt shows the id, the unit's id holds it (two ids, two units), and the dry run
counts its characters (issue 30).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from failcodes.cli.main import main
from failcodes.judge.job import JudgeJob
from failcodes.judge.prompts import render_user, user_length
from failcodes.judge.providers.offline import OfflineCoder
from failcodes.judge.run import run_judge
from failcodes.traces import Passage, Trace
from failcodes.units import UnitKind, build_units, unit_id
from failcodes.verdicts import Verdict
from tests.judge_helpers import FAKE_PRICES, fake_coder, fresh_fake, make_codebook

CB = make_codebook()
_CLAIM = "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors."
_TEXT = "ALDH1 expression was associated with poor prognosis in the 577 breast carcinomas."
# the bundled SciFact adapter's reasoning (failcodes ingest scifact bundled:scifact)
_CITES = "Per-abstract predictions: abstract 13734012: SUPPORT, rationale sentences [4]."


def _trace(system: str, pid: str, *, title: str | None = "ALDH1 in breast cancer") -> Trace:
    return Trace.model_validate(
        {
            "system": system,
            "question_id": "q1",
            "sentence_id": "s1",
            "claim_id": "c1",
            "claim": _CLAIM,
            "sentence": _CLAIM,
            "verdict": "supported",
            "reasoning": _CITES,
            "verifier": system,
            "retriever": "oracle",
            "passages": [{"passage_id": pid, "rank": 1, "text": _TEXT, "title": title}],
            "evidence_source": "provided",
        }
    )


def _strings(value: Any) -> list[str]:
    """Every string in a request body (the user message is one of them)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.fixture
def fake(fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    return fresh_fake(fake_server, monkeypatch, "sk-test-passage-ids")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_llm_judges_verification_request_shows_the_passage_id(
    fake: Any, tmp_path: Path, provider: str
) -> None:
    # The reasoning cites abstract 13734012; the passage is 13734012:4. Before, the request
    # held rank, title and text only: no "13734012" anywhere but in the reasoning.
    (unit,) = build_units([_trace("multivers", "13734012:4")], UnitKind.VERIFICATION)
    job = JudgeJob(CB, UnitKind.VERIFICATION, tmp_path / "run", prices=FAKE_PRICES)
    run_judge([unit], fake_coder(fake, provider), job)
    (body,) = fake.requests()
    (user,) = [s for s in _strings(body) if "<claim>" in s]
    assert '<passage rank="1" id="13734012:4" title="ALDH1 in breast cancer">' in user
    # the dry run prices exactly what is sent: the id's characters are counted
    assert user == render_user(unit) and len(user) == user_length(unit)


def test_a_retrieval_request_shows_no_passage_id(fake: Any, tmp_path: Path) -> None:
    # retrieval is judged on rank, source, title and text: its prompt and ids are unchanged
    (unit,) = build_units([_trace("multivers", "13734012:4")], UnitKind.RETRIEVAL)
    run_judge([unit], fake_coder(fake, "openai"), JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path))
    (body,) = fake.requests()
    (user,) = [s for s in _strings(body) if "<claim>" in s]
    assert "13734012" not in user and len(user) == user_length(unit)


def test_the_baseline_grounds_a_citation_of_the_id_shown(tmp_path: Path) -> None:
    # Every number of the reasoning (13734012, 4) is in what the prompt shows: the id
    # "13734012:4". heuristic-v4 read text, source and title only: ungrounded.
    units = build_units([_trace("multivers", "13734012:4")], UnitKind.VERIFICATION)
    run_judge(units, OfflineCoder(), JudgeJob(CB, UnitKind.VERIFICATION, tmp_path / "run"))
    (line,) = (tmp_path / "run" / "annotations.jsonl").read_text(encoding="utf-8").splitlines()
    ann = json.loads(line)
    assert ann["codes"]["grounding"] == "grounded", ann["evidence"]["grounding"]
    # the same reasoning over another abstract's passage: 13734012 is shown nowhere
    units = build_units([_trace("multivers", "99999999:4")], UnitKind.VERIFICATION)
    run_judge(units, OfflineCoder(), JudgeJob(CB, UnitKind.VERIFICATION, tmp_path / "other"))
    (line,) = (tmp_path / "other" / "annotations.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["codes"]["grounding"] == "ungrounded"


@pytest.mark.parametrize("title", ["ALDH1 in breast cancer", None])
def test_one_text_under_two_passage_ids_is_two_verification_units(title: str | None) -> None:
    # Same claim, text, title, reasoning and verdict; passages 13734012:4 and 99999999:4.
    # Each prompt shows its own id, so each is judged as shown: two verification units (one
    # before, coded as the first seen for both). Retrieval shows no id: one unit.
    traces = [_trace("a", "13734012:4", title=title), _trace("b", "99999999:4", title=title)]
    verification = build_units(traces, UnitKind.VERIFICATION)
    assert len(verification) == 2
    assert len(build_units(traces, UnitKind.RETRIEVAL)) == 1
    p = traces[0].passages[0]
    assert verification[0].id == unit_id(
        UnitKind.VERIFICATION, _CLAIM, (p,), _CITES, Verdict.SUPPORTED
    )
    assert verification[0].id != unit_id(
        UnitKind.VERIFICATION,
        _CLAIM,
        (Passage(passage_id="", rank=1, text=_TEXT, title=title),),
        _CITES,
        Verdict.SUPPORTED,
    )


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_verification_folder_of_ids_without_the_passage_id_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A reasoning run judged by the version whose verification ids held text and title but
    # not the passage id (unit_ids 3): with this version's ids, `judge` would judge its unit
    # again beside its old row and `attribute` find the row uncoded, exit 0. Refused.
    src = tmp_path / "t.jsonl"
    src.write_text(_trace("multivers", "13734012:4").model_dump_json() + "\n", encoding="utf-8")
    run = tmp_path / "run"
    assert _cli(["judge", "reasoning", "--from", str(src), "-o", str(run)], capsys)[0] == 0
    no_id = Passage(passage_id="", rank=1, text=_TEXT, title="ALDH1 in breast cancer")
    old = unit_id(UnitKind.VERIFICATION, _CLAIM, (no_id,), _CITES, Verdict.SUPPORTED)
    conn = sqlite3.connect(run / "journal.sqlite")
    with conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'unit_ids'").fetchone() == ("4",)
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'unit_ids'")
        ((new, text),) = conn.execute("SELECT unit_id, annotation FROM annotations").fetchall()
        assert new != old
        conn.execute(
            "UPDATE annotations SET unit_id = ?, annotation = ?", (old, text.replace(new, old))
        )
    conn.close()
    before = _tree(run)
    line = (
        f"{run} holds 1 verification unit(s) of this input coded under an earlier failcodes, "
        "whose unit id held less than the prompt now shows beside each passage (its text "
        "only, or no passage id: one passage shown two ways was judged once, as the first "
        "seen): move that folder aside (to keep its codes) and judge verification again (in "
        "a study: failcodes run); the response cache does not answer them "
        "from that run (its keys held that version's prompt templates)"
    )
    out = tmp_path / "out"
    for args in (
        ["judge", "reasoning", "--from", str(src), "-o", str(run)],
        ["judge", "reasoning", "--from", str(src), "-o", str(run), "--dry-run"],
        ["attribute", "--from", str(src), "--reasoning", str(run), "-o", str(out)],
    ):
        code, _, err = _cli(args, capsys)
        assert code == 2, args
        assert line in " ".join(err.split()) and len(err.strip().splitlines()) == 1, err
        assert _tree(run) == before and not out.exists()
