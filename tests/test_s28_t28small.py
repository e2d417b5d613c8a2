"""Session 28, helper t28small: a MedExpert span's edge slip, the API's refusals in its words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def _medexpert(path: Path, tasks: list[tuple[str, str, list[tuple[int, int]]]]) -> Path:
    """A JSL export: (title, response, [(start, end) of a Severe span]) per task."""
    rows = [
        {
            "id": i,
            "data": {"title": title, "question": "What does aspirin do?", "response": response},
            "completions": [
                {
                    "created_username": "dr_a",
                    "result": [
                        {
                            "id": f"x{i}-{k}",
                            "from_name": "factuality_label",
                            "to_name": "response",
                            "type": "labels",
                            "value": {
                                "start": start,
                                "end": end,
                                "text": response[start:end],
                                "labels": ["Severe"],
                            },
                        }
                        for k, (start, end) in enumerate(spans)
                    ],
                }
            ],
        }
        for i, (title, response, spans) in enumerate(tasks)
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_a_span_slipping_a_letter_or_two_into_a_sentence_does_not_label_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'n. Aspirin cures cancer. Ta': the selection's edges hold 1 and 2 letters of s0 and s2."""
    response = "Aspirin relieves pain. Aspirin cures cancer. Take it with food."
    start, end = response.index("n. Aspirin cures"), response.index("ke it")
    assert response[start:end] == "n. Aspirin cures cancer. Ta"
    # a span inside a sentence is read however short: 'mg' (2 letters) labels its sentence
    dose = "Take 500 mg daily. Rest well at night."
    export = _medexpert(
        tmp_path / "me.json",
        [("T-q1", response, [(start, end)]), ("T-q2", dose, [(9, 11)])],
    )
    assert dose[9:11] == "mg"
    labels = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "medexpert", str(export), "-o", str(labels)], capsys)
    assert code == 0, err
    got = {
        lb["sentence_id"]: lb["has_error"]
        for lb in map(json.loads, labels.read_text(encoding="utf-8").splitlines())
    }
    # by hand: s0 'Aspirin relieves pain.' (19 letters) gets 'n.' = 1 letter; s2 'Take it with
    # food.' (14 letters) gets 'Ta' = 2; the span's other 17 letters are s1's. main: all three.
    assert got == {
        "T-q1:s0": False,
        "T-q1:s1": True,
        "T-q1:s2": False,
        "T-q2:s0": True,
        "T-q2:s1": False,
    }
    assert (
        "2 sentence(s) an error span touched with its edge alone, at most 2 letters or digits "
        "of theirs (first: T-q1:s0, 'n.' of 'Aspirin relieves pain.')"
    ) in err
