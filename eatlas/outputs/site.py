"""The atlas as a static site: ``eatlas site OUT/`` writes every test of the registry, every published and new
result and a SQL box, as files any static host (or ``python -m http.server``) serves; nothing to install.

Layout written into OUT (every file recorded in its manifest, eatlas.guard: never over a file eatlas did not
write)::

    index.html              every test: id, title, language, bias type, source, licence, levels, how many printed
                            numbers and new results it has; filters (language, bias type, source kind, text) that
                            need JavaScript only to filter: the plain list is there without it
    tests/<id>.html         one page per test: its four sets (items, kinds, notes, the DIFFERENCE notes of a
                            variant), its templates with sample sentences, provenance and BibTeX, every printed
                            number and every shown result, a forest plot of them (eatlas.outputs.report.forest_plots,
                            the report's), and where to download it
    sql.html                a query box: DuckDB-WASM runs the reader's SQL in the browser over data/*.parquet
    data/<table>.parquet    runs, results, influence, run_inputs, each method's tables, published_results,
                            published_models, the views (reproduction, reproduction_loose, mleat_reproduction, ...)
                            materialised for the shown results, and the registry's tests and sets
    assets/                 site.css, filter.js (the index's filters), sql.js (the SQL box), arrow-shim.mjs
    data/stimuli/<id>.csv   a test's stimuli at every level (eatlas export's table), and the same as .parquet
    duckdb-wasm/            DuckDB-WASM's files (its 'eh' bundle and apache-arrow, about 35 MB), so the SQL box
                            works offline; absent where they could not be had (the SQL page then says how)

Which results: as the report (eatlas.outputs.report.selection_sql): the chosen runs, every run of a model, every
run, or by default the newest result per model, test and level.

DuckDB-WASM is the npm package ``@duckdb/duckdb-wasm`` at :data:`DUCKDB_WASM_VERSION`, with its dependency
``apache-arrow`` at :data:`ARROW_VERSION`. By default the build takes the files listed in :data:`WASM_FILES` from
the two npm tarballs (:data:`NPM_TARBALLS`, pinned with their sha512 ``integrity``), downloaded from the npm
registry into the EATlas cache the first time (:func:`fetch_tarballs`; not with ``download=False`` or
``EATLAS_OFFLINE=1``), each file checked against the sha384 recorded here, and copies them into the site.
``duckdb_wasm`` takes them from a folder instead (``npm pack``'s tarballs, packed or unpacked), or, as 'cdn',
copies none. A site without them loads the files from jsDelivr's copy of the npm packages, with the same hashes
(subresource integrity: the worker and the wasm are fetched with ``integrity`` and started from Blob URLs, the
module through the import map's ``integrity``), and its SQL page says which command bundles them. Every page
carries a Content-Security-Policy: scripts from this site (and the CDN's pinned files on such a SQL page) only,
WebAssembly compiled, workers from Blob URLs, connections to this site (and the CDN) only.
"""
from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from .. import __version__
from ..console import jinja_finalize
from ..errors import EatlasError
from ..ids import natural_key
from ..legend import FLOOR_LINE, NOT_ESTIMABLE_WHY, WHAT_TO_REPORT
from ..paths import package_file
from ..registry.base import Registry

ASSETS = package_file("outputs/site_assets")
CDN = "https://cdn.jsdelivr.net/npm"
DUCKDB_WASM_VERSION = "1.32.0"
ARROW_VERSION = "17.0.0"        # the apache-arrow that @duckdb/duckdb-wasm 1.32.0 depends on (^17.0.0)
WASM_DIR = "duckdb-wasm"        # OUT/<this>/ holds the local copies (--duckdb-wasm)
FIGURES = ("results", "all", "none")
MAX_ROWS = 2000                 # rows of a query result the SQL box shows (the count says how many there are)


@dataclass(frozen=True)
class WasmFile:
    """A file of an npm package the SQL page loads (``load``) or the local copy carries (its licence)."""
    name: str
    package: str
    version: str
    path: str           # inside the package (npm pack: under package/)
    sha384: str         # subresource integrity, 'sha384-<base64>'
    load: bool = True
    bundle: bool = True     # copied into a site that carries DuckDB-WASM (the mvp bundle is not: see BUNDLE_NOTE)

    @property
    def url(self) -> str:
        return f"{CDN}/{self.package}@{self.version}/{self.path}"


# The files the SQL page loads, pinned: the hashes are those of the npm tarballs (`npm pack
# @duckdb/duckdb-wasm@1.32.0 apache-arrow@17.0.0`), which jsDelivr serves byte for byte under /npm/;
# tests/test_site.py recomputes them from the tarballs when npm is at hand. The mvp bundle is for browsers
# without WebAssembly exceptions (duckdb.selectBundle chooses); the coi bundle needs cross-origin isolation,
# which a static host cannot promise, so it is not used.
WASM_FILES = (
    WasmFile("duckdb-browser.mjs", "@duckdb/duckdb-wasm", DUCKDB_WASM_VERSION, "dist/duckdb-browser.mjs",
             "sha384-+JRDemqHdCXYiJnIC4lOr18b1oPXlzMsoyF8mtW0mq3QKZPefRA/Ol7RJhNYdXQy"),
    WasmFile("duckdb-browser-eh.worker.js", "@duckdb/duckdb-wasm", DUCKDB_WASM_VERSION,
             "dist/duckdb-browser-eh.worker.js",
             "sha384-a2Q5wPfMJHriw96D3xhtkym83ST11xUIm6e27q9d3v4ykPqSzeY7WCXK6CTlJFwb"),
    WasmFile("duckdb-eh.wasm", "@duckdb/duckdb-wasm", DUCKDB_WASM_VERSION, "dist/duckdb-eh.wasm",
             "sha384-hw3GjeJZY5QapQ8mwqMHXBPVmTLO+jKm5dlDwkGsEfjyu/HcXx1d0Rwlr/ZAShjq"),
    WasmFile("duckdb-browser-mvp.worker.js", "@duckdb/duckdb-wasm", DUCKDB_WASM_VERSION,
             "dist/duckdb-browser-mvp.worker.js",
             "sha384-ABB4QFgUoQqfiMRv4Eme20RCo+rO//OBEOJfiUbiZFBRH/4T4xy8Vcu4hLXgPxQ0", bundle=False),
    WasmFile("duckdb-mvp.wasm", "@duckdb/duckdb-wasm", DUCKDB_WASM_VERSION, "dist/duckdb-mvp.wasm",
             "sha384-aPxDmtovNQyMTy8S7zolNUiHoQNvtkLGOWJdPtQpW1T52DQuqeGutmEdb0ycBoNs", bundle=False),
    WasmFile("Arrow.es2015.min.js", "apache-arrow", ARROW_VERSION, "Arrow.es2015.min.js",
             "sha384-o0NAvZLrsqSiiIs62e876tz3P1Hg140RXcPkhBnT4wA90iCtIL230llnh6dB8/Fv"),
    WasmFile("LICENSE.txt", "apache-arrow", ARROW_VERSION, "LICENSE.txt",
             "sha384-mT/5VQ6s9AdZHhm3EUz6MrSPTFY+9Ltq0ghg4Sqbrbis/0ilAtaHvtjX+KmE5qrZ", load=False),
    WasmFile("NOTICE.txt", "apache-arrow", ARROW_VERSION, "NOTICE.txt",
             "sha384-T5882Tu2/PCf31qrg6u9MOUXypzL55Z4G3q9ASQIIaiB6/9U4lS2x0K+1GpNjYn6", load=False),
)
NPM_PACK = f"npm pack @duckdb/duckdb-wasm@{DUCKDB_WASM_VERSION} apache-arrow@{ARROW_VERSION}"
# A site that carries DuckDB-WASM carries its 'eh' bundle only (WebAssembly exceptions: Chrome 95, Firefox 100,
# Safari 15.2 and later), 35 MB; the 'mvp' bundle for older browsers would add 40 MB more.
BUNDLE_NOTE = "WebAssembly exception handling (Chrome 95, Firefox 100, Safari 15.2 or newer)"


