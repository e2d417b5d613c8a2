"""Session 21 (t21src2): one check sequence where two paths ran the same checks.

The Python API's :func:`ratings_from_frame` restated ``agree``'s wide-table checks
(:func:`ratings_tables`) in an order of its own, and lacked the refusal of one set of codes
joined two ways (bb26071 landed it on the CLI's path only).
"""

from __future__ import annotations

import ast
import datetime as dt
import inspect
import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from failcodes.errors import InputError
from failcodes.stats.tables import ratings_from_frame, ratings_tables
from tests.cli_helpers import agree_percent_run, agree_refused, ratings_file


def _refusals(frame: pd.DataFrame) -> tuple[str, str]:
    """The Python API's and the CLI's (``ratings_tables``) refusals of ``frame``."""
    with pytest.raises(InputError) as api:
        ratings_from_frame(frame)
    with pytest.raises(InputError) as cli:
        ratings_tables(frame)
    return str(api.value), str(cli.value)


def test_api_refuses_codes_joined_two_ways_as_the_cli_does() -> None:
    # units 1 and 3: the codes {x, y} from both raters, written 'x;y' and 'y;x'; x and y
    # never alone, so _no_code_sets does not see a set. Read as one category each, the
    # raters agree on unit 2 only: percent 1/4 = 0.25, where as sets they agree on 1, 2 and
    # 3: 3/4 = 0.75 (main's ratings_from_frame gave 0.25 with no word; the CLI refused)
    frame = pd.DataFrame(
        {"unit": ["1", "2", "3", "4"], "a": ["x;y", "z", "y;x", "z"], "b": ["y;x", "z", "x;y", "w"]}
    )
    api, cli = _refusals(frame)
    # the same refusal; the API names the frame's rows (t28small): 'y;x' in row 2, 'x;y' row 0
    # and agree's --sets as the Python call that takes it (t29red2)
    python = "failcodes.AgreeRequest(file=..., sets=';') on the frame written to a CSV file"
    assert api == cli.replace("field 'a': ", "field 'a': row 2: ").replace(
        "line 2", "row 0"
    ).replace("--sets ';'", python)
    assert "'y;x' holds the codes of 'x;y' (line 2, column 'a')" in cli


def test_api_checks_in_the_cli_order() -> None:
    # unit '2' on two rows and a date on line 5: agree names the unit on two rows (its
    # one_row_per_unit runs before no_dates); main's ratings_from_frame named the date
    frame = pd.DataFrame(
        {
            "unit": ["1", "2", "2", "3"],
            "a": ["yes", "no", "yes", dt.date(2024, 1, 2)],
            "b": ["yes", "no", "no", "yes"],
        }
    )
    api, cli = _refusals(frame)
    # the same refusal; the API names the frame's rows (t28small): unit '2' in rows 1 and 2
    # and agree's --long as the pivot Python takes (t29red2)
    pivot = (
        "pivot it to one column per rater: frame.pivot(index=UNIT, columns=RATER, values=RATING)"
    )
    assert api == cli.replace("field 'unit': ", "field 'unit': row 2: ").replace(
        "line 3", "row 1"
    ).replace("name the columns with --long RATER_COLUMN,RATING_COLUMN", pivot)
    assert "unit '2' is on two rows (first at line 3)" in cli


def _calls(statements: list[ast.stmt]) -> list[str]:
    """The functions ``statements`` call, as written (``labelio.write_labels``), sorted."""
    return sorted(
        {ast.unparse(n.func) for s in statements for n in ast.walk(s) if isinstance(n, ast.Call)}
    )


def _body(function: Callable[..., object]) -> list[ast.stmt]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    assert isinstance(definition, ast.FunctionDef)
    return definition.body


