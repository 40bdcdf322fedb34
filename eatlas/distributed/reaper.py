"""A watchdog that ends the local Ray instance EATlas started when the driver ends, killed or not.

Ray's own processes share the driver's fate only in part: gcs_server and the raylet die with the driver
(the kernel's parent-death signal), but the agents the raylet starts (``ray::DashboardAgent``,
``ray::RuntimeEnvAgent``) ignore SIGTERM, and after a ``kill -9`` of the driver they hang on a call to the
dead GCS and never exit. This script, started by :func:`eatlas.distributed.cluster.joined` right after
``ray.init`` in a session of its own, is given the driver's pid and the pids of the processes that
``ray.init`` started; it follows their descendants (every half second, by parent pid, with each process's
start time so a reused pid is never mistaken for one of them) and, as soon as the driver is gone or
closes the pipe on this script's stdin (its normal end, after ``ray.shutdown()``), SIGKILLs every one of
them still alive. It touches no other process.

It imports nothing but the standard library (it runs as ``python -S reaper.py DRIVER ROOT...``) and reads
``/proc`` (Linux; elsewhere the script exits at once and Ray's own clean-up is all there is).
"""
from __future__ import annotations

import os
import select
import signal
import sys

POLL_S = 0.5


def _table() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, start time, state) of every process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                raw = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        rest = raw.rsplit(")", 1)[-1].split()
        if len(rest) > 19:
            out[int(name)] = (int(rest[1]), rest[19], rest[0])     # ppid, starttime, state
    return out


def _alive(table: dict, pid: int, start: str | None = None) -> bool:
    row = table.get(pid)
    return row is not None and row[2] not in ("Z", "X") and (start is None or row[1] == start)


def watch(driver: int, roots: list[int], stdin_fd: int = 0) -> int:
    """Follow ``roots`` and their descendants until ``driver`` ends or stdin closes; then kill what is left.
    Returns how many processes it killed."""
    table = _table()
    if not _alive(table, driver):
        return _reap(table, {})
    driver_start = table[driver][1]
    tracked = {pid: table[pid][1] for pid in roots if _alive(table, pid)}
    while True:
        table = _table()
        _follow(table, tracked)
        if not _alive(table, driver, driver_start):
            break
        ready, _, _ = select.select([stdin_fd], [], [], POLL_S)
        if ready and not os.read(stdin_fd, 4096):
            break               # the driver closed the pipe (its end of the block) or died: EOF
    return _reap(_table(), tracked)


def _follow(table: dict, tracked: dict) -> None:
    """Add to ``tracked`` every live descendant of a tracked process."""
    grew = True
    while grew:
        grew = False
        for pid, (ppid, start, _state) in table.items():
            if pid not in tracked and ppid in tracked and _alive(table, ppid, tracked[ppid]) \
                    and _alive(table, pid):
                tracked[pid] = start
                grew = True


def _reap(table: dict, tracked: dict) -> int:
    _follow(table, tracked)
    killed = 0
    for pid, start in tracked.items():
        if pid != os.getpid() and _alive(table, pid, start):
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
    return killed


def main(argv: list[str]) -> int:
    if not os.path.isdir("/proc") or len(argv) < 2:
        return 0
    try:
        driver, roots = int(argv[1]), [int(a) for a in argv[2:]]
    except ValueError:
        return 2
    watch(driver, roots)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
