"""CEAT (Guo & Caliskan 2021): contexts of every stimulus from a corpus, contextual-word vectors, N
draws of a WEAT effect size, combined with a random-effects model (eatlas.stats.ceat).

Contexts are sampled by ``eatlas.distributed.ceat_corpus`` (at most ``--max-contexts`` per stimulus, the same
sample whatever the sharding): every corpus file, one or many, is read by the same shard reader (text,
gzip text, JSON Lines, parquet) and scanned shard by shard, here or on Ray Data with ``--engine ray``; a
dataset folder saved with ``save_to_disk`` is read here.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..argtypes import at_least, memory_bounded
from ..errors import EatlasError
from .base import Method, MethodRun, Option, Stopped, Table, interrupted, register

# Memory one kept context of one stimulus takes at most, as an estimate: its text (a window that fits the model's
# length) and its vector (float32, up to 1,024 dimensions). `--max-contexts` is bounded by the machine's memory at
# this rate.
BYTES_PER_CONTEXT = 8 << 10


@dataclass
class CeatRow:
    status: str
    reason: str | None
    ces: float | None = None
    se: float | None = None
    z: float | None = None
    p_two_tailed: float | None = None
    p_one_tailed: float | None = None
    tau2: float | None = None
    tau2_untruncated: float | None = None
    q: float | None = None
    df: int | None = None
    ces_fixed: float | None = None
    se_fixed: float | None = None
    n_draws: int | None = None
    sampling: str | None = None
    seed: int | None = None
    n_x: int | None = None
    n_y: int | None = None
    n_a: int | None = None
    n_b: int | None = None
    n_with_replacement: int | None = None
    min_contexts: int | None = None
    method: str | None = None
    n_missing: int | None = None
    missing: str | None = None
    es_mean: float | None = None
    es_sd: float | None = None
    es_q025: float | None = None
    es_q25: float | None = None
    es_median: float | None = None
    es_q75: float | None = None
    es_q975: float | None = None


@dataclass
class ContextsRow:
    role: str               # X, Y, A or B
    stimulus: str
    n_contexts: int


@dataclass
class DrawRow:
    draw: int
    effect_size: float | None
    variance: float | None


@register
class Ceat(Method):
    name = "ceat"
    help = "CEAT: contexts from a corpus (--corpus), N draws, random-effects CES (Guo & Caliskan 2021)"
    inputs = "corpus"
    levels = ("c-word",)
    options = (
        Option("--corpus", dict(nargs="+", help="text file (one sentence or comment per line), parquet file, or a "
                                "dataset folder saved with datasets' save_to_disk; or several shards (text, .jsonl, "
                                "parquet; paths or fsspec URLs); required by --method ceat, which has no default "
                                "corpus")),
        Option("--engine", dict(choices=("local", "ray"), default="local",
                                help="ray: one Ray Data task per corpus shard finds and samples the contexts, and an "
                                     "actor pool (a GPU each where the cluster has them) encodes them")),
        Option("--ray-address", dict(help="a Ray cluster (HOST:PORT, ray://HOST:PORT); default: a local Ray instance")),
        Option("--corpus-column", dict(help="text column of a parquet file or dataset (default: text)")),
        Option("--contexts-out", dict(help="folder for contexts.parquet, the contexts and their vectors (default: "
                                           "ceat-contexts/<run id> beside the database)")),
        Option("--n-draws", dict(type=at_least(2), default=10_000, help="draws of one context per stimulus")),
        Option("--sampling", dict(choices=("paper", "authors_code"), default="paper",
                                  help="paper: without replacement where a stimulus has enough contexts; "
                                       "authors_code: always with replacement, as the authors' code")),
        Option("--max-contexts", dict(type=memory_bounded(1, BYTES_PER_CONTEXT, "contexts per stimulus"), default=1000,
                                      help="contexts kept per stimulus (seeded sample; at most what this machine's "
                                           "memory holds)")),
        Option("--case-insensitive", dict(action="store_true", help="match stimuli regardless of case (default: as "
                                          "each set says, else case-sensitive)")),
    )
    tables = (Table("ceat_results", CeatRow, doc="CES and its random-effects statistics, per test"),
              Table("ceat_contexts", ContextsRow, key=("role", "stimulus"), doc="contexts found per stimulus"),
              Table("ceat_draws", DrawRow, key=("draw",), doc="the N draws' effect sizes and variances"))

    def why_not(self, spec, level) -> str | None:
        return None if spec.level == "word" else "CEAT finds a test's words in a corpus: it needs word lists"

    def check(self, cfg) -> None:
        if not self.option(cfg, "corpus"):
            raise EatlasError("CEAT needs a corpus", field="--corpus",
                              hint="a text file (one sentence or comment per line), a parquet file or a "
                                   "save_to_disk dataset folder, with --corpus-column for the text column")

    def before_run(self, cfg, *, db, registry) -> None:
        from ..distributed.ceat_encode import check_output
        check_output(self.option(cfg, "contexts_out"), db)

    def run(self, ctx) -> MethodRun:
        import contextlib

        from ..distributed.cluster import ray_session

        o = lambda d: self.option(ctx.cfg, d)     # noqa: E731
        # one Ray session for finding and for encoding the contexts (each would otherwise start its own)
        with ray_session(o("ray_address")) if o("engine") == "ray" else contextlib.nullcontext():
            return self._run(ctx, o)

    def _run(self, ctx, o) -> MethodRun:
        from ..distributed.ceat_encode import EncoderSpec, sample_and_encode

        cfg, case_sensitive = ctx.cfg, (False if o("case_insensitive") else None)
        corpus, found = corpus_contexts(ctx.registry, ctx.test_ids, o("corpus"), o("corpus_column"), o("engine"),
                                        o("ray_address"), o("max_contexts"), cfg.seed, case_sensitive)
        spec = EncoderSpec(cfg.model, pooling=cfg.pooling, layer=cfg.layer, subword=cfg.subword,
                           batch_size=cfg.batch_size, trust_remote_code=cfg.trust_remote_code, family=cfg.family,
                           offline=cfg.offline)
        contexts, encoded, table, n_lines = sample_and_encode(
            ctx.encoder, ctx.registry, ctx.test_ids, corpus, engine=o("engine"), spec=spec,
            ray_address=o("ray_address"), max_contexts=o("max_contexts"), seed=cfg.seed,
            case_sensitive=case_sensitive, **found)
        stop = None
        try:
            rows = run_ceat(ctx.encoder, ctx.registry, ctx.test_ids, None, n_draws=o("n_draws"), seed=cfg.seed,
                            sampling=o("sampling"), max_contexts=o("max_contexts"), case_sensitive=case_sensitive,
                            progress=ctx.tick, contexts=contexts, encoded=encoded)
        except Stopped as s:            # Ctrl-C after a test finished: those are stored, and said
            rows, stop = s.rows, s
        settings = {"n_draws": o("n_draws"), "sampling": o("sampling"), "max_contexts": o("max_contexts"),
                    "case_sensitive": case_sensitive, "corpus_lines": n_lines,
                    "sampler": "bottom-k blake2b (eatlas.distributed.ceat_corpus)",
                    "contexts_encoded_on": o("engine")}
        test_ids = ctx.test_ids
        if stop:
            interrupted(settings, ctx.notes, stop, unit="test", resume="--tests")
            test_ids = stop.done        # the contexts file keeps every context encoded (the stimuli's, not tests')
        return MethodRun(rows=rows, test_ids=test_ids, levels=["c-word"], n_samples=o("n_draws"), detail=table,
                         settings=settings)

    def stage(self, outcome, cfg, *, db, registry):
        """contexts.parquet, before the run is stored; removed again when storing fails."""
        from ..distributed.ceat_encode import write_contexts

        written = write_contexts(outcome.details[""], outcome.run, out=self.option(cfg, "contexts_out"), db=db,
                                 engine=self.option(cfg, "engine"))
        return written.discard

    def after_run(self, outcome, cfg, *, db, registry) -> str | None:
        path = outcome.run["settings"].get("contexts_parquet")
        return f"contexts and their vectors in {path}" if path else None

    def summary(self, outcome):
        from rich.table import Table as RichTable

        from ..console import esc
        run = outcome.run
        t = RichTable("test", "CES", "SE", "p (two-tailed)", "p (one-tailed)", "tau²", "draws", "missing",
                      title=esc(f"CEAT  run {run['run_id'][:8]}  model {run['model']} (subword {run['subword']}, "
                                f"sampling {run['settings'].get('sampling')})"))
        for r in outcome.tables["ceat_results"].to_dict("records"):
            if r["status"] != "ok":
                t.add_row(esc(r["test_id"]), "-", "-", "-", "-", "-", "-", esc(f"not run: {r['reason']}"))
                continue
            t.add_row(esc(r["test_id"]), f"{r['ces']:+.3f}", f"{r['se']:.3g}", f"{r['p_two_tailed']:.2g}",
                      f"{r['p_one_tailed']:.2g}", f"{r['tau2']:.3g}", str(r["n_draws"]), esc(r["missing"] or ""))
        return t

    def report(self, ctx) -> list[dict]:
        """The report's CEAT section: each shown test's draws as a histogram with its CES."""
        res = ctx.rows("ceat_results", ("test_id",))
        draws = ctx.rows_of_runs("ceat_draws", res["run_id"]) if len(res) else None
        hist = ceat_histograms(ctx, res, draws) if len(res) and draws is not None else None
        html = ctx.render(CEAT_HTML, ceat=hist, has_table="ceat_results" in ctx.tables)
        return [{"id": "ceat", "title": "CEAT: effect sizes over random draws of contexts", "nav": "CEAT",
                 "html": html, "frames": [res]}]


def ceat_histograms(ctx, res, draws) -> dict | None:
    ces = ctx.column(res, "ces")
    if not len(res) or ces is None or not len(draws):
        return None
    res = res.assign(ces=ces).sort_values(["run_model", "test_id"])
    n = len(res)
    ncols = min(4, n)
    nrows = -(-n // ncols)
    fig = ctx.figure((3.2 * ncols, 2.4 * nrows))
    import pandas as pd

    for k, r in enumerate(res.itertuples()):
        ax = fig.add_subplot(nrows, ncols, k + 1)
        es = pd.to_numeric(draws.loc[(draws["run_id"] == r.run_id) & (draws["test_id"] == r.test_id),
                                     "effect_size"], errors="coerce").dropna()
        ax.hist(es, bins=40, color="#7a9cc6")
        ax.axvline(r.ces, color="#b2182b", lw=1.5, label=f"CES {r.ces:+.2f}")
        ax.set_title(f"{r.test_id} | {r.run_model}", fontsize=8)
        ax.set_xlabel("effect size per draw", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return {"svg": ctx.svg(fig), "n": n}


CEAT_HTML = """\
  {% if ceat %}
  <figure id="fig-ceat">
    {{ ceat.svg }}
    <figcaption>Histogram of the effect size of each draw and the combined effect size (CES, red line),
      Guo &amp; Caliskan (2021); {{ ceat.n }} test(s).</figcaption>
  </figure>
  {% else %}
  <p class="note">No CEAT run yet{% if has_table and run_id %} for run {{ run_id }}{% endif %}.</p>
  {% endif %}
