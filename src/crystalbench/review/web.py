"""The web plumbing of the review app: security headers, forms, sessions, CSRF and templates
(the request guard is :mod:`crystalbench.serving`'s, shared with the reward server). Routes
live in :mod:`crystalbench.review.routes` and :mod:`crystalbench.review.routes_admin`;
:func:`crystalbench.review.app.create_app` joins them.

Every page handler is a plain function of a :class:`Context`, run in Starlette's thread pool
(the database calls are synchronous); :func:`page` wraps it with the checks every request
gets: the login session, the role, and for a ``POST`` the body limits, a same-origin check
and the CSRF token.
"""

from __future__ import annotations

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from crystalbench.config.settings import (
    REVIEW_LOGIN_COOKIE,
    REVIEW_MAX_FORM_FIELDS,
    REVIEW_MAX_HEADER_BYTES,
    REVIEW_SESSION_CACHE_S,
    REVIEW_SESSION_COOKIE,
    SERVING_BODY_GRACE_S,
    SERVING_MIN_BODY_BYTES_PER_S,
)
from crystalbench.review.auth import LoginLimiter, load_session, role_allows, same_token
from crystalbench.review.models import LoginSession, User
from crystalbench.review.settings import ReviewSettings
from crystalbench.serving.limits import CLOSING_STATUSES, BodyRefused
from crystalbench.serving.limits import RequestGuard as _RequestGuard

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""No inline script or style, nothing from another origin, never framed."""

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


class RequestGuard(_RequestGuard):
    """The shared :class:`crystalbench.serving.limits.RequestGuard` (431 for a request line
    plus headers over ``max_header_bytes``; for a state-changing method 411 for a chunked
    body, 400 for a malformed ``Content-Length``, 413 for one over ``max_body_bytes`` and for
    a body that turns out longer than it said, 408 for a body slower than the minimum rate
    after its grace period), with plain-text refusals, security headers on
    every response (CSP, nosniff, no framing) and ``Cache-Control: no-store`` on every page
    (not on static files).
    """

    def __init__(
        self,
        app: Any,
        *,
        max_body_bytes: int,
        max_header_bytes: int = REVIEW_MAX_HEADER_BYTES,
        min_body_bytes_per_s: float = SERVING_MIN_BODY_BYTES_PER_S,
        body_grace_s: float = SERVING_BODY_GRACE_S,
    ) -> None:
        super().__init__(
            app,
            max_header_bytes=max_header_bytes,
            max_body_bytes=max_body_bytes,
            min_body_bytes_per_s=min_body_bytes_per_s,
            body_grace_s=body_grace_s,
        )

    def response_headers(
        self, scope: Mapping[str, Any], headers: list[tuple[bytes, bytes]]
    ) -> list[tuple[bytes, bytes]]:
        """The security headers, and ``no-store`` on pages that set no cache policy."""
        extra = list(SECURITY_HEADERS)
        is_static = scope.get("path", "").startswith("/static/")
        if not is_static and all(name.lower() != b"cache-control" for name, _ in headers):
            extra.append((b"cache-control", b"no-store"))
        return extra


class FormError(Exception):
    """A body that is not a small URL-encoded UTF-8 form (400/415)."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_form(content_type: str, body: bytes) -> dict[str, str]:
    """A URL-encoded form as a dict (the last of repeated fields wins).

    Raises:
        FormError: Another content type (415), bytes that are not UTF-8, or too many fields.

    Examples:
        >>> parse_form("application/x-www-form-urlencoded", b"label=match&note=a+b")
        {'label': 'match', 'note': 'a b'}
    """
    if not body:
        return {}
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise FormError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send an URL-encoded form")
    try:
        text = body.decode("utf-8")
        pairs = parse_qsl(
            text,
            keep_blank_values=True,
            max_num_fields=REVIEW_MAX_FORM_FIELDS,
            errors="strict",
        )
    except (UnicodeDecodeError, ValueError) as exc:
        raise FormError(HTTPStatus.BAD_REQUEST, f"malformed form ({exc})") from None
    return dict(pairs)


