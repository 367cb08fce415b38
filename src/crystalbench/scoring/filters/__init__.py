"""Candidate filters of the scoring engine: what may not match (the fact guard in
:mod:`.guard`)."""

__all__: list[str] = []
