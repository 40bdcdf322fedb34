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


# Options that contradict each other: given together, one of them would be silently ignored. (option, options it
# makes meaningless); and options that act only with another option's value (option, (dest, value)).
CONTRADICTS = {"no_ci": ("ci", "n_boot", "ci_method")}
ONLY_WITH = {"ray_address": ("engine", "ray")}


def given_options(parser, argv: list[str]) -> set[str]:
    """The dests the command line names, whatever their values (a default equal to the value given counts as
    given): ``argv`` parsed again by ``parser`` with every default suppressed."""
    import argparse

    def suppress(p):
        p._defaults = {k: v for k, v in p._defaults.items() if k == "fn"}
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sp in a.choices.values():
                    suppress(sp)
            elif a.dest != "help" and a.required is False:
                a.default = argparse.SUPPRESS
    suppress(parser)
    try:
        ns, _ = parser.parse_known_args(argv)
    except SystemExit:
        return set()
    return set(vars(ns))


def refuse_contradictions(args, given) -> None:
    """One clear error for options given together that contradict each other, or an option whose other option
    makes it do nothing, before any work. ``given()``: the dests the command line names (see
    :func:`given_options`; asked for only when an option of :data:`CONTRADICTS` is set)."""
    from ..errors import EatlasError

    def flag(dest):
        return "--" + dest.replace("_", "-")
    for dest, others in CONTRADICTS.items():
        if getattr(args, dest, None):
            named = given()
            clash = [o for o in others if o in named]
            if dest in named and clash:
                raise EatlasError(f"{flag(dest)} and {flag(clash[0])} contradict each other", field=flag(clash[0]),
                                  hint="leave out one of them")
    for dest, (other, value) in ONLY_WITH.items():     # these options have no value by default: set is given
        if getattr(args, dest, None) is not None and getattr(args, other, value) != value:
            raise EatlasError(f"{flag(dest)} acts only with {flag(other)} {value}", field=flag(dest),
                              hint=f"add {flag(other)} {value}, or leave out {flag(dest)}")


def fits(console, columns: list[str], rows: list[tuple], *, flexible: int = 0, gap: int = 3) -> bool:
    """Whether a table of ``columns`` and ``rows`` (plain text) fits ``console``'s width with every cell on one
    line, except the last ``flexible`` columns, which may wrap at spaces down to their longest word."""
    widths = []
    for i, head in enumerate(columns):
        cells = [str(head), *(str(r[i]) for r in rows)]
        if i >= len(columns) - flexible:
            widths.append(max((len(w) for c in cells for w in c.split()), default=1))
        else:
            widths.append(max(len(c) for c in cells))
    return sum(widths) + gap * len(columns) <= console.width


def print_records(console, columns: list[str], rows: list[tuple], *, title: str | None = None,
                  label=None) -> None:
    """Rows as blocks, one line per column (``name  value``), for a table too wide for the terminal: nothing
    is cut or broken inside a word. ``label(n, row)``: the block's heading (default: its number)."""
    from rich.markup import escape

    from ..console import visible

    if title:
        console.print(escape(title), highlight=False)
    width = max((len(str(c)) for c in columns), default=0)
    for n, row in enumerate(rows, 1):
        head = label(n, row) if label else f"row {n}"
        console.print(escape(f"-- {head} " + "-" * max(3, min(console.width, 60) - len(head) - 4)), highlight=False)
        for c, v in zip(columns, row):
            value = visible("" if v is None else str(v))
            lines = value.split("\n") or [""]
            console.print(escape(f"{str(c):<{width}}  {lines[0]}"), highlight=False, soft_wrap=True)
            for more in lines[1:]:
                console.print(escape(f"{'':<{width}}  {more}"), highlight=False, soft_wrap=True)
