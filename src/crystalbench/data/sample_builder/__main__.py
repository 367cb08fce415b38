"""``python -m crystalbench.data.sample_builder [--out DIR]``: regenerate the sample."""

from crystalbench.data.sample_builder.writer import main

main()
