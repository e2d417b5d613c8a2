"""Session 28, helper t28small: a MedExpert span's edge slip, the API's refusals in its words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def _medexpert(path: Path, tasks: list[tuple[str, str, list[tuple[int, int]]]]) -> Path:
    """A JSL export: (title, response, [(start, end) of a Severe span]) per task."""
    rows = [
        {
            "id": i,
            "data": {"title": title, "question": "What does aspirin do?", "response": response},
            "completions": [
                {
                    "created_username": "dr_a",
                    "result": [
                        {
                            "id": f"x{i}-{k}",
                            "from_name": "factuality_label",
                            "to_name": "response",
                            "type": "labels",
                            "value": {
                                "start": start,
                                "end": end,
                                "text": response[start:end],
                                "labels": ["Severe"],
                            },
                        }
                        for k, (start, end) in enumerate(spans)
                    ],
                }
            ],
        }
        for i, (title, response, spans) in enumerate(tasks)
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_a_span_slipping_a_letter_or_two_into_a_sentence_does_not_label_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'n. Aspirin cures cancer. Ta': the selection's edges hold 1 and 2 letters of s0 and s2."""
    response = "Aspirin relieves pain. Aspirin cures cancer. Take it with food."
    start, end = response.index("n. Aspirin cures"), response.index("ke it")
    assert response[start:end] == "n. Aspirin cures cancer. Ta"
    # a span inside a sentence is read however short: 'mg' (2 letters) labels its sentence
    dose = "Take 500 mg daily. Rest well at night."
    export = _medexpert(
        tmp_path / "me.json",
        [("T-q1", response, [(start, end)]), ("T-q2", dose, [(9, 11)])],
    )
    assert dose[9:11] == "mg"
    labels = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "medexpert", str(export), "-o", str(labels)], capsys)
    assert code == 0, err
    got = {
        lb["sentence_id"]: lb["has_error"]
        for lb in map(json.loads, labels.read_text(encoding="utf-8").splitlines())
    }
    # by hand: s0 'Aspirin relieves pain.' (19 letters) gets 'n.' = 1 letter; s2 'Take it with
    # food.' (14 letters) gets 'Ta' = 2; the span's other 17 letters are s1's. main: all three.
    assert got == {
        "T-q1:s0": False,
        "T-q1:s1": True,
        "T-q1:s2": False,
        "T-q2:s0": True,
        "T-q2:s1": False,
    }
    assert (
        "2 sentence(s) an error span touched with its edge alone, at most 2 letters or digits "
        "of theirs (first: T-q1:s0, 'n.' of 'Aspirin relieves pain.')"
    ) in err


def test_the_python_api_refusals_name_its_keywords_not_agrees_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pandas as pd

    import failcodes
    from failcodes.errors import InputError, StatisticsError

    # two id-named columns: which is the unit is the user's to say (main: "--unit-column and
    # --raters", flags of agree that ratings_from_frame does not take)
    ids = pd.DataFrame({"item_id": [1, 2, 3], "unit_id": [1, 2, 3], "c": [1, 2, 3], "d": [1, 2, 2]})
    with pytest.raises(InputError) as e:
        failcodes.ratings_from_frame(ids)
    assert str(e.value).endswith("name them with unit_column= and raters=")
    assert "--" not in str(e.value)
    frame = pd.DataFrame({"a": ["yes", "no", "yes"], "b": ["yes", "no", "no"]})
    with pytest.raises(StatisticsError) as s:
        failcodes.agreement_table(
            failcodes.ratings_from_frame(frame), ["krippendorff"], level="ordinal"
        )
    # main: "give the category order (e.g. --categories a,b,c)"
    assert str(s.value).endswith(
        "give the category order (e.g. failcodes.ratings_from_frame(frame, categories=['a', "
        "'b', 'c']))"
    )
    # the hint followed: ordinal alpha on 2 categories is nominal alpha. By hand (Krippendorff
    # 2011): pairable n = 6 (3 yes, 3 no); coincidences o_yy 2, o_nn 2, o_yn = o_ny 1;
    # D_o = 2/6, D_e = 2*3*3/(6*5) = 0.6; alpha = 1 - (1/3)/0.6 = 4/9
    table = failcodes.ratings_from_frame(frame, categories=["no", "yes"])
    (row,) = failcodes.agreement_table(table, ["krippendorff"], level="ordinal")
    assert row.value == pytest.approx(4 / 9)
    # agree's own words stay: the CLI names its flag
    csv = tmp_path / "r.csv"
    frame.to_csv(csv, index_label="unit_id")
    code, _, err = run_cli(
        ["agree", str(csv), "--stat", "krippendorff", "--level", "ordinal"], capsys
    )
    assert code == 2
    assert "give the category order (e.g. --categories a,b,c)" in err


def test_a_frame_refusal_names_the_cells_row_by_its_index_label() -> None:
    import pandas as pd

    import failcodes
    from failcodes.errors import InputError

    frame = pd.DataFrame(
        {"a": ["yes", "no", "yes"], "b": ["yes", "no", "Yes"]}, index=["u1", "u2", "u3"]
    )
    with pytest.raises(InputError) as e:
        failcodes.ratings_from_frame(frame)
    # 'Yes' is in row 'u3' (position 2) of column b, 'yes' first in row 'u1' (position 0) of
    # column a; main named the column only: "field 'b': rating 'Yes' is 'yes' (line 2, ..."
    assert str(e.value).startswith(
        "field 'b': row 'u3' (position 2): rating 'Yes' is 'yes' (row 'u1' (position 0), "
        "column 'a') written another way"
    )
    assert e.value.line == 4  # the frame's row + 2, as a CSV line under its header
    numbered = frame.reset_index(drop=True)
    with pytest.raises(InputError) as e:
        failcodes.ratings_from_frame(numbered)
    assert str(e.value).startswith("field 'b': row 2: rating 'Yes' is 'yes' (row 0, column 'a')")


def test_an_unknown_statistic_is_named_before_the_category_order_is_asked() -> None:
    import pandas as pd

    import failcodes
    from failcodes.errors import StatisticsError

    table = failcodes.ratings_from_frame(
        pd.DataFrame({"a": ["yes", "no", "yes"], "b": ["yes", "no", "no"]})
    )
    # main: "give the category order (...)": given it, the name was refused only then
    with pytest.raises(StatisticsError, match=r"^unknown statistic 'krippendorff_alpha'; "):
        failcodes.agreement_table(table, ["krippendorff_alpha"], level="ordinal")
