"""Fixtures shared by the whole suite (builders and fakes live in ``tests/fakes.py``)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from crystalbench.config.scoring import ScoreConfig
from fakes import HASH_CONFIG

_SESSION_CACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """The whole session caches embeddings and ONNX exports in a folder of its own, never in
    the user's ``~/.cache/crystalbench`` (a test run must not leave files behind or read a
    cache that another version filled)."""
    folder = tempfile.mkdtemp(prefix="crystalbench-test-cache-")
    _SESSION_CACHE.append(folder)
    os.environ["CRYSTALBENCH_CACHE_DIR"] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _SESSION_CACHE:
        shutil.rmtree(folder, ignore_errors=True)


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
