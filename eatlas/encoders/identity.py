"""What model a run used, and which published numbers may be set beside it.

A run is paired with a paper's printed number only when both are *the same model*: the paper states
the model's name and dimension (``registry/<paper>/published/models.yaml``, from the papers' own
model descriptions), the run's model has a registered identity (``identity:`` in ``loaders/*.yaml``)
with the same name, its vectors have that dimension, and every further fact the paper states (size,
training corpus) is the run's too. Same-family pairs (e.g. GloVe 6B 50d beside May et al.'s GloVe 840B
300d numbers) are shown only in the view ``reproduction_loose``, whose column ``differs`` says what
differs.

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

import json
from pathlib import Path

import pandas as pd
import yaml

from ..errors import EatlasError

FIELDS = ("name", "size", "corpus")
FAMILY_SOURCES = ("loader", "fingerprint", "user", "unknown")
PUBLISHED_MODEL_COLUMNS = ["paper", "model", "model_family", "name", "size", "corpus", "dimension", "stated_in",
                           "source_file"]

# Run columns (table runs) that describe the model; filled by run_columns().
RUN_COLUMNS = {"family_source": "VARCHAR", "model_entry": "VARCHAR", "model_name": "VARCHAR",
               "model_size": "VARCHAR", "model_corpus": "VARCHAR", "model_dimension": "INTEGER",
               "model_hub_id": "VARCHAR", "model_revision": "VARCHAR", "model_commit": "VARCHAR",
               "model_weights_sha256": "JSON", "model_config": "JSON"}


def entry_identity(entry: dict) -> dict:
    """A loader entry's identity block (name, size, corpus), empty fields as None."""
    ident = entry.get("identity") or {}
    if not isinstance(ident, dict):
        raise EatlasError("identity must be a mapping (name, size, corpus)", file=entry.get("_file"), field="identity")
    return {f: (str(ident[f]) if ident.get(f) not in (None, "") else None) for f in FIELDS}


def run_columns(encoder) -> dict:
    """The runs-table columns of a model's identity, from what the encoder was loaded as."""
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
            "model_config": as_json(getattr(encoder, "model_config", None))}


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


def read_published_models(reg) -> pd.DataFrame:
    """Every ``registry/<paper>/published/models.yaml``: the published tables' models as the papers state them."""
    rows = []
    for p in sorted((Path(reg.root) / "registry").glob("*/published/models.yaml")):
        rel = str(p.relative_to(reg.root))
        try:
            doc = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
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
            rows.append({"paper": doc.get("paper") or p.parent.parent.name, "model": str(m["model"]),
                         "model_family": m.get("model_family"),
                         **{f: (str(m[f]) if m.get(f) not in (None, "") else None) for f in FIELDS},
                         "dimension": dim, "stated_in": str(m["stated_in"]), "source_file": rel})
    df = pd.DataFrame(rows, columns=PUBLISHED_MODEL_COLUMNS)
    return df.astype({"dimension": "Int64"})


def init(con) -> None:
    """Columns and tables this module adds to a results database (also to one written before them)."""
    for col, typ in RUN_COLUMNS.items():
        con.execute(f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {col} {typ}")
    con.execute("""CREATE TABLE IF NOT EXISTS published_models (
        paper VARCHAR, model VARCHAR, model_family VARCHAR, name VARCHAR, size VARCHAR, corpus VARCHAR,
        dimension INTEGER, stated_in VARCHAR, source_file VARCHAR)""")


def refresh(con, reg) -> int:
    df = read_published_models(reg)
    con.execute("DELETE FROM published_models")
    if len(df):
        con.register("_pm", df)
        con.execute(f"INSERT INTO published_models SELECT {', '.join(PUBLISHED_MODEL_COLUMNS)} FROM _pm")
        con.unregister("_pm")
    return len(df)
