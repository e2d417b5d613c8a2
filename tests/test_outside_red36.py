"""Shapes from i36red's outside check (issue 30): each failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

# Answers keyed by system, each claim its own sentence (numbered per answer), a verifier's
# verdict and an expert's label inside each system's answer. The two systems share question
# ids and, in q1 and q2, the same claim text at the same place; q3's first sentence is
# "Statins..." in sysA's answer and "Metformin..." in sysB's: two sentences, one id.
ANSWERS = [
    {
        "id": "q1",
        "answers": {
            "sysA": {
                "claims": [
                    {
                        "claim": "Low-dose aspirin prevents pre-eclampsia.",
                        "v": "Supported",
                        "x": "ok",
                    },
                    {
                        "claim": "Aspirin is safe at any dose in pregnancy.",
                        "v": "Refuted",
                        "x": "bad",
                    },
                ]
            },
            "sysB": {
                "claims": [
                    {"claim": "Low-dose aspirin prevents pre-eclampsia.", "v": "Refuted", "x": "ok"}
                ]
            },
        },
    },
    {
        "id": "q2",
        "answers": {
            "sysA": {
                "claims": [{"claim": "Zinc cures a cold in a day.", "v": "Supported", "x": "bad"}]
            },
            "sysB": {
                "claims": [
                    {"claim": "Zinc cures a cold in a day.", "v": "Refuted", "x": "bad"},
                    {"claim": "Vitamin C does not prevent colds.", "v": "Supported", "x": "ok"},
                ]
            },
        },
    },
    {
        "id": "q3",
        "answers": {
            "sysA": {
                "claims": [{"claim": "Statins lower LDL cholesterol.", "v": "Refuted", "x": "ok"}]
            },
            "sysB": {
                "claims": [
                    {
                        "claim": "Metformin is first-line for type 2 diabetes.",
                        "v": "Supported",
                        "x": "ok",
                    }
                ]
            },
        },
    },
]


def _ingest(tmp_path: Path, *extra: str) -> list[str]:
    src = tmp_path / "answers.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in ANSWERS))
    return [
        *("ingest", "generic", str(src), "-o", str(tmp_path / "t.jsonl")),
        *("--labels-out", str(tmp_path / "l.jsonl"), "--option", "rows=answers.*.claims[]"),
        *("--option", "sentence_ids=question", "--map", "id=question_id"),
        *("--map", "answers.*.claims#=sentence_id", "--map", "answers.*=system"),
        *("--map", "v=verdict", "--label-rule", "x = bad -> error", *extra),
    ]


@pytest.mark.parametrize("sentence_text", [False, True])
def test_answers_keyed_by_system_are_not_merged_into_shared_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sentence_text: bool
) -> None:
    """Without label_scope=system the 8 labelled rows became 5 shared labels, exit 0.

    The labels agreed wherever an id recurred, so nothing was refused, and sysB was scored
    on sysA's "Aspirin is safe at any dose" (q1:2, an error it never wrote: one more FN) and
    its q3:1 "Metformin" sentence under sysA's "Statins" label: TP 1 FP 1 FN 1 TN 2, recall
    0.5, where its own four sentences give recall 1.0. Now the second text of q3:1 is refused.
    """
    extra = ("--map", "claim=claim", "--map", "claim=sentence") if sentence_text else ()
    code, _, err = run_cli(_ingest(tmp_path, *extra), capsys)
    assert code == 2
    assert err.count("\n") == 1
    assert "answers.jsonl:3, field 'sentence_id': sentence 'q3:1' reads 'Metformin" in err
    assert "--option label_scope=system" in err
    assert not (tmp_path / "l.jsonl").exists()


def test_answers_keyed_by_system_score_by_hand_with_label_scope_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each system on its own answer (refuted mapping), counted by hand from ANSWERS.

    sysA: q1:1 ok/Supported TN, q1:2 bad/Refuted TP, q2:1 bad/Supported FN, q3:1 ok/Refuted
    FP -> P 1/2, R 1/2, F1 1/2. sysB: q1:1 ok/Refuted FP, q2:1 bad/Refuted TP, q2:2
    ok/Supported TN, q3:1 ok/Supported TN -> P 1/2, R 1/1, F1 2/3.
    """
    code, _, err = run_cli(_ingest(tmp_path, "--option", "label_scope=system"), capsys)
    assert code == 0, err
    code, out, err = run_cli(
        [
            *("metrics", "--traces", str(tmp_path / "t.jsonl")),
            *("--labels", str(tmp_path / "l.jsonl"), "-m", "refuted", "--format", "json"),
        ],
        capsys,
    )
    assert code == 0, err
    rows = {r["system"]: r for r in json.loads(out)}
    assert [
        (rows[s]["tp"], rows[s]["fp"], rows[s]["fn"], rows[s]["tn"]) for s in ("sysA", "sysB")
    ] == [
        (1, 1, 1, 1),
        (1, 1, 0, 2),
    ]
    assert rows["sysB"]["recall"] == pytest.approx(1.0)
    assert rows["sysB"]["f1"] == pytest.approx(2 / 3)


def test_shared_on_purpose_keeps_one_label_per_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--option label_scope=shared says the ids are one sentence whatever the texts: 5 labels."""
    code, _, err = run_cli(_ingest(tmp_path, "--option", "label_scope=shared"), capsys)
    assert code == 0, err
    assert len((tmp_path / "l.jsonl").read_text().splitlines()) == 5
