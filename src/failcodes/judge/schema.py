"""The judge's answer format, generated from one codebook part.

Every dimension of the part is a required property holding ``rationale``, ``quote``, ``code``
(``codes`` for a multi-label dimension), ``leaves`` (where it has leaves) and ``uncertain``, in
that order; :func:`parse_answer` rejects a code outside the codebook, :func:`quote_checks`
checks each quote against the judged text. Why that order, and the schema version:
docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import html
import json
from typing import Any, TypedDict

from failcodes.annotations import DimensionEvidence
from failcodes.codebook import Dimension, Part
from failcodes.contract import FrozenModel
from failcodes.spelling import unseen_note
from failcodes.units import Unit, UnitKind

#: Name of the structured-output schema / tool sent to providers.
SCHEMA_NAME = "record_codes"

#: Version of the answer format: 1 = codes first, one rationale/quote/uncertain per unit;
#: 2 = one {rationale, quote, code, uncertain} record per dimension, rationale first.
ANSWER_SCHEMA_VERSION = 2


class AnswerError(ValueError):
    """A judge answer that does not fit the schema; the message is shown back to the judge."""


class NoAnswer(str):
    """A reply that holds no answer; the string says why (validation sends that back).

    A refusal, an answer cut off at the output token limit, a reply with no call of the
    answer tool. A ``str``, so any reader of a payload takes it as an answer that is not JSON.
    """


class DimensionAnswer(FrozenModel):
    """One dimension's (step's) validated answer."""

    rationale: str
    quote: str
    codes: tuple[str, ...]  # exactly one for a single-label dimension
    leaves: tuple[str, ...] = ()
    uncertain: bool = False

    @property
    def code(self) -> str:
        """The (first) code: the only one of a single-label dimension."""
        return self.codes[0]


class Answer(FrozenModel):
    """A validated judge answer: one record per dimension, in codebook order."""

    dimensions: dict[str, DimensionAnswer]
    multi_label: tuple[str, ...] = ()  # the dimensions answered with a set of codes

    @property
    def codes(self) -> dict[str, str]:
        """Dimension id -> its (first) code."""
        return {d: a.code for d, a in self.dimensions.items()}

    @property
    def code_sets(self) -> dict[str, list[str]]:
        """Multi-label dimension id -> every code given, in codebook order."""
        return {d: list(self.dimensions[d].codes) for d in self.multi_label}

    @property
    def leaves(self) -> dict[str, list[str]]:
        """Dimension id -> leaf ids (dimensions without leaves are left out)."""
        return {d: list(a.leaves) for d, a in self.dimensions.items() if a.leaves}

    @property
    def uncertain(self) -> bool:
        """True when the judge doubted at least one dimension."""
        return any(a.uncertain for a in self.dimensions.values())

    def uncertain_dimensions(self) -> list[str]:
        """The dimensions the judge flagged as uncertain."""
        return [d for d, a in self.dimensions.items() if a.uncertain]

    def payload(self) -> dict[str, Any]:
        """The answer in the schema's wire form (what a cache stores; parses back equal)."""
        out: dict[str, Any] = {}
        for dim, a in self.dimensions.items():
            record: dict[str, Any] = {"rationale": a.rationale, "quote": a.quote}
            if dim in self.multi_label:
                record["codes"] = list(a.codes)
            else:
                record["code"] = a.code
            if a.leaves:
                record["leaves"] = list(a.leaves)
            record["uncertain"] = a.uncertain
            out[dim] = record
        return out


def _leaf_ids(dim: Dimension) -> list[str]:
    return [leaf.id for s in dim.subcodes for leaf in s.leaves]


