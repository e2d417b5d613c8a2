"""Session 27, helper t27api: the library API as a second researcher uses it from a notebook.

Hand-built pandas frames with the shapes a notebook makes (a frame straight from a numpy
matrix, a groupby result, two Series sorted two ways), and the arguments a notebook gets wrong
(a path where objects go, one name where a list goes, a misspelt word). Expected values are
worked by hand beside the assertions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import failcodes as fc
from failcodes.errors import FailcodesError

# Two raters, five units (a notebook's matrix: rows units, columns raters):
#   r1 = 1 1 0 0 1, r2 = 1 0 0 0 1 -> agree on 4 of 5, p_o = 0.8;
#   r1 rates 1 on 3/5, r2 on 2/5: p_e = 0.6 * 0.4 + 0.4 * 0.6 = 0.48;
#   Cohen's kappa = (0.8 - 0.48) / (1 - 0.48) = 0.32 / 0.52 = 0.615385
MATRIX = [[1, 1], [1, 0], [0, 0], [0, 0], [1, 1]]
KAPPA = 0.32 / 0.52


def _values(results: list[Any]) -> dict[str, float | None]:
    return {r.statistic: r.value for r in results}


def test_a_frame_made_from_a_numpy_matrix_gives_its_kappa() -> None:
    """Before: `pd.DataFrame(matrix)` (column names 0 and 1, not text) raised pandas'
    KeyError '0' from ratings_from_frame; `raters=[0, 1]` was refused as "no rater column(s)
    [0, 1] (columns: ['0', '1'])", naming the columns it had been given."""
    frame = pd.DataFrame(np.array(MATRIX))
    table = fc.ratings_from_frame(frame)
    assert table.raters == ["0", "1"]
    got = _values(fc.agreement_table(table, ["percent", "cohen"]))
    assert got["percent"] == pytest.approx(0.8)
    assert got["cohen"] == pytest.approx(KAPPA)  # 0.615385, worked above
    named = fc.ratings_from_frame(frame, raters=[0, 1])
    assert _values(fc.agreement_table(named, ["cohen"]))["cohen"] == pytest.approx(KAPPA)


def test_ratings_from_frame_refuses_what_it_cannot_read_in_one_line() -> None:
    """Before: a MultiIndex header (a pivot_table's) was a KeyError "('a', 'item')", a
    file's path an AttributeError ('builtin_function_or_method' has no 'names'), and
    `raters="r1"` was read letter by letter: "no rater column(s) ['r', '1']"."""
    frame = pd.DataFrame({"item": ["u1", "u2"], "r1": ["a", "b"], "r2": ["a", "a"]})
    two_levels = frame.set_axis(pd.MultiIndex.from_product([["x"], frame.columns]), axis=1)
    with pytest.raises(FailcodesError, match=r"^frame: its columns have 2 levels"):
        fc.ratings_from_frame(two_levels)
    with pytest.raises(FailcodesError, match=r"read the file with failcodes.read_ratings_frame"):
        fc.ratings_from_frame("ratings.csv")
    with pytest.raises(FailcodesError, match=r"^raters: expected a list of names, not str 'r1'"):
        fc.ratings_from_frame(frame, raters="r1")
    clash = pd.DataFrame([[1, 1], [0, 1]], columns=pd.Index([1, "1"], dtype=object))
    with pytest.raises(FailcodesError, match=r"column name '1' is on 2 columns"):
        fc.ratings_from_frame(clash)


def test_agreement_table_names_the_argument_a_notebook_got_wrong() -> None:
    """Before: a DataFrame given as the table was an AttributeError ('ordered'); "cohen"
    alone was read letter by letter ("unknown statistic 'c'"); level="nominl" and
    weights="quadratc" were refused as if the labels needed an order ("need ordered
    categories ... give the category order"); n_bootstrap=True a TypeError."""
    frame = pd.DataFrame(
        {"item": list("abcde"), "r1": list("xxyyx"), "r2": list("xyyyx")}
    )  # x/y as MATRIX's 1/0: kappa 0.615385
    table = fc.ratings_from_frame(frame)
    assert _values(fc.agreement_table(table, "cohen")) == {"cohen": pytest.approx(KAPPA)}
    with pytest.raises(FailcodesError, match=r"^table: expected a RatingsTable, not DataFrame"):
        fc.agreement_table(frame)  # type: ignore[arg-type]
    with pytest.raises(FailcodesError, match=r"^level: 'nominl' is not one of nominal, ordinal"):
        fc.agreement_table(table, ["cohen"], level="nominl")
    with pytest.raises(FailcodesError, match=r"^weights: 'quadratc' is not one of none, linear"):
        fc.agreement_table(table, ["cohen"], weights="quadratc")  # type: ignore[arg-type]
    with pytest.raises(FailcodesError, match=r"^n_bootstrap: expected a whole number"):
        fc.agreement_table(table, ["cohen"], n_bootstrap=True)