"""


# ------------------------------------------------------------------------------------------ corpus
def read_corpus(path: Path, column: str | None = None) -> list[str]:
    """The texts of one corpus: a column of a Hugging Face dataset saved with ``save_to_disk`` (a folder; read
    with ``datasets.load_from_disk``), or a file read as the shard it is (text, gzip text, JSON Lines, parquet:
    eatlas.distributed.ceat_corpus.shard_lines, the one reader of a corpus whether one file or many)."""
    from ..distributed.ceat_corpus import read_shard

    path = Path(path)
    if path.is_dir():
        return _dataset_column(path, column)
    if not path.is_file():
        raise EatlasError("corpus file not found", file=str(path))
    return read_shard(str(path), column)


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


def corpus_contexts(reg, test_ids, paths, column, engine, ray_address, max_contexts, seed, case_sensitive):
    """The contexts of the run's stimuli. A dataset folder (save_to_disk): its texts (run_ceat samples them).
    Files, one or many, local or URLs: each read as the shard it is and sampled shard by shard
    (eatlas.distributed.ceat_corpus), here or on Ray with engine 'ray': one reader, one sample, whatever the
    split."""
    if engine == "local" and len(paths) == 1 and "://" not in paths[0] and Path(paths[0]).is_dir():
        return read_corpus(Path(paths[0]), column), {}
    from ..distributed.ceat_corpus import ceat_keys
    from ..distributed.ceat_corpus import corpus_contexts as scan
    keys = ceat_keys(reg, test_ids, case_sensitive, seed=seed)
    ctx, n = scan(paths, keys, max_contexts, seed, column=column, engine=engine, ray_address=ray_address)
    return [], {"contexts": ctx, "corpus_lines": n}


def run_ceat(encoder, reg, test_ids: list[str], corpus: list[str] | None, *, n_draws: int = 10_000,
             seed: int = 0, sampling: str = "paper", max_contexts: int = 1000, case_sensitive: bool | None = None,
             progress=None, contexts: dict | None = None, encoded: dict | None = None) -> dict:
    """CEAT on each test: rows of ceat_results, ceat_contexts and ceat_draws (without run_id).
    ``contexts``: the sample already taken (eatlas.distributed.ceat_corpus.corpus_contexts, e.g. on Ray) instead of
    ``corpus``; ``encoded``: their vectors already computed (eatlas.distributed.ceat_encode: (stimulus, case_sensitive)
    -> (n, d) matrix in sample order, NaN rows not encodable), used instead of encoding here. Ctrl-C after a test
    finished raises :class:`eatlas.methods.base.Stopped` with the finished tests' rows."""
    results, draws, contexts_rows = [], [], []
    for k, tid in enumerate(test_ids):
        try:
            res_rows, draw_rows, ctx_rows = _one_test(reg, tid, encoder, corpus, n_draws=n_draws, seed=seed,
                                                      sampling=sampling, max_contexts=max_contexts,
                                                      case_sensitive=case_sensitive, progress=progress,
                                                      contexts=contexts, encoded=encoded)
        except KeyboardInterrupt:       # Ctrl-C: the finished tests are kept (and stored), this one not
            if not results:
                raise
            raise Stopped({"ceat_results": results, "ceat_contexts": contexts_rows, "ceat_draws": draws},
                          done=[r["test_id"] for r in results], rest=list(test_ids[k:])) from None
        results += res_rows
        draws += draw_rows
        contexts_rows += ctx_rows
    return {"ceat_results": results, "ceat_contexts": contexts_rows, "ceat_draws": draws}