def dimension_schema(dim: Dimension) -> dict[str, Any]:
    """The record one dimension is answered with (rationale first, code after the quote)."""
    props: dict[str, Any] = {
        "rationale": {
            "type": "string",
            "description": f"One or two sentences: what in the judged text decides "
            f"{dim.label.lower()}, written before choosing the code.",
        },
        "quote": {
            "type": "string",
            "description": "A verbatim span copied from the judged text that supports this "
            "code, or an empty string if none applies.",
        },
    }
    if dim.multi_label:
        props["codes"] = {
            "type": "array",
            "items": {"type": "string", "enum": dim.code_ids()},
            "description": f"{dim.label}: every subcode id that applies (at least one; "
            f"`{dim.high_quality_code}` only alone).",
        }
    else:
        props["code"] = {
            "type": "string",
            "enum": dim.code_ids(),
            "description": f"{dim.label}: one subcode id.",
        }
    leaves = _leaf_ids(dim)
    if leaves:  # an empty enum is not a valid (strict) schema: leafless dims have no field
        props["leaves"] = {
            "type": "array",
            "items": {"type": "string", "enum": leaves},
            "description": f"Leaf codes of {dim.label} that apply (may be empty).",
        }
    props["uncertain"] = {
        "type": "boolean",
        "description": "True if you are not confident about this code.",
    }
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def answer_schema(part: Part) -> dict[str, Any]:
    """Return the JSON Schema of an answer for ``part`` (strict-mode compatible)."""
    return {
        "type": "object",
        "properties": {dim.id: dimension_schema(dim) for dim in part.dimensions},
        "required": [d.id for d in part.dimensions],
        "additionalProperties": False,
    }


def _dimension(dim: Dimension, value: object, problems: list[str]) -> DimensionAnswer | None:
    where = f"'{dim.id}'"
    if not isinstance(value, dict):
        problems.append(
            f"missing record for {where} (an object with rationale, quote, "
            f"{'codes' if dim.multi_label else 'code'}, uncertain)"
        )
        return None
    allowed = dim.code_ids()
    n_before = len(problems)
    if dim.multi_label:
        raw = value.get("codes")
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not raw:
            problems.append(f"{where} needs 'codes': a non-empty list of: {', '.join(allowed)}")
            codes: tuple[str, ...] = ()
        else:
            bad = [str(c) for c in raw if c not in allowed]
            if bad:
                problems.append(
                    f"{', '.join(repr(b) for b in bad)} not code(s) of {where} "
                    f"(one of: {', '.join(allowed)})"
                )
            chosen = {str(c) for c in raw}
            codes = tuple(c for c in allowed if c in chosen)  # codebook order, no repeats
            if dim.high_quality_code in chosen and len(chosen) > 1:
                problems.append(
                    f"{where}: the high-quality code '{dim.high_quality_code}' cannot be "
                    "combined with other codes"
                )
    else:
        code = value.get("code")
        if code is None:
            problems.append(f"missing code for {where} (one of: {', '.join(allowed)})")
        elif code not in allowed:
            problems.append(
                f"'{code}' is not a code of {where}{unseen_note(code)} (one of: "
                f"{', '.join(allowed)})"
            )
        codes = (str(code),)
    raw_leaves = value.get("leaves") or []
    leaves: tuple[str, ...] = ()
    if not isinstance(raw_leaves, list):
        problems.append(f"{where}: 'leaves' must be a list")
    else:
        allowed_leaves = set(_leaf_ids(dim))
        bad_leaves = [str(x) for x in raw_leaves if x not in allowed_leaves]
        if bad_leaves:
            problems.append(f"unknown leaf id(s) for {where}: {', '.join(bad_leaves)}")
        leaves = tuple(str(x) for x in raw_leaves)
    rationale = value.get("rationale")
    if not isinstance(rationale, str) or not rationale.strip():
        problems.append(f"{where}: 'rationale' must be a non-empty string")
    quote = value.get("quote", "")
    if not isinstance(quote, str):
        problems.append(f"{where}: 'quote' must be a string")
    uncertain = value.get("uncertain", False)
    if not isinstance(uncertain, bool):
        problems.append(f"{where}: 'uncertain' must be true or false")
    if len(problems) > n_before:
        return None
    return DimensionAnswer(
        rationale=str(rationale),
        quote=str(quote),
        codes=codes,
        leaves=leaves,
        uncertain=bool(uncertain),
    )


