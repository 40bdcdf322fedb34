"""WEAT as a Hugging Face ``evaluate`` measurement, computed by EATlas (Caliskan et al. 2017, Science
356(6334):183-186, doi:10.1126/science.aal4230; the concepts' question: EATlas's docs/methods.md).

    import evaluate, eatlas
    weat = evaluate.load(eatlas.measurement_path("weat"), "glove-6b-50d")   # the configuration names the model
    weat.compute(x=["aster", "clover"], y=["ant", "wasp"], a=["caress", "freedom"], b=["abuse", "crash"])

The configuration name is a model as ``eatlas run --model`` takes it (a registered id, a local path, a hub id);
"default" is EATlas's default model. Each word list is encoded as ``eatlas run`` encodes a word-level test (a
static model's vocabulary, a transformers model's pooled vectors); a stimulus the model cannot encode is dropped
and listed under ``dropped``. Keyword options of ``compute``: n_samples, seed, alternative, ci, ci_method,
convention (as eatlas run's).
"""
from __future__ import annotations

import datasets
import evaluate
import numpy as np

_CITATION = """@article{caliskan2017semantics,
  title={Semantics derived automatically from language corpora contain human-like biases},
  author={Caliskan, Aylin and Bryson, Joanna J. and Narayanan, Arvind},
  journal={Science}, volume={356}, number={6334}, pages={183--186}, year={2017}, doi={10.1126/science.aal4230}}
"""
_DESCRIPTION = ("The Word Embedding Association Test (WEAT): the effect size d of target words X and Y with "
                "attribute words A and B in a model's embeddings, its permutation p (the papers' question) and the "
                "concepts' p and interval (targets and attributes both samples of their concepts), computed by EATlas.")
_KWARGS = """
Args:
    x, y (list of str): the target words (e.g. flowers, insects).
    a, b (list of str): the attribute words (e.g. pleasant, unpleasant).
    n_samples (int): permutation samples (default 100000); seed (int, default 0); alternative ("greater", "less",
        "two-sided"); ci (float, default 0.95; None: no interval); ci_method ("concepts", "permutation",
        "percentile", "BCa"); convention ("caliskan", ...).
Returns:
    effect_size (the sample d), p_value (permutation), p_concepts, d_concepts, ci_low, ci_high, ci_level, ci_method,
    papers_low, papers_high, n_x, n_y, n_a, n_b, dropped (role -> words the model could not encode), model.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class Weat(evaluate.Measurement):
    """WEAT of four word lists in the model the configuration names."""

    def _info(self):
        return evaluate.MeasurementInfo(
            module_type="measurement", description=_DESCRIPTION, citation=_CITATION, inputs_description=_KWARGS,
            features=datasets.Features({"x": datasets.Value("string")}),
            reference_urls=["https://doi.org/10.1126/science.aal4230"])

    def _download_and_prepare(self, dl_manager):
        from eatlas.encoders import load_encoder
        name = self.config_name
        self._encoder = load_encoder(None if name in (None, "", "default") else name)

    def compute(self, *, x=None, y=None, a=None, b=None, **kwargs):
        """Four word lists of any lengths (evaluate's batches hold columns of one length, so the lists are taken
        here whole, not added as rows)."""
        return self._compute(x=x, y=y, a=a, b=b, **kwargs)

    def _compute(self, x=None, y=None, a=None, b=None, n_samples=100_000, seed=0, alternative="greater", ci=0.95,
                 ci_method="concepts", convention="caliskan"):
        from eatlas.errors import EatlasError
        from eatlas.run.runner import degenerate
        from eatlas.stats.weat import weat

        lists = {"x": x, "y": y, "a": a, "b": b}
        for role, words in lists.items():
            if not isinstance(words, (list, tuple)) or not words or not all(isinstance(w, str) for w in words):
                raise EatlasError(f"{role} must be a non-empty list of words (str)", field=role)
        enc = self._encoder
        mats, dropped = {}, {}
        for role, words in lists.items():
            words = list(dict.fromkeys(words))
            r = enc.encode_items(words, [None] * len(words))
            covered = np.asarray(enc.covers(words), dtype=bool)
            keep = [i for i in range(len(words)) if not r.missing[i] and covered[i] and not degenerate(r.vectors[i])]
            if len(keep) < len(words):
                dropped[role] = [w for i, w in enumerate(words) if i not in keep]
            if len(keep) < 2:
                raise EatlasError(f"{role}: {len(keep)} of its {len(words)} words can be encoded by {enc.model_id}; "
                                  "WEAT needs at least 2", field=role, hint=f"dropped: {', '.join(dropped[role][:10])}")
            mats[role] = np.asarray(r.vectors[keep], dtype=np.float64)
        res = weat(mats["x"], mats["y"], mats["a"], mats["b"], n_samples=n_samples, seed=seed, ci=ci,
                   alternative=alternative, ci_method=ci_method, convention=convention)
        out = {k: getattr(res, k) for k in ("effect_size", "p_value", "p_concepts", "d_concepts", "ci_low", "ci_high",
                                            "ci_level", "ci_method", "papers_low", "papers_high", "concepts_estimable",
                                            "concepts_reason", "exact", "n_x", "n_y", "n_a", "n_b")}
        return {**out, "dropped": dropped, "model": enc.model_id}
