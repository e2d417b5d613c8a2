import json
import sqlite3

import pytest

from failcodes.annotations import CoderKind, Status
from failcodes.judge import JudgeJob, JudgeSettings, load_prices, run_judge
from failcodes.judge.journal import Journal
from failcodes.judge.providers.offline import OfflineCoder
from failcodes.judge.run import read_annotations
from failcodes.units import UnitKind, retrieval_units, verification_units
from tests.judge_helpers import make_codebook, make_traces

CB = make_codebook()


def test_offline_run_journals_every_unit_once_and_rerun_does_nothing(tmp_path) -> None:
    units = retrieval_units(make_traces(3))  # 3 claims x 3 distinct passages = 9 units
    s1 = run_judge(units, OfflineCoder(), JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "run"))
    assert (s1.units, s1.judged, s1.already_done, s1.calls) == (9, 9, 0, 0)
    assert s1.coder_kind is CoderKind.HEURISTIC
    s2 = run_judge(units, OfflineCoder(), JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "run"))
    assert (s2.judged, s2.already_done) == (0, 9)
    anns = read_annotations(tmp_path / "run")
    assert sorted(a.unit_id for a in anns) == sorted(u.id for u in units)
    assert all(a.coder_kind is CoderKind.HEURISTIC and a.coder == "offline" for a in anns)
    assert all(a.status is Status.SCORED for a in anns)
    lines = (tmp_path / "run" / "annotations.jsonl").read_text().splitlines()
    assert len(lines) == 9
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["coder_kind"] == "heuristic"
    # forward-only migrations recorded by name
    con = sqlite3.connect(tmp_path / "run" / "journal.sqlite")
    names = [r[0] for r in con.execute("SELECT name FROM _migrations")]
    # the journal migrations, batch ledger included (forward-only, applied once each)
    assert names == ["001_initial", "002_blobs", "batch_001_ledger", "batch_002_groups"]
    assert con.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 2


def test_resume_refuses_other_codebook(tmp_path) -> None:
    units = verification_units(make_traces(1))
    run_judge(units, OfflineCoder(), JudgeJob(CB, UnitKind.VERIFICATION, tmp_path))
    from failcodes.errors import ConfigError

    with pytest.raises(ConfigError, match="codebook_hash"):
        run_judge(
            units, OfflineCoder(), JudgeJob(make_codebook(2), UnitKind.VERIFICATION, tmp_path)
        )


def test_journal_rejects_a_second_record_of_a_unit(tmp_path) -> None:
    units = retrieval_units(make_traces(1))
    run_judge(units[:1], OfflineCoder(), JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path))
    ann = read_annotations(tmp_path)[0]
    journal = Journal(tmp_path)
    from failcodes.judge.providers.base import TokenUsage

    with pytest.raises(sqlite3.IntegrityError):
        journal.record(
            ann,
            tokens=TokenUsage(),
            raw_request=None,
            raw_response=None,
            cache_hit=False,
            attempts=1,
        )
    journal.close()


def test_a_raw_response_is_stored_compressed_and_read_back_whole(tmp_path) -> None:
    # issue 30: the raw response (read by Journal.raw alone) is stored zlib-compressed; a
    # journal written before (the response as JSON text) reads back the same
    import zlib

    from failcodes.judge.providers.base import TokenUsage

    units = retrieval_units(make_traces(1))
    run_judge(units[:1], OfflineCoder(), JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "a"))
    ann = read_annotations(tmp_path / "a")[0]
    answer = json.dumps({"entity_match": {"quote": "Metformin lowers HbA1c " * 20}})
    response = {"id": "r1", "choices": [{"message": {"content": answer, "refusal": None}}]}
    journal = Journal(tmp_path / "b")
    journal.record(
        ann,
        tokens=TokenUsage(),
        raw_request={"messages": [{"role": "user", "content": "x"}]},
        raw_response=response,
        cache_hit=False,
        attempts=1,
    )
    assert journal.raw(ann.unit_id) == ({"messages": [{"role": "user", "content": "x"}]}, response)
    journal.close()
    con = sqlite3.connect(tmp_path / "b" / "journal.sqlite")
    (stored,) = con.execute("SELECT raw_response FROM annotations").fetchone()
    text = json.dumps(response, ensure_ascii=False)
    assert isinstance(stored, bytes) and zlib.decompress(stored) == text.encode()
    assert len(stored) < len(text) / 3  # the quote repeated 20 times compresses well
    con.execute("UPDATE annotations SET raw_response = ?", (text,))  # as written before
    con.commit()
    con.close()
    journal = Journal(tmp_path / "b")
    assert journal.raw(ann.unit_id)[1] == response
    journal.close()


def test_a_new_journal_has_8k_pages_and_an_old_one_keeps_its_own(tmp_path) -> None:
    # issue 30: an offline retrieval row (~2.3 KB) took a 4,096-byte page of its own
    units = retrieval_units(make_traces(2))  # 2 claims x 3 passages = 6 units
    run_judge(units[:3], OfflineCoder(), JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "new"))
    con = sqlite3.connect(tmp_path / "new" / "journal.sqlite")
    assert con.execute("PRAGMA page_size").fetchone()[0] == 8192
    con.close()
    # a journal made with SQLite's default pages (as before) resumes and keeps them
    old = tmp_path / "old"
    old.mkdir()
    con = sqlite3.connect(old / "journal.sqlite")
    con.execute("PRAGMA page_size=4096")
    con.execute("PRAGMA journal_mode=WAL")
    con.close()
    run_judge(units[:3], OfflineCoder(), JudgeJob(CB, UnitKind.RETRIEVAL, old))
    s = run_judge(units, OfflineCoder(), JudgeJob(CB, UnitKind.RETRIEVAL, old))
    assert (s.judged, s.already_done) == (3, 3)
    con = sqlite3.connect(old / "journal.sqlite")
    assert con.execute("PRAGMA page_size").fetchone()[0] == 4096
    con.close()
    assert len(read_annotations(old)) == 6


def test_offline_dry_run_costs_nothing(tmp_path) -> None:
    from failcodes.judge import estimate_run

    units = retrieval_units(make_traces(2))
    est = estimate_run(units, OfflineCoder(), JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path))
    assert (est.units, est.to_call, est.cost_usd) == (6, 0, 0.0)
    assert "heuristic baseline" in est.note
    assert load_prices().lookup("offline") is not None
    assert JudgeSettings().budget_usd is None
