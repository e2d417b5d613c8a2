"""SDK failures mapped onto the engine's error classes (shared by the Anthropic and OpenAI SDKs).

Both SDKs expose the same exception names. 429, 5xx, 408/409, timeouts and connection errors
become :class:`~failcodes.judge.providers.base.RetryableProviderError` (with the server's
retry-after); a rejected key a :class:`~failcodes.errors.ConfigError`; the rest a
:class:`~failcodes.errors.ProviderError` naming the judge and the HTTP status.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from failcodes.errors import ConfigError, ProviderError
from failcodes.judge.providers.base import RetryableProviderError, parse_retry_after


@contextmanager
def sdk_errors(sdk: Any, *, spec: str, auth_message: str) -> Iterator[None]:
    """Translate the SDK exceptions raised inside the block."""
    try:
        yield
    except sdk.AuthenticationError:
        raise ConfigError(auth_message) from None
    except (sdk.RateLimitError, sdk.InternalServerError) as exc:
        raise RetryableProviderError(
            f"HTTP {exc.status_code}", retry_after=parse_retry_after(exc.response.headers)
        ) from None
    except sdk.APIStatusError as exc:
        if exc.status_code in (408, 409):
            raise RetryableProviderError(
                f"HTTP {exc.status_code}", retry_after=parse_retry_after(exc.response.headers)
            ) from None
        detail = getattr(exc, "api_message", None) or exc.message
        raise ProviderError(f"{spec}: HTTP {exc.status_code}: {detail}") from None
    except sdk.APIConnectionError as exc:  # includes timeouts
        raise RetryableProviderError(f"{type(exc).__name__}{_endpoint(exc)}") from None


def _endpoint(exc: Exception) -> str:
    """`` (cannot reach SCHEME://HOST:PORT/PATH)`` for a connection error (no query string)."""
    url = getattr(getattr(exc, "request", None), "url", None)
    if url is None:
        return ""
    port = f":{url.port}" if url.port else ""
    return f" (cannot reach {url.scheme}://{url.host}{port}{url.path})"
