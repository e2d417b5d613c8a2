"""Session 23, t23s2a: the demo's comparisons and the report say their units and assumptions."""

from __future__ import annotations

import html
import json
from collections import Counter
from pathlib import Path

import pytest
from scipy.stats import chi2

from failcodes.demo import STEPS, DemoContext
from tests.cli_helpers import run_cli


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's study, review-loop, compare and report steps (the others: nothing read here)."""
    out = tmp_path_factory.mktemp("demo")
    ctx = DemoContext(out_dir=out)
    for step in STEPS:
        if step.name in ("study", "review-loop", "compare", "report"):
            step.run(ctx)
    return out


def test_the_demos_comparisons_say_what_was_assumed_and_the_unit(compared: Path) -> None:
    """The demo wrote bare rows (no assumed line, no unit): now compare --format json's object."""
    data = json.loads((compared / "comparisons" / "scifact-dev.json").read_text(encoding="utf-8"))
    text = (compared / "data" / "scifact-dev.labels.jsonl").read_text(encoding="utf-8")
    labels = [json.loads(line) for line in text.splitlines()]
    per_question = Counter(lab["question_id"] for lab in labels)
    # by hand from the labels: 300 labelled sentences in 300 questions, one each, so every test
    # takes the sentence as its unit (no question holds several); 64 carry has_error
    assert (len(labels), len(per_question), max(per_question.values())) == (300, 300, 1)
    assert sum(lab["has_error"] for lab in labels) == 64
    assert {(t["unit"], t["clustered"]) for t in data["tests"]} == {("sentence", False)}
    assert data["assumed"].startswith("Assumed: shared labels")
    assert "every system answered every labelled question (4 systems)" in data["assumed"]
    page = html.unescape((compared / "report" / "index.html").read_text(encoding="utf-8"))
    assert f"scifact-dev.json: {data['assumed']}" in page
    # the report's comparisons table gives each test's unit and n
    table = (compared / "report" / "tables" / "comparisons.csv").read_text(encoding="utf-8")
    assert table.splitlines()[0].endswith(",unit,n")
    cochran = next(t for t in data["tests"] if t["test"] == "cochran_q")
    # Cochran's Q on the 64 labelled errors, by hand from the metrics' TP (covidfact, healthver,
    # scifact 64 each, fever 6, fever's hits among the others'): k = 4, C = (64, 6, 64, 64),
    # N = 198, rows: 6 with 4 hits, 58 with 3; Q = (k-1)(k*sum C^2 - N^2) / (k*N - sum R^2)
    # = 3 * (4 * 12324 - 39204) / (792 - (6*16 + 58*9)) = 30276 / 174 = 174.0, df 3
    assert (cochran["statistic"], cochran["df"], cochran["n"]) == (pytest.approx(174.0), 3, 64)
    pairs = {t["comparison"]: t for t in data["tests"] if t["test"].startswith("mcnemar")}
    pair = pairs["multivers-covidfact vs multivers-fever"]
    # McNemar on the 64 errors: b = 58 (covidfact hit, fever missed), c = 0; 58 discordant
    # pairs >= 25: chi-square (b - c)^2 / (b + c) = 58, p = chi2.sf(58, 1) = 2.62e-14
    assert (pair["test"], pair["statistic"]) == ("mcnemar_chi2", pytest.approx(58.0))
    assert pair["p_value"] == pytest.approx(chi2.sf(58.0, 1), rel=1e-9)
    assert "| sentence | 64 |" in (compared / "report" / "tables" / "comparisons.md").read_text(
        encoding="utf-8"
    )


