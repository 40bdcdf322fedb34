"""On-disk embedding cache: a re-run encodes nothing it has already encoded.

Layout: ``$EATLAS_CACHE`` (default ``~/.cache/eatlas``) holds one folder per encoder-settings key,
named by the sha256 of the key, with ``key.json`` (the key in clear) and shards ``*.npz``. The key
is whatever decides the vectors (``Encoder.cache_key``: model fingerprint, mode plain/span,
pooling, layer, subword, normalisation, truncation length, device, library and encoder-code
versions); an entry inside is one text (the same whatever level it came from) and, in span mode,
its character span. A shard holds ``index`` (JSON ``[[text, start, end], ...]``, start/end -1 in
plain mode), ``vectors`` (float32) and ``missing`` (bool).

Writes never touch an existing file: each ``put`` writes a new shard to a temporary name in the
same folder and renames it into place, so a crash leaves at worst an ignored ``.tmp-*`` file and
two processes writing at once each add their own shard. When a folder has more than
``MAX_SHARDS`` shards, the writer merges them into one (again temp + rename) and deletes the
merged ones; a reader that meets a shard deleted under it lists the folder again.

``$EATLAS_CACHE`` may be shared by a lab, so a vector is read only from what this user wrote
(:mod:`eatlas.trust`): a settings folder owned by another user or writable by others is refused with one
line; a shard that is a link, another user's, writable by others, or whose seal (a keyed digest of its
index, vectors and flags under the user's private key) does not check is ignored and its texts encoded again.
"""
from __future__ import annotations

import hashlib
import io
import json
import re
import time
import uuid
import zipfile
from pathlib import Path

import numpy as np

from .. import trust
from ..files import write_atomic
from ..paths import cache_dir

MAX_SHARDS = 16
SHARD = re.compile(r"\d+-[0-9a-f]{8}\.npz")          # the names _write_shard gives
TEMP = re.compile(r"\.tmp-[0-9a-f]+\.part")            # a shard being written (eatlas.files.write_atomic)
Item = tuple    # (text, (start, end)) in span mode, (text, None) in plain mode


def default_dir() -> Path:
    return cache_dir()


def key_id(key: dict) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:24]


