"""The dry run of a traces Parquet file counts from its columns (issue 30).

A study's ``data/*.traces.parquet`` was read into Trace models and every unit built to price
``judge --dry-run --from`` it (the object path); the disagreements Parquet file's dry run
already counted from columns (da03156). Every expected value here is the object path's own,
computed in the test (``build_units(read_traces(...))`` -> ``estimate_units``), or a real
run's: the units it judged and the batch items it sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from failcodes.errors import InputError
from failcodes.judge import JudgeSettings, Limits, RetryPolicy, make_coder, run_judge
from failcodes.judge.colestimate import estimate_sizes, needs_groups, read_unit_sizes
from failcodes.judge.estimate import PricingOnlyCoder, estimate_units
from failcodes.judge.job import JudgeJob
from failcodes.judge.journal import Journal
from failcodes.judge.modes import Batch, Grouped, PerUnit
from failcodes.judge.unitjudge import UnitJudge
from failcodes.traceio import read_traces, write_traces
from failcodes.units import UnitKind, build_units
from tests.fakeserver import FakeServer
from tests.judge_helpers import write_codebook
from tests.test_dryrun_columns import CB, PRICES, _cli, _forbid_objects, _overlapping


def _parquet(tmp_path: Path) -> Path:
    """:func:`_overlapping`'s 24 traces as the tool writes a study's traces Parquet."""
    path = tmp_path / "paper.traces.parquet"
    write_traces(path, _overlapping())
    return path


@pytest.fixture(scope="module")
def server():
    with FakeServer() as fake:
        yield fake


@pytest.mark.parametrize("kind", list(UnitKind))
@pytest.mark.parametrize("top_k", [None, 3])
@pytest.mark.parametrize(
    "mode",
    [PerUnit(), Batch(), Grouped(size=3), Batch(group=Grouped(size=4), commit_every=5)],
    ids=["unit", "batch", "grouped-3", "batch-grouped-chunks"],
)
def test_traces_parquet_from_columns_equals_the_object_path(tmp_path, kind, top_k, mode) -> None:
    if kind is UnitKind.VERIFICATION and needs_groups(mode):
        return  # grouping is for retrieval units
    path = _parquet(tmp_path)
    judge = UnitJudge(PricingOnlyCoder("openai:fake-model"), CB, kind, prices=PRICES)
    journal = Journal(tmp_path / "run")
    try:
        want = estimate_units(
            judge, journal, build_units(read_traces(path), kind, top_k=top_k), mode
        )
        sizes = read_unit_sizes(path, kind, top_k=top_k, grouped=needs_groups(mode), traces=True)
        assert sizes is not None  # from the columns
        got = estimate_sizes(judge, journal, sizes, mode)
    finally:
        journal.close()
    assert got == want


@pytest.mark.parametrize("kind", ["retrieval", "reasoning"])
@pytest.mark.parametrize(
    "extra", [[], ["--batch"], ["--batch", "--group-by-claim"]], ids=["per-unit", "batch", "bg"]
)
def test_cli_dry_run_of_traces_parquet_uses_columns_and_prints_the_same_json(
    tmp_path, capsys, monkeypatch, kind, extra
) -> None:
    if kind == "reasoning" and "--group-by-claim" in extra:
        return
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = _parquet(tmp_path)
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    base = ["judge", kind, "--codebook", str(cb), "--judge", "openai:gpt-5-mini", "--dry-run"]
    base += ["--format", "json", "--no-cache", "--from", str(path), *extra]
    with monkeypatch.context() as m:  # the object path, as before: every unit built
        m.setattr("failcodes.judge.colestimate.read_unit_sizes", lambda *a, **k: None)
        code, want, want_err = _cli([*base, "-o", str(tmp_path / "objects")], capsys)
    assert code == 0, want_err
    with monkeypatch.context() as m:
        _forbid_objects(m)
        code, got, err = _cli([*base, "-o", str(tmp_path / "columns")], capsys)
    assert code == 0, err
    assert got == want and err == want_err  # the printed JSON, byte for byte
    out = json.loads(got)
    # 3 sentences x 2 claims, each claim's pool of 8 passages shown 5 at a time by 4 systems:
    # sys0 p0-4, sys1 p1-5, sys2 p0,p2-4, sys3 p0,p3-6 -> 7 distinct passages a claim, 6
    # claims -> 42 retrieval units from 6 x 4 x 5 = 120 rows; reasoning: 24 traces, 8
    # without reasoning ((s + r) % 3 == 0: s = 0, 1, 2 with r = 0, 3 / 2 / 1, for both
    # claims), each of the 16 others its own unit
    assert (out["units"], out["rows"]) == ((42, 120) if kind == "retrieval" else (16, 16))


def test_traces_parquet_dry_run_counts_the_units_and_items_a_run_sends(
    server, tmp_path, monkeypatch
):
    # the columns' count against a real batch + grouped run of the same traces through the
    # OpenAI SDK and the fake server: units judged, batch items (groups + units alone) and
    # the journal's count agree
    server.reset()
    server.control(latency=0.0, batch_delay=0.0)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dryrun")
    path = _parquet(tmp_path)
    mode = Batch(size=50, poll=0.01, group=Grouped(size=3), commit_every=10)
    fast = JudgeSettings(limits=Limits(concurrency=2), retry=RetryPolicy.no_wait())
    coder = make_coder("openai:fake-model", base_url=server.openai_base_url)
    judge = UnitJudge(coder, CB, UnitKind.RETRIEVAL, prices=PRICES, settings=fast)
    sizes = read_unit_sizes(path, UnitKind.RETRIEVAL, grouped=True, traces=True)
    assert sizes is not None
    journal = Journal(tmp_path / "est")
    try:
        est = estimate_sizes(judge, journal, sizes, mode)
    finally:
        journal.close()
    units = build_units(read_traces(path), UnitKind.RETRIEVAL)
    job = JudgeJob(
        CB, UnitKind.RETRIEVAL, tmp_path / "run", mode=mode, prices=PRICES, settings=fast
    )
    summary = run_judge(
        units, make_coder("openai:fake-model", base_url=server.openai_base_url), job
    )
    assert est.units == summary.judged == len(units) == 42  # type: ignore[attr-defined]
    assert est.calls == summary.groups + summary.judged_alone  # type: ignore[attr-defined]
    assert summary.grouped_units > 0
    raw = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert raw["journal_units"] == 42


def test_cli_dry_run_equals_the_offline_runs_annotations(tmp_path, capsys, monkeypatch) -> None:
    # from the CLI only: the dry run's units of a traces Parquet file are the units the
    # offline judge then codes (one annotation line each)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = _parquet(tmp_path)
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    args = ["judge", "reasoning", "--codebook", str(cb), "--from", str(path), "--judge"]
    with monkeypatch.context() as m:
        _forbid_objects(m)
        code, out, err = _cli([*args, "offline", "--dry-run", "--format", "json", "-o",
                               str(tmp_path / "dry")], capsys)  # fmt: skip
    assert code == 0, err
    code, _, err = _cli([*args, "offline", "-o", str(tmp_path / "run")], capsys)
    assert code == 0, err
    lines = (tmp_path / "run" / "annotations.jsonl").read_text().splitlines()
    assert json.loads(out)["units"] == len(lines) == 16  # 24 traces, 8 without reasoning


def _rewritten(path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    rows = pq.read_table(path).to_pylist()
    edit(rows)
    out = path.with_name("edited.traces.parquet")
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), out)
    return out


def _nan_score(rows: list[dict]) -> None:  # type: ignore[type-arg]
    rows[3]["passages"][1]["score"] = float("nan")


def _repeated_claim(rows: list[dict]) -> None:  # type: ignore[type-arg]
    rows.append(dict(rows[0]))


def _empty_reasoning(rows: list[dict]) -> None:  # type: ignore[type-arg]
    for row in rows:  # "" is a missing reasoning to the model: the same numbers
        if row["reasoning"] is None:
            row["reasoning"] = ""


@pytest.mark.parametrize(
    "edit", [_nan_score, _repeated_claim, _empty_reasoning], ids=["nan", "repeat", "empty"]
)
def test_rows_the_columns_cannot_vouch_for_go_to_the_object_reader(
    tmp_path, capsys, monkeypatch, edit
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    good = _parquet(tmp_path)
    path = _rewritten(good, edit)
    assert read_unit_sizes(path, UnitKind.VERIFICATION, traces=True) is None
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    args = ["judge", "reasoning", "--codebook", str(cb), "--judge", "openai:gpt-5-mini"]
    args += ["--dry-run", "--format", "json", "--no-cache", "-o", str(tmp_path / "r")]
    code, out, err = _cli([*args, "--from", str(path)], capsys)
    if edit is _empty_reasoning:  # accepted by the object reader: the good file's numbers
        want = _cli([*args, "--from", str(good)], capsys)
        assert (code, json.loads(out), err) == (0, json.loads(want[1]), want[2])
        return
    with pytest.raises(InputError) as exc:
        read_traces(path)
    assert code == 2
    assert err.strip().endswith(exc.value.one_line()) and "Traceback" not in err
