"""Proposers: who suggests patterns the current codebook does not cover.

Three implementations share one small protocol, :class:`Proposer`:

* :class:`LLMProposer` renders ``prompts/propose.j2`` (codebook first, the coded units last,
  escaped inside delimiters) and sends it to any :class:`TextModel` (an adapter over a judge
  provider); the answer must be JSON and is validated against the codebook, retried once with
  the validation error, and otherwise raises :class:`ProposerError` (never a made-up proposal).
* :class:`OfflineProposer` is a **heuristic baseline** needing no model (rules below).
* :class:`ScriptedProposer` returns a fixed list per round: the fake used by tests.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import jinja2
from markupsafe import escape
from pydantic import ValidationError

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.codebook import Codebook, Part
from failcodes.errors import FailcodesError, listed
from failcodes.jsonio import read_json
from failcodes.saturation.dedupe import normalise_name, tokens
from failcodes.saturation.models import ProposalDraft
from failcodes.units import Unit, UnitKind

#: What a proposer may write as ``parent_subcode`` to ask for a new subcode.
NEW_SUBCODE = "new subcode"


class ProposerError(FailcodesError):
    """A proposer could not produce valid proposals (the round can be retried)."""


class Proposer(Protocol):
    """Suggests patterns the codebook does not cover, from one coded batch."""

    @property
    def name(self) -> str:
        """Spec recorded with every proposal (``offline``, ``scripted``, ``llm:MODEL``...)."""

    @property
    def kind(self) -> CoderKind:
        """LLM, or HEURISTIC for rule-based and scripted proposers."""

    def propose(
        self,
        units: Sequence[Unit],
        annotations: Sequence[Annotation],
        codebook: Codebook,
        *,
        round_number: int,
    ) -> list[ProposalDraft]:
        """Return draft proposals for this batch (deduplication happens afterwards)."""


# ---------------------------------------------------------------------------------------
# scripted fake
# ---------------------------------------------------------------------------------------
@dataclass
class ScriptedProposer:
    """Returns ``script[round_number]`` (empty for rounds not in the script). For tests."""

    script: Mapping[int, Sequence[ProposalDraft]]
    name: str = "scripted"
    kind: CoderKind = CoderKind.HEURISTIC

    @classmethod
    def from_file(cls, path: Path) -> ScriptedProposer:
        """Load ``{"1": [draft, ...], "2": [...]}`` from a JSON file."""
        data = read_json(path)
        script = {int(k): [ProposalDraft.model_validate(d) for d in v] for k, v in data.items()}
        return cls(script=script)

    def propose(
        self,
        units: Sequence[Unit],
        annotations: Sequence[Annotation],  # noqa: ARG002
        codebook: Codebook,  # noqa: ARG002
        *,
        round_number: int,
    ) -> list[ProposalDraft]:
        """The scripted drafts for this round; example ids limited to the batch."""
        batch = {u.id for u in units}
        out = []
        for draft in self.script.get(round_number, ()):
            examples = tuple(i for i in draft.example_unit_ids if i in batch) or tuple(
                sorted(batch)[:2]
            )
            out.append(draft.model_copy(update={"example_unit_ids": examples}))
        return out


# ---------------------------------------------------------------------------------------
# offline heuristic baseline
# ---------------------------------------------------------------------------------------
def _cue_tokens(unit: Unit) -> set[str]:
    """Cue words of a unit.

    Passage (retrieval) or reasoning (verification) words that the claim does not contain,
    at least 4 letters, not pure numbers.
    """
    claim = set(tokens(unit.claim))
    if unit.kind is UnitKind.RETRIEVAL:
        text = " ".join(p.text for p in unit.passages)
    else:
        text = unit.reasoning or ""
    # ASCII words only (accents are folded): a leaf is named and given an id by its word
    return {
        t
        for t in tokens(text)
        if len(t) >= 4 and t.isascii() and not t.isdigit() and t not in claim
    }


@dataclass
class OfflineProposer:
    """Heuristic baseline proposer: frequent unexplained cue words. Needs no model.

    Per low-quality subcode S the judge assigned, a word of the passage (or reasoning) the
    claim lacks, frequent among the units coded S with no leaf (``min_support`` units,
    ``min_share`` of them) and ``min_lift`` times as often as in the batch's other scored units,
    becomes a leaf proposal under S, at most ``max_per_subcode`` per subcode: the rule in full
    is docs/saturation.md's (step 3, ``offline``). Its definition says it is a heuristic
    baseline proposal.
    """

    min_support: int = 3
    min_share: float = 0.2
    min_lift: float = 2.0
    max_per_subcode: int = 2
    max_examples: int = 5
    name: str = "offline"
    kind: CoderKind = CoderKind.HEURISTIC

    def propose(
        self,
        units: Sequence[Unit],
        annotations: Sequence[Annotation],
        codebook: Codebook,
        *,
        round_number: int,
    ) -> list[ProposalDraft]:
        """Draft leaf proposals from frequent unexplained cue words (rules in class doc)."""
        by_id = {u.id: u for u in units}
        scored = [a for a in annotations if a.status is Status.SCORED and a.unit_id in by_id]
        cues = {a.unit_id: _cue_tokens(by_id[a.unit_id]) for a in scored}
        drafts: list[ProposalDraft] = []
        if not scored:
            return drafts
        part = codebook.part(scored[0].unit_kind)
        for dim in part.dimensions:
            for sub in dim.subcodes:
                if sub.high_quality:
                    continue
                inside = [
                    a for a in scored if a.codes.get(dim.id) == sub.id and not a.leaves.get(dim.id)
                ]
                outside = [a for a in scored if a.codes.get(dim.id) != sub.id]
                if len(inside) < self.min_support:
                    continue
                covered = set()
                for leaf in sub.leaves:
                    covered.update(tokens(f"{leaf.label} {leaf.definition}"))
                df_in = Counter(w for a in inside for w in cues[a.unit_id])
                df_out = Counter(w for a in outside for w in cues[a.unit_id])
                ranked = []
                for word, count in df_in.items():
                    share = count / len(inside)
                    lift = share / ((df_out[word] + 1) / (len(outside) + 1))
                    if (
                        count >= self.min_support
                        and share >= self.min_share
                        and lift >= self.min_lift
                        and word not in covered
                    ):
                        ranked.append((-count, -lift, word))
                for neg_count, _neg_lift, word in sorted(ranked)[: self.max_per_subcode]:
                    examples = [a.unit_id for a in inside if word in cues[a.unit_id]]
                    source = "passage" if part.id is UnitKind.RETRIEVAL else "reasoning"
                    drafts.append(
                        ProposalDraft(
                            dimension=dim.id,
                            parent_subcode=sub.id,
                            name=f"{sub.label}: {word}",
                            definition=(
                                f"Heuristic baseline (offline) proposal: units coded {sub.id} "
                                f"whose {source} contains '{word}' (not in the claim); "
                                f"{-neg_count} of {len(inside)} such units in round "
                                f"{round_number} vs {df_out[word]} of {len(outside)} others. "
                                "Name the pattern this cue stands for before accepting."
                            ),
                            example_unit_ids=tuple(examples[: self.max_examples]),
                        )
                    )
        return drafts


# ---------------------------------------------------------------------------------------
# LLM path
# ---------------------------------------------------------------------------------------
class TextModel(Protocol):
    """The one call the LLM proposer needs from a provider: messages in, text out."""

    @property
    def name(self) -> str:
        """Provider spec, e.g. ``anthropic:claude-...``."""

    def complete(self, system: str, user: str, schema: dict[str, Any] | None = None) -> str:
        """Return the model's text answer (structured by ``schema`` when the model can)."""


