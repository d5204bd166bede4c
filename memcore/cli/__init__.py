"""The ``memcore`` command line: one module per command group, assembled in :mod:`.app`."""

from memcore.cli.app import app, main

__all__ = ["app", "main"]
