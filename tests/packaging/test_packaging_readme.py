"""The README is the package's page on the package index: every link in it must resolve there.

A relative link (``docs/review.md``) works on the repository's web page and breaks on the
index, so every link and image is absolute or an anchor of the README itself; a link into
our own repository names a file that exists in this checkout, and an anchor names a heading.
"""

from __future__ import annotations

import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
URLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
REPOSITORY = URLS["Repository"].rstrip("/")
RAW = REPOSITORY.replace("https://github.com/", "https://raw.githubusercontent.com/") + "/main/"

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
HTML = re.compile(r"""<(?:a|img)\b[^>]*\b(?:href|src)=["']([^"']+)["']""", re.IGNORECASE)


def outside_code(text: str) -> str:
    """``text`` without fenced code blocks and inline code (links there are not links)."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def links(text: str) -> list[str]:
    """Every link and image target of a Markdown text, in order."""
    body = outside_code(text)
    return [m.group(1) for pattern in (INLINE, REFERENCE, HTML) for m in pattern.finditer(body)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    body = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.MULTILINE | re.DOTALL)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", body, re.MULTILINE)}


def test_the_link_finder_finds_each_kind():
    text = (
        '[a](docs/a.md) ![b](img.png "t") [c][r]\n\n[r]: https://x.org/r\n'
        '<img src="pic.svg"> `[no](code.md)`\n```\n[no](fence.md)\n```\n'
    )
    assert links(text) == ["docs/a.md", "img.png", "https://x.org/r", "pic.svg"]
    assert slug("Scoring a model") == "scoring-a-model"
    assert slug("`crystal score` options") == "crystal-score-options"


def test_every_readme_link_is_absolute_or_an_anchor():
    found = links(README.read_text(encoding="utf-8"))
    assert found, "the README has no links?"
    relative = [t for t in found if not re.match(r"^(https?://|mailto:|#)", t)]
    assert relative == [], (
        "relative links break on the package index; write them as "
        f"{REPOSITORY}/blob/main/PATH (files), {RAW}PATH (images) or a docs-site address"
    )


def test_links_into_the_repository_name_files_that_exist():
    missing = []
    for target in links(README.read_text(encoding="utf-8")):
        path = None
        for prefix in (f"{REPOSITORY}/blob/main/", f"{REPOSITORY}/tree/main/", RAW):
            if target.startswith(prefix):
                path = target[len(prefix) :].split("#")[0]
        if path is not None and not (ROOT / path).exists():
            missing.append(target)
    assert missing == []


def test_anchors_name_headings_of_the_readme():
    text = README.read_text(encoding="utf-8")
    known = anchors(text)
    broken = [t for t in links(text) if t.startswith("#") and t[1:] not in known]
    assert broken == []


def test_project_urls_are_complete():
    assert set(URLS) == {"Homepage", "Documentation", "Repository", "Issues", "Changelog"}
    assert all(url.startswith("https://") for url in URLS.values())
    assert URLS["Issues"] == REPOSITORY + "/issues"
    changelog = URLS["Changelog"]
    assert changelog.startswith(REPOSITORY + "/blob/main/")
    assert (ROOT / changelog.removeprefix(REPOSITORY + "/blob/main/")).is_file()