@dataclass(frozen=True)
class NpmTarball:
    """A pinned npm tarball the site build takes DuckDB-WASM's files from: where the npm registry serves it, and
    its ``integrity`` (sha512, as the registry's metadata and package-lock.json record it)."""
    package: str
    version: str
    file: str           # the name 'npm pack' gives it
    integrity: str

    @property
    def url(self) -> str:
        return f"{NPM_REGISTRY}/{self.package}/-/{self.package.rsplit('/', 1)[-1]}-{self.version}.tgz"


NPM_REGISTRY = "https://registry.npmjs.org"
NPM_TARBALLS = (
    NpmTarball("@duckdb/duckdb-wasm", DUCKDB_WASM_VERSION, f"duckdb-duckdb-wasm-{DUCKDB_WASM_VERSION}.tgz",
               "sha512-IewXTNYEjsZCPE9weUWgtjGxUlMRo7qhX0GF6tq/KjK8bnY+RAl4cyUdYUfcdzbyb4b9ZxPC+FOsCcxgaKFWMg=="),
    NpmTarball("apache-arrow", ARROW_VERSION, f"apache-arrow-{ARROW_VERSION}.tgz",
               "sha512-X0p7auzdnGuhYMVKYINdQssS4EcKec9TCXyez/qtJt32DrIMGbzqiaMiQ0X6fQlQpw8Fl0Qygcv4dfRAr5Gu9Q=="),
)

# The views materialised as parquet, for the shown results (a view a database lacks is left out)
VIEWS = ("reproduction", "reproduction_loose", "mleat_reproduction", "mleat_reproduction_loose",
         "reproduction_all_runs", "reproduction_loose_all_runs", "mleat_reproduction_all_runs",
         "mleat_reproduction_loose_all_runs")
ROLE_NAMES = {"x": "X (target)", "y": "Y (target)", "a": "A (attribute)", "b": "B (attribute)"}
SAMPLE = 4          # expanded sentences shown per set and level on a test page
STIMULI_DIR = "data/stimuli"    # a test's stimuli at every level it has (eatlas export's table), CSV and parquet


def sri(data: bytes) -> str:
    """The subresource-integrity string of ``data`` (sha384, as the pages and WASM_FILES carry it)."""
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode("ascii")


# ------------------------------------------------------------------ DuckDB-WASM from a local folder

def read_wasm_files(folder: str | Path) -> dict[str, bytes]:
    """The bytes of every file of :data:`WASM_FILES`, found anywhere under ``folder`` (an unpacked ``npm pack``,
    a ``node_modules``) or inside an npm tarball (``*.tgz``) there, each checked against its recorded hash. A
    missing or different file is a one-line error saying how to make the folder."""
    root = Path(folder)
    if not root.is_dir():
        raise EatlasError("not a folder", file=str(root), field="--duckdb-wasm",
                          hint=f"make one: mkdir wasm && cd wasm && {NPM_PACK}")
    want = {f.sha384: f for f in WASM_FILES}
    found: dict[str, bytes] = {}
    seen: dict[str, str] = {}           # name -> where a file of that name with other content was
    names = {f.name for f in WASM_FILES}

    def offer(data: bytes, where: str, name: str) -> None:
        f = want.get(sri(data))
        if f is not None and f.name == name:
            found.setdefault(f.name, data)
        else:
            seen.setdefault(name, where)

    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name in names:
            offer(p.read_bytes(), str(p), p.name)
        elif p.is_file() and p.name.endswith(".tgz"):
            try:
                with tarfile.open(p, "r:gz") as tar:
                    for m in tar.getmembers():
                        base = m.name.rsplit("/", 1)[-1]
                        if m.isfile() and base in names and base not in found:
                            offer(tar.extractfile(m).read(), f"{p}:{m.name}", base)
            except (tarfile.TarError, OSError, EOFError) as e:
                raise EatlasError(f"unreadable npm tarball: {e}", file=str(p), field="--duckdb-wasm",
                                  hint=f"remove it, or make the folder again: {NPM_PACK}") from None
    missing = [f for f in WASM_FILES if f.bundle and f.name not in found]
    if missing:
        f = missing[0]
        other = seen.get(f.name)
        what = (f"{f.name} there is not {f.package}@{f.version}'s (its sha384 differs)" if other
                else f"no {f.name} of {f.package}@{f.version} under it")
        raise EatlasError(f"{what}" + (f" (and {len(missing) - 1} more file(s))" if len(missing) > 1 else ""),
                          file=other or str(root), field="--duckdb-wasm",
                          hint=f"make the folder with: {NPM_PACK} (the tarballs may stay packed)")
    return found


def npm_cache() -> Path:
    """Where the build keeps the npm tarballs it downloaded (``$EATLAS_CACHE/npm``): a folder ``--duckdb-wasm``
    also reads."""
    from ..paths import cache_dir

    return cache_dir() / "npm"


