"""The WEAT of a test whose attribute words come in paired forms (a gendered language's masculine and feminine
forms of the same career and family words): Lewis & Lupyan's measure (Lewis & Lupyan 2020, "Gender stereotypes
are reflected in the distributional structure of 25 languages", Nature Human Behaviour 4:1021-1028,
doi:10.1038/s41562-020-0918-6), as their code computes it (mllewis/IATLANG, analyses/study1b/00_IAT_utils.R
``get_lang_es_separate_gender`` and 05_calculate_es_from_swabs.R; docs/methods.md, 'Paired forms').

Target x (male terms) is matched with the attributes' x form (masculine), target y (female terms) with their y
form (feminine). With s_x(w) = s(w, A_x, B_x) and s_y(w) = s(w, A_y, B_y) over every target word w of X u Y:

    d = (mean_{x in X} s_x(x) - mean_{y in Y} s_y(y)) / ((sd_{X u Y} s_x + sd_{X u Y} s_y) / 2)

(R's sd, ddof = 1): the authors compute each form's s over both targets with that form's sd, keep X's mean of
the x form and Y's of the y form, and average the two sds (``summarize_all(mean)`` over the two rows). Where
the forms are the same words, d is Caliskan et al.'s.

The authors compute no p. The permutation test here re-partitions X u Y as the WEAT's does, each word carrying
its own pair (s_x(w), s_y(w)): a word put in X is matched with the x form. The statistic of a partition X' is
sum_{X'} s_x - sum_{Y'} s_y = sum_{X'} (s_x + s_y) - sum_{X u Y} s_y, so the partitions are ordered by the sums of
u = s_x + s_y over X' and the p is the WEAT's permutation p of u (the same partitions, exact or sampled).

The concepts' answer (:func:`eatlas.stats.concepts.concepts_from_blocks`) takes the crossed array of cosines whose
X rows are against the x forms and Y rows against the y forms: column j is the attribute word j in the form its
row's target takes (the forms are aligned item by item), and its difference of means is the numerator above.
"""
from __future__ import annotations

import numpy as np

from .blas import single_threaded
from .cosine import unit_rows
from .weat import WeatResult, association, check_alternative, permutation_p


def forms_effect_size(s_xform: np.ndarray, s_yform: np.ndarray, n_x: int) -> float:
    """Lewis & Lupyan's d from each form's s(w) over X u Y (X's rows first): X's mean of the x form minus Y's
    mean of the y form, over the mean of the two forms' sample standard deviations."""
    num = s_xform[:n_x].mean() - s_yform[n_x:].mean()
    return float(num / ((s_xform.std(ddof=1) + s_yform.std(ddof=1)) / 2.0))


@single_threaded
def weat_forms(X, Y, A, B, A_y, B_y, *, ci: float | None = 0.95, alternative: str = "greater",
               n_samples: int = 100_000, seed: int = 0, parametric: bool = False) -> WeatResult:
    """The WEAT of a paired-forms test (module docstring): ``A``, ``B`` the attributes in target x's form, ``A_y``,
    ``B_y`` the same words in target y's form (rows aligned with ``A``, ``B``). The sample d is Lewis & Lupyan's,
    the p the permutation test of the paired design, the interval the concepts' (``ci``: its level; None: no
    interval). The papers' inverted interval, the bootstrap and the disattenuated d are not computed (None)."""
    if n_samples < 2:
        raise ValueError("n_samples must be at least 2")
    check_alternative(alternative)
    if ci is not None and not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1) or None, got {ci}")
    X, Y, A, B, A_y, B_y = (np.asarray(v) for v in (X, Y, A, B, A_y, B_y))
    n_x = len(X)
    if n_x + len(Y) < 3:
        raise ValueError("X and Y together need at least 3 stimuli for a sample standard deviation")
    W = np.vstack([X, Y])
    s_xform, s_yform = association(W, A, B), association(W, A_y, B_y)
    es = forms_effect_size(s_xform, s_yform, n_x)
    u = (s_xform + s_yform).astype(np.float64)
    p, exact, n_part, _ = permutation_p(u[:n_x], u[n_x:], n_samples=n_samples, seed=seed, parametric=parametric,
                                        alternative=alternative)
    stat = float(s_xform[:n_x].sum() - s_yform[n_x:].sum())
    out: dict = {}
    if min(n_x, len(Y)) >= 2:
        if A.shape != A_y.shape or B.shape != B_y.shape:
            out.update(concepts_estimable=False, concepts_reason=(
                "the attribute forms are not aligned here (a word of one form could not be encoded), so the "
                "concepts' answer, which pairs each word's forms, is not computed"))
        else:
            from .concepts import concepts_from_blocks
            Wn = unit_rows(W, "W")
            An, Bn, Ayn, Byn = (unit_rows(m, n) for m, n in ((A, "A"), (B, "B"), (A_y, "A_y"), (B_y, "B_y")))
            sa = np.vstack([Wn[:n_x] @ An.T, Wn[n_x:] @ Ayn.T])
            sb = np.vstack([Wn[:n_x] @ Bn.T, Wn[n_x:] @ Byn.T])
            con = concepts_from_blocks(sa, sb, n_x, ci=0.95 if ci is None else ci, alternative=alternative)
            out.update(p_concepts=con.p_two_sided, p_concepts_one_sided=con.p,
                       d_concepts=con.d if con.estimable else None,
                       concepts_estimable=bool(con.estimable), concepts_reason=con.reason)
            if ci is not None:
                out.update(concepts_low=con.low, concepts_high=con.high, ci_low=con.low, ci_high=con.high)
    if ci is not None:
        out.update(ci_level=float(ci), ci_method="concepts")
    return WeatResult(effect_size=es, p_value=p, exact=exact, n_partitions=n_part, statistic=stat, n_x=n_x,
                      n_y=len(Y), n_a=len(A), n_b=len(B), parametric=parametric, alternative=alternative, **out)
