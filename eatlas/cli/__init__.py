"""The ``eatlas`` command line (the console script ``eatlas = eatlas.cli:main``).

``main`` holds the parser of every subcommand and turns errors into one line and an exit code; the
commands themselves live in one module per group (registry, run, results, cache); ``run_summary``
lays out what ``eatlas run`` prints.
"""
from .main import build_parser, main

__all__ = ["build_parser", "main"]
