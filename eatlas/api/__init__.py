"""EATlas as a Python library: ``eatlas.run`` (the run ``eatlas run`` makes, on a model id or a model held in
memory), :class:`Results`, and the registry and the store as DataFrames (``tests``, ``sets``, ``published``,
``connect``, ``results``). The names are also ``eatlas``'s own (``eatlas.run``, ``eatlas.Results``, ...)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .catalog import connect, published, results, sets, tests
from .core import option_names
from .result_set import Results

__all__ = ["Results", "connect", "measurement_path", "option_names", "published", "results", "run", "sets", "tests"]


def run(model: Any = None, tests: list[str] | str | None = None, levels: list[str] | str | None = None,
        method: str = "weat", *, model_name: str | None = None, identity: str | None = None, progress: bool = True,
        db: str | Path | None = None, registry: str | Path | None = None, **options: Any) -> Results:
    """Run ``method`` (default WEAT) on ``model`` over ``tests`` at ``levels``, as ``eatlas run`` does, and return its
    :class:`Results` (nothing is written unless ``db`` names a results file, or :meth:`Results.save` is called).

    ``model``: a registered id, hub id or path (as --model; None: the default model), or a model held in memory: a
    sentence-transformers ``SentenceTransformer``, a transformers ``(model, tokenizer)`` pair or ``pipeline``, a
    gensim ``KeyedVectors``, a mapping word -> vector, or a callable from a list of texts to a 2-d array (a row of
    NaN for a text it cannot encode). An in-memory model is recorded with ``model_name`` and a sha256 of its
    vectors or weights where one can be computed; ``identity`` names the registered model it is (e.g.
    ``"glove-6b-50d"``), taken only when the hashes agree (a callable: as the user's word), so that its results may
    stand beside a paper's. ``options``: eatlas run's, named with _ for - (seed, n_samples, alpha, ci, no_ci,
    n_boot, alternative, ci_method, p_rule, language, min_coverage, pooling, layer, subword, batch_size, ...) and the
    method's own (convention, mleat_alpha, corpus, ...): :func:`option_names`. ``progress``: the bars (in Jupyter
    too); False: none.

    >>> import eatlas
    >>> r = eatlas.run("glove-6b-50d", tests=["weat6", "weat8"], levels="word")     # doctest: +SKIP
    >>> r.to_pandas()[["test_id", "effect_size", "p_value"]]                          # doctest: +SKIP
    """
    from ..errors import EatlasError
    from ..methods import all_methods
    from ..methods import get as get_method
    from ..progress import bars, notebook_console, phases
    from . import core
    from .models import as_encoder, kind_of

    if not isinstance(method, str) or method not in all_methods():
        raise EatlasError(f"unknown method {method!r}", field="method", hint=", ".join(all_methods()))
    in_memory = kind_of(model) != "path"            # an unusable object: refused before anything else
    cfg = core.make_config(model=None if in_memory or model is None else str(model), tests=tests, levels=levels,
                           method=method, options=options)
    run_levels = core.check(cfg)
    encoder = as_encoder(model, model_name=model_name, identity=identity, pooling=cfg.pooling, layer=cfg.layer,
                         subword=cfg.subword, batch_size=cfg.batch_size, family=cfg.family)
    if encoder is not None:
        from ..levels import LEVELS
        span = [lv for lv in run_levels if LEVELS[lv].span]
        if span and getattr(encoder, "spans", True) is False:
            raise EatlasError(f"a callable encodes whole texts; level {span[0]} reads a word inside its sentence",
                              field="levels", hint="leave it out of levels=, or pass a transformers model")
        cfg.model = encoder.model_id
    if db is not None:
        core.before_saving(cfg, db, registry)
    m = get_method(method)
    with bars(notebook_console(), not progress) as prog:
        outcome = core.compute(cfg, registry=registry, encoder=encoder,
                               progress=phases(prog, cfg.model, getattr(m, "progress_lines", False)))
    res = Results(outcome, cfg, registry=registry)
    if db is not None:
        core.save(outcome, cfg, db, registry=registry)
        res.saved_to.append(Path(db))
    return res


def measurement_path(name: str = "weat") -> str:
    """The folder of an EATlas measurement for Hugging Face ``evaluate``, shipped in the package, to load offline:
    ``evaluate.load(eatlas.measurement_path("weat"), "glove-6b-50d")`` (the configuration names the model as
    --model does).

    >>> weat = evaluate.load(eatlas.measurement_path("weat"), "glove-6b-50d")          # doctest: +SKIP
    >>> weat.compute(x=["rose"], y=["ant"], a=["love"], b=["hate"])["effect_size"]     # doctest: +SKIP
    """
    from ..errors import EatlasError
    here = Path(__file__).resolve().parent.parent / "measurements" / name
    if not (here / f"{name}.py").is_file():
        raise EatlasError(f"no measurement {name!r}", field="name", hint="weat")
    return str(here)
