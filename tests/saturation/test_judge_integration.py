"""The loop with the real judge package: the offline heuristic baseline coder and proposer on
bundled RAGChecker units, and the LLM proposer through a provider object."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from failcodes import bundled, codebook
from failcodes.annotations import CoderKind
from failcodes.ingest import AdapterOptions, get_adapter
from failcodes.judge.providers import ProviderReply, ProviderRequest, TokenUsage
from failcodes.saturation import ProjectStore
from failcodes.saturation.judging import ProviderTextModel
from failcodes.saturation.proposers import LLMProposer, proposals_schema
from failcodes.units import UnitKind, build_units
from tests.saturation.satfixtures import make_unit, small_codebook
from tests.saturation.test_cli import cli


def test_offline_round_on_bundled_units(workdir: Path) -> None:
    traces = (
        get_adapter("ragchecker")
        .read([bundled.path("ragchecker", "checking_outputs.json")], AdapterOptions())
        .traces
    )
    source = workdir / "traces.jsonl"
    source.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    cb_path = codebook.bundled_dir() / "medical-fact-check.v1.yaml"
    done = cli(
        "init",
        "rc",
        "--codebook",
        str(cb_path),
        "--from",
        str(source),
        "--batch-size",
        "20",
        cwd=workdir,
    )
    # 59 distinct (claim, passage) pairs in the bundled RAGChecker checking outputs
    assert f"{len(build_units(traces, UnitKind.RETRIEVAL))} retrieval units" in done.stdout
    assert done.returncode == 0, done.stderr
    done = cli("round", "rc", cwd=workdir)  # defaults: --judge offline --proposer offline
    assert done.returncode == 0, done.stderr
    assert "coded by offline" in done.stdout and "(heuristic baseline)" in done.stdout

    store = ProjectStore.open(workdir / "annotations" / "rc")
    record = store.round(1)
    assert (record.judge, record.judge_kind) == ("offline", CoderKind.HEURISTIC)
    anns = {a.unit_id: a for a in store.round_annotations(1)}
    assert set(anns) == set(record.unit_ids) and len(anns) == 20
    v1 = codebook.bundled()
    assert {a.codebook.hash for a in anns.values()} == {v1.hash}
    assert (store.round_dir(1) / "judge").is_dir()  # the judge's own journal, for resume
    proposals = store.proposals(1)
    assert proposals, "the offline proposer finds frequent unexplained cues in this batch"
    for p in proposals:
        assert p.proposer == "offline" and p.proposer_kind is CoderKind.HEURISTIC
        assert p.definition.startswith("Heuristic baseline (offline) proposal")
        # every example unit was coded with the proposed parent subcode and no leaf
        for uid in p.example_unit_ids:
            assert anns[uid].codes[p.dimension] == p.parent_subcode
    review = yaml.safe_load(store.review_path(1).read_text())
    assert all("heuristic baseline, not an LLM" in p["proposer"] for p in review["proposals"])


class FakeProvider:
    """An LLMProvider whose answers are scripted; records requests."""

    spec = "openai:fake"
    provider = "openai"
    model = "fake"
    coder_kind = CoderKind.LLM

    def __init__(self, payloads: list[Any]) -> None:
        self.payloads = payloads
        self.requests: list[ProviderRequest] = []

    def identity(self) -> dict[str, Any]:
        return {"provider": "openai", "model": "fake"}

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        self.requests.append(request)
        payload = self.payloads.pop(0)
        return ProviderReply(
            payload=payload,
            text=json.dumps(payload),
            usage=TokenUsage(),
            raw_request={},
            raw_response={},
        )

    async def aclose(self) -> None:
        return None


def test_llm_proposer_through_a_provider() -> None:
    cb = small_codebook()
    unit = make_unit(3)
    answer = {
        "proposals": [
            {
                "dimension": "scope",
                "parent_subcode": "different_context",
                "name": "Animal study",
                "definition": "In animals.",
                "example_unit_ids": [unit.id],
            }
        ]
    }
    provider = FakeProvider([answer])
    proposer = LLMProposer(ProviderTextModel("openai:fake", provider=provider))
    [draft] = proposer.propose([unit], [], cb, round_number=1)
    assert (draft.dimension, draft.parent_subcode, draft.example_unit_ids) == (
        "scope",
        "different_context",
        (unit.id,),
    )
    [request] = provider.requests
    assert request.schema == proposals_schema(cb.part(unit.kind), [unit.id])
    assert request.schema_name == "proposals"
    # the schema names only the codebook's ids, each subcode only under its own dimension
    validator = jsonschema.Draft202012Validator(request.schema)
    assert validator.is_valid(answer)
    item = answer["proposals"][0]
    assert not validator.is_valid({"proposals": [{**item, "dimension": "unknown_dimension"}]})
    other = next(d for d in cb.part(unit.kind).dimensions if d.id != "scope")
    mixed = {**item, "parent_subcode": other.subcodes[1].id}  # another dimension's subcode
    assert not validator.is_valid({"proposals": [mixed]})
    assert validator.is_valid({"proposals": [{**item, "parent_subcode": "new subcode"}]})
    # example unit ids: only the batch's (issue 28: a made-up id failed the round)
    assert not validator.is_valid({"proposals": [{**item, "example_unit_ids": ["fake rationale"]}]})
    branches = request.schema["properties"]["proposals"]["items"]["anyOf"]
    assert [b["properties"]["dimension"]["enum"] for b in branches] == [
        [d.id] for d in cb.part(unit.kind).dimensions
    ]
    assert request.messages[0].role == "user" and unit.id in request.messages[0].content
    assert proposer.name == "llm:openai:fake"


def test_llm_judge_and_proposer_through_the_real_sdk(workdir: Path, monkeypatch: Any) -> None:
    """Real OpenAI SDK against the local fake server: the judge codes the batch; the fake
    server cannot answer the proposals schema, so the LLM proposer fails cleanly after its
    retry (no made-up proposal) and the round is resumed with the offline proposer without
    judging anything again."""
    from tests.fakeserver import FakeServer

    traces = (
        get_adapter("ragchecker")
        .read([bundled.path("ragchecker", "checking_outputs.json")], AdapterOptions())
        .traces
    )
    source = workdir / "traces.jsonl"
    source.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    cb_path = codebook.bundled_dir() / "medical-fact-check.v1.yaml"
    init = cli(
        "init",
        "llm",
        "--codebook",
        str(cb_path),
        "--from",
        str(source),
        "--batch-size",
        "5",
        cwd=workdir,
    )
    assert init.returncode == 0, init.stderr
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-saturation")
    with FakeServer() as fake:
        url = fake.openai_base_url
        done = cli(
            "round",
            "llm",
            "--judge",
            "openai:fake-model",
            "--base-url",
            url,
            "--proposer",
            "llm:openai:fake-model",
            cwd=workdir,
        )
        assert done.returncode == 2
        assert "llm:openai:fake-model gave no valid proposals for round 1 after 2 attempts" in (
            done.stderr
        )
        calls = fake.stats()["calls"]["openai"]
        assert calls == 5 + 2  # five units judged, two proposer attempts
        store = ProjectStore.open(workdir / "annotations" / "llm")
        record = store.round(1)
        assert record.phase.value == "coded"
        anns = store.round_annotations(1)
        assert len(anns) == 5 and {a.coder_kind for a in anns} == {CoderKind.LLM}
        assert "sk-test-saturation" not in "".join(
            p.read_text(errors="ignore") for p in store.root.rglob("*") if p.is_file()
        )
        done = cli(
            "round",
            "llm",
            "--judge",
            "openai:fake-model",
            "--base-url",
            url,
            "--proposer",
            "offline",
            cwd=workdir,
        )
        assert done.returncode == 0, done.stderr
        assert fake.stats()["calls"]["openai"] == calls  # nothing judged twice
        assert store.round(1).proposer == "offline"
