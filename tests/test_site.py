"""`eatlas site OUT`: the static site (eatlas.outputs.site), checked on its files and in headless Chromium.

Two sites are written once per module: the real registry with a database holding one real run of the default
model (weat6, word level) and two small hand-made runs that pair with May et al.'s printed numbers (so the
reproduction view has rows), with DuckDB-WASM copied from the npm tarballs when npm is at hand (else from the CDN,
and the SQL-box tests skip); and a small registry whose items and notes hold markup, with no database. Writing the
full site takes about 15 s on 2 cores (623 test pages); the browser tests reuse it.
"""
from __future__ import annotations

import datetime as dt
import html
import json
import os
import re
import shutil
import time
from pathlib import Path

import duckdb
import pytest

from eatlas.cli import main
from eatlas.errors import EatlasError
from eatlas.outputs import site as site_mod
from eatlas.registry import load_registry
from eatlas.store import write_run
from tests import browser
from tests.conftest import MiniRegistry, make_set, make_test

NO_BROWSER = browser.why_no_browser()
needs_browser = pytest.mark.skipif(NO_BROWSER is not None, reason=NO_BROWSER or "")
ARTIFACTS = Path(os.environ.get("EATLAS_ARTIFACTS") or Path(__file__).parent / "artifacts")
SCRIPT = "<script>alert('eatlas')</script>"
IMG = '<img src="x" onerror="window.eatlasPwned = 1">'


# ---------------------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def wasm_dir() -> Path | None:
    """A folder holding DuckDB-WASM's pinned npm tarballs (``npm pack``; tests never reach the network), or None:
    EATLAS_TEST_DUCKDB_WASM names it (.ci/run packs the tarballs there before the tests; an earlier `eatlas site`
    keeps them in ~/.cache/eatlas/npm)."""
    given = os.environ.get("EATLAS_TEST_DUCKDB_WASM")
    return Path(given) if given else None


def _with_env(name: str, value: str, fn):
    """``fn()`` with the environment variable ``name`` set to ``value`` (restored after)."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        return fn()
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _glove_run(db: Path, reg, minute: int, cells: dict) -> str:
    """A run of family glove standing for May et al.'s CBoW model (as tests/test_report.py), so the reproduction
    view pairs it with May et al.'s Table 4."""
    rid = f"weat-glove-{minute:02d}-0000-0000-0000-000000000000"
    t = dt.datetime(2026, 11, 22, 10, minute)
    write_run(db, {"run_id": rid, "method": "weat", "model": "glove-840b-cbow", "model_fingerprint": "fp",
                   "model_family": "glove", "seed": 0, "alpha": 0.01, "started_at": t, "finished_at": t,
                   "family_source": "loader", "model_name": "GloVe", "model_corpus": "Common Crawl (840B tokens)",
                   "model_dimension": 300},
              [{"run_id": rid, "test_id": tid, "test_version": "1.0.0", "level": lv, "model": "glove-840b-cbow",
                "status": "ok", "effect_size": es, "p_value": p, "holm_significant": p < 1e-3,
                "ci_low": es - 0.3, "ci_high": es + 0.3, "ci_level": 0.95, "ci_method": "inversion",
                "dropped": {"x": ["zinnia"]} if tid == "weat1" else {}}
               for (tid, lv), (es, p) in cells.items()], reg)
    return rid


@pytest.fixture(scope="module")
def full(tmp_path_factory, wasm_dir):
    """The real registry's site: a real run of the default model and two glove runs (the older one replaced by
    the newer in the default selection)."""
    tmp = tmp_path_factory.mktemp("site")
    db = tmp / "eatlas.duckdb"
    assert main(["--db", str(db), "run", "--tests", "weat6", "--levels", "word", "--quiet"]) == 0
    reg = load_registry()
    _glove_run(db, reg, 1, {("weat1", "word"): (0.2, 0.5)})
    newest = _glove_run(db, reg, 2, {("weat1", "word"): (1.45, 1e-5), ("weat3", "word"): (1.3, 1e-4)})
    out = tmp / "out"
    # the default build, as a user's: DuckDB-WASM from the pinned tarballs in the EATlas cache (put there from
    # wasm_dir: downloads stay off in the tests), copied into the site
    cache, args = tmp / "cache", ["--db", str(db), "site", str(out)]
    tarballs = {t.file: next(wasm_dir.rglob(t.file), None) for t in site_mod.NPM_TARBALLS} if wasm_dir else {}
    if tarballs and all(tarballs.values()):
        (cache / "npm").mkdir(parents=True)
        for name, path in tarballs.items():
            shutil.copy(path, cache / "npm" / name)
    elif wasm_dir:                      # an unpacked folder: as --duckdb-wasm takes it
        args += ["--duckdb-wasm", str(wasm_dir)]
    started = time.perf_counter()
    assert _with_env("EATLAS_CACHE", str(cache), lambda: main(args)) == 0
    return {"db": db, "out": out, "reg": reg, "glove": newest, "local": wasm_dir is not None,
            "seconds": time.perf_counter() - started}


