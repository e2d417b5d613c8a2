"""A judge panel: members kept apart, consensus, splits and inter-judge agreement (issue 19)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from failcodes.annotations import Annotation, CoderKind, DimensionEvidence, Status
from failcodes.errors import ProviderError
from failcodes.judge import (
    JudgeJob,
    JudgeSettings,
    Limits,
    RetryPolicy,
    make_coder,
    read_annotations,
)
from failcodes.judge.panelrun import Member, member_dir, member_names, read_panel, run_panel
from failcodes.panel import consensus, inter_judge_agreement, split_units
from failcodes.units import UnitKind, retrieval_units
from tests.cli_helpers import run_cli
from tests.fakeserver import FakeServer
from tests.judge_helpers import make_codebook, make_traces, write_codebook, write_traces

CB = make_codebook()
PART = CB.part(UnitKind.RETRIEVAL)


def _fleiss_two(pairs: list[tuple[int, int]]) -> float:
    """Fleiss' kappa for two raters, by hand: (Po - Pe) / (1 - Pe), Pe = sum p_k^2."""
    po = sum(a == b for a, b in pairs) / len(pairs)
    shares = Counter(x for pair in pairs for x in pair)
    pe = sum((n / (2 * len(pairs))) ** 2 for n in shares.values())
    return (po - pe) / (1 - pe)


def _alpha_two(pairs: list[tuple[int, int]]) -> float:
    """Krippendorff's nominal alpha, two coders, no missing (Krippendorff 2011, eq. for
    coincidences): 1 - (n - 1) * (off-diagonal coincidences) / (n^2 - sum n_c^2)."""
    n = 2 * len(pairs)
    off = 2 * sum(a != b for a, b in pairs)
    n_c = Counter(x for pair in pairs for x in pair)
    return 1 - (n - 1) * off / (n * n - sum(v * v for v in n_c.values()))


def _ac1_two(pairs: list[tuple[int, int]], q: int) -> float:
    """Gwet's AC1, two raters: Pe = sum_k pi_k (1 - pi_k) / (q - 1) (Gwet 2014, ch. 4)."""
    po = sum(a == b for a, b in pairs) / len(pairs)
    pis = Counter(x for pair in pairs for x in pair)
    pe = sum((v / (2 * len(pairs))) * (1 - v / (2 * len(pairs))) for v in pis.values()) / (q - 1)
    return (po - pe) / (1 - pe)


