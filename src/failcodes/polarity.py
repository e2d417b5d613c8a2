"""What a column's name says its true (1) value means: an error flagged, or a correct claim.

``is_hallucination`` marks an error with true; ``is_correct`` marks no error. A reader that
takes true the other way round inverts every count (TP 0, FP 2, FN 2, TN 0 for TP 2, TN 2,
exit 0), so the names are read where a column's true is given a meaning: ``ingest``'s verdict
and ``has_error`` columns, and ``compare``'s FILE, whose 1 is an error flagged.
"""

from __future__ import annotations

import re

#: A column's name that says true flags an error (``is_hallucination``, ``has_error``).
#: A negated or ``un``/``in``-word of correctness (``is_nonfactual``, ``untrue``,
#: ``inconsistency_score``, ``ungrounded``, ``unverified``, ``invalid``), a ``risk`` score and
#: NLI's ``contra`` say it too: they matched :data:`CORRECT_FLAG` alone, so a verdict column
#: ``is_untrue`` read true as supported and ``nonfactual_prob`` its high scores as support
#: (TP 1, FP 2, FN 2, TN 1 for TP 2, FP 1, FN 1, TN 2, exit 0), and ``--map
#: is_nonfactual=has_error`` was refused with a rule that inverted it.
ERROR_FLAG = re.compile(
    r"hallucinat|error|wrong|incorrect|false|fake|unsupport|not_?supported|contradict|refut"
    r"|unfaithful|inaccura|mistake|fabricat|disagree|unsafe|(?<!p)harm|unacceptab|inappropriat|reject"
    r"|(?:non|not)[_ -]?(?:factual|true|grounded|verified|valid|faithful|consisten)"
    r"|unfactual|untrue|ungrounded|unverif|invalid|inconsisten|risk|contra(?![a-z])",
    re.IGNORECASE,
)

#: A column's name that says true marks a correct claim or sentence (``is_correct``).
CORRECT_FLAG = re.compile(
    r"correct|accura|support|factual|valid|true|faithful|consisten|verified|grounded",
    re.IGNORECASE,
)


#: Whole words of a column's name that say its true marks a sentence the clinician accepts
#: (``clinician_agrees``, ``is_safe``, ``acceptable``): words, as ``safety_concern`` or a
#: ``passage`` column say no such thing. ``--map clinician_agrees=has_error`` read every
#: sentence the clinician agreed with as an error (TP 0, FP 2, FN 2, TN 0 for TP 2, TN 2, exit
#: 0).
ACCEPT_WORDS = frozenset(
    {
        "agree",
        "agrees",
        "agreed",
        "safe",
        "acceptable",
        "accepted",
        "appropriate",
        "approved",
        "ok",
        "okay",
        "pass",
        "passed",
        "passes",
        "endorsed",
    }
)

#: Words that turn a name's correctness round (``not_correct``, ``not_safe``).
NEGATION_WORDS = frozenset({"not", "no", "non", "never"})


def says_correct(name: str) -> bool:
    """Whether ``name`` says its true marks a correct claim (and does not say an error)."""
    words = _words(name)
    if words & NEGATION_WORDS or ERROR_FLAG.search(name):
        return False
    return bool(CORRECT_FLAG.search(name)) or bool(words & ACCEPT_WORDS)


#: Whole words of a column's name that say its 1 marks a right answer (``gpt_correct``,
#: ``claudeAccuracy``). Words, not :data:`CORRECT_FLAG`'s parts: a system or reference column
#: is named freely, and ``y_true`` (scikit-learn's reference) or ``self_consistency`` (a
#: method) say nothing of what 1 means.
CORRECT_WORDS = frozenset(
    {
        "correct",
        "correctness",
        "accurate",
        "accuracy",
        "acc",
        "right",
        "supported",
        "factual",
        "faithful",
        "grounded",
        "verified",
    }
)


#: Words that make a correctness word name the reference itself: ``correct_label``,
#: ``right_answer`` (the correct label, whose 1 is whatever the labels' 1 is).
REFERENCE_WORDS = frozenset(
    {"label", "labels", "answer", "answers", "class", "verdict", "target", "gold", "truth"}
)


def _words(name: str) -> set[str]:
    """The words of a column's name, lower case (``gptCorrect``: gpt, correct)."""
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+", name)}


def names_correctness(name: str) -> bool:
    """Whether a word of ``name`` says its 1 marks a right answer (and none an error)."""
    words = _words(name)
    return (
        bool(words & CORRECT_WORDS) and not words & REFERENCE_WORDS and not ERROR_FLAG.search(name)
    )


#: Words that make an error word name its absence (``error_free``, ``without_error``,
#: ``low_risk``, ``harmless``): true there marks no error.
ABSENCE_WORDS = frozenset(
    {"free", "without", "absent", "absence", "lack", "lacks", "lacking", "zero", "low", "less"}
)


