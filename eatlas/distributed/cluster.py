"""Joining Ray for a block of work: a local instance, or a cluster whose address is checked first; used by
``eatlas sweep --engine ray`` (eatlas.run.sweep) and by CEAT's ``--engine ray`` (corpus shards and context
encoding, with Ray Data's own progress output silenced).
"""
from __future__ import annotations

import contextlib
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
    cluster at ``address``, checked first), shut down again at the end."""
    ray = _ray()
    check_address(address)
    started = False
    if not ray.is_initialized():
        kw = {"address": address} if address and address != "local" else {}
        try:
            ray.init(include_dashboard=False, log_to_driver=False, **kw)
        except Exception as e:      # ConnectionError, a version mismatch, ...
            raise EatlasError(f"cannot start or join Ray: {str(e).strip().splitlines()[0]}",
                              field="--ray-address") from None
        started = True
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


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
        level = log.level
        try:
            for k in before:
                setattr(ctx, k, quiet[k])
            log.setLevel(max(level, logging.WARNING))
            yield ray
        finally:
            for k, v in before.items():
                setattr(ctx, k, v)
            log.setLevel(level)
