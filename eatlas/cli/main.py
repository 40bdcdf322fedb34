"""The ``eatlas`` command line: the parser of every subcommand and its options, and ``main``, which runs a
command and turns its errors into one line and an exit code. The commands live in ``registry_cmds``,
``run_cmds``, ``results_cmds`` and ``cache_cmds``."""
from __future__ import annotations

import argparse
import sys

from ..argtypes import INT64_MAX, POSITIVE, PROBABILITY, SEED, at_least, between, memory_bounded  # noqa: F401
from ..console import plain_line
from ..errors import EatlasError, ValidationFailed
from ..levels import NAMES as LEVEL_NAMES
from ..levels import TEXT_LEVELS as EXPORT_LEVELS
from . import cache_cmds, registry_cmds, results_cmds, run_cmds

_at_least, _between = at_least, between
# A sweep waits this long for a database another process holds (a reader too) before it keeps a model's
# run in eatlas-unsaved/ (eatlas.run.sweep).
DEFAULT_SWEEP_WAIT = 60.0


class _DefaultsHelp(argparse.HelpFormatter):
    """Every option's default in its help: '(default: X)' is added to an option that has a value by default
    (not None, not a flag's False) unless its help already gives it; an option without one says in its help
    what happens when it is left out (tests/test_cli_options.py checks both)."""

    def _get_help_string(self, action):
        h = action.help or ""
        d = action.default
        if not action.option_strings or d is None or d is False or d is argparse.SUPPRESS or "%(default)" in h:
            return h
        return f"{h} (default: %(default)s)"


class _DefaultModel:
    """The default model's id, read from the loaders when the help is printed (never when parsing)."""

    def __str__(self) -> str:
        try:
            from ..encoders import default_model_id
            return default_model_id()
        except Exception:           # a broken loader entry says so at 'eatlas run'; the help still prints
            return "the loader entry marked default: true"


class _ListOption(argparse.Action):
    """A list option that takes ``--tests a b``, ``--tests a,b`` and mixtures; repeating it adds to the list."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = [v.strip() for value in values for v in value.split(",") if v.strip()]
        if not items:
            parser.error(f"argument {option_string}: expected at least one value")
        before = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, (list(before) if before and before is not self.default else []) + items)


class _ModelsOption(argparse.Action):
    """--models: like a list option (spaces, commas, repeated), except that a value naming an existing file or
    folder is one model even when its path holds a comma (``--models 'a,b/v.txt'``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from pathlib import Path

        items = []
        for value in values:
            items += [value] if "," in value and Path(value).exists() else \
                [v.strip() for v in value.split(",") if v.strip()]
        if not items:
            parser.error(f"argument {option_string}: expected at least one value")
        before = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, (list(before) if before and before is not self.default else []) + items)


