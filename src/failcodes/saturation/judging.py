"""Adapters from the judge package (``failcodes.judge``) to the saturation seams.

PLACEHOLDER until the judge package lands on main: every spec raises ConfigError.
"""

from __future__ import annotations

from failcodes.errors import ConfigError
from failcodes.saturation.coders import Coder
from failcodes.saturation.proposers import LLMProposer


def judge_coder(spec: str, *, base_url: str | None = None) -> Coder:
    """A coder running the judge ``spec`` (offline, anthropic:MODEL, openai:MODEL)."""
    raise ConfigError(f"judge {spec!r} needs failcodes.judge, not available yet (base {base_url})")


def llm_proposer(spec: str, *, base_url: str | None = None) -> LLMProposer:
    """An LLM proposer over the judge provider ``spec``."""
    raise ConfigError(f"proposer llm:{spec} needs failcodes.judge, not available yet ({base_url})")
