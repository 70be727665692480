"""ERASER-style faithfulness of attribution explainers (DeYoung et al., ACL 2020): comprehensiveness
and sufficiency as AOPC over the top 1, 5, 10, 20 and 50 % of tokens, on the human-grounded
protocol's well-trained Amazon CNN (a model the project already trains).

One metric per module: :mod:`.comprehensiveness` (higher is better), :mod:`.sufficiency` (lower is
better); :mod:`.protocol` runs them (``PROTOCOL``).
"""
from __future__ import annotations

from .comprehensiveness import comprehensiveness
from .sufficiency import sufficiency

__all__ = ["comprehensiveness", "sufficiency"]
