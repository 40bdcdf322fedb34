"""CEAT: the Contextualized Embedding Association Test (Guo and Caliskan 2021).

Each stimulus of X, Y, A, B comes with a matrix of its contextual vectors (one row per sentence
it occurs in). A *draw* picks one context vector per stimulus and computes, on those vectors, the
WEAT effect size ``ES_i`` (Caliskan et al. 2017, sample std, ddof=1) and the paper's in-sample
variance ``V_i = std_{w in X u Y} s(w, A, B)**2`` (the square of the effect size's denominator;
the authors' ``effect_size`` returns the same). ``n_draws`` draws (10,000 in the paper) are
combined with the random-effects model of the paper's appendix (DerSimonian-Laird)::

    W_i = 1 / V_i
    Q = sum W_i ES_i^2 - (sum W_i ES_i)^2 / sum W_i,   df = N - 1
    c = sum W_i - sum W_i^2 / sum W_i
    tau^2 = (Q - df) / c  if Q >= df  else 0
    w*_i = 1 / (V_i + tau^2)
    CES = sum w*_i ES_i / sum w*_i,   SE(CES) = sqrt(1 / sum w*_i)
    p (two-tailed, paper)   = 2 * (1 - Phi(|CES| / SE))
    p (one-tailed, authors' code, H1: CES > 0) = 1 - Phi(CES / SE)

The pooling uses ``statsmodels.stats.meta_analysis.combine_effects(method_re="dl")``, whose
DerSimonian-Laird estimate is the formula above *except* that statsmodels does not truncate a
negative tau^2 at zero; when its tau^2 <= 0 we use tau^2 = 0, whose random-effects answer is the
fixed-effect one (``mean_effect_fe``, ``sd_eff_w_fe``). tests/test_ceat.py checks the result
against a direct implementation of the formula.

Sampling (``sampling=``):
  * ``"paper"``: a stimulus with at least N contexts gets N distinct contexts (without replacement
    across draws); one with fewer is drawn with replacement (``Generator.integers``).
  * ``"authors_code"``: every stimulus with replacement, one ``integers`` per stimulus and draw,
    as the authors' ``np.random.randint`` loop does.

Computation is vectorised over draws: the draws are index arrays (N x stimuli); when the stacked
contexts are few enough the target-by-attribute cosine matrix is computed once and each draw's
cosines are gathered from it (``method="gram"``), otherwise each chunk of draws gathers its unit
vectors and uses one batched matmul (``method="gather"``). Chunks bound the memory
(``max_chunk_bytes``). No Python loop runs over draws.

A stimulus with no contexts is never silently skipped: ``on_missing="report"`` (default) leaves it
out, lists it in ``CeatResult.missing`` and warns; ``on_missing="raise"`` refuses. A set left empty
always raises.

``find_contexts`` locates stimulus occurrences in a corpus (line index and character span); the
encoder that turns those into vectors lives elsewhere, so this module needs no deep-learning
library.
"""
from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats as _stats

from ..errors import EatlasError

__all__ = ["CeatResult", "RandomEffects", "ceat", "draw_indices", "random_effects", "find_contexts", "SETS"]

SETS = ("X", "Y", "A", "B")
Sampling = Literal["paper", "authors_code"]


# ---------------------------------------------------------------------------------------------
# Random-effects pooling

@dataclass(frozen=True)
class RandomEffects:
    ces: float                 # combined effect size
    se: float                  # standard error of CES
    z: float
    p_two_tailed: float        # the paper's appendix
    p_one_tailed: float        # the authors' code: norm.sf(z), alternative CES > 0
    tau2: float                # between-sample variance, truncated at 0 (paper)
    tau2_untruncated: float    # (Q - df) / c, as statsmodels reports it
    q: float
    df: int
    ces_fixed: float           # fixed-effect (inverse-variance) mean, for reference
    se_fixed: float