def offline() -> bool:
    """Downloads are off: ``EATLAS_OFFLINE=1`` (``eatlas site --offline`` sets it for the build)."""
    import os

    return os.environ.get("EATLAS_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def _integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def fetch_tarballs(*, allow_download: bool = True, timeout: float = 60.0) -> tuple[Path | None, str | None]:
    """The folder holding the pinned npm tarballs of DuckDB-WASM and apache-arrow (:data:`NPM_TARBALLS`), each
    checked against its sha512: the EATlas cache, filled from the npm registry the first time (unless
    ``allow_download`` is false). Returns (folder, None), or (None, why not)."""
    import os
    import urllib.error
    import urllib.request

    folder = npm_cache()
    for t in NPM_TARBALLS:
        path = folder / t.file
        if path.is_file() and _integrity(path.read_bytes()) == t.integrity:
            continue
        if not allow_download:
            return None, f"downloads are off and the EATlas cache ({folder}) has no {t.file}"
        try:
            with urllib.request.urlopen(t.url, timeout=timeout) as r:       # noqa: S310 (a fixed https URL)
                data = r.read()
        except (urllib.error.URLError, OSError, TimeoutError) as e:
            return None, f"the npm registry could not be reached ({t.url}: {getattr(e, 'reason', e)})"
        if _integrity(data) != t.integrity:
            return None, f"{t.url} is not the pinned {t.package}@{t.version} (its sha512 differs)"
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return folder, None


# ------------------------------------------------------------------ the data

def _sql_literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _plain_columns(con, source: str) -> str:
    """``SELECT`` of ``source`` with JSON, MAP and UNION columns as text: DuckDB-WASM reads them with no
    extension (a JSON column would make it load the json extension from the network)."""
    cols = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
    fix = [c[0] for c in cols if str(c[1]).upper() == "JSON" or str(c[1]).upper().startswith(("MAP", "UNION"))]
    if not fix:
        return f"SELECT * FROM {source}"
    repl = ", ".join(f'CAST("{c}" AS VARCHAR) AS "{c}"' for c in fix)
    return f"SELECT * REPLACE ({repl}) FROM {source}"


class _Source:
    """A connection to the results database (read-only) or, without one, an in-memory database holding the
    registry's published tables and the empty run tables; the shown rows as temporary tables ``_site_<name>``."""

    def __init__(self, db: Path | None, reg: Registry, *, runs: list[str] | None, model: str | None,
                 all_runs: bool, writes_to: Path | None = None):
        from ..store.db import connect, duck, init_schema, refresh_published

        self.reg = reg
        if db is not None and db.exists():     # sandboxed, checked as data; DuckDB writes the parquet files only
            self.con = connect(db, read_only=True, writes_to=writes_to)
        else:
            if runs or model:
                raise EatlasError("no such database", file=str(db), field="--runs" if runs else "--model",
                                  hint="run 'eatlas run' first, or pass --db FILE")
            self.con = duck()               # extension autoload and autoinstall off, as every connection
            init_schema(self.con)
            refresh_published(self.con, reg)
        try:
            self._select(runs, model, all_runs)
        except BaseException:
            self.con.close()
            raise

    def _select(self, runs, model, all_runs) -> None:
        from ..store.db import tables as run_tables
        from ..store.influence import resolve_run
        from .report import selection_sql

        con = self.con
        have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                          "WHERE table_schema = 'main'").fetchall()}
        if "runs" not in have:
            raise EatlasError("the database holds no runs table", hint="is this an eatlas results file? "
                              "pass another --db FILE")
        ids = [resolve_run(con, r) for r in runs] if runs else None
        if model and not con.execute("SELECT count(*) FROM runs WHERE model = ?", [model]).fetchone()[0]:
            raise EatlasError(f"no run of model {model!r}", field="--model",
                              hint="'eatlas sql \"SELECT DISTINCT model FROM runs\"' lists the models")
        con.execute("CREATE OR REPLACE TEMP TABLE _site_keys (tbl VARCHAR, run_id VARCHAR, test_id VARCHAR, "
                    "level VARCHAR)")
        self.per_test = {}
        self.by_criterion = {}
        for t in run_tables():
            if t.name not in have or t.name == "runs":     # the runs shown are those of the rows shown (below)
                continue
            cols = {r[0] for r in con.execute(f'DESCRIBE "{t.name}"').fetchall()}
            if "run_id" not in cols:
                continue
            per_test = {"test_id", "level"} <= cols
            self.per_test[t.name] = per_test
            if t.name == "influence":       # the influence of the shown results (below)
                continue
            keys = ("test_id", "level") if per_test else ()
            # a method that scores a test two ways (the LLM IAT: generated text, log-probability) keeps the newest
            # result of each way
            keys += ("scoring",) if per_test and "scoring" in cols else ()
            # validity keeps the newest result per model AND criterion (as the report), its id in column test_id
            by_criterion = not per_test and "criterion_id" in cols
            self.by_criterion[t.name] = by_criterion
            keys += ("criterion_id",) if by_criterion else ()
            inner = (f"(SELECT DISTINCT run_id{', test_id, level' if per_test else ''}"
                     f"{', scoring' if 'scoring' in keys else ''}{', criterion_id' if by_criterion else ''} "
                     f"FROM \"{t.name}\")")
            sql, params = selection_sql(inner, keys, ids, model, all_runs,
                                        columns="t.run_id" + (", t.test_id, t.level" if per_test else
                                                              ", t.criterion_id, NULL" if by_criterion else
                                                              ", NULL, NULL"))
            con.execute(f"INSERT INTO _site_keys SELECT '{t.name}', * FROM ({sql})", params)
        if "influence" in self.per_test:
            con.execute("INSERT INTO _site_keys SELECT 'influence', run_id, test_id, level FROM _site_keys "
                        "WHERE tbl = 'results'")
        con.execute("CREATE OR REPLACE TEMP TABLE _site_runs AS SELECT * FROM runs "
                    "WHERE run_id IN (SELECT run_id FROM _site_keys) ORDER BY finished_at, run_id")
        if ids:
            self.selection = f"the run(s) {', '.join(i[:8] for i in ids)}"
        elif all_runs:
            self.selection = "every run" + (f" of model {model}" if model else "")
        else:
            self.selection = "the newest result per model, test and level" + (f" of model {model}" if model else "")
        self.have = have

    def table_sql(self) -> dict[str, str]:
        """parquet name -> the query of its rows."""
        out = {"runs": "_site_runs"}
        for name, per_test in self.per_test.items():
            on = "USING (run_id, test_id, level)" if per_test else \
                "ON t.run_id = k.run_id AND t.criterion_id = k.test_id" if self.by_criterion.get(name) else \
                "USING (run_id)"
            out[name] = (f"(SELECT t.* FROM \"{name}\" t SEMI JOIN (SELECT * FROM _site_keys WHERE tbl = '{name}') k "
                         f"{on})")
        if "run_inputs" in self.have:
            out["run_inputs"] = "(SELECT * FROM run_inputs WHERE run_id IN (SELECT run_id FROM _site_runs))"
        for name in ("published_results", "published_models"):
            if name in self.have:
                out[name] = name
        views = {r[0] for r in self.con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        for v in VIEWS:
            if v in views:
                out[v] = (f"(SELECT v.* FROM {v} v SEMI JOIN (SELECT DISTINCT run_id, test_id, level FROM _site_keys "
                          "WHERE test_id IS NOT NULL) k USING (run_id, test_id, level))")
        return out

    def frame(self, sql: str, params=None) -> pd.DataFrame:
        return self.con.execute(sql, params or []).fetchdf()

    def close(self) -> None:
        self.con.close()


def _write_arrow(con, sql: str, path: Path) -> None:
    """The rows of ``sql`` as an Arrow IPC stream (uncompressed): what the SQL page loads into DuckDB-WASM, which
    reads Arrow with no extension (its parquet reader is an extension it would download)."""
    import pyarrow as pa
    import pyarrow.compute  # noqa: F401

    rel = con.sql(sql)
    table = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()     # duckdb 2 / 1
    # text columns that repeat (paper, table, note, ...) dictionary-encoded: a tenth of the bytes for the same rows
    fields = []
    for i, f in enumerate(table.schema):
        col = table.column(i)
        if (pa.types.is_string(f.type) or pa.types.is_large_string(f.type)) and len(col) > 100 and \
                pa.compute.count_distinct(col).as_py() * 2 < len(col):
            col = pa.compute.dictionary_encode(col.cast(pa.string()))
        fields.append(col)
    table = pa.Table.from_arrays(fields, names=table.column_names)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)


def _registry_frames(reg: Registry, n_pub: dict[str, int], n_res: dict[str, int]) -> dict[str, pd.DataFrame]:
    """The registry's tests and sets as two tables (for SQL beside the results)."""
    tests = []
    for t in reg.tests.values():
        kinds = sorted({k for ref in t.sets.values() for k in reg.get_set(ref).source_kind})
        tests.append({"id": t.id, "version": t.version, "title": t.title, "language": t.language,
                      "bias_type": t.bias_type, "source": t.source.get("paper"), "source_kinds": kinds,
                      "license": t.license, "levels": list(t.levels), "x": t.sets["x"], "y": t.sets["y"],
                      "a": t.sets["a"], "b": t.sets["b"], "methods": list(t.methods) if t.methods else None,
                      "variant_of": t.variant_of, "n_published": n_pub.get(t.id, 0),
                      "n_results": n_res.get(t.id, 0)})
    sets = [{"id": s.id, "version": s.version, "concept": s.concept, "language": s.language,
             "license": s.license, "source": s.source.get("paper"), "source_kinds": list(s.source_kind),
             "n_items": len(s.items), "items": [i.text for i in s.items], "kinds": [i.kind for i in s.items],
             "variant_of": s.variant_of} for s in reg.sets.values()]
    return {"tests": pd.DataFrame(tests), "sets": pd.DataFrame(sets)}


