"""Accept with steps flagged or a reject reason chosen must be confirmed, server side too (a
page without its script, or a hand-made request, gets the same question), over HTTP on a
real loopback server. The browser side is in ``test_review_browser.py``."""

from __future__ import annotations

import html
import re

from review_support import Browser, ReviewServer, make_users, write_references
from sqlalchemy import select

from crystalbench.review.importing import import_path
from crystalbench.review.models import Annotation


def _annotations(db):
    with db.read() as session:
        return list(session.execute(select(Annotation).order_by(Annotation.id)).scalars())


def test_accept_with_flags_or_a_reason_asks_first(sqlite_db, tmp_path):
    import_path(sqlite_db, write_references(tmp_path / "refs", 2), actor="test")
    make_users(sqlite_db, ["ann"])
    with ReviewServer(sqlite_db) as server, Browser(server) as client:
        client.login("ann")
        task = client.start("chain")
        assert task is not None
        client.get(f"/tasks/{task}")
        contradictory = {"verdict": "accept", "flag-1-wrong": "on", "reason": "wrong_step"}
        asked = client.label(task, contradictory)
        assert asked.status_code == 400
        page = html.unescape(asked.text)
        assert "You pressed Accept, but step 2 is flagged and the reject reason" in page
        assert 'data-testid="accept-anyway"' in page
        assert 'data-confirm-accept data-testid="confirm-accept" hidden' not in page  # shown
        # the flag and the reason stay ticked for the answer
        assert re.search(r'name="flag-1-wrong"[^>]*\bchecked>', asked.text)
        assert not re.search(r'name="flag-0-wrong"[^>]*\bchecked>', asked.text)
        assert re.search(r'value="wrong_step"[^>]*\s+checked>', asked.text)
        assert _annotations(sqlite_db) == []  # nothing recorded yet
        confirmed = client.label(task, {**contradictory, "confirm_accept": "1"})
        assert confirmed.status_code == 303, confirmed.text
        (row,) = _annotations(sqlite_db)
        assert (row.label, row.reason) == ("accept", None)
        assert row.step_flags == [[], ["wrong"], []]
        # A plain accept of the next chain needs no confirmation.
        following = client.start("chain")
        assert following is not None
        client.get(f"/tasks/{following}")
        assert client.label(following, {"verdict": "accept"}).status_code == 303
        assert [a.label for a in _annotations(sqlite_db)] == ["accept", "accept"]


def test_the_confirmation_box_is_hidden_on_a_fresh_page(sqlite_db, tmp_path):
    import_path(sqlite_db, write_references(tmp_path / "refs", 1), actor="test")
    make_users(sqlite_db, ["ann"])
    with ReviewServer(sqlite_db) as server, Browser(server) as client:
        client.login("ann")
        task = client.start("chain")
        page = client.get(f"/tasks/{task}").text
        assert 'data-testid="confirm-accept" hidden' in page
