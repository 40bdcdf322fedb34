"""What model a run used, and which published numbers may be set beside it.

A run is paired with a paper's printed number (view ``reproduction``) only when both are *the same model,
encoded the same way*. ``registry/<paper>/published/models.yaml`` says what each printed model is, as the
paper states it (``stated_in``) and as its authors' code loaded it (``code``). :func:`match` is the one rule,
for one run, one printed model and one level; it takes either of two routes:

* **a hub model**: the paper's model has Hugging Face hub ids (``hub_ids``, e.g. ``bert-large-cased``), the
  run's ``model_hub_id`` is one of them (compared by :func:`hub_key`: ``google-bert/bert-large-cased`` is
  ``bert-large-cased``, the hub's own redirect of its legacy ids), and every configuration fact the paper
  states (``config``: model_type, num_hidden_layers, hidden_size, vocab_size, do_lower_case) is the run's
  (``model_config``, read from config.json and the tokenizer's configuration);
* **a registered identity** (static vectors and loader entries): the paper states the model's name and its
  size or corpus, and the run's registered identity (``identity:`` in ``loaders/*.yaml``) has that name and
  every size, corpus and dimension the paper states.

and then the same encoding: the encoding the authors' code really used (``encoding``, eatlas.encoders.authors;
``unknown`` where their encoder cannot be read, so that no run is theirs), and the pooling, subword choice and
layer the paper states (``pooling``, ``subword``, ``layer``). Anything else of the same family, with the same
hub id, or a hub model of the model_type the paper's configuration states (a fine-tuned copy under another id),
is shown only in the view ``reproduction_loose``, whose column ``differs`` says what differs (e.g.
``num_hidden_layers 12 vs 24; encoding standard vs sent-bias``).

The outcome is kept in table ``model_matches`` (run, level, paper, printed model: ``match``, ``differs``),
which the store's views join: computed for each run when it is written or imported, and again for every run
when the papers' models or this rule change (``model_match_state`` holds the digest they were computed under).

A run records where its family came from (``family_source``): ``loader`` (a registered model id),
``fingerprint`` (a folder whose weights are those of a registered model), ``user`` (``--family``), or
``unknown`` (family ``unknown``: a folder or vector file nobody named).

A run also records what a paper could say about the model: for a Hugging Face hub model the id as the user
gave it (``model_hub_id``), the requested revision (``model_revision``, NULL: the default branch), the commit
it resolved to (``model_commit``) and each weight file's sha256 (``model_weights_sha256``, JSON), and for any
transformers model the facts of its config.json (``model_config``, JSON: model_type, architectures,
num_hidden_layers, hidden_size, vocab_size, the config's own aliases such as n_layer / n_embd, and the
tokenizer's do_lower_case; ``eatlas.encoders.hf.config_facts``).
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from ..columns import as_columns
from ..errors import EatlasError

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

if TYPE_CHECKING:
    import pandas as pd

FIELDS = ("name", "size", "corpus")
FAMILY_SOURCES = ("loader", "fingerprint", "user", "unknown")
CONFIG_FACTS = ("model_type", "architectures", "num_hidden_layers", "hidden_size", "vocab_size", "do_lower_case")
PUBLISHED_MODEL_COLUMNS = ["paper", "model", "model_family", "name", "size", "corpus", "dimension", "stated_in",
                           "source_file", "hub_ids", "no_hub_id", "config", "config_from", "revision", "encoding",
                           "pooling", "subword", "layer", "code", "departures"]
MATCH_VERSION = 1       # bump when match() changes: every stored run is matched again

# Run columns (table runs) that describe the model; filled by run_columns(). model_hub_id .. model_config: what a
# hub model was (eatlas.encoders.hf; the id as given, the revision asked for, the commit it resolved to, the weight
# files' sha256, the configuration facts), encoding: eatlas.encoders.authors.
RUN_COLUMNS = {"family_source": "VARCHAR", "model_entry": "VARCHAR", "model_name": "VARCHAR",
               "model_size": "VARCHAR", "model_corpus": "VARCHAR", "model_dimension": "INTEGER",
               "model_hub_id": "VARCHAR", "model_revision": "VARCHAR", "model_commit": "VARCHAR",
               "model_weights_sha256": "JSON", "model_config": "JSON", "encoding": "VARCHAR"}

# The organisations the Hugging Face hub moved its legacy (organisation-less) model ids into: a request for
# 'bert-large-cased' is served by 'google-bert/bert-large-cased', so the two are one model.
LEGACY_ORGS = ("google-bert", "openai-community", "facebookai", "distilbert", "google-t5", "albert")
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


def hub_key(hub_id: str | None) -> str | None:
    """A hub id as :func:`match` compares it: lower case, without an ``@revision``, and without the hub's
    legacy organisation (``google-bert/bert-large-cased`` -> ``bert-large-cased``)."""
    if not hub_id or not isinstance(hub_id, str):
        return None
    key = hub_id.strip().split("@", 1)[0].strip("/").lower()
    org, sep, name = key.partition("/")
    return name if sep and org in LEGACY_ORGS else key or None


def entry_identity(entry: dict) -> dict:
    """A loader entry's identity block (name, size, corpus), empty fields as None."""
    ident = entry.get("identity") or {}
    if not isinstance(ident, dict):
        raise EatlasError("identity must be a mapping (name, size, corpus)", file=entry.get("_file"), field="identity")
    return {f: (str(ident[f]) if ident.get(f) not in (None, "") else None) for f in FIELDS}


