"""ingest names the systems it found, and refuses one named like the reference (t14sys).

A ``reference`` key beside the systems' answers (docs/your-own-data.md section 4's shape) or
``--verdict-column gold`` became one more system with no word at ingest: metrics scored it as
a system (a perfect pipeline's row) at exit 0, and compare --traces refused it only later.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

_ROOT = Path(__file__).resolve().parents[1]
_ANSWERS = _ROOT / "docs" / "tutorial" / "answers-by-system.jsonl"


def _claims(verdicts: tuple[str, str]) -> dict[str, object]:
    """One answer's two claims: the first an expert's error, the second correct."""
    return {
        "claims": [
            {"claim": "x", "verdict": verdicts[0], "expert": "incorrect"},
            {"claim": "y", "verdict": verdicts[1], "expert": "correct"},
        ]
    }


def _keyed_args(src: Path, out: Path, labels: Path) -> list[str]:
    args = ["ingest", "generic", str(src), "-o", str(out), "--labels-out", str(labels)]
    for opt in ("rows=answers.*.claims[]", "sentence_ids=question", "label_scope=system"):
        args += ["--option", opt]
    for pair in ("#=question_id", "answers.*.claims#=sentence_id", "answers.*=system"):
        args += ["--map", pair]
    return [*args, "--label-rule", "expert = incorrect -> error"]


def test_a_reference_key_beside_the_systems_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # sysA misses the error (supported, supported); the reference agrees with the expert
    # (refuted, supported). Before: 4 traces, 2 systems, exit 0, and metrics gave the row
    # 'reference' TP 1, TN 1 (precision and recall 1/1) as a system beside sysA's FN 1, TN 1.
    src = tmp_path / "answers.jsonl"
    record = {
        "answers": {
            "sysA": _claims(("supported",) * 2),
            "reference": _claims(("refuted", "supported")),
        }
    }
    src.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, stdout, err = run_cli(_keyed_args(src, out, labels), capsys)
    assert code == 2 and not stdout
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:1, field 'system': system 'reference' is named like the "
        "reference or a consensus of the systems (holds 'reference'): metrics would score "
        "it as one more system; give the reference as labels (--label-rule on its column), or "
        "name the systems with --option systems=A,B (the others' rows are left out; name it "
        "to keep it)"
    ]
    assert not out.exists() and not labels.exists()
    # listed as a system on purpose: kept, and the first line names both
    code, stdout, _ = run_cli(
        [*_keyed_args(src, out, labels), "--option", "systems=sysA,reference"], capsys
    )
    assert code == 0
    assert stdout.splitlines()[0] == (
        f"wrote 4 traces -> {out} (2 system(s): reference 2, sysA 2; "
        "evidence not declared for reference, sysA: read as closed-book (no passages or "
        "retriever on any trace), their disagreements blamed on verification, never on "
        "retrieval; a retrieval pipeline whose passages were not kept? declare it: "
        "--evidence reference=retrieved)"
    )


def test_a_gold_verdict_column_is_refused_and_a_list_without_it_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "wide.csv"
    table.write_text(
        "claim_id,claim,gpt,claude,gold,label\n"
        "c1,a,refuted,supported,refuted,bad\nc2,b,supported,supported,supported,ok\n",
        encoding="utf-8",
    )
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(out), "--labels-out", str(labels)]
    for column in ("gpt", "claude", "gold"):
        args += ["--verdict-column", column]
    args += ["--label-rule", "label = bad -> error"]
    code, stdout, err = run_cli(args, capsys)
    assert code == 2 and not stdout and not out.exists() and not labels.exists()
    assert (
        err.strip()
        .splitlines()[0]
        .startswith(
            f"failcodes: error: {table}:2, field 'system': "
            "system 'gold' is named like the reference"
        )
    )
    # listed without it (t15red1): its rows are left out, said on the first line
    code, stdout, err = run_cli([*args, "--option", "systems=gpt,claude"], capsys)
    assert code == 0, err
    assert stdout.splitlines()[0] == (
        f"wrote 4 traces -> {out} (2 system(s): claude 2, gpt 2; left out, not among --option "
        "systems: gold 2; evidence not declared for claude, gpt: read as closed-book (no "
        "passages or "
        "retriever on any trace), their disagreements blamed on verification, never on "
        "retrieval; a retrieval pipeline whose passages were not kept? declare it: "
        "--evidence claude=retrieved)"
    )


def test_a_normal_answers_file_is_read_as_before_and_its_systems_said_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/your-own-data.md section 4: 9 claims, sysA 5, sysB 4 (sysB did not answer question 3)
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = [*_keyed_args(_ANSWERS, out, labels), "--verdict", "supported", "--evidence", "post-hoc"]
    for pair in ("answers.*.model=verifier", "question=", "cited=passages", "url=source"):
        args += ["--map", pair]
    code, stdout, _ = run_cli([*args, "--map", "snippet=text"], capsys)
    assert code == 0
    assert stdout.splitlines()[0] == f"wrote 9 traces -> {out} (2 system(s): sysA 5, sysB 4)"
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["system"] for r in rows].count("sysA") == 5 and len(rows) == 9
