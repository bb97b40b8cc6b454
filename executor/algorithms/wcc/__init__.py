"""The WCC family: ``wcc`` by compiled union-find on the CPU, Afforest on the GPU, and Subway
min-label streaming past the budget."""

from ..registry import register
from .spec import WCC

register(WCC)
