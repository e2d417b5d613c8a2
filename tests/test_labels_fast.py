"""The msgspec reader of labels as columns against the exact (json + pydantic) reader.

Issue 18: ``read_labels(..., columns=True)`` decodes JSONL labels with msgspec and falls
back to the exact reader for anything it cannot vouch for, so labels and errors are those
of the exact reader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes import labelio
from failcodes.errors import InputError
from failcodes.labels import Label, LabelColumns

# sentence and claim labels; optional fields present, absent and null; unicode and escapes;
# a blank line, a CRLF line ending and a BOM (the exact reader tolerates all three)
_LINES = [
    '\ufeff{"sentence_id": "q1:s0", "question_id": "q1", "has_error": false}',
    '{"sentence_id": "q1:s1", "question_id": "q1", "has_error": true, "rationale": '
    '"Dosis über dem Grenzwert — 5 µg", "severity": "Severe", "annotator": "Zoë"}',
    "",
    '{"claim_id": "c7", "has_error": true, "sentence": "Aspirin \\"helps\\": 10 mg"}',
    '{"sentence_id": "q2:s0", "claim_id": "c8", "question_id": "q2", "has_error": false, '
    '"annotator": "Zoë", "rationale": "back\\\\slash \\u00e9"}\r',
    '{"has_error":false,"sentence_id":"q2:s1","severity":"Mild","sentence":"日本語の文"}',
]


def _exact(path: Path) -> LabelColumns:
    """Labels as columns through the exact reader (the fast reader switched off)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(labelio, "_fast_label_columns", lambda *_: None)
        return labelio.read_labels(path, columns=True)


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8") + b"\n")
    return path


def test_fast_and_exact_readers_give_equal_columns(tmp_path: Path) -> None:
    path = _write(tmp_path, _LINES)
    fast = labelio._fast_label_columns(path, None)
    assert fast is not None  # the fast reader vouched for every line
    exact = _exact(path)
    assert list(fast.lines) == list(exact.lines) == [1, 2, 4, 5, 6]
    for name in Label.model_fields:
        assert list(fast.column(name)) == list(exact.column(name)), name
    assert [lab.model_fields_set for lab in fast] == [lab.model_fields_set for lab in exact]
    assert list(fast) == list(exact)
    # the values as written (read independently with json)
    assert exact[1].rationale == "Dosis über dem Grenzwert — 5 µg"
    assert exact[2].sentence == 'Aspirin "helps": 10 mg'
    assert exact[3].rationale == "back\\slash é"
    assert exact[4].model_fields_set == {"has_error", "sentence_id", "severity", "sentence"}
    assert labelio.read_labels(path, columns=True)[4] == exact[4]


@pytest.mark.parametrize(
    "line",
    [
        '{"sentence_id": "s9", "has_error": "true"}',  # coerced by pydantic: fine
        '{"sentence_id": "s9", "has_error": true, "severity": null}',  # null dropped
    ],
)
def test_lines_only_the_exact_reader_accepts_are_read_by_it(tmp_path: Path, line: str) -> None:
    path = _write(tmp_path, [*_LINES, line])
    assert labelio._fast_label_columns(path, None) is None
    labels = labelio.read_labels(path, columns=True)
    assert list(labels) == list(_exact(path))
    assert labels[5] == Label(sentence_id="s9", has_error=True)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"sentence_id": "s9", "has_error": "maybe"}',
            "labels.jsonl:7, field 'has_error': expected true or false (or 1/0, yes/no), got "
            "'maybe'; labels written other than true/false or 1/0 "
            "(ja/nein, a scale, blanks)? failcodes ingest generic-labels FILE -o OUT "
            "--label-rule 'has_error in {ERROR VALUES} -> error; has_error in {OTHER VALUES} "
            "-> no_error; otherwise -> skip'",
        ),
        (
            '{"sentence_id": "s9", "sentence_id": "s10", "has_error": true}',
            "labels.jsonl:7, field 'sentence_id': key 'sentence_id' appears twice in one object",
        ),
        (  # msgspec keeps the last of two keys: the escaped quote takes the regex count
            '{"sentence_id": "s\\":9", "sentence_id": "s10", "has_error": true}',
            "labels.jsonl:7, field 'sentence_id': key 'sentence_id' appears twice in one object",
        ),
        (
            '{"sentence_id": "s9", "has_error": true, "note": "x"}',
            # read_labels with no column map is metrics' reader, which has no --map
            "labels.jsonl:7, field 'note': unknown field (a foreign file: convert it with "
            "failcodes ingest generic-labels --map FOREIGN=ours)",
        ),
        (
            '{"has_error": true, "annotator": "Zoë"}',
            "labels.jsonl:7: a label needs a sentence_id or a claim_id",
        ),
        (
            '{"sentence_id": "q1:s1", "has_error": true, "annotator": "Zoë"}',
            "labels.jsonl:7, field 'sentence_id': duplicate label for sentence 'q1:s1' by "
            "'Zoë' (first at line 2); a row per code of one sentence (several codes)? "
            "failcodes ingest generic-labels FILE -o OUT --option duplicates=same keeps one of "
            "each target labelled alike; labels of several systems' answers stacked? ingest "
            "each system's with --system NAME (or --option label_scope=system) so each label "
            "names its system",
        ),
    ],
)
def test_a_bad_line_gives_the_exact_readers_error(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path, [*_LINES, line])
    with pytest.raises(InputError) as fast:
        labelio.read_labels(path, columns=True)
    with pytest.raises(InputError) as exact:
        _exact(path)
    assert str(fast.value) == str(exact.value)
    assert str(fast.value).endswith(message)


def test_a_column_map_or_csv_takes_the_exact_reader(tmp_path: Path) -> None:
    path = _write(tmp_path, [json.dumps({"sid": "s1", "has_error": False})])
    assert labelio._fast_label_columns(path, {"sid": "sentence_id"}) is None
    labels = labelio.read_labels(path, columns=True, column_map={"sid": "sentence_id"})
    assert list(labels) == [Label(sentence_id="s1", has_error=False)]
    csv = tmp_path / "labels.csv"
    csv.write_text("sentence_id,has_error\ns1,false\n", encoding="utf-8")
    assert labelio._fast_label_columns(csv, None) is None
