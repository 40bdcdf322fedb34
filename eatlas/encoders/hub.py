"""Models named by their Hugging Face hub id: ``--model ORG/NAME`` or ``--model NAME``, optionally with
``@REVISION`` (a branch, a tag or a commit).

Resolution is huggingface_hub's own: ``snapshot_download`` into the standard cache (``HF_HOME``,
``HF_HUB_CACHE``), read back with ``local_files_only=True`` when downloads are off (``HF_HUB_OFFLINE=1``
or ``--offline``) or the hub cannot be reached. Online, the repository's file list is read first
(``HfApi.model_info``), so that a repository that does not exist, is gated or private, lacks the
revision, holds no weights a backend loads, or asks to run its own code is refused before anything is
downloaded; then only what a run needs is downloaded (config and tokenizer files, the model card, the
sentence-transformers module files, and the weights: safetensors where the repository has them, else
PyTorch ``.bin`` files, which load only through torch's ``weights_only`` unpickler). The model is loaded
from the snapshot folder huggingface_hub returns, with ``local_files_only=True``, so nothing is ever
downloaded behind huggingface_hub's back.

A run records the id as given, the requested revision, the resolved commit, and the sha256 of each
weight file, taken from huggingface_hub's own metadata (the hub's LFS listing online, the cached tree
listing offline, else the name of the LFS blob in the cache, which is its sha256); the fingerprint is
made of the commit and those hashes, so two commits of one id are two fingerprints.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import EatlasError

# transformers' own file names (transformers.utils: SAFE_WEIGHTS_NAME, SAFE_WEIGHTS_INDEX_NAME, WEIGHTS_NAME,
# WEIGHTS_INDEX_NAME), written out so that resolving a model does not import transformers.
WEIGHT_KINDS = (("safetensors", "model.safetensors", "model.safetensors.index.json"),
                ("bin", "pytorch_model.bin", "pytorch_model.bin.index.json"))
_SHARD = re.compile(r"^(model|pytorch_model)-\d+-of-\d+\.(safetensors|bin)$")
# weights in other formats, named in the message when a repository holds only those
_OTHER_WEIGHTS = re.compile(r"\.(h5|msgpack|gguf|onnx|ckpt|ckpt\.index|pt|pth|bin|safetensors|tflite|ot|npz)$",
                            re.IGNORECASE)
# What a run needs besides the weights (tokenizer files of every kind transformers reads, the
# sentence-transformers modules, the model card with its languages).
META_PATTERNS = ["config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                 "added_tokens.json", "vocab.txt", "vocab.json", "merges.txt", "spiece.model",
                 "sentencepiece.bpe.model", "tokenizer.model", "modules.json", "sentence_bert_config.json",
                 "config_sentence_transformers.json", "*Pooling/config.json", "README.md"]
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def cache_dir() -> str:
    """The hub cache huggingface_hub uses (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub)."""
    from huggingface_hub import constants
    return constants.HF_HUB_CACHE


def offline_mode(flag: bool = False) -> bool:
    """Downloads are off: ``--offline``, or HF_HUB_OFFLINE (TRANSFORMERS_OFFLINE) as huggingface_hub reads it
    when imported, or as the environment says now."""
    from huggingface_hub import constants
    env = (os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or "").strip().upper()
    return bool(flag) or bool(constants.HF_HUB_OFFLINE) or env in ("1", "ON", "YES", "TRUE")


def parse(model: str) -> tuple[str, str | None] | None:
    """(repo id, revision or None) when ``model`` can name a hub model (``NAME``, ``ORG/NAME``, each with an
    optional ``@REVISION``); None when it cannot (a path, an empty revision, characters a repo id cannot
    hold). A local path is tried before this is asked."""
    repo, at, revision = model.rpartition("@")
    if not at:
        repo, revision = model, None
    if not repo or (at and not revision) or model.startswith(("/", ".", "~")) or "\\" in model:
        return None
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id
    try:
        validate_repo_id(repo)
    except HFValidationError:
        return None
    return repo, revision


def download_hint(repo_id: str, revision: str | None) -> str:
    """The command of the installed huggingface_hub that downloads the model into the cache."""
    return f"hf download {repo_id}" + (f" --revision {revision}" if revision else "")


@dataclass
class HubModel:
    """A hub model resolved to a folder of the local cache."""
    given: str                      # --model as written (id, @revision)
    repo_id: str                    # the id as given
    revision: str | None            # as requested (None: the default branch)
    commit: str                     # the commit the revision resolved to (40 hex)
    path: Path                      # the cached snapshot folder
    weights: dict[str, str]         # weight file -> sha256
    weights_format: str             # safetensors | bin
    languages: list[str] | None = None      # the model card's `language` metadata (None: not stated)
    canonical_id: str | None = None         # where the hub redirected the id, when it did
    downloaded: bool = False
    card: dict = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        h = hashlib.sha256(json.dumps({"commit": self.commit, "weights": self.weights}, sort_keys=True).encode())
        return "sha256:" + h.hexdigest()[:16]

    def record(self) -> dict:
        """What a run records about the model (runs.model_hub_id, model_revision, model_commit,
        model_weights_sha256; the rest goes into runs.settings)."""
        return {"hub_id": self.repo_id, "revision": self.revision, "commit": self.commit,
                "weights_sha256": dict(sorted(self.weights.items())), "weights_format": self.weights_format,
                "canonical_id": self.canonical_id, "cache": cache_dir()}


def _pick_weights(names: set[str]) -> tuple[str, list[str]] | None:
    """(format, weight files) a backend loads from a repository's top-level file names: safetensors where it has
    them, else PyTorch .bin; a sharded checkpoint lists its index first."""
    for kind, single, index in WEIGHT_KINDS:
        if single in names:
            return kind, [single]
        if index in names:
            return kind, [index] + sorted(n for n in names if _SHARD.match(n) and n.endswith("." + kind))
    return None


def _no_weights(given: str, names: set[str], commit: str | None, *, cached: bool) -> EatlasError:
    other = sorted(n for n in names if _OTHER_WEIGHTS.search(n))
    where = f"{given} (commit {commit[:12]})" if commit else given
    found = f"it has {', '.join(other[:5])}" + (f" and {len(other) - 5} more" if len(other) > 5 else "") if other \
        else "it has no weight file at all"
    if cached:
        return EatlasError(f"the cached snapshot of {where} holds no weights EATlas can load ({found})",
                           field="model", hint="EATlas loads model.safetensors, or pytorch_model.bin through torch's "
                           f"weights_only loader; where the repository has them: {download_hint(*parse(given))}")
    return EatlasError(f"{where} holds no weights EATlas can load ({found})", field="model",
                       hint="EATlas loads model.safetensors, or pytorch_model.bin through torch's weights_only loader "
                       "(not TensorFlow, Flax, GGUF or ONNX files); choose another model or revision")


def custom_code(config: dict) -> list[str]:
    """The classes a config.json's ``auto_map`` asks transformers to import from the repository's own code."""
    auto = config.get("auto_map") if isinstance(config, dict) else None
    if not isinstance(auto, dict):
        return []
    return [f"{k}: {v if isinstance(v, str) else ', '.join(map(str, v))}" for k, v in auto.items()]


def refuse_custom_code(name: str, config: dict, tokenizer_config: dict | None = None) -> None:
    """One line when the model's config (or tokenizer config) names its own Python code: it runs only with
    --trust-remote-code naming the model."""
    code = custom_code(config) + custom_code(tokenizer_config or {})
    if code:
        raise EatlasError(f"{name} needs its own custom code to load (auto_map: {'; '.join(code)[:200]}), which "
                          "EATlas does not run unless told to", field="model",
                          hint=f"its code runs only with --trust-remote-code {name}, naming this model; read the code "
                          "first")


def _languages(card: dict | None) -> list[str] | None:
    """A model card's ``language`` metadata as lower-case codes (None: not stated, or only 'multilingual')."""
    v = (card or {}).get("language")
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list):
        return None
    out = [str(x).strip().lower() for x in v if str(x).strip()]
    out = [x for x in out if x != "multilingual"]
    return list(dict.fromkeys(out)) or None