# ------------------------------------------------------------------ formatting

def _num(v) -> float | None:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


def _f(v, digits: int = 3, sign: bool = True) -> str:
    v = _num(v)
    if v is None:
        return "–"
    return f"{v:+.{digits}f}" if sign else f"{v:.{digits}f}"


def _p(v, at_floor=None) -> str:
    """A p as the pages print it; a sampled permutation p at its floor (results.p_at_floor) as '< 1e-05'."""
    v = _num(v)
    if v is None:
        return "–"
    if _true(at_floor):
        return f"< {v:.2g}"
    return f"{v:.2e}" if 0 < v < 1e-3 else f"{v:.4f}"


def _count(v) -> str:
    """A count (a whole number, though pandas may hold it as a float): '–' where none is stored."""
    v = _num(v)
    return "–" if v is None else str(int(v)) if v == int(v) else str(v)


def _split_difference(notes: str | None) -> tuple[str, str]:
    """A set's or test's notes, and the part after 'DIFFERENCE:' (how a variant differs from its original)."""
    text = notes or ""
    main, mark, diff = text.partition("DIFFERENCE:")
    return main.strip(), diff.strip() if mark else ""


def _dropped(v) -> list[tuple[str, list[str]]]:
    """results.dropped (JSON text: role -> stimuli) as (role, stimuli) pairs."""
    if v is None or (isinstance(v, float) and v != v):
        return []
    try:
        d = json.loads(v) if isinstance(v, str) else dict(v)
    except (TypeError, ValueError):
        return [("?", [str(v)])]
    return [(str(k), [str(x) for x in (items if isinstance(items, list) else [items])])
            for k, items in sorted(d.items()) if items]


def _true(v) -> bool:
    """A stored boolean (None/NaN: not true)."""
    return v is not None and v == v and bool(v)


def _list(v) -> list[str]:
    if v is None or isinstance(v, float):
        return []
    return [str(x) for x in list(v)]


def page_name(test_id: str) -> str:
    """The file of a test's page under tests/ (ids are [a-z0-9_+-]: safe as file names)."""
    return f"{test_id}.html"


def page_href(test_id: str) -> str:
    return quote(page_name(test_id))


def accessible_svg(svg: str, ident: str, title: str, desc: str) -> str:
    """An SVG figure with ``<title>`` and ``<desc>`` (its alt text) and ``role="img"``, for screen readers."""
    from markupsafe import escape

    head_end = svg.index(">", svg.index("<svg")) + 1
    tag = svg[:head_end]
    tag = tag[:-1] + f' role="img" aria-labelledby="{ident}-title {ident}-desc">'
    return (tag + f'<title id="{ident}-title">{escape(title)}</title><desc id="{ident}-desc">{escape(desc)}</desc>'
            + svg[head_end:])


def interval_cell(r: dict) -> dict:
    """A result's interval beside the estimate it is an interval of (the results table's cell): ``estimate_name``
    (the concepts' d, the sample d, d_corrected: by its ci_method), ``estimate`` and ``interval`` as text, and
    words instead where the concepts' d is not estimable at the result's set sizes."""
    method = r.get("ci_method") if isinstance(r.get("ci_method"), str) else None
    name = {"concepts": "concepts' d", "inversion": "d_corrected"}.get(method, "sample d")
    est = {"concepts": r.get("d_concepts"), "inversion": r.get("d_corrected")}.get(method, r.get("effect_size"))
    if method == "concepts" and r.get("concepts_estimable") is False:
        return {"estimate_name": name, "estimate": "not estimable", "interval": "",
                "why": NOT_ESTIMABLE_WHY}
    lo, hi = _num(r.get("ci_low")), _num(r.get("ci_high"))
    level = _num(r.get("ci_level"))
    interval = (f"[{_f(lo, 2)}, {_f(hi, 2)}]" + (f" ({level:.0%}, {method})" if level is not None and method else "")
                if lo is not None and hi is not None else "")
    return {"estimate_name": name, "estimate": _f(est, 2) if interval or method else "–", "interval": interval}


def _forest_desc(test_id: str, rows: pd.DataFrame, others: pd.DataFrame, pairs: pd.DataFrame) -> str:
    """The forest plot's alt text: what it shows, value by value."""
    parts = [f"Forest plot of test {test_id}: effect size d on the horizontal axis (0 marked), one row per level."]
    for r in rows.itertuples():
        if r.status != "ok":
            continue
        cell = interval_cell(r._asdict())
        ci = (f", {cell['estimate_name']} {cell['estimate']}" + (f", {r.ci_level:.0%} CI {_f(r.ci_low, 2)} to "
                                                                  f"{_f(r.ci_high, 2)}" if cell["interval"] else "")
              if cell["estimate_name"] != "sample d" or cell["interval"] else "")
        holm = "significant after Holm-Bonferroni" if _true(r.holm_significant) else "not Holm-significant"
        parts.append(f"{r.run_model} at level {r.level}: sample d = {_f(r.effect_size, 2)}{ci}, {holm}.")
    if len(pairs):
        for r in pairs.itertuples():
            parts.append(f"Published ({r.match.replace('_', ' ')}), {r.paper} {r.table_id}, {r.published_model}, "
                         f"level {r.level}: {_f(r.published_effect_size, 2)}.")
    if len(others):
        for (paper, level), g in others.groupby(["paper", "level"], sort=True):
            vals = sorted(float(v) for v in g["published_effect_size"])
            parts.append(f"Published by {paper} for other models at level {level}: {len(vals)} value(s) from "
                         f"{vals[0]:+.2f} to {vals[-1]:+.2f}.")
    return " ".join(parts)


# ------------------------------------------------------------------ the pages

def _env():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(loader=FileSystemLoader(str(ASSETS)), autoescape=select_autoescape(["j2", "html"],
                      default_for_string=True, default=True), finalize=jinja_finalize, undefined=StrictUndefined,
                      trim_blocks=True,
                      lstrip_blocks=True)
    env.filters.update(f=_f, p=_p, href=page_href, count=_count)
    return env


def csp(*, scripts: bool, sql: bool = False, cdn: bool = False, inline_hashes: tuple[str, ...] = ()) -> str:
    """The pages' Content-Security-Policy: nothing from anywhere but this site (and, on the SQL page, the
    CDN's pinned DuckDB-WASM files), WebAssembly compiled, the DuckDB worker from a Blob URL, no inline script
    but the import map (by its hash). Inline styles are allowed: the SVG figures carry style attributes."""
    cdn_src = f" {CDN.rsplit('/npm', 1)[0]}" if cdn else ""
    parts = ["default-src 'none'", "img-src 'self' data:", "style-src 'self' 'unsafe-inline'", "base-uri 'none'",
             "form-action 'none'"]
    if sql:
        hashes = "".join(f" '{h}'" for h in inline_hashes)
        parts += [f"script-src 'self'{cdn_src} 'wasm-unsafe-eval'{hashes}", "worker-src blob:",
                  f"connect-src 'self' blob:{cdn_src}"]
    elif scripts:
        parts += ["script-src 'self'"]
    else:
        parts += ["script-src 'none'"]
    return "; ".join(parts)


