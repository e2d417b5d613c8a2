"""Session 24, t24tests: the readers' last refusals (a touched file, an export over 1 GB).

Each test states the input, what failcodes gave before the fix, and the value by hand beside
the assertion.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from failcodes import jsonio, tableio
from failcodes.errors import InputError

#: 3 lines of 8 bytes ('{"a":1}' and '\n'): 24 bytes
_THREE = b'{"a":1}\n{"a":2}\n{"a":3}\n'


def _touched_midway(lines: Iterator[Any], path: Path) -> list[Any]:
    """Read ``lines``, touching ``path`` (its modification time a minute on) after the first."""
    got = [next(lines)]
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 60_000_000_000))
    got.extend(lines)
    return got


@pytest.mark.parametrize("reader", ["jsonl_lines", "byte_lines", "byte_blocks"])
def test_a_jsonl_file_touched_while_read_is_read(tmp_path: Path, reader: str) -> None:
    # `touch t.jsonl` (or a sync client setting its time) while ingest read it: refused, "the
    # file changed while it was read (24 bytes when opened, 24 at the end: still being
    # written?)", exit 2, though every byte was there: its 3 lines, 24 bytes, as written
    path = tmp_path / "t.jsonl"
    path.write_bytes(_THREE)
    with path.open("rb") as fh:
        if reader == "jsonl_lines":
            got = _touched_midway(jsonio.jsonl_lines(path), path)
        elif reader == "byte_lines":
            got = _touched_midway(jsonio.byte_lines(fh, path), path)
        else:  # one read holds the 24 bytes: the lists of lines, one
            got = _touched_midway(jsonio.byte_blocks(fh, path), path)
    if reader == "byte_blocks":
        assert got == [([b'{"a":1}\n', b'{"a":2}\n', b'{"a":3}\n'], 6)]  # 2 '"' a line
    else:
        assert [n for n, _ in got] == [1, 2, 3]


def test_a_csv_file_copied_over_with_the_same_bytes_while_read_is_read(tmp_path: Path) -> None:
    # `cp backup/t.csv t.csv` (the same 8 bytes, a new time) while metrics read it: refused as
    # changed; its rows are '1', '2', '3' whichever copy was read
    path, backup = tmp_path / "t.csv", tmp_path / "backup.csv"
    path.write_bytes(b"a\n1\n2\n3\n")
    backup.write_bytes(b"a\n1\n2\n3\n")
    rows = tableio.csv_rows(path, ())
    got = [next(rows)]
    st = path.stat()
    shutil.copyfile(backup, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 60_000_000_000))
    got.extend(rows)
    assert [r["a"] for _, r in got] == ["1", "2", "3"]


def test_a_read_that_ended_before_the_files_end_is_refused(tmp_path: Path) -> None:
    # a file cut by its writer while read, then written back to its size: the read ended at
    # byte 8 of 24 (here: 8 bytes read of the 24, the size when opened and now). The size
    # alone would take the 8 bytes as the file
    path = tmp_path / "t.jsonl"
    path.write_bytes(_THREE)
    with path.open("rb", buffering=0) as fh:
        opened = jsonio.file_state(fh)
        assert fh.read(8) == b'{"a":1}\n'
        with pytest.raises(InputError) as caught:
            jsonio.check_unchanged(fh, path, opened)
        assert str(caught.value) == (
            f"{path}: the file changed while it was read (24 bytes, but its read ended at byte "
            "8: rewritten while read?): read it once its writer is done"
        )
        assert fh.read() == _THREE[8:]
        jsonio.check_unchanged(fh, path, opened)  # read to its end: 24 of 24


@pytest.mark.parametrize("piece", [1, 2, 3, 5, 7, 64])
def test_a_json_list_read_element_by_element_is_the_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    # reads of `piece` characters cut numbers, literals, escapes and strings anywhere: each
    # element is the one json.loads gives, with the line it starts on (1-based)
    import json

    monkeypatch.setattr(jsonio, "_PIECE", piece)
    text = (
        '[ 12345, -0.5e-3,\n"caf\\u00e9 \\"q\\"",\ttrue , null,\n'
        '{"a": [1, 2, {"b": false}], "c": "]"},\n[],\n{} ]\n'
    )
    path = tmp_path / "l.json"
    path.write_text(text, encoding="utf-8")
    got = list(jsonio.iter_json_list(path))
    assert [v for _, v in got] == json.loads(text)
    assert [n for n, _ in got] == [1, 1, 2, 2, 2, 3, 4, 5]
    empty = tmp_path / "e.json"
    empty.write_text(" [ ]\n", encoding="utf-8")
    assert list(jsonio.iter_json_list(empty)) == []


@pytest.mark.parametrize(
    ("text", "error"),
    [
        # the strict parser's refusals, element by element, at the element's line
        ('[{"a": 1},\n{"a": 1, "a": 2}]', "2, field 'a': key 'a' appears twice in one object"),
        ("[1,\n2,\nNaN]", "3: NaN is not a number JSON allows; write null for a missing value"),
        ("[1,\n" + "[" * 65 + "]" * 65 + "]", "2: JSON nested deeper than 64 levels"),
        ('[1,\n2\n"x"]', "3: malformed JSON (expected ',' or ']' after an element of the list, "
         "found '\"')"),
        ("[1,\n2,\n]", "3: malformed JSON (Expecting value)"),
        ("[1, 2", "1: malformed JSON (expected ',' or ']' after an element of the list, found "
         "'the end of the file')"),
        ("[1]\n[2]", "2: malformed JSON (text after the list's closing ]); more than one JSON "
         "value?"),
        ('{"tasks": []}', "expected a JSON list ([...]) read element by element"),
    ],
)  # fmt: skip
def test_a_json_list_read_element_by_element_refuses_as_the_document_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, error: str
) -> None:
    monkeypatch.setattr(jsonio, "_PIECE", 3)
    path = tmp_path / "l.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(jsonio.iter_json_list(path))
    where = f"{path}:" if error[0].isdigit() else f"{path}: "
    assert str(caught.value) == where + error


def test_an_element_past_the_limit_is_refused_before_it_is_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the element limit 64 MB, here 100 characters: element 2 (line 2) holds 200
    monkeypatch.setattr(jsonio, "MAX_ELEMENT", 100)
    path = tmp_path / "l.json"
    path.write_text('[1,\n"' + "x" * 200 + '"]', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(jsonio.iter_json_list(path))
    assert str(caught.value) == (
        f"{path}:2: an element of the list over 100 characters (no Label Studio task is that "
        "long: a JSON syntax error?)"
    )


def _export_of_three_tasks(folder: Path) -> tuple[Path, Path]:
    """A Label Studio export (JSON, project 7) of 3 toy-codebook tasks, one a line: task 1
    annotated by users 3 (irrelevant) and 4 (exact_entity), task 2 by 3 (partial_entity),
    task 3 by none; and the codebook."""
    import json

    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook
    from tests.test_outside_red14b import _ls_ann, _ls_task

    tasks = [
        _ls_task(1, 7, [_ls_ann(3, "irrelevant", shown=False), _ls_ann(4, "exact_entity", False)]),
        _ls_task(2, 7, [_ls_ann(3, "partial_entity", shown=False)]),
        _ls_task(3, 7, []),
    ]
    export = folder / "export.json"
    export.write_text("[\n" + ",\n".join(map(json.dumps, tasks)) + "\n]\n", encoding="utf-8")
    return export, write_codebook(folder / "cb.yaml", toy_codebook())


def test_a_label_studio_export_over_the_document_limit_is_imported_a_task_at_a_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # an export over 1 GB (here the limit is 64 bytes): refused, "a JSON document of N bytes,
    # over the 1,073,741,824-byte limit ...: write it as JSONL (jq -c '.[]' FILE)", which
    # `labelstudio import` does not read: no way through. Now read a task at a time: the
    # annotations of the export read whole, by hand: bob (3) irrelevant and partial_entity,
    # alice (4) exact_entity; 3 tasks
    import json

    from tests.cli_helpers import run_cli

    export, cb = _export_of_three_tasks(tmp_path)
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "-c", str(cb)]
    users = ["--user", "3=bob", "--user", "4=alice"]
    whole = tmp_path / "whole.jsonl"
    code, _, err = run_cli([*args, *users, "-o", str(whole)], capsys)
    assert code == 0, err
    monkeypatch.setattr(jsonio, "MAX_DOCUMENT", 64)
    streamed = tmp_path / "streamed.jsonl"
    code, out, err = run_cli([*args, *users, "-o", str(streamed)], capsys)
    assert code == 0, err
    assert streamed.read_text(encoding="utf-8") == whole.read_text(encoding="utf-8")
    got = [json.loads(line) for line in streamed.read_text(encoding="utf-8").splitlines()]
    assert [(a["coder"], a["codes"]["entity"]) for a in got] == [
        ("bob", "irrelevant"),
        ("alice", "exact_entity"),
        ("bob", "partial_entity"),
    ]
    # a --user no annotation is by is refused as when read whole, nothing written
    refused = tmp_path / "refused.jsonl"
    code, out, err = run_cli([*args, "--user", "5=carol", "-o", str(refused)], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"failcodes: error: {export}: --user 5=carol: no annotation in the export is by user "
        "id 5 (the ids it holds: 3, 4)\n"
    )
    assert not refused.exists()


def test_holm_is_statsmodels_values_without_a_garbage_collection_a_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # statsmodels' multipletests(method="holm") runs gc.collect() on every call: 6 calls,
    # 3.1 of `compare`'s 29.5 s on the demo data (two mappings x McNemar, recall, F1)
    import gc

    import numpy as np
    from statsmodels.stats.multitest import multipletests

    from failcodes.stats.tests import holm

    collected: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(1) or 0)
    # by hand: sorted 0.01, 0.03, 0.04 times 3, 2, 1 = 0.03, 0.06, 0.04; running max 0.03,
    # 0.06, 0.06 (Holm 1979)
    assert holm([0.01, 0.04, None, 0.03]) == pytest.approx([0.03, 0.06, None, 0.06])
    rng = np.random.default_rng(0)
    for size in (1, 2, 5, 12):
        p = rng.uniform(0, 1, size) ** 3
        p[: size // 3] = p[-1]  # ties
        got = holm(p.tolist())
        assert collected == []
        monkeypatch.undo()
        assert got == pytest.approx(multipletests(p, method="holm")[1].tolist(), abs=0, rel=1e-15)
        monkeypatch.setattr(gc, "collect", lambda *a: collected.append(1) or 0)
