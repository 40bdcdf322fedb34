"""The progress bars of a run, one place for the command line and the Python library (``eatlas.run``).

:func:`bars` makes the display: rich's bars on a terminal; in Jupyter, rich's live display in the notebook (a
widget: ``ipywidgets``), or, where ipywidgets is not installed, plain lines in the cell's output; nothing with
``quiet``. :func:`phases` turns the runner's reports (eatlas.run.runner.Phase) into one bar per phase.
"""
from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .console import esc

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


def bars(err: Console, quiet: bool) -> Progress:
    """A rich Progress on console ``err`` (transient: it disappears when the run ends); ``quiet``: none shown."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    # rich draws in a notebook through an ipywidgets Output; without ipywidgets it would draw nothing (and warn),
    # so the phases are printed as plain lines there instead (phases), and no live display is started
    lines = bool(err.is_jupyter and importlib.util.find_spec("ipywidgets") is None)
    prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), console=err, transient=True, disable=quiet or lines)
    prog.plain_lines = lines and not quiet      # type: ignore[attr-defined]
    return prog


def notebook_console() -> Console:
    """The console of the library's bars: rich's Console on stderr, which finds Jupyter by itself."""
    from rich.console import Console
    return Console(stderr=True)


def phases(prog: Progress, model: str | None, lines: bool = False) -> Callable[[Any], None]:
    """A runner progress callback: one bar per phase (loading, expanding, encoding N texts, testing M tests, a
    method's own, e.g. generating N responses). Where the console is no terminal (a pipe, a log file) no bar is
    drawn; with ``lines`` (a method that says ``progress_lines``) each phase prints plain lines instead, its start
    and every tenth of the way (in a notebook without ipywidgets, every phase does)."""
    import time

    tasks: dict[str, Any] = {}
    plain = lines and not prog.disable and not prog.console.is_terminal or getattr(prog, "plain_lines", False)
    said: dict[str, tuple] = {}      # phase -> (tenths printed, start, last printed, done then)

    def tick(ev: Any) -> None:
        if ev.name == "loading":
            desc = f"loading {model or 'the default model'}"
        elif ev.name == "encoding":
            desc = f"encoding {ev.total} texts and spans" + (f" ({ev.cached} from the cache)" if ev.cached else "")
        elif ev.unit:
            desc = f"{ev.name} {ev.total} {ev.unit}" + (f": {ev.item}" if ev.item else "")
        else:
            desc = f"{ev.name} {ev.total} {'test/level pairs' if ev.name == 'expanding' else 'tests'}" + \
                (f": {ev.item}" if ev.item else "")
        if plain:
            _plain_line(prog.console, ev, desc, said, time.monotonic())
            return
        if ev.name not in tasks:
            for t in tasks.values():            # the previous phase is over
                prog.update(t, visible=False)
            tasks[ev.name] = prog.add_task(esc(desc), total=ev.total)
        prog.update(tasks[ev.name], description=esc(desc), completed=ev.done, total=ev.total)
    return tick


def _plain_line(console: Console, ev: Any, desc: str, said: dict, now: float) -> None:
    """A phase's progress as plain lines: its first report, then each tenth done, or what is done every
    PLAIN_EVERY seconds when a tenth takes longer (and the last), with the time so far and, while work remains,
    the time left at the rate so far."""
    tenths = 10 * ev.done // ev.total if ev.total else 0
    if ev.name not in said:
        said[ev.name] = (tenths, now, now, ev.done)
        console.print(esc(desc) + (f": {ev.done}/{ev.total}" if ev.total else " ..."), highlight=False,
                      soft_wrap=True)
        return
    last, start, printed, done0 = said[ev.name]
    if ev.total and (tenths > last or (now - printed >= PLAIN_EVERY and ev.done > done0)):
        said[ev.name] = (tenths, start, now, ev.done)
        left = ""
        if 0 < ev.done < ev.total:
            left = f", about {(now - start) * (ev.total - ev.done) / ev.done:.0f} s left"
        console.print(esc(desc) + f": {ev.done}/{ev.total} ({now - start:.0f} s{left})", highlight=False,
                      soft_wrap=True)


PLAIN_EVERY = 10.0      # seconds: a pipe or a log hears from a long phase at least this often while it advances
