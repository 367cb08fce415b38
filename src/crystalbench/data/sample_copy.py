"""The bundled sample's prediction sets, copied where a user can read them.

The documentation's first commands score files a new user does not have yet;
``crystal data sample -o runs`` writes the sample's five model styles there
(``runs/terse-precise.jsonl`` and the others), the files those commands then read. The
benchmark itself needs no copy: ``--benchmark sample`` names it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from crystalbench.data.loading import SAMPLE_DIR
from crystalbench.errors import InputError

__all__ = ["SAMPLE_PREDICTIONS", "copy_sample_predictions", "sample_prediction_files"]

SAMPLE_PREDICTIONS = SAMPLE_DIR / "predictions"
"""The folder of the sample's prediction sets inside the package."""


def sample_prediction_files() -> list[Path]:
    """The sample's prediction files, sorted by name (one per model style).

    Examples:
        >>> [path.name for path in sample_prediction_files()][:2]
        ['messy-raw.jsonl', 'right-answer-weak-reasoning.jsonl']
    """
    return sorted(SAMPLE_PREDICTIONS.glob("*.jsonl"))


def copy_sample_predictions(out: str | Path, *, overwrite: bool = False) -> list[Path]:
    """Write the sample's prediction sets into the folder ``out`` (created when missing).

    A file already there with the same bytes is left as it is, so the command can be run
    again; one with other bytes is refused (it is not the sample's) unless ``overwrite``.

    Returns:
        The files, in :func:`sample_prediction_files` order.

    Raises:
        InputError: ``out`` is a file, or holds a file of one of these names with other
            bytes (without ``overwrite``).

    Examples:
        >>> import tempfile
        >>> written = copy_sample_predictions(Path(tempfile.mkdtemp()) / "runs")
        >>> [path.name for path in written][-1], len(written)
        ('verbose-recall.jsonl', 5)
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", path=out, field="--out")
    sources = sample_prediction_files()
    targets = [out / source.name for source in sources]
    if not overwrite:
        for source, target in zip(sources, targets, strict=True):
            same = target.is_file() and target.read_bytes() == source.read_bytes()
            if target.exists() and not same:
                raise InputError(
                    "already exists and is not the sample's file: choose another --out, or "
                    "pass --overwrite to replace it",
                    path=target,
                )
    out.mkdir(parents=True, exist_ok=True)
    for source, target in zip(sources, targets, strict=True):
        shutil.copyfile(source, target)
    return targets
