"""Adapters from the judge package (:mod:`failcodes.judge`) to the saturation seams.

* :class:`JudgeCoder` codes a round's batch with :func:`failcodes.judge.run_judge`, using a
  judge run folder inside the round (``rounds/rNNNN/judge/``): the judge's own journal commits
  every finished unit, so a round killed mid-coding resumes there without re-judging.
* :class:`ProviderTextModel` lets the :class:`~failcodes.saturation.proposers.LLMProposer`
  talk to an Anthropic/OpenAI(-compatible) provider with a JSON-schema structured answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from failcodes.annotations import Annotation, CoderKind
from failcodes.codebook import Codebook
from failcodes.errors import ConfigError
from failcodes.judge import (
    JudgeJob,
    RetryPolicy,
    complete_with_retry,
    make_coder,
    read_annotations,
    run_judge,
)
from failcodes.judge.journal import refuse_stale_ids
from failcodes.judge.providers import (
    DirectCoder,
    LLMProvider,
    Message,
    ProviderReply,
    ProviderRequest,
)
from failcodes.judge.spec import JudgeSpec
from failcodes.saturation.proposers import LLMProposer, proposals_schema
from failcodes.units import Unit


@dataclass
class JudgeCoder:
    """A saturation coder backed by a judge spec (``offline``, ``anthropic:M``, ``openai:M``)."""

    spec: str
    base_url: str | None = None

    def __post_init__(self) -> None:
        # built now so an unknown judge or a missing API key fails before a round is drawn
        self._fresh: LLMProvider | DirectCoder | None = make_coder(
            self.spec, base_url=self.base_url
        )

    @property
    def name(self) -> str:
        """The judge spec."""
        return self.spec

    @property
    def kind(self) -> CoderKind:
        """HEURISTIC for the offline baseline, LLM otherwise."""
        return CoderKind.HEURISTIC if JudgeSpec.of(self.spec).heuristic else CoderKind.LLM

    def code(
        self, units: Sequence[Unit], codebook: Codebook, *, workdir: Path
    ) -> Iterator[Annotation]:
        """Judge ``units`` into ``workdir/judge`` (resuming it) and yield their annotations."""
        if not units:
            return
        run_dir = workdir / "judge"
        # an earlier failcodes' ids: refused, not judged again at cost
        refuse_stale_ids(run_dir, lambda: units)
        coder = self._fresh or make_coder(self.spec, base_url=self.base_url)
        self._fresh = None  # run_judge closes an LLM provider's client
        run_judge(units, coder, JudgeJob(codebook, units[0].kind, run_dir))
        wanted = {u.id for u in units}
        for annotation in read_annotations(run_dir):
            if annotation.unit_id in wanted:
                yield annotation


@dataclass
class ProviderTextModel:
    """One structured call to an LLM provider per prompt, through the judge's retry loop."""

    spec: str
    base_url: str | None = None
    max_output_tokens: int = 4096
    attempts: int = 4
    provider: LLMProvider | None = None  # injected in tests; built from spec otherwise

    @property
    def name(self) -> str:
        """The provider spec."""
        return self.spec

    def _provider(self) -> LLMProvider:
        if self.provider is not None:
            return self.provider
        coder = make_coder(self.spec, base_url=self.base_url)
        if not isinstance(coder, LLMProvider):
            raise ConfigError(
                f"{self.spec!r} is not an LLM; use --proposer offline for the heuristic baseline"
            )
        return coder

    def complete(self, system: str, user: str, schema: dict[str, Any] | None = None) -> str:
        """Send the prompt; return the structured payload as JSON text (or the raw text).

        ``schema`` is the answer schema (the proposer passes one whose ids are the codebook's
        enums); without it, the codebook-free :func:`proposals_schema`.
        """
        request = ProviderRequest(
            system=system,
            messages=(Message(role="user", content=user),),
            schema=schema or proposals_schema(),
            schema_name="proposals",
            max_output_tokens=self.max_output_tokens,
        )
        provider = self._provider()

        async def call() -> ProviderReply:
            try:
                reply, _attempts = await complete_with_retry(
                    provider, request, RetryPolicy(max_attempts=self.attempts)
                )
                return reply
            finally:
                if self.provider is None:
                    await provider.aclose()

        reply = asyncio.run(call())
        if isinstance(reply.payload, dict | list):
            return json.dumps(reply.payload)
        return reply.text


def llm_proposer(spec: str, *, base_url: str | None = None) -> LLMProposer:
    """An LLM proposer over the judge provider ``spec`` (``anthropic:MODEL``...)."""
    if JudgeSpec.of(spec).heuristic:
        raise ConfigError("llm:offline is not an LLM; use --proposer offline")
    return LLMProposer(ProviderTextModel(spec, base_url))
