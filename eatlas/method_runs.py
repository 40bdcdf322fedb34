"""Runs of the methods beside WEAT that need more than a test's four matrices: CEAT (a corpus of
contexts per stimulus) and IBD/EIBD (the Guo & Caliskan name groups and validation lists).

Each computes everything in memory first and hands the store one run record, its rows for
``results`` (none here) and its own tables, written in one transaction.
"""
from __future__ import annotations

import datetime as _dt
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from .encoders import Encoder
from .errors import EatlasError
from .registry import Registry

RACE_CODE = {"african_american": "A", "european_american": "E", "mexican_american": "M"}
GENDER_CODE = {"female": "F", "male": "M"}


def now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC).replace(tzinfo=None)


def run_record(method: str, encoder: Encoder, reg: Registry, *, seed: int, test_ids: list[str], levels: list[str],
               started: _dt.datetime, settings: dict, n_samples: int | None = None,
               alpha: float | None = None) -> dict:
    """The ``runs`` row every method writes: model, fingerprint, seed, packages, registry state."""
    from . import __version__
    from .identity import run_columns
    from .runner import package_versions, registry_state

    s = encoder.settings()
    return {"run_id": str(uuid.uuid4()), "method": method, "model": s["model"],
            "model_fingerprint": s["fingerprint"], "model_family": s["family"], **run_columns(encoder),
            "pooling": s["pooling"],
            "layer": s["layer"], "subword": s["subword"], "seed": seed, "n_samples": n_samples, "alpha": alpha,
            "levels": levels, "tests": test_ids, "started_at": started, "finished_at": now(),
            "eatlas_version": __version__, "package_versions": package_versions(),
            "registry": registry_state(reg, test_ids), "settings": {**settings, "encoder": encoder.info}}


# ------------------------------------------------------------------------------------------ IBD
def _validation_sets(reg: Registry) -> dict:
    """The Ghavami & Peplau validation lists (sets tagged ibd_validation), keyed without 'guo2021_val_'."""
    from .checks import has_tag

    return {s.id.removeprefix("guo2021_val_"): s for s in reg.sets.values()
            if has_tag(s, "ibd_validation")}


def ibd_inputs(reg: Registry):
    """(groups: code -> [names], lists: short name -> [words]) from the registry's Guo & Caliskan sets."""
    groups: dict[str, list[str]] = {}
    validation = _validation_sets(reg)
    lists = {key: [i.text for i in s.items] for key, s in validation.items()}
    listed = {v.id for v in validation.values()}
    for s in reg.sets.values():
        g = s.group or {}
        if s.id in listed:
            continue
        if s.source.get("paper") == "guo2021" and g.get("race") in RACE_CODE and g.get("gender") in GENDER_CODE \
                and all(i.kind == "name" for i in s.items):
            groups[RACE_CODE[g["race"]] + GENDER_CODE[g["gender"]]] = [i.text for i in s.items]
    if len(groups) < 2 or not lists:
        raise EatlasError("the registry has no Guo & Caliskan name groups and validation lists for IBD",
                          hint="sets with group: {race, gender} and tags: [ibd_validation]")
    return groups, lists


def run_ibd(encoder: Encoder, reg: Registry, *, targets: list[str] | None = None, seed: int = 0,
            eibd_rule: str = "any"):
    """IBD and EIBD for each intersectional group, thresholds chosen on the ROC curve; ``eibd_rule``:
    EIBD drops a word when "any" constituent score exceeds t (the paper) or "all" do (authors' code)."""
    from .ibd import eibd, ibd, labels_from_lists

    started = now()
    groups, lists = ibd_inputs(reg)
    words = sorted({w for ws in lists.values() for w in ws})
    names = sorted({n for ns in groups.values() for n in ns})
    enc_w, enc_n = encoder.encode(words), encoder.encode(names)
    wvec = {w: enc_w.vectors[i] for i, w in enumerate(words) if not enc_w.missing[i]}
    nvec = {n: enc_n.vectors[i] for i, n in enumerate(names) if not enc_n.missing[i]}
    dropped_names = [n for n in names if n not in nvec]
    gm = {}
    for code, ns in groups.items():
        kept = [nvec[n] for n in ns if n in nvec]
        if len(kept) < 2:
            raise EatlasError(f"group {code} has {len(kept)} encodable names; IBD needs at least 2",
                              hint=f"names missing from the model: {', '.join(n for n in ns if n not in nvec)}")
        gm[code] = np.vstack(kept)
    labels = labels_from_lists(lists)
    labels = {w: labels.get(w, frozenset()) for w in wvec}
    concepts = {key: s.concept for key, s in _validation_sets(reg).items()}
    printed = _printed_rates(reg)
    summaries, words_rows = [], []
    for code in targets or sorted(gm):
        lc = code.lower()
        for method, fn, plist in (("IBD", ibd, f"{lc}_intersectional"), ("EIBD", eibd, f"{lc}_emergent")):
            if plist not in lists:
                continue
            r = fn(gm, wvec, labels, target=code, positive_list=plist,
                   **({"rule": eibd_rule} if method == "EIBD" else {}))
            row = r.to_dict()
            row["paper_chance"] = printed.get(("chance", concepts.get(plist)))
            row["paper_accuracy"] = printed.get(("accuracy", f"{method} | {_group_words(code)}"))
            row["missing"] = ",".join(sorted(set(words) - set(wvec)))
            row["dropped_names"] = ",".join(dropped_names)
            summaries.append(row)
            words_rows += r.to_rows()
    run = run_record("ibd", encoder, reg, seed=seed, test_ids=[], levels=["word"], started=started,
                     settings={"targets": targets, "lists": sorted(lists), "groups": sorted(groups),
                               "eibd_rule": eibd_rule})
    for rows in (summaries, words_rows):
        for r in rows:
            r["run_id"] = run["run_id"]
    return run, {"ibd_results": pd.DataFrame(summaries), "ibd_words": _stringify(pd.DataFrame(words_rows))}