def card_metadata(folder: Path) -> dict:
    """The YAML header of a model folder's README.md (the model card), {} when there is none or it is unreadable."""
    readme = Path(folder) / "README.md"
    if not readme.is_file():
        return {}
    from huggingface_hub import metadata_load
    try:
        doc = metadata_load(readme)
    except Exception:                   # noqa: BLE001 - a broken card only loses its languages
        return {}
    return doc if isinstance(doc, dict) else {}


def folder_languages(folder: Path) -> list[str] | None:
    return _languages(card_metadata(folder))


def _read_json(p: Path) -> dict:
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _sha256_of(path: Path) -> str:
    """A cached file's sha256: the name of its blob (huggingface_hub names an LFS blob by its sha256), else read."""
    blob = Path(os.path.realpath(path))
    if _SHA256.match(blob.name):
        return blob.name
    h = hashlib.sha256()                # a cache without symlinks (copies): the file itself
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _cached_tree(repo_id: str, commit: str) -> dict[str, str]:
    """file -> LFS sha256 from the tree listing huggingface_hub cached with the snapshot ({} when none)."""
    try:
        from huggingface_hub import get_cached_repo_tree
    except ImportError:                 # an older huggingface_hub: the blobs' names say it
        return {}
    try:
        files = get_cached_repo_tree(repo_id, revision=commit, cache_dir=cache_dir())
    except Exception:                   # noqa: BLE001 - no listing cached (CachedRepoTreeNotFoundError, ...)
        return {}
    return {f.path: f.lfs.sha256 for f in files if getattr(f, "lfs", None) is not None and f.lfs.sha256}


