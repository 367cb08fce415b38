"""Build tools of the crystalbench repository, kept out of the installed package.

Run them from the repository root (``python -m tools.<name>``); they import ``crystalbench``,
never the other way round (``tests/test_layers.py`` checks it):

- :mod:`tools.sample_builder`: draws the bundled sample benchmark
  (``src/crystalbench/data/sample``) and its prediction files, byte for byte.
"""