def test_two_model_panel_against_the_fake_server(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-panel-test")
    units = retrieval_units(make_traces(4))  # 12 distinct (claim, passage) units
    with FakeServer() as fake:
        url = fake.openai_base_url
        members = [
            Member(name, make_coder(spec, base_url=url))
            for name, spec in zip(
                member_names(["openai:panel-a", "openai:panel-b"]),
                ["openai:panel-a", "openai:panel-b"],
                strict=True,
            )
        ]
        report, summaries = run_panel(units, members, JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path))
        assert fake.stats()["calls"] == {"openai": 2 * len(units)}  # every member called
    # each member's annotations are kept apart, in its own run folder, under its own name
    a = {x.unit_id: x for x in read_annotations(member_dir(tmp_path, 1, "openai:panel-a"))}
    b = {x.unit_id: x for x in read_annotations(member_dir(tmp_path, 2, "openai:panel-b"))}
    assert len(a) == len(b) == len(units)
    assert {x.coder for x in a.values()} == {"openai:panel-a"}
    assert {x.coder for x in b.values()} == {"openai:panel-b"}
    assert any(a[u].codes != b[u].codes for u in a)  # the two models answer differently
    # cost counts every member
    assert report.cost_usd == pytest.approx(sum(s.journal_cost_usd for s in summaries))
    assert report == read_panel(tmp_path)
    # consensus by hand: two members agree -> that code (unanimous); disagree -> a tie, which
    # the primary judge (the first member, panel-a) decides with its own code (issue 28: was
    # "no code", every split unit undetermined)
    assert report.primary == "openai:panel-a"
    by_unit = {u.unit_id: u for u in report.units}
    for uid in a:
        for dim in PART.dimensions:
            vote = by_unit[uid].dimensions[dim.id]
            ca, cb = a[uid].codes[dim.id], b[uid].codes[dim.id]
            assert vote.consensus == [ca]
            assert vote.tie is (ca != cb)
            assert vote.decided_by == ("unanimous" if ca == cb else "primary")
    split = {u for u in a if a[u].codes != b[u].codes}
    assert set(report.split_units) == split
    # every unit decided: the split ones by the primary judge, the others unanimously
    assert report.decided == {
        "unanimous": len(units) - len(split),
        "majority": 0,
        "primary": len(split),
        "undecided": 0,
    }
    assert len(split) >= 1
    assert report.warnings == [
        "a two-judge panel has no majority: every unit the two judges code differently is a "
        "tie, decided by the primary judge (openai:panel-a); the consensus is then that "
        "judge's code, not an agreement. Add a third judge for a majority"
    ]
    # inter-judge agreement per dimension, computed by hand from the two members' codes
    checked = 0
    for dim in PART.dimensions:
        ids = dim.code_ids()
        pairs = [(ids.index(a[u].codes[dim.id]), ids.index(b[u].codes[dim.id])) for u in a]
        got = {
            r.statistic: r.value for r in report.agreement if r.dimension == dim.id and not r.code
        }
        if len({x for p in pairs for x in p}) == 1:  # one category only: undefined
            continue
        assert got["fleiss"] == pytest.approx(_fleiss_two(pairs))
        assert got["krippendorff"] == pytest.approx(_alpha_two(pairs))
        assert got["gwet_ac1"] == pytest.approx(_ac1_two(pairs, len(ids)))
        checked += 1
        # per code: binary (carries the code or not), same formulas on 0/1
        for code in ids:
            bin_pairs = [
                (int(a[u].codes[dim.id] == code), int(b[u].codes[dim.id] == code)) for u in a
            ]
            row = {
                r.statistic: r.value
                for r in report.agreement
                if r.dimension == dim.id and r.code == code
            }
            if len({x for p in bin_pairs for x in p}) == 2:
                assert row["fleiss"] == pytest.approx(_fleiss_two(bin_pairs))
    assert checked >= 3  # most dimensions have several codes between the two members
    # per-dimension quote checks, per judge: the fake quotes the passage, so every one is found
    assert {q.coder: (q.dimensions_coded, q.verified) for q in report.quotes} == {
        "openai:panel-a": (5 * len(units), 5 * len(units)),
        "openai:panel-b": (5 * len(units), 5 * len(units)),
    }


def test_panel_members_judge_at_the_same_time_each_within_its_concurrency(
    tmp_path: Path, monkeypatch
) -> None:
    # issue 30: the members ran one after the other (a two-judge panel took twice one judge's
    # time). Each member at concurrency 1, every call answered after 0.3 s: one after the
    # other the server never holds more than 1 call; at the same time it holds exactly 2
    # (one per member, none over its own limit of 1).
    monkeypatch.setenv("OPENAI_API_KEY", "sk-panel-test")
    units = retrieval_units(make_traces(1))
    settings = JudgeSettings(limits=Limits(concurrency=1))
    with FakeServer(latency=0.3) as fake:
        members = [
            Member(spec, make_coder(spec, base_url=fake.openai_base_url))
            for spec in ("openai:panel-a", "openai:panel-b")
        ]
        job = JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path, settings=settings)
        report, summaries = run_panel(units, members, job)
        stats = fake.stats()
    assert stats["calls"] == {"openai": 2 * len(units)}
    assert stats["max_in_flight"] == 2
    assert [s.scored for s in summaries] == [len(units), len(units)]
    assert len(report.units) == len(units)


def test_a_failing_member_stops_the_panel_with_its_own_error(tmp_path: Path, monkeypatch) -> None:
    # member b's endpoint refuses connections: it gives up after its 6 attempts (no wait)
    # within milliseconds, while member a's first answer takes 2 s. The panel raises b's
    # ProviderError (not a group of errors), a is cancelled before recording anything, both
    # runs are exported (resumable), and no panel.json claims a consensus.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-panel-test")
    units = retrieval_units(make_traces(1))
    settings = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait())
    with FakeServer(latency=2.0) as fake:
        members = [
            Member("openai:a", make_coder("openai:a", base_url=fake.openai_base_url)),
            Member("openai:b", make_coder("openai:b", base_url="http://127.0.0.1:9/v1")),
        ]
        job = JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path, settings=settings)
        with pytest.raises(ProviderError, match="openai:b: giving up after 6 attempts"):
            run_panel(units, members, job)
    assert not (tmp_path / "panel.json").exists()
    for i, name in enumerate(("openai:a", "openai:b"), 1):
        assert (member_dir(tmp_path, i, name) / "summary.json").is_file()
        assert read_annotations(member_dir(tmp_path, i, name)) == []


