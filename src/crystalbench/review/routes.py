"""Pages of every logged-in user: login, home, the task pages, images, labels.

Annotators reach a task only through the queue (``POST /work/<kind>``), and see a task only
if it was given to them; the image of a task is served by its id alone, read from the
folder its import was checked against.
"""

from __future__ import annotations

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

import secrets
import time
from http import HTTPStatus
from pathlib import Path
from typing import Any

from sqlalchemy import delete, select

from crystalbench.config.settings import (
    REVIEW_LOGIN_COOKIE,
    REVIEW_MAX_NAME_CHARS,
    REVIEW_SESSION_COOKIE,
)
from crystalbench.errors import CrystalbenchError
from crystalbench.review import audit
from crystalbench.review.assign import (
    NotVisible,
    TaskRef,
    any_task,
    next_task,
    previous_task_id,
    queue_progress,
    skip_task,
    submit_label,
    user_done,
    visible_task,
)
from crystalbench.review.auth import (
    end_session,
    hash_password,
    new_session,
    role_allows,
    verify_password,
)
from crystalbench.review.labels import (
    PAIR_LABEL_TEXT,
    REJECT_REASON_TEXT,
    STEP_FLAG_TEXT,
    AcceptNeedsConfirmation,
    SubmissionError,
    parse_submission,
)
from crystalbench.review.models import (
    TASK_KINDS,
    ImportBatch,
    Item,
    LoginSession,
    Task,
    User,
    utcnow,
)
from crystalbench.review.web import Context, local_path, login_cookie_ok

KIND_TITLES = {"chain": "Reference chains", "pair": "Step pairs"}

EXPIRY_EVERY_S = 5.0
"""How often handing out work also expires stale holds (each request would be wasteful)."""


def _kind(context: Context) -> str:
    kind = str(context.params.get("kind", ""))
    if kind not in TASK_KINDS:
        raise NotVisible(kind)
    return kind


def _progress(context: Context, kind: str, session: Any = None) -> dict[str, Any]:
    """The progress bar's figures: the user's count and the queue's (cached for 2 s)."""
    assert context.user is not None
    if session is None:
        with context.db.read() as opened:
            return _progress(context, kind, opened)
    mine = user_done(session, context.user, kind)
    queue = context.state.progress_cache.get(kind, lambda: queue_progress(session, kind))
    return {"kind": kind, "title": KIND_TITLES[kind], "mine": mine, "queue": queue}


# --------------------------------------------------------------------------- login


def login_form(context: Context) -> Any:
    """GET /login: the form, with a fresh double-submit CSRF cookie."""
    if context.user is not None:
        return context.redirect("/")
    token = context.request.cookies.get(REVIEW_LOGIN_COOKIE) or secrets.token_urlsafe(32)
    response = context.render(
        "login.html",
        csrf=token,
        next=local_path(context.request.query_params.get("next")),
        message=None,
    )
    _set_login_cookie(context, response, token)
    return response


def _set_login_cookie(context: Context, response: Any, token: str) -> None:
    response.set_cookie(
        REVIEW_LOGIN_COOKIE,
        token,
        max_age=3600,
        httponly=True,
        samesite="strict",
        secure=context.settings.secure_cookies,
        path="/login",
    )