_ITEM_REQUIRED = ["dimension", "parent_subcode", "name", "definition", "example_unit_ids"]


def _item(
    dimension: dict[str, Any], parent: dict[str, Any], unit_ids: Sequence[str] | None
) -> dict[str, Any]:
    unit: dict[str, Any] = {"type": "string"}
    if unit_ids:
        unit["enum"] = list(unit_ids)
    text = {
        "name": {"type": "string"},
        "definition": {"type": "string"},
        "example_unit_ids": {"type": "array", "items": unit},
    }
    return {
        "type": "object",
        "properties": {"dimension": dimension, "parent_subcode": parent, **text},
        "required": _ITEM_REQUIRED,
        "additionalProperties": False,
    }


def proposals_schema(
    part: Part | None = None, unit_ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """JSON schema of the proposer's answer (strict-mode friendly: all fields required).

    With a codebook ``part``, ``dimension`` and ``parent_subcode`` are enums of its ids, one
    ``anyOf`` branch per dimension (its own subcodes, or :data:`NEW_SUBCODE`), so a
    structured-output model can name neither an unknown dimension nor another dimension's
    subcode; with ``unit_ids`` (the batch), ``example_unit_ids`` holds only those ids.
    :func:`parse_answer` checks the same again for models without structured output.
    """
    if part is None:
        item = _item({"type": "string"}, {"type": "string"}, unit_ids)
    else:
        item = {
            "anyOf": [
                _item(
                    {"type": "string", "enum": [dim.id]},
                    {"type": "string", "enum": [*dim.code_ids(), NEW_SUBCODE]},
                    unit_ids,
                )
                for dim in part.dimensions
            ]
        }
    return {
        "type": "object",
        "properties": {"proposals": {"type": "array", "items": item}},
        "required": ["proposals"],
        "additionalProperties": False,
    }


_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("failcodes.saturation", "prompts"),
    autoescape=False,
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
)