def _examples(results: pd.DataFrame, reg: Registry) -> list[dict]:
    """The SQL box's three examples, on what this site holds (the test and the model with most results)."""
    test, model = "weat6", "all-minilm-l6-v2"
    if len(results):
        ok = results[results["status"] == "ok"]
        if len(ok):
            test = str(ok["test_id"].value_counts().index[0])
            model = str(ok["run_model"].value_counts().index[0])
    q = lambda s: s.replace("'", "''")      # noqa: E731
    return [
        {"title": "Our runs beside a paper's numbers",
         "sql": ("-- every printed effect size of a test and level we ran, beside ours (any model: the view\n"
                 "-- reproduction pairs the same model only, reproduction_loose the same family)\n"
                 "SELECT r.test_id, r.level, r.model, round(r.effect_size, 3) AS ours, p.paper, p.table_id,\n"
                 "       p.model AS published_model, p.value AS published\n"
                 "FROM results r JOIN published_results p\n"
                 "  ON p.test_id = r.test_id AND p.level = r.level AND p.statistic = 'effect_size' AND NOT p.missing\n"
                 "ORDER BY r.test_id, r.level, p.paper, p.model")},
        {"title": "One test across models",
         "sql": ("SELECT model, level, concepts_estimable, round(d_concepts, 3) AS d_concepts,\n"
                 "       round(concepts_low, 3) AS concepts_low, round(concepts_high, 3) AS concepts_high,\n"
                 "       concepts_reason, p_concepts, round(effect_size, 3) AS sample_d,\n"
                 "       round(papers_low, 3) AS papers_low, round(papers_high, 3) AS papers_high,\n"
                 "       p_value, p_at_floor, holm_significant, holm_family_size\n"
                 f"FROM results WHERE test_id = '{q(test)}' AND status = 'ok'\nORDER BY level, model")},
        {"title": "One model across languages",
         "sql": ("SELECT t.language, count(*) AS results, round(avg(r.effect_size), 3) AS mean_d,\n"
                 "       count(*) FILTER (WHERE r.holm_significant) AS holm_significant\n"
                 "FROM results r JOIN tests t ON t.id = r.test_id\n"
                 f"WHERE r.model = '{q(model)}' AND r.status = 'ok'\nGROUP BY t.language ORDER BY t.language")},
    ]


