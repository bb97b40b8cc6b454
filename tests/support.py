"""Paths shared by the tests (importable as ``support``: tests/ is on sys.path under pytest)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
