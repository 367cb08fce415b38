"""Statistics over per-item values: bootstrap intervals, paired tests and breakdowns
(:mod:`.intervals`), agreement between raters (:mod:`.agreement`).
"""

__all__: list[str] = []
