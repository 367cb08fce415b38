"""The first commands a newcomer reads run as written from an empty folder (issue 30).

The README, the home page and the getting-started page score with ``minilm-offline`` (slow
tests of ``test_docs_examples.py``, which run them in an empty folder too). Here every shell
command of those pages runs in page order in an empty folder with the offline hash encoder
instead, fast: the files they read must be the ones an earlier command of the page wrote
(``crystal data sample``), not files a reader does not have. The Python examples run in the
slow tests; here the files they name must exist once the page's commands ran.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from doc_examples import console_commands, read_blocks, run_shell, shell_environment
from sandbox import FIRST_PAGES

ROOT = Path(__file__).resolve().parents[2]
NAMED_FILE = re.compile(r"""["']([\w./-]+\.jsonl)["']""")


def fast(body: str) -> str:
    """The same commands with the hash encoder (``crystal demo`` included)."""
    body = body.replace("--encoder minilm-offline", "--encoder hash")
    demo = re.compile(r"^(\$ )?crystal demo\b(?!.*--encoder)", flags=re.M)
    return demo.sub(r"\g<0> --encoder hash", body)


@pytest.mark.parametrize("page", FIRST_PAGES)
def test_the_first_commands_run_from_an_empty_folder(page, tmp_path, cache_dir):
    folder = tmp_path / "reader"  # nothing in it: what a reader has
    folder.mkdir()
    blocks = read_blocks(ROOT / page)
    env = shell_environment()
    ran = 0
    for block in blocks:
        if not block.runs or block.language not in {"bash", "sh", "shell", "console"}:
            continue
        body = block.body
        if block.language == "console":  # the commands, without the output shown
            body = "\n".join(command for command, _ in console_commands(body))
        run_shell(dataclasses.replace(block, language="bash", body=fast(body)), folder, env)
        ran += 1
    assert ran, f"{page} shows no command that runs"
    for block in blocks:
        if block.runs and block.language in {"python", "py", "pycon"}:
            for name in NAMED_FILE.findall(block.body):
                assert (folder / name).is_file(), f"{block.where} reads {name}, never written"
