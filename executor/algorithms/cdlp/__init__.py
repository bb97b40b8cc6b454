"""The CDLP family: ``cdlp`` (Graphalytics label propagation), one xp-generic step
(:mod:`.step`) resident on the CPU and the GPU and over vertex-range chunks past the budget."""

from ..registry import register
from .spec import CDLP

register(CDLP)