def _one_test(reg, tid: str, encoder, corpus, *, n_draws, seed, sampling, max_contexts, case_sensitive, progress,
              contexts, encoded) -> tuple[list, list, list]:
    """CEAT on one test: its ceat_results, ceat_draws and ceat_contexts rows."""
    from ..distributed.ceat_corpus import _case_sensitive, scan_lines
    from ..registry.stimuli import build_test
    from ..stats.ceat import ceat

    results, draws, contexts_rows = [], [], []
    spec = reg.get_test_spec(tid)
    t = build_test(reg, spec, "word", seed=seed)
    per_role = {}
    for role, c in t.concepts.items():
        cs = _case_sensitive(reg, c, case_sensitive)
        keys = [(st, cs) for st in dict.fromkeys(c.items)]
        sample = contexts if contexts is not None else scan_lines(corpus, keys, max_contexts, seed)[0]
        mats = {}
        for stim, cs_ in keys:
            hits = [(text, (a, b)) for _, text, a, b in sample.get((stim, cs_), [])]
            contexts_rows.append({"test_id": spec.id, "test_version": spec.version, "level": "c-word",
                                  "role": role.upper(), "stimulus": stim, "n_contexts": len(hits)})
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
        return results, draws, contexts_rows
    results.append({**row, "status": "ok", "reason": None, **res.to_dict()})
    draws += [{**row, **d} for d in res.draw_rows()]
    return results, draws, contexts_rows
