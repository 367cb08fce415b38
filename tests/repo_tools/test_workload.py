"""The benchmarks' synthetic workload (``benchmarks/workload*.py``) still writes workload v2.

The speed figures in ``benchmarks/RESULTS.md`` recorded since issue 18 name ``workload v2``;
they reproduce only while the generator writes the same files. The digest below was taken
from the generator as it was when those figures were recorded (the commit that also held the
first generator, ``v1``, since removed). A change to the generator that changes its output
must name a new ``WORKLOAD_VERSION``, so that new records say which workload they used.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

V2_DIGEST_30_ITEMS_6_SETS = "de6ffc7a5636d8702e577a334d66054b00a675ecef7e62744fed87b73aa7c2dc"
"""SHA-256 over the relative paths and bytes of ``write_workload(out, 30, 6)``'s files."""


@pytest.fixture(scope="module")
def workload() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import workload as module
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def digest(root: Path) -> str:
    hashed = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != "manifest.json":
            hashed.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return hashed.hexdigest()


def test_the_generator_writes_workload_v2_byte_for_byte(
    workload: ModuleType, tmp_path: Path
) -> None:
    files = workload.write_workload(tmp_path, 30, 6)
    assert workload.WORKLOAD_VERSION == "v2"
    assert [p.stem for p in files.predictions] == [
        "careful-large",
        "verbose-cot",
        "terse-small",
        "scrambled-order",
        "weak-hallucinating",
        "careful-large-2",
    ]
    assert digest(tmp_path) == V2_DIGEST_30_ITEMS_6_SETS, (
        "the workload generator's output changed: figures recorded with workload v2 no longer "
        "reproduce; if that is intended, name a new WORKLOAD_VERSION and update this digest"
    )
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["style"] == "v2"
    assert manifest["generator"] == workload.generator_version()


def test_the_first_generator_is_gone(workload: ModuleType) -> None:
    """Only v2 is left: no style switch, no ``v1`` code path to keep in step."""
    assert not hasattr(workload, "WORKLOAD_STYLES")
    assert not hasattr(workload, "generate_prediction_v2")
    with pytest.raises(TypeError):
        workload.predict(workload.generate_item(0), 0, style="v1")
    for name in workload.GENERATOR_FILES:
        assert '"v1"' not in (BENCHMARKS / name).read_text(encoding="utf-8"), name
