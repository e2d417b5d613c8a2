"""Session 25, helper t25rep: the report, the panel and the ingest notes say what they know.

Each test is a reader misreading a number (or reading a note twice) on main before it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.annotations import Annotation


def _notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("note: ")]


def test_a_merge_of_the_tools_own_traces_does_not_say_their_alias_notes_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A study data set of several ingests: each part's ingest said "verdicts read by the
    # default aliases" for its file, then the merge step (ingest generic of the parts, the
    # tool's own traces: verdict canonical, the pipeline's word kept in raw_verdict) said every
    # note again for the parts (a study of 3 data sets of 8 + 6 + 3 parts: 17 notes more).
    # The merge reads canonical verdicts: no alias read them, nothing to say.
    from tests.cli_helpers import run_cli

    sheet = tmp_path / "gpt.csv"
    sheet.write_text("id,claim,label\nc1,claim one,true\nc2,claim two,nei\nc3,claim three,false\n")
    part = tmp_path / "part.jsonl"
    args = ["--map", "id=claim_id", "--map", "label=verdict", "--system", "gpt"]
    code, _, err = run_cli(["ingest", "generic", str(sheet), *args, "-o", str(part)], capsys)
    assert code == 0, err
    # the part's own ingest says it once: 2 of true/false, 1 'nei'
    assert _notes(err) == [
        f"note: {sheet}: 2 verdict(s) true/false read as supported/refuted (true: the claim "
        "holds); if true marks an error, give --alias true=refuted --alias false=supported; "
        "verdicts read by the default aliases: 'nei' as no_evidence (1); if one means "
        "otherwise, give --alias WORD=CANONICAL"
    ]
    rows = [json.loads(line) for line in part.read_text().splitlines()]
    assert [(r["verdict"], r["raw_verdict"]) for r in rows] == [
        ("supported", "true"),
        ("no_evidence", "nei"),
        ("refuted", "false"),
    ]
    # the merge as a study writes it (lines read as they are), and with an option that sends
    # every line through the record reader (--verifier): no alias note either way
    for extra in ([], ["--verifier", "gpt-4o"]):
        out = tmp_path / f"merged{len(extra)}.jsonl"
        code, _, err = run_cli(["ingest", "generic", str(part), *extra, "-o", str(out)], capsys)
        assert code == 0, err
        assert _notes(err) == [], extra
    # a trace line whose verdict cell is itself a default alias is still said, though it
    # carries a raw_verdict of its own (the note counts the cell the alias read)
    own = tmp_path / "own.jsonl"
    line = {"system": "s", "question_id": "q", "sentence_id": "s1", "claim_id": "c1"}
    line |= {"claim": "x", "verdict": "nei", "raw_verdict": "NEI?"}
    own.write_text(json.dumps(line) + "\n")
    for extra in ([], ["--verifier", "v"]):
        out = tmp_path / f"own{len(extra)}.jsonl"
        code, _, err = run_cli(["ingest", "generic", str(own), *extra, "-o", str(out)], capsys)
        assert code == 0, err
        assert _notes(err) == [
            f"note: {own}: verdicts read by the default aliases: 'nei' as no_evidence (1); if "
            "one means otherwise, give --alias WORD=CANONICAL"
        ], extra


def test_a_pooled_kappa_on_few_ratings_outside_the_common_categories_says_it_may_not_cover() -> (
    None
):
    """Two dimensions, 200 units, two raters. A: r1 'yes' on u0, r2 on u0 and u1 (3 ratings
    outside 'no'); B: both 'yes' on u2 (2). By hand (de Vries 2008, Fleiss' margins per item):
    A p_o = 199/200 = 0.995, p_e = 0.0075^2 + 0.9925^2 = 0.9851125; B p_o = 1, p_e = 0.005^2 +
    0.995^2 = 0.99005; pooled = (0.9975 - 0.98758125) / (1 - 0.98758125) = 0.79869. Its
    bootstrap interval (1,000 resamples, seed 0) is [-0.005, 1.000]: it rests on 5 ratings, as
    each dimension's row (3 and 2: warned) does, but the pooled row said nothing."""
    import numpy as np

    from failcodes.stats.agreement import agreements, pooled_agreements

    a = np.zeros((200, 2))
    a[0, :] = 1
    a[1, 1] = 1
    b = np.zeros((200, 2))
    b[2, :] = 1
    opts = {"n_bootstrap": 1000, "seed": 0}
    got = {
        r.statistic: r
        for r in pooled_agreements([a, b], categories=[[0, 1], [0, 1]], names=["A", "B"], **opts)
    }
    fleiss = got["fleiss"]
    assert fleiss.value == pytest.approx(0.00991875 / 0.01241875)
    assert fleiss.ci_low is not None and fleiss.ci_low < 0
    assert fleiss.warning == (
        "only 5 rating(s) outside the most common category (< 10): the coefficient rests on "
        "those few units, and its interval may not cover"
    )
    # dimension A's own row is warned (its resamples leave it undefined 127 times in 1,000)
    (alone,) = agreements(a, ["fleiss"], categories=[0, 1], **opts)
    assert alone.warning == "coefficient undefined in 127 of 1000 resamples"
    # AC1 and Brennan-Prediger do not take the margins as chance: no such note
    for name in ("gwet_ac1", "brennan_prediger"):
        assert "most common category" not in str(got[name].warning), name
    # A with 10 ratings outside 'no' (r1 on u0-u3, r2 on u2-u7) + B's 2 = 12: no note
    a = np.zeros((200, 2))
    a[0:4, 0] = 1
    a[2:8, 1] = 1
    (fleiss,) = pooled_agreements([a, b], ["fleiss"], categories=[[0, 1], [0, 1]], **opts)
    assert "most common category" not in str(fleiss.warning)


def test_the_pooled_row_of_annotation_agreement_carries_the_rare_ratings_note() -> None:
    """The same shape as two reviewers' annotations (comprehension: alice 'misread' on u0, bob
    on u0 and u1; grounding: both 'ungrounded' on u2; 200 units): the row 'pooled over
    dimensions' of the report's agreement table (`agree` on annotations) is the pooled Fleiss
    0.79869 of the test above, and now says what each dimension's row says."""
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.coderagreement import annotation_agreement
    from failcodes.units import UnitKind
    from tests.judge_helpers import make_codebook

    cb = make_codebook()
    odd = {"alice": {"comprehension": {0}, "grounding": {2}}}
    odd["bob"] = {"comprehension": {0, 1}, "grounding": {2}}
    other = {"comprehension": ("understood", "misread"), "grounding": ("grounded", "ungrounded")}
    anns = [
        Annotation(
            unit_id=f"u{i}",
            unit_kind=UnitKind.VERIFICATION,
            codebook=cb.ref(),
            coder=coder,
            coder_kind=CoderKind.HUMAN,
            codes={d: codes[i in odd[coder][d]] for d, codes in other.items()},
        )
        for coder in odd
        for i in range(200)
    ]
    rows = annotation_agreement(
        anns, n_bootstrap=1000, seed=0, categories={d: list(c) for d, c in other.items()}
    )
    [pooled] = [r.result for r in rows if r.scope == "pooled" and r.result.statistic == "fleiss"]
    assert pooled.value == pytest.approx(0.00991875 / 0.01241875)
    assert pooled.warning is not None and pooled.warning.startswith(
        "only 5 rating(s) outside the most common category (< 10)"
    )


def test_the_tutorial_says_where_it_starts_that_the_clone_sits_beside_shared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/your-own-data.md's section 1 reads ../shared/data/medscore (not bundled: no
    # licence); a clone elsewhere (a worktree at /work/wt/X) failed its first run with "no such
    # file" and the page said only "Run the commands from the root of a failcodes clone"
    # (session 24's outside run). Said where the commands start, before the first command.
    import re

    from tests.cli_helpers import run_cli
    from tests.conftest import REPO

    page = (REPO / "docs" / "your-own-data.md").read_text(encoding="utf-8")
    before = page[: page.index("```bash")]
    start = before[before.index("Run the commands from the root of a failcodes clone") :]
    assert start.startswith(
        "Run the commands from the root of a failcodes clone **that sits beside `shared/`**"
    )
    said = " ".join(start.split())
    assert "`no such file or folder`" in said
    assert "Sections 2-5 read only files of the clone" in said
    # the line the page promises, from a study whose clone has no shared/ beside it
    study = tmp_path / "clone" / "studies" / "medscore"
    assert run_cli(["init", str(study)], capsys)[0] == 0
    toml = re.search(r'```toml title="studies/medscore/failcodes.toml"\n(.*?)```', page, re.S)
    assert toml is not None
    (study / "failcodes.toml").write_text(toml.group(1), encoding="utf-8")
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.strip().endswith(
        "'../../../shared/data/medscore/medscore_output.jsonl': no such file or folder "
        f"({study}/../../../shared/data/medscore/medscore_output.jsonl)"
    )


def _coded(coder: str, codes: dict[str, str], doubted: tuple[str, ...] = ()) -> Annotation:
    from failcodes.annotations import CoderKind, DimensionEvidence
    from failcodes.units import UnitKind
    from tests.judge_helpers import make_codebook

    return Annotation(
        unit_id="u1",
        unit_kind=UnitKind.VERIFICATION,
        codebook=make_codebook().ref(),
        coder=coder,
        coder_kind=CoderKind.LLM,
        codes=codes,
        evidence={d: DimensionEvidence(rationale="r", uncertain=d in doubted) for d in codes},
    )


def test_a_consensus_code_a_member_doubted_says_so() -> None:
    """Three members on one unit. grounding: m1 and m2 'ungrounded' (m2 uncertain), m3
    'grounded' (uncertain): the majority's code rests on m2's doubted one. comprehension: m1
    and m2 'understood', m3 'misread' (uncertain): only the outvoted member doubted, the
    consensus does not rest on it. inference: three codes, a tie the primary (m1, uncertain)
    breaks with its own code: it rests on the doubt. label_consistency: nobody doubted.
    On main the votes carried no flag and the consensus read as certain everywhere."""
    from failcodes.panel import consensus, uncertain_line, uncertain_units
    from failcodes.units import UnitKind
    from tests.judge_helpers import make_codebook

    part = make_codebook().part(UnitKind.VERIFICATION)
    base = {d.id: d.high_quality_code for d in part.dimensions}
    panel = {
        "m1": [
            _coded(
                "m1",
                base | {"grounding": "ungrounded", "inference": "overreach"},
                ("inference",),
            )
        ],
        "m2": [
            _coded(
                "m2",
                base | {"grounding": "ungrounded", "inference": "valid_inference"},
                ("grounding",),
            )
        ],
        "m3": [
            _coded(
                "m3",
                base | {"comprehension": "misread", "inference": "conflict_synthesis_failure"},
                ("grounding", "comprehension"),
            )
        ],
    }
    [unit] = consensus(panel, part, primary="m1")
    dims = unit.dimensions
    assert (dims["grounding"].consensus, dims["grounding"].uncertain) == (
        ["ungrounded"],
        ["m2", "m3"],
    )
    assert dims["grounding"].consensus_uncertain is True
    assert (dims["comprehension"].consensus, dims["comprehension"].uncertain) == (
        ["understood"],
        ["m3"],
    )
    assert dims["comprehension"].consensus_uncertain is False
    assert (dims["inference"].consensus, dims["inference"].decided_by) == (["overreach"], "primary")
    assert (dims["inference"].uncertain, dims["inference"].consensus_uncertain) == (["m1"], True)
    assert (dims["label_consistency"].uncertain, dims["label_consistency"].consensus_uncertain) == (
        [],
        False,
    )
    assert unit.uncertain == ["inference", "grounding"]  # codebook order
    assert uncertain_units([unit]) == ["u1"]
    assert uncertain_line(["m1", "m2", "m3"], [unit]) == (
        "members flagged their code uncertain (m1 on 1, m2 on 1, m3 on 1 unit(s)); the "
        "consensus rests on such a code on 1 of 1 unit(s) (first: u1)"
    )


def test_a_panels_consensus_carries_its_members_doubts_to_attribute_review_and_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three models on the fake server (which flags about 1 dimension in 5 uncertain, by a
    # digest of model, text and dimension), 12 units. Recomputed from each member's own
    # annotations: the members that doubted each unit's dimension, and whether one of them
    # gave the consensus code. The consensus annotations (what attribute, Label Studio export
    # and the review read) said uncertain on none of them; the judge's lines and `agree RUN`
    # said nothing of the members' doubts, nor did the report's table of the consensus rules.
    from failcodes.commands.judge import agreement_lines
    from failcodes.judge import JudgeJob, make_coder, read_annotations
    from failcodes.judge.panelrun import Member, consensus_annotations, member_dir, run_panel
    from failcodes.units import UnitKind, retrieval_units
    from tests.cli_helpers import run_cli
    from tests.fakeserver import FakeServer
    from tests.judge_helpers import make_codebook, make_traces

    monkeypatch.setenv("OPENAI_API_KEY", "sk-panel-doubt")
    cb = make_codebook()
    units = retrieval_units(make_traces(4))
    specs = ["openai:panel-a", "openai:panel-b", "openai:panel-c"]
    run = tmp_path / "study" / "judge" / "demo" / "retrieval"  # a study's panel run
    with FakeServer() as fake:
        members = [Member(s, make_coder(s, base_url=fake.openai_base_url)) for s in specs]
        report, _ = run_panel(units, members, JudgeJob(cb, UnitKind.RETRIEVAL, run))
    own = [
        {a.unit_id: a for a in read_annotations(member_dir(run, i, s))}
        for i, s in enumerate(specs, 1)
    ]
    rests: dict[str, list[str]] = {}
    flagged: dict[str, int] = dict.fromkeys(specs, 0)
    for unit in report.units:
        for dim, vote in unit.dimensions.items():
            doubting = [s for s, anns in zip(specs, own, strict=True)
                        if dim in anns[unit.unit_id].uncertain_dimensions()]  # fmt: skip
            assert vote.uncertain == doubting, (unit.unit_id, dim)
            gave = {c for s, anns in zip(specs, own, strict=True) if s in doubting
                    for c in anns[unit.unit_id].code_set(dim)}  # fmt: skip
            assert vote.consensus_uncertain is bool(gave & set(vote.consensus))
            if vote.consensus_uncertain:
                rests.setdefault(unit.unit_id, []).append(dim)
        for s in specs:
            flagged[s] += any(s in v.uncertain for v in unit.dimensions.values())
    assert rests, "the fake server flags some consensus code uncertain"
    by_unit = {a.unit_id: a for a in consensus_annotations(run, cb)}
    for uid, ann in by_unit.items():
        assert ann.uncertain is (uid in rests)
        assert ann.uncertain_dimensions() == rests.get(uid, [])
    n = len(rests)
    first = next(u.unit_id for u in report.units if u.unit_id in rests)
    line = (
        "members flagged their code uncertain ("
        + ", ".join(f"{s} on {flagged[s]}" for s in specs if flagged[s])
        + f" unit(s)); the consensus rests on such a code on {n} of 12 unit(s) (first: {first})"
    )
    assert line in agreement_lines(report)
    code, out, err = run_cli(["agree", str(run), "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0, err
    assert (
        f"judge panel {run}: agreement between its members; {line}" in json.loads(out)[0]["notes"]
    )
    # the report's table "How the judge panel's consensus was decided" counts them
    from failcodes.report.rundir import load_run_dir

    inputs = load_run_dir(tmp_path / "study", codebook=cb)
    assert inputs.panel_rules is not None
    [rules] = inputs.panel_rules.to_dict("records")
    assert rules["on a doubted code"] == n


def test_a_cell_too_small_to_estimate_shows_the_judges_share_it_knows(tmp_path: Path) -> None:
    # tests/test_review_plan.hand_study: retriever B has 4 units, the judge coded every one
    # exact_entity (and all-high), 2 were reviewed: too few to estimate. Its judge-only share
    # needs no review (Table 8's: 4 of 4 = 100.0, partial_entity 0 of 4 = 0.0) but the
    # corrected table showed '–' beside it, as for the human and corrected shares, with no word
    # what '–' meant.
    import pandas as pd

    from failcodes import codebook as codebooks
    from failcodes.report.build import build_report
    from failcodes.report.corrected import DASH_TEXT
    from failcodes.report.rundir import load_run_dir
    from tests.test_review_plan import hand_study

    hand_study(tmp_path)
    inputs = load_run_dir(tmp_path, codebook=codebooks.bundled())
    out = tmp_path / "report"
    build_report(inputs, out)
    corrected = pd.read_csv(out / "tables" / "retrieval_quality_corrected.csv", dtype=str)
    b = corrected[corrected["retriever"] == "B"].set_index("code")
    assert b.loc["exact_entity", "judge-only (%)"] == "100.0"
    assert b.loc["partial_entity", "judge-only (%)"] == "0.0"
    assert b.loc["all_high_quality", "judge-only (%)"] == "100.0"
    for code in ("exact_entity", "all_high_quality"):
        assert (b.loc[code, "human-only (%)"], b.loc[code, "corrected (%)"]) == ("–", "–")
        assert "too small to estimate: 2 reviewed unit(s)" in b.loc[code, "note"]
    # retriever A's cells are estimated: judge-only 50.0 as before (10 of 20 exact)
    a = corrected[corrected["retriever"] == "A"].set_index("code")
    assert a.loc["exact_entity", "judge-only (%)"] == "50.0"
    # the caption says what '–' means
    [(caption, _)] = inputs.corrected[next(iter(inputs.corrected))]
    assert caption.endswith(f"; {DASH_TEXT}")
    assert DASH_TEXT.startswith("'–': not estimated (the row's note says why")