def same_origin(headers: Mapping[str, str]) -> bool:
    """Whether a request's ``Origin`` (when sent) names the host it was sent to, and the
    browser does not call it cross-site.

    Examples:
        >>> same_origin({"host": "127.0.0.1:8420", "origin": "http://127.0.0.1:8420"})
        True
        >>> same_origin({"host": "127.0.0.1:8420", "origin": "http://evil.example"})
        False
        >>> same_origin({"host": "127.0.0.1:8420"})
        True
    """
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return False
    origin = headers.get("origin")
    if origin is None:
        return True
    if origin == "null":
        return False
    return urlsplit(origin).netloc.lower() == headers.get("host", "").lower()


def local_path(target: str | None, default: str = "/") -> str:
    """``target`` when it is a path on this site, else ``default`` (no open redirects).

    Examples:
        >>> local_path("/tasks/3"), local_path("//evil.example/x"), local_path("https://x")
        ('/tasks/3', '/', '/')
    """
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target


class TtlCache:
    """A tiny time-bounded cache for figures every page shows (queue progress)."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._values: dict[Any, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        now = time.monotonic()
        with self._lock:
            hit = self._values.get(key)
            if hit is not None and now - hit[0] < self.ttl_s:
                return hit[1]
        value = compute()
        with self._lock:
            self._values[key] = (now, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


class SessionCache:
    """Login sessions looked up in the last ``ttl_s`` seconds, so a page does not pay a
    database round trip to learn who is asking. Logging out drops the entry at once; a role
    changed at the terminal applies within ``ttl_s``; an expired session is never served."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._entries: dict[str, tuple[float, LoginSession, User]] = {}
        self._lock = threading.Lock()

    def get(self, token: str, db: Any) -> tuple[LoginSession, User] | None:
        """The session and user of a cookie token (from the cache or the database), or ``None``."""
        from crystalbench.review.models import utcnow

        now = time.monotonic()
        with self._lock:
            hit = self._entries.get(token)
        if hit is not None and now - hit[0] < self.ttl_s and hit[1].expires_at > utcnow():
            return hit[1], hit[2]
        with db.read() as session:
            found = load_session(session, token)
        with self._lock:
            if len(self._entries) > 10_000:
                self._entries.clear()
            if found is None:
                self._entries.pop(token, None)
            else:
                self._entries[token] = (now, found[0], found[1])
        return found

    def forget(self, token: str) -> None:
        """Drop a token (logout)."""
        with self._lock:
            self._entries.pop(token, None)


@dataclass
class AppState:
    """What every request of one app shares."""

    db: Any
    settings: ReviewSettings
    templates: Any
    limiter: LoginLimiter = field(default_factory=LoginLimiter)
    progress_cache: TtlCache = field(default_factory=lambda: TtlCache(2.0))
    password_slots: threading.BoundedSemaphore = field(
        default_factory=lambda: threading.BoundedSemaphore(4)
    )
    sessions: SessionCache = field(default_factory=lambda: SessionCache(REVIEW_SESSION_CACHE_S))
    last_expiry: float = 0.0


@dataclass
class Context:
    """One request as a handler sees it."""

    request: Any
    state: AppState
    user: User | None
    login: LoginSession | None
    form: dict[str, str]
    params: dict[str, Any]

    @property
    def db(self) -> Any:
        return self.state.db

    @property
    def settings(self) -> ReviewSettings:
        return self.state.settings

    @property
    def remote(self) -> str | None:
        client = self.request.client
        return client.host if client is not None else None

    @property
    def csrf(self) -> str:
        return self.login.csrf_token if self.login is not None else ""

    def render(self, name: str, status: int = 200, **context: Any) -> Any:
        """An HTML response from template ``name`` (autoescaped)."""
        from starlette.responses import HTMLResponse

        template = self.state.templates.get_template(name)
        values = {
            "user": self.user,
            "csrf": self.csrf,
            "path": self.request.url.path,
            "progress": None,
            "message": None,
        }
        values.update(context)
        return HTMLResponse(template.render(**values), status_code=status)

    def redirect(self, target: str) -> Any:
        """A 303 to ``target`` (a path on this site)."""
        from starlette.responses import RedirectResponse

        return RedirectResponse(local_path(target), status_code=303)

    def error(self, status: HTTPStatus, message: str, **headers: str) -> Any:
        """An error page."""
        response = self.render(
            "error.html", status=status.value, status_text=status.phrase, message=message
        )
        for name, value in headers.items():
            response.headers[name.replace("_", "-")] = value
        return response


