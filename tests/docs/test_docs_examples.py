"""Every code example of the documentation runs, and prints what its page shows.

One test per example (``docs/scoring.md:42``), in page order; the examples of a page share a
Python namespace and a sandbox folder (:mod:`sandbox`), so an example may use what an earlier
one made. Selecting one example (``-k scoring.md:42``) runs the page's earlier examples first.
How a block is read (run, a file, ``Needs ...``, data) is in :mod:`doc_examples`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_examples import Block, read_blocks, run_python, run_shell, shell_environment
from sandbox import FIRST_PAGES, make_sandbox

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


class PageRun:
    """The examples of one page, each run at most once, in page order."""

    def __init__(self, blocks: list[Block], folder: Path, env: dict[str, str]) -> None:
        self.blocks = blocks
        self.folder = folder
        self.env = env
        self.namespace: dict[str, object] = {"__name__": "__docs_example__"}
        self.ran: set[int] = set()
        self.failure: str | None = None

    def run_through(self, index: int) -> None:
        """Run the page's earlier steps that have not run, then step ``index``.

        A fast example never waits for a slow one before it (``-m "not slow"`` stays fast):
        the slow one runs in its own test, and a fast example that needs its results must be
        marked slow too.
        """
        target = self.blocks[index]
        for earlier in range(index + 1):
            block = self.blocks[earlier]
            if earlier in self.ran or (earlier < index and block.slow and not target.slow):
                continue
            self.ran.add(earlier)
            if self.failure is not None:
                raise AssertionError(f"an earlier example of this page failed: {self.failure}")
            try:
                self._step(block)
            except BaseException:
                self.failure = block.where
                raise

    def _step(self, block: Block) -> None:
        if block.needs is not None:
            return
        if block.file_name is not None:
            target = self.folder / block.file_name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.body, encoding="utf-8")
        elif block.runs and block.language in {"python", "py", "pycon"}:
            run_python(block, self.namespace, self.folder)
        elif block.runs:
            run_shell(block, self.folder, self.env)


def _examples() -> list[object]:
    params: list[object] = []
    for page in PAGES:
        for index, block in enumerate(read_blocks(page)):
            if not (block.runs or block.needs):
                continue
            marks = [pytest.mark.slow] if block.slow else []
            params.append(pytest.param(page, index, id=block.where, marks=marks))
    return params


@pytest.fixture(scope="module")
def page_runs() -> dict[Path, PageRun]:
    """The pages whose examples have started, with their sandbox and namespace."""
    return {}


@pytest.mark.parametrize(("page", "index"), _examples())
def test_example(
    page: Path,
    index: int,
    page_runs: dict[Path, PageRun],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    blocks = read_blocks(page)
    block = blocks[index]
    if block.needs is not None:
        pytest.skip(f"{block.where}: {block.needs}")
    if page not in page_runs:
        empty = page.relative_to(ROOT).as_posix() in FIRST_PAGES
        folder = make_sandbox(tmp_path_factory.mktemp(page.stem), empty=empty)
        env = shell_environment()
        page_runs[page] = PageRun(blocks, folder, env)
    page_runs[page].run_through(index)


def test_the_pages_have_examples_that_run() -> None:
    """The collector reads the pages: a change of fence syntax must not silently empty it."""
    runnable = [b for page in PAGES for b in read_blocks(page) if b.runs]
    assert len(runnable) > 40
    assert {b.language for b in runnable} >= {"python", "bash", "console"}


def _leaderboard_rows(text: str) -> dict[str, list[str]]:
    """Model name -> the numbers of its row, from a leaderboard printed as text."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        cells = [c for c in re.split(r"[│\s]+", line) if c]
        numbers = cells[1:]
        if len(numbers) > 5 and all(re.fullmatch(r"\d+(\.\d+)?", n) for n in numbers):
            rows[cells[0].rstrip("…")] = numbers
    return rows


def test_the_readme_shows_the_leaderboard_getting_started_checks() -> None:
    """The README's demo table is data (the PyPI page shows it); its numbers must be the ones
    the getting-started page's tested `crystal demo` example prints."""
    readme = _leaderboard_rows((ROOT / "README.md").read_text(encoding="utf-8"))
    checked = _leaderboard_rows((DOCS / "getting-started.md").read_text(encoding="utf-8"))
    assert len(checked) == 5
    for name, numbers in checked.items():
        full = next(n for n in readme if n.startswith(name))
        assert readme[full] == numbers, name