def test_ppi_mean_refuses_two_series_indexed_two_ways() -> None:
    """Before: `ppi_mean(df.y, other.yhat)`, the judge's codes sorted another way, paired
    each human code with another unit's judge code by position at no word.

    Eight reviewed units where the judge agreed on every one, ten unreviewed, lam=1:
    estimate = mean(unreviewed) + mean(y - yhat) = 6/10 + 0 = 0.6;
    se = sqrt(var(u)/N + var(y - yhat)/n) = sqrt(0.6*0.4/10 + 0) = 0.154919 (aligned).
    Paired by position after sorting yhat, the differences 1,0,1,1,-1,0,-1,-1 have variance
    0.75: se = sqrt(0.024 + 0.75/8) = 0.343147, 2.2 times as wide, and main returned it."""
    y = pd.Series([1, 0, 1, 1, 0, 1, 0, 0], index=list("abcdefgh"))
    unreviewed = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1]
    aligned = fc.ppi_mean(y, y.copy(), unreviewed, lam=1)
    assert aligned.estimate == pytest.approx(0.6)
    assert aligned.se == pytest.approx(0.154919, abs=1e-6)
    with pytest.raises(FailcodesError, match=r"indexes differ \(position 0: 'a' in y, 'b' in"):
        fc.ppi_mean(y, y.sort_values(), unreviewed, lam=1)
    shuffled = fc.ppi_mean(y.to_numpy(), y.sort_values().to_numpy(), unreviewed, lam=1)
    assert shuffled.se == pytest.approx(0.343147, abs=1e-6)  # arrays: by position, as asked
    with pytest.raises(FailcodesError, match=r"y\[2\] is nan"):
        fc.ppi_mean(pd.array([1, 0, None, 1], dtype="Int64"), [1, 0, 1, 1], [1, 0])


def test_render_table_keeps_the_row_names_of_a_groupby() -> None:
    """Before: `render_table(df.groupby("system")[["tp"]].sum(), ...)` wrote the column tp
    alone, '3' and '3', without the systems A and B they are the sums of (rows are written
    without their index); "markdown" was a ValueError ('markdown' is not a valid
    TableFormat), "latx" too."""
    df = pd.DataFrame({"system": ["A", "A", "B"], "tp": [1, 2, 3]})
    sums = df.groupby("system")[["tp"]].sum()  # A: 1 + 2 = 3, B: 3
    assert fc.render_table(sums, "csv").splitlines() == ["system,tp", "A,3", "B,3"]
    assert "| A | 3 |" in fc.render_table(sums, "markdown")
    described = df[["tp"]].describe()  # unnamed index of statistics' names: count = 3
    assert "count,3.0" in fc.render_table(described, "csv").splitlines()
    plain = df[df["system"] == "B"]  # row numbers (index [2]) stay out
    assert fc.render_table(plain, "csv").splitlines() == ["system,tp", "B,3"]
    with pytest.raises(FailcodesError, match=r"^fmt: 'latx' is not one of md, latex, html, csv"):
        fc.render_table(sums, "latx")


def test_a_path_or_a_dict_where_objects_go_is_one_line(tmp_path: Path) -> None:
    """Before: compute_metrics("runs/a.jsonl", ...) was an AttributeError ('str' has no
    'system'), failcodes.run(dict) one ('dict' has no 'run'), read_ratings_frame(frame) a
    TypeError from Path()."""
    with pytest.raises(FailcodesError, match=r"^traces: a path \('t.jsonl'\); read the file"):
        fc.compute_metrics("t.jsonl", [], "refuted")  # type: ignore[arg-type]
    with pytest.raises(FailcodesError, match=r"^traces: a path \('t.jsonl'\); read the file"):
        fc.find_disagreements("t.jsonl", [], "refuted")  # type: ignore[arg-type]
    with pytest.raises(FailcodesError, match=r"^labels: a path \('l.jsonl'\); read the file"):
        fc.find_disagreements([], Path("l.jsonl"), "refuted")  # type: ignore[arg-type]
    with pytest.raises(FailcodesError, match=r"^request: expected a request .*not dict"):
        fc.run({"traces": [str(tmp_path / "t.jsonl")]})  # type: ignore[arg-type]
    with pytest.raises(FailcodesError, match=r"^path: expected a file's path, not DataFrame"):
        fc.read_ratings_frame(pd.DataFrame({"r1": [1]}))


