"""Annotation JSON lines that need no model: decoded and checked by msgspec (issue 30).

:func:`vouched` decodes a line into an :class:`AnnotationLine` (the model's fields, names,
order and enums) and returns it only where the strict reader would accept the line with these
very values; any other line is ``None``, for the caller's exact reader. The checks and why:
docs/architecture.md (``annotationlines.vouched``); tests/test_annotationlines.py compares the
two readers on generated and mutated lines.
"""

from __future__ import annotations

import re
from datetime import datetime

import msgspec

from failcodes.annotations import Annotation, CodebookRef, CoderKind, Status, code_set_of
from failcodes.codebook import UnitKind
from failcodes.jsonio import keys_vouched


class RefLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """:class:`~failcodes.annotations.CodebookRef`'s fields."""

    name: str
    version: int
    hash: str

    def __str__(self) -> str:
        return str(CodebookRef(name=self.name, version=self.version, hash=self.hash))


class EvidenceLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """:class:`~failcodes.annotations.DimensionEvidence`'s fields."""

    rationale: str
    quote: str | None
    quote_found: bool | None
    uncertain: bool


class UsageLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """:class:`~failcodes.annotations.Usage`'s fields."""

    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float


class AnnotationLine(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False, omit_defaults=True
):
    """:class:`~failcodes.annotations.Annotation`'s fields (``created_at`` as its text).

    Every field required but ``judge_shown`` and ``shown_judge`` (the model writes them only
    when true, or known), unknown ones refused (see the module docstring).
    """

    unit_id: str
    unit_kind: UnitKind
    codebook: RefLine
    coder: str
    coder_kind: CoderKind
    status: Status
    reason: str | None
    codes: dict[str, str]
    code_sets: dict[str, list[str]]
    leaves: dict[str, list[str]]
    evidence: dict[str, EvidenceLine]
    rationale: str | None
    quote: str | None
    quote_found: bool | None
    proposal: str | None
    uncertain: bool
    usage: UsageLine
    lead_time_s: float | None
    created_at: str
    judge_shown: bool = False
    shown_judge: str | None = None

    def code_set(self, dimension: str) -> tuple[str, ...]:
        """See :meth:`Annotation.code_set`."""
        return code_set_of(self.codes, self.code_sets, dimension)


#: An annotation as a reader gives it: a vouched line's struct or the exact reader's model.
AnnotationRead = Annotation | AnnotationLine

decode_line = msgspec.json.Decoder(AnnotationLine).decode
"""The :class:`AnnotationLine` of a line (``msgspec.DecodeError``), vouched for or not."""

#: An escaped surrogate (the strict reader refuses a lone one), an escaped backslash (it could
#: end a string just before a quote and colon, miscounting keys).
_UNSURE = re.compile(r"\\u[dD][89a-fA-F]|\\\\")
_UNSURE_BYTES = re.compile(_UNSURE.pattern.encode())
_CREATED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|\+00:00)")
#: Keys of a line besides those of its dicts: its own, its codebook's and its usage's.
_FIXED = sum(len(s.__struct_fields__) for s in (AnnotationLine, RefLine, UsageLine))
_PER_EVIDENCE = 1 + len(EvidenceLine.__struct_fields__)
#: String values of a line whose optional texts are all given: unit_id, unit_kind, coder,
#: coder_kind, status, created_at, the codebook's name and hash; reason, rationale, quote,
#: proposal (its dicts' values are counted apart).
_TEXTS = 12


def vouched(line: bytes | str) -> AnnotationLine | None:
    """The line's :class:`AnnotationLine`, or None: the exact reader's turn (module doc)."""
    if isinstance(line, bytes):
        backslash = b"\\" in line
        if backslash and _UNSURE_BYTES.search(line) is not None:
            return None
    else:
        backslash = "\\" in line
        if backslash and _UNSURE.search(line) is not None:
            return None
    try:
        ann = decode_line(line)
    except msgspec.DecodeError:
        return None
    codes, code_sets, leaves, evidence = ann.codes, ann.code_sets, ann.leaves, ann.evidence
    for dim, chosen in code_sets.items():  # Annotation's validator
        if not chosen or codes.get(dim) != chosen[0] or len(set(chosen)) != len(chosen):
            return None
    created = ann.created_at
    if _CREATED.fullmatch(created) is None:
        return None
    try:
        datetime.fromisoformat(created)  # a real day and time
    except ValueError:
        return None
    keys = (
        _FIXED
        - (not ann.judge_shown)
        - (ann.shown_judge is None)
        + len(codes)
        + len(code_sets)
        + len(leaves)
        + _PER_EVIDENCE * len(evidence)
    )
    strings = None  # counted only where keys_vouched can use them (no backslash)
    if not backslash:
        strings = _TEXTS - (ann.reason, ann.rationale, ann.quote, ann.proposal).count(None)
        strings += ann.shown_judge is not None
        strings += len(codes) + 2 * len(evidence)
        if code_sets:
            strings += sum(map(len, code_sets.values()))
        if leaves:
            strings += sum(map(len, leaves.values()))
        for given in evidence.values():
            strings -= given.quote is None
    return ann if keys_vouched(line, keys, strings) else None


_encode = msgspec.json.Encoder().encode
#: ``created_at`` as pydantic dumps a UTC time: whole seconds, or six digits of microseconds
#: (not all zero), then ``Z``.
_DUMPED_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.(?!000000)\d{6})?Z")
#: msgspec writes a float of this size or more as ``1e16``, pydantic as ``1e+16``.
_EXPONENT = 1e16


def is_dumped(line: AnnotationLine, text: str) -> bool:
    """Whether ``text``, vouched for as ``line``, is ``Annotation.model_dump_json()`` of it.

    Then the text is the model's JSON as it stands (the judge's annotations.jsonl line of a
    journal row, without the model). msgspec encodes the struct as pydantic dumps the model
    (fields in the model's order, compact, strings escaped alike) except floats of 1e16 or
    more and ``created_at`` (kept as text here): those must be in pydantic's form, and the
    text must be the struct's encoding, byte for byte. tests/test_annotationlines.py checks
    it against pydantic on generated lines.
    """
    if _DUMPED_TIME.fullmatch(line.created_at) is None:
        return False
    usage, lead = line.usage, line.lead_time_s
    if not (abs(usage.cost_usd) < _EXPONENT and abs(usage.latency_s) < _EXPONENT):
        return False
    if lead is not None and not abs(lead) < _EXPONENT:
        return False
    return _encode(line) == text.encode("utf-8")
