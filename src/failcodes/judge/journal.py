"""The run journal: every finished unit is committed to SQLite at once.

A run directory holds ``journal.sqlite``. Each finished unit is one row (primary key: the
unit id), written in its own transaction as soon as the unit is done, with its annotation,
raw request and response, tokens, cost and latency. A run killed at any moment resumes from
the units not yet in the journal: none is lost, none is recorded twice. The journal also
remembers what the run is (unit kind, judge, codebook hash) and refuses to resume a
different one.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

from pydantic import ValidationError

from failcodes.annotationlines import AnnotationRead, is_dumped, vouched
from failcodes.annotations import Annotation
from failcodes.errors import ConfigError, InputError
from failcodes.fileio import check_output_dir
from failcodes.jsonio import parse_json
from failcodes.judge._sqlite import (
    BLOBS_MIGRATION,
    BlobStore,
    Migration,
    check_database,
    open_migrated,
    open_read_only,
)
from failcodes.judge.ledger import LEDGER_MIGRATIONS, BatchLedger
from failcodes.judge.providers.base import TokenUsage

JOURNAL_NAME = "journal.sqlite"
#: A judge panel's run folder holds this (and its members' runs), never a journal of its own.
PANEL_FILE = "panel.json"

_A = TypeVar("_A")

#: Page size of a new journal. SQLite keeps a row on one page unless it overflows: with
#: 4,096-byte pages a row of 2.1-4 KB (an offline retrieval unit, its annotation with a
#: 20-word quote in each of 5 dimensions) takes a page of its own; 8,192-byte pages hold three
#: (1x bench sample: 4,157 -> 2,810 bytes a unit; issue 30). An existing journal keeps its own.
PAGE_SIZE = 8192

MIGRATIONS: tuple[Migration, ...] = (
    (
        "001_initial",
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE annotations (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            unit_id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            annotation TEXT NOT NULL,
            raw_request TEXT,
            raw_response TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            cached_input_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0,
            latency_s REAL NOT NULL DEFAULT 0,
            cache_hit INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            session INTEGER,
            created_at TEXT NOT NULL
        );
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            outcome TEXT,
            summary TEXT
        )
        """,
    ),
    BLOBS_MIGRATION,
    *LEDGER_MIGRATIONS,
)

#: Meta keys that must match for a run to resume (``model`` tells two versions of the offline
#: heuristic apart: its spec is ``offline`` whatever its rules; journals written before the
#: key existed are not checked on it). ``prompt_hash`` (and a grouped run's
#: ``group_prompt_hash``): what an LLM judge is shown besides the unit
#: (:func:`~failcodes.judge.prompts.prompt_hash`); a failcodes upgrade that changes it would
#: mix answers to two prompts in one run. The base URL is not compared: see
#: :data:`ENDPOINTS_KEY`.
IDENTITY_KEYS = (
    "kind",
    "judge",
    "model",
    "codebook_hash",
    "unit_ids",
    "temperature",
    "prompt_hash",
    "group_prompt_hash",
)

#: The meta key listing every endpoint (``base_url``; "" the vendor's own) the run's judged
#: units were called at, one a line. A resume at another base URL is not refused (a proxy or
#: a host's name moves; the provider and model name are compared) but said on each
#: invocation's summary from then on (:meth:`Journal.bind` returns the others).
ENDPOINTS_KEY = "base_urls"

#: The meta key listing how an LLM judge was asked the run's judged units, one a line:
#: :data:`ALONE` or :data:`GROUPED` (:func:`prompt_shape` of a session's mode). A per-unit run
#: resumed with ``--group-by-claim`` (or the other way round) is not refused: a grouped run
#: asks some units alone by design (a group of one, a result to ask again, an answer the cache
#: holds alone), so one run of both shapes is one a grouped run can be; but a grouped request
#: shows the judge the claim's other passages beside each, so the mix is said on each
#: invocation from then on (:meth:`Journal.other_shapes`). Journals written before the key
#: read their last session's ``mode``.
SHAPES_KEY = "prompt_shapes"
ALONE, GROUPED = "one unit a request", "grouped by claim"


