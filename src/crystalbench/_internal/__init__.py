"""Small private helpers of crystalbench: reading and writing files, paths, the hub
probe, optional extras, SQLite and the OpenAI client factory. Nothing here is public.
"""

__all__: list[str] = []
