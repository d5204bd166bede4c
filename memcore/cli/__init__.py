"""The ``memcore`` command line: one module per command group, assembled in :mod:`.app`
(``memcore.cli.app:main`` is the console script). The package imports nothing itself, so
a command module of an extra (``memcore_bench.cli``) can import ``memcore.cli.common``
first without the app registering it half-initialized."""