def write_site(db: str | Path | None, out: str | Path, *, registry: str | Path | None = None,
               runs: list[str] | None = None, model: str | None = None, all_runs: bool = False,
               duckdb_wasm: str | Path | None = None, figures: str = "results", dataset: str | None = None,
               download: bool | None = None) -> dict:
    """Write the site into ``out``; returns a summary (counts, the parquet tables and their rows). ``figures``:
    draw a test's forest plot where it has shown results (``results``), also where it has printed numbers only
    (``all``, slower: matplotlib draws each), or never (``none``). ``dataset``: a Hugging Face dataset repo id
    written by ``eatlas publish --push``, linked from each test page. Writes only files it wrote before (the
    folder's manifest), never the database or a registry file; every file is checked before the first is
    written."""
    from ..registry.base import load_registry

    if figures not in FIGURES:
        raise EatlasError(f"unknown figures choice {figures!r}", field="--figures", hint=f"one of {', '.join(FIGURES)}")
    if dataset is not None and not re.fullmatch(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*", dataset):
        raise EatlasError(f"not a Hugging Face dataset repo id: {dataset!r}", field="--dataset",
                          hint="ORG/NAME, as 'eatlas publish --push ORG/NAME' took it")
    out = Path(out)
    reg = load_registry(registry)
    wasm, why = _wasm(duckdb_wasm, download)
    db = Path(db) if db is not None else None
    src = _Source(db, reg, runs=runs, model=model, all_runs=all_runs, writes_to=out / "data")
    try:
        return _write(src, reg, out, db=db, wasm=wasm, figures=figures, dataset=dataset, wasm_why=why)
    finally:
        src.close()


def _wasm(duckdb_wasm, download: bool | None) -> tuple[dict[str, bytes] | None, str | None]:
    """DuckDB-WASM's files to copy into the site, or (None, why not): from ``duckdb_wasm`` (a folder; 'cdn': none,
    the SQL page loads them from jsDelivr), by default from the pinned npm tarballs in the EATlas cache, downloaded
    from the npm registry once (not when ``download`` is false, or None and EATLAS_OFFLINE=1)."""
    if duckdb_wasm is not None and str(duckdb_wasm) == "cdn":
        return None, "built with --duckdb-wasm cdn"
    if duckdb_wasm is not None:
        return read_wasm_files(duckdb_wasm), None
    folder, why = fetch_tarballs(allow_download=not offline() if download is None else download)
    if folder is None:
        return None, why
    try:
        return read_wasm_files(folder), None
    except EatlasError as e:            # a cache changed by hand: say so on the page, build the rest
        return None, e.message


def _prepare(out: Path, rels: list[str], *, db, registry_root):
    """The folder's record of what eatlas wrote there (eatlas.guard.Outputs), once every file about to be
    written has been checked: a site replaces only files it wrote itself and the user left unchanged, and is
    never written into a non-empty folder that no earlier site (or other eatlas output) was written into."""
    from ..guard import MANIFEST, Outputs

    target = Outputs(out, db=db, registry_root=registry_root, what="site")
    if out.is_dir() and not target.manifest.exists() and any(out.iterdir()):
        shown = sorted(p.name for p in out.iterdir())
        raise EatlasError(f"folder is not empty and holds no {MANIFEST} of an earlier site "
                          f"({', '.join(shown[:3])}{', ...' if len(shown) > 3 else ''}), so the site was not written",
                          file=str(out), hint="write the site into an empty or new folder")
    for rel in target.entries:
        if (out / rel).exists() and not target.owned(rel):
            raise EatlasError("changed since eatlas wrote it", file=str(out / rel),
                              hint="move it away, or write the site into a new folder")
    target.check_all(rels)
    return target


def _write(src: _Source, reg: Registry, out: Path, *, db, wasm, figures: str, dataset: str | None,
           wasm_why: str | None = None) -> dict:
    con = src.con
    table_sql = src.table_sql()
    results = src.frame("SELECT t.*, r.model AS run_model FROM (SELECT * FROM results SEMI JOIN "
                        "(SELECT * FROM _site_keys WHERE tbl = 'results') USING (run_id, test_id, level)) t "
                        "JOIN runs r USING (run_id)") if "results" in src.per_test else pd.DataFrame()
    runs_df = src.frame("SELECT * FROM _site_runs")
    published = src.frame("SELECT * FROM published_results ORDER BY paper, table_id, row_label, column_label") \
        if "published_results" in src.have else pd.DataFrame(columns=["test_id", "missing"])
    pair_view = next((v for v in ("reproduction_loose_all_runs", "reproduction_loose") if v in table_sql), None)
    pairs = src.frame(f"SELECT * FROM {table_sql[pair_view]}") if pair_view else pd.DataFrame()    # every run's

    n_pub = published[~published["missing"].astype(bool)].groupby("test_id").size().to_dict() if len(published) \
        else {}
    res_of: dict[str, list[dict]] = {}
    for r in results.to_dict("records") if len(results) else []:
        res_of.setdefault(str(r["test_id"]), []).append(r)
        for other in _list(r.get("also_as")):
            res_of.setdefault(other, []).append({**r, "computed_as": r["test_id"], "test_id": other})
    n_res = {t: sum(1 for r in rs if r.get("status") == "ok") for t, rs in res_of.items()}
    reg_frames = _registry_frames(reg, n_pub, n_res)

    local = wasm is not None
    tests = list(reg.tests.values())
    parquet = {name: f"data/{name}.parquet" for name in [*table_sql, *reg_frames]}
    arrow = {name: f"data/{name}.arrow" for name in parquet}
    asset_rels = ["assets/site.css", "assets/filter.js", "assets/sql.js", "assets/arrow-shim.mjs"]
    wasm_rels = [f"{WASM_DIR}/{f.name}" for f in WASM_FILES if f.bundle] + [f"{WASM_DIR}/README.txt"] if local \
        else []
    pages = ["index.html", "sql.html"] + [f"tests/{page_name(t.id)}" for t in tests]
    from .site_validity import criteria_index, criterion_page, page_rel  # the validity criteria's pages
    pages += [page_rel(c) for c in getattr(reg, "criteria", {})]
    validity = src.frame(f"SELECT v.*, r.model AS run_model FROM {table_sql['validity_results']} v JOIN runs r "
                         "USING (run_id)") if "validity_results" in table_sql else pd.DataFrame()
    validity_items = src.frame(f"SELECT * FROM {table_sql['validity_items']}") \
        if "validity_items" in table_sql and len(validity) else pd.DataFrame()
    stimuli_rels = [f"{STIMULI_DIR}/{t.id}.{fmt}" for t in tests for fmt in ("csv", "parquet")]
    rels = [*pages, *asset_rels, *parquet.values(), *arrow.values(), *wasm_rels, *stimuli_rels]
    target = _prepare(out, rels, db=db, registry_root=reg.root)
    before = set(target.entries)
    counts: dict[str, int] = {}
    columns: dict[str, list] = {}

    def put(rel: str, write) -> None:         # every file was checked by _prepare; the manifest is saved below
        target.write(rel, write, save=False, checked=True)

    n_figures = 0
    try:
        # ---- data/*.parquet
        for name, rel in parquet.items():
            if name in reg_frames:
                frame = reg_frames[name]
                con.register("_site_frame", frame)
                sql = "SELECT * FROM _site_frame"
            else:
                sql = _plain_columns(con, table_sql[name])
            put(rel, lambda tmp, sql=sql: con.execute(
                f"COPY ({sql}) TO {_sql_literal(Path(tmp))} (FORMAT parquet, COMPRESSION zstd)"))
            put(arrow[name], lambda tmp, sql=sql: _write_arrow(con, sql, Path(tmp)))
            counts[name] = con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0]
            columns[name] = [(c[0], str(c[1])) for c in con.execute(f"DESCRIBE {sql}").fetchall()]
            if name in reg_frames:
                con.unregister("_site_frame")
        # ---- assets
        for rel in asset_rels:
            data = (ASSETS / Path(rel).name).read_bytes()
            put(rel, lambda tmp, data=data: Path(tmp).write_bytes(data))
        if local:
            for f in (f for f in WASM_FILES if f.bundle):
                target.write(f"{WASM_DIR}/{f.name}", lambda tmp, data=wasm[f.name]: Path(tmp).write_bytes(data),
                             save=False, checked=True)
            target.write_text(f"{WASM_DIR}/README.txt", _wasm_readme(), save=False, checked=True)
        # ---- pages
        env = _env()
        generated = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        common = {"version": __version__, "generated": generated, "selection": src.selection,
                  "n_runs": len(runs_df), "n_results": int((results["status"] == "ok").sum()) if len(results) else 0,
                  "dataset": dataset}
        index_rows = _index_rows(reg, n_pub, n_res)
        page = env.get_template("index.html.j2").render(
            **common, root="", csp=csp(scripts=True), tests=index_rows, n_tests=len(index_rows),
            languages=_options(r["language"] for r in index_rows),
            bias_types=_options(r["bias_type"] or "none" for r in index_rows),
            source_kinds=_options(k for r in index_rows for k in r["source_kinds"]),
            runs=_runs_rows(runs_df, results), criteria=criteria_index(reg, validity))
        target.write_text("index.html", page, save=False, checked=True)
        target.write_text("sql.html", _sql_page(env, common, results, reg, counts, parquet, arrow, local, columns,
                                                wasm_why),
                          save=False, checked=True)
        pub_by_test = {t: g for t, g in published.groupby("test_id")} if len(published) else {}
        pairs_by_test = {t: g for t, g in pairs.groupby("published_test_id")} if len(pairs) else {}
        tmpl = env.get_template("test.html.j2")
        llm_iat = _llm_iat_rows(src, table_sql)
        for n, spec in enumerate(tests):
            ctx = _test_context(reg, spec, res_of.get(spec.id, []), pub_by_test.get(spec.id),
                                pairs_by_test.get(spec.id), figures=figures, by_run=False, dataset=dataset)
            ctx["llm_iat"] = llm_iat.get(spec.id, [])
            n_figures += ctx["forest"] is not None
            target.write_text(f"tests/{page_name(spec.id)}", tmpl.render(**common, **ctx, root="../",
                                                                        csp=csp(scripts=False)),
                              save=False, checked=True)
            frame = _stimuli_frame(reg, spec)
            put(f"{STIMULI_DIR}/{spec.id}.csv", lambda tmp, frame=frame: _write_csv(frame, Path(tmp)))
            put(f"{STIMULI_DIR}/{spec.id}.parquet", lambda tmp, frame=frame: frame.to_parquet(tmp, index=False))
            if n % 500 == 499:
                target.save()           # an interrupted site keeps the record of what it wrote
        from ..methods.validity import printed_correlations
        printed = printed_correlations(src.con, validity) if len(validity) else {}
        for cid in getattr(reg, "criteria", {}):
            target.write_text(page_rel(cid), criterion_page(env, common, reg, cid, validity, validity_items,
                                                            figures=figures != "none", csp=csp(scripts=False),
                                                            printed=printed),
                              save=False, checked=True)
        for rel in before - set(rels):
            target.forget(rel)          # a test page, table or DuckDB-WASM copy an earlier site wrote, gone now
    finally:
        target.save()
    return {"out": out, "tests": len(tests), "pages": len(pages), "tables": counts, "figures": n_figures,
            "duckdb_wasm": "local" if local else "cdn", "duckdb_wasm_why": wasm_why,
            "duckdb_wasm_bytes": sum(len(wasm[f.name]) for f in WASM_FILES if f.bundle) if local else 0,
            "selection": src.selection, "runs": len(runs_df),
            "results": common["n_results"]}


def _stimuli_frame(reg: Registry, spec) -> pd.DataFrame:
    """A test's stimuli as they enter the encoder, at every level that makes stimuli of its own (the table of
    ``eatlas export --format csv``, truncated with seed 0); a level that cannot be built is left out."""
    from ..registry.stimuli import build_test
    from .export import export_levels, rows_frame, stimulus_rows

    rows = []
    for lv in export_levels(spec):
        try:
            rows += stimulus_rows(reg, build_test(reg, spec, lv, seed=0))
        except EatlasError:
            continue
    return rows_frame(rows)


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    from ..guard import neutralise_csv

    neutralise_csv(frame).to_csv(path, index=False)


def _llm_iat_rows(src: _Source, table_sql: dict) -> dict[str, list[dict]]:
    """test id -> the LLM IAT results shown (each scoring's newest per model), as the report prints them."""
    if "llm_iat_results" not in table_sql:
        return {}
    from ..methods.llm_iat import LABELS, diagnostics

    df = src.frame(f"SELECT t.*, r.model AS run_model FROM {table_sql['llm_iat_results']} t JOIN runs r "
                   "USING (run_id) ORDER BY t.test_id, r.model, t.scoring, t.run_id")
    out: dict[str, list[dict]] = {}
    for r in df.to_dict("records"):
        d = diagnostics(r)
        out.setdefault(str(r["test_id"]), []).append(
            {"model": r["run_model"], "run_id": str(r["run_id"]), "label": LABELS.get(r["scoring"], r["scoring"]),
             "ok": r["status"] == "ok", "parsed": f"{r['n_parsed']} of {r['n_prompts']}", **d,
             "reason": r.get("reason")})
    return out