RACE_WORDS = {"A": "African American", "E": "European American", "M": "Mexican American"}
GENDER_WORDS = {"F": "females", "M": "males"}


def _group_words(code: str) -> str:
    """'AF' -> 'African American females', as the paper's prose names the group."""
    return f"{RACE_WORDS.get(code[:1], code)} {GENDER_WORDS.get(code[1:], '')}".strip()


def _printed_rates(reg: Registry) -> dict:
    """The paper's printed chance rates (by list, as printed) and detection accuracies (by 'IBD | group'),
    as fractions, from the registry's published results of Guo & Caliskan."""
    from .store import read_published

    pub = read_published(reg)
    pub = pub[(pub["paper"] == "guo2021") & ~pub["missing"]]
    out = {}
    for r in pub.itertuples():
        kind = {"random_chance_percent": "chance", "detection_accuracy_percent": "accuracy"}.get(r.statistic)
        if kind and r.table_id == ("Appendix" if kind == "chance" else "prose"):
            out[(kind, r.row_label)] = float(r.value) / 100
    return out


def _stringify(df: pd.DataFrame) -> pd.DataFrame:
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = df[c].map(lambda v: None if v is None else (v if isinstance(v, (str, bool)) else str(v)))
    return df


# ------------------------------------------------------------------------------------------ CEAT
def read_corpus(path: Path, column: str | None = None) -> list[str]:
    """A text file (one sentence or comment per line), a parquet file's text column, or a column of a
    Hugging Face dataset saved with ``save_to_disk`` (a folder; read with ``datasets.load_from_disk``)."""
    path = Path(path)
    if path.is_dir():
        return _dataset_column(path, column)
    if not path.is_file():
        raise EatlasError("corpus file not found", file=str(path))
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq
        table = pq.read_table(path)
        return _column(path, column, table.column_names, lambda c: table.column(c).to_pylist())
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise EatlasError(f"corpus is not UTF-8 (byte {e.start})", file=str(path)) from None


def _column(path: Path, column: str | None, names: list[str], get) -> list[str]:
    col = column or ("text" if "text" in names else None)
    if col not in names:
        raise EatlasError(f"no column {col!r} in the corpus" if col else "the corpus has no column 'text'",
                          file=str(path), field="--corpus-column", hint=f"columns: {', '.join(map(str, names))}")
    return [str(x) for x in get(col) if x is not None]


def _dataset_column(path: Path, column: str | None) -> list[str]:
    try:
        import datasets
    except ImportError:
        raise EatlasError("reading a saved dataset folder needs the datasets package", file=str(path),
                          hint="pip install 'eatlas[publish]', or pass a text or parquet file") from None
    try:
        ds = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError, OSError) as e:
        raise EatlasError(f"not a dataset saved with save_to_disk: {str(e).splitlines()[0]}", file=str(path),
                          hint="pass a text file (one sentence per line), a parquet file, or a save_to_disk folder"
                          ) from None
    if isinstance(ds, datasets.DatasetDict):
        if len(ds) != 1:
            raise EatlasError(f"the dataset has {len(ds)} splits ({', '.join(ds)}); save one split", file=str(path))
        ds = next(iter(ds.values()))
    return _column(path, column, ds.column_names, lambda c: ds[c])


def ceat_keys(reg: Registry, test_ids: list[str], case_sensitive: bool | None = None, seed: int = 0
              ) -> list[tuple[str, bool]]:
    """The (stimulus, case_sensitive) pairs whose contexts a CEAT run of ``test_ids`` looks for."""
    from .stimuli import build_test

    keys = []
    for tid in test_ids:
        t = build_test(reg, reg.get_test_spec(tid), "word", seed=seed)
        for c in t.concepts.values():
            cs = case_sensitive if case_sensitive is not None else \
                reg.get_set(c.set_ref).raw.get("case_sensitive", True) is not False
            keys += [(s, cs) for s in c.items]
    return list(dict.fromkeys(keys))


