"""One factory for clients of OpenAI-compatible endpoints (vLLM, SGLang, Ollama, OpenAI...).

Every client crystalbench opens is built here: the LLM judge and the judge matcher
(:mod:`crystalbench.judges`), ``crystal infer`` (:mod:`crystalbench.inference.backends.
openai_compat`) and reference construction (:mod:`crystalbench.references.engine`). So the key
comes from one place, with one rule:

- a key passed in wins; otherwise the environment variable a config names (``api_key_env``,
  default :data:`~crystalbench.config.settings.OPENAI_API_KEY_ENV`, ``OPENAI_API_KEY``) is read;
- the default variable may be unset (local servers need no key) and
  :data:`~crystalbench.config.settings.OPENAI_NO_KEY` is sent; **another variable that is named but
  unset is an error** (:func:`api_key_from_env`): a key the user meant to send is never
  silently replaced by none;
- the key is never written into results, logs or identities.

Timeouts and retries are the caller's (a judge: one deadline, the client's own retries; the
inference backend: a connect timeout inside the total deadline, no client retries because its
runner retries). ``openai`` (the ``openai`` extra) is imported only when a client is built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from crystalbench._internal.extras import require
from crystalbench.config.settings import (
    INFER_CONNECT_TIMEOUT,
    JUDGE_MAX_RETRIES,
    JUDGE_TIMEOUT,
    OPENAI_API_KEY_ENV,
    OPENAI_BASE_URL_ENV,
    OPENAI_NO_KEY,
)
from crystalbench.errors import InputError

__all__ = [
    "api_key_from_env",
    "async_openai_client",
    "default_base_url",
    "openai_client",
    "require_openai",
    "resolve_api_key",
]


def require_openai(what: str) -> Any:
    """The ``openai`` package, or a :class:`~crystalbench._internal.extras.MissingExtraError` saying
    that ``what`` needs it and which extra installs it."""
    return require("openai", what=what, extra="openai")


def api_key_from_env(
    variable: str | None = OPENAI_API_KEY_ENV,
    *,
    what: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The key in ``variable`` (``None`` for an empty name, or for the default variable
    unset: local servers need no key).

    Args:
        variable: The environment variable a config names (``api_key_env``).
        what: Who needs the key, for the message (``model qwen``, ``the judge``).
        environ: The environment (default ``os.environ``).

    Raises:
        InputError: A variable other than the default is named and not set.

    Examples:
        >>> api_key_from_env("OPENAI_API_KEY", environ={})
        >>> api_key_from_env("MY_KEY", environ={"MY_KEY": "sk-1"})
        'sk-1'
        >>> try:
        ...     api_key_from_env("MY_KEY", what="the judge", environ={})
        ... except InputError as error:
        ...     print(error)
        field api_key_env: environment variable MY_KEY is not set (the judge)
    """
    environ = os.environ if environ is None else environ
    if not variable:
        return None
    key = environ.get(variable)
    if key is None and variable != OPENAI_API_KEY_ENV:
        raise InputError(
            f"environment variable {variable} is not set" + (f" ({what})" if what else ""),
            field="api_key_env",
        )
    return key


def resolve_api_key(api_key: str | None, *, environ: Mapping[str, str] | None = None) -> str:
    """The key a client sends: ``api_key``, else ``$OPENAI_API_KEY``, else
    :data:`~crystalbench.config.settings.OPENAI_NO_KEY` (an empty key counts as none).

    Examples:
        >>> resolve_api_key("sk-1"), resolve_api_key(None, environ={"OPENAI_API_KEY": "sk-2"})
        ('sk-1', 'sk-2')
        >>> resolve_api_key("", environ={})
        'EMPTY'
    """
    environ = os.environ if environ is None else environ
    return api_key or environ.get(OPENAI_API_KEY_ENV) or OPENAI_NO_KEY


def default_base_url(environ: Mapping[str, str] | None = None) -> str | None:
    """``$OPENAI_BASE_URL`` when set, else ``None`` (the ``openai`` client's own default, the
    OpenAI API).

    Examples:
        >>> default_base_url({}), default_base_url({"OPENAI_BASE_URL": "http://h:8000/v1"})
        (None, 'http://h:8000/v1')
    """
    environ = os.environ if environ is None else environ
    return environ.get(OPENAI_BASE_URL_ENV) or None


def openai_client(
    base_url: str | None,
    *,
    api_key: str | None = None,
    timeout: float = JUDGE_TIMEOUT,
    max_retries: int = JUDGE_MAX_RETRIES,
    what: str = "an OpenAI-compatible client",
) -> Any:
    """A synchronous ``openai.OpenAI`` client (the judges').

    Args:
        base_url: The endpoint, ending in ``/v1`` (``None``: ``$OPENAI_BASE_URL``, else the
            OpenAI API).
        api_key: The key (see :func:`resolve_api_key`).
        timeout: Seconds per request.
        max_retries: Retries the client makes on connection errors, 408, 409, 429 and 5xx.
        what: Who needs the client, for the error when ``openai`` is missing.

    Examples:
        >>> client = openai_client("http://127.0.0.1:9/v1", timeout=5.0, max_retries=1)
        >>> str(client.base_url), client.timeout, client.max_retries, client.api_key
        ('http://127.0.0.1:9/v1/', 5.0, 1, 'EMPTY')
        >>> client.close()
    """
    openai = require_openai(what)
    return openai.OpenAI(
        base_url=base_url or default_base_url(),
        api_key=resolve_api_key(api_key),
        timeout=timeout,
        max_retries=max_retries,
    )


def async_openai_client(
    base_url: str | None,
    *,
    api_key: str | None = None,
    timeout: float,
    connect_timeout: float = INFER_CONNECT_TIMEOUT,
    max_connections: int = 100,
    max_keepalive_connections: int = 100,
    max_retries: int = 0,
    what: str = "an OpenAI-compatible client",
) -> Any:
    """An ``openai.AsyncOpenAI`` client on its own connection pool (``crystal infer``'s).

    Args:
        base_url: The endpoint, ending in ``/v1`` (``None`` or empty: ``$OPENAI_BASE_URL``,
            else the OpenAI API).
        api_key: The key (see :func:`resolve_api_key`).
        timeout: Seconds per read (the caller bounds the whole request).
        connect_timeout: Seconds to connect (never more than ``timeout``).
        max_connections: Connections the pool may open.
        max_keepalive_connections: Idle connections the pool keeps.
        max_retries: The client's own retries (0: the caller retries).
        what: Who needs the client, for the error when ``openai`` is missing.

    Examples:
        >>> import asyncio
        >>> client = async_openai_client("http://127.0.0.1:9/v1", timeout=30.0)
        >>> client.timeout.connect, client.timeout.read, client.max_retries
        (10.0, 30.0, 0)
        >>> asyncio.run(client.close())
    """
    openai = require_openai(what)
    timeout_value = type(openai.DEFAULT_TIMEOUT)(timeout, connect=min(timeout, connect_timeout))
    limits = type(openai.DEFAULT_CONNECTION_LIMITS)(
        max_connections=max_connections, max_keepalive_connections=max_keepalive_connections
    )
    http_client = openai.DefaultAsyncHttpxClient(limits=limits, timeout=timeout_value)
    return openai.AsyncOpenAI(
        api_key=resolve_api_key(api_key),
        base_url=base_url or default_base_url(),
        max_retries=max_retries,
        timeout=timeout_value,
        http_client=http_client,
    )