def prompt_shape(mode: str) -> str:
    """How a session of ``mode`` (its name: "per-unit", "batch, grouped"...) asks its units."""
    return GROUPED if mode.endswith("grouped") else ALONE


#: The meta key saying how the journal's unit ids were made, and this version's value: ``4``,
#: a unit's id covers the source and title its prompt shows beside each passage, and a
#: verification unit's its passage ids, which its prompt shows since
#: (:func:`~failcodes.units.passage_entry`); ``3`` held no passage id, ``2`` (or no key) held a
#: verification unit's passage texts only, and no key a retrieval unit's text only too (one
#: text under two sources was one unit, judged as its first-seen source). A journal of older
#: ids keeps its value when resumed, and :func:`stale_ids` gives those ids to those that
#: must not mix them with these.
UNIT_IDS_KEY, UNIT_IDS = "unit_ids", "4"

#: The first :data:`UNIT_IDS` whose ids of each kind cover all their prompt shows.
_SHOWN_SINCE = {"retrieval": 2, "verification": 4}


def _older_ids(meta: Mapping[str, str]) -> bool:
    """Whether a journal's ``meta`` says its ids were made before this version's."""
    value = meta.get(UNIT_IDS_KEY, "1")
    return value.isdigit() and int(value) < int(UNIT_IDS)


def stale_ids(run_dir: str | Path) -> frozenset[str]:
    """The unit ids of the journals in ``run_dir`` made by an older, shorter unit id rule.

    The folder's own journal and those up to two folders down (a panel's members under
    ``panel/``, a cascade's first judge) whose :data:`UNIT_IDS_KEY` predates ids covering all
    their kind's prompt shows (:data:`_SHOWN_SINCE`); none (an empty set) in a run
    folder of this version or a folder with no journal. Read only.
    """
    folder = Path(run_dir)
    found: set[str] = set()
    journals = (folder.glob(f"{'*/' * depth}{JOURNAL_NAME}") for depth in range(3))
    for path in sorted(p for found in journals for p in found):
        if not path.is_file() or path.stat().st_size == 0:
            continue
        try:
            conn = open_read_only(path)
        except sqlite3.DatabaseError:
            continue  # its readers name it (iter_journal)
        try:
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            value = meta.get(UNIT_IDS_KEY, "1")
            if value.isdigit() and int(value) < _SHOWN_SINCE.get(meta.get("kind", ""), 0):
                found.update(row[0] for row in conn.execute("SELECT unit_id FROM annotations"))
        except sqlite3.DatabaseError:
            continue
        finally:
            conn.close()
    return frozenset(found)


def refuse_stale_ids(run_dir: str | Path, units: Callable[[], Iterable[Any]]) -> None:
    """Refuse a run folder whose older ids this input's units would miss or be mixed with.

    Raises :class:`StaleIdsError` when the folder's journals keyed units by less than
    their prompt shows (:func:`stale_ids`) and hold the older id of one of ``units()``
    (this input's: anything with ``id``, ``kind``, ``claim``, ``passages``, ``reasoning`` and
    ``verdict``; called only for such a folder) under another id: the id of its passage texts
    alone, or of their texts, sources and titles without their ids. It would be judged again
    at cost beside its old row, or found uncoded. A unit whose id did not change (no passage
    shows more than its text), or that comes with its old id (a units file written then), is
    looked up by it: a folder holding only such units is used as it is.
    """
    from failcodes.units import unit_id

    old = stale_ids(run_dir)
    if not old:
        return
    hit: dict[str, str] = {}
    for u in units():
        if u.id in old:
            continue
        no_ids = [
            SimpleNamespace(text=p.text, source=p.source, title=p.title, passage_id=None)
            for p in u.passages
        ]
        for passages in ([p.text for p in u.passages], no_ids):
            uid = unit_id(u.kind, u.claim, passages, u.reasoning, u.verdict)
            if uid in old:
                hit[uid] = u.kind.value
    if hit:
        raise StaleIdsError(Path(run_dir), len(hit), sorted(set(hit.values())))


