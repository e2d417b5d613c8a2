"""Session 31 (t31study): whole studies on designs the tests did not use, checked by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from failcodes.codebook import bundled_dir

#: 3 questions x 2 sentences; the clinicians' errors are q1s1 and q2s1.
SENTENCES = ["q1s1", "q1s2", "q2s1", "q2s2", "q3s1", "q3s2"]
ERRORS = {"q1s1", "q2s1"}
#: the sentences each system refutes (one claim per sentence); A uses r1, B r2
REFUTES = {"A": {"q1s1", "q2s2"}, "B": {"q1s2", "q3s1"}}
RETRIEVER = {"A": "r1", "B": "r2"}


def _two_system_study(root: Path, judge: str = "") -> Path:
    """A study of one data set d: A and B, one JSONL each, two passages per claim, a label file.

    The passages carry no source metadata (the offline baseline codes trustworthiness
    not_assessable) and repeat the claim's words (every other dimension high quality).
    """
    root.mkdir()
    for system, refuted in REFUTES.items():
        rows = [
            {
                "question_id": s[:2],
                "sentence_id": s,
                "claim_id": f"{system}-{s}",
                "claim": f"drug {s} lowers blood pressure",
                "verdict": "refuted" if s in refuted else "supported",
                "retriever": RETRIEVER[system],
                "reasoning": f"The passages about drug {s} decide it.",
                "passages": [
                    {
                        "passage_id": f"{s}-{k}",
                        "rank": k,
                        "text": f"Drug {s} trial {k} lowers blood pressure.",
                    }
                    for k in (1, 2)
                ],
            }
            for s in SENTENCES
        ]
        (root / f"{system}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "labels.jsonl").write_text(
        "".join(
            json.dumps({"sentence_id": s, "question_id": s[:2], "has_error": s in ERRORS}) + "\n"
            for s in SENTENCES
        )
    )
    ingests = "".join(
        f'[[datasets.ingest]]\nadapter = "generic"\npaths = ["{s}.jsonl"]\nsystem = "{s}"\n\n'
        for s in REFUTES
    )
    (root / "failcodes.toml").write_text(
        'name = "two"\ncodebook = "medical-fact-check.v1.yaml"\n\n[[datasets]]\nname = "d"\n\n'
        f'{ingests}[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["labels.jsonl"]\n\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n\n'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n\n[judge]\njudge = "offline"\n'
        f"{judge}\n"
        "[review]\nlabelstudio = false\n"
    )
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


@pytest.fixture(scope="module")
def two_system_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study above, run once through the Python layer (``failcodes.run_study``)."""
    import failcodes

    study = _two_system_study(tmp_path_factory.mktemp("s31study") / "st")
    said: list[str] = []
    results = failcodes.run_study(study, say=said.append)
    assert all(r.outcome.value == "ran" for r in results), results
    return study


def test_figure_1_counts_no_not_assessable_dimension_as_an_error_subcode(
    two_system_study: Path,
) -> None:
    """Figure 1's "frequent error subcodes" panel drew "retrieval: not_assessable" 12.

    By hand: A (r1) disagrees on q2s1 (FN) and q2s2 (FP), B (r2) on q1s1, q2s1 (FN) and q1s2,
    q3s1 (FP): Table 8 counts r1 4 and r2 8 (claim, passage) units, 12 in all. The offline
    baseline codes every one of them high quality on entity, scope, polarity and chunking and
    not_assessable on trustworthiness (no source metadata): no error subcode at all, as the
    dominant-error tables say ("none: the judge coded no unit with an error subcode"). A
    dimension the coder could not assess is no error of the passage.
    """
    from failcodes.report.rundir import load_run_dir

    study = two_system_study
    inputs = load_run_dir(study)
    assert inputs.attribution == {"verification": 6}  # 2 of A + 4 of B
    tables = study / "report" / "tables"
    table8 = (tables / "retrieval_quality.md").read_text()
    assert "r1 (n=4)" in table8 and "r2 (n=8)" in table8
    assert "| Trustworthiness | Not assessable | 100.0 | 100.0 |" in table8
    prf = (tables / "prf_sentence.md").read_text()
    # A: TP q1s1, FP q2s2, FN q2s1, TN q1s2 q3s1 q3s2; B: FP q1s2 q3s1, FN q1s1 q2s1, TN 2
    assert "| A | refuted | 50.0 | 50.0 | 50.0 | 1 | 1 | 1 | 3 |" in prf
    assert "| B | refuted | 0.0 | 0.0 | 0.0 | 0 | 2 | 2 | 2 |" in prf
    assert inputs.error_codes == {}  # main: {'retrieval': {'not_assessable': 12}}