def registered_like(given: str) -> str:
    """'did you mean ID? ' for the registered model ids close to ``given`` (a misspelt id), else ''."""
    try:
        import re

        from ..ids import did_you_mean
        from ..paths import loaders_dir
        # the loader entries' ids, read off their files (the loaders module imports this one: no cycle)
        ids = [m[1] for p in sorted(loaders_dir().glob("*.yaml"))
               if (m := re.search(r"^id:\s*(\S+)", p.read_text(encoding="utf-8"), re.M))]
        return did_you_mean(given, ids)
    except Exception:           # noqa: BLE001 - the suggestion is only a suggestion: a broken loader says so later
        return ""


def _unknown(given: str, repo_id: str, revision: str | None, *, why: str) -> EatlasError:
    return EatlasError(f"{given!r} is no registered model or local path, so it was read as a Hugging Face hub id, "
                       f"and {why}", field="--model",
                       hint=registered_like(given) + f"download it where the hub can be reached: "
                       f"{download_hint(repo_id, revision)}; 'eatlas models' lists the registered models and those in "
                       "your cache")


def _cached_revisions(repo_id: str) -> list[str]:
    """'ref (commit)' of each cached snapshot of a repository, for a message."""
    from huggingface_hub import scan_cache_dir
    try:
        info = scan_cache_dir(cache_dir())
    except Exception:                   # noqa: BLE001 - no cache folder, unreadable: nothing to list
        return []
    out = []
    for repo in info.repos:
        if repo.repo_type == "model" and repo.repo_id == repo_id:
            for rev in sorted(repo.revisions, key=lambda r: -r.last_modified):
                out.append(f"{', '.join(sorted(rev.refs)) or 'commit'} {rev.commit_hash[:12]}")
    return out