def _wasm_readme() -> str:
    lines = ["The files of this folder are copied unchanged from the npm packages named below, so that the SQL",
             "page of this site runs DuckDB-WASM with nothing fetched from the network. Each file's sha384 is the",
             "one eatlas records for it (eatlas/outputs/site.py, WASM_FILES).", ""]
    for f in (f for f in WASM_FILES if f.bundle):
        lines.append(f"{f.name}: {f.package}@{f.version} {f.path} {f.sha384}")
    lines += ["", f"@duckdb/duckdb-wasm@{DUCKDB_WASM_VERSION}: licence MIT (its package.json; "
              "https://github.com/duckdb/duckdb-wasm).",
              f"apache-arrow@{ARROW_VERSION}: licence Apache-2.0 (LICENSE.txt and NOTICE.txt here, from the package)."]
    return "\n".join(lines) + "\n"


def _options(values) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return sorted(counts.items())


# The index opens on the tests people know: Caliskan et al.'s WEATs, May et al.'s SEATs, then the other English
# tests, the other languages, the LLM IAT's prompt tests, and last the variants (a list as another source ran it).
CANONICAL_PAPERS = ("caliskan2017", "may2019")


def index_order(t) -> tuple:
    """The place of test spec ``t`` on the index (see CANONICAL_PAPERS): group, then its id in natural order
    (weat2 before weat10)."""
    paper = t.source.get("paper")
    if t.variant_of:
        group = 5
    elif t.methods and set(t.methods) == {"llm-iat"}:
        group = 4
    elif paper in CANONICAL_PAPERS:
        group = CANONICAL_PAPERS.index(paper)
    else:
        group = 2 if t.language == "en" else 3
    return group, natural_key(t.id)


def compares(reg: Registry, t) -> str:
    """What a test compares, from its sets' concepts: 'Flowers vs Insects × Pleasant vs Unpleasant'."""
    c = {r: reg.get_set(t.sets[r]).concept for r in ("x", "y", "a", "b")}
    return f"{c['x']} vs {c['y']} × {c['a']} vs {c['b']}"


def _index_rows(reg: Registry, n_pub: dict, n_res: dict) -> list[dict]:
    rows = []
    for t in sorted(reg.tests.values(), key=index_order):
        kinds = sorted({k for ref in t.sets.values() for k in reg.get_set(ref).source_kind})
        rows.append({"id": t.id, "version": t.version, "title": t.title, "compares": compares(reg, t),
                     "language": t.language, "bias_type": t.bias_type, "source": t.source.get("paper") or "",
                     "source_kinds": kinds, "license": t.license, "levels": list(t.levels),
                     "n_published": n_pub.get(t.id, 0), "n_results": n_res.get(t.id, 0),
                     "variant": bool(t.variant_of)})
    return rows


def _runs_rows(runs_df: pd.DataFrame, results: pd.DataFrame) -> list[dict]:
    out = []
    for r in runs_df.to_dict("records"):
        n = int((results["run_id"] == r["run_id"]).sum()) if len(results) else 0
        fin = r.get("finished_at")
        out.append({"run_id": r["run_id"], "method": r.get("method"), "model": r.get("model"),
                    "finished": str(fin)[:16] if fin is not None else "", "n_results": n,
                    "seed": r.get("seed"), "eatlas_version": r.get("eatlas_version")})
    return out


def _sql_page(env, common: dict, results: pd.DataFrame, reg: Registry, counts: dict[str, int],
              parquet: dict[str, str], arrow: dict[str, str], local: bool, columns: dict[str, list],
              why: str | None = None) -> str:
    base = f"./{WASM_DIR}/" if local else None     # import maps take './' paths, not bare ones
    url = {f.name: (base + f.name if local and f.bundle else f.url) for f in WASM_FILES if f.load}
    if local:       # the eh bundle only (BUNDLE_NOTE): a browser without WebAssembly exceptions is told so
        url["duckdb-mvp.wasm"], url["duckdb-browser-mvp.worker.js"] = url["duckdb-eh.wasm"], \
            url["duckdb-browser-eh.worker.js"]
    integrity = {url[f.name]: f.sha384 for f in WASM_FILES if f.load and (f.bundle or not local)}
    importmap = json.dumps({"imports": {"@duckdb/duckdb-wasm": url["duckdb-browser.mjs"],
                                        "apache-arrow": "./assets/arrow-shim.mjs"},
                            "integrity": {url["duckdb-browser.mjs"]: integrity[url["duckdb-browser.mjs"]]}},
                           indent=1)
    digest = "sha256-" + base64.b64encode(hashlib.sha256(importmap.encode("utf-8")).digest()).decode("ascii")
    config = {"bundles": {b: {"mainModule": url[f"duckdb-{b}.wasm"], "mainWorker": url[f"duckdb-browser-{b}.worker.js"]}
                          for b in ("mvp", "eh")},
              "integrity": integrity, "maxRows": MAX_ROWS, "ehOnly": local, "ehNote": BUNDLE_NOTE,
              "fix": None if local else _fix_hint(why),
              "arrow": {"url": url["Arrow.es2015.min.js"], "integrity": integrity[url["Arrow.es2015.min.js"]]},
              "tables": [{"name": n, "url": rel} for n, rel in arrow.items()]}
    tables = [{"name": n, "rows": counts.get(n, 0), "url": rel, "arrow": arrow[n], "columns": columns.get(n, [])}
              for n, rel in parquet.items()]
    return env.get_template("sql.html.j2").render(
        **common, root="", csp=csp(scripts=True, sql=True, cdn=not local, inline_hashes=(digest,)),
        importmap=importmap, config=config, examples=_examples(results, reg), tables=tables,
        local=local, duckdb_version=DUCKDB_WASM_VERSION, arrow_version=ARROW_VERSION, why=why,
        fix=None if local else _fix_hint(why))


def _fix_hint(why: str | None) -> str:
    """What the SQL page of a site without DuckDB-WASM says to do, should jsDelivr be out of reach."""
    return ("build the site again where the npm registry can be reached (eatlas site OUT downloads DuckDB-WASM "
            "into the EATlas cache once and copies it into the site), or from npm's tarballs: mkdir wasm && cd wasm "
            f"&& {NPM_PACK} && cd .. && eatlas site OUT --duckdb-wasm wasm")


