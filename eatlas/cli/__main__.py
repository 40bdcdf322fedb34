"""``python -m eatlas.cli``: the same as the ``eatlas`` command (and ``python -m eatlas``)."""
import sys

from .main import main

sys.exit(main())