def _from_cache(given: str, repo_id: str, revision: str | None, *, unreachable: bool) -> Path:
    """The cached snapshot folder of the revision (no network)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import IncompleteSnapshotError, LocalEntryNotFoundError
    offline_why = ("the Hugging Face hub could not be reached" if unreachable
                   else "downloads are off (HF_HUB_OFFLINE=1 or --offline)")
    try:
        return Path(snapshot_download(repo_id, revision=revision, local_files_only=True, cache_dir=cache_dir(),
                                      allow_patterns=["config.json"]))
    except IncompleteSnapshotError as e:
        folder = getattr(e, "snapshot_path", None)
        if folder and Path(folder).is_dir():
            return Path(folder)
        raise _unknown(given, repo_id, revision, why=f"its copy in your Hugging Face cache is incomplete; "
                       f"{offline_why}") from None
    except LocalEntryNotFoundError:
        cached = _cached_revisions(repo_id)
        if revision and cached:
            raise EatlasError(f"revision {revision!r} of {repo_id} is not in the Hugging Face cache ({cache_dir()}), "
                              f"which holds {'; '.join(cached[:4])}; {offline_why}", field="model",
                              hint=f"name a cached revision, or download this one with: "
                              f"{download_hint(repo_id, revision)}") from None
        raise _unknown(given, repo_id, revision,
                       why=f"your Hugging Face cache ({cache_dir()}) does not hold it; {offline_why}") from None


def _online(given: str, repo_id: str, revision: str | None, trust: bool):
    """The hub's model info, with every refusal made before a download; None when the hub cannot be reached
    (the caller then reads the cache). Raises EatlasError for what the hub says is wrong."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )
    connection: list[type[BaseException]] = [OfflineModeIsEnabled, ConnectionError, TimeoutError]
    for module in ("httpx2", "httpx", "requests"):      # whichever HTTP client this huggingface_hub uses
        try:
            mod = __import__(module)
        except ImportError:
            continue
        connection += [c for n in ("TransportError", "ConnectionError", "Timeout") if isinstance(
            c := getattr(mod, n, None), type) and issubclass(c, BaseException)]     # httpx's Timeout is a setting
    try:
        info = HfApi().model_info(repo_id, revision=revision, files_metadata=True)
    except GatedRepoError:
        raise EatlasError(f"{repo_id} is a gated model: the hub lets only users who accepted its conditions "
                          "download it", field="model",
                          hint=f"accept them on https://huggingface.co/{repo_id}, then log in with: hf auth login "
                          "(or set HF_TOKEN)") from None
    except RepositoryNotFoundError:
        raise EatlasError(f"unknown model {given!r}: not a registered model or a local path, and the Hugging Face "
                          f"hub has no model {repo_id!r} that you can see (it does not exist, or it is private and no "
                          "token of an account with access is set)", field="model",
                          hint=registered_like(given) + "check the id ('eatlas models' lists the registered and cached "
                          "ones); for a private "
                          "model log in with: hf auth login (or set HF_TOKEN)") from None
    except RevisionNotFoundError:
        raise EatlasError(f"{repo_id} has no revision {revision!r} (no such branch, tag or commit on the hub)",
                          field="model", hint=f"see https://huggingface.co/{repo_id}/commits/main; write the "
                          "revision after '@', e.g. ORG/NAME@main") from None
    except tuple(connection):
        return None
    except HfHubHTTPError as e:
        status = getattr(getattr(e, "response", None), "status_code", None)
        if status is not None and status >= 500:
            return None                 # the hub is down: the cache may hold it
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise EatlasError(f"the Hugging Face hub refused {repo_id}: {first[:200]}", field="model",
                          hint="check the id, the revision and your token (hf auth login)") from None
    names = {s.rfilename for s in info.siblings or [] if "/" not in s.rfilename}
    picked = _pick_weights(names)
    if picked is None:
        raise _no_weights(given, names, info.sha, cached=False)
    if not trust:
        refuse_custom_code(given, info.config or {})
    return info, picked


