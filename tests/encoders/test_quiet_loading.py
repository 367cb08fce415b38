"""Loading a model prints no "Loading weights: 100%|...| 103/103" bar (transformers 5 draws
one per load; ``make demo`` showed it), and nothing else is silenced."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from crystalbench.encoders.model_files import quiet_weight_loading


def _bars(desc: str) -> str:
    """What transformers' tqdm writes for a 3-step bar called ``desc``."""
    hf_logging = pytest.importorskip("transformers.utils.logging")
    if not hasattr(hf_logging, "set_tqdm_hook"):
        pytest.skip("this transformers draws no weight-loading bar")
    stream = io.StringIO()
    for _ in hf_logging.tqdm(range(3), desc=desc, file=stream):
        pass
    return stream.getvalue()


def test_only_the_weight_loading_bar_is_silenced_and_only_inside_the_block():
    assert "Loading weights" in _bars("Loading weights")  # drawn when nobody silences it
    with quiet_weight_loading():
        assert _bars("Loading weights") == ""
        assert "Downloading" in _bars("Downloading")  # other bars stay
    assert "Loading weights" in _bars("Loading weights")  # the hook is taken back


def test_a_hook_set_before_still_sees_every_bar():
    hf_logging = pytest.importorskip("transformers.utils.logging")
    if not hasattr(hf_logging, "set_tqdm_hook"):
        pytest.skip("this transformers has no tqdm hook")
    seen: list[str] = []

    def theirs(factory, args, kwargs):
        seen.append(kwargs.get("desc", ""))
        return factory(*args, **kwargs)

    previous = hf_logging.set_tqdm_hook(theirs)
    try:
        with quiet_weight_loading():
            assert _bars("Loading weights") == ""
            _bars("Other")
        assert hf_logging.set_tqdm_hook(theirs) is theirs  # restored, not cleared
    finally:
        hf_logging.set_tqdm_hook(previous)
    assert seen == ["Loading weights", "Other"]


@pytest.mark.slow
def test_loading_the_offline_minilm_prints_no_bar():
    """A real load with torch, as ``crystal demo`` (torch path) and the ONNX export do it."""
    pytest.importorskip("sentence_transformers")
    code = (
        "from crystalbench.encoders.sentence import SentenceTransformerEncoder\n"
        "SentenceTransformerEncoder('minilm-offline', device='cpu').load()\n"
        "print('loaded')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "loaded" in done.stdout
    assert "Loading weights" not in done.stderr + done.stdout
