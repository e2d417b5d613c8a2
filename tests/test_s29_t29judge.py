"""Session 29 (t29judge): what a judge run costs, said right before and after it runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from failcodes.judge import load_prices
from failcodes.judge.pricing import estimate_tokens
from tests.cli_helpers import run_cli
from tests.fakeserver import FakeServer
from tests.judge_helpers import fresh_fake, make_traces, write_codebook, write_traces


def test_a_model_the_price_table_does_not_list_is_not_priced_as_a_shorter_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bundled table matched the longest key that prefixes the model name, so a model it
    # does not list took a sibling's price, without a word, in the dry run, the run's cost
    # and the --budget: openai:gpt-5-pro (list $15 / $120 per M) read openai:gpt-5's $1.25
    # / $10, openai:gpt-4.1-nano ($0.10 / $0.40) read openai:gpt-4.1's $2 / $8, and Claude
    # Opus 4 (anthropic:claude-opus-4-20250514, $15 / $75) read the $5 / $25 of Opus 4.5.
    table = load_prices()
    assert table.lookup("openai:gpt-5-pro") is None  # unknown, said: not gpt-5's 1.25
    nano = table.lookup("openai:gpt-4.1-nano")
    assert nano is not None and (nano.input, nano.output) == (0.1, 0.4)  # was 2.0, 8.0
    opus4 = table.lookup("anthropic:claude-opus-4-20250514")
    assert opus4 is not None and (opus4.input, opus4.output) == (15.0, 75.0)  # was 5, 25
    opus45 = table.lookup("anthropic:claude-opus-4-5-20251101")
    assert opus45 is not None and (opus45.input, opus45.output) == (5.0, 25.0)
    # a snapshot date names the same model: its entry's price
    assert table.lookup("openai:gpt-5-mini-2025-08-07") == table.lookup("openai:gpt-5-mini")
    assert table.lookup("anthropic:claude-sonnet-4-20250514") == table.lookup(
        "anthropic:claude-sonnet-4"
    )
    # the dry run of the unlisted model says why its cost is unknown and how to give one
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = write_traces(tmp_path / "t.jsonl", make_traces(1))
    code, out, _ = run_cli(
        [
            *("judge", "retrieval", "--from", str(src), "--judge", "openai:gpt-5-pro"),
            *("--no-cache", "--dry-run", "-o", str(tmp_path / "run")),
        ],
        capsys,
    )
    assert code == 0
    assert (
        "estimated cost unknown (no price; openai:gpt-5-pro is not in the price table: "
        "--prices FILE or --price-as KEY)" in out
    )


def _dry_run_json(
    src: Path, run: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> dict[str, Any]:
    code, out, err = run_cli(
        [
            *("judge", "retrieval", "--from", str(src), "--judge", "openai:gpt-5-mini"),
            *("--no-cache", "--dry-run", "--format", "json", "-o", str(run), *extra),
        ],
        capsys,
    )
    assert code == 0, err
    return dict(json.loads(out))


def test_a_chinese_passage_is_priced_at_about_a_token_a_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The dry run counted every text at four characters a token. Chinese medical prose takes
    # about one token a character: the sentence below is 121 tokens in OpenAI's o200k_base
    # and 203 in cl100k_base (counted with quicktok, whose cl100k_base equals tiktoken's on
    # every message tried), where the dry run said ceil(140 / 4) = 35: a third to a sixth.
    zh = (
        "二甲双胍是2型糖尿病的一线治疗药物。一项随机对照试验显示,与安慰剂相比,二甲双胍可使"
        "糖化血红蛋白平均降低约1个百分点,且不增加低血糖风险。常见不良反应包括腹泻、恶心和"
        "腹部不适,通常在剂量逐步增加后减轻。肾功能严重受损的患者应避免使用。维生素C不能治愈"
        "普通感冒,但可能略微缩短病程。"
    )
    assert len(zh) == 140
    # by hand: 132 CJK characters (ideographs and 。、) at one token each, and 8 ASCII ones
    # (2, 1, C and five commas) at four a token: 132 + 2 = 134 (o200k 121, cl100k 203)
    assert estimate_tokens(zh) == 134
    assert estimate_tokens("Metformin lowers HbA1c.") == 6  # ceil(23 / 4): English unchanged
    # through the CLI's dry run (columns read, no unit built), one claim with one passage:
    # 400 ideographs against 400 ASCII letters cost 400 - 100 = 300 input tokens more
    # (token_chars 1,600 vs 400; both multiples of 4, so no rounding), per unit and grouped
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name, text in (("zh", "糖" * 400), ("en", "x" * 400)):
        trace = make_traces(1)[0]
        passage = trace.passages[0].model_copy(update={"text": text})
        write_traces(
            tmp_path / f"{name}.jsonl", [trace.model_copy(update={"passages": (passage,)})]
        )
    for extra in ((), ("--group-by-claim",)):
        zh_run = _dry_run_json(tmp_path / "zh.jsonl", tmp_path / "rz", capsys, *extra)
        en_run = _dry_run_json(tmp_path / "en.jsonl", tmp_path / "re", capsys, *extra)
        assert zh_run["units"] == en_run["units"] == 1
        assert zh_run["input_tokens"] - en_run["input_tokens"] == 300  # main: 0


@pytest.fixture
def fake(fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    return fresh_fake(fake_server, monkeypatch, "sk-test-t29judge")


def test_a_run_resumed_at_another_temperature_is_refused(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A judge's run folder refused another model or codebook in one line, but not another
    # --temperature: a run judged at 0 (1 claim, 3 units) and resumed at 0.7 on a second
    # claim judged its 3 new units at 0.7 into the same journal (exit 0), one run of two
    # samplings, which every reader (attribute, agree, a panel's members) takes for one.
    run = tmp_path / "run"

    def judge(claims: int, temperature: str) -> tuple[int, str]:
        src = write_traces(tmp_path / f"t{claims}.jsonl", make_traces(claims))
        code, _, err = run_cli(
            [
                *("judge", "retrieval", "--from", str(src), "--judge", "openai:fake-model"),
                *("--base-url", fake.openai_base_url, "--temperature", temperature),
                *("--no-cache", "-o", str(run)),
            ],
            capsys,
        )
        return code, err

    assert judge(1, "0")[0] == 0
    calls = fake.stats()["calls"]["openai"]
    assert calls == 3  # by hand: claim 0 against pm1, pm2 (sysA) and w1 (sysB)
    code, err = judge(2, "0.7")
    assert code == 2  # main: 0, the 3 units of claim 1 judged at 0.7 beside those at 0
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {run} holds a run with temperature='0.0', not '0.7'; use another "
        "output folder (-o) for a different run"
    )
    assert fake.stats()["calls"]["openai"] == calls  # nothing called
    assert judge(2, "0")[0] == 0  # the same temperature resumes
    assert fake.stats()["calls"]["openai"] == calls + 3


def test_a_budget_bounds_the_run_not_each_invocation(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --budget bounded each invocation: a run stopped by it ("rerun with a larger --budget
    # to resume") spent the budget again when rerun as it was (a study rerun does that),
    # and a larger one again (--budget 100, rerun 100, then 200: $326 spent in all).
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "openai:fake-model: {input: 1000.0, cached_input: 100.0, output: 2000.0}\n", "utf-8"
    )
    src = write_traces(tmp_path / "t.jsonl", make_traces(4))  # 12 units
    run = tmp_path / "run"

    def judge(budget: float) -> tuple[int, str]:
        code, _, err = run_cli(
            [
                *("judge", "retrieval", "--from", str(src), "--judge", "openai:fake-model"),
                *("--base-url", fake.openai_base_url, "--prices", str(prices)),
                *("--codebook", str(write_codebook(tmp_path / "cb.yaml"))),
                *("--concurrency", "1", "--budget", str(budget), "--no-cache", "-o", str(run)),
            ],
            capsys,
        )
        return code, err

    def spent() -> tuple[int, float]:
        summary = json.loads((run / "summary.json").read_text("utf-8"))
        return summary["journal_units"], summary["journal_cost_usd"]

    # a unit costs about $0.89 here (fake usage at these prices) and sets about $3 aside
    # while in flight (its input and 1,024 output tokens): 7 units, $6.1976, then a stop
    budget = 8.0
    assert judge(budget)[0] == 2
    units, first = spent()
    assert 0 < units < 12 and first <= budget
    code, err = judge(budget)  # the same budget again: $1.80 of it is left, under $3
    assert code == 2  # main: 0, the 5 units left judged for about $4.4 more, $10.6 in all
    assert spent() == (units, first)
    assert f"(the run's total ${first:.4f}: ${first:.4f} before)" in err
    code, _ = judge(1000.0)  # a larger budget resumes, up to it
    assert code == 0 and spent()[0] == 12


def test_haiku_4_5_is_not_priced_as_caching_the_codebook_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Anthropic caches a prefix of at least 4,096 tokens for Claude Haiku 4.5 and Opus 4.5
    # (2,048 for Haiku 3 and 3.5; 1,024 for Sonnet 4 / 4.5 and Opus 4 / 4.1: its prompt
    # caching docs). The dry run assumed 1,024 for every model, so the bundled codebook's
    # prefix (~3,400 tokens) read as cached for Haiku 4.5: 12 retrieval units at concurrency
    # 8 were priced as 8 cache writes and 4 cache reads of it, where the API bills all 12
    # calls as plain input ($1 per M, not $0.10 read or $1.25 written).
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    src = write_traces(tmp_path / "t.jsonl", make_traces(4))  # 12 units, 12 calls

    def dry(judge: str) -> dict[str, Any]:
        code, out, err = run_cli(
            [
                *("judge", "retrieval", "--from", str(src), "--judge", judge),
                *("--no-cache", "--dry-run", "--format", "json", "-o", str(tmp_path / judge)),
            ],
            capsys,
        )
        assert code == 0, err
        return dict(json.loads(out))

    haiku = dry("anthropic:claude-haiku-4-5")
    assert haiku["calls"] == 12
    assert (haiku["cached_input_tokens"], haiku["cache_write_tokens"]) == (0, 0)  # main: > 0
    # by hand, at $1 input and $5 output per M: every input token at the input price
    expected = (haiku["input_tokens"] * 1.0 + haiku["output_tokens"] * 5.0) / 1e6
    assert haiku["cost_usd"] == pytest.approx(expected)
    # Sonnet 4.5 caches it (1,024): 8 first calls write it, the 4 others read it
    sonnet = dry("anthropic:claude-sonnet-4-5")
    prefix = sonnet["cache_write_tokens"] // 8
    assert prefix > 1024 and sonnet["cached_input_tokens"] == 4 * prefix


def test_a_panel_dry_run_counts_what_each_member_spent_before_its_budget(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each panel member's --budget bounds its own run, earlier invocations included; a panel's
    # dry run compared each member's estimate alone with the budget, so a member whose run
    # had spent most of it read as within budget, and the run then stopped it (exit 2).
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "openai:fake-model: {input: 1000.0, cached_input: 100.0, output: 2000.0}\n", "utf-8"
    )
    run = tmp_path / "panel"

    def judge(claims: int, *extra: str) -> tuple[int, str]:
        src = write_traces(tmp_path / f"t{claims}.jsonl", make_traces(claims))
        code, out, err = run_cli(
            [
                *("judge", "retrieval", "--from", str(src), "--judge", "openai:fake-model"),
                *("--judge", "openai:fake-model", "--temperature", "0.5"),
                *("--base-url", fake.openai_base_url, "--prices", str(prices), "--no-cache"),
                *("--codebook", str(write_codebook(tmp_path / "cb.yaml"))),
                *("-o", str(run), *extra),
            ],
            capsys,
        )
        assert code == 0, err
        return code, out

    judge(1)  # 3 units per member
    spent = [
        json.loads((folder / "summary.json").read_text("utf-8"))["journal_cost_usd"]
        for folder in sorted((run / "panel").iterdir())
    ]
    estimate = [e["cost_usd"] for e in json.loads(judge(2, "--dry-run", "--format", "json")[1])]
    assert len(spent) == len(estimate) == 2 and min(spent) > 0  # claim 1's 3 units each
    # a budget every member's estimate fits, and no member's estimate plus its spend
    low, high = max(estimate), min(e + s for e, s in zip(estimate, spent, strict=True))
    assert low < high
    budget = (low + high) / 2
    _, out = judge(2, "--dry-run", "--budget", f"{budget}")
    for e, s in zip(estimate, spent, strict=True):  # main: no over-budget line for either
        assert (
            f"  over budget: the estimate ${e:.4f} and the ${s:.4f} the run spent before cross "
            f"--budget ${budget:.4f};"
        ) in out


def test_a_dry_run_without_the_key_says_it_left_the_cache_unread(
    fake: FakeServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without the judge's API key a dry run prices the judge through a stand-in whose cache
    # keys match no real run's: it read "0 cached" and priced every unit as a call while the
    # response cache held answers of that model, without a word.
    cache = tmp_path / "cache.sqlite"
    src = write_traces(tmp_path / "t.jsonl", make_traces(1))  # 3 units
    common = ["judge", "retrieval", "--from", str(src), "--judge", "openai:gpt-5-mini"]
    code, _, err = run_cli(
        [
            *(*common, "--base-url", fake.openai_base_url),
            *("--cache", str(cache), "-o", str(tmp_path / "r1")),
        ],
        capsys,
    )
    assert code == 0, err
    monkeypatch.delenv("OPENAI_API_KEY")
    code, _, err = run_cli(
        [*common, "--cache", str(cache), "--dry-run", "-o", str(tmp_path / "r2")], capsys
    )
    assert code == 0
    assert (
        f"{cache} holds 3 answer(s) of openai:gpt-5-mini (any endpoint), not read: without the "
        "judge's API key a dry run cannot tell which units they answer, so it prices every "
        "unit as a call; set the key to count the cache hits"
    ) in err.splitlines()


def test_a_dry_run_refuses_a_budget_with_batch_as_the_run_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run refuses --budget with --batch (a batch is paid when the provider runs it); its
    # dry run took both and, its estimate over the budget, said "the run stops scheduling
    # before the spend would cross it (exit 2), units left unjudged": a run that never starts.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = write_traces(tmp_path / "t.jsonl", make_traces(1))
    run = tmp_path / "run"
    code, out, err = run_cli(
        [
            *("judge", "retrieval", "--from", str(src), "--judge", "openai:gpt-5-mini"),
            *("--batch", "--budget", "0.0001", "--no-cache", "--dry-run", "-o", str(run)),
        ],
        capsys,
    )
    assert code == 2 and out == ""  # main: 0, with that over-budget line
    assert err.strip().splitlines()[-1] == (
        "failcodes: error: --budget is not supported with --batch (batches are paid when they "
        "run): leave it out, and see the cost first with --dry-run"
    )
    assert not run.exists()
