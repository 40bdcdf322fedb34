"""``eatlas cache info|clear``: the on-disk embedding cache."""
from __future__ import annotations

from ..console import esc
from .common import _console


def cmd_cache(args) -> int:
    from ..encoders.cache import EmbeddingCache

    out, _ = _console()
    cache = EmbeddingCache()
    if args.action == "clear":       # only what the cache wrote, by its own names: nothing else in the folder
        from ..registry import cache as registry_cache
        n = cache.clear()
        registry_cache.clear()
        from ..encoders.gguf import clear_converted
        from ..registry import parsecache
        clear_converted()           # GGUF models converted for transformers (eatlas.encoders.gguf.converted)
        parsecache.clear()          # YAML parses kept per content (eatlas.registry.parsecache)
        out.print(f"removed {n} cached encoder setting(s) from {esc(cache.root)}")
        return 0
    rows = cache.info()
    for r in rows:
        k = r["key"]
        what = ", ".join(f"{n}={k[n]}" for n in ("mode", "pooling", "layer", "subword", "normalize", "lowercase")
                         if n in k)
        # mode=coverage: whether the tokenizer knows each stimulus (eatlas.run.runner._covered), no vectors
        kind = "stimuli known or not to the tokenizer" if k.get("mode") == "coverage" else "vector(s)"
        out.print(esc(f"{r['id']}  {k.get('fingerprint', '?')}  {what}: {r['entries']} {kind}, "
                      f"{r['shards']} shard(s), {r['bytes'] / 1e6:.1f} MB"), highlight=False)
    vectors = sum(r["entries"] for r in rows if r["key"].get("mode") != "coverage")
    out.print(f"{len(rows)} encoder setting(s), {vectors} vector(s), "
              f"{sum(r['bytes'] for r in rows) / 1e6:.1f} MB in {esc(cache.root)} (env EATLAS_CACHE)")
    return 0
