"""What every command prints to: rich consoles for standard output and standard error (160 columns wide
when the output is not a terminal, so tables are not cut to 80 in a pipe or a log)."""
from __future__ import annotations

import os


def _console():
    from rich.console import Console
    out = Console()
    # a pipe or file gets 160 columns, unless COLUMNS asks for a width (rich reads it when width is None)
    width = None if out.is_terminal or os.environ.get("COLUMNS", "").isdigit() else 160
    return Console(width=width), Console(stderr=True, width=width)