class StaleIdsError(ConfigError):
    """A run folder holds units of this input under their older ids."""

    def __init__(self, run_dir: Path, units: int, kinds: list[str]) -> None:
        self.run_dir, self.units = run_dir, units
        kind = " and ".join(kinds)
        super().__init__(
            f"{run_dir} holds {units} {kind} unit(s) of this input coded under an earlier "
            "failcodes, whose unit id held less than the prompt now shows beside each passage "
            "(its text only, or no passage id: one passage shown two ways was judged once, as "
            "the first seen): move that folder aside (to keep its codes) and judge "
            f"{kind} again (in a study: failcodes run); the response cache does not answer "
            "them from that run (its keys held that version's prompt templates)"
        )


def check_identity(run_dir: str | Path, stored: Mapping[str, str], meta: Mapping[str, str]) -> None:
    """Raise :class:`RunIdentityError` when ``stored`` describes another run than ``meta``.

    Keys absent from either are not compared; older unit ids (:data:`UNIT_IDS_KEY`) are not
    another run: :func:`refuse_stale_ids` refuses the folders whose ids they change.
    """
    for key in IDENTITY_KEYS:
        if key in meta and key in stored and stored[key] != meta[key]:
            if key == UNIT_IDS_KEY and _older_ids(stored):
                continue
            raise RunIdentityError(Path(run_dir), key, stored, meta)
    if _older_prompt(stored, meta):
        raise RunIdentityError(Path(run_dir), TEMPLATES_KEY, stored, meta)


#: The meta key of every prompt template's hash (:func:`~failcodes.judge.prompts.
#: template_hash`): compared only for a journal written before ``prompt_hash``.
TEMPLATES_KEY = "template_hash"


def _older_prompt(stored: Mapping[str, str], meta: Mapping[str, str]) -> bool:
    """Whether an LLM run begun before ``prompt_hash`` was shown other prompt templates.

    Such a journal has no ``prompt_hash`` to compare, and was taken at its first resume, the
    digest then recorded: an upgrade between its version and this one mixed two prompts in
    it unseen. Its ``template_hash`` covers every template: the same, the judge is shown the
    same prompt (same codebook); another, this one may differ, and the run is refused
    (a retrieval run whose verification template alone changed too: which one changed
    cannot be told from the journal).
    """
    if "prompt_hash" not in meta or "prompt_hash" in stored:
        return False
    old, now = stored.get(TEMPLATES_KEY), meta.get(TEMPLATES_KEY)
    return old is not None and now is not None and old != now


class RunIdentityError(ConfigError):
    """A run folder holds another run (another judge, model, kind or codebook content).

    Carries both descriptions, so a caller that sets the folder itself (a study) can say what
    to do instead of ``-o``.
    """

    def __init__(
        self, run_dir: Path, key: str, stored: Mapping[str, str], wanted: Mapping[str, str]
    ) -> None:
        self.run_dir, self.key = run_dir, key
        self.stored, self.wanted = dict(stored), dict(wanted)
        if key == TEMPLATES_KEY:
            super().__init__(
                f"{run_dir} holds a run begun by a failcodes older than the prompt digest "
                f"(prompt_hash), whose prompt templates differ from this one's ({key} "
                f"{stored[key][:12]}, now {wanted[key][:12]}; same codebook): its judge may "
                "have been shown another prompt, and resuming would mix answers to two "
                "prompts in one run; judge again into another output folder (-o), or finish "
                "this run with the failcodes version that began it"
            )
            return
        if key in PROMPT_KEYS:
            super().__init__(
                f"{run_dir} holds a run whose judge was shown another prompt ({key} "
                f"{stored[key][:12]}, now {wanted[key][:12]}: this failcodes renders the "
                "system prompt, answer schema or prompt templates differently from the one "
                "that began it, same codebook): resuming would mix answers to two prompts in "
                "one run; judge again into another output folder (-o), or finish this run "
                "with the failcodes version that began it"
            )
            return
        super().__init__(
            f"{run_dir} holds a run with {key}={stored[key]!r}, not {wanted[key]!r}; use "
            "another output folder (-o) for a different run"
        )


#: The identity keys of the prompt's content (:data:`IDENTITY_KEYS`).
PROMPT_KEYS = ("prompt_hash", "group_prompt_hash", TEMPLATES_KEY)