def test_a_folder_one_thread_writes_is_refused_to_another_thread(tmp_path: Path) -> None:
    """Before: the lock on a judge run or a study was re-entrant for the whole process, so a
    notebook's second thread walked in: two `failcodes.run(JudgeRequest(output=same))` from a
    thread pool wrote one journal at once (sqlite3.IntegrityError: UNIQUE constraint failed:
    annotations.unit_id), two `run_study(same)` ran the steps together (KeyError from the
    second's release), and a report read a study another thread was writing. Within the
    holding thread a nested hold still re-enters (a study step's own judge run)."""
    import threading

    from failcodes.runlock import FolderLockedError, folder_lock, reading_lock

    seen: list[str] = []

    def other() -> None:
        for take in (
            lambda: folder_lock(tmp_path, what="judge run"),
            lambda: reading_lock(tmp_path, busy="written by {holder}"),
        ):
            try:
                with take():
                    seen.append("entered")
            except FolderLockedError as exc:
                seen.append(exc.one_line())

    # the same thread holds it twice: re-entered
    with folder_lock(tmp_path, what="judge run"), folder_lock(tmp_path, what="judge run"):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert seen == [
        f"{tmp_path.resolve()}: this judge run is in use by another thread of this process; "
        "wait for it to finish, or write to another folder",
        f"{tmp_path.resolve()}: written by another thread of this process",
    ]
    with folder_lock(tmp_path, what="judge run"):  # released: free again
        pass


def test_traces_and_labels_built_from_a_frame_read_as_the_same_rows_in_a_file() -> None:
    """Before: `failcodes.Trace(**row)` over `df.to_dict("records")` was refused by pydantic
    for ids 1, 2 (an integer column: "Input should be a valid string") and for the verdict
    "Supported" as the pipeline writes it, and `Label(**row)` for sentence ids 11.0 (a float
    column) and a question id NaN (a blank cell): the same frame written to a file reads as
    "1", "11", supported (raw_verdict "Supported") and no question id.

    By hand, one system, refuted mapping, any-error aggregation per sentence:
    s11 = {supported, refuted} -> flagged, labelled error: TP; s12 supported, no error: TN;
    s21 refuted, no error: FP; s22 supported, error: FN. TP 1, FP 1, FN 1, TN 1, F1 0.5."""
    traces_frame = pd.DataFrame(
        {
            "system": ["A"] * 5,
            "question_id": [1, 1, 1, 2, 2],
            "sentence_id": [11, 11, 12, 21, 22],
            "claim_id": np.arange(1, 6),  # numpy integers, as .to_dict leaves some
            "claim": ["x1", "x2", "x3", "x4", "x5"],
            "verdict": ["Supported", "Refuted", "Supported", "No Evidence", "supported"],
        }
    )
    traces_frame.loc[3, "verdict"] = "REFUTED"
    labels_frame = pd.DataFrame(
        {
            "sentence_id": [11.0, 12.0, 21.0, 22.0],
            "has_error": [True, False, False, True],
            "question_id": [1, np.nan, 2, 2],
        }
    )
    traces = [fc.Trace(**row) for row in traces_frame.to_dict("records")]
    labels = [fc.Label(**row) for row in labels_frame.to_dict("records")]
    assert (traces[0].question_id, traces[0].sentence_id, traces[0].claim_id) == ("1", "11", "1")
    assert (traces[0].verdict, traces[0].raw_verdict) == ("supported", "Supported")
    assert traces[4].raw_verdict is None  # written as the verdict itself: nothing to keep
    assert (labels[0].sentence_id, labels[1].question_id) == ("11", None)
    row = fc.compute_metrics(traces, labels, "refuted").results[0].flat()
    assert {k: row[k] for k in ("tp", "fp", "fn", "tn", "f1")} == {
        "tp": 1,
        "fp": 1,
        "fn": 1,
        "tn": 1,
        "f1": 0.5,
    }
    with pytest.raises(ValueError, match="valid string"):  # a fraction is no id: refused
        fc.Trace(**{**traces_frame.to_dict("records")[0], "sentence_id": 4.5})