def _data(text: str | None) -> str:
    """Escape judged text so it cannot close its delimiters or pose as instructions."""
    return str(escape(text or ""))


_TEMPLATES.filters["data"] = _data


def render_prompt(
    units: Sequence[Unit], annotations: Sequence[Annotation], codebook: Codebook, kind: UnitKind
) -> tuple[str, str]:
    """Return (system, user) messages of the proposer prompt."""
    codes = {a.unit_id: a for a in annotations}
    rendered = _TEMPLATES.get_template("propose.j2").render(
        codebook=codebook,
        part=codebook.part(kind),
        units=units,
        codes=codes,
        new_subcode=NEW_SUBCODE,
    )
    system, _, user = rendered.partition("=== USER ===")
    return system.replace("=== SYSTEM ===", "").strip(), user.strip()


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_answer(
    answer: str,
    codebook: Codebook,
    kind: UnitKind,
    batch_ids: set[str],
    dropped: list[str] | None = None,
) -> list[ProposalDraft]:
    """Validate a model answer against the codebook; ValueError names what is wrong.

    Example unit ids that are not in the batch (a model without structured output citing a
    rationale or an id it made up) are dropped, and the draft says so in its ``notes``: the
    pattern is still worth reviewing, and its examples are only ever the batch's units. A
    proposal with an empty name or definition (which a JSON schema in strict mode cannot
    refuse) is left out, said in ``dropped``: an answer the schema allows never fails a round.
    """
    match = _JSON_OBJECT.search(answer)
    if match is None:
        raise ValueError("the answer holds no JSON object")
    try:
        data: Any = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg}") from exc
    items = data.get("proposals") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ValueError("expected an object with a 'proposals' list")
    part = codebook.part(kind)
    out: list[ProposalDraft] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValueError(f"proposals[{i}] is not an object")
        parent = item.get("parent_subcode")
        if parent in (None, "", NEW_SUBCODE):
            item = {**item, "parent_subcode": None}
        blank = [
            k
            for k in ("name", "definition")
            if isinstance(item.get(k), str) and not item[k].strip()
        ]
        if blank:
            if dropped is not None:
                dropped.append(f"proposals[{i}] left out: empty {' and '.join(blank)}")
            continue
        try:
            draft = ProposalDraft.model_validate(item)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ValueError(f"proposals[{i}].{err['loc'][0]}: {err['msg']}") from exc
        try:
            dim = part.dimension(draft.dimension)
        except KeyError:
            valid = ", ".join(d.id for d in part.dimensions)
            raise ValueError(
                f"proposals[{i}]: unknown dimension {draft.dimension!r} (valid: {valid})"
            ) from None
        if draft.parent_subcode is not None and draft.parent_subcode not in dim.code_ids():
            valid = ", ".join([*dim.code_ids(), NEW_SUBCODE])
            raise ValueError(
                f"proposals[{i}]: unknown subcode {draft.parent_subcode!r} in {dim.id} "
                f"(valid: {valid})"
            )
        unknown = [u for u in draft.example_unit_ids if u not in batch_ids]
        if unknown:
            kept = tuple(u for u in draft.example_unit_ids if u in batch_ids)
            shown = listed([repr(u[:60]) for u in unknown], 3)
            note = (
                f"{len(unknown)} example unit id(s) not in the batch dropped ({shown}); "
                f"{len(kept)} example(s) kept"
            )
            draft = draft.model_copy(
                update={"example_unit_ids": kept, "notes": (*draft.notes, note)}
            )
        out.append(draft)
    return out


