"""Outside red-team of the judge side, session 13 (t13red3): shapes the other tests do not use.

Each test states the input, what main gave at exit 0 before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.cli.main import main
from failcodes.disagreements import ClaimRecord, Disagreement
from failcodes.hashing import content_hash
from failcodes.traces import Passage
from failcodes.verdicts import Verdict
from tests.judge_helpers import write_disagreements

_CLAIM = "Metformin lowers HbA1c in adults with type 2 diabetes."
_P1 = "In a 24-week RCT of 300 adults with type 2 diabetes, metformin lowered HbA1c by 1.1%."
_P2 = "Aspirin reduces fever in children."


def _trace(system: str, retriever: str, passages: list[tuple[str, str]]) -> dict[str, object]:
    return {
        "system": system,
        "question_id": "q1",
        "sentence_id": "s1",
        "claim_id": "c1",
        "claim": _CLAIM,
        "verdict": "supported",
        "retriever": retriever,
        "verifier": "gpt",
        "reasoning": "The passage says metformin lowered HbA1c.",
        "passages": [
            {"passage_id": pid, "rank": rank, "text": text, "source": "pubmed"}
            for rank, (pid, text) in enumerate(passages, 1)
        ],
    }


def _traces(tmp_path: Path) -> Path:
    """Two retrievers, three (claim, passage) units: bm25 p1 p2, dense p1 (p1 shared)."""
    path = tmp_path / "traces.jsonl"
    rows = [
        _trace("bm25-gpt", "bm25", [("p1", _P1), ("p2", _P2)]),
        _trace("dense-gpt", "dense", [("p1", _P1), ("p3", "Metformin is cheap.")]),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _disagreements(tmp_path: Path) -> Path:
    """The same units as a disagreements file (read by the columnar dry run, issue 18)."""
    items = [
        Disagreement(
            id=content_hash([system, "refuted", "q1", "s1"]),
            kind="FN",
            level="sentence",
            system=system,
            mapping="refuted",
            error_verdicts=("refuted",),
            question_id="q1",
            sentence_id="s1",
            label_has_error=True,
            predicted_error=False,
            claims=(
                ClaimRecord(
                    claim_id="c1",
                    claim=_CLAIM,
                    verdict=Verdict.SUPPORTED,
                    maps_to_error=False,
                    passages=tuple(
                        Passage(passage_id=pid, rank=rank, text=text, source="pubmed")
                        for rank, (pid, text) in enumerate(passages, 1)
                    ),
                ),
            ),
        )
        for system, passages in (
            ("bm25-gpt", [("p1", _P1), ("p2", _P2)]),
            ("dense-gpt", [("p1", _P1), ("p3", "Metformin is cheap.")]),
        )
    ]
    return write_disagreements(tmp_path / "dis.jsonl", items)


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("source", [_traces, _disagreements])
def test_a_dry_run_into_another_judges_folder_is_refused_as_the_run_is(
    source, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The offline baseline coded the 3 units into run/. `--dry-run --judge openai:gpt-5-mini
    # -o run` then said "3 deduplicated units (3 already done, 0 cached); 0 to call in 0 calls
    # ... estimated cost $0.0000", exit 0, counting the offline judge's units as done for
    # gpt-5-mini; the run itself refuses the folder ("holds a run with judge='offline'").
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = source(tmp_path)
    run = tmp_path / "run"
    base = ["judge", "retrieval", "--from", str(src), "-o", str(run), "--no-cache"]
    code, out, _ = _cli(base, capsys)
    assert code == 0 and "retrieval units: 3 (0 already done, 3 judged now)" in out
    journal = (run / "journal.sqlite").read_bytes()
    code, out, err = _cli([*base, "--judge", "openai:gpt-5-mini", "--dry-run"], capsys)
    assert code == 2
    assert "$0.0000" not in out and "already done" not in out
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {run} holds a run with judge='offline', not 'openai:gpt-5-mini'; "
        "use another output folder (-o) for a different run"
    )
    assert (run / "journal.sqlite").read_bytes() == journal  # nothing written
    # the same judge's dry run still counts its own units as done: 3 of 3, nothing to judge
    code, out, _ = _cli([*base, "--dry-run"], capsys)
    assert code == 0 and "3 deduplicated units (3 already done, 0 cached)" in out


def test_a_dry_run_after_the_codebook_was_edited_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A codebook edited between runs (one question reworded) is another codebook: the run
    # refuses the folder, the dry run said "3 already done ... $0.0000" at exit 0.
    book = Path(__file__).parents[1] / "docs" / "examples" / "judge-example.v1.yaml"
    edited = tmp_path / "cb.yaml"
    edited.write_text(book.read_text(encoding="utf-8"), encoding="utf-8")
    src = _traces(tmp_path)
    run = tmp_path / "run"
    base = ["judge", "retrieval", "--from", str(src), "-o", str(run), "--codebook", str(edited)]
    assert _cli([*base, "--no-cache"], capsys)[0] == 0
    text = edited.read_text(encoding="utf-8")
    assert "Does the passage talk about" in text
    edited.write_text(text.replace("talk about", "discuss"), encoding="utf-8")
    code, out, err = _cli([*base, "--no-cache", "--dry-run"], capsys)
    assert code == 2 and "already done" not in out
    assert f"{run} holds a run with codebook_hash=" in err


def _shown_twice(tmp_path: Path, name: str, sources: dict[str, str]) -> Path:
    """One claim, one passage text, each system's retriever showing it under its own source."""
    path = tmp_path / name
    rows = []
    for system, src in sources.items():
        row = _trace(system, system.split("-")[0], [("x", _P1)])
        row["passages"][0]["source"] = src  # type: ignore[index]
        rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _all_high(folder: Path) -> dict[str, str]:
    lines = (folder / "retriever_all_high.csv").read_text(encoding="utf-8").splitlines()
    return {line.split(",")[0]: line.split(",")[4] for line in lines[1:]}


