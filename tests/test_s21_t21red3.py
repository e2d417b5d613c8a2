"""Session 21 red team of the study layer and the Python library (t21red3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.annotations import Annotation, CoderKind, DimensionEvidence, Status
from failcodes.errors import ConfigError
from failcodes.panel import consensus, decided_counts, split_units
from failcodes.units import UnitKind
from tests.judge_helpers import make_codebook


def _ann(coder: str, unit: str, codes: dict[str, str] | None) -> Annotation:
    """``coder``'s annotation of ``unit``; ``codes`` None: left unscored (a refusal, say)."""
    return Annotation(
        unit_id=unit,
        unit_kind=UnitKind.VERIFICATION,
        codebook=make_codebook().ref(),
        coder=coder,
        coder_kind=CoderKind.LLM,
        status=Status.SCORED if codes is not None else Status.UNSCORED,
        codes=codes or {},
        evidence={d: DimensionEvidence(rationale="r") for d in codes or {}},
    )


def test_a_unit_one_panel_member_left_unscored_is_not_unanimous() -> None:
    # A two-judge panel where one member left a unit unscored (a refusal, invalid answers
    # after the retries): the unit was decided "unanimous" on the other member's codes alone
    # (fake server: openai:gpt-5-mini unscored on the unit marked FAKE_ALWAYS_BAD_CODE, the
    # offline member coded it: panel.json decided {unanimous: 1, primary: 15}), so it was no
    # split, never listed for review, and Tables 8-9 counted one judge's codes as the panel's.
    part = make_codebook().part(UnitKind.VERIFICATION)
    good = {d.id: d.high_quality_code for d in part.dimensions}
    panel = {
        "a": [_ann("a", "u1", good), _ann("a", "u2", good), _ann("a", "u3", None)],
        "b": [_ann("b", "u1", good), _ann("b", "u2", None), _ann("b", "u3", good)],
    }
    by_id = {u.unit_id: u for u in consensus(panel, part, primary="a")}
    # u1: both gave the same codes: unanimous, as before
    assert by_id["u1"].rule == "unanimous"
    # u2: only the primary coded it; the missing vote could have split it 1-1, a tie the
    # primary breaks with its own code (its codes kept, the unit marked a tie)
    assert by_id["u2"].rule == "primary"
    assert all(v.tie and v.consensus == [good[d]] for d, v in by_id["u2"].dimensions.items())
    # u3: only the non-primary coded it: a tie the primary did not break (it coded nothing):
    # undecided, unscored in the tables (docs/judge.md's rule)
    assert by_id["u3"].rule == "undecided"
    assert all(v.consensus == [] for v in by_id["u3"].dimensions.values())
    # counts by hand: u1 unanimous; u2 primary; u3 undecided (was 3 unanimous, 0, 0, 0)
    decided = decided_counts(by_id.values())
    assert decided == {"unanimous": 1, "majority": 0, "primary": 1, "undecided": 1}
    assert split_units(by_id.values()) == ["u2", "u3"]  # ties first; u1 is no split
    # three members, one missing: 2 of 3 agreeing is a majority whatever the third said
    # (2 > 1 + 1 missing); 1 of 3 with two missing is not (1 <= 2): undecided without a
    # primary's vote
    three = {
        "a": [_ann("a", "u4", good), _ann("a", "u5", None)],
        "b": [_ann("b", "u4", good), _ann("b", "u5", None)],
        "c": [_ann("c", "u4", None), _ann("c", "u5", good)],
    }
    by_id = {u.unit_id: u for u in consensus(three, part, primary="a")}
    assert (by_id["u4"].rule, by_id["u5"].rule) == ("majority", "undecided")
    # multi-label (inference): a {overreach}, b missing: overreach has 1 vote of 2 members,
    # half: a tie the primary keeps when it gave it, undecided when the primary is b
    multi = make_codebook(multi_label=("inference",)).part(UnitKind.VERIFICATION)
    over = {**{d.id: d.high_quality_code for d in multi.dimensions}, "inference": "overreach"}
    two = {"a": [_ann("a", "u6", over)], "b": [_ann("b", "u6", None)]}
    [by_a] = consensus(two, multi, primary="a")
    assert by_a.dimensions["inference"].consensus == ["overreach"] and by_a.rule == "primary"
    [by_b] = consensus(two, multi, primary="b")
    assert by_b.dimensions["inference"].consensus == [] and by_b.rule == "undecided"


