"""The CRYSTAL task for lmms-eval: ``crystal.yaml`` and ``utils.py`` (the files the task folder
holds) and :mod:`~crystalbench.integrations.lmms_eval.task`, which they call.

lmms-eval reaches the task through ``crystal.yaml`` (``crystal integrations lmms-eval -o DIR``);
no Python name of this package is public.
"""

__all__: list[str] = []
