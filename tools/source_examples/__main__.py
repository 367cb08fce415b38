"""``python -m tools.source_examples [--out DIR]``: rewrite the package's example copies."""

import argparse
from pathlib import Path

from tools.source_examples.copies import EXAMPLES_DIR, build_source_examples

parser = argparse.ArgumentParser(
    description="Write the bundled sample in every source's published layout."
)
parser.add_argument("--out", type=Path, default=EXAMPLES_DIR, help="target folder")
arguments = parser.parse_args()
print(build_source_examples(arguments.out))
