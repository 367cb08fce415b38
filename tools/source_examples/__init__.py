"""Each CRYSTAL source's published layout, written by code: the tests' source copies and the
package's example copies of the sample (``src/crystalbench/sources/examples``).

A repository tool outside the installed package (no module of ``crystalbench`` imports it):

- :mod:`~tools.source_examples.layouts`: one writer per source layout (Parquet shards,
  ``save_to_disk``, MMVP's CSV, PlotQA's and TextVQA's JSON releases);
- :mod:`~tools.source_examples.copies`: the sample's items in those layouts, and
  :func:`~tools.source_examples.copies.build_source_examples`, which writes them.

``python -m tools.source_examples [--out DIR]`` rewrites the example copies.
"""

from tools.source_examples.copies import EXAMPLES_DIR, SOURCES, build_source_examples

__all__ = ["EXAMPLES_DIR", "SOURCES", "build_source_examples"]