def _run_options(r: argparse.ArgumentParser, *, sweep: bool) -> None:
    """The options of a run that ``run`` and ``sweep`` share, declared once, so that a sweep can repeat any
    run's settings: tests, levels, the statistics, the encoding choices, the database wait. (The method's
    own options come from the plug-ins, :func:`_method_options`.)"""
    r.add_argument("--tests", nargs="+", action=_ListOption, help="test ids, space- or comma-separated "
                   "(default: every canonical test in the catalog in --language that --method runs)")
    r.add_argument("--language", default="en",
                   help="BCP-47 tag of the tests run when --tests is not given ('all': every language)")
    r.add_argument("--levels", nargs="+", action=_ListOption,
                   help=f"space- or comma-separated: {','.join(LEVEL_NAMES)} (default: word,sent, or the levels "
                        "the method runs)")
    r.add_argument("--seed", type=SEED, default=0, help="seed of the permutation samples, the bootstrap and the "
                   "truncation of unequal expanded sets")
    from ..stats.robust import BYTES_PER_RESAMPLE
    from ..stats.weat import BYTES_PER_SAMPLE
    r.add_argument("--n-samples", type=memory_bounded(2, BYTES_PER_SAMPLE, "permutation samples"), default=100_000,
                   help="permutation samples (exact when fewer partitions; at most what this machine's memory holds)")
    r.add_argument("--alpha", type=PROBABILITY, default=0.01, help="Holm-Bonferroni family-wise level")
    r.add_argument("--parametric", action="store_true", help="normal-approximation p-value (Caliskan et al.)")
    r.add_argument("--alternative", choices=("greater", "less", "two-sided"), default="greater",
                   help="permutation-test alternative (greater as Caliskan et al. and May et al.; "
                        "two-sided: twice the smaller one-sided p, capped at 1)")
    r.add_argument("--ci", type=_between(0.0, 1.0, open_low=True, open_high=True), default=0.95,
                   help="level of the confidence interval of each effect size")
    r.add_argument("--n-boot", type=memory_bounded(100, BYTES_PER_RESAMPLE, "bootstrap resamples"), default=10_000,
                   help="bootstrap resamples (--ci-method percentile or BCa; at most what this machine's memory "
                        "holds)")
    r.add_argument("--no-ci", action="store_true", help="compute no confidence interval")
    from ..stats.weat import CI_METHODS
    r.add_argument("--ci-method", choices=CI_METHODS, default=CI_METHODS[0],
                   help="which interval the table shows beside its estimate: concepts (default: the concepts' d, "
                        "targets and attributes both samples of their concepts, with its p; docs/methods.md), "
                        "permutation (the papers' question: the permutation test inverted, an interval of the "
                        "sample d), or the stimulus bootstrap's percentile (as WEATHub) or BCa (bias-corrected and "
                        "accelerated, scipy.stats.bootstrap), of the sample d; the concepts' and the papers' "
                        "intervals are stored either way")
    from ..stats.weat import P_RULES
    r.add_argument("--p-rule", choices=P_RULES, default=P_RULES[0],
                   help="which p the Holm mark and the notes use: concepts (default: p_concepts, would other words "
                        "of the same concepts show the association?) or papers (p_value, the permutation test of "
                        "Caliskan et al. and May et al.: would these target words differ this much were X and Y "
                        "random labels, the attribute words fixed?); both are stored")
    r.add_argument("--pooling", help="mean, mean_nospecial, cls, last, max (default: the model's)")
    r.add_argument("--layer", help="-1 (top), a hidden-state index, or 'sum' (default: the model's loader entry's, "
                   "else -1)")
    r.add_argument("--subword", help="c-word subword choice: first, last, mean (default: last)")
    r.add_argument("--encoding", default="standard",
                   help="standard, or a paper's encoder as its code ran: sent-bias (May et al.'s BERT encoder: "
                        "lower-cased, no [CLS]/[SEP], first wordpiece), tan2019 (Tan & Celis's GPT/GPT-2 "
                        "contextual words); recorded in runs.encoding (docs/methods.md)")
    r.add_argument("--min-coverage", type=_between(0.0, 1.0), default=0.8,
                   help="share of a set's stimuli that must be encodable")
    r.add_argument("--batch-size", type=POSITIVE, default=64, help="texts per forward pass of the model")
    if sweep:
        r.add_argument("--wait", type=_between(0.0, 86_400.0), default=DEFAULT_SWEEP_WAIT,
                       help="seconds to wait for a database in use before a model's run is kept in "
                            "eatlas-unsaved/ beside it instead (the sweep goes on meanwhile)")
    else:
        r.add_argument("--wait", type=_between(0.0, 86_400.0), default=0.0,
                       help="seconds to wait for a database in use (then the run is kept in eatlas-unsaved/ "
                            "beside it, to import later)")
    r.add_argument("--no-cache", action="store_true", help="encode everything afresh; read and write no cache")
    r.add_argument("--offline", action="store_true", help="never download a hub model: use the Hugging Face cache "
                   "only, as HF_HUB_OFFLINE=1 does")
    r.add_argument("--quiet", action="store_true", help="no progress lines" if sweep else
                   "print only the line saying where the run was written")


