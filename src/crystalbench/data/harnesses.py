"""Reading the outputs of other harnesses: lmms-eval's ``--log_samples`` and VLMEvalKit.

``crystal score --predictions`` scores what a model already produced elsewhere, without
running anything again:

- **lmms-eval** ``--log_samples`` JSONL (``samples_<task>.jsonl``): one object per line with
  ``doc_id``, ``doc`` (the dataset row without its images), ``target``, ``arguments``,
  ``resps`` (a list per request of the model's outputs), ``filtered_resps``, ``doc_hash``,
  ``prompt_hash``, ``target_hash`` and the task's metrics. The text scored is the raw
  generation ``resps[0][0]`` (filters such as answer extraction may strip the reasoning);
  ``filtered_resps[0]`` only when ``resps`` is absent. The item is ``doc["id"]`` when the row
  carries an ``id`` (the CRYSTAL task of :mod:`crystalbench.integrations.lmms_eval` does);
  otherwise ``doc_id`` is the 0-based position of the item in the benchmark (lmms-eval
  numbers the docs of the task's split in order). A task run with several filters logs each
  doc once per filter: those lines, holding the same generation, are one prediction; a doc
  logged twice with different generations is a duplicate.
- **VLMEvalKit** prediction files (``<model>_<dataset>.xlsx``, or ``.tsv`` / ``.csv``) with
  an ``index`` column (the item id: VLMEvalKit's TSV index, which a CRYSTAL TSV sets to the
  item id) and a ``prediction`` column (the model's raw text); other columns are ignored.

An id that does not map onto the benchmark raises :class:`~crystalbench.errors.InputError`
naming the file, the line (the spreadsheet row) and the field (``doc.id``, ``doc_id``,
``index``), as every other malformed record does; ``lenient`` records it and skips it.

Examples:
    >>> from pathlib import Path
    >>> detect_format(Path("Qwen2-VL_CRYSTAL.xlsx"))
    'vlmevalkit'
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from crystalbench._internal.extras import require
from crystalbench._internal.io import (
    InputLimits,
    iter_lines,
    read_jsonl,
    read_text_file,
    resolve_limits,
)
from crystalbench.config.settings import MAX_FILE_BYTES_ENV
from crystalbench.data.loading import Benchmark
from crystalbench.data.predictions import PredictionSet, load_predictions
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.types import Prediction

PredictionsFormat = Literal["auto", "crystal", "lmms-eval", "vlmevalkit"]
"""What ``--format`` accepts."""

PREDICTION_FORMATS: tuple[str, ...] = ("auto", "crystal", "lmms-eval", "vlmevalkit")

VLMEVALKIT_SUFFIXES: tuple[str, ...] = (".xlsx", ".tsv", ".csv")
"""File types of VLMEvalKit prediction files."""

_LMMS_EVAL_KEYS = ("resps", "filtered_resps")


def detect_format(path: Path) -> str:
    """Which harness wrote ``path``: ``vlmevalkit``, ``lmms-eval`` or ``crystal``.

    A spreadsheet (``.xlsx``, ``.tsv``, ``.csv``) is VLMEvalKit's; a ``.jsonl`` file whose
    first record has ``doc_id`` and ``resps`` or ``filtered_resps`` but no ``id`` is
    lmms-eval's; anything else (our JSONL, JSON, folders) is crystalbench's own.
    """
    if path.suffix.lower() in VLMEVALKIT_SUFFIXES:
        return "vlmevalkit"
    if path.is_file() and path.suffix == ".jsonl":
        first = _first_record(path)
        if (
            isinstance(first, dict)
            and "doc_id" in first
            and "id" not in first
            and any(key in first for key in _LMMS_EVAL_KEYS)
        ):
            return "lmms-eval"
    return "crystal"


def _first_record(path: Path) -> Any:
    """The first non-blank line of a JSONL file, decoded (``None`` when it does not decode:
    the reader chosen then reports the problem with its line)."""
    import json

    limits = resolve_limits(None)
    for _, raw in iter_lines(path, max_line_bytes=limits.max_line_bytes):
        if raw is None:
            return None
        if raw.strip():
            try:
                return json.loads(raw.decode("utf-8-sig"))
            except (UnicodeDecodeError, ValueError):
                return None
    return None


def load_predictions_as(
    path: str | Path,
    benchmark: Benchmark,
    fmt: str = "auto",
    *,
    lenient: bool = False,
    limits: InputLimits | None = None,
) -> PredictionSet:
    """Predictions from ``path`` in any format we read, ids mapped onto ``benchmark``.

    Args:
        path: A crystalbench predictions file or folder, an lmms-eval samples JSONL, or a
            VLMEvalKit ``.xlsx`` / ``.tsv`` / ``.csv`` prediction file.
        benchmark: The benchmark the ids refer to (lmms-eval's ``doc_id`` is a position in it).
        fmt: ``auto`` (see :func:`detect_format`), ``crystal``, ``lmms-eval`` or ``vlmevalkit``.
        lenient: Skip bad records (listed in ``problems``) instead of raising.
        limits: Size limits (default from the environment).

    Raises:
        InputError: A malformed file or record, or an id that does not map onto the
            benchmark (file, line and field named).
        UnknownNameError: ``fmt`` is not a format.
    """
    path = Path(path)
    if fmt not in PREDICTION_FORMATS:
        raise UnknownNameError("predictions format", fmt, PREDICTION_FORMATS)
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "lmms-eval":
        return read_lmms_eval_samples(path, benchmark, lenient=lenient, limits=limits)
    if fmt == "vlmevalkit":
        return read_vlmevalkit(path, benchmark, lenient=lenient, limits=limits)
    return load_predictions(path, lenient=lenient, limits=limits)


# --------------------------------------------------------------------------- lmms-eval


def _lmms_eval_response(record: dict[str, Any], path: Path, line: int) -> str:
    """The raw generation of a samples line: ``resps[0][0]``, else ``filtered_resps[0]``."""
    for key in _LMMS_EVAL_KEYS:
        if key not in record or record[key] is None:
            continue
        value = record[key]
        if not isinstance(value, list) or not value:
            raise InputError(
                "expected a non-empty list of the model's outputs", path=path, line=line, field=key
            )
        first = value[0]
        if isinstance(first, list):  # resps: one list of outputs per request
            if not first:
                raise InputError("the first request has no output", path=path, line=line, field=key)
            first = first[0]
        if not isinstance(first, str):
            raise InputError(
                f"expected the model's text, got {type(first).__name__} (a loglikelihood "
                "task? CRYSTAL needs generate_until outputs)",
                path=path,
                line=line,
                field=key,
            )
        return first
    raise InputError(
        "no model output: expected 'resps' or 'filtered_resps'", path=path, line=line, field="resps"
    )


def _lmms_eval_item_id(record: dict[str, Any], benchmark: Benchmark, path: Path, line: int) -> str:
    """``doc["id"]`` when the row has one, else the item at position ``doc_id``."""
    doc = record.get("doc")
    if isinstance(doc, dict) and doc.get("id") is not None:
        raw = doc["id"]
        if isinstance(raw, bool) or not isinstance(raw, (str, int)):
            raise InputError(
                f"must be a string or integer, got {type(raw).__name__}",
                path=path,
                line=line,
                field="doc.id",
            )
        item_id = str(raw)
        if benchmark.get(item_id) is None:
            raise InputError(
                f"item id {item_id!r} is not in benchmark {benchmark.name} (ids like "
                f"{', '.join(repr(i) for i in benchmark.ids[:3])}); was the task run on "
                "another dataset?",
                path=path,
                line=line,
                field="doc.id",
            )
        return item_id
    doc_id = record.get("doc_id")
    if isinstance(doc_id, bool) or not isinstance(doc_id, int):
        raise InputError(
            f"expected an integer position, got {type(doc_id).__name__}",
            path=path,
            line=line,
            field="doc_id",
        )
    if not 0 <= doc_id < len(benchmark):
        raise InputError(
            f"doc_id {doc_id} is not a position in benchmark {benchmark.name} "
            f"({len(benchmark)} items) and the doc has no 'id' to map it by; was the task "
            "run on another dataset?",
            path=path,
            line=line,
            field="doc_id",
        )
    return benchmark.items[doc_id].id


def read_lmms_eval_samples(
    path: str | Path,
    benchmark: Benchmark,
    *,
    lenient: bool = False,
    limits: InputLimits | None = None,
) -> PredictionSet:
    """Predictions from an lmms-eval ``--log_samples`` JSONL file (see the module docstring).

    Raises:
        InputError: A malformed line, an output that is not text, an id that does not map,
            or one doc logged twice with different generations.
    """
    path = Path(path)
    out = PredictionSet(source=str(path), by_id={})
    skipped = out.problems if lenient else None
    rows = (
        (line, functools.partial(_lmms_eval_entry, record, benchmark, path, line))
        for line, record in read_jsonl(path, skipped=skipped, limits=limits)
    )
    return _gather(out, path, rows, lenient=lenient)


def _lmms_eval_entry(
    record: dict[str, Any], benchmark: Benchmark, path: Path, line: int, out: PredictionSet
) -> tuple[str, str] | None:
    """``(item id, response)`` of one logged sample; ``None`` for the same doc logged again
    under another filter with the same output."""
    item_id = _lmms_eval_item_id(record, benchmark, path, line)
    response = _lmms_eval_response(record, path, line)
    first = out.by_id.get(item_id)
    if first is not None:
        if first.response == response:
            return None
        first_path, first_line = out.where[item_id]
        raise InputError(
            f"item {item_id!r} was logged before with another output (at "
            f"{first_path}:{first_line})",
            path=path,
            line=line,
            field="doc_id",
        )
    return item_id, response


def _gather(
    out: PredictionSet,
    path: Path,
    rows: Iterable[tuple[int, Callable[[PredictionSet], tuple[str, str] | None]]],
    *,
    lenient: bool,
) -> PredictionSet:
    """Collect the predictions of another harness's file into ``out``.

    Each row is ``(line, read)``; ``read(out)`` returns ``(item id, response)``, ``None`` to
    skip the row, or raises :class:`InputError` naming the file, line and field. Strict: the
    first error stops the reading; lenient: it is listed in ``out.problems`` and the row is
    skipped. A file without one valid row is an error either way.
    """
    for line, read in rows:
        try:
            entry = read(out)
        except InputError as error:
            if not lenient:
                raise
            out.problems.append(str(error))
            continue
        if entry is None:
            continue
        item_id, response = entry
        out.by_id[item_id] = Prediction(id=item_id, response=response)
        out.where[item_id] = (str(path), line)
    if not out.by_id:
        raise InputError("no valid records", path=path)
    return out


# --------------------------------------------------------------------------- VLMEvalKit


def _spreadsheet_rows(path: Path, limits: InputLimits) -> Iterator[tuple[int, list[Any]]]:
    """``(row number, cells)`` of the first sheet or the delimited file, header included."""
    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        if not path.is_file():
            raise InputError("file not found", path=path)
        openpyxl: Any = require(
            "openpyxl", what=f"reading {path} (.xlsx)", hint="Or save the sheet as .tsv."
        )
        size = path.stat().st_size
        if size > limits.max_file_bytes:
            raise InputError(
                f"file is {size:,} bytes, over the limit of {limits.max_file_bytes:,} "
                f"(raise it with ${MAX_FILE_BYTES_ENV})",
                path=path,
            )
        try:
            book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        except Exception as exc:  # zip or XML errors of a damaged workbook
            raise InputError(f"not a readable .xlsx workbook ({exc})", path=path) from None
        try:
            sheet = book.worksheets[0]
            for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
                yield number, list(row)
        finally:
            book.close()
        return
    text = read_text_file(path, max_bytes=limits.max_file_bytes, limit_env=MAX_FILE_BYTES_ENV)
    text = text.removeprefix("\ufeff")
    delimiter = "\t" if suffix == ".tsv" else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        for row in reader:
            yield reader.line_num, list(row)
    except csv.Error as exc:
        raise InputError(
            f"malformed {suffix[1:]} ({exc})", path=path, line=reader.line_num
        ) from None


def _cell_text(value: Any) -> str | None:
    """A cell as text: integral floats (pandas writes ids as ``3.0``) lose their ``.0``."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_vlmevalkit(
    path: str | Path,
    benchmark: Benchmark,
    *,
    lenient: bool = False,
    limits: InputLimits | None = None,
) -> PredictionSet:
    """Predictions from a VLMEvalKit prediction file (``index`` and ``prediction`` columns).

    An empty ``prediction`` cell is an empty output (it scores as a parse failure).

    Raises:
        InputError: A missing column, a blank or unknown ``index``, or one index twice.
    """
    path = Path(path)
    limits = resolve_limits(limits)
    out = PredictionSet(source=str(path), by_id={})
    rows = _spreadsheet_rows(path, limits)
    header_row = next(rows, None)
    if header_row is None:
        raise InputError("file holds no rows", path=path)
    _, header = header_row
    names = [str(cell).strip() if cell is not None else "" for cell in header]
    columns = {}
    present = ", ".join(n for n in names if n) or "none"
    for wanted in ("index", "prediction"):
        if wanted not in names:
            raise InputError(
                f"missing column {wanted!r} (columns: {present})",
                path=path,
                line=1,
                field=wanted,
            )
        columns[wanted] = names.index(wanted)
    entries = (
        (
            number,
            functools.partial(
                _vlmevalkit_entry, row, names, columns, benchmark, path, number, limits
            ),
        )
        for number, row in rows
        if any(cell not in (None, "") for cell in row)  # blank rows are skipped
    )
    return _gather(out, path, entries, lenient=lenient)