@pytest.fixture(scope="module")
def marked(tmp_path_factory):
    """A small registry whose item, concept, notes and title hold markup, and its site (no database, built offline
    without DuckDB-WASM: CDN mode)."""
    r = MiniRegistry(tmp_path_factory.mktemp("reg") / "reg")
    r.add_set(make_set("roses", ["rose", "tulip", "daisy", SCRIPT], notes=f"Notes with {IMG}. DIFFERENCE: "
                       f"the last item is {SCRIPT}"))
    r.add_set(make_set("bugs", ["ant", "moth", "wasp", "flea"], concept=f"Bugs {IMG}"))
    r.add_set(make_set("good", [{"text": t, "kind": "adjective"} for t in ("happy", "gentle", "lucky", "honest")]))
    r.add_set(make_set("bad", [{"text": t, "kind": "adjective"} for t in ("ugly", "rotten", "sick", "evil")]))
    r.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", title=f"Title {SCRIPT}"))
    r.add_test(make_test("t+2", "roses@1.0.0", "bugs@1.0.0", "bad@1.0.0", "good@1.0.0"))
    r.sync()
    out = r.root.parent / "site"
    # built offline with no DuckDB-WASM at hand (an empty cache): the SQL page says what bundles it
    assert _with_env("EATLAS_CACHE", str(r.root.parent / "empty-cache"), lambda: main(
        ["--registry", str(r.root), "--db", str(r.root.parent / "none.duckdb"), "site", str(out), "--offline"])) == 0
    return {"root": r.root, "out": out}


def _duck(db: Path, sql: str):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


# ---------------------------------------------------------------------------------------------- the files

def test_index_lists_every_test_and_each_has_a_page(full):
    out, reg = full["out"], full["reg"]
    html = (out / "index.html").read_text(encoding="utf-8")
    linked = re.findall(r'<a href="tests/([^"]+)\.html">([^<]+)</a>', html)
    assert [t for _, t in linked] == [t.id for t in sorted(reg.tests.values(), key=site_mod.index_order)]
    assert len(linked) == len(reg.tests) > 600
    for tid in reg.tests:
        assert (out / "tests" / site_mod.page_name(tid)).is_file(), tid
    assert (out / "tests" / "weat+occ.html").is_file() and '<a href="tests/weat%2Bocc.html">weat+occ</a>' in html
    # the plain list needs no script: every row is in the HTML, the filters are hidden until filter.js shows them
    assert '<form id="filters" class="filters" hidden' in html


def test_the_tables_beside_the_pages_hold_the_runs_results(full):
    out, db = full["out"], full["db"]
    con = duckdb.connect()
    try:
        pq = lambda name: con.execute(f"SELECT * FROM '{out}/data/{name}.parquet'").fetchdf()   # noqa: E731
        res = pq("results")
        # the default selection: the newest result per model, test and level (the older glove run's weat1 is
        # replaced by the newer one's)
        want = _duck(db, "SELECT run_id, test_id, level, effect_size FROM results QUALIFY row_number() OVER "
                         "(PARTITION BY model, test_id, level ORDER BY run_id DESC) = 1 ORDER BY ALL")
        got = sorted(res[["run_id", "test_id", "level", "effect_size"]].itertuples(index=False, name=None))
        assert got == sorted(want) and len(got) == 3
        assert set(pq("runs")["run_id"]) == {r[0] for r in want}
        repro = pq("reproduction")
        assert len(repro) == _duck(db, f"SELECT count(*) FROM reproduction WHERE run_id = '{full['glove']}'")[0][0] > 0
        assert len(pq("published_results")) == _duck(db, "SELECT count(*) FROM published_results")[0][0]
        assert len(pq("tests")) == len(full["reg"].tests)
        # the SQL page's Arrow copies hold the same rows
        for name in ("results", "reproduction", "published_results"):
            import pyarrow as pa
            with pa.OSFile(str(out / "data" / f"{name}.arrow")) as f:
                assert pa.ipc.open_stream(f).read_all().num_rows == len(pq(name)), name
    finally:
        con.close()
    manifest = json.loads((out / ".eatlas-manifest.json").read_text())["files"]
    assert {"index.html", "sql.html", "data/results.parquet", "tests/weat1.html"} <= set(manifest)