# ----------------------------------------------------------------------------------------------- the run side
def run_columns(encoder) -> dict:
    """The runs-table columns of a model's identity, from what the encoder was loaded as: a hub model's
    ``model_hub_id``, ``model_revision``, ``model_commit`` and ``model_weights_sha256`` (eatlas.encoders.hub), a
    transformers model's configuration facts (``model_config``, eatlas.encoders.hf.config_facts), and the
    encoding it ran (eatlas.encoders.authors)."""
    ident = getattr(encoder, "identity", None) or {}

    def as_json(v):
        return json.dumps(v, sort_keys=True) if v else None
    return {"family_source": getattr(encoder, "family_source", None) or "unknown",
            "model_entry": getattr(encoder, "entry", None),
            "model_name": ident.get("name"), "model_size": ident.get("size"), "model_corpus": ident.get("corpus"),
            "model_dimension": getattr(encoder, "dimension", None),
            "model_hub_id": getattr(encoder, "model_hub_id", None),
            "model_revision": getattr(encoder, "model_revision", None),
            "model_commit": getattr(encoder, "model_commit", None),
            "model_weights_sha256": as_json(getattr(encoder, "model_weights_sha256", None)),
            "model_config": as_json(getattr(encoder, "model_config", None)),
            "encoding": getattr(encoder, "encoding", None) or "standard"}


def recognise_folder(path: Path, fingerprint: str, entries: dict) -> str | None:
    """The id of the installed transformers loader entry whose weights folder has this fingerprint."""
    from .base import _folder_fingerprint, _package_dir, entry_installed

    for mid, e in entries.items():
        w = e.get("weights") or {}
        if e.get("backend") != "transformers" or not entry_installed(e) or "path" not in w:
            continue
        folder = _package_dir(w["module"]) / w["path"]
        try:
            if folder.resolve() == Path(path).resolve() or _folder_fingerprint(folder) == fingerprint:
                return mid
        except OSError:
            continue
    return None


def recognise_file(path: Path, fingerprint: str, entries: dict) -> str | None:
    """The id of the installed GGUF loader entry whose file is ``path`` or has its fingerprint (a sampled sha256)."""
    from .base import _file_fingerprint, _package_dir, entry_installed

    for mid, e in entries.items():
        w = e.get("weights") or {}
        if e.get("backend") != "gguf" or not entry_installed(e) or "path" not in w:
            continue
        file = _package_dir(w["module"]) / w["path"]
        try:
            if file.resolve() == Path(path).resolve() or _file_fingerprint(file) == fingerprint:
                return mid
        except OSError:
            continue
    return None


