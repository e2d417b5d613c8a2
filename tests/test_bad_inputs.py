"""Table-driven bad-input suite (issue 16): every case is one clean line, exit 2, nothing written.

Each case builds a small workspace (valid traces, labels, codebook), breaks one thing, and runs
the real CLI entry point in-process. It asserts: exit code 2; exactly one stderr line, starting
``failcodes: error:`` and naming the file (and the field or line where there is one); no
traceback (an uncaught exception fails the test); the workspace unchanged (no file created,
removed or modified, e.g. no fresh ``journal.sqlite`` or empty run folder).
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest
import yaml

from failcodes.cli.main import main
from failcodes.codebook import bundled_dir
from failcodes.ingest.scifact import bundled_dir as scifact_bundled_dir
from failcodes.study.config import TEMPLATE
from tests.judge_helpers import make_traces

CODEBOOK = next(bundled_dir().glob("*.v1.yaml"))

Setup = Callable[[Path], None]


@dataclass(frozen=True)
class Case:
    """One bad input: files to write, the command line, what the error line must name."""

    id: str
    argv: tuple[str, ...]
    setup: Setup = lambda d: None
    expect: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)
    #: The whole error line, exactly ("{d}" stands for the workspace folder).
    line: str | None = None
    #: Environment variables set for the command.
    env: tuple[tuple[str, str], ...] = ()


def _trace_lines() -> list[dict[str, object]]:
    return [t.model_dump(mode="json", exclude_none=True) for t in make_traces(2)]


def _jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


GOOD_TRACES = _jsonl(_trace_lines())
LABELS = "claim_id,has_error,annotator\n" + "".join(
    f"{r['claim_id']},false,a\n" for r in _trace_lines()[::2]
)


def _second_line(text: str) -> str:
    """GOOD_TRACES with its second line replaced by ``text``."""
    lines = GOOD_TRACES.splitlines()
    lines[1] = text
    return "\n".join(lines) + "\n"


def _mutated(**changes: object) -> str:
    rows = _trace_lines()
    rows[1] = {**rows[1], **changes}
    return _jsonl(rows)


first = _trace_lines()[1]
raw_first = json.dumps(first)


def _second_line_bytes(old: bytes, new: bytes) -> bytes:
    """GOOD_TRACES (bytes) with ``old`` replaced by ``new`` in its second line."""
    lines = GOOD_TRACES.encode().splitlines(keepends=True)
    lines[1] = lines[1].replace(old, new, 1)
    return b"".join(lines)


#: Broken trace files: (id, content, substrings the error line must contain).
BAD_TRACES: list[tuple[str, str | bytes, tuple[str, ...]]] = [
    ("malformed-json", _second_line(raw_first[:-5]), ("t.jsonl:2", "malformed JSON")),
    (
        "duplicate-key",
        _second_line(raw_first[:-1] + ', "claim": "again"}'),
        ("t.jsonl:2", "field 'claim'", "appears twice"),
    ),
    (
        "nan-score",
        _second_line(raw_first.replace('"rank": 1,', '"rank": 1, "score": NaN,', 1)),
        ("t.jsonl:2", "NaN"),
    ),
    (
        "infinity-score",
        _second_line(raw_first.replace('"rank": 1,', '"rank": 1, "score": Infinity,', 1)),
        ("t.jsonl:2", "Infinity"),
    ),
    (
        "overflow-score",
        _second_line(raw_first.replace('"rank": 1,', '"rank": 1, "score": 1e999,', 1)),
        ("t.jsonl:2", "overflows"),
    ),
    ("deep-nesting", _second_line("[" * 200_000), ("t.jsonl:2", "nested deeper")),
    (
        "lone-surrogate",
        _second_line(raw_first.replace('"claim": "', '"claim": "\\ud800', 1)),
        ("t.jsonl:2", "field 'claim'", "lone surrogate"),
    ),
    ("not-an-object", _second_line("[1, 2]"), ("t.jsonl:2", "expected a JSON object")),
    ("missing-field", _mutated(claim_id=None), ("t.jsonl:2", "claim_id")),
    ("unknown-field", _mutated(colour="red"), ("t.jsonl:2", "field 'colour'")),
    ("bad-verdict", _mutated(verdict="maybe?"), ("t.jsonl:2", "verdict")),
    # a numeric class code is looked up as its text ('0'), never defaulted without an alias
    ("numeric-verdict", _mutated(verdict=0), ("t.jsonl:2", "unknown verdict 0", "--alias")),
    ("fractional-verdict", _mutated(verdict=0.5), ("t.jsonl:2", "expected a verdict string")),
    (
        "duplicate-rank",
        _mutated(
            passages=[
                {"passage_id": "a", "rank": 1, "text": "x"},
                {"passage_id": "b", "rank": 1, "text": "y"},
            ]
        ),
        ("t.jsonl:2", "field 'passages'", "rank 1 appears twice"),
    ),
    ("rank-zero", _mutated(passages=[{"passage_id": "a", "rank": 0, "text": "x"}]), ("rank",)),
    # pydantic's lax mode read true as rank 1 and score 1.0 (t31lax), a blank claim as a claim
    (
        "rank-boolean",
        _mutated(passages=[{"passage_id": "a", "rank": True, "text": "x"}]),
        ("t.jsonl:2", "field 'passages[0].rank'", "the boolean true"),
    ),
    (
        "score-boolean",
        _mutated(passages=[{"passage_id": "a", "rank": 1, "text": "x", "score": False}]),
        ("t.jsonl:2", "field 'passages[0].score'", "the boolean false", "gold"),
    ),
    ("blank-claim", _mutated(claim="  "), ("t.jsonl:2", "field 'claim'", "no text")),
    (
        "rank-underscore",  # Python's int("1_0") is 10
        _mutated(passages=[{"passage_id": "a", "rank": "1_0", "text": "x"}]),
        ("t.jsonl:2", "field 'passages[0].rank'", "an underscore is no part of a number"),
    ),
    ("duplicate-claim", _jsonl([*_trace_lines(), _trace_lines()[0]]), ("t.jsonl:5", "claim_id")),
    ("not-utf8", GOOD_TRACES + "\xff\n", ("t.jsonl", "UTF-8")),
    # a JSON array of the records, a CSV named .jsonl: the errors said "expected a JSON
    # object, got list" and "malformed JSON (Expecting value at column 1)" alone
    (
        "json-array",
        json.dumps(_trace_lines()) + "\n",
        ("t.jsonl:1: expected a JSON object, got list; a JSON array of the records? JSONL",),
    ),
    (
        "csv-named-jsonl",
        "system,question_id,sentence_id,verdict\nsysA,q1,s1,refuted\n",
        ("t.jsonl:1: malformed JSON", "; a CSV line? JSONL is one JSON object per line (a CSV"),
    ),
    # gzip-compressed JSONL under its own name: 'not UTF-8 text (invalid start byte at byte
    # 1)', nothing said of the compression
    (
        "gzip-compressed",
        gzip.compress(GOOD_TRACES.encode()),
        ("t.jsonl: not UTF-8 text", "; it is gzip-compressed: decompress it (gunzip)"),
    ),
    # a Latin-1 byte inside a line's claim: the error named the byte offset alone
    (
        "not-utf8-in-a-field",
        _second_line_bytes(b'"claim": "', b'"claim": "\xe9'),
        ("t.jsonl:2, field 'claim': not UTF-8 text (invalid continuation byte at byte",),
    ),
]


def _write(files: dict[str, str | bytes]) -> Setup:
    def setup(d: Path) -> None:
        for name, content in files.items():
            path = d / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            elif "\xff" in content:  # write the byte, not its UTF-8 encoding
                path.write_bytes(content.replace("\xff", "").encode() + b"\xff\n")
            else:
                path.write_text(content, encoding="utf-8")

    return setup


def _trace_cases() -> list[Case]:
    out: list[Case] = []
    for name, content, expect in BAD_TRACES:
        files = {"t.jsonl": content, "labels.csv": LABELS}
        setup = _write(files)
        out += [
            Case(
                f"metrics/{name}",
                ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
                setup,
                expect,
            ),
            Case(
                f"disagreements/{name}",
                (
                    *("disagreements", "--traces", "{d}/t.jsonl", "--labels"),
                    *("{d}/labels.csv", "-o", "{d}/out/dis.jsonl"),
                ),
                setup,
                expect,
            ),
            Case(
                f"judge/{name}",
                (
                    *("judge", "retrieval", "--from", "{d}/t.jsonl", "--codebook", str(CODEBOOK)),
                    *("-o", "{d}/run"),
                ),
                setup,
                expect,
            ),
            Case(
                f"attribute/{name}",
                (
                    *("attribute", "--from", "{d}/t.jsonl", "--codebook", str(CODEBOOK)),
                    *("-o", "{d}/att"),
                ),
                setup,
                expect,
            ),
        ]
    return out


BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [
        f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    ]
)
#: A HealthVer CSV and a COVID-Fact recall TSV of one row each (their published headers).
HEALTHVER = (
    "id,evidence,claim,label,topic_ip,question\n1,Masks reduce spread.,Masks work,Supports,1,q\n"
)
COVIDFACT = "index\tsentence1\tsentence2\tlabel\trecall\n0\tev\tclaim\tentailment\t1\n"
GOOD_CB = CODEBOOK.read_text(encoding="utf-8")
_doc = yaml.safe_load(GOOD_CB)
_doc["parts"] = [p for p in _doc["parts"] if p["id"] != "retrieval"]
_doc.pop("leaves", None)
NO_RETRIEVAL = yaml.safe_dump(_doc, sort_keys=False)

CODEBOOK_CASES: list[tuple[str, str, tuple[str, ...]]] = [
    ("alias-bomb", BOMB, ("cb.yaml:2", "aliases")),
    ("yaml-syntax", "name: [unclosed\n", ("cb.yaml", "yaml-syntax")),
    ("not-a-mapping", "- 1\n- 2\n", ("cb.yaml", "not-a-mapping")),
    ("empty", "", ("cb.yaml", "empty")),
    ("duplicate-key", GOOD_CB + "\nname: again\n", ("cb.yaml", "duplicate-key")),
    ("unknown-key", GOOD_CB + "\ncolour: red\n", ("cb.yaml", "colour")),
    ("too-large", "#" * (1024 * 1024 + 1), ("cb.yaml", "too-large")),
    ("bad-version", GOOD_CB.replace("version: 1", "version: 0", 1), ("cb.yaml", "version")),
]


def _codebook_cases() -> list[Case]:
    out = []
    for name, text, expect in CODEBOOK_CASES:
        setup = _write({"cb.yaml": text, "t.jsonl": GOOD_TRACES})
        out.append(
            Case(
                f"codebook-validate/{name}", ("codebook", "validate", "{d}/cb.yaml"), setup, expect
            )
        )
        out.append(
            Case(
                f"judge-codebook/{name}",
                (
                    "judge",
                    "retrieval",
                    "--from",
                    "{d}/t.jsonl",
                    "--codebook",
                    "{d}/cb.yaml",
                    "-o",
                    "{d}/run",
                ),
                setup,
                expect,
            )
        )
    return out


NOT_SQLITE = "this is not a SQLite database\n" * 20
JUDGE = ("judge", "retrieval", "--from", "{d}/t.jsonl", "--codebook", str(CODEBOOK))


def _mk_dir(*names: str, files: dict[str, str] | None = None) -> Setup:
    def setup(d: Path) -> None:
        for n in names:
            (d / n).mkdir(parents=True, exist_ok=True)
        _write({"t.jsonl": GOOD_TRACES, "labels.csv": LABELS, **(files or {})})(d)

    return setup


OUTPUT_CASES: list[Case] = [
    Case("judge/o-is-a-file", (*JUDGE, "-o", "{d}/t.jsonl"), _mk_dir(), ("t.jsonl", "is a file")),
    Case(
        "judge/o-under-a-file",
        (*JUDGE, "-o", "{d}/t.jsonl/run"),
        _mk_dir(),
        ("t.jsonl", "folder is needed"),
    ),
    Case(
        "judge/corrupt-journal",
        (*JUDGE, "-o", "{d}/run"),
        _mk_dir("run", files={"run/journal.sqlite": NOT_SQLITE}),
        ("journal.sqlite", "not a usable SQLite database"),
    ),
    Case(
        "judge/journal-is-a-folder",
        (*JUDGE, "-o", "{d}/run"),
        _mk_dir("run/journal.sqlite"),
        ("journal.sqlite", "is a folder"),
    ),
    Case(
        "judge/missing-part",
        (
            "judge",
            "retrieval",
            "--from",
            "{d}/t.jsonl",
            "--codebook",
            "{d}/cb.yaml",
            "-o",
            "{d}/run",
        ),
        _write({"t.jsonl": GOOD_TRACES, "cb.yaml": NO_RETRIEVAL}),
        ("cb.yaml", "field 'parts'", "no 'retrieval' part"),
    ),
    Case(
        "judge/missing-input",
        (*JUDGE[:3], "{d}/nope.jsonl", *JUDGE[4:], "-o", "{d}/run"),
        _mk_dir(),
        ("nope.jsonl",),
    ),
    Case(
        "judge/input-is-a-folder",
        (*JUDGE[:3], "{d}/folder.jsonl", *JUDGE[4:], "-o", "{d}/run"),
        _mk_dir("folder.jsonl"),
        ("folder.jsonl",),
    ),
    Case(
        "disagreements/o-is-a-folder",
        (
            *("disagreements", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
            *("-o", "{d}/outdir.jsonl"),
        ),
        _mk_dir("outdir.jsonl"),
        ("outdir.jsonl", "is a folder"),
    ),
    Case(
        "ingest/o-is-a-folder",
        ("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/outdir.jsonl"),
        _mk_dir("outdir.jsonl"),
        ("outdir.jsonl", "is a folder"),
    ),
    Case(
        "ingest/o-under-a-file",
        ("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/labels.csv/x.jsonl"),
        _mk_dir(),
        ("labels.csv", "folder is needed"),
    ),
    Case(
        "cache-stats/corrupt",
        ("cache", "stats", "--cache", "{d}/c.sqlite"),
        _write({"c.sqlite": NOT_SQLITE}),
        ("c.sqlite", "not a usable SQLite database", "--cache"),
    ),
    Case(
        "cache-stats/missing",
        ("cache", "stats", "--cache", "{d}/none.sqlite"),
        _write({}),
        ("none.sqlite",),
    ),
    Case(
        "cache-stats/folder",
        ("cache", "stats", "--cache", "{d}/dir.sqlite"),
        _mk_dir("dir.sqlite"),
        ("dir.sqlite",),
    ),
    Case(
        "cache-prune/corrupt",
        ("cache", "prune", "--all", "--cache", "{d}/c.sqlite"),
        _write({"c.sqlite": NOT_SQLITE}),
        ("c.sqlite", "not a usable SQLite database"),
    ),
]

ANNOTATION = {
    "unit_id": "u1",
    "unit_kind": "retrieval",
    "status": "unscored",
    "reason": "x",
    "codebook": {"name": "medical-fact-check", "version": 1, "hash": "0" * 64},
    "coder": "offline",
    "coder_kind": "heuristic",
}
STUDY = "{d}/study"
REPORT = ("report", STUDY, "-o", "{d}/rep")


PREDICTIONS = "multivers_predictions_dev/scifact_scifact_dev.jsonl"


def _scifact(change: Callable[[Path], object]) -> Setup:
    """The bundled SciFact folder (claims + the four checkpoints' predictions), changed."""

    def setup(d: Path) -> None:
        root = d / "sf"
        shutil.copytree(scifact_bundled_dir(), root)
        change(root)

    return setup


def _swap_first_predictions(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([lines[1], lines[0], *lines[2:]]), encoding="utf-8")


def _symlink_loop(name: str) -> Setup:
    def setup(d: Path) -> None:
        _mk_dir()(d)
        (d / name).symlink_to(name)

    return setup


def _study_file(old: str, new: str) -> str:
    """The study file `failcodes init` writes, with ``old`` replaced by ``new``."""
    text = TEMPLATE.format(name="study", codebook="medical-fact-check.v1.yaml")
    assert old in text
    return text.replace(old, new, 1)


def _study(files: dict[str, str | bytes]) -> Setup:
    return _write({f"study/{k}": v for k, v in files.items()})


#: A coded per-passage table under the bundled codebook (retrieval dimensions, all high).
PER_PASSAGE_HEAD = (
    "system,retriever,unit_id,status,entity_match,scope,trustworthy,evidence_polarity,"
    "chunking,all_high\n"
)
PER_PASSAGE_ROW = (
    "s,r,u1,scored,exact_entity,exact_scope,trustworthy_source,direct_polarity,well_chunked,True\n"
)


#: A row whose passage id holds a quoted line break, a blank line, then a good row (rows 2-5).
BREAK_THEN_ROW = PER_PASSAGE_ROW.replace("s,r,u1", 's,r,"u\n1"') + "\n" + PER_PASSAGE_ROW


def _per_passage_study(rows: str) -> Setup:
    """A study whose coded per-passage table is PER_PASSAGE_HEAD followed by ``rows``."""
    return _study(
        {
            "attribution/d/per_passage.csv": PER_PASSAGE_HEAD + rows,
            "data/d.traces.jsonl": GOOD_TRACES,
        }
    )


REPORT_CASES: list[Case] = [
    Case("report/empty-folder", REPORT, _mk_dir("study"), ("study",)),
    Case("report/foreign-folder", REPORT, _study({"notes.txt": "hello\n"}), ("study",)),
    Case("report/no-such-folder", REPORT, _write({}), ("study",)),
    Case(
        "report/truncated-annotation-line-2",
        REPORT,
        _study(
            {
                "judge/d/retrieval/annotations.jsonl": json.dumps(ANNOTATION)
                + "\n"
                + json.dumps(ANNOTATION)[:40]
                + "\n",
                "data/d.traces.jsonl": GOOD_TRACES,
            }
        ),
        ("annotations.jsonl:2", "malformed JSON"),
    ),
    Case(
        "report/annotation-duplicate-key",
        REPORT,
        _study(
            {
                "judge/d/retrieval/annotations.jsonl": json.dumps(ANNOTATION)[:-1]
                + ', "coder": "x"}\n',
                "data/d.traces.jsonl": GOOD_TRACES,
            }
        ),
        ("annotations.jsonl:1", "field 'coder'"),
    ),
    Case(
        "report/per-passage-missing-column",
        REPORT,
        _study(
            {
                "attribution/d/per_passage.csv": "system,status\ns,scored\n",
                "data/d.traces.jsonl": GOOD_TRACES,
            }
        ),
        ("per_passage.csv:1", "field 'retriever'"),
    ),
    Case(
        "report/per-trace-missing-column",
        REPORT,
        _study(
            {
                "attribution/d/per_trace.csv": "verifier,status\nv,scored\n",
                "data/d.traces.jsonl": GOOD_TRACES,
            }
        ),
        ("per_trace.csv:1", "field 'all_correct'"),
    ),
    Case(
        "report/attribution-missing-stage",
        REPORT,
        _study(
            {
                "attribution/d/attribution.csv": "claim_id\nc1\n",
                "data/d.traces.jsonl": GOOD_TRACES,
            }
        ),
        ("attribution.csv:1", "field 'stage'"),
    ),
    # the report reads the coded tables in chunks (issue 30): a row with one field too many, or
    # a code not of the codebook, past the first rows is still refused naming its line
    Case(
        "report/per-passage-too-many-fields",
        REPORT,
        _per_passage_study(
            PER_PASSAGE_ROW + PER_PASSAGE_ROW + PER_PASSAGE_ROW.replace(",True", ",True,extra")
        ),
        ("per_passage.csv", "malformed CSV", "line 4"),
    ),
    Case(
        "report/per-passage-not-a-subcode",
        REPORT,
        _per_passage_study(PER_PASSAGE_ROW + PER_PASSAGE_ROW.replace("exact_entity", "half_match")),
        ("per_passage.csv:3", "field 'entity_match'", "'half_match' is not a subcode"),
    ),
    # pandas numbers records, not lines: a passage id holding a line break (quoted) and a
    # blank line before the bad row put it on line 6 of the file (pandas: record 5, or row 3
    # of the frame); both errors named line 5 / line 4 before (redteam9)
    Case(
        "report/per-passage-too-many-fields-after-a-quoted-line-break",
        REPORT,
        _per_passage_study(BREAK_THEN_ROW + PER_PASSAGE_ROW.replace(",True", ",True,extra")),
        ("per_passage.csv:6", "malformed CSV", "in line 6,"),
    ),
    Case(
        "report/per-passage-not-a-subcode-after-a-quoted-line-break",
        REPORT,
        _per_passage_study(BREAK_THEN_ROW + PER_PASSAGE_ROW.replace("exact_entity", "half_match")),
        ("per_passage.csv:6", "field 'entity_match'", "'half_match' is not a subcode"),
    ),
    Case(
        "report/attribution-empty",
        REPORT,
        _study({"attribution/d/attribution.csv": "", "data/d.traces.jsonl": GOOD_TRACES}),
        ("attribution.csv", "empty"),
    ),
    Case(
        "report/bad-traces",
        REPORT,
        _study({"data/d.traces.jsonl": _second_line("{bad")}),
        ("d.traces.jsonl:2", "malformed JSON"),
    ),
    Case(
        "report/metrics-not-a-list",
        REPORT,
        _study({"metrics/d.json": '{"a": 1}', "data/d.traces.jsonl": GOOD_TRACES}),
        ("d.json", "list"),
    ),
    Case(
        "report/metrics-row-without-system",
        REPORT,
        _study({"metrics/d.json": '[{"a": 1}]', "data/d.traces.jsonl": GOOD_TRACES}),
        ("d.json", "field '[0].system'"),
    ),
]

OTHER_CASES: list[Case] = [
    Case(
        "generic-labels/padded-id-named-by-its-column",
        (
            "ingest",
            "generic-labels",
            "{d}/c.csv",
            "-o",
            "{d}/l.jsonl",
            "--map",
            "Sentence=sentence_id",
        ),
        _write({"c.csv": "Sentence,has_error\ns1 ,true\n"}),
        ("c.csv:2, field 'Sentence'", "id 's1 '", "without spaces around it"),
    ),
    Case(
        "ingest-generic/padded-id-named-by-its-column",  # not by the question_id it fills
        ("ingest", "generic", "{d}/run.csv", "-o", "{d}/t.jsonl", "--map", "id=claim_id"),
        _write({"run.csv": "id,claim,verdict,system\nc1 ,X,supported,s\n"}),
        ("run.csv:2, field 'id'", "id 'c1 '", "without spaces around it"),
    ),
    Case(
        "labelstudio-push/a-tasks-file",  # the file `labelstudio export` wrote, pushed back
        (
            *("labelstudio", "push", "{d}/retrieval.tasks.json", "-p", "retrieval"),
            *("--project", "review", "--url", "http://127.0.0.1:9"),
        ),
        _write({"retrieval.tasks.json": '[{"data": {"unit_id": "u1"}}]'}),
        ("retrieval.tasks.json", "tasks are built from units", "project > Import"),
    ),
    Case(
        "labelstudio-import/malformed",
        ("labelstudio", "import", "{d}/x.json", "--part", "retrieval", "-o", "{d}/a.jsonl"),
        _write({"x.json": "[{"}),
        ("x.json", "malformed JSON"),
    ),
    Case(
        "labelstudio-import/duplicate-key",
        ("labelstudio", "import", "{d}/x.json", "--part", "retrieval", "-o", "{d}/a.jsonl"),
        _write({"x.json": '[{"id": 1, "id": 2}]'}),
        ("x.json", "field 'id'", "appears twice"),
    ),
    Case(
        "labelstudio-import/deep",
        ("labelstudio", "import", "{d}/x.json", "--part", "retrieval", "-o", "{d}/a.jsonl"),
        _write({"x.json": "[" * 100_000}),
        ("x.json", "nested deeper"),
    ),
    Case(
        "metrics/labels-missing-column",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": "claim_id,annotator\nc,a\n"}),
        ("l.csv:1", "has_error"),
    ),
    Case(
        "metrics/labels-bad-bool",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": "claim_id,has_error\nc,perhaps\n"}),
        ("l.csv:2", "has_error"),
    ),
    Case(
        "metrics/labels-unknown-claim",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": "claim_id,has_error\nnope,true\n"}),
        ("l.csv:2", "nope"),
    ),
    Case(
        "metrics/traces-missing",
        ("metrics", "--traces", "{d}/none.jsonl", "--labels", "{d}/labels.csv"),
        _write({}),
        ("none.jsonl", "not found"),
    ),
    Case(
        "metrics/traces-unknown-extension",
        ("metrics", "--traces", "{d}/t.txt", "--labels", "{d}/labels.csv"),
        _write({"t.txt": GOOD_TRACES}),
        ("t.txt", "extension"),
    ),
    Case(
        "agree/missing",
        ("agree", "{d}/none.csv"),
        _write({}),
        ("none.csv",),
    ),
    Case(
        # JSON under a .csv name dropped out of a study's report (it reads agreement/*.json)
        "agree/out-not-json",
        ("agree", "{d}/r.csv", "-o", "{d}/drs.csv"),
        _write({"r.csv": "unit,a,b\nu1,1,1\nu2,0,1\n"}),
        ("-o", "drs.csv", "name the file NAME.json"),
    ),
    Case(
        "codebook-validate/missing",
        ("codebook", "validate", "{d}/none.yaml"),
        _write({}),
        ("none.yaml", "missing-file"),
    ),
]

#: Found by the second bad-input sweep (notes/badinput.md): one row per case.
SWEEP_CASES: list[Case] = [
    # without --codebook, the "bundled codebook" note came before the error: two lines
    Case(
        "judge/empty-traces-bundled-codebook",
        ("judge", "retrieval", "--from", "{d}/t.jsonl", "-o", "{d}/run"),
        _write({"t.jsonl": ""}),
        ("t.jsonl", "no traces found"),
    ),
    Case(
        "judge-dry-run/binary-traces-bundled-codebook",
        (
            *("judge", "retrieval", "--from", "{d}/t.jsonl", "--judge", "openai:gpt-5-mini"),
            *("--dry-run", "-o", "{d}/run"),
        ),
        _write({"t.jsonl": bytes(range(256))}),
        ("t.jsonl", "not UTF-8"),
    ),
    Case(
        "attribute/json-array-bundled-codebook",
        ("attribute", "--from", "{d}/t.jsonl", "-o", "{d}/att"),
        _write({"t.jsonl": json.dumps(_trace_lines())}),
        ("t.jsonl:1", "expected a JSON object"),
    ),
    # an empty input wrote an empty output and exited 0
    Case(
        "ingest/empty-input",
        ("ingest", "generic", "{d}/e.jsonl", "-o", "{d}/o.jsonl"),
        _write({"e.jsonl": ""}),
        ("e.jsonl", "no traces found"),
    ),
    Case(
        "ingest/whitespace-only-input",
        ("ingest", "generic", "{d}/e.jsonl", "-o", "{d}/o.jsonl"),
        _write({"e.jsonl": "  \n\n\t\n"}),
        ("e.jsonl", "no traces found"),
    ),
    # the message read "Unterminated string starting at at column 893"
    Case(
        "metrics/truncated-string",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
        _write({"t.jsonl": _second_line(raw_first[:30]), "labels.csv": LABELS}),
        ("t.jsonl:2", "Unterminated string starting at column"),
    ),
    # labels with only a header: every metric undefined, exit 0
    Case(
        "metrics/labels-header-only",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": "claim_id,has_error,annotator\n"}),
        ("l.csv", "no labels found"),
    ),
    Case(
        "disagreements/labels-empty-jsonl",
        (
            *("disagreements", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl"),
            *("-o", "{d}/out/dis.jsonl"),
        ),
        _write({"t.jsonl": GOOD_TRACES, "l.jsonl": "\n"}),
        ("l.jsonl", "no labels found"),
    ),
    # ratings tables: pandas renamed a repeated column to coder_A.1; a header-only table
    # gave a table of undefined coefficients with exit 0
    Case(
        "agree/duplicate-column",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,coder_A,coder_B,coder_A\n1,1,1,2\n2,2,2,1\n"}),
        ("r.csv:1", "field 'coder_A'", "appears twice"),
    ),
    # Python's float("1_0") is 10: a third category 10 beside the 1s and 2s (t31us)
    Case(
        "agree/rating-with-underscore",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,r1,r2\nu1,1,1\nu2,1_0,2\n"}),
        ("r.csv", "field 'r1'", "rating '1_0' of unit 'u2'", "an underscore is no part"),
    ),
    Case(
        "agree/header-only",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,coder_A,coder_B\n"}),
        ("r.csv", "no ratings"),
    ),
    Case(
        "compare/header-only",
        ("compare", "{d}/r.csv"),
        _write({"r.csv": "unit,sys_a,sys_b\n"}),
        ("r.csv", "no ratings"),
    ),
    # a whole-document JSON error ended "(Invalid control character at)"
    Case(
        "labelstudio-import/control-character",
        ("labelstudio", "import", "{d}/x.json", "--part", "retrieval", "-o", "{d}/a.jsonl"),
        _write({"x.json": '[{"id": "a\x01b"}]'}),
        ("x.json:1", "Invalid control character at column 11"),
    ),
    # the HealthVer and COVID-Fact adapters read CSV themselves: a traceback on text that is
    # not UTF-8 and on a cell over the csv module's 128 KiB; repeated and extra cells passed
    Case(
        "ingest-healthver/latin-1",
        ("ingest", "healthver", "{d}/hv.csv", "-o", "{d}/o.jsonl"),
        _write({"hv.csv": HEALTHVER.encode() + "Gr\u00fcn,x,y,Neutral,1,q\n".encode("latin-1")}),
        ("hv.csv", "not UTF-8"),
    ),
    Case(
        "benchmark-healthver/gzip",
        ("benchmark", "healthver", "{d}/hv.csv"),
        _write({"hv.csv": gzip.compress(HEALTHVER.encode())}),
        ("hv.csv", "not UTF-8"),
    ),
    Case(
        "ingest-healthver/duplicate-column",
        ("ingest", "healthver", "{d}/hv.csv", "-o", "{d}/o.jsonl"),
        _write({"hv.csv": "id,evidence,claim,label,topic_ip,question,label\n"}),
        ("hv.csv:1", "field 'label'", "appears twice"),
    ),
    Case(
        "benchmark-healthver/header-only",
        ("benchmark", "healthver", "{d}/hv.csv"),
        _write({"hv.csv": HEALTHVER.splitlines()[0] + "\n"}),
        ("hv.csv", "no rows"),
    ),
    Case(
        "ingest-covidfact/extra-cells",
        ("ingest", "covidfact", "{d}/cf.tsv", "-o", "{d}/o.jsonl"),
        _write({"cf.tsv": COVIDFACT + "1\tev\tclaim\tentailment\t1\textra\n"}),
        ("cf.tsv:3", "expected 5 cells"),
    ),
    Case(
        "benchmark-covidfact/huge-cell-latin-1",
        ("benchmark", "covidfact", "{d}/cf.tsv"),
        _write(
            {
                "cf.tsv": (COVIDFACT + "1\t" + "\u00e9" * 200_000 + "\tc\tentailment\t1\n").encode(
                    "latin-1"
                )
            }
        ),
        ("cf.tsv", "not UTF-8"),
    ),
    Case(
        "ingest-covidfact/dataset-without-claim",
        ("ingest", "covidfact", "{d}/cf", "-o", "{d}/o.jsonl"),
        _write(
            {
                "cf/evidence_recall/test1_5_recall.tsv": COVIDFACT,
                "cf/COVIDFACT_dataset.jsonl": '{"label": "SUPPORTED", "evidence": []}\n',
            }
        ),
        ("COVIDFACT_dataset.jsonl:1", "field 'claim'"),
    ),
    Case(
        "ingest-covidfact/retrieved-evidence-not-an-object",
        ("ingest", "covidfact", "{d}/cf", "-o", "{d}/o.jsonl"),
        _write(
            {
                "cf/evidence_recall/test1_5_recall.tsv": COVIDFACT,
                "cf/evidence_recall/refuted_retrieved_evidence.json": "[1, 2]",
            }
        ),
        ("refuted_retrieved_evidence.json", "expected an object"),
    ),
    # an empty atomic file printed "(no rows)" and exited 0
    Case(
        "benchmark-atomic/empty",
        ("benchmark", "atomic", "{d}/a.jsonl"),
        _write({"a.jsonl": "\n"}),
        ("a.jsonl", "no records"),
    ),
    # a negative seed reached numpy: ValueError traceback
    Case(
        "metrics/negative-seed",
        (
            *("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
            *("--bootstrap", "20", "--seed", "-1"),
        ),
        _write({"t.jsonl": GOOD_TRACES, "labels.csv": LABELS}),
        ("--seed", "non-negative", "-1"),
    ),
    Case(
        "agree/negative-seed",
        ("agree", "{d}/r.csv", "--seed", "-1"),
        _write({"r.csv": "unit,coder_A,coder_B\n1,1,1\n2,2,1\n3,1,1\n"}),
        ("--seed", "non-negative"),
    ),
    # the generic adapters' own-pipeline options (ids=claim, sentence_ids=question, passage
    # lists in CSV cells, generic-labels --label-rule): a bad value or cell is one line
    Case(
        "ingest-generic/sentence-ids-bogus",
        ("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/o.jsonl", "--option", "sentence_ids=x"),
        _mk_dir(),
        ("--option sentence_ids='x' is not one of: global, question",),
    ),
    Case(
        "ingest-generic/passages-cell-not-json",
        (
            *("ingest", "generic", "{d}/p.csv", "-o", "{d}/o.jsonl", "--system", "s"),
            *("--map", "docs=passages"),
        ),
        _write({"p.csv": "claim_id,claim,verdict,docs\nc1,x,supported,not json\n"}),
        ("p.csv:2", "field 'passages'", "a passages cell holds a JSON list"),
    ),
    Case(
        "ingest-generic-labels/rule-value-not-named",
        (
            *("ingest", "generic-labels", "{d}/l.csv", "-o", "{d}/o.jsonl"),
            *("--label-rule", "judgement = incorrect -> error; judgement = correct -> no_error"),
        ),
        _write({"l.csv": "sentence_id,judgement\ns1,incorrect\ns2,unsure\n"}),
        ("l.csv:3", "'unsure'"),
    ),
    # an option that takes one value given twice kept the last alone: 1 error / 3 no-error
    # for 3 / 1 (04b6f30; tests/test_outside_red13.py has the counts)
    Case(
        "ingest-generic/label-rule-given-twice",
        (
            *("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl", "--system", "A"),
            *("--label-rule", "gold = bad -> error", "--label-rule", "gold = partial -> error"),
        ),
        _write({"t.csv": "sentence_id,claim,verdict,gold\ns1,a,supported,ok\ns2,b,refuted,bad\n"}),
        line="failcodes: error: ingest: --label-rule takes one value and was given 2 ('gold = bad "
        "-> error', 'gold = partial -> error'): only the last would be used; give one (one "
        "rule of several clauses: join them with ';')",
    ),
    # resample counts are capped (stats.names.MAX_RESAMPLES = 1,000,000): an extra digit
    # or 1e20 ran until killed
    Case(
        "metrics/bootstrap-beyond-the-cap",
        (
            *("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
            *("--bootstrap", "100000000000000000000"),
        ),
        _write({"t.jsonl": GOOD_TRACES, "labels.csv": LABELS}),
        ("'--bootstrap'", "less than or equal to 1000000"),
    ),
    Case(
        "agree/bootstrap-beyond-the-cap",
        ("agree", "{d}/r.csv", "--bootstrap", "1000001"),
        _write({"r.csv": "unit,coder_A,coder_B\n1,1,1\n2,2,1\n3,1,1\n"}),
        ("'--bootstrap'", "less than or equal to 1000000"),
    ),
    Case(
        "run/study-bootstrap-beyond-the-cap",
        ("run", "{d}/study"),
        _study({"failcodes.toml": _study_file("bootstrap = 1000", "bootstrap = 20000000")}),
        ("failcodes.toml:", "field 'metrics.bootstrap'", "1000000"),
    ),
    # an option value out of range drew typer's usage box: five lines
    Case(
        "judge/top-k-zero",
        (*JUDGE, "--top-k", "0", "-o", "{d}/run"),
        _mk_dir(),
        ("judge retrieval", "'--top-k'", "greater than or equal to 1"),
    ),
    Case(
        "metrics/unknown-option",
        ("metrics", "--traces", "{d}/t.jsonl", "--bogus"),
        _mk_dir(),
        ("metrics", "No such option: --bogus"),
    ),
    # TOML nested 5,000 deep: RecursionError traceback
    Case(
        "run/study-file-nested-deep",
        ("run", "{d}/study", "--plan"),
        _study({"failcodes.toml": "x = " + "[" * 5000 + "]" * 5000 + "\n"}),
        ("failcodes.toml", "nested too deeply"),
    ),
    # study-file values a step would refuse are refused at load, before any step runs
    Case(
        "run/study-unknown-mapping",
        ("run", "{d}/study"),
        _study({"failcodes.toml": _study_file('mapping = "refuted"', 'mapping = "bogus"')}),
        ("failcodes.toml:", "field 'disagreements.mapping'", "'bogus'"),
    ),
    Case(
        "run/study-unknown-attribution-rule",
        ("run", "{d}/study"),
        _study(
            {
                "failcodes.toml": _study_file(
                    'GPT-4 checker verdicts"', 'GPT-4 checker verdicts"\nattribution = "gold"'
                )
            }
        ),
        ("failcodes.toml:", "field 'datasets[0].attribution'", "'gold-evidence' or 'codebook'"),
    ),
    Case(
        "run/study-negative-seed",
        ("run", "{d}/study"),
        _study({"failcodes.toml": _study_file("seed = 0", "seed = -1")}),
        ("failcodes.toml:", "field 'metrics.seed'"),
    ),
    # judge args '-o' wrote the judge run outside the study (attribute then found none)
    Case(
        "run/study-judge-args-output",
        ("run", "{d}/study"),
        _study({"failcodes.toml": _study_file("# top_k = 5", 'args = ["-o", "/tmp/elsewhere"]')}),
        ("failcodes.toml:", "field 'judge.args'", "'-o'"),
    ),
    # the same file as input and output: the atomic rename replaced the input with the result
    Case(
        "disagreements/o-is-the-traces",
        (
            "disagreements",
            "--traces",
            "{d}/t.jsonl",
            "--labels",
            "{d}/labels.csv",
            "-o",
            "{d}/t.jsonl",
        ),
        _mk_dir(),
        ("t.jsonl", "is also an input"),
    ),
    Case(
        "metrics/o-is-the-labels",
        (
            *("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
            *("--format", "json", "-o", "{d}/labels.csv"),
        ),
        _mk_dir(),
        ("labels.csv", "is also an input"),
    ),
    Case(
        "ingest/labels-out-is-o",
        ("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/o.jsonl", "--labels-out", "{d}/o.jsonl"),
        _mk_dir(),
        ("o.jsonl", "another output"),
    ),
    Case(
        "labelstudio-config/o-is-the-codebook",
        ("labelstudio", "config", "-p", "retrieval", "-c", "{d}/cb.yaml", "-o", "{d}/cb.yaml"),
        _write({"cb.yaml": GOOD_CB}),
        ("cb.yaml", "is also an input"),
    ),
    Case(
        "labelstudio-import/o-is-the-export",
        ("labelstudio", "import", "{d}/x.json", "--part", "retrieval", "-o", "{d}/x.json"),
        _write({"x.json": "[]"}),
        ("x.json", "is also an input"),
    ),
    # a YAML tag PyYAML cannot construct: ConstructorError traceback
    Case(
        "codebook-validate/python-tag",
        ("codebook", "validate", "{d}/cb.yaml"),
        _write(
            {"cb.yaml": GOOD_CB.replace("version: 1", "version: !!python/object:os.system x", 1)}
        ),
        ("cb.yaml:", "yaml-syntax", "python/object"),
    ),
    # a weight matrix with rows of different lengths: numpy ValueError traceback
    Case(
        "agree/ragged-weight-matrix",
        ("agree", "{d}/r.csv", "--weights-matrix", "{d}/w.csv"),
        _write({"r.csv": "unit,a,b\n1,1,0\n2,0,1\n3,1,1\n", "w.csv": "1,0,0\n0,1\n"}),
        ("w.csv:2", "expected 3 cells"),
    ),
    # SciFact: a predictions file out of step with the claims named no file; an empty claims
    # file was reported as extra predictions
    Case(
        "benchmark-scifact/predictions-out-of-order",
        ("benchmark", "scifact", "{d}/sf"),
        _scifact(lambda root: _swap_first_predictions(root / PREDICTIONS)),
        ("scifact_scifact_dev.jsonl:1", "field 'id'", "do not match gold"),
    ),
    Case(
        "benchmark-scifact/empty-claims",
        ("benchmark", "scifact", "{d}/sf"),
        _scifact(lambda root: (root / "claims_dev.jsonl").write_text("")),
        ("claims_dev.jsonl", "no claims"),
    ),
    # an empty Label Studio export wrote an empty annotations file, exit 0
    Case(
        "labelstudio-import/empty-export",
        ("labelstudio", "import", "{d}/x.json", "--part", "retrieval", "-o", "{d}/a.jsonl"),
        _write({"x.json": "[]\n"}),
        ("x.json", "no tasks"),
    ),
    # pandas renamed a repeated column of an attribution table to NAME.1: read as valid
    Case(
        "report/per-passage-duplicate-column",
        REPORT,
        _study(
            {
                "attribution/d/per_passage.csv": "system,retriever,status,system\ns,r,scored,s\n",
                "data/d.traces.jsonl": GOOD_TRACES,
            }
        ),
        ("per_passage.csv:1", "field 'system'", "appears twice"),
    ),
    # a dry run took --temperature nan (or -5) and recorded it
    Case(
        "judge-dry-run/temperature-nan",
        (*JUDGE, "--judge", "openai:gpt-5-mini", "--dry-run", "--temperature", "nan"),
        _mk_dir(),
        ("--temperature", "between 0 and 2", "nan"),
    ),
    # the project name is a folder under annotations/: '../../x' created it two levels up
    Case(
        "saturate-init/name-escapes",
        (
            *("saturate", "init", "../../escaped", "--codebook", str(CODEBOOK)),
            *("--from", "{d}/t.jsonl"),
        ),
        _mk_dir(),
        ("project name", "'../../escaped'"),
    ),
    # saturate's options are request fields (issue 27): refused before anything is read
    Case(
        "saturate-init/threshold-above-1",
        (
            *("saturate", "init", "p", "--dir", "{d}/p", "--codebook", str(CODEBOOK)),
            *("--from", "{d}/t.jsonl", "--threshold", "1.5"),
        ),
        _mk_dir(),
        line="failcodes: error: --threshold must be in (0, 1], got 1.5",
    ),
    Case(
        "saturate-recode/panel",
        ("saturate", "recode", "p", "--dir", "{d}/p", "--judge", "offline", "--judge", "offline"),
        _mk_dir(),
        line="failcodes: error: saturate recode re-codes with one judge (no panel)",
    ),
    Case(
        "saturate-recode/scripted-judge",
        ("saturate", "recode", "p", "--dir", "{d}/p", "--judge", "scripted:codes.yaml"),
        _mk_dir(),
        ("--judge", "unknown judge 'scripted:codes.yaml'", "use offline"),
    ),
    Case(
        "saturate-recode/max-output-tokens-8",
        ("saturate", "recode", "p", "--dir", "{d}/p", "--max-output-tokens", "8"),
        _mk_dir(),
        ("--max-output-tokens",),
    ),
    # --system "" gave every trace an empty system name
    Case(
        "ingest/empty-system",
        ("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/o.jsonl", "--system", ""),
        _mk_dir(),
        ("--system", "must not be empty"),
    ),
    Case(
        "metrics/traces-symlink-loop",
        ("metrics", "--traces", "{d}/loop.jsonl", "--labels", "{d}/labels.csv"),
        _symlink_loop("loop.jsonl"),
        ("loop.jsonl",),
    ),
    # pandas padded a short row of a ratings table with blanks (missing ratings)
    Case(
        "agree/short-row",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,coder_A,coder_B\n1,1,1\n2\n3,1,2\n"}),
        ("r.csv:3", "expected 3 cells"),
    ),
    # --by names a column of a ratings table: on an annotation file it was silently ignored
    Case(
        "agree/by-on-annotations",
        ("agree", "{d}/a.jsonl", "--by", "nosuch"),
        _write({"a.jsonl": json.dumps({**ANNOTATION, "codes": {}}) + "\n"}),
        ("--by", "not annotation files"),
    ),
    # 'reviewer a' beside 'Reviewer A': two coders of half the units each (i35red); the
    # message in full (stats.tableshape.one_way writes it since 2026-12-03)
    Case(
        "agree/coder-in-another-case",
        ("agree", "{d}/a.jsonl"),
        _write(
            {
                "a.jsonl": json.dumps({**ANNOTATION, "codes": {}, "coder": "Reviewer A"})
                + "\n"
                + json.dumps({**ANNOTATION, "codes": {}, "unit_id": "u2", "coder": "reviewer a"})
                + "\n"
            }
        ),
        line="failcodes: error: {d}/a.jsonl:2, field 'coder': coder 'reviewer a' is 'Reviewer A' "
        "(line 1) written another way (case, spacing or Unicode form): each spelling would be a "
        "coder of its own, its units split between them; write the name one way",
    ),
    # an empty --targeted file drew a plan without the units it was meant to add, exit 0
    Case(
        "review-plan/empty-targeted",
        ("review", "plan", "{d}/study", "-p", "retrieval", "-n", "2", "--targeted", "{d}/t.txt"),
        _study(
            {
                "attribution/d/per_passage.csv": "unit_id,system,status\nu1,s,scored\n",
                "../t.txt": "\n",
            }
        ),
        ("t.txt", "no unit ids"),
    ),
    # an empty --judged file gave tasks without the judge's predictions, exit 0
    Case(
        "labelstudio-export/empty-judged",
        (
            *("labelstudio", "export", "{d}/t.jsonl", "-p", "retrieval", "-c", str(CODEBOOK)),
            *("--judged", "{d}/a.jsonl", "-o", "{d}/tasks.json"),
        ),
        _write({"t.jsonl": GOOD_TRACES, "a.jsonl": ""}),
        ("a.jsonl", "no annotations"),
    ),
    # an empty --prices file priced every call as unknown, exit 0
    Case(
        "judge-dry-run/empty-prices",
        (*JUDGE, "--judge", "openai:gpt-5-mini", "--dry-run", "--prices", "{d}/p.yaml"),
        _mk_dir(files={"p.yaml": "\n"}),
        ("p.yaml", "empty price table"),
    ),
]


def _journal(keep: int | None) -> Setup:
    """A run folder whose WAL-mode journal.sqlite keeps its first ``keep`` bytes (None: all)."""

    def setup(d: Path) -> None:
        _mk_dir("run")(d)
        path = d / "run" / "journal.sqlite"
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE annotations (seq INTEGER PRIMARY KEY, annotation TEXT)")
        conn.close()
        if keep is not None:
            path.write_bytes(path.read_bytes()[:keep])

    return setup


def _foreign_export() -> list[dict[str, object]]:
    """Label Studio tasks of the bundled codebook, annotated under a sentiment config."""
    from failcodes.codebook import bundled
    from failcodes.labelstudio.tasks import build_tasks
    from failcodes.units import UnitKind, build_units

    units = build_units(make_traces(2), UnitKind.RETRIEVAL)
    tasks = build_tasks(units, bundled(), UnitKind.RETRIEVAL)
    sentiment = {"from_name": "sentiment", "to_name": "text", "type": "choices"}
    return [
        {
            "id": n,
            "data": t["data"],
            "annotations": [
                {
                    "id": n,
                    "completed_by": 1,
                    "was_cancelled": False,
                    "result": [{**sentiment, "value": {"choices": ["Positive"]}}],
                }
            ],
        }
        for n, t in enumerate(tasks, start=1)
    ]


def _parquet_traces(column: str, value: str) -> Setup:
    """GOOD_TRACES as Parquet (the columnar reader), ``column`` of row 2 set to ``value``."""

    def setup(d: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from failcodes.traceio import read_traces, write_traces

        _write({"t.jsonl": GOOD_TRACES, "labels.csv": LABELS})(d)
        write_traces(d / "t.parquet", read_traces(d / "t.jsonl"))
        (d / "t.jsonl").unlink()
        table = pq.read_table(d / "t.parquet")
        values = table.column(column).to_pylist()
        values[1] = value
        i = table.schema.get_field_index(column)
        pq.write_table(table.set_column(i, column, pa.array(values, pa.string())), d / "t.parquet")

    return setup


def _workbook(name: str, rows: list[list[object]]) -> Setup:
    def setup(d: Path) -> None:
        from openpyxl import Workbook  # type: ignore[import-untyped]

        book = Workbook()
        for row in rows:
            book.active.append(row)
        book.save(d / name)

    return setup


def _fifo(name: str) -> Setup:
    def setup(d: Path) -> None:
        _mk_dir()(d)
        (d / name).unlink(missing_ok=True)
        os.mkfifo(d / name)

    return setup


ATTRIBUTE_RUN = ("attribute", "--from", "{d}/t.jsonl", "--retrieval", "{d}/run", "-o", "{d}/att")
#: Found by the third bad-input sweep (notes/badinput.md): one row per case, the whole line.
SWEEP3_CASES: list[Case] = [
    # a read-only open of a WAL-mode journal created journal.sqlite-wal and -shm beside it
    Case(
        "attribute/truncated-journal-leaves-no-wal",
        ATTRIBUTE_RUN,
        _journal(100),
        line="failcodes: error: {d}/run/journal.sqlite: not a readable judge journal (database "
        "disk image is malformed); judge again into a fresh -o folder",
    ),
    Case(
        "labelstudio-export/truncated-judged-journal",
        (
            *("labelstudio", "export", "{d}/t.jsonl", "-p", "retrieval", "-c", str(CODEBOOK)),
            *("--judged", "{d}/run", "-o", "{d}/tasks.json"),
        ),
        _journal(100),
        line="failcodes: error: {d}/run/journal.sqlite: not a readable judge journal (database "
        "disk image is malformed); judge again into a fresh -o folder",
    ),
    Case(
        "judge/truncated-journal-leaves-no-wal",
        (*JUDGE, "-o", "{d}/run"),
        _journal(100),
        line="failcodes: error: {d}/run/journal.sqlite: not a usable SQLite database (database "
        "disk image is malformed); move it away or pass another -o",
    ),
    # an empty journal was migrated (written) by a reader and read as a run of no units
    Case(
        "attribute/empty-journal",
        ATTRIBUTE_RUN,
        _journal(0),
        line="failcodes: error: {d}/run/journal.sqlite: empty file, expected a judge journal "
        "(SQLite)",
    ),
    # a study's missing input was found by its ingest step, after the run had taken its lock
    # and written its state and logs
    Case(
        "run/study-ingest-path-missing",
        ("run", "{d}/study"),
        _study(
            {
                "failcodes.toml": _study_file(
                    "bundled:ragchecker/checking_outputs.json", "raw/outputs.json"
                ),
                "medical-fact-check.v1.yaml": GOOD_CB,
            }
        ),
        line="failcodes: error: {d}/study/failcodes.toml:17, field 'datasets[0].ingest[0]."
        "paths[0]': 'raw/outputs.json': no such file or folder ({d}/study/raw/outputs.json)",
    ),
    Case(
        "run/study-codebook-missing",
        ("run", "{d}/study"),
        _study({"failcodes.toml": _study_file('codebook = "medical', 'codebook = "cb/medical')}),
        line="failcodes: error: {d}/study/failcodes.toml:5, field 'codebook': "
        "'cb/medical-fact-check.v1.yaml': no such file or folder "
        "({d}/study/cb/medical-fact-check.v1.yaml)",
    ),
    # a FIFO as an input hung without a word (open() waits for a writer); /dev/null read as
    # an empty file: 'no such file' (judge) or every label unknown (metrics)
    Case(
        "metrics/traces-are-a-fifo",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
        _fifo("t.jsonl"),
        line="failcodes: error: {d}/t.jsonl: not a regular file (a FIFO, socket or device); "
        "give a file",
    ),
    Case(
        "codebook-validate/fifo",
        ("codebook", "validate", "--", "{d}/cb.yaml"),
        _fifo("cb.yaml"),
        line="failcodes: error: {d}/cb.yaml: not a regular file (a FIFO, socket or device); "
        "give a file",
    ),
    Case(
        "judge/traces-are-dev-null",
        (*JUDGE[:3], "/dev/null", *JUDGE[4:], "-o", "{d}/run"),
        _mk_dir(),
        line="failcodes: error: /dev/null: not a regular file (a FIFO, socket or device); "
        "give a file",
    ),
    # JSONL mistakes said only "malformed JSON (Extra data at column 1109)"
    Case(
        "ingest/jsonl-trailing-commas",
        ("ingest", "generic", "{d}/e.jsonl", "-o", "{d}/o.jsonl"),
        _write({"e.jsonl": '{"claim_id": "c1"},\n'}),
        line="failcodes: error: {d}/e.jsonl:1: malformed JSON (Extra data at column 19); a comma "
        "after the object? JSONL is one object per line, no commas",
    ),
    Case(
        "ingest/jsonl-pretty-printed",
        ("ingest", "generic", "{d}/e.jsonl", "-o", "{d}/o.jsonl"),
        _write({"e.jsonl": json.dumps(_trace_lines()[0], indent=2) + "\n"}),
        line="failcodes: error: {d}/e.jsonl:1: malformed JSON (Expecting property name enclosed "
        "in double quotes at column 2); a JSON document spread over lines? JSONL is one whole "
        "object per line",
    ),
    Case(
        "metrics/jsonl-bom-in-the-middle",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
        _write({"t.jsonl": _second_line("\ufeff" + raw_first), "labels.csv": LABELS}),
        line="failcodes: error: {d}/t.jsonl:2: malformed JSON (Expecting value at column 1); the "
        "line starts with a byte-order mark (U+FEFF): files joined with cat?",
    ),
    # Excel's "Unicode text" (UTF-16), a European (;) or tab-separated CSV, a header in
    # capitals: the messages said "not UTF-8" or "unknown column 'claim_id;has_error'"
    Case(
        "metrics/labels-utf16",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": LABELS.replace(",", "\t").encode("utf-16")}),
        line="failcodes: error: {d}/l.csv: not UTF-8 text (invalid start byte at byte 0); it is "
        "UTF-16 (Excel's 'Unicode text'?): save it as 'CSV UTF-8'",
    ),
    # UTF-32 (h34seal): its little-endian mark (FF FE 00 00) was said to be UTF-16, its
    # big-endian one (00 00 FE FF) "'þ' in Windows-1252 (Latin-1)?" at line 1
    Case(
        "metrics/labels-utf32-le",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": LABELS.encode("utf-32")}),
        line="failcodes: error: {d}/l.csv: not UTF-8 text (invalid start byte at byte 0); it is "
        "UTF-32: save it as 'CSV UTF-8'",
    ),
    Case(
        "ingest-generic/traces-utf32-be",
        ("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/out.jsonl"),
        _write({"t.jsonl": b"\x00\x00\xfe\xff" + GOOD_TRACES.encode("utf-32-be")}),
        line="failcodes: error: {d}/t.jsonl: not UTF-8 text (invalid start byte at byte 2); it is "
        "UTF-32: save it as UTF-8",
    ),
    # a Latin-1 byte in a CSV cell: the error named the byte offset alone, now its line and
    # column (the offset: the bytes before it, counted here)
    Case(
        "metrics/labels-not-utf8-cell",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": LABELS.encode()[:-1] + b"\xe9\n"}),
        line="failcodes: error: {d}/l.csv:3, field 'annotator': not UTF-8 text (invalid "
        f"continuation byte at byte {len(LABELS.encode()) - 1}); 'é' in Windows-1252 (Latin-1)? "
        "save the file as 'CSV UTF-8'",  # the byte before its \n
    ),
    Case(
        "ingest/csv-not-utf8-cell",
        ("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl"),
        _write({"t.csv": b"question_id,sentence,verdict\nq1,A.,supported\nq2,\xe9A.,refuted\n"}),
        line="failcodes: error: {d}/t.csv:3, field 'sentence': not UTF-8 text (invalid "
        "continuation byte at byte 48); 'é' in Windows-1252 (Latin-1)? save the file as 'CSV "
        "UTF-8'",  # 29 (header) + 16 (line 2) + 3 ('q2,')
    ),
    Case(
        "metrics/labels-semicolons",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": LABELS.replace(",", ";")}),
        line="failcodes: error: {d}/l.csv:1: the header is separated by semicolons (European "
        "Excel?), expected commas: save the table as CSV (comma delimited)",
    ),
    Case(
        "agree/tab-separated-csv",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit\tcoder_A\tcoder_B\n1\t1\t1\n2\t2\t1\n"}),
        line="failcodes: error: {d}/r.csv:1: the header is separated by tabs (a TSV file?), "
        "expected commas: save the table as CSV (comma delimited)",
    ),
    # a value under a header cell left empty (a trailing comma in the header): dropped
    # unsaid from traces and labels (a verdict read as none), a rater 'Unnamed: 3' in agree
    Case(
        "agree/value-in-unnamed-column",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,coder_A,coder_B,\r\n1,1,1,\r\n2,2,1,2\r\n"}),
        line="failcodes: error: {d}/r.csv:3: a value in column D, which has no header name",
    ),
    Case(
        "ingest-generic/value-in-unnamed-column",
        ("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl"),
        _write(
            {
                "t.csv": "question_id,sentence_id,sentence,verdict,system,\n"
                "q1,s1,A.,supported,a,refuted\n"
            }
        ),
        line="failcodes: error: {d}/t.csv:2: a value in column F, which has no header name",
    ),
    Case(
        "metrics/labels-value-in-unnamed-column",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.jsonl": GOOD_TRACES,
                "l.csv": "\ufeff" + LABELS.replace("\n", ",\r\n") + "x,,,true\r\n",
            }
        ),
        line="failcodes: error: {d}/l.csv:4: a value in column D, which has no header name",
    ),
    Case(
        "ingest-generic/header-in-capitals",
        ("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl"),
        _write({"t.csv": "CLAIM_ID,claim,verdict,system\nc1,x,supported,s\n"}),
        line="failcodes: error: {d}/t.csv:1: column 'CLAIM_ID': did you mean 'claim_id'? (names "
        "are exact: case, spaces)",
    ),
    # an export from a project with another labelling config: every choice dropped as
    # unknown, each annotation written as scored with no code, exit 0
    Case(
        "labelstudio-import/another-labelling-config",
        ("labelstudio", "import", "{d}/x.json", "--part", "retrieval", "-o", "{d}/a.jsonl"),
        _write({"x.json": json.dumps(_foreign_export())}),
        line="failcodes: error: {d}/x.json: no annotation holds a code of the codebook's "
        "'retrieval' part (found: 'sentiment'): exported from a project with another labelling "
        "config? (`failcodes labelstudio config` writes the one to use)",
    ),
    # 'inf' in a ratings table: "ratings contain infinite values" naming no file; a decimal
    # comma (European Excel) made numbers text categories
    Case(
        "agree/infinite-rating",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,coder_A,coder_B\n1,1,1\n2,2,inf\n3,1,1\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'coder_B': 'inf' is not a rating (write a "
        "number; leave the cell empty for a missing rating)",
    ),
    Case(
        "agree/infinite-rating-after-a-quoted-line-break",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": 'unit,coder_A,coder_B,note\n1,1,1,"two\nlines"\n2,2,inf,x\n3,1,1,y\n'}),
        line="failcodes: error: {d}/r.csv:4, field 'coder_B': 'inf' is not a rating (write a "
        "number; leave the cell empty for a missing rating)",
    ),
    # --raters naming a rater twice compared the rater with themself: agreement 1.0, exit 0
    Case(
        "agree/rater-named-twice",
        ("agree", "{d}/r.csv", "--raters", "coder_A,coder_A"),
        _write({"r.csv": "unit,coder_A,coder_B\n1,1,1\n2,2,1\n3,1,1\n"}),
        line="failcodes: error: --raters names 'coder_A' twice",
    ),
    Case(
        "agree/decimal-comma",
        ("agree", "{d}/r.csv", "--stat", "krippendorff", "--level", "interval"),
        _write({"r.csv": 'unit,coder_A,coder_B\n1,"1,5",2\n2,2,"2,5"\n3,1,1\n'}),
        line="failcodes: error: {d}/r.csv:2, field 'coder_A': '1,5' has a decimal comma (European "
        "Excel?): write 1.5 (numbers with commas are read as text categories)",
    ),
    # a key pasted with a line break (or with a non-ASCII character: a UnicodeEncodeError
    # traceback) and a base URL that is no URL failed only on the first call, after the run
    # folder and the response cache were created; the key is never shown
    Case(
        "judge/api-key-with-a-line-break",
        (*JUDGE, "--judge", "openai:gpt-5-mini", "-o", "{d}/run"),
        _mk_dir(),
        env=(("OPENAI_API_KEY", "sk-secret-123\n"),),
        line="failcodes: error: OPENAI_API_KEY holds spaces, line breaks or non-ASCII characters "
        "(pasted with a line break?); set it to the key alone (the key is not shown)",
    ),
    Case(
        "judge/api-key-non-ascii",
        (*JUDGE, "--judge", "anthropic:claude-haiku-4-5", "-o", "{d}/run"),
        _mk_dir(),
        env=(("ANTHROPIC_API_KEY", "sk-secr\u00e9t"),),
        line="failcodes: error: ANTHROPIC_API_KEY holds spaces, line breaks or non-ASCII "
        "characters (pasted with a line break?); set it to the key alone (the key is not shown)",
    ),
    Case(
        "judge/base-url-without-scheme",
        (*JUDGE, "--judge", "openai:gpt-5-mini", "-o", "{d}/run"),
        _mk_dir(),
        env=(("OPENAI_API_KEY", "sk-secret-123"), ("OPENAI_BASE_URL", "localhost:8000/v1")),
        line="failcodes: error: OPENAI_BASE_URL 'localhost:8000/v1' is not an http(s) URL "
        "(expected e.g. http://127.0.0.1:8000/v1)",
    ),
    Case(
        "judge/base-url-option-not-a-url",
        (*JUDGE, "--judge", "openai:gpt-5-mini", "--base-url", "my server", "-o", "{d}/run"),
        _mk_dir(),
        env=(("OPENAI_API_KEY", "sk-secret-123"),),
        line="failcodes: error: --base-url: 'my server' is not an http(s) URL (e.g. "
        "http://127.0.0.1:8000/v1)",
    ),
    # -o "" (an unset shell variable) wrote the judge run, the report, the attribution into
    # the working folder; attribute's -o under a file came after the codebook note (2 lines);
    # init on a symlink loop: RuntimeError traceback
    Case(
        "judge/o-empty",
        (*JUDGE, "-o", ""),
        _mk_dir(),
        line="failcodes: error: -o '': an empty path (an unset shell variable?); name the file or "
        "folder to write",
    ),
    Case(
        "attribute/o-under-a-file",
        ("attribute", "--from", "{d}/t.jsonl", "-o", "{d}/labels.csv/att"),
        _mk_dir(),
        line="failcodes: error: {d}/labels.csv: is a file where a folder is needed; choose "
        "another location",
    ),
    Case(
        "init/symlink-loop",
        ("init", "{d}/loop"),
        _symlink_loop("loop"),
        line="failcodes: error: {d}/loop: is a broken symbolic link (or a link loop), expected a "
        "folder; choose another -o",
    ),
    # blank ids joined nothing and were accepted; a padded label id (" c1", a CSV written
    # with ", " between cells) silently missed the trace's "c1" (counted as a sentence the
    # system extracted no claim from)
    Case(
        "metrics/traces-blank-claim-id",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
        _write({"t.jsonl": _mutated(claim_id=""), "labels.csv": LABELS}),
        line="failcodes: error: {d}/t.jsonl:2, field 'claim_id': blank id (empty or spaces only); "
        "expected the identifier alone, without spaces around it",
    ),
    Case(
        "judge/traces-padded-system",
        (*JUDGE, "-o", "{d}/run"),
        _write({"t.jsonl": _mutated(system="sys ")}),
        line="failcodes: error: {d}/t.jsonl:2, field 'system': id 'sys '; expected the "
        "identifier alone, without spaces around it",
    ),
    Case(
        "disagreements/parquet-blank-sentence-id",
        (
            *("disagreements", "--traces", "{d}/t.parquet", "--labels", "{d}/labels.csv"),
            *("-o", "{d}/out/dis.jsonl"),
        ),
        _parquet_traces("sentence_id", "  "),
        line="failcodes: error: {d}/t.parquet:2, field 'sentence_id': blank id (empty or spaces "
        "only); expected the identifier alone, without spaces around it",
    ),
    Case(
        "metrics/labels-padded-claim-id",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": LABELS.replace("\n", "\n ", 1)}),
        line="failcodes: error: {d}/l.csv:2, field 'claim_id': id ' "
        + str(_trace_lines()[0]["claim_id"])
        + "'; expected the identifier alone, without spaces around it",
    ),
    # whole JSON documents: a trailing comma, JSONL given for JSON, UTF-16 (no hint before)
    Case(
        "labelstudio-import/trailing-comma",
        ("labelstudio", "import", "{d}/x.json", "--part", "retrieval", "-o", "{d}/a.jsonl"),
        _write({"x.json": '[\n  {"id": 1},\n]\n'}),
        line="failcodes: error: {d}/x.json:3: malformed JSON (Expecting value at column 1); a "
        "trailing comma before ] or }? JSON allows none",
    ),
    Case(
        "labelstudio-import/jsonl-for-json",
        ("labelstudio", "import", "{d}/x.json", "--part", "retrieval", "-o", "{d}/a.jsonl"),
        _write({"x.json": '{"id": 1}\n{"id": 2}\n'}),
        line="failcodes: error: {d}/x.json:2: malformed JSON (Extra data at column 1); more than "
        "one JSON value: a JSONL file? expected one JSON document",
    ),
    Case(
        "run/study-file-utf16",
        ("run", "{d}/study", "--plan"),
        _study({"failcodes.toml": _study_file("", "").encode("utf-16")}),
        line="failcodes: error: {d}/study/failcodes.toml: not UTF-8 text (invalid start byte at "
        "byte 0); it is UTF-16 (Excel's 'Unicode text'?): save it as UTF-8",
    ),
    # a sentence label whose id differs from a trace's by case or Unicode form only was
    # counted as a sentence the systems extracted no claim from (metrics exit 0)
    Case(
        "metrics/label-sentence-id-in-capitals",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.jsonl": GOOD_TRACES,
                "l.csv": "sentence_id,question_id,has_error\nq0-s1,q0,false\nQ1-S1,q1,true\n",
            }
        ),
        line="failcodes: error: {d}/l.csv:3, field 'sentence_id': no trace has sentence_id "
        "'Q1-S1', but one has 'q1-s1' (ids are compared exactly: case, Unicode form); write the "
        "trace's id",
    ),
    Case(
        "disagreements/label-sentence-id-decomposed",
        (
            *("disagreements", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
            *("-o", "{d}/out/dis.jsonl"),
        ),
        _write(
            {
                "t.jsonl": _mutated(sentence_id="q0-caf\u00e9"),
                "l.csv": "sentence_id,question_id,has_error\nq0-cafe\u0301,q0,true\n",
            }
        ),
        line="failcodes: error: {d}/l.csv:2, field 'sentence_id': no trace has sentence_id "
        "'q0-cafe\u0301', but one has 'q0-caf\u00e9' (ids are compared exactly: case, Unicode "
        "form); write the trace's id",
    ),
    # a rank beyond 64 bits was read, then writing Parquet raised OverflowError (traceback)
    Case(
        "ingest/rank-beyond-64-bits-to-parquet",
        ("ingest", "generic", "{d}/e.jsonl", "-o", "{d}/o.parquet"),
        _write(
            {
                "e.jsonl": _mutated(
                    passages=[{"passage_id": "a", "rank": 10**23, "text": "x"}]
                ).splitlines()[1]
                + "\n"
            }
        ),
        line="failcodes: error: {d}/e.jsonl:1, field 'passages[0].rank': Input should be less "
        "than or equal to 9223372036854775807 (got 100000000000000000000000)",
    ),
    # a study's judge spec and base URL failed in the judge step, after ingest, metrics and
    # disagreements had run; the line was the [judge] table's, not the key's
    Case(
        "run/study-unknown-judge",
        ("run", "{d}/study"),
        _study({"failcodes.toml": _study_file('judge = "offline"', 'judge = "gpt-5-mini"')}),
        line="failcodes: error: {d}/study/failcodes.toml:40, field 'judge.judge': unknown judge "
        "'gpt-5-mini'; use offline, anthropic:MODEL or openai:MODEL (e.g. openai:gpt-5-mini; an "
        "OpenAI-compatible server via --base-url)",
    ),
    Case(
        "run/study-base-url-without-scheme",
        ("run", "{d}/study"),
        _study(
            {
                "failcodes.toml": _study_file(
                    '# base_url = "http://127.0.0.1:8000/v1"', 'base_url = "127.0.0.1:8000/v1"'
                )
            }
        ),
        line="failcodes: error: {d}/study/failcodes.toml:42, field 'judge.base_url': "
        "'127.0.0.1:8000/v1' is not an http(s) URL (e.g. http://127.0.0.1:8000/v1)",
    ),
    # Excel workbooks: a padded id was written by ingest generic-labels (every reader then
    # refused it); a decimal comma typed as text made numbers text categories
    Case(
        "ingest-generic-labels/xlsx-padded-sentence-id",
        ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/o.jsonl"),
        _workbook("l.xlsx", [["sentence_id", "question_id", "has_error"], [" q0-s1", "q0", False]]),
        line="failcodes: error: {d}/l.xlsx:2, field 'sentence_id': id ' q0-s1'; expected the "
        "identifier alone, without spaces around it",
    ),
    Case(
        "agree/xlsx-decimal-comma",
        ("agree", "{d}/r.xlsx"),
        _workbook("r.xlsx", [["unit", "coder_A", "coder_B"], [1, "1,5", 2], [2, "2,5", 2]]),
        line="failcodes: error: {d}/r.xlsx:2, field 'coder_A': '1,5' has a decimal comma "
        "(European Excel?): write 1.5 (numbers with commas are read as text categories)",
    ),
    # an export of tasks nobody annotated yet (predictions only) wrote an empty file, exit 0
    Case(
        "labelstudio-import/no-annotations-yet",
        ("labelstudio", "import", "{d}/x.json", "--part", "retrieval", "-o", "{d}/a.jsonl"),
        _write(
            {
                "x.json": json.dumps(
                    [{k: v for k, v in t.items() if k != "annotations"} for t in _foreign_export()]
                )
            }
        ),
        line="failcodes: error: {d}/x.json: no annotations in its "
        + str(len(_foreign_export()))
        + " task(s) (exported before anyone annotated?)",
    ),
    # sentence labels none of which names a trace sentence (another id scheme): every label
    # counted as a sentence without claims, every trace sentence unlabelled, exit 0
    Case(
        "metrics/label-sentence-ids-of-another-scheme",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.jsonl": GOOD_TRACES,
                "l.csv": "sentence_id,question_id,has_error\ns1,q0,false\ns2,q1,true\n",
            }
        ),
        line="failcodes: error: {d}/l.csv:2, field 'sentence_id': no trace has sentence_id 's1', "
        "nor any other sentence label's: are the ids those of the traces (such as 'q0-s1')? (a "
        "sentence without a trace counts as one the systems extracted no claim from)",
    ),
    # a NUL byte in a CSV cell was read as text (a rating "2\x003", a label's claim id)
    Case(
        "agree/nul-in-a-rating",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,coder_A,coder_B\n1,1,1\n2,2\x003,1\n3,1,1\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'coder_A': NUL byte in column 2 (binary data, "
        "or a table saved as UTF-16? save it as CSV UTF-8)",
    ),
    Case(
        "metrics/nul-in-a-labels-header",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": "claim_id,has_error\x00,annotator\nc,true,a\n"}),
        line="failcodes: error: {d}/l.csv:1: NUL byte in column 2 (binary data, or a table saved "
        "as UTF-16? save it as CSV UTF-8)",
    ),
]


def _damaged_sheet(name: str) -> Setup:
    """A workbook whose first sheet's XML part is cut short (a damaged download)."""

    def setup(d: Path) -> None:
        import zipfile

        _workbook(name, [["sentence_id", "has_error"], ["s1", True]])(d)
        with zipfile.ZipFile(d / name) as z:
            parts = {n: z.read(n) for n in z.namelist()}
        parts["xl/worksheets/sheet1.xml"] = b"<worksheet"
        with zipfile.ZipFile(d / name, "w") as z:
            for part, data in parts.items():
                z.writestr(part, data)

    return setup


def _notes_then_table(name: str) -> Setup:
    """A workbook whose first sheet is a note, the table on the second."""

    def setup(d: Path) -> None:
        from openpyxl import Workbook

        book = Workbook()
        book.active.title = "notes"
        book.active.append(["read me first"])
        table = book.create_sheet("labels")
        table.append(["sentence_id", "has_error"])
        table.append(["s1", True])
        book.save(d / name)

    return setup


#: A FActScore-shaped document: answers holding sentences holding claims.
NESTED = json.dumps(
    [{"id": "q1", "sentences": [{"text": "A.", "claims": [{"claim": "A", "verdict": "true"}]}]}]
)
ROWS = ("--option", "rows=sentences[].claims[]", "--map", "id=question_id")
GENERIC = ("ingest", "generic", "{d}/d.json", "-o", "{d}/o.jsonl", "--system", "s")
GENERIC_LABELS = ("ingest", "generic-labels", "{d}/l.csv", "-o", "{d}/o.jsonl")
RESTART_ARGV = (
    "ingest", "generic", "{d}/a.jsonl", "{d}/b.jsonl", "-o", "{d}/o.jsonl", "--system", "s",
    "--option", "rows=claims[]", "--map", "#=question_id", "--map", "claims#=sentence_id",
    "--option", "sentence_ids=question",
)  # fmt: skip
VOTES = "sentence_id,has_error,annotator\ns1,true,dr_a\ns1,false,dr_b\n"
#: Found by the fourth bad-input sweep (notes/badinput2.md): the features of session 5.
SWEEP4_CASES: list[Case] = [
    # openpyxl's XML ParseError from a damaged sheet part: a traceback
    Case(
        "ingest-generic-labels/xlsx-damaged-sheet",
        ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/o.jsonl"),
        _damaged_sheet("l.xlsx"),
        line="failcodes: error: {d}/l.xlsx: not a readable Excel workbook (unclosed "
        "token: line 1, column 0)",
    ),
    # "not a readable Excel workbook (File is not a zip file)" said nothing of what it was
    Case(
        "agree/xlsx-that-is-a-csv",
        ("agree", "{d}/r.xlsx"),
        _write({"r.xlsx": "unit,coder_A,coder_B\n1,1,1\n"}),
        line="failcodes: error: {d}/r.xlsx: not a readable Excel workbook (File is not a zip "
        "file); it is text (a CSV renamed .xlsx?): name it .csv",
    ),
    Case(
        "ingest-generic-labels/xlsx-password-protected",
        ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/o.jsonl"),
        # an encrypted workbook is an OLE2 compound file (its signature, then sectors)
        _write({"l.xlsx": bytes.fromhex("D0CF11E0A1B11AE1") + bytes(504)}),
        line="failcodes: error: {d}/l.xlsx: not a readable Excel workbook (File is not a zip "
        "file); it is a password-protected workbook or an old .xls: save it in Excel as .xlsx "
        "without a password",
    ),
    # the table on the second sheet: "no labels found"
    Case(
        "ingest-generic-labels/xlsx-table-on-the-second-sheet",
        ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/o.jsonl"),
        _notes_then_table("l.xlsx"),
        line="failcodes: error: {d}/l.xlsx:1: no rows under the header (failcodes reads the "
        "first of the workbook's 2 sheets: 'notes', 'labels'; move the table to the first "
        "sheet)",
    ),
    # JSON and JSONL have no header: a --label-rule column no row has gave every row the
    # rule's 'otherwise' label (all no_error), exit 0; a --map or --passage-column typo
    # filled nothing, exit 0
    Case(
        "ingest-generic/label-rule-column-absent-jsonl",
        (
            *("ingest", "generic", "{d}/r.jsonl", "-o", "{d}/o.jsonl", "--system", "s"),
            *("--label-rule", "gold = wrong -> error", "--labels-out", "{d}/l.jsonl"),
        ),
        _write({"r.jsonl": '{"claim_id": "c1", "claim": "x", "verdict": "supported"}\n'}),
        line="failcodes: error: {d}/r.jsonl, field 'gold': no row has this column (have: "
        "claim, claim_id, verdict)",
    ),
    Case(
        "ingest-generic-labels/label-rule-column-absent-jsonl",
        (
            *("ingest", "generic-labels", "{d}/l.jsonl", "-o", "{d}/o.jsonl"),
            *("--label-rule", "gold = wrong -> error"),
        ),
        _write({"l.jsonl": '{"sentence_id": "s1"}\n'}),
        line="failcodes: error: {d}/l.jsonl, field 'gold': no row has the --label-rule column "
        "(have: sentence_id)",
    ),
    Case(
        "ingest-generic/passage-column-absent-json",
        (*GENERIC, "--passage-column", "evidence"),
        _write({"d.json": '[{"claim_id": "c1", "claim": "x", "verdict": "supported"}]'}),
        line="failcodes: error: {d}/d.json, field 'evidence': no row has this column (have: "
        "claim, claim_id, verdict)",
    ),
    Case(
        "ingest-generic/map-column-absent",
        (*GENERIC[:2], "{d}/r.csv", *GENERIC[3:], "--map", "model=verifier"),
        _write({"r.csv": "claim_id,claim,verdict\nc1,x,supported\n"}),
        line="failcodes: error: {d}/r.csv, field 'model': --map model=verifier: no column "
        "'model' (have: claim, claim_id, verdict)",
    ),
    # options that did nothing: silently ignored before
    Case(
        "ingest-generic/label-level-without-a-label-rule",
        (*GENERIC, "--option", "label_level=claim"),
        _write({"d.json": '[{"claim_id": "c1", "claim": "x", "verdict": "supported"}]'}),
        line="failcodes: error: --option label_level=claim is the level of the labels "
        "--label-rule makes: give --label-rule (or drop the option)",
    ),
    Case(
        "ingest-generic/list-place-without-rows",
        (*GENERIC, "--map", "sentences#=sentence_id"),
        _write({"d.json": '[{"claim_id": "c1", "claim": "x", "verdict": "supported"}]'}),
        line="failcodes: error: --map sentences#=...: 'sentences#' is the place of a row in a "
        "list exploded by --option rows=...; without that option there is no such column",
    ),
    Case(
        "ingest-generic/list-place-of-no-list",
        (*GENERIC, *ROWS, "--map", "claims#=sentence_id"),
        _write({"d.json": NESTED}),
        line="failcodes: error: --map claims#=...: no list 'claims' on --option "
        "rows=sentences[].claims[] (its places: sentences#, sentences.claims#)",
    ),
    Case(
        "ingest-generic-labels/consensus-empty",
        (*GENERIC_LABELS, "--option", "consensus="),
        _write({"l.csv": VOTES}),
        line="failcodes: error: --option consensus='' is not one of: majority, any, all",
    ),
    # a repeated --option or --alias: the last one silently won
    Case(
        "ingest-generic/option-given-twice",
        (*GENERIC, "--option", "ids=line", "--option", "ids=columns"),
        _write({"d.json": '[{"claim_id": "c1", "claim": "x", "verdict": "supported"}]'}),
        line="failcodes: error: --option ids given twice ('line' and 'columns')",
    ),
    Case(
        "ingest-generic/alias-given-twice",
        (*GENERIC, "--alias", "Yes=supported", "--alias", "Yes=refuted"),
        _write({"d.json": '[{"claim_id": "c1", "claim": "x", "verdict": "Yes"}]'}),
        line="failcodes: error: --alias Yes given twice ('supported' and 'refuted')",
    ),
    # "no traces found" said nothing of why
    Case(
        "ingest-generic/no-verdict-drop-left-nothing",
        (*GENERIC[:2], "{d}/r.csv", *GENERIC[3:], "--option", "no_verdict=drop"),
        _write({"r.csv": "claim_id,claim,verdict\nc1,x,\nc2,y,\n"}),
        line="failcodes: error: {d}/r.csv: no traces: every row (2) has no verdict, and --option "
        "no_verdict=drop left each out (is the verdict column the right one?)",
    ),
    Case(
        "ingest-generic/rows-path-of-other-keys",
        (*GENERIC, "--option", "rows=answers[].claims[]"),
        _write({"d.json": NESTED}),
        line="failcodes: error: {d}/d.json: no rows: the lists of --option "
        "rows=answers[].claims[] are missing or empty in every record (1); are the keys those "
        "of the file?",
    ),
    Case(
        "ingest-generic-labels/rows-path-of-other-keys",
        (*GENERIC_LABELS[:2], "{d}/l.json", *GENERIC_LABELS[3:], "--option", "rows=votes[]"),
        _write({"l.json": '[{"sentence_id": "s1", "ratings": []}]'}),
        line="failcodes: error: {d}/l.json: no rows: the lists of --option rows=votes[] are "
        "missing or empty in every record (1); are the keys those of the file?",
    ),
    # sentence ids to qualify without a question id stayed bare (joining other answers')
    Case(
        "ingest-generic-labels/sentence-ids-question-without-question-id",
        (*GENERIC_LABELS, "--option", "sentence_ids=question"),
        _write({"l.csv": "sentence_id,has_error\n1,true\n"}),
        line="failcodes: error: {d}/l.csv:2, field 'question_id': no question id to qualify the "
        "sentence id with (--option sentence_ids=question); map the column that names the "
        "answer: --map COLUMN=question_id, or, if the records name none, number them: --map "
        "'#=question_id'",
    ),
    # issue 28: '*' on a rows path goes through an object's keys; a list there is one line
    Case(
        "ingest-generic/rows-path-every-key-of-a-list",
        (*GENERIC, "--option", "rows=answers.*.claims[]"),
        _write({"d.json": '[{"answers": [{"claims": []}]}]'}),
        line="failcodes: error: {d}/d.json:1, field 'answers': expected an object (its keys go "
        "through *) at answers for --option rows=answers.*.claims[], got list",
    ),
    # issue 28: a researcher's local Label Studio server
    Case(
        "labelstudio-serve/no-such-binary",
        ("labelstudio", "serve", "--bin", "{d}/nope", "--data-dir", "{d}/ls"),
        _write({}),
        line="failcodes: error: --bin {d}/nope: no such file (the label-studio executable)",
    ),
    Case(
        "labelstudio-serve/credentials-not-ours",
        ("labelstudio", "serve", "--bin", "{d}/label-studio", "--data-dir", "{d}/ls"),
        _write({"label-studio": "#!/bin/sh\n", "ls/failcodes-credentials.json": "[1]"}),
        line="failcodes: error: {d}/ls/failcodes-credentials.json: not failcodes' Label Studio "
        "credentials (expected a JSON object with email, password and token); restore it, or "
        "give a fresh --data-dir",
    ),
    # issue 28: verdicts from one column per system, or declared by an asserting pipeline
    Case(
        "ingest-generic/verdict-column-without-a-column",
        (*GENERIC, "--verdict-column", "=gpt4"),
        _write({"d.json": "[]"}),
        line="failcodes: error: --verdict-column expects COLUMN or COLUMN=SYSTEM, got '=gpt4'",
    ),
    Case(
        # one threshold over a support score and an error score: one read backwards
        "ingest-generic/score-columns-named-in-opposite-directions",
        (
            *("ingest", "generic", "{d}/d.json", "-o", "{d}/o.jsonl", "--verdict-column"),
            *("mc_support=mc", "--verdict-column", "hallucination_score=sc"),
            *("--option", "verdict_threshold=0.5"),
        ),
        _write({"d.json": "[]"}),
        line="failcodes: error: --verdict-column 'hallucination_score' is named as an error "
        "score and 'mc_support' as a support score, but --option verdict_threshold and "
        "score_means read every column one way (one of the two would be read backwards): "
        "ingest each system apart, each with its own --option score_means, and give the trace "
        "files together",
    ),
    Case(
        "ingest-generic/verdict-declared-twice",
        (*GENERIC, "--verdict", "supported", "--verdict", "refuted"),
        _write({"d.json": "[]"}),
        line="failcodes: error: --verdict given twice for every system",
    ),
    Case(
        "ingest-generic/verdict-declared-and-mapped",
        (*GENERIC, "--verdict", "supported", "--map", "label=verdict"),
        _write({"d.json": '[{"claim_id": "c1", "claim": "x", "label": "true"}]'}),
        line="failcodes: error: --verdict declares every claim's verdict (an asserting "
        "pipeline); drop --map label=verdict, or name the systems it is for: --verdict "
        "SYSTEM=VERDICT",
    ),
    # issue 28: '#' restarts in each file; the hint named a list place, not the two files
    Case(
        "ingest-generic/record-place-restarts-in-each-file",
        (
            "ingest",
            "generic",
            "{d}/a.jsonl",
            "{d}/b.jsonl",
            "-o",
            "{d}/o.jsonl",
            "--system",
            "s",
            "--option",
            "rows=claims[]",
            "--map",
            "#=question_id",
            "--map",
            "claims#=sentence_id",
            "--option",
            "sentence_ids=question",
        ),
        _write(
            {
                "a.jsonl": '{"claims": [{"claim": "A", "verdict": "true"}]}\n',
                "b.jsonl": '{"claims": [{"claim": "B", "verdict": "false"}]}\n',
            }
        ),
        line="failcodes: error: {d}/b.jsonl:1, field 'claim_id': duplicate (system, claim_id) = "
        "('s', '1:1'); first at {d}/a.jsonl:1 ('#', the record's place, counts from 1 in each "
        "file and fills the id here, so record 1 of b.jsonl takes the id of one in a.jsonl: "
        "concatenate the files into one input, or map a column that names each record) (row "
        "claims[0])",
    ),
    # consensus: 'dr_a ' and 'Dr_A' beside 'dr_a' were other annotators (two votes of one)
    Case(
        "ingest-generic-labels/consensus-padded-annotator",
        (*GENERIC_LABELS, "--option", "consensus=majority"),
        _write({"l.csv": VOTES + "s1,false,dr_a \n"}),
        line="failcodes: error: {d}/l.csv:4, field 'annotator': annotator name 'dr_a ': expected "
        "the name alone, without spaces around it (consensus counts one vote per annotator "
        "name)",
    ),
    Case(
        "ingest-generic-labels/consensus-annotator-in-capitals",
        (*GENERIC_LABELS, "--option", "consensus=majority"),
        _write({"l.csv": VOTES + "s1,false,Dr_A\n"}),
        line="failcodes: error: {d}/l.csv:4, field 'annotator': annotator 'Dr_A' and 'dr_a' "
        "(line 2) differ only by case or Unicode form: the same clinician? write one spelling "
        "(consensus counts one vote per annotator name)",
    ),
]


def _merged_sheet(name: str) -> Setup:
    """A clinicians' sheet whose question cell is merged over its answer's three sentences."""

    def setup(d: Path) -> None:
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        for row in [
            ["question_id", "sentence_id", "has_error"],
            ["q1", "s1", True],
            [None, "s2", False],
            [None, "s3", False],
        ]:
            sheet.append(row)
        sheet.merge_cells("A2:A4")
        book.save(d / name)

    return setup


def _long_sheet(name: str) -> Setup:
    """A long ratings sheet: header on row 1, a blank row 3, unit 1 rated by 'a' twice."""
    return _workbook(name, [["unit", "rater", "rating"], [1, "a", 1], [], [1, "b", 2], [1, "a", 2]])


LONG = "unit,rater,rating\n1,a,1\n1,b,1\n2,a,2\n2,b,1\n"
#: Found by the fourth sweep, second part: long ratings tables, studies, Label Studio files.
SWEEP4B_CASES: list[Case] = [
    # session 6, researcher-shaped dumps: a verdict under another name was "did the verifier
    # fail?"; a foreign record listed one missing field "and 12 more problems"; a list place
    # as claim id repeats in every record
    Case(
        "ingest/nested-no-verdict-column",
        (
            "ingest",
            "generic",
            "{d}/d.jsonl",
            "-o",
            "{d}/t.jsonl",
            "--option",
            "rows=c[]",
            "--system",
            "s",
        ),
        _write({"d.jsonl": '{"c": [{"claim": "A.", "answer": "S"}]}\n'}),
        line="failcodes: error: {d}/d.jsonl:1, field 'verdict': no verdict (this row's "
        "columns: claim, answer): name the verdict's column with --map COLUMN=verdict; if the "
        "verifier failed on this claim, --option no_verdict=drop leaves such rows out, counted "
        "in a note (row c[0])",
    ),
    Case(
        "ingest/every-missing-and-unknown-field-named",
        (
            "ingest",
            "generic",
            "{d}/d.jsonl",
            "-o",
            "{d}/t.jsonl",
            "--option",
            "rows=c[]",
            "--map",
            "v=verdict",
            "--alias",
            "S=supported",
        ),
        _write({"d.jsonl": '{"q": 1, "c": [{"claim": "A.", "v": "S", "model": "m"}]}\n'}),
        line="failcodes: error: {d}/d.jsonl:1, field 'system': missing required field (also "
        "question_id, sentence_id, claim_id); unknown fields q, model (rename foreign fields "
        "with --map FOREIGN=ours, leave one out with --map FOREIGN=) (row c[0])",
    ),
    Case(
        "ingest/list-place-as-claim-id-repeats",
        (
            "ingest",
            "generic",
            "{d}/d.jsonl",
            "-o",
            "{d}/t.jsonl",
            "--option",
            "rows=c[]",
            "--map",
            "c#=claim_id",
            "--map",
            "v=verdict",
            "--alias",
            "S=supported",
            "--system",
            "s",
        ),
        _write(
            {"d.jsonl": '{"c": [{"claim": "A.", "v": "S"}]}\n{"c": [{"claim": "B.", "v": "S"}]}\n'}
        ),
        line="failcodes: error: {d}/d.jsonl:2, field 'claim_id': duplicate (system, claim_id) "
        "= ('s', '1'); first at line 1 (c# counts from 1 in every record: map it to "
        "sentence_id with --option sentence_ids=question, which prefixes the record's "
        "question id) (row c[0])",
    ),
    # a rater named like the unit (or --by) column: pandas' "cannot insert unit, already
    # exists" traceback
    Case(
        "agree/long-rater-named-like-the-unit-column",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,rater,rating\n1,unit,1\n1,b,1\n2,unit,2\n2,b,1\n"}),
        line="failcodes: error: {d}/r.csv:2, field 'rater': rater 'unit' has the name of the "
        "column 'unit' (the reshaped table needs both): rename the rater",
    ),
    # rows without a unit vanished from the table; 'a ' was a third rater; exit 0
    Case(
        "agree/long-empty-unit-cell",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": LONG + ",a,2\n,b,1\n"}),
        line="failcodes: error: {d}/r.csv:6, field 'unit': empty unit cell (a long table names "
        "the unit on every row)",
    ),
    Case(
        "agree/long-padded-rater",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": LONG + "3,a ,1\n3,b,1\n"}),
        line="failcodes: error: {d}/r.csv:6, field 'rater': rater 'a ': expected the name "
        "alone, without spaces around it (it would be another rater)",
    ),
    # one rater in the whole long table: a table of undefined statistics, exit 0
    Case(
        "agree/long-one-rater",
        ("agree", "{d}/r.csv", "--long", "rater,rating"),
        _write({"r.csv": "unit,rater,rating\n1,a,1\n2,a,2\n3,a,1\n"}),
        line="failcodes: error: {d}/r.csv, field 'rater': one rater ('a') in the whole table: "
        "agreement needs two or more (is 'rater' the rater column?)",
    ),
    # the line of a repeated (unit, rater) pair was counted from row 2 without regard to a
    # quoted line break (a CSV) or to the sheet's own row numbers (a workbook)
    Case(
        "agree/long-pair-twice-after-a-quoted-line-break",
        ("agree", "{d}/r.csv", "--long", "rater,rating"),
        _write({"r.csv": 'unit,rater,rating,note\n1,a,1,"x\ny"\n1,b,1,z\n1,a,2,w\n'}),
        line="failcodes: error: {d}/r.csv:5, field 'rating': unit '1' is rated by 'a' twice "
        "(several codes per unit and rater, one row each? --sets ';' joins them into one code set)",
    ),
    Case(
        "agree/long-xlsx-pair-twice-after-a-blank-row",
        ("agree", "{d}/r.xlsx", "--long", "rater,rating"),
        _long_sheet("r.xlsx"),
        line="failcodes: error: {d}/r.xlsx:5, field 'rating': unit '1' is rated by 'a' twice "
        "(several codes per unit and rater, one row each? --sets ';' joins them into one code set)",
    ),
    # an object or a list where a rating goes was a text category, exit 0
    Case(
        "agree/jsonl-rating-is-an-object",
        ("agree", "{d}/r.jsonl", "--long", "rater,rating"),
        _write(
            {
                "r.jsonl": '{"unit": 1, "rater": "a", "rating": 1}\n'
                '{"unit": 1, "rater": "b", "rating": {"x": 1}}\n'
            }
        ),
        line="failcodes: error: {d}/r.jsonl:2, field 'rating': an object is not a rating "
        "(expected a number or a text per cell)",
    ),
    # --long "" (an unset variable) was read as no --long; --unit-column naming the rater
    # column said "unit 'a' is rated by 'a' twice"
    Case(
        "agree/long-empty",
        ("agree", "{d}/r.csv", "--long", ""),
        _write({"r.csv": LONG}),
        line="failcodes: error: --long is empty; name the column(s), comma-separated",
    ),
    Case(
        "agree/long-unit-column-is-the-rater-column",
        ("agree", "{d}/r.csv", "--long", "rater,rating", "--unit-column", "rater"),
        _write({"r.csv": LONG}),
        line="failcodes: error: {d}/r.csv: --unit-column 'rater' is also a --long column: the "
        "unit ids are a third column",
    ),
    # study files: a codebook path that is a folder was "study: unreadable: cannot read:
    # [Errno 21] Is a directory" (no line, no field); pydantic turned "yes" into true, true
    # into 1 resample, "1000" into 1000; a judge kind named twice ran twice into one folder;
    # budget = inf was no budget
    Case(
        "run/study-codebook-is-a-folder",
        ("run", "{d}/study", "--plan"),
        _study(
            {
                "failcodes.toml": _study_file(
                    'codebook = "medical-fact-check.v1.yaml"', 'codebook = "."'
                )
            }
        ),
        line="failcodes: error: {d}/study/failcodes.toml:5, field 'codebook': '.': a folder, "
        "expected the codebook's YAML file ({d}/study)",
    ),
    Case(
        "run/study-labels-as-text",
        ("run", "{d}/study"),
        _study({"failcodes.toml": _study_file("labels = true\n", 'labels = "yes"\n')}),
        line="failcodes: error: {d}/study/failcodes.toml:18, field 'datasets[0].ingest[0]."
        "labels': Input should be a valid boolean",
    ),
    Case(
        "run/study-bootstrap-true",
        ("run", "{d}/study"),
        _study({"failcodes.toml": _study_file("bootstrap = 1000", "bootstrap = true")}),
        line="failcodes: error: {d}/study/failcodes.toml:33, field 'metrics.bootstrap': Input "
        "should be a valid integer",
    ),
    Case(
        "run/study-judge-kind-twice",
        ("run", "{d}/study"),
        _study(
            {
                "failcodes.toml": _study_file(
                    'kinds = ["retrieval", "reasoning"]', 'kinds = ["retrieval", "retrieval"]'
                )
            }
        ),
        line="failcodes: error: {d}/study/failcodes.toml:41, field 'judge.kinds': 'retrieval' "
        "is named twice",
    ),
    Case(
        "run/study-budget-infinite",
        ("run", "{d}/study"),
        _study({"failcodes.toml": _study_file("# budget = 2.0        # USD", "budget = inf")}),
        line="failcodes: error: {d}/study/failcodes.toml:44, field 'judge.budget': Input should "
        "be a finite number",
    ),
    Case(
        "run/study-given-as-another-file",
        ("run", "{d}/notes.txt"),
        _write({"notes.txt": "hello\n"}),
        line="failcodes: error: {d}/notes.txt: is a file; give the study folder (the one holding "
        "failcodes.toml)",
    ),
    # init "" (an unset variable) made the working folder a study
    Case(
        "init/empty-folder-name",
        ("init", ""),
        _write({}),
        line="failcodes: error: init FOLDER '': an empty path (an unset shell variable?); name "
        "the file or folder to write",
    ),
    # Label Studio files: tasks written under .csv/.jsonl (a JSON list: Label Studio misreads
    # it); a task file given as --judged said "expected a JSON object, got list"; tasks one a
    # line were read as traces
    Case(
        "labelstudio-export/o-not-json",
        (
            *("labelstudio", "export", "{d}/t.jsonl", "-p", "retrieval", "-c", str(CODEBOOK)),
            *("-o", "{d}/tasks.csv"),
        ),
        _write({"t.jsonl": GOOD_TRACES}),
        line="failcodes: error: -o {d}/tasks.csv: the tasks are one JSON document; name the "
        "file .json (Label Studio reads the format from the extension)",
    ),
    Case(
        "labelstudio-export/judged-is-a-tasks-file",
        (
            *("labelstudio", "export", "{d}/t.jsonl", "-p", "retrieval", "-c", str(CODEBOOK)),
            *("--judged", "{d}/old.tasks.json", "-o", "{d}/tasks.json"),
        ),
        _write({"t.jsonl": GOOD_TRACES, "old.tasks.json": '[{"data": {"unit_id": "u1"}}]'}),
        line="failcodes: error: {d}/old.tasks.json: --judged takes the judge's annotations (a "
        "judge run folder, or its annotations.jsonl), not a .json task or export file",
    ),
    Case(
        "labelstudio-push/tasks-one-a-line",
        (
            *("labelstudio", "push", "{d}/tasks.jsonl", "-p", "retrieval"),
            *("--project", "review", "--url", "http://127.0.0.1:9"),
        ),
        _write({"tasks.jsonl": '{"data": {"unit_id": "u1"}}\n'}),
        line="failcodes: error: {d}/tasks.jsonl: tasks are built from units: give the "
        "disagreements file (or the study folder), with --judged for the judge's codes; a "
        ".tasks.json that `labelstudio export` wrote is imported in Label Studio itself "
        "(project > Import)",
    ),
    # an option a step's command does not have failed in that step, after ingest, metrics
    # and disagreements had run and written their outputs
    Case(
        "run/study-judge-args-unknown-option",
        ("run", "{d}/study"),
        _study(
            {
                "failcodes.toml": _study_file("# top_k = 5", 'args = ["--colour", "red"]'),
                "medical-fact-check.v1.yaml": GOOD_CB,
            }
        ),
        line="failcodes: error: {d}/study/failcodes.toml:43, field 'judge.args': `args` is no "
        "longer read; write its options as fields of [judge]: nothing ('--colour': no such "
        "setting) (docs/study.md, 'Settings as fields')",
    ),
    Case(
        "run/study-ingest-args-unknown-option",
        ("run", "{d}/study"),
        _study(
            {
                "failcodes.toml": _study_file(
                    "labels = true\n", 'labels = true\nargs = ["--colour", "red"]\n'
                ),
                "medical-fact-check.v1.yaml": GOOD_CB,
            }
        ),
        line="failcodes: error: {d}/study/failcodes.toml:19, field 'datasets[0].ingest[0]."
        "args': `args` is no longer read; write its options as fields of this "
        "[[datasets.ingest]]: nothing ('--colour': no such setting) (docs/study.md, "
        "'Settings as fields')",
    ),
    # a score past float range: OverflowError traceback
    Case(
        "ingest-generic/score-past-float-range",
        (*GENERIC, "--option", "verdict_threshold=0.5"),
        _write({"d.json": '[{"claim_id": "c1", "claim": "x", "verdict": 1' + "0" * 400 + "}]"}),
        line="failcodes: error: {d}/d.json:1, field 'verdict': --option verdict_threshold: "
        "expected a support score (a number), got 1000000000000000000000000000000000000000000"
        "00000000000000...",
    ),
    # Python's float("0_4") is 4.0: a support score 0_4 was supported at 0.5 (t31us)
    Case(
        "ingest-generic/score-with-underscore",
        (*GENERIC, "--option", "verdict_threshold=0.5"),
        _write({"d.json": '[{"claim_id": "c1", "claim": "x", "verdict": "0_4"}]'}),
        line="failcodes: error: {d}/d.json:1, field 'verdict': --option verdict_threshold: "
        "expected a support score (a number), got '0_4': an underscore is no part of a number "
        "(it was read as 4)",
    ),
    # a list in the --label-rule column never matched: every row the 'otherwise' label
    Case(
        "ingest-generic/label-rule-value-is-a-list",
        (
            *GENERIC,
            *("--label-rule", "gold = wrong -> error", "--labels-out", "{d}/l.jsonl"),
        ),
        _write(
            {
                "d.json": '[{"claim_id": "c1", "claim": "x", "verdict": "supported", '
                '"gold": ["wrong"]}]'
            }
        ),
        line="failcodes: error: {d}/d.json:1, field 'gold': expected one value for --label-rule "
        "'gold = wrong -> error', got a list ['wrong']",
    ),
    # ratings: one rater column gave a table of undefined statistics; an empty --by cell
    # dropped its row; a date (Excel's reading of 1/2) or an Excel error value ('#DIV/0!')
    # was a text category; exit 0 each
    Case(
        "agree/one-rater-column",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,coder_A\n1,1\n2,2\n3,1\n"}),
        line="failcodes: error: {d}/r.csv: one rater column ('coder_A'): agreement needs two or "
        "more (name them with --raters; a table of one row per unit and rater: --long "
        "RATER,RATING)",
    ),
    Case(
        "agree/long-empty-by-cell",
        ("agree", "{d}/r.csv", "--long", "rater,rating", "--by", "site"),
        _write({"r.csv": "unit,rater,rating,site\n1,a,1,x\n1,b,1,\n2,a,2,x\n2,b,1,x\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'site': empty --by cell (every row belongs "
        "to a group)",
    ),
    Case(
        "agree/xlsx-date-as-rating",
        ("agree", "{d}/r.xlsx"),
        _workbook(
            "r.xlsx",
            [["unit", "coder_A", "coder_B"], [1, 1, 1], [2, _dt.datetime(2024, 1, 2), 2]],
        ),
        line="failcodes: error: {d}/r.xlsx:3, field 'coder_A': a date or time (2024-01-02 "
        "00:00:00) is not a rating (Excel turns 1/2 or 3-4 into dates: format the column as "
        "text or numbers)",
    ),
    Case(
        "agree/xlsx-error-value",
        ("agree", "{d}/r.xlsx"),
        _workbook("r.xlsx", [["unit", "coder_A", "coder_B"], [1, 1, 1], [2, "#DIV/0!", 2]]),
        line="failcodes: error: {d}/r.xlsx:3, field 'coder_A': Excel error value #DIV/0! (a "
        "formula that failed): fix or clear the cell",
    ),
    # a question cell merged over its sentences: only the first row had the question id, the
    # others none (labels without a question, silently)
    Case(
        "ingest-generic-labels/xlsx-merged-cells",
        ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/o.jsonl"),
        _merged_sheet("l.xlsx"),
        line="failcodes: error: {d}/l.xlsx:2, field 'question_id': merged cells A2:A4: only the "
        "first cell of a merged block holds its value, the others read as empty; unmerge the "
        "cells and fill each one",
    ),
    # study inputs: a folder for an adapter that reads files failed in its step (after the
    # run took its lock and wrote its state); an unknown adapter or bundled data set was a
    # line naming no file and no field
    Case(
        "run/study-ingest-path-is-a-folder",
        ("run", "{d}/study"),
        _study(
            {
                "failcodes.toml": _study_file("bundled:ragchecker/checking_outputs.json", "raw"),
                "medical-fact-check.v1.yaml": GOOD_CB,
                "raw/outputs.json": "[]",
            }
        ),
        line="failcodes: error: {d}/study/failcodes.toml:17, field 'datasets[0].ingest[0]."
        "paths[0]': 'raw': a folder; the adapter reads files ({d}/study/raw)",
    ),
    Case(
        "run/study-unknown-adapter",
        ("run", "{d}/study", "--plan"),
        _study({"failcodes.toml": _study_file('adapter = "ragchecker"', 'adapter = "ragchekcer"')}),
        line="failcodes: error: {d}/study/failcodes.toml:16, field 'datasets[0].ingest[0]."
        "adapter': unknown adapter 'ragchekcer' (known: atomic, covidfact, generic, "
        "generic-labels, healthver, medexpert, medscore, ragchecker, scifact)",
    ),
    Case(
        "run/study-unknown-bundled-data-set",
        ("run", "{d}/study", "--plan"),
        _study(
            {
                "failcodes.toml": _study_file(
                    "bundled:ragchecker/checking_outputs.json", "bundled:ragcheker/outputs.json"
                ),
                "medical-fact-check.v1.yaml": GOOD_CB,
            }
        ),
        line="failcodes: error: {d}/study/failcodes.toml:17, field 'datasets[0].ingest[0]."
        "paths[0]': 'bundled:ragcheker/outputs.json': no bundled data set 'ragcheker' "
        "(available: medexpert-sample, ragchecker, rtv-example, scifact)",
    ),
    # init: a file of the user's own named like the codebook was overwritten; a bad name
    # pointed at a study file not written yet; --name "" was ignored
    Case(
        "init/codebook-name-taken",
        ("init", "{d}/st"),
        _write({"st/medical-fact-check.v1.yaml": "my own notes\n"}),
        line="failcodes: error: {d}/st/medical-fact-check.v1.yaml: exists and is not the bundled "
        "codebook; init would overwrite it: move it away",
    ),
    Case(
        "init/name-not-a-study-name",
        ("init", "{d}/st", "--name", "../x"),
        _write({}),
        line="failcodes: error: --name '../x' is no study name: letters, digits, '.', '_' and "
        "'-', starting with a letter or digit",
    ),
    Case(
        "init/name-too-long",
        ("init", "{d}/st", "--name", "s" * 65),
        _write({}),
        line="failcodes: error: --name '" + "s" * 65 + "' is no study name: letters, digits, "
        "'.', '_' and '-', starting with a letter or digit, at most 64 of them",
    ),
    Case(
        "init/a-file-where-a-step-folder-goes",
        ("init", "{d}/st"),
        _write({"st/report": "x\n"}),
        line="failcodes: error: {d}/st/report: a file where the study keeps a folder; move it away",
    ),
    # a formula a program wrote and nothing computed read as an empty cell (a label without
    # has_error: "missing required field"; an optional field: silently none)
    Case(
        "ingest-generic-labels/xlsx-formula-never-computed",
        ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/o.jsonl"),
        _workbook("l.xlsx", [["sentence_id", "question_id", "has_error"], ["s1", '="q"&1', True]]),
        line="failcodes: error: {d}/l.xlsx:2, field 'question_id': cell B2 holds a formula with "
        "no saved value (the file was written by a program, never opened in Excel): open and "
        "save it in Excel, or write the values",
    ),
]


# -- issue 29: readers that parse instead of pattern-match, bounded decompression ----------


def _patched_sheet(name: str, patch: Callable[[bytes], bytes]) -> Setup:
    """A clinicians' sheet (3 sentences, question ids) whose sheet XML ``patch`` rewrites."""

    def setup(d: Path) -> None:
        import zipfile

        _workbook(
            name,
            [
                ["sentence_id", "question_id", "has_error"],
                ["s1", "q1", True],
                ["s2", "q1", False],
                ["s3", "q2", True],
            ],
        )(d)
        with zipfile.ZipFile(d / name) as z:
            parts = {n: z.read(n) for n in z.namelist()}
        parts["xl/worksheets/sheet1.xml"] = patch(parts["xl/worksheets/sheet1.xml"])
        with zipfile.ZipFile(d / name, "w", zipfile.ZIP_DEFLATED) as z:
            for part, data in parts.items():
                z.writestr(part, data)

    return setup


def _merge(xml: str) -> Callable[[bytes], bytes]:
    """Put ``<mergeCells>xml</mergeCells>`` after the sheet data; empty the merged cells."""

    def patch(sheet: bytes) -> bytes:
        for ref in (b"B3",):
            start = sheet.index(b'<c r="' + ref + b'"')
            sheet = sheet[:start] + sheet[sheet.index(b"</c>", start) + 4 :]
        return sheet.replace(
            b"</sheetData>", b"</sheetData><mergeCells>" + xml.encode() + b"</mergeCells>"
        )

    return patch


def _uncached(sheet: bytes) -> bytes:
    """Cell B4 as a formula with no saved value, its attributes in another order."""
    start = sheet.index(b'<c r="B4"')
    end = sheet.index(b"</c>", start) + 4
    return sheet[:start] + b'<c t="str" r="B4"><f>"q"&amp;2</f></c>' + sheet[end:]


def _entity_sheet(sheet: bytes) -> bytes:
    """An entity-expansion DOCTYPE before the sheet (the 'billion laughs' shape, small)."""
    doctype = b'<!DOCTYPE w [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
    body = sheet.split(b"?>", 1)[-1] if sheet.startswith(b"<?xml") else sheet
    return b'<?xml version="1.0"?>' + doctype + body.replace(b">q2<", b">&b;<", 1)


def _padded_sheet(sheet: bytes) -> bytes:
    """5 MB of spaces inside the sheet data: packs past 50:1, over the 4 MB floor."""
    return sheet.replace(b"<sheetData>", b"<sheetData>" + b" " * (5 << 20))


SHEET_LABELS = ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/o.jsonl")
MERGED = (
    "merged cells B2:B3: only the first cell of a merged block holds its value, the others "
    "read as empty; unmerge the cells and fill each one"
)


def _pandas_parquet(name: str, index: list[int]) -> Setup:
    """``name``.parquet: sentence labels as pandas writes them with row index ``index``."""

    def setup(d: Path) -> None:
        import pandas as pd

        _write({"t.jsonl": GOOD_TRACES})(d)
        ids = [f"q{i}-s1" for i in range(2)]
        frame = pd.DataFrame({"sentence_id": ids, "has_error": [True, False], "annotator": "a"})
        frame.index = pd.Index(index)  # (not a range: 0, 1 or 1, 0 are stored as one)
        frame.to_parquet(d / f"{name}.parquet")

    return setup


def _parquet_bomb(rows: int = 300_000) -> Setup:
    """``rows`` traces whose claim is one dictionary-encoded 1 KB string: a ~0.4 MB file that
    decodes to ~300 MB (past the 256 MB floor)."""

    def setup(d: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        text = pa.array(["x" * 1000], pa.string())
        block = 50_000
        claim = pa.DictionaryArray.from_arrays(pa.array([0] * block, pa.int32()), text)
        schema = pa.schema([(n, pa.string()) for n in ("claim_id", "claim", "verdict", "system")])
        with pq.ParquetWriter(d / "t.parquet", schema, compression="zstd") as writer:
            for k in range(rows // block):
                ids = pa.array([f"c{k}-{i}" for i in range(block)])
                same = pa.array(["supported"] * block)
                writer.write_table(
                    pa.table([ids, claim.cast(pa.string()), same, same], schema=schema)
                )
        (d / "labels.csv").write_text("claim_id,has_error\nc0-0,false\n", encoding="utf-8")

    return setup


PARQUET_BOMB_LINE = (
    "failcodes: error: {d}/t.parquet: the file decodes to over 256.0 MB from {size} MB (at "
    "most 256.0 MB, or 32 times the file's size) (a decompression bomb, or a table too large "
    "to read here): split the table into smaller files"
)

ROUND2_CASES: list[Case] = [
    # sheet guards were regular expressions: the same XML written otherwise passed them and
    # B3 read as empty, silently ('wrote 3 labels', one without its question)
    Case(
        "ingest-generic-labels/xlsx-merge-single-quotes",
        SHEET_LABELS,
        _patched_sheet("l.xlsx", _merge("<mergeCell ref='B2:B3'/>")),
        line="failcodes: error: {d}/l.xlsx:2, field 'question_id': " + MERGED,
    ),
    Case(
        "ingest-generic-labels/xlsx-merge-attribute-before-ref",
        SHEET_LABELS,
        _patched_sheet("l.xlsx", _merge('<mergeCell id="1" ref="B2:B3"/>')),
        line="failcodes: error: {d}/l.xlsx:2, field 'question_id': " + MERGED,
    ),
    Case(
        "ingest-generic-labels/xlsx-merge-prefixed",
        SHEET_LABELS,
        _patched_sheet(
            "l.xlsx",
            _merge(
                '<x:mergeCell xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/'
                'main" ref="B2:B3"/>'
            ),
        ),
        line="failcodes: error: {d}/l.xlsx:2, field 'question_id': " + MERGED,
    ),
    Case(
        "ingest-generic-labels/xlsx-uncached-formula-type-first",
        SHEET_LABELS,
        _patched_sheet("l.xlsx", _uncached),
        line="failcodes: error: {d}/l.xlsx:4, field 'question_id': cell B4 holds a formula with "
        "no saved value (the file was written by a program, never opened in Excel): open and "
        "save it in Excel, or write the values",
    ),
    Case(
        "ingest-generic-labels/xlsx-entity-declaration",
        SHEET_LABELS,
        _patched_sheet("l.xlsx", _entity_sheet),
        line="failcodes: error: {d}/l.xlsx: the workbook's XML declares a DOCTYPE or an entity "
        "(no spreadsheet program writes one; an entity expansion bomb?): save the sheet again "
        "as .xlsx or as CSV",
    ),
    Case(
        "ingest-generic-labels/xlsx-part-past-ratio",
        SHEET_LABELS,
        _patched_sheet("l.xlsx", _padded_sheet),
        expect=(
            "l.xlsx: the workbook's part xl/worksheets/sheet1.xml unpacks to 5.0 MB from",
            "at most 256.0 MB, and 50:1 past 4.0 MB) (a zip bomb",
        ),
    ),
    Case(
        "agree/xlsx-part-past-ratio",
        ("agree", "{d}/l.xlsx"),
        _patched_sheet("l.xlsx", _padded_sheet),
        expect=("l.xlsx: the workbook's part xl/worksheets/sheet1.xml unpacks to 5.0 MB",),
    ),
    # a Parquet decompression bomb: 2 MB that decode to gigabytes took past 3 GB
    # pandas' to_parquet writes a row index that is not 0, 1, 2... as __index_level_0__: it
    # was refused as one more unknown column, nothing said of pandas
    # a Parquet file or a workbook under a text file's name: a line and byte of their binary
    # data were named ("pq.jsonl:1: not UTF-8 text (invalid start byte at byte 81)")
    Case(
        "metrics/parquet-named-jsonl",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
        _write({"t.jsonl": b"PAR1\x15\x04\x15\xa0\x01", "labels.csv": LABELS}),
        line="failcodes: error: {d}/t.jsonl: not UTF-8 text (invalid start byte at byte 7); it "
        "is a Parquet file: name it .parquet",
    ),
    Case(
        "metrics/workbook-named-csv",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": b"PK\x03\x04\x14\x00\x06\x00\x08\x00\xb4"}),
        line="failcodes: error: {d}/l.csv: not UTF-8 text (invalid start byte at byte 10); it is "
        "a zip archive (an Excel workbook? name it .xlsx)",
    ),
    Case(
        "metrics/gzip-extension",
        ("metrics", "--traces", "{d}/t.jsonl.gz", "--labels", "{d}/labels.csv"),
        _write({"t.jsonl.gz": gzip.compress(GOOD_TRACES.encode()), "labels.csv": LABELS}),
        line="failcodes: error: {d}/t.jsonl.gz: cannot tell the format from the extension "
        "'.gz'; expected .jsonl, .csv or .parquet (a compressed file: decompress it and give "
        "the file it holds)",
    ),
    Case(
        "metrics/parquet-labels-pandas-index",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.parquet"),
        _pandas_parquet("l", [5, 9]),
        expect=(
            "l.parquet:1, field '__index_level_0__': unknown column",
            "pandas' row index: write the file with to_parquet(index=False)",
        ),
    ),
    Case(
        "metrics/parquet-decompression-bomb",
        ("metrics", "--traces", "{d}/t.parquet", "--labels", "{d}/labels.csv"),
        _parquet_bomb(),
        expect=("t.parquet: the file decodes to over 256.0 MB from", "decompression bomb"),
    ),
    Case(
        "ingest-generic/parquet-decompression-bomb",
        ("ingest", "generic", "{d}/t.parquet", "-o", "{d}/o.jsonl"),
        _parquet_bomb(),
        expect=("t.parquet: the file decodes to over 256.0 MB from", "decompression bomb"),
    ),
    Case(
        "agree/parquet-decompression-bomb",
        ("agree", "{d}/t.parquet"),
        _parquet_bomb(),
        expect=("t.parquet: the file decodes to over 256.0 MB from", "decompression bomb"),
    ),
]


def _two_majority_columns() -> str:
    # three raters (each the lone dissenter on 12 of 60 units) and two copies of their majority
    rows = (
        [(0, 1, 1)] * 6 + [(0, 1, 0)] * 6 + [(1, 1, 0)] * 6 + [(1, 1, 1)] * 6 + [(0, 0, 0)] * 6
    ) * 2
    body = "".join(
        f"{i},{a},{b},{c},{int(a + b + c >= 2)},{int(a + b + c >= 2)}\n"
        for i, (a, b, c) in enumerate(rows, start=1)
    )
    return "item_id,a,b,c,x,y\n" + body


# issue 25: a consensus column read as a rater gave an inflated agreement, exit 0
ISSUE25B_CASES: list[Case] = [
    Case(
        "init/codebook-version-not-shipped",
        ("init", "{d}/st", "--codebook-version", "7"),
        line="failcodes: error: --codebook-version 7: failcodes ships medical-fact-check "
        "versions 1, 2",
    ),
    Case(
        "agree/only-consensus-named-columns-beside-one-rater",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "item,gold,final,r1\n1,1,1,1\n2,0,1,0\n3,1,1,0\n"}),
        line="failcodes: error: {d}/r.csv: cannot tell the rater columns: gold, final named "
        "like a consensus column (majority, gold, final...) and 1 other column(s) left; name "
        "the raters with --raters",
    ),
    Case(
        "agree/two-columns-each-the-majority-of-the-others",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": _two_majority_columns()}),
        line="failcodes: error: {d}/r.csv: cannot tell the raters from a majority or "
        "adjudicated column: x, y each equal the row-wise majority of the other columns on at "
        "least 95% of rows, more often than the other columns do; name the raters with --raters",
    ),
]


def _plan_json(**changes: object) -> dict[str, object]:
    """A valid plan of 4 of 8 units (one stratum, p = 4/8 = 0.5), with ``changes`` made."""
    population = [f"u{i}" for i in range(8)]
    plan: dict[str, object] = {
        "schema_version": 1,
        "name": "p",
        "part": "retrieval",
        "source": "attribution/ds/per_passage.csv",
        "source_sha256": "0" * 64,
        "seed": 0,
        "size": 4,
        "stratify": [],
        "strata": [{"key": "all", "population": 8, "sampled": 4, "inclusion_probability": 0.5}],
        "units": [
            {"unit_id": u, "sample": "estimation", "stratum": "all", "inclusion_probability": 0.5}
            for u in population[:4]
        ],
        "unit_strata": dict.fromkeys(population, "all"),
    }
    plan.update(changes)
    return plan


def _plan_units(probability: float, ids: tuple[str, ...] = ("u0", "u1", "u2", "u3")) -> list:
    return [
        {
            "unit_id": u,
            "sample": "estimation",
            "stratum": "all",
            "inclusion_probability": probability,
        }
        for u in ids
    ]


def _plan_case(name: str, plan: dict[str, object] | str, line: str) -> Case:
    text = plan if isinstance(plan, str) else json.dumps(plan, indent=2)
    return Case(
        f"review-status/plan-{name}",
        ("review", "status", "{d}/p.json", "--reviews", "{d}/r.jsonl"),
        _write({"p.json": text, "r.jsonl": ""}),
        line="failcodes: error: {d}/p.json" + line,
    )


def _coded_study(plan: bool = False, reviewed: bool = False) -> Setup:
    """A study folder with a retrieval coded table of 90 units; a plan of it; a review."""

    def setup(d: Path) -> None:
        from tests.test_review_plan import big_table

        table = d / "study" / "attribution" / "ds" / "per_passage.csv"
        table.parent.mkdir(parents=True)
        big_table().to_csv(table, index=False)
        if plan:
            assert main_quiet(["review", "plan", str(d / "study"), "-p", "retrieval", "-n", "4"])
        if reviewed:
            review = dict(
                ANNOTATION,
                unit_id=json.loads(
                    (d / "study/review/plans/ds.retrieval.json").read_text(encoding="utf-8")
                )["units"][0]["unit_id"],
                coder="alice",
                coder_kind="human",
            )
            (d / "study" / "review" / "alice.jsonl").write_text(json.dumps(review) + "\n")

    return setup


def _scope_review(d: Path) -> None:
    """A planned study whose one review codes 'Scope' (the dimension is 'scope')."""
    from failcodes import codebook as codebooks

    _coded_study(plan=True)(d)
    plan = json.loads((d / "study/review/plans/ds.retrieval.json").read_text(encoding="utf-8"))
    review = dict(
        ANNOTATION,
        unit_id=plan["units"][0]["unit_id"],
        status="scored",
        reason=None,
        codebook=codebooks.bundled().ref().model_dump(mode="json"),
        coder="alice",
        coder_kind="human",
        codes={"entity_match": "exact_entity", "Scope": "exact_scope"},
    )
    (d / "study" / "review" / "alice.jsonl").write_text(json.dumps(review) + "\n")


def _two_spellings_review(d: Path) -> None:
    """A planned study reviewed by 'alice' and, in a second file, by 'Alice ' (one person)."""
    from failcodes import codebook as codebooks

    _coded_study(plan=True)(d)
    plan = json.loads((d / "study/review/plans/ds.retrieval.json").read_text(encoding="utf-8"))
    for name, coder in (("alice.jsonl", "alice"), ("alice_fix.jsonl", "Alice ")):
        review = dict(
            ANNOTATION,
            unit_id=plan["units"][0]["unit_id"],
            status="scored",
            reason=None,
            codebook=codebooks.bundled().ref().model_dump(mode="json"),
            coder=coder,
            coder_kind="human",
            codes={"entity_match": "exact_entity", "scope": "exact_scope"},
        )
        (d / "study" / "review" / name).write_text(json.dumps(review) + "\n")


def main_quiet(argv: list[str]) -> bool:
    """Run the CLI for a setup step; True on exit 0."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code == 0


STUDY_FILE_CASES: list[Case] = [
    # tampered review plans were accepted: probability 0 or negative, 500 sampled of 91,
    # duplicate units, a source outside the study (a system file, read as the coded table)
    _plan_case(
        "probability-zero",
        _plan_json(units=_plan_units(0.0)),
        # units[0] is on line 23 (json.dumps, indent 2: 10 lines to the strata, 7 for them,
        # then "units": [, {, unit_id, sample, stratum); the other 3 units are as bad
        ":23, field 'units[0].inclusion_probability': not a review plan: Input should be "
        "greater than 0 (got 0.0); and 3 more problems in this record",
    ),
    _plan_case(
        "probability-negative",
        _plan_json(units=_plan_units(-0.5)),
        ":23, field 'units[0].inclusion_probability': not a review plan: Input should be "
        "greater than 0 (got -0.5); and 3 more problems in this record",
    ),
    _plan_case(
        "probability-over-one",
        _plan_json(
            strata=[{"key": "all", "population": 8, "sampled": 4, "inclusion_probability": 1.5}]
        ),
        ":15, field 'strata[0].inclusion_probability': not a review plan: Input should be less "
        "than or equal to 1 (got 1.5)",
    ),
    _plan_case(
        "sampled-past-population",
        _plan_json(
            strata=[{"key": "all", "population": 91, "sampled": 500, "inclusion_probability": 1}]
        ),
        ":11, field 'strata[0]': not a review plan: stratum 'all': 500 sampled of a "
        "population of 91",
    ),
    _plan_case(
        "probability-not-sampled-over-population",
        _plan_json(
            strata=[{"key": "all", "population": 8, "sampled": 4, "inclusion_probability": 0.9}]
        ),
        ":11, field 'strata[0]': not a review plan: stratum 'all': inclusion probability 0.9 "
        "is not sampled / population (4/8)",
    ),
    _plan_case(
        "duplicate-unit",
        _plan_json(units=_plan_units(0.5, ("u0", "u1", "u2", "u2"))),
        ": not a review plan: unit 'u2' is planned twice",
    ),
    _plan_case(
        "units-disagree-with-stratum",
        _plan_json(units=_plan_units(0.5, ("u0", "u1", "u2"))),
        ": not a review plan: stratum 'all' says 4 sampled of 8; the plan holds 3 of 8",
    ),
    _plan_case(
        "source-absolute",
        _plan_json(source="/etc/passwd"),
        ":5, field 'source': not a review plan: '/etc/passwd': the coded table must be a path "
        "inside the study folder (as `review plan` writes it, e.g. "
        "attribution/DATASET/per_passage.csv)",
    ),
    _plan_case(
        "source-climbs-out",
        _plan_json(source="attribution/../../../etc/passwd"),
        ":5, field 'source': not a review plan: 'attribution/../../../etc/passwd': the coded "
        "table must be a path inside the study folder (as `review plan` writes it, e.g. "
        "attribution/DATASET/per_passage.csv)",
    ),
    _plan_case(
        "targeted-with-probability",
        _plan_json(
            units=[
                *_plan_units(0.5),
                {"unit_id": "u7", "sample": "targeted", "inclusion_probability": 0.5},
            ]
        ),
        ":43, field 'units[4]': not a review plan: unit 'u7': a targeted unit has no inclusion "
        "probability (it never enters the estimates)",
    ),
    _plan_case(
        "torn",
        json.dumps(_plan_json(), indent=2)[:200],
        ":7: malformed JSON (Unterminated string starting at column 3)",  # cut at 200 chars
    ),
    _plan_case(
        "unknown-field",
        _plan_json(weights=[1, 2]),
        ":54, field 'weights': not a review plan: unknown field",
    ),
    # `review plan` overwrote a plan that had reviews; --name '' was the default name
    Case(
        "review-plan/overwrite-reviewed-plan",
        ("review", "plan", "{d}/study", "-p", "retrieval", "-n", "6"),
        _coded_study(plan=True, reviewed=True),
        line="failcodes: error: {d}/study/review/plans/ds.retrieval.json: plan 'ds.retrieval' "
        "exists and 1 of its 4 units are reviewed ({d}/study/review); a new draw would leave "
        "those reviews outside the plan: give another --name, or --force to replace it",
    ),
    Case(
        "review-plan/empty-name",
        ("review", "plan", "{d}/study", "-p", "retrieval", "-n", "6", "--name", ""),
        _coded_study(),
        line="failcodes: error: --name '': an empty plan name; name the plan or leave --name out",
    ),
    Case(
        "review-plan/blank-name",
        ("review", "plan", "{d}/study", "-p", "retrieval", "-n", "6", "--name", "  "),
        _coded_study(),
        line="failcodes: error: --name '': an empty plan name; name the plan or leave --name out",
    ),
    # a review naming a dimension 'Scope': its codes read as no code on scope (t30human)
    *(
        Case(
            f"review-dimension-named-otherwise/{what}",
            argv,
            _scope_review,
            line="failcodes: error: {d}/study/review/alice.jsonl:1, field 'codes.Scope': 'Scope' "
            "is not a dimension of the retrieval part of medical-fact-check v1 (its dimensions: "
            "entity_match, scope, trustworthy, evidence_polarity, chunking): its code would be "
            "read as no code on any of them (is it 'scope'?)",
        )
        for what, argv in (
            ("report", REPORT),
            (
                "status",
                (
                    *("review", "status", "{d}/study/review/plans/ds.retrieval.json"),
                    *("--reviews", "{d}/study/review/alice.jsonl"),
                ),
            ),
        )
    ),
    # one reviewer under two spellings ('alice', 'Alice '): two reviewers, the first by name
    # counted and the other's reviews left out, exit 0 (t31human)
    *(
        Case(
            f"review-one-coder-two-spellings/{what}",
            argv,
            _two_spellings_review,
            line="failcodes: error: {d}/study/review/alice_fix.jsonl:1, field 'coder': coder "
            "'Alice ' and 'alice' ({d}/study/review/alice.jsonl:1) differ only in case, spaces "
            "or Unicode form: one reviewer under two spellings? write one (as two they are two "
            "reviewers: the first by name counts, the other's reviews left out)",
        )
        for what, argv in (
            ("report", REPORT),
            (
                "status",
                (
                    *("review", "status", "{d}/study/review/plans/ds.retrieval.json"),
                    *("--reviews", "{d}/study/review/alice.jsonl"),
                    *("--reviews", "{d}/study/review/alice_fix.jsonl"),
                ),
            ),
        )
    ),
]


def _without_sys_a_q1() -> str:
    """GOOD_TRACES without sysA's claims of question q1 (sysB's stay)."""
    return _jsonl(
        [r for r in _trace_lines() if not (r["system"] == "sysA" and r["question_id"] == "q1")]
    )


PER_SYSTEM = "system,question_id,sentence_id,has_error\nsysA,q0,q0-s1,true\nsysB,q0,q0-s1,false\n"
LABEL_SYSTEM_CASES: list[Case] = [
    # issue 25: labels per system (a system column) and their bad shapes
    Case(
        "metrics/labels-system-no-trace-has",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": PER_SYSTEM + "sysC,q1,q1-s1,false\n"}),
        ("l.csv:4", "field 'system'", "no trace has system 'sysC'", "'sysA', 'sysB'"),
    ),
    Case(
        "metrics/labels-system-mixed",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": PER_SYSTEM + ",q1,q1-s1,false\n"}),
        ("l.csv:4", "field 'system'", "names no system, but the first names 'sysA'"),
    ),
    Case(
        "disagreements/labels-system-mixed-jsonl",
        (
            *("disagreements", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl"),
            *("-o", "{d}/out.jsonl"),
        ),
        _write(
            {
                "t.jsonl": GOOD_TRACES,
                "l.jsonl": '{"sentence_id": "q0-s1", "has_error": true}\n'
                '{"system": "sysA", "sentence_id": "q1-s1", "has_error": true}\n',
            }
        ),
        ("l.jsonl:2", "field 'system'", "names system 'sysA', but the first names none"),
    ),
    Case(
        # sysB has q1-s1, sysA does not: sysA's label of it fits no trace of sysA
        "metrics/labels-system-sentence-of-another-system",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.jsonl": _without_sys_a_q1(),
                "l.csv": "system,sentence_id,has_error\nsysB,q1-s1,true\nsysA,q1-s1,true\n",
            }
        ),
        ("l.csv:3", "field 'sentence_id'", "system 'sysA': no trace has sentence_id 'q1-s1'"),
    ),
    Case(
        "metrics/labels-system-duplicate",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": PER_SYSTEM + "sysA,q0,q0-s1,false\n"}),
        ("l.csv:4", "duplicate label for sentence 'q0-s1' of system 'sysA'", "line 2"),
    ),
    Case(
        "compare/per-system-labels",
        ("compare", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": PER_SYSTEM}),
        ("l.csv", "per-system labels", "paired tests do not apply"),
    ),
    Case(
        # each question answered by one system, labels shared: no paired unit
        "compare/disjoint-questions",
        ("compare", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.jsonl": _jsonl(
                    [
                        r
                        for r in _trace_lines()
                        if (r["system"], r["question_id"]) in {("sysA", "q0"), ("sysB", "q1")}
                    ]
                ),
                "l.csv": "sentence_id,has_error\nq0-s1,true\nq1-s1,false\n",
            }
        ),
        ("l.csv", "answered by one system only", "paired tests do not apply"),
    ),
    Case(
        "metrics/question-scope-unknown",
        (
            *("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
            *("--question-scope", "mine"),
        ),
        _write({"t.jsonl": GOOD_TRACES, "labels.csv": LABELS}),
        ("--question-scope", "mine"),
    ),
    Case(
        "ingest/generic-labels-files-mixed-scope",
        (
            *("ingest", "generic-labels", "{d}/a.csv", "{d}/b.csv"),
            *("-o", "{d}/out.jsonl"),
        ),
        _write(
            {
                "a.csv": "sentence_id,has_error\nq0-s1,true\n",
                "b.csv": "system,sentence_id,has_error\nsysA,q1-s1,true\n",
            }
        ),
        ("b.csv", "field 'system'", "the labels of this file name a system"),
    ),
    Case(
        "ingest/generic-label-scope-without-rule",
        (
            *("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/out.jsonl"),
            *("--option", "label_scope=system"),
        ),
        _write({"t.jsonl": GOOD_TRACES}),
        ("label_scope=system", "--label-rule"),
    ),
]


#: A trace whose claim holds a NUL (JSON carries it as \u0000; a CSV cell cannot).
NUL_TRACES = _mutated(claim="a\u0000b")

# issue 29: output hygiene. The CSV writer wrote a NUL its own reader refuses.
HYGIENE_CASES: list[Case] = [
    Case(
        "ingest-generic/nul-into-csv-traces",
        ("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/o.csv"),
        _write({"t.jsonl": NUL_TRACES}),
        line="failcodes: error: {d}/o.csv:3, field 'claim': a NUL character, which a CSV cell "
        "cannot carry (failcodes reads a NUL in a CSV as binary data); write .jsonl or "
        ".parquet, or remove it from the input",
    ),
    Case(
        "ingest-generic-labels/nul-into-csv-labels",
        ("ingest", "generic-labels", "{d}/l.jsonl", "-o", "{d}/o.csv"),
        _write(
            {"l.jsonl": '{"sentence_id": "s1", "has_error": true, "annotator": "dr\\u0000a"}\n'}
        ),
        expect=("o.csv:2, field 'annotator': a NUL character",),
    ),
    Case(
        "metrics/nul-system-into-csv",
        (
            *("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
            *("--level", "claim", "--format", "csv", "-o", "{d}/m.csv"),
        ),
        _write({"t.jsonl": _mutated(system="s\u0000x"), "labels.csv": LABELS}),
        expect=("m.csv:", "field 'system': a NUL character"),
    ),
]


#: Lock files held by a setup while its case runs (a study "mid-run"); closed after it.
_HELD: list[IO[str]] = []


def _study_mid_run(d: Path) -> None:
    """An empty study whose write lock is held, as `failcodes run` holds it while it runs."""
    import fcntl

    from failcodes.runlock import LOCK_NAME
    from failcodes.study import init_study

    root = init_study(d / "study").root
    fh = (root / LOCK_NAME).open("a+", encoding="utf-8")
    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    fh.write(json.dumps({"pid": os.getpid(), "started": "2026-12-01T10:00:00+00:00"}) + "\n")
    fh.flush()
    _HELD.append(fh)


def _dangling_step_folder(d: Path) -> None:
    (d / "st").mkdir()
    (d / "st" / "judge").symlink_to(d / "nowhere")


HYGIENE_CASES += [
    # `report` during `run` built silently from a half-judged study
    Case(
        "report/study-mid-run",
        ("report", "{d}/study"),
        _study_mid_run,
        line="failcodes: error: {d}/study: the study is mid-run (process "
        f"{os.getpid()} (started 2026-12-01T10:00:00+00:00) is running its steps): a report "
        "now would be built from a half-judged study; wait for the run to finish, then report",
    ),
    # a failed init left the folders it had made (data, metrics, disagreements), empty
    Case(
        "init/dangling-link-where-a-step-folder-goes",
        ("init", "{d}/st"),
        _dangling_step_folder,
        line="failcodes: error: {d}/st/judge: a link to nothing where the study keeps a "
        "folder; remove it or make its target",
    ),
]


RTV_EXAMPLE = Path(scifact_bundled_dir()).parent / "rtv-example"
RTV = ("rtv", str(RTV_EXAMPLE / "items.jsonl"), "--docs", str(RTV_EXAMPLE / "docs"), "-o", "{d}/o")

# issue 29: bounds on list-valued and numeric options (each value is a pass of the work)
BOUND_CASES: list[Case] = [
    Case(
        "rtv/sensitivity-k-20000-values",
        (*RTV, "--sensitivity-k", ",".join(str(k) for k in range(1, 20_001))),
        line="failcodes: error: --sensitivity-k: 20000 values; at most 10 (e.g. 1,3,5)",
    ),
    Case(
        "rtv/sensitivity-k-past-100",
        (*RTV, "--sensitivity-k", "1,3,5000"),
        line="failcodes: error: --sensitivity-k: 5000 is out of range; each value is 1 to 100",
    ),
    Case(
        "rtv/sensitivity-k-empty",
        (*RTV, "--sensitivity-k", ","),
        line="failcodes: error: --sensitivity-k ',': give comma-separated whole numbers, e.g. "
        "1,3,5",
    ),
    Case(
        # a traceback out of bm25s (no word in a 1-character chunk)
        "rtv/chunk-size-1",
        (*RTV, "--chunk-size", "1", "--overlap", "0"),
        line="failcodes: error: failcodes rtv: Invalid value for '--chunk-size': Input should "
        "be greater than or equal to 20 (see --help)",
    ),
    Case(
        "rtv/overlap-past-half-a-chunk",
        (*RTV, "--chunk-size", "40", "--overlap", "30"),
        line="failcodes: error: --overlap 30: at most half of --chunk-size 40 (20)",
    ),
    Case(
        "rtv/k-past-100",
        (*RTV, "--k", "1000000"),
        line="failcodes: error: failcodes rtv: Invalid value for '--k': Input should be less "
        "than or equal to 100 (see --help)",
    ),
    Case(
        # the official metrics were printed before --k was read
        "benchmark-scifact/k-zero",
        ("benchmark", "scifact", "--k", "0"),
        line="failcodes: error: --k: 0 is out of range; each value is 1 to 1000",
    ),
    Case(
        "benchmark-scifact/k-30-values",
        ("benchmark", "scifact", "--k", ",".join(str(k) for k in range(1, 31))),
        line="failcodes: error: --k: 30 values; at most 20 (e.g. 1,3,5)",
    ),
    Case(
        "benchmark-healthver/k-not-a-number",
        ("benchmark", "healthver", "{d}/h.csv", "--k", "1,three"),
        _write({"h.csv": HEALTHVER}),
        line="failcodes: error: --k: 'three' is not a whole number (comma-separated, e.g. 1,3,5)",
    ),
    # a failing endpoint retried a billion times, a call or a batch poll waited on for ever,
    # a panel of as many runs as --judge was repeated
    Case(
        "judge/max-attempts-a-billion",
        (*JUDGE, "--max-attempts", "1000000000", "-o", "{d}/run"),
        _write({"t.jsonl": GOOD_TRACES}),
        line="failcodes: error: failcodes judge retrieval: Invalid value for '--max-attempts': "
        "Input should be less than or equal to 100 (see --help)",
    ),
    Case(
        "judge/timeout-infinite",
        (*JUDGE, "--timeout", "inf", "-o", "{d}/run"),
        _write({"t.jsonl": GOOD_TRACES}),
        line="failcodes: error: failcodes judge retrieval: Invalid value for '--timeout': Input "
        "should be less than or equal to 3600 (see --help)",
    ),
    Case(
        "judge/panel-of-20",
        (*JUDGE, *(["--judge", "offline"] * 20), "-o", "{d}/run"),
        _write({"t.jsonl": GOOD_TRACES}),
        line="failcodes: error: --judge: Value should have at most 16 items after validation, "
        "not 20",
    ),
    Case(
        "compare/exact-below-negative",
        ("compare", "{d}/o.csv", "--truth", "truth", "--exact-below", "-5"),
        _write({"o.csv": "unit,s1,s2,truth\n1,1,0,1\n2,0,0,0\n3,1,1,1\n"}),
        line="failcodes: error: failcodes compare: Invalid value for '--exact-below': Input should "
        "be greater than or equal to 0 (see --help)",
    ),
]


def _tampered_journal(sql: str) -> Setup:
    """Traces t.jsonl judged (offline) into run/, then ``sql`` run on its journal."""

    def setup(d: Path) -> None:
        (d / "t.jsonl").write_text(GOOD_TRACES, encoding="utf-8")
        argv = [*JUDGE, "--judge", "offline", "-o", "{d}/run"]
        assert main_quiet([a.replace("{d}", str(d)) for a in argv])
        conn = sqlite3.connect(d / "run" / "journal.sqlite")
        conn.executescript(sql)
        conn.commit()
        conn.close()
        for name in ("journal.sqlite-wal", "journal.sqlite-shm"):
            (d / "run" / name).unlink(missing_ok=True)

    return setup


EXPORT_JUDGED = (
    *("labelstudio", "export", "{d}/t.jsonl", "-p", "retrieval", "-c", str(CODEBOOK)),
    *("--judged", "{d}/run", "-o", "{d}/tasks.json"),
)
TAMPERED = "the journal was changed outside failcodes; judge again into a fresh -o folder"

# issue 29: a tampered row inside journal.sqlite was a pydantic traceback
JOURNAL_CASES: list[Case] = [
    Case(
        "attribute/journal-row-wrong-type",
        ATTRIBUTE_RUN,
        _tampered_journal(
            "UPDATE annotations SET annotation = json_set(annotation, '$.unit_kind', 'x') "
            "WHERE seq = 1"
        ),
        expect=(
            "run/journal.sqlite, field 'unit_kind': row 1 (unit '",
            "Input should be 'retrieval' or 'verification' (got 'x'); " + TAMPERED,
        ),
    ),
    Case(
        "attribute/journal-row-torn",
        ATTRIBUTE_RUN,
        _tampered_journal(
            "UPDATE annotations SET annotation = substr(annotation, 1, 40) WHERE seq = 1"
        ),
        expect=("run/journal.sqlite: row 1 (unit '", "malformed JSON", TAMPERED),
    ),
    Case(
        "labelstudio-export/journal-row-not-text",
        EXPORT_JUDGED,
        _tampered_journal("UPDATE annotations SET annotation = x'00ff' WHERE seq = 1"),
        expect=(
            "run/journal.sqlite: row 1 (unit '",
            "the annotation is bytes, not JSON text; " + TAMPERED,
        ),
    ),
    Case(
        "attribute/journal-row-not-an-object",
        ATTRIBUTE_RUN,
        _tampered_journal("UPDATE annotations SET annotation = 7 WHERE seq = 1"),
        expect=("run/journal.sqlite: row 1 (unit '", "expected a JSON object, got int; "),
    ),
    Case(
        "labelstudio-export/journal-row-missing-field",
        EXPORT_JUDGED,
        _tampered_journal(
            "UPDATE annotations SET annotation = json_remove(annotation, '$.coder') WHERE seq = 1"
        ),
        expect=("run/journal.sqlite, field 'coder': row 1 (unit '", "missing required field"),
    ),
    # redteam5: pydantic's JSON decoder keeps the last of two equal keys: a row edited to give
    # 'codes' twice was attributed by its second codes, exit 0
    Case(
        "attribute/journal-row-key-twice",
        ATTRIBUTE_RUN,
        _tampered_journal(
            "UPDATE annotations SET annotation = replace(annotation, '\"codes\":', "
            '\'"codes":{},"codes":\') WHERE seq = 1'
        ),
        expect=("run/journal.sqlite", "row 1 (unit '", "codes", TAMPERED),
    ),
]


def _disagreements_then(edit: Callable[[dict[str, object]], object] | None) -> Setup:
    """dis.jsonl: four disagreements the tool wrote (judged into run/), then the first again
    after ``edit`` (None: no fifth line)."""

    def setup(d: Path) -> None:
        from tests.judge_helpers import fn_disagreements, write_disagreements

        items = fn_disagreements(make_traces(2))
        path = write_disagreements(d / "dis.jsonl", items)
        argv = ["judge", "retrieval", "--from", str(path), "--judge", "offline"]
        assert main_quiet([*argv, "-o", str(d / "run")])
        if edit is not None:
            first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
            edit(first)
            with path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(first) + "\n")

    return setup


ATTRIBUTE_DIS = (
    *("attribute", "--from", "{d}/dis.jsonl", "--retrieval", "{d}/run"),
    *("-o", "{d}/att/deep"),
)
# issue 31: attribute reads a disagreements file once, attributing as it reads: an error in a
# late line (or one only the whole file shows) comes after tables were begun, and leaves
# nothing written, not even the -o folder (the workspace check of test_bad_input)
STREAMED_CASES: list[Case] = [
    Case(
        "attribute/disagreements-bad-last-line",
        ATTRIBUTE_DIS,
        _disagreements_then(lambda rec: rec.update(kind="XX")),
        expect=("dis.jsonl:5, field 'kind'", "'FN' or 'FP'"),
    ),
    Case(
        "attribute/disagreements-evidence-system-not-there",
        (*ATTRIBUTE_DIS, "--evidence", "nosuch=none"),
        _disagreements_then(None),
        expect=("nosuch",),
    ),
]


def _rank_twice(rec: dict[str, object]) -> None:
    """The first claim's second passage given the first one's rank."""
    claim = rec["claims"][0]  # type: ignore[index]
    claim["passages"][1]["rank"] = claim["passages"][0]["rank"]


# a claim of a disagreements file whose passages share a rank: the fast reader handed the line
# to the exact reader, whose claim record had no rank check, and `judge --from` (dry run too)
# printed pydantic's traceback and exit 1 (i31ls's report); a trace refuses it the same way
RANK_TWICE = ("dis.jsonl:5, field 'claims.0.passages'", "rank 1 appears twice")
RANK_CASES: list[Case] = [
    Case(
        f"judge/disagreements-rank-twice{suffix}",
        (
            "judge",
            "retrieval",
            "--from",
            "{d}/dis.jsonl",
            "--judge",
            "offline",
            "-o",
            "{d}/r2",
            *more,
        ),
        _disagreements_then(_rank_twice),
        expect=RANK_TWICE,
    )
    for suffix, more in (("", ()), ("-dry-run", ("--dry-run",)))
] + [
    Case(
        "attribute/disagreements-rank-twice",
        ATTRIBUTE_DIS,
        _disagreements_then(_rank_twice),
        expect=RANK_TWICE,
    )
]

KINDS_LINE = 'kinds = ["retrieval", "reasoning"]'


def _judge_setting(name: str, setting: str, line: str) -> Case:
    """``failcodes run`` on the example study with ``setting`` added to [judge] (line 40)."""
    return Case(
        f"run/judge-setting-{name}",
        ("run", "{d}/study"),
        _study({"failcodes.toml": _study_file(KINDS_LINE, f"{KINDS_LINE}\n{setting}")}),
        line="failcodes: error: {d}/study/failcodes.toml:42, " + line,
    )


# issue 29 (with the typed study settings of issue 27): bad [judge] values surfaced after
# ingest, metrics and disagreements had run, naming the command; options that change what a
# step means (dry run, output paths) made `run` say "6 step(s) run" having judged nothing
STUDY_SETTING_CASES: list[Case] = [
    _judge_setting(
        "temperature-hot",
        'temperature = "hot"',
        "field 'judge.temperature': Input should be a valid number, unable to parse string as "
        "a number",
    ),
    _judge_setting(
        "concurrency-zero",
        "concurrency = 0",
        "field 'judge.concurrency': Input should be greater than or equal to 1",
    ),
    _judge_setting(
        "budget-negative",
        "budget = -3",
        "field 'judge.budget': Input should be greater than or equal to 0",
    ),
    _judge_setting(
        "timeout-infinite",
        "timeout = inf",
        "field 'judge.timeout': Input should be a finite number",
    ),
    _judge_setting("dry-run", "dry_run = true", "field 'judge.dry_run': unknown field"),
    _judge_setting("output-path", 'out = "elsewhere"', "field 'judge.out': unknown field"),
    _judge_setting(
        "args-dry-run",
        'args = ["--dry-run"]',
        "field 'judge.args': `args` is no longer read; write its options as fields of [judge]: "
        "nothing ('--dry-run': the study sets it itself (paths, dry run)) (docs/study.md, "
        "'Settings as fields')",
    ),
    # a data set named like the judge's cache loaded; every judge step then died
    Case(
        "run/dataset-named-like-the-judge-cache",
        ("run", "{d}/study"),
        _study(
            {"failcodes.toml": _study_file('name = "ragchecker-example"', 'name = "cache.sqlite"')}
        ),
        line="failcodes: error: {d}/study/failcodes.toml:12, field 'datasets[0].name': "
        "'cache.sqlite' is the name of the judge's response cache (judge/cache.sqlite), where "
        "the data set's judge runs would go; name the data set otherwise",
    ),
    # a 300-character name passed, ingested and wrote metrics, then the next step died at
    # "file name too long": refused at load, before any step runs
    Case(
        "run/dataset-name-too-long",
        ("run", "{d}/study"),
        _study(
            {
                "failcodes.toml": _study_file(
                    'name = "ragchecker-example"', 'name = "' + "b" * 300 + '"'
                )
            }
        ),
        line="failcodes: error: {d}/study/failcodes.toml:12, field 'datasets[0].name': "
        "String should have at most 64 characters",
    ),
]


def _panel_report(**changes: object) -> str:
    """A panel.json of two members that agree on the first code of the first dimension."""
    from failcodes.codebook import load

    cb = load(CODEBOOK)
    dim = cb.part("retrieval").dimensions[0]
    code = dim.code_ids()[0]
    vote = {"votes": {code: 2}, "members": 2, "consensus": [code], "unanimous": True}
    report: dict[str, object] = {
        "kind": "retrieval",
        "codebook": cb.name,
        "members": ["a", "b"],
        "run_dirs": {"a": "panel/1-a", "b": "panel/2-b"},
        "cost_usd": 0.0,
        "units": [{"unit_id": "u1", "dimensions": {dim.id: vote}}],
        "split_units": [],
        "agreement": [],
        "quotes": [],
    }
    report.update(changes)
    return json.dumps(report, indent=2)


def _bad_consensus() -> list[dict[str, object]]:
    from failcodes.codebook import load

    dim = load(CODEBOOK).part("retrieval").dimensions[0]
    vote = {"votes": {"made_up": 2}, "members": 2, "consensus": ["made_up"], "unanimous": True}
    return [{"unit_id": "u1", "dimensions": {dim.id: vote}}]


def _first_dimension() -> str:
    from failcodes.codebook import load

    return load(CODEBOOK).part("retrieval").dimensions[0].id


PANEL_DIMENSION = _first_dimension()

# issue 29: study-folder files through the CLI (they were unit-level tests): a truncated
# panel.json was a pydantic traceback in `agree` and `attribute`, a consensus code outside the
# codebook was used by `attribute`
PANEL_CASES: list[Case] = [
    Case(
        "agree/panel-truncated",
        ("agree", "{d}/run"),
        _write({"run/panel.json": _panel_report()[:70]}),
        expect=("run/panel.json:", "malformed JSON"),
    ),
    Case(
        "attribute/panel-truncated",
        ATTRIBUTE_RUN,
        _write({"t.jsonl": GOOD_TRACES, "run/panel.json": _panel_report()[:70]}),
        expect=("run/panel.json:", "malformed JSON"),
    ),
    Case(
        "attribute/panel-consensus-code-outside-the-codebook",
        ATTRIBUTE_RUN,
        _write({"t.jsonl": GOOD_TRACES, "run/panel.json": _panel_report(units=_bad_consensus())}),
        expect=(
            f"run/panel.json:22, field 'units[0].dimensions.{PANEL_DIMENSION}.consensus'",
            "consensus code 'made_up' is not a code of dimension",
        ),
    ),
    Case(
        # a member without its run folder was a KeyError traceback
        "agree/panel-member-without-a-run-folder",
        ("agree", "{d}/run"),
        _write({"run/panel.json": _panel_report(run_dirs={"a": "panel/1-a"})}),
        line="failcodes: error: {d}/run/panel.json: not a panel report: run_dirs names ['a'], "
        "members are ['a', 'b']: one run folder per member",
    ),
    Case(
        # a member's run folder outside the panel's was read as its run
        "agree/panel-run-folder-outside",
        ("agree", "{d}/run"),
        _write({"run/panel.json": _panel_report(run_dirs={"a": "panel/1-a", "b": "../../b"})}),
        line="failcodes: error: {d}/run/panel.json: not a panel report: member 'b': run folder "
        "'../../b' must be a path inside the panel's run folder (as the panel writes it, "
        "panel/1-NAME)",
    ),
    Case(
        "attribute/panel-run-folder-absolute",
        ATTRIBUTE_RUN,
        _write(
            {
                "t.jsonl": GOOD_TRACES,
                "run/panel.json": _panel_report(run_dirs={"a": "/etc", "b": "panel/2-b"}),
            }
        ),
        line="failcodes: error: {d}/run/panel.json: not a panel report: member 'a': run folder "
        "'/etc' must be a path inside the panel's run folder (as the panel writes it, "
        "panel/1-NAME)",
    ),
]


def _tampered_plan(**changes: object) -> Setup:
    """A coded study with a reviewed plan, the plan's fields then changed."""

    def setup(d: Path) -> None:
        _coded_study(plan=True, reviewed=True)(d)
        path = d / "study" / "review" / "plans" / "ds.retrieval.json"
        plan = json.loads(path.read_text(encoding="utf-8"))
        for key, value in changes.items():
            if key == "probability0":
                plan["units"][0]["inclusion_probability"] = value
            else:
                plan[key] = value
        path.write_text(json.dumps(plan, indent=2), encoding="utf-8")

    return setup


def _linked_table(d: Path) -> None:
    """A reviewed plan whose coded table is then a link to a file outside the study."""
    _coded_study(plan=True, reviewed=True)(d)
    table = d / "study" / "attribution" / "ds" / "per_passage.csv"
    (d / "outside.csv").write_bytes(table.read_bytes())
    table.unlink()
    table.symlink_to(d / "outside.csv")


REPORT_PLAN = ("report", "{d}/study", "--codebook", str(CODEBOOK), "-o", "{d}/rep")


def _judged_study(recode_log: str) -> Setup:
    """A study whose retrieval run (offline, on GOOD_TRACES) has a v0001 re-code run beside it
    holding ``recode_log`` as its recode.jsonl."""

    def setup(d: Path) -> None:
        from failcodes.study import init_study

        layout = init_study(d / "study")
        run = layout.judge_run("ragchecker-example", "retrieval")
        (d / "t.jsonl").write_text(GOOD_TRACES, encoding="utf-8")
        (d / "l.csv").write_text(LABELS, encoding="utf-8")
        dis = layout.disagreements("ragchecker-example")
        argv = ["disagreements", "--traces", str(d / "t.jsonl"), "--labels", str(d / "l.csv")]
        assert main_quiet([*argv, "--level", "claim", "-m", "non_supported", "-o", str(dis)])
        assert main_quiet([*(a.replace("{d}", str(d)) for a in JUDGE), "-o", str(run)])
        (d / "l.csv").unlink()
        again = run.with_name("retrieval.v0001")
        shutil.copytree(run, again)
        (again / "recode.jsonl").write_text(recode_log, encoding="utf-8")
        (d / "t.jsonl").unlink()

    return setup


RECODE_ENTRY = {
    "unit_id": "u1",
    "from_version": 1,
    "to_version": 1,
    "method": "migrated",
    "coder": None,
    "reason": "r",
    "annotation": ANNOTATION,
}

# issue 29: the study-folder files through the commands that read them (a torn recode.jsonl
# was five different tracebacks; a tampered plan was read by `report`)
STUDY_FOLDER_CASES: list[Case] = [
    Case(
        "recode-status/recode-log-torn-last-line",
        ("recode", "{d}/study", "--status"),
        _judged_study(json.dumps(RECODE_ENTRY) + "\n" + json.dumps(RECODE_ENTRY)[:30]),
        expect=("retrieval.v0001/recode.jsonl:2: malformed JSON",),
    ),
    Case(
        "recode/recode-log-torn-last-line",
        ("recode", "{d}/study"),
        _judged_study(json.dumps(RECODE_ENTRY) + "\n" + json.dumps(RECODE_ENTRY)[:30]),
        expect=("retrieval.v0001/recode.jsonl:2: malformed JSON",),
    ),
    Case(
        "recode-status/recode-log-wrong-type",
        ("recode", "{d}/study", "--status"),
        _judged_study(json.dumps({**RECODE_ENTRY, "unit_id": 7}) + "\n"),
        expect=(
            "retrieval.v0001/recode.jsonl:1, field 'unit_id': expected text, got the number 7",
        ),
    ),
    Case(
        "report/plan-probability-zero",
        REPORT_PLAN,
        _tampered_plan(probability0=0),
        expect=(
            "study/review/plans/ds.retrieval.json:",
            "field 'units[0].inclusion_probability': not a review plan: Input should be greater "
            "than 0 (got 0)",
        ),
    ),
    Case(
        "report/plan-source-outside-the-study",
        REPORT_PLAN,
        _tampered_plan(source="/etc/passwd"),
        expect=(
            "ds.retrieval.json:5, field 'source': not a review plan: '/etc/passwd': the coded "
            "table must be a path inside the study folder",
        ),
    ),
    Case(
        "report/plan-coded-table-linked-outside",
        REPORT_PLAN,
        _linked_table,
        expect=("lies outside the study folder",),
    ),
]


def _then(setup: Setup, change: Callable[[Path], object]) -> Setup:
    """``setup``, then ``change`` on the workspace."""

    def both(d: Path) -> None:
        setup(d)
        change(d)

    return both


def _fifo_at(rel: str) -> Callable[[Path], None]:
    """``rel`` replaced by a FIFO (nothing ever writes to it: a reader that opens it waits)."""

    def change(d: Path) -> None:
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).unlink(missing_ok=True)
        os.mkfifo(d / rel)

    return change


def _link_at(rel: str, target: str) -> Callable[[Path], None]:
    """``rel`` replaced by a symbolic link to ``target`` ("{fifo}": a FIFO beside it)."""

    def change(d: Path) -> None:
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).unlink(missing_ok=True)
        if target == "{fifo}":
            os.mkfifo(d / "pipe")
            (d / rel).symlink_to(d / "pipe")
        else:
            (d / rel).symlink_to(target)

    return change


def _initialised(d: Path) -> None:
    from failcodes.study import init_study

    init_study(d / "study")


def _summary_changed(**changes: object) -> Setup:
    """A study whose retrieval run (offline, on GOOD_TRACES) has its summary.json changed."""

    def setup(d: Path) -> None:
        _judged_study("")(d)
        shutil.rmtree(d / "study/judge/ragchecker-example/retrieval.v0001")
        path = d / "study/judge/ragchecker-example/retrieval/summary.json"
        summary = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**summary, **changes}, indent=2), encoding="utf-8")

    return setup


ENDLESS_VIEW = (
    "ALTER TABLE annotations RENAME TO kept; CREATE VIEW annotations AS WITH RECURSIVE "
    "r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT seq, unit_id, annotation FROM kept, r"
)
NOT_REGULAR = "not a regular file (a FIFO, socket or device); give a file"
METRICS = ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv")

# issue 29, second helper (i29b): one regular-file check for every reader (a FIFO, a link to
# one, a device), files given twice, nesting in YAML, tampered run state and summaries
ISSUE29B_CASES: list[Case] = [
    Case(
        # 200 KB of '[' was a RecursionError traceback that took over a minute to print
        "codebook-validate/yaml-nested-100k-deep",
        ("codebook", "validate", "{d}/cb.yaml"),
        _write({"cb.yaml": "a: " + "[" * 100_000 + "]" * 100_000 + "\n"}),
        expect=("cb.yaml:1", "nested deeper than 64 levels"),
    ),
    Case(
        "codebook-validate/yaml-block-nested-70-deep",
        ("codebook", "validate", "{d}/cb.yaml"),
        _write({"cb.yaml": "a:\n" + "".join("  " * i + "k:\n" for i in range(1, 70))}),
        expect=("cb.yaml:64", "nested deeper than 64 levels"),
    ),
    Case(
        # each copy was read before the repeat showed as a duplicate claim (3,000 copies: minutes)
        "metrics/traces-given-twice",
        (*METRICS, "--traces", "{d}/./t.jsonl"),
        _mk_dir(),
        line="failcodes: error: --traces: {d}/t.jsonl is given twice; name each file once",
    ),
    Case(
        "ingest-generic/path-given-twice",
        ("ingest", "generic", "{d}/t.jsonl", "{d}/t.jsonl", "--system", "s", "-o", "{d}/o.jsonl"),
        _mk_dir(),
        line="failcodes: error: PATHS: {d}/t.jsonl is given twice; name each file once",
    ),
    Case(
        # a traceback from the plan (the ingest request refused it, the study file did not)
        "run/ingest-path-given-twice",
        ("run", "{d}/study", "--plan"),
        _then(
            _initialised,
            lambda d: (d / "study/failcodes.toml").write_text(
                _study_file(
                    'paths = ["bundled:ragchecker/checking_outputs.json"]',
                    'paths = ["bundled:ragchecker/checking_outputs.json", '
                    '"bundled:ragchecker/checking_outputs.json"]',
                ),
                encoding="utf-8",
            ),
        ),
        expect=(
            "study/failcodes.toml:17, field 'datasets[0].ingest[0].paths'",
            "'bundled:ragchecker/checking_outputs.json' is given twice",
        ),
    ),
    Case(
        # `run --plan` hung on a FIFO named like the run's state
        "run-plan/run-state-is-a-fifo",
        ("run", "{d}/study", "--plan"),
        _then(_initialised, _fifo_at("study/.failcodes/run.json")),
        line="failcodes: error: {d}/study/.failcodes/run.json: " + NOT_REGULAR,
    ),
    Case(
        "run/run-state-links-to-dev-zero",
        ("run", "{d}/study"),
        _then(_initialised, _link_at("study/.failcodes/run.json", "/dev/zero")),
        line="failcodes: error: {d}/study/.failcodes/run.json: " + NOT_REGULAR,
    ),
    Case(
        # `report` hung on a FIFO named like a coded table (read by pandas, unchecked)
        "report/coded-table-is-a-fifo",
        REPORT_PLAN,
        _then(
            _coded_study(plan=True, reviewed=True), _fifo_at("study/attribution/ds/per_passage.csv")
        ),
        line="failcodes: error: {d}/study/attribution/ds/per_passage.csv: " + NOT_REGULAR,
    ),
    Case(
        "report/summary-count-negative",
        ("report", "{d}/study", "-o", "{d}/rep"),
        _summary_changed(units=-5),
        expect=(
            "retrieval/summary.json:5, field 'units'",
            "Input should be greater than or equal to 0",
        ),
    ),
    Case(
        "report/summary-cost-negative",
        ("report", "{d}/study", "-o", "{d}/rep"),
        _summary_changed(cost_usd=-0.5),
        expect=("retrieval/summary.json:", "field 'cost_usd'", "greater than or equal to 0"),
    ),
    Case(
        "report/summary-is-a-fifo",
        ("report", "{d}/study", "-o", "{d}/rep"),
        _then(
            _summary_changed(), _fifo_at("study/judge/ragchecker-example/retrieval/summary.json")
        ),
        line="failcodes: error: {d}/study/judge/ragchecker-example/retrieval/summary.json: "
        + NOT_REGULAR,
    ),
    Case(
        "recode-status/recode-log-is-a-fifo",
        ("recode", "{d}/study", "--status"),
        _then(
            _judged_study(""),
            _fifo_at("study/judge/ragchecker-example/retrieval.v0001/recode.jsonl"),
        ),
        expect=("retrieval.v0001/recode.jsonl: " + NOT_REGULAR,),
    ),
    Case(
        "recode/recode-log-links-to-a-fifo",
        ("recode", "{d}/study"),
        _then(
            _judged_study(""),
            _link_at("study/judge/ragchecker-example/retrieval.v0001/recode.jsonl", "{fifo}"),
        ),
        expect=("retrieval.v0001/recode.jsonl: " + NOT_REGULAR,),
    ),
    Case(
        "metrics/labels-csv-links-to-a-fifo",
        METRICS,
        _then(_mk_dir(), _link_at("labels.csv", "{fifo}")),
        line="failcodes: error: {d}/labels.csv: " + NOT_REGULAR,
    ),
    Case(
        "metrics/labels-jsonl-links-to-dev-zero",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl"),
        _then(_mk_dir(), _link_at("l.jsonl", "/dev/zero")),
        line="failcodes: error: {d}/l.jsonl: " + NOT_REGULAR,
    ),
    Case(
        "metrics/traces-parquet-links-to-a-fifo",
        ("metrics", "--traces", "{d}/t.parquet", "--labels", "{d}/labels.csv"),
        _then(_mk_dir(), _link_at("t.parquet", "{fifo}")),
        line="failcodes: error: {d}/t.parquet: " + NOT_REGULAR,
    ),
    Case(
        "ingest-generic-labels/xlsx-is-a-fifo",
        ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/o.jsonl"),
        _fifo("l.xlsx"),
        line="failcodes: error: {d}/l.xlsx: " + NOT_REGULAR,
    ),
    Case(
        "ingest-generic/parquet-links-to-dev-zero",
        ("ingest", "generic", "{d}/t.parquet", "--system", "s", "-o", "{d}/o.jsonl"),
        _then(_mk_dir(), _link_at("t.parquet", "/dev/zero")),
        line="failcodes: error: {d}/t.parquet: " + NOT_REGULAR,
    ),
    Case(
        "agree/ratings-link-to-dev-zero",
        ("agree", "{d}/r.csv"),
        _then(_mk_dir(), _link_at("r.csv", "/dev/zero")),
        line="failcodes: error: {d}/r.csv: " + NOT_REGULAR,
    ),
    Case(
        "agree/panel-json-is-a-fifo",
        ("agree", "{d}/run"),
        _then(_mk_dir("run"), _fifo_at("run/panel.json")),
        expect=("run/panel.json: " + NOT_REGULAR,),
    ),
    Case(
        "review-status/plan-is-a-fifo",
        ("review", "status", "{d}/p.json", "--reviews", "{d}/r.jsonl"),
        _then(_write({"r.jsonl": ""}), _fifo_at("p.json")),
        line="failcodes: error: {d}/p.json: " + NOT_REGULAR,
    ),
    Case(
        "review-status/reviews-link-to-a-fifo",
        ("review", "status", "{d}/p.json", "--reviews", "{d}/r.jsonl"),
        _then(_write({"p.json": json.dumps(_plan_json())}), _link_at("r.jsonl", "{fifo}")),
        line="failcodes: error: {d}/r.jsonl: " + NOT_REGULAR,
    ),
    Case(
        # an endless view in place of the annotations table: `attribute` ran for ever
        "attribute/journal-annotations-an-endless-view",
        ATTRIBUTE_RUN,
        _tampered_journal(ENDLESS_VIEW),
        line="failcodes: error: {d}/run/journal.sqlite: not a readable judge journal (it holds "
        "a view ('annotations'), which failcodes never writes); judge again into a fresh -o "
        "folder",
    ),
    Case(
        "labelstudio-export/journal-annotations-an-endless-view",
        EXPORT_JUDGED,
        _tampered_journal(ENDLESS_VIEW),
        expect=("run/journal.sqlite: not a readable judge journal (it holds a view",),
    ),
    Case(
        # a trigger runs its SQL on every write of a resumed run
        "judge/journal-with-a-trigger",
        (*JUDGE, "--judge", "offline", "-o", "{d}/run"),
        _tampered_journal(
            "CREATE TRIGGER t AFTER INSERT ON annotations BEGIN DELETE FROM meta; END"
        ),
        line="failcodes: error: {d}/run/journal.sqlite: not a usable SQLite database (it holds "
        "a trigger ('t'), which failcodes never writes); move it away or pass another -o",
    ),
    Case(
        # every pair is tested: 100 systems of 3 sentences took 227 s and 1.4 GB
        "compare/file-of-40-systems",
        ("compare", "{d}/o.csv"),
        _write(
            {
                "o.csv": "unit,"
                + ",".join(f"s{i}" for i in range(40))
                + "\n"
                + "".join(
                    f"{u}," + ",".join("01"[(u + i) % 2] for i in range(40)) + "\n"
                    for u in range(6)
                )
            }
        ),
        line="failcodes: error: {d}/o.csv: 40 systems; compare tests every pair, at most 30 "
        "systems at once: choose them with --systems",
    ),
    Case(
        "compare/traces-of-32-systems",
        ("compare", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
        _mk_dir(
            files={
                "t.jsonl": _jsonl(
                    [
                        {**row, "system": f"{row['system']}-{k}"}
                        for k in range(16)
                        for row in _trace_lines()
                    ]
                ),
                "labels.csv": "sentence_id,has_error\n"
                + "".join(f"{i},false\n" for i in {str(r["sentence_id"]) for r in _trace_lines()}),
            }
        ),
        line="failcodes: error: {d}/t.jsonl: 32 systems; compare tests every pair, at most 30 "
        "systems at once: give fewer systems' traces",
    ),
    Case(
        # reported as a folder without a study (no lock), the report written to ./reports
        "report/study-file-is-a-fifo",
        ("report", "{d}/study"),
        _then(_initialised, _fifo_at("study/failcodes.toml")),
        line="failcodes: error: {d}/study/failcodes.toml: " + NOT_REGULAR,
    ),
    Case(
        "codebook-validate/link-to-a-fifo",
        ("codebook", "validate", "{d}/cb.yaml"),
        _then(_write({}), _link_at("cb.yaml", "{fifo}")),
        expect=("cb.yaml", "not a regular file"),
    ),
]


#: Found by the outside-checker run (redteam, 2026-12-02): shapes that gave a wrong number
#: with exit 0 before.
REDTEAM_CASES: list[Case] = [
    Case(
        # 'yes ' was a category of its own beside 'yes': percent agreement 0.333 for 1.0
        "agree/rating-with-spaces-around-it",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "item,rater,code\n1,a,yes\n1,b,yes \n2,a,no\n2,b,no\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'code': rating 'yes ': expected the value "
        "alone, without spaces around it (it would be a category of its own beside 'yes')",
    ),
    Case(
        # 'No' beside 'no': two categories, so the raters disagreed
        "agree/rating-in-another-case",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "item,dr_a,dr_b\n1,no,no\n2,yes,No\n3,yes,yes\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'dr_b': rating 'No' is 'no' (line 2, "
        "column 'dr_a') written another way (case, spacing or Unicode form): each spelling "
        "would be a category of its own; write it one way",
    ),
    Case(
        # one label, sentence s1 under q1 and q2 in the traces: counted twice (n = 2)
        "metrics/labelled-sentence-under-two-questions",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.jsonl": '{"system":"C","question_id":"q1","sentence_id":"s1","claim_id":"c1",'
                '"claim":"a","verdict":"refuted"}\n'
                '{"system":"C","question_id":"q2","sentence_id":"s1","claim_id":"c2",'
                '"claim":"b","verdict":"supported"}\n',
                "l.csv": "sentence_id,has_error\ns1,true\n",
            }
        ),
        line="failcodes: error: {d}/l.csv:2, field 'sentence_id': sentence 's1' is under 2 "
        "questions in the traces ('q1', 'q2'): a sentence id names one answer's sentence, and "
        "this label would count once under each; write each id one way in every file, or "
        "number sentences per answer with --option sentence_ids=question (traces and labels)",
    ),
    Case(
        # 'incorect' matched nothing: every 'incorrect' row became a no-error label, exit 0
        "ingest-generic-labels/label-rule-value-misspelt",
        (
            "ingest",
            "generic-labels",
            "{d}/l.csv",
            "-o",
            "{d}/l.jsonl",
            "--label-rule",
            "md in {incorect} -> error",
        ),
        _write({"l.csv": "sentence_id,md\ns1,correct\ns2,incorrect\n"}),
        line="failcodes: error: {d}/l.csv:3, field 'md': --label-rule 'md in {incorect} -> "
        "error' names 'incorect', which no row has, and not 'incorrect', which rows have (a "
        "typo? those rows got the 'no_error' label): name the values as the column writes them",
    ),
    Case(
        # 'a;b' read as one category: 'a;b' and 'b;a' disagreed, exit 0
        "agree/cells-look-like-code-sets",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit_id,r1,r2\nu1,a;b,b;a\nu2,a,a\nu3,b,b\n"}),
        line="failcodes: error: {d}/r.csv:2, field 'r1': 'a;b' looks like a set of codes ('a', "
        "'b' are ratings of their own elsewhere): compare cells as sets with --sets ';' "
        "(exact-set agreement, alpha with the MASI and Jaccard distances), or --sets none to "
        "read each cell as one category",
    ),
    Case(
        "agree/sets-split-on-another-separator",
        ("agree", "{d}/r.csv", "--sets", ";"),
        _write({"r.csv": "unit_id,r1,r2\nu1,a;b,b;a\nu2,a,a|b\nu3,b,b\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'r2': 'a|b' looks like a set of codes ('a', "
        "'b' are ratings of their own elsewhere): cells are split on ';' only: write every cell "
        "with ';'",
    ),
    Case(
        # '[X, Y]' under --sets ',' was split into the codes '[X' and 'Y]' (t31red2)
        "agree/sets-cell-bracketed-but-no-list",
        ("agree", "{d}/r.csv", "--sets", ","),
        _write({"r.csv": 'unit_id,r1,r2\nu1,"[X, Y]",X\nu2,X,Y\nu3,Y,Y\n'}),
        line="failcodes: error: {d}/r.csv:2, field 'r1': '[X, Y]' looks like a list written as "
        "text but reads as no JSON or Python list: write its codes joined by ',' (or quote each "
        'code: ["a", "b"])',
    ),
    Case(
        # a CSV cell '[]': no code given, or not rated? (as a JSONL [] is refused)
        "agree/sets-cell-empty-list-text",
        ("agree", "{d}/r.csv", "--sets", ";"),
        _write({"r.csv": "unit_id,r1,r2\nu1,\"['X']\",[]\nu2,X,Y\nu3,Y,Y\n"}),
        line="failcodes: error: {d}/r.csv:2, field 'r2': an empty list of codes (codes are texts "
        "or whole numbers without ';'; not rated: null; no code given: a code of its own, e.g. "
        "'none')",
    ),
    Case(
        # 'none;X' was the set {none, X}: against {X} an exact-set disagreement (t31red2)
        "agree/sets-none-beside-a-code",
        ("agree", "{d}/r.csv", "--sets", ";"),
        _write({"r.csv": "unit_id,r1,r2\nu1,X;Y,X\nu2,none;X,X\nu3,Y,Y\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'r1': 'none;X' holds 'none' beside other "
        "codes: a code set lists the codes given, and a mark of no code or of a missing rating "
        "cannot stand beside them (no code given: 'none' alone; a missing rating: an empty "
        "cell)",
    ),
    Case(
        # 'NA' alone under --sets was refused naming --categories, which --sets refuses
        "agree/sets-na-cell",
        ("agree", "{d}/r.csv", "--sets", ";"),
        _write({"r.csv": "unit_id,r1,r2\nu1,X;Y,X\nu2,NA,X\nu3,Y,Y\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'r1': 'NA' among code sets: a missing rating "
        "(R writes NA) or an answer (not applicable)? missing: leave the cell empty; an answer: "
        "write it as a code of its own (e.g. not_applicable)",
    ),
    Case(
        # a long table's rows 'X' and 'none' of one (unit, rater) joined into {X, none}
        "agree/sets-long-none-row-beside-a-code-row",
        ("agree", "{d}/r.csv", "--sets", ";"),
        _write(
            {"r.csv": "unit,rater,code\nu1,ann1,X\nu1,ann1,none\nu1,ann2,X\nu2,ann1,Y\nu2,ann2,Y\n"}
        ),
        line="failcodes: error: {d}/r.csv:3, field 'code': 'none' beside 'X' (line 2) for unit "
        "'u1' and rater 'ann1': their rows join into one code set, and a mark of no code or of "
        "a missing rating cannot stand beside codes (no code given: 'none' alone; a missing "
        "rating: no row)",
    ),
    Case(
        # r1's rows 'none' and '-' of one unit joined into the set {none, -} (t32agree)
        "agree/sets-long-two-marks-for-one-rating",
        ("agree", "{d}/r.csv", "--sets", ";"),
        _write(
            {"r.csv": "unit,rater,code\nu1,ann1,none\nu1,ann1,-\nu1,ann2,X\nu2,ann1,Y\nu2,ann2,Y\n"}
        ),
        line="failcodes: error: {d}/r.csv:3, field 'code': '-' beside 'none' (line 2) for unit "
        "'u1' and rater 'ann1': their rows join into one code set, and two marks for one rating "
        "(no code, or a missing rating?): keep the row that holds (no code given: 'none' alone; "
        "a missing rating: no row)",
    ),
    Case(
        # a rater column there: the refusal said "no rater column? add one" (t32agree)
        "agree/long-two-columns-beside-the-rater",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,rater,code,severity\nu1,r1,A,1\nu1,r2,A,2\nu2,r1,B,1\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'unit': unit 'u1' is on two rows (first at "
        "line 2): one row per unit and rater? name the columns with --long rater,RATING_COLUMN "
        "(the ratings: one of code, severity; the other columns are not read)",
    ),
    Case(
        # each rater's codes in slots: the way named read the first slot alone (t32agree)
        "agree/code-slots-without-sets",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,r1_code1,r1_code2,r2_code1,r2_code2\nu1,A,B,A,\nu2,B,,B,A\n"}),
        line="failcodes: error: {d}/r.csv:1, field 'r1_code1': rater columns r1_code1, "
        "r1_code2, r2_code1, r2_code2 look like each rater's codes in slots (r1: r1_code1 + "
        "r1_code2, r2: r2_code1 + r2_code2): --sets ';' reads each rater's slots as one code "
        "set (every code kept: exact-set agreement, alpha with the MASI and Jaccard distances, "
        "each code's own agreement); --raters r1_code1,r2_code1 reads the first slot alone",
    ),
    Case(
        # one code in two slots of a rater: {A}, or a typo for another code? (t32agree)
        "agree/code-slots-a-code-twice",
        ("agree", "{d}/r.csv", "--sets", ";"),
        _write({"r.csv": "unit,r1_code1,r1_code2,r2_code1,r2_code2\nu1,A,A,A,\nu2,B,,B,A\n"}),
        line="failcodes: error: {d}/r.csv:2, field 'r1_code2': 'A' is in two of r1's code "
        "slots (r1_code1, r1_code2): a code set holds each code once (a double entry, or a typo "
        "for another code?): write it in one slot",
    ),
    Case(
        # a rating made again later: the refusal named only --sets, which joins both (t32agree)
        "agree/long-a-rating-made-again",
        ("agree", "{d}/r.csv"),
        _write(
            {
                "r.csv": "unit,rater,code,created_at\nu1,r1,A,2026-01-01\nu1,r2,A,2026-01-02\n"
                "u1,r1,B,2026-01-05\n"
            }
        ),
        line="failcodes: error: {d}/r.csv:4, field 'code': unit 'u1' is rated by 'r1' twice "
        "(lines 2 and 4 differ in column 'created_at' (2026-01-01, 2026-01-05): a rating made "
        "again? keep the row that counts (--sets would join both); several codes per unit and "
        "rater, one row each? --sets ';' joins them into one code set)",
    ),
    Case(
        # a confidence beside the systems: a third system of Cochran's Q and Holm (t32agree)
        "compare/file-a-confidence-column",
        ("compare", "{d}/r.csv", "--truth", "truth"),
        _write({"r.csv": "id,sysA,sysB,truth,confidence\n1,1,0,1,1\n2,0,0,1,0\n3,1,1,0,1\n"}),
        line="failcodes: error: {d}/r.csv:1, field 'confidence': column 'confidence' is named "
        "like a note, a confidence or a time, or a value computed from the outcomes (holds "
        "'confidence'), not a system: read as one it would enter every test (Cochran's Q, a "
        "McNemar pair with each system, their Holm correction); name the system columns with "
        "--systems",
    ),
    Case(
        "agree/sets-with-weights",
        ("agree", "{d}/r.csv", "--sets", ";", "--weights", "quadratic"),
        _write({"r.csv": "unit_id,r1,r2\nu1,a;b,b;a\nu2,a,a\nu3,b,b\n"}),
        expect=("--sets: --weights does not apply to code sets",),
    ),
    Case(
        # one row per rater: the units were read as raters (Fleiss of the wrong table)
        "agree/transposed-table",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "rater,u1,u2,u3\ndr_a,yes,no,yes\ndr_b,yes,no,no\n"}),
        line="failcodes: error: {d}/r.csv, field 'rater': column 'rater' is named like a rater "
        "and holds one value per row: is the table one row per rater and one column per unit? "
        "agreement needs one row per unit: transpose it (or give --unit-column if that column "
        "holds unit ids)",
    ),
    Case(
        # 'A' and 'a' were two systems, each scored on part of the rows
        "ingest-generic/system-written-two-ways",
        ("ingest", "generic", "{d}/t.csv", "-o", "{d}/t.jsonl"),
        _write({"t.csv": "system,sentence_id,claim,verdict\nA,s1,x,supported\na,s2,y,refuted\n"}),
        line="failcodes: error: {d}/t.csv:3, field 'system': system 'a' is 'A' ({d}/t.csv:2) "
        "written another way (case, spacing or Unicode form): it would be scored as a system "
        "of its own; write it one way",
    ),
    Case(
        # the percent row alone came out, Cohen skipped without a word
        "agree/two-rater-statistic-of-three-raters",
        ("agree", "{d}/r.csv", "--stat", "cohen", "--stat", "percent"),
        _write({"r.csv": "item,a,b,c\n1,x,x,y\n2,y,y,y\n3,x,y,x\n"}),
        line="failcodes: error: --stat cohen: it needs exactly two raters, the table has 3 "
        "(a, b, c); use fleiss, krippendorff or gwet_ac1 for more, or name two with --raters",
    ),
    Case(
        # read as column 'md !': the error named 'md' an unknown field
        "ingest-generic-labels/label-rule-negated",
        (
            "ingest",
            "generic-labels",
            "{d}/l.csv",
            "-o",
            "{d}/l.jsonl",
            "--label-rule",
            "md != ok -> error",
        ),
        _write({"l.csv": "sentence_id,md\ns1,ok\ns2,wrong\n"}),
        line="failcodes: error: --label-rule 'md != ok -> error': '!' before '=' or 'in' is not "
        "a rule operator; name the values instead: 'COLUMN = correct -> no_error' gives every "
        "other value the error label",
    ),
    Case(
        # the error named no line (docs/statistics.md says it does)
        "agree/wide-unit-on-two-rows",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "id,r1,r2\n1,a,a\n2,a,b\n1,a,a\n"}),
        line="failcodes: error: {d}/r.csv:4, field 'id': unit '1' is on two rows (first at line "
        "2): one row per unit and rater? name the columns with --long RATER_COLUMN,RATING_COLUMN"
        " (no rater column? add one naming the rater of each row)",
    ),
    Case(
        # round 1, 2 beside ratings 1, 2 was read as a rater: told --long, not --by round
        "agree/wide-round-read-as-rater",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,r1,r2,round\n1,1,1,1\n2,2,2,1\n1,2,1,2\n2,1,1,2\n"}),
        line="failcodes: error: {d}/r.csv:4, field 'unit': unit '1' is on two rows (first at "
        "line 2), told apart by 'round' (1, 2): the raters' rounds (or visits) in one table? "
        "--by round gives each round's agreement apart (one row per unit and rater? name the "
        "columns with --long RATER_COLUMN,RATING_COLUMN)",
    ),
    Case(
        # 'B' beside 'b': three raters where there were two
        "agree/long-rater-in-another-case",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "item,rater,code\n1,a,x\n1,b,x\n2,a,y\n2,B,y\n"}),
        line="failcodes: error: {d}/r.csv:5, field 'rater': rater 'B' is 'b' (line 3) written "
        "another way (case, spacing or Unicode form): it would be a rater of its own; write it "
        "one way",
    ),
    Case(
        # 'Scope' beside 'scope': two --by groups where there was one (the message in full:
        # stats.tableshape.one_way writes it since 2026-12-03)
        "agree/by-value-in-another-case",
        ("agree", "{d}/r.csv", "--by", "dimension", "--stat", "percent", "--bootstrap", "0"),
        _write({"r.csv": "item,dimension,r1,r2\n1,scope,a,a\n2,scope,b,a\n3,Scope,a,a\n"}),
        line="failcodes: error: {d}/r.csv:4, field 'dimension': --by value 'Scope' is 'scope' "
        "(line 2) written another way (case, spacing or Unicode form): each spelling would be a "
        "group of its own; write it one way",
    ),
    Case(
        # a JSON list of co-occurring codes: the error did not say how to give them
        "agree/jsonl-rating-is-a-list",
        ("agree", "{d}/r.jsonl"),
        _write({"r.jsonl": '{"unit_id": "u1", "r1": ["a", "b"], "r2": ["a"]}\n'}),
        line="failcodes: error: {d}/r.jsonl:1, field 'r1': a list is not a rating (expected a "
        "number or a text per cell); co-occurring codes? agree --sets ';' reads a list as a set",
    ),
    Case(
        # one file per system, 'S' and 's': two systems, exit 0
        "metrics/system-written-two-ways-across-files",
        ("metrics", "--traces", "{d}/a.jsonl", "--traces", "{d}/b.jsonl", "--labels", "{d}/l.csv"),
        _write(
            {
                "a.jsonl": '{"system":"s","question_id":"q","sentence_id":"s1","claim_id":"c1",'
                '"claim":"x","verdict":"refuted"}\n',
                "b.jsonl": '{"system":"S","question_id":"q","sentence_id":"s1","claim_id":"c1",'
                '"claim":"x","verdict":"supported"}\n',
                "l.csv": "sentence_id,has_error\ns1,true\n",
            }
        ),
        line="failcodes: error: {d}/a.jsonl:1, field 'system': system 's' is 'S' written another "
        "way (case, spacing or Unicode form): they would be scored as two systems; write it one "
        "way",
    ),
    Case(
        "agree/sets-separator-blank",
        ("agree", "{d}/r.csv", "--sets", " "),
        _write({"r.csv": "unit_id,r1,r2\nu1,a;b,b;a\nu2,a,a\nu3,b,b\n"}),
        expect=("--sets must be the separator joining codes in a cell",),
    ),
]


def _hidden_first_sheet(name: str) -> Setup:
    """A workbook whose first sheet (old ratings) is hidden; the table shown is the second."""

    def setup(d: Path) -> None:
        from openpyxl import Workbook

        book = Workbook()
        old = book.active
        old.title = "old"
        old.append(["unit", "coder_A", "coder_B"])
        old.append([1, "yes", "no"])
        old.sheet_state = "hidden"
        book.create_sheet("ratings").append(["unit", "coder_A", "coder_B"])
        book.save(d / name)

    return setup


def _titled_workbook(name: str) -> Setup:
    """A sheet with a title merged over the columns above its header row."""

    def setup(d: Path) -> None:
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        sheet.append(["Clinician labels (round 2)", None, None])
        sheet.merge_cells("A1:C1")
        sheet.append(["sentence_id", "question_id", "has_error"])
        sheet.append(["s1", "q1", True])
        book.save(d / name)

    return setup


#: Found by the fourth outside check (redteam4).
REDTEAM4_CASES: list[Case] = [
    Case(
        # the title was the header: "l.xlsx:2: a value in column B, which has no header name"
        "ingest-generic-labels/xlsx-title-merged-above-the-header",
        ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/o.jsonl"),
        _titled_workbook("l.xlsx"),
        line="failcodes: error: {d}/l.xlsx:1: merged cells A1:C1 in the header row (a title "
        "above the column names?): the first non-empty row is the header, one name per "
        "column; delete the title row, or unmerge the cells and name each column",
    ),
    Case(
        # the labels' system in NFD, the traces' in NFC: "no trace has system 'Müller'
        # (systems: 'Müller')" named two names that look the same
        "metrics/label-system-in-another-unicode-form",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl"),
        _write(
            {
                "t.jsonl": '{"system": "M\u00fcller", "question_id": "q1", "sentence_id": '
                '"s1", "claim_id": "c1", "claim": "x", "verdict": "refuted"}\n',
                "l.jsonl": '{"system": "Mu\u0308ller", "sentence_id": "s1", "has_error": true}\n',
            }
        ),
        line="failcodes: error: {d}/l.jsonl:1, field 'system': system 'Mu\u0308ller' is "
        "written in another Unicode form (NFD: the same letters, composed differently) than "
        "the traces' 'M\u00fcller': no trace has it; write it as the traces do",
    ),
    Case(
        # a gold column beside the systems was compared as a system (Cochran's Q df 3 for 2)
        "compare/reference-column-among-systems",
        ("compare", "{d}/o.csv"),
        _write({"o.csv": "unit_id,sysA,sysB,gold\nu1,1,0,1\nu2,0,0,0\n"}),
        line="failcodes: error: {d}/o.csv:1, field 'gold': column 'gold' is named like the "
        "reference or a consensus of the systems (holds 'gold'), not a system: give the "
        "reference with --truth gold (F1 and recall differences), or name the system columns "
        "with --systems (a majority vote compared as a system too)",
    ),
    Case(
        # the hidden first sheet's rows were read without a word (exit 0)
        "agree/xlsx-hidden-first-sheet",
        ("agree", "{d}/r.xlsx"),
        _hidden_first_sheet("r.xlsx"),
        line="failcodes: error: {d}/r.xlsx: the workbook's first sheet 'old' is hidden in "
        "Excel, and failcodes reads the first sheet (its sheets: 'old', 'ratings'): move the "
        "table to the first place, or delete the hidden sheet",
    ),
]


REDTEAM6_CASES: list[Case] = [
    Case(
        # duplicates=same merges a sentence labelled alike in two files; otherwise: refused
        "ingest-generic-labels/duplicates-same-labelled-otherwise",
        (
            "ingest",
            "generic-labels",
            "{d}/a.jsonl",
            "{d}/b.jsonl",
            "--option",
            "duplicates=same",
            "-o",
            "{d}/o.jsonl",
        ),
        _write(
            {
                "a.jsonl": '{"sentence_id": "s1", "question_id": "q1", "has_error": true}\n',
                "b.jsonl": '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n',
            }
        ),
        line="failcodes: error: {d}/b.jsonl:1, field 'sentence_id': sentence 's1' is labelled "
        "has_error=false here, question 'q1', and has_error=true, question 'q1' at "
        "{d}/a.jsonl:1: one target, two labels; two systems' answers numbered alike (one file "
        "each)? each label must name its system: a system field or column in every record "
        "(atomic: the files ingested in one call; generic: --option label_scope=system; "
        "generic-labels: --system NAME, one call per file)",
    ),
    Case(
        # answers keyed by system, each labelled on its own, read as shared labels: the two
        # systems' labels of sentence 's1' conflict; the line now says which systems and why
        "ingest-generic/shared-label-rule-across-systems",
        (
            "ingest",
            "generic",
            "{d}/a.jsonl",
            "-o",
            "{d}/t.jsonl",
            "--labels-out",
            "{d}/l.jsonl",
            "--option",
            "rows=answers.*.claims[]",
            "--map",
            "answers.*=system",
            "--map",
            "answers.*.sid=sentence_id",
            "--map",
            "c=claim",
            "--map",
            "v=verdict",
            "--label-rule",
            "answers.*.label = error -> error",
        ),
        _write(
            {
                "a.jsonl": '{"answers": {"A": {"sid": "s1", "label": "error", "claims": '
                '[{"c": "x", "v": "refuted"}]}, "B": {"sid": "s1", "label": "ok", "claims": '
                '[{"c": "y", "v": "supported"}]}}}\n'
            }
        ),
        line="failcodes: error: {d}/a.jsonl:1, field 'sentence_id': the label rule gives "
        "sentence 's1' has_error=false here but true at line 1 (a row of system 'A' there, of "
        "'B' here: if each system's answer was labelled on its own, --option "
        "label_scope=system keeps each system's labels)",
    ),
]


def _shared_units_judged_two_ways(d: Path) -> None:
    """Two data sets' judge runs code the shared unit r0 two ways; alice reviewed r0."""
    from failcodes import codebook as codebooks
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.units import UnitKind

    ref = codebooks.bundled(version=1).ref()
    high = {"entity_match": "exact_entity", "trustworthy": "trustworthy_source",
            "evidence_polarity": "direct_polarity", "chunking": "well_chunked"}  # fmt: skip
    for ds, coder, kind, scope in (
        ("judge/d1/retrieval/annotations.jsonl", "judge", CoderKind.LLM, "exact_scope"),
        ("judge/d2/retrieval/annotations.jsonl", "judge", CoderKind.LLM, "broader_scope"),
        ("review/alice.jsonl", "alice", CoderKind.HUMAN, "exact_scope"),
    ):
        ann = Annotation(unit_id="r0", unit_kind=UnitKind.RETRIEVAL, codebook=ref, coder=coder,
                         coder_kind=kind, codes={**high, "scope": scope})  # fmt: skip
        (d / ds).parent.mkdir(parents=True)
        (d / ds).write_text(ann.model_dump_json() + "\n", encoding="utf-8")


REDTEAM8_CASES: list[Case] = [
    Case(
        # a data set removed from (or renamed in) the study file keeps its outputs, which the
        # report showed as the study's (tests/test_outside_shapes8.py)
        "report/dataset-not-in-the-study-file",
        ("report", "{d}", "-o", "{d}/out"),
        _write(
            {
                "failcodes.toml": 'name = "s"\ncodebook = "cb.yaml"\n\n[[datasets]]\n'
                'name = "new"\n[[datasets.ingest]]\nadapter = "generic"\npaths = ["a.csv"]\n',
                "metrics/old.json": "[]\n",
            }
        ),
        line="failcodes: error: {d}/failcodes.toml: the study file names no data set 'old', "
        "but the folder holds its outputs (metrics/old.json): the report would show them as "
        "this study's (a data set removed or renamed in the study file keeps its old "
        "outputs); delete them, or name the data set again",
    ),
    Case(
        # one unit (a claim and a passage) in two data sets, coded two ways by the judge:
        # the review cannot be compared with both (before: the judge "annotated it twice",
        # naming no file); coded alike, it is one rating (tests/test_outside_shapes8.py)
        "report/shared-unit-judged-two-ways",
        ("report", "{d}", "--codebook", str(CODEBOOK), "-o", "{d}/out"),
        _shared_units_judged_two_ways,
        line="failcodes: error: {d}/judge/d2/retrieval/annotations.jsonl: the judge 'judge' "
        "coded unit 'r0' (reviewed) one way in {d}/judge/d1/retrieval/annotations.jsonl and "
        "another in this file, which both hold it (the same claim and text in two data sets): "
        "the review cannot be compared with both; judge the data sets with the judge's cache "
        "on, so a unit gets one answer",
    ),
]


def _parquet_column_twice(d: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = ["item", "r1", "r1"]
    cells = [["1", "2", "3"], ["y", "n", "y"], ["y", "n", "n"]]
    pq.write_table(pa.Table.from_arrays([pa.array(c) for c in cells], names=names), d / "r.parquet")


def _review_lines(second: str) -> str:
    scored = {**ANNOTATION, "status": "scored", "reason": None}
    judge = {**scored, "codes": {"scope": "broader_scope"}}
    human = {**scored, "coder": "alice", "coder_kind": "human", "codes": {"scope": second}}
    return json.dumps(judge) + "\n" + json.dumps(human) + "\n"


REDTEAM10_CASES: list[Case] = [
    Case(
        # European Excel: ';' between cells, ',' in decimals; the header is one cell and the
        # first row three, which read "expected 1 cells (as in the header), got 3"
        "agree/semicolons-and-decimal-commas",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "id;r1;r2\n1;2,5;2,5\n2;1,0;3,0\n"}),
        line="failcodes: error: {d}/r.csv:1: the header is separated by semicolons (European "
        "Excel?), expected commas: save the table as CSV (comma delimited)",
    ),
    Case(
        # the label's id decomposed (NFD), the trace's composed: "no trace has sentence_id
        # 'se\u03010'" named two ids that look the same
        "metrics/label-sentence-in-another-unicode-form",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl", "-m", "refuted"),
        _write(
            {
                "t.jsonl": json.dumps(
                    {"system": "A", "question_id": "q", "sentence_id": "s\u00e90"}
                    | {"claim_id": "c0", "claim": "x", "verdict": "refuted"}
                )
                + "\n",
                "l.jsonl": json.dumps({"sentence_id": "se\u03010", "has_error": True}) + "\n",
            }
        ),
        line="failcodes: error: {d}/l.jsonl:1, field 'sentence_id': no trace has sentence_id "
        "'se\u03010', but one has 's\\xe90', the same id in another Unicode form (NFD: the same "
        "letters, composed differently) (ids are compared exactly); write the trace's id",
    ),
    Case(
        # B writes the labelled sentence s0 as S0: B's claim was unlabelled and s0 counted as
        # a sentence B made no claim for (no error flagged): recall 1/2 for 2/2, exit 0
        "metrics/labelled-sentence-written-two-ways-by-the-traces",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl", "-m", "refuted"),
        _write(
            {
                "t.jsonl": "".join(
                    json.dumps(
                        {"system": s, "question_id": "q", "sentence_id": i, "claim_id": i}
                        | {"claim": "x", "verdict": "refuted"}
                    )
                    + "\n"
                    for s, i in (("A", "s0"), ("B", "S0"))
                ),
                "l.jsonl": json.dumps({"sentence_id": "s0", "has_error": True}) + "\n",
            }
        ),
        line="failcodes: error: {d}/l.jsonl:1, field 'sentence_id': the traces write sentence "
        "'s0' also as 'S0' (in another case): the label applies to 's0' only, so the claims "
        "under 'S0' count unlabelled and a system that wrote only 'S0' is scored as making no "
        "claim for 's0' (no error flagged); write the id one way in every traces file",
    ),
    Case(
        # a code the codebook's dimension does not hold was refused after reading, naming
        # neither file nor line: "ratings ['same_scope'] are not in the category list [...]"
        "agree/annotation-code-not-in-the-codebook",
        ("agree", "{d}/a.jsonl", "--codebook", str(CODEBOOK), "--bootstrap", "0"),
        _write({"a.jsonl": _review_lines("same_scope")}),
        line="failcodes: error: {d}/a.jsonl:2, field 'codes.scope': code 'same_scope' is not one "
        "of dimension 'scope''s codes in medical-fact-check@1 (exact_scope, broader_scope, "
        "narrower_scope, different_context); --codebook names another codebook",
    ),
    Case(
        # the rule names 1 where the column says true: no row matched and all got no_error
        # (tests/test_outside_shapes10.py)
        "ingest-generic/label-rule-truth-value-written-another-way",
        (
            *("ingest", "generic", "{d}/t.csv", "-o", "{d}/t.jsonl"),
            *("--labels-out", "{d}/l.jsonl", "--label-rule", "wrong = 1 -> error"),
        ),
        _write(
            {
                "t.csv": "system,question_id,sentence_id,claim,verdict,wrong\n"
                "A,q,s0,w,refuted,true\nA,q,s1,x,supported,false\n"
            }
        ),
        line="failcodes: error: {d}/t.csv:2, field 'wrong': --label-rule 'wrong = 1 -> error' "
        "names '1', which no row has, and not 'true', which rows have (the same truth value "
        "written another way? those rows got the 'no_error' label): name the values as the "
        "column writes them",
    ),
    Case(
        # pyarrow writes two columns of one name; pandas then gave a frame for frame['r1'] and
        # agree stopped with AttributeError ('DataFrame' object has no attribute 'tolist')
        "agree/parquet-column-named-twice",
        ("agree", "{d}/r.parquet", "--bootstrap", "0"),
        _parquet_column_twice,
        line="failcodes: error: {d}/r.parquet:1, field 'r1': column appears twice in the header",
    ),
]


I34RED_CASES: list[Case] = [
    Case(
        # the label keeps '007' where the traces write 7: with its question_id it read as a
        # sentence no system made a claim for (no error flagged), and 7's claim as unlabelled
        # (tests/test_outside_shapes11.py)
        "metrics/label-sentence-with-leading-zeros-the-traces-drop",
        ("metrics", "--traces", "{d}/t.csv", "--labels", "{d}/l.csv", "-m", "refuted"),
        _write(
            {
                "t.csv": "system,question_id,sentence_id,claim_id,claim,verdict\n"
                "A,1,7,c7,x,refuted\nA,1,8,c8,y,supported\n",
                "l.csv": "question_id,sentence_id,has_error\n1,007,true\n1,8,false\n",
            }
        ),
        line="failcodes: error: {d}/l.csv:2, field 'sentence_id': no trace has sentence_id "
        "'007', but one has '7' (ids are compared exactly: leading zeros); write the trace's id",
    ),
    Case(
        # a blank cell of the rule's column: the unrated row got the single clause's opposite
        # (no_error), one more true negative (tests/test_outside_shapes11.py)
        "ingest-generic/label-rule-row-without-a-value",
        (
            *("ingest", "generic", "{d}/t.csv", "-o", "{d}/t.jsonl"),
            *("--labels-out", "{d}/l.jsonl", "--label-rule", "expert = incorrect -> error"),
        ),
        _write(
            {
                "t.csv": "system,question_id,sentence_id,claim,verdict,expert\n"
                "A,q,s0,w,refuted,incorrect\nA,q,s1,x,supported,\n"
            }
        ),
        line="failcodes: error: {d}/t.csv:3, field 'expert': no value, and --label-rule 'expert "
        "= incorrect -> error' gives no_error to the other values, not to a row without one: "
        "add 'otherwise -> skip' to leave such rows unlabelled (or 'otherwise -> no_error')",
    ),
    Case(
        # s1 labelled per claim only: sentence-level metrics read it as unlabelled (n 1 of 2)
        # (tests/test_outside_shapes11.py)
        "metrics/sentence-labelled-through-its-claims-only",
        ("metrics", "--traces", "{d}/t.csv", "--labels", "{d}/l.csv", "-m", "refuted"),
        _write(
            {
                "t.csv": "system,question_id,sentence_id,claim_id,claim,verdict\n"
                "A,q,s1,c1,x,refuted\nA,q,s2,c2,y,supported\n",
                "l.csv": "sentence_id,claim_id,has_error\ns1,c1,true\ns2,,false\n",
            }
        ),
        line="failcodes: error: {d}/l.csv:2, field 'claim_id': sentence 's1' is labelled through "
        "its claims only ('c1'...), and a sentence-level comparison reads sentence labels: it "
        "would count unlabelled; compare claims with --level claim (in a study: [metrics] "
        'level = "claim"), or give sentence labels',
    ),
]


def _agree_table(text: str) -> Setup:
    return _write({"r.csv": text})


AGREE_PERCENT = ("agree", "{d}/r.csv", "--stat", "percent", "--bootstrap", "0")
#: units 1-4 of a wide ratings table (tests/test_outside_tables11.py: 0.750 by hand)
SCORES = "1,3,3\n2,2,5\n3,1,1\n4,3,3\n"


def _total_between(row: str) -> Case:
    word = row.split(",")[0]
    return Case(
        # a total's row between the units was one more unit: percent 0.600 (Mean, Total) or
        # 0.800 (Subtotal) for 0.750, exit 0 (tests/test_outside_tables11.py)
        f"agree/{word.rstrip(':').lower()}-row-between-the-units",
        AGREE_PERCENT,
        _agree_table("item,r1,r2\n" + SCORES.replace("3,1,1\n", f"{row}\n3,1,1\n")),
        line=f"failcodes: error: {{d}}/r.csv:4, field 'item': a row of totals between the "
        f"units? its unit id {word!r} names a total; it would be read as one more unit: "
        "delete the row (a unit so named: --unit-column item reads every row as a unit)",
    )


def _two_rounds(d: Path) -> Path:
    """The saturation project of tests/test_outside_red11.py at d/p; round 2's review file."""
    from tests.test_outside_red11 import two_rounds_project

    two_rounds_project(d / "p")
    return d / "p" / "rounds" / "r0002" / "review.yaml"


def _round_two_case(name: str, decisions: dict[str, dict[str, str]], line: str) -> Case:
    """`saturate review --file` of round 2's review file edited by alice: ``decisions`` per
    proposal id; ``line``: the error line after the file's name."""

    def setup(d: Path) -> None:
        data = yaml.safe_load(_two_rounds(d).read_text(encoding="utf-8"))
        data["reviewer"] = "alice"
        for proposal in data["proposals"]:
            proposal.update(decisions.get(proposal["id"], {}))
        (d / "edited.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")

    return Case(
        f"saturate-review/{name}",
        ("saturate", "review", "p", "--dir", "{d}/p", "--file", "{d}/edited.yaml"),
        setup,
        line="failcodes: error: {d}/edited.yaml" + line,
    )


ACCEPT = {"decision": "accept"}


def _rename_to(name: str) -> dict[str, str]:
    return {"decision": "rename", "new_name": name}


def _two_mappings(d: Path) -> None:
    """dis.jsonl: disagreements under -m refuted and -m non_supported (3 of 2 sentences)."""
    rows = [("s1", "supported"), ("s2", "no_evidence")]
    traces = [
        {"system": "A", "question_id": "q1", "sentence_id": sid, "claim_id": sid}
        | {"claim": f"claim {sid}", "verdict": verdict, "reasoning": "because"}
        for sid, verdict in rows
    ]
    labels = [
        {"sentence_id": sid, "question_id": "q1", "has_error": sid == "s1"} for sid, _ in rows
    ]
    _write({"t.jsonl": _jsonl(traces), "l.jsonl": _jsonl(labels)})(d)
    argv = ["disagreements", "--traces", str(d / "t.jsonl"), "--labels", str(d / "l.jsonl")]
    assert main_quiet([*argv, "-o", str(d / "dis.jsonl"), "-m", "refuted", "-m", "non_supported"])
    # refuted flags neither sentence: FN s1; non_supported flags s2: FN s1, FP s2
    lines = (d / "dis.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(s)["mapping"] for s in lines] == ["refuted", *["non_supported"] * 2]


def _review_code_not_in_the_codebook(d: Path) -> None:
    """20 coded units, 10 drawn; alice's reviews spell exact_entity 'Exact entity'."""
    from tests.test_review_plan import half_reviewed_study, human

    entity = {f"a{i}": "exact_entity" if i % 2 else "partial_entity" for i in range(20)}
    drawn = [f"a{i}" for i in range(10)]
    half_reviewed_study(d, entity, drawn, [human(u, "Exact entity") for u in drawn])


def _json_min(d: Path) -> None:
    """A Label Studio JSON-MIN export: each annotation one flat row (task data, choices)."""
    from failcodes.labelstudio.tasks import build_tasks
    from failcodes.units import UnitKind
    from tests.labelstudio_helpers import retrieval_unit, toy_codebook

    data = build_tasks([retrieval_unit(0)], toy_codebook(), UnitKind.RETRIEVAL)[0]["data"]
    row = {**data, "id": 100, "annotator": 3, "entity": "exact_entity", "scope": "exact_scope"}
    (d / "min.json").write_text(json.dumps([row]), encoding="utf-8")


def _id_parquets(traces: list[object], labels: list[object]) -> Setup:
    """t.parquet and l.parquet of tests/test_outside_ingest11.py with these number ids."""

    def setup(d: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = {"system": ["A"] * 3, "question_id": [1, 1, 2], "sentence_id": traces}
        table |= {"claim_id": traces, "claim": ["x", "y", "z"]}
        table |= {"verdict": ["supported", "refuted", "supported"]}
        pq.write_table(pa.table(table), d / "t.parquet")
        has_error = [False, True, True]
        pq.write_table(pa.table({"sentence_id": labels, "has_error": has_error}), d / "l.parquet")

    return setup


#: What a has_error that is no boolean adds: the label rule that reads it (t20red1).
HAS_ERROR_WAY = (
    "labels written other than true/false or 1/0 (ja/nein, a scale, blanks)? failcodes ingest "
    "generic-labels FILE -o OUT --label-rule 'has_error in {ERROR VALUES} -> error; has_error "
    "in {OTHER VALUES} -> no_error; otherwise -> skip'"
)


def _has_error_parquet(d: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"sentence_id": ["1", "2"], "has_error": [0.0, 2.0]}), d / "l.parquet")


def _passage_numbers(d: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = {"id": ["1", "2"], "claim": ["a", "b"], "verdict": ["supported", "refuted"]}
    numbers = pa.array([[1, 2], [3]], pa.list_(pa.int64()))
    pq.write_table(pa.table({**table, "ev": numbers}), d / "p.parquet")


FRACTION = (
    "field 'sentence_id': id 4.5 is a number with a fraction (1.10 and 1.1 read as one "
    "number); expected text or a whole number: save the column as text"
)
PER_ANSWER = (
    "qid,sid,claim,verdict,gold\n"
    "q1,1,a,refuted,wrong\nq1,2,b,supported,ok\nq2,1,c,supported,wrong\nq2,2,d,supported,ok\n"
)

# session 11's refusals, each tested before inside its outside file only (issue 30)
SESSION11_CASES: list[Case] = [
    *(_total_between(row) for row in ("Mean,2.5,4", "Total,5,8", "Subtotal:,2,2")),
    Case(
        # error_R1, severity_R1, error_R2, severity_R2 read as four raters: percent 0.633,
        # exit 0 (tests/test_outside_tables11.py: --raters gives 0.800 and 0.600)
        "agree/two-fields-of-each-rater-named-field-first",
        AGREE_PERCENT,
        _agree_table(
            "item,error_R1,severity_R1,error_R2,severity_R2\n1,1,2,1,2\n2,0,0,0,1\n3,1,1,0,0\n"
            "4,2,2,2,2\n5,0,0,0,0\n"
        ),
        line="failcodes: error: {d}/r.csv:1, field 'severity_R1': rater columns error_R1, "
        "error_R2 and severity_R1, severity_R2 look like two fields ('error', 'severity') of "
        "the same raters: each column would be a rater; name the rating's columns with "
        "--raters (e.g. --raters 'error_R1,error_R2')",
    ),
    *(
        Case(
            # R's NA among text codes was a category: one more agreeing unit, percent 0.750
            # for the rated units' 0.667, exit 0 (tests/test_outside_tables11.py)
            f"agree/missing-mark-{mark}-among-text-codes",
            AGREE_PERCENT,
            _agree_table(f"item,r1,r2\n1,yes,yes\n2,{mark},{mark}\n3,no,yes\n4,no,no\n"),
            line=f"failcodes: error: {{d}}/r.csv:3, field 'r1': {mark!r} among text codes: a "
            "missing rating (R writes NA) or an answer (not applicable)? it would be a "
            "category of its own; missing: leave the cell empty; an answer: list the "
            f"categories with --categories no,yes,{mark}",
        )
        for mark in ("NA", "#N/A")
    ),
    Case(
        # '90%' beside '0.9' were two categories: percent 0.500 for 1.000, exit 0
        # (tests/test_outside_tables11.py)
        "agree/percentages-beside-numbers",
        AGREE_PERCENT,
        _agree_table("item,r1,r2\n1,80%,80%\n2,90%,0.9\n3,50%,50%\n4,70%,0.7\n"),
        line="failcodes: error: {d}/r.csv:2, field 'r1': rating '80%' and '0.9' (line 3, "
        "column 'r2'): one rating scale written as percentages and as numbers (Excel shows 0.9 "
        "as 90%)? each would be a category of its own; write it one way",
    ),
    Case(
        # 'u1 ' below 'u1' was a unit of its own: percent 0.500 for 0.667, exit 0
        # (tests/test_outside_tables11.py)
        "agree/unit-id-with-spaces-around-it",
        AGREE_PERCENT,
        _agree_table("item,r1,r2\nu1,yes,\nu2,no,no\nu3,yes,no\nu1 ,,yes\n"),
        line="failcodes: error: {d}/r.csv:5, field 'item': unit 'u1 ' is 'u1' (line 2) with "
        "spaces around it: one unit on two rows (each spelling would be a unit of its own)? "
        "write it one way",
    ),
    Case(
        # each rater's 'Mean' under a long table's units was one more unit: percent 0.600 for
        # 0.750, exit 0 (tests/test_outside_tables11.py)
        "agree/long-table-mean-rows",
        AGREE_PERCENT,
        _agree_table(
            "unit,rater,rating\n1,A,3\n1,B,3\n2,A,2\n2,B,5\n3,A,1\n3,B,1\n4,A,3\n4,B,3\n"
            "Mean,A,2.25\nMean,B,3\n"
        ),
        line="failcodes: error: {d}/r.csv:10, field 'unit': a row of totals? its unit 'Mean' "
        "names a total; it would be read as one more unit: delete the row (a unit so named: "
        "--unit-column unit reads every row)",
    ),
    Case(
        # 'A vs label' was tested with the reference scored against itself (F1 1, recall 1),
        # exit 0 (51c871d)
        "compare/reference-also-a-system",
        ("compare", "{d}/preds.csv", "--truth", "label", "--systems", "A,label"),
        _write({"preds.csv": "unit,label,A,B\nu1,1,1,0\nu2,1,0,1\nu3,0,0,1\n"}),
        line="failcodes: error: {d}/preds.csv, field 'label': 'label' is the reference "
        "(--truth) and a system (--systems): scored against itself (F1 1, recall 1) it would "
        "enter every test as one more system; leave it out of --systems",
    ),
    Case(
        # '--systems $A,$B,$C' with $C empty compared 2 systems on traces and said "no column
        # ''" on a FILE (9fa97e5)
        "compare/systems-empty-name",
        ("compare", "{d}/preds.csv", "--truth", "label", "--systems", "A,B,"),
        _write({"preds.csv": "unit,label,A,B\nu1,1,1,0\nu2,1,0,1\nu3,0,0,1\n"}),
        line="failcodes: error: --systems 'A,B,': an empty system name (a comma at an end or "
        "two together); give the names as A,B",
    ),
    Case(
        # the dry run took both and said the run would stop at the budget; the run refuses
        # the pair before it starts (cd399ad)
        "judge/budget-with-batch-dry-run",
        (*JUDGE, "--judge", "openai:gpt-5-mini", "--batch", "--budget", "0.0001"),
        _mk_dir(),
        line="failcodes: error: --budget is not supported with --batch (batches are paid when "
        "they run): leave it out, and see the cost first with --dry-run",
    ),
    Case(
        "compare/systems-named-twice",
        ("compare", "{d}/preds.csv", "--truth", "label", "--systems", "A,A"),
        _write({"preds.csv": "unit,label,A,B\nu1,1,1,0\nu2,1,0,1\nu3,0,0,1\n"}),
        line="failcodes: error: --systems 'A,A': A given twice; name each once",
    ),
    Case(
        # s1 found under both mappings was attributed twice: the summary counted A's 3
        # disagreements of 2 sentences as 3, exit 0 (46b9175)
        "attribute/disagreements-of-two-mappings",
        ("attribute", "--from", "{d}/dis.jsonl", "-o", "{d}/att"),
        _two_mappings,
        line="failcodes: error: {d}/dis.jsonl:2, field 'mapping': the disagreement here is "
        "under mapping 'non_supported', the first (line 1) under 'refuted': a sentence found "
        "under both would be attributed (and counted) once per mapping; attribute one "
        "mapping's disagreements at a time (failcodes disagreements -m MAPPING -o FILE)",
    ),
    Case(
        # a hand-written 'Exact entity' read as none of entity_match's codes: human and
        # corrected exact_entity 0.0 [0.0, 9.5] against the judge's 50.0, exit 0 (c5cde12)
        "report/review-code-not-in-the-codebook",
        ("report", "{d}", "-o", "{d}/rep"),
        _review_code_not_in_the_codebook,
        line="failcodes: error: {d}/review/alice.jsonl:1, field 'codes.entity_match': 'Exact "
        "entity' is not a code of entity_match in medical-fact-check v1 (valid: exact_entity, "
        "partial_entity, entity_mismatch, irrelevant)",
    ),
    Case(
        # refused as "task 1 is not a Label Studio task object", not saying what to export
        # instead (eb5437a)
        "labelstudio-import/json-min-export",
        ("labelstudio", "import", "{d}/min.json", "--part", "retrieval", "-o", "{d}/a.jsonl"),
        _json_min,
        line="failcodes: error: {d}/min.json: task 1 is a JSON-MIN row (one row per submitted "
        "annotation: a skipped task is left out, and so is the judge's prediction the reviewer "
        "was shown): export the project as JSON instead",
    ),
    Case(
        # sentence ids numbered per answer whose rows agreed were merged into q1's labels: 2
        # labels for 4 sentences (2 errors), exit 0 (tests/test_outside_ingest11.py)
        "ingest-generic/label-rule-sentence-of-two-questions",
        (
            *("ingest", "generic", "{d}/tab.csv", "-o", "{d}/t.jsonl"),
            *("--labels-out", "{d}/l.jsonl", "--map", "qid=question_id"),
            *("--map", "sid=sentence_id", "--system", "A"),
            *("--label-rule", "gold = wrong -> error", "--option", "ids=claim"),
            *("--option", "label_level=sentence"),
        ),
        _write({"tab.csv": PER_ANSWER}),
        line="failcodes: error: {d}/tab.csv:4, field 'sentence_id': sentence '1' is under "
        "question 'q2' here but 'q1' at line 2: a sentence id names one answer's sentence "
        "(numbered per answer? --option sentence_ids=question makes it 'q2:1')",
    ),
    Case(
        # q1's and q2's s1 pooled into one 'majority of 5' label, q2's gone, exit 0
        # (tests/test_outside_ingest11.py)
        "ingest-generic-labels/consensus-sentence-of-two-questions",
        (
            *("ingest", "generic-labels", "{d}/votes.csv", "-o", "{d}/l.jsonl"),
            *("--option", "consensus=majority"),
        ),
        _write(
            {
                "votes.csv": "question_id,sentence_id,annotator,has_error\n"
                "q1,s1,a,true\nq1,s1,b,true\nq1,s1,c,true\nq2,s1,d,false\nq2,s1,e,false\n"
            }
        ),
        line="failcodes: error: {d}/votes.csv:5, field 'question_id': sentence 's1' is under "
        "question 'q2' here but 'q1' at line 2: its labels are two answers' sentences, not "
        "votes on one (numbered per answer? --option sentence_ids=question makes it 'q2:s1')",
    ),
    Case(
        # 1.0/0.0 (pandas' float booleans) read as true/false; 2.0 is no boolean (5865987)
        "ingest-generic-labels/has-error-float-two-csv",
        ("ingest", "generic-labels", "{d}/l.csv", "-o", "{d}/o.jsonl"),
        _write({"l.csv": "sentence_id,has_error\n1,0.0\n2,2.0\n"}),
        line="failcodes: error: {d}/l.csv:3, field 'has_error': expected true or false (or "
        "1/0, yes/no), got '2.0'; " + HAS_ERROR_WAY,
    ),
    Case(
        "ingest-generic-labels/has-error-float-two-parquet",
        ("ingest", "generic-labels", "{d}/l.parquet", "-o", "{d}/o.jsonl"),
        _has_error_parquet,
        line="failcodes: error: {d}/l.parquet:2, field 'has_error': expected true or false "
        "(or 1/0, yes/no), got the number 2.0; " + HAS_ERROR_WAY,
    ),
    # 4.5 as an id: 1.10 and 1.1 are one float, so two ids would be one (a49ecc5)
    Case(
        "ingest-generic/fractional-number-id",
        ("ingest", "generic", "{d}/t.parquet", "-o", "{d}/o.jsonl"),
        _id_parquets([1.0, 2.0, 4.5], [1, 2, 3]),
        line="failcodes: error: {d}/t.parquet:3, " + FRACTION,
    ),
    Case(
        "ingest-generic-labels/fractional-number-id",
        ("ingest", "generic-labels", "{d}/l.parquet", "-o", "{d}/o.jsonl"),
        _id_parquets([1, 2, 3], [1.0, 2.0, 4.5]),
        line="failcodes: error: {d}/l.parquet:3, " + FRACTION,
    ),
    Case(
        "metrics/fractional-number-id",
        ("metrics", "--traces", "{d}/t.parquet", "--labels", "{d}/l.parquet", "-m", "refuted"),
        _id_parquets([1.0, 2.0, 4.5], [1, 2, 3]),
        line="failcodes: error: {d}/t.parquet:3, " + FRACTION,
    ),
    Case(
        # a list of numbers was named 'got list' (a null item of a list of texts too, now
        # no passage) (04f31f6)
        "ingest-generic/passage-column-of-numbers",
        (
            *("ingest", "generic", "{d}/p.parquet", "-o", "{d}/t.jsonl"),
            *("--map", "id=claim_id", "--system", "S", "--passage-column", "ev=src"),
        ),
        _passage_numbers,
        line="failcodes: error: {d}/p.parquet:1, field 'ev': a passage column holds text or a "
        "list of texts, got a list holding int",
    ),
    # before, from the library: no file, line or field, and the project's lock file rewritten;
    # the line is the proposal's item (yaml.safe_dump: four top-level keys, then `proposals:`)
    _round_two_case(
        # renamed to round 1's leaf 'Animal study': added again and counted as new
        # (accumulation r2 +2 for 1 new pattern), exit 0 (fce48a1)
        "rename-to-an-existing-leaf",
        {"r0002-p01": _rename_to("animal studies"), "r0002-p02": ACCEPT},
        ":5, field 'new_name': r0002-p01: renamed to 'animal studies', the name of "
        "leaf:animal_study in scope already: it would add that pattern again and count it as "
        "new; decide merge with target leaf:animal_study",
    ),
    _round_two_case(
        # p01 renamed like p02: the decisions were written, then closing the round failed on
        # a duplicate id (the round stuck with its decisions recorded) (fce48a1)
        "rename-onto-another-addition-of-the-round",
        {"r0002-p01": _rename_to("Dose regimen differs"), "r0002-p02": ACCEPT},
        ":30, field 'decision': r0002-p02: accepted as 'Dose regimen differs', as r0002-p01 is "
        "in this round: one pattern would be added twice; merge one into the other or give "
        "them different names",
    ),
    _round_two_case(
        # a merge target not of the proposal's dimension named no file, line or field either
        "merge-target-of-no-dimension-of-the-proposal",
        {"r0002-p01": {"decision": "merge", "target": "leaf:nope"}},
        ":5, field 'target': r0002-p01: merge target 'leaf:nope' is not a subcode or leaf of "
        "scope (valid: subcode:exact_scope, subcode:different_context, leaf:animal_study)",
    ),
]


def _ls_export(*units: tuple[int, str]) -> str:
    """A Label Studio JSON export: a task per retrieval unit, each annotated by user 3."""
    from failcodes.labelstudio.tasks import build_tasks
    from failcodes.units import UnitKind
    from tests.labelstudio_helpers import retrieval_unit, toy_codebook

    tasks = []
    for n, entity in units:
        data = build_tasks([retrieval_unit(n)], toy_codebook(), UnitKind.RETRIEVAL)[0]["data"]
        result = [
            {"from_name": d, "to_name": "claim", "type": "choices", "value": {"choices": [c]}}
            for d, c in (("entity", entity), ("scope", "exact_scope"))
        ]
        ann = {"completed_by": 3, "result": result, "updated_at": "2026-12-01T09:00:00Z"}
        tasks.append({"id": 100 + n, "data": data, "annotations": [ann], "project": 7})
    return json.dumps(tasks)


LS_IMPORT = ("labelstudio", "import", "-p", "retrieval", "-c", "{d}/cb.yaml", "--user", "3=alice")


def _imported_then_deleted(d: Path) -> None:
    """review/alice.jsonl imported from tasks 101 and 102; later.json: 102 deleted since."""
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook

    write_codebook(d / "cb.yaml", toy_codebook())
    _write({"first.json": _ls_export((1, "irrelevant"), (2, "exact_entity"))})(d)
    _write({"later.json": _ls_export((1, "irrelevant"))})(d)
    argv = [a.replace("{d}", str(d)) for a in LS_IMPORT]
    assert main_quiet([*argv, str(d / "first.json"), "-o", str(d / "review/alice.jsonl")])


def _unit_two() -> str:
    from tests.labelstudio_helpers import retrieval_unit

    return retrieval_unit(2).id


def _one_reviewer_two_names(d: Path) -> None:
    """tests/test_outside_shapes8.py's judged and reviewed study; alice's reviews again in
    review/export.jsonl as 'label-studio-user-3' (same time, lead time and codes)."""
    from tests.test_outside_shapes8 import _judge_and_review

    _judge_and_review(d, "broader_scope")
    alice = d / "review" / "alice.jsonl"
    rows = [{**json.loads(x), "lead_time_s": 4.25} for x in alice.read_text().splitlines()]
    _write({"review/alice.jsonl": _jsonl(rows)})(d)
    again = [{**r, "coder": "label-studio-user-3"} for r in rows]
    _write({"review/export.jsonl": _jsonl(again)})(d)


#: gpt's and claude's verdicts, each with its own reasoning column, and a passage column of gpt
WIDE_SYSTEMS = (
    "question_id,sentence_id,claim,gpt,claude,gpt_reasoning,claude_reasoning,gpt-4o doc\n"
    "q1,s1,A lowers B,supported,refuted,GPT: a trial shows it,Claude: no trial,p1\n"
    "q1,s2,C cures D,refuted,supported,GPT: no,Claude: yes,p2\n"
)

# session 12's refusals (issue 30), each tested in its outside file with the numbers around it
SESSION12_CASES: list[Case] = [
    Case(
        # the newer export (task 102 deleted in Label Studio) written over the first import:
        # 1 annotation over 2, unit 2's review gone, exit 0 (d4db404)
        "labelstudio-import/over-a-file-holding-reviews-the-export-lacks",
        (*LS_IMPORT, "{d}/later.json", "-o", "{d}/review/alice.jsonl"),
        _imported_then_deleted,
        line="failcodes: error: {d}/review/alice.jsonl: holds 1 annotation(s) that this export "
        f"does not (first: unit {_unit_two()} by alice; tasks or annotations deleted in Label "
        "Studio?): writing would lose them; write to another file (-o), or move this one away "
        "first",
    ),
    Case(
        # R's NA under 'gold = bad -> error' got the implied no_error: one more true negative
        # (2 error / 2 no-error, exit 0), where the same frame as Parquet was refused (7c98497)
        "ingest-generic/label-rule-missing-mark-under-an-implied-opposite",
        (
            *("ingest", "generic", "{d}/t.csv", "-o", "{d}/t.jsonl"),
            *("--labels-out", "{d}/l.jsonl", "--system", "A"),
            *("--label-rule", "gold = bad -> error"),
        ),
        _write(
            {
                "t.csv": "question_id,sentence_id,claim,verdict,gold\nq1,s1,a,supported,ok\n"
                "q1,s2,b,refuted,bad\nq2,s3,c,supported,NA\nq2,s4,d,refuted,bad\n"
            }
        ),
        line="failcodes: error: {d}/t.csv:4, field 'gold': no value ('NA', a missing mark), and "
        "--label-rule 'gold = bad -> error' gives no_error to the other values, not to a row "
        "without one: add 'otherwise -> skip' to leave such rows unlabelled (or 'otherwise -> "
        "no_error')",
    ),
    Case(
        # 'overreach;conflict' beside 'conflict;overreach' (parts never rated alone) were two
        # categories that disagreed: percent 0.500 for the sets' 0.750, exit 0 (bb26071)
        "agree/one-set-of-codes-joined-in-two-orders",
        AGREE_PERCENT,
        _agree_table(
            "id,r1,r2\nu1,overreach;conflict,conflict;overreach\nu2,none,none\n"
            "u3,overreach;conflict,overreach;conflict\nu4,none,overreach;conflict\n"
        ),
        line="failcodes: error: {d}/r.csv:2, field 'r2': 'conflict;overreach' holds the codes of "
        "'overreach;conflict' (line 2, column 'r1') written another way (order or spacing): "
        "read as one category each they would disagree; compare cells as sets with --sets ';' "
        "(exact-set agreement, alpha with the MASI and Jaccard distances)",
    ),
    *(
        Case(
            # a column named after one system went into every system's trace: claude's
            # traces held GPT's reasoning, coded as claude's, exit 0 (f0c7730)
            f"ingest-generic/verdict-columns-with-{what}-column-of-one-system",
            (
                *("ingest", "generic", "{d}/w.csv", "-o", "{d}/t.jsonl"),
                *("--map", "claude_reasoning=", *argv),
            ),
            _write({"w.csv": WIDE_SYSTEMS}),
            # refused where the column is read: the file, its header line and the field
            # (t13left: f0c7730 named the column alone, an option error)
            line=f"failcodes: error: {{d}}/w.csv:1, field {column!r}: column {column!r} names "
            f"system {system!r}, but "
            "--verdict-column gives every system's trace the same columns (claude's would hold "
            "it too): ingest each system apart (its --verdict-column, its own --map) and give "
            "the trace files together",
        )
        for what, column, system, argv in (
            (
                "reasoning",
                "gpt_reasoning",
                "gpt",
                (
                    *("--verdict-column", "gpt", "--verdict-column", "claude"),
                    *("--map", "gpt-4o doc=", "--map", "gpt_reasoning=reasoning"),
                ),
            ),
            (
                "passage",
                "gpt-4o doc",
                "gpt-4o",
                (
                    *("--verdict-column", "gpt=gpt-4o", "--verdict-column", "claude"),
                    *("--map", "gpt_reasoning=", "--passage-column", "gpt-4o doc"),
                ),
            ),
        )
    ),
    *(
        Case(
            # a totals row under the labels was written as the label 'Total' ('wrote 3
            # labels' for 2, exit 0), refused only later by metrics, naming the file written
            # (74c7e55)
            f"ingest-generic-labels/totals-row-under-the-labels{suffix}",
            ("ingest", "generic-labels", "{d}/l.csv", "-o", "{d}/l.jsonl", *rule),
            _write({"l.csv": table}),
            line="failcodes: error: {d}/l.csv:4, field 'sentence_id': a row of totals? its "
            "sentence_id 'Total' names a total, not a label: delete the row",
        )
        for suffix, table, rule in (
            ("", "sentence_id,has_error\ns1,true\ns2,false\nTotal,1\n", ()),
            (
                "-under-a-label-rule",
                "sentence_id,errors\ns1,yes\ns2,no\nTotal,1\n",
                ("--label-rule", "errors = yes -> error; otherwise -> no_error"),
            ),
        )
    ),
    Case(
        # the same labels given to metrics as they are (74c7e55: refused where labels are read)
        "metrics/totals-row-under-the-labels",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.jsonl": GOOD_TRACES,
                "l.csv": "sentence_id,has_error\nq0-s1,true\nq1-s1,false\nTotal,1\n",
            }
        ),
        line="failcodes: error: {d}/l.csv:4, field 'sentence_id': a row of totals? its "
        "sentence_id 'Total' names a total, not a label: delete the row",
    ),
    Case(
        # 'full' and 'Full' write data/full.* and data/Full.*, one file on macOS and Windows:
        # the second ingest replaced the first, full's metrics the pilot's rows, exit 0; Linux
        # kept them apart, so the study ran differently (e15626e)
        "run/study-data-set-names-differing-in-case",
        ("run", "{d}/study", "--plan"),
        _study(
            {
                "failcodes.toml": _study_file(
                    "[[datasets]]\n",
                    '[[datasets]]\nname = "Ragchecker-Example"\n[[datasets.ingest]]\n'
                    'adapter = "ragchecker"\npaths = ["bundled:ragchecker/checking_outputs.json"]'
                    "\n\n[[datasets]]\n",
                )
            }
        ),
        # the repeat's own line (18: its name = "ragchecker-example"; t13left: e15626e named
        # the field 'datasets' and no line)
        line="failcodes: error: {d}/study/failcodes.toml:18, field 'datasets[1].name': data set "
        "name 'ragchecker-example' is used twice ('Ragchecker-Example' differs only in case: one "
        "file name on macOS and Windows)",
    ),
    Case(
        # one reviewer's annotations under two coder names (pulled by email; imported without
        # --user) counted one person as two reviewers, exit 0 (85524ae). Scope, judge vs
        # alice: Fleiss 7/15 = 0.467; with alice twice, r0, r2, r3 agree fully, r1 (judge
        # exact, alice broader twice) 1 of 3 pairs: p_o = (3 + 1/3) / 4 = 5/6; margins exact
        # 4/12, broader 8/12: p_e = 1/9 + 4/9 = 5/9; Fleiss (5/6 - 5/9) / (4/9) = 0.625
        "report/one-reviewer-under-two-coder-names",
        ("report", "{d}", "--codebook", str(CODEBOOK), "-o", "{d}/rep"),
        _one_reviewer_two_names,
        line="failcodes: error: {d}/review/export.jsonl:1, field 'coder': the review of unit r0 "
        "by 'label-studio-user-3' is the one by 'alice' in review/alice.jsonl (same time, lead "
        "time and codes): one Label Studio annotation under two coder names would count one "
        "person as two reviewers; keep one file (name the user with `labelstudio import --user "
        "ID=EMAIL`)",
    ),
]


def _judged(*kinds: str) -> Setup:
    """tests/test_outside_red13c.py's traces (two retrievers, three (claim, passage) units),
    each kind judged offline into a folder of its name."""

    def setup(d: Path) -> None:
        from tests.test_outside_red13c import _traces

        src = _traces(d)
        for kind in kinds:
            assert main_quiet(["judge", kind, "--from", str(src), "-o", str(d / kind)])

    return setup


def _adjudicator_after_the_pool(d: Path) -> None:
    """tests/test_outside_red13b.py's alice and bob on u1-u4, then an 'adjudicator' coding
    as alice did."""
    from tests.test_outside_red13b import _pool_annotations

    anns = _pool_annotations()
    extra = [a.model_copy(update={"coder": "adjudicator"}) for a in anns if a.coder == "alice"]
    _write({"ann.jsonl": _jsonl([a.model_dump(mode="json") for a in anns + extra])})(d)


def _judge_human_on_the_last_line(d: Path) -> None:
    """dr_a (human) and the judge (llm on u0-u2, human on u3) on entity, u0-u3."""
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.units import UnitKind
    from tests.labelstudio_helpers import toy_codebook

    codes = ["exact_entity", "partial_entity", "irrelevant"]
    anns = [
        Annotation(
            unit_id=f"u{i}",
            unit_kind=UnitKind.RETRIEVAL,
            codebook=toy_codebook().ref(),
            coder=who,
            coder_kind=CoderKind.HUMAN if who == "dr_a" or i == 3 else CoderKind.LLM,
            codes={"entity": codes[(i + (who == "judge")) % 3]},
        )
        for i in range(4)
        for who in ("dr_a", "judge")
    ]
    _write({"ann.jsonl": _jsonl([a.model_dump(mode="json") for a in anns])})(d)


def _per_system_labels(d: Path) -> None:
    """tests/test_outside_red36.py's two systems, each ingested apart with its labels: q1:1
    reads 'Aspirin prevents pre-eclampsia.' in sysA's and 'Metformin is first line.' in
    sysB's."""
    head = "qid,sid,text,verdict,expert\n"
    files = {
        "sysA": "q1,1,Aspirin prevents pre-eclampsia.,refuted,ok\n"
        "q1,2,Aspirin is safe.,refuted,bad\n",
        "sysB": "q1,1,Metformin is first line.,supported,ok\n",
    }
    for system, rows in files.items():
        (d / f"{system}.csv").write_text(head + rows, encoding="utf-8")
        assert main_quiet(
            [
                *("ingest", "generic", str(d / f"{system}.csv"), "--system", system),
                *("--map", "qid=question_id", "--map", "sid=sentence_id"),
                *("--map", "text=claim", "--map", "text=sentence"),
                *("--option", "sentence_ids=question", "--label-rule", "expert = bad -> error"),
                *("-o", str(d / f"{system}.t.jsonl")),
                *("--labels-out", str(d / f"{system}.l.jsonl")),
            ]
        )


def _judge_reviews_in_review(d: Path) -> None:
    """tests/test_outside_red36.py's study: the judge on r0-r3, and in review/second.jsonl
    alice on r0 then a second judge 'gpt-judge' (llm) on r1-r3."""
    from failcodes import codebook as codebooks
    from failcodes.annotations import CoderKind
    from tests.review_versions import coded, write_annotations

    v1 = codebooks.bundled(version=1)
    high = {
        "entity_match": "exact_entity",
        "scope": "exact_scope",
        "trustworthy": "trustworthy_source",
        "evidence_polarity": "direct_polarity",
        "chunking": "well_chunked",
    }
    judge = ["exact_scope", "exact_scope", "broader_scope", "broader_scope"]
    alice = ["exact_scope", "broader_scope", "broader_scope", "broader_scope"]
    write_annotations(
        d / "judge" / "d1" / "retrieval" / "annotations.jsonl",
        [
            coded(f"r{i}", v1.ref(), "judge", {**high, "scope": s}, retrieval=True)
            for i, s in enumerate(judge)
        ],
    )
    other = [
        coded(f"r{i}", v1.ref(), "alice", {**high, "scope": s}, retrieval=True)
        for i, s in enumerate(alice)
    ]
    llm = [a.model_copy(update={"coder": "gpt-judge", "coder_kind": CoderKind.LLM}) for a in other]
    write_annotations(d / "review" / "second.jsonl", [other[0], *llm[1:]])


def _zeros_inside(d: Path) -> None:
    """tests/test_outside_shapes12.py's A (s007, s008) and B (s7, s8), labels on s007, s008."""
    from tests.test_outside_shapes12 import _zeros_inside as zeros

    zeros(d, "sentence")


#: q1..q4 of a wide table, (yes,yes), (no,no), (yes,no), (no,no): 3/4 = 0.750 by hand
Q_BODY = "q1,yes,yes\nq2,no,no\nq3,yes,no\nq4,no,no\n"
#: the same as a long table, raters A and B
Q_LONG = "".join(
    f"q{u},{r},{v}\n"
    for u, pair in enumerate([("yes", "yes"), ("no", "no"), ("yes", "no"), ("no", "no")], 1)
    for r, v in zip("AB", pair, strict=True)
)
#: how `agree` says to compare cells joined with a separator it can split on
SETS_WAY = (
    "compare cells as sets with --sets '{}' (exact-set agreement, alpha with the MASI and "
    "Jaccard distances)"
)
#: adjudicated as one more annotator (tests/test_outside_red36.py)
VOTES = {
    "s1": {"dr_a": True, "dr_b": False, "adjudicated": True},
    "s2": {"dr_a": True, "dr_b": False, "adjudicated": False},
    "s3": {"dr_a": False, "dr_b": False, "adjudicated": False},
    "s4": {"dr_a": True, "dr_b": True, "dr_c": False, "adjudicated": True},
}


def _hidden_draft_column(d: Path) -> None:
    """tests/test_outside_shapes6.py's r.xlsx: r1, r2 and a hidden draft column D."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["case", "r1", "r2", "r3_draft"])
    rows = [("y", "y", "n"), ("n", "n", "y"), ("y", "n", "n"), ("n", "n", "y")]
    for i, row in enumerate(rows):
        sheet.append([f"c{i}", *row])
    sheet.column_dimensions["D"].hidden = True
    book.save(d / "r.xlsx")


def _templates() -> str:
    from failcodes.judge.prompts import template_hash

    return template_hash()


def _older_llm_journal(d: Path) -> None:
    """t.jsonl, and run/ holding the journal of an LLM run begun before prompt_hash, under
    other prompt templates (template_hash 0...0)."""
    from failcodes.judge.journal import Journal

    (d / "t.jsonl").write_text(GOOD_TRACES, encoding="utf-8")
    journal = Journal(d / "run")
    meta = {"kind": "retrieval", "judge": "openai:gpt-5-mini", "coder_kind": "llm"}
    journal.bind({**meta, "template_hash": "0" * 64})
    journal.close()


# session 13's refusals (issue 30), each tested in its outside file with the numbers around it
SESSION13_CASES: list[Case] = [
    *(
        Case(
            # the offline baseline coded the 3 units into retrieval/. A dry run of gpt-5-mini
            # into it said "3 already done ... estimated cost $0.0000", exit 0 (789daf4); the
            # run was refused after its empty session was exported: summary.json said judge
            # gpt-5-mini, 0 units, cost 0 (the report's judge cost), exit 2 (t14bad). Both
            # wrote the lock file and made the default cache annotations/judge-cache.sqlite
            f"judge/{what}-into-another-judges-run-folder",
            (
                *("judge", "retrieval", "--from", "{d}/traces.jsonl", "-o", "{d}/retrieval"),
                *("--judge", "openai:gpt-5-mini", *extra),
            ),
            _judged("retrieval"),
            line="failcodes: error: {d}/retrieval holds a run with judge='offline', not "
            "'openai:gpt-5-mini'; use another output folder (-o) for a different run",
            env=env,
        )
        for what, extra, env in (
            ("dry-run", ("--dry-run",), ()),
            ("run", (), (("OPENAI_API_KEY", "sk-test"),)),
        )
    ),
    *(
        Case(
            # the two folders swapped: the other kind's annotations skipped, both items
            # undetermined, Table 8 'rows 2 coded 0' per retriever, exit 0 (012e4a2)
            f"attribute/{kind}-run-given-as-{given}",
            (
                *("attribute", "--from", "{d}/traces.jsonl", "-o", "{d}/att"),
                *(f"--{given}", f"{{d}}/{kind}"),
            ),
            _judged(kind),
            line=f"failcodes: error: {{d}}/{kind}: given as --{given}, it holds {n} {held} "
            f"annotation(s) (failcodes judge {kind}) and no {want} one: give --{given} the run "
            f"of failcodes judge {given}",
        )
        # 2 verification units (the two systems' (claim, passages, reasoning) differ); 3
        # retrieval units (p1 shown by both retrievers, p2, p3)
        for kind, given, n, held, want in (
            ("reasoning", "retrieval", 2, "verification", "retrieval"),
            ("retrieval", "reasoning", 3, "retrieval", "verification"),
        )
    ),
    Case(
        # an 'adjudicator' who sided with alice on every unit was a third coder (55beed1).
        # entity, alice and bob: Fleiss 7/15 (tests/test_outside_red13b.py's pool). With the
        # adjudicator, three ratings per unit: u1 xxx 1, u2 xxx 1, u3 xyx 1/3, u4 yyy 1:
        # p_o = (3 + 1/3) / 4 = 5/6; margins x 8/12, y 4/12: p_e = 4/9 + 1/9 = 5/9;
        # (5/6 - 5/9) / (4/9) = 5/8 = 0.625, printed at exit 0
        "agree/annotations-with-an-adjudicator-coder",
        ("agree", "{d}/ann.jsonl", "--bootstrap", "0"),
        _adjudicator_after_the_pool,
        line="failcodes: error: {d}/ann.jsonl:9, field 'coder': coder 'adjudicator' is named "
        "like a consensus ('adjudicator'): its codes resolve the coders' disagreements, and "
        "read as one more coder they raise agreement; take its annotations out of the file (or "
        "rename the coder, if a rater)",
    ),
    Case(
        # the judge llm on 3 lines, human on the last: the last line decided, so the judge
        # was a human and the 3 codes x 4 human-vs-machine rows were not computed (0 rows),
        # exit 0 (43ed081; was tests/test_outside_red13b.py's test of it)
        "agree/annotations-coder-given-two-kinds",
        ("agree", "{d}/ann.jsonl", "--bootstrap", "0"),
        _judge_human_on_the_last_line,
        line="failcodes: error: {d}/ann.jsonl:8, field 'coder_kind': coder 'judge' is human "
        "here and llm on line 2: one coder is one kind (the human vs machine rows follow it)",
    ),
    # the ratings-table shapes of session 13 (tests/test_outside_shapes13.py has the way
    # through and the number after each)
    Case(
        # r2 picked '1 (low)' from a drop-down where r1 typed 1: two categories, percent 0.500
        # where the raters agree on all 4 units (1.000 by hand), exit 0 (8e1ffcb)
        "agree/number-with-its-label-beside-the-number-alone",
        AGREE_PERCENT,
        _agree_table("item,r1,r2\n1,1,1 (low)\n2,2,2\n3,3,3 (high)\n4,1,1\n"),
        line="failcodes: error: {d}/r.csv:2, field 'r2': rating '1 (low)' and '1' (line 2, "
        "column 'r1'): one rating written with and without its label? each would be a "
        "category of its own; write it one way",
    ),
    *(
        Case(
            # two exports appended, each with its header: one more unit whose raters
            # disagreed, percent 0.600 for the 4 units' 0.750 by hand, exit 0 (b063f4b)
            f"agree/{shape}-header-repeated-between-the-rows",
            AGREE_PERCENT,
            _agree_table(table),
            line=f"failcodes: error: {{d}}/r.csv:{n}, field {unit!r}: the header again (each "
            "cell is its column's name): two files appended? it would be read as one more unit: "
            "delete the row",
        )
        for shape, n, unit, table in (
            ("wide", 4, "item", "item,r1,r2\n1,yes,yes\n2,no,no\nitem,r1,r2\n3,yes,no\n4,no,no\n"),
            (
                "long",
                6,
                "unit",
                "unit,rater,rating\n1,A,yes\n1,B,yes\n2,A,no\n2,B,no\nunit,rater,rating\n"
                "3,A,yes\n3,B,no\n4,A,no\n4,B,no\n",
            ),
        )
    ),
    *(
        Case(
            # a row naming the columns under the header above text ids: unit 'ID' whose
            # raters disagreed, percent 0.600 for the 4 units' 0.750, no word (c96ff63)
            f"agree/{shape}-row-naming-the-columns-above-text-ids",
            AGREE_PERCENT,
            _agree_table(table),
            line="failcodes: error: {d}/r.csv:2, field " + line,
        )
        for shape, table, line in (
            (
                "wide",
                "item,r1,r2\nID,Dr A,Dr B\n" + Q_BODY,
                "'item': a row of units or descriptions under the header? its unit id 'ID' "
                "names the unit column, and its ratings ('Dr A', 'Dr B') are found on no other "
                "row; it would be read as one more unit: delete the row (a unit so named: "
                "--unit-column item reads every row as a unit)",
            ),
            (
                "long",
                "unit,rater,rating\nunit id,rater name,rating (yes/no)\n" + Q_LONG,
                "'unit': a row of units or descriptions under the header? its unit 'unit id' "
                "names the unit column and its rater 'rater name' is on no other row; it would "
                "be read as a rater of one more unit: delete the row (a unit so named: "
                "--unit-column unit reads every row)",
            ),
        )
    ),
    Case(
        # R's NA among 1-5 scores was a category: unit 2 one more agreeing unit, percent
        # 0.800 where the 4 rated units give 0.750 by hand, exit 0 (ee2ffb8)
        "agree/missing-mark-among-numeric-ratings",
        AGREE_PERCENT,
        _agree_table("item,r1,r2\n1,3,3\n2,NA,NA\n3,2,5\n4,1,1\n5,3,3\n"),
        line="failcodes: error: {d}/r.csv:3, field 'r1': 'NA' among numeric ratings: a missing "
        "rating (R writes NA)? leave the cell empty (it would be a category of its own); a "
        "category indeed: list the categories with --categories",
    ),
    Case(
        # r1 and its notes: notes was the second rater, percent 0.333 over the 3 units with a
        # note, exit 0 (da902c5)
        "agree/one-rater-beside-a-notes-column",
        AGREE_PERCENT,
        _agree_table("item,r1,notes\n1,yes,ok\n2,no,\n3,yes,yes\n4,no,unsure\n"),
        line="failcodes: error: {d}/r.csv: cannot tell the rater columns: notes named like a "
        "note, a confidence or a time (or a total) and 1 other column left; name the raters "
        "with --raters",
    ),
    Case(
        # one rater's column twice after a merge ('Rater1', 'rater1'): Fleiss 0.333 where
        # the two raters' is 0.000 (statsmodels, tests/test_outside_shapes12.py), exit 0
        # (c21d66c)
        "agree/rater-columns-differing-only-in-case",
        ("agree", "{d}/r.csv", "--stat", "fleiss", "--bootstrap", "0"),
        _agree_table("item,Rater1,rater1,r2\n1,1,1,0\n2,0,0,0\n3,1,1,1\n4,0,0,1\n"),
        line="failcodes: error: {d}/r.csv:1, field 'rater1': rater columns 'Rater1' and "
        "'rater1' differ only in case, spacing or Unicode form: one rater's ratings twice? "
        "(each was a rater, inflating agreement); rename or drop one, or name the raters with "
        "--raters to keep both",
    ),
    *(
        Case(
            # each cell one category: unit 4's two orders of one set disagreed, percent
            # 0.500 where the sets agree on 3 of 4 units (0.750 by hand), exit 0 (f389da9,
            # 32b305f, 5a31678)
            f"agree/cells-joining-codes-with-{name}",
            AGREE_PERCENT,
            _agree_table(f"item,r1,r2\n1,x{sep}y,x\n2,y,y\n3,x,x\n4,y{sep}x,x{sep}y\n"),
            line=f"failcodes: error: {{d}}/r.csv:2, field 'r1': 'x{sep}y' looks like a set of "
            f"codes ('x', 'y' are ratings of their own elsewhere): {way}, or --sets none to "
            "read each cell as one category",
        )
        for name, sep, way in (
            ("a-slash", "/", SETS_WAY.format("/")),
            ("ampersand", " & ", SETS_WAY.format("&")),
            (
                "and",
                " and ",
                "join each cell's codes with ';' and compare cells as sets with --sets ';'",
            ),
        )
    ),
    Case(
        # two raters' one-hot codes, a column per code and rater, the code first: four
        # raters, Fleiss -0.175 where each code's Cohen is 1/3 and 2/3 by hand
        # (tests/test_outside_shapes13.py), exit 0 (t14bad)
        "agree/one-hot-codes-named-code-first",
        AGREE_PERCENT,
        _agree_table(
            "unit,overreach_A,overreach_B,conflict_A,conflict_B\nu1,1,1,0,0\nu2,1,0,1,1\n"
            "u3,0,0,0,1\nu4,0,0,1,1\nu5,1,1,0,0\nu6,0,1,0,0\n"
        ),
        line="failcodes: error: {d}/r.csv:1, field 'conflict_A': rater columns overreach_A, "
        "overreach_B and conflict_A, conflict_B look like two fields ('overreach', 'conflict') "
        "of the same raters: each column would be a rater; name the rating's columns with "
        "--raters (e.g. --raters 'overreach_A,overreach_B')",
    ),
    *(
        Case(
            # a traceback, exit 1 (int('two'); DuckDB's ParserException at connect) (cc0dcfe)
            f"metrics/engine-setting-{name.lower()}-{value}",
            ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
            _write({"t.jsonl": GOOD_TRACES, "l.csv": "sentence_id,has_error\nq0-s1,true\n"}),
            # DuckDB's own words on the size sit inside the memory line: its ends are checked
            expect=(f"failcodes: error: {name}={value!r}: ", said),
            env=((name, value),),
        )
        for name, value, said in (
            (
                "FAILCODES_MEMORY",
                "lots",
                "DuckDB cannot read it as a memory size (",
                # then: "); expected a number with a unit, e.g. 4GB or 500MB (unset it for 1GB)"
            ),
            *(
                (
                    "FAILCODES_THREADS",
                    v,
                    "expected a whole number of threads, 1 or more (unset it to use every core)",
                )
                for v in ("two", "0")
            ),
        )
    ),
    Case(
        # a draft column hidden in Excel was a third rater, exit 0 (4fbd438)
        "agree/xlsx-column-hidden-in-excel-holding-values",
        ("agree", "{d}/r.xlsx", "--stat", "cohen"),
        _hidden_draft_column,
        line="failcodes: error: {d}/r.xlsx:1, field 'D': column D is hidden in Excel and holds "
        "values (first at D1), and failcodes reads every column: unhide it (it will be read), "
        "or delete it",
    ),
    Case(
        # all labels claim-level: 'no labelled sentence matches the traces', no file (7213e42)
        "compare/labels-all-claim-level",
        ("compare", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv", "-m", "refuted"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": "claim_id,has_error\nq0-c1,true\nq1-c1,false\n"}),
        line="failcodes: error: {d}/l.csv: all 2 labels are claim-level (claim_id set), so no "
        "sentence has a label; compare pairs sentences: give sentence labels (ingest generic "
        "--label-rule ... --option label_level=sentence makes them)",
    ),
    Case(
        # sentences numbered per answer (1, 2 in q1 and in q2) whose rows agreed were merged
        # into q1's labels: '1 error / 1 no-error' for 4 sentences with 2 errors, exit 0
        # (d7eab56)
        "ingest-generic/sentence-ids-numbered-per-answer",
        (
            *("ingest", "generic", "{d}/tab.csv", "-o", "{d}/t.jsonl", "--labels-out"),
            *("{d}/l.jsonl", "--map", "qid=question_id", "--map", "sid=sentence_id"),
            *("--system", "A", "--label-rule", "gold = wrong -> error", "--option", "ids=claim"),
            *("--option", "label_level=sentence"),
        ),
        _write(
            {
                "tab.csv": "qid,sid,claim,verdict,gold\nq1,1,a,refuted,wrong\n"
                "q1,2,b,supported,ok\nq2,1,c,supported,wrong\nq2,2,d,supported,ok\n"
            }
        ),
        line="failcodes: error: {d}/tab.csv:4, field 'sentence_id': sentence '1' is under "
        "question 'q2' here but 'q1' at line 2: a sentence id names one answer's sentence "
        "(numbered per answer? --option sentence_ids=question makes it 'q2:1')",
    ),
    Case(
        # one label file per system as --labels A --labels B: B's alone were read, sysA
        # scored on sysB's labels, exit 0 (0a98d79; tests/test_outside_red36.py)
        "metrics/labels-given-twice",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/a.csv", "--labels", "{d}/b.csv"),
        _write({"t.jsonl": GOOD_TRACES, "a.csv": LABELS, "b.csv": LABELS}),
        line="failcodes: error: metrics: --labels takes one path and was given 2 ('{d}/a.csv', "
        "'{d}/b.csv'): only the last would be used; give one (several label files: join them "
        "into one)",
    ),
    Case(
        # two spellings of one mapping: each its own row, Holm counting the pair twice
        # (c1f30d2; tests/test_mapping_spellings.py)
        "metrics/one-mapping-given-in-two-spellings",
        (
            *("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/labels.csv"),
            *("-m", "refuted,no_evidence", "-m", "refuted+no_evidence"),
        ),
        _write({"t.jsonl": GOOD_TRACES, "labels.csv": LABELS}),
        line="failcodes: error: mappings 'refuted,no_evidence' and 'refuted+no_evidence' are "
        "the same mapping (errors: no_evidence, refuted); give it once",
    ),
    Case(
        # B writes A's s007 as s7: B read TP 0, FN 1, TN 1 for TP 1, TN 1 by hand, exit 0
        # (2273f7e; tests/test_outside_shapes12.py)
        "metrics/label-id-with-other-leading-zeros-inside",
        ("metrics", "--traces", "{d}/t.csv", "--labels", "{d}/l.csv", "-m", "refuted"),
        _zeros_inside,
        line="failcodes: error: {d}/l.csv:2, field 'sentence_id': the traces write sentence "
        "'s007' also as 's7' (with other leading zeros): the label applies to 's007' only, so "
        "the claims under 's7' count unlabelled and a system that wrote only 's7' is scored as "
        "making no claim for 's007' (no error flagged); write the id one way in every traces "
        "file",
    ),
    Case(
        # 'Not Supported', 'not-supported', 'NS': 'label in {not supported} -> error' gave the
        # other two the opposite label, 1 error of 5 for the clinicians' 3, exit 0 (fe8ade3)
        "ingest-generic-labels/label-written-another-way-than-the-rule-names-it",
        (
            *("ingest", "generic-labels", "{d}/t.csv", "--map", "sid=sentence_id"),
            *("-o", "{d}/l.jsonl", "--label-rule", "label in {not supported} -> error"),
        ),
        _write(
            {
                "t.csv": "sid,label\ns1,Not Supported\ns2,Supported\ns3,not-supported\n"
                "s4,NS\ns5,supported\n"
            }
        ),
        line="failcodes: error: {d}/t.csv:4, field 'label': 'not-supported' is not named by "
        "--label-rule 'label in {not supported} -> error' but looks like 'not supported' "
        "written another way (those rows got the 'no_error' label): name it in the rule too "
        "(e.g. {not supported, not-supported}), or give its own clause if it is another "
        "category",
    ),
    Case(
        # consensus=majority counted the adjudication as a vote: s1 and s2, split 1-1 by the
        # clinicians, decided by it; s4's 2-1 made 3-1, exit 0 (8539e5a)
        "ingest-generic-labels/consensus-with-an-adjudicated-annotator",
        (
            *("ingest", "generic-labels", "{d}/all.csv", "--option", "consensus=majority"),
            *("-o", "{d}/c.jsonl"),
        ),
        _write(
            {
                "all.csv": "sentence_id,question_id,annotator,has_error\n"
                + "".join(
                    f"{sid},q1,{who},{str(err).lower()}\n"
                    for sid, by in VOTES.items()
                    for who, err in by.items()
                )
            }
        ),
        line="failcodes: error: {d}/all.csv:4, field 'annotator': annotator 'adjudicated' is "
        "named like a consensus ('adjudicated'): its labels are a combined label, not one more "
        "vote; to use them as the reference, give a file of its rows alone (without --option "
        "consensus); if it is a clinician, rename it",
    ),
    Case(
        # merged as a study merges them, sysA's and sysB's q1:1 (two texts) became one shared
        # label, each system scored on the other's sentence, exit 0 (5439824)
        "ingest-generic-labels/duplicates-same-one-id-two-sentences",
        (
            *("ingest", "generic-labels", "--option", "duplicates=same", "-o", "{d}/m.jsonl"),
            *("{d}/sysA.l.jsonl", "{d}/sysB.l.jsonl"),
        ),
        _per_system_labels,
        line="failcodes: error: {d}/sysB.l.jsonl:1, field 'sentence_id': sentence 'q1:1' reads "
        "'Metformin is first line.' here but 'Aspirin prevents pre-eclampsia.' at "
        "{d}/sysA.l.jsonl:1: two sentences, one id (if each file is its own system's answer, "
        "give its ingest --option label_scope=system, generic-labels --system NAME, so each "
        "label names its system)",
    ),
    Case(
        # a second judge's codes (coder_kind llm) saved in review/ were human review: the demo
        # study's Table 8 'human-only' shares and the human side of PPI++, no word (9dfd2fc)
        "report/a-judges-codes-in-review",
        ("report", "{d}", "--codebook", str(CODEBOOK), "-o", "{d}/report"),
        _judge_reviews_in_review,
        line="failcodes: error: {d}/review/second.jsonl:2, field 'coder_kind': coder "
        "'gpt-judge' is llm, not a person: review/ holds human reviews (the human side of the "
        "corrected shares and of human vs judge agreement); a judge's codes belong in judge/",
    ),
]


def _formatted_sheet(name: str, fmt: str, dr_b: list[object], zeros: bool = True) -> Setup:
    """``name``: units u1..u4 rated by dr_a (1, 0, 1, 0) and dr_b, dr_b's cells in ``fmt``."""

    def setup(d: Path) -> None:
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        sheet.append(["unit", "dr_a", "dr_b"])
        for i, (a, b) in enumerate(zip([1, 0, 1, 0], dr_b, strict=True)):
            sheet.append([f"u{i + 1}", a, b])
            sheet.cell(row=i + 2, column=3).number_format = fmt
        sheet.sheet_view.showZeros = zeros
        book.save(d / name)

    return setup


def _index_parquet(d: Path) -> None:
    """r.parquet: patients 1, 2 twice (two exports joined), the ids in pandas' index."""
    import pandas as pd

    frame = pd.DataFrame({"patient": [1, 2, 3, 1], "dr_a": list("yyny"), "dr_b": list("ynny")})
    frame.set_index("patient").to_parquet(d / "r.parquet")


def _passages_as_text(d: Path) -> None:
    """t.parquet: a DataFrame's passages column of JSON text (a CSV cell's form)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {"system": ["A"], "question_id": ["q1"], "sentence_id": ["s1"], "claim_id": ["c1"]}
    columns |= {"claim": ["a"], "verdict": ["refuted"], "passages": [PASSAGE_TEXT]}
    pq.write_table(pa.table(columns), d / "t.parquet")
    _write({"l.csv": "sentence_id,has_error\ns1,true\n"})(d)


def _indexed_workbook(d: Path) -> None:
    """l.xlsx as pandas' to_excel writes it: its row index in column A, an empty header."""
    import pandas as pd

    pd.DataFrame({"sentence_id": ["7", "8"], "has_error": [True, False]}).to_excel(d / "l.xlsx")


def _ls_csv_export(d: Path) -> None:
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook

    write_codebook(d / "cb.yaml", toy_codebook())
    _write({"project-7.csv": "id,failcodes_unit_id,entity,annotator\n101,u1,irrelevant,3\n"})(d)


def _ls_csv_export_as_json(d: Path) -> None:
    _ls_csv_export(d)
    (d / "project-7.csv").rename(d / "project-7.json")


def _agreement_then_corrected(d: Path) -> None:
    """An agreement-only study whose agreement/drs.json was computed from ratings.csv, then a
    rating corrected (tests/test_s21_t21agr.py: Cohen 0.600 shown where it is now 0.800)."""
    from failcodes.codebook import bundled, dump

    study = d / "st"
    study.mkdir()
    toml = '[[agreements]]\nname = "planned"\npath = "planned.csv"\nbootstrap = 0\n'
    (study / "failcodes.toml").write_text(
        f'name = "s"\ncodebook = "cb.yaml"\n{toml}', encoding="utf-8"
    )
    (study / "cb.yaml").write_text(dump(bundled()), encoding="utf-8")
    (study / "planned.csv").write_text("unit,r1,r2\n1,a,a\n2,a,b\n", encoding="utf-8")
    ratings = d / "ratings.csv"
    ratings.write_text("unit,dr_a,dr_b\n1,yes,yes\n2,no,yes\n3,no,no\n", encoding="utf-8")
    saved = str(study / "agreement" / "drs.json")
    assert main_quiet(["run", str(study)])
    assert main_quiet(["agree", str(ratings), "--stat", "cohen", "--bootstrap", "0", "-o", saved])
    ratings.write_text("unit,dr_a,dr_b\n1,yes,yes\n2,yes,yes\n3,no,no\n", encoding="utf-8")


def _kind_no_longer_planned(d: Path) -> None:
    """The template study, reasoning taken out of [judge] kinds after its run and a re-code
    run of it were made (their folders kept)."""
    _initialised(d)
    toml = d / "study" / "failcodes.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace(KINDS_LINE, 'kinds = ["retrieval"]', 1), encoding="utf-8")
    runs = "study/judge/ragchecker-example/reasoning"
    _write({f"{runs}/summary.json": "{}", f"{runs}.v0002/recode.jsonl": ""})(d)


PASSAGE_TEXT = json.dumps([{"passage_id": "p1", "rank": 1, "text": "t"}])
#: One system, three sentences, s1 in two claims (tests/test_s21_t21red1.py's _SPLIT).
SPLIT = (
    "system,question_id,sentence_id,claim_id,claim,verdict\ngpt,q1,s1,s1c1,x,supported\n"
    "gpt,q1,s1,s1c2,y,refuted\ngpt,q1,s2,s2c1,z,supported\ngpt,q2,s3,s3c1,w,supported\n"
)
SHOWN = ": the value held would be read; show the values as held (number format General), or "
SHOWN += "round them (=ROUND)"
PER_RETRIEVER = (
    "claim_id,question_id,claim,verdict,retriever,passage,gold\nc1,q1,a,refuted,bm25,t1,wrong\n"
    "c1,q1,a,refuted,dense,t2,wrong\nc2,q1,b,supported,bm25,t3,ok\n"
)

# sessions 20 and 21's refusals (issue 30; audited by t21bad), each tested in its own file
# with the numbers around it: the line here is the one the command gives
SESSION20_CASES: list[Case] = [
    Case(
        # R's NA in a verdict column given to metrics directly: an unknown verdict whose way
        # through is ingest's option, not an --alias (ecbe895; tests/test_s20_red1.py)
        "metrics/a-verdict-written-na",
        ("metrics", "--traces", "{d}/t.csv", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.csv": "system,question_id,sentence_id,claim_id,claim,verdict\n"
                "A,q1,1,1,a,supported\nA,q1,2,2,b,NA\n",
                "l.csv": "sentence_id,has_error\n1,false\n2,true\n",
            }
        ),
        line="failcodes: error: {d}/t.csv:3, field 'verdict': unknown verdict 'NA' (canonical "
        "verdicts: ambiguous, no_evidence, out_of_scope, refuted, supported; a missing mark: "
        "`ingest generic --option no_verdict=drop` leaves such rows out)",
    ),
    Case(
        # a spreadsheet's '-' read as a row without a verdict, refused by default (15e0677)
        "ingest-generic/a-verdict-written-as-a-dash",
        (
            *("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl", "--labels-out"),
            *("{d}/l.jsonl", "--map", "id=sentence_id", "--system", "A"),
            *("--label-rule", "gold = wrong -> error"),
        ),
        _write({"t.csv": "id,claim,verdict,gold\n1,a,refuted,wrong\n2,b,-,wrong\n"}),
        line="failcodes: error: {d}/t.csv:3, field 'verdict': no verdict (this row's columns: "
        "id, claim, verdict, gold): name the verdict's column with --map COLUMN=verdict; if the "
        "verifier failed on this claim, --option no_verdict=drop leaves such rows out, counted "
        "in a note",
    ),
    Case(
        # 'skip' among numbers: a category of its own, read with no word (c96604f)
        "agree/skip-among-numeric-ratings",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,r1,r2\n1,1,1\n2,2,skip\n3,2,2\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'r2': 'skip' among numeric ratings: a "
        "missing rating (R writes NA)? leave the cell empty (it would be a category of its "
        "own); a category indeed: list the categories with --categories",
    ),
    Case(
        # one row per reader, a column per question: the questions read as raters (1f4cb44)
        "agree/rater-columns-named-like-units",
        ("agree", "{d}/r.csv"),
        _write(
            {
                "r.csv": "reader,q1,q2,q3,q4\nAnn,yes,no,yes,no\nBob,yes,no,no,no\n"
                "Cat,yes,yes,yes,no\nDan,no,no,yes,no\nEve,yes,no,yes,yes\n"
            }
        ),
        line="failcodes: error: {d}/r.csv:1: 4 rater columns (q1, q2, q3, ...) named like "
        "units: is the table one row per rater and one column per unit? agreement needs one "
        "row per unit: transpose it (to read it as given, name the raters with --raters)",
    ),
    Case(
        # a label column per system beside --verdict-column: claude scored on gpt's labels
        # (2e8ad51)
        "ingest-generic/a-label-column-per-system",
        (
            *("ingest", "generic", "{d}/w.csv", "--map", "id=sentence_id", "--option"),
            *("unmapped=drop", "--verdict-column", "gpt", "--verdict-column", "claude"),
            *("-o", "{d}/t.jsonl", "--label-rule", "gpt_label = wrong -> error"),
            *("--labels-out", "{d}/l.jsonl"),
        ),
        _write(
            {
                "w.csv": "id,claim,gpt,claude,gpt_label,claude_label\n"
                "1,a,supported,refuted,ok,wrong\n"
            }
        ),
        line="failcodes: error: {d}/w.csv:1, field 'gpt_label': column 'gpt_label' names system "
        "'gpt', but --verdict-column gives every system's trace the same columns (claude's "
        "would hold it too): ingest each system apart (its --verdict-column, its own --map; "
        "its own --label-rule, --option label_scope=system; the label files made one with "
        "ingest generic-labels A B -o OUT) and give the trace files together",
    ),
    Case(
        # two models' claims pooled into one system's sentence (71099e3)
        "ingest-generic/two-verifiers-under-one-system-name",
        (
            *("ingest", "generic", "{d}/long.csv", "-o", "{d}/t.jsonl", "--option"),
            *("ids=claim", "--map", "qid=question_id", "--map", "sid=sentence_id"),
            *("--map", "model=verifier"),
        ),
        _write(
            {
                "long.csv": "model,system,qid,sid,claim,verdict\ngpt-4o,rag,q1,s1,a,refuted\n"
                "llama,rag,q1,s1,a2,supported\n"
            }
        ),
        line="failcodes: error: {d}/long.csv:3, field 'verifier': sentence 's1' of question "
        "'q1' (system 'rag') was checked by verifier 'llama' here and by another at line 2: two "
        "pipelines under one system name, their claims pooled into one sentence; give each its "
        "own system: --map model=system beside --map model=verifier (a system column kept: "
        "--map system=retriever, or --map system=)",
    ),
    Case(
        # two versions' claims of one system's sentence pooled, the version column left out
        "ingest-generic/two-versions-under-one-system-name",
        (
            *("ingest", "generic", "{d}/long.csv", "-o", "{d}/t.jsonl", "--option"),
            *("ids=claim", "--map", "qid=question_id", "--map", "sid=sentence_id"),
            *("--option", "unmapped=drop"),
        ),
        _write(
            {
                "long.csv": "model_version,system,qid,sid,claim,verdict\n"
                "v1,rag,q1,s1,a,refuted\nv2,rag,q1,s1,a2,supported\n"
            }
        ),
        line="failcodes: error: {d}/long.csv:3, field 'model_version': sentence 's1' of question "
        "'q1' (system 'rag') has model_version 'v2' here and 'v1' at line 2, a column left out: "
        "two runs or versions under one system name, their claims pooled into one sentence; "
        "give each its own system: --map model_version=system (a system column kept: --map "
        "system=verifier), or ingest the rows of one model_version apart",
    ),
    Case(
        # the shared labels carried in two files, one per system's sheet (665a05d)
        "ingest-generic-labels/the-same-label-in-two-files",
        ("ingest", "generic-labels", "{d}/a.csv", "{d}/b.csv", "-o", "{d}/l.jsonl"),
        _write(
            {
                "a.csv": "sentence_id,has_error\n7,true\n8,false\n",
                "b.csv": "sentence_id,has_error\n8,false\n",
            }
        ),
        line="failcodes: error: {d}/b.csv:2, field 'sentence_id': duplicate label for sentence "
        "'8' (first at {d}/a.csv:3); the same labels in several files? failcodes ingest "
        "generic-labels FILES -o OUT --option duplicates=same keeps one of each target "
        "labelled alike",
    ),
    Case(
        # gpt's label of a question only claude answered: read by metrics as a sentence gpt
        # made no claim for (f50f371)
        "metrics/a-per-system-label-of-another-systems-question",
        ("metrics", "--traces", "{d}/t.csv", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.csv": "system,question_id,sentence_id,claim_id,claim,verdict\n"
                "gpt,1,1,1,a,supported\nclaude,1,1,1,a,supported\nclaude,3,3,3,c,refuted\n",
                "l.csv": "system,question_id,sentence_id,has_error\ngpt,1,1,false\n"
                "gpt,3,3,false\nclaude,1,1,true\n",
            }
        ),
        line="failcodes: error: {d}/l.csv:3, field 'sentence_id': system 'gpt': no trace has "
        "sentence_id '3' and no trace has question_id '3'",
    ),
    Case(
        # a DataFrame's passages as JSON text saved as Parquet (d494524)
        "metrics/parquet-passages-as-json-text",
        ("metrics", "--traces", "{d}/t.parquet", "--labels", "{d}/l.csv"),
        _passages_as_text,
        line="failcodes: error: {d}/t.parquet:1, field 'passages': Input should be a valid "
        f"tuple (got {PASSAGE_TEXT!r}); passages as JSON text? failcodes ingest generic FILE "
        "-o NEW.jsonl reads it",
    ),
    Case(
        # pandas' to_excel row index under an empty header cell (b0b1afd)
        "ingest-generic-labels/workbook-with-pandas-index-column",
        ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/l.jsonl"),
        _indexed_workbook,
        line="failcodes: error: {d}/l.xlsx:1: empty header cell in column A (every column "
        "needs a name); pandas' row index (to_excel(index=False)) or a table that starts "
        "further right? delete column A",
    ),
    Case(
        # Label Studio's CSV export: 'malformed JSON (Expecting value at column 1)' (2dcf7b1)
        "labelstudio-import/a-csv-export",
        (*LS_IMPORT, "{d}/project-7.csv", "-o", "{d}/h.jsonl"),
        _ls_csv_export,
        line="failcodes: error: {d}/project-7.csv: a CSV or TSV export (one row per submitted "
        "annotation: a skipped task is left out, and so is the judge's prediction the reviewer "
        "was shown): export the project as JSON",
    ),
    Case(
        # a CSV export saved as .json: 'malformed JSON (Extra data ...) a JSONL file?' (s32)
        "labelstudio-import/a-csv-export-saved-as-json",
        (*LS_IMPORT, "{d}/project-7.json", "-o", "{d}/h.jsonl"),
        _ls_csv_export_as_json,
        line="failcodes: error: {d}/project-7.json: a CSV or TSV export saved as .json (its "
        "first line is a header of 4 comma-separated names: id, failcodes_unit_id, entity, ...) "
        "(one row per submitted annotation: a skipped task is left out, and so is the judge's "
        "prediction the reviewer was shown): export the project as JSON",
    ),
    Case(
        # patients 1, 2 twice in pandas' index: read as 4 row-numbered units (e58070a)
        "agree/parquet-index-unit-on-two-rows",
        ("agree", "{d}/r.parquet"),
        _index_parquet,
        line="failcodes: error: {d}/r.parquet:4, field 'patient': unit '1' is on two rows "
        "(first at line 1): one row per unit and rater? name the columns with --long "
        "RATER_COLUMN,RATING_COLUMN (no rater column? add one naming the rater of each row)",
    ),
    Case(
        # 1.4 shown as 1: read as held, a category of its own (0ebb7e5)
        "agree/a-rating-excel-shows-rounded",
        ("agree", "{d}/r.xlsx"),
        _formatted_sheet("r.xlsx", "0", [1.4, 0, 1, 0]),
        line="failcodes: error: {d}/r.xlsx:2, field 'dr_b': cell C2 holds 1.4, which Excel "
        "shows as 1 (number format '0')" + SHOWN,
    ),
    Case(
        # a format whose empty section hides the value (5b74037)
        "agree/a-rating-a-format-hides",
        ("agree", "{d}/r.xlsx"),
        _formatted_sheet("r.xlsx", "0;-0;;@", [1, 0, 1, 0]),
        line="failcodes: error: {d}/r.xlsx:3, field 'dr_b': cell C3 holds 0, which Excel "
        "shows as an empty cell (number format '0;-0;;@')" + SHOWN,
    ),
    Case(
        # a thousands-scaling comma: 1400 shown as 1 (5b74037)
        "agree/a-rating-a-format-scales",
        ("agree", "{d}/r.xlsx"),
        _formatted_sheet("r.xlsx", "0,", [1400, 0, 1000, 0]),
        line="failcodes: error: {d}/r.xlsx:2, field 'dr_b': cell C2 holds 1400, which Excel "
        "shows as 1 (number format '0,')" + SHOWN,
    ),
    Case(
        # a text whose format hides it (7a81df3)
        "agree/a-text-rating-a-format-hides",
        ("agree", "{d}/r.xlsx"),
        _formatted_sheet("r.xlsx", ";;;", ["yes", "no", "yes", "no"]),
        line="failcodes: error: {d}/r.xlsx:2, field 'dr_b': cell C2 holds 'yes', which Excel "
        "shows as an empty cell (number format ';;;')" + SHOWN,
    ),
    Case(
        # a label rule's column shown otherwise: 2.6 shown 3 read as no error (2c88475)
        "ingest-generic-labels/a-label-rule-column-excel-shows-rounded",
        (
            *SHEET_LABELS,
            "--label-rule",
            "dr_b = 3 -> error",
            "--map",
            "unit=sentence_id",
            "--map",
            "dr_a=",
        ),
        _formatted_sheet("l.xlsx", "0", [3, 2.6, 1, 1]),
        line="failcodes: error: {d}/l.xlsx:3, field 'dr_b': cell C3 holds 2.6, which Excel "
        "shows as 3 (number format '0')" + SHOWN,
    ),
    Case(
        # a judge kind taken out of the plan kept its run and re-code run, shown by the report
        # as this study's (2e3bcd9, ad3d8c2)
        "report/a-judge-kind-the-plan-no-longer-has",
        ("report", "{d}/study", "-o", "{d}/rep"),
        _kind_no_longer_planned,
        line="failcodes: error: {d}/study/failcodes.toml: the folder holds outputs of an earlier "
        "run that the study's plan no longer has: judge/ragchecker-example/reasoning (not in "
        "[judge] kinds), judge/ragchecker-example/reasoning.v0002 (not in [judge] kinds); the "
        "report would show their codes and counts as this study's; delete them (or move them "
        "out of the study folder), or plan them again",
    ),
    Case(
        # a data set's traces ingest taken out (labels only now) kept its traces, metrics
        # and disagreements, shown by the report as this study's (9f2a6ab)
        "report/outputs-of-a-data-set-labels-only-now",
        ("report", "{d}/study", "-o", "{d}/rep"),
        _study(
            {
                "failcodes.toml": _study_file(
                    'adapter = "ragchecker"\npaths = ["bundled:ragchecker/checking_outputs.json"]'
                    "\nlabels = true",
                    'adapter = "generic-labels"\npaths = ["l.csv"]',
                ),
                "data/ragchecker-example.traces.parquet": b"PAR1",
            }
        ),
        line="failcodes: error: {d}/study/failcodes.toml: the folder holds outputs of an earlier "
        "run that the study's plan no longer has: data/ragchecker-example.traces.parquet "
        "(labels only now); the report would show their codes and counts as this study's; "
        "delete them (or move them out of the study folder), or plan them again",
    ),
]

SESSION21_CASES: list[Case] = [
    Case(
        # a zero shown as a word: percent 7/10 for a sheet showing 'none' (06e83d7)
        "agree/a-rating-a-format-shows-as-text",
        ("agree", "{d}/r.xlsx"),
        _formatted_sheet("r.xlsx", '0;-0;"none"', [1, 0, 1, 0]),
        line="failcodes: error: {d}/r.xlsx:3, field 'dr_b': cell C3 holds 0, which Excel "
        "shows as 'none' (number format '0;-0;\"none\"')" + SHOWN,
    ),
    Case(
        # the sheet's option 'Show a zero ...' off (06e83d7)
        "agree/zeros-the-sheet-hides",
        ("agree", "{d}/r.xlsx"),
        _formatted_sheet("r.xlsx", "General", [1, 0, 1, 0], zeros=False),
        line="failcodes: error: {d}/r.xlsx:3, field 'dr_a': cell B3 holds 0, which Excel "
        "shows as an empty cell (the sheet's option 'Show a zero in cells that have zero "
        "value' is off): the value held would be read; turn the option on (Excel: File > "
        "Options > Advanced) to see them",
    ),
    Case(
        # [] under --sets: no code given, or not rated? (48dde3a)
        "agree/an-empty-list-of-codes-under-sets",
        ("agree", "{d}/e.jsonl", "--sets", ";"),
        _write(
            {
                "e.jsonl": '{"unit": "u1", "r1": ["a"], "r2": ["a"]}\n'
                '{"unit": "u2", "r1": [], "r2": ["b"]}\n'
            }
        ),
        line="failcodes: error: {d}/e.jsonl:2, field 'r1': an empty list of codes (codes are "
        "texts or whole numbers without ';'; not rated: null; no code given: a code of its "
        "own, e.g. 'none')",
    ),
    Case(
        # a mixed panel priced as one model: haiku's $0.0606 read as $0.0169 (c6d8c4f)
        "judge/price-as-a-panel-calling-two-apis",
        (
            *JUDGE,
            "-o",
            "{d}/run",
            "--judge",
            "openai:gpt-5-mini",
            "--judge",
            *("anthropic:claude-haiku-4-5", "--price-as", "openai:gpt-5-mini", "--dry-run"),
        ),
        _mk_dir(),
        line="failcodes: error: --price-as openai:gpt-5-mini prices every judge of the run; "
        "these call two APIs (openai:gpt-5-mini, anthropic:claude-haiku-4-5); give each judge "
        "its price with --prices FILE (an entry per judge) instead",
    ),
    Case(
        # sentence ids one system's CSV writes as floats: B scored on none (a8d7b06)
        "metrics/a-sentence-id-one-system-writes-as-a-float",
        ("metrics", "--traces", "{d}/a.csv", "--traces", "{d}/b.csv", "--labels", "{d}/l.csv"),
        _write(
            {
                "a.csv": "system,question_id,sentence_id,claim_id,claim,verdict\n"
                "A,1,1,1,c1,refuted\nA,1,2,2,c2,supported\n",
                "b.csv": "system,question_id,sentence_id,claim_id,claim,verdict\n"
                "B,1.0,1.0,1.0,c1,supported\nB,1.0,2.0,2.0,c2,refuted\n",
                "l.csv": "sentence_id,has_error\n1,true\n2,false\n",
            }
        ),
        line="failcodes: error: {d}/l.csv:2, field 'sentence_id': the traces write sentence '1' "
        "also as '1.0' (as a float, as a CSV of a pandas column with a missing value holds "
        "it): the label applies to '1' only, so the claims under '1.0' count unlabelled and a "
        "system that wrote only '1.0' is scored as making no claim for '1' (no error flagged); "
        "write the id one way in every traces file",
    ),
    Case(
        # the same claim on a row per retriever, its old way through no way (c52e83d)
        "ingest-generic/the-same-claim-on-a-row-per-retriever",
        (
            *("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl", "--labels-out"),
            *("{d}/l.jsonl", "--passage-column", "passage", "--label-rule"),
            *("gold = wrong -> error", "--system", "rag"),
        ),
        _write({"t.csv": PER_RETRIEVER}),
        line="failcodes: error: {d}/t.csv:3, field 'claim_id': duplicate (system, claim_id) = "
        "('rag', 'c1'); first at line 2; the same claim of one sentence on two rows (the row "
        "twice, or a row per passage or per retriever?): give one row per claim, its passages "
        "a list (--map COLUMN=passages), or each retriever a system (--map retriever=system)",
    ),
    Case(
        # a has_error column beside the rule's: the rule overwrote it with no word (48e2e19)
        "ingest-generic-labels/a-label-rule-beside-a-has-error-column",
        (*GENERIC_LABELS, "--label-rule", "gold = wrong -> error"),
        _write({"l.csv": "sentence_id,has_error,gold\ns1,true,ok\ns2,false,wrong\n"}),
        line="failcodes: error: {d}/l.csv:2, field 'has_error': column 'has_error' gives "
        "has_error and --label-rule reads 'gold': which one is the label? leave out the rule, "
        "or the column (--map has_error=)",
    ),
    Case(
        # a saved agreement of ratings corrected since: the report showed the old kappa
        # (e124773)
        "report/an-agreement-of-ratings-corrected-since",
        ("report", "{d}/st", "-o", "{d}/r"),
        _agreement_then_corrected,
        line="failcodes: error: {d}/st/agreement/drs.json: was computed from {d}/ratings.csv as "
        "it was then, changed since (a rating corrected?): the report would show the old "
        "agreement; compute it again (failcodes agree {d}/ratings.csv --stat cohen --bootstrap "
        "0 -o {d}/st/agreement/drs.json), or delete it",
    ),
    Case(
        # a claim label naming no sentence (its sentence_id empty): the sentence counted
        # unlabelled, n 2 of 3, exit 0 (5afe0f3); the line names the claim label's row
        "metrics/a-claim-label-naming-no-sentence",
        ("metrics", "--traces", "{d}/t.csv", "--labels", "{d}/l.csv", "-m", "refuted"),
        _write(
            {"t.csv": SPLIT, "l.csv": "sentence_id,claim_id,has_error\ns1,,false\n,s2c1,true\n"}
        ),
        line="failcodes: error: {d}/l.csv:3, field 'claim_id': sentence 's2' is labelled "
        "through its claims only ('s2c1'...), and a sentence-level comparison reads sentence "
        "labels: it would count unlabelled; compare claims with --level claim (in a study: "
        '[metrics] level = "claim"), or give sentence labels',
    ),
    Case(
        # a code holding the separator in a list cell: one code or two? (48dde3a)
        "agree/a-list-code-holding-the-separator-under-sets",
        ("agree", "{d}/s.jsonl", "--sets", ";"),
        _write(
            {
                "s.jsonl": '{"unit": "u1", "r1": ["a;b"], "r2": ["a"]}\n'
                '{"unit": "u2", "r1": ["b"], "r2": ["b"]}\n'
            }
        ),
        line="failcodes: error: {d}/s.jsonl:1, field 'r1': a list of codes holding 'a;b' (codes "
        "are texts or whole numbers without ';'; not rated: null; no code given: a code of its "
        "own, e.g. 'none')",
    ),
    Case(
        # atomic ids are read as text from JSON numbers now, a fraction refused (b949afd)
        "ingest-atomic/an-id-with-a-fraction",
        ("ingest", "atomic", "{d}/a.jsonl", "-o", "{d}/t.jsonl", "--labels-out", "{d}/l.jsonl"),
        _write(
            {
                "a.jsonl": '{"answer_id": 1.5, "fact_id": 1, "fact": "x1", "verdict": false, '
                '"human_confirms": true}\n'
            }
        ),
        line="failcodes: error: {d}/a.jsonl:1, field 'answer_id': id 1.5 is a number with a "
        "fraction (1.10 and 1.1 read as one number); expected text or a whole number: save the "
        "column as text",
    ),
]


#: A trace for the label-cell cases below (system a, question q1, sentence s1).
_ONE_TRACE = (
    '{"system": "a", "question_id": "q1", "sentence_id": "s1", "claim_id": "c1", "claim": "x", '
    '"verdict": "refuted"}\n'
)
_METRICS_ONE = ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.parquet")
_HAS_ERROR_WORDS = "expected true or false (or 1/0, yes/no), got "


def _label_parquet(columns: dict[str, object]) -> Setup:
    """t.jsonl (:data:`_ONE_TRACE`) and l.parquet of one row: question q1, sentence s1 and
    has_error true unless ``columns`` gives another cell (a pyarrow array each)."""

    def setup(d: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        (d / "t.jsonl").write_text(_ONE_TRACE, encoding="utf-8")
        table = {"question_id": ["q1"], "sentence_id": ["s1"], "has_error": [True]}
        arrays = {k: pa.array(v) for k, v in table.items()} | columns
        pq.write_table(pa.table(arrays), d / "l.parquet")

    return setup


def _decimal_ids() -> dict[str, object]:
    import decimal

    import pyarrow as pa

    return {"question_id": pa.array([decimal.Decimal("1.5")], pa.decimal128(5, 1))}


def _float32_ids() -> dict[str, object]:
    import pyarrow as pa

    return {"sentence_id": pa.array([16777217.0], pa.float32())}  # stored as 16777216


def _nan_label() -> dict[str, object]:
    import pyarrow as pa

    return {"has_error": pa.array([float("nan")])}


# session 25's refusals (7a1b972..82447a1), each tested in tests/test_s25_t25*.py with the
# numbers around it: here the one line (file, line, field, what was expected), exit 2, nothing
# written
SESSION25_CASES: list[Case] = [
    Case(
        # a claim table naming each sentence on its first row alone: the blank row's claim was
        # a sentence of its own, TP 0, FN 1, TN 1 for TP 1, TN 1 (15682ed)
        "ingest-generic/blank-sentence-id-under-a-filled-one",
        ("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl"),
        _write(
            {
                "t.csv": "system,question_id,sentence_id,claim_id,claim,verdict\n"
                "gpt,q1,q1:s0,c0,a,supported\ngpt,q1,,c1,b,supported\n"
            }
        ),
        line="failcodes: error: {d}/t.csv:3, field 'sentence_id': no sentence_id here, where "
        "line 2 gives one: a row without one is read as its own sentence (its claim id) (a "
        "sheet that names each sentence on its first row alone? fill the column on every row, "
        "or leave it out of every row)",
    ),
    Case(
        # a null question_id (a Parquet Int64 column with NA): a bootstrap cluster of its own
        "ingest-generic/blank-question-id-under-a-filled-one",
        ("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/o.jsonl", "--system", "gpt"),
        _write(
            {
                "t.jsonl": '{"question_id": "q2", "sentence_id": "q2:s0", "claim": "b", '
                '"verdict": "refuted"}\n{"question_id": null, "sentence_id": "q2:s1", '
                '"claim": "c", "verdict": "refuted"}\n'
            }
        ),
        expect=(
            "t.jsonl:2, field 'question_id': no question_id here, where line 1 gives one: a "
            "row without one is read as its own question (its sentence id)",
        ),
    ),
    Case(
        # rater 2 written '2' and '2.0' (two exports): four raters read, Fleiss 0.467 (d85f1b8)
        "agree/long-rater-written-2-and-2.0",
        (
            *("agree", "{d}/long.csv", "--long", "rater,rating", "--unit-column", "unit"),
            *("--stat", "fleiss", "--bootstrap", "0"),
        ),
        _write(
            {
                "long.csv": "unit,rater,rating\nu1,1,yes\nu1,2,yes\nu2,1,no\nu2,2.0,yes\n"
                "u3,1,no\nu3,2,no\n"
            }
        ),
        line="failcodes: error: {d}/long.csv:5, field 'rater': rater '2.0' is '2' (line 3) "
        "written another way (a whole number as a float): it would be a rater of its own; "
        "write it one way",
    ),
    Case(
        # 'dosage;interaction' labelled no error under a rule naming both codes (6dd0b61)
        "ingest-generic-labels/label-rule-cell-joining-named-codes",
        (
            *("ingest", "generic-labels", "{d}/codes.csv", "-o", "{d}/l.jsonl"),
            *(
                "--label-rule",
                "error_type in {dosage, interaction} -> error; otherwise -> no_error",
            ),
        ),
        _write({"codes.csv": "sentence_id,error_type\ns1,dosage;interaction\ns2,dosage\n"}),
        line="failcodes: error: {d}/codes.csv:2, field 'error_type': 'dosage;interaction' is "
        "not named by --label-rule 'error_type in {dosage, interaction} -> error; otherwise "
        "-> no_error' but joins values ('dosage', 'interaction', by ';') that get error: "
        "several codes in one cell? those rows got the 'no_error' label; name it in the rule, "
        'quoted ({..., "dosage;interaction"}), or give its own clause',
    ),
    Case(
        # 'Dosage|none' got error where its 'none' gets no_error (6dd0b61)
        "ingest-generic-labels/label-rule-cell-whose-codes-get-another-outcome",
        (
            *("ingest", "generic-labels", "{d}/codes.csv", "-o", "{d}/l.jsonl"),
            *("--label-rule", "error_type = none -> no_error; otherwise -> error"),
        ),
        _write({"codes.csv": "sentence_id,error_type\ns1,dosage\ns2,none\ns3,Dosage|none\n"}),
        expect=(
            "codes.csv:4, field 'error_type': 'Dosage|none' is not named by --label-rule",
            "joins values ('dosage', 'none', by '|') that get error and no_error",
        ),
    ),
    Case(
        # has_error 0.5: pydantic's 'Input should be a valid boolean (got 0.5)' (ca01f07)
        "metrics/label-has-error-half",
        _METRICS_ONE,
        _label_parquet({"has_error": [0.5]}),
        line="failcodes: error: {d}/l.parquet:1, field 'has_error': "
        + _HAS_ERROR_WORDS
        + "the number 0.5; "
        + HAS_ERROR_WAY,
    ),
    Case(
        # has_error NaN (a missing value in a float column): '(got nan)' (ca01f07)
        "metrics/label-has-error-nan",
        _METRICS_ONE,
        _label_parquet(_nan_label()),
        line="failcodes: error: {d}/l.parquet:1, field 'has_error': "
        + _HAS_ERROR_WORDS
        + "NaN (not a number: a missing value?); "
        + HAS_ERROR_WAY,
    ),
    Case(
        # has_error 'maybe': 'Input should be a valid boolean, unable to interpret input'
        "metrics/label-has-error-maybe",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl"),
        _write({"t.jsonl": _ONE_TRACE, "l.jsonl": '{"sentence_id": "s1", "has_error": "maybe"}\n'}),
        line="failcodes: error: {d}/l.jsonl:1, field 'has_error': "
        + _HAS_ERROR_WORDS
        + "'maybe'; "
        + HAS_ERROR_WAY,
    ),
    Case(
        # a boolean id: 'Input should be a valid string (got True)' (ca01f07)
        "metrics/label-id-a-boolean",
        _METRICS_ONE,
        _label_parquet({"sentence_id": [True]}),
        line="failcodes: error: {d}/l.parquet:1, field 'sentence_id': id true is a boolean "
        "(true/false), not an id; expected text or a whole number: is this the column of the "
        "ids?",
    ),
    Case(
        # a Parquet DECIMAL id 1.5: "(got Decimal('1.5'))" (ca01f07)
        "metrics/label-id-a-decimal-with-a-fraction",
        _METRICS_ONE,
        _label_parquet(_decimal_ids()),
        line="failcodes: error: {d}/l.parquet:1, field 'question_id': id 1.5 is a decimal "
        "number with a fraction; expected text or a whole number: save the column as text",
    ),
    Case(
        # a trace's system true: 'Input should be a valid string (got True)' (ca01f07)
        "metrics/trace-system-a-boolean",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl"),
        _write(
            {
                "t.jsonl": _ONE_TRACE.replace('"system": "a"', '"system": true'),
                "l.jsonl": '{"sentence_id": "s1", "has_error": true}\n',
            }
        ),
        line="failcodes: error: {d}/t.jsonl:1, field 'system': expected text, got the boolean true",
    ),
    Case(
        # SOURCE_DATE_EPOCH=abc: matplotlib's traceback, the tables already written (15ec83a)
        "report/source-date-epoch-not-a-time",
        REPORT,
        _per_passage_study(PER_PASSAGE_ROW),
        line="failcodes: error: SOURCE_DATE_EPOCH='abc': expected whole seconds since "
        "1970-01-01 UTC (the reproducible-builds convention), e.g. "
        "SOURCE_DATE_EPOCH=$(git log -1 --format=%ct); unset it for the current time",
        env=(("SOURCE_DATE_EPOCH", "abc"),),
    ),
    Case(
        # a run begun before prompt_hash (session 29) whose templates differ from this
        # failcodes': resumed unseen, answers to two prompts in one run (t30judge)
        "judge-dry-run/older-journal-other-templates",
        (*JUDGE, "--judge", "openai:gpt-5-mini", "--dry-run", "-o", "{d}/run"),
        _older_llm_journal,
        line="failcodes: error: {d}/run holds a run begun by a failcodes older than the prompt "
        "digest (prompt_hash), whose prompt templates differ from this one's (template_hash "
        f"000000000000, now {_templates()[:12]}; same codebook): its judge may have been shown "
        "another prompt, and resuming would mix answers to two prompts in one run; judge again "
        "into another output folder (-o), or finish this run with the failcodes version that "
        "began it",
    ),
]

T30ATT_CASES: list[Case] = [
    Case(
        # Excel's CSV of a 12-digit id in a General column: two sentences both '1.23457E+11',
        # read as one (n 3, recall 1/2 for n 4, recall 1/3)
        "ingest/id-in-scientific-notation",
        ("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl", "--system", "A"),
        _write(
            {
                "t.csv": "question_id,sentence_id,claim,verdict\n"
                "q1,1.23457E+11,Aspirin helps,supported\n"
            }
        ),
        line="failcodes: error: {d}/t.csv:2, field 'sentence_id': id '1.23457E+11' is a number "
        "as a spreadsheet shows it, in scientific notation: its last digits are lost "
        "(123456789012 and 123456789013 both show as 1.23457E+11); expected the id's digits: "
        "format the column as Text (or Number, 0 decimal places) and save again",
    ),
    Case(
        # the labels' fast JSONL reader kept '1.23457E+11' as an id (as the CSV readers did)
        "metrics/label-id-in-scientific-notation",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl"),
        _write({"t.jsonl": GOOD_TRACES, "l.jsonl": '{"claim_id": "1E+15", "has_error": true}\n'}),
        line="failcodes: error: {d}/l.jsonl:1, field 'claim_id': id '1E+15' is a number as a "
        "spreadsheet shows it, in scientific notation: its last digits are lost "
        "(123456789012 and 123456789013 both show as 1.23457E+11); expected the id's digits: "
        "format the column as Text (or Number, 0 decimal places) and save again",
    ),
    Case(
        # an old .xls: "expected .jsonl, .csv or .parquet", no word of .xlsx
        "ingest/an-old-xls-workbook",
        ("ingest", "generic", "{d}/t.xls", "-o", "{d}/o.jsonl"),
        _write({"t.xls": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504}),
        line="failcodes: error: {d}/t.xls: cannot tell the format from the extension '.xls'; "
        "expected .jsonl, .csv or .parquet (a spreadsheet in another format: save it as an "
        "Excel Workbook, .xlsx, which `failcodes ingest generic` and `generic-labels` read, or "
        "as CSV UTF-8)",
    ),
    Case(
        # pandas' to_json(orient='table'): "no verdict (this row's columns: schema, data)"
        "ingest/pandas-json-orient-table",
        ("ingest", "generic", "{d}/t.json", "-o", "{d}/o.jsonl", "--system", "A"),
        _write({"t.json": '{"schema": {"fields": []}, "data": [{"claim": "a"}]}'}),
        line="failcodes: error: {d}/t.json:1: a table as pandas' DataFrame.to_json writes it "
        "with orient='table' (not a row per object): write the rows with df.to_json(PATH, "
        "orient='records'), or a .jsonl file with df.to_json(PATH, orient='records', lines=True)",
    ),
    Case(
        # a float32 id column: 16777216 and 16777217 are one float, two sentences read as one
        "metrics/label-id-a-float32-past-2-24",
        _METRICS_ONE,
        _label_parquet(_float32_ids()),
        line="failcodes: error: {d}/l.parquet:1, field 'sentence_id': id 16777216 is in a 32-bit "
        "float column, at or past 16,777,216 (2**24), where such a float no longer holds every "
        "whole number (its last digits may be lost); expected text or a whole number: save the "
        "column as text or integers",
    ),
    Case(
        # Excel's 'sep=,' line above the header: "unknown column 'sep='"
        "metrics/labels-excel-sep-line",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write({"t.jsonl": GOOD_TRACES, "l.csv": "sep=,\n" + LABELS}),
        line="failcodes: error: {d}/l.csv:1: the first line 'sep=,' is the separator line Excel "
        "writes, not the header: delete the line (the column names are on the line below it)",
    ),
]


def _range_index_labels(d: Path) -> None:
    """t.jsonl and l.parquet written by pandas with its sentence ids 1, 2 as the index."""
    import pandas as pd

    (d / "t.jsonl").write_text(GOOD_TRACES, encoding="utf-8")
    frame = pd.DataFrame({"sentence_id": [1, 2], "has_error": [True, False]})
    frame.set_index("sentence_id").to_parquet(d / "l.parquet")


T30LEFT_CASES: list[Case] = [
    Case(
        # pandas keeps an index of 1, 2 as a RangeIndex in the metadata alone: "a label needs
        # a sentence_id or a claim_id", no word of the index
        "metrics/labels-id-in-a-pandas-range-index",
        _METRICS_ONE,
        _range_index_labels,
        line="failcodes: error: {d}/l.parquet: the pandas index 'sentence_id' (1, 2) is kept "
        "only in the file's metadata, not as a column (pandas writes an index of consecutive "
        "whole numbers so): write the frame with df.reset_index().to_parquet(...) to keep "
        "'sentence_id' as a column (df.reset_index(drop=True) where it is only a row number)",
    ),
    Case(
        # a trace line of the tool's own format kept '1.23457E+11' (the fast path's check),
        # where a CSV of it was refused: two sentences one ("labels cover 2 of 3" for 4)
        "ingest/own-format-trace-id-in-scientific-notation",
        ("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/o.jsonl"),
        _write({"t.jsonl": _ONE_TRACE.replace('"s1"', '"1.23457E+11"')}),
        line="failcodes: error: {d}/t.jsonl:1, field 'sentence_id': id '1.23457E+11' is a "
        "number as a spreadsheet shows it, in scientific notation: its last digits are lost "
        "(123456789012 and 123456789013 both show as 1.23457E+11); expected the id's digits: "
        "format the column as Text (or Number, 0 decimal places) and save again",
    ),
]


def _readme_first(d: Path) -> None:
    """l.xlsx: a README sheet, then the labels."""
    from openpyxl import Workbook

    book = Workbook()
    book.active.title = "README"
    book.active.append(["About"])
    book.active.append(["Round 2."])
    labels = book.create_sheet("labels")
    labels.append(["sentence_id", "has_error"])
    labels.append(["s1", True])
    book.save(d / "l.xlsx")


T31READ_CASES: list[Case] = [
    Case(
        # a German spreadsheet's CSV of a TRUE/FALSE column: 'is_wrong = true -> error' matched
        # no row, 0 error labels of 2, exit 0 with a note
        "ingest/label-rule-true-on-german-truth-words",
        (
            "ingest",
            "generic",
            "{d}/t.csv",
            "-o",
            "{d}/o.jsonl",
            "--labels-out",
            "{d}/l.jsonl",
            "--label-rule",
            "is_wrong = true -> error",
        ),
        _write(
            {
                "t.csv": "question_id,sentence_id,claim,verdict,system,is_wrong\n"
                "q1,s1,Aspirin helps,supported,A,FALSCH\n"
                "q1,s2,Dose is 5g,refuted,A,WAHR\n"
            }
        ),
        line="failcodes: error: {d}/t.csv:3, field 'is_wrong': --label-rule 'is_wrong = true -> "
        "error' names 'true', which no row has, and not 'WAHR', which rows have (the same truth "
        "value written another way? those rows got the 'no_error' label): name the values as "
        "the column writes them",
    ),
    Case(
        # two 'CSV UTF-8' shards joined with cat: the second's first row began '\ufeffq2', a
        # question of its own beside 'q2' (n_questions 3 for 2, exit 0)
        "metrics/csv-line-starting-with-a-byte-order-mark",
        ("metrics", "--traces", "{d}/t.csv", "--labels", "{d}/l.jsonl"),
        _write(
            {
                "t.csv": "\ufeffquestion_id,system,sentence_id,claim_id,claim,verdict\n"
                "q1,A,s1,c1,a,supported\n\ufeffq2,A,s2,c2,b,refuted\n",
                "l.jsonl": '{"sentence_id": "s1", "has_error": false}\n',
            }
        ),
        line="failcodes: error: {d}/t.csv:3: the line starts with a byte-order mark (U+FEFF), "
        "which only begins a file: files joined with cat, each saved with one (CSV UTF-8, "
        "utf-8-sig)? it would be part of the row's first cell: delete it",
    ),
    Case(
        # the CSV Excel saved of a sheet whose rating formula failed: '#DIV/0!' was a rating
        # category of its own (the workbook's error cell is refused: agree/xlsx-error-value)
        "agree/csv-excel-error-value",
        ("agree", "{d}/r.csv"),
        _write({"r.csv": "unit,coder_A,coder_B\n1,1,1\n2,#DIV/0!,2\n"}),
        line="failcodes: error: {d}/r.csv:3, field 'coder_A': Excel error value #DIV/0! (a "
        "formula that failed; the CSV holds its text): fix or clear the cell",
    ),
    Case(
        # a README sheet before the table: "unknown fields About", no word of the sheets
        "ingest/labels-workbook-readme-sheet-first",
        ("ingest", "generic-labels", "{d}/l.xlsx", "-o", "{d}/l.jsonl"),
        _readme_first,
        line="failcodes: error: {d}/l.xlsx:2, field 'has_error': missing required field; unknown "
        "fields About; labels written other than true/false or 1/0 (ja/nein, a scale, blanks)? "
        "failcodes ingest generic-labels FILE -o OUT --label-rule 'has_error in {ERROR VALUES} "
        "-> error; has_error in {OTHER VALUES} -> no_error; otherwise -> skip' (rename foreign "
        "fields with --map FOREIGN=ours, leave one out with --map FOREIGN=) (failcodes reads the "
        "first of the workbook's 2 sheets: 'README', 'labels'; move the table to the first "
        "sheet)",
    ),
]


def _offset_lines() -> dict[str, str | bytes]:
    """Traces q1:0..2, q2:0..2; labels keyed by character offset (q1:0, q1:22, q1:38, ...)."""
    traces, labels = [], []
    for q, offsets in (("q1", (0, 22, 38)), ("q2", (0, 19, 47))):
        for i, offset in enumerate(offsets):
            traces.append(
                f'{{"system": "a", "question_id": "{q}", "sentence_id": "{q}:{i}", '
                f'"claim_id": "{q}:{i}", "claim": "x{q}{i}", "verdict": "refuted"}}\n'
            )
            labels.append(
                f'{{"question_id": "{q}", "sentence_id": "{q}:{offset}", "has_error": true}}\n'
            )
    return {"t.jsonl": "".join(traces), "l.jsonl": "".join(labels)}


T31RED_CASES: list[Case] = [
    Case(
        # labels keyed by character offset beside traces numbered by place: the offsets were
        # sentences without claims, the traces' unlabelled (recall 1/3 for 3/3, exit 0)
        "metrics/labels-keyed-by-character-offset",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl"),
        _write(_offset_lines()),
        expect=("l.jsonl:2, field 'sentence_id'", "number sentences otherwise than the traces"),
    ),
    Case(
        # 0-100 scores read at 0.5: 88, 64 and 12 supported (TP 1, FN 1 for TP 2, exit 0)
        "ingest/percent-scores-at-a-threshold-of-a-share",
        (
            *("ingest", "generic", "{d}/s.csv", "-o", "{d}/o.jsonl", "--system", "a"),
            *("--map", "p=verdict", "--option", "verdict_threshold=0.5"),
        ),
        _write({"s.csv": "sentence_id,claim,p\ns1,x,0\ns2,y,88\ns3,z,12\n"}),
        expect=("s.csv:3, field 'verdict'", "system 'a': scores from 0 to 88, past 1"),
    ),
]


T32RED_CASES: list[Case] = [
    Case(
        # label ids a spreadsheet saved as dates ('1-2' -> '2-Jan') beside traces '1-2': the
        # label counted as a sentence without claims, the trace's as unlabelled (exit 0)
        "metrics/label-ids-saved-as-dates",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.jsonl": '{"system": "A", "question_id": "1", "sentence_id": "1-2", '
                '"claim_id": "c1", "claim": "x", "verdict": "refuted"}\n'
                '{"system": "A", "question_id": "13", "sentence_id": "13-1", '
                '"claim_id": "c2", "claim": "y", "verdict": "refuted"}\n',
                "l.csv": "question_id,sentence_id,has_error\n1,2-Jan,1\n13,13-1,0\n",
            }
        ),
        expect=("l.csv:2, field 'sentence_id'", "read '1-2' as a date and saved the date"),
    ),
    Case(
        # minicheck_support's 1 = holds beside selfcheck_hallucination's 1 = error, read with
        # one --alias 1=supported: selfcheck TP 0, FP 2, FN 2, TN 0 for TP 2, TN 2 (exit 0)
        "ingest/verdict-columns-opposite-ways-under-one-alias",
        (
            *("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl", "--option", "ids=line"),
            *("--verdict-column", "minicheck_support"),
            *("--verdict-column", "selfcheck_hallucination"),
            *("--alias", "1=supported", "--alias", "0=refuted"),
        ),
        _write(
            {
                "t.csv": "sentence_id,claim,minicheck_support,selfcheck_hallucination\n"
                "s1,a,0,1\ns2,b,1,0\n"
            }
        ),
        expect=("'selfcheck_hallucination' is named as an error flag", "its own --alias"),
    ),
    Case(
        # 'is_correct = 1 -> error': the sentences marked correct became the errors (TP 0,
        # FP 1, FN 1, TN 0 for TP 1, TN 1, exit 0)
        "ingest/label-rule-inverting-its-columns-name",
        (
            *("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl", "--option", "ids=line"),
            *("--system", "A", "--labels-out", "{d}/l.jsonl"),
            *("--label-rule", "is_correct = 1 -> error"),
        ),
        _write(
            {"t.csv": "sentence_id,claim,verdict,is_correct\ns1,a,refuted,0\ns2,b,supported,1\n"}
        ),
        expect=("column 'is_correct' is named as if its true value marks", "is_correct = 0"),
    ),
    Case(
        # a sentence's label repeated on each claim row, read per claim: its right claims
        # became errors (--level claim TP 1, FP 1, FN 4, TN 1 for TP 1, FP 1, FN 1, TN 1)
        "ingest/label-rule-sentence-label-on-each-claim-row",
        (
            *("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl", "--option", "ids=claim"),
            *("--system", "A", "--labels-out", "{d}/l.jsonl", "--evidence", "none"),
            *("--label-rule", "lab = wrong -> error"),
        ),
        _write(
            {
                "t.csv": "question_id,sentence_id,claim,verdict,lab\n"
                "q1,q1:s1,a,refuted,wrong\nq1,q1:s1,b,supported,wrong\n"
                "q2,q2:s1,c,supported,ok\nq2,q2:s1,d,refuted,ok\n"
            }
        ),
        expect=("gives each sentence's claims one label", "label_level=sentence"),
    ),
    Case(
        # an answer's label on each of its sentences: its right sentences became errors
        # (TP 1, FP 1, FN 2, TN 1 for the answers' TP 1, FP 1, exit 0)
        "ingest/label-rule-on-the-answer-of-sentence-rows",
        (
            *("ingest", "generic", "{d}/a.jsonl", "-o", "{d}/o.jsonl", "--system", "A"),
            *("--labels-out", "{d}/l.jsonl", "--option", "rows=sentences[]"),
            *("--map", "sid=sentence_id", "--label-rule", "bad = yes -> error"),
        ),
        _write(
            {
                "a.jsonl": '{"question_id": "q1", "bad": "yes", "sentences": [{"sid": "s1", '
                '"claim": "a", "verdict": "refuted"}, {"sid": "s2", "claim": "b", '
                '"verdict": "supported"}]}\n'
            }
        ),
        expect=("column 'bad' is a key of the record, not of the rows", "a.jsonl:1"),
    ),
]


T31NA_CASES: list[Case] = [
    Case(
        # a VLOOKUP that failed left '#N/A' as a system in a trace JSONL: read as a third
        # system, B's s2 'made no claim' (B FN 1, TN 1 for FN 1, FP 1), exit 0
        "metrics/excel-na-as-system",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.csv"),
        _write(
            {
                "t.jsonl": '{"system": "A", "question_id": "q1", "sentence_id": "s1", '
                '"claim_id": "c1", "claim": "x", "verdict": "refuted"}\n'
                '{"system": "#N/A", "question_id": "q1", "sentence_id": "s2", '
                '"claim_id": "c2", "claim": "y", "verdict": "refuted"}\n',
                "l.csv": "sentence_id,has_error\ns1,true\ns2,false\n",
            }
        ),
        line="failcodes: error: {d}/t.jsonl:2, field 'system': '#N/A' is Excel's error value (a "
        "formula that failed; the file holds its text), not an id: fill the cell, or leave the "
        "row out",
    ),
    Case(
        # a ratings frame read from a workbook and saved as JSONL: r2's failed formula '#REF!'
        # read as a category of its own (percent 1/2 for 1/1), exit 0
        "agree/excel-error-rating-in-jsonl",
        ("agree", "{d}/a.jsonl"),
        _write(
            {
                "a.jsonl": '{"unit": "u1", "r1": "X", "r2": "X"}\n'
                '{"unit": "u2", "r1": "Y", "r2": "#REF!"}\n'
            }
        ),
        line="failcodes: error: {d}/a.jsonl:2, field 'r2': Excel error value #REF! (a formula "
        "that failed; the file holds its text): fix or clear the cell",
    ),
]


def _hive_part(d: Path) -> None:
    """One part of a table hive-partitioned by system, and a labels table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (d / "system=A").mkdir()
    rows = {"question_id": ["q1"], "sentence_id": ["s1"], "claim_id": ["c1"], "claim": ["x"]}
    pq.write_table(pa.table({**rows, "verdict": ["refuted"]}), d / "system=A" / "p.parquet")
    (d / "l.csv").write_text("sentence_id,has_error\ns1,true\n", encoding="utf-8")


T32READ_CASES: list[Case] = [
    Case(
        # a frame read from a workbook and saved as JSONL kept a failed formula's text as a
        # passage: the judge coded '#REF!' as retrieved evidence (a unit of its own), exit 0
        "judge/excel-error-passage-in-jsonl",
        ("judge", "retrieval", "--from", "{d}/t.jsonl", "--dry-run", "--no-cache", "-o", "{d}/r"),
        _write(
            {
                "t.jsonl": '{"system": "A", "question_id": "q1", "sentence_id": "s1", '
                '"claim_id": "c1", "claim": "x", "verdict": "refuted", "passages": '
                '[{"passage_id": "p1", "rank": 1, "text": "#REF!"}]}\n'
            }
        ),
        line="failcodes: error: {d}/t.jsonl:1, field 'passages[0].text': Excel error value #REF! "
        "(a formula that failed; the file holds its text): fix or clear the cell",
    ),
    Case(
        # a labels frame read from a workbook and saved as JSONL kept a failed formula's text
        # as an annotator: an annotator '#REF!' of its own, exit 0
        "metrics/excel-error-annotator-in-jsonl",
        ("metrics", "--traces", "{d}/t.jsonl", "--labels", "{d}/l.jsonl"),
        _write(
            {
                "t.jsonl": '{"system": "A", "question_id": "q1", "sentence_id": "s1", '
                '"claim_id": "c1", "claim": "x", "verdict": "refuted"}\n',
                "l.jsonl": '{"sentence_id": "s1", "has_error": true, "annotator": "#REF!"}\n',
            }
        ),
        line="failcodes: error: {d}/l.jsonl:1, field 'annotator': Excel error value #REF! (a "
        "formula that failed; the file holds its text): fix or clear the cell",
    ),
    Case(
        # one part of a hive-partitioned table (system=A/part-0.parquet): the column is in the
        # folder's name; refused "missing column" with no word of it
        "metrics/hive-partition-part",
        ("metrics", "--traces", "{d}/system=A/p.parquet", "--labels", "{d}/l.csv"),
        _hive_part,
        line="failcodes: error: {d}/system=A/p.parquet:1, field 'system': missing column (have: "
        "question_id, sentence_id, claim_id, claim, verdict; the folder 'system=A' names it as a "
        "hive partition, which failcodes does not read (pyarrow reads a partition's value as a "
        "number where it can: question_id=007 and =7 are one): write the column into each file, "
        "as text)",
    ),
    Case(
        # every row names its system (A, B): --system A went unused, B's traces written beside
        # A's, exit 0, as if it chose A (h34red)
        "ingest-generic/system-among-the-rows-systems",
        ("ingest", "generic", "{d}/t.csv", "-o", "{d}/o.jsonl", "--system", "A"),
        _write(
            {
                "t.csv": "system,question_id,sentence_id,claim,verdict\n"
                "A,q1,s1,c,supported\nB,q1,s1,c,refuted\n"
            }
        ),
        line="failcodes: error: --system 'A' names the system of rows that give none, but every "
        "row names its own (A, B), so it chose none of them: give --option systems=A to read the "
        "rows of 'A' alone, or drop --system to keep every system's",
    ),
    Case(
        # an answer's label repeated on each sentence row: a wrong answer's right sentences
        # became errors (TP 1, FP 1, FN 4, TN 1 for the answers' TP 1, FP 1, FN 1; h34red)
        "ingest-generic-labels/answer-label-on-each-sentence",
        (
            "ingest",
            "generic-labels",
            "{d}/l.csv",
            "-o",
            "{d}/o.jsonl",
            "--label-rule",
            "answer_has_error = yes -> error",
        ),
        _write(
            {"l.csv": "question_id,sentence_id,answer_has_error\nq1,s1,yes\nq1,s2,yes\nq2,s3,no\n"}
        ),
        line="failcodes: error: {d}/l.csv:2, field 'answer_has_error': column "
        "'answer_has_error' is named as the answer's, and each question's sentences have one "
        "label (1 question(s) of several sentences, none split; question 'q1': all 2 sentences "
        "an error): the answer's label on each sentence row? read per sentence, the right "
        "sentences of a wrong answer count as errors (sentence metrics need each sentence's own "
        "label); if the clinicians labelled each sentence, --option label_level=sentence reads "
        "them as the sentences' own",
    ),
    Case(
        # C's traces closed-book (evidence_source none, given per trace or at a shard's
        # ingest) under --evidence retrieved (a study's system = "*"): each became retrieved
        # with no passage, its disagreements blamed on retrieval for verification, exit 0
        "ingest/evidence-overrides-the-traces-own",
        ("ingest", "generic", "{d}/t.jsonl", "-o", "{d}/o.jsonl", "--evidence", "retrieved"),
        _write(
            {
                "t.jsonl": '{"system": "C", "question_id": "q1", "sentence_id": "s1", '
                '"claim_id": "c1", "claim": "a", "verdict": "refuted", "evidence_source": "none"}\n'
            }
        ),
        line="failcodes: error: --evidence declares retrieved for system 'C', whose traces give "
        "their own evidence_source none (1 of 1): a declaration would override them; declare "
        "'C' as its traces do (--evidence C=none, a study's [[datasets.pipelines]] entry for "
        "it), or leave it undeclared to keep each trace's own",
    ),
]

CASES = (
    _trace_cases()
    + _codebook_cases()
    + OUTPUT_CASES
    + REPORT_CASES
    + OTHER_CASES
    + SWEEP_CASES
    + SWEEP3_CASES
    + SWEEP4_CASES
    + SWEEP4B_CASES
    + ROUND2_CASES
    + ISSUE25B_CASES
    + STUDY_FILE_CASES
    + LABEL_SYSTEM_CASES
    + HYGIENE_CASES
    + BOUND_CASES
    + JOURNAL_CASES
    + STREAMED_CASES
    + STUDY_SETTING_CASES
    + PANEL_CASES
    + STUDY_FOLDER_CASES
    + ISSUE29B_CASES
    + REDTEAM_CASES
    + REDTEAM4_CASES
    + REDTEAM6_CASES
    + REDTEAM8_CASES
    + REDTEAM10_CASES
    + RANK_CASES
    + I34RED_CASES
    + SESSION11_CASES
    + SESSION12_CASES
    + SESSION13_CASES
    + SESSION20_CASES
    + SESSION21_CASES
    + SESSION25_CASES
    + T30ATT_CASES
    + T30LEFT_CASES
    + T31READ_CASES
    + T31RED_CASES
    + T31NA_CASES
    + T32RED_CASES
    + T32READ_CASES
)


def test_the_suite_is_big_enough() -> None:
    assert len(CASES) >= 80, len(CASES)


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture(autouse=True)
def _release_held_locks() -> Iterator[None]:
    """Close the lock files a setup held once its case ran (left for the session, each was
    an unclosed-file ResourceWarning at exit)."""
    yield
    while _HELD:
        _HELD.pop().close()  # closing drops the lock


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "w"
    work.mkdir()
    case.setup(work)
    monkeypatch.chdir(work)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name, value in case.env:
        monkeypatch.setenv(name, value)
    before = _tree(work)
    capsys.readouterr()
    argv = [a.replace("{d}", str(work)) for a in case.argv]
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert info.value.code == 2, (err, out)
    assert len(lines) == 1, err
    assert lines[0].startswith("failcodes: error: "), err
    assert "Traceback" not in err
    for needle in case.expect:
        assert needle in lines[0], (needle, lines[0])
    if case.line is not None:
        assert lines[0] == case.line.replace("{d}", str(work))
    assert _tree(work) == before, "the command changed the workspace"
    assert os.getcwd() == str(work)


def test_study_plan_sniffs_past_binary_annotations(tmp_path: Path) -> None:
    # `failcodes run` plans recodes from the first line of each run's annotations.jsonl:
    # bytes that are not UTF-8 there were a UnicodeDecodeError traceback, not "unknown"
    from failcodes.study.recode import run_codebook

    (tmp_path / "annotations.jsonl").write_bytes(bytes(range(256)))
    assert run_codebook(tmp_path) is None


def test_study_bootstrap_cap_is_the_commands_cap() -> None:
    # the study file states the cap as a number (it does not import the statistics stack)
    from failcodes.stats.names import MAX_RESAMPLES
    from failcodes.study.config import MetricsSpec

    caps = [m.le for m in MetricsSpec.model_fields["bootstrap"].metadata if hasattr(m, "le")]
    assert caps == [MAX_RESAMPLES]


def test_output_onto_a_device_writes_through(tmp_path: Path) -> None:
    # `-o /dev/null` (or /dev/stdout) as root: the atomic rename replaced the device node with
    # a regular file (machine-wide). Tried on a null device node of our own.
    import stat

    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("creating a device node needs root")
    (tmp_path / "t.jsonl").write_text(GOOD_TRACES, encoding="utf-8")
    (tmp_path / "labels.csv").write_text(LABELS, encoding="utf-8")
    argv = [
        "metrics",
        "--traces",
        str(tmp_path / "t.jsonl"),
        "--labels",
        str(tmp_path / "labels.csv"),
    ]
    with pytest.raises(SystemExit) as info:
        main([*argv, "--level", "claim", "--format", "json", "-o", str(node)])
    assert info.value.code == 0
    assert stat.S_ISCHR(node.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.csv", "null", "t.jsonl"]


def test_study_file_with_a_bom_is_read(tmp_path: Path) -> None:
    # Windows Notepad saves UTF-8 with a byte-order mark: "not valid TOML: Invalid statement"
    from failcodes.study.config import load_study

    text = _study_file("", "")
    (tmp_path / "failcodes.toml").write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert load_study(tmp_path).name == "study"


def test_sentence_label_mismatch_on_traces_and_columns() -> None:
    # the same rule on trace objects and on trace columns (the claim-level reader's shape)
    from failcodes.labels import Label, sentence_label_mismatch
    from failcodes.tracecols import TraceColumns

    traces = make_traces(2)
    labels = [
        Label(sentence_id="q0-s1", question_id="q0", has_error=False),
        Label(sentence_id="Q1-s1", question_id="q1", has_error=True),
    ]
    near = "no trace has sentence_id 'Q1-s1', but one has 'q1-s1'"
    for shape in (traces, TraceColumns.from_traces(traces)):
        found = sentence_label_mismatch(labels, shape)
        assert found is not None and found[0] == 1 and found[1].startswith(near)
    # a sentence with no claim, unlike any trace's, beside a matched one: the known-sentence
    # rule, no mistake
    labels[1] = Label(sentence_id="q1-s9", question_id="q1", has_error=True)
    assert sentence_label_mismatch(labels, traces) is None
    # no sentence label matched at all: another id scheme
    labels[0] = Label(sentence_id="s1", question_id="q0", has_error=False)
    found = sentence_label_mismatch(labels, traces)
    assert found is not None and found[0] == 0 and "such as 'q0-s1'" in found[1]
    # ... unless a claim label has its claim (a whole answer labelled: claims, and sentences
    # without claims)
    labels.append(Label(claim_id="q0-c1", has_error=False))
    assert sentence_label_mismatch(labels, traces) is None


def _excel_bomb(path: Path) -> None:
    """A 0.5 MB workbook whose sheet unpacks to 500 MB (spaces in its sheet data)."""
    import zipfile

    from openpyxl import Workbook

    book = Workbook()
    for row in (["sentence_id", "has_error"], ["s1", True]):
        book.active.append(row)
    book.save(path)
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    head, tail = parts.pop("xl/worksheets/sheet1.xml").split(b"<sheetData>")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data in parts.items():
            z.writestr(name, data)
        with z.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as fh:
            fh.write(head + b"<sheetData>")
            for _ in range(500):
                fh.write(b" " * (1 << 20))
            fh.write(tail)


def _parquet_bomb_file(path: Path) -> None:
    """3 million traces whose claim is one dictionary-encoded 1 KB string (~3 GB decoded).

    2.06 MB, the harness's 2 MB: the claim ids (a new one every 8 rows) take 1.3 MB, a
    question id drawn from 4 (2 random bits a row) the rest.
    """
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    text = pa.array(["x" * 1000], pa.string())
    block = 100_000
    claim = pa.DictionaryArray.from_arrays(pa.array([0] * block, pa.int32()), text)
    names = ("claim_id", "claim", "verdict", "system", "question_id")
    schema = pa.schema([(n, pa.string()) for n in names])
    draw = random.Random(0)
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for k in range(30):
            ids = pa.array([str((k * block + i) // 8) for i in range(block)])
            same = pa.array(["supported"] * block)
            questions = pa.array([str(draw.randrange(4)) for _ in range(block)])
            columns = [ids, claim.cast(pa.string()), same, same, questions]
            writer.write_table(pa.table(columns, schema=schema))


@pytest.mark.parametrize(
    ("name", "make", "argv", "size"),
    [
        # the harness's shapes: a 0.5 MB workbook of 500 MB, a 2 MB Parquet file of 3 GB
        ("bomb.xlsx", _excel_bomb, ("ingest", "generic-labels"), (0.4, 0.6)),
        ("bomb.parquet", _parquet_bomb_file, ("ingest", "generic", "--system", "s"), (1.9, 2.2)),
        ("bomb.parquet", _parquet_bomb_file, ("metrics", "--labels", "{labels}", "--traces"), None),
    ],
)
def test_bombs_are_refused_within_bounds(
    tmp_path: Path,
    name: str,
    make: Callable[[Path], None],
    argv: tuple[str, ...],
    size: tuple[float, float] | None,
) -> None:
    # refused in a subprocess, its peak memory (polled) and CPU time
    # measured: under 300 MB and 5 s (the issue's bound; the bad-input bound is 500 MB, 10 s)
    import subprocess
    import sys
    import time

    import psutil

    bomb = tmp_path / name
    make(bomb)
    if size is not None:
        assert size[0] < bomb.stat().st_size / (1 << 20) < size[1]
    labels = tmp_path / "labels.csv"
    labels.write_text("claim_id,has_error\n1,false\n", encoding="utf-8")
    args = [a.replace("{labels}", str(labels)) for a in argv]
    if argv[0] == "metrics":
        args.append(str(bomb))
    else:
        args[2:2] = [str(bomb), "-o", str(tmp_path / "out.jsonl")]
    log = tmp_path / "stderr.txt"
    start = time.monotonic()
    peak, cpu = 0, 0.0
    with log.open("wb") as fh:
        # the child's memory polled every 5 ms (its ru_maxrss would count this process's
        # pages, inherited across the fork)
        proc = psutil.Popen(
            [sys.executable, "-m", "failcodes", *args],
            stdout=subprocess.DEVNULL,
            stderr=fh,
            env={**os.environ, "NO_COLOR": "1"},
        )
        while proc.poll() is None:
            try:
                peak = max(peak, proc.memory_info().rss)
                times = proc.cpu_times()
                cpu = times.user + times.system
            except psutil.NoSuchProcess:
                break
            time.sleep(0.005)
    wall = time.monotonic() - start
    err = log.read_text(encoding="utf-8")
    assert proc.wait() == 2, err
    assert len(err.splitlines()) == 1 and "bomb" in err, err
    assert peak < 300 << 20, peak
    assert cpu < 5, cpu
    # 10 s of wall on a quiet machine; on a loaded one (helpers' tests beside it, load 11-20
    # on 2 cores) the child waits for a core, so the bound grows with the load per core:
    # CPU above is the bound the tool controls, wall catches a child that blocks
    load = max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    assert wall < 10 * load, (wall, load)
    assert not (tmp_path / "out.jsonl").exists()


def test_recode_log_lines_are_checked(tmp_path: Path) -> None:
    # a torn last line or a field of the wrong type in recode.jsonl was a pydantic or JSON
    # traceback in `recode`, `run` and `recode --status`; now one line with its place
    from failcodes.errors import InputError
    from failcodes.study.recode import read_entries

    entry = {
        "unit_id": "u1",
        "from_version": 1,
        "to_version": 2,
        "method": "migrated",
        "coder": None,
        "reason": "r",
        "annotation": ANNOTATION,
    }
    log = tmp_path / "recode.jsonl"
    assert read_entries(log) == []
    log.write_text(json.dumps(entry) + "\n" + json.dumps(entry)[:30], encoding="utf-8")
    with pytest.raises(InputError, match=r"recode.jsonl:2: malformed JSON"):
        read_entries(log)
    log.write_text(json.dumps({**entry, "unit_id": 7}) + "\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"recode.jsonl:1, field 'unit_id': expected text, got the number 7$"
    ):
        read_entries(log)
    os.unlink(log)
    os.mkfifo(log)  # a FIFO named like the log: refused, not waited on
    with pytest.raises(InputError, match="not a regular file"):
        read_entries(log)


def test_panel_consensus_codes_are_checked_against_the_codebook(tmp_path: Path) -> None:
    # a consensus code outside the codebook was used by `attribute`; a truncated panel.json
    # was a pydantic traceback in `agree` and `attribute`
    from failcodes.codebook import load
    from failcodes.errors import InputError
    from failcodes.judge.panelrun import consensus_annotations

    cb = load(CODEBOOK)
    dim = cb.part("retrieval").dimensions[0]
    report = json.loads(_panel_report())
    vote = report["units"][0]["dimensions"][dim.id]
    panel = tmp_path / "panel.json"
    panel.write_text(json.dumps(report, indent=2), encoding="utf-8")
    # one dimension coded of several: unscored (no consensus on every dimension), read
    assert [a.status.value for a in consensus_annotations(tmp_path, cb)] == ["unscored"]
    bad = {**vote, "consensus": ["made_up"], "votes": {"made_up": 2}}
    report["units"] = [{"unit_id": "u1", "dimensions": {dim.id: bad}}]
    panel.write_text(json.dumps(report, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as info:
        consensus_annotations(tmp_path, cb)
    assert f"field 'units[0].dimensions.{dim.id}.consensus'" in str(info.value)
    assert "consensus code 'made_up' is not a code of dimension" in str(info.value)
    panel.write_text(json.dumps(report, indent=2)[:60], encoding="utf-8")
    with pytest.raises(InputError, match=r"panel.json:\d+: malformed JSON"):
        consensus_annotations(tmp_path, cb)


def test_plan_source_linked_out_of_the_study_is_refused(tmp_path: Path) -> None:
    # a plan's coded table that is a link to a system file was read (and hashed) as the table
    from failcodes.errors import InputError
    from failcodes.reviewplan import ReviewPlan, plan_source

    (tmp_path / "attribution" / "ds").mkdir(parents=True)
    (tmp_path / "attribution" / "ds" / "per_passage.csv").symlink_to("/etc/hostname")
    plan = ReviewPlan.model_validate(_plan_json())
    with pytest.raises(InputError, match="lies outside the study folder"):
        plan_source(plan, tmp_path, tmp_path / "p.json")
    (tmp_path / "attribution" / "ds" / "per_passage.csv").unlink()
    (tmp_path / "attribution" / "ds" / "per_passage.csv").write_text("x\n")
    assert plan_source(plan, tmp_path, tmp_path / "p.json") == (
        tmp_path / "attribution/ds/per_passage.csv"
    )
