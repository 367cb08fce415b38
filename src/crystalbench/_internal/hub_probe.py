"""Whether the Hugging Face hub can be reached, found out in seconds before a load needs it.

``huggingface_hub`` (under sentence-transformers and ``datasets``) retries an unreachable hub
with back-off for a minute or more before it gives up: offline, the README's first scoring
command with the default encoder spent 82 s in retries before its error. Loaders ask
:func:`hub_unreachable_reason` first, when what they load is not on this machine:

- offline mode (``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE`` or ``HF_DATASETS_OFFLINE`` set to
  ``1``/``true``/``yes``/``on``) answers at once, with no network at all;
- otherwise one probe asks the hub's address (``HF_ENDPOINT``, else
  :data:`~crystalbench.config.settings.HUB_ENDPOINT`) for a response within
  :data:`~crystalbench.config.settings.HUB_PROBE_TIMEOUT_S` seconds (DNS included: the probe runs
  on a
  thread that is abandoned when it is late). Any HTTP answer below 500 counts as reachable; a
  refused connection, a timeout, a DNS failure or a 5xx does not. The verdict is kept for the
  process (one probe per endpoint).

``CRYSTALBENCH_HUB_PROBE_TIMEOUT`` sets the probe's timeout; ``0`` turns it off (every load
goes to the hub as before). Proxies configured in the environment (``HTTPS_PROXY``) are used,
as ``huggingface_hub`` uses them.
"""

from __future__ import annotations

import os
import threading
import urllib.error
import urllib.request

from crystalbench.config.settings import HUB_ENDPOINT, HUB_PROBE_TIMEOUT_ENV, HUB_PROBE_TIMEOUT_S

__all__ = [
    "OFFLINE_VARIABLES",
    "forget_probes",
    "hub_endpoint",
    "hub_unreachable_reason",
    "offline_mode",
    "probe_hub",
    "probe_timeout",
]

OFFLINE_VARIABLES: tuple[str, ...] = (
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_DATASETS_OFFLINE",
)
"""Environment variables that put the Hugging Face libraries in offline mode."""

_TRUE = ("1", "true", "yes", "on")

_verdicts: dict[str, str | None] = {}
_lock = threading.Lock()


def hub_endpoint() -> str:
    """The hub's address: ``$HF_ENDPOINT``, else ``https://huggingface.co``.

    Examples:
        >>> hub_endpoint().startswith("http")
        True
    """
    return (os.environ.get("HF_ENDPOINT") or HUB_ENDPOINT).rstrip("/")


def offline_mode() -> str | None:
    """The variable that puts the Hugging Face libraries offline (``HF_HUB_OFFLINE=1``), or
    ``None``.

    Examples:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"HF_HUB_OFFLINE": "1"}):
        ...     offline_mode()
        'HF_HUB_OFFLINE=1'
    """
    for name in OFFLINE_VARIABLES:
        value = os.environ.get(name, "").strip().lower()
        if value in _TRUE:
            return f"{name}={os.environ[name].strip()}"
    return None


def probe_timeout() -> float:
    """The probe's timeout in seconds (``$CRYSTALBENCH_HUB_PROBE_TIMEOUT``, else the default);
    0 when the probe is off.

    Raises:
        InputError: The variable is not a number, or is negative.

    Examples:
        >>> probe_timeout() >= 0
        True
    """
    raw = os.environ.get(HUB_PROBE_TIMEOUT_ENV)
    if raw is None or not raw.strip():
        return HUB_PROBE_TIMEOUT_S
    from crystalbench.errors import InputError

    try:
        value = float(raw)
    except ValueError:
        raise InputError(
            f"{HUB_PROBE_TIMEOUT_ENV} must be a number of seconds, got {raw!r}"
        ) from None
    if not value >= 0 or value == float("inf"):
        raise InputError(f"{HUB_PROBE_TIMEOUT_ENV} must be 0 (off) or a positive number")
    return value


def _ask(url: str, timeout: float, answer: list[str | None]) -> None:
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "crystalbench"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, OSError, ValueError) as exc:  # refused, timeout, DNS, reset
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        if isinstance(reason, TimeoutError):
            answer.append(f"{url} did not answer within {timeout:g} s")
        else:
            answer.append(f"{url} could not be reached ({type(reason).__name__}: {reason})")
        return
    answer.append(None if status < 500 else f"{url} answered HTTP {status}")


def probe_hub(endpoint: str | None = None, *, timeout: float | None = None) -> str | None:
    """Ask the hub for an answer within ``timeout`` seconds; ``None`` when it answers, else why
    not (one sentence). Not cached: see :func:`hub_unreachable_reason`.

    Args:
        endpoint: The hub's address (default :func:`hub_endpoint`).
        timeout: Seconds to wait, name resolution included (default :func:`probe_timeout`).

    Examples:
        >>> import socket
        >>> closed = socket.socket()
        >>> closed.bind(("127.0.0.1", 0))
        >>> port = closed.getsockname()[1]
        >>> closed.close()  # nothing listens there: the connection is refused
        >>> "could not be reached" in probe_hub(f"http://127.0.0.1:{port}", timeout=2)
        True
    """
    url = (endpoint or hub_endpoint()).rstrip("/") + "/"
    wait = probe_timeout() if timeout is None else timeout
    answer: list[str | None] = []
    thread = threading.Thread(target=_ask, args=(url, wait, answer), daemon=True)
    thread.start()
    thread.join(wait + 0.25)
    if not answer:
        return f"{url} did not answer within {wait:g} s"
    return answer[0]


def hub_unreachable_reason() -> str | None:
    """Why the hub cannot be used now (offline mode, or the cached probe's answer), or
    ``None`` when it can (or the probe is off).

    Examples:
        >>> reason = hub_unreachable_reason()
        >>> reason is None or isinstance(reason, str)
        True
    """
    offline = offline_mode()
    if offline is not None:
        return f"offline mode is on ({offline})"
    timeout = probe_timeout()
    if timeout == 0:
        return None
    endpoint = hub_endpoint()
    with _lock:
        if endpoint in _verdicts:
            return _verdicts[endpoint]
    verdict = probe_hub(endpoint, timeout=timeout)
    with _lock:
        _verdicts[endpoint] = verdict
    return verdict


def forget_probes() -> None:
    """Drop the cached probe verdicts (the next :func:`hub_unreachable_reason` probes again)."""
    with _lock:
        _verdicts.clear()
