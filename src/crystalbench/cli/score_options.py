"""The options of ``crystal score``, declared once: each sets one field of
:class:`~crystalbench.scoring.job.ScoreJob` (the scoring choices under ``scoring.``).

This module imports neither typer nor pydantic: the ``crystal`` entry point reads the
command line with :data:`SCORE_FLAGS` to start the encoder before typer is imported
(:func:`crystalbench.cli.entry.score_encoder_hint`); :mod:`crystalbench.cli.score` makes
them typer options (:func:`crystalbench.cli.binding.configured`).
"""

from __future__ import annotations

from crystalbench.cli.flags import Flag, cache_flags, device_flag, read_ids, split_commas

SCORE_CONFIG_AT = "scoring"
"""Where ``crystal score --config FILE`` puts the file's fields: ``ScoreJob.scoring`` (a
file of :class:`~crystalbench.config.scoring.ScoreConfig` fields)."""

GUARD_FLAG = Flag(
    "scoring.guard",
    ("--guard",),
    "Fact guard (not in the paper): none; facts (a step pair that states incompatible facts "
    "- another number, a negation, an opposed relation, another option or colour - is no "
    "match); facts-strict (besides, a step that contradicts the reference step it restates "
    "matches nothing)",
)
"""``--guard``: one declaration for ``crystal score`` and ``crystal run``."""

ENCODER_FLAG = Flag(
    "scoring.encoder",
    ("--encoder",),
    "Sentence encoder: a sentence-transformers name or folder, minilm-offline or hash",
    metavar="NAME",
)
"""``--encoder``: one declaration for ``crystal score``, ``crystal run`` and (at the top
level of its config) ``crystal serve-rewards``."""

THRESHOLD_FLAG = Flag(
    "scoring.threshold",
    ("--threshold", "--tau"),
    "Cosine threshold tau: a step pair can match when its cosine is >= tau",
    kind=float,
)
"""``--threshold`` / ``--tau``: one declaration for ``crystal score`` and ``crystal run``."""

VERIFY_FLAGS: tuple[Flag, ...] = (
    Flag(
        "scoring.verify",
        ("--verify",),
        "Step verifier (not in the paper): none; unmatched (a vision-language model checks "
        "each predicted step no reference step matched); all (every predicted step)",
    ),
    Flag(
        "scoring.verifier.url",
        ("--verifier-url",),
        "OpenAI-compatible base URL of the step verifier (with --verifier-model; the rest "
        "in the config's verifier section)",
        metavar="URL",
        param_name="verifier_url",
        default_text="none",
    ),
    Flag(
        "scoring.verifier.model",
        ("--verifier-model",),
        "Model name of the step verifier (with --verifier-url); repeat it for several "
        "judges (the majority decides, their agreement is reported)",
        kind=list[str],
        metavar="NAME",
        param_name="verifier_model",
        default_text="none",
    ),
    Flag(
        "scoring.verifier.dry_run",
        ("--dry-run",),
        "With --verify: print the verifier's requests and estimated tokens, send none",
        kind=bool,
        param_name="dry_run",
    ),
)
"""The step verifier's options (:mod:`crystalbench.scoring.verify`)."""

EXTRACTOR_FLAGS: tuple[Flag, ...] = (
    Flag(
        "scoring.extractor.url",
        ("--extractor-url",),
        "OpenAI-compatible base URL of a model that reads the final answer where no answer "
        "rule committed (with --extractor-model; the rest in the config's extractor section)",
        metavar="URL",
        param_name="extractor_url",
        default_text="none: rules only",
    ),
    Flag(
        "scoring.extractor.model",
        ("--extractor-model",),
        "Model name of the answer extractor (with --extractor-url)",
        metavar="NAME",
        param_name="extractor_model",
        default_text="none",
    ),
)
"""The answer extractor's options (:mod:`crystalbench.scoring.extract`): one declaration for
``crystal score`` and ``crystal run``."""

