"""The label rule's labels kept one per target as the rows come (not one per row).

``RuleLabels`` holds the first label of each claim and of each sentence until a row says
which level the table is (claim and sentence ids that differ); rows naming one target must
agree, and the first two that do not are the error, once every row was read. Expected
labels and messages are worked out by hand from the rows below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.errors import InputError
from failcodes.ingest import AdapterOptions, get_adapter
from failcodes.ingest.label_targets import RuleLabels
from failcodes.labels import Label

A, B = Path("a.jsonl"), Path("b.jsonl")


def _label(sentence: str, claim: str, error: bool) -> Label:
    return Label(sentence_id=sentence, claim_id=claim, has_error=error)


def test_sentence_labels_keep_the_first_of_each_sentence_without_its_claim() -> None:
    labels = RuleLabels("auto")
    for line, error in ((1, True), (2, True), (3, True)):  # three systems, one sentence
        labels.add(_label("s1", "s1", error), A, line)
    labels.add(_label("s2", "s2", False), A, 4)
    assert labels.level == "sentence" and labels.rows == 4
    assert [(lb.sentence_id, lb.claim_id, lb.has_error) for lb in labels.settle()] == [
        ("s1", None, True),
        ("s2", None, False),
    ]


def test_a_row_with_its_own_claim_id_makes_them_claim_labels() -> None:
    labels = RuleLabels("auto")
    labels.add(_label("s1", "s1", True), A, 1)
    # s1's two claims disagree: an error per sentence, none per claim
    labels.add(_label("s1", "s1:c2", False), A, 2)
    labels.claim_level()
    labels.add(_label("s1", "s1:c2", False), A, 3)  # another system, same claim, agrees
    assert labels.level == "claim"
    assert [(lb.claim_id, lb.has_error) for lb in labels.settle()] == [
        ("s1", True),
        ("s1:c2", False),
    ]


def test_the_first_disagreement_of_the_level_is_the_error() -> None:
    labels = RuleLabels("sentence")
    labels.add(_label("s1", "c1", True), A, 2)
    labels.add(_label("s2", "c3", False), A, 3)
    labels.add(_label("s1", "c2", False), B, 5)  # disagrees with a.jsonl:2
    labels.add(_label("s2", "c4", True), B, 6)  # disagrees too, but later
    labels.claim_level()  # a fixed level stays
    with pytest.raises(InputError) as info:
        labels.settle()
    assert str(info.value) == (
        "b.jsonl:5, field 'sentence_id': the label rule gives sentence 's1' has_error=false "
        "here but true at a.jsonl:2"
    )


def test_claim_labels_from_a_table_name_the_line_in_the_same_file(tmp_path: Path) -> None:
    rows = [
        {"system": "bm25", "claim_id": "c1", "sentence_id": "s1", "gold": "bad"},
        {"system": "dense", "claim_id": "c2", "sentence_id": "s1", "gold": "ok"},
        {"system": "dense", "claim_id": "c1", "sentence_id": "s1", "gold": "ok"},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(json.dumps({**r, "claim": "X.", "verdict": "supported"}) + "\n" for r in rows)
    )
    options = AdapterOptions(label_rule="gold = bad -> error")
    with pytest.raises(InputError) as info:
        get_adapter("generic").read([path], options)
    # c1 is an error on line 1 and not on line 3 (claim level: c2 differs from s1)
    assert str(info.value) == (
        f"{path}:3, field 'claim_id': the label rule gives claim 'c1' has_error=false here "
        "but true at line 1 (a row of system 'bm25' there, of 'dense' here: if each system's "
        "answer was labelled on its own, --option label_scope=system keeps each system's "
        "labels)"
    )
