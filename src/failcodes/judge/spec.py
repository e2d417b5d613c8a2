"""A judge named once: ``vendor:model[@base_url]`` parsed into a :class:`JudgeSpec` value.

The string a user types (``offline``, ``anthropic:MODEL``, ``openai:MODEL``, optionally
``openai:MODEL@http://127.0.0.1:8000/v1`` for a compatible server) is parsed here, once, when
a request or a study file is validated; everything below carries the value: whether the judge
is the heuristic baseline, the vendor, the model, its endpoint, and how to build its client
(or, in a dry run without a key, a pricing-only stand-in).
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import ValidationError, model_validator

from failcodes.contract import FrozenModel
from failcodes.errors import ConfigError
from failcodes.judge.estimate import PricingOnlyCoder
from failcodes.judge.providers.factory import KEY_AS_MODEL, make_coder
from failcodes.judge.providers.offline import OFFLINE_MODEL as OFFLINE_MODEL
from failcodes.redact import looks_like_key

Vendor = Literal["offline", "anthropic", "openai"]


def check_url(url: str) -> str:
    """``url`` if it is an http(s) URL with a host, else a ValueError saying what is expected."""
    parts = urlsplit(url)
    if url != url.strip() or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) URL (e.g. http://127.0.0.1:8000/v1)")
    return url


class JudgeSpec(FrozenModel):
    """One judge: vendor, model and (optionally) the endpoint of a compatible server.

    Validated from its string form (``JudgeSpec.model_validate("openai:gpt-5-mini")``); the
    string form of the value (:attr:`name`) is what runs, caches and panels record.
    """

    name: str
    vendor: Vendor
    model: str
    base_url: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _parse(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        text, base_url = value.strip(), None
        # the first '@' before http(s)://: a URL's own user:password@ holds the last one
        at = re.search(r"@(?=https?://)", text, re.IGNORECASE)
        if at:
            text, base_url = text[: at.start()], text[at.end() :]
        if looks_like_key(text):  # before any message that would echo it (a URL's is redacted)
            raise ValueError(KEY_AS_MODEL)
        vendor, _, model = text.partition(":")
        vendor = vendor.strip().lower()
        if vendor == "offline":
            return {"name": text, "vendor": "offline", "model": model or OFFLINE_MODEL}
        if vendor not in ("anthropic", "openai") or not model:
            raise ValueError(
                f"unknown judge {value!r}; use offline, anthropic:MODEL or openai:MODEL "
                "(e.g. openai:gpt-5-mini; an OpenAI-compatible server via --base-url)"
            )
        if base_url is not None:
            check_url(base_url)
        return {"name": text, "vendor": vendor, "model": model, "base_url": base_url}

    @classmethod
    def of(cls, value: str | JudgeSpec) -> JudgeSpec:
        """``value`` parsed (else a :class:`ConfigError` saying what is expected)."""
        if isinstance(value, JudgeSpec):
            return value

        try:
            return cls.model_validate(value)
        except ValidationError as exc:
            raise ConfigError(str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from None

    def __str__(self) -> str:
        return self.name

    def temperature_refused(self, temperature: float | None) -> str | None:
        """Why this judge cannot be sampled at ``temperature`` (None: it can, or none given).

        A temperature a judge is not sampled at was dropped from its calls with no word, and
        recorded with its run (panel.json) as if it had been: the offline judge, Anthropic's
        Messages API (the SDK's ``messages.create``) and an OpenAI reasoning model take none.
        """
        from failcodes.judge.providers.openai import REASONING_PREFIXES

        if temperature is None:
            return None
        if self.heuristic:
            return f"{self.name} takes no temperature (a deterministic heuristic baseline)"
        if self.vendor == "anthropic" or (
            self.vendor == "openai" and self.model.startswith(REASONING_PREFIXES)
        ):
            return f"{self.name} takes no temperature (its API has none)"
        return None

    def argv_word(self) -> str:
        """The spec as typed, its ``@URL`` kept (``--plan`` and a step's log print it)."""
        return f"{self.name}@{self.base_url}" if self.base_url else self.name

    @property
    def heuristic(self) -> bool:
        """True for the offline judge: a rule-based baseline, not an LLM."""
        return self.vendor == "offline"

    def endpoint(self, base_url: str | None = None) -> str | None:
        """The endpoint it calls: its own ``@URL``, else ``base_url`` (None: the vendor's)."""
        return self.base_url or base_url

    def coder(
        self,
        *,
        base_url: str | None = None,
        timeout: float = 120.0,
        temperature: float | None = None,
        dry_run: bool = False,
    ) -> Any:
        """The judge's client (keys come from the environment only).

        In a dry run a missing key is no error: the judge is priced, never called, through a
        :class:`~failcodes.judge.estimate.PricingOnlyCoder`.
        """
        url = self.endpoint(base_url)
        try:
            return make_coder(self.name, base_url=url, timeout=timeout, temperature=temperature)
        except ConfigError:
            if not dry_run or self.heuristic:
                raise

        return PricingOnlyCoder(self.name, url)

    def stand_in(self, base_url: str | None = None) -> Any:
        """A coder that names this judge without a client (the offline coder is its own)."""
        if self.heuristic:
            return self.coder()

        return PricingOnlyCoder(self.name, self.endpoint(base_url))
