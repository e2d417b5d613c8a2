"""Credentials never printed: URLs lose their ``user:password@`` and key-like query values.

:func:`redact_url` cleans one URL (judge base URLs in run metadata, the Label Studio URL in
messages); :func:`redact_text` cleans every URL inside a message, and the CLI applies it to
each error line it prints, so a URL with credentials that reaches an error is still shown
without them. It also masks the value of every key variable (:data:`SECRET_ENV`) and any
API-key-shaped word (``sk-...``): a server's 400 that echoed the key ("Incorrect API key
provided: sk-...") printed it on the error line and in a study's log.
"""

from __future__ import annotations

import os
import re
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

#: Query parameters that carry credentials in some endpoints' URLs (compared lower-case, ``-``
#: read as ``_``), and the endings of such names (``api-key``, ``subscription-key``, ``x_token``).
SECRET_PARAMS = ("key", "token", "sig", "signature", "code", "password", "secret")

#: The environment variables holding keys (judge providers, Label Studio).
SECRET_ENV = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LABEL_STUDIO_API_KEY")

#: OpenAI (``sk-``, ``sk-proj-``) and Anthropic (``sk-ant-``) key shapes.
_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")

_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()\[\]]+")


def redact_url(url: str | None) -> str | None:
    """``url`` without credentials: user and password, and key-like query parameters."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<unparseable URL>"
    netloc = f"***@{host}{port}" if parts.username or parts.password else f"{host}{port}"
    query = urlencode(
        [
            (k, "***" if k.lower().replace("-", "_").endswith(SECRET_PARAMS) else v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
        ],
        safe="*",
    )
    return urlunsplit(SplitResult(parts.scheme, netloc, parts.path, query, parts.fragment))


def _clean(match: re.Match[str]) -> str:
    url = match.group(0)
    trail = ""
    while url and url[-1] in ".,;:!?":  # sentence punctuation after a URL
        trail, url = url[-1] + trail, url[:-1]
    parts = urlsplit(url) if url else None
    if parts is None or not (parts.username or parts.password or parts.query):
        return match.group(0)
    return f"{redact_url(url)}{trail}"


def looks_like_key(text: str) -> bool:
    """Whether ``text`` holds an API key: a key variable's value or a ``sk-...`` word."""
    return redact_text(text) != text


def redact_text(text: str) -> str:
    """``text`` with every URL passed through :func:`redact_url` and keys masked as ``***``."""
    for name in SECRET_ENV:
        value = os.environ.get(name, "").strip()
        if len(value) >= 8:
            text = text.replace(value, "***")
    text = _KEY.sub("***", text)
    if "://" not in text:
        return text
    return _URL.sub(_clean, text)
