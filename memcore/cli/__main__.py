"""``python -m memcore.cli``: the same as the ``memcore`` console script."""

from memcore.cli.app import main

main()
