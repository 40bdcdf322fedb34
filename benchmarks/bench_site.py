"""How long ``eatlas site`` takes with a registry of 10,000 tests, and how long a filter keystroke takes on its index
in headless Chromium.

Writes a synthetic registry (the benchmark's own stand-in sets of placeholder words, not stimuli of any paper: four
sets of eight items, and N tests naming them, spread over 20 language tags and 10 bias types, each with a sentence
expansion) into a temporary folder, then times in this process:

1. loading the registry (parsing N test files; the registry cache is off; the limit on one registry file's size,
   which catalog.yaml passes at about 9,500 tests, is raised for the run);
2. ``write_site`` with no results database (the registry's pages, the tables, the index);

then serves the site on 127.0.0.1 and, in headless Chromium (Selenium with Debian's chromium-driver; skipped with the
reason where there is none), loads the index and times filter changes: a character typed into the search box and a
language chosen, each from the input event until two animation frames later (the rows shown or hidden and the page
drawn), median of ``--repeat``. ``uptime``'s load is printed with the figures.

    python benchmarks/bench_site.py                   # 10,000 tests
    python benchmarks/bench_site.py --tests 2000 --repeat 5
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PAPER = {"type": "misc", "authors": ["Bench, Mark"], "year": 2026, "title": "EATlas site benchmark",
         "venue": "EATlas benchmarks", "url": "https://example.org/bench",
         "bibtex": "@misc{benchpaper,\n  author = {Bench, Mark},\n  title = {EATlas site benchmark},\n"
                   "  year = {2026},\n  url = {https://example.org/bench}\n}"}
LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "sv", "pl", "cs", "ru", "uk", "tr", "ar", "hi", "bn", "ja",
             "ko", "zh", "sw")
BIAS = ("gender", "race", "religion", "age", "disability", "sexuality", "caste", "health", "education", "non-social")


def _dump(path: Path, doc) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")


def write_registry(root: Path, n: int) -> None:
    (root / "templates").mkdir(parents=True)
    shutil.copy(ROOT / "templates" / "may2019_bleached.yaml", root / "templates")
    _dump(root / "registry" / "sources.yaml", {"benchpaper": PAPER})
    change = [{"version": "1.0.0", "date": "2026-11-25", "change": "benchmark stand-in"}]
    for sid, kind in (("bench_x", "noun"), ("bench_y", "noun"), ("bench_a", "adjective"), ("bench_b", "adjective")):
        _dump(root / "registry" / "benchpaper" / "sets" / f"{sid}.yaml",
              {"id": sid, "version": "1.0.0", "concept": sid.replace("_", " "), "license": "CC0-1.0",
               "source": {"paper": "benchpaper", "section": "stand-in"}, "changelog": change,
               "items": [{"text": f"{sid[-1]}word{i}", "kind": kind} for i in range(8)]})
    for i in range(n):
        _dump(root / "registry" / "benchpaper" / "tests" / f"bench{i:05d}.yaml",
              {"id": f"bench{i:05d}", "version": "1.0.0", "title": f"Stand-in test {i} ({BIAS[i % len(BIAS)]})",
               "level": "word", "license": "CC0-1.0", "language": LANGUAGES[i % len(LANGUAGES)],
               "bias_type": BIAS[(i // len(LANGUAGES)) % len(BIAS)], "source": {"paper": "benchpaper"},
               "x": "bench_x@1.0.0", "y": "bench_y@1.0.0", "a": "bench_a@1.0.0", "b": "bench_b@1.0.0",
               "expansions": {"sent": {"template": "may2019_bleached@1.0.0"}}, "changelog": change})
    from eatlas.registry.catalog import sync
    sync(root)


def browser_timings(site: Path, repeat: int) -> dict | str:
    from tests import browser

    why = browser.why_no_browser()
    if why:
        return why
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    timing = """
const done = arguments[arguments.length - 1];
const [id, value] = [arguments[0], arguments[1]];
const el = document.getElementById(id);
const t0 = performance.now();
el.value = value;
el.dispatchEvent(new Event(el.tagName === "SELECT" ? "change" : "input", {bubbles: true}));
requestAnimationFrame(() => requestAnimationFrame(() => done([performance.now() - t0,
  document.getElementById("count").textContent])));
"""
    out = {}
    with tempfile.TemporaryDirectory() as prof, browser.Served(site) as served:
        d = browser.chrome(Path(prof))
        try:
            d.set_script_timeout(120)
            t = time.perf_counter()
            d.get(served.url + "index.html")
            WebDriverWait(d, 120).until(lambda d: d.find_element(By.ID, "filters").is_displayed())
            out["index load, filters ready (s)"] = time.perf_counter() - t
            for label, steps in (("a character typed (ms)", [("f-text", "b"), ("f-text", "")]),
                                 ("a narrower search, 'bench0001' (ms)", [("f-text", "bench0001"), ("f-text", "")]),
                                 ("a language chosen (ms)", [("f-language", "hi"), ("f-language", "")])):
                first, back = [], []
                for _ in range(repeat):
                    ms, count = d.execute_async_script(timing, *steps[0])
                    first.append(ms)
                    back.append(d.execute_async_script(timing, *steps[1])[0])
                out[label] = statistics.median(first)
                out[label.replace("(ms)", "undone (ms)")] = statistics.median(back)
                out[label.replace("(ms)", "shows")] = count
        finally:
            d.quit()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    os.environ.setdefault("EATLAS_CACHE", tempfile.mkdtemp(prefix="eatlas-bench-cache-"))
    os.environ["EATLAS_REGISTRY_CACHE"] = "0"
    from eatlas.outputs.site import write_site
    from eatlas.registry import Registry, base

    # catalog.yaml of 10,000 tests is about 2.1 MB, over the registry's limit for one file (MAX_FILE_BYTES, 2 MB):
    # raised here, so the benchmark measures the site and not that limit
    base.MAX_FILE_BYTES = max(base.MAX_FILE_BYTES, 400 * args.tests)

    with tempfile.TemporaryDirectory(prefix="eatlas-bench-site-") as tmp:
        root = Path(tmp) / "reg"
        t = time.perf_counter()
        write_registry(root, args.tests)
        made = time.perf_counter() - t
        t = time.perf_counter()
        reg = Registry(root)
        loaded = time.perf_counter() - t
        assert len(reg.tests) == args.tests
        t = time.perf_counter()
        summary = write_site(Path(tmp) / "none.duckdb", Path(tmp) / "site", registry=root)
        wrote = time.perf_counter() - t
        size = sum(p.stat().st_size for p in (Path(tmp) / "site").rglob("*") if p.is_file())
        index = (Path(tmp) / "site" / "index.html").stat().st_size
        print(f"load: {os.getloadavg()[0]:.1f} (1-minute load average), {os.cpu_count()} cores")
        print(f"registry of {args.tests} tests written (and catalog.yaml synced) in {made:.1f} s, parsed in "
              f"{loaded:.1f} s")
        print(f"write_site: {wrote:.1f} s for {summary['pages']} pages ({wrote / summary['pages'] * 1000:.2f} ms a "
              f"page), {size / 1e6:.1f} MB in all, index.html {index / 1e6:.2f} MB")
        timings = browser_timings(Path(tmp) / "site", args.repeat)
        if isinstance(timings, str):
            print(f"browser timings skipped: {timings}")
        else:
            for k, v in timings.items():
                print(f"{k}: {v:.2f}" if isinstance(v, float) else f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
