"""The API key of a vendor SDK, read from the environment (never written anywhere)."""

from __future__ import annotations

import os

from failcodes.errors import ConfigError


def api_key(var: str, vendor: str, hint: str = "") -> str:
    """The key in environment variable ``var``; a ConfigError naming it when unset or empty."""
    key = os.environ.get(var)
    if not key:
        raise ConfigError(f"no {vendor} API key: set {var}{hint}, or use --judge offline")
    return key
