"""SAME (Schröder, Schulz, Kenneweg, Feldhans, Hinder and Hammer 2021): a cosine bias score (its method:
eatlas.methods.same).

Sources. The paper is S. Schröder, A. Schulz, P. Kenneweg, R. Feldhans, F. Hinder and B. Hammer (2021),
"Evaluating Metrics for Bias in Word Embeddings", arXiv:2111.07864, DOI 10.48550/arXiv.2111.07864;
its later version is S. Schröder, A. Schulz and B. Hammer, "The SAME score: Improved cosine based bias
score for word embeddings", IJCNN 2024, arXiv:2203.14603. The computation below follows the authors'
own implementation, repository HammerLabML/EmbeddingBiasScores, file ``geometrical_bias/same.py``
(class ``SAME``; MIT licence; read at commit 5e72d36 of 2024-04-22, "renaming variables for same").
The paper's body text, and so its equation numbers, could not be read where this module was
written (only the abstract), so every formula below cites the function of that file that computes it.

For two protected groups given by attribute sets A and B (``define_bias_space([A, B])``):

* ``attr_mean``: the mean of the unit-normalised attribute vectors,
  ``a_hat = mean_{a in A} a / ||a||`` and likewise ``b_hat``;
* the bias direction ``c = a_hat - b_hat`` (``bias_components[0] = attr_pair_diff(B, A)``; the
  sign puts A first "to match WEAT", the authors' commit 0bf1acb);
* ``signed_individual_bias``: the per-target bias ``b(t) = cos(t, c)``, in [-1, 1], positive when t
  leans towards A (the sign of WEAT's s(w, A, B));
* ``individual_bias`` (two groups): ``|b(t)|``;
* ``mean_individual_bias`` -- the SAME score of a target set T: ``SAME(T) = mean_{t in T} |b(t)|``;
* ``skew_pairwise``: ``skew(T) = mean_{t in T} b(t)`` (with the groups in the order (A, B), i.e.
  the authors' ``skew_pairwise(T, 1, 0)``, whose direction is ``a_hat - b_hat`` as above);
* ``stereotype_pairwise``: ``stereotype(T) = std_{t in T} b(t)``, numpy's default population
  standard deviation (ddof=0), as the authors' code computes it.

SAME defines no p-value and no test statistic, so none is given. It has no parameters, so the method
has no options. With more than two groups the authors' code sums |cos| over orthogonalised
directions (``individual_bias``); a WEAT test has exactly two attribute sets, so that variant does
not arise here.
"""
from __future__ import annotations

import numpy as np

__all__ = ["direction", "same_scores", "target_biases"]

# ||a_hat - b_hat|| at or below this fraction of max(||a_hat||, ||b_hat||) is a zero direction: the same
# vectors averaged in another order differ only in their last bits.
ZERO_DIRECTION = 1e-12


def _unit(m: np.ndarray, role: str) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"{role.upper()} has no encodable stimulus")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise ValueError(f"{role.upper()} has a zero or non-finite vector; its cosine is undefined")
    return m / norms


def direction(A, B) -> np.ndarray:
    """``a_hat - b_hat``: the difference of the means of the unit attribute vectors (``attr_pair_diff``).
    Raises ValueError when it is zero (A and B have the same mean direction)."""
    a_hat, b_hat = _unit(A, "a").mean(axis=0), _unit(B, "b").mean(axis=0)
    c = a_hat - b_hat
    scale = max(np.linalg.norm(a_hat), np.linalg.norm(b_hat))
    if not np.linalg.norm(c) > ZERO_DIRECTION * scale:
        raise ValueError("A and B have the same mean direction (a_hat = b_hat), so SAME's bias direction is "
                         "zero and no cosine with it is defined")
    return c


def target_biases(T, A, B) -> np.ndarray:
    """The signed bias ``b(t) = cos(t, a_hat - b_hat)`` of every row t of T (``signed_individual_bias``)."""
    c = direction(A, B)
    return _unit(T, "t") @ (c / np.linalg.norm(c))


def same_scores(b: np.ndarray) -> tuple[float, float, float]:
    """(SAME, skew, stereotype) of a target set from its signed biases: mean |b|, mean b, std b (ddof=0)."""
    b = np.asarray(b, dtype=np.float64)
    return float(np.mean(np.abs(b))), float(np.mean(b)), float(np.std(b))
