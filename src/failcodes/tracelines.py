"""Trace JSONL lines that need no model: decoded, checked and written again by msgspec.

``failcodes ingest`` of a table already in the trace format spent most of its time building a
pydantic :class:`~failcodes.traces.Trace` (and a :class:`~failcodes.traces.Passage` per
passage) for every line, only to dump it again (issue 30: 7.8x the JSON parse at paper scale).
A line :class:`Voucher` accepts is kept as the struct msgspec decoded it into (a
:data:`TraceLine`: the trace's fields under the model's names, in the model's order) and
written back by :func:`json_of` byte for byte as ``Trace.model_dump_json(exclude_none=True)``
writes the trace the exact reader makes of that line.

The voucher accepts a line only where the exact reader would take it as it is: every field of
the model's type and bounds (msgspec's strict types: no ``"3"`` for 3, no unknown field), no
empty text (the model reads an optional one as missing, and refuses a claim of spaces
alone), no ``null``, no duplicate key
(:func:`~failcodes.jsonio.keys_vouched`), ids neither blank nor padded nor in scientific
notation (:func:`shown_exponent`), ranks unique, a verdict the alias table knows (the
canonical one stored, the raw text kept in ``raw_verdict`` as the model does), no score of
:data:`LARGEST_SCORE` or more (pydantic writes ``1e+16``
where msgspec writes ``1e16``) and no reasoning or passage text that is a missing mark or a
reference alone (:func:`marked`: the exact reader reads the one as none, with a note, and
refuses the other), no text that is Excel's error value (``#REF!``: :func:`holds_excel_error`).
Anything else (``None``) takes the exact reader, which accepts it or
raises its one-line error: the errors are the exact reader's, always.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel

from failcodes.errors import InputError, clip
from failcodes.jsonio import keys_vouched
from failcodes.tableio import CELL_ERRORS, NO_ID, first_in_exponent, msgspec_type
from failcodes.traces import EvidenceSource, Marks, Passage, Trace
from failcodes.verdicts import (
    NO_VERDICT_MARKS,
    Verdict,
    alias_word,
    aliased_keys,
    normalize_verdict,
)

#: A trace line the :class:`Voucher` accepted: the msgspec struct of :func:`line_types`, whose
#: attributes are those of :class:`Trace` (verdict and enums as their text).
TraceLine = Any

#: Scores at or past this size go through the model: its JSON writes ``1e+16``, msgspec ``1e16``
#: (the two agree on every smaller float; a whole-number score is read as a float by both).
LARGEST_SCORE = 1e15

_SCORE = operator.attrgetter("score")
_RANK = operator.attrgetter("rank")
_PASSAGES = operator.attrgetter("passages")
#: A trace's identifiers, a trace line's first fields: a blank one joins nothing, a padded one
#: (``" c1"``) silently misses the same id written without spaces in another file (bad input).
TRACE_IDS = ("system", "question_id", "sentence_id", "claim_id")
_TOO_LARGE = LARGEST_SCORE.__le__


def shown_exponent(ids: Sequence[str | None]) -> bool:
    """Whether an id of ``ids`` is in scientific notation (``1.23457E+11``).

    The readers' rule (:func:`~failcodes.tableio.id_text`): the exact reader refuses it.

    A long number id as a spreadsheet shows it: 123456789012 and 123456789013 both
    ``1.23457E+11``, two sentences read as one ("labels cover 2 of 3 sentences" for 4) where
    a CSV of them was refused. One search of the ids joined (no E+/E-: none at all).
    """
    joined = "\n".join(filter(None, ids))
    return ("E+" in joined or "E-" in joined or "e+" in joined or "e-" in joined) and (
        first_in_exponent(ids) is not None
    )


@functools.lru_cache(maxsize=2)
def line_types(omit_defaults: bool = True) -> tuple[Any, Any]:
    """``(TraceLine, PassageLine)``: msgspec structs of the models' fields, in their order.

    Types and bounds as the models' (:func:`~failcodes.tableio.msgspec_type`), unknown fields
    refused, the verdict any text (aliases are resolved after); optional fields default to
    None and are left out of the JSON, as ``exclude_none`` does (``omit_defaults=False``:
    written as ``null``, as a claim record's passages are). A line without ``passages``
    decodes to ``UNSET`` (the voucher makes it an empty list, which the model writes).
    """
    import msgspec

    nonempty = Annotated[str, msgspec.Meta(min_length=1)]

    def fields(model: type[BaseModel], nested: Any = None) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for name, info in model.model_fields.items():
            if name == "passages":
                out.append((name, list[nested] | msgspec.UnsetType, msgspec.UNSET))
                continue
            kind: Any = str if name == "verdict" else msgspec_type(info.annotation, info.metadata)
            # an empty text is refused by the decoder: the model reads an optional one as
            # missing, so the line is the exact reader's
            if kind is str:
                kind = nonempty
            elif kind == str | None:
                kind = nonempty | None
            out.append((name, kind) if info.is_required() else (name, kind, None))
        return out

    # kw_only: required fields may follow optional ones (the models' order); gc=False: no cycles
    options: dict[str, Any] = {
        "kw_only": True,
        "omit_defaults": omit_defaults,
        "forbid_unknown_fields": True,
        "gc": False,
    }
    passage = msgspec.defstruct("PassageLine", fields(Passage), **options)
    trace = msgspec.defstruct("TraceLine", fields(Trace, passage), **options)
    return trace, passage


def missing_mark(text: str) -> bool:
    """Whether a text is a missing mark: no passage (or reasoning), as a blank cell is none.

    R's ``NA``, Excel's ``#N/A``, pandas' ``nan`` (``astype(str)``), a program's ``None``
    or a spreadsheet's ``-`` where the retriever found nothing were each one passage of that
    text: a closed claim read as retrieved, Table 8 counting ``N/A`` as a coded passage (3
    units, all irrelevant, where there were none) and attribution saying "none of the 1
    retrieved passages is high quality" for "no passage retrieved", exit 0. A reasoning so
    written was coded by ``judge reasoning`` as the verifier's reasoning (Table 9). A blank
    text (``""``, spaces: a JSON list ``["a passage", ""]`` mapped to passages) is none too: it
    was a passage, coded and counted (12 units to judge for 6 passages).
    """
    return len(text) < 32 and (not text.strip() or text.strip().lower() in NO_VERDICT_MARKS)


#: A text that is a reference alone: a link, a DOI, a PubMed or PMC id.
_REFERENCE = re.compile(
    r"(?:https?://|www\.)\S+|(?:doi:\s*)?10\.\d{4,9}/\S+|pmid:?\s*\d+|pmc\d+|doi:\s*\S+",
    re.IGNORECASE,
)


def is_reference(text: object) -> bool:
    """Whether ``text`` is a reference alone (a URL, a DOI, ``PMID: 123``): no passage text."""
    return isinstance(text, str) and len(text) < 2048 and bool(_REFERENCE.fullmatch(text.strip()))


def refuse_reference(text: object, path: Path, line: int, field: str) -> None:
    """Refuse a passage whose text is a reference alone (a URL, a DOI, ``PMID: 123``).

    A table keeping the retrieved documents' links, not their texts, was read as passages of
    those texts: the judge coded each link as retrieved evidence (all irrelevant), Table 8
    counted them and attribution blamed retrieval for every disagreement ("none of the 2
    retrieved passages is high quality"), exit 0, where no passage text was there to assess.
    """
    if is_reference(text):
        assert isinstance(text, str)
        raise InputError(
            f"a passage's text is a reference alone ({clip(repr(text.strip()))}), not the "
            "text retrieved: the judge codes a passage's text and Table 8 counts it (a link "
            "read as evidence blamed the retriever); give the retrieved texts (a column or "
            "passage key holding them), the link as the passage's source",
            path=path,
            line=line,
            field=field,
        )


def clean_record(record: dict[str, Any], path: Path, line: int, marks: Marks | None) -> None:
    """A trace record (a dict of the trace's fields) read as the trace format is read.

    A reasoning or passage ``text`` that is a missing mark is none (counted in ``marks``),
    the other passages keeping their ranks; a passage text that is a reference alone is
    refused naming ``passages[i].text`` (:func:`refuse_reference`). ``record`` is changed
    in place.
    """
    reasoning = record.get("reasoning")
    # ("" was none to the model ever, with no note: a file of them reads as it did)
    dropped = isinstance(reasoning, str) and reasoning != "" and missing_mark(reasoning)
    if dropped:
        del record["reasoning"]
    passages = record.get("passages")
    gone = 0
    if isinstance(passages, list):
        for i, p in enumerate(passages):
            if isinstance(p, dict):
                refuse_reference(p.get("text"), path, line, f"passages[{i}].text")
        kept = [
            p
            for p in passages
            if not (isinstance(p, dict) and isinstance(t := p.get("text"), str) and missing_mark(t))
        ]
        gone = len(passages) - len(kept)
        if gone:
            record["passages"] = kept
    if marks is not None and (dropped or gone):
        marks.add(path, line, passages=gone, reasoning=dropped)


#: The first four characters (stripped, lowered) of a text that may be a missing mark
#: (:func:`missing_mark`) or a reference alone (:data:`_REFERENCE`).
_SUSPECT = frozenset(
    {m[:4] for m in NO_VERDICT_MARKS}
    | {"", "http", "www.", "doi:", "pmid"}  # "": a blank text (spaces alone), none
    | {f"10.{d}" for d in range(10)}
    | {f"pmc{d}" for d in range(10)}
)
#: Their first characters, either case, and any a text stripped of its spaces may begin with.
_SUSPECT_FIRST = frozenset(p[:1] for p in _SUSPECT) | {p[:1].upper() for p in _SUSPECT}
_SUSPECT_FIRST |= {c for c in map(chr, range(0x3001)) if c.isspace()}  # (to U+3000: strip's)
_FIRST = operator.itemgetter(0)
_FIRST4 = operator.itemgetter(slice(4))
_TEXT = operator.attrgetter("text")
_REASONING = operator.attrgetter("reasoning")


def may_be_marked(lines: Iterable[TraceLine | None]) -> bool:
    """Whether a passage text or reasoning of the vouched ``lines`` may be marked or a link.

    A missing mark or a reference alone: one pass in C over a block's texts (their first four
    characters), which a block none of whose texts begins as one does passes (~0.25 CPU-s
    over a 675 MB file, its 1.2M passages).
    """
    recs = [rec for rec in lines if rec is not None]
    # (a line without passages decodes them to UNSET, which is false, as [] is)
    texts = list(map(_TEXT, itertools.chain.from_iterable(filter(None, map(_PASSAGES, recs)))))
    texts += filter(None, map(_REASONING, recs))  # (the voucher takes no empty text)
    # those whose first character may begin one (no string made: ~15% less than all four)
    maybe = itertools.compress(texts, map(_SUSPECT_FIRST.__contains__, map(_FIRST, texts)))
    return not _SUSPECT.isdisjoint(map(str.lower, map(_FIRST4, map(str.strip, maybe))))


def marked(rec: TraceLine) -> bool:
    """Whether a vouched line's reasoning or a passage text is a missing mark or a reference.

    The exact reader reads such a line otherwise than as it is (:func:`clean_record`), so the
    voucher leaves it to that reader.
    """
    if rec.reasoning is not None and missing_mark(rec.reasoning):
        return True
    return any(missing_mark(t) or is_reference(t) for t in map(_TEXT, rec.passages or ()))


#: A ``#`` for ``map(operator.contains, lines, _HASH)`` (:meth:`Voucher.lines`).
_HASH = itertools.repeat(b"#")


def may_hold_excel_error(text: str | bytes) -> bool:
    r"""Whether a JSON line may hold a string that is Excel's error value (``"#REF!"``).

    Such a string starts with ``#``, which JSON writes as it is or as ``\u0023``: a search in
    C (``memchr``) for a ``#``, and for a backslash before the longer search.
    """
    if isinstance(text, bytes):
        return b"#" in text or (b"\\" in text and b"\\u0023" in text)
    return "#" in text or ("\\" in text and "\\u0023" in text)


def holds_excel_error(rec: TraceLine) -> bool:
    """Whether a decoded line's text (a field or a passage's) is Excel's error value.

    The exact reader refuses it (:func:`~failcodes.traceio.prepare_trace`), as a CSV's cell.
    """
    import msgspec

    astuple = msgspec.structs.astuple
    cells = [*astuple(rec), *itertools.chain.from_iterable(map(astuple, rec.passages or ()))]
    return any(isinstance(cell, str) and cell in CELL_ERRORS for cell in cells)


class Voucher:
    """Decode JSONL trace lines the exact reader would take as they are (see the module doc).

    ``aliases`` as for :func:`~failcodes.verdicts.normalize_verdict`; each raw verdict is
    looked up once. ``rewritten``: the lines are written again by :func:`json_of` (structs
    that omit absent fields; a score of :data:`LARGEST_SCORE` or more refused); False: only
    read (structs that keep their nulls, as a claim record's passages show them; any score).
    """

    def __init__(
        self, aliases: Mapping[str, Verdict] | None = None, *, rewritten: bool = True
    ) -> None:
        import msgspec

        trace, passage = line_types(omit_defaults=rewritten)
        self.rewritten = rewritten
        self.aliases = aliases
        self.type = trace
        self.decode = msgspec.json.Decoder(trace).decode
        self.astuple = msgspec.structs.astuple
        self.unset = msgspec.UNSET
        self.errors = (msgspec.DecodeError, msgspec.ValidationError)
        self.verdicts: dict[str, tuple[str, str | None, str | None] | None] = {}
        #: Lines whose verdict a default alias read, per alias word
        #: (:func:`~failcodes.verdicts.alias_word`).
        self.truths: Counter[str] = Counter()
        texts = {n for n, k in trace.__annotations__.items() if _text(k)}
        assert set(trace.__struct_fields__) - texts == {"passages"}, "strings: see __call__"
        assert trace.__struct_fields__[:4] == TRACE_IDS, "ids: see keys"
        fields = passage.__struct_fields__
        #: Positions in a passage's ``astuple`` of its rank and of the fields a JSON string
        #: cannot fill, and the passage's width.
        self.rank = fields.index("rank")
        self.numbers = [i for i, n in enumerate(fields) if not _text(passage.__annotations__[n])]
        self.width = len(fields)
        # a block's passages counted a field at a time (:meth:`_block_keys`): a required
        # field is never None (the decoder refuses a line without it or with null)
        optional = fields[len(fields) - len(passage.__struct_defaults__) :]
        #: The passage fields that may be None: a getter each, and whether it holds text.
        self.optional = [
            (operator.attrgetter(n), _text(passage.__annotations__[n])) for n in optional
        ]
        required = [n for n in fields if n not in optional]
        #: The passage's required fields, and those of them a JSON string cannot fill.
        self.required = len(required)
        self.required_numbers = sum(not _text(passage.__annotations__[n]) for n in required)

    def __call__(self, text: str | bytes, *, checked: bool = False) -> TraceLine | None:
        """The vouched line (its verdict canonical), or None: the exact reader's turn.

        ``checked``: the line was vouched for before, so its ids, keys and ranks are not
        checked again (a line read back by its offset).
        """
        try:
            rec = self.decode(text)
        except self.errors:
            return None
        if checked:
            return self.finish(rec)
        if may_hold_excel_error(text) and holds_excel_error(rec):
            return None  # '#REF!': the exact reader's error
        return self.vouch(rec, text)

    def again(self, text: str | bytes) -> TraceLine | None:
        """:meth:`__call__` of a line this voucher's :meth:`lines` took before, read back.

        Only its verdict is made canonical (:meth:`_settle`): its ids, keys, ranks and texts
        passed then (a line read back by its offset from a file none of whose lines was the
        exact reader's; ``checked`` also looks for missing marks and references, which a
        line the exact reader read may hold). None: not decoded (a changed file).
        """
        try:
            rec = self.decode(text)
        except self.errors:
            return None
        return self._settle(rec)

    def vouch(self, rec: TraceLine, text: str | bytes | None) -> TraceLine | None:
        """:meth:`__call__` of a decoded (or converted) ``rec``; ``text`` None: a row converted.

        A converted row (a Parquet row made into the struct) has no text to count its keys
        in: its ids and ranks are the caller's to check; a text of it that is Excel's error
        value (:func:`holds_excel_error`) is checked here. An empty text never gets here: the
        decoder refuses it (:func:`line_types`).
        """
        if text is not None:
            keys = self.keys(rec)
            if keys is None or not keys_vouched(text, *keys):
                return None
        elif holds_excel_error(rec):
            return None  # '#REF!': the exact reader's error
        return self.finish(rec)

    def lines(self, bodies: Sequence[bytes], quotes: int) -> list[TraceLine | None]:
        """:meth:`__call__` of each line of ``bodies``, whose quotes number ``quotes`` in all.

        A line without a backslash holds at least the quotes its record's keys and strings
        need (:func:`~failcodes.jsonio.keys_vouched`), more if a key is repeated or a value
        null; so the lines' quotes are counted once, by the caller, against the keys and
        strings of all their records at once (:meth:`_block_keys`: their fields counted in
        a few passes over the block, not a walk of each line's passages), and each line is
        counted on its own (:meth:`keys`) only if the sums differ, or a record has an id
        blank or padded or a rank twice (one count per line was ~0.2 of 2.1 CPU-s of
        ``metrics`` on a 675 MB file; each line's :meth:`keys` ~0.5 of 4.6 of
        ``disagreements``).
        """
        out: list[TraceLine | None] = []
        plain: list[int] = []  # lines without a backslash, decoded
        decode, errors = self.decode, self.errors
        for i, body in enumerate(bodies):
            try:
                rec = decode(body)
            except errors:
                rec = None
            if rec is not None and b"\\" not in body:
                plain.append(i)
            else:  # counted on its own
                quotes -= body.count(b'"')
                if rec is not None and b"\\u0023" in body and holds_excel_error(rec):
                    rec = None  # '#' escaped ('\u0023REF!'): see below
                if rec is not None:
                    keys = self.keys(rec)
                    if keys is None or not keys_vouched(body, *keys):
                        rec = None
            out.append(rec)
        # Excel's error value ('#REF!': the exact reader's error): a '#' in the block (one
        # search in C), then the lines holding one; '#' escaped is a line counted on its own
        if b"#" in b"".join(bodies):
            for i in itertools.compress(range(len(bodies)), map(operator.contains, bodies, _HASH)):
                rec = out[i]
                if rec is not None and holds_excel_error(rec):
                    out[i] = None
                    if i in plain:  # (its quotes were the block's)
                        plain.remove(i)
                        quotes -= bodies[i].count(b'"')
        recs = [out[i] for i in plain]
        if self._block_keys(recs) != quotes:  # a line has more quotes than it needs, or
            for i in plain:  # a record an id blank or padded or a rank twice
                keys = self.keys(out[i])
                if keys is None or bodies[i].count(b'"') != 2 * (keys[0] + keys[1]):
                    out[i] = None
        # (finished last: a line refused above is the object reader's, and counted there)
        if may_be_marked(out):  # a missing mark or a link: the exact reader's (see marked)
            out = [None if rec is None or marked(rec) else rec for rec in out]
        return [None if rec is None else self._settle(rec) for rec in out]

    def _block_keys(self, recs: Sequence[TraceLine]) -> int | None:
        """The quotes the keys and strings of ``recs`` need in all, or None.

        None: a record has an id blank, padded, in scientific notation or no id (``#N/A``:
        :data:`~failcodes.tableio.NO_ID`), or a rank twice (:meth:`keys` says which).
        """
        if not recs:
            return 0
        unset = self.unset
        tops = list(map(self.astuple, recs))
        top = list(itertools.chain.from_iterable(tops))
        width = len(tops[0])
        for k in range(len(TRACE_IDS)):  # system, question_id, sentence_id, claim_id
            ids = top[k::width]
            if ids != list(map(str.strip, ids)) or (k and shown_exponent(ids)):
                return None
            if not NO_ID.isdisjoint(ids):  # '#N/A', 'nan': no id, the exact reader's error
                return None
        lists = list(map(_PASSAGES, recs))
        missing = lists.count(unset)  # (no passages key: an empty list once finished)
        if missing:
            lists = [() if p is unset else p for p in lists]
        # every present field but passages is text (see __init__)
        strings = len(top) - top.count(None) - len(recs)
        keys = strings + len(recs) - missing
        sizes = list(map(len, lists))
        passages = list(itertools.chain.from_iterable(lists))
        if passages:
            # a field at a time over the block's passages (no tuple a passage: ~1.2M of them
            # in a 675 MB file cost ~0.4 CPU-s of a ~1.7 scan)
            n = len(passages)
            found, numbers = n * self.required, n * self.required_numbers
            for getter, text in self.optional:
                present = n - list(map(getter, passages)).count(None)
                found += present
                if not text:
                    numbers += present
            keys += found
            strings += found - numbers
            if not _ranks_unique(passages, sizes):
                return None
        return 2 * (keys + strings)

    def keys(self, rec: TraceLine) -> tuple[int, int] | None:
        """``(keys, string values)`` the line of ``rec`` holds if it repeats no key, or None.

        None: an id blank, padded or in scientific notation, or a rank repeated (the exact
        reader's error). A line
        without ``passages`` gets an empty list.
        """
        passages = rec.passages
        unset = passages is self.unset
        if unset:
            passages = rec.passages = []
        top = self.astuple(rec)
        ids = top[:4]  # system, question_id, sentence_id, claim_id
        if ids != tuple(map(str.strip, ids)) or shown_exponent(ids[1:]):
            return None  # a blank, padded or 1.23457E+11 id: the exact reader's error
        if not NO_ID.isdisjoint(ids):  # '#N/A', '#REF!', 'nan': no id (the same)
            return None
        strings = len(top) - top.count(None) - 1  # every present field but passages is text
        present = strings + 1 - unset  # (without passages: no key of the line)
        n = len(passages)
        if not n:
            return present, strings
        nested = list(itertools.chain.from_iterable(map(self.astuple, passages)))
        found = len(nested) - nested.count(None)
        present += found
        strings += found
        width = self.width
        for i in self.numbers:  # the passage fields a JSON string cannot fill
            strings -= n - nested[i::width].count(None)
        if len(set(nested[self.rank :: width])) != n:
            return None
        return present, strings

    def finish(self, rec: TraceLine) -> TraceLine | None:
        """``rec`` with its verdict canonical (the raw one kept), or None (see the module doc)."""
        if may_be_marked((rec,)) and marked(rec):
            return None
        return self._settle(rec)

    def _settle(self, rec: TraceLine) -> TraceLine | None:
        """:meth:`finish` but for missing marks and references (a block checks them at once)."""
        if rec.claim.isspace():  # a claim of spaces alone: the model refuses it
            return None
        passages = rec.passages
        if passages is self.unset:
            passages = rec.passages = []
        # where the line is written again: a score at or past LARGEST_SCORE (None and 0
        # dropped first), in C
        if self.rewritten and any(map(_TOO_LARGE, map(abs, filter(None, map(_SCORE, passages))))):
            return None
        if rec.verdict not in self.verdicts:
            self.verdicts[rec.verdict] = self._verdict(rec.verdict)
        entry = self.verdicts[rec.verdict]
        if entry is None:
            return None
        if entry[2] is not None:
            self.truths[entry[2]] += 1
        rec.verdict = entry[0]
        if rec.raw_verdict is None:
            rec.raw_verdict = entry[1]
        return rec

    def _verdict(self, raw: str) -> tuple[str, str | None, str | None] | None:
        """``(canonical, raw text to keep or None, alias word)``, or None: no verdict."""
        try:
            verdict = normalize_verdict(raw, self.aliases)
        except InputError:
            return None
        said = alias_word(raw, aliased_keys(self.aliases or {}))
        return verdict.value, (raw if raw != verdict.value else None), said


def _ranks_unique(passages: Sequence[Any], sizes: Sequence[int]) -> bool:
    """Whether each record's passages (``sizes[i]`` of ``passages`` a record) have unique ranks.

    Ranks rising within each record (the usual 1, 2, 3, ...) are unique: checked in C over
    the whole block; else each (record, rank) pair counted.
    """
    ranks = list(map(_RANK, passages))
    rising = list(map(operator.lt, ranks, itertools.islice(ranks, 1, None)))
    n, at = len(ranks), 0
    for size in sizes:
        at += size
        if 0 < at < n:
            rising[at - 1] = True  # (the last of one record and the first of the next)
    if all(rising):
        return True
    owner = itertools.chain.from_iterable(map(itertools.repeat, range(len(sizes)), sizes))
    return len(set(zip(owner, ranks, strict=True))) == n


def _text(kind: Any) -> bool:
    """Whether a struct field of type ``kind`` holds text (str or a literal, maybe optional)."""
    if get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    inner = [a for a in get_args(kind) if a is not type(None)] or [kind]
    inner = [get_args(a)[0] if get_origin(a) is Annotated else a for a in inner]
    return all(a is str or get_origin(a) is Literal for a in inner)


def json_of(trace: Trace | TraceLine) -> bytes:
    """The JSON of a trace as ``model_dump_json(exclude_none=True)`` writes it (no newline)."""
    if isinstance(trace, Trace):
        return trace.model_dump_json(exclude_none=True).encode("utf-8")
    import msgspec

    return msgspec.json.encode(trace)


def trace_of(trace: Trace | TraceLine) -> Trace:
    """The model of a trace (a vouched line validated into one; a model as it is)."""
    if isinstance(trace, Trace):
        return trace
    import msgspec

    return Trace.model_validate(msgspec.to_builtins(trace))


def with_evidence(trace: Trace | TraceLine, source: EvidenceSource) -> Trace | TraceLine:
    """``trace`` declaring ``source`` as its evidence (a line is changed in place)."""
    if isinstance(trace, Trace):
        return trace.model_copy(update={"evidence_source": source})
    trace.evidence_source = source.value
    return trace
