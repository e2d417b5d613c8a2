"""A model's JSON answer in text (both providers: an answer that came as text, not a tool call).

Strict JSON (see :func:`failcodes.jsonio.parse_json`), with the two wrappers servers of local
reasoning models put around a structured answer taken off; anything else stays text.
"""

from __future__ import annotations

import json
import re

from failcodes.errors import FailcodesError
from failcodes.jsonio import parse_json

_THOUGHT = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL)
_FENCED = re.compile(r"\A\s*```(?:json)?[ \t]*\n(.*?)\n?```\s*\Z", re.DOTALL)


def _strict(text: str) -> object:
    """``text`` parsed as one JSON value, or :data:`_NOT_JSON` (strict: see jsonio.parse_json).

    A model's answer is untrusted input: ``[`` nested 100,000 deep raised RecursionError (a
    traceback that ended the judge run); NaN and repeated keys were taken.
    """
    try:
        return parse_json(text)
    except FailcodesError:
        return _NOT_JSON


_NOT_JSON = object()


def json_payload(text: str) -> object:
    """The JSON answer in ``text``, else ``text`` itself (validation then rejects it).

    Besides plain JSON, the two wrappers OpenAI-compatible servers of local reasoning models
    put around a structured answer are taken off: a leading ``<think>...</think>`` block and
    one Markdown code fence around the whole rest. Anything else stays text, so a wrapped
    but malformed answer (only a thought, an unclosed fence, two JSON values) is still sent
    back as invalid.
    """
    value = _strict(text)
    if value is not _NOT_JSON:
        return value
    rest = _THOUGHT.sub("", text, count=1)
    fenced = _FENCED.match(rest)
    candidate = fenced.group(1) if fenced else rest
    if candidate is text:
        return text
    value = _strict(candidate)
    return text if value is _NOT_JSON else value


def body_json(text: str) -> object:
    """A reply body the SDK gave as text (not a JSON content type), decoded if it is JSON.

    A compatible server's JSON under another content type is its reply; anything else (an
    HTML page) stays text, for the provider to name as a body that is not JSON.
    """
    try:
        return json.loads(text)
    except ValueError:
        return text