#: Words a name may hold around an error word and its turning word (``is_error_free``).
_FILLER_WORDS = frozenset({"is", "has", "was", "of", "any", "an", "a"})


def names_absent_error(name: str) -> bool:
    """Whether ``name`` plainly says its true marks no error: an error word turned once.

    ``no_error``, ``error_free``, ``without_error``, ``no_hallucination``, ``not_wrong``,
    ``harmless``, ``low_risk``: an error word (:data:`ERROR_FLAG`) with one negation or
    absence word (or its own ``less``/``free`` ending), nothing else but filler. ``--map
    no_error=has_error`` read every correct sentence as an error (TP 0, FP 2, FN 2, TN 0 for
    TP 2, TN 2, exit 0). A name with other words (``error_corrected``) says nothing plain.
    """
    words = _words(name)
    errors = {w for w in words if ERROR_FLAG.search(w)}
    turns = words & (NEGATION_WORDS | ABSENCE_WORDS)
    if not errors or words - errors - turns - _FILLER_WORDS:
        return False
    ending = any(w.endswith(("less", "free")) for w in errors)
    return len(turns) + ending == 1


def true_marks(name: str) -> bool | None:
    """What ``name`` plainly says its true value marks: True a correct sentence, False an error.

    True: a correctness word (:func:`names_correctness`, ``is_correct``) or an accepting one
    (``clinician_agrees``); False: :data:`ERROR_FLAG` (``has_error``, ``hallucinated``,
    ``not_supported``). None where the name says neither, names the reference
    (``correct_label``), or turns its word round or mixes both (``not_correct``,
    ``no_error``, ``error_free``, ``harmless``, ``error_corrected``): a reader must not
    assume which way such a column's true goes.
    """
    words = _words(name)
    if names_correctness(name) or (words & ACCEPT_WORDS and says_correct(name)):
        return None if words & NEGATION_WORDS else True
    if ERROR_FLAG.search(name) is None:
        return None
    rest = _words(ERROR_FLAG.sub(" ", name))  # 'not_supported' is the flag; 'no_error' is not
    turned = rest & (NEGATION_WORDS | ABSENCE_WORDS | CORRECT_WORDS | ACCEPT_WORDS)
    if turned or any(w.endswith(("less", "free")) or w.startswith("correct") for w in rest):
        return None
    return False


#: Words of a column's name that name a pipeline's verdict (not the answer, whose
#: correctness is the label: ``answer_correct``, ``model_correct`` are left alone).
VERDICT_WORDS = frozenset(
    {
        "verdict",
        "verdicts",
        "prediction",
        "predictions",
        "pred",
        "preds",
        "predicted",
        "verifier",
        "verification",
        "checker",
        "classifier",
        "detector",
        "nli",
    }
)

#: Words that judge a verdict: right or wrong, or a person agreeing with it.
JUDGING_WORDS = frozenset(
    {
        "correct",
        "correctness",
        "incorrect",
        "right",
        "wrong",
        "accurate",
        "accuracy",
        "acc",
        "agree",
        "agrees",
        "agreed",
        "agreement",
        "disagree",
        "disagrees",
        "disagreement",
        "ok",
        "valid",
        "invalid",
        "error",
        "mistake",
    }
)


def judges_a_verdict(name: str) -> bool:
    """Whether ``name`` says its values judge the pipeline's verdict (``verdict_correct``).

    Such a column says whether the verifier was right, not whether the sentence holds an
    error: a right ``refuted`` is an error, a right ``supported`` none. Read as the
    sentence's truth (``verdict_correct = no -> error``), a verifier right on every claim
    scored FP 3, TN 1 for TP 3, TN 1, exit 0.
    """
    words = _words(name)
    return bool(words & VERDICT_WORDS) and bool(words & JUDGING_WORDS)


#: Words of a column's name that name a pipeline stage before the verdict: a column judging
#: one (``retrieval_correct``, ``evidence_relevant``) says whether that stage went right,
#: not whether the sentence holds an error.
STAGE_WORDS = frozenset(
    [
        "retrieval",
        "retriever",
        "retrieved",
        "passage",
        "passages",
        "evidence",
        "citation",
        "citations",
        "decomposition",
        "decomposer",
        "decompose",
    ]
)

#: Words that judge a stage's output besides right or wrong.
_RELEVANCE_WORDS = frozenset(["relevant", "relevance", "irrelevant", "useful", "helpful"])


def judged_stage(name: str) -> str | None:
    """The stage ``name`` says its values judge (``retrieval_correct``: retrieval), or None.

    Read as the sentence's truth (``retrieval_correct = no -> error``), every sentence whose
    retrieval missed was a clinicians' error label, whatever its claims say.
    """
    words = _words(name)
    stage = sorted(words & STAGE_WORDS)
    if stage and words & (JUDGING_WORDS | _RELEVANCE_WORDS):
        return stage[0]
    return None
