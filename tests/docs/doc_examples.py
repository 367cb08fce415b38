"""The code examples of the documentation pages, read from their Markdown and run.

Every fenced block of ``docs/*.md`` is one of these:

- **Run.** ```` ```python ```` blocks run in one namespace per page, in page order (a block
  written as a ``>>>`` session runs as a doctest); a ```` ```text ```` block right after one is
  the output it must print. ```` ```bash ```` blocks run as one ``bash -e -o pipefail``
  script; ```` ```console ```` blocks hold ``$ `` commands, each followed by the output it
  must print. Shell blocks run in the page's sandbox folder (:mod:`sandbox`), with the
  ``crystal`` command of the code under test on ``PATH`` and the hub offline.
- **A file.** A block titled with a file name (```` ```yaml title="score.yaml" ````) is
  written into the sandbox under that name, for the commands after it.
- **Needs something the tests do not have.** A block titled ``Needs ...`` (```` ```bash
  title="Needs a GPU and vLLM" ````) is shown with that title and skipped with it as the
  reason: a GPU, the gated hub dataset, a model server, an API key.
- **Not code**: any other language (``json``, ``yaml``, ``text`` not after code, a block
  with no language) is data shown to the reader.

Outputs are compared as doctest compares them, with ``...`` matching anything and runs of
whitespace equal. An HTML comment on the line before a block adds what the reader need not
see: ``<!-- docs-test: slow -->`` (a real model: marked slow), ``<!-- docs-test: exit 2 -->``
(the command is expected to fail with that status), ``<!-- docs-test: timeout 600 -->``.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`]*)$")
DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")
ATTRIBUTE = re.compile(r'(?P<key>[\w-]+)="(?P<value>[^"]*)"')
RUN_LANGUAGES = {"python", "py", "pycon", "bash", "sh", "shell", "console"}
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
FILE_NAME = re.compile(r"^[\w.-]+(/[\w.-]+)*\.\w+$")
OUTPUT_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Block:
    """One fenced block of a page."""

    page: Path
    line: int
    """1-based line of the opening fence."""
    language: str
    title: str | None
    body: str
    directives: dict[str, str] = field(default_factory=dict)
    expected_output: str | None = None
    """The ```` ```text ```` block right after a python block: what it prints."""

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.line}"

    @property
    def needs(self) -> str | None:
        """The reason the block cannot run in the tests, from its ``Needs ...`` title."""
        if self.title and self.title.lower().startswith("needs"):
            return self.title
        return None

    @property
    def file_name(self) -> str | None:
        """The sandbox file the block is, when its title is a file name."""
        if self.title and FILE_NAME.match(self.title):
            return self.title
        return None

    @property
    def runs(self) -> bool:
        return self.language in RUN_LANGUAGES and self.needs is None and self.file_name is None

    @property
    def slow(self) -> bool:
        return "slow" in self.directives

    @property
    def expected_exit(self) -> int:
        return int(self.directives.get("exit", "0"))

    @property
    def timeout(self) -> float:
        return float(self.directives.get("timeout", "300"))


def _directives(text: str) -> dict[str, str]:
    """``slow; exit 2`` -> ``{"slow": "", "exit": "2"}``.

    Examples:
        >>> _directives("slow; exit 2")
        {'slow': '', 'exit': '2'}
    """
    found: dict[str, str] = {}
    for part in text.split(";"):
        key, _, value = part.strip().partition(" ")
        if key:
            found[key] = value.strip()
    return found


def read_blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order, with its title, directives and output.

    Examples:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "p.md").write_text(
        ...     "<!-- docs-test: slow -->\\n```python\\nprint(1)\\n```\\n\\n```text\\n1\\n```\\n"
        ...     '```bash title="Needs a GPU"\\nnvidia-smi\\n```\\n'
        ... )
        >>> for b in read_blocks(folder / "p.md"):
        ...     print(b.language, b.runs, b.slow, repr(b.expected_output), b.needs)
        python True True '1\\n' None
        text False False None None
        bash False False None Needs a GPU
    """
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    previous_end = -1
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence, info = opening["indent"], opening["fence"], opening["info"].strip()
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = index + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        body_lines = [_strip_indent(line, len(indent)) for line in lines[index + 1 : end]]
        language = info.split()[0].lstrip("{.").lower() if info else ""
        attributes = {m["key"]: m["value"] for m in ATTRIBUTE.finditer(info)}
        directive_line = _previous_nonblank(lines, index)
        directive = DIRECTIVE.match(lines[directive_line]) if directive_line is not None else None
        block = Block(
            page=page,
            line=index + 1,
            language=language,
            title=attributes.get("title"),
            body="\n".join(body_lines) + "\n",
            directives=_directives(directive["body"]) if directive else {},
        )
        if (
            language == "text"
            and blocks
            and blocks[-1].language in {"python", "py"}
            and blocks[-1].runs
            and blocks[-1].expected_output is None
            and all(not line.strip() for line in lines[previous_end + 1 : index])
        ):
            blocks[-1].expected_output = block.body
        blocks.append(block)
        previous_end = end
        index = end + 1
    return blocks


def _strip_indent(line: str, width: int) -> str:
    """``line`` without the fence's indentation (a block nested in a list item)."""
    return line[width:] if line[:width].strip() == "" else line.lstrip()


def _previous_nonblank(lines: list[str], index: int) -> int | None:
    for candidate in range(index - 1, -1, -1):
        if lines[candidate].strip():
            return candidate
    return None


def same_output(expected: str, got: str) -> bool:
    """Doctest's comparison: ``...`` matches anything, runs of whitespace are equal.

    Examples:
        >>> same_output("Match F1 ...\\n", "Match F1   0.725  (40 items)\\n")
        True
        >>> same_output("exit 0\\n", "exit 2\\n")
        False
    """
    checker = doctest.OutputChecker()
    return checker.check_output(expected.strip() + "\n", got.strip() + "\n", OUTPUT_FLAGS)


# ----------------------------------------------------------------------------------- python


def run_python(block: Block, namespace: dict[str, object], folder: Path) -> None:
    """Run a python block in ``namespace`` with ``folder`` as the working directory."""
    previous = Path.cwd()
    os.chdir(folder)
    try:
        if block.body.lstrip().startswith(">>>"):
            _run_doctest(block, namespace)
            return
        printed = io.StringIO()
        code = compile(block.body, f"{block.page}:{block.line}", "exec")
        with contextlib.redirect_stdout(printed):
            exec(code, namespace)
        if block.expected_output is not None and not same_output(
            block.expected_output, printed.getvalue()
        ):
            raise AssertionError(
                f"{block.where}: the example printed\n{printed.getvalue()}\n"
                f"but the page shows\n{block.expected_output}"
            )
    finally:
        os.chdir(previous)


def _run_doctest(block: Block, namespace: dict[str, object]) -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block.body, namespace, block.where, str(block.page), block.line)
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=OUTPUT_FLAGS)
    runner.run(test, out=report.write, clear_globs=False)
    namespace.update(test.globs)  # the DocTest ran on a copy: later blocks see its names
    if runner.failures:
        raise AssertionError(
            f"{block.where}: the session differs from the page\n{report.getvalue()}"
        )


# ------------------------------------------------------------------------------------ shell


def shell_environment() -> dict[str, str]:
    """The environment shell examples run in: this interpreter's ``crystal`` first on
    ``PATH``, the hub offline, no colours, a wide terminal for the tables (the embedding
    cache is the test session's, ``$CRYSTALBENCH_CACHE_DIR``)."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["HF_HUB_OFFLINE"] = "1"
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "250"
    env["TERM"] = "dumb"
    return env


def console_commands(body: str) -> list[tuple[str, str]]:
    """``$ `` commands of a console block, each with the output shown under it.

    Examples:
        >>> console_commands("$ crystal version\\ncrystalbench 1.0\\n$ ls \\\\\\n  -a\\n")
        [('crystal version', 'crystalbench 1.0\\n'), ('ls \\\\\\n  -a', '')]
    """
    commands: list[tuple[str, str]] = []
    lines = body.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith("$ "):
            index += 1
            continue
        command = [line[2:]]
        while command[-1].endswith("\\") and index + 1 < len(lines):
            index += 1
            command.append(lines[index])
        index += 1
        output: list[str] = []
        while index < len(lines) and not lines[index].startswith("$ "):
            output.append(lines[index])
            index += 1
        commands.append(("\n".join(command), "".join(f"{o}\n" for o in output)))
    return commands


def run_shell(block: Block, folder: Path, env: dict[str, str]) -> None:
    """Run a bash or console block in ``folder``; check exit status and shown output."""
    if block.language == "console":
        steps = console_commands(block.body)
        if not steps:
            raise AssertionError(f"{block.where}: a console block needs `$ ` commands")
    else:
        steps = [(block.body, "")]
    for command, expected in steps:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", command],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=block.timeout,
            check=False,
        )
        if done.returncode != block.expected_exit:
            raise AssertionError(
                f"{block.where}: exit status {done.returncode} (expected {block.expected_exit})"
                f" from\n{textwrap.indent(command, '    ')}\n{done.stdout[-4000:]}"
            )
        if expected.strip() and not same_output(expected, done.stdout):
            raise AssertionError(
                f"{block.where}: `{command}` printed\n{done.stdout}\nbut the page shows\n{expected}"
            )
