"""The streaming tests import their graph helpers as ``streaming_graphs``: put this folder on
sys.path, so ``pytest tests/streaming`` works alone (tests/gpu's streaming test does the same)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