SCORE_FLAGS: tuple[Flag, ...] = (
    Flag(
        "benchmark",
        ("--benchmark", "-b"),
        "sample, waybarrios/CRYSTAL, a save_to_disk folder, a .parquet or .jsonl file",
        metavar="BENCHMARK",
        required=True,
    ),
    Flag(
        "predictions",
        ("--predictions", "-p"),
        "Predictions: JSONL, a JSON object keyed by id, or a folder of <id>.json. Several "
        "sets (one encoder, one leaderboard, OUT/NAME/ each): repeat it, give NAME=FILE, a "
        "folder of .jsonl files or a quoted glob; names are file stems",
        kind=list[str],
        metavar="[NAME=]FILE",
        required=True,
    ),
    Flag(
        "input_format",
        ("--input-format",),
        "What wrote the predictions: crystal, lmms-eval (--log_samples JSONL) or vlmevalkit "
        "(.xlsx/.tsv/.csv with index and prediction columns); auto detects it per file",
    ),
    ENCODER_FLAG,
    THRESHOLD_FLAG,
    Flag("scoring.alpha", ("--alpha",), "Order weight of Ordered Match F1", kind=float),
    Flag(
        "scoring.order_metric",
        ("--order",),
        "Order score inside Ordered Match F1",
        param_name="order",
    ),
    Flag(
        "scoring.compat",
        ("--compat",),
        "crystal-metrics-0.2 reproduces that package's step rules (strict >, its tie "
        "order, blank steps kept)",
    ),
    Flag(
        "scoring.answer_rules",
        ("--answer-rules",),
        "crystal-metrics-0.2 reproduces that package's answer heuristics",
    ),
    Flag(
        "scoring.sources",
        ("--sources",),
        "Score only these sources (comma-separated, e.g. mathvision,plotqa)",
        convert=split_commas,
        metavar="NAMES",
        default_text="all",
    ),
    Flag(
        "scoring.ids",
        ("--ids",),
        "Score only these item ids: comma-separated, or @FILE with one id per line "
        "(recorded in summary.json)",
        convert=read_ids,
        metavar="IDS|@FILE",
        default_text="all",
    ),
    Flag(
        "scoring.limit",
        ("--limit",),
        "Score only the first N items (after --sources and --ids; recorded in summary.json)",
        kind=int,
        metavar="N",
        default_text="all",
    ),
    Flag(
        "scoring.judge.url",
        ("--judge-url",),
        "OpenAI-compatible base URL of a free-form answer judge (with --judge-model)",
        metavar="URL",
        param_name="judge_url",
        default_text="no judge: exact match",
    ),
    Flag(
        "scoring.judge.model",
        ("--judge-model",),
        "Model name of the free-form answer judge (with --judge-url)",
        metavar="NAME",
        param_name="judge_model",
        default_text="none",
    ),
    Flag(
        "scoring.matcher",
        ("--matcher",),
        "cosine (the paper: S >= tau) or judge (an LLM names the matching steps; "
        "one-to-one in cosine order)",
    ),
    Flag(
        "scoring.matcher_judge.url",
        ("--matcher-url",),
        "OpenAI-compatible base URL of the judge matcher (with --matcher-model)",
        metavar="URL",
        param_name="matcher_url",
        default_text="the answer judge's",
    ),
    Flag(
        "scoring.matcher_judge.model",
        ("--matcher-model",),
        "Model name of the judge matcher (with --matcher-url)",
        metavar="NAME",
        param_name="matcher_model",
        default_text="the answer judge's",
    ),
    GUARD_FLAG,
    *VERIFY_FLAGS,
    *EXTRACTOR_FLAGS,
    Flag(
        "scoring.lenient",
        ("--lenient/--strict",),
        "Skip and count bad records and unknown ids instead of failing",
        kind=bool,
    ),
    *cache_flags("scoring."),
    device_flag("scoring."),
    Flag(
        "scoring.backend",
        ("--backend",),
        "How the encoder runs: auto (ONNX Runtime on a CPU, torch on a GPU), torch, onnx "
        "or onnx-int8",
    ),
    Flag(
        "scoring.workers",
        ("--workers",),
        "Encode in this many worker processes",
        kind=int,
        metavar="N",
    ),
    Flag(
        "scoring.devices",
        ("--devices",),
        "One encoder worker per device, comma-separated (e.g. cuda:0,cuda:1)",
        convert=split_commas,
        metavar="DEVICES",
        default_text="one, on --device",
    ),
    Flag(
        "scoring.batch_size",
        ("--batch-size",),
        "Sentences per forward pass of the encoder",
        kind=int,
        metavar="N",
        default_text="64 on a CPU, 1024 on a GPU",
    ),
    Flag("scoring.dtype", ("--dtype",), "Encoder precision (float16 needs a GPU)"),
    Flag(
        "image_root",
        ("--image-root",),
        "A folder item images may lie in besides the benchmark file's own folder",
        metavar="FOLDER",
        default_text="none",
    ),
)
"""Every option of ``crystal score`` that sets a :class:`ScoreJob` field, in ``--help``
order."""
