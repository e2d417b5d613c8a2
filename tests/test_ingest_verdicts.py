"""Verdicts a table gives otherwise than in one verdict column (issue 28).

- ``--verdict-column COLUMN[=SYSTEM]``: one column per system (three LLMs' verdicts on the
  same claims), each row one trace per column;
- ``--verdict [SYSTEM=]VERDICT``: a pipeline that asserts its claims (a long-form answer, no
  verifier) declares the verdict; reviewers see "asserted by the system".

Every expected value is read off the small tables written in each test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.errors import ConfigError, InputError
from failcodes.ingest import AdapterOptions, get_adapter
from failcodes.labelstudio.tasks import verdict_text
from failcodes.units import UnitKind, build_units
from failcodes.verdicts import ASSERTED, Verdict
from tests.test_cli_ingest import assert_one_line_error, run

GENERIC = get_adapter("generic")

WIDE = (
    "id,claim,gpt4,llama,claude\n"
    "c1,Aspirin prevents pre-eclampsia.,SUPPORTED,SUPPORTED,REFUTED\n"
    "c2,Zinc cures colds.,REFUTED,SUPPORTED,\n"
    "c3,Statins cause diabetes in everyone.,REFUTED,maybe,REFUTED\n"
)
COLUMNS = (("gpt4", "gpt-4o"), ("llama", "llama"), ("claude", "claude"))


def _wide(tmp_path: Path) -> Path:
    path = tmp_path / "wide.csv"
    path.write_text(WIDE)
    return path


def test_each_verdict_column_is_one_system(tmp_path: Path) -> None:
    opts = AdapterOptions(
        column_map={"id": ("claim_id",)},
        verdict_columns=COLUMNS,
        aliases={"maybe": Verdict.AMBIGUOUS},
        extra={"no_verdict": "drop"},
    )
    result = GENERIC.read([_wide(tmp_path)], opts)
    got = [(t.system, t.claim_id, t.verdict.value, t.raw_verdict) for t in result.traces]
    # 3 rows x 3 columns = 9, less claude's empty cell on c2: 8 traces, row by row
    assert got == [
        ("gpt-4o", "c1", "supported", "SUPPORTED"),
        ("llama", "c1", "supported", "SUPPORTED"),
        ("claude", "c1", "refuted", "REFUTED"),
        ("gpt-4o", "c2", "refuted", "REFUTED"),
        ("llama", "c2", "supported", "SUPPORTED"),
        ("gpt-4o", "c3", "refuted", "REFUTED"),
        ("llama", "c3", "ambiguous", "maybe"),
        ("claude", "c3", "refuted", "REFUTED"),
    ]
    # the claim text is every system's (a shared column)
    assert {t.claim for t in result.traces if t.claim_id == "c2"} == {"Zinc cures colds."}


def test_a_verdict_column_error_names_the_column(tmp_path: Path) -> None:
    opts = AdapterOptions(column_map={"id": ("claim_id",)}, verdict_columns=COLUMNS)
    with pytest.raises(InputError) as info:
        GENERIC.read([_wide(tmp_path)], opts)
    # c2's claude cell is empty (line 3): the column, not 'verdict', is named
    assert (info.value.line, info.value.field) == (3, "claude")
    assert info.value.reason.startswith("no verdict (did the verifier fail on this claim?")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"system": "x"}, "--verdict-column names each column's system; drop --system"),
        (
            {"column_map": {"id": ("claim_id",), "gpt4": ("verdict",)}},
            "--verdict-column gives each row's verdict (one trace per column); drop --map "
            "gpt4=verdict",
        ),
        (
            {"verdict_columns": (("gpt4", "a"), ("llama", "a"))},
            "--verdict-column: system 'a' given twice",
        ),
        (
            {"verdicts": {"llama": Verdict.SUPPORTED}},
            "system 'llama' has a --verdict-column and a declared --verdict; give one",
        ),
    ],
)
def test_contradictory_verdict_columns_are_refused(
    tmp_path: Path, extra: dict[str, object], message: str
) -> None:
    settings: dict[str, object] = {"column_map": {"id": ("claim_id",)}, "verdict_columns": COLUMNS}
    opts = AdapterOptions(**{**settings, **extra})  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as info:
        GENERIC.read([_wide(tmp_path)], opts)
    assert str(info.value) == message


# answers keyed by system, claims with their cited evidence and an expert's label, no verdict
KEYED = [
    {"q": "Aspirin in pregnancy?", "answers": {
        "sysA": {"claims": [
            {"claim": "Low-dose aspirin prevents pre-eclampsia.", "expert": "correct",
             "cited": [{"url": "https://a.org/1", "snippet": "Aspirin reduces pre-eclampsia."}]},
            {"claim": "Aspirin is safe at any dose.", "expert": "incorrect", "cited": []},
        ]},
        "sysB": {"claims": [{"claim": "Avoid NSAIDs after 30 weeks.", "expert": "correct",
                             "cited": []}]},
    }},
]  # fmt: skip
KEYED_ARGS = (
    "--option", "rows=answers.*.claims[]", "--map", "#=question_id",
    "--map", "answers.*.claims#=sentence_id", "--option", "sentence_ids=question",
    "--map", "answers.*=system", "--map", "cited=passages", "--map", "url=source",
    "--map", "snippet=text", "--map", "q=", "--label-rule", "expert = incorrect -> error",
)  # fmt: skip


def test_an_asserting_pipeline_declares_its_verdict_from_the_cli(tmp_path: Path) -> None:
    src = tmp_path / "keyed.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in KEYED))
    # sentence 1:1 is sysA's "Low-dose aspirin..." and sysB's "Avoid NSAIDs...": two texts
    # under one id are refused as one shared label (d74f101) unless label_scope=shared says
    # the labels are shared anyway; the labels here are incidental to the declared verdict
    proc = run(
        "ingest", "generic", src, "-o", "t.jsonl", "--labels-out", "l.jsonl", *KEYED_ARGS,
        "--option", "label_scope=shared", "--verdict", "supported", "--evidence", "post-hoc",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    traces = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    got = [(t["system"], t["claim_id"], t["verdict"], t["raw_verdict"]) for t in traces]
    assert got == [
        ("sysA", "1:1", "supported", ASSERTED),
        ("sysA", "1:2", "supported", ASSERTED),
        ("sysB", "1:1", "supported", ASSERTED),
    ]
    labels = [json.loads(x) for x in (tmp_path / "l.jsonl").read_text().splitlines()]
    # one label per sentence (claim ids equal sentence ids); sysA's 1:2 is the error
    assert sorted((lb["sentence_id"], lb["has_error"]) for lb in labels) == [
        ("1:1", False),
        ("1:2", True),
    ]


def test_a_declared_verdict_for_one_system_and_a_column_for_another(tmp_path: Path) -> None:
    rows = "system,claim_id,claim,verdict\nver,c1,A.,REFUTED\nasserts,c1,A.,\n"
    path = tmp_path / "mixed.csv"
    path.write_text(rows)
    opts = AdapterOptions(verdicts={"asserts": Verdict.SUPPORTED})
    traces = GENERIC.read([path], opts).traces
    assert [(t.system, t.verdict.value, t.raw_verdict) for t in traces] == [
        ("ver", "refuted", "REFUTED"),
        ("asserts", "supported", ASSERTED),
    ]
    # a declared system whose row has a verdict of its own: which one holds is not guessed
    path.write_text(rows.replace("asserts,c1,A.,", "asserts,c1,A.,REFUTED"))
    with pytest.raises(InputError) as info:
        GENERIC.read([path], opts)
    assert (info.value.line, info.value.field) == (3, "verdict")
    assert "the row has a verdict ('REFUTED') and --verdict declares 'supported'" in str(info.value)


def test_reviewers_see_an_asserted_verdict_as_asserted() -> None:
    from failcodes.traces import Trace

    trace = Trace(
        system="s", question_id="q", sentence_id="s1", claim_id="s1", claim="A.",
        verdict=Verdict.SUPPORTED, raw_verdict=ASSERTED, reasoning="The answer says so.",
    )  # fmt: skip
    (unit,) = build_units([trace], UnitKind.VERIFICATION)
    assert verdict_text(unit) == "supported (asserted by the system, no verifier)"


def test_verdict_options_on_other_adapters_are_refused(tmp_path: Path) -> None:
    proc = run("ingest", "medscore", "x.jsonl", "-o", "t.jsonl", "--verdict", "supported",
               cwd=tmp_path)  # fmt: skip
    assert_one_line_error(proc, "--verdict: generic adapter only (not 'medscore')")
    proc = run("ingest", "generic", "x.csv", "-o", "t.jsonl", "--verdict", "yes", cwd=tmp_path)
    assert_one_line_error(proc, "--verdict 'yes': 'yes' is not a canonical verdict")
