"""The ``crystal`` command line: thin typer commands over library functions.

The public surface here is the ``crystal`` command itself (its options, documented by
``crystal COMMAND --help``), not Python names: call the library functions the commands call.
Every module of this package is internal.
"""

__all__: list[str] = []
