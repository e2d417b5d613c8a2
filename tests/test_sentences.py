"""The documented sentence-splitting rule, on hand-made texts."""

from __future__ import annotations

from failcodes.sentences import answer_sentences, split_sentences


def texts(text: str) -> list[str]:
    spans = split_sentences(text)
    for s in spans:
        assert text[s.start : s.end] == s.text  # offsets are exact
    return [s.text for s in spans]


def test_abbreviations_initials_decimals_and_lowercase() -> None:
    text = "Dr. Smith prescribed 2.5 mg, e.g. twice daily. J. Doe et al. agree. It works!"
    assert texts(text) == [
        "Dr. Smith prescribed 2.5 mg, e.g. twice daily.",
        "J. Doe et al. agree.",
        "It works!",
    ]


def test_newlines_always_split_and_blank_lines_vanish() -> None:
    text = "Here's why:\n\n* **Sleep:** It matters. Really?\n* Next item\n   \nEnd"
    assert texts(text) == [
        "Here's why:",
        "* **Sleep:** It matters.",
        "Really?",
        "* Next item",
        "End",
    ]


def test_closing_quotes_stay_with_their_sentence() -> None:
    assert texts('He said "stop." Then left.') == ['He said "stop."', "Then left."]
    assert texts("(See below.) Fine") == ["(See below.)", "Fine"]


def test_offsets_and_ids() -> None:
    answer = "  One.  Two?\nThree"
    sents = answer_sentences("q1", answer, question="Why?")
    assert [(s.sentence_id, s.index, s.start, s.end, s.text) for s in sents] == [
        ("q1:s0", 0, 2, 6, "One."),
        ("q1:s1", 1, 8, 12, "Two?"),
        ("q1:s2", 2, 13, 18, "Three"),
    ]
    assert all(s.question == "Why?" for s in sents)
