"""Users, passwords, sessions, CSRF tokens and the login rate limit.

- **Passwords** are hashed with argon2id (argon2-cffi's ``PasswordHasher`` defaults, rehashed
  on login when those defaults change); a login with an unknown name still verifies against a
  dummy hash, so it takes as long as a wrong password.
- **Sessions**: the cookie holds a random 256-bit token; the database holds only its SHA-256,
  the user, a per-session CSRF token and the expiry. Logging out deletes the row.
- **CSRF**: every state-changing request carries the session's token (a hidden form field or
  an ``X-CSRF-Token`` header), compared in constant time; the login form, which has no
  session yet, uses a double-submit cookie.
- **Rate limit**: :class:`LoginLimiter` counts failures per user name and per client address;
  after ``REVIEW_LOGIN_MAX_FAILURES`` in ``REVIEW_LOGIN_WINDOW_S`` further attempts get 429 for
  ``REVIEW_LOGIN_LOCKOUT_S``, doubling with each failure beyond (at most
  ``REVIEW_LOGIN_LOCKOUT_MAX_S``). The counts live in the server process.
"""

from __future__ import annotations

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from crystalbench.config.settings import (
    REVIEW_LOGIN_LOCKOUT_MAX_S,
    REVIEW_LOGIN_LOCKOUT_S,
    REVIEW_LOGIN_MAX_FAILURES,
    REVIEW_LOGIN_WINDOW_S,
    REVIEW_MAX_NAME_CHARS,
    REVIEW_PASSWORD_MIN_CHARS,
    REVIEW_SESSION_HOURS,
)
from crystalbench.errors import InputError
from crystalbench.review import audit
from crystalbench.review.models import ROLES, LoginSession, User, utcnow

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]*")

_hasher: Any = None
_dummy_hash: str | None = None


def password_hasher() -> Any:
    """The shared argon2 ``PasswordHasher``."""
    global _hasher
    if _hasher is None:
        from argon2 import PasswordHasher

        _hasher = PasswordHasher()
    return _hasher


def hash_password(password: str) -> str:
    """An argon2id hash of ``password`` (``$argon2id$v=19$...``)."""
    return str(password_hasher().hash(password))


def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches ``stored``; with ``stored`` ``None`` a dummy hash is
    checked so the time taken does not tell whether the user exists."""
    from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

    global _dummy_hash
    if stored is None:
        if _dummy_hash is None:
            _dummy_hash = hash_password(secrets.token_hex(16))
        stored = _dummy_hash
        password = password + "\x00never"
    try:
        return bool(password_hasher().verify(stored, password))
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def check_name(name: str) -> str:
    """A valid user name (letters, digits, ``._@-``, starting with a letter or digit).

    Raises:
        InputError: The name is empty, too long or has other characters.

    Examples:
        >>> check_name("ana.lopez")
        'ana.lopez'
        >>> check_name("<b>")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: field NAME: ...
    """
    if not _NAME.fullmatch(name) or len(name) > REVIEW_MAX_NAME_CHARS:
        raise InputError(
            f"user names are 1-{REVIEW_MAX_NAME_CHARS} letters, digits or . _ @ -, starting "
            f"with a letter or digit; got {name!r}",
            field="NAME",
        )
    return name


def check_password(password: str) -> str:
    """Refuse a password shorter than ``REVIEW_PASSWORD_MIN_CHARS``.

    Raises:
        InputError: Too short.
    """
    if len(password) < REVIEW_PASSWORD_MIN_CHARS:
        raise InputError(
            f"the password must have at least {REVIEW_PASSWORD_MIN_CHARS} characters",
            field="password",
        )
    return password


def role_allows(role: str, needed: str) -> bool:
    """Whether ``role`` may do what ``needed`` may (admin > adjudicator > annotator).

    Examples:
        >>> role_allows("admin", "adjudicator"), role_allows("annotator", "adjudicator")
        (True, False)
    """
    return ROLES.index(role) >= ROLES.index(needed)


def add_user(
    db: Any, name: str, role: str, password: str, *, update: bool = False, actor: str
) -> User:
    """Create a user (or, with ``update``, change an existing one's role and password; their
    login sessions end, so a running server lets them in again only with the new password,
    at the latest after ``REVIEW_SESSION_CACHE_S``).

    Raises:
        InputError: A bad name, role or password, or the user exists and ``update`` is off.
    """
    from sqlalchemy import delete, select

    check_name(name)
    if role not in ROLES:
        raise InputError(f"role must be one of {', '.join(ROLES)}, got {role!r}", field="--role")
    check_password(password)
    hashed = hash_password(password)
    with db.write() as session:
        user = session.execute(select(User).where(User.name == name)).scalar_one_or_none()
        if user is not None and not update:
            raise InputError(
                f"user {name!r} exists; pass --update to change their role or password",
                field="NAME",
            )
        if user is None:
            user = User(
                name=name, role=role, password_hash=hashed, active=True, created_at=utcnow()
            )
            session.add(user)
            session.flush()
            audit.record(session, "user.add", actor=actor, new={"name": name, "role": role})
        else:
            old = {"name": name, "role": user.role}
            user.role = role
            user.password_hash = hashed
            user.active = True
            ended = session.execute(delete(LoginSession).where(LoginSession.user_id == user.id))
            audit.record(
                session,
                "user.update",
                actor=actor,
                old=old,
                new={
                    "name": name,
                    "role": role,
                    "password": "changed",
                    "sessions_ended": ended.rowcount,
                },
            )
    return user


def token_digest(token: str) -> str:
    """SHA-256 of a session token, as stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_session(session: Any, user: User, *, hours: float = REVIEW_SESSION_HOURS) -> str:
    """Open a login session for ``user``; returns the cookie's token."""
    token = secrets.token_urlsafe(32)
    now = utcnow()
    session.add(
        LoginSession(
            token_hash=token_digest(token),
            user_id=user.id,
            csrf_token=secrets.token_urlsafe(32),
            created_at=now,
            expires_at=now + timedelta(hours=hours),
        )
    )
    return token


