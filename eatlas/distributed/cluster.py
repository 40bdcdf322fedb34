"""Joining Ray for a block of work: a local instance, or a cluster whose address is checked first; used by
``eatlas sweep --engine ray`` (eatlas.run.sweep) and by CEAT's ``--engine ray`` (corpus shards and context
encoding, with Ray Data's own progress output silenced).
"""
from __future__ import annotations

import contextlib
import os
import socket

from ..errors import EatlasError


def check_address(address: str | None) -> None:
    """An unreachable --ray-address is a clear error at once (ray.init would wait on it for minutes)."""
    if not address or address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise EatlasError(f"not a Ray address: {address!r}", field="--ray-address",
                          hint="HOST:PORT of the head node (e.g. 10.0.0.1:6379), ray://HOST:10001, or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as e:
        raise EatlasError(f"cannot reach the Ray cluster at {address} ({e.strerror or e})", field="--ray-address",
                          hint="is the head node up ('ray start --head') and the port open? leave out "
                               "--ray-address to start a local Ray instance") from None


def _ray():
    try:
        import ray
    except ImportError:
        raise EatlasError("the ray engine needs Ray", field="--engine",
                          hint="pip install 'eatlas[distributed]'") from None
    return ray


@contextlib.contextmanager
def joined(address: str | None):
    """Ray for the block: as it is if this process already joined it, else a local instance (or the
    cluster at ``address``, checked first), shut down again at the end.

    A local instance EATlas starts leaves nothing behind: it has no dashboard (Ray starts its
    API server even with ``include_dashboard=False``; it is stopped at once, and usage statistics are off),
    and a watchdog (eatlas.distributed.reaper) ends every one of its processes when this process ends,
    normally or killed (``kill -9``), which Ray alone does not do for its agents."""
    ray = _ray()
    check_address(address)
    started, watchdog = False, None
    if not ray.is_initialized():
        local = not address or address == "local"
        kw = {} if local else {"address": address}
        if local:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")    # no usage report, no process for one
        try:
            ray.init(include_dashboard=False, log_to_driver=False, **kw)
        except Exception as e:      # ConnectionError, a version mismatch, ...
            raise EatlasError(f"cannot start or join Ray: {str(e).strip().splitlines()[0]}",
                              field="--ray-address") from None
        started = True
        if local:
            watchdog = _watch_local_ray()
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()
        if watchdog is not None:
            _release(watchdog)


def _local_node():
    """The Ray node this process started (None: it joined one, or Ray's private layout changed)."""
    try:
        import ray._private.worker as worker
        node = worker._global_node
        return node if node is not None and getattr(node, "head", False) else None
    except (ImportError, AttributeError):
        return None


def _ray_pids(node) -> list[int]:
    """The pids of the processes ``ray.init`` started (gcs_server, raylet, monitor, ...)."""
    pids = []
    for infos in (getattr(node, "all_processes", None) or {}).values():
        for info in infos:
            proc = getattr(info, "process", None)
            if proc is not None and getattr(proc, "pid", None):
                pids.append(int(proc.pid))
    return pids


def _watch_local_ray():
    """Stop the API server ('dashboard') of the local instance and start the watchdog over its processes."""
    import subprocess
    import sys
    from pathlib import Path

    node = _local_node()
    if node is None:
        return None
    try:
        node.kill_dashboard(check_alive=False)
    except Exception:       # noqa: BLE001 - a Ray without it: its dashboard stays, nothing else changes
        pass
    pids = _ray_pids(node)
    if not pids or not Path("/proc").is_dir():
        return None
    script = Path(__file__).with_name("reaper.py")
    try:
        return subprocess.Popen([sys.executable, "-S", str(script), str(os.getpid()), *map(str, pids)],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, close_fds=True)
    except OSError:
        return None


def _release(watchdog) -> None:
    """The block is over and Ray shut down: the watchdog kills what Ray left, if anything, and exits."""
    try:
        watchdog.stdin.close()
        watchdog.wait(timeout=10)
    except Exception:       # noqa: BLE001 - never let the clean-up hide the block's own outcome
        pass


@contextlib.contextmanager
def ray_session(address: str | None):
    """Ray for the block (:func:`joined`), with Ray Data's progress bars and execution logs
    silenced meanwhile (the command prints its own progress)."""
    import logging

    with joined(address) as ray:
        import ray.data

        ctx = ray.data.DataContext.get_current()
        quiet = {"enable_progress_bars": False, "print_on_execution_start": False, "enable_auto_log_stats": False}
        before = {k: getattr(ctx, k) for k in quiet if hasattr(ctx, k)}
        log = logging.getLogger("ray.data")
        # the warning that progress bars are off (we turned them off) would precede an error's one line
        bars = logging.getLogger("ray.data._internal.progress")
        level, bars_level = log.level, bars.level
        try:
            for k in before:
                setattr(ctx, k, quiet[k])
            log.setLevel(max(level, logging.WARNING))
            bars.setLevel(logging.ERROR)
            yield ray
        finally:
            for k, v in before.items():
                setattr(ctx, k, v)
            log.setLevel(level)
            bars.setLevel(bars_level)