@dataclass(frozen=True)
class JournalTotals:
    """Sums over every unit recorded in the journal."""

    units: int
    scored: int
    unscored: int
    cache_hits: int
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    cost_usd: float


def check_run_dir(run_dir: str | Path) -> Path:
    """Check, creating nothing, that ``run_dir`` can hold a run (writable, journal usable).

    Raises :class:`~failcodes.errors.OutputError` naming the folder or ``journal.sqlite`` and
    what to do (see :func:`failcodes.fileio.check_output_dir`).
    """
    folder = check_output_dir(run_dir)
    check_database(folder / JOURNAL_NAME, option="another -o")
    return folder


#: What to do about a journal row that is no annotation (the file was changed by hand).
_TAMPERED = "the journal was changed outside failcodes; judge again into a fresh -o folder"


def decode_row(path: Path, seq: object, unit_id: object, text: object) -> Annotation:
    """The annotation stored in one journal row; a row that holds none is one InputError.

    It names the journal, the row (its sequence number and unit) and the field. A row
    :func:`~failcodes.annotationlines.vouched` takes (no key twice, no lax value) goes to
    pydantic's JSON decoder alone (fast); any other row is read by the strict reader, which
    refuses a key given twice (pydantic's decoder keeps the last).
    """
    if isinstance(text, str | bytes) and vouched(text) is not None:
        try:
            return Annotation.model_validate_json(text)
        except ValidationError:  # pragma: no cover - vouched lines validate
            pass
    where = f"row {seq} (unit {str(unit_id)[:80]!r})"
    if not isinstance(text, str):
        raise InputError(
            f"{where}: the annotation is {type(text).__name__}, not JSON text; {_TAMPERED}",
            path=path,
        )
    from failcodes.tableio import validate_record

    try:
        record = parse_json(text)
        if not isinstance(record, dict):
            raise InputError(f"expected a JSON object, got {type(record).__name__}")
        return validate_record(Annotation, record, path, None)
    except InputError as exc:
        raise InputError(
            f"{where}: {exc.reason}; {_TAMPERED}", path=path, field=exc.field
        ) from None


def dumped_row(path: Path, seq: object, unit_id: object, text: object) -> bytes:
    """``decode_row(...).model_dump_json()`` as UTF-8: a row's annotations.jsonl line.

    A row :func:`~failcodes.annotationlines.vouched` takes whose text is already the model's
    JSON (:func:`~failcodes.annotationlines.is_dumped`) is given as it stands, decoded once;
    any other row is read and dumped by the model (its errors unchanged).
    """
    if isinstance(text, str):
        line = vouched(text)
        if line is not None and is_dumped(line, text):
            return text.encode("utf-8")
    return decode_row(path, seq, unit_id, text).model_dump_json().encode("utf-8")


def _vouched_row(path: Path, seq: object, unit_id: object, text: object) -> AnnotationRead:
    """:func:`decode_row`; a row :func:`~failcodes.annotationlines.vouched` takes: its struct."""
    line = vouched(text) if isinstance(text, str | bytes) else None
    return line if line is not None else decode_row(path, seq, unit_id, text)


def iter_journal(run_dir: str | Path) -> Iterator[Annotation]:
    """Every annotation of a run's journal, in commit order, the journal left untouched.

    For readers of a finished run (``attribute --retrieval``, ``labelstudio export
    --judged``, ``recode``): no migration, no ``-wal``/``-shm`` files; an empty, damaged or
    foreign database raises :class:`~failcodes.errors.InputError` naming it, when reached.
    The rows are not held (~1 GB of JSON text at paper scale).
    """
    return _rows(Path(run_dir) / JOURNAL_NAME, decode_row)


def iter_journal_lines(run_dir: str | Path) -> Iterator[AnnotationRead]:
    """:func:`iter_journal`, a row msgspec can vouch for given as its struct, not its model.

    The same rows accepted with the same values, the same errors
    (:mod:`failcodes.annotationlines`); for readers of a few fields (``attribute``).
    """
    return _rows(Path(run_dir) / JOURNAL_NAME, _vouched_row)


