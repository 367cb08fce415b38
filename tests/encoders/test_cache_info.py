"""``crystal cache info`` inspects, it does not create: a new folder stays absent."""

from __future__ import annotations

import numpy as np
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.encoders import EmbeddingStore
from crystalbench.encoders.cache import inspect_cache, text_key

runner = CliRunner()


def test_info_on_a_new_folder_creates_nothing(tmp_path):
    folder = tmp_path / "new-cache"
    result = runner.invoke(app, ["cache", "info", "--cache-dir", str(folder)])
    assert result.exit_code == 0, result.output
    assert "no embedding cache at" in result.output
    assert not folder.exists()


def test_clear_on_a_new_folder_creates_nothing(tmp_path):
    folder = tmp_path / "new-cache"
    result = runner.invoke(app, ["cache", "clear", "--cache-dir", str(folder)])
    assert result.exit_code == 0, result.output
    assert "nothing to clear" in result.output
    assert not folder.exists()


def test_info_counts_an_existing_cache_without_writing_to_it(tmp_path):
    store = EmbeddingStore.default(tmp_path)
    vectors = [(text_key(t), np.ones(3, dtype=np.float32)) for t in ("a", "b")]
    store.put_many("enc-x", vectors)
    store.put_many("enc-y", vectors[:1])
    store.close()
    before = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in tmp_path.iterdir()}
    summary = inspect_cache(tmp_path)
    assert summary.exists
    assert summary.entries == {"enc-x": 2, "enc-y": 1}
    assert summary.size_bytes > 0
    result = runner.invoke(app, ["cache", "info", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "enc-x: 2 embeddings" in result.output
    after = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in tmp_path.iterdir()}
    assert after == before


def test_a_file_that_is_not_a_cache_is_refused_with_its_name(tmp_path):
    (tmp_path / "embeddings.sqlite").write_bytes(b"not sqlite at all" * 100)
    result = runner.invoke(app, ["cache", "info", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "embeddings.sqlite" in result.output