# ------------------------------------------------------------------------------------------ the papers' side
def _check_model(m: dict, rel: str, i: int) -> dict:
    """The hub and encoding fields of one models.yaml entry, checked (one error naming the field)."""
    from .authors import ENCODINGS, UNKNOWN
    from .hf import POOLINGS, SUBWORDS

    where = f"models[{i}]"
    out: dict = {"hub_ids": None}
    hub = m.get("hub_ids")
    if hub is not None:
        if not isinstance(hub, list) or not all(isinstance(h, str) and _HUB_ID.match(h) for h in hub):
            raise EatlasError(f"hub_ids must be a list of hub ids (ORG/NAME or NAME), got {hub!r:.80}", file=rel,
                              field=f"{where}.hub_ids", hint="e.g. hub_ids: [bert-large-cased]; [] where none exists")
        out["hub_ids"] = list(hub)
    if hub == [] and not m.get("no_hub_id"):
        raise EatlasError("hub_ids is empty: say why in no_hub_id", file=rel, field=f"{where}.no_hub_id",
                          hint="e.g. no_hub_id: 'ELMo ran from allennlp's ElmoEmbedder, not a hub repository'")
    config = m.get("config")
    if config is not None:
        if not isinstance(config, dict):
            raise EatlasError("config must be a mapping of configuration facts", file=rel, field=f"{where}.config",
                              hint=f"keys: {', '.join(CONFIG_FACTS)}")
        for k, v in config.items():
            if k not in CONFIG_FACTS:
                raise EatlasError(f"unknown configuration fact {k!r}", file=rel, field=f"{where}.config.{k}",
                                  hint=f"one of {', '.join(CONFIG_FACTS)}")
            if not isinstance(v, (str, int, bool, list)):
                raise EatlasError(f"expected text, a number, true/false or a list, got {v!r:.60}", file=rel,
                                  field=f"{where}.config.{k}")
        if not hub:
            raise EatlasError("config facts are compared with a hub model's: name its hub_ids", file=rel,
                              field=f"{where}.config", hint="add hub_ids: [...]")
        out["config"] = config
    for key, allowed in (("encoding", (*ENCODINGS, UNKNOWN)), ("pooling", POOLINGS), ("subword", SUBWORDS)):
        v = m.get(key)
        if v is not None and v not in allowed:
            raise EatlasError(f"unknown {key} {v!r:.40}", file=rel, field=f"{where}.{key}",
                              hint=f"one of {', '.join(allowed)}")
        out[key] = v
    layer = m.get("layer")
    if layer is not None and not (isinstance(layer, int) and not isinstance(layer, bool) or layer == "sum"):
        raise EatlasError(f"layer {layer!r:.40} is not a hidden-state index or 'sum'", file=rel, field=f"{where}.layer")
    out["layer"] = None if layer is None else str(layer)
    departures = m.get("departures")
    if departures is not None and not (isinstance(departures, list) and all(isinstance(d, dict) for d in departures)):
        raise EatlasError("departures must be a list of mappings (what, code, effect)", file=rel,
                          field=f"{where}.departures")
    for key in ("no_hub_id", "config_from", "revision", "code"):
        v = m.get(key)
        if v is not None and not isinstance(v, str):
            raise EatlasError(f"expected text, got {v!r:.60}", file=rel, field=f"{where}.{key}", hint="quote it")
        out[key] = v
    out["departures"] = json.dumps(departures) if departures else None
    out["config"] = json.dumps(config, sort_keys=True) if config else None
    return out


def read_published_models(reg) -> pd.DataFrame:
    """Every ``registry/<paper>/published/models.yaml``: the published tables' models as the papers state them."""
    import pandas as pd

    df = pd.DataFrame(published_model_rows(reg), columns=PUBLISHED_MODEL_COLUMNS)
    return df.astype({"dimension": "Int64"})


def published_model_rows(reg) -> list[dict]:
    """The rows of :func:`read_published_models`, as dicts."""
    rows = []
    for p in sorted((Path(reg.root) / "registry").glob("*/published/models.yaml")):
        rows.extend(dict(r) for r in _model_rows(p.read_bytes(), str(p.relative_to(reg.root)), p.parent.parent.name))
    return rows


# A models.yaml file's rows, keyed by its bytes (and where it is): every run reads the same files twice (the
# store's model matches and the run's pairing), so each is parsed once per content, whatever it was before.
@functools.lru_cache(maxsize=64)
def _model_rows(raw: bytes, rel: str, folder: str) -> tuple[dict, ...]:
    return tuple(_parse_model_rows(raw, rel, folder))