def _rows(path: Path, decode: Callable[[Path, object, object, object], _A]) -> Iterator[_A]:
    """Each row of the journal ``path`` decoded, in commit order (see :func:`iter_journal`)."""
    if path.is_file() and path.stat().st_size == 0:
        raise InputError("empty file, expected a judge journal (SQLite)", path=path)
    if not path.exists():  # was SQLite's 'unable to open database file', said 'not readable'
        raise InputError(f"no judge run here (missing {JOURNAL_NAME})", path=path.parent)
    try:
        conn = open_read_only(path)
    except sqlite3.DatabaseError as exc:
        raise _unreadable(path, exc) from None
    try:
        for seq, unit, text in conn.execute(
            "SELECT seq, unit_id, annotation FROM annotations ORDER BY seq"
        ):
            yield decode(path, seq, unit, text)
    except sqlite3.DatabaseError as exc:
        raise _unreadable(path, exc) from None
    finally:
        conn.close()


def _deflated_response(request: str | None, response: str | None) -> tuple[str | None, Any]:
    """The raw columns as stored: the response's JSON zlib-compressed (a BLOB).

    Nothing but :meth:`Journal.raw` reads a raw response (it is the audit copy of what the
    provider sent; the annotation holds what was taken from it): about 1.8 KB of JSON per
    retrieval unit through the OpenAI SDK, a third of that compressed (issue 30). The request
    stays JSON text: its static parts are blobs already (:class:`BlobStore`).
    """
    return request, None if response is None else zlib.compress(response.encode("utf-8"))


def _inflated_response(stored: str | bytes) -> Any:
    """A stored raw response: compressed (this version) or JSON text (journals before it)."""
    if isinstance(stored, bytes):
        return json.loads(zlib.decompress(stored))
    return json.loads(stored)


def _unreadable(path: Path, exc: sqlite3.DatabaseError) -> InputError:
    return InputError(
        f"not a readable judge journal ({exc}); judge again into a fresh -o folder", path=path
    )


