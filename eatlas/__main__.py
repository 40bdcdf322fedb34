"""``python -m eatlas``: the same as the ``eatlas`` command."""
import sys

from .cli import main

sys.exit(main())