def test_price_as_refuses_a_panel_calling_two_apis(tmp_path: Path) -> None:
    # One --price-as entry prices every judge of the run. A mixed panel (openai:gpt-5-mini +
    # anthropic:claude-haiku-4-5 behind one compatible server) priced the anthropic member as
    # gpt-5-mini: its dry run said $0.0169 where haiku-4-5's own prices (input 1.0, cached
    # 0.1, cache write 1.25, output 5.0 $/M) give, for its ~55040 input (27096 cached, 27096
    # cache writes) and ~4640 output tokens, 848e-6 + 0.0027 + 0.0339 + 0.0232 = $0.0606;
    # the budget was enforced at that price too.
    import failcodes as fc

    both = ["openai:gpt-5-mini", "anthropic:claude-haiku-4-5"]
    source = tmp_path / "d.jsonl"
    with pytest.raises(ConfigError, match=r"--price-as openai:gpt-5-mini prices every judge"):
        fc.JudgeRequest(kind="retrieval", source=source, judge=both, price_as="openai:gpt-5-mini")
    # one API (two openai models, or a heuristic member beside one LLM): one entry, as before
    fc.JudgeRequest(kind="retrieval", source=source, judge=["openai:a", "openai:b"], price_as="x")
    fc.JudgeRequest(kind="retrieval", source=source, judge=["offline", both[1]], price_as="x")


def test_the_python_api_says_the_rows_ingest_dropped(tmp_path: Path) -> None:
    # `failcodes metrics` prints "1 row(s) without a verdict dropped at ingest ..." under its
    # first line; failcodes.run(MetricsRequest) said the first line alone through `note`, so
    # a notebook's numbers came with no word that a row was left out (on a 12-sentence data
    # set: sysA refuted TP 1, FN 8, where its NA row's sentence, an error, had TP 2, FN 7).
    import failcodes as fc

    errors = {"q1s1": True, "q1s2": True, "q2s1": False}
    verdicts = {"q1s1": "NA", "q1s2": "refuted", "q2s1": "supported"}
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        "".join(
            json.dumps(
                {"system": "sysA", "question_id": s[:2], "sentence_id": s, "verdict": v}
                | {"sentence": f"Drug {s} works."}
            )
            + "\n"
            for s, v in verdicts.items()
        ),
        encoding="utf-8",
    )
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"sentence_id": s, "question_id": s[:2], "has_error": e}) + "\n"
            for s, e in errors.items()
        ),
        encoding="utf-8",
    )
    parquet = tmp_path / "t.parquet"
    drop = ["no_verdict=drop"]
    fc.run(fc.IngestRequest(adapter="generic", paths=[traces], out=parquet, option=drop))
    said: list[str] = []
    result = fc.run(fc.MetricsRequest(traces=[parquet], labels=labels), note=said.append)
    [row] = result.report.results
    # by hand: q1s2 refuted + error = TP; q2s1 supported + no error = TN; q1s1 dropped, a
    # labelled error with no claim of sysA = FN (--without-claims no_error)
    assert (row.tp, row.fp, row.fn, row.tn) == (1, 0, 1, 1)
    dropped = said[-1 - len(result.later)]  # then the notes under the CLI's table (t22api)
    assert dropped == result.dropped
    assert dropped.startswith("1 row(s) without a verdict dropped at ingest")


UNDECLARED_STUDY = """\
name = "undeclared"
codebook = "medical-fact-check.v1.yaml"
[[datasets]]
name = "d"
[[datasets.ingest]]
adapter = "generic"
paths = ["sysA.jsonl"]
[[datasets.ingest]]
adapter = "generic"
paths = ["sysB.jsonl"]
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["labels.jsonl"]
[[datasets.pipelines]]
system = "sysA"
evidence = "retrieved"
[judge]
judge = "offline"
kinds = ["retrieval"]
[review]
labelstudio = false
"""