def _test_context(reg: Registry, spec, rows: list[dict], published: pd.DataFrame | None,
                  pairs: pd.DataFrame | None, *, figures: str, by_run: bool, dataset: str | None) -> dict:
    from ..levels import LEVELS
    from ..registry.base import ROLES
    from ..registry.cite import citations
    from .publish import config_name

    sets = []
    for role in ROLES:
        s = reg.get_set(spec.sets[role])
        notes, diff = _split_difference(s.notes)
        src = {k: v for k, v in (s.source or {}).items() if v not in (None, "", [])}
        sets.append({"role": ROLE_NAMES[role], "key": role, "set": s, "notes": notes, "difference": diff,
                     "source": _source_pairs(reg, src), "license_note": s.raw.get("license_note")})
    samples = []
    for lv in spec.levels:
        level = LEVELS.get(lv)
        if level is None or level.expansion is None or level.span:
            continue
        try:
            template, roles = _sample(reg, spec, level.expansion)
        except EatlasError as e:
            samples.append({"level": lv, "error": e.message, "template": None, "roles": []})
            continue
        samples.append({"level": lv, "error": None, "template": template.ref,
                        "template_source": (template.source or {}).get("paper"),
                        "roles": [(ROLE_NAMES[r], reg.get_set(spec.sets[r]).concept, items) for r, items in roles],
                        "span_levels": [n for n, L in LEVELS.items()
                                        if L.span and L.expansion == lv and n in spec.levels]})
    keys: dict[str, str] = {}
    for lv in spec.levels:
        try:
            for k, bib in citations(reg, spec.id, lv):
                keys.setdefault(k, bib)
        except EatlasError:
            continue
    refs = [{"key": k, "bibtex": bib,
             "citation": (reg.sources.get(k) or {}).get("citation", "") if k in reg.sources else ""}
            for k, bib in keys.items()]
    pub_rows = [_no_nan(r) for r in published.to_dict("records")] if published is not None and len(published) else []
    pub_groups: dict[tuple, dict] = {}
    for r in pub_rows:
        g = pub_groups.setdefault((r.get("paper"), r.get("table_id")),
                                  {"paper": r.get("paper"), "table": r.get("table_id"), "notes": [], "rows": []})
        g["rows"].append(r)
        if r.get("note") and r["note"] not in g["notes"]:
            g["notes"].append(r["note"])
    forest = None
    if figures != "none" and (any(r.get("status") == "ok" for r in rows) or figures == "all" and pub_rows):
        res = pd.DataFrame(rows) if rows else pd.DataFrame()
        prs = pairs.assign(test_id=spec.id) if pairs is not None and len(pairs) else pd.DataFrame()
        forest = _forest(spec.id, res, prs, published, reg, by_run=by_run)
    paper = spec.source.get("paper")
    result_rows = []
    paired = _paired(pairs)
    for r in rows:
        r = _no_nan(r)
        result_rows.append({**r, "dropped_list": _dropped(r.get("dropped")), "notes_list": _list(r.get("notes")),
                            "mark": "*" if _true(r.get("holm_significant")) else "", **interval_cell(r),
                            "papers_interval": (f"[{_f(r.get('papers_low'), 2)}, {_f(r.get('papers_high'), 2)}]"
                                                if _num(r.get("papers_low")) is not None
                                                and _num(r.get("papers_high")) is not None else ""),
                            "published": paired.get((r.get("run_id"), r.get("level")), [])})
    result_rows.sort(key=lambda r: (list(spec.levels).index(r["level"]) if r["level"] in spec.levels else 99,
                                    str(r.get("run_model")), str(r.get("run_id"))))
    test_notes, test_diff = _split_difference(spec.notes)
    aliases = [", ".join(f"{k}: {v}" for k, v in a.items()) if isinstance(a, dict) else str(a)
               for a in (spec.aliases or [])]
    return {"spec": spec, "sets": sets, "samples": samples, "refs": refs, "published_groups": list(pub_groups.values()),
            "aliases": aliases,
            "n_published": sum(1 for r in pub_rows if not r.get("missing")),
            "results": result_rows, "forest": forest, "figures": figures, "config": config_name(spec.id),
            "what_to_report": WHAT_TO_REPORT, "floor_line": FLOOR_LINE,
            "paper": paper, "paper_citation": (reg.sources.get(paper) or {}).get("citation", "") if paper else "",
            "test_notes": test_notes, "test_difference": test_diff,
            "source": _source_pairs(reg, spec.source),
            "sql_href": "../sql.html#" + quote("SELECT * FROM results WHERE test_id = '" + spec.id + "'", safe=""),
            "stimuli_files": {fmt: f"../{STIMULI_DIR}/{quote(spec.id)}.{fmt}" for fmt in ("csv", "parquet")}}


def _source_pairs(reg: Registry, source: dict | None) -> list[tuple[str, str]]:
    """Where a set or test comes from, in words (as ``eatlas show`` says it), as (what, text) pairs."""
    from ..registry.cite import source_lines

    out = []
    for line in source_lines(reg, source):
        k, _, v = line.partition(": ")
        out.append((k, v))
    return out


def _no_nan(row: dict) -> dict:
    """A record with every NaN (pandas' missing value) as None, so that a page prints nothing (or '—' with its
    reason), never 'nan'."""
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}


def _paired(pairs: pd.DataFrame | None) -> dict[tuple, list[dict]]:
    """(run_id, level) -> the printed effect sizes set beside that result (rows of reproduction_loose), the same
    model's first: what the test page's 'published' column shows."""
    out: dict[tuple, list[dict]] = {}
    if pairs is None or not len(pairs):
        return out
    for r in pairs.to_dict("records"):
        r = _no_nan(r)
        if r.get("published_effect_size") is None:
            continue
        out.setdefault((r.get("run_id"), r.get("level")), []).append(
            {"value": r["published_effect_size"], "paper": r.get("paper"), "table": r.get("table_id"),
             "model": r.get("published_model"), "same": r.get("match") == "same_model"})
    for v in out.values():
        v.sort(key=lambda p: (not p["same"], str(p["paper"]), str(p["table"])))
    return out


def _sample(reg: Registry, spec, expansion: str) -> tuple:
    """The template of a test's ``expansion`` and the first SAMPLE sentences of each set, expanded as
    eatlas.registry.stimuli.build_test expands them (only as many items as the sample needs: a site of 10,000
    tests would spend most of its time expanding every sentence)."""
    from ..registry.base import ROLES
    from ..registry.checks import template_ok
    from ..registry.templates import expand_item

    if expansion not in spec.expansions:
        raise EatlasError(f"test {spec.id} has no {expansion} expansion", obj=f"test {spec.id}", field="expansions")
    exp = spec.expansions[expansion]
    tmpl = reg.get_template(exp.template)
    template_ok(tmpl)
    roles = []
    for r in ROLES:
        sset = reg.get_set(spec.sets[r])
        variables = {**sset.template_vars, **exp.vars}
        out: list[str] = []
        for n, it in enumerate(sset.items):
            out += [e.text for e in expand_item(it, n, tmpl, family=exp.families.get(r), variables=variables)]
            if len(out) >= SAMPLE:
                break
        roles.append((r, out[:SAMPLE]))
    return tmpl, roles


def _forest(test_id: str, res: pd.DataFrame, pairs: pd.DataFrame, published: pd.DataFrame | None, reg: Registry,
            *, by_run: bool) -> dict | None:
    """The test's forest plot: the report's (eatlas.outputs.report.forest_plots), with every printed effect size
    of the test that pairs with no shown result marked too; as accessible SVG."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    from .report import forest_plots

    others = pd.DataFrame()
    if published is not None and len(published):
        p = published[(published["statistic"] == "effect_size") & ~published["missing"].astype(bool)
                      & published["level"].notna()
                      & ~published["column_label"].fillna("").str.startswith("Level 2")].copy()
        if len(pairs):
            paired = set(zip(pairs["paper"], pairs["table_id"], pairs["row_label"], pairs["column_label"]))
            p = p[[k not in paired for k in zip(p["paper"], p["table_id"], p["row_label"], p["column_label"])]]
        p["published_effect_size"] = pd.to_numeric(p["value"], errors="coerce")
        others = p[np.isfinite(p["published_effect_size"])]
    ok = res[res["status"] == "ok"] if len(res) else res
    f = forest_plots(ok, pairs, reg, by_run=by_run, others=others)
    if f is None:
        return None
    desc = _forest_desc(test_id, ok if len(ok) else pd.DataFrame(columns=["status"]), others, pairs)
    svgs = [accessible_svg(part["svg"], f"forest-{i}", f"Forest plot of {test_id}", desc)
            for i, part in enumerate(f["figures"])]
    for part in f["figures"]:
        part["fig"].clear()
    return {**{k: v for k, v in f.items() if k != "figures"}, "svgs": svgs, "desc": desc}
