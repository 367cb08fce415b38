"""``tools/source_examples`` rewrites the package's example source copies, from outside the
package: a rebuild into a temporary folder holds the same files as the committed copies, with
the same text, the same tables and the same pictures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from crystalbench.sources import EXAMPLES_DIR
from tools.source_examples import SOURCES, build_source_examples

pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("datasets")

ROOT = Path(__file__).resolve().parents[2]


def files_under(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}


def differences(built: Path, committed: Path) -> dict[str, str]:
    """What differs: text byte for byte, Parquet by table (values, schema and its metadata),
    PNG byte for byte, JPEG by pixels (its encoder's bytes vary across libjpeg versions)."""
    ours, theirs = files_under(built), files_under(committed)
    found: dict[str, str] = {}
    for name in sorted(set(ours) | set(theirs)):
        if name not in ours:
            found[name] = "missing from the rebuild"
        elif name not in theirs:
            found[name] = "extra in the rebuild"
        elif name.endswith(".parquet"):
            a, b = pq.read_table(ours[name]), pq.read_table(theirs[name])
            if not a.equals(b) or a.schema.metadata != b.schema.metadata:
                found[name] = "table differs"
        elif name.endswith(".jpg"):
            a = np.asarray(Image.open(ours[name]).convert("RGB"), dtype=int)
            b = np.asarray(Image.open(theirs[name]).convert("RGB"), dtype=int)
            if a.shape != b.shape or np.abs(a - b).max() > 8:
                found[name] = "pixels differ"
        elif ours[name].read_bytes() != theirs[name].read_bytes():
            found[name] = "bytes differ"
    return found


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_source_examples(tmp_path_factory.mktemp("examples"))


def test_the_rebuild_equals_the_committed_copies(rebuilt):
    assert differences(rebuilt, EXAMPLES_DIR) == {}
    assert sorted(p.name for p in EXAMPLES_DIR.iterdir() if p.is_dir()) == sorted(SOURCES)


def test_the_comparison_sees_a_changed_table_or_a_missing_file(rebuilt, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(rebuilt, copy)
    table = next((copy / "mathvision" / "data").glob("*.parquet"))
    data = pq.read_table(table)
    pq.write_table(data.slice(0, 7), table)  # one row fewer
    (copy / "mmvp" / "MMVP Images" / "3.jpg").unlink()
    (copy / "plotqa" / "test" / "qa_pairs_V1.json").write_text("{}")
    assert differences(copy, rebuilt) == {
        "mathvision/data/test-00000-of-00001-5e3f8c21.parquet": "table differs",
        "mmvp/MMVP Images/3.jpg": "missing from the rebuild",
        "plotqa/test/qa_pairs_V1.json": "bytes differ",
    }


def test_the_module_command_writes_where_it_is_told(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tools.source_examples", "--out", str(tmp_path / "out")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "mmvp" / "Questions.csv").is_file()
    assert (tmp_path / "out" / "README.md").is_file()