def test_a_test_page_shows_sets_sentences_published_numbers_results_and_citations(full):
    page = (full["out"] / "tests" / "weat1.html").read_text(encoding="utf-8")
    for text in ("X (target): Flowers", "aster", "B (attribute): Unpleasant", "may2019_bleached@1.0.0",
                 "This is an aster.", "may2019, Table 4", "@article{caliskan2017", "eatlas cite weat1",
                 "<code>weat1</code>", "glove-840b-cbow", "+1.45", "x: zinnia"):
        assert text in re.sub(r"</?span[^>]*>", "", page), text
    # the forest plot: the report's figure, with a title and a description for screen readers
    assert re.search(r'<svg[^>]* role="img" aria-labelledby="forest-0-title forest-0-desc"', page)
    assert '<desc id="forest-0-desc">Forest plot of test weat1' in page
    # every printed effect size of the test is on it: May et al.'s for the model our glove run is recognised as
    # (a diamond: the same model, or the same family; eatlas.encoders.identity.match) and theirs for other models
    # (x, report.forest_plots' ``others``)
    assert re.search(r'id="forest-published-same_(model|family)"', page) and 'id="forest-published-other"' in page
    assert "Published by may2019 for other models at level word: 6 value(s)" in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)[1]
    assert "script-src 'none'" in html.unescape(csp) and "default-src 'none'" in html.unescape(csp)


def test_a_test_page_sets_the_papers_number_beside_ours_downloads_its_stimuli_and_prints_no_nan(full):
    """The results table has a 'published, same model' column (the glove run's weat1 beside May et al.'s CBoW);
    the page links its stimuli, written into the site as CSV and parquet at every level; no table cell says
    'nan' (weat6's page printed 68 before)."""
    out = full["out"]
    page = (out / "tests" / "weat1.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", " ", page)
    assert "published (same model or family)" in text
    row = re.search(r'<tr[^>]*><td class="id">glove-840b-cbow</td>.*?</tr>', page, re.S)[0]
    assert re.search(r'class="pub"[^>]*>\+1\.500( \(family\))? <span class="meta">may2019</span>', row), row
    assert '<a href="../data/stimuli/weat1.csv" download>CSV</a>' in page
    frame = __import__("pandas").read_csv(out / "data" / "stimuli" / "weat1.csv")
    word = frame[frame["level"] == "word"]
    reg = full["reg"]
    assert list(word[word["role"] == "X"]["text"]) == [i.text for i in reg.get_set(reg.tests["weat1"].sets["x"]).items]
    assert {"word", "sent"} <= set(frame["level"])
    assert len(__import__("pandas").read_parquet(out / "data" / "stimuli" / "weat1.parquet")) == len(frame)
    for tid in ("weat6", "weat1"):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", (out / "tests" / f"{tid}.html").read_text(encoding="utf-8"), re.S)
        assert not [c for c in cells if re.sub(r"<[^>]+>", "", c).strip().lower() in ("nan", "none")], tid
    # the source in words, never a Python structure
    assert "{&#39;" not in page and "source</dt><dd>Caliskan et al. (2017)" in page


def test_the_index_opens_on_the_canonical_tests_saying_what_they_compare(full):
    page = (full["out"] / "index.html").read_text(encoding="utf-8")
    ids = re.findall(r'<td><a href="tests/[^"]+">([^<]+)</a></td>', page)
    assert ids[:10] == [f"weat{i}" for i in range(1, 11)]
    may = [t for t in full["reg"].tests.values() if t.source.get("paper") == "may2019" and not t.variant_of]
    assert set(ids[10:10 + len(may)]) == {t.id for t in may}
    tests = full["reg"].tests
    llm = [n for n, i in enumerate(ids) if tests[i].methods == ("llm-iat",)]
    english = [n for n, i in enumerate(ids) if tests[i].language == "en" and not tests[i].variant_of
               and tests[i].methods != ("llm-iat",)]
    variants = [n for n, i in enumerate(ids) if tests[i].variant_of]
    assert llm and max(english) < min(llm) and max(llm) < min(variants)
    assert '<span class="compares">Flowers vs Insects × Pleasant vs Unpleasant</span>' in page