def test_one_passage_text_under_two_sources_is_two_units_each_coded_as_its_own_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The text of p1 comes from 'pubmed' under bm25 and from 'healthblog forum' under web. A
    # retrieval unit was (claim, passage text): judged once, shown as pubmed, so the offline
    # baseline coded it trustworthy_source for both and web's all-high rate was 1.000 (0.000
    # judged alone), exit 0 (e7e3cf7 only said so). Its id now covers the source shown: two
    # units, each coded as its own source.
    both = _shown_twice(
        tmp_path, "both.jsonl", {"bm25-gpt": "pubmed", "web-gpt": "healthblog forum"}
    )
    alone = _shown_twice(tmp_path, "alone.jsonl", {"web-gpt": "healthblog forum"})
    same = _shown_twice(tmp_path, "same.jsonl", {"bm25-gpt": "pubmed", "web-gpt": "pubmed"})
    got = {}
    for src in (both, alone, same):
        run_dir, out_dir = tmp_path / f"j-{src.stem}", tmp_path / f"a-{src.stem}"
        assert _cli(["judge", "retrieval", "--from", str(src), "-o", str(run_dir)], capsys)[0] == 0
        units = (run_dir / "annotations.jsonl").read_text(encoding="utf-8").splitlines()
        args = ["attribute", "--from", str(src), "--retrieval", str(run_dir), "-o", str(out_dir)]
        assert _cli(args, capsys)[0] == 0
        got[src.stem] = (len(units), _all_high(out_dir))
    # all-high rate = rows high on every assessed dimension / rows coded, one row per
    # retriever. bm25's row (shown as pubmed, the baseline's authoritative list: trustworthy)
    # 1/1 = 1.0; web's row (shown as 'healthblog forum': a forum cue, untrustworthy_source)
    # 0/1 = 0.0, as judged alone. Two sources: two units; one source: one unit.
    assert got["both"] == (2, {"bm25": "1.0", "web": "0.0"})
    assert got["alone"] == (1, {"web": "0.0"})
    assert got["same"] == (1, {"bm25": "1.0", "web": "1.0"})