def _parse_model_rows(raw: bytes, rel: str, folder: str) -> list[dict]:
    rows: list[dict] = []
    try:        # libyaml's safe loader where PyYAML has it (~10x the pure-Python one's speed)
        doc = yaml.load(raw.decode("utf-8"), Loader=_YAML_LOADER) or {}
    except UnicodeDecodeError as e:
        raise EatlasError(f"not valid UTF-8 (byte {e.start})", file=rel, hint="save the file as UTF-8") from None
    except yaml.YAMLError as e:
        raise EatlasError(f"not valid YAML: {str(e).splitlines()[0]}", file=rel) from None
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, list):
        raise EatlasError("expected a mapping with 'paper' and a list 'models'", file=rel, field="models")
    for i, m in enumerate(models):
        if not isinstance(m, dict) or not m.get("model") or not m.get("stated_in"):
            raise EatlasError("each model needs 'model' (as printed) and 'stated_in' (where the paper says it)",
                              file=rel, field=f"models[{i}]")
        dim = m.get("dimension")
        if dim is not None and not isinstance(dim, int):
            raise EatlasError(f"dimension {dim!r} is not a whole number", file=rel, field=f"models[{i}].dimension")
        rows.append({"paper": doc.get("paper") or folder, "model": str(m["model"]),
                     "model_family": m.get("model_family"),
                     **{f: (str(m[f]) if m.get(f) not in (None, "") else None) for f in FIELDS},
                     "dimension": dim, "stated_in": str(m["stated_in"]), "source_file": rel,
                     **_check_model(m, rel, i)})
    return rows


def published_model_problems(reg) -> list[EatlasError]:
    """The problem of the registry's models.yaml files, for ``eatlas validate`` (empty: none)."""
    try:
        published_model_rows(reg)
    except EatlasError as e:
        return [e]
    return []


# ------------------------------------------------------------------------------------------------- the rule
@dataclass(frozen=True)
class Match:
    same_model: bool            # the paper's model, encoded as its authors' code did: view reproduction
    differs: str | None         # what differs, '; '-separated (None: nothing)

    @property
    def match(self) -> str:
        """The views' column ``match``: ``same_model``, or ``same_family`` for every looser pair (:func:`related`:
        the same family, the same hub id with another configuration or encoding, a hub model of the paper's
        model_type)."""
        return "same_model" if self.same_model else "same_family"


def _low(v):
    return v.strip().lower() if isinstance(v, str) else v


def _shown(v) -> str:
    if v is None:
        return "?"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ",".join(map(str, v))
    return str(v)


def _loads(v) -> dict:
    if isinstance(v, dict):
        return v
    try:
        out = json.loads(v) if isinstance(v, str) and v else {}
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


def _identity_differs(run: dict, pub: dict) -> list[str]:
    """What keeps a run's registered identity from being the paper's model (name, size, corpus, dimension)."""
    p_name, r_name = pub.get("name"), run.get("model_name")
    out = []
    if p_name is None:
        out.append("the paper does not name the model exactly")
    elif r_name is None:
        out.append("our model has no registered identity")
    elif _low(p_name) != _low(r_name):
        out.append(f"model {r_name} vs {p_name}")
    for f in ("size", "corpus"):
        if pub.get(f) is not None and _low(pub[f]) != _low(run.get(f"model_{f}") or ""):
            out.append(f"{f} {run.get(f'model_{f}') or '?'} vs {pub[f]}")
    if pub.get("dimension") is not None and pub["dimension"] != run.get("model_dimension"):
        out.append(f"dimension {_shown(run.get('model_dimension'))} vs {pub['dimension']}")
    if p_name is not None and pub.get("size") is None and pub.get("corpus") is None:
        out.append("the paper states neither size nor corpus")
    return out


def _hub_differs(run: dict, pub: dict, keys: list[str]) -> list[str]:
    """What keeps a run's hub model from being the paper's: the hub id, the revision, the configuration facts."""
    out = []
    if hub_key(run.get("model_hub_id")) not in keys:
        out.append(f"hub id {run.get('model_hub_id') or '?'} vs {pub['hub_ids'][0]}")
    rev = pub.get("revision")
    if rev and not any(isinstance(v, str) and (v == rev or (len(rev) >= 7 and v.startswith(rev)))
                       for v in (run.get("model_commit"), run.get("model_revision"))):
        out.append(f"revision {(run.get('model_commit') or run.get('model_revision') or '?')[:12]} vs {rev}")
    have, want = _loads(run.get("model_config")), _loads(pub.get("config"))
    for fact in CONFIG_FACTS:
        if fact in want and _low(have.get(fact)) != _low(want[fact]):
            out.append(f"{fact} {_shown(have.get(fact))} vs {_shown(want[fact])}")
    if pub.get("dimension") is not None and "hidden_size" not in want \
            and pub["dimension"] != run.get("model_dimension"):
        out.append(f"dimension {_shown(run.get('model_dimension'))} vs {pub['dimension']}")
    return out


