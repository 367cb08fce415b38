"""Sockets and connections of crystalbench's servers: loopback checks, the listening socket,
and the connection timeouts uvicorn lacks.

Shared by the reward server and the review app. uvicorn and h11 (the ``serve`` or ``review``
extra) are imported only inside the functions that need them.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Annotated, Any

from pydantic import AfterValidator

from crystalbench._internal.extras import install_command, require
from crystalbench.errors import CrystalbenchError, InputError

__all__ = [
    "Port",
    "bind_socket",
    "check_port",
    "guarded_protocol",
    "is_loopback",
    "port_problem",
    "require_server_stack",
]


def require_server_stack(what: str, extra: str) -> None:
    """Raise a clear error when uvicorn or Starlette is missing.

    Args:
        what: The server, for the message (``the reward server``).
        extra: The extra that installs the stack (``serve``).

    Raises:
        MissingExtraError: uvicorn or Starlette is not installed.
    """
    require("starlette", "uvicorn", what=what, extra=extra, load=False)


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine.

    Examples:
        >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("localhost")
        (True, True, True)
        >>> is_loopback("0.0.0.0"), is_loopback("10.0.0.5"), is_loopback("")
        (False, False, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def port_problem(port: object) -> str | None:
    """Why ``port`` is not a TCP port number for a server (``None`` when it is one; 0 asks
    the system for a free port).

    Examples:
        >>> port_problem(8420) is None, port_problem(99999)
        (True, '99999 is not a TCP port: give 1-65535, or 0 for a free one')
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        return f"{port!r} is not a TCP port: give 1-65535, or 0 for a free one"
    return None


def _valid_port(port: int) -> int:
    problem = port_problem(port)
    if problem is not None:
        raise ValueError(problem)
    return port


Port = Annotated[int, AfterValidator(_valid_port)]
"""A config field holding a TCP port (0: a free one); a bad one is refused with
:func:`port_problem`'s message, naming where the value came from."""


def check_port(port: object, *, option: str = "--port") -> int:
    """``port`` when it is a TCP port number (0 asks the system for a free one), else a clear
    error naming ``option``.

    Raises:
        InputError: Not an integer, or outside 0-65535.

    Examples:
        >>> check_port(8420), check_port(0)
        (8420, 0)
        >>> check_port(99999)
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: field --port: 99999 is not a TCP port: give 1-65535, \
or 0 for a free one
    """
    problem = port_problem(port)
    if problem is not None:
        raise InputError(problem, field=option)
    return port  # type: ignore[return-value]  # port_problem checked that it is an int


def bind_socket(host: str, port: int, backlog: int) -> socket.socket:
    """A listening, non-blocking TCP socket on ``host:port`` (0: a free port).

    It is created with ``IPPROTO_TCP`` explicitly: asyncio turns Nagle's algorithm off
    (``TCP_NODELAY``) only on accepted sockets whose protocol says TCP, and with Nagle on, a
    response written as headers then body waits for the client's delayed ACK on a kept-alive
    connection (about 40 ms a request).

    Raises:
        InputError: ``port`` is not a TCP port number (:func:`check_port`).
        OSError: The address is in use or not an interface of this machine.

    Examples:
        >>> sock = bind_socket("127.0.0.1", 0, backlog=16)
        >>> sock.getsockname()[1] > 0, sock.proto == socket.IPPROTO_TCP
        (True, True)
        >>> sock.close()
    """
    check_port(port)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def guarded_protocol(*, idle_timeout_s: float, header_timeout_s: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol plus the timeouts it lacks for connections that never finish a
    request.

    uvicorn arms its keep-alive timer only after a response, so a connection that never
    sends anything, or trickles its headers a byte at a time, would stay open for ever (and
    count against ``limit_concurrency``). Here a new connection gets the idle timer at once,
    and a request's headers must be complete ``header_timeout_s`` after its first byte.

    The class extends uvicorn's own h11 protocol, which is not public API: the ``serve``
    and ``review`` extras bound uvicorn to the range this is tested with
    (``tests/packaging/test_packaging_uvicorn.py`` runs the server's limit tests on the
    oldest uvicorn allowed).

    Raises:
        CrystalbenchError: The installed uvicorn has no such protocol class.
    """
    import h11

    try:
        from uvicorn.protocols.http.h11_impl import H11Protocol
    except ImportError as exc:
        from importlib.metadata import version

        raise CrystalbenchError(
            f"uvicorn {version('uvicorn')} has no uvicorn.protocols.http.h11_impl.H11Protocol, "
            "which crystalbench's servers extend; install the uvicorn the extra allows: "
            f"{install_command('serve')}"
        ) from exc

    class GuardedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.timeout_keep_alive = idle_timeout_s  # type: ignore[assignment]
            self._header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            waiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
            if waiting and self._header_timer is None:
                self._header_timer = self.loop.call_later(header_timeout_s, self._too_slow)
            elif not waiting:
                self._cancel_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_header_timer()
            super().connection_lost(exc)

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol
