"""Killed runs keep their encoding work: vectors reach the cache while a run goes on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence

import numpy as np
import pytest

from crystalbench.config.settings import CACHE_COMMIT_SECONDS, ENCODE_CALL_TEXTS
from crystalbench.encoders import CachingEncoder, EmbeddingStore, HashEncoder
from crystalbench.encoders.cache import text_key
from fakes import CountingEncoder

STEPS = [f"The bar for {1990 + i % 30} reaches {i % 97} million tonnes ({i})." for i in range(100)]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowEncoder(CountingEncoder):
    """Each call takes ``seconds`` on the fake clock and notes how much the store holds."""

    def __init__(self, clock: FakeClock, store: EmbeddingStore, seconds: float) -> None:
        super().__init__(HashEncoder(dim=32))
        self.clock, self.store, self.seconds = clock, store, seconds
        self.committed_before_call: list[int] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.committed_before_call.append(self.store.stats().get(self.identity, 0))
        self.clock.now += self.seconds
        return super().encode(texts)


def test_vectors_are_committed_every_few_seconds_while_encoding(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite")
    clock = FakeClock()
    inner = SlowEncoder(clock, store, seconds=2.0)
    front = CachingEncoder(inner, store, batch_size=10, commit_seconds=5.0, clock=clock)
    front.embed(STEPS)
    # Calls end at t = 2, 4, 6 (commit: 6 - 0 >= 5), 8, 10, 12 (commit), ... 20 (end).
    assert inner.committed_before_call == [0, 0, 0, 30, 30, 30, 60, 60, 60, 90]
    assert store.stats()[inner.identity] == 100
    assert front.stats.commits == 4


def test_commit_seconds_zero_commits_after_every_call(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite")
    clock = FakeClock()
    inner = SlowEncoder(clock, store, seconds=0.001)
    front = CachingEncoder(inner, store, batch_size=25, commit_seconds=0, clock=clock)
    front.embed(STEPS)
    assert inner.committed_before_call == [0, 25, 50, 75]
    assert front.stats.commits == 4


class FailingEncoder(CountingEncoder):
    def __init__(self, fail_on_call: int, error: BaseException) -> None:
        super().__init__(HashEncoder(dim=32))
        self.fail_on_call, self.error = fail_on_call, error

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if len(self.calls) == self.fail_on_call:
            raise self.error
        return super().encode(texts)


@pytest.mark.parametrize("error", [KeyboardInterrupt(), RuntimeError("CUDA out of memory")])
def test_an_interrupted_lookup_keeps_what_it_computed(tmp_path, error):
    """Ctrl-C (or an encoder error) in the third call: the first two calls' vectors stay."""
    store = EmbeddingStore(tmp_path / "e.sqlite")
    inner = FailingEncoder(2, error)
    front = CachingEncoder(inner, store, batch_size=10, commit_seconds=3600)
    with pytest.raises(type(error)):
        front.embed(STEPS)
    done = [t for call in inner.calls for t in call]
    assert len(done) == 20
    found = store.get_many(inner.identity, [text_key(t) for t in STEPS])
    assert sorted(found) == sorted(text_key(t) for t in done)
    expected = HashEncoder(dim=32).encode(done)
    assert all(np.array_equal(found[text_key(t)], expected[k]) for k, t in enumerate(done))


def test_calls_hold_a_whole_forward_batch_per_worker():
    class Batched(HashEncoder):
        def __init__(self, batch_size: int, workers: int = 1) -> None:
            super().__init__(dim=8)
            self.batch_size, self.workers = batch_size, workers

    assert CachingEncoder(HashEncoder()).call_texts() == ENCODE_CALL_TEXTS
    assert CachingEncoder(Batched(64)).call_texts() == ENCODE_CALL_TEXTS
    assert CachingEncoder(Batched(1024)).call_texts() == 1024  # a GPU's batch stays whole
    assert CachingEncoder(Batched(1024, workers=4)).call_texts() == 4096
    assert CachingEncoder(Batched(1024), batch_size=7).call_texts() == 7
    assert CACHE_COMMIT_SECONDS > 0


CHILD = """
    import sys, time
    from pathlib import Path
    from crystalbench.encoders import CachingEncoder, EmbeddingStore, HashEncoder

    class Slow(HashEncoder):
        calls = 0
        def encode(self, texts):
            Path(sys.argv[2]).write_text(str(Slow.calls))  # this call has started
            Slow.calls += 1
            time.sleep(0.05)
            return super().encode(texts)

    texts = [f"the value read for item {i} is {i * 7 % 101}" for i in range(4000)]
    store = EmbeddingStore(sys.argv[1])
    CachingEncoder(Slow(dim=32), store, batch_size=8, commit_seconds=0).embed(texts)
"""


def test_a_killed_run_keeps_its_finished_batches(tmp_path):
    """SIGKILL in the middle of a long encoding: every call finished before stays cached."""
    path, progress = tmp_path / "e.sqlite", tmp_path / "progress"
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(path), str(progress)],
        env={**os.environ},
    )
    deadline = time.monotonic() + 120
    started = -1
    while time.monotonic() < deadline and child.poll() is None:
        # One read: the child rewrites the file (truncate, then write), so a second read
        # could see it empty.
        seen = progress.read_text().strip() if progress.is_file() else ""
        if seen:
            started = int(seen)
            if started >= 6:
                break
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    assert child.returncode == -signal.SIGKILL
    assert started >= 6
    texts = [f"the value read for item {i} is {i * 7 % 101}" for i in range(4000)]
    store = EmbeddingStore(path)
    found = store.get_many(HashEncoder(dim=32).identity, [text_key(t) for t in texts])
    # Calls 0 .. started-1 finished and were committed before call `started` began.
    assert 8 * started <= len(found) < len(texts)
    expected = HashEncoder(dim=32).encode(texts)
    for row, text in enumerate(texts):
        if text_key(text) in found:
            assert np.array_equal(found[text_key(text)], expected[row])
