"""Session 28 (t28rep): the report reads what ``attribute`` computed (issue 30)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.test_s27_t27left import GAPS_K2, _ranked_traces


def _ranked_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A study of _ranked_traces under [judge] top_k = 2, run to its report.

    Disagreements by hand: c1 refuted under a no-error label (FP), c2 supported under an
    error label (FN).
    """
    root = tmp_path / "st"
    code, _, err = run_cli(["init", str(root)], capsys)
    assert code == 0, err
    study = root / "failcodes.toml"
    [codebook] = re.findall(r"^codebook = .*$", study.read_text(encoding="utf-8"), flags=re.M)
    _ranked_traces(root)
    (root / "l.jsonl").write_text(
        '{"question_id": "q1", "sentence_id": "s1", "has_error": false}\n'
        '{"question_id": "q2", "sentence_id": "s2", "has_error": true}\n'
    )
    study.write_text(
        f'name = "rk"\n{codebook}\n\n[[datasets]]\nname = "rk"\n\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["rk.jsonl"]\n\n'
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["l.jsonl"]\n\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n\n'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n\n'
        '[disagreements]\nmapping = "refuted"\n\n'
        '[judge]\njudge = "offline"\nkinds = ["retrieval"]\ntop_k = 2\n\n'
        "[review]\nlabelstudio = false\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    return root


def _report_page(root: Path, capsys: pytest.CaptureFixture[str], out: str) -> str:
    code, _, err = run_cli(["report", str(root), "-o", str(root / out)], capsys)
    assert code == 0, err
    return html.unescape((root / out / "index.html").read_text(encoding="utf-8"))


def _rank_lines(page: str) -> list[str]:
    """The report's rank-gap lines ('Assumed: --top-k ...'), as shown."""
    return re.findall(r"Assumed: --top-k [^<]*", page)


def test_attribute_writes_its_first_lines_and_the_report_reads_them_not_the_ranks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report counted the rank gaps again from the whole disagreements file.

    ``attribute`` had counted them (RankGaps) in its own pass; at 10x the report's count
    re-read 2.1M passage rows. attribute now writes notes.json (AttributeNotes) and the
    report reads its line: the same line (GAPS_K2, by hand) with the disagreements' ranks
    never read (iter_claim_ranks made to fail), and with the disagreements file gone.
    """
    import failcodes.disagreementio as dio

    root = _ranked_study(tmp_path, capsys)
    before = _report_page(root, capsys, "report")
    assert _rank_lines(before) == [f"Assumed: {GAPS_K2}"]
    notes = json.loads((root / "attribution" / "rk" / "notes.json").read_text(encoding="utf-8"))
    # attribute ran with the study's top_k on disagreements/rk.jsonl (two folders up)
    assert notes == {
        "source": "../../disagreements/rk.jsonl",
        "top_k": 2,
        "strategy": "auto",
        "rank_gaps": GAPS_K2,
        "gold_mix": [],
        "mixed_evidence": [],
    }

    def no_ranks(path: object) -> None:
        raise AssertionError(f"the report read the ranks of {path}")

    monkeypatch.setattr(dio, "iter_claim_ranks", no_ranks)
    assert _rank_lines(_report_page(root, capsys, "again")) == [f"Assumed: {GAPS_K2}"]


def test_an_attribution_without_notes_or_of_another_top_k_is_counted_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An earlier failcodes' attribution (no notes.json) gives the line counted from the ranks.

    So does a notes.json of another top_k or another file (attribute run by hand), its line
    made up here: the study's top_k 2 over disagreements/rk.jsonl is counted again, GAPS_K2.
    A notes.json that is not attribute's is one line naming the file and field, exit 2 (an
    input error), no report written.
    """
    root = _ranked_study(tmp_path, capsys)
    notes_path = root / "attribution" / "rk" / "notes.json"
    notes = json.loads(notes_path.read_text(encoding="utf-8"))
    notes_path.write_text(json.dumps({**notes, "top_k": 3, "rank_gaps": "made up"}))
    assert _rank_lines(_report_page(root, capsys, "other_k")) == [f"Assumed: {GAPS_K2}"]
    notes_path.write_text(json.dumps({**notes, "source": "x.jsonl", "rank_gaps": "made up"}))
    assert _rank_lines(_report_page(root, capsys, "other_file")) == [f"Assumed: {GAPS_K2}"]
    notes_path.unlink()
    assert _rank_lines(_report_page(root, capsys, "none")) == [f"Assumed: {GAPS_K2}"]
    notes_path.write_text(json.dumps({**notes, "top_k": "two"}))
    code, _, err = run_cli(["report", str(root), "-o", str(root / "bad")], capsys)
    [line] = err.strip().splitlines()
    assert code == 2, line
    assert "notes.json" in line and "not attribute's notes" in line and "top_k" in line
    assert not (root / "bad").exists()


def test_first_units_stop_merging_runs_at_run_keys_and_find_the_same_repeats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The report's Table 8 marking (FirstUnits) merged every key into one run.

    At 10x paper scale the last merges wrote a 3M-key copy of each array beside the runs:
    the report peaked at 454 MB against 264 at 1x (1.72x). Runs now stop merging at RUN_KEYS
    (1000 here): the largest holds at most 1000 keys, and the repeats are those by hand.
    Keys: 10 chunks of 500 new keys (5,000), then a chunk of 300 of them (200 with their
    first codes, 100 with other codes) and 300 new: 300 repeats, 100 differ, the first
    differing row's unit named (k1000: the 201st row repeats key 1000 with code 9).
    """
    import numpy as np

    import failcodes.unitrepeats as unitrepeats

    monkeypatch.setattr(unitrepeats, "RUN_KEYS", 1000, raising=False)
    seen = unitrepeats.FirstUnits()
    for chunk in range(10):
        keys = np.arange(chunk * 500, chunk * 500 + 500, dtype=np.uint64)
        marked = seen.repeated(keys, keys % 3, [f"k{k}" for k in keys])
        assert not marked.any()
    old = np.arange(800, 1100, dtype=np.uint64)  # keys 800..1099: held since chunks 1-2
    codes = old % 3
    codes[200:] = 9  # keys 1000..1099 with other codes
    new = np.arange(90_000, 90_300, dtype=np.uint64)
    keys = np.concatenate([old, new])
    marked = seen.repeated(keys, np.concatenate([codes, new % 3]), [f"k{k}" for k in keys])
    assert int(marked.sum()) == 300 and bool(marked[:300].all())
    assert (seen.repeats, seen.differ, seen.first_differ) == (300, 100, "k1000")
    sizes = [len(keys) for keys, _ in seen._runs]
    assert sum(sizes) == 5_300  # each key once
    assert max(sizes) <= 1000
