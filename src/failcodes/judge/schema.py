"""The judge's answer format, generated from one codebook part.

Every dimension (step) of the part becomes a required property whose value is an enum of
that dimension's subcode ids, so a code outside the codebook is rejected both by the
provider's structured-output mechanism and again by :func:`parse_answer`.
"""

from __future__ import annotations

import html
import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from failcodes.codebook import Part

#: Name of the structured-output schema / tool sent to providers.
SCHEMA_NAME = "record_codes"


class AnswerError(ValueError):
    """A judge answer that does not fit the schema; the message is shown back to the judge."""


class Answer(BaseModel):
    """A validated judge answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    codes: dict[str, str]
    leaves: dict[str, list[str]] = {}
    rationale: str
    quote: str
    uncertain: bool = False


def _has_leaves(part: Part) -> bool:
    return any(s.leaves for d in part.dimensions for s in d.subcodes)


def answer_schema(part: Part) -> dict[str, Any]:
    """Return the JSON Schema of an answer for ``part`` (strict-mode compatible)."""
    code_props: dict[str, Any] = {}
    for dim in part.dimensions:
        code_props[dim.id] = {
            "type": "string",
            "enum": dim.code_ids(),
            "description": f"{dim.label}: one subcode id",
        }
    props: dict[str, Any] = {
        "codes": {
            "type": "object",
            "properties": code_props,
            "required": [d.id for d in part.dimensions],
            "additionalProperties": False,
        },
        "rationale": {
            "type": "string",
            "description": "Two or three sentences justifying the codes.",
        },
        "quote": {
            "type": "string",
            "description": "A verbatim span copied from the judged text that supports the "
            "codes, or an empty string if none applies.",
        },
        "uncertain": {
            "type": "boolean",
            "description": "True if you are not confident about at least one code.",
        },
    }
    required = ["codes", "rationale", "quote", "uncertain"]
    if _has_leaves(part):
        leaf_props: dict[str, Any] = {}
        for dim in part.dimensions:
            ids = [leaf.id for s in dim.subcodes for leaf in s.leaves]
            if ids:  # an empty enum is not a valid (strict) schema: leafless dims are left out
                leaf_props[dim.id] = {
                    "type": "array",
                    "items": {"type": "string", "enum": ids},
                    "description": f"Leaf codes of {dim.label} that apply (may be empty).",
                }
        props["leaves"] = {
            "type": "object",
            "properties": leaf_props,
            "required": list(leaf_props),
            "additionalProperties": False,
        }
        required.append("leaves")
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


def parse_answer(part: Part, payload: object) -> Answer:
    """Validate a judge payload (a JSON string or an already decoded object).

    Raises :class:`AnswerError` with a message precise enough to send back to the judge.
    """
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise AnswerError(f"the answer is not valid JSON ({exc.msg} at {exc.pos})") from None
    if not isinstance(payload, dict):
        raise AnswerError("the answer must be a JSON object")
    codes = payload.get("codes")
    if not isinstance(codes, dict):
        raise AnswerError("'codes' must be an object mapping each dimension id to a subcode id")
    problems: list[str] = []
    clean: dict[str, str] = {}
    for dim in part.dimensions:
        value = codes.get(dim.id)
        allowed = dim.code_ids()
        if value is None:
            problems.append(f"missing code for '{dim.id}' (one of: {', '.join(allowed)})")
        elif value not in allowed:
            problems.append(f"'{value}' is not a code of '{dim.id}' (one of: {', '.join(allowed)})")
        else:
            clean[dim.id] = str(value)
    extra = sorted(set(codes) - {d.id for d in part.dimensions})
    if extra:
        problems.append(f"unknown dimension(s): {', '.join(map(str, extra))}")
    leaves: dict[str, list[str]] = {}
    raw_leaves = payload.get("leaves") or {}
    if not isinstance(raw_leaves, dict):
        problems.append("'leaves' must be an object")
    else:
        for dim in part.dimensions:
            got = raw_leaves.get(dim.id) or []
            allowed_leaves = {leaf.id for s in dim.subcodes for leaf in s.leaves}
            bad = [x for x in got if x not in allowed_leaves]
            if bad:
                problems.append(f"unknown leaf id(s) for '{dim.id}': {', '.join(map(str, bad))}")
            elif got:
                leaves[dim.id] = [str(x) for x in got]
    rationale = payload.get("rationale")
    if not isinstance(rationale, str) or not rationale.strip():
        problems.append("'rationale' must be a non-empty string")
    quote = payload.get("quote", "")
    if not isinstance(quote, str):
        problems.append("'quote' must be a string")
    uncertain = payload.get("uncertain", False)
    if not isinstance(uncertain, bool):
        problems.append("'uncertain' must be true or false")
    if problems:
        raise AnswerError("; ".join(problems))
    return Answer(
        codes=clean,
        leaves=leaves,
        rationale=str(rationale),
        quote=str(quote),
        uncertain=bool(uncertain),
    )


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def quote_found(quote: str, judged_texts: list[str]) -> bool | None:
    """Return whether ``quote`` occurs verbatim (up to whitespace and case) in the texts.

    ``None`` when the quote is empty (nothing to check). The quote is also compared after
    undoing HTML escaping, since judged texts are shown to the judge escaped.
    """
    if not quote.strip():
        return None
    haystack = _normalise("\n".join(judged_texts))
    candidates = {_normalise(quote), _normalise(html.unescape(quote))}
    return any(c in haystack for c in candidates)