def _global_options(parser: argparse.ArgumentParser, *, sub_level: bool) -> None:
    """--registry and --db, accepted before and after the subcommand. At the subcommand's level they have
    no default (argparse.SUPPRESS), so leaving them out there keeps what was given before it."""
    kw = {"default": argparse.SUPPRESS} if sub_level else {}
    parser.add_argument("--registry", help="registry folder (catalog.yaml, registry/, templates/); "
                                           "env EATLAS_REGISTRY", **kw)
    parser.add_argument("--db", help="DuckDB results file (default eatlas.duckdb; env EATLAS_DB)", **kw)


def _method_options(r: argparse.ArgumentParser, inputs: str | None = None) -> None:
    """--method and every method's own options, from the plug-ins' declarations (eatlas.methods); ``inputs``:
    only the methods of that kind of input (a sweep runs the methods over a test's four matrices)."""
    from .. import methods

    found = {n: m for n, m in methods.all_methods().items() if inputs is None or m.inputs == inputs}
    r.add_argument("--method", choices=list(found), default="weat",
                   help="; ".join(f"{name}: {m.help}" for name, m in found.items()))
    for name, m in found.items():
        if m.options:
            g = r.add_argument_group(f"{name} ({m.help.split(':')[0]})")
            for o in m.options:
                g.add_argument(o.flag, **o.kwargs)