def test_the_direct_labels_path_is_told_of_a_new_step_of_the_request() -> None:
    # cli/direct._labels_file runs `ingest generic-labels FILE -o OUT` (one JSONL file, no
    # option) without IngestRequest, restating its steps (t20fast: importing pydantic was
    # half the step's time): check_not_input, read_labels, "no labels found", write_labels.
    # A step added to the request, or to generic-labels' reader before its columnar return,
    # would not be on the direct path (session 20's doubt). The calls are pinned here: a new
    # one fails this test until the direct path has it too (if it applies to that command
    # line: no option, one JSONL file to JSONL) and it is added below.
    from failcodes.commands.ingest import IngestRequest
    from failcodes.ingest import generic

    # run's steps and those of _read_write, which run calls inside sheetio.first_sheet_hint
    # (821d48b: a workbook's README sheet; the direct path reads one JSONL file, no workbook)
    steps = _body(IngestRequest.run) + _body(IngestRequest._read_write)
    assert _calls(steps) == [
        "ConfigError",
        "IngestResult",
        "_system_labels",  # --system: an option
        "_write_traces",  # traces adapters
        "bundled_or_path",  # bundled: paths go to the request
        "check_not_input",  # on the direct path
        "done.notes.append",
        "done.written.append",
        "fileio.AtomicBatch",  # write_labels writes in a batch of its own
        "first_sheet_hint",  # workbooks only (not the direct path's one JSONL file)
        "get_adapter",
        "getattr",
        "labelio.write_labels",  # on the direct path
        "labelio.write_sentences",  # --sentences-out: an option
        "len",
        "list",
        "note",  # generic-labels' no-option read has no notes
        "opened or chosen.read",
        "parse_evidence_declarations",  # --evidence: an option
        "self._check_result",
        "self._read_write",
        "self.adapter_options",
        "self.check_adapter",
        "tableio.detect_format",  # the direct path's choice of its command line
    ]
    # "no labels found" on the direct path; the ConfigErrors are --labels-out/--sentences-out
    assert _calls(_body(IngestRequest._check_result)) == [
        "', '.join",
        "ConfigError",
        "InputError",
        "str",
    ]
    steps = _body(generic._read_labels)
    fast = next(i for i, s in enumerate(steps) if "label_rule is None" in ast.unparse(s))
    # each reads an option (none on the direct path's command line) or its map ({})
    assert _calls(steps[:fast]) == [
        "ConfigError",
        "LABEL_TARGETS.get",
        "_OneScope",
        "_table_spec",
        "any",
        "check_option",
        "is_document",
        "is_spreadsheet",
        "options.extra.get",
        "options.option",
        "options.renames",
        "options.renames().items",
        "refuse_correct_as_error",
        "spec.check_index_columns",
    ]


def test_a_row_of_blank_cells_under_a_ratings_csv_is_no_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ' , , ' under the table (cells of spaces): pandas kept it as a fifth row, which the CSV
    # reader (skipping it) had no line for, so the cell checks that name a line were skipped
    # and the first line said 'missing ratings: a rated 4, b rated 4 of 5 units' for 4 units
    # rated by both. By hand: units 2, 3, 4 agree, 1 does not: percent 3/4 = 0.75
    blank = ratings_file(tmp_path, "unit,a,b\n1,1,2\n2,2,2\n3,1,1\n4,3,3\n , , \n")
    code, out, err = agree_percent_run(blank, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["value"], row["n_units"]) == (0.75, 4)
    assert "missing ratings" not in row["notes"][0]
    # '1,5' (a decimal comma) among numbers is refused naming its line, blank row or not
    # (main read it as a text category beside that row: 'the ratings mix numbers and words')
    comma = ratings_file(tmp_path, 'unit,a,b\n1,"1,5",2\n2,2,2\n3,"1,5","1,5"\n4,3,3\n , , \n')
    assert "r.csv:2, field 'a': '1,5' has a decimal comma" in agree_refused(comma, capsys)


def test_a_ratings_csv_column_without_a_name_is_said_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the CSV is read by the CSV reader, no longer by pandas too: a trailing comma's column
    # keeps the name pandas gave it, and the first line says it is no rater
    path = ratings_file(tmp_path, "unit,a,b,\n1,1,2,\n2,2,2,\n3,1,1,\n4,3,3,\n")
    code, out, err = agree_percent_run(path, capsys)
    assert code == 0, err
    first = json.loads(out)[0]["notes"][0]
    assert "not raters (they share no value with the raters' ratings): Unnamed: 3;" in first
