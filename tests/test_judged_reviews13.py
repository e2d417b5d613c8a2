"""Reviews made with the judge's codes pre-selected: kept on the review and said in captions.

32f7169 said on `labelstudio pull`/`import`'s first line how many annotations were made with
the judge's prediction shown (`push --judged`), but the review file did not keep it, so the
report's corrected shares, which may lean toward the judge then, said nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.annotationio import iter_annotations
from failcodes.report.rundir import load_run_dir
from failcodes.units import UnitKind
from tests.test_outside_red12b import _ls_ann, _ls_task
from tests.test_review_plan import half_reviewed_study, human


def test_the_pulled_review_keeps_that_the_judges_codes_were_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # task 101's annotation was made with the prediction shown, task 102's without ({}): the
    # written review file marks the first only, and a line without the mark is unchanged
    from tests.cli_helpers import run_cli
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook

    shown = {"id": 1, "result": _ls_ann(3, "exact_entity")["result"], "model_version": "judge"}
    export = tmp_path / "export.json"
    tasks = [
        _ls_task(1, [{**_ls_ann(3, "irrelevant"), "lead_time": 3.0, "prediction": shown}]),
        _ls_task(2, [{**_ls_ann(3, "exact_entity"), "lead_time": 2.0, "prediction": {}}]),
    ]
    export.write_text(json.dumps(tasks))
    cb = write_codebook(tmp_path / "cb.yaml", toy_codebook())
    out = tmp_path / "h.jsonl"
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "-c", str(cb), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    got = {a.codes["entity"]: a.judge_shown for a in iter_annotations(out)}
    assert got == {"irrelevant": True, "exact_entity": False}
    lines = out.read_text().splitlines()
    assert sum('"judge_shown":true' in line for line in lines) == 1
    assert not any('"judge_shown":false' in line for line in lines)


def test_the_corrected_caption_counts_reviews_made_with_the_judges_codes(tmp_path: Path) -> None:
    # 10 drawn units of 20 (retriever A), all reviewed; 3 of the reviews were made with the
    # judge's codes pre-selected: the corrected table's caption says 3 of 10
    entity = {f"a{i}": ("exact_entity" if i % 2 == 0 else "partial_entity") for i in range(20)}
    sample = [f"a{i}" for i in range(10)]
    reviews = [human(u, entity[u]) for u in sample]
    reviews = [r.model_copy(update={"judge_shown": i < 3}) for i, r in enumerate(reviews)]
    half_reviewed_study(tmp_path, entity, sample, reviews)
    [(caption, _)] = load_run_dir(tmp_path).corrected[UnitKind.RETRIEVAL]
    assert (
        "; 3 of 10 reviews made with the judge's codes pre-selected (Label Studio predictions, "
        "push --judged): a reviewer who keeps them agrees with the judge more than a blind one "
        "may, so the human and corrected shares may lean toward the judge"
    ) in caption
    # none shown: no such words
    plain = tmp_path / "plain"
    half_reviewed_study(plain, entity, sample, [human(u, entity[u]) for u in sample])
    [(caption, _)] = load_run_dir(plain).corrected[UnitKind.RETRIEVAL]
    assert "pre-selected" not in caption
