"""Session 26, helper t26panel (issue 30): a two-judge panel at about one judge's time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from failcodes.codebook import bundled
from failcodes.judge import JudgeJob, make_coder, run_judge
from failcodes.judge.journal import Journal
from failcodes.units import UnitKind, retrieval_units
from tests.judge_helpers import fresh_fake, make_traces

REPO = Path(__file__).resolve().parent.parent


def test_a_panels_agreement_has_its_wald_interval_without_importing_scipy_stats() -> None:
    # A panel's consensus step (panel.json: 24 agreements over 512 units) took 3.4 s wall,
    # 1.6 CPU-s, of which scipy.stats' import (for one normal quantile) was ~90%; it is now
    # 0.3 CPU-s. Fleiss' kappa of 2 raters x 12 units over 3 categories; the Wald interval's
    # lower end is value - z * se with z = 1.959964, the normal's 0.975 quantile (published
    # tables); the upper end is clipped at 1.
    code = (
        "import sys, json, numpy as np\n"
        "from failcodes.stats.agreement import agreements\n"
        "m = np.array([[0,0],[1,1],[0,1],[1,1],[0,0],[2,2],[1,0],[2,2],[0,0],[1,1],[2,1],"
        "[0,0]], dtype=float)\n"
        "(r,) = agreements(m, ('fleiss',), categories=[0, 1, 2])\n"
        "print(json.dumps([r.value, r.se, r.ci_low, r.ci_high, r.ci_method,"
        " 'scipy.stats' in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    value, se, low, high, method, imported = json.loads(out.stdout)
    # by hand: p_o = 9/12 = 0.75; margins 0:9/24, 1:10/24, 2:5/24 -> p_e = (81+100+25)/576
    # = 0.357639; Fleiss' kappa = (0.75 - 0.357639) / (1 - 0.357639) = 0.610811
    assert value == pytest.approx(0.610811, abs=1e-6)
    assert method == "wald"
    assert (value - low) / se == pytest.approx(1.959964, abs=1e-6)
    assert high == 1.0
    assert imported is False


@pytest.fixture()
def fake(fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    return fresh_fake(fake_server, monkeypatch, "sk-test-t26panel")


def test_an_openai_reply_is_journaled_as_the_server_sent_it(fake: Any, tmp_path: Path) -> None:
    # The reply was built into the SDK's ChatCompletion and dumped back (~15% of the client's
    # CPU in a judge run): the journal kept the dump, the server's keys plus the SDK's
    # optional fields as null (system_fingerprint, service_tier, a message's tool_calls,
    # audio, annotations, function_call). It keeps the body as the server sent it, as a
    # batch result already was (the fake server's body: tests/fakeserver/answers.py).
    units = retrieval_units(make_traces(1))[:2]
    coder = make_coder("openai:fake-model", base_url=fake.openai_base_url)
    run_judge(units, coder, JudgeJob(bundled(), UnitKind.RETRIEVAL, tmp_path / "run"))
    journal = Journal(tmp_path / "run")
    try:
        raws = [journal.raw(u.id)[1] for u in units]
    finally:
        journal.close()
    for raw in raws:
        assert raw is not None
        assert set(raw) == {"id", "object", "created", "model", "choices", "usage"}
        (choice,) = raw["choices"]
        assert set(choice) == {"index", "message", "finish_reason", "logprobs"}
        assert set(choice["message"]) == {"role", "content", "refusal"}
        assert raw["usage"]["prompt_tokens_details"] == {
            "cached_tokens": raw["usage"]["prompt_tokens_details"]["cached_tokens"]
        }
    assert all(r["id"].startswith("chatcmpl-fake-") for r in raws)  # the fake server's ids


def _judged(fake: Any, units: list[Any], run: Path, cache: Path, mode: Any) -> tuple[int, int, int]:
    """(the dry run's calls, the run's calls, calls the fake server saw) of one run."""
    from failcodes.judge import estimate_run

    job = JudgeJob(bundled(), UnitKind.RETRIEVAL, run, mode=mode, cache_path=cache)
    coder = make_coder("openai:fake-model", base_url=fake.openai_base_url)
    dry = estimate_run(units, coder, job).calls
    before = fake.stats()["calls"].get("openai", 0)
    summary = run_judge(units, coder, job)
    return dry, summary.calls, fake.stats()["calls"].get("openai", 0) - before


def test_a_grouped_run_sends_no_unit_the_cache_answers_as_its_dry_run_says(
    fake: Any, tmp_path: Path
) -> None:
    # 3 claims x 3 passages (tests/judge_helpers.make_traces): 9 units, 3 groups of 3. Judged
    # one a call first (9 calls, cached), then grouped into a new folder with the same
    # cache: the dry run said 0 calls, the run sent all 9 units again in 3 grouped calls.
    from failcodes.judge.modes import Grouped, PerUnit

    units = retrieval_units(make_traces(3))
    cache = tmp_path / "cache.sqlite"
    assert _judged(fake, units, tmp_path / "one", cache, PerUnit()) == (9, 9, 9)
    assert _judged(fake, units, tmp_path / "grouped", cache, Grouped()) == (0, 0, 0)


def test_a_grouped_dry_run_counts_a_group_the_cache_answers_whole(
    fake: Any, tmp_path: Path
) -> None:
    # Grouped twice with one cache: the second run finds each group's answer in the cache
    # and calls nothing, where its dry run said 3 calls (one a claim).
    from failcodes.judge.modes import Grouped

    units = retrieval_units(make_traces(3))
    cache = tmp_path / "cache.sqlite"
    assert _judged(fake, units, tmp_path / "first", cache, Grouped()) == (3, 3, 3)
    assert _judged(fake, units, tmp_path / "again", cache, Grouped()) == (0, 0, 0)