@dataclass
class LLMProposer:
    """Asks a model for uncovered patterns with ``prompts/propose.j2``."""

    model: TextModel
    retries: int = 1
    max_units: int = 40
    transcript: list[dict[str, str]] = field(default_factory=list)
    kind: CoderKind = CoderKind.LLM
    #: Proposals of the model's answers left out, and why (``failcodes saturate round`` says).
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """``llm:`` plus the model's spec."""
        return f"llm:{self.model.name}"

    def propose(
        self,
        units: Sequence[Unit],
        annotations: Sequence[Annotation],
        codebook: Codebook,
        *,
        round_number: int,
    ) -> list[ProposalDraft]:
        """Render the prompt, call the model, validate; retry with the error, then raise."""
        shown = list(units)[: self.max_units]
        if not shown:
            return []
        kind = shown[0].kind
        system, user = render_prompt(shown, annotations, codebook, kind)
        batch_ids = {u.id for u in shown}
        schema = proposals_schema(codebook.part(kind), [u.id for u in shown])
        message = user
        for attempt in range(self.retries + 1):
            answer = self.model.complete(system, message, schema=schema)
            self.transcript.append({"system": system, "user": message, "answer": answer})
            dropped: list[str] = []
            try:
                drafts = parse_answer(answer, codebook, kind, batch_ids, dropped)
                self.notes += [f"round {round_number}: {n}" for n in dropped]
                return drafts
            except ValueError as exc:
                if attempt == self.retries:
                    raise ProposerError(
                        f"{self.name} gave no valid proposals for round {round_number} "
                        f"after {self.retries + 1} attempts: {exc}"
                    ) from exc
                message = (
                    f"{user}\n\nYour previous answer was invalid: {exc}. "
                    "Answer again with only the JSON object."
                )
        raise AssertionError("unreachable")  # pragma: no cover


# ---------------------------------------------------------------------------------------
# reviewers' free-text proposals (Label Studio's `other_code`, Annotation.proposal)
# ---------------------------------------------------------------------------------------
_NAME_END = re.compile(r":|\n| - | \u2013 | \u2014 ")


def reviewer_origin(annotation: Annotation) -> str:
    """The note naming where a reviewer's proposal came from (also how a repeat is known)."""
    return (
        f"proposed by reviewer {annotation.coder} in their review of unit {annotation.unit_id} "
        f"(codebook {annotation.codebook.name} v{annotation.codebook.version})"
    )


def _named_code(part: Part, name: str) -> tuple[str, str, bool] | None:
    """(dimension, code, is a leaf) of the code of ``part`` whose label or id ``name`` is."""
    wanted = normalise_name(name)
    for dim in part.dimensions:
        for sub in dim.subcodes:
            for code, label, leaf in [
                (sub.id, sub.label, False),
                *((x.id, x.label, True) for x in sub.leaves),
            ]:
                if wanted in (normalise_name(label), normalise_name(code.replace("_", " "))):
                    return dim.id, code, leaf
    return None


def proposal_name(proposal: str) -> str:
    """The name of a reviewer's free-text proposal: its text before a ``:``, dash or line break.

    The whole text (its spaces folded) when there is no such cut.
    """
    raw = proposal.strip()
    cut = _NAME_END.search(raw)
    return " ".join((raw[: cut.start()] if cut else raw).split()) or " ".join(raw.split())


def names_a_code(part: Part, ann: Annotation) -> str | None:
    """A note when a reviewer's proposal is named as a code their review did not give.

    A reviewer who codes scope exact_scope and proposes 'Different context' (scope's own code)
    may have meant that code: deduplication read it as no new pattern, said nowhere, and the
    review's scope code stayed exact_scope in the corrected shares and the agreement. Said by
    ``saturate round --reviews`` and by ``labelstudio import``/``pull`` (one rule).
    """
    if not (ann.proposal or "").strip():
        return None
    named = _named_code(part, proposal_name(ann.proposal or ""))
    if named is None:
        return None
    dim, code, leaf = named
    gave = ann.leaves.get(dim, []) if leaf else list(ann.code_set(dim))
    if code in gave:
        return None
    given = ", ".join(ann.code_set(dim)) or "no code"
    return (
        f"its name is the existing code {dim}/{code}, which this review did not give ({dim}: "
        f"{given}): no new pattern; if the reviewer meant that code, correct the review (the "
        f"corrected shares and the agreement read {dim} as {given})"
    )


