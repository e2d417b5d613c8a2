"""Prompt templates and their rendering.

The system prompt holds the instructions and the codebook part; it depends only on the
codebook, so it is a byte-stable prefix that providers can cache. The judged texts come last,
in the user message, between ``<judged_material>`` delimiters and HTML-escaped (``<``, ``>``,
``&``, quotes), so a passage cannot close the delimiter or pose as instructions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from failcodes.codebook import Codebook
from failcodes.judge.pricing import token_chars
from failcodes.judge.schema import ANSWER_SCHEMA_VERSION, SCHEMA_NAME
from failcodes.traces import Passage
from failcodes.units import Unit, UnitKind

if TYPE_CHECKING:  # imported where a template is rendered (`judge --help` renders none)
    import jinja2

_TEMPLATES = ("system.j2", "retrieval.j2", "verification.j2", "invalid.j2")


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt: the cacheable system prefix and the per-unit user message."""

    system: str
    user: str


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("failcodes.judge", "prompts"),
        autoescape=jinja2.select_autoescape(
            enabled_extensions=(), default_for_string=False, default=False
        ),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
    )


@lru_cache(maxsize=1)
def _escaping_env() -> jinja2.Environment:
    """Environment for the templates that carry judged text: everything is escaped."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("failcodes.judge", "prompts"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )


@lru_cache(maxsize=1)
def template_hash() -> str:
    """SHA-256 over the answer schema version and all prompt template sources.

    Part of every cache key and of the journal's run description, so a change of either
    never serves an answer given to another prompt or schema.
    """
    digest = hashlib.sha256()
    digest.update(f"answer-schema-{ANSWER_SCHEMA_VERSION}".encode())
    root = resources.files("failcodes.judge.prompts")
    for name in _TEMPLATES:
        digest.update(name.encode())
        digest.update(root.joinpath(name).read_bytes())
    return digest.hexdigest()


def prompt_hash(system: str, schema: object, kind: UnitKind) -> str:
    """SHA-256 of what an LLM judge of ``kind`` is shown besides the unit.

    The rendered system prompt (instructions + codebook part), the answer schema and its
    version, the kind's user-message template and the re-ask template: the journal's run
    identity, so a run resumed after a failcodes upgrade that changed any of them is refused
    (two prompts' answers were mixed in one run without a word). A change to another kind's
    template changes no run of this kind (:func:`template_hash` covers every template).
    """
    import json

    digest = hashlib.sha256()
    digest.update(f"answer-schema-{ANSWER_SCHEMA_VERSION}\0{system}\0".encode())
    digest.update(json.dumps(schema, sort_keys=True).encode())
    root = resources.files("failcodes.judge.prompts")
    user = "retrieval.j2" if kind is UnitKind.RETRIEVAL else "verification.j2"
    for name in (user, "invalid.j2"):
        digest.update(f"\0{name}\0".encode())
        digest.update(root.joinpath(name).read_bytes())
    return digest.hexdigest()


def group_prompt_hash() -> str:
    """SHA-256 of the grouped request's user-message template alone (a grouped run's identity)."""
    source = resources.files("failcodes.judge.prompts").joinpath(GROUP_TEMPLATE).read_bytes()
    return hashlib.sha256(source).hexdigest()


@lru_cache(maxsize=16)
def _system_cached(codebook: Codebook, kind: UnitKind) -> str:
    return (
        _env()
        .get_template("system.j2")
        .render(
            codebook=codebook, part=codebook.part(kind), kind=kind.value, schema_name=SCHEMA_NAME
        )
    )


def render_system(codebook: Codebook, kind: UnitKind) -> str:
    """Render the system prompt (instructions + codebook part); identical for every unit."""
    return _system_cached(codebook, kind)


def render_user(unit: Unit) -> str:
    """Render the user message for one unit, judged texts escaped inside delimiters."""
    name = "retrieval.j2" if unit.kind is UnitKind.RETRIEVAL else "verification.j2"
    verdict = unit.verdict.value if unit.verdict is not None else ""
    view = {
        "claim": unit.claim,
        "passages": unit.passages,
        "reasoning": unit.reasoning or "",
        "verdict": verdict,
    }
    return _escaping_env().get_template(name).render(unit=view)


def escaped_length(text: str) -> int:
    """Length of ``text`` after HTML escaping (``&``, ``"``, ``'`` +4; ``<``, ``>`` +3).

    A CJK character counts 4 (:func:`~failcodes.judge.pricing.token_chars`).
    """
    return (
        token_chars(text)
        + 4 * (text.count("&") + text.count('"') + text.count("'"))
        + 3 * (text.count("<") + text.count(">"))
    )


@dataclass(frozen=True)
class UserSkeleton:
    """The fixed text of a user-message template, in characters.

    ``base``: the message with empty texts and no passage; ``per_passage``: one passage with
    an empty text, without its rank digits; ``source`` / ``title`` / ``id``: what a source,
    title or passage id attribute adds besides its escaped value (``id`` None: the template
    shows no passage id).
    """

    base: int
    per_passage: int
    source: int
    title: int
    id: int | None = None

    def passage(
        self, rank: int, text: str, source: str | None, title: str | None, passage_id: str = ""
    ) -> int:
        """Characters one passage adds to the message."""
        return (
            self.per_passage
            + len(str(rank))
            + escaped_length(text)
            + self.attributes(source, title, passage_id)
        )

    def attributes(self, source: str | None, title: str | None, passage_id: str = "") -> int:
        """Characters a passage's id, source and title attributes add (none when empty)."""
        total = 0
        if passage_id and self.id is not None:
            total += self.id + escaped_length(passage_id)
        if source:
            total += self.source + escaped_length(source)
        if title:
            total += self.title + escaped_length(title)
        return total


@lru_cache(maxsize=2)
def user_skeleton(kind: UnitKind) -> UserSkeleton:
    """The fixed text of ``kind``'s user template, measured by rendering probe units once.

    So :func:`user_length` (and the columnar dry run) follow the template as it is.
    """

    def length(*passages: Passage) -> int:
        unit = Unit(id="probe", kind=kind, claim="", passages=passages, reasoning="")
        return len(render_user(unit))

    return _measure_skeleton(length, probe_chars=1)


def _measure_skeleton(length: Callable[..., int], *, probe_chars: int) -> UserSkeleton:
    """Measure a template from ``length(*passages)`` of the rendered message.

    ``probe_chars``: characters of the one probe passage's own text that are not fixed
    template text (its one-digit rank; and its key ``k`` in a grouped message).
    """
    base = length()
    plain = Passage(passage_id="", rank=1, text="")  # an empty id is not shown
    one = length(plain)
    source = length(plain.model_copy(update={"source": "s"})) - one - 1
    title = length(plain.model_copy(update={"title": "t"})) - one - 1
    shown = length(plain.model_copy(update={"passage_id": "i"})) - one
    return UserSkeleton(base, one - base - probe_chars, source, title, shown - 1 if shown else None)


def user_length(unit: Unit) -> int:
    """``token_chars(render_user(unit))`` without rendering (the dry run prices every unit).

    That is the message's length, a CJK character counting 4 (the templates hold none). The
    template's fixed text comes from :func:`user_skeleton`; the judged texts add their escaped
    lengths. A test checks it against :func:`render_user` on generated units.
    """
    skeleton = user_skeleton(unit.kind)
    total = skeleton.base + escaped_length(unit.claim)
    if unit.kind is not UnitKind.RETRIEVAL:
        total += escaped_length(unit.reasoning or "")
        total += len(unit.verdict.value) if unit.verdict is not None else 0
    for p in unit.passages:
        total += skeleton.passage(p.rank, p.text, p.source, p.title, p.passage_id)
    return total


#: The user-message template of a grouped request (all passages of one claim).
GROUP_TEMPLATE = "retrieval_group.j2"


def render_group(claim: str, passages: list[tuple[str, Passage]]) -> str:
    """Render the user message of a grouped request: the claim once, keyed passages."""
    return _escaping_env().get_template(GROUP_TEMPLATE).render(claim=claim, passages=passages)


@lru_cache(maxsize=1)
def group_skeleton() -> UserSkeleton:
    """The fixed text of the grouped request's template (:func:`render_group`).

    As :func:`user_skeleton`, except that ``per_passage`` leaves out the passage key too
    (``p1``, ``p2``...): a group's message is ``base`` + the escaped claim + per passage
    ``per_passage`` + key + rank digits + escaped text (+ attributes).
    """

    def length(*passages: Passage) -> int:
        return len(render_group("", [("k", p) for p in passages]))

    return _measure_skeleton(length, probe_chars=2)


def group_template_hash() -> str:
    """Hash of the engine templates plus the group template (part of group cache keys)."""
    source = resources.files("failcodes.judge.prompts").joinpath(GROUP_TEMPLATE).read_bytes()
    return hashlib.sha256(template_hash().encode() + source).hexdigest()


def render_prompt(codebook: Codebook, unit: Unit) -> Prompt:
    """Render the full prompt for ``unit`` under ``codebook``."""
    return Prompt(system=render_system(codebook, unit.kind), user=render_user(unit))


#: Longest excerpt of a model's own text (a rejected answer, its validation error) that is
#: quoted back to it or stored as an unscored reason.
ECHO_LIMIT = 600


def truncate(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, marking the cut with the number dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


def render_invalid(error: str, answer: str = "") -> str:
    """Render the follow-up message that returns a validation error to the judge.

    The error (which quotes values from the answer) and the rejected answer itself are
    model-controlled text: both are truncated (:data:`ECHO_LIMIT`), HTML-escaped and placed
    inside their own delimiters, so an answer holding ``</judged_material>`` or "SYSTEM
    OVERRIDE" text cannot pose as instructions in the follow-up.
    """
    return (
        _escaping_env()
        .get_template("invalid.j2")
        .render(error=truncate(error), answer=truncate(answer), schema_name=SCHEMA_NAME)
    )
