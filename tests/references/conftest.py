"""Fixtures of the reference-construction tests (helpers live in ``references_helpers``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from references_helpers import write_item_set
from references_server import ReferenceServer, ServerState
from scripted_models import GENERATORS, VALIDATOR

from crystalbench.data import load_benchmark


@pytest.fixture(scope="session")
def sample_items():
    return load_benchmark("sample").items


@pytest.fixture
def item_set(tmp_path: Path) -> Path:
    return write_item_set(tmp_path / "items")


@pytest.fixture
def server():
    state = ServerState(models=[*GENERATORS, VALIDATOR])
    with ReferenceServer(state) as running:
        yield running
