"""Configuration: the scoring configs (:mod:`.scoring`), the one loader
(:mod:`.loader`: file, environment, flags) and how the tools run
(:mod:`.settings`)."""

__all__: list[str] = []