def test_three_model_panel_decides_by_majority_on_the_fake_server(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-panel-test")
    units = retrieval_units(make_traces(4))  # 12 units
    specs = ["openai:panel-a", "openai:panel-b", "openai:panel-c"]
    with FakeServer() as fake:
        members = [Member(s, make_coder(s, base_url=fake.openai_base_url)) for s in specs]
        report, _ = run_panel(units, members, JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path))
    coded = [
        {x.unit_id: x.codes for x in read_annotations(member_dir(tmp_path, i, s))}
        for i, s in enumerate(specs, 1)
    ]
    # by hand, per unit: the weakest dimension's rule; a code 2 of 3 gave is the majority,
    # three different codes a tie the primary (panel-a) breaks with its own code
    want_rules = Counter()
    by_unit = {u.unit_id: u for u in report.units}
    for u in coded[0]:
        rules = []
        for dim in PART.dimensions:
            codes = [c[u][dim.id] for c in coded]
            top, k = Counter(codes).most_common(1)[0]
            rule = {3: "unanimous", 2: "majority", 1: "primary"}[k]
            want = codes[0] if k == 1 else top
            assert by_unit[u].dimensions[dim.id].consensus == [want]
            assert by_unit[u].dimensions[dim.id].decided_by == rule
            rules.append(rule)
        want_rules[max(rules, key=["unanimous", "majority", "primary"].index)] += 1
    assert report.decided == {**dict.fromkeys(["unanimous", "majority", "primary"], 0),
                              **want_rules, "undecided": 0}  # fmt: skip
    assert want_rules["majority"] >= 1  # the three models split 2-1 somewhere
    assert report.warnings == []  # three judges: a majority exists


def _ann(coder: str, codes: dict[str, str], sets: dict[str, list[str]] | None = None) -> Annotation:
    return Annotation(
        unit_id="u1",
        unit_kind=UnitKind.VERIFICATION,
        codebook=CB.ref(),
        coder=coder,
        coder_kind=CoderKind.LLM,
        status=Status.SCORED,
        codes=codes,
        code_sets=sets or {},
        evidence={d: DimensionEvidence(rationale="r") for d in codes},
    )


def test_majority_ties_and_multi_label_votes() -> None:
    cb = make_codebook(multi_label=("inference",))
    part = cb.part(UnitKind.VERIFICATION)
    base = {d.id: d.high_quality_code for d in part.dimensions}
    over = {**base, "inference": "overreach"}
    both = ["overreach", "conflict_synthesis_failure"]
    panel = {
        "m1": [_ann("m1", over, {"inference": both})],
        "m2": [_ann("m2", over, {"inference": ["overreach"]})],
        "m3": [_ann("m3", {**base, "grounding": "ungrounded"})],
    }
    [unit] = consensus(panel, part)
    # single-label: 2 of 3 said grounded -> majority, not unanimous
    assert unit.dimensions["grounding"].consensus == ["grounded"]
    assert not unit.dimensions["grounding"].unanimous and not unit.dimensions["grounding"].tie
    # multi-label, code by code: overreach 2/3 kept, conflict 1/3 dropped, valid 1/3 dropped
    inference = unit.dimensions["inference"]
    assert inference.votes == {
        "overreach": 2,
        "conflict_synthesis_failure": 1,
        "valid_inference": 1,
    }
    assert inference.consensus == ["overreach"] and not inference.tie
    assert unit.split and unit.ties == []
    # two members, one each: a tie on that dimension -> a split unit (ties listed first)
    two = {"m1": panel["m1"], "m3": panel["m3"]}
    [tied] = consensus(two, part)
    assert tied.dimensions["grounding"].tie and tied.dimensions["grounding"].consensus == []
    assert tied.dimensions["grounding"].decided_by == "undecided"  # no primary judge named
    assert split_units([tied]) == ["u1"]
    # the primary judge breaks it with its own code: m3 said ungrounded, m1 grounded
    [broken] = consensus(two, part, primary="m3")
    assert broken.dimensions["grounding"].consensus == ["ungrounded"]
    assert (broken.dimensions["grounding"].decided_by, broken.rule) == ("primary", "primary")
    # multi-label, m1 {overreach, conflict} vs m3 {valid}: each code 1 of 2, a tie; the
    # primary m1 keeps its own two
    assert broken.dimensions["inference"].consensus == ["valid_inference"]  # m3's own
    [by_m1] = consensus(two, part, primary="m1")
    assert sorted(by_m1.dimensions["inference"].consensus) == sorted(both)
    # three members: grounding by majority, nothing left to a primary
    [three] = consensus(panel, part, primary="m3")
    assert three.dimensions["grounding"].consensus == ["grounded"]  # m3 is outvoted 2 to 1
    assert three.dimensions["grounding"].decided_by == "majority" and three.rule == "majority"
    assert split_units(consensus({"m1": panel["m1"], "m2": panel["m1"]}, part)) == []  # unanimous
    # agreement is refused for a one-member panel
    with pytest.raises(Exception, match="at least two members"):
        inter_judge_agreement({"m1": panel["m1"]}, part)


