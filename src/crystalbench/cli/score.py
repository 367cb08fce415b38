"""``crystal score``: score saved predictions against a benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from crystalbench.cli.common import (
    breakdown_table,
    console,
    counts_line,
    handle_errors,
    leaderboard_table,
    progress_hook,
)
from crystalbench.defaults import ALPHA, ENCODER, ORDER_METRIC, TAU
from crystalbench.settings import ENCODER_BACKEND

# Options default to None ("not given") so that a --config file can supply values and
# explicit flags still win; the real defaults live in ScoreConfig / defaults.py and settings.py.


@handle_errors
def score(
    benchmark: Annotated[
        str,
        typer.Option(
            "--benchmark",
            "-b",
            help="sample, waybarrios/CRYSTAL, a save_to_disk folder, a .parquet or .jsonl file",
        ),
    ],
    predictions: Annotated[
        list[str],
        typer.Option(
            "--predictions",
            "-p",
            help="JSONL, a JSON object keyed by id, or a folder of <id>.json. Several sets "
            "(one encoder, one leaderboard, OUT/NAME/ each): repeat it, give NAME=FILE, a "
            "folder of .jsonl files or a quoted glob; names are file stems",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="Folder for examples.jsonl and summary.json; with several sets, one folder "
            "OUT/NAME per set",
        ),
    ],
    more: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Argument(
            metavar="PREDICTIONS",
            help="More prediction files (what an unquoted shell glob after -p expands to)",
            show_default=False,
        ),
    ] = None,
    encoder: Annotated[
        str | None,
        typer.Option(
            help=f"Sentence encoder: hub name, folder, minilm-offline or hash [default: {ENCODER}]"
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", "--tau", help=f"Cosine threshold tau [default: {TAU}]"),
    ] = None,
    alpha: Annotated[
        float | None, typer.Option(help=f"Order weight of Ordered Match F1 [default: {ALPHA}]")
    ] = None,
    order: Annotated[
        str | None,
        typer.Option("--order", help=f"Order score: lis or kendall [default: {ORDER_METRIC}]"),
    ] = None,
    compat: Annotated[
        str | None,
        typer.Option(
            help="none or crystal-metrics-0.2 (strict >, its tie order, blank steps kept) "
            "[default: none]"
        ),
    ] = None,
    answer_rules: Annotated[
        str | None,
        typer.Option(help="paper or crystal-metrics-0.2 answer heuristics [default: paper]"),
    ] = None,
    sources: Annotated[str | None, typer.Option(help="Comma-separated sources to score")] = None,
    judge_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible base URL of a free-form answer judge")
    ] = None,
    judge_model: Annotated[str | None, typer.Option(help="Judge model name")] = None,
    matcher: Annotated[
        str | None,
        typer.Option(
            help="cosine (the paper: S >= tau) or judge (an LLM names the matching steps; "
            "one-to-one in cosine order) [default: cosine]"
        ),
    ] = None,
    matcher_url: Annotated[
        str | None,
        typer.Option(help="OpenAI-compatible base URL of the judge matcher [default: --judge-url]"),
    ] = None,
    matcher_model: Annotated[
        str | None, typer.Option(help="Judge matcher model name [default: --judge-model]")
    ] = None,
    lenient: Annotated[
        bool | None,
        typer.Option(
            "--lenient/--strict",
            help="Skip and count bad records and unknown ids instead of failing [default: strict]",
        ),
    ] = None,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            help="Embedding cache folder [default: $CRYSTALBENCH_CACHE_DIR, ~/.cache/crystalbench]"
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the embedding cache")
    ] = False,
    device: Annotated[
        str | None, typer.Option(help="Encoder device (cuda, cpu, mps) [default: auto]")
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            help="How the encoder runs: auto (ONNX Runtime on a CPU, torch on a GPU), torch, "
            f"onnx or onnx-int8 [default: {ENCODER_BACKEND}]"
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Encode in this many worker processes [default: 1]"),
    ] = None,
    devices: Annotated[
        str | None,
        typer.Option(help="Comma-separated devices, one worker each (e.g. cuda:0,cuda:1)"),
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option(min=1, help="Sentences per forward pass [default: 64 CPU, 1024 GPU]"),
    ] = None,
    dtype: Annotated[
        str | None,
        typer.Option(help="Encoder precision: float32 or float16 (GPU only) [default: float32]"),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option("--config", help="YAML file with ScoreConfig fields; flags override it"),
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show progress bars")] = True,
    image_root: Annotated[
        Path | None,
        typer.Option(help="Folder item images may lie in besides the benchmark file's folder"),
    ] = None,
    predictions_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="Predictions written by: crystal, lmms-eval (--log_samples JSONL) or "
            "vlmevalkit (.xlsx/.tsv/.csv with index and prediction columns); auto detects it",
        ),
    ] = "auto",
) -> None:
    """Score a model's predictions: writes OUT/examples.jsonl and OUT/summary.json.

    Several sets (-p A=a.jsonl -p B=b.jsonl, a folder, a glob): one encoder, OUT/NAME/ each.

    A bad set fails alone: exit code 2 once the others are scored and written.
    """
    from crystalbench.encoders import early_encoder, load_encoder, preload_encoder

    def build_encoder(name: str, on: str | None, folder: str | None) -> Any:
        """The encoder the scorer would build (flags not given keep load_encoder's defaults);
        the one the ``crystal`` entry point started already when it was built from these."""
        speed = (backend, workers, devices, batch_size, dtype)
        started = early_encoder(("score", name, on, folder)) if speed == (None,) * 5 else None
        if started is not None:
            return started
        return load_encoder(
            name,
            device=on,
            dtype=dtype or "float32",
            batch_size=batch_size,
            backend=backend or ENCODER_BACKEND,
            workers=workers or 1,
            devices=[d.strip() for d in devices.split(",") if d.strip()] if devices else None,
            cache_dir=folder,
        )

    # Built first, so that its model loads in the background (ONNX Runtime, export cached)
    # while the rest of the scoring code is imported and the files are read and parsed.
    # Without a --config file the encoder fields are the flags or their defaults.
    folder = str(cache_dir) if cache_dir else None
    early = None
    if config_file is None:
        early = build_encoder(encoder or ENCODER, device, folder)
        preload_encoder(early)
    fast_encoder = early
    try:
        from crystalbench.data import load_benchmark
        from crystalbench.integrations.outputs import PREDICTION_FORMATS, load_predictions_as
        from crystalbench.scoring import evaluate
        from crystalbench.scoring_many import single_predictions_path

        if predictions_format not in PREDICTION_FORMATS:
            from crystalbench.errors import UnknownNameError

            raise UnknownNameError("predictions format", predictions_format, PREDICTION_FORMATS)
        values = [*predictions, *(more or [])]
        single = single_predictions_path(values)

        config = score_config(
            config_file,
            encoder=encoder,
            threshold=threshold,
            alpha=alpha,
            order_metric=order,
            compat=compat,
            answer_rules=answer_rules,
            lenient=lenient,
            cache_dir=folder,
            device=device,
            use_cache=False if no_cache else None,
            sources=sources,
            judge_url=judge_url,
            judge_model=judge_model,
            matcher=matcher,
            matcher_url=matcher_url,
            matcher_model=matcher_model,
            backend=backend,
            workers=workers,
            devices=[d.strip() for d in devices.split(",") if d.strip()] if devices else None,
            batch_size=batch_size,
            dtype=dtype,
        )
        wanted = (config.encoder, config.device, config.cache_dir)
        if fast_encoder is None or (encoder or ENCODER, device, folder) != wanted:
            # a --config file named another encoder (or one was given): build that one
            fast_encoder = build_encoder(*wanted)
            preload_encoder(fast_encoder)
        bench = load_benchmark(benchmark, image_root=image_root)
        if single is None:
            _score_many(bench, values, config, fast_encoder, out, progress, predictions_format)
            return
        preds = load_predictions_as(single, bench, predictions_format, lenient=config.lenient)
        with progress_hook(progress) as hook:
            run = evaluate(bench, preds, config, encoder=fast_encoder, progress=hook, out_dir=out)
    finally:
        for built in {id(e): e for e in (early, fast_encoder) if e is not None}.values():
            close = getattr(built, "close", None)
            if close is not None:
                close()
    name = preds.model or single.stem
    console.print(leaderboard_table([(name, run.summary)], title=f"CRYSTAL scores ({bench.name})"))
    console.print(breakdown_table(run.summary, "by_source", "By source"))
    console.print(breakdown_table(run.summary, "by_difficulty", "By difficulty"))
    s = run.summary
    skipped = s.n_invalid_records + s.n_unknown_ids
    console.print(counts_line(s) + (f" | skipped records {skipped}" if skipped else ""))
    console.print(
        f"encoder {config.encoder} ({run.encode_stats.encoded} encoded, "
        f"{run.encode_stats.cache_hits} from cache) | wrote {out}/examples.jsonl, "
        f"{out}/summary.json"
    )
    _matcher_line(run.summary.config)


def _score_many(
    bench: Any,
    values: list[str],
    config: Any,
    encoder: Any,
    out: Path,
    progress: bool,
    predictions_format: str = "auto",
) -> None:
    """Score several prediction sets into OUT/NAME/, print the leaderboard and the failures.

    Raises:
        typer.Exit: Code 2 when any set failed (the others are scored and written).
    """
    from crystalbench.cli.common import EXIT_INPUT, err_console
    from crystalbench.results import EXAMPLES_FILE, SUMMARY_FILE
    from crystalbench.scoring_many import evaluate_many, resolve_prediction_args

    entries, failures = resolve_prediction_args(values)
    entries, failures = _read_harness_files(bench, entries, failures, config, predictions_format)
    with progress_hook(progress) as hook:
        many = evaluate_many(
            bench, entries, config, encoder=encoder, progress=hook, out_dir=out, keep_items=False
        )
    failures = [*failures, *many.failures]
    if many.runs:
        rows = [(name, run.summary) for name, run in many.runs.items()]
        console.print(leaderboard_table(rows, title=f"CRYSTAL leaderboard ({bench.name})"))
        for name, run in many.runs.items():
            skipped = run.summary.n_invalid_records + run.summary.n_unknown_ids
            if skipped:
                console.print(f"{name}: skipped records {skipped}", highlight=False, markup=False)
        stats = many.encode_stats
        console.print(
            f"encoder {config.encoder} ({stats.encoded} encoded, {stats.cache_hits} from "
            f"cache) | wrote {len(many.runs)} results folders {out}/NAME/ "
            f"({EXAMPLES_FILE}, {SUMMARY_FILE})",
            highlight=False,
            markup=False,
        )
        _matcher_line(next(iter(many.runs.values())).summary.config)
        console.print(
            f"next: crystal leaderboard {out}/*  |  crystal report {out}/*",
            highlight=False,
            markup=False,
        )
    if failures:
        total = len(many.runs) + len(failures)
        err_console.print(
            f"[bold red]error:[/] {len(failures)} of {total} prediction sets failed"
            + (" (the others were scored):" if many.runs else ":"),
            highlight=False,
        )
        for failure in failures:
            previous = (
                failure.name not in many.runs
                and _is_folder_name(failure.name)
                and (out / failure.name / SUMMARY_FILE).is_file()
            )
            note = " (its folder keeps an earlier run's results)" if previous else ""
            err_console.print(f"  {failure}{note}", highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(EXIT_INPUT)


def _read_harness_files(
    bench: Any, entries: list[Any], failures: list[Any], config: Any, predictions_format: str
) -> tuple[list[Any], list[Any]]:
    """Read the sets other harnesses wrote (lmms-eval, VLMEvalKit) against the benchmark;
    crystalbench's own files stay paths for :func:`evaluate_many` to read."""
    from pathlib import Path as _Path

    from crystalbench.errors import CrystalbenchError
    from crystalbench.integrations.outputs import detect_format, load_predictions_as
    from crystalbench.scoring_many import FailedSet

    kept: list[Any] = []
    failed = list(failures)
    for name, value in entries:
        if not isinstance(value, (str, _Path)):
            kept.append((name, value))
            continue
        path = _Path(value)
        fmt = detect_format(path) if predictions_format == "auto" else predictions_format
        if fmt == "crystal":
            kept.append((name, value))
            continue
        try:
            kept.append((name, load_predictions_as(path, bench, fmt, lenient=config.lenient)))
        except CrystalbenchError as error:
            failed.append(FailedSet(name, str(path), error))
    return kept, failed


def _matcher_line(config: dict[str, Any]) -> None:
    """With the judge matcher: its requests, cache hits and failures (never silent)."""
    info = config.get("matcher_identity")
    if not info:
        return
    failed = info.get("failed_reference_steps", 0)
    console.print(
        f"judge matcher {info.get('model')} at {info.get('base_url')}: "
        f"{info.get('requests', 0)} requests, {info.get('cache_hits', 0)} from cache, "
        f"{failed} reference steps without a verdict (no candidate)"
        + (f"; first error: {info.get('first_error')}" if failed else ""),
        highlight=False,
        markup=False,
    )


def _is_folder_name(name: str) -> bool:
    from crystalbench.errors import InputError
    from crystalbench.scoring_many import check_run_name

    try:
        check_run_name(name)
    except InputError:
        return False
    return True


def score_config(
    config_file: Path | None = None,
    *,
    sources: str | None = None,
    judge_url: str | None = None,
    judge_model: str | None = None,
    matcher_url: str | None = None,
    matcher_model: str | None = None,
    **options: Any,
) -> Any:
    """The ``ScoreConfig`` of one ``crystal score`` call: ``--config`` file, then the flags.

    Options left ``None`` (not given) keep the file's value or the default, so a flag
    always wins over the file. ``options`` are ``ScoreConfig`` fields (``encoder``,
    ``threshold``, ``compat``, ``use_cache``...); ``sources`` is the comma-separated flag.

    Raises:
        InputError: A bad file, value or name (naming the field), or a judge half given.
    """
    from crystalbench.config import JudgeConfig, ScoreConfig, load_config
    from crystalbench.errors import InputError

    base: ScoreConfig = load_config(config_file) if config_file else ScoreConfig()
    overrides: dict[str, Any] = {key: value for key, value in options.items() if value is not None}
    if sources:
        overrides["sources"] = [s.strip() for s in sources.split(",") if s.strip()]
    if judge_url or judge_model:
        if not (judge_url and judge_model):
            raise InputError("--judge-url and --judge-model go together", field="judge")
        overrides["judge"] = JudgeConfig(url=judge_url, model=judge_model)
    if matcher_url or matcher_model:
        if not (matcher_url and matcher_model):
            raise InputError("--matcher-url and --matcher-model go together", field="matcher")
        overrides["matcher_judge"] = JudgeConfig(url=matcher_url, model=matcher_model)
    elif overrides.get("matcher") == "judge" and base.matcher_judge is None:
        if not (judge_url and judge_model):
            raise InputError(
                "--matcher judge needs an endpoint: --matcher-url and --matcher-model (or "
                "--judge-url and --judge-model, shared with the answer judge)",
                field="matcher",
            )
        overrides["matcher_judge"] = JudgeConfig(url=judge_url, model=judge_model)
    return validated_config(base, overrides)


def validated_config(base: Any, overrides: dict[str, Any]) -> Any:
    """``ScoreConfig`` from a base config plus overrides; bad values raise ``InputError``."""
    from pydantic import ValidationError

    from crystalbench.config import ScoreConfig
    from crystalbench.errors import InputError

    try:
        return ScoreConfig.model_validate({**base.model_dump(), **overrides})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise InputError(first.get("msg", "invalid value"), field=loc or None) from None