def run_ceat(encoder: Encoder, reg: Registry, test_ids: list[str], corpus: list[str] | None, *, n_draws: int = 10_000,
             seed: int = 0, sampling: str = "paper", max_contexts: int = 1000, case_sensitive: bool | None = None,
             progress=None, contexts: dict | None = None, corpus_lines: int | None = None,
             encoded: dict | None = None):
    """CEAT on each test: contexts from the corpus, contextual-word vectors, N draws, random effects.
    Contexts are sampled by ``ceat_corpus`` (at most ``max_contexts`` per stimulus, the same sample
    whatever the sharding); ``contexts``: that sample already taken (eatlas.ceat_corpus.corpus_contexts,
    e.g. on Ray) over ``corpus_lines`` lines, instead of ``corpus``; ``encoded``: their vectors already
    computed (eatlas.ceat_encode: (stimulus, case_sensitive) -> (n, d) matrix in sample order, NaN rows
    not encodable), used instead of encoding here."""
    from .ceat import ceat
    from .ceat_corpus import scan_lines
    from .runner import refuse_invalid
    from .stimuli import build_test

    refuse_invalid(reg, list(dict.fromkeys(reg.get_test_spec(t).id for t in test_ids)))
    started = now()
    results, draws, contexts_rows = [], [], []
    for tid in test_ids:
        spec = reg.get_test_spec(tid)
        t = build_test(reg, spec, "word", seed=seed)
        per_role = {}
        for role, c in t.concepts.items():
            cs = case_sensitive if case_sensitive is not None else \
                reg.get_set(c.set_ref).raw.get("case_sensitive", True) is not False
            keys = [(st, cs) for st in dict.fromkeys(c.items)]
            sample = contexts if contexts is not None else scan_lines(corpus, keys, max_contexts, seed)[0]
            mats = {}
            for stim, cs_ in keys:
                hits = [(text, (a, b)) for _, text, a, b in sample.get((stim, cs_), [])]
                contexts_rows.append({"test_id": spec.id, "role": role.upper(), "stimulus": stim,
                                      "n_contexts": len(hits)})
                if not hits:
                    mats[stim] = np.zeros((0, 1))
                    continue
                if encoded is not None:
                    v = np.asarray(encoded[(stim, cs_)], dtype=np.float32)
                else:
                    r = encoder.encode_spans([text for text, _ in hits], [span for _, span in hits])
                    v = r.vectors[~r.missing]
                # a zero or NaN/inf context vector has no cosine: that context is left out, like one not encoded
                mats[stim] = v[np.isfinite(v).all(axis=1) & (v != 0).any(axis=1)]
            per_role[role] = mats
        if progress:
            progress(t)
        dims = {m.shape[1] for mats in per_role.values() for m in mats.values() if len(m)}
        per_role = {r: {s: (m if len(m) else np.zeros((0, max(dims or {1})))) for s, m in mats.items()}
                    for r, mats in per_role.items()}
        row = {"test_id": spec.id, "test_version": spec.version, "level": "c-word"}
        try:
            res = ceat(per_role["x"], per_role["y"], per_role["a"], per_role["b"], n_draws=n_draws, seed=seed,
                       sampling=sampling, on_missing="report")
        except EatlasError as e:       # e.g. a set none of whose stimuli occurs in the corpus: that test only
            absent = [f"{r.upper()}:{st}" for r, mats in per_role.items() for st, m in mats.items() if not len(m)]
            results.append({**row, "status": "not_run", "reason": e.message, "n_missing": len(absent),
                            "missing": ",".join(absent)})
            continue
        results.append({**row, "status": "ok", "reason": None, **res.to_dict()})
        draws.append(pd.DataFrame({"test_id": spec.id, "draw": np.arange(res.n_draws),
                                   "effect_size": res.effect_sizes, "variance": res.variances}))
    run = run_record("ceat", encoder, reg, seed=seed, test_ids=[reg.get_test_spec(t).id for t in test_ids],
                     levels=["c-word"], started=started, n_samples=n_draws,
                     settings={"n_draws": n_draws, "sampling": sampling, "max_contexts": max_contexts,
                               "case_sensitive": case_sensitive,
                               "corpus_lines": corpus_lines if corpus_lines is not None else len(corpus),
                               "sampler": "bottom-k blake2b (eatlas.ceat_corpus)"})
    tables = {"ceat_results": pd.DataFrame(results), "ceat_contexts": pd.DataFrame(contexts_rows)}
    if draws:
        tables["ceat_draws"] = pd.concat(draws, ignore_index=True)
    for df in tables.values():
        df.insert(0, "run_id", run["run_id"])
    return run, {k: _stringify(v) for k, v in tables.items()}