def parse_answer(part: Part, payload: object) -> Answer:
    """Validate a judge payload (a JSON string or an already decoded object).

    Raises :class:`AnswerError` with a message precise enough to send back to the judge.
    """
    if isinstance(payload, NoAnswer):
        raise AnswerError(str(payload))
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise AnswerError(f"the answer is not valid JSON ({exc.msg} at {exc.pos})") from None
        except RecursionError:  # '[' nested ~1000 deep: the run ended with a traceback
            raise AnswerError("the answer is not valid JSON (nested too deeply)") from None
    if not isinstance(payload, dict):
        raise AnswerError("the answer must be a JSON object")
    problems: list[str] = []
    dims: dict[str, DimensionAnswer] = {}
    for dim in part.dimensions:
        answer = _dimension(dim, payload.get(dim.id), problems)
        if answer is not None:
            dims[dim.id] = answer
    extra = sorted(set(payload) - {d.id for d in part.dimensions})
    if extra:
        problems.append(f"unknown dimension(s): {', '.join(map(str, extra))}")
    if problems:
        raise AnswerError("; ".join(problems))
    return Answer(
        dimensions=dims, multi_label=tuple(d.id for d in part.dimensions if d.multi_label)
    )


# --------------------------------------------------------------------------- quote checks

_QUOTE_CHARS = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
    }
)


def normalise(text: str) -> str:
    """Whitespace collapsed, case folded, curly quotes made straight (for quote checks)."""
    return " ".join(text.translate(_QUOTE_CHARS).split()).casefold()


def quote_found(quote: str, judged_texts: list[str]) -> bool | None:
    """Return whether ``quote`` occurs verbatim in the texts, up to :func:`normalise`.

    ``None`` when the quote is empty (nothing to check). The quote is also compared after
    undoing HTML escaping, since judged texts are shown to the judge escaped.
    """
    if not quote.strip():
        return None
    haystack = normalise("\n".join(judged_texts))
    candidates = {normalise(quote), normalise(html.unescape(quote))}
    return any(c in haystack for c in candidates)


def judged_texts(unit: Unit) -> list[str]:
    """What a quote must come from: the passage (retrieval); the reasoning and passages."""
    texts = [p.text for p in unit.passages]
    if unit.kind is UnitKind.VERIFICATION and unit.reasoning:
        texts.append(unit.reasoning)
    return texts


def quote_checks(answer: Answer, unit: Unit) -> dict[str, bool | None]:
    """Dimension id -> whether its quote occurs in the unit's judged text (None: no quote).

    Each distinct quote is checked once: dimensions often quote the same span (the offline
    baseline always does), and each check normalises the whole judged text (issue 30).
    """
    texts = judged_texts(unit)
    found: dict[str, bool | None] = {}
    for a in answer.dimensions.values():
        if a.quote not in found:
            found[a.quote] = quote_found(a.quote, texts)
    return {d: found[a.quote] for d, a in answer.dimensions.items()}


class AnswerFields(TypedDict):
    """The :class:`~failcodes.annotations.Annotation` fields a scored answer fills."""

    codes: dict[str, str]
    code_sets: dict[str, list[str]]
    leaves: dict[str, list[str]]
    evidence: dict[str, DimensionEvidence]
    quote_found: bool | None
    uncertain: bool


def annotation_fields(answer: Answer, unit: Unit) -> AnswerFields:
    """Codes, per-dimension evidence (with quote checks) and unit-level summaries.

    The unit's ``quote_found`` is False when any dimension's quote was not found, True when
    every checked quote was, None when no dimension quoted anything; ``uncertain`` is true
    when any dimension is.
    """
    checks = quote_checks(answer, unit)
    evidence = {
        d: DimensionEvidence(
            rationale=a.rationale,
            quote=a.quote or None,
            quote_found=checks[d],
            uncertain=a.uncertain,
        )
        for d, a in answer.dimensions.items()
    }
    checked = [c for c in checks.values() if c is not None]
    return AnswerFields(
        codes=answer.codes,
        code_sets=answer.code_sets,
        leaves=answer.leaves,
        evidence=evidence,
        quote_found=all(checked) if checked else None,
        uncertain=answer.uncertain,
    )
