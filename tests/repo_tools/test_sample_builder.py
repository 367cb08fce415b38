"""``tools/sample_builder`` rebuilds the bundled sample byte for byte, from outside the package.

The builder is a repository tool, not part of the installed ``crystalbench``: these tests
rebuild ``src/crystalbench/data/sample`` into a temporary folder (through the library call and
through ``python -m tools.sample_builder``) and compare every file's bytes with the committed
one. The images' bytes depend on the drawing libraries (Pillow and its zlib, FreeType,
matplotlib): with the versions in :data:`~tools.sample_builder.RENDERED_WITH` they must match
byte for byte; with other versions that byte check is skipped (naming the versions) and a
pixel check with a small tolerance still runs.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from crystalbench.data import SAMPLE_DIR
from tools.sample_builder import PREDICTION_STYLES, RENDERED_WITH, build_sample, rendering_stack

ROOT = Path(__file__).resolve().parents[2]


def files_under(folder: Path) -> dict[str, Path]:
    """Relative POSIX path -> file, for every file under ``folder``."""
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}


def differences(built: Path, committed: Path, *, images: bool = True) -> dict[str, str]:
    """What differs between two sample folders: ``path -> missing | extra | bytes differ``."""
    ours, theirs = files_under(built), files_under(committed)
    found: dict[str, str] = {}
    for name in sorted(set(ours) | set(theirs)):
        if not images and name.endswith(".png"):
            continue
        if name not in ours:
            found[name] = "missing from the rebuild"
        elif name not in theirs:
            found[name] = "extra in the rebuild"
        elif ours[name].read_bytes() != theirs[name].read_bytes():
            found[name] = "bytes differ"
    return found


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("matplotlib")
    out = tmp_path_factory.mktemp("sample")
    build_sample(out)
    return out


def test_the_comparison_sees_a_changed_missing_or_extra_file(tmp_path: Path) -> None:
    """The checks below can fail: one edited byte, one file gone, one file too many."""
    committed = tmp_path / "committed"
    shutil.copytree(SAMPLE_DIR, committed)
    built = tmp_path / "built"
    shutil.copytree(SAMPLE_DIR, built)
    assert differences(built, committed) == {}
    data = bytearray((built / "benchmark.jsonl").read_bytes())
    data[10] ^= 1
    (built / "benchmark.jsonl").write_bytes(bytes(data))
    (built / "images" / "plotqa-01.png").unlink()
    (built / "predictions" / "stray.jsonl").write_text("{}\n", encoding="utf-8")
    assert differences(built, committed) == {
        "benchmark.jsonl": "bytes differ",
        "images/plotqa-01.png": "missing from the rebuild",
        "predictions/stray.jsonl": "extra in the rebuild",
    }


def test_the_rebuild_writes_exactly_the_committed_files(rebuilt: Path) -> None:
    assert sorted(files_under(rebuilt)) == sorted(files_under(SAMPLE_DIR))
    names = set(files_under(SAMPLE_DIR))
    assert {"benchmark.jsonl", "README.md"} <= names
    assert {f"predictions/{style}.jsonl" for style in PREDICTION_STYLES} <= names
    assert sum(name.endswith(".png") for name in names) == 40


def test_every_text_file_is_rebuilt_byte_for_byte(rebuilt: Path) -> None:
    assert differences(rebuilt, SAMPLE_DIR, images=False) == {}


def test_every_image_is_rebuilt_byte_for_byte(rebuilt: Path) -> None:
    here = rendering_stack()
    if here != RENDERED_WITH:
        changed = ", ".join(
            f"{name} {here[name]} (committed images: {RENDERED_WITH[name]})"
            for name in RENDERED_WITH
            if here[name] != RENDERED_WITH[name]
        )
        pytest.skip(f"other drawing libraries than the sample's: {changed}")
    assert differences(rebuilt, SAMPLE_DIR) == {}


def test_images_are_deterministic_and_close_to_the_committed_ones(
    rebuilt: Path, tmp_path: Path
) -> None:
    """Two builds give the same bytes here; the committed pixels hold within a small tolerance.

    The tolerance is for other versions of the drawing libraries, whose text rendering differs
    a little: few pixels may change strongly. That catches moved, resized or recoloured shapes
    and a changed layout, not a single edited glyph (the byte checks above catch that where the
    libraries match).
    """
    build_sample(tmp_path)
    committed = sorted(p.name for p in (SAMPLE_DIR / "images").glob("*.png"))
    for name in committed:
        first = (rebuilt / "images" / name).read_bytes()
        assert first == (tmp_path / "images" / name).read_bytes(), name
        drawn = np.asarray(Image.open(rebuilt / "images" / name).convert("RGB"))
        stored = np.asarray(Image.open(SAMPLE_DIR / "images" / name).convert("RGB"))
        assert stored.shape == drawn.shape, name
        changed = (np.abs(stored.astype(int) - drawn.astype(int)).max(axis=2) > 64).mean()
        assert changed < 0.01, (name, changed)


def test_the_module_command_rebuilds_the_sample(tmp_path: Path) -> None:
    """``python -m tools.sample_builder --out DIR`` from the repository root, as documented."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "sample"
    done = subprocess.run(
        [sys.executable, "-m", "tools.sample_builder", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == f"wrote 40 items, images and 5 prediction files to {out}"
    images = rendering_stack() == RENDERED_WITH
    assert differences(out, SAMPLE_DIR, images=images) == {}


def test_the_builder_is_not_part_of_the_installed_package() -> None:
    import crystalbench

    package = Path(crystalbench.__file__).parent
    assert not (package / "data" / "sample_builder").exists()
    assert importlib.util.find_spec("crystalbench.data.sample_builder") is None
    assert (ROOT / "tools" / "sample_builder" / "writer.py").is_file()