def load_session(session: Any, token: str | None) -> tuple[LoginSession, User] | None:
    """The live session and active user of a cookie token, or ``None``."""
    from sqlalchemy import select

    if not token or len(token) > 128:
        return None
    row = session.execute(
        select(LoginSession, User)
        .join(User, User.id == LoginSession.user_id)
        .where(LoginSession.token_hash == token_digest(token))
    ).first()
    if row is None:
        return None
    login, user = row
    if login.expires_at <= utcnow() or not user.active:
        return None
    return login, user


def end_session(session: Any, token: str) -> None:
    """Delete the session of ``token`` (logout)."""
    from sqlalchemy import delete

    session.execute(delete(LoginSession).where(LoginSession.token_hash == token_digest(token)))


def same_token(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison of two CSRF tokens (both must be present)."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


@dataclass
class _Counter:
    failures: deque[float] = field(default_factory=deque)
    locked_until: float = 0.0


class LoginLimiter:
    """Failed-login counts per key (``user:<name>``, ``ip:<address>``), in this process.

    Examples:
        >>> limiter = LoginLimiter(max_failures=2, window_s=60, lockout_s=10, clock=lambda: 0.0)
        >>> limiter.retry_after(["user:x"])
        0.0
        >>> limiter.failed(["user:x"]); limiter.failed(["user:x"])
        >>> limiter.retry_after(["user:x"])
        10.0
    """

    def __init__(
        self,
        *,
        max_failures: int = REVIEW_LOGIN_MAX_FAILURES,
        window_s: float = REVIEW_LOGIN_WINDOW_S,
        lockout_s: float = REVIEW_LOGIN_LOCKOUT_S,
        lockout_max_s: float = REVIEW_LOGIN_LOCKOUT_MAX_S,
        clock: Any = time.monotonic,
    ) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self.lockout_s = lockout_s
        self.lockout_max_s = lockout_max_s
        self.clock = clock
        self._counters: dict[str, _Counter] = {}
        self._lock = threading.Lock()

    def retry_after(self, keys: list[str]) -> float:
        """Seconds until any of ``keys`` may try again (0: now)."""
        now = self.clock()
        with self._lock:
            waits = [c.locked_until - now for k in keys if (c := self._counters.get(k))]
        return max([0.0, *waits])

    def failed(self, keys: list[str]) -> None:
        """Count a failed attempt against every key; lock the ones over the limit."""
        now = self.clock()
        with self._lock:
            if len(self._counters) > 100_000:  # bounded memory under a spray of names
                self._counters.clear()
            for key in keys:
                counter = self._counters.setdefault(key, _Counter())
                while counter.failures and counter.failures[0] < now - self.window_s:
                    counter.failures.popleft()
                counter.failures.append(now)
                beyond = len(counter.failures) - self.max_failures
                if beyond >= 0:
                    wait = min(self.lockout_s * (2**beyond), self.lockout_max_s)
                    counter.locked_until = now + wait

    def succeeded(self, keys: list[str]) -> None:
        """Forget the failures of ``keys`` after a good login."""
        with self._lock:
            for key in keys:
                self._counters.pop(key, None)
