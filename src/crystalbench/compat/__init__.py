"""Every rule of ``crystal-metrics`` 0.2.0 that differs from the paper, and nothing else.

Compat mode (``compat="crystal-metrics-0.2"``, ``answer_rules="crystal-metrics-0.2"``)
reproduces the numbers of the authors' PyPI package so that its published scores can be
recomputed; paper mode never reaches into this package. The differences are listed in
``docs/metrics.md`` ("Where compat mode differs").

Compat mode is reached through :class:`~crystalbench.config.scoring.ScoreConfig` (``compat``,
``answer_rules``). :mod:`crystalbench.compat.crystal_metrics` offers these rules behind
crystal-metrics' own API (a drop-in for code that calls its classes and reward functions;
``docs/crystal-metrics.md``); it is this package's one public module.
"""

__all__: list[str] = []
