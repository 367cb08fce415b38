"""Run one ``crystal`` or ``crystal-metrics`` command in this process and record its timeline.

The command is the real one (``crystalbench.cli.main:app``, ``crystal_metrics.cli:main``,
the same code a user's console script runs); a few functions are wrapped to note the time
when they start and end, which changes nothing they do::

    python benchmarks/timed_run.py --record run.json -- crystal score -b B -p P -o OUT
    python benchmarks/timed_run.py --record run.json -- crystal-metrics evaluate P.json R.json

The record (seconds since this interpreter ran its first line; ``started_at`` is the wall
clock then, so a parent that noted when it spawned the process adds the interpreter's own
start-up):

- ``imports_done``: the command's modules are imported, including those the command would
  import lazily (crystalbench: scoring, data, predictions; crystal-metrics: its evaluator,
  which imports sentence-transformers and torch). Start-up. With ``--lazy-imports``
  (crystalbench only) nothing is imported beforehand but the two encoder modules that are
  wrapped: the command imports what it needs when it needs it, as the console script does,
  so the time to the first batch is the user's (``imports_done`` is then only the wrapper).
- ``model_loads``: ``[start, end]`` of every model load, on any thread (crystalbench: the
  ONNX Runtime session and tokenizer, which ``crystal score`` loads on a background thread
  while it reads its files, or the ``SentenceTransformer`` including its imports;
  crystal-metrics: ``MLLMReasoningEvaluator.__init__``); ``exports``: ONNX exports made.
  ``model_wait_s``: how long the main thread spent loading or waiting for a model.
- ``first_forward_done``: the first forward batch returned (``first_forward_started`` when it
  started); ``forward_s`` / ``forward_calls``: wall time inside forward passes.
- ``command_done`` and ``exit_code``.

The two timing views of ``bench_cli.py`` come from it: *included* is the parent's wall time
of the whole process; *excluded* is ``command_done - imports_done - model_wait_s`` (a
background load that ran beside other work is not subtracted: only the time the command
waited for it).
"""

from __future__ import annotations

import time

STARTED_AT = time.time()
_T0 = time.perf_counter()
_CPU0 = time.process_time()

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

RECORD: dict[str, Any] = {
    "started_at": STARTED_AT,
    "model_loads": [],
    "exports": [],
    "forward_s": 0.0,
    "forward_calls": 0,
    "model_wait_s": 0.0,
    "first_forward_started": None,
    "first_forward_done": None,
    "cpu": {},
}


def now() -> float:
    """Seconds since this interpreter ran its first line."""
    return time.perf_counter() - _T0


def mark_cpu(event: str) -> None:
    """Note this process's CPU seconds (all threads) at ``event``; on a loaded machine the
    wall clock stretches, CPU time much less."""
    RECORD["cpu"][event] = time.process_time() - _CPU0


