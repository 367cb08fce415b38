"""Every rule of ``crystal-metrics`` 0.2.0 that differs from the paper, and nothing else.

Compat mode (``compat="crystal-metrics-0.2"``, ``answer_rules="crystal-metrics-0.2"``)
reproduces the numbers of the authors' PyPI package so that its published scores can be
recomputed; paper mode never reaches into this package. The differences are listed in
``docs/metrics.md`` ("Where compat mode differs").

Compat mode is reached through :class:`~crystalbench.config.ScoreConfig` (``compat``,
``answer_rules``); no name of this package is public.
"""

__all__: list[str] = []
