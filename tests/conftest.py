"""Fixtures shared by the whole suite (builders and fakes live in ``tests/fakes.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crystalbench.config import ScoreConfig
from fakes import HASH_CONFIG


@pytest.fixture
def hash_config() -> ScoreConfig:
    """Paper defaults with the hash encoder and no on-disk cache."""
    return HASH_CONFIG


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache folder (``$CRYSTALBENCH_CACHE_DIR``) for tests that write caches."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(folder))
    return folder