def _text_only(run_dir: Path) -> None:
    """Make a run folder as an earlier failcodes wrote it: retrieval ids of claim and text only.

    The journal's rows re-keyed to ``unit_id(RETRIEVAL, claim, (text,))`` (the id then) and the
    ``unit_ids`` meta key (written since) taken out; annotations.jsonl likewise.
    """
    import sqlite3

    from failcodes.units import UnitKind, unit_id

    old = unit_id(UnitKind.RETRIEVAL, _CLAIM, (_P1,))
    conn = sqlite3.connect(run_dir / "journal.sqlite")
    with conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'unit_ids'").fetchone() == ("4",)
        conn.execute("DELETE FROM meta WHERE key = 'unit_ids'")
        ((new, text),) = conn.execute("SELECT unit_id, annotation FROM annotations").fetchall()
        assert new != old  # shown with a source: its id is not the text-only one
        conn.execute(
            "UPDATE annotations SET unit_id = ?, annotation = ?", (old, text.replace(new, old))
        )
    conn.close()
    lines = run_dir / "annotations.jsonl"
    lines.write_text(lines.read_text(encoding="utf-8").replace(new, old), encoding="utf-8")


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_run_folder_of_text_only_ids_is_refused_not_judged_again_or_found_uncoded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A run folder judged before ids held the source: bm25's passage (pubmed) under its text
    # id. With the new ids, `judge` (resuming it) would judge that unit again at cost beside
    # its old row, and `attribute` would find bm25's row uncoded (undetermined), exit 0.
    pubmed = _shown_twice(tmp_path, "pubmed.jsonl", {"bm25-gpt": "pubmed"})
    both = _shown_twice(tmp_path, "both.jsonl", {"bm25-gpt": "pubmed", "web-gpt": "blog"})
    run = tmp_path / "run"
    assert _cli(["judge", "retrieval", "--from", str(pubmed), "-o", str(run)], capsys)[0] == 0
    _text_only(run)
    before = _tree(run)
    line = (
        f"{run} holds 1 retrieval unit(s) of this input coded under an earlier failcodes, "
        "whose unit id held less than the prompt now shows beside each passage (its text "
        "only, or no passage id: one passage shown two ways was judged once, as the first "
        "seen): move that folder aside (to keep its codes) and judge retrieval again (in a "
        "study: failcodes run); the response cache does not answer them "
        "from that run (its keys held that version's prompt templates)"
    )
    out = tmp_path / "out"
    tasks, judged = tmp_path / "t.json", ("--judged", str(run))
    for args in (
        ["judge", "retrieval", "--from", str(both), "-o", str(run)],
        ["judge", "retrieval", "--from", str(pubmed), "-o", str(run), "--dry-run"],
        ["attribute", "--from", str(both), "--retrieval", str(run), "-o", str(out)],
        ["labelstudio", "export", str(pubmed), "-p", "retrieval", *("-o", str(tasks)), *judged],
    ):
        code, _, err = _cli(args, capsys)
        assert code == 2, args
        assert line in " ".join(err.split()) and len(err.strip().splitlines()) == 1, err
        assert _tree(run) == before and not out.exists() and not tasks.exists()
    # units that come with their ids (a units file written then) are looked up by them: the
    # folder's codes are theirs, the export goes ahead with the judge's prediction
    from failcodes.traceio import read_traces
    from failcodes.units import UnitKind, build_units, unit_id

    (unit,) = build_units(read_traces(pubmed), UnitKind.RETRIEVAL)
    then = unit.model_copy(update={"id": unit_id(UnitKind.RETRIEVAL, _CLAIM, (_P1,))})
    units = tmp_path / "units.jsonl"
    units.write_text(then.model_dump_json() + "\n", encoding="utf-8")
    args = ["labelstudio", "export", str(units), "-p", "retrieval", "-o", str(tasks), *judged]
    assert _cli(args, capsys)[0] == 0
    (task,) = json.loads(tasks.read_text(encoding="utf-8"))
    assert len(task["predictions"]) == 1


def test_a_run_folder_of_text_only_ids_without_sources_is_used_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A passage shown with no source or title keeps its text-only id: such a folder resumes
    # (nothing judged again) and stays marked as keyed by text (no unit_ids key written).
    import sqlite3

    src = _shown_twice(tmp_path, "plain.jsonl", {"bm25-gpt": ""})
    run = tmp_path / "run"
    assert _cli(["judge", "retrieval", "--from", str(src), "-o", str(run)], capsys)[0] == 0
    conn = sqlite3.connect(run / "journal.sqlite")
    with conn:
        conn.execute("DELETE FROM meta WHERE key = 'unit_ids'")
    conn.close()
    code, out, _ = _cli(["judge", "retrieval", "--from", str(src), "-o", str(run)], capsys)
    assert code == 0 and "1 already done" in " ".join(out.split()), out
    conn = sqlite3.connect(run / "journal.sqlite")
    assert conn.execute("SELECT COUNT(*) FROM annotations").fetchone() == (1,)
    assert conn.execute("SELECT value FROM meta WHERE key = 'unit_ids'").fetchone() is None
    conn.close()
    args = ["attribute", "--from", str(src), "--retrieval", str(run), "-o", str(tmp_path / "a")]
    assert _cli(args, capsys)[0] == 0
    # coded, not undetermined: 1 row high on every assessed dimension (trust not_assessable
    # without a source, so not assessed) / 1 row coded = 1.0
    assert _all_high(tmp_path / "a") == {"bm25": "1.0"}


