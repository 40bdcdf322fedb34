"""Forging the parsed registry's cache file (eatlas.registry.cache) as someone with write access to a shared
cache could: every checksum a reader could recompute is recomputed; the seals, which need the user's key, are
not."""
from __future__ import annotations

import hashlib
import json


def forge(data: bytes, old: bytes, new: bytes) -> bytes:
    """``data`` with ``old`` replaced by ``new`` in every entry line, the index rows' offsets and sizes, the
    sections' places and digests and the file's size made to match; the seals kept as they were."""
    end = data.index(b"\n")
    seal, _, head = data[:end].partition(b" ")
    top = json.loads(head)
    body = data[end + 1:]
    names = list(top["sections"])
    sections = {n: body[a:a + s] for n, (a, s, _) in top["sections"].items()}
    lines = body[top["entries_at"]:].split(b"\n")[:-1]
    forged = [line.replace(old, new) for line in lines]
    starts, at = {}, 0
    for line, line_new in zip(lines, forged):
        starts[at] = len(line_new)
        at += len(line) + 1
    shift, new_at = {}, 0
    for old_at in sorted(starts):
        shift[old_at] = new_at
        new_at += starts[old_at] + 1
    for n in names:
        if n.startswith("index:"):
            rows = []
            for row in sections[n].split(b"\n")[1:]:
                f = row.split(b"\t")
                f[5] = str(starts[int(f[4])]).encode()
                f[4] = str(shift[int(f[4])]).encode()
                rows.append(b"\n" + b"\t".join(f))
            sections[n] = b"".join(rows)
    places, at = {}, 0
    for n in names:
        places[n] = [at, len(sections[n]), hashlib.blake2b(sections[n], digest_size=16).hexdigest()]
        at += len(sections[n]) + 1
    top.update(sections=places, entries_at=at, size=at + new_at)
    return b"\n".join([seal + b" " + json.dumps(top, separators=(",", ":")).encode(),
                       *(sections[n] for n in names), *forged]) + b"\n"