def test_run_study_from_python_says_what_failcodes_run_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `failcodes run` prints, on stderr, that sysB (no passages, not in [[datasets.pipelines]])
    # was read as closed-book: its disagreements blamed on verification, never on retrieval.
    # failcodes.run_study(path), documented as `failcodes run`, said nothing (say=None): the
    # line was in .failcodes/logs alone, not in the report nor in the returned results.
    import failcodes as fc

    layout = fc.init_study(tmp_path / "st")
    layout.study_file.write_text(UNDECLARED_STUDY, encoding="utf-8")
    for system, passages in (("sysA", True), ("sysB", False)):
        rows = [
            {"system": system, "question_id": "q1", "sentence_id": sid, "verdict": verdict}
            | {"sentence": f"Drug {sid} works.", "claim_id": f"{system}-{sid}"}
            | (
                {"passages": [{"passage_id": f"p{sid}", "rank": 1, "text": "A trial."}]}
                if passages
                else {}
            )
            for sid, verdict in (("s1", "supported"), ("s2", "refuted"))
        ]
        (layout.root / f"{system}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
    (layout.root / "labels.jsonl").write_text(
        "".join(
            json.dumps({"sentence_id": s, "question_id": "q1", "has_error": e}) + "\n"
            for s, e in (("s1", True), ("s2", False))
        ),
        encoding="utf-8",
    )
    capsys.readouterr()
    fc.run_study(layout.root)
    err = capsys.readouterr().err
    assert "evidence not declared for sysB: read as closed-book" in err
    assert "evidence not declared for sysA" not in err  # declared retrieved


def test_a_panel_members_budget_stop_lets_the_others_finish_their_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two members, each with --budget; the anthropic one (priced 4x) stops first. The other
    # member's calls in flight were cancelled: sent (and billed by a real provider) but never
    # committed nor counted in any cost (study bench, latency 0.5 s, concurrency 2: openai
    # made 4 calls, 2 in its journal; latency 0: 6 made, 4 committed, 18 calls for 16 units).
    import sqlite3

    from tests.cli_helpers import run_cli
    from tests.fakeserver import FakeServer
    from tests.judge_helpers import fresh_fake, make_traces, write_codebook, write_traces

    traces = write_traces(tmp_path / "t.jsonl", make_traces(4))
    cb = write_codebook(tmp_path / "cb.yaml")
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "openai:m: {input: 1.0, cached_input: 1.0, output: 1.0}\n"
        "anthropic:m: {input: 4.0, cached_input: 4.0, cache_write: 4.0, output: 4.0}\n",
        encoding="utf-8",
    )
    with FakeServer() as fake:
        fresh_fake(fake, monkeypatch, "sk-s21")
        fake.control(latency=0.3)
        judges = ["--judge", f"openai:m@{fake.openai_base_url}"]
        judges += ["--judge", f"anthropic:m@{fake.anthropic_base_url}"]
        run = ["judge", "retrieval", "--from", str(traces), "--codebook", str(cb), *judges]
        run += ["--prices", str(prices), "--concurrency", "2", "-o", str(tmp_path / "run")]
        code, _, err = run_cli([*run, "--budget", "0.01"], capsys)
        assert code == 2 and "budget of $0.0100 would be exceeded by the calls in flight" in err
        made = fake.stats()["calls"]
        journal = tmp_path / "run" / "panel" / "1-openai_m" / "journal.sqlite"
        with sqlite3.connect(journal) as db:
            [(committed,)] = db.execute("select count(*) from annotations").fetchall()
        # every call the openai member made is in its journal: none paid and lost
        assert made["openai"] == committed
        code, _, err = run_cli([*run, "--budget", "10"], capsys)  # resumed: the units left
        assert code == 0, err
        units = (
            len(
                (tmp_path / "run" / "panel" / "1-openai_m" / "annotations.jsonl")
                .read_text()
                .split("\n")
            )
            - 1
        )
        # by hand: one call per unit per member over both runs (make_traces(4): 12 units)
        assert units == 12 and fake.stats()["calls"] == {"openai": 12, "anthropic": 12}


def test_a_key_in_the_study_file_is_refused_naming_the_environment(tmp_path: Path) -> None:
    # `[judge] api_key = "sk-..."` was "field 'judge.api_key': unknown field": right to refuse
    # (and the value is not echoed), but with no word of where a key goes, the next try being
    # the base URL's query or path.
    import failcodes as fc
    from failcodes.errors import InputError

    layout = fc.init_study(tmp_path / "st")
    text = layout.study_file.read_text(encoding="utf-8")
    text = text.replace('judge = "offline"', 'judge = "offline"\napi_key = "sk-CANARY0123456789"')
    layout.study_file.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        fc.load_study(layout.root)
    said = str(caught.value)
    assert "field 'judge.api_key': unknown field; keys are read from the environment" in said
    assert "OPENAI_API_KEY, ANTHROPIC_API_KEY" in said and "CANARY" not in said