def _atomic_write(folder: Path, name: str, write) -> Path:
    """``write(f)`` into a binary file ``.tmp-*.part`` renamed to ``folder/name`` (eatlas.files: the mode the
    umask gives, like the user's other files: the vectors of public stimuli, shareable by a lab)."""
    def fill(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            write(f)
        trust.not_writable_by_others(tmp)
    return write_atomic(folder / name, fill, prefix=".tmp-", suffix=".part", fsync=True)


def _shard_seal(folder_id: str, index: bytes, vectors: np.ndarray, missing: np.ndarray) -> str | None:
    """The seal (eatlas.trust) of a shard's content, bound to its settings folder."""
    return trust.seal("shard", folder_id, index, str(vectors.shape), np.ascontiguousarray(vectors).tobytes(),
                      np.ascontiguousarray(missing).tobytes())


def _read_shard(p: Path) -> dict:
    """A shard's entries; {} for a shard this user did not write (another owner, writable by others, a link,
    no seal or a wrong one: a shared cache decides no vector) or one damaged."""
    data = trust.read_own(p)
    if data is None:
        if not p.exists():
            raise FileNotFoundError(p)
        return {}
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            blob = z["index"].tobytes()
            vectors, missing = z["vectors"], z["missing"]
            mac = z["seal"].tobytes().decode("ascii")
        want = _shard_seal(p.parent.name, blob, vectors, missing)
        if want is None or mac != want:
            return {}
        index = json.loads(blob.decode("utf-8"))
    except (zipfile.BadZipFile, ValueError, KeyError, EOFError, OSError, UnicodeDecodeError):
        return {}          # damaged by something outside the cache: ignored (re-encoded, merged away)
    return {(t, None if s < 0 else (s, e)): (vectors[i], bool(missing[i])) for i, (t, s, e) in enumerate(index)}


class EmbeddingCache:
    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_dir()

    def _folder(self, key: dict, create: bool = False) -> Path | None:
        """The settings folder of ``key``; None when it (or the cache folder) is one others can write or
        another user owns (refused with one line: nothing read from it or written to it)."""
        d = self.root / key_id(key)
        why = trust.folder_problem(d)       # $EATLAS_CACHE may be shared: a folder put there by another is refused
        if why is not None:
            trust.warn_once(d, why, "the embedding cache folder")
            return None
        if create and not (d / "key.json").is_file():
            trust.make_private_folder(d)
            _atomic_write(d, "key.json", lambda f: f.write(json.dumps(key, sort_keys=True, indent=1,
                                                                         default=str).encode()))
        return d

    def _load(self, d: Path) -> tuple[dict, list[Path]]:
        for _ in range(5):          # a shard merged away under us: list the folder again
            shards = sorted(d.glob("[!.]*.npz")) if d.is_dir() else []
            entries = {}
            try:
                for p in shards:
                    entries.update(_read_shard(p))
            except FileNotFoundError:
                time.sleep(0.05)
                continue
            return entries, shards
        return {}, []

    def get(self, key: dict, items: list[Item]) -> dict:
        """The cached ``item -> (vector, missing)`` among ``items``."""
        d = self._folder(key)
        if d is None:
            return {}
        entries, _ = self._load(d)
        return {it: entries[it] for it in items if it in entries}

    def put(self, key: dict, items: list[Item], vectors: np.ndarray, missing: np.ndarray) -> None:
        if not items:
            return
        d = self._folder(key, create=True)
        if d is None:
            return
        self._write_shard(d, items, vectors, missing)
        if len(list(d.glob("[!.]*.npz"))) > MAX_SHARDS:
            entries, shards = self._load(d)
            merged = list(entries)
            if merged:
                self._write_shard(d, merged, np.stack([entries[i][0] for i in merged]),
                                  np.array([entries[i][1] for i in merged]))
            for p in shards:
                p.unlink(missing_ok=True)
            for p in d.glob(".tmp-*"):        # left by a crash an hour or more ago
                try:
                    if time.time() - p.stat().st_mtime > 3600:
                        p.unlink()
                except OSError:
                    pass

    @staticmethod
    def _write_shard(d: Path, items: list[Item], vectors: np.ndarray, missing: np.ndarray) -> Path:
        index = [[t, -1, -1] if sp is None else [t, int(sp[0]), int(sp[1])] for t, sp in items]
        blob = np.frombuffer(json.dumps(index, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)
        arrays = {"index": blob, "vectors": np.asarray(vectors, dtype=np.float32),
                  "missing": np.asarray(missing, dtype=bool)}
        mac = _shard_seal(d.name, blob.tobytes(), arrays["vectors"], arrays["missing"])
        if mac is None:         # no key: nothing kept that could not be checked
            return d
        arrays["seal"] = np.frombuffer(mac.encode("ascii"), dtype=np.uint8)
        return _atomic_write(d, f"{time.time_ns()}-{uuid.uuid4().hex[:8]}.npz", lambda f: np.savez(f, **arrays))

    def info(self) -> list[dict]:
        """One row per settings key: the key, entries, shards and bytes on disk."""
        out = []
        for d in sorted(self.root.glob("*/")) if self.root.is_dir() else []:
            if d.name == "registry":        # the parsed registry (eatlas.registry.cache), not vectors
                continue
            try:
                key = json.loads((d / "key.json").read_text())
            except (OSError, ValueError):
                key = {}
            entries, shards = self._load(d)
            size = sum(p.stat().st_size for p in shards if p.exists())
            out.append({"id": d.name, "key": key, "entries": len(entries), "shards": len(shards), "bytes": size})
        return out

    def clear(self) -> int:
        """Delete every cached vector; returns the number of settings keys removed. Only what the cache itself
        wrote goes (:meth:`own_files`): a folder named by the hash of the ``key.json`` it holds, and in it that
        file, the shards and the temporary files under the cache's own names. Anything else in ``$EATLAS_CACHE``
        (another program's folder, a file someone put beside the shards, a symbolic link) is left as it is, and
        the folder holding it too."""
        n = 0
        for d in sorted(self.root.iterdir()) if self.root.is_dir() else []:
            own = self.own_files(d)
            if not own:
                continue
            for p in own:
                p.unlink(missing_ok=True)
            try:
                d.rmdir()
            except OSError:
                pass        # something the cache did not write is in it: kept, with its folder
            n += 1
        return n

    @staticmethod
    def own_files(d: Path) -> list[Path]:
        """The files of settings folder ``d`` that the cache wrote (none when ``d`` is not one of its folders)."""
        if d.is_symlink() or not d.is_dir() or not re.fullmatch(r"[0-9a-f]{24}", d.name):
            return []
        k = d / "key.json"
        try:
            if k.is_symlink() or key_id(json.loads(k.read_text(encoding="utf-8"))) != d.name:
                return []
        except (OSError, ValueError):
            return []
        return [k] + [p for p in d.iterdir() if not p.is_symlink() and p.is_file()
                      and (SHARD.fullmatch(p.name) or TEMP.fullmatch(p.name))]