def login(context: Context) -> Any:
    """POST /login: check the password (rate-limited) and open a session."""
    form = context.form
    target = local_path(form.get("next"))
    if not login_cookie_ok(context):
        return context.error(
            HTTPStatus.FORBIDDEN, "the login form expired or came from elsewhere: reload it"
        )
    name = form.get("name", "").strip()[: REVIEW_MAX_NAME_CHARS + 1]
    password = form.get("password", "")[:1024]
    keys = [f"user:{name.lower()}", f"ip:{context.remote}"]
    wait = context.state.limiter.retry_after(keys)
    if wait > 0:
        with context.db.write() as session:
            audit.record(session, "login.refused", actor=name or "?", remote=context.remote)
        return context.error(
            HTTPStatus.TOO_MANY_REQUESTS,
            f"too many failed logins: try again in {int(wait) + 1} s",
            Retry_After=str(int(wait) + 1),
        )
    with context.db.read() as session:
        user = session.execute(select(User).where(User.name == name)).scalar_one_or_none()
    stored = user.password_hash if user is not None and user.active else None
    with context.state.password_slots:
        ok = verify_password(stored, password)
    if not ok or user is None:
        context.state.limiter.failed(keys)
        with context.db.write() as session:
            audit.record(
                session,
                "login.failed",
                actor=name or "?",
                new={"user_exists": user is not None},
                remote=context.remote,
            )
        response = context.render(
            "login.html",
            status=401,
            csrf=form.get("csrf_token", ""),
            next=target,
            message="Wrong name or password.",
        )
        return response
    context.state.limiter.succeeded(keys[:1])
    with context.db.write() as session:
        session.execute(delete(LoginSession).where(LoginSession.expires_at < utcnow()))
        fresh = session.get(User, user.id)
        from crystalbench.review.auth import password_hasher

        if password_hasher().check_needs_rehash(fresh.password_hash):
            fresh.password_hash = hash_password(password)
        token = new_session(session, fresh, hours=context.settings.session_hours)
        audit.record(session, "login", user=fresh, remote=context.remote)
    response = context.redirect(target)
    response.set_cookie(
        REVIEW_SESSION_COOKIE,
        token,
        max_age=int(context.settings.session_hours * 3600),
        httponly=True,
        samesite="lax",
        secure=context.settings.secure_cookies,
        path="/",
    )
    response.delete_cookie(REVIEW_LOGIN_COOKIE, path="/login")
    return response


def logout(context: Context) -> Any:
    """POST /logout."""
    token = context.request.cookies.get(REVIEW_SESSION_COOKIE, "")
    context.state.sessions.forget(token)
    with context.db.write() as session:
        end_session(session, token)
        audit.record(session, "logout", user=context.user, remote=context.remote)
    response = context.redirect("/login")
    response.delete_cookie(REVIEW_SESSION_COOKIE, path="/")
    return response


# --------------------------------------------------------------------------- work


def home(context: Context) -> Any:
    """GET /: each kind of work with the user's count and the queue's progress."""
    kinds = [_progress(context, kind) for kind in TASK_KINDS]
    return context.render("home.html", kinds=kinds, progress=None)


def _hand_out(context: Context, session: Any, kind: str) -> TaskRef | None:
    assert context.user is not None
    now = time.monotonic()
    expire = now - context.state.last_expiry > EXPIRY_EVERY_S
    if expire:
        context.state.last_expiry = now
    return next_task(
        session,
        context.user,
        kind,
        context.settings,
        remote=context.remote,
        expire_stale=expire,
    )


def _after(kind: str, task: TaskRef | None) -> str:
    return f"/tasks/{task.id}" if task is not None else f"/work/{kind}/done"


def start_work(context: Context) -> Any:
    """POST /work/<kind>: the user's next task (held for them), or the "all done" page."""
    kind = _kind(context)
    with context.db.write() as session:
        task = _hand_out(context, session, kind)
    return context.redirect(_after(kind, task))


def work_done(context: Context) -> Any:
    """GET /work/<kind>/done."""
    kind = _kind(context)
    return context.render("done.html", progress=_progress(context, kind))


