"""How queries run: devices, graph operators (CPU and GPU), relational operators, plans."""

from .device import Device, select_device
from .graph import CSR, Graph

__all__ = ["CSR", "Device", "Graph", "select_device"]
