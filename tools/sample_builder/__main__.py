"""``python -m tools.sample_builder [--out DIR]``: regenerate the sample."""

from tools.sample_builder.writer import main

main()