_STUDY = """\
name = "ids"
codebook = "{codebook}"

[[datasets]]
name = "scifact-dev"

[[datasets.ingest]]
adapter = "scifact"
paths = ["bundled:scifact"]
labels = true

[[datasets.pipelines]]
system = "*"
evidence = "provided"

[judge]
judge = "offline"
kinds = ["retrieval"]

[review]
labelstudio = false
"""


def test_a_study_judged_under_text_only_ids_is_refused_by_run_and_recode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # SciFact's passages carry their abstracts' titles, so every retrieval unit's id covers
    # one now. A study judged before (text-only ids) re-run with --force would judge its 91
    # units again beside the old rows; recode after a codebook bump would find none coded
    # and code them all anew. Both refuse, one line naming the run folder, nothing written.
    import sqlite3

    from failcodes.codebook import UnitKind, bundled, dump
    from failcodes.study import StudyLayout
    from failcodes.units import build_units, disagreement_traces, unit_id

    layout = StudyLayout.of(tmp_path / "st")
    layout.root.mkdir()
    v1 = bundled()
    (layout.root / f"{v1.name}.v1.yaml").write_text(dump(v1), encoding="utf-8")
    text = _STUDY.format(codebook=f"{v1.name}.v1.yaml")
    layout.study_file.write_text(text, encoding="utf-8")
    assert _cli(["run", str(layout.root)], capsys)[0] == 0
    run = layout.judge_run("scifact-dev", "retrieval")
    from failcodes.disagreementio import read_disagreements

    traces = disagreement_traces(read_disagreements(layout.disagreements("scifact-dev")))
    old = {
        u.id: unit_id(UnitKind.RETRIEVAL, u.claim, (u.passages[0].text,))
        for u in build_units(traces, UnitKind.RETRIEVAL)
    }
    conn = sqlite3.connect(run / "journal.sqlite")
    with conn:
        conn.execute("DELETE FROM meta WHERE key = 'unit_ids'")
        rows = conn.execute("SELECT unit_id, annotation FROM annotations").fetchall()
        assert len(rows) == 91 and all(old[new] != new for new, _ in rows)
        for new, ann in rows:
            conn.execute(
                "UPDATE annotations SET unit_id = ?, annotation = ? WHERE unit_id = ?",
                (old[new], ann.replace(new, old[new]), new),
            )
    conn.close()
    before = _tree(run)
    code, _, err = _cli(["run", str(layout.root), "--force"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert (
        f"{run} holds 91 retrieval unit(s) of this input coded under an earlier failcodes, "
        "whose unit id held less than the prompt now shows beside each passage (its text "
        "only, or no passage id: one passage shown two ways was judged once, as the first "
        "seen): move that folder aside"
    ) in " ".join(err.split())
    assert _tree(run) == before
    v2 = text.replace(".v1.yaml", ".v2.yaml")
    from failcodes.saturation.changes import Change, ChangeOp, next_version

    change = Change(
        op=ChangeOp.ADD_LEAF,
        dimension="scope",
        subcode="different_context",
        leaf="animal_study",
        label="Animal study",
        definition="The passage reports an animal study while the claim is about humans.",
    )
    bumped = next_version(v1, UnitKind.RETRIEVAL, [change], "accepted: animal study")
    (layout.root / f"{v1.name}.v2.yaml").write_text(dump(bumped), encoding="utf-8")
    layout.study_file.write_text(v2, encoding="utf-8")
    code, _, err = _cli(["recode", str(layout.root)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{run} holds 91 retrieval unit(s) of this input coded under an earlier" in (
        " ".join(err.split())
    )
    assert _tree(run) == before
    assert not layout.judge_recode_run("scifact-dev", "retrieval", 2).exists()


# -- verification units (t14ver): the same, for a verifier's reasoning over the passages ----

_CITES = "PMID 31234 reports metformin lowered HbA1c by 1.1% in adults with type 2 diabetes."


def _cited(tmp_path: Path, name: str, shown: dict[str, tuple[str, str, str | None]]) -> Path:
    """One claim, text, reasoning citing 'PMID 31234' and verdict; per system (its verifier
    named as it) the passage's (passage_id, source, title)."""
    path = tmp_path / name
    rows = []
    for system, (pid, src, title) in shown.items():
        row = _trace(system, system.split("-")[0], [(pid, _P1)])
        row["verifier"], row["reasoning"] = system, _CITES
        row["passages"][0]["source"] = src  # type: ignore[index]
        if title is not None:
            row["passages"][0]["title"] = title  # type: ignore[index]
        rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _all_correct(folder: Path) -> dict[str, str]:
    lines = (folder / "verifier_all_correct.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0].split(",")[:5] == ["verifier", "rows", "coded", "all_correct", "rate"]
    return {line.split(",")[0]: line.split(",")[4] for line in lines[1:]}


def test_one_reasoning_over_a_text_under_two_sources_is_two_verification_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Both verifiers wrote the same reasoning ("PMID 31234 reports ...") and verdict over the
    # same passage text: bm25's passage is abstract 31234, shown as source pubmed and title
    # 'PMID 31234 trial'; web's is w1, shown as 'healthblog forum' with no title. A
    # verification unit's id was the passage texts only: one unit, judged as bm25's, and the
    # offline baseline's grounding read the passage id (not in the prompt), so web's all-
    # correct rate was 1.000 (0.000 judged alone), exit 0; with no title, 1 unit, both 1.000
    # from the id alone. Now two units, each coded as the prompt shows it; the prompt shows
    # the passage id (t14pid), so it counts for both the unit's id and its code.
    bm25 = ("31234", "pubmed", "PMID 31234 trial")
    web = ("w1", "healthblog forum", None)
    inputs = {
        "both": {"bm25-gpt": bm25, "web-gpt": web},
        "alone": {"web-gpt": web},
        # the passage id alone names 31234, and the prompt shows it: bm25's reasoning is
        # grounded in what the judge sees, web's (w1) not
        "id_only": {"bm25-gpt": ("31234", "pubmed", None), "web-gpt": web},
        # two passage ids, one source and title: two units (each prompt shows its own id),
        # both grounded in the title
        "same": {"bm25-gpt": bm25, "web-gpt": ("w1", "pubmed", "PMID 31234 trial")},
    }
    got = {}
    for name, shown in inputs.items():
        src = _cited(tmp_path, f"{name}.jsonl", shown)
        run_dir, out_dir = tmp_path / f"j-{name}", tmp_path / f"a-{name}"
        assert _cli(["judge", "reasoning", "--from", str(src), "-o", str(run_dir)], capsys)[0] == 0
        units = (run_dir / "annotations.jsonl").read_text(encoding="utf-8").splitlines()
        args = ["attribute", "--from", str(src), "--reasoning", str(run_dir), "-o", str(out_dir)]
        assert _cli(args, capsys)[0] == 0
        got[name] = (len(units), _all_correct(out_dir))
    # all-correct rate = rows high on every assessed dimension / rows coded, one row per
    # verifier. Every dimension but grounding is high for this reasoning; grounding is high
    # when each number of the reasoning (31234, 1.1) is in the claim, the passage text, or
    # the passage id, source or title shown. bm25 (title 'PMID 31234 trial'): 1/1 = 1.0;
    # web (31234 shown nowhere): 0/1 = 0.0, as judged alone. id_only: bm25 shows id 31234
    # (1/1 = 1.0), web w1 (0/1 = 0.0).
    assert got["both"] == (2, {"bm25-gpt": "1.0", "web-gpt": "0.0"})
    assert got["alone"] == (1, {"web-gpt": "0.0"})
    assert got["id_only"] == (2, {"bm25-gpt": "1.0", "web-gpt": "0.0"})
    assert got["same"] == (2, {"bm25-gpt": "1.0", "web-gpt": "1.0"})


def _verification_text_only(run_dir: Path, meta: str | None) -> None:
    """Make a verification run folder as an earlier failcodes wrote it: ids of texts only.

    The journal's one row re-keyed to ``unit_id(VERIFICATION, claim, texts, reasoning,
    verdict)`` (the id then) and ``unit_ids`` set to ``meta`` (``2``: written by the version
    whose retrieval ids held the source; None: before the key); annotations.jsonl likewise.
    """
    import sqlite3

    from failcodes.units import UnitKind, unit_id

    old = unit_id(UnitKind.VERIFICATION, _CLAIM, (_P1,), _CITES, Verdict.SUPPORTED)
    conn = sqlite3.connect(run_dir / "journal.sqlite")
    with conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'unit_ids'").fetchone() == ("4",)
        conn.execute("DELETE FROM meta WHERE key = 'unit_ids'")
        if meta is not None:
            conn.execute("INSERT INTO meta (key, value) VALUES ('unit_ids', ?)", (meta,))
        ((new, text),) = conn.execute("SELECT unit_id, annotation FROM annotations").fetchall()
        conn.execute(
            "UPDATE annotations SET unit_id = ?, annotation = ?", (old, text.replace(new, old))
        )
    conn.close()
    lines = run_dir / "annotations.jsonl"
    lines.write_text(lines.read_text(encoding="utf-8").replace(new, old), encoding="utf-8")


@pytest.mark.parametrize("meta", ["2", None])
def test_a_verification_folder_of_text_only_ids_is_refused_not_judged_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], meta: str | None
) -> None:
    # A reasoning run judged before verification ids held the source (unit_ids 2, or no key):
    # bm25's unit under its texts-only id. With the new ids, `judge` would judge it again
    # beside its old row and `attribute` find bm25's row uncoded, exit 0. Refused in one line.
    bm25 = _cited(tmp_path, "bm25.jsonl", {"bm25-gpt": ("31234", "pubmed", None)})
    web = ("w1", "healthblog forum", None)
    both = _cited(tmp_path, "both.jsonl", {"bm25-gpt": ("31234", "pubmed", None), "web-gpt": web})
    run = tmp_path / "run"
    assert _cli(["judge", "reasoning", "--from", str(bm25), "-o", str(run)], capsys)[0] == 0
    _verification_text_only(run, meta)
    before = _tree(run)
    line = (
        f"{run} holds 1 verification unit(s) of this input coded under an earlier failcodes, "
        "whose unit id held less than the prompt now shows beside each passage (its text "
        "only, or no passage id: one passage shown two ways was judged once, as the first "
        "seen): move that folder aside (to keep its codes) and judge verification again (in a "
        "study: failcodes run); the response cache does not answer them "
        "from that run (its keys held that version's prompt templates)"
    )
    out, tasks = tmp_path / "out", tmp_path / "t.json"
    for args in (
        ["judge", "reasoning", "--from", str(both), "-o", str(run)],
        ["judge", "reasoning", "--from", str(bm25), "-o", str(run), "--dry-run"],
        ["attribute", "--from", str(both), "--reasoning", str(run), "-o", str(out)],
        ["labelstudio", "export", str(bm25), "-p", "verification", "-o", str(tasks),
         "--judged", str(run)],
    ):  # fmt: skip
        code, _, err = _cli(args, capsys)
        assert code == 2, args
        assert line in " ".join(err.split()) and len(err.strip().splitlines()) == 1, err
        assert _tree(run) == before and not out.exists() and not tasks.exists()


def test_a_verification_folder_of_text_only_ids_without_sources_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Passages shown with no source or title kept the texts-only id until the prompt showed
    # the passage id (t14pid): now its id holds 31234, the folder's row is under the texts-only
    # id, and resuming would judge it again beside that row; refused in one line, untouched.
    src = _cited(tmp_path, "plain.jsonl", {"bm25-gpt": ("31234", "", None)})
    run = tmp_path / "run"
    assert _cli(["judge", "reasoning", "--from", str(src), "-o", str(run)], capsys)[0] == 0
    _verification_text_only(run, "2")
    before = _tree(run)
    code, _, err = _cli(["judge", "reasoning", "--from", str(src), "-o", str(run)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{run} holds 1 verification unit(s) of this input" in " ".join(err.split())
    assert _tree(run) == before
