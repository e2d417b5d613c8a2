"""Annotation lines vouched for by msgspec read as the strict reader reads them (issue 30).

``attribute`` (a judge run's journal) and ``labelstudio export`` (its annotations.jsonl) take
an annotation from :func:`~failcodes.annotationlines.vouched` without building the pydantic
model. What must never change: which lines are accepted, the values they give, the errors.
Every line here is read every way: vouched, by the strict JSONL reader (``read_models_jsonl``),
by the journal's row reader (``decode_row``), by ``iter_annotations`` and ``AnnotationIndex``:
where the voucher accepts a line the others accept it with the same values; the files' readers
give the strict reader's annotations or its very error.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failcodes.annotationio import AnnotationIndex, iter_annotations
from failcodes.annotationlines import (
    AnnotationLine,
    EvidenceLine,
    RefLine,
    UsageLine,
    is_dumped,
    vouched,
)
from failcodes.annotations import Annotation, CodebookRef, DimensionEvidence, Usage
from failcodes.errors import InputError
from failcodes.judge.journal import decode_row, dumped_row
from failcodes.tableio import read_models_jsonl

FULL: dict[str, Any] = {
    "unit_id": "0123456789abcdef",
    "unit_kind": "retrieval",
    "codebook": {"name": "medical-fact-check", "version": 1, "hash": "ab" * 32},
    "coder": "offline",
    "coder_kind": "heuristic",
    "status": "scored",
    "reason": None,
    "codes": {"scope": "broader_scope", "entity_match": "exact_entity"},
    "code_sets": {"scope": ["broader_scope", "narrower_scope"]},
    "leaves": {"scope": ["leaf_a"]},
    "evidence": {
        "scope": {"rationale": "r", "quote": "q", "quote_found": True, "uncertain": False},
        "entity_match": {"rationale": "s", "quote": None, "quote_found": None, "uncertain": True},
    },
    "rationale": None,
    "quote": None,
    "quote_found": True,
    "proposal": None,
    "uncertain": True,
    "usage": {
        "input_tokens": 10,
        "cached_input_tokens": 0,
        "output_tokens": 3,
        "cost_usd": 0.0,
        "latency_s": 0.0012015789998258697,
    },
    "lead_time_s": None,
    "created_at": "2026-12-01T23:29:06.392384Z",
}


def _strict(path: Path) -> list[Annotation] | str:
    try:
        return read_models_jsonl(path, Annotation)
    except InputError as exc:
        return exc.one_line()


def _same(line: AnnotationLine, model: Annotation, *, created: bool = True) -> None:
    """The struct holds the model's values, types included (1 is not 1.0, -0.0 not 0.0).

    ``created``: compare the times too (``AnnotationIndex.get`` leaves a line's as text).
    """
    got = msgspec.to_builtins(line)
    created_at = got.pop("created_at")
    assert not created or datetime.fromisoformat(created_at) == model.created_at
    want = model.model_dump(mode="json", exclude={"created_at"})
    assert json.dumps(got) == json.dumps(want)


def check_line(line: str, tmp: Path) -> None:
    """Every reader of ``line`` agrees (see the module docstring)."""
    got = vouched(line)
    assert got == vouched(line.encode("utf-8"))  # text (a journal row) as bytes (a file line)
    path = tmp / "a.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    want = _strict(path)
    if got is not None:
        assert not isinstance(want, str), f"vouched for a line the strict reader refuses: {want}"
        _same(got, want[0])
        _same(got, decode_row(path, 1, got.unit_id, line))  # the journal's reader
        # the judge's annotations.jsonl line of the row: the model's JSON (issue 31)
        model = decode_row(path, 1, got.unit_id, line)
        assert dumped_row(path, 1, got.unit_id, line) == model.model_dump_json().encode()
        # what the model dumps is given as it stands (no second decode), unless a float of
        # 1e16 or more is in it (pydantic writes 1e+16, msgspec 1e16)
        dumped = model.model_dump_json()
        again = vouched(dumped)
        floats = (model.usage.cost_usd, model.usage.latency_s, model.lead_time_s or 0.0)
        if again is not None:
            assert is_dumped(again, dumped) is (max(map(abs, floats)) < 1e16)
    # the file readers: the strict reader's annotations or its error
    try:
        streamed = list(iter_annotations(path))
    except InputError as exc:
        assert exc.one_line() == want
    else:
        assert not isinstance(want, str) and len(streamed) == len(want)
        for one, model in zip(streamed, want, strict=True):
            if isinstance(one, AnnotationLine):  # the vouched line's struct
                assert got is not None
                _same(one, model)
            else:
                assert got is None and one == model
    try:
        with AnnotationIndex.read(path) as index:
            shown = index.get(json.loads(line)["unit_id"]) if len(index) else None
        assert not isinstance(want, str)
        if isinstance(shown, AnnotationLine):
            _same(shown, want[0], created=False)
        else:
            assert shown == want[0]
    except InputError as exc:
        assert exc.one_line() == want


def _line(**changes: Any) -> str:
    return json.dumps(FULL | changes, separators=(",", ":"))


def test_a_line_as_the_judge_writes_it_is_vouched_for(tmp_path: Path) -> None:
    line = _line()
    got = vouched(line)
    assert got is not None
    # by hand, from FULL: the struct's enums are the models' and the values FULL's
    assert got.coder_kind == "heuristic" and got.usage.latency_s == 0.0012015789998258697
    assert got.code_set("scope") == ("broader_scope", "narrower_scope")
    assert got.code_set("entity_match") == ("exact_entity",) and got.code_set("x") == ()
    assert str(got.codebook) == "medical-fact-check@1+" + "ab" * 6
    check_line(line, tmp_path)


#: Lines each check of the voucher refuses (the strict reader refuses or reads them otherwise):
#: drop one check from ``vouched`` and its line here fails.
NEEDS_A_CHECK = {
    # Annotation's validator: code_sets must start with the dimension's code, and not be empty
    "code_sets start": _line(code_sets={"scope": ["narrower_scope"]}),
    "code_sets empty": _line(codes={}, code_sets={"scope": []}),
    "code_sets no code": _line(codes={}, code_sets={"scope": ["broader_scope"]}),
    # a key given twice (msgspec keeps the last; the strict reader refuses)
    "duplicate field": _line()[:-1] + ',"coder":"x"}',
    "duplicate code": _line().replace('"codes":{', '"codes":{"scope":"x",', 1),
    "duplicate, spaced": json.dumps(FULL)[:-1] + ', "coder" : "x"}',
    # a key ending in a backslash reads as an escaped quote to the key count
    "backslash key": _line(codes={"scope": "broader_scope", "a\\": "b"})[:-1] + ',"coder":"x"}',
    # a lone surrogate (msgspec refuses it too)
    "lone surrogate": _line(coder="a\\ud800b").replace("\\\\ud800", "\\ud800"),
    # created_at: a form pydantic refuses that datetime.fromisoformat takes, an impossible day
    "basic time": _line(created_at="20261201T100000Z"),
    "no day 30": _line(created_at="2026-02-30T00:00:00Z"),
}


@pytest.mark.parametrize("line", NEEDS_A_CHECK.values(), ids=NEEDS_A_CHECK.keys())
def test_each_check_of_the_voucher_is_needed(line: str, tmp_path: Path) -> None:
    assert vouched(line) is None
    check_line(line, tmp_path)


#: Lines vouched for whose text is msgspec's encoding of their struct but not what the model
#: dumps: each check of ``is_dumped`` refuses one (issue 31).
NOT_DUMPED = {
    "offset, not Z": _line(created_at="2026-12-01T23:29:06.392384+00:00"),
    "short fraction": _line(created_at="2026-12-01T23:29:06.1Z"),
    "zero fraction": _line(created_at="2026-12-01T23:29:06.000000Z"),
    # written as msgspec writes them (the standard library, like pydantic, writes 1e+16)
    "big cost": _line(usage={**FULL["usage"], "cost_usd": 1e16}).replace("e+", "e"),
    "big latency": _line(usage={**FULL["usage"], "latency_s": -2.5e20}).replace("e+", "e"),
    "big lead time": _line(lead_time_s=1e17).replace("e+", "e"),
    "a whole number for a float": _line(lead_time_s=3),
    "spaced": json.dumps(FULL, separators=(", ", ":")),
}


@pytest.mark.parametrize("line", NOT_DUMPED.values(), ids=NOT_DUMPED.keys())
def test_a_line_not_as_the_model_dumps_it_is_dumped_by_the_model(line: str, tmp_path: Path) -> None:
    got = vouched(line)
    assert got is not None and not is_dumped(got, line)
    model = decode_row(tmp_path, 1, got.unit_id, line)
    assert model.model_dump_json() != line
    assert dumped_row(tmp_path, 1, got.unit_id, line) == model.model_dump_json().encode()


def test_a_line_as_the_model_dumps_it_is_written_as_it_stands(tmp_path: Path) -> None:
    model = decode_row(tmp_path, 1, "u", _line(lead_time_s=2.5, quote='caf\u00e9 "x"\n'))
    text = model.model_dump_json()
    assert '"lead_time_s":2.5' in text and "café" in text  # pydantic's own JSON
    got = vouched(text)
    assert got is not None and is_dumped(got, text)
    assert dumped_row(tmp_path, 1, "u", text) == text.encode()


def test_the_structs_mirror_the_models() -> None:
    """A field or validator added to a model must be added to the voucher (or fail here)."""
    pairs = [
        (AnnotationLine, Annotation),
        (RefLine, CodebookRef),
        (EvidenceLine, DimensionEvidence),
        (UsageLine, Usage),
    ]
    for struct, model in pairs:
        assert struct.__struct_fields__ == tuple(model.model_fields)
        assert model.model_config.get("extra") == "forbid"
        decorators = model.__pydantic_decorators__
        validators = {
            **decorators.model_validators,
            **decorators.field_validators,
            **decorators.root_validators,
            **decorators.validators,
        }
        # the one validator: Annotation's code_sets rule, checked in ``vouched``
        assert set(validators) == ({"_sets_match_codes"} if model is Annotation else set())
        for info in model.model_fields.values():
            assert not info.metadata, f"{model.__name__}: a constraint ``vouched`` must check"


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=4)
ODD_TEXT = st.sampled_from(["", "a\\", '"', "\\", "\t", "\x00", "é", "\U0001f600", " x "])
ANY_TEXT = st.one_of(TEXT, ODD_TEXT)
NAME = st.one_of(st.sampled_from(["scope", "entity_match", "chunking"]), ANY_TEXT)
NOT_TEXT = st.sampled_from([None, 7, True, [], {}])
OPTIONAL = st.one_of(st.none(), ANY_TEXT)
FLAG = st.booleans()
ODD_FLAG = st.sampled_from(["true", "false", 1, 0, 1.0, "yes", None, "1"])
INT = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([0, 1, 2**63, 2**64, -(2**63) - 1]))
FLOAT = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False), st.floats(-10, 10), INT, st.just(-0.0)
)
#: "__BIG__" and "__LONG__" stand for 1e400 and a 5,000-digit integer (written by hand)
ODD_NUMBER = st.sampled_from(
    [1.0, -0.0, 2.5, True, "3", "1.5", None, "__BIG__", "__LONG__", math.nan, math.inf]
)
TIME = st.one_of(
    st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat().replace("+00:00", "Z")),
    st.datetimes().map(lambda d: d.isoformat() + "+00:00"),
)
ODD_TIME = st.one_of(
    st.sampled_from(
        [
            "2026-12-01T10:00:00.1234567Z",
            "2026-12-01 10:00:00Z",
            "2026-12-01T10:00Z",
            "2026-12-01T10:00:00",
            "2026-12-01T10:00:00+01:00",
            "2026-12-01T23:59:60Z",
            "2026-12-01T24:00:00Z",
            "2026-12-01T10:00:00,5Z",
            "20261201T100000Z",
            "1700000000",
            "",
        ]
    ),
    st.integers(0, 2**40),
)


def _evidence(flag: Any, text: Any) -> Any:
    return st.fixed_dictionaries(
        {
            "rationale": text,
            "quote": st.one_of(st.none(), text),
            "quote_found": st.one_of(st.none(), flag),
            "uncertain": flag,
        }
    )


def _usage(ints: Any, floats: Any) -> Any:
    names = ("input_tokens", "cached_input_tokens", "output_tokens")
    return st.fixed_dictionaries(
        dict.fromkeys(names, ints) | {"cost_usd": floats, "latency_s": floats}
    )


#: Per field: values the model takes as they are.
VALID: dict[str, Any] = {
    "unit_id": st.one_of(ANY_TEXT, st.sampled_from(["0123456789abcdef", "fedcba9876543210"])),
    "unit_kind": st.sampled_from(["retrieval", "verification"]),
    "codebook": st.fixed_dictionaries({"name": ANY_TEXT, "version": INT, "hash": ANY_TEXT}),
    "coder": ANY_TEXT,
    "coder_kind": st.sampled_from(["llm", "heuristic", "human"]),
    "status": st.sampled_from(["scored", "unscored"]),
    "reason": OPTIONAL,
    "codes": st.dictionaries(NAME, ANY_TEXT, max_size=3),
    "code_sets": st.dictionaries(NAME, st.lists(NAME, max_size=3), max_size=2),
    "leaves": st.dictionaries(NAME, st.lists(ANY_TEXT, max_size=2), max_size=2),
    "evidence": st.dictionaries(NAME, _evidence(FLAG, ANY_TEXT), max_size=3),
    "rationale": OPTIONAL,
    "quote": OPTIONAL,
    "quote_found": st.one_of(st.none(), FLAG),
    "proposal": OPTIONAL,
    "uncertain": FLAG,
    "usage": _usage(INT, FLOAT),
    "lead_time_s": st.one_of(st.none(), FLOAT),
    "created_at": TIME,
}
#: Per field: values pydantic converts (lax) or refuses.
ODD: dict[str, Any] = {
    "unit_id": NOT_TEXT,
    "unit_kind": st.sampled_from(["Retrieval", 1, None]),
    "codebook": st.one_of(
        st.fixed_dictionaries(
            {"name": st.one_of(ANY_TEXT, NOT_TEXT), "version": ODD_NUMBER, "hash": ANY_TEXT},
            optional={"extra": st.just(1)},
        ),
        st.just({"name": "a", "version": 1}),
    ),
    "coder": NOT_TEXT,
    "coder_kind": st.sampled_from(["LLM", "", 0]),
    "status": st.sampled_from(["Scored", None]),
    "reason": NOT_TEXT,
    "codes": st.dictionaries(NAME, NOT_TEXT, min_size=1, max_size=2),
    "code_sets": st.dictionaries(NAME, st.sampled_from([None, "x", [1]]), min_size=1, max_size=2),
    "leaves": st.sampled_from([None, [], {"a": "b"}]),
    "evidence": st.dictionaries(
        NAME, st.one_of(_evidence(ODD_FLAG, ANY_TEXT), _evidence(FLAG, NOT_TEXT)), min_size=1
    ),
    "rationale": NOT_TEXT,
    "quote": NOT_TEXT,
    "quote_found": ODD_FLAG,
    "proposal": NOT_TEXT,
    "uncertain": ODD_FLAG,
    "usage": st.one_of(
        _usage(st.one_of(INT, ODD_NUMBER), st.one_of(FLOAT, ODD_NUMBER)),
        st.just({"input_tokens": 1, "nope": 0}),
    ),
    "lead_time_s": ODD_NUMBER,
    "created_at": ODD_TIME,
}
#: Edits of the JSON text: a key given twice (a field's, or a dict's), an extra field, a field
#: left out, an escaped surrogate (lone or paired), spaces around the colons.
EDITS = st.sampled_from(
    [None] * 12
    + ["dup-field", "dup-code", "dup-evidence", "extra", "drop", "lone", "pair", "spaced"]
)


def _edited(rec: dict[str, Any], edit: str | None, ascii_only: bool) -> str:
    if edit == "drop" and rec:
        rec = dict(list(rec.items())[1:]) if len(rec) % 2 else dict(list(rec.items())[:-1])
    if edit == "extra":
        rec = {**rec, "extra_field": None}
    spaced = edit == "spaced"
    line = json.dumps(
        rec, ensure_ascii=ascii_only, separators=(", ", ": ") if spaced else (",", ":")
    )
    line = line.replace('"__BIG__"', "1e400").replace('"__LONG__"', "9" * 5000)
    if edit == "dup-field":
        line = line[:-1] + ',"coder":"offline"}'
    elif edit == "dup-code":
        line = line.replace('"codes":{', '"codes":{"scope":"broader_scope",', 1)
    elif edit == "dup-evidence":
        line = line.replace('"rationale":', '"rationale":"a","rationale":', 1)
    elif edit == "lone":
        line = line.replace('"offline"', '"off\\udc00line"', 1)
    elif edit == "pair":
        line = line.replace('"offline"', '"off\\ud83d\\ude00line"', 1)
    return line


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    valid=st.fixed_dictionaries({}, optional=VALID),
    odd=st.one_of(
        st.just({}),
        st.just({}),
        st.fixed_dictionaries({}, optional=ODD).filter(lambda d: len(d) < 3),
    ),
    edit=EDITS,
    ascii_only=st.booleans(),
)
def test_any_line_reads_the_same_every_way(
    tmp_path_factory: pytest.TempPathFactory,
    valid: dict[str, Any],
    odd: dict[str, Any],
    edit: str | None,
    ascii_only: bool,
) -> None:
    rec = FULL | valid | odd
    if isinstance(rec.get("codes"), dict) and isinstance(rec.get("code_sets"), dict):
        # mostly sets that start with their code (valid), else as drawn
        rec["code_sets"] = {
            d: ([rec["codes"][d], *v] if d in rec["codes"] and len(v) % 2 else v)
            if isinstance(v, list)
            else v
            for d, v in rec["code_sets"].items()
        }
    check_line(_edited(rec, edit, ascii_only), tmp_path_factory.mktemp("l"))


def test_non_finite_and_out_of_range_numbers_are_the_strict_readers_errors(
    tmp_path: Path,
) -> None:
    for cost in ("NaN", "Infinity", "-Infinity", "1e400", "9" * 5000):
        line = _line().replace('"cost_usd":0.0', f'"cost_usd":{cost}')
        assert vouched(line) is None
        check_line(line, tmp_path)
    # a whole number where a float goes is that float, as pydantic reads it
    got = vouched(_line().replace('"cost_usd":0.0', '"cost_usd":3'))
    assert got is not None and got.usage.cost_usd == 3.0 and isinstance(got.usage.cost_usd, float)
    assert math.isfinite(got.usage.latency_s)


def test_a_journal_reads_the_same_with_vouched_rows(tmp_path: Path) -> None:
    """``attribute``'s journal reader gives ``iter_journal``'s annotations, or its error."""
    import sqlite3

    from failcodes.judge.journal import Journal, iter_journal, iter_journal_lines

    Journal(tmp_path).close()
    rows = [
        _line(),  # vouched
        _line(unit_id="1" * 16, uncertain="true"),  # pydantic converts it: the model
        _line(unit_id="3" * 16, created_at="2026-12-01T10:00:00+01:00"),  # not the tool's form
    ]
    conn = sqlite3.connect(tmp_path / "journal.sqlite")
    conn.executemany(
        "INSERT INTO annotations (unit_id, kind, status, annotation, created_at) "
        "VALUES (?, 'retrieval', 'scored', ?, '')",
        [(json.loads(r)["unit_id"], r) for r in rows],
    )
    conn.commit()
    want = list(iter_journal(tmp_path))
    got = list(iter_journal_lines(tmp_path))
    assert [type(a).__name__ for a in got] == ["AnnotationLine", "Annotation", "Annotation"]
    assert isinstance(got[0], AnnotationLine)
    _same(got[0], want[0])
    assert got[1:] == want[1:]
    assert want[1].uncertain is True  # as pydantic reads it
    # a key twice: refused by both (pydantic's decoder alone kept the last 'coder')
    twice = _line(unit_id="2" * 16)[:-1] + ',"coder":"x"}'
    conn.execute(
        "INSERT INTO annotations (unit_id, kind, status, annotation, created_at) "
        "VALUES (?, 'retrieval', 'scored', ?, '')",
        ("2" * 16, twice),
    )
    conn.commit()
    for reader in (iter_journal, iter_journal_lines):
        with pytest.raises(InputError, match="key 'coder' appears twice"):
            list(reader(tmp_path))
    conn.execute("DELETE FROM annotations WHERE unit_id = ?", ("2" * 16,))
    conn.commit()
    # a row no reader takes: the same error
    conn.execute("UPDATE annotations SET annotation = json_set(annotation, '$.coder', 7)")
    conn.commit()
    conn.close()
    with pytest.raises(InputError) as strict:
        list(iter_journal(tmp_path))
    with pytest.raises(InputError) as fast:
        list(iter_journal_lines(tmp_path))
    assert fast.value.one_line() == strict.value.one_line()
    assert "row 1" in fast.value.one_line() and "coder" in fast.value.one_line()
