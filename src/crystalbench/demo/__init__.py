"""What only the demos need: the offline construction demo, its scripted models and
server."""

__all__: list[str] = []