def make_templates() -> Any:
    """The Jinja2 environment: package templates, autoescape on for everything."""
    import jinja2

    from crystalbench._version import __version__

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        auto_reload=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals["version"] = __version__
    environment.filters["pct"] = lambda v: "–" if v is None else f"{100 * v:.1f}%"
    environment.filters["num"] = lambda v, digits=3: "–" if v is None else f"{v:.{digits}f}"
    environment.filters["thousands"] = lambda v: f"{v:,}"
    return environment


Handler = Callable[[Context], Any]


def page(
    handler: Handler,
    *,
    role: str | None = "annotator",
    post: bool = False,
    csrf: bool = True,
) -> Callable[[Any], Any]:
    """Wrap a handler with the session, role, body and CSRF checks.

    Args:
        handler: The page function.
        role: The least role that may call it; ``None`` for public pages (login).
        post: Whether it changes state (reads a form; needs the CSRF token).
        csrf: Check the session's CSRF token (off only for the login form, which checks its
            own double-submit cookie).
    """
    from starlette.concurrency import run_in_threadpool

    async def endpoint(request: Any) -> Any:
        state: AppState = request.app.state.review
        form: dict[str, str] = {}
        problem: FormError | None = None
        if post:
            try:
                body = await request.body()
                form = parse_form(request.headers.get("content-type", ""), body)
            except BodyRefused as exc:  # too long, or arriving too slowly
                problem = FormError(exc.status, exc.message)
            except FormError as exc:
                problem = exc
        arguments = (handler, request, state, form, problem, role, post, csrf)
        return await run_in_threadpool(_run, *arguments)

    endpoint.__name__ = handler.__name__
    return endpoint


def _run(
    handler: Handler,
    request: Any,
    state: AppState,
    form: dict[str, str],
    problem: FormError | None,
    role: str | None,
    post: bool,
    csrf: bool,
) -> Any:
    from crystalbench.review.assign import NotVisible

    user = login = None
    token = request.cookies.get(REVIEW_SESSION_COOKIE)
    if token:
        found = state.sessions.get(token, state.db)
        if found is not None:
            login, user = found
    context = Context(request, state, user, login, form, dict(request.path_params))
    if post and not same_origin(request.headers):
        return context.error(HTTPStatus.FORBIDDEN, "cross-site request refused")
    if problem is not None:
        closing = {"connection": "close"} if problem.status in CLOSING_STATUSES else {}
        return context.error(problem.status, str(problem), **closing)
    if role is not None:
        if user is None:
            if post:
                return context.error(HTTPStatus.FORBIDDEN, "log in first")
            return context.redirect(f"/login?next={request.url.path}")
        if not role_allows(user.role, role):
            return context.error(HTTPStatus.FORBIDDEN, f"this page is for the {role} role")
    if post and csrf:
        given = form.get("csrf_token") or request.headers.get("x-csrf-token")
        if login is None or not same_token(given, login.csrf_token):
            return context.error(
                HTTPStatus.FORBIDDEN, "missing or wrong CSRF token: reload the page and try again"
            )
    try:
        return handler(context)
    except NotVisible:
        return context.error(HTTPStatus.NOT_FOUND, "no such task for you")


def login_cookie_ok(context: Context) -> bool:
    """Double-submit check of the login form's CSRF token."""
    return same_token(
        context.form.get("csrf_token"), context.request.cookies.get(REVIEW_LOGIN_COOKIE)
    )
