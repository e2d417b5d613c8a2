"""Session 24, helper t24red2: agreement, review and corrected shares (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from failcodes.attribution import ReviewedAttribution, Stage
from failcodes.report.corrected import attribution_rows, attribution_table
from tests.cli_helpers import AGREE_JSON, run_cli, write_text


def _pair(item: str, system: str, judge: Stage, human: Stage | None, units: tuple[str, ...]):
    return ReviewedAttribution(item_id=item, system=system, judge=judge, human=human, units=units)


def test_a_closed_book_systems_corrected_attribution_is_not_shown_as_a_review_finding() -> None:
    ver, ret = Stage.VERIFICATION, Stage.RETRIEVAL
    # 23 closed-book items: the rule makes each 'verification' and no judge code enters it,
    # so the "reviewer" cannot disagree. Main read human-only and corrected 100.0 [85.2, 100.0]
    # (Clopper-Pearson of 23/23: lower 0.025 ** (1 / 23) = 0.852), reviewed 23
    closed = [_pair(f"c{k}", "closed", ver, ver, ()) for k in range(23)]
    # beside it a retrieved system with judge-coded items, 12 reviewed: estimated as before
    judged = [
        _pair(
            f"r{k}",
            "rag",
            ret if k % 3 else ver,
            (ret if k % 4 else ver) if k < 12 else None,
            (f"u{k}",),
        )
        for k in range(30)
    ]
    plan = SimpleNamespace(unit_strata={f"u{k}": "all" for k in range(30)})  # one stratum
    rows = attribution_rows([*closed, *judged], plan)  # type: ignore[arg-type]
    table = attribution_table(rows).set_index(["system", "stage"])
    row = table.loc[("closed", "verification")]
    assert row["judge-only (%)"] == "100.0"
    assert row["human-only (%)"] == "–" and row["corrected (%)"] == "–"
    assert row["reviewed"] == 0
    assert "by construction, not a review finding" in row["note"]
    assert "of its 23 items (closed-book" in row["note"]
    # the judge-coded system keeps its estimates: 12 reviewed of 30 (one group, one stratum)
    rag = [r for r in rows if r["system"] == "rag"]
    assert all(r["estimates"] is not None and r["fixed"] is None for r in rag)
    assert {r["reviewed"] for r in rag} == {12}


_CB = {
    "name": "medical-fact-check",
    "version": 1,
    "hash": "7e76b8948be6dcfa33426909ff3ae4bde76e1afa945ddce141d4fd4560050f83",
}


def _review(unit: str, coder: str, code: str, minute: int) -> str:
    return json.dumps(
        {
            "unit_id": unit,
            "unit_kind": "retrieval",
            "codebook": _CB,
            "coder": coder,
            "coder_kind": "human",
            "codes": {"entity_match": code},
            "lead_time_s": 10.0 + minute,
            "created_at": f"2026-01-01T{1 if coder.startswith('bob') else 0:02d}:{minute:02d}:00Z",
        }
    )


def test_a_label_studio_user_id_beside_a_named_reviewer_it_shares_no_unit_with_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # alice reviewed u0-u9 (pulled: by email) and u10-u19 (imported without --user: by id);
    # bob reviewed all 20. Main printed 'coders (3)' and the per-pair rows split alice's units
    # (alice|bob over 10, label-studio-user-3|bob over the other 10) with no word
    codes = ["exact_entity", "partial_entity", "irrelevant", "entity_mismatch"]
    lines = []
    for k in range(20):
        mine = codes[k % 4]
        theirs = mine if k % 5 else codes[(k + 1) % 4]  # bob differs on u0, u5, u10, u15
        alice = "alice@x.org" if k < 10 else "label-studio-user-3"
        lines += [_review(f"u{k}", alice, mine, k), _review(f"u{k}", "bob@x.org", theirs, k)]
    split = write_text(tmp_path / "split.jsonl", "\n".join(lines) + "\n")
    code, out, err = run_cli(["agree", str(split), *AGREE_JSON], capsys)
    assert code == 0, err
    rows = json.loads(out)
    first = rows[0]["notes"][0]
    assert first.startswith("Assumed: coders (3)")
    assert (
        "; label-studio-user-3 (a Label Studio user id, no name) shares no unit with "
        "alice@x.org: one reviewer named by id in one export and by name in another? counted "
        "as two coders, their units split between the names (`labelstudio import --user "
        "3=NAME` names it)"
    ) in first
    # the pair rows it warns of, by hand: alice|bob agree on 8 of u0-u9 (u0, u5 differ)
    pair = [
        r
        for r in rows
        if r["scope"] == "pair"
        and r["coders"] == "alice@x.org|bob@x.org"
        and r["statistic"] == "percent"
    ]
    assert [(r["value"], r["n_units"]) for r in pair] == [(0.8, 10)]
    # the same reviews under one name: no such clause
    one = write_text(
        tmp_path / "one.jsonl", split.read_text().replace("label-studio-user-3", "alice@x.org")
    )
    code, out, err = run_cli(["agree", str(one), *AGREE_JSON], capsys)
    assert code == 0, err
    assert "Label Studio user id" not in json.loads(out)[0]["notes"][0]


def test_a_precision_on_few_false_alarms_says_its_percentile_interval_may_not_cover() -> None:
    """64 of 68 flagged sentences right (the demo's multivers-healthver, refuted): 4 false
    alarms on the ratio's rarer side (< 10), so the percentile interval is used; 68 predicted
    positives (>= 10) and 148 questions left it unwarned on main (the demo: 94.1 [88.1, 98.6]).
    Such intervals cover 0.914 (iid binomial, n 68, p 0.94, 4,000 data sets x 2,000
    resamples, seed 0; 0.920 at 36/40), as the specificity ones the note already marked."""
    import numpy as np

    from failcodes.metrics import bootstrap_intervals
    from failcodes.stats.bootstrap import multinomial_weights

    rows = [[1, 0, 0, 0]] * 64 + [[0, 1, 0, 0]] * 4 + [[0, 0, 1, 0]] * 20 + [[0, 0, 0, 1]] * 60
    per_cluster = np.asarray(rows, dtype=np.int64)[:, None, :]  # (questions, 1 system, 4)
    weights = multinomial_weights(len(rows), 1000, np.random.default_rng(0))
    iv = bootstrap_intervals(per_cluster, weights, 0.95)[0]
    p = iv["precision"]
    assert p.method == "percentile"
    assert p.warning == (
        "only 4 units on the rarer side of its ratio (< 10): a percentile interval, "
        "which under-covers"
    )
    # recall 64/84 (20 misses) is studentized and says nothing, as before
    assert iv["recall"].method == "studentized" and iv["recall"].warning is None
    # a precision on fewer than 10 flagged units keeps its one reason (6/7: 'only 7 positives')
    few = bootstrap_intervals(
        np.asarray([[1, 0, 0, 0]] * 6 + [[0, 1, 0, 0]] + [[0, 0, 0, 1]] * 40, dtype=np.int64)[
            :, None, :
        ],
        multinomial_weights(47, 1000, np.random.default_rng(0)),
        0.95,
    )[0]["precision"]
    assert few.warning is not None and "rarer side" not in few.warning
    assert "only 7 positives (< 10)" in few.warning


def test_the_codebook_tables_agreement_caption_names_the_reviewer_it_compares(
    tmp_path: Path,
) -> None:
    """The demo's codebook table read 'Cohen's kappa of the human review vs the judge' beside
    exact_entity 1.00 [1.00, 1.00]: the reviewer is the SIMULATED one, who copies the judge's
    codes outside evidence polarity (kappa 1 by construction), named in the agreement
    table's caption but not in this one."""
    import pandas as pd

    from failcodes.report.build import JUDGE_SOURCE, ReportInputs, build_report

    who = "SIMULATED reviewer (SciFact rationales; other codes copy the judge) vs offline"
    agreement = pd.DataFrame(
        [
            {
                "source": JUDGE_SOURCE,
                "subject": "entity_match: exact_entity",
                "statistic": "cohen",
                "level": "nominal",
                "weights": "none",
                "value": 1.0,
                "ci_low": 1.0,
                "ci_high": 1.0,
                "n_units": 30,
                "n_raters": 2,
                "undefined_reason": None,
                "warning": "zero-width interval; only 30 units (< 100)",
                "confidence": 0.95,
                "coders": who,
            }
        ]
    )
    table = pd.DataFrame(
        [{"part": "Retrieval", "subcode": "exact_entity", "Agreement": "1.00 [1.00, 1.00] *"}]
    )
    build_report(ReportInputs(agreement=agreement, codebook_table=table), tmp_path)
    first = (tmp_path / "tables" / "codebook.md").read_text(encoding="utf-8").splitlines()[0]
    assert f"Cohen's kappa of the human review vs the judge ({who}) on each code" in first


def test_the_corrected_tables_captions_say_the_estimand_is_the_population_share(
    tmp_path: Path,
) -> None:
    """The corrected share and its interval are PPI's (as ppi-python's ppi_mean_ci: the
    judge's mean over the N unreviewed units carries its own sampling variance,
    lam**2 var(yhat_u) / N): of the population the units are a sample of, not a count of the
    table's units (the demo: well_chunked corrected 100.0 beside human-only 96.7 of the same
    30 units). The section's method note said so; the caption, which the table's .md, .tex
    and .csv files carry without that note, did not."""
    from failcodes.report.rundir import load_run_dir
    from failcodes.study.layout import StudyLayout
    from failcodes.units import UnitKind
    from tests.review_helpers import drawn_plan_study, judge_annotations
    from tests.test_review_plan import human, write_reviews

    judge = {f"u{n:02d}": "exact_entity" for n in range(40)}
    drawn = drawn_plan_study(tmp_path, judge)
    write_reviews(
        StudyLayout.of(tmp_path).judge_run("ds", "retrieval") / "annotations.jsonl",
        judge_annotations(judge),
    )
    write_reviews(tmp_path / "review" / "alice.jsonl", [human(u, "exact_entity") for u in drawn])
    inputs = load_run_dir(tmp_path)
    [(caption, table)] = inputs.corrected[UnitKind.RETRIEVAL]
    assert (
        "and corrected (post-stratified by the judge's code; PPI's estimand and interval: the "
        "share in the population the "
        "units are a sample of, not a count of these units) with 95% CIs per retriever, the "
        "human codes by alice; 20 of 20 sampled units reviewed"
    ) in caption
    # 20 of 20 reviewed exact_entity, the judge's 40 too: 100.0, Clopper-Pearson 20/20's
    # lower bound 0.025 ** (1 / 20) = 0.8316 for the human-only share
    exact = table[table["code"] == "exact_entity"].iloc[0]
    assert exact["human-only (%)"] == "100.0 [83.2, 100.0]"


def test_a_kappa_on_a_few_ratings_outside_the_common_category_says_it_may_not_cover() -> None:
    """Two raters, 200 units, 'yes' from r1 on u0 and u1, from r2 on u1, u2 and u3 (a code
    near prevalence 0): Cohen's kappa by hand p_o = 197/200 = 0.985, p_e = 0.01 * 0.015 +
    0.99 * 0.985 = 0.97530, kappa = 0.0097 / 0.0247 = 0.3927, its BCa interval [-0.008, 1.000]
    with no warning (200 units >= 100). Such intervals covered 0.27-0.36 on 0-4 ratings
    outside the common category and 0.91 on 5-9 (two raters, 200 units, prevalence 1.5%,
    sensitivity 0.6: 300 data sets, seed 2; stats.agreement.MIN_RARE_RATINGS)."""
    import numpy as np

    from failcodes.stats.agreement import agreements

    a = np.zeros(200)
    b = np.zeros(200)
    a[[0, 1]] = 1
    b[[1, 2, 3]] = 1
    got = {
        r.statistic: r
        for r in agreements(
            np.column_stack([a, b]),
            ["cohen", "fleiss", "krippendorff", "gwet_ac1"],
            categories=[0, 1],
            n_bootstrap=1000,
            seed=0,
        )
    }
    assert got["cohen"].value == pytest.approx(0.0097 / 0.0247)
    note = (
        "only 5 rating(s) outside the most common category (< 10): the coefficient rests on "
        "those few units, and its interval may not cover"
    )
    for name in ("cohen", "fleiss", "krippendorff"):
        assert got[name].warning == note, (name, got[name].warning)
    # AC1 does not take the skewed margins as chance (0.985 here): no such note
    assert got["gwet_ac1"].warning is None or "most common category" not in got["gwet_ac1"].warning
    # ten times the 'yes' ratings (r1 on u0-u9, r2 on u5-u14: 20 outside 'no'): no note
    a, b = np.zeros(200), np.zeros(200)
    a[:10] = 1
    b[5:15] = 1
    (cohen,) = agreements(
        np.column_stack([a, b]), ["cohen"], categories=[0, 1], n_bootstrap=1000, seed=0
    )
    assert cohen.warning is None or "most common category" not in cohen.warning
