import json

import pytest

from tests.cli_helpers import run_cli
from tests.judge_helpers import make_traces, write_codebook, write_traces


@pytest.fixture
def inputs(workdir):
    traces = write_traces(workdir / "traces.jsonl", make_traces(2))
    cb = write_codebook(workdir / "cb.yaml")
    return traces, cb


def test_judge_retrieval_offline_end_to_end(inputs, workdir, capsys) -> None:
    traces, cb = inputs
    code, out, err = run_cli(
        ["judge", "retrieval", "--from", str(traces), "--codebook", str(cb), "-o", "run"], capsys
    )
    assert code == 0, err
    assert "heuristic baseline" in out  # summary line names it
    assert "heuristic baseline" in err  # and the closing note
    assert "units: 6 (0 already done, 6 judged now)" in out
    lines = (workdir / "run" / "annotations.jsonl").read_text().splitlines()
    assert len(lines) == 6
    assert {json.loads(x)["coder_kind"] for x in lines} == {"heuristic"}
    # a rerun judges nothing
    code, out, _ = run_cli(
        ["judge", "retrieval", "--from", str(traces), "--codebook", str(cb), "-o", "run"], capsys
    )
    assert code == 0 and "units: 6 (6 already done, 0 judged now)" in out


def test_judge_reasoning_json_format(inputs, workdir, capsys) -> None:
    traces, cb = inputs
    code, out, _ = run_cli(
        [
            "judge",
            "reasoning",
            "--from",
            str(traces),
            "--codebook",
            str(cb),
            "-o",
            "r",
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    assert (
        data["kind"] == "verification" and data["judged"] == 4 and data["coder_kind"] == "heuristic"
    )


@pytest.mark.parametrize(
    ("judge", "var"),
    [("openai:gpt-5-mini", "OPENAI_API_KEY"), ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY")],
)
def test_no_key_says_which_variable_or_offline(inputs, capsys, monkeypatch, judge, var) -> None:
    monkeypatch.delenv(var, raising=False)
    traces, cb = inputs
    code, _out, err = run_cli(
        ["judge", "retrieval", "--from", str(traces), "--codebook", str(cb), "--judge", judge],
        capsys,
    )
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert var in lines[0] and "--judge offline" in lines[0]


def test_unknown_judge_and_bad_input_exit_2(inputs, workdir, capsys) -> None:
    traces, cb = inputs
    code, _, err = run_cli(
        ["judge", "retrieval", "--from", str(traces), "--codebook", str(cb), "--judge", "gpt"],
        capsys,
    )
    assert code == 2 and "unknown judge 'gpt'" in err
    bad = workdir / "bad.jsonl"
    bad.write_text('{"system": "s"}\n')
    code, _, err = run_cli(
        ["judge", "retrieval", "--from", str(bad), "--codebook", str(cb)], capsys
    )
    assert code == 2 and "bad.jsonl:1" in err


def test_budget_stop_and_dry_run_through_the_cli(inputs, workdir, capsys, monkeypatch) -> None:
    from tests.fakeserver import FakeServer

    traces, cb = inputs
    prices = workdir / "prices.yaml"
    prices.write_text("openai:fake-model: {input: 1000.0, cached_input: 100.0, output: 2000.0}\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cli")
    with FakeServer() as fake:
        base = [
            "judge",
            "retrieval",
            "--from",
            str(traces),
            "--codebook",
            str(cb),
            "--judge",
            "openai:fake-model",
            "--base-url",
            fake.openai_base_url,
            "--prices",
            str(prices),
            "--concurrency",
            "1",
            "-o",
            "run",
        ]
        code, out, _ = run_cli([*base, "--dry-run"], capsys)
        assert code == 0 and "6 to call" in out and "estimated cost $" in out
        assert fake.stats()["calls"] == {}
        estimate = float(out.split("estimated cost $")[1].split()[0])
        # room for one to three of the six units: the reservation prices the prefix uncached
        # with 250 output tokens, the estimate models the prompt cache
        budget = estimate / 2
        code, _, err = run_cli([*base, "--budget", f"{budget}"], capsys)
        assert code == 2
        assert err.strip().splitlines()[-1].startswith("failcodes: error: budget of $")
        assert "judged now" in err  # the closing summary came first
        done = len((workdir / "run" / "annotations.jsonl").read_text().splitlines())
        assert 0 < done < 6
        assert fake.stats()["calls"]["openai"] == done


def test_judge_and_attribute_default_to_the_bundled_codebook(inputs, workdir, capsys) -> None:
    from failcodes.codebook import bundled

    traces, _ = inputs
    cb = bundled()
    code, out, err = run_cli(
        ["judge", "retrieval", "--from", str(traces), "-o", "run", "--format", "json"], capsys
    )
    assert code == 0, err
    assert f"codebook: the bundled {cb.name} v{cb.version}" in err
    lines = (workdir / "run" / "annotations.jsonl").read_text().splitlines()
    # the bundled codebook's hash is what each annotation cites
    assert {json.loads(x)["codebook"]["hash"] for x in lines} == {cb.hash}
    assert json.loads(out)["judged"] == 6
    code, _, err = run_cli(
        ["attribute", "--from", str(traces), "--retrieval", "run", "-o", "attr"], capsys
    )
    assert code == 0, err
    assert f"codebook: the bundled {cb.name} v{cb.version}" in err


def test_unreachable_endpoint_leaves_no_empty_run_behind(inputs, workdir, capsys) -> None:
    import socket

    traces, cb = inputs
    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = ["judge", "retrieval", "--from", str(traces), "--codebook", str(cb), "--no-cache"]
    args += ["--judge", "openai:m", "--base-url", f"http://127.0.0.1:{port}/v1"]
    args += ["--max-attempts", "1", "-o", "run"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert f"cannot reach http://127.0.0.1:{port}/v1/chat/completions" in err
    # the folder this call made held an empty journal: nothing to resume, so it is gone
    assert not (workdir / "run").exists()
    # a run folder that existed before (another invocation's) is never removed
    (workdir / "run").mkdir()
    (workdir / "run" / "mine.txt").write_text("keep")
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "cannot reach" in err
    assert (workdir / "run" / "mine.txt").read_text() == "keep"