def test_member_names_number_repeated_samples() -> None:
    assert member_names(["openai:m", "anthropic:c", "openai:m"]) == [
        "openai:m#1",
        "anthropic:c",
        "openai:m#2",
    ]


def test_panel_through_the_cli_with_dry_run_counting_every_member(
    workdir: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-panel-cli")
    traces = write_traces(workdir / "traces.jsonl", make_traces(2))
    cb = write_codebook(workdir / "cb.yaml")
    with FakeServer() as fake:
        base = [
            "judge",
            "retrieval",
            "--from",
            str(traces),
            "--codebook",
            str(cb),
            "--judge",
            "openai:panel-a",
            "--judge",
            "openai:panel-b",
            "--base-url",
            fake.openai_base_url,
            "--price-as",
            "openai:gpt-5-mini",
            "-o",
            "run",
        ]
        code, out, err = run_cli([*base, "--dry-run", "--format", "json"], capsys)
        assert code == 0, err
        estimates = json.loads(out)
        assert len(estimates) == 2 and fake.stats()["calls"] == {}
        assert all(e["cost_usd"] > 0 for e in estimates)  # each member priced
        code, out, err = run_cli([*base, "--format", "json"], capsys)
        assert code == 0, err
        report = json.loads(out)
        assert fake.stats()["calls"] == {"openai": 2 * 6}  # 6 units, both members
    assert report["members"] == ["openai:panel-a", "openai:panel-b"]
    assert report == json.loads((workdir / "run" / "panel.json").read_text())
    members = sorted(p.name for p in (workdir / "run" / "panel").iterdir())
    assert members == ["1-openai_panel-a", "2-openai_panel-b"]
    assert report["cost_usd"] > 0
    dims = {r["dimension"] for r in report["agreement"] if r["code"] is None}
    assert dims == {"entity_match", "scope", "trustworthy", "polarity", "chunking"}
    # attribute on the panel run: tables from the consensus (ties unscored), agreement beside
    code, out, err = run_cli(
        [
            "attribute",
            "--from",
            str(traces),
            "--codebook",
            str(cb),
            "--retrieval",
            "run",
            "-o",
            "att",
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0, err
    agreement = pd.read_csv(workdir / "att" / "retrieval_panel_agreement.csv")
    assert len(agreement) == len(report["agreement"])
    per_passage = pd.read_csv(workdir / "att" / "per_passage.csv")
    tied = {
        u["unit_id"] for u in report["units"] if any(v["tie"] for v in u["dimensions"].values())
    }
    assert tied  # the two models differ somewhere
    # every tie is broken by the primary judge (panel-a): no unit is left unscored
    statuses = dict(zip(per_passage["unit_id"], per_passage["status"], strict=True))
    assert set(statuses.values()) == {"scored"}
    assert set(per_passage["coder"].dropna()) == {"panel(openai:panel-a+openai:panel-b)"}


def test_report_shows_the_panel_agreement_and_quote_checks(tmp_path: Path, monkeypatch) -> None:
    from failcodes.report.build import build_report
    from failcodes.report.rundir import load_run_dir

    monkeypatch.setenv("OPENAI_API_KEY", "sk-panel-report")
    units = retrieval_units(make_traces(3))
    run = tmp_path / "study" / "judge" / "demo" / "retrieval"
    with FakeServer() as fake:
        members = [
            Member(spec, make_coder(spec, base_url=fake.openai_base_url))
            for spec in ("openai:panel-a", "openai:panel-b")
        ]
        report, _ = run_panel(units, members, JudgeJob(CB, UnitKind.RETRIEVAL, run))
    inputs = load_run_dir(tmp_path / "study", codebook=CB)
    assert inputs.panel_agreement is not None
    assert len(inputs.panel_agreement) == len(report.agreement)
    whole = inputs.panel_agreement[inputs.panel_agreement["code"] == "-"]
    assert sorted(set(whole["dimension"])) == sorted(d.id for d in PART.dimensions)
    assert inputs.quote_checks is not None
    assert list(inputs.quote_checks["judge"]) == ["openai:panel-a", "openai:panel-b"]
    assert list(inputs.quote_checks["share verified"]) == [1.0, 1.0]
    # how the consensus was decided: every unit of the two-judge panel, by rule
    assert inputs.panel_rules is not None
    [rules] = inputs.panel_rules.to_dict("records")
    assert (rules["primary judge"], rules["undecided"]) == ("openai:panel-a", 0)
    assert rules["unanimous"] + rules["majority"] + rules["tie, primary's code"] == len(units)
    assert rules["tie, primary's code"] == report.decided["primary"]
    assert rules["warning"].startswith("a two-judge panel has no majority")
    page = build_report(inputs, tmp_path / "out")
    html = page.read_text(encoding="utf-8")
    assert "How the judge panel&#39;s consensus was decided" in html or (
        "How the judge panel's consensus was decided" in html
    )
    assert "Inter-judge agreement of the judge panel" in html
    assert "Per-dimension quotes per judge" in html


def test_agree_on_a_panel_run_folder_reports_inter_judge_agreement(
    workdir: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-panel-agree")
    units = retrieval_units(make_traces(3))
    run = workdir / "panel-run"
    with FakeServer() as fake:
        # one model sampled twice + another model: the samples are distinct coders
        specs = ["openai:panel-a", "openai:panel-b", "openai:panel-a"]
        members = [
            Member(name, make_coder(spec, base_url=fake.openai_base_url), 0.7)
            for name, spec in zip(member_names(specs), specs, strict=True)
        ]
        report, _ = run_panel(units, members, JudgeJob(CB, UnitKind.RETRIEVAL, run))
        assert fake.stats()["calls"] == {"openai": 3 * len(units)}  # the repeat is not cached
    assert report.temperatures == dict.fromkeys(report.members, 0.7)
    code, out, err = run_cli(["agree", str(run), "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0, err
    rows = json.loads(out)
    pairs = {r["coders"] for r in rows if r["scope"] == "pair"}
    assert pairs == {
        "openai:panel-a#1|openai:panel-a#2",
        "openai:panel-a#1|openai:panel-b",
        "openai:panel-a#2|openai:panel-b",
    }
    # the deterministic fake answers the same model the same way: its two samples agree fully
    same = [
        r
        for r in rows
        if r["scope"] == "pair"
        and r["coders"] == "openai:panel-a#1|openai:panel-a#2"
        and r["statistic"] == "percent"
    ]
    assert {r["value"] for r in same} == {1.0}
    # per dimension, all three members: the same Fleiss kappa as the panel's own table
    for dim in PART.dimensions:
        mine = [
            r["value"]
            for r in rows
            if r["scope"] == "dimension" and r["dimension"] == dim.id and r["statistic"] == "fleiss"
        ]
        panel = [
            r.value
            for r in report.agreement
            if r.dimension == dim.id and r.code is None and r.statistic == "fleiss"
        ]
        assert mine == pytest.approx(panel)
