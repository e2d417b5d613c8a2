"""Credentials never printed: URLs lose their ``user:password@`` and key-like query values.

:func:`redact_url` cleans one URL (judge base URLs in run metadata, the Label Studio URL in
messages); :func:`redact_text` cleans every URL inside a message, and the CLI applies it to
each error line it prints, so a URL with credentials that reaches an error is still shown
without them.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["SECRET_PARAMS", "redact_text", "redact_url"]

#: Query parameters that carry credentials in some endpoints' URLs.
SECRET_PARAMS = ("key", "api_key", "apikey", "token", "access_token", "sig", "signature")

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
            (k, "***" if k.lower() in SECRET_PARAMS else v)
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


def redact_text(text: str) -> str:
    """``text`` with every URL in it passed through :func:`redact_url`."""
    if "://" not in text:
        return text
    return _URL.sub(_clean, text)