#: In a round's folder: the reviewers' proposals it could not place (dimension not known),
#: one JSON object a line (``origin``, ``text``, ``note``); a later round says them once.
UNPLACED_FILE = "unplaced-proposals.jsonl"


def reviewer_drafts(
    annotations: Sequence[Annotation],
    part: Part,
    pool: set[str],
    given: set[str],
    unplaced_before: Mapping[str, str] | None = None,
) -> tuple[list[ProposalDraft], list[str], list[dict[str, str]]]:
    """Drafts from reviewers' free-text new codes, notes on the rest, and the unplaced ones.

    The unplaced ones are kept with the round (:data:`UNPLACED_FILE`).

    A reviewer's proposal names no dimension: it is placed under the one low-quality code the
    reviewer chose (the dimension of the review's only low-quality code in ``part``, that code
    the parent), and the draft's note says so; a review with none or several low-quality codes
    is no draft, said in a note. The text's part before a ``:``, a dash or a line break is the
    name, the rest the definition (the whole text when there is no rest). A proposal ``given``
    to an earlier round (by its :func:`reviewer_origin`) is not proposed again; one a round
    could not place before (``unplaced_before``: origin -> the file listing it) is not said
    again line by line (the same file given every round repeated each note).
    """
    drafts: list[ProposalDraft] = []
    notes: list[str] = []
    unplaced: list[dict[str, str]] = []
    earlier: dict[str, int] = {}  # the earlier rounds' files -> how many of theirs again
    other_kind = repeated = 0
    for ann in annotations:
        text = " ".join((ann.proposal or "").split())
        if not text or ann.coder_kind is not CoderKind.HUMAN:
            continue
        if ann.unit_kind is not part.id:
            other_kind += 1
            continue
        origin = reviewer_origin(ann)
        if origin in given:
            repeated += 1
            continue
        if unplaced_before and origin in unplaced_before:
            where = unplaced_before[origin]
            earlier[where] = earlier.get(where, 0) + 1
            continue
        low = [
            (dim.id, ann.codes[dim.id])
            for dim in part.dimensions
            if ann.codes.get(dim.id) in dim.code_ids()
            and ann.codes[dim.id] != dim.high_quality_code
        ]
        raw = (ann.proposal or "").strip()
        cut = _NAME_END.search(raw)
        name = proposal_name(raw)
        meant = names_a_code(part, ann)
        if len(low) != 1:
            chose = ", ".join(f"{d}={c}" for d, c in low) or "none"
            said = (
                f"reviewer {ann.coder}'s proposal on unit {ann.unit_id} ({text!r}) is not "
                f"proposed: its dimension is not known (the review's low-quality codes: "
                f"{chose}; one places it); give it to a round by hand (--proposer "
                "scripted:FILE with dimension, parent_subcode, name, definition)"
            )
            said += f"; {meant}" if meant else ""
            notes.append(said)
            unplaced.append({"origin": origin, "text": text, "note": said})
            continue
        dimension, parent = low[0]
        rest = " ".join(raw[cut.end() :].split()) if cut else ""
        placed = (
            f"placed under {dimension}/{parent}, the review's only low-quality code (the "
            "reviewer named no dimension: reject it if it belongs elsewhere)"
        )
        examples = (ann.unit_id,) if ann.unit_id in pool else ()
        extra = () if examples else (f"unit {ann.unit_id} is not in the project's pool",)
        drafts.append(
            ProposalDraft(
                dimension=dimension,
                parent_subcode=parent,
                name=name,
                definition=rest or text,
                example_unit_ids=examples,
                notes=(origin, placed, *extra, *((meant,) if meant else ())),
            )
        )
    if other_kind:
        notes.append(
            f"{other_kind} reviewer proposal(s) on units of another part left out (the project "
            f"grows the {part.id.value} part)"
        )
    if repeated:
        notes.append(
            f"{repeated} reviewer proposal(s) already given to an earlier round: not proposed again"
        )
    for where, n in sorted(earlier.items()):
        notes.append(
            f"{n} reviewer proposal(s) not placed (dimension not known) and said before: not "
            f"said again; {where} lists them (give them by hand: --proposer scripted:FILE)"
        )
    return drafts, notes, unplaced