def _protocol_differs(run: dict, pub: dict, level: str) -> list[str]:
    """What keeps a run from having encoded as the authors' code did at ``level``: the encoding, and the
    pooling (whole texts), subword choice (contextual words) and layer the paper states."""
    from ..levels import LEVELS
    from .authors import effective

    mine, theirs = run.get("encoding") or "standard", pub.get("encoding") or "standard"
    if effective(mine, level) != effective(theirs, level):
        return [f"encoding {mine} vs {theirs}"]
    out = []
    if effective(mine, level) == "standard":
        span = LEVELS[level].span if level in LEVELS else False
        for key, applies in (("pooling", not span), ("subword", span)):
            if applies and pub.get(key) and _low(run.get(key)) != _low(pub[key]):
                out.append(f"{key} {run.get(key) or '?'} vs {pub[key]}")
        if pub.get("layer") is not None and str(run.get("layer")) != str(pub["layer"]):
            out.append(f"layer {run.get('layer') or '?'} vs {pub['layer']}")
    return out


def related(run: dict, pub: dict) -> bool:
    """Whether a run and a printed model have anything in common: the family (a printed ``cbow-<f>``, sentences
    as the mean of word vectors, is family <f>), the registered identity's name, a hub id, or, for a hub model,
    the model_type the paper's configuration states (a fine-tuned copy of BERT-large under another id is set
    beside May et al.'s BERT loosely, saying how it differs)."""
    p_family = re.sub(r"^cbow-", "", pub.get("model_family") or "") or None
    r_family = run.get("model_family")
    if p_family and r_family not in (None, "", "unknown") and p_family == r_family:
        return True
    if pub.get("name") and run.get("model_name") and _low(pub["name"]) == _low(run["model_name"]):
        return True
    r_key = hub_key(run.get("model_hub_id"))
    if r_key is None:
        return False
    if r_key in {hub_key(h) for h in (pub.get("hub_ids") or [])}:
        return True
    kind = _loads(pub.get("config")).get("model_type")
    return kind is not None and _low(kind) == _low(_loads(run.get("model_config")).get("model_type"))


def match(run: dict, pub: dict, level: str) -> Match | None:
    """Whether a run's results at ``level`` stand beside the numbers a paper printed for model ``pub``.

    ``run``: a row of table ``runs`` (model_family, model_name, model_size, model_corpus, model_dimension,
    model_hub_id, model_revision, model_commit, model_config, encoding, pooling, subword, layer); ``pub``: the
    printed model (paper, model, model_family as printed, and what ``models.yaml`` states: name, size, corpus,
    dimension, hub_ids, revision, config, encoding, pooling, subword, layer). Returns None where the two have
    nothing in common (neither family, nor name, nor hub id); else whether the run is the paper's model encoded
    as its authors did (``same_model``), and what differs."""
    if not related(run, pub):
        return None
    name = bool(pub.get("name") and run.get("model_name")) and _low(pub["name"]) == _low(run["model_name"])
    hub_ids = pub.get("hub_ids")
    keys = [hub_key(h) for h in (list(hub_ids) if hub_ids is not None else [])]
    r_key = hub_key(run.get("model_hub_id"))
    ident = _identity_differs(run, pub)
    model = _hub_differs(run, pub, keys) if keys else None
    same = (model is not None and not model) or not ident
    # say what differs along the route the run can take: a hub model's (or any run's, where the paper names hub
    # ids and the run has no identity of the paper's name) or a registered identity's
    diffs = [] if same else (model if model is not None and (r_key or not name) else ident)
    diffs = diffs + _protocol_differs(run, pub, level)
    return Match(same_model=same and not diffs, differs="; ".join(diffs) or None)


# ---------------------------------------------------------------------------------------------- the store
MATCH_TABLES = """
CREATE TABLE IF NOT EXISTS model_matches (      -- published_family: '' where the table prints none
    run_id VARCHAR, level VARCHAR, paper VARCHAR, published_model VARCHAR, published_family VARCHAR,
    match VARCHAR, differs VARCHAR);
CREATE TABLE IF NOT EXISTS model_match_state (run_id VARCHAR, digest VARCHAR);
"""
_PUB_TYPES = {"hub_ids": "VARCHAR[]", "no_hub_id": "VARCHAR", "config": "JSON", "config_from": "VARCHAR",
              "revision": "VARCHAR", "encoding": "VARCHAR", "pooling": "VARCHAR", "subword": "VARCHAR",
              "layer": "VARCHAR", "code": "VARCHAR", "departures": "JSON"}
