"""Follow-ups of session 19 (t19fix): refusals that name their way through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import exit_code, run_cli


def _jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _row(question: str, claim: str, text: str) -> dict[str, str]:
    return {
        "system": "A",
        "question_id": question,
        "sentence_id": "s1",
        "claim_id": claim,
        "claim": text,
        "sentence": text,
        "verdict": "refuted",
    }


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, _, err = run_cli(list(argv), capsys)
    assert code == 2
    return err.strip()


def test_claim_ids_numbered_within_each_question_name_the_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # q1/c1 and q2/c1: two claims, one id; the refusal named no way through (t19red1)
    path = _jsonl(
        tmp_path / "a.jsonl",
        [_row("q1", "c1", "Aspirin cures flu."), _row("q2", "c1", "Zinc helps colds.")],
    )
    out = tmp_path / "o.jsonl"
    way = (
        "duplicate (system, claim_id) = ('A', 'c1'); first at line 1; claim ids numbered "
        "within each question? give each claim its own id: --map claim_id= --option ids=claim "
        "--option sentence_ids=question"
    )
    assert _error(capsys, "ingest", "generic", str(path), "-o", str(out)) == (
        f"failcodes: error: {path}:2, field 'claim_id': {way}"
    )
    assert not out.exists()
    # the same rows as a trace file given to metrics: the same way, and where to give it
    assert _error(capsys, "metrics", "--traces", str(path), "--labels", str(path)) == (
        f"failcodes: error: {path}:2, field 'claim_id': {way} (failcodes ingest generic)"
    )
    # the way named works: two claims, two ids
    assert exit_code(*["ingest", "generic", str(path), "-o", str(out), "--map", "claim_id=",
                 "--option", "ids=claim", "--option", "sentence_ids=question"]) == 0  # fmt: skip
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def test_two_files_under_one_system_name_name_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one file per system, both given one name (t19out: two medscore files both 'medscore')
    one = _jsonl(tmp_path / "b1.jsonl", [_row("q1", "c1", "Aspirin cures flu.")])
    two = _jsonl(tmp_path / "b2.jsonl", [_row("q1", "c1", "Aspirin cures flu.")])
    way = "a file per system under one system name? ingest each file apart with --system NAME"
    out = tmp_path / "o.jsonl"
    assert _error(capsys, "ingest", "generic", str(one), str(two), "-o", str(out)) == (
        f"failcodes: error: {two}:1, field 'claim_id': duplicate (system, claim_id) = "
        f"('A', 'c1'); first at {one}:1; {way}"
    )
    assert not out.exists()
    assert _error(
        capsys, "metrics", "--traces", str(one), "--traces", str(two), "--labels", str(one)
    ) == (
        f"failcodes: error: {two}:1, field 'claim_id': duplicate (system, claim_id) = "
        f"('A', 'c1'); first at {one}:1; {way}"
    )