class Journal:
    """One run's journal (``RUN_DIR/journal.sqlite``)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / JOURNAL_NAME
        self._conn = open_migrated(self.path, MIGRATIONS, option="another -o", page_size=PAGE_SIZE)
        self._blobs = BlobStore(self._conn)
        self._session: int | None = None
        #: The batch ledger (batch mode's tables, on this connection).
        self.ledger = BatchLedger(self._conn)

    # -- run identity ---------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        """Return the stored run description."""
        return dict(self._conn.execute("SELECT key, value FROM meta").fetchall())

    def check(self, meta: Mapping[str, str]) -> None:
        """Raise :class:`RunIdentityError` when the stored run is another one; write nothing.

        A dry run checks this before it counts the units already done: another judge's or
        codebook's units were counted as done where the run refuses.
        """
        check_identity(self.run_dir, self.meta(), meta)

    def bind(self, meta: dict[str, str]) -> list[str]:
        """Record the run description, or check it matches the stored one (resume).

        A journal with rows of older ids (:data:`UNIT_IDS_KEY`) keeps its value: its rows stay
        marked as of older ids (:func:`stale_ids`). Returns the endpoints other than
        ``meta``'s ``base_url`` that the journal's units were judged at (:data:`ENDPOINTS_KEY`;
        "" the vendor's own), oldest first.
        """
        self.check(meta)
        stored = self.meta()
        rows = self._conn.execute("SELECT 1 FROM annotations LIMIT 1").fetchone()
        if rows is not None and _older_ids(stored):
            meta = {k: v for k, v in meta.items() if k != UNIT_IDS_KEY}
        others: list[str] = []
        if "base_url" in meta:
            seen = self._endpoints(stored, rows is not None)
            others = [url for url in seen if url != meta["base_url"]]
            if seen:  # this endpoint is added once it judged a unit (:meth:`judged_at`)
                meta = {**meta, ENDPOINTS_KEY: "\n".join(seen)}
        shapes = self._shapes(stored, rows is not None)
        if shapes and meta.get("coder_kind") == "llm":  # the last mode, before it is replaced
            meta = {**meta, SHAPES_KEY: "\n".join(shapes)}
        self._conn.execute("BEGIN IMMEDIATE")
        for key, value in meta.items():
            self._conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value)
            )
        self._conn.execute("COMMIT")
        return others

    @staticmethod
    def _endpoints(stored: Mapping[str, str], judged: bool) -> list[str]:
        """The endpoints ``stored`` says the run's units were judged at (none unless ``judged``)."""
        urls = stored.get(ENDPOINTS_KEY, stored.get("base_url")) if judged else None
        # base_url alone: a journal written before the list
        return list(dict.fromkeys(urls.split("\n"))) if urls is not None else []

    def other_endpoints(self, meta: Mapping[str, str]) -> list[str]:
        """What :meth:`bind` would return for ``meta``, writing nothing (a dry run says it)."""
        if "base_url" not in meta:
            return []
        rows = self._conn.execute("SELECT 1 FROM annotations LIMIT 1").fetchone()
        seen = self._endpoints(self.meta(), rows is not None)
        return [url for url in seen if url != meta["base_url"]]

    @staticmethod
    def _shapes(stored: Mapping[str, str], judged: bool) -> list[str]:
        """How ``stored`` says the run's units were asked (:data:`SHAPES_KEY`; [] unless judged)."""
        if not judged:
            return []
        if SHAPES_KEY in stored:
            return stored[SHAPES_KEY].split("\n")
        return [prompt_shape(stored["mode"])] if "mode" in stored else []

    def other_shapes(self, meta: Mapping[str, str], mode: str) -> list[str]:
        """The other ways than ``mode``'s an LLM judge was asked the run's units (none: one way).

        Writes nothing (a dry run says it too); see :data:`SHAPES_KEY`.
        """
        if meta.get("coder_kind") != "llm":
            return []
        rows = self._conn.execute("SELECT 1 FROM annotations LIMIT 1").fetchone()
        shapes = self._shapes(self.meta(), rows is not None)
        return [shape for shape in shapes if shape != prompt_shape(mode)]

    def judged_at(self, base_url: str, mode: str | None = None) -> None:
        """Add ``base_url`` to the endpoints the run's units were judged at (:data:`ENDPOINTS_KEY`).

        And ``mode``'s shape to :data:`SHAPES_KEY`, if given. Called once an invocation
        committed a unit: one that judged none (a finished run rerun at another URL) named no
        endpoint its units were judged at.
        """
        stored = self.meta()
        added = [(ENDPOINTS_KEY, base_url)]
        if mode is not None:
            added.append((SHAPES_KEY, prompt_shape(mode)))
        for key, value in added:
            seen = stored[key].split("\n") if key in stored else []
            if value not in seen:
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    (key, "\n".join([*seen, value])),
                )

    # -- sessions -------------------------------------------------------------------------

    def start_session(self) -> int:
        """Open a session (one invocation of the run) and return its number."""
        cur = self._conn.execute(
            "INSERT INTO sessions (started_at) VALUES (?)", (datetime.now(UTC).isoformat(),)
        )
        self._session = int(cur.lastrowid or 0)
        return self._session

    def finish_session(self, outcome: str, summary: dict[str, Any]) -> None:
        """Close the current session with its outcome and summary."""
        if self._session is None:
            return
        self._conn.execute(
            "UPDATE sessions SET finished_at = ?, outcome = ?, summary = ? WHERE id = ?",
            (datetime.now(UTC).isoformat(), outcome, json.dumps(summary), self._session),
        )

    # -- units ----------------------------------------------------------------------------

    def present(self, unit_ids: list[str]) -> set[str]:
        """Which of ``unit_ids`` are already recorded (asked chunk by chunk at scale)."""
        if not unit_ids:
            return set()
        marks = ",".join("?" * len(unit_ids))
        rows = self._conn.execute(
            f"SELECT unit_id FROM annotations WHERE unit_id IN ({marks})", unit_ids
        )
        return {r[0] for r in rows}

    def mean_output_tokens(self, min_units: int) -> float | None:
        """Mean output tokens of the units that made calls, if at least ``min_units`` did."""
        row = self._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(output_tokens), 0) FROM annotations "
            "WHERE output_tokens > 0"
        ).fetchone()
        n, total = int(row[0]), int(row[1])
        return total / n if n >= min_units and n else None

    def iter_ids(self) -> Iterator[str]:
        """Ids of the units already recorded, one at a time."""
        for (unit_id,) in self._conn.execute("SELECT unit_id FROM annotations"):
            yield unit_id

    def done_ids(self) -> set[str]:
        """Ids of the units already recorded."""
        return {row[0] for row in self._conn.execute("SELECT unit_id FROM annotations")}

    def record(
        self,
        annotation: Annotation,
        *,
        tokens: TokenUsage,
        raw_request: dict[str, Any] | None,
        raw_response: dict[str, Any] | None,
        cache_hit: bool,
        attempts: int,
        blobs: Mapping[str, Any] | None = None,
    ) -> None:
        """Commit one finished unit now (raises if the unit is already recorded).

        ``blobs``: see :meth:`BlobStore.raw_columns`.
        """
        self._conn.execute(
            "INSERT INTO annotations (unit_id, kind, status, annotation, raw_request, "
            "raw_response, input_tokens, cached_input_tokens, cache_write_tokens, "
            "output_tokens, cost_usd, latency_s, cache_hit, attempts, session, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                annotation.unit_id,
                annotation.unit_kind.value,
                annotation.status.value,
                annotation.model_dump_json(),
                *_deflated_response(*self._blobs.raw_columns(raw_request, raw_response, blobs)),
                tokens.input_tokens,
                tokens.cached_input_tokens,
                tokens.cache_write_tokens,
                tokens.output_tokens,
                annotation.usage.cost_usd,
                annotation.usage.latency_s,
                int(cache_hit),
                attempts,
                self._session,
                datetime.now(UTC).isoformat(),
            ),
        )

    def record_uncalled(self, annotation: Annotation) -> None:
        """Commit a unit whose annotation took no call (carried over, migrated): no tokens."""
        self.record(
            annotation,
            tokens=TokenUsage(),
            raw_request=None,
            raw_response=None,
            cache_hit=False,
            attempts=0,
        )

    def annotations(self) -> Iterator[Annotation]:
        """Yield the recorded annotations in the order they were committed."""
        rows = self._conn.execute("SELECT seq, unit_id, annotation FROM annotations ORDER BY seq")
        for seq, unit, text in rows:
            yield decode_row(self.path, seq, unit, text)

    def annotation_texts(self, only: Container[str] | None = None) -> Iterator[bytes]:
        """:meth:`annotations` as each model's JSON text (:func:`dumped_row`).

        ``only``: those of these unit ids alone.
        """
        rows = self._conn.execute("SELECT seq, unit_id, annotation FROM annotations ORDER BY seq")
        for seq, unit, text in rows:
            if only is None or unit in only:
                yield dumped_row(self.path, seq, unit, text)

    def raw(self, unit_id: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """Return the raw request and response stored for ``unit_id``."""
        row = self._conn.execute(
            "SELECT raw_request, raw_response FROM annotations WHERE unit_id = ?", (unit_id,)
        ).fetchone()
        if row is None:
            raise KeyError(unit_id)
        return (
            self._blobs.loads(row[0]) if row[0] else None,
            _inflated_response(row[1]) if row[1] else None,
        )

    def totals(self) -> JournalTotals:
        """Sum tokens, cost and outcomes over the whole journal."""
        row = self._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(status = 'scored'), 0), "
            "COALESCE(SUM(status = 'unscored'), 0), COALESCE(SUM(cache_hit), 0), "
            "COALESCE(SUM(input_tokens), 0), COALESCE(SUM(cached_input_tokens), 0), "
            "COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost_usd), 0) FROM annotations"
        ).fetchone()
        return JournalTotals(
            units=int(row[0]),
            scored=int(row[1]),
            unscored=int(row[2]),
            cache_hits=int(row[3]),
            input_tokens=int(row[4]),
            cached_input_tokens=int(row[5]),
            output_tokens=int(row[6]),
            cost_usd=float(row[7]),
        )

    def close(self) -> None:
        """Close the database."""
        self._conn.close()