def test_figures_drawn_from_the_offline_judge_say_so_in_their_files(
    two_system_study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A figure of the offline baseline's codes carries the words in its PNG/PDF.

    The page's captions said "(offline heuristic baseline)"; the files in report/figures/,
    which a paper takes, said nothing, so the baseline's codes read as findings there. The
    P/R/F1 figure rests on no judge code and is not marked. The Table 9 heatmap of this study
    has every error share 0 (the 6 traces coded all correct, Table 9's last row 100.0): its
    scale ran -0.1 .. 0.1 ("share of units" below 0, a 0 cell drawn mid-scale); it is 0 .. 1.
    """
    from failcodes.report import figures
    from failcodes.report.build import build_report
    from failcodes.report.rundir import load_run_dir

    drawn: dict[str, object] = {}
    save = figures.save_figure_glyphs

    def keep(fig, out_dir, stem):  # type: ignore[no-untyped-def]
        drawn[stem] = fig
        return save(fig, out_dir, stem)

    monkeypatch.setattr(figures, "save_figure_glyphs", keep)
    build_report(load_run_dir(two_system_study), tmp_path / "report")
    mark = "judge's codes: the offline heuristic baseline (not a language model)"
    for stem in ("attribution", "retrieval_quality", "reasoning_steps"):
        assert drawn[stem].get_suptitle() == mark, stem  # type: ignore[attr-defined]
    assert drawn["recall_f1"].get_suptitle() == ""  # type: ignore[attr-defined]
    table9 = (two_system_study / "report" / "tables" / "reasoning_steps.md").read_text()
    assert "|  | All steps correct | 100.0 | 100.0 |" in table9
    [heatmap] = drawn["reasoning_steps"].axes[0].images  # type: ignore[attr-defined]
    assert heatmap.get_clim() == (0.0, 1.0)


def test_table_8_and_9_captions_say_the_top_k_cut_and_the_error_mapping(
    two_system_study: Path, tmp_path: Path
) -> None:
    """Table 8's n under ``[judge] top_k = 1`` counted each claim's first passage alone, unsaid.

    By hand, the study above with ``top_k = 1``: A's 2 disagreement claims x 1 passage = r1
    n=2, B's 4 = r2 n=4 (without the cut: 4 and 8, the passages retrieved); the caption said
    "units retrieved for the disagreements' claims". Tables 8 and 9 count the disagreements of
    one error mapping ([disagreements]), said only in the attribution summary's caption while
    the P/R/F1 table beside them shows every [metrics] mapping.
    """
    import failcodes

    study = _two_system_study(tmp_path / "st", judge="top_k = 1")
    failcodes.run_study(study, say=None)
    tables = study / "report" / "tables"
    table8 = (tables / "retrieval_quality.md").read_text()
    first = table8.splitlines()[0]
    assert "r1 (n=2)" in table8 and "r2 (n=4)" in table8
    assert "each claim's top 1 passage(s) alone (top_k = 1)" in first
    assert "error mapping refuted (sentence level)" in first
    table9 = (tables / "reasoning_steps.md").read_text().splitlines()[0]
    assert "error mapping refuted (sentence level)" in table9
    # no cut without top_k: every retrieved passage is judged and counted (r1 4, r2 8)
    whole = (two_system_study / "report" / "tables" / "retrieval_quality.md").read_text()
    assert "top_k" not in whole.splitlines()[0]
    assert "r1 (n=4)" in whole
