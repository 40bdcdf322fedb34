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