_RUN_FACTS = ("run_id", "model_family", "model_name", "model_size", "model_corpus", "model_dimension",
              "model_hub_id", "model_revision", "model_commit", "model_config", "encoding", "pooling", "subword",
              "layer")


def init(con) -> None:
    """Columns and tables this module adds to a results database (also to one written before them)."""
    for col, typ in RUN_COLUMNS.items():
        con.execute(f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {col} {typ}")
    con.execute("""CREATE TABLE IF NOT EXISTS published_models (
        paper VARCHAR, model VARCHAR, model_family VARCHAR, name VARCHAR, size VARCHAR, corpus VARCHAR,
        dimension INTEGER, stated_in VARCHAR, source_file VARCHAR)""")
    for col, typ in _PUB_TYPES.items():
        con.execute(f"ALTER TABLE published_models ADD COLUMN IF NOT EXISTS {col} {typ}")
    con.execute(MATCH_TABLES)


def refresh(con, reg) -> int:
    """Replace published_models with the registry's models.yaml files, and match the runs not matched yet
    (every run, when the printed models or the rule changed). Inside the caller's transaction."""
    rows = published_model_rows(reg)
    con.execute("DELETE FROM published_models")
    if rows:
        con.register("_pm", as_columns(rows, PUBLISHED_MODEL_COLUMNS))
        con.execute(f"INSERT INTO published_models ({', '.join(PUBLISHED_MODEL_COLUMNS)}) "
                    f"SELECT {', '.join(PUBLISHED_MODEL_COLUMNS)} FROM _pm")
        con.unregister("_pm")
    match_runs(con)
    return len(rows)


def _printed_models(con) -> list[dict]:
    """Every model a published table prints (paper, model, family as printed), with what models.yaml states."""
    # the printed models first (a hundred, of tens of thousands of numbers), then what models.yaml states of them:
    # the join of every number was a third of the time, and grew with the published tables
    cur = con.execute("""
        WITH pr AS (SELECT DISTINCT paper, model, coalesce(model_family, '') AS model_family FROM published_results
                    WHERE coalesce(model, '') <> '')
        SELECT DISTINCT pr.paper, pr.model, pr.model_family, pm.name, pm.size,
               pm.corpus, pm.dimension, pm.hub_ids, pm.revision, CAST(pm.config AS VARCHAR) AS config,
               pm.encoding, pm.pooling, pm.subword, pm.layer
        FROM pr LEFT JOIN published_models pm ON pm.paper = pr.paper AND pm.model = pr.model
        ORDER BY ALL""")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def match_runs(con) -> int:
    """Fill ``model_matches`` for the runs that have none under the current printed models and rule; returns
    how many runs were matched."""
    pubs = _printed_models(con)
    digest = hashlib.blake2b(json.dumps([MATCH_VERSION, pubs], sort_keys=True, default=str).encode(),
                             digest_size=16).hexdigest()
    if con.execute("SELECT count(*) FROM model_match_state WHERE digest <> ?", [digest]).fetchone()[0]:
        con.execute("DELETE FROM model_matches")
        con.execute("DELETE FROM model_match_state")
    cur = con.execute(f"SELECT {', '.join(_RUN_FACTS)} FROM runs "
                      "WHERE run_id NOT IN (SELECT run_id FROM model_match_state)")
    runs = [dict(zip(_RUN_FACTS, r)) for r in cur.fetchall()]
    if not runs:
        return 0
    from ..levels import NAMES

    rows = []
    for run in runs:
        for pub in pubs:
            if not related(run, pub):
                continue
            for level in NAMES:         # every level: a run's results, and a method's own tables, hold its levels
                m = match(run, pub, level)
                rows.append((run["run_id"], level, pub["paper"], pub["model"], pub["model_family"], m.match,
                             m.differs))
    # one insert of a frame each (executemany inserts row by row: minutes for thousands of runs)
    cols = ["run_id", "level", "paper", "published_model", "published_family", "match", "differs"]
    for table, names, values in (("model_matches", cols, [dict(zip(cols, r)) for r in rows]),
                                 ("model_match_state", ["run_id", "digest"],
                                  [{"run_id": r["run_id"], "digest": digest} for r in runs])):
        if values:
            con.register("_mm", as_columns(values, names))
            con.execute(f"INSERT INTO {table} SELECT {', '.join(names)} FROM _mm")
            con.unregister("_mm")
    return len(runs)
