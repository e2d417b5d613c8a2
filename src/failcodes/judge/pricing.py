"""Prices per model (an editable table), cost of a call, and pre-run token estimates."""

from __future__ import annotations

import math
import re
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from pydantic import Field, ValidationError

from failcodes import yamlio
from failcodes.contract import FrozenModel
from failcodes.errors import InputError
from failcodes.judge.providers.base import TokenUsage

#: A model name's snapshot date (``-2025-08-07``, ``-20250514``, ``@20240620``): the same model.
SNAPSHOT = re.compile(r"(?:-\d{4}-\d{2}-\d{2}|[-@]\d{8})$")


class Price(FrozenModel):
    """USD per million tokens for one model."""

    input: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0, description="Defaults to input.")
    cache_write: float | None = Field(default=None, ge=0, description="Defaults to input.")
    output: float = Field(ge=0)
    batch_discount: float = Field(default=1.0, gt=0, le=1)

    def cost(self, usage: TokenUsage, *, batch: bool = False) -> float:
        """Return the USD cost of ``usage`` (cached and cache-write tokens at their rates)."""
        cached = self.cached_input if self.cached_input is not None else self.input
        write = self.cache_write if self.cache_write is not None else self.input
        plain = max(usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens, 0)
        dollars = (
            plain * self.input
            + usage.cached_input_tokens * cached
            + usage.cache_write_tokens * write
            + usage.output_tokens * self.output
        ) / 1_000_000
        return dollars * (self.batch_discount if batch else 1.0)


class PriceTable(FrozenModel):
    """Prices keyed by ``provider:model`` (or a prefix of it)."""

    prices: dict[str, Price]
    #: The bundled vendor list prices: they price the vendors' own endpoints only (a user's
    #: table, passed with --prices, is taken at its word whatever the endpoint).
    vendor_list: bool = False

    def lookup(self, spec: str) -> Price | None:
        """Return the price of ``spec``: its own key, or its key without a snapshot date.

        ``openai:gpt-5-mini-2025-08-07`` and ``anthropic:claude-sonnet-4-20250514`` take the
        entries ``openai:gpt-5-mini`` and ``anthropic:claude-sonnet-4``; a longer name is
        another model, which a listed prefix does not price (``openai:gpt-5-pro`` was priced
        as ``openai:gpt-5`` at a twelfth of its list price, ``openai:gpt-4.1-nano`` as
        ``openai:gpt-4.1`` at twenty times its own): None, the cost unknown.
        """
        if spec in self.prices:
            return self.prices[spec]
        undated = SNAPSHOT.sub("", spec)
        return self.prices.get(undated) if undated != spec else None


def load_prices(path: str | Path | None = None) -> PriceTable:
    """Load a price table from YAML (``provider:model: {input, cached_input, output, ...}``).

    Without ``path`` the bundled ``prices.yaml`` is used.
    """
    if path is None:
        text = resources.files("failcodes.judge").joinpath("prices.yaml").read_text("utf-8")
        where: str | Path = "failcodes/judge/prices.yaml"
        vendor_list = True
    else:
        where = Path(path)
        vendor_list = False
        try:
            text = yamlio.read_yaml_text(where)
        except OSError as exc:
            raise InputError(f"cannot read price table: {exc.strerror}", path=where) from None
    try:
        raw: Any = yamlio.safe_load(text) or {}
        if (
            not raw and path is not None
        ):  # --prices given: an empty file priced every call as unknown
            raise InputError(
                "empty price table (expected provider:model: {input, output})", path=where
            )
        return PriceTable(prices=raw, vendor_list=vendor_list)
    except (yaml.YAMLError, ValidationError) as exc:
        raise InputError(f"invalid price table: {exc}", path=where) from None


#: Chinese, Japanese and Korean characters (Han, kana, Hangul, their punctuation and
#: full-width forms): about a token each, where English prose takes about four characters.
#: Measured on medical prose (t29judge): Chinese 0.86-0.98 tokens a character in OpenAI's
#: o200k_base, 1.45-1.67 in cl100k_base, Japanese 0.84, Korean 0.70 (o200k); at four
#: characters a token the dry run priced a Chinese passage at a third of its input tokens.
_WIDE = re.compile(
    "[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f"
    "\uff00-\uffef\U00020000-\U0003ffff]"
)
#: What one such character counts as, in the characters :func:`length_tokens` divides by 4.
WIDE_CHARS = 4


def token_chars(text: str) -> int:
    """Length of ``text`` for :func:`length_tokens`: its characters, a CJK one counting 4."""
    if text.isascii():
        return len(text)
    return len(text) + (WIDE_CHARS - 1) * len(_WIDE.findall(text))


def estimate_tokens(text: str) -> int:
    """Rough token count of ``text``: four characters a token (English prose), one a CJK one."""
    return length_tokens(token_chars(text))


def length_tokens(chars: int) -> int:
    """:func:`estimate_tokens` of a text whose :func:`token_chars` is ``chars``."""
    return math.ceil(chars / 4)


#: Hosts whose models the price table prices (a judge's own API endpoints).
VENDOR_HOSTS = frozenset({"api.openai.com", "api.anthropic.com"})


def is_vendor_endpoint(base_url: str | None) -> bool:
    """Whether ``base_url`` is the vendor's own API (None: the SDK's default, the vendor's)."""
    if not base_url:
        return True
    return (urlsplit(base_url).hostname or "").lower() in VENDOR_HOSTS


def resolve_price(
    table: PriceTable | None, spec: str, base_url: str | None, given: Price | None = None
) -> Price | None:
    """The price a run is billed at: ``given`` if any, else the table's price of ``spec``.

    A judge behind a non-vendor base URL (a local or third-party OpenAI-compatible server) is
    not the vendor's model whatever its name: the bundled vendor list prices it as unknown;
    a price must be given (``given``, or a table of the user's own).
    """
    if given is not None:
        return given
    if table is None or (table.vendor_list and not is_vendor_endpoint(base_url)):
        return None
    return table.lookup(spec)
