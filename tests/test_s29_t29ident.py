"""Session 29 (t29ident): what a judge run's identity holds, so a resume never mixes two."""

from __future__ import annotations

import json
import shutil
import sqlite3
from importlib import resources
from pathlib import Path
from types import SimpleNamespace

import pytest

import failcodes.judge.prompts as prompts
import failcodes.judge.unitjudge as unitjudge
from tests.cli_helpers import run_cli
from tests.fakeserver import FakeServer
from tests.judge_helpers import fresh_fake, make_traces, write_traces


@pytest.fixture
def fake(fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    return fresh_fake(fake_server, monkeypatch, "sk-test-t29ident")


def _judge(
    fake: FakeServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    run: Path,
    claims: int,
    *extra: str,
    base_url: str | None = None,
) -> tuple[int, str, str]:
    src = write_traces(tmp_path / f"t{claims}.jsonl", make_traces(claims))
    return run_cli(
        [
            *("judge", "retrieval", "--from", str(src), "--judge", "openai:fake-model"),
            *("--base-url", base_url or fake.openai_base_url, "-o", str(run), *extra),
        ],
        capsys,
    )


def test_a_run_resumed_after_its_prompt_changed_is_refused(
    fake: FakeServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The run identity compared kind, judge, model, codebook hash, unit ids and temperature,
    # not what the judge is shown: after a failcodes upgrade whose system prompt differs
    # (same codebook), a resumed run judged its new units under the new prompt into the same
    # journal (main: exit 0, 3 more calls), one run's codes answering two instruments.
    run = tmp_path / "run"
    assert _judge(fake, tmp_path, capsys, run, 1, "--no-cache")[0] == 0
    calls = fake.stats()["calls"]["openai"]
    assert calls == 3  # by hand: claim 0 against pm1, pm2 (sysA) and w1 (sysB)
    shown = unitjudge.render_system
    monkeypatch.setattr(
        unitjudge, "render_system", lambda cb, kind: shown(cb, kind) + "\nBe strict."
    )
    code, _, err = _judge(fake, tmp_path, capsys, run, 2, "--no-cache")
    assert code == 2  # main: 0, claim 1's 3 units judged under the other prompt
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"failcodes: error: {run} holds a run whose judge was shown another ")
    assert "prompt (prompt_hash " in line
    assert line.endswith(
        "resuming would mix answers to two prompts in one run; judge again into another "
        "output folder (-o), or finish this run with the failcodes version that began it"
    )
    assert fake.stats()["calls"]["openai"] == calls  # nothing called
    # the way through: another folder; the response cache, keyed on the rendered system
    # prompt, answers none of the 6 units from the first run's 3 (all 6 are calls)
    cache = ["--cache", str(tmp_path / "cache.sqlite")]
    monkeypatch.setattr(unitjudge, "render_system", shown)
    assert _judge(fake, tmp_path, capsys, tmp_path / "a", 2, *cache)[0] == 0
    assert fake.stats()["calls"]["openai"] == calls + 6
    monkeypatch.setattr(
        unitjudge, "render_system", lambda cb, kind: shown(cb, kind) + "\nBe strict."
    )
    assert _judge(fake, tmp_path, capsys, tmp_path / "b", 2, *cache)[0] == 0
    assert fake.stats()["calls"]["openai"] == calls + 12  # missed: 6 more, not 0


def test_a_changed_user_template_refuses_its_kind_only(
    fake: FakeServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An upgrade editing retrieval.j2 (the user message around each passage) changes what a
    # retrieval judge is shown: its resume is refused (main: exit 0, mixed). An edit to
    # verification.j2 shows a retrieval judge nothing new: its resume goes on (3 calls).
    run = tmp_path / "run"
    assert _judge(fake, tmp_path, capsys, run, 1, "--no-cache")[0] == 0
    copy = tmp_path / "prompts"
    shutil.copytree(Path(str(resources.files("failcodes.judge.prompts"))), copy)

    def edited(name: str) -> None:
        (copy / name).write_text((copy / name).read_text("utf-8") + "\n", "utf-8")
        monkeypatch.setattr(prompts, "resources", SimpleNamespace(files=lambda _: copy))

    edited("verification.j2")
    assert _judge(fake, tmp_path, capsys, run, 2, "--no-cache")[0] == 0
    assert fake.stats()["calls"]["openai"] == 6  # claim 1's 3 units judged, resumed
    edited("retrieval.j2")
    code, _, err = _judge(fake, tmp_path, capsys, run, 3, "--no-cache")
    assert code == 2  # main: 0
    assert "shown another prompt (prompt_hash" in err.strip().splitlines()[-1]
    assert fake.stats()["calls"]["openai"] == 6


def test_a_run_resumed_at_another_base_url_says_so_first(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A resume at another --base-url was taken without a word: one run's units judged at two
    # servers that serve a model of one name. A proxy or host name moving is legitimate, so
    # the run goes on, and says it on its first line, this invocation and every later one.
    run = tmp_path / "run"
    first = fake.openai_base_url  # http://127.0.0.1:PORT/v1
    other = first.replace("127.0.0.1", "localhost")
    assert _judge(fake, tmp_path, capsys, run, 1, "--no-cache")[0] == 0
    said = (
        f"note: this run's journal holds units judged at {first} (earlier invocations), and "
        f"this one called {other}: one run of openai:fake-model at two endpoints; if they "
        "serve different models or versions under that name, judge again into another "
        "output folder (-o)"
    )
    code, out, _ = _judge(fake, tmp_path, capsys, run, 2, "--no-cache", base_url=other)
    assert code == 0
    assert out.splitlines()[0] == said  # main: the summary's "judge: ..." line, no note
    assert fake.stats()["calls"]["openai"] == 6  # 3 + claim 1's 3 units
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    assert summary["other_endpoints"] == [first]
    # a third invocation at the new URL: the journal still holds units judged at the first
    code, out, _ = _judge(fake, tmp_path, capsys, run, 2, "--no-cache", base_url=other)
    assert code == 0 and out.splitlines()[0] == said
    with sqlite3.connect(run / "journal.sqlite") as db:
        (urls,) = db.execute("SELECT value FROM meta WHERE key = 'base_urls'").fetchone()
    assert urls.split("\n") == [first, other]
    # a finished run rerun at a third URL judges nothing there: no endpoint added
    third = first.replace("/v1", "/v1/")
    code, out, _ = _judge(fake, tmp_path, capsys, run, 2, "--no-cache", base_url=third)
    assert code == 0 and "0 judged now" in out
    assert out.splitlines()[0].startswith(
        f"note: this run's journal holds units judged at {first} and {other} (earlier "
        f"invocations), and this one called {third}: "
    )
    with sqlite3.connect(run / "journal.sqlite") as db:
        (urls,) = db.execute("SELECT value FROM meta WHERE key = 'base_urls'").fetchone()
    assert urls.split("\n") == [first, other]  # before the fix: [first, other, third]
    # back at the first URL: said, the other way round
    code, out, _ = _judge(fake, tmp_path, capsys, run, 2, "--no-cache")
    assert code == 0 and out.splitlines()[0].startswith(
        f"note: this run's journal holds units judged at {other} (earlier"
    )


def test_a_study_rerun_after_the_prompt_changed_names_the_upgrade_not_the_study_file(
    fake: FakeServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The study's message for a refused run said the study file's [judge] had changed
    # ("... and the study file's [judge] now gives ...: move the earlier judge's run
    # folders"), where the study file had not: failcodes renders another prompt.
    import failcodes

    study = failcodes.init_study(tmp_path / "st").root  # the bundled RAGChecker example
    toml = study / "failcodes.toml"
    text = toml.read_text(encoding="utf-8").replace(
        'judge = "offline"',
        f'judge = "openai:fake-model"\nbase_url = "{fake.openai_base_url}"\nno_cache = true',
    )
    toml.write_text(text.replace('kinds = ["retrieval", "reasoning"]', 'kinds = ["retrieval"]'))
    assert run_cli(["run", str(study)], capsys)[0] == 0
    calls = fake.stats()["calls"]["openai"]
    assert calls > 0
    run = study / "judge" / "ragchecker-example" / "retrieval"
    (run / "annotations.jsonl").unlink()  # the judge step runs again
    shown = unitjudge.render_system
    monkeypatch.setattr(
        unitjudge, "render_system", lambda cb, kind: shown(cb, kind) + "\nBe strict."
    )
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"failcodes: error: {run} holds a run whose judge was shown another")
    assert (
        "or finish this run with the failcodes version that began it; in a study: move that "
        "run folder out of the study's judge/ folder (to keep its codes) or delete it, then "
        "run again (step 'judge retrieval ragchecker-example' failed"
    ) in line
    assert "study file's [judge]" not in line  # main: it said the study file changed
    assert fake.stats()["calls"]["openai"] == calls


def test_a_grouped_run_resumed_after_its_group_template_changed_is_refused(
    fake: FakeServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # --group-by-claim shows the judge retrieval_group.j2 (the claim once, keyed passages):
    # an upgrade editing it mixed two group prompts in one grouped run (main: exit 0). A
    # per-unit resume shows no group template: it goes on.
    run = tmp_path / "run"
    grouped = ("--no-cache", "--group-by-claim")
    assert _judge(fake, tmp_path, capsys, run, 1, *grouped)[0] == 0
    calls = fake.stats()["calls"]["openai"]
    assert calls == 1  # by hand: claim 0's 3 passages in one group call
    copy = tmp_path / "prompts"
    shutil.copytree(Path(str(resources.files("failcodes.judge.prompts"))), copy)
    name = prompts.GROUP_TEMPLATE
    (copy / name).write_text((copy / name).read_text("utf-8") + "\n", "utf-8")
    monkeypatch.setattr(prompts, "resources", SimpleNamespace(files=lambda _: copy))
    code, _, err = _judge(fake, tmp_path, capsys, run, 2, *grouped)
    assert code == 2  # main: 0, claim 1's group judged under the other template
    assert "shown another prompt (group_prompt_hash" in err.strip().splitlines()[-1]
    assert fake.stats()["calls"]["openai"] == calls  # nothing called
    assert _judge(fake, tmp_path, capsys, run, 2, "--no-cache")[0] == 0  # per unit
    assert fake.stats()["calls"]["openai"] == calls + 3
