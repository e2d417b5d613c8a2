"""One engine, run modes as a strategy; run metadata and pricing of the endpoint (issues 17, 13)."""

import json

import pytest

from failcodes.judge import (
    Cascade,
    Grouped,
    JudgeJob,
    JudgeSettings,
    Limits,
    PerUnit,
    Price,
    RetryPolicy,
    load_prices,
    make_coder,
    read_annotations,
    run_judge,
)
from failcodes.judge.journal import Journal
from failcodes.judge.pricing import is_vendor_endpoint, resolve_price
from failcodes.judge.providers import redact_url
from failcodes.judge.providers.offline import OfflineCoder
from failcodes.units import UnitKind, retrieval_units
from tests.cli_helpers import run_cli
from tests.judge_helpers import fresh_fake, make_codebook, make_traces, write_codebook, write_traces

CB = make_codebook()
FAST = JudgeSettings(limits=Limits(concurrency=2), retry=RetryPolicy.no_wait())


@pytest.fixture
def fake(fake_server, monkeypatch):
    return fresh_fake(fake_server, monkeypatch, "sk-test-modes")


def test_redact_url_drops_credentials() -> None:
    assert redact_url("https://alice:s3cret@llm.example.org:8443/v1?api_key=abc&x=1") == (
        "https://***@llm.example.org:8443/v1?api_key=***&x=1"
    )
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert redact_url(None) is None


def test_only_vendor_endpoints_get_the_bundled_list_price() -> None:
    table = load_prices()
    assert table.vendor_list
    listed = table.lookup("openai:gpt-5-mini")
    assert listed is not None
    assert is_vendor_endpoint(None) and is_vendor_endpoint("https://api.openai.com/v1")
    assert not is_vendor_endpoint("http://localhost:8000/v1")
    spec = "openai:gpt-5-mini"
    assert resolve_price(table, spec, None) == listed
    assert resolve_price(table, spec, "https://api.openai.com/v1") == listed
    # a local OpenAI-compatible server serving a model of that name is not OpenAI's model
    assert resolve_price(table, spec, "http://localhost:8000/v1") is None
    given = Price(input=0.0, output=0.0)
    assert resolve_price(table, spec, "http://localhost:8000/v1", given) == given
    # a user's own table is taken at its word
    mine = table.model_copy(update={"vendor_list": False})
    assert resolve_price(mine, spec, "http://localhost:8000/v1") == listed


def test_run_records_provider_model_endpoint_and_prices_a_local_server_as_unknown(
    fake, tmp_path
) -> None:
    units = retrieval_units(make_traces(1))  # 3 units
    s = run_judge(
        units,
        make_coder("openai:gpt-5-mini", base_url=fake.openai_base_url),
        JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "run", settings=FAST),
    )
    assert (s.provider, s.model, s.base_url) == ("openai", "gpt-5-mini", fake.openai_base_url)
    assert s.price_known is False and s.cost_usd == 0.0 and s.scored == 3
    journal = Journal(tmp_path / "run")
    meta = journal.meta()
    journal.close()
    assert (meta["provider"], meta["model"], meta["base_url"]) == (
        "openai",
        "gpt-5-mini",
        fake.openai_base_url,
    )
    # the same run with a price given is priced: usage at $1/M input, $2/M output
    priced = FAST.__class__(limits=FAST.limits, retry=FAST.retry, price=Price(input=1, output=2))
    s2 = run_judge(
        units,
        make_coder("openai:gpt-5-mini", base_url=fake.openai_base_url),
        JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "priced", settings=priced),
    )
    assert s2.price_known
    assert s2.cost_usd == pytest.approx((s2.input_tokens * 1 + s2.output_tokens * 2) / 1e6)


def test_modes_judge_the_same_units_once_each(fake, tmp_path) -> None:
    units = retrieval_units(make_traces(2))  # 6 units, 2 claims
    coder = lambda: make_coder("openai:fake-model", base_url=fake.openai_base_url)  # noqa: E731
    per = run_judge(units, coder(), JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "p", settings=FAST))
    grouped = run_judge(
        units,
        coder(),
        JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "g", mode=Grouped(), settings=FAST),
    )
    assert (per.mode, per.calls, per.judged) == ("per-unit", 6, 6)
    assert (grouped.mode, grouped.calls, grouped.groups, grouped.judged) == ("grouped", 2, 2, 6)
    ids = {a.unit_id for a in read_annotations(tmp_path / "p")}
    assert ids == {a.unit_id for a in read_annotations(tmp_path / "g")} == {u.id for u in units}
    with pytest.raises(Exception, match="grouping needs an LLM judge"):
        run_judge(
            units, OfflineCoder(), JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "o", mode=Grouped())
        )


def test_cascade_summary_in_json_and_dry_run_prints_one_cost(fake, tmp_path, capsys) -> None:
    src = write_traces(tmp_path / "traces.jsonl", make_traces(2))
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai:fake-model: {input: 1000, cached_input: 100, output: 2000}\n")
    base = [
        *("judge", "retrieval", "--from", str(src), "--codebook", str(cb), "--no-cache"),
        *("--judge", "openai:fake-model", "--base-url", fake.openai_base_url),
        *("--prices", str(prices)),
    ]
    code, out, err = run_cli([*base, "--dry-run", "-o", str(tmp_path / "d")], capsys)
    assert code == 0, err
    assert out.count("estimated cost") == 1 and "$" in out  # one figure, not two
    code, out, err = run_cli(
        [*base, "--cascade", "offline", "--format", "json", "-o", str(tmp_path / "c")], capsys
    )
    assert code == 0, err
    data = json.loads(out)
    c = data["cascade"]
    assert c["first_judge"] == "offline" and c["kept"] + c["escalated"] == 6
    assert data["judged"] == c["escalated"] and data["mode"].startswith("cascade")
    assert sum(c["coded_by"].values()) == 6
    code, out, err = run_cli(
        [*base, "--group-by-claim", "--format", "json", "-o", str(tmp_path / "g")], capsys
    )
    assert code == 0, err
    assert json.loads(out)["groups"] == 2


def test_judge_without_passages_says_why_nothing_is_judged(tmp_path, capsys) -> None:
    closed = [t.model_copy(update={"passages": ()}) for t in make_traces(2)]
    src = write_traces(tmp_path / "closed.jsonl", closed)
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    code, _out, err = run_cli(
        ["judge", "retrieval", "--from", str(src), "--codebook", str(cb), "-o", str(tmp_path)],
        capsys,
    )
    assert code == 2
    assert "none of the 4 trace(s) carries a retrieved passage" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "annotations.jsonl").exists()


def test_cascade_mode_from_python(fake, tmp_path) -> None:
    units = retrieval_units(make_traces(2))
    s = run_judge(
        units,
        make_coder("openai:fake-model", base_url=fake.openai_base_url),
        JudgeJob(
            CB,
            UnitKind.RETRIEVAL,
            tmp_path / "run",
            mode=Cascade(OfflineCoder(), then=PerUnit()),
            settings=FAST,
        ),
    )
    assert s.cascade is not None
    anns = read_annotations(tmp_path / "run")
    assert len(anns) == 6 and s.cascade.kept + s.cascade.escalated == 6
    assert sum(a.coder == "offline" for a in anns) == s.cascade.kept
