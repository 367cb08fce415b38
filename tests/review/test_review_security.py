"""Security of the review app, one test (or more) per point of issue 15 §6, on a real uvicorn
server on loopback over SQLite (and PostgreSQL when configured).

Points: argon2 hashes; HttpOnly SameSite cookies; a CSRF token on every state-changing
request; a user sees only their tasks; images by task id only; user and model text escaped;
SQL injection strings harmless; login attempts rate-limited; loopback by default with a
warning elsewhere; bounded request sizes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from review_support import (
    PASSWORD,
    Browser,
    ReviewServer,
    chain_record,
    make_users,
    pair_rows,
    png_bytes,
    write_pairs,
    write_references,
)
from sqlalchemy import func, inspect, select

from crystalbench.review.app import STATE_CHANGING_ROUTES, exposure_warning
from crystalbench.review.auth import LoginLimiter, add_user, verify_password
from crystalbench.review.importing import import_path
from crystalbench.review.models import Annotation, Assignment, AuditEntry, Task, User
from crystalbench.review.settings import ReviewSettings

HOSTILE_STEP = '<script>alert("step")</script><img src=x onerror=alert(1)> & "quotes"'
INJECTION = "'); DROP TABLE review_annotations; --"


@pytest.fixture
def world(db, tmp_path):
    """Two annotators, an admin, three pairs and two chains (one with hostile text)."""
    bench = write_references(tmp_path / "refs", 2)
    rows = pair_rows(3, 2)
    rows[0]["pred_step"] = HOSTILE_STEP
    for i, row in enumerate(rows):
        row["cosine"] = 0.4321 + i / 1000  # distinctive: must never appear on a page
    import_path(
        db, write_pairs(tmp_path / "pairs.jsonl", rows), benchmark=bench, annotators=1, actor="test"
    )
    chain = chain_record(5, steps=[HOSTILE_STEP, "So the answer is 10."])
    chain["question"] = "<b>bold?</b> What is shown?"
    import_path(db, write_references(tmp_path / "chains", records=[chain]), actor="test")
    make_users(db, ["ann", "bob"])
    make_users(db, ["boss"], role="admin")
    with ReviewServer(db, ReviewSettings(gold_every=0)) as server:
        yield {"db": db, "server": server, "tmp": tmp_path}


def _count(db, model):
    with db.read() as session:
        return session.execute(select(func.count()).select_from(model)).scalar_one()


# --------------------------------------------------------------------------- passwords


def test_passwords_are_stored_as_argon2id_hashes(world):
    with world["db"].read() as session:
        hashes = session.execute(select(User.password_hash)).scalars().all()
    assert len(hashes) == 3
    assert len(set(hashes)) == 3
    for stored in hashes:
        assert stored.startswith("$argon2id$")
        assert PASSWORD not in stored
        assert verify_password(stored, PASSWORD)
        assert not verify_password(stored, PASSWORD + "x")


# --------------------------------------------------------------------------- cookies


def test_session_cookies_are_httponly_and_samesite(world):
    client = httpx.Client(base_url=world["server"].url)
    form = client.get("/login")
    login_cookie = form.headers["set-cookie"].lower()
    assert "httponly" in login_cookie
    assert "samesite=strict" in login_cookie
    token = form.text.split('name="csrf_token" value="')[1].split('"')[0]
    response = client.post(
        "/login", data={"name": "ann", "password": PASSWORD, "csrf_token": token}
    )
    assert response.status_code == 303
    session_cookie = next(
        value
        for name, value in response.headers.multi_items()
        if name == "set-cookie" and value.startswith("crystal_review_session=")
    ).lower()
    assert "httponly" in session_cookie
    assert "samesite=lax" in session_cookie
    assert "path=/" in session_cookie
    assert "secure" not in session_cookie
    client.close()


def test_secure_cookies_when_asked(db, tmp_path):
    make_users(db, ["ann"])
    with ReviewServer(db, ReviewSettings(secure_cookies=True)) as server:
        client = httpx.Client(base_url=server.url)
        form = client.get("/login")
        assert "secure" in form.headers["set-cookie"].lower()
        token = form.text.split('name="csrf_token" value="')[1].split('"')[0]
        # over plain HTTP a client does not send a Secure cookie back: send it by hand
        response = client.post(
            "/login",
            data={"name": "ann", "password": PASSWORD, "csrf_token": token},
            headers={"Cookie": f"crystal_review_login={token}"},
        )
        assert response.status_code == 303
        assert "secure" in response.headers["set-cookie"].lower()
        client.close()


def test_logging_out_ends_the_session(world):
    with Browser(world["server"]) as browser:
        browser.login("ann")
        cookie = browser.client.cookies.get("crystal_review_session")
        assert browser.post("/logout").status_code == 303
        stale = httpx.Client(
            base_url=world["server"].url, cookies={"crystal_review_session": cookie}
        )
        assert stale.get("/").status_code == 303  # back to the login page
        stale.close()


def test_a_password_change_ends_the_users_sessions(world):
    server = world["server"]
    with Browser(server) as ann, Browser(server) as bob:
        ann.login("ann")
        bob.login("bob")
        assert ann.get("/").status_code == 200
        add_user(world["db"], "ann", "annotator", "a new password 42", update=True, actor="t")
        server.state.sessions.ttl_s = 0.0  # as once REVIEW_SESSION_CACHE_S has passed
        assert ann.get("/").status_code == 303  # back to the login page
        assert bob.get("/").status_code == 200  # nobody else is logged out
    with world["db"].read() as session:
        entry = session.execute(
            select(AuditEntry).where(AuditEntry.action == "user.update")
        ).scalar_one()
    assert entry.new_value["sessions_ended"] == 1
    assert entry.new_value["password"] == "changed"


# --------------------------------------------------------------------------- CSRF


def test_every_state_changing_route_refuses_a_request_without_the_csrf_token(world):
    server = world["server"]
    with Browser(server) as ann:
        ann.login("ann")
        task = ann.start("pair")
        paths = {
            "/login": "/login",
            "/logout": "/logout",
            "/work/{kind}": "/work/pair",
            "/tasks/{task_id:int}/label": f"/tasks/{task}/label",
            "/tasks/{task_id:int}/skip": f"/tasks/{task}/skip",
            "/adjudicate/{task_id:int}": f"/adjudicate/{task}",
            "/admin/export": "/admin/export",
        }
        assert set(paths) == set(STATE_CHANGING_ROUTES)
        labels = _count(world["db"], Annotation)
        holds = _count(world["db"], Assignment)
        for route, path in paths.items():
            data = {"label": "match", "kind": "pairs", "name": "ann", "password": PASSWORD}
            missing = ann.post(path, data, csrf=False)
            assert missing.status_code == 403, (route, missing.text)
            wrong = ann.post(path, {**data, "csrf_token": "forged"}, csrf=False)
            assert wrong.status_code == 403, route
        assert ann.client.get(f"/tasks/{task}").status_code == 200  # still logged in
        assert _count(world["db"], Annotation) == labels
        assert _count(world["db"], Assignment) == holds


def test_a_cross_site_post_is_refused_even_with_the_token(world):
    with Browser(world["server"]) as ann:
        ann.login("ann")
        task = ann.start("pair")
        for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
            response = ann.post(f"/tasks/{task}/label", {"label": "match"}, headers=headers)
            assert response.status_code == 403
        assert _count(world["db"], Annotation) == 0
        assert ann.label(task, {"label": "match"}).status_code == 303


# --------------------------------------------------------------------------- visibility


def test_a_user_sees_only_the_tasks_given_to_them(world):
    with Browser(world["server"]) as ann, Browser(world["server"]) as bob:
        ann.login("ann")
        bob.login("bob")
        task = ann.start("pair")
        for path in (f"/tasks/{task}", f"/tasks/{task}/image"):
            assert bob.get(path).status_code == 404
        assert bob.label(task, {"label": "no_match"}).status_code == 404
        assert bob.post(f"/tasks/{task}/skip").status_code == 404
        assert bob.get("/tasks/999999").status_code == 404
        assert bob.get("/admin").status_code == 403
        assert bob.get("/adjudicate").status_code == 403
        assert bob.get("/adjudicate/1").status_code == 403
        assert bob.post("/admin/export", {"kind": "audit"}).status_code == 403
        assert ann.get(f"/tasks/{task}").status_code == 200
        anonymous = httpx.Client(base_url=world["server"].url)
        assert anonymous.get(f"/tasks/{task}/image").status_code == 303
        anonymous.close()
    with world["db"].read() as session:
        assert session.execute(select(Annotation)).first() is None


def test_annotators_never_see_cosine_or_model_names(world):
    with world["db"].read() as session:
        hidden = [
            t.hidden for t in session.execute(select(Task).where(Task.kind == "pair")).scalars()
        ]
    with Browser(world["server"]) as ann:
        ann.login("ann")
        while (task := ann.start("pair")) is not None:
            page = ann.get(f"/tasks/{task}").text
            for values in hidden:
                assert values["model"] not in page
                assert str(values["cosine"]) not in page
                assert values["band"] not in page
            assert "cosine" not in page.lower()
            assert "secret-model" not in page
            ann.label(task, {"label": "match"})


# --------------------------------------------------------------------------- images


def test_images_are_served_by_task_id_only(world):
    with Browser(world["server"]) as ann:
        ann.login("ann")
        task = ann.start("pair")
        image = ann.get(f"/tasks/{task}/image")
        assert image.status_code == 200
        assert image.headers["content-type"] == "image/png"
        assert image.headers["x-content-type-options"] == "nosniff"
        assert image.content == (world["tmp"] / "refs" / "images" / "item-0.png").read_bytes()
        assert ann.get(f"/tasks/{task}/image?path=/etc/passwd").content == image.content
        for path in (
            "/tasks/..%2F..%2Fetc%2Fpasswd/image",
            "/tasks/%2e%2e/image",
            "/tasks/-1/image",
            "/tasks/1e3/image",
            "/tasks/item-0.png/image",
            "/tasks/%2Fetc%2Fpasswd/image",
            "/images/item-0.png",
            "/static/../refs/images/item-0.png",
        ):
            response = ann.client.get(httpx.URL(world["server"].url + path))
            assert response.status_code == 404, path
            assert b"root:" not in response.content


def test_an_image_swapped_for_a_symlink_out_of_the_folder_is_refused(world):
    outside = world["tmp"] / "outside.png"
    outside.write_bytes(png_bytes(10, 10, (0, 0, 0)))
    target = world["tmp"] / "refs" / "images" / "item-0.png"
    with Browser(world["server"]) as ann:
        ann.login("ann")
        task = ann.start("pair")
        target.unlink()
        target.symlink_to(outside)
        response = ann.get(f"/tasks/{task}/image")
        assert response.status_code == 404
        assert "outside" in response.text
        assert response.content != outside.read_bytes()


# --------------------------------------------------------------------------- escaping


def test_user_and_model_text_is_escaped(world):
    with Browser(world["server"]) as ann:
        ann.login("ann")
        task = ann.start("pair")
        page = ann.get(f"/tasks/{task}")
        assert "&lt;script&gt;alert(&#34;step&#34;)&lt;/script&gt;" in page.text
        assert "<script>alert" not in page.text
        assert "<img src=x" not in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        chain = ann.start("chain")
        page = ann.get(f"/tasks/{chain}").text
        assert "&lt;b&gt;bold?&lt;/b&gt;" in page
        assert "<b>bold?</b>" not in page
        assert "<script>alert" not in page
        response = ann.label(
            chain,
            {"verdict": "reject", "reason": "other", "note": "<script>alert('note')</script>"},
        )
        assert response.status_code == 303
    with Browser(world["server"]) as boss:
        boss.login("boss")
        audit_page = boss.get("/admin/audit").text
        assert "alert" in audit_page
        assert "<script>alert" not in audit_page


# --------------------------------------------------------------------------- SQL injection


def test_sql_injection_strings_are_harmless(world):
    db = world["db"]
    client = httpx.Client(base_url=world["server"].url)
    form = client.get("/login")
    token = form.text.split('name="csrf_token" value="')[1].split('"')[0]
    for name in ("' OR '1'='1' --", "ann' --", 'ann" OR 1=1 --'):
        response = client.post(
            "/login", data={"name": name, "password": "' OR '1'='1", "csrf_token": token}
        )
        assert response.status_code == 401
    client.close()
    world["server"].state.limiter.succeeded(["ip:127.0.0.1"])
    with Browser(world["server"]) as ann:
        ann.login("ann")
        chain = ann.start("chain")
        assert (
            ann.label(
                chain, {"verdict": "reject", "reason": "other", "note": INJECTION}
            ).status_code
            == 303
        )
        assert ann.get(f"/tasks/{INJECTION}").status_code == 404
    with db.read() as session:
        notes = session.execute(select(Annotation.note)).scalars().all()
    assert notes == [INJECTION]
    assert "review_annotations" in inspect(db.engine).get_table_names()
    rows = pair_rows(1, 1)
    rows[0]["pair_id"] = "x'; DELETE FROM review_tasks; --"
    path = write_pairs(world["tmp"] / "inject.jsonl", rows)
    import_path(db, path, benchmark=world["tmp"] / "refs", actor="test")
    with db.read() as session:
        ids = session.execute(select(Task.external_id)).scalars().all()
    assert rows[0]["pair_id"] in ids
    assert len(ids) == 5


# --------------------------------------------------------------------------- login rate limit


def test_repeated_wrong_passwords_are_slowed(world):
    server = world["server"]
    client = httpx.Client(base_url=server.url)
    token = client.get("/login").text.split('name="csrf_token" value="')[1].split('"')[0]

    def attempt(password):
        return client.post(
            "/login", data={"name": "ann", "password": password, "csrf_token": token}
        )

    for _ in range(5):
        assert attempt("wrong password").status_code == 401
    refused = attempt(PASSWORD)  # even the right password waits now
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 60
    with world["db"].read() as session:
        actions = session.execute(select(AuditEntry.action)).scalars().all()
    assert actions.count("login.failed") == 5
    assert actions.count("login.refused") == 1
    assert "login" not in actions
    client.close()


def test_lockouts_double_and_expire():
    clock = [0.0]
    limiter = LoginLimiter(
        max_failures=3, window_s=100, lockout_s=10, lockout_max_s=35, clock=lambda: clock[0]
    )
    keys = ["user:ann"]
    for _ in range(3):
        limiter.failed(keys)
    assert limiter.retry_after(keys) == 10
    limiter.failed(keys)
    assert limiter.retry_after(keys) == 20
    limiter.failed(keys)
    assert limiter.retry_after(keys) == 35  # capped
    clock[0] = 36
    assert limiter.retry_after(keys) == 0
    clock[0] = 500  # old failures leave the window: one more does not lock
    limiter.failed(keys)
    assert limiter.retry_after(keys) == 0


# --------------------------------------------------------------------------- binding


def test_loopback_by_default_and_a_warning_elsewhere(tmp_path):
    from crystalbench.config.settings import REVIEW_HOST

    assert REVIEW_HOST == "127.0.0.1"
    assert exposure_warning("127.0.0.1") is None
    assert exposure_warning("::1") is None
    db = tmp_path / "r.sqlite"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "crystalbench.cli.main",
            "review",
            "serve",
            "--db",
            str(db),
            "--host",
            "0.0.0.0",
            "--port",
            "0",
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            lines.append(line)
            if "review app on" in line or not line:
                break
        text = "".join(lines)
        assert "warning: the review app is bound to 0.0.0.0, reachable from other machines" in text
        assert "review app on http://0.0.0.0:" in text
    finally:
        process.terminate()
        process.wait(timeout=10)


# --------------------------------------------------------------------------- sizes, headers


def test_request_sizes_are_bounded(world):
    with Browser(world["server"]) as ann:
        ann.login("ann")
        task = ann.start("chain")
        huge = ann.post(f"/tasks/{task}/label", {"verdict": "accept", "note": "x" * 70_000})
        assert huge.status_code == 413
        long_note = ann.post(
            f"/tasks/{task}/label", {"verdict": "reject", "reason": "other", "note": "x" * 5000}
        )
        assert long_note.status_code == 400
        assert "note is over 4000 characters" in long_note.text
        fields = {f"f{i}": "1" for i in range(1200)}
        assert ann.post(f"/tasks/{task}/label", fields).status_code == 400
        as_json = ann.client.post(
            f"/tasks/{task}/label",
            content=json.dumps({"verdict": "accept"}),
            headers={"Content-Type": "application/json", "X-CSRF-Token": ann.csrf},
        )
        assert as_json.status_code == 415
        big_header = ann.client.get("/", headers={"X-Filler": "y" * 20_000})
        assert big_header.status_code in (400, 431)
    assert _count(world["db"], Annotation) == 0


def test_security_headers_on_every_page(world):
    with Browser(world["server"]) as ann:
        for path in ("/login", "/"):
            headers = ann.client.get(path).headers
            assert "frame-ancestors 'none'" in headers["content-security-policy"]
            assert headers["x-frame-options"] == "DENY"
            assert headers["x-content-type-options"] == "nosniff"
        ann.login("ann")
        assert ann.get("/").headers["cache-control"] == "no-store"


def test_login_redirects_only_to_this_site(world):
    client = httpx.Client(base_url=world["server"].url)
    token = client.get("/login").text.split('name="csrf_token" value="')[1].split('"')[0]
    response = client.post(
        "/login",
        data={"name": "ann", "password": PASSWORD, "csrf_token": token, "next": "//evil.example/x"},
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/"
    client.close()


def test_login_without_the_form_cookie_is_refused(world):
    client = httpx.Client(base_url=world["server"].url)
    response = client.post(
        "/login", data={"name": "ann", "password": PASSWORD, "csrf_token": "guess"}
    )
    assert response.status_code == 403
    client.close()
