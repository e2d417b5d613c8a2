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
#: Greek, Hebrew, the Indic scripts (Devanagari to Sinhala), Thai and Lao: a letter counts 2
#: characters. Measured (t30judge, medical sentences, o200k_base through quicktok 0.4, whose
#: cl100k_base equals tiktoken 0.14's): Greek 1.42-1.62 tokens for each 4 characters' one,
#: Hebrew 1.54, Hindi 1.36, Thai 1.54, so 4 characters a token priced them at 0.6-0.7 of
#: their input; at 2 a letter the estimate is 1.1-1.3 of o200k's count, as English prose's is
#: (1.27). cl100k_base (GPT-4) counts these scripts 3.5-4x: the estimate is o200k's.
_DOUBLE = re.compile("[\u0370-\u03ff\u0590-\u05ff\u0900-\u0dff\u0e00-\u0eff\u1f00-\u1fff]")
#: Arabic letters (its blocks and presentation forms) count 1.5: measured 1.14-1.26 tokens for
#: each 4 characters' one in o200k_base (1.13-1.25 at 1.5).
_ARABIC = re.compile("[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")


def token_chars(text: str) -> int:
    """Length of ``text`` for :func:`length_tokens`: its characters, a CJK one counting 4.

    A Greek, Hebrew, Indic or Thai letter counts 2, an Arabic one 1.5 (rounded down over the
    text); Latin, Cyrillic (0.94-0.97 of o200k's count at 1) and the rest count 1.
    """
    if text.isascii():
        return len(text)
    return (
        len(text)
        + (WIDE_CHARS - 1) * len(_WIDE.findall(text))
        + len(_DOUBLE.findall(text))
        + len(_ARABIC.findall(text)) // 2
    )


def estimate_tokens(text: str) -> int:
    """Rough token count of ``text``: four characters a token (English prose), one a CJK one.

    Other scripts as :func:`token_chars` counts them.
    """
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
