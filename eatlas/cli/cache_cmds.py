"""``eatlas cache info|clear``: the on-disk embedding cache."""
from __future__ import annotations

from ..console import esc
from .common import _console


def cmd_cache(args) -> int:
    from ..encoders.cache import EmbeddingCache

    out, _ = _console()
    cache = EmbeddingCache()
    if args.action == "clear":
        n = cache.clear()
        out.print(f"removed {n} cached encoder setting(s) from {esc(cache.root)}")
        return 0
    rows = cache.info()
    for r in rows:
        k = r["key"]
        what = ", ".join(f"{n}={k[n]}" for n in ("mode", "pooling", "layer", "subword", "normalize", "lowercase")
                         if n in k)
        out.print(esc(f"{r['id']}  {k.get('fingerprint', '?')}  {what}: {r['entries']} vector(s), "
                      f"{r['shards']} shard(s), {r['bytes'] / 1e6:.1f} MB"), highlight=False)
    out.print(f"{len(rows)} encoder setting(s), {sum(r['entries'] for r in rows)} vector(s), "
              f"{sum(r['bytes'] for r in rows) / 1e6:.1f} MB in {esc(cache.root)} (env EATLAS_CACHE)")
    return 0