def test_markup_in_the_registry_is_text_on_every_page(marked):
    out = marked["out"]
    for rel in ("index.html", "tests/t1.html", "tests/t+2.html"):
        html = (out / rel).read_text(encoding="utf-8")
        assert "<script>alert" not in html and "<img src=\"x\"" not in html, rel
    page = (out / "tests" / "t1.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(&#39;eatlas&#39;)&lt;/script&gt;" in page
    assert "Bugs &lt;img src=&#34;x&#34; onerror=&#34;window.eatlasPwned = 1&#34;&gt;" in page
    assert '<p class="difference"><strong>Difference:</strong> the last item is &lt;script&gt;' in page


def test_the_site_never_overwrites_what_eatlas_did_not_write(marked, tmp_path, capsys):
    root = str(marked["root"])
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert main(["--registry", root, "--db", str(tmp_path / "none.duckdb"), "site", str(foreign)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "folder is not empty" in err and "notes.txt" in err
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    # a site written again replaces its own files; a page the user edited is refused, and nothing is written
    again = tmp_path / "again"
    shutil.copytree(marked["out"], again)
    assert main(["--registry", root, "--db", str(tmp_path / "none.duckdb"), "site", str(again)]) == 0
    capsys.readouterr()
    (again / "tests" / "t1.html").write_text("edited")
    before = (again / "index.html").stat().st_mtime_ns
    assert main(["--registry", root, "--db", str(tmp_path / "none.duckdb"), "site", str(again)]) == 2
    err = capsys.readouterr().err
    assert "changed since eatlas wrote it" in err and "t1.html" in err
    assert (again / "index.html").stat().st_mtime_ns == before
    assert main(["--registry", root, "site", str(tmp_path / "x"), "--dataset", 'a/b" onclick="x']) == 2
    assert "not a Hugging Face dataset repo id" in capsys.readouterr().err and not (tmp_path / "x").exists()
    # the selection options need a database
    assert main(["--registry", root, "--db", str(tmp_path / "none.duckdb"), "site", str(tmp_path / "x"),
                 "--model", "m"]) == 2
    assert "no such database" in capsys.readouterr().err


def test_a_local_duckdb_wasm_folder_is_checked_file_by_file(tmp_path, wasm_dir):
    with pytest.raises(EatlasError, match="no duckdb-browser.mjs of @duckdb/duckdb-wasm@1.32.0 under it") as e:
        site_mod.read_wasm_files(tmp_path)
    assert "npm pack @duckdb/duckdb-wasm@1.32.0 apache-arrow@17.0.0" in e.value.render()
    (tmp_path / "duckdb-browser.mjs").write_text("export const tampered = 1;")
    with pytest.raises(EatlasError, match="duckdb-browser.mjs there is not @duckdb/duckdb-wasm@1.32.0's"):
        site_mod.read_wasm_files(tmp_path)


def test_the_pinned_hashes_are_those_of_the_npm_tarballs(wasm_dir):
    """WASM_FILES records each file's sha384; recomputed here from the tarballs npm gives (skipped without npm).
    The arrow shim hands on every name the DuckDB bundle takes from apache-arrow."""
    if wasm_dir is None:
        pytest.skip("no npm tarballs of DuckDB-WASM (EATLAS_TEST_DUCKDB_WASM: a folder 'npm pack' wrote, as .ci/run "
                    "prepares): the hashes cannot be recomputed here")
    files = site_mod.read_wasm_files(wasm_dir)          # checks each hash
    assert {f.name: site_mod.sri(files[f.name]) for f in site_mod.WASM_FILES} == \
        {f.name: f.sha384 for f in site_mod.WASM_FILES}
    for t in site_mod.NPM_TARBALLS:                     # the sha512 the build checks a downloaded tarball against
        path = next(wasm_dir.rglob(t.file), None)
        if path is not None:
            assert site_mod._integrity(path.read_bytes()) == t.integrity, t.file
    bundle = files["duckdb-browser.mjs"].decode("utf-8")
    spaces = re.findall(r'import\*as (\w+) from"apache-arrow"', bundle)
    assert spaces and not re.search(r'import\{[^}]*\}from"apache-arrow"', bundle)
    used = {m for ns in spaces for m in re.findall(rf"(?<![\w.$]){ns}\.([A-Za-z_]\w*)", bundle)}
    shim = (site_mod.ASSETS / "arrow-shim.mjs").read_text()
    exported = set(re.findall(r"\b([A-Za-z_]\w*)\b", shim[shim.index("export const {"):shim.index("} = A;")]))
    assert used - {"ts"} <= exported, used - exported


def test_the_default_build_carries_duckdb_wasm_and_loads_nothing_from_elsewhere(full):
    """Built where the pinned tarballs are at hand (the EATlas cache), the site carries DuckDB-WASM's eh bundle and
    apache-arrow (about 35 MB), and its SQL page names no other host."""
    if not full["local"]:
        pytest.skip("no npm tarballs of DuckDB-WASM (EATLAS_TEST_DUCKDB_WASM, as .ci/run prepares)")
    wasm = full["out"] / site_mod.WASM_DIR
    names = {p.name for p in wasm.iterdir()}
    assert {f.name for f in site_mod.WASM_FILES if f.bundle} | {"README.txt"} == names
    assert "duckdb-mvp.wasm" not in names
    size = sum(p.stat().st_size for p in wasm.iterdir())
    assert 30e6 < size < 40e6, size
    page = (full["out"] / "sql.html").read_text(encoding="utf-8")
    assert "cdn.jsdelivr.net" not in page and "wasm-note" not in page


def test_a_site_built_offline_without_the_tarballs_says_what_bundles_them(marked, no_network):
    """No copy in the cache and downloads off: the site is written, its SQL page says (before any query) which
    command bundles DuckDB-WASM; fetching the tarballs asks nothing of the network."""
    page = (marked["out"] / "sql.html").read_text(encoding="utf-8")
    note = html.unescape(re.search(r'<p class="note" id="wasm-note">(.*?)</p>', page, re.S).group(1))
    assert site_mod.NPM_PACK in " ".join(note.split()) and "--duckdb-wasm wasm" in note
    assert not (marked["out"] / site_mod.WASM_DIR).exists()
    folder, why = site_mod.fetch_tarballs(allow_download=False)
    assert folder is None and "downloads are off" in why


# ---------------------------------------------------------------------------------------------- in Chromium

@pytest.fixture(scope="module")
def chrome(tmp_path_factory):
    if NO_BROWSER:
        pytest.skip(NO_BROWSER)
    d = browser.chrome(tmp_path_factory.mktemp("profile"))
    yield d
    d.quit()


def _shot(driver, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)        # kept for a person to look at
    driver.save_screenshot(str(ARTIFACTS / name))


def _visible_rows(driver) -> int:
    return driver.execute_script("return Array.from(document.querySelectorAll('#tests tbody tr'))"
                                 ".filter(r => !r.hidden).length")


@needs_browser
def test_the_index_lists_every_test_and_filters_by_language(full, chrome):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    reg = full["reg"]
    with browser.Served(full["out"]) as served:
        browser.console(chrome), browser.requested(chrome)
        chrome.get(served.url + "index.html")
        WebDriverWait(chrome, 30).until(lambda d: d.find_element(By.ID, "filters").is_displayed())
        # with scripts, a list longer than 300 shows its first 300 rows and a button for the rest
        assert _visible_rows(chrome) == 300
        assert chrome.find_element(By.ID, "count").text == f"{len(reg.tests)} test(s), the first 300 shown"
        chrome.find_element(By.ID, "show-all").click()
        WebDriverWait(chrome, 10).until(lambda d: _visible_rows(d) == len(reg.tests))
        assert not chrome.find_element(By.ID, "show-all").is_displayed()
        Select(chrome.find_element(By.ID, "f-language")).select_by_value("hi")
        hindi = [t for t in reg.tests.values() if t.language == "hi"]
        WebDriverWait(chrome, 10).until(lambda d: _visible_rows(d) == len(hindi))
        assert chrome.find_element(By.ID, "count").text == f"{len(hindi)} of {len(reg.tests)} test(s)"
        shown = chrome.execute_script("return Array.from(document.querySelectorAll('#tests tbody tr'))"
                                      ".filter(r => !r.hidden).map(r => r.cells[0].textContent)")
        assert shown == [t.id for t in sorted(hindi, key=site_mod.index_order)]
        # the filter is in the address, so the filtered list can be linked
        assert "language=hi" in chrome.current_url
        # text search by keyboard: the search box is a real input
        box = chrome.find_element(By.ID, "f-text")
        box.send_keys("hi_weat1")
        want = [t.id for t in hindi if "hi_weat1" in t.id]
        WebDriverWait(chrome, 10).until(lambda d: _visible_rows(d) == len(want))
        assert 1 <= len(want) < len(hindi)
        chrome.find_element(By.ID, "f-reset").click()
        WebDriverWait(chrome, 10).until(lambda d: _visible_rows(d) == 300)
        _shot(chrome, "site-index.png")
        assert browser.problems(browser.console(chrome)) == []
        assert [u for u in browser.requested(chrome) if u.startswith("http") and not u.startswith(served.url)] == []


@needs_browser
def test_a_test_page_in_the_browser_shows_its_sets_and_a_published_number(full, chrome):
    from selenium.webdriver.common.by import By

    with browser.Served(full["out"]) as served:
        browser.console(chrome)
        chrome.get(served.url + "tests/weat1.html")
        x_items = [td.text for td in chrome.find_elements(By.CSS_SELECTOR, "#set-x td.item")]
        assert x_items[:3] == ["aster", "clover", "hyacinth"] and len(x_items) == 25
        cbow = chrome.find_elements(By.XPATH, "//table[contains(@class, 'published')]//tr[td[1]='CBoW' and "
                                              "td[2]='word']/td[6]")
        assert [c.text for c in cbow] == ["1.50"]
        assert chrome.find_element(By.CSS_SELECTOR, "#fig-forest svg[role=img]").is_displayed()
        _shot(chrome, "site-test-weat1.png")
        assert browser.problems(browser.console(chrome)) == []


@needs_browser
def test_registry_markup_shows_as_text_and_runs_nothing(marked, chrome):
    from selenium.webdriver.common.by import By

    with browser.Served(marked["out"]) as served:
        browser.console(chrome), browser.requested(chrome)
        chrome.get(served.url + "tests/t1.html")        # an alert would make every later command fail
        items = [td.text for td in chrome.find_elements(By.CSS_SELECTOR, "#set-x td.item")]
        assert items[-1] == SCRIPT
        assert chrome.find_element(By.CSS_SELECTOR, "#set-y h3").text == f"Y (target): Bugs {IMG}"
        assert SCRIPT in chrome.find_element(By.TAG_NAME, "h1").text
        assert chrome.execute_script("return window.eatlasPwned === undefined && document.scripts.length === 0")
        chrome.get(served.url + "index.html")
        assert SCRIPT in chrome.find_element(By.ID, "tests").text
        # the SQL page of a CDN site loads nothing from the CDN (or anywhere) before a query is run
        chrome.get(served.url + "sql.html")
        assert chrome.execute_script("return document.documentElement.dataset.sqlReady") == "1"
        assert browser.problems(browser.console(chrome)) == []
        assert [u for u in browser.requested(chrome) if u.startswith("http") and not u.startswith(served.url)] == []


@needs_browser
def test_offline_the_sql_box_of_a_site_without_duckdb_wasm_says_what_to_do(marked, chrome):
    with browser.Served(marked["out"]) as served:
        browser.console(chrome)
        chrome.get(served.url + "sql.html")
        status = _query(chrome, "SELECT 1")
        assert status.startswith("Error: DuckDB-WASM could not be loaded from jsDelivr")
        assert site_mod.NPM_PACK in status and "eatlas site OUT --duckdb-wasm wasm" in status


def _query(driver, sql: str) -> str:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("document.getElementById('sql').value = arguments[0]", sql)
    driver.find_element(By.ID, "run").click()
    WebDriverWait(driver, 180).until(lambda d: re.match(r"(\d+ row\(s\) in|Error)",
                                                         d.find_element(By.ID, "status").text))
    return driver.find_element(By.ID, "status").text


@needs_browser
def test_the_sql_box_counts_results_and_reproduction_offline(full, chrome):
    if not full["local"]:
        pytest.skip("no local DuckDB-WASM (npm is not available): the SQL box would need the CDN")
    from selenium.webdriver.common.by import By

    db, glove = full["db"], full["glove"]
    n_results = len(_duck(db, "SELECT 1 FROM results QUALIFY row_number() OVER (PARTITION BY model, test_id, level "
                              "ORDER BY run_id DESC) = 1"))
    n_repro = _duck(db, f"SELECT count(*) FROM reproduction WHERE run_id = '{glove}'")[0][0]
    with browser.Served(full["out"]) as served:
        browser.console(chrome), browser.requested(chrome)
        chrome.get(served.url + "sql.html")
        assert _query(chrome, "SELECT * FROM results").startswith(f"{n_results} row(s) in ")
        assert len(chrome.find_elements(By.CSS_SELECTOR, "#result tbody tr")) == n_results
        assert _query(chrome, "SELECT * FROM reproduction").startswith(f"{n_repro} row(s) in ")
        cells = {td.text for td in chrome.find_elements(By.CSS_SELECTOR, "#result tbody td")}
        assert {"may2019", "glove-840b-cbow"} <= cells
        # a wide result scrolls sideways: every header on one line, no word broken letter by letter (the height of
        # a cell's own text, not of its box, which a long text elsewhere in the row makes taller)
        heads = chrome.execute_script(
            "const line = parseFloat(getComputedStyle(document.body).lineHeight) || 20;"
            "const high = c => { const r = document.createRange(); r.selectNodeContents(c);"
            "  return r.getBoundingClientRect().height; };"
            "return Array.from(document.querySelectorAll('#result thead th, #result td.short'))"
            ".filter(c => high(c) > 1.5 * line).map(c => c.textContent)")
        assert heads == []
        assert chrome.execute_script("const r = document.getElementById('result');"
                                     "return r.scrollWidth > r.clientWidth")
        _shot(chrome, "site-sql-wide.png")
        # the query box reads nothing but its tables
        assert _query(chrome, "SELECT * FROM read_csv('data/x.csv')").startswith("Error")
        chrome.find_element(By.CSS_SELECTOR, "button.example[data-example='1']").click()
        time.sleep(0.2)
        assert re.match(r"\d+ row\(s\) in", _query(chrome, chrome.find_element(By.ID, "sql").get_property("value")))
        _shot(chrome, "site-sql.png")
        problems = [m for m in browser.problems(browser.console(chrome)) if "x.csv" not in m]
        assert problems == []
        outside = [u for u in browser.requested(chrome) if u.startswith("http") and not u.startswith(served.url)]
        assert outside == []


def test_a_test_page_shows_the_sample_d_with_its_interval_the_p_floor_and_the_holm_family(full):
    """weat6's page (the default model's real run): the sample d beside the papers' interval, p papers as '< 1e-05'
    where it is at its floor, the Holm mark with its family (the run's results), and a stylesheet that never breaks
    an id or a number inside a word."""
    from tests.cli_helpers import rows
    page = (full["out"] / "tests" / "weat6.html").read_text(encoding="utf-8")
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split()).replace("&lt;", "<").replace("&#39;", "'")
    es, lo, hi, p, floor, size = rows(full["db"], "SELECT effect_size, papers_low, papers_high, p_value, p_at_floor, "
                                      "holm_family_size FROM results WHERE test_id = 'weat6'")[0]
    assert f"{es:+.2f} [{lo:+.2f}, {hi:+.2f}]" in text
    assert site_mod._p(p, floor) in text and ("< 1e-05" in text) == bool(floor)
    assert site_mod._p(1e-5, True) == "< 1e-05" and site_mod._p(1e-5) == "1.00e-05"
    assert f"of {size}" in text and "the N results of that run" in text
    assert "For a paper, report the concepts' d with its interval and p concepts" in text
    css = (full["out"] / "assets" / "site.css").read_text(encoding="utf-8") if (
        full["out"] / "assets" / "site.css").exists() else next(full["out"].rglob("site.css")).read_text()
    rule = re.search(r"\nth, td \{[^}]*\}", css)[0]
    assert "anywhere" not in rule and re.search(r"td\.id[^{]*\{[^}]*white-space: nowrap", css)