def resolve(model: str, *, offline: bool = False, trust: bool = False) -> HubModel:
    """The cached snapshot of hub model ``model`` (``ID`` or ``ID@REVISION``), downloaded first when downloads
    are on and the hub can be reached. Raises EatlasError (one line) for every refusal; nothing is written
    before every check has passed."""
    ref = parse(model)
    if ref is None:
        raise EatlasError(f"unknown model {model!r}", field="model",
                          hint="a registered id ('eatlas models'), a local model folder, a vector file, or a hub id "
                          "ORG/NAME[@REVISION]")
    repo_id, revision = ref
    off = offline_mode(offline)
    online = None if off else _online(model, repo_id, revision, trust)
    hub_sha: dict[str, str] = {}
    downloaded = False
    if online is not None:
        from huggingface_hub import snapshot_download
        info, (kind, files) = online
        patterns = META_PATTERNS + files + (["*.py"] if trust else [])
        try:
            path = Path(snapshot_download(repo_id, revision=revision, cache_dir=cache_dir(),
                                          allow_patterns=patterns))
        except Exception as e:              # noqa: BLE001 - a download broken off: one line, the cache keeps its parts
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise EatlasError(f"downloading {model} failed: {type(e).__name__}: {first[:200]}", field="model",
                              hint=f"try again, or download it with: {download_hint(repo_id, revision)}") from None
        downloaded = True
        hub_sha = {s.rfilename: s.lfs.sha256 for s in info.siblings or [] if s.lfs is not None and s.lfs.sha256}
        canonical = info.id if info.id and info.id != repo_id else None
    else:
        path = _from_cache(model, repo_id, revision, unreachable=not off)
        canonical = None
    commit = path.name
    if not _COMMIT.match(commit):
        raise EatlasError(f"huggingface_hub returned {path}, which is not a snapshot of the cache", field="model")
    names = {p.name for p in path.iterdir() if p.is_file()}
    if "config.json" not in names:
        raise _unknown(model, repo_id, revision, why=f"its cached snapshot {commit[:12]} holds no config.json")
    picked = _pick_weights(names)
    if picked is None:
        raise _no_weights(model, names, commit, cached=True)
    kind, files = picked
    weights = [f for f in files if not f.endswith(".index.json")]
    if files[0].endswith(".index.json"):        # a sharded checkpoint: every shard its index names
        wanted = sorted(set((_read_json(path / files[0]).get("weight_map") or {}).values()))
        missing = [w for w in wanted if w not in names]
        if missing or not wanted:
            raise EatlasError(f"the cached snapshot of {model} (commit {commit[:12]}) lacks "
                              f"{', '.join(missing[:3]) or 'the shards of ' + files[0]}", field="model",
                              hint=f"download it whole with: {download_hint(repo_id, revision)}")
        weights = wanted
    if not trust:
        refuse_custom_code(model, _read_json(path / "config.json"), _read_json(path / "tokenizer_config.json"))
    tree = {} if hub_sha else _cached_tree(repo_id, commit)
    sha = {w: hub_sha.get(w) or tree.get(w) or _sha256_of(path / w) for w in weights}
    card = card_metadata(path)
    return HubModel(given=model, repo_id=repo_id, revision=revision, commit=commit, path=path, weights=sha,
                    weights_format=kind, languages=_languages(card), canonical_id=canonical, downloaded=downloaded,
                    card=card)


def cached(repo_id: str, revision: str | None = None) -> Path | None:
    """The cached snapshot folder of a revision (None: not cached); never downloads."""
    from huggingface_hub import snapshot_download
    try:
        return Path(snapshot_download(repo_id, revision=revision, local_files_only=True, cache_dir=cache_dir(),
                                      allow_patterns=["config.json"]))
    except Exception:                   # noqa: BLE001 - LocalEntryNotFoundError, IncompleteSnapshotError, ...
        return None


