"""The ``crystal`` command line: thin typer commands over library functions."""