def timed_forward(inner: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a forward pass (ORT ``session.run`` or a torch module's ``forward``)."""

    @functools.wraps(inner)
    def forward(*args: Any, **kwargs: Any) -> Any:
        started = now()
        if RECORD["first_forward_started"] is None:
            RECORD["first_forward_started"] = started
        try:
            return inner(*args, **kwargs)
        finally:
            done = now()
            RECORD["forward_s"] += done - started
            RECORD["forward_calls"] += 1
            if RECORD["first_forward_done"] is None:
                RECORD["first_forward_done"] = done
                mark_cpu("first_forward_done")

    return forward


def interval(key: str, inner: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``inner`` so that each call appends ``[start, end]`` to ``RECORD[key]``."""

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = now()
        try:
            return inner(*args, **kwargs)
        finally:
            RECORD[key].append([started, now()])

    return wrapper


def on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def waited(inner: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a load so that the main thread's time in it is added to ``model_wait_s``."""

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not on_main_thread():
            return inner(*args, **kwargs)
        started = now()
        try:
            return inner(*args, **kwargs)
        finally:
            RECORD["model_wait_s"] += now() - started

    return wrapper


def hook_crystalbench(lazy: bool = False) -> Callable[[list[str]], int]:
    """Import the ``crystal`` entry point (and, unless ``lazy``, the modules its commands
    import); wrap model loading."""
    from crystalbench.encoders import onnx_backend, sentence

    onnx_load = onnx_backend.OnnxEncoder._load

    def load_onnx(self: Any) -> None:
        started = now()
        try:
            onnx_load(self)
        finally:
            RECORD["model_loads"].append([started, now()])
            mark_cpu("model_loaded")
        self._session.run = timed_forward(self._session.run)

    st_load = sentence.SentenceTransformerEncoder._load

    def load_st(self: Any) -> Any:
        started = now()
        try:
            model = st_load(self)
        finally:
            RECORD["model_loads"].append([started, now()])
            mark_cpu("model_loaded")
        model.forward = timed_forward(model.forward)
        return model

    onnx_backend.OnnxEncoder._load = load_onnx  # type: ignore[method-assign]
    # load() is what the main thread calls: it loads, or waits for the background load
    onnx_backend.OnnxEncoder.load = waited(onnx_backend.OnnxEncoder.load)  # type: ignore[method-assign]
    sentence.SentenceTransformerEncoder._load = waited(load_st)  # type: ignore[method-assign]
    onnx_backend.export_sentence_transformer = interval(
        "exports", onnx_backend.export_sentence_transformer
    )
    if not lazy:
        import crystalbench.cli.main
        import crystalbench.config.scoring
        import crystalbench.data
        import crystalbench.data.predictions
        import crystalbench.scoring.evaluation  # noqa: F401
    from crystalbench.cli.entry import main

    def run(argv: list[str]) -> int:
        try:
            main(argv)
        except SystemExit as exc:
            return int(exc.code or 0) if not isinstance(exc.code, str) else 1
        return 0

    return run


def hook_crystal_metrics() -> Callable[[list[str]], int]:
    """Import crystal-metrics' CLI and evaluator; wrap the evaluator's model loading."""
    import crystal_metrics.accuracy  # noqa: F401
    import crystal_metrics.reasoning as reasoning
    import pandas  # noqa: F401
    from crystal_metrics.cli import main

    init = reasoning.MLLMReasoningEvaluator.__init__

    def evaluator_init(self: Any, *args: Any, **kwargs: Any) -> None:
        started = now()
        try:
            init(self, *args, **kwargs)
        finally:
            RECORD["model_loads"].append([started, now()])
            mark_cpu("model_loaded")
        self.model.forward = timed_forward(self.model.forward)

    reasoning.MLLMReasoningEvaluator.__init__ = evaluator_init  # type: ignore[method-assign]

    def run(argv: list[str]) -> int:
        try:
            return int(main(argv) or 0)
        except SystemExit as exc:
            return int(exc.code or 0) if not isinstance(exc.code, str) else 1

    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", type=Path, required=True, help="JSON file to write")
    parser.add_argument(
        "--lazy-imports",
        action="store_true",
        help="crystal: import nothing beforehand (the time to the first batch as users see it)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- crystal|crystal-metrics ...")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or command[0] not in ("crystal", "crystal-metrics"):
        parser.error("give the command after --: crystal ... or crystal-metrics ...")
    RECORD["command"] = command
    run = (
        hook_crystalbench(args.lazy_imports) if command[0] == "crystal" else hook_crystal_metrics()
    )
    RECORD["imports_done"] = now()
    mark_cpu("imports_done")
    code = 1
    try:
        code = run(command[1:])
    finally:
        RECORD["command_done"] = now()
        mark_cpu("command_done")
        RECORD["exit_code"] = code
        loads = sum(end - start for start, end in RECORD["model_loads"])
        RECORD["model_load_s"] = loads
        if command[0] == "crystal-metrics":  # it loads on the main thread only
            RECORD["model_wait_s"] = loads
        wait = RECORD["model_wait_s"]
        RECORD["excluded_s"] = RECORD["command_done"] - RECORD["imports_done"] - wait
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(RECORD, indent=2), encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
