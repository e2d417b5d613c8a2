"""SDK failures mapped onto the engine's error classes (shared by the Anthropic and OpenAI SDKs).

Both SDKs expose the same exception names. 429, 5xx (Anthropic's 529 overloaded_error too),
408/409, timeouts and connection errors become
:class:`~failcodes.judge.providers.base.RetryableProviderError` (with the server's
retry-after); a rejected key a :class:`~failcodes.errors.ConfigError`; the rest, and a body
that is not JSON, a :class:`~failcodes.errors.ProviderError` naming the judge, the endpoint
and the HTTP status. Every message names the endpoint called (without credentials), so the
one line a run ends with says where the failure was.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from failcodes.errors import ConfigError, ProviderError
from failcodes.judge.providers.base import (
    ProviderReply,
    RetryableProviderError,
    parse_retry_after,
    too_deep,
)
from failcodes.judge.providers.jsontext import body_json
from failcodes.redact import redact_url


@contextmanager
def sdk_errors(sdk: Any, *, spec: str, auth_message: str, url: str) -> Iterator[None]:
    """Translate the SDK exceptions raised inside the block (``url``: the endpoint called)."""
    try:
        yield
    except sdk.AuthenticationError:
        raise ConfigError(auth_message) from None
    except (sdk.RateLimitError, sdk.InternalServerError) as exc:
        raise RetryableProviderError(
            f"HTTP {exc.status_code}{_kind(exc)} from {_url(exc, url)}",
            retry_after=parse_retry_after(exc.response.headers),
        ) from None
    except sdk.APIStatusError as exc:
        if exc.status_code in (408, 409):
            raise RetryableProviderError(
                f"HTTP {exc.status_code} from {_url(exc, url)}",
                retry_after=parse_retry_after(exc.response.headers),
            ) from None
        detail = getattr(exc, "api_message", None) or exc.message
        raise ProviderError(
            f"{spec}: HTTP {exc.status_code} from {_url(exc, url)}: {detail}"
        ) from None
    except sdk.APIConnectionError as exc:  # includes timeouts
        raise RetryableProviderError(f"{type(exc).__name__}{_endpoint(exc)}") from None
    except json.JSONDecodeError as exc:  # a JSON content type over a body that is not JSON
        raise ProviderError(not_json(spec, url, f"({exc.msg} at {exc.pos})")) from None


async def post_json(
    provider: Any,
    path: str,
    body: dict[str, Any],
    auth: str,
    read: Callable[[dict[str, Any]], ProviderReply],
    **options: Any,
) -> ProviderReply:
    """POST ``body`` to ``path`` as the SDK's call would; ``read`` the JSON the server sent.

    Sent as built and kept as sent back (``cast_to=object``), as a batch result is: the SDK's
    types walked over the body and a model built from the reply cost 20-45% of the client's
    CPU in a judge run (issue 30), and the journal kept the SDK's optional fields as null.
    """
    url = f"{str(provider.client.base_url).rstrip('/')}{path}"
    try:
        with sdk_errors(provider.sdk, spec=provider.spec, auth_message=auth, url=url):
            reply = await provider.client.post(path, body=body, cast_to=object, **options)
            if isinstance(reply, str):  # not a JSON content type: the SDK's text
                reply = body_json(reply)
    except RecursionError:  # a body nested too deeply to decode
        return too_deep(body)
    if not isinstance(reply, dict):  # an HTML page, a JSON list or null
        raise ProviderError(not_json(provider.spec, url, f"({str(reply)[:80]!r})"))
    return read(reply)


def not_json(spec: str, url: str, detail: str) -> str:
    """The message of a reply whose body is not the API's JSON."""
    return f"{spec}: {redact_url(url)} answered with a body that is not JSON {detail}"


def _kind(exc: Any) -> str:
    """`` (overloaded_error)``: the error type of an Anthropic-style error body, if any."""
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return f" ({kind})" if isinstance(kind, str) and kind else ""


def _url(exc: Exception, fallback: str) -> str:
    """The URL a status error came from (no query string), else ``fallback`` (redacted)."""
    return _request_url(exc) or redact_url(fallback) or fallback


def _endpoint(exc: Exception) -> str:
    """`` (cannot reach SCHEME://HOST:PORT/PATH)`` for a connection error (no query string)."""
    url = _request_url(exc)
    return f" (cannot reach {url})" if url else ""


def _request_url(exc: Exception) -> str | None:
    """``SCHEME://HOST:PORT/PATH`` of the request that failed (no query string), if known."""
    url = getattr(getattr(exc, "request", None), "url", None)
    if url is None:
        return None
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}{url.path}"