def random_effects(effect_sizes, variances) -> RandomEffects:
    """DerSimonian-Laird random-effects pooling of the paper's appendix, via statsmodels."""
    from statsmodels.stats.meta_analysis import combine_effects

    es = np.asarray(effect_sizes, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    if es.ndim != 1 or es.shape != v.shape or es.size < 2:
        raise ValueError("need at least two effect sizes and as many variances")
    if not (np.all(np.isfinite(es)) and np.all(np.isfinite(v)) and np.all(v > 0)):
        raise ValueError("effect sizes must be finite and variances finite and positive")
    with np.errstate(invalid="ignore"):      # statsmodels takes sqrt of a negative untruncated tau^2
        res = combine_effects(es, v, method_re="dl")
    tau2_raw = float(res.tau2)
    if tau2_raw > 0:
        tau2, ces, se = tau2_raw, float(res.mean_effect_re), float(res.sd_eff_w_re)
    else:   # Q <= df: the paper sets tau^2 = 0, i.e. the fixed-effect weights
        tau2, ces, se = 0.0, float(res.mean_effect_fe), float(res.sd_eff_w_fe)
    z = ces / se
    return RandomEffects(
        ces=ces, se=se, z=z,
        p_two_tailed=float(2.0 * _stats.norm.sf(abs(z))), p_one_tailed=float(_stats.norm.sf(z)),
        tau2=tau2, tau2_untruncated=tau2_raw, q=float(res.q), df=int(res.df),
        ces_fixed=float(res.mean_effect_fe), se_fixed=float(res.sd_eff_w_fe),
    )


# ---------------------------------------------------------------------------------------------
# Draws

def draw_indices(n_contexts: Sequence[int], n_draws: int, *, sampling: Sampling = "paper",
                 seed: int | np.random.Generator = 0) -> np.ndarray:
    """Local context index per (draw, stimulus): an ``(n_draws, len(n_contexts))`` int64 array.

    Deterministic given the counts, ``n_draws``, ``sampling`` and seed: one generator call per
    stimulus, in the order given (``ceat`` uses X, Y, A, B order): ``integers(0, n, n_draws)`` with
    replacement, ``choice(n, n_draws, replace=False)`` without.
    """
    if sampling not in ("paper", "authors_code"):
        raise ValueError(f"sampling must be 'paper' or 'authors_code', got {sampling!r}")
    if n_draws < 2:
        raise ValueError("n_draws must be at least 2")
    counts = [int(c) for c in n_contexts]
    if any(c < 1 for c in counts):
        raise ValueError("every stimulus needs at least one context")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    out = np.empty((n_draws, len(counts)), dtype=np.int64)
    for j, n in enumerate(counts):
        if sampling == "paper" and n >= n_draws:
            out[:, j] = rng.choice(n, size=n_draws, replace=False)
        else:
            out[:, j] = rng.integers(0, n, size=n_draws)
    return out


# ---------------------------------------------------------------------------------------------
# Result

@dataclass(frozen=True)
class CeatResult:
    ces: float
    se: float
    z: float
    p_two_tailed: float
    p_one_tailed: float
    tau2: float
    tau2_untruncated: float
    q: float
    df: int
    ces_fixed: float
    se_fixed: float
    n_draws: int
    sampling: str
    seed: int | None
    n_x: int
    n_y: int
    n_a: int
    n_b: int
    n_with_replacement: int                  # stimuli drawn with replacement (paper: fewer contexts than N)
    min_contexts: int
    missing: tuple[str, ...]                 # "SET:stimulus" left out for lack of contexts
    method: str                              # "gram" or "gather" (same numbers; speed only)
    effect_sizes: np.ndarray = field(repr=False, compare=False)   # the N draw effect sizes
    variances: np.ndarray = field(repr=False, compare=False)      # the N in-sample variances

    def quantiles(self, qs=(0.025, 0.25, 0.5, 0.75, 0.975)) -> dict[float, float]:
        return {float(q): float(v) for q, v in zip(qs, np.quantile(self.effect_sizes, qs))}

    def to_dict(self) -> dict:
        """One flat record of scalars (the draw arrays summarised), e.g. a row of ``ceat_results``."""
        q = self.quantiles()
        row = {k: getattr(self, k) for k in (
            "ces", "se", "z", "p_two_tailed", "p_one_tailed", "tau2", "tau2_untruncated", "q", "df",
            "ces_fixed", "se_fixed", "n_draws", "sampling", "seed", "n_x", "n_y", "n_a", "n_b",
            "n_with_replacement", "min_contexts", "method")}
        row.update({
            "n_missing": len(self.missing), "missing": ",".join(self.missing),
            "es_mean": float(self.effect_sizes.mean()), "es_sd": float(self.effect_sizes.std(ddof=1)),
            "es_q025": q[0.025], "es_q25": q[0.25], "es_median": q[0.5], "es_q75": q[0.75], "es_q975": q[0.975],
        })
        return row

    def to_rows(self) -> list[dict]:
        return [self.to_dict()]

    def draw_rows(self) -> list[dict]:
        """One record per draw (``draw``, ``effect_size``, ``variance``), for a ``ceat_draws`` table."""
        return [{"draw": i, "effect_size": float(e), "variance": float(v)}
                for i, (e, v) in enumerate(zip(self.effect_sizes, self.variances))]


# ---------------------------------------------------------------------------------------------
# CEAT

def _named(stimuli, set_name: str) -> list[tuple[str, object]]:
    if isinstance(stimuli, Mapping):
        return [(str(k), v) for k, v in stimuli.items()]
    if isinstance(stimuli, np.ndarray) and stimuli.ndim == 2:
        raise ValueError(f"{set_name} must be one context matrix per stimulus (a list or a dict), "
                         "not a single matrix")
    return [(f"{set_name}[{i}]", v) for i, v in enumerate(stimuli)]


def _prepare(sets: dict[str, list[tuple[str, object]]], on_missing: str):
    missing: list[str] = []
    kept: dict[str, list[tuple[str, np.ndarray]]] = {}
    dim = None
    for s in SETS:
        kept[s] = []
        for name, m in sets[s]:
            if m is None or np.size(m) == 0:
                missing.append(f"{s}:{name}")
                continue
            m = np.asarray(m, dtype=np.float64)
            if m.ndim == 1:
                m = m[None, :]
            if m.ndim != 2:
                raise ValueError(f"{s} stimulus {name!r}: contexts must be a 2-D matrix, got shape {m.shape}")
            if dim is None:
                dim = m.shape[1]
            elif m.shape[1] != dim:
                raise ValueError(f"{s} stimulus {name!r} has dimension {m.shape[1]}, others {dim}")
            kept[s].append((name, m))
    if missing and on_missing == "raise":
        raise EatlasError(f"no contexts for {len(missing)} stimuli: {', '.join(missing)}", obj="CEAT",
                          hint="find more contexts, or pass on_missing='report' to leave them out")
    empty = [s for s in SETS if not kept[s]]
    if empty:
        raise EatlasError(f"set(s) {', '.join(empty)} have no stimulus with contexts "
                          f"(missing: {', '.join(missing)})", obj="CEAT")
    if len(kept["X"]) + len(kept["Y"]) < 3:
        raise EatlasError("X and Y together need at least 3 stimuli with contexts", obj="CEAT")
    if missing:
        warnings.warn(f"CEAT: left out {len(missing)} stimuli with no contexts: {', '.join(missing)}",
                      stacklevel=3)
    return kept, missing


def _unit_stack(named: list[tuple[str, np.ndarray]], set_names: str) -> np.ndarray:
    """Stack the context matrices and scale rows to unit length (one copy)."""
    U = np.vstack([m for _, m in named])
    norms = np.sqrt(np.einsum("ij,ij->i", U, U))
    bad = (norms == 0) | ~np.isfinite(norms)
    if bad.any():
        owner = np.repeat(np.arange(len(named)), [m.shape[0] for _, m in named])
        names = sorted({named[k][0] for k in owner[bad]})
        raise ValueError(f"{set_names} stimuli {names} have a zero or non-finite context vector")
    U /= norms[:, None]
    return U


def _stats_from_s(s: np.ndarray, n_x: int) -> tuple[np.ndarray, np.ndarray]:
    """s: (draws, n_x+n_y) associations s(w, A, B) -> effect sizes and in-sample variances per draw."""
    var = s.var(axis=1, ddof=1)
    es = (s[:, :n_x].mean(axis=1) - s[:, n_x:].mean(axis=1)) / np.sqrt(var)
    return es, var


def ceat(X, Y, A, B, *, n_draws: int = 10_000, seed: int = 0, sampling: Sampling = "paper",
         on_missing: Literal["report", "raise"] = "report", indices: np.ndarray | None = None,
         method: Literal["auto", "gram", "gather"] = "auto", max_chunk_bytes: int = 64 * 2**20) -> CeatResult:
    """CEAT on contextual vectors.

    X, Y, A, B: per stimulus a ``(n_contexts, dim)`` matrix, as a list or a dict stimulus -> matrix
    (a dict names the stimuli in ``missing``). ``indices``: optional precomputed draws, an
    ``(n_draws, stimuli)`` array of local context indices over the stimuli kept, in X, Y, A, B
    order (as ``draw_indices`` returns); without it draws come from ``draw_indices`` with ``seed``.
    """
    if on_missing not in ("report", "raise"):
        raise ValueError("on_missing must be 'report' or 'raise'")
    kept, missing = _prepare({s: _named(v, s) for s, v in zip(SETS, (X, Y, A, B))}, on_missing)
    counts = [m.shape[0] for s in SETS for _, m in kept[s]]
    n = {s: len(kept[s]) for s in SETS}
    if indices is None:
        idx = draw_indices(counts, n_draws, sampling=sampling, seed=seed)
    else:
        idx = np.asarray(indices, dtype=np.int64)
        if idx.ndim != 2 or idx.shape[1] != len(counts) or idx.shape[0] < 2:
            raise ValueError(f"indices must have shape (n_draws, {len(counts)})")
        if np.any(idx < 0) or np.any(idx >= np.asarray(counts)[None, :]):
            raise ValueError("indices out of range of the stimuli's contexts")
        n_draws = idx.shape[0]
        seed = None
    # Stack every context; global row = offset of its stimulus + local index.
    n_t = n["X"] + n["Y"]
    U_t = _unit_stack(kept["X"] + kept["Y"], "X/Y")
    U_a = _unit_stack(kept["A"] + kept["B"], "A/B")
    off = np.concatenate([[0], np.cumsum(counts)])
    gidx = idx + off[None, :-1]
    tidx = gidx[:, :n_t]
    aidx = gidx[:, n_t:] - U_t.shape[0]
    n_attr = aidx.shape[1]
    dim = U_t.shape[1]

    if method == "auto":
        gram_cells = U_t.shape[0] * U_a.shape[0]
        method = "gram" if gram_cells <= min(2**24, 8 * n_draws * n_t * n_attr) else "gather"
    if method not in ("gram", "gather"):
        raise ValueError("method must be 'auto', 'gram' or 'gather'")
    # s(w, A, B) = sum_j wvec_j cos(w, attr_j): mean over A minus mean over B.
    wvec = np.concatenate([np.full(n["A"], 1.0 / n["A"]), np.full(n["B"], -1.0 / n["B"])])
    s_all = np.empty((n_draws, n_t))
    if method == "gram":
        g = (U_t @ U_a.T).ravel()            # every target context x every attribute context
        row = tidx * U_a.shape[0]              # flat offset of each drawn target context's row
        chunk = max(1, min(1024, max_chunk_bytes // (16 * n_t * n_attr)))
        flat = np.empty((chunk, n_t, n_attr), dtype=np.int64)
        S = np.empty((chunk, n_t, n_attr))
        for lo in range(0, n_draws, chunk):
            hi = min(lo + chunk, n_draws)
            c = hi - lo
            np.add(row[lo:hi, :, None], aidx[lo:hi, None, :], out=flat[:c])
            g.take(flat[:c], out=S[:c], mode="clip")   # (draws, n_t, n_attr) cosines; "clip" avoids a buffer
            s_all[lo:hi] = (S[:c].reshape(-1, n_attr) @ wvec).reshape(c, n_t)
    else:
        # unit vectors: s(w) = w . (mean_A a - mean_B b), so each draw needs one difference vector
        chunk = max(1, max_chunk_bytes // (8 * (n_t + n_attr) * dim))
        for lo in range(0, n_draws, chunk):
            hi = min(lo + chunk, n_draws)
            diff = wvec @ U_a[aidx[lo:hi]]                            # (draws, dim)
            s_all[lo:hi] = np.matmul(U_t[tidx[lo:hi]], diff[:, :, None])[:, :, 0]
    es, var = _stats_from_s(s_all, n["X"])
    if np.any(var == 0):
        bad = np.flatnonzero(var == 0)[:5].tolist()
        raise EatlasError(f"draws {bad} have zero in-sample variance (every target equally associated); "
                          "the effect size is undefined", obj="CEAT")
    es.setflags(write=False)
    var.setflags(write=False)
    re_ = random_effects(es, var)
    if indices is None:
        n_repl = sum(1 for c in counts if sampling == "authors_code" or c < n_draws)
    else:   # given draws: stimuli whose contexts repeat across draws
        srt = np.sort(idx, axis=0)
        n_repl = int(np.count_nonzero(np.any(srt[1:] == srt[:-1], axis=0)))
    return CeatResult(
        ces=re_.ces, se=re_.se, z=re_.z, p_two_tailed=re_.p_two_tailed, p_one_tailed=re_.p_one_tailed,
        tau2=re_.tau2, tau2_untruncated=re_.tau2_untruncated, q=re_.q, df=re_.df,
        ces_fixed=re_.ces_fixed, se_fixed=re_.se_fixed, n_draws=int(n_draws),
        sampling=sampling if indices is None else "given", seed=seed,
        n_x=n["X"], n_y=n["Y"], n_a=n["A"], n_b=n["B"], n_with_replacement=n_repl,
        min_contexts=int(min(counts)), missing=tuple(missing), method=method,
        effect_sizes=es, variances=var,
    )


# ---------------------------------------------------------------------------------------------
# Finding contexts in a corpus

def _pattern(stimulus: str, case_sensitive: bool) -> re.Pattern:
    words = stimulus.split()
    if not words:
        raise ValueError("empty stimulus")
    body = r"\s+".join(re.escape(w) for w in words)
    # Not inside a longer word: no word character or hyphen-joined word on either side.
    return re.compile(rf"(?<![\w-]){body}(?!\w|-\w)", 0 if case_sensitive else re.IGNORECASE)


def find_contexts(corpus_lines: Iterable[str], stimuli: Iterable[str], *, case_sensitive: bool = True,
                  max_per_stimulus: int | None = None, seed: int = 0) -> dict[str, list[tuple[int, tuple[int, int]]]]:
    """Whole-word occurrences of each stimulus: ``{stimulus: [(line_index, (start, end)), ...]}``.

    Matching rules:
      * whole words: a match may not be preceded by a word character (``\\w``, Unicode) or a hyphen,
        nor followed by a word character or a hyphen and a word character; so ``loud`` matches in
        "loud.", "loud," and "loud's" but not in "cloud", "loudly" or "loud-mouthed", and
        ``fried-chicken`` matches as written;
      * a multi-word stimulus ("all American") matches its words separated by any whitespace;
      * ``case_sensitive=True`` (default) matches the stimulus exactly as written, which keeps
        names apart from common words ("Rich"/"rich", "Frank"/"frank") but misses a sentence-initial
        capital ("Love"); ``case_sensitive=False`` ignores case (Python ``re.IGNORECASE``).
      * each occurrence is one context, so a line with two occurrences gives two spans.
    ``max_per_stimulus`` keeps at most that many occurrences, a uniform sample (reservoir sampling,
    ``numpy`` Generator seeded by ``seed``, so the corpus is read once); results are sorted by
    (line, start). Stimuli with no occurrence map to an empty list (``ceat`` then reports them).
    """
    stimuli = list(dict.fromkeys(stimuli))
    pats = {s: _pattern(s, case_sensitive) for s in stimuli}
    needle = {s: s.split()[0] for s in stimuli}
    rng = np.random.default_rng(seed)
    found: dict[str, list] = {s: [] for s in stimuli}
    seen = dict.fromkeys(stimuli, 0)
    for i, line in enumerate(corpus_lines):
        for s in stimuli:
            if case_sensitive and needle[s] not in line:     # cheap exact pre-filter before the regex
                continue
            for m in pats[s].finditer(line):
                hit = (i, (m.start(), m.end()))
                k = seen[s]
                seen[s] += 1
                if max_per_stimulus is None or k < max_per_stimulus:
                    found[s].append(hit)
                else:
                    j = int(rng.integers(0, k + 1))
                    if j < max_per_stimulus:
                        found[s][j] = hit
    return {s: sorted(v) for s, v in found.items()}
