"""The neighbors family: ``neighbors`` of one vertex, a row per incident edge."""

from ..registry import register
from .spec import DEGREE, NEIGHBORS

register(NEIGHBORS)
register(DEGREE)