def build_parser(*, methods: bool = True) -> argparse.ArgumentParser:
    """The parser of every subcommand. ``methods=False`` leaves out what the method plug-ins declare (run's
    per-method options, sweep's --method): main() builds it so when neither 'run' nor 'sweep' is on the
    command line, and a command that cannot reach them does not import the plug-ins (or numpy) first."""
    from .. import __version__

    p = argparse.ArgumentParser(prog="eatlas", description="Embedding Association Tests: registry, runs, results.")
    p.add_argument("--version", action="version", version=f"eatlas {__version__}",
                   help="print EATlas's version and exit")
    _global_options(p, sub_level=False)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run tests on a model and store the results", formatter_class=_DefaultsHelp)
    model = r.add_argument("--model", help="registered model id ('eatlas models'), a local model folder, a vector "
                           "file, or a Hugging Face hub id ORG/NAME or NAME, with @REVISION for a branch, tag or "
                           "commit (from the HF cache, downloaded into it unless --offline or HF_HUB_OFFLINE=1) "
                           "(default: %(default_model)s)")
    model.default_model = _DefaultModel()
    r.add_argument("--family", help="model family of a model folder or vector file that is not registered (e.g. "
                   "bert, glove); recorded with family_source 'user' (default: the registered model's family, else "
                   "'unknown', which is set beside no published number)")
    _run_options(r, sweep=False)
    r.add_argument("--trust-remote-code", metavar="MODEL",
                   help="let the model's own Python code run (a folder's, or a hub repository's auto_map); must name "
                        "the --model (a hub id with or without its @REVISION), so the trust is given to one model, "
                        "never by habit (default: no model's code runs)")
    if methods:
        _method_options(r)
    r.set_defaults(fn=run_cmds.cmd_run)

    s = sub.add_parser("sql", help="query the results database (read-only unless --write)",
                       formatter_class=_DefaultsHelp)
    s.add_argument("query", help="one SQL statement (DuckDB)")
    s.add_argument("--write", action="store_true", help="open the database for writing, and let the statement "
                   "read or write other files (default: read-only, this database only)")
    s.add_argument("--format", choices=("table", "vertical", "csv", "json"), default="table",
                   help="table: for reading, floats rounded to 6 significant digits (1.88987 for "
                        "1.8898680441288913), one block of lines per row (as vertical) when the columns are too wide "
                        "for the terminal; vertical: one block per row, a line per column; csv and json: every "
                        "digit, for other programs")
    s.set_defaults(fn=results_cmds.cmd_sql)

    ls = sub.add_parser("list", help="list tests (--sets: the stimulus sets)")
    ls.add_argument("--sets", action="store_true",
                    help="list the stimulus sets instead of the tests (the same filters; a source whose lists are "
                         "sets only, e.g. identity lexicons, shows here)")
    ls.add_argument("--source")
    ls.add_argument("--bias-type")
    ls.add_argument("--level")
    ls.add_argument("--language", help="BCP-47 tag, e.g. en, hi")
    ls.add_argument("--source-kind", help="tests with a set of this source kind, e.g. social_science "
                                          "(the tags are in schemas/stimuli.yaml)")
    ls.add_argument("--criteria", action="store_true",
                    help="list the validity criteria (eatlas run --method validity) instead of the tests")
    ls.set_defaults(fn=registry_cmds.cmd_list)

    sh = sub.add_parser("show", help="show a set, test or validity criterion with provenance and items")
    sh.add_argument("id")
    sh.add_argument("--level")
    sh.add_argument("--seed", type=SEED, default=0)
    sh.add_argument("--limit", type=_at_least(0), default=10)
    sh.add_argument("--all", action="store_true")
    sh.set_defaults(fn=registry_cmds.cmd_show)

    v = sub.add_parser("validate", help="validate the whole registry")
    v.set_defaults(fn=registry_cmds.cmd_validate)

    m = sub.add_parser("models", help="list registered models and whether they are installed, then the Hugging "
                                      "Face hub models in your cache that a run can use")
    m.set_defaults(fn=registry_cmds.cmd_models)

    c = sub.add_parser("catalog", help="check catalog.yaml against the registry files, or rewrite it (--sync)")
    cg = c.add_mutually_exclusive_group()
    cg.add_argument("--check", action="store_true", help="(default) compare catalog.yaml with the files, write "
                    "nothing; exit 1 with the differences when it is stale")
    cg.add_argument("--sync", action="store_true", help="rewrite catalog.yaml from the files (refuses content "
                    "changed without a version bump)")
    c.set_defaults(fn=registry_cmds.cmd_catalog)

    ca = sub.add_parser("cache", help="the on-disk embedding cache ($EATLAS_CACHE or ~/.cache/eatlas)")
    ca.add_argument("action", choices=("info", "clear"))
    ca.set_defaults(fn=cache_cmds.cmd_cache)

    a = sub.add_parser("add", help="validate a new source, set or test file and add it to the registry",
                       description="Validate one new source, stimulus set or test file and add it to the registry. "
                       "A source (a file with authors: the work's id, type, authors, year, title, venue and doi or "
                       "url) is appended to registry/sources.yaml with its BibTeX written from the fields. A set or "
                       "test is copied into the registry as "
                       "registry/<source.paper>/sets/<id>.yaml (a file with x, y, a and b is a test: tests/<id>.yaml) "
                       "and add its line to catalog.yaml. Add the sets before the test that names them (id@version), "
                       "and the paper (a source file) first. An existing id is refused; nothing is written "
                       "when the file, or the registry with it, does not validate: every problem of the file is "
                       "listed (exit 1). Warnings, the registry's or the file's, are printed and do not block. Only "
                       "the new file and what it touches are checked; the rest is what 'eatlas validate' found for "
                       "these files (kept in the registry cache). To change an existing set, edit its file and run "
                       "'eatlas bump ID -m \"what changed\"' (its version, changelog and every test naming it).")
    a.add_argument("file", help="YAML file of one source, one set or one test (format: docs/registry-format.md)")
    a.set_defaults(fn=registry_cmds.cmd_add)

    bu = sub.add_parser("bump", help="a new version of a set, template, test or criterion, and every test and "
                        "criterion that names it updated with it",
                        description="Raise the version of one entry (after you edited its file), write its changelog "
                        "line, and point every test and criterion that names another version of it (id@version) at "
                        "the new one, each with its own version raised by the same part and a changelog line saying "
                        "why. The list of files is shown first; all are written, with their catalog.yaml lines, or "
                        "none. With --follow the entry keeps the version you gave it by hand and only the references "
                        "follow (what 'eatlas validate' asks for when a test names an older version).")
    bu.add_argument("id", help="the id of a set, template, test or criterion")
    bu.add_argument("-m", "--change", help="the changelog line of the new version (required unless --follow)")
    how = bu.add_mutually_exclusive_group()
    how.add_argument("--part", choices=("patch", "minor", "major"), default="patch",
                     help="which part of MAJOR.MINOR.PATCH goes up (the followers' too)")
    how.add_argument("--to", metavar="X.Y.Z", help="the new version, above the current one")
    how.add_argument("--follow", action="store_true",
                     help="keep the entry's version; only update the tests and criteria that name an older one")
    bu.add_argument("--yes", "-y", action="store_true", help="write without asking (a script, or no terminal)")
    bu.add_argument("--dry-run", action="store_true", help="only list what would change")
    bu.set_defaults(fn=registry_cmds.cmd_bump)

    pu = sub.add_parser("publish", help="write the registry as a Hugging Face dataset folder (and push it)")
    pu.add_argument("out_dir", help="folder to write: README.md dataset card, LICENSE.md, data/<config>/")
    pu.add_argument("--push", metavar="REPO_ID", help="upload to this Hub dataset repo, tagged with the registry "
                    "version (needs HF_TOKEN or a cached login)")
    pu.add_argument("--seed", type=SEED, default=0, help="seed of the truncation of unequal expanded sets")
    pu.set_defaults(fn=results_cmds.cmd_publish)

    ex = sub.add_parser("export", help="export tests as sent-bias JSON files or stimulus tables")
    ex.add_argument("out_dir")
    ex.add_argument("--format", choices=("sent-bias", "csv", "jsonl", "parquet"), default="sent-bias")
    ex.add_argument("--tests", nargs="+", action=_ListOption, help="test ids, space- or comma-separated "
                    "(default: every test)")
    ex.add_argument("--level", choices=EXPORT_LEVELS,
                    help="default: sent-bias at the test's own level, tables at every level it has")
    ex.add_argument("--seed", type=SEED, default=0, help="seed of the truncation of unequal expanded sets")
    ex.set_defaults(fn=results_cmds.cmd_export)

    rp = sub.add_parser("report", help="write a self-contained HTML report of the results database",
                        description="Write one HTML file, OUT, that needs nothing else to open (no network, no "
                        "scripts; the figures are inline SVG): the runs shown, a matrix of tests x models (effect "
                        "sizes with their Holm-Bonferroni marks), forest plots with the published numbers marked, "
                        "each result's most influential stimuli, each method's own sections (ML-EAT's EAT-Maps, "
                        "CEAT's draws, the LLM IAT), ours beside the papers' numbers, and the provenance and "
                        "references of the tests used. It reads the results database and never writes it; OUT is "
                        "never written over a file eatlas did not write. '*' marks a result its run found "
                        "significant after Holm-Bonferroni correction at that run's --alpha.")
    rp.add_argument("out", help="the HTML file to write (e.g. report.html)")
    rp.add_argument("--alpha", help=argparse.SUPPRESS)     # refused with the reason (cmd_report): it never acted
    rp.add_argument("--run", help="one run id (or a unique prefix)")
    rp.add_argument("--runs", nargs="+", help="run ids or unique prefixes (space- or comma-separated)")
    rp.add_argument("--model", help="only the runs of this model")
    rp.add_argument("--all", action="store_true", help="every run, not only the newest result per model, test and "
                    "level (the default)")
    rp.set_defaults(fn=results_cmds.cmd_report)

    st = sub.add_parser("site", help="write the atlas as a static site: every test, every result, SQL in the browser",
                        formatter_class=_DefaultsHelp,
                        description="Write a static site into OUT: index.html (every test of the registry, with "
                        "filters), tests/<id>.html (a test's sets, sentences, provenance, BibTeX, its published "
                        "numbers and results with a forest plot), sql.html (DuckDB-WASM runs SQL in the reader's "
                        "browser over the tables in data/, parquet and Arrow). Any static host serves it, or: "
                        "python -m http.server -d OUT. "
                        "OUT must be new, empty, or an earlier site (a file eatlas did not write is never replaced).")
    st.add_argument("out", help="the folder to write")
    st.add_argument("--runs", nargs="+", action=_ListOption, help="run ids or unique prefixes (default: the newest "
                    "result per model, test and level)")
    st.add_argument("--model", help="only the runs of this model (default: every model)")
    st.add_argument("--all", action="store_true", help="every run, not only the newest result per model, test and "
                    "level")
    st.add_argument("--duckdb-wasm", metavar="DIR", help="take DuckDB-WASM's files from DIR (the npm tarballs of "
                    "'npm pack @duckdb/duckdb-wasm@1.32.0 apache-arrow@17.0.0', packed or unpacked), or 'cdn': copy "
                    "none, the SQL page loads them from jsDelivr (each checked against its pinned hash) (default: "
                    "the pinned npm tarballs, downloaded from the npm registry into the EATlas cache once, each "
                    "checked against its sha512; 35 MB copied into the site, so its SQL box works offline)")
    st.add_argument("--offline", action="store_true", help="download nothing: DuckDB-WASM comes from the EATlas "
                    "cache, or, where it holds none, the SQL page loads it from jsDelivr and says how to bundle it "
                    "(as EATLAS_OFFLINE=1)")
    st.add_argument("--figures", choices=("results", "all", "none"), default="results",
                    help="forest plots for the tests with results shown (results), also for those with printed "
                         "numbers only (all: slower), or none")
    st.add_argument("--dataset", metavar="REPO_ID", help="the Hugging Face dataset 'eatlas publish --push' wrote, "
                    "linked from each test page (default: the pages say how to write it)")
    st.set_defaults(fn=results_cmds.cmd_site)

    si = sub.add_parser("show-influence", help="the stimuli that move a result's effect size most when left out")
    si.add_argument("run", help="run id (or a unique prefix)")
    si.add_argument("test", help="test id")
    si.add_argument("--level", help="one level (default: every level of the test in the run)")
    si.add_argument("--top", type=POSITIVE, default=10, help="how many stimuli per level (default 10)")
    si.set_defaults(fn=results_cmds.cmd_show_influence)

    ci = sub.add_parser("cite", help="print the BibTeX for a test: its papers, its sets', its template's, EATlas")
    ci.add_argument("test_id")
    ci.add_argument("--level", choices=LEVEL_NAMES,
                    help="default: the test's own level")
    ci.set_defaults(fn=registry_cmds.cmd_cite)

    sw = sub.add_parser("sweep", help="run the tests over many models, one task per model (locally or on Ray)",
                        formatter_class=_DefaultsHelp)
    sw.add_argument("--models", nargs="+", action=_ModelsOption, help="model ids, folders, vector files or Hugging "
                    "Face hub ids (ORG/NAME[@REVISION]), space- or comma-separated; a path that exists is never split "
                    "at a comma (or use --models-file)")
    sw.add_argument("--models-file", help="a file of models, one a line (# comments)")
    _run_options(sw, sweep=True)
    if methods:
        _method_options(sw, inputs="matrices")
    sw.add_argument("--engine", choices=("local", "ray"), default="local",
                    help="local: one model after another here; ray: one Ray task per model")
    sw.add_argument("--ray-address", help="a Ray cluster (HOST:PORT, ray://HOST:PORT, auto); default: start a "
                                          "local Ray instance")
    sw.add_argument("--resume", action="store_true", help="skip a model whose run with this configuration is stored "
                    "(same model fingerprint, method, tests with their versions and content hashes, levels and every "
                    "option; whether 'eatlas run' or a sweep stored it)")
    sw.set_defaults(fn=run_cmds.cmd_sweep)

    res = sub.add_parser("results", help="export the results as hive-partitioned parquet, or import such an export "
                                         "or another results file")
    rs = res.add_subparsers(dest="action", required=True)
    ex = rs.add_parser("export", help="write runs, results and method tables as parquet partitioned by model and "
                                      "test, with manifest.json")
    ex.add_argument("path", help="a new or empty folder (or an earlier export, which is replaced)")
    im = rs.add_parser("import", help="merge an export folder or a .duckdb results file into --db (by run id)")
    im.add_argument("path", help="an 'eatlas results export' folder or an eatlas .duckdb file")
    im.add_argument("--wait", type=float, default=0.0, help="seconds to wait for a database in use")
    for q in (ex, im):
        q.add_argument("--db", default=argparse.SUPPRESS, help="DuckDB results file (default eatlas.duckdb)")
        q.add_argument("--registry", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    res.set_defaults(fn=results_cmds.cmd_results)

    cr = sub.add_parser("criterion", help="add a validity criterion of your own from a CSV or TSV table")
    crs = cr.add_subparsers(dest="action", required=True)
    ca_ = crs.add_parser("add", help="turn a table (a word column, a value column) into a validity criterion of the "
                                     "registry", formatter_class=_DefaultsHelp,
                         description="Copy FILE byte for byte into registry/<source>/data/ (its sha256 in that "
                         "folder's provenance.yaml) and write registry/<source>/criteria/<id>.yaml, each item's value "
                         "read from its row, for 'eatlas run --method validity'. Every problem of the file is named "
                         "with file, row and column (a duplicate word, a file that is not UTF-8, a value that is not "
                         "a finite number, a missing column, a word with outer whitespace), and the criterion is "
                         "validated as 'eatlas validate' reads it, before anything is written; nothing is written on "
                         "error. Then run 'eatlas catalog --sync'.")
    for flag, what in (("--source", "the source's key in registry/sources.yaml (a registry id)"),
                       ("--file", "the CSV or TSV (.tsv) file"), ("--id", "the criterion's id (a registry id)"),
                       ("--key", "the column of the words"), ("--value", "the column of the values"),
                       ("--a", "the attribute set the association points to, id@version"),
                       ("--b", "the other attribute set, id@version"), ("--measure", "what the values measure"),
                       ("--unit", "the values' unit"), ("--agency", "who collected the data"),
                       ("--table", "the agency's table or survey"),
                       ("--license", "the file's licence (an SPDX id, or unspecified)")):
        ca_.add_argument(flag, required=True, help=what)
    ca_.add_argument("--year", type=int, required=True, help="the year the data describe")
    ca_.add_argument("--kind", default="word", help="what each item is (as a stimulus item's kind)")
    ca_.add_argument("--expected-sign", choices=("positive", "negative"), default="positive",
                     help="the sign of the correlation the source leads one to expect")
    ca_.add_argument("--meaning", default="", help="what a value means, its range and direction (default: the unit)")
    ca_.add_argument("--reliability", default="not stated by the file", help="the criterion's own reliability")
    ca_.add_argument("--registry", default=argparse.SUPPRESS, help="registry folder (catalog.yaml, registry/)")
    cr.set_defaults(fn=registry_cmds.cmd_criterion)

    for subparser in sub.choices.values():
        _global_options(subparser, sub_level=True)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser(methods=bool({"run", "sweep"} & set(argv))).parse_args(argv)
    except SystemExit as e:          # argparse has printed the usage and the problem
        return e.code if isinstance(e.code, int) else 2
    from ..guard import clear_written, written_summary
    clear_written()
    try:
        from .common import given_options, refuse_contradictions
        refuse_contradictions(args, lambda: given_options(build_parser(), list(sys.argv[1:] if argv is None else argv)))
        return args.fn(args)
    except ValidationFailed as e:
        for prob in e.problems:
            print(f"error: {plain_line(prob.render())}", file=sys.stderr)
        return 1
    except EatlasError as e:
        print(f"error: {plain_line(e.render())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted: {written_summary()}", file=sys.stderr)     # what it wrote, what it left
        return 130
    except BrokenPipeError:          # eatlas sql ... | head: the reader has what it wanted
        try:
            import os
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 0
    except OSError as e:             # disk full, permission denied, a folder where a file should be
        where = f"file {e.filename}: " if e.filename else ""
        print(plain_line(f"error: {where}{e.strerror or e} (check the path and its permissions)"), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
