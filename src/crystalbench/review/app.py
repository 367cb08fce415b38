"""The review app: :func:`create_app` builds the ASGI application, :func:`serve` runs it with
uvicorn (loopback by default, with a warning when bound elsewhere).

Routes::

    GET  /login, POST /login, POST /logout
    GET  /                               what there is to do
    POST /work/<kind>                    hand out the next task (chain or pair)
    GET  /work/<kind>/done               no work left
    GET  /tasks/<id>                     a task given to you
    GET  /tasks/<id>/image               its image (by task id only)
    POST /tasks/<id>/label               your label; the next task opens
    POST /tasks/<id>/skip                give it back
    GET  /adjudicate, /adjudicate/<id>   adjudicators: disagreements, lowest agreement first
    POST /adjudicate/<id>                the final decision
    GET  /admin, /admin/audit            admins: progress, agreement, audit log
    POST /admin/export                   admins: download an export
    GET  /static/...                     CSS and JavaScript
"""

from __future__ import annotations

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

import socket
import sys
from typing import Any

from crystalbench.config.settings import (
    REVIEW_BACKLOG,
    REVIEW_HEADER_TIMEOUT_S,
    REVIEW_HOST,
    REVIEW_IDLE_TIMEOUT_S,
    REVIEW_MAX_HEADER_BYTES,
    REVIEW_PORT,
)
from crystalbench.review import routes, routes_admin
from crystalbench.review.settings import ReviewSettings
from crystalbench.review.web import STATIC, AppState, RequestGuard, make_templates, page
from crystalbench.serving.connections import bind_socket as _bind_socket
from crystalbench.serving.connections import guarded_protocol, is_loopback


def create_app(db: Any, settings: ReviewSettings | None = None) -> Any:
    """The review app over an open :class:`~crystalbench.review.db.Database`.

    Examples:
        >>> from crystalbench.review.db import Database
        >>> app = create_app(Database("sqlite:///:memory:"))
        >>> type(app).__name__
        'RequestGuard'
    """
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    settings = settings or ReviewSettings()

    def health(_request: Any) -> Any:
        return PlainTextResponse("ok\n")

    table = [
        Route("/login", page(routes.login_form, role=None), methods=["GET"]),
        Route("/login", page(routes.login, role=None, post=True, csrf=False), methods=["POST"]),
        Route("/logout", page(routes.logout, post=True), methods=["POST"]),
        Route("/", page(routes.home), methods=["GET"]),
        Route("/work/{kind}", page(routes.start_work, post=True), methods=["POST"]),
        Route("/work/{kind}/done", page(routes.work_done), methods=["GET"]),
        Route("/tasks/{task_id:int}", page(routes.task_page), methods=["GET"]),
        Route("/tasks/{task_id:int}/image", page(routes.task_image), methods=["GET"]),
        Route(
            "/tasks/{task_id:int}/label",
            page(routes.submit, post=True),
            methods=["POST"],
        ),
        Route("/tasks/{task_id:int}/skip", page(routes.skip, post=True), methods=["POST"]),
        Route(
            "/adjudicate", page(routes_admin.adjudication_list, role="adjudicator"), methods=["GET"]
        ),
        Route(
            "/adjudicate/{task_id:int}",
            page(routes_admin.adjudication_page, role="adjudicator"),
            methods=["GET"],
        ),
        Route(
            "/adjudicate/{task_id:int}",
            page(routes_admin.adjudicate, role="adjudicator", post=True),
            methods=["POST"],
        ),
        Route("/admin", page(routes_admin.admin_page, role="admin"), methods=["GET"]),
        Route("/admin/audit", page(routes_admin.audit_page, role="admin"), methods=["GET"]),
        Route(
            "/admin/export", page(routes_admin.export, role="admin", post=True), methods=["POST"]
        ),
        Route("/healthz", health, methods=["GET"]),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    inner = Starlette(routes=table)
    inner.state.review = AppState(db=db, settings=settings, templates=make_templates())
    return RequestGuard(inner, max_body_bytes=settings.max_body_bytes)


STATE_CHANGING_ROUTES: tuple[str, ...] = (
    "/login",
    "/logout",
    "/work/{kind}",
    "/tasks/{task_id:int}/label",
    "/tasks/{task_id:int}/skip",
    "/adjudicate/{task_id:int}",
    "/admin/export",
)
"""Every POST route (the security tests check each refuses a request without a CSRF token)."""


def exposure_warning(host: str) -> str | None:
    """The warning printed when ``host`` is reachable from other machines, else ``None``.

    Examples:
        >>> exposure_warning("127.0.0.1") is None
        True
        >>> "other machines" in exposure_warning("0.0.0.0")
        True
    """
    if is_loopback(host):
        return None
    return (
        f"warning: the review app is bound to {host}, reachable from other machines. It speaks "
        "plain HTTP: passwords and labels cross the network unencrypted. Put it behind a "
        "TLS proxy (and pass --secure-cookies), or bind 127.0.0.1 and use an SSH tunnel."
    )


def bind_socket(host: str, port: int) -> socket.socket:
    """The review app's listening socket on ``host:port`` (0: a free port), with its backlog
    (:func:`crystalbench.serving.connections.bind_socket`).

    Raises:
        OSError: The address is in use or not an interface of this machine.
    """
    return _bind_socket(host, port, REVIEW_BACKLOG)


def serve(
    db: Any,
    *,
    host: str = REVIEW_HOST,
    port: int = REVIEW_PORT,
    settings: ReviewSettings | None = None,
    verbose: bool = False,
    ready: Any = None,
) -> None:
    """Run the app with uvicorn until interrupted.

    Args:
        db: An open database.
        host: Address to bind (loopback by default; anything else prints a warning).
        port: Port (0: a free one).
        settings: App settings.
        verbose: Log every request.
        ready: Called with ``(host, port)`` once the socket is bound.
    """
    import logging

    import uvicorn

    warning = exposure_warning(host)
    if warning is not None:
        print(warning, file=sys.stderr)
    sock = bind_socket(host, port)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(db, settings),
        http=guarded_protocol(
            idle_timeout_s=REVIEW_IDLE_TIMEOUT_S, header_timeout_s=REVIEW_HEADER_TIMEOUT_S
        ),
        lifespan="off",
        log_config=None,
        log_level=logging.INFO if verbose else logging.WARNING,
        access_log=verbose,
        h11_max_incomplete_event_size=REVIEW_MAX_HEADER_BYTES,
        server_header=False,
        proxy_headers=False,  # the client address is the socket's: X-Forwarded-For is not trusted
        timeout_graceful_shutdown=5,
    )
    if ready is not None:
        ready(host, bound)
    uvicorn.Server(config).run(sockets=[sock])
