"""``failcodes ingest generic-labels FILE -o OUT`` without pydantic, saying what the request says.

A study's labels step took 0.19 CPU-s, 5x the JSON parse of its file, ~half of it importing
pydantic and the models (issue 30). cli/direct.py now runs that command line (one JSONL file
to JSONL, no option) by labelio's own reading and writing, with no model imported; the same
command line with an option that changes nothing (``--option duplicates=refuse``, the default)
runs the request (:class:`~failcodes.commands.ingest.IngestRequest`) as before.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from failcodes.labelcols import LABEL_FIELDS
from failcodes.labelio import _label_decoder
from failcodes.labels import Label
from failcodes.tableio import msgspec_type


def _run(argv: list[str]) -> tuple[int, str, str, set[str]]:
    """Exit code, stdout, stderr and the modules loaded of ``failcodes ARGV`` (a new process)."""
    with tempfile.TemporaryDirectory() as folder:
        listed = Path(folder) / "modules"
        code = (
            "import atexit, runpy, sys\n"
            f"atexit.register(lambda: open({str(listed)!r}, 'w').write(' '.join(sys.modules)))\n"
            f"sys.argv = ['failcodes', *{argv!r}]\n"
            "runpy.run_module('failcodes', run_name='__main__')\n"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        loaded = set(listed.read_text().split())
    return proc.returncode, proc.stdout, proc.stderr, loaded


def _lines(*records: dict[str, object]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


CLEAN = _lines(
    {"sentence_id": "q:s0", "question_id": "q", "has_error": True, "annotator": "a"},
    {"sentence_id": "q:s1", "question_id": "q", "has_error": False, "annotator": "a"},
    {"sentence_id": "q:s2", "question_id": "q", "has_error": False, "annotator": "a"},
)

#: Files the fast reader cannot vouch for, or that are refused (each as the request says it).
OTHERS = {
    # "true" as text: msgspec refuses it, the exact reader (pydantic) reads it as true
    "text bool": _lines({"sentence_id": "s0", "has_error": "true"}),
    "duplicate": _lines(
        {"sentence_id": "s0", "has_error": True}, {"sentence_id": "s0", "has_error": False}
    ),
    "padded id": _lines({"sentence_id": " s0", "has_error": True}),
    "totals row": _lines(
        {"sentence_id": "s0", "has_error": True}, {"sentence_id": "Total", "has_error": True}
    ),
    "mixed systems": _lines(
        {"sentence_id": "s0", "has_error": True, "system": "A"},
        {"sentence_id": "s1", "has_error": True},
    ),
    "no target": _lines({"has_error": True}),
    "unknown field": _lines({"sentence_id": "s0", "has_error": True, "verdict": "x"}),
    "empty": "\n",
}


def _both(tmp_path: Path, text: str, *, into_input: bool = False) -> list[tuple[object, ...]]:
    """The run of ``ingest generic-labels IN -o OUT`` (the fast path) and the request's."""
    given = tmp_path / "labels.jsonl"
    given.write_text(text, encoding="utf-8")
    runs = []
    for name, extra in (("fast", []), ("request", ["--option", "duplicates=refuse"])):
        out = given if into_input else tmp_path / f"{name}.jsonl"
        code, stdout, err, loaded = _run(
            ["ingest", "generic-labels", str(given), "-o", str(out), *extra]
        )
        written = out.read_bytes() if out.exists() and not into_input else None
        runs.append(
            (
                code,
                stdout.replace(str(out), "OUT"),
                err.replace(str(out), "OUT"),
                written,
                "pydantic" in loaded,
            )
        )
    return runs


def test_a_labels_file_is_ingested_without_pydantic_as_the_request_writes_it(
    tmp_path: Path,
) -> None:
    fast, request = _both(tmp_path, CLEAN)
    assert fast[-1] is False and request[-1] is True  # pydantic imported by the request only
    # by hand: three labels, each line pydantic's model_dump_json(exclude_none=True) in field order
    expected = (
        b'{"sentence_id":"q:s0","question_id":"q","has_error":true,"annotator":"a"}\n'
        b'{"sentence_id":"q:s1","question_id":"q","has_error":false,"annotator":"a"}\n'
        b'{"sentence_id":"q:s2","question_id":"q","has_error":false,"annotator":"a"}\n'
    )
    assert fast[:4] == (0, "wrote 3 labels -> OUT\n", "", expected)
    assert fast[:4] == request[:4]


@pytest.mark.parametrize("case", sorted(OTHERS))
def test_a_labels_file_the_fast_reader_cannot_vouch_for_is_read_or_refused_as_the_request_does(
    tmp_path: Path, case: str
) -> None:
    fast, request = _both(tmp_path, OTHERS[case])
    assert fast[:4] == request[:4]
    if case == "text bool":
        assert fast[:4] == (
            0,
            "wrote 1 labels -> OUT\n",
            "",
            b'{"sentence_id":"s0","has_error":true}\n',
        )
    else:  # one line naming the file, nothing written
        assert (
            fast[0] != 0 and fast[2].startswith("failcodes: error: ") and fast[2].count("\n") == 1
        )
        assert fast[3] is None


def test_an_output_onto_its_input_is_refused_as_the_request_refuses_it(tmp_path: Path) -> None:
    fast, request = _both(tmp_path, CLEAN, into_input=True)
    assert fast[:3] == request[:3]
    assert "is also an input or another output of this command" in fast[2]
    assert (tmp_path / "labels.jsonl").read_text(encoding="utf-8") == CLEAN  # untouched


def test_the_label_fields_held_without_pydantic_are_the_models() -> None:
    """labelcols.LABEL_FIELDS and labelio's decoder types are Label's, written without it."""
    import msgspec

    assert tuple(Label.model_fields) == LABEL_FIELDS
    decoded = msgspec.structs.fields(_label_decoder().type)
    assert tuple(f.name for f in decoded) == LABEL_FIELDS
    for field, (name, info) in zip(decoded, Label.model_fields.items(), strict=True):
        assert field.type == msgspec_type(info.annotation, info.metadata), name
        assert field.required == info.is_required(), name


def test_import_failcodes_reads_its_public_names_without_ast() -> None:
    """``import failcodes`` (every command, ``version`` too) parsed its own source with ast:
    ~25 M of the ~117 M instructions of ``failcodes version``. The names are read as lines;
    they equal those an ast walk of each package's ``if TYPE_CHECKING:`` block gives."""
    import ast
    import importlib

    code = "import sys, failcodes, failcodes.judge, failcodes.study; print('ast' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout == "False\n"
    sizes = {}
    for name in ("failcodes", "failcodes.judge", "failcodes.study"):
        package = importlib.import_module(name)
        tree = ast.parse(Path(str(package.__file__)).read_text(encoding="utf-8"))
        block = next(
            n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.dump(n.test)
        )
        walked = {
            a.asname or a.name: (str(n.module), a.name)
            for n in block.body
            if isinstance(n, ast.ImportFrom)
            for a in n.names
        }
        assert walked == package._LAZY, name
        sizes[name] = len(walked)
    # 92: failcodes.plan_run joined the public names (8b2b710, session 32)
    assert sizes == {"failcodes": 92, "failcodes.judge": 32, "failcodes.study": 7}
