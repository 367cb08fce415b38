"""The CRYSTAL task for lmms-eval: ``crystal.yaml`` and ``utils.py`` (the files the task folder
holds) and :mod:`~crystalbench.integrations.lmms_eval.task`, which they call."""