def _task_page(
    context: Context,
    task_id: int,
    *,
    status: int = 200,
    message: str | None = None,
    confirm_accept: str | None = None,
) -> Any:
    """Render a task given to this user (one read transaction for everything on the page)."""
    assert context.user is not None
    with context.db.read() as session:
        view = visible_task(session, context.user, task_id)
        back = previous_task_id(
            session,
            context.user,
            view.task.kind,
            view.assignment.id if view.assignment is not None else None,
        )
        progress = _progress(context, view.task.kind, session)
    task, item = view.task, view.item
    template = "chain.html" if task.kind == "chain" else "pair.html"
    return context.render(
        template,
        status=status,
        task=task,
        item=item,
        has_image=item.image is not None,
        assignment=view.assignment,
        current=view.current,
        message=message,
        back=back,
        progress=progress,
        pair_labels=PAIR_LABEL_TEXT,
        reasons=REJECT_REASON_TEXT,
        step_flags=STEP_FLAG_TEXT,
        form=context.form,
        confirm_accept=confirm_accept,
    )


def task_page(context: Context) -> Any:
    """GET /tasks/<id>: a task given to this user (404 for any other)."""
    return _task_page(context, int(context.params["task_id"]))


def submit(context: Context) -> Any:
    """POST /tasks/<id>/label: record the label, then open the next task at once (one
    write transaction for both)."""
    assert context.user is not None
    task_id = int(context.params["task_id"])
    try:
        with context.db.write() as session:
            row = session.execute(select(Task.kind, Task.payload).where(Task.id == task_id)).first()
            if row is None:
                raise NotVisible(task_id)
            kind, payload = row
            submission = parse_submission(kind, context.form, len(payload.get("steps", [])))
            outcome = submit_label(
                session, context.user, task_id, submission, remote=context.remote
            )
            following = None if outcome.status == "late" else _hand_out(context, session, kind)
    except AcceptNeedsConfirmation as exc:  # the page asks: accept anyway?
        return _task_page(context, task_id, status=400, confirm_accept=str(exc))
    except SubmissionError as exc:
        return _task_page(context, task_id, status=400, message=str(exc))
    if outcome.status == "late":
        return context.render("late.html", status=409, kind=kind, progress=_progress(context, kind))
    return context.redirect(_after(kind, following))


def skip(context: Context) -> Any:
    """POST /tasks/<id>/skip: give the task back unlabelled and open the next one."""
    assert context.user is not None
    task_id = int(context.params["task_id"])
    with context.db.write() as session:
        task = skip_task(session, context.user, task_id, remote=context.remote)
        following = _hand_out(context, session, task.kind)
    return context.redirect(_after(task.kind, following))


# --------------------------------------------------------------------------- images


def task_image(context: Context) -> Any:
    """GET /tasks/<id>/image: the task's image, only to someone who may see the task.

    The path comes from the database (relative to the import's folder) and is checked
    against that folder again before the file is read (a symlink may have changed).
    """
    from starlette.responses import Response

    from crystalbench.data.images import decode_image, read_image_file, resolve_image_path

    assert context.user is not None
    task_id = int(context.params["task_id"])
    with context.db.read() as session:
        if role_allows(context.user.role, "adjudicator"):
            _task, item = any_task(session, task_id)
        else:
            item = visible_task(session, context.user, task_id).item
        batch = session.get(ImportBatch, item.import_id)
    if item.image is None or item.image_root is None or batch is None:
        return context.error(HTTPStatus.NOT_FOUND, "this task has no image")
    roots = tuple(Path(root) for root in batch.image_roots)
    try:
        root = roots[item.image_root]
        resolved = resolve_image_path(item.image, base=root, roots=roots)
        data = read_image_file(resolved, roots=roots, what=f"task {task_id}")
        image = decode_image(data, what=f"image of task {task_id}")
        kind = (image.format or "").lower()
        image.close()
    except (CrystalbenchError, IndexError) as exc:
        return context.error(HTTPStatus.NOT_FOUND, f"image unavailable: {exc}")
    media = {"jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp"}
    if kind not in media:
        return context.error(HTTPStatus.NOT_FOUND, f"unsupported image format {kind!r}")
    return Response(
        data, media_type=media[kind], headers={"Cache-Control": "private, max-age=3600"}
    )


def item_of(session: Any, task: Task) -> Item:
    """The item row of a task."""
    item: Item = session.get(Item, task.item_id)
    return item
