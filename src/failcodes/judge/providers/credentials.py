"""The API key of a vendor SDK, read from the environment (never written anywhere)."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from failcodes.errors import ConfigError


def api_key(var: str, vendor: str, hint: str = "") -> str:
    """The key in environment variable ``var``; a ConfigError naming it when unset or empty."""
    key = os.environ.get(var)
    if not key:
        raise ConfigError(f"no {vendor} API key: set {var}{hint}, or use --judge offline")
    if not key.isascii() or not key.isprintable() or any(c.isspace() for c in key):
        # an HTTP header takes printable ASCII only: the SDK failed on the first call (a
        # UnicodeEncodeError traceback, or a connection error after the run was created)
        raise ConfigError(
            f"{var} holds spaces, line breaks or non-ASCII characters (pasted with a line "
            "break?); set it to the key alone (the key is not shown)"
        )
    return key


def base_url(given: str | None, var: str) -> str | None:
    """The endpoint from ``--base-url`` (``given``), else ``var``; None for the vendor's own.

    Anything but an ``http(s)://HOST...`` URL is a :class:`ConfigError` naming where it came
    from (the SDK only failed on its first call, after the run folder was made).
    """
    value = given or os.environ.get(var) or None
    if value is None:
        return None
    parts = urlsplit(value)
    if value != value.strip() or parts.scheme not in ("http", "https") or not parts.hostname:
        where = "--base-url" if given else var
        shown = value if parts.password is None else value.replace(parts.password, "***")
        raise ConfigError(
            f"{where} {shown!r} is not an http(s) URL (expected e.g. http://127.0.0.1:8000/v1)"
        )
    return value
