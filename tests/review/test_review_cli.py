"""``crystal review add-user / import / export`` from the command line, on a SQLite file and on
PostgreSQL by URL when configured; bad input exits 2 with one line, never a traceback."""

from __future__ import annotations

import json

from review_support import PASSWORD, pair_rows, users_by_name, write_pairs, write_references
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.review.db import Database

runner = CliRunner()


def _db_arg(db_url: str) -> str:
    return db_url.removeprefix("sqlite:///")


def test_from_import_to_export(db_url, tmp_path):
    db = _db_arg(db_url)
    secret = tmp_path / "pw"
    secret.write_text(PASSWORD + "\n", encoding="utf-8")
    result = runner.invoke(
        app,
        [
            "review",
            "add-user",
            "ana",
            "--role",
            "admin",
            "--password-file",
            str(secret),
            "--db",
            db,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "added admin ana" in result.output
    refs = write_references(tmp_path / "refs", 3)
    result = runner.invoke(app, ["review", "import", str(refs), "--db", db])
    assert result.exit_code == 0, result.output
    assert "imported 3 chains (0 gold)" in result.output
    pairs = write_pairs(tmp_path / "pairs.csv", pair_rows(4, 3))
    result = runner.invoke(
        app,
        ["review", "import", str(pairs), "--benchmark", str(refs), "--annotators", "3", "--db", db],
    )
    assert result.exit_code == 0, result.output
    assert "imported 4 pairs (0 gold)" in result.output
    for kind, lines in (("chains", 3), ("pairs", 4), ("rejected", 0), ("audit", 6)):
        out = tmp_path / f"{kind}.out"
        result = runner.invoke(
            app, ["review", "export", "--kind", kind, "--out", str(out), "--db", db]
        )
        assert result.exit_code == 0, result.output
        assert f"wrote {lines} lines" in result.output
        text = out.read_text(encoding="utf-8")
        assert len(text.splitlines()) == lines
    pairs_out = [json.loads(line) for line in (tmp_path / "pairs.out").read_text().splitlines()]
    assert {r["quota"] for r in pairs_out} == {3}
    assert all(r["final_status"] == "unresolved" and r["labels"] == [] for r in pairs_out)
    audit = [json.loads(line) for line in (tmp_path / "audit.out").read_text().splitlines()]
    assert [r["action"] for r in audit] == [
        "user.add",
        "import",
        "import",
        "export",
        "export",
        "export",
    ]
    assert audit[0]["actor"].startswith("cli:")
    database = Database(db_url if "://" in db_url else f"sqlite:///{db}")
    assert users_by_name(database)["ana"].role == "admin"
    database.dispose()


def test_add_user_refuses_duplicates_short_passwords_and_no_terminal(tmp_path):
    db = str(tmp_path / "r.sqlite")
    secret = tmp_path / "pw"
    secret.write_text(PASSWORD, encoding="utf-8")
    base = ["review", "add-user", "ana", "--password-file", str(secret), "--db", db]
    assert runner.invoke(app, base).exit_code == 0
    again = runner.invoke(app, base)
    assert again.exit_code == 2
    assert "user 'ana' exists; pass --update" in again.output
    updated = runner.invoke(app, [*base, "--update", "--role", "adjudicator"])
    assert updated.exit_code == 0
    assert "updated adjudicator ana" in updated.output
    (tmp_path / "short").write_text("abc", encoding="utf-8")
    short = runner.invoke(
        app, ["review", "add-user", "bo", "--password-file", str(tmp_path / "short"), "--db", db]
    )
    assert short.exit_code == 2
    assert "at least 8 characters" in short.output
    asked = runner.invoke(app, ["review", "add-user", "cy", "--db", db])
    assert asked.exit_code == 2
    assert "pass --password-file" in asked.output
    bad_role = runner.invoke(
        app,
        ["review", "add-user", "di", "--role", "root", "--password-file", str(secret), "--db", db],
    )
    assert bad_role.exit_code == 2
    assert "role must be one of annotator, adjudicator, admin" in bad_role.output
    bad_name = runner.invoke(
        app, ["review", "add-user", "<x>", "--password-file", str(secret), "--db", db]
    )
    assert bad_name.exit_code == 2
    assert "user names are" in bad_name.output


def test_bad_input_exits_2_with_the_line(tmp_path):
    db = str(tmp_path / "r.sqlite")
    refs = write_references(tmp_path / "refs", 1)
    rows = pair_rows(2, 1)
    rows[1]["item_id"] = "nope"
    pairs = write_pairs(tmp_path / "pairs.jsonl", rows)
    result = runner.invoke(
        app, ["review", "import", str(pairs), "--benchmark", str(refs), "--db", db]
    )
    assert result.exit_code == 2
    assert "pairs.jsonl:2: field item_id: item 'nope' is not in the benchmark" in result.output
    assert "Traceback" not in result.output
    unknown = runner.invoke(
        app, ["review", "export", "--kind", "all", "--out", str(tmp_path / "x"), "--db", db]
    )
    assert unknown.exit_code == 2
    assert "--kind must be one of" in unknown.output
    other_db = runner.invoke(
        app,
        [
            "review",
            "export",
            "--kind",
            "audit",
            "--out",
            str(tmp_path / "x"),
            "--db",
            "mysql://x/y",
        ],
    )
    assert other_db.exit_code == 2
    assert "unsupported database 'mysql'" in other_db.output


def test_serve_refuses_bad_options(tmp_path):
    db = str(tmp_path / "r.sqlite")
    result = runner.invoke(app, ["review", "serve", "--db", db, "--hold-minutes", "0"])
    assert result.exit_code == 2
    assert "field hold_minutes: Input should be greater than 0 (from --hold-minutes 0)" in (
        result.output
    )
    result = runner.invoke(app, ["review", "serve", "--db", db, "--gold-every", "-1"])
    assert result.exit_code == 2
    assert "field gold_every: Input should be greater than or equal to 0" in result.output


def test_the_database_comes_from_a_flag_the_environment_or_a_config_file(tmp_path, monkeypatch):
    """``--db`` wins over ``$CRYSTALBENCH_REVIEW_DB``, which wins over ``--config``; a bad
    config file names its line and field."""
    secret = tmp_path / "pw"
    secret.write_text(PASSWORD, encoding="utf-8")
    config = tmp_path / "review.yaml"
    config.write_text(f"db: {tmp_path / 'file.sqlite'}\nrole: admin\n", encoding="utf-8")
    base = ["review", "add-user", "--password-file", str(secret), "--config", str(config)]
    assert runner.invoke(app, [*base, "ana"]).exit_code == 0
    assert (tmp_path / "file.sqlite").is_file()
    monkeypatch.setenv("CRYSTALBENCH_REVIEW_DB", str(tmp_path / "env.sqlite"))
    assert runner.invoke(app, [*base, "bo"]).exit_code == 0
    assert (tmp_path / "env.sqlite").is_file()
    flag = runner.invoke(app, [*base, "cy", "--db", str(tmp_path / "flag.sqlite")])
    assert flag.exit_code == 0, flag.output
    assert "added admin cy" in flag.output
    for name, expected in (("file", {"ana"}), ("env", {"bo"}), ("flag", {"cy"})):
        database = Database(f"sqlite:///{tmp_path / name}.sqlite")
        assert set(users_by_name(database)) == expected
        database.dispose()
    config.write_text("db: x.sqlite\nrole: admin\nport: 1\n", encoding="utf-8")
    bad = runner.invoke(app, [*base, "di"])
    assert bad.exit_code == 2
    assert f"error: {config}:3: field port: unknown field" in " ".join(bad.output.split())
