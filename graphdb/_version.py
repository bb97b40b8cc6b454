"""The version of graphdb (one place: the package, the CLI and SELECT version())."""

__version__ = "0.1.0"
