"""The LCC family: ``lcc`` by masked sparse products on the CPU (scipy), a per-entry
closed-path count on the GPU."""

from ..registry import register
from .spec import LCC

register(LCC)