def test_compute_metrics_names_a_resample_count_or_seed_that_is_no_whole_number() -> None:
    """Before: bootstrap=2.0 (a config's float) was a TypeError ('float' object cannot be
    interpreted as an integer), bootstrap="20" a TypeError ('<' not supported ...), seed=1.5
    pydantic's ValidationError over 4 lines (BootstrapSettings); numpy's integers work."""
    from failcodes.errors import ConfigError

    traces = [
        fc.Trace(system="A", question_id="q1", sentence_id="s1", claim_id="c1", claim="x.",
                 verdict="refuted")
    ]  # fmt: skip
    labels = [fc.Label(sentence_id="s1", has_error=True)]
    report = fc.compute_metrics(traces, labels, "refuted", bootstrap=np.int64(20), seed=np.int64(1))
    assert report.results[0].tp == 1  # by hand: s1 flagged (refuted), labelled error: TP
    for kwargs, said in (
        ({"bootstrap": 2.0}, "bootstrap: expected a whole number >= 0, not 2.0"),
        ({"bootstrap": "20"}, "bootstrap: expected a whole number >= 0, not '20'"),
        ({"bootstrap": 20, "seed": 1.5}, "seed: expected a whole number >= 0, not 1.5"),
    ):
        with pytest.raises(ConfigError) as caught:
            fc.compute_metrics(traces, labels, "refuted", **kwargs)  # type: ignore[arg-type]
        assert str(caught.value) == said


def test_a_csv_of_a_frame_with_a_missing_rating_reads_as_its_parquet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a ratings frame whose r1 misses one rating (pandas widens it to floats) saved
    with to_csv holds '1.0' and '0.0' in r1 beside r2's '1' and '0': `agree` and
    failcodes.run(AgreeRequest) refused it ("rating '1' is '1.0' ... written another way (a
    whole number as a float): each spelling would be a category of its own"), while the
    Parquet and JSONL of the same frame read; numbers are read as numbers, one category.

    By hand over the 5 units both rated (u6 has r2 alone): as MATRIX, p_o 0.8, kappa 0.615385."""
    import json

    from tests.cli_helpers import run_cli

    frame = pd.DataFrame(
        {
            "item": ["u1", "u2", "u3", "u4", "u5", "u6"],
            "r1": [1.0, 1.0, 0.0, 0.0, 1.0, np.nan],
            "r2": [1, 0, 0, 0, 1, 0],
        }
    )
    frame.to_csv(tmp_path / "r.csv", index=False)
    assert (tmp_path / "r.csv").read_text().splitlines()[1] == "u1,1.0,1"
    result = fc.run(fc.AgreeRequest(file=tmp_path / "r.csv", stat=["percent", "cohen"]))
    api = {row["statistic"]: row["value"] for row in result.rows}
    assert api == {"percent": pytest.approx(0.8), "cohen": pytest.approx(KAPPA)}
    code, out, _ = run_cli(
        ["agree", tmp_path / "r.csv", "--stat", "percent", "--stat", "cohen", "--format", "json"],
        capsys,
    )
    assert code == 0
    cli = {row["statistic"]: row["value"] for row in json.loads(out)}
    assert cli == api


def test_draw_plan_names_a_stratum_part_size_or_seed_a_notebook_got_wrong() -> None:
    """Before: stratify="system" (one name, not a list) was read letter by letter, a
    ValueError "'e' is not in list"; stratify=["sytem"] a ValueError too, part "retrievl" a
    KeyError, seed=1.5 and size="4" TypeErrors. Now one name is taken as the list of it, and
    each bad argument is one ConfigError line naming it.

    Ten scored units, 5 of system A and 5 of B, size 4 stratified by system: 4 * 5/10 = 2
    from each stratum, inclusion probability 2/5 = 0.4."""
    from failcodes.errors import ConfigError
    from failcodes.reviewplan import FLAG_COLUMN, GROUP_COLUMN

    part = fc.UnitKind.RETRIEVAL
    coded = pd.DataFrame(
        {
            "unit_id": [f"u{i}" for i in range(10)],
            "status": ["scored"] * 10,
            GROUP_COLUMN[part]: ["A"] * 5 + ["B"] * 5,
            FLAG_COLUMN[part]: [True, False] * 5,
        }
    )
    given = {"name": "p", "size": 4, "seed": 0, "source": "x", "source_sha256": "0" * 64}
    plan = fc.draw_plan(coded, part, stratify="system", **given)
    assert [(s.key, s.population, s.sampled, s.inclusion_probability) for s in plan.strata] == [
        ("retriever=A", 5, 2, 0.4),  # the retrieval table's system column
        ("retriever=B", 5, 2, 0.4),
    ]
    assert plan.units == fc.draw_plan(coded, part, stratify=["system"], **given).units
    for call, said in (
        (lambda: fc.draw_plan(coded, part, stratify=["sytem"], **given), "stratify: 'sytem' is"),
        (lambda: fc.draw_plan(coded, "retrievl", **given), "part: 'retrievl' is not one of"),
        (lambda: fc.draw_plan(coded, part, **{**given, "seed": 1.5}), "seed: expected a whole"),
        (lambda: fc.draw_plan(coded, part, **{**given, "size": "4"}), "size: expected a whole"),
    ):
        with pytest.raises(ConfigError, match=f"^{said}"):
            call()


def test_run_with_note_none_says_nothing_and_keeps_the_lines_on_the_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: failcodes.run(request, note=None), a notebook's way to silence it, was a
    TypeError ('NoneType' object is not callable) at the first note; note="x" one too.

    One sentence, its one claim refuted, labelled an error: TP 1 by hand."""
    (tmp_path / "t.jsonl").write_text(
        '{"system": "A", "question_id": "q1", "sentence_id": "s1", "claim_id": "c1", '
        '"claim": "x.", "verdict": "refuted"}\n'
    )
    (tmp_path / "l.jsonl").write_text('{"sentence_id": "s1", "has_error": true}\n')
    request = fc.MetricsRequest(traces=[tmp_path / "t.jsonl"], labels=tmp_path / "l.jsonl")
    result = fc.run(request, note=None)
    assert result.report.results[0].tp == 1
    assert result.assumed.startswith("Assumed: shared labels")  # still on the result
    assert capsys.readouterr().err == ""
    with pytest.raises(FailcodesError, match=r"^note: expected a function taking a line"):
        fc.run(request, note="x")  # type: ignore[arg-type]


