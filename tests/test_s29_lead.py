"""Session 29, lead: the report's metrics notes for labels that list the errors alone."""

from __future__ import annotations

from failcodes.report.tables import subset_notes


def _row(system: str, tp: int, fp: int, fn: int, tn: int, unlabelled: int) -> dict[str, object]:
    return {
        "system": system,
        "level": "sentence",
        "mapping": "refuted",
        "n": tp + fp + fn + tn,
        "n_unlabelled": unlabelled,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
    }


def test_the_report_says_labels_listing_the_errors_alone() -> None:
    # 976142e's shape: 6 sentences, the clinicians listed the 2 errors, the system refutes all
    # 6: the labelled subset gives TP 2 (P 100%); read as correct, the other 4 are FP 4
    # (P 2/6 = 33.3%). metrics and disagreements said it on their first line; the report's
    # metrics section said only "labels cover 2 of 6 sentences".
    subset, errors = subset_notes([_row("A", 2, 0, 0, 0, 4)])
    assert subset.startswith(
        "A: labels cover 2 of 6 sentences; precision, recall and F1 hold for the labelled "
        "subset only"
    )
    assert errors == (
        "No label counted says a sentence is correct (every one is an error): a list of the "
        "errors alone? then the other 4 are correct, not unknown, and precision and accuracy "
        "here count no false alarm (100% for a system that flags every sentence); give the "
        "others a label, has_error false."
    )


def test_one_label_saying_correct_is_no_list_of_errors() -> None:
    # B's TN 1 is a sentence labelled correct: the labels are a subset, not a list of errors
    notes = subset_notes([_row("A", 2, 0, 0, 0, 4), _row("B", 1, 0, 1, 1, 3)])
    assert len(notes) == 2
    assert not any("list of the errors alone" in n for n in notes)
    # every unit labelled: nothing to say, even with no correct label
    assert subset_notes([_row("A", 2, 0, 0, 0, 0)]) == []
