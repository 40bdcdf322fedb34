"""SC-EAT: the single-category embedding association test (Caliskan et al. 2017, WEFAT; ML-EAT eq. 9).

For one word ``w`` and attribute sets A and B::

    d(w) = (mean_{a in A} cos(w, a) - mean_{b in B} cos(w, b)) / std_{x in A u B} cos(w, x)

with the sample standard deviation (ddof=1, as ``weat.effect_size_from_s``). The p-value is the
permutation test of ML-EAT eq. 7-8 with the *attribute* words re-partitioned (A u B split into
sets of sizes |A| and |B|), computed with ``weat.permutation_p`` (exact when there are at most
``n_samples`` partitions, else ``n_samples - 1`` seeded random partitions plus the observed one,
ties counted). Both tails are kept: ``p_upper`` (is w closer to A than chance, eq. 7) and
``p_lower`` (closer to B); ``p_value`` is the tail in the direction of ``effect_size``.

The same computation on a vector ``u`` of per-attribute associations is ML-EAT Level 2
(``eatlas.stats.mleat``), where ``u(T, x)`` is the mean cosine of target group T with attribute x; with
one target word ``u`` is ``cos(w, x)`` and Level 2 equals the SC-EAT.

``effect_sizes(W, A, B)`` gives ``d`` for many words at once (the WEFAT association score used by
IBD/EIBD in ``eatlas.stats.ibd``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .weat import P_METHODS, _unit_rows, null_distribution, permutation_p

__all__ = ["SingleCategoryResult", "sc_eat", "effect_sizes", "single_category_test", "direction"]


@dataclass(frozen=True)
class SingleCategoryResult:
    """One target (a word, or a group for ML-EAT Level 2) against attributes A and B.

    ``association`` is ``"A"``, ``"B"`` or ``None`` under the ML-EAT rule: ``"A"`` when
    ``effect_size > effect_threshold`` and ``p_upper < alpha``; ``"B"`` when
    ``effect_size < -effect_threshold`` and ``p_lower < alpha``.
    """
    effect_size: float
    p_value: float          # p in the direction of effect_size (p_upper if d >= 0 else p_lower)
    p_upper: float          # Pr[stat_i >= stat]: association with A (ML-EAT eq. 7)
    p_lower: float          # Pr[stat_i <= stat]: association with B
    statistic: float        # sum_{a in A} u(a) - sum_{b in B} u(b)  (ML-EAT eq. 8)
    exact: bool
    n_partitions: int
    n_target: int
    n_a: int
    n_b: int
    association: str | None
    alpha: float
    effect_threshold: float
    parametric: bool = False
    p_method: str = "permutation"   # "authors": Wolfe et al.'s normal fit, p_value = the smaller tail

    def to_dict(self) -> dict:
        return asdict(self)


def direction(effect_size: float, p_upper: float, p_lower: float, *, alpha: float,
              effect_threshold: float) -> str | None:
    """The ML-EAT association rule: significant (p < alpha) and at least a small effect (|d| > thr)."""
    if effect_size > effect_threshold and p_upper < alpha:
        return "A"
    if effect_size < -effect_threshold and p_lower < alpha:
        return "B"
    return None


def _check_sizes(n_a: int, n_b: int) -> None:
    if n_a < 1 or n_b < 1 or n_a + n_b < 3:
        raise ValueError(f"A and B need at least one stimulus each and three together (got {n_a}, {n_b})")


def single_category_test(u_a: np.ndarray, u_b: np.ndarray, *, n_target: int, n_samples: int = 100_000,
                         seed: int = 0, parametric: bool = False, alpha: float = 0.05,
                         effect_threshold: float = 0.2, p_method: str = "permutation") -> SingleCategoryResult:
    """Effect size and permutation p from per-attribute associations ``u`` (A's, then B's).

    ``p_method="authors"``: the p of Wolfe et al.'s code (``weat.authors_normal_p``): the normal
    curve fitted to the same permutation distribution gives ``p_upper = 1 - cdf`` and ``p_lower =
    cdf``, ``p_value`` is the smaller, and the association rule compares that p with ``alpha``."""
    if p_method not in P_METHODS:
        raise ValueError(f"p_method must be one of {P_METHODS}, got {p_method!r}")
    if p_method == "authors" and parametric:
        raise ValueError("p_method='authors' is its own normal approximation; leave parametric off")
    u_a, u_b = np.asarray(u_a, dtype=np.float64), np.asarray(u_b, dtype=np.float64)
    _check_sizes(len(u_a), len(u_b))
    if n_samples < 2:
        raise ValueError("n_samples must be at least 2")
    u = np.concatenate([u_a, u_b])
    sd = u.std(ddof=1)
    if not sd > 0:
        raise ValueError("the target's similarities to A u B are all equal; the effect size is undefined")
    d = float((u_a.mean() - u_b.mean()) / sd)
    p_up, exact, n_part, stat = permutation_p(u_a, u_b, n_samples=n_samples, seed=seed, parametric=parametric)
    # Same partitions, negated values: counts stat_i <= stat (the lower tail).
    p_low, _, _, _ = permutation_p(-u_a, -u_b, n_samples=n_samples, seed=seed, parametric=parametric)
    p = p_up if d >= 0 else p_low
    assoc = direction(d, p_up, p_low, alpha=alpha, effect_threshold=effect_threshold)
    if p_method == "authors":
        from scipy import stats as _stats  # imported here: a run that does not use it needs no scipy.stats

        dist, _ = null_distribution(u, len(u_a), n_samples=int(n_samples), seed=int(seed))
        c = float(_stats.norm.cdf(dist[0], loc=dist.mean(), scale=dist.std(ddof=1)))
        p_up, p_low = 1.0 - c, c
        p = min(p_up, p_low)          # = weat.authors_normal_p(dist)
        assoc = direction(d, p, p, alpha=alpha, effect_threshold=effect_threshold)
    return SingleCategoryResult(
        effect_size=d, p_value=p, p_upper=p_up, p_lower=p_low, statistic=stat,
        exact=exact, n_partitions=n_part, n_target=int(n_target), n_a=len(u_a), n_b=len(u_b),
        association=assoc, alpha=float(alpha), effect_threshold=float(effect_threshold), parametric=parametric,
        p_method=p_method,
    )


def sc_eat(w, A, B, *, n_samples: int = 100_000, seed: int = 0, parametric: bool = False,
           alpha: float = 0.05, effect_threshold: float = 0.2) -> SingleCategoryResult:
    """SC-EAT of one word vector ``w`` (1-D, or a 1-row matrix) against attribute matrices A and B."""
    w = np.asarray(w, dtype=np.float64)
    if w.ndim == 2 and w.shape[0] == 1:
        w = w[0]
    if w.ndim != 1:
        raise ValueError(f"w must be one vector, got shape {w.shape}")
    wu = _unit_rows(w[None, :], "w")[0]
    cos_a = _unit_rows(A, "A") @ wu
    cos_b = _unit_rows(B, "B") @ wu
    return single_category_test(cos_a, cos_b, n_target=1, n_samples=n_samples, seed=seed,
                                parametric=parametric, alpha=alpha, effect_threshold=effect_threshold)


def effect_sizes(W, A, B) -> np.ndarray:
    """SC-EAT / WEFAT effect size ``d(w)`` for every row w of W (no p-values), ddof=1."""
    W, A, B = _unit_rows(W, "W"), _unit_rows(A, "A"), _unit_rows(B, "B")
    _check_sizes(len(A), len(B))
    ca, cb = W @ A.T, W @ B.T
    sd = np.concatenate([ca, cb], axis=1).std(axis=1, ddof=1)
    if np.any(sd == 0):
        bad = np.flatnonzero(sd == 0).tolist()
        raise ValueError(f"rows {bad} of W are equally similar to every attribute; d is undefined")
    return (ca.mean(axis=1) - cb.mean(axis=1)) / sd