def test_the_demos_comparisons_file_is_what_compare_writes(
    compared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """comparisons/<ds>.json is `failcodes compare ... --format json`'s object, key for key."""
    data = json.loads((compared / "comparisons" / "scifact-dev.json").read_text(encoding="utf-8"))
    code, out, err = run_cli(
        [
            "compare",
            "--traces",
            str(compared / "data" / "scifact-dev.traces.parquet"),
            "--labels",
            str(compared / "data" / "scifact-dev.labels.jsonl"),
            "-m",
            "refuted",
            "--metrics",
            "recall,f1",
            "--resamples",
            "1000",
            "--seed",
            "0",
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0, err
    assert json.loads(out) == data


def _captions(page: Path) -> list[str]:
    from lxml import html as lhtml

    doc = lhtml.parse(str(page)).getroot()
    found = [" ".join(c.text_content().split()) for c in doc.xpath("//caption|//figcaption")]
    return [html.unescape(c) for c in found]


def test_the_judges_numbers_say_they_are_the_heuristic_baselines(compared: Path) -> None:
    """Human vs judge agreement, the codebook's Freq./Agreement and the quote checks were the
    offline judge's numbers with no word of it, where its Tables 8-9 are tagged."""
    captions = _captions(compared / "report" / "index.html")
    judged = [c for c in captions if c.startswith("Agreement per subject, human review vs judge")]
    # the review loop's SIMULATED reviewer vs the offline judge: one table, one figure
    assert len(judged) == 2
    assert all("; judge: offline heuristic baseline" in c for c in judged)
    [codebook] = [c for c in captions if c.startswith("Codebook")]
    assert codebook.endswith(
        "; Freq. and Agreement from the judge's codes (offline heuristic baseline)"
    )
    [quotes] = [c for c in captions if c.startswith("Per-dimension quotes per judge")]
    assert "quotes are found by construction" in quotes
    # the offline judge's 455 retrieval quotes (91 passages x 5 dimensions, by hand from the
    # Table 8 n=91) are all found: 1.000, which checks nothing of it
    table = (compared / "report" / "tables" / "quote_checks.csv").read_text(encoding="utf-8")
    assert "scifact-dev/retrieval,offline,455,455,455,1.0" in table.replace(".000", ".0")


def test_the_corrected_shares_name_who_reviewed(compared: Path) -> None:
    """Table 8's corrected shares rested on the demo's SIMULATED reviewer, named nowhere in
    their caption (the corrected attribution's said 'by SIMULATED reviewer ...')."""
    captions = _captions(compared / "report" / "index.html")
    [table8] = [c for c in captions if c.startswith("Corrected shares (%), plan")]
    reviews = (compared / "review" / "simulated-scifact-gold.jsonl").read_text(encoding="utf-8")
    coders = {json.loads(line)["coder"] for line in reviews.splitlines() if line.strip()}
    # by hand: the review loop's plan draws 30 of the 91 passages and the simulated reviewer
    # answers all 30, as one coder
    assert coders == {"SIMULATED reviewer (SciFact rationales; other codes copy the judge)"}
    assert (
        "per retriever, the human codes by SIMULATED reviewer (SciFact rationales; other codes "
        "copy the judge); 30 of 30 sampled units reviewed"
    ) in table8


def test_an_agreement_figure_names_each_weighted_statistic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agreement figure labelled Cohen's kappa and its quadratic-weighted form alike
    ('correctness / cohen' at 0.311 and at 0.633 in the demo's figure); one figure of every
    source also mixed two sources' rows."""
    import pandas as pd
    from sklearn.metrics import cohen_kappa_score

    from failcodes.report import build
    from failcodes.report.build import ReportInputs, build_report

    a = [0, 1, 2, 2, 1, 0, 2, 1, 0, 2]
    b = [0, 2, 2, 1, 1, 0, 2, 0, 0, 2]
    # by hand: po 7/10, pe (3*4 + 3*2 + 4*4) / 100 = 0.34, kappa 0.36 / 0.66 = 0.5455 (as
    # sklearn); quadratic-weighted 0.8 (sklearn)
    plain, quad = cohen_kappa_score(a, b), cohen_kappa_score(a, b, weights="quadratic")
    assert (round(plain, 4), round(quad, 4)) == (0.5455, 0.8)
    rows = [
        {"source": "agreement/x.json", "subject": "correctness", "statistic": "cohen",
         "weights": "none", "value": plain, "ci_low": plain, "ci_high": plain, "n_units": 10,
         "n_raters": 2},
        {"source": "agreement/x.json", "subject": "correctness", "statistic": "cohen",
         "weights": "quadratic", "value": quad, "ci_low": quad, "ci_high": quad, "n_units": 10,
         "n_raters": 2},
        {"source": "agreement/y.json", "subject": "correctness", "statistic": "cohen",
         "weights": "none", "value": 0.2, "ci_low": 0.2, "ci_high": 0.2, "n_units": 10,
         "n_raters": 2},
    ]  # fmt: skip
    drawn: list[tuple[list[str], list[float]]] = []
    real = build.figs.interval_bars

    def spy(labels: list[str], values: list[float], *args: object, **kw: object) -> object:
        drawn.append((list(labels), [round(v, 4) for v in values]))
        return real(labels, values, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(build.figs, "interval_bars", spy)
    build_report(ReportInputs(agreement=pd.DataFrame(rows)), tmp_path / "r")
    assert drawn == [
        (["correctness / cohen", "correctness / cohen (quadratic)"], [0.5455, 0.8]),
        (["correctness / cohen"], [0.2]),
    ]
    assert (tmp_path / "r" / "figures" / "agreement_2.png").is_file()


def test_the_attribution_figure_says_what_its_subcode_counts_count() -> None:
    """Its subcode bars (misreading 119) stood beside '120 disagreements attributed' with no
    unit: they count Tables 8-9's rows (the demo's 119 = 56 + 59 + 4 claims of Table 9)."""
    from failcodes.report.figures import attribution_flow

    fig = attribution_flow(
        {"retrieval": 1, "verification": 52, "evidence": 67},
        {"retrieval": {"broader_scope": 63}, "verification": {"misreading": 56 + 59 + 4}},
    )
    _, right = fig.axes
    assert right.get_xlabel() == (
        "as Tables 8-9 count: retrieval a (claim, passage)\n"
        "unit once per retriever and data set,\nverification a claim once per system"
    )


def test_agreement_over_reviews_made_with_the_judges_codes_shown_says_so_beside_it(
    tmp_path: Path,
) -> None:
    """3 of alice's 10 reviews were made with the judge's codes pre-selected: human vs judge
    percent 0.700 and Fleiss 0.512 stood with no word beside them (the section's notes apart),
    where the corrected shares' caption says they may lean toward the judge."""
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    from failcodes.report.rundir import load_run_dir
    from failcodes.study.layout import StudyLayout
    from tests.review_helpers import judge_annotations
    from tests.test_review_plan import half_reviewed_study, human, write_reviews

    entity = {f"a{i}": ("exact_entity" if i % 2 == 0 else "partial_entity") for i in range(20)}
    sample = [f"a{i}" for i in range(10)]
    # alice agrees with the judge on a0..a6 and says irrelevant on a7..a9; a0..a2 were shown
    # with the judge's codes pre-selected
    mine = [entity[u] if i < 7 else "irrelevant" for i, u in enumerate(sample)]
    reviews = [
        human(u, code).model_copy(update={"judge_shown": i < 3})
        for i, (u, code) in enumerate(zip(sample, mine, strict=True))
    ]
    half_reviewed_study(tmp_path, entity, sample, reviews)
    judge = judge_annotations(entity)
    write_reviews(
        StudyLayout.of(tmp_path).judge_run("ds", "retrieval") / "annotations.jsonl", judge
    )
    rows = load_run_dir(tmp_path).agreement
    assert rows is not None
    entity_rows = rows[(rows["subject"] == "entity_match") & (rows["coders"] == "alice vs gpt")]
    got = dict(zip(entity_rows["statistic"], entity_rows["value"], strict=True))
    # by hand: 7 of 10 alike, percent 0.7; Fleiss: pooled shares exact 9/20, partial 8/20,
    # irrelevant 3/20, pe = 0.2025 + 0.16 + 0.0225 = 0.385, (0.7 - 0.385) / 0.615 = 0.5122
    table, _ = aggregate_raters([[entity[u], m] for u, m in zip(sample, mine, strict=True)])
    assert got["percent"] == pytest.approx(0.7)
    assert got["fleiss"] == pytest.approx(fleiss_kappa(table)) == pytest.approx(0.5122, abs=1e-4)
    said = "3 of 10 reviews made with the judge's codes pre-selected: may lean toward it (note)"
    assert all(said in str(w) for w in entity_rows["warning"])
    # beside the per-code values too (Cohen's kappa of exact_entity, as the codebook shows it)
    exact = rows[(rows["subject"] == "entity_match: exact_entity") & (rows["statistic"] == "cohen")]
    assert said in str(exact["warning"].iloc[0])


def test_the_simulated_reviewers_name_says_its_agreement_is_by_construction(
    compared: Path,
) -> None:
    """The demo's simulated reviewer copies the judge's codes outside evidence_polarity: its
    agreement there (entity_match percent 1.000 over 30) is by construction, and the report
    named it 'SIMULATED reviewer (SciFact rationales)' alone."""
    from failcodes.annotationio import iter_annotations

    reviews = {
        a.unit_id: a for a in iter_annotations(compared / "review" / "simulated-scifact-gold.jsonl")
    }
    judge = {
        a.unit_id: a
        for a in iter_annotations(
            compared / "judge" / "scifact-dev" / "retrieval" / "annotations.jsonl"
        )
    }
    # by hand from the two files: entity_match alike on all 30 reviewed units (30/30 = 1.0)
    alike = sum(reviews[u].codes["entity_match"] == judge[u].codes["entity_match"] for u in reviews)
    assert (alike, len(reviews)) == (30, 30)
    import pandas as pd

    tables = sorted((compared / "report" / "tables").glob("agreement*.csv"))
    rows = pd.concat([pd.read_csv(t) for t in tables])
    entity = rows[(rows["subject"] == "entity_match") & (rows["statistic"] == "percent")]
    assert entity["coders"].tolist() == [
        "SIMULATED reviewer (SciFact rationales; other codes copy the judge) vs offline"
    ]
    assert entity["value"].tolist() == [1.0]


def test_the_corrected_shares_say_their_estimand(compared: Path) -> None:
    """well_chunked read corrected 100.0 beside judge-only 98.9, human-only 96.7 and 0
    disagreements, a reviewed unit truncated: no share of the 91 units counted can be 100%,
    and the note did not say the estimate is of the population they are a sample of."""
    import pandas as pd

    table = pd.read_csv(compared / "report" / "tables" / "retrieval_quality_corrected.csv")
    row = table[table["code"] == "well_chunked"].iloc[0]
    # by hand: the judge's 90 of 91 well_chunked, 29 of the 30 reviewed, so 61 of the 61
    # unreviewed; the simulated reviewer copies chunking (0 disagreements). PPI++ (lam *
    # mean(judge, unreviewed) + mean(human - lam * judge, reviewed)): lam 1, 61/61 + (29/30 -
    # 29/30) = 1.0, printed until session 30. Printed now, post-stratified by the judge's
    # code: the judge-1 part, 90 units (29 reviewed, all with the code) -> 90/91 x 1; the
    # judge-0 part, 1 unit (reviewed, without) -> 0: 90/91 = 98.9, a share these units can have
    assert (row["judge-only (%)"], row["lambda"], row["disagree"]) == (98.9, 1.0, 0)
    assert row["human-only (%)"].startswith("96.7 [")
    assert row["corrected (%)"].startswith("98.9 [")
    page = html.unescape((compared / "report" / "index.html").read_text(encoding="utf-8"))
    assert (
        "an estimate of the share in the population the judged units are a sample of (as in "
        "PPI), not a count of the units here"
    ) in " ".join(page.split())


def test_the_retrieval_figure_draws_what_was_not_assessable() -> None:
    """The demo's ragchecker-example passages carry no source metadata: trustworthy is
    not_assessable on all 4 (Table 8: Not assessable 100.0), and the figure's bar was empty."""
    import pandas as pd
    from matplotlib.colors import to_rgb

    from failcodes.codebook import UnitKind, bundled
    from failcodes.report.figures import stacked_subcodes
    from failcodes.report.tables import code_shares

    part = bundled().part(UnitKind.RETRIEVAL)
    high = {d.id: d.high_quality_code for d in part.dimensions}
    rows = [
        {"retriever": "A", "status": "scored", "all_high": False, **high}
        | {"trustworthy": "not_assessable"}
        for _ in range(4)
    ]
    shares = code_shares(pd.DataFrame(rows), part, by="retriever", flag="all_high")
    fig = stacked_subcodes(shares, part, ["A"])
    dims = [d.id for d in part.dimensions]
    ax = fig.axes[dims.index("trustworthy")]
    # by hand: 4 of 4 not assessable, share 1.0, drawn grey from 0 to 1
    widths = {c.get_label(): c.patches[0].get_width() for c in ax.containers}
    assert widths["not_assessable"] == pytest.approx(1.0)
    assert sum(widths.values()) == pytest.approx(1.0)
    [grey] = [c for c in ax.containers if c.get_label() == "not_assessable"]
    assert grey.patches[0].get_facecolor()[:3] == pytest.approx(to_rgb("#BBBBBB"))


def test_the_corrected_tables_say_their_judge_is_the_heuristic_baseline(compared: Path) -> None:
    """Their judge-only column and the PPI++ correction rest on the offline judge's codes:
    the .tex and .md tables, which leave the page's section title behind, said nothing of it
    (the judge-only well_chunked 98.9 is 90 of the offline judge's 91 passages)."""
    tables = compared / "report" / "tables"
    for name in ("retrieval_quality_corrected", "attribution_corrected"):
        tex = (tables / f"{name}.tex").read_text(encoding="utf-8")
        first = next(line for line in tex.splitlines() if line.startswith("\\caption{"))
        assert "; judge: offline heuristic baseline" in first, name
        assert "; judge: offline heuristic baseline" in (tables / f"{name}.md").read_text(
            encoding="utf-8"
        )


def test_the_demos_metrics_table_marks_the_intervals_that_may_not_cover(tmp_path: Path) -> None:
    """The demo printed multivers-scifact's P, R and F1 as 100.0 [100.0, 100.0] with no mark,
    where `failcodes metrics` puts '*' after them and says why below the table."""
    from failcodes.demo.study import study_step

    out = study_step(DemoContext(out_dir=tmp_path))
    [(_, table)] = [(t, f) for t, f in out.tables if t.startswith("scifact-dev: sentence-level")]
    row = table[(table["system"] == "multivers-scifact") & (table["mapping"] == "refuted")]
    # by hand: TP 64, FP 0, FN 0 (metrics/scifact-dev.json): P = R = F1 = 64/64 = 1, and
    # every resample gives 1 too: a zero-width interval on the boundary
    assert (int(row["TP"].iloc[0]), int(row["FP"].iloc[0]), int(row["FN"].iloc[0])) == (64, 0, 0)
    assert row["P"].iloc[0] == "100.0 [100.0, 100.0]*"
    # covidfact's precision 64/120 = 53.3 is not on a bound and has 56 units on its rarer
    # side: its interval carries no mark
    covid = table[(table["system"] == "multivers-covidfact") & (table["mapping"] == "refuted")]
    assert covid["P"].iloc[0].startswith("53.3 [") and not covid["P"].iloc[0].endswith("*")
    # fever's recall 6/64 = 9.4 is not on a bound either, but rests on 6 hits (< 10 on its
    # ratio's rarer side): a percentile interval that may not cover, marked since 05217f4
    fever = table[(table["system"] == "multivers-fever") & (table["mapping"] == "refuted")]
    assert fever["R"].iloc[0].startswith("9.4 [") and fever["R"].iloc[0].endswith("*")
    said = [line for line in out.lines if line.startswith("scifact-dev metrics: ")]
    assert said[1] == (
        "scifact-dev metrics: * after an interval: it may not cover (the CI warnings below say why)"
    )
    assert any(
        "– CI warning (zero-width interval; estimate on the boundary (1)): " in line
        and "multivers-scifact/refuted:P" in line
        for line in said
    )
    assert (
        "scifact-dev metrics: – CI warning (only 6 units on the rarer side of its ratio (< 10): "
        "a percentile interval, which under-covers): multivers-fever/refuted:R"
    ) in said