def usable(folder: Path) -> str:
    """Whether a run can use a cached snapshot: 'yes', or what stops it. The checks :func:`resolve` and the loader
    make, without loading the weights: config.json, weights EATlas loads (a sharded checkpoint with every shard),
    tokenizer files, no code of its own named by the config or the tokenizer config (``auto_map``), and pickled
    ``.bin`` weights that torch's weights_only loader takes (their pickle read, never run)."""
    folder = Path(folder)
    names = {p.name for p in folder.iterdir() if p.is_file()} if folder.is_dir() else set()
    if "config.json" not in names:
        return "no: no config.json"
    picked = _pick_weights(names)
    if picked is None:
        return "no: no weights EATlas loads"
    kind, files = picked
    if files[0].endswith(".index.json"):
        wanted = sorted(set((_read_json(folder / files[0]).get("weight_map") or {}).values()))
        if not wanted or any(w not in names for w in wanted):
            return "no: shards of its weights are missing"
        files = wanted
    if not ({"tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model",
             "tokenizer.model"} & names):
        return "no: no tokenizer files"
    if custom_code(_read_json(folder / "config.json")) or custom_code(_read_json(folder / "tokenizer_config.json")):
        return "only with --trust-remote-code"
    if kind == "bin":
        for f in files:
            why = _pickle_refused(folder / f)
            if why:
                return f"no: {f} {why}"
    return "yes"


def _pickle_refused(path: Path) -> str | None:
    """Why torch's weights_only loader would refuse a pickled weights file (None: it loads it); only the pickle's
    names are read (torch.serialization.get_unsafe_globals_in_checkpoint), nothing in it runs."""
    try:
        from torch.serialization import get_unsafe_globals_in_checkpoint
    except ImportError:
        return "is pickled weights, and no torch here reads them"
    try:
        bad = get_unsafe_globals_in_checkpoint(str(path))
    except Exception:                   # noqa: BLE001 - not a torch.save checkpoint (a bare pickle, a damaged file)
        return "is not a checkpoint torch's weights_only loader reads"
    return f"names code torch's weights_only loader refuses ({', '.join(bad[:3])})" if bad else None


def cached_models() -> tuple[str, list[dict]]:
    """The hub cache's folder and one row per cached model snapshot: id, refs, commit, size, usable."""
    from huggingface_hub import scan_cache_dir
    root = cache_dir()
    try:
        info = scan_cache_dir(root)
    except Exception:                   # noqa: BLE001 - CacheNotFound: no cache yet
        return root, []
    rows = []
    seen = set()
    for repo in info.repos:
        if repo.repo_type != "model":
            continue
        seen.add(Path(repo.repo_path).name)
        for rev in repo.revisions:
            rows.append({"id": repo.repo_id, "refs": ", ".join(sorted(rev.refs)) or "-", "commit": rev.commit_hash,
                         "size": rev.size_on_disk, "usable": usable(rev.snapshot_path)})
    # a repository huggingface_hub's scan leaves out (a ref to a commit not in the cache, e.g. refs/pr/1, makes it
    # "corrupted" there) is still listed, each snapshot it holds, as a run finds them
    for folder in sorted(Path(root).glob("models--*")) if Path(root).is_dir() else []:
        if folder.name not in seen and folder.is_dir():
            rows += _scan_repo(folder)
    rows.sort(key=lambda r: (r["id"].lower(), r["refs"] == "-", r["refs"], r["commit"]))
    return root, rows


def _scan_repo(folder: Path) -> list[dict]:
    """The snapshots of one cached repository, read from its folders (``models--ORG--NAME``)."""
    repo_id = "/".join(folder.name.split("--")[1:])
    refs: dict[str, list[str]] = {}
    if (folder / "refs").is_dir():
        for p in sorted((folder / "refs").rglob("*")):
            if p.is_file():
                try:
                    refs.setdefault(p.read_text(encoding="utf-8").strip(), []).append(
                        p.relative_to(folder / "refs").as_posix())
                except (OSError, UnicodeDecodeError):
                    pass
    out = []
    for snap in sorted((folder / "snapshots").iterdir()) if (folder / "snapshots").is_dir() else []:
        if not (snap.is_dir() and _COMMIT.match(snap.name)):
            continue
        blobs = {}
        for f in snap.rglob("*"):
            try:
                if f.is_file():
                    blobs[f.resolve()] = f.stat().st_size
            except OSError:
                pass
        out.append({"id": repo_id, "refs": ", ".join(sorted(refs.get(snap.name, []))) or "-", "commit": snap.name,
                    "size": sum(blobs.values()), "usable": usable(snap)})
    return out
