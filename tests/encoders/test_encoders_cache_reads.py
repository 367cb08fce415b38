"""The two ways the embedding cache reads vectors give the same answer.

A lookup of a few keys goes through the ``(encoder, key)`` index; a lookup of many (a
quarter of the file or more) reads the table once in file order. Both must return exactly
the stored vectors of that encoder, leave out missing keys, other encoders' rows and
damaged rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from crystalbench.encoders import cache
from crystalbench.encoders.cache import EmbeddingStore, text_key


@pytest.fixture
def store(tmp_path):
    db = EmbeddingStore(tmp_path / "e.sqlite")
    rng = np.random.default_rng(0)
    for name in ("enc-a", "enc-b"):
        db.put_many(
            name,
            [
                (text_key(f"{name} {i}"), rng.standard_normal(8).astype(np.float32))
                for i in range(3000)
            ],
        )
    # a damaged row: its blob is shorter than its dimension says
    with db._lock:
        db._conn.execute(
            "UPDATE vectors SET vector = ? WHERE encoder = 'enc-a' AND key = ?",
            [b"\0" * 12, text_key("enc-a 7")],
        )
    yield db
    db.close()


def _both_ways(db, encoder, keys, monkeypatch):
    monkeypatch.setattr(cache, "_SCAN_MIN_KEYS", 10**9)
    looked_up = db.get_many(encoder, keys)
    monkeypatch.setattr(cache, "_SCAN_MIN_KEYS", 1)
    scanned = db.get_many(encoder, keys)
    return looked_up, scanned


def test_index_lookups_and_the_table_scan_return_the_same_vectors(store, monkeypatch):
    keys = [text_key(f"enc-a {i}") for i in range(0, 3000, 2)]
    keys += [text_key("never stored"), text_key("enc-b 5")]  # missing; another encoder's
    looked_up, scanned = _both_ways(store, "enc-a", keys, monkeypatch)
    assert looked_up.keys() == scanned.keys()
    assert len(scanned) == 1500  # every even key; the damaged row (7) was not asked for
    for key, vector in looked_up.items():
        assert np.array_equal(vector, scanned[key])
    assert text_key("never stored") not in scanned
    assert text_key("enc-b 5") not in scanned


def test_a_damaged_row_is_a_miss_both_ways(store, monkeypatch):
    keys = [text_key(f"enc-a {i}") for i in range(3000)]
    looked_up, scanned = _both_ways(store, "enc-a", keys, monkeypatch)
    assert text_key("enc-a 7") not in looked_up
    assert text_key("enc-a 7") not in scanned
    assert looked_up.keys() == scanned.keys()
    assert len(scanned) == 2999


def test_many_keys_take_the_scan_and_few_take_the_index(store, monkeypatch):
    calls: list[str] = []
    scan = EmbeddingStore._scan_matrix
    monkeypatch.setattr(
        EmbeddingStore, "_scan_matrix", lambda self, e, k: calls.append("scan") or scan(self, e, k)
    )
    store.get_many("enc-a", [text_key(f"enc-a {i}") for i in range(10)])
    assert calls == []
    store.get_many("enc-a", [text_key(f"enc-a {i}") for i in range(2000)])  # 2,000 of 6,000 rows
    assert calls == ["scan"]


def test_lookup_matrix_equals_the_vectors_of_lookup(tmp_path, monkeypatch):
    """Rows from memory (remembered), from the file and freshly encoded, in order."""
    from crystalbench.encoders import CachingEncoder, HashEncoder

    texts = [f"step number {i} of the chain" for i in range(40)]
    db = EmbeddingStore(tmp_path / "e.sqlite")
    CachingEncoder(HashEncoder(dim=16), db).lookup(texts[10:30])  # 20 in the file
    for scan in (1, 10**9):  # the table scan and the index look-ups
        monkeypatch.setattr(cache, "_SCAN_MIN_KEYS", scan)
        front = CachingEncoder(HashEncoder(dim=16), db)
        front.remember(texts[:5])  # 5 in memory (read from nowhere else)
        asked = texts[35:] + texts[:20] + texts[25:35]  # every source, mixed
        matrix = front.lookup_matrix(asked)
        plain = CachingEncoder(HashEncoder(dim=16)).lookup(asked)
        assert matrix.shape == (len(asked), 16)
        assert matrix.dtype == np.float32
        assert np.array_equal(matrix, np.stack([plain[t] for t in asked]))
        assert matrix.flags.writeable
    all_stored = CachingEncoder(HashEncoder(dim=16), db)
    matrix = all_stored.lookup_matrix(texts[10:30])
    assert all_stored.stats.cache_hits == 20
    assert all_stored.stats.encoded == 0
    fresh = CachingEncoder(HashEncoder(dim=16)).lookup(texts[10:30])
    assert np.array_equal(matrix, np.stack([fresh[t] for t in texts[10:30]]))
    assert CachingEncoder(HashEncoder(dim=16)).lookup_matrix([]).shape == (0, 0)
    db.close()


def test_get_matrix_fills_every_row_of_a_key_asked_twice(store, monkeypatch):
    keys = [text_key(f"enc-a {i}") for i in range(0, 3000, 2)]
    keys = [*keys, keys[0], text_key("never stored")]
    for scan in (1, 10**9):
        monkeypatch.setattr(cache, "_SCAN_MIN_KEYS", scan)
        matrix, found = store.get_matrix("enc-a", keys)
        assert found.tolist() == [True] * 1501 + [False]
        assert np.array_equal(matrix[1500], matrix[0])
        assert np.array_equal(matrix[0], store.get_many("enc-a", keys[:1])[keys[0]])