def test_ids_kept_both_as_index_and_column_are_read_once() -> None:
    """Before: ratings_from_frame(frame.set_index("item", drop=False)) (the ids kept as a
    column too, as pandas users do to look rows up) was pandas' ValueError "cannot insert
    item, already exists". Now the index level equal to its column is read once; an index
    whose name is a column of other values is refused naming both.

    Units u1..u5, r1 = a a b b a, r2 = a b b b a: as MATRIX, kappa 0.615385."""
    frame = pd.DataFrame(
        {"item": ["u1", "u2", "u3", "u4", "u5"], "r1": list("aabba"), "r2": list("abbba")}
    )
    table = fc.ratings_from_frame(frame.set_index("item", drop=False))
    assert (table.unit_column, table.raters) == ("item", ["r1", "r2"])
    assert _values(fc.agreement_table(table, "cohen"))["cohen"] == pytest.approx(KAPPA)
    assert fc.render_table(frame.set_index("item", drop=False), "csv").splitlines()[:2] == [
        "item,r1,r2",
        "u1,a,a",
    ]
    with pytest.raises(FailcodesError, match=r"^frame: its index 'r1' and its column 'r1'"):
        fc.ratings_from_frame(frame.set_index("item").rename_axis("r1"))


def test_a_codebook_part_asked_by_a_misspelt_word_is_one_line() -> None:
    """Before: bundled_codebook().part("verificaton") was an AttributeError ('str' object
    has no attribute 'value'); the right word worked. The bundled codebook's verification
    part has the six reasoning dimensions per_trace_steps writes."""
    cb = fc.bundled_codebook()
    assert [d.id for d in cb.part("verification").dimensions] == [
        "evidence_selection",
        "evidence_understanding",
        "inference",
        "verbal_confidence",
        "label_consistency",
        "grounding",
    ]
    with pytest.raises(FailcodesError, match=r"^kind: 'verificaton' is not one of retrieval"):
        cb.part("verificaton")


def test_percent_table_names_a_group_it_has_no_shares_for() -> None:
    """Before: percent_table(shares, ["B"]) for shares of group A alone was pandas' KeyError
    'B', digits=-1 a ValueError ('Format specifier missing precision'). A's share 0.5 reads
    50.0 (one decimal by default)."""
    shares = pd.DataFrame(
        {"dimension": ["d"], "code": ["c"], "label": ["l"], "high_quality": [True]}
    ).assign(A=[0.5], n_A=[2])
    assert fc.percent_table(shares, ["A"])["A"].tolist() == ["50.0"]
    with pytest.raises(FailcodesError, match=r"field 'groups': 'B' is no group .*have: A\)"):
        fc.percent_table(shares, ["B"])
    with pytest.raises(FailcodesError, match=r"field 'digits': expected a whole number >= 0"):
        fc.percent_table(shares, ["A"], digits=-1)