def _vlmevalkit_entry(
    row: list[Any],
    names: list[str],
    columns: dict[Literal["index", "prediction"], int],
    benchmark: Benchmark,
    path: Path,
    number: int,
    limits: InputLimits,
    out: PredictionSet,
) -> tuple[str, str]:
    """``(item id, response)`` of one row of a VLMEvalKit prediction file."""
    cells = row + [None] * (len(names) - len(row))
    item_id = _cell_text(cells[columns["index"]])
    if item_id is None or not item_id.strip():
        raise InputError("blank index", path=path, line=number, field="index")
    item_id = item_id.strip()
    if benchmark.get(item_id) is None:
        raise InputError(
            f"index {item_id!r} is not an item id of benchmark {benchmark.name} (ids "
            f"like {', '.join(repr(i) for i in benchmark.ids[:3])})",
            path=path,
            line=number,
            field="index",
        )
    if item_id in out.by_id:
        first = out.where[item_id][1]
        raise InputError(
            f"duplicate index {item_id!r} (first at row {first})",
            path=path,
            line=number,
            field="index",
        )
    response = _cell_text(cells[columns["prediction"]]) or ""
    if len(response) > limits.max_response_chars:
        raise InputError(
            f"{len(response):,} characters, over the limit of {limits.max_response_chars:,}",
            path=path,
            line=number,
            field="prediction",
        )
    return item_id, response
