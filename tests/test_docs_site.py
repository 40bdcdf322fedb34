"""The manual builds as CONTRIBUTING.md says (`mkdocs build --strict`: every warning an error, so a broken link or
anchor, a nav entry without its page or an unreadable docstring fails), and its reference pages are the code's own:
every command of the parser, every field of the JSON Schemas, every table of the store's DDL."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("mkdocs", "material", "mkdocstrings_handlers")),
    reason="mkdocs, mkdocs-material and mkdocstrings[python] are not installed (pip install -e '.[docs]')")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs-site") / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    return out


def _text(page: Path) -> str:
    return unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def _nav_files(nav) -> list[str]:
    out = []
    for entry in nav:
        for v in (entry.values() if isinstance(entry, dict) else [entry]):
            out += _nav_files(v) if isinstance(v, list) else [v]
    return out


class _Loader(yaml.SafeLoader):
    """mkdocs.yml may hold mkdocs' own tags (!ENV, !relative); the nav does not need them."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def test_contributing_names_the_one_command_that_builds_the_docs():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## Documentation"):]
    assert "```bash\nmkdocs build --strict\n```" in section


def test_every_page_of_the_nav_is_built(site):
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    pages = _nav_files(config["nav"])
    assert {"index.md", "quickstart.md", "concepts.md", "faq.md", "methods.md", "performance.md",
            "registry-format.md", "reference/cli.md"} <= set(pages)
    for page in pages:
        built = site / ("index.html" if page == "index.md" else page.removesuffix(".md") + "/index.html")
        assert built.is_file(), page
    guides = [p for p in pages if p.startswith("guides/")]
    assert len(guides) >= 7 and all((ROOT / "docs" / p).is_file() for p in guides)


def test_the_cli_reference_is_the_parsers(site):
    from eatlas.cli.main import build_parser

    text = _text(site / "reference" / "cli" / "index.html")
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    for name, p in sub.choices.items():
        assert f"eatlas {name}" in text, name
        for action in p._actions:
            for opt in action.option_strings:
                assert opt in text, f"eatlas {name} {opt}"


def test_the_registry_reference_is_the_schemas(site):
    import json

    text = _text(site / "reference" / "registry-schemas" / "index.html")
    for path in sorted((ROOT / "schemas").glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        assert schema["title"] in text
        for field in schema.get("properties", {}):      # sources.schema.json: a mapping of keys, its fields in $defs
            assert field in text, f"{path.name}: {field}"


def test_the_store_reference_is_the_ddl(site):
    from eatlas.store.db import schema_ddl

    text = _text(site / "reference" / "store" / "index.html")
    for name, _, cols in schema_ddl():
        assert name in text
        for col, *_ in cols:
            assert col in text, f"{name}.{col}"
    for view in ("reproduction", "reproduction_loose", "mleat_reproduction"):
        assert view in text


def test_the_api_reference_holds_the_public_functions(site):
    text = _text(site / "reference" / "api" / "index.html")
    for name in ("weat", "WeatResult", "holm", "get_test", "list_tests", "EatlasError"):
        assert name in text
    assert "n_samples" in text          # a signature, read from the code


def test_internal_links_and_anchors_resolve(site):
    """mkdocs --strict checks the links of the Markdown; this checks the built HTML as a reader meets it, the
    pages the reference hook writes included: every relative link lands on a file, and every #anchor on an id
    of that page."""
    ids: dict[Path, set[str]] = {}

    def ids_of(page: Path) -> set[str]:
        if page not in ids:
            ids[page] = set(re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8")))
        return ids[page]

    broken = []
    for page in site.rglob("*.html"):
        if page.parent.name == "404" or page.name == "404.html":
            continue
        for href in re.findall(r'<a\s[^>]*href="([^"]+)"', page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", href) or href.startswith("//"):
                continue
            path, _, anchor = href.partition("#")
            target = (page.parent / unescape(path)).resolve() if path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {href}")
            elif anchor and target.suffix == ".html" and unescape(anchor) not in ids_of(target):
                broken.append(f"{page.relative_to(site)}: {href} (no anchor)")
    assert not broken, "\n".join(broken[:30])


# what a page loads by itself (not a link a reader follows): an element's src, a stylesheet, icon or preload
_LOADS = re.compile(r'<(?:script|img|iframe|source|video|audio|embed|object)\b[^>]*\s(?:src|data)="([^"]+)"'
                    r'|<link\b[^>]*\shref="([^"]+)"', re.I)
_CSS_URLS = re.compile(r'url\(\s*[\'"]?([^\'")\s]+)|@import\s+[\'"]([^\'"]+)', re.I)


def test_no_request_leaves_the_machine(site):
    """Every page, stylesheet and script loads only files of the site: no font server, no CDN (KaTeX and its fonts
    are under assets/katex). A link a reader clicks may point anywhere."""
    external = []
    for f in site.rglob("*"):
        if f.suffix not in (".html", ".css"):
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        found = _LOADS.findall(text) if f.suffix == ".html" else _CSS_URLS.findall(text)
        for url in (a or b for a, b in found):
            if re.match(r"(?:[a-z][a-z0-9+.-]*:)?//", url, re.I) and not url.startswith("data:"):
                external.append(f"{f.relative_to(site)}: {url}")
    # material's own bundle names unpkg for a polyfill and mermaid, loaded only where a browser lacks
    # ResizeObserver or a page draws a diagram; the browser test below sees what is loaded
    for f in [*site.rglob("*.html"), *site.rglob("*.css"), *(site / "assets" / "katex").rglob("*.js")]:
        if re.search(r"fonts\.(googleapis|gstatic)\.com|cdn\.jsdelivr|unpkg\.com|cdnjs\.",
                     f.read_text(errors="replace")):
            external.append(f"{f.relative_to(site)}: names a font server or CDN")
    assert not external, "\n".join(external[:20])
    css = (site / "assets" / "katex" / "katex.min.css").read_text(encoding="utf-8")
    fonts = re.findall(r"url\((fonts/[^)]+)\)", css)
    assert fonts and all((site / "assets" / "katex" / f).is_file() for f in fonts)


def test_every_page_shows_the_version_and_the_changelog_is_in_the_nav(site):
    from eatlas import __version__

    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    pages = _nav_files(config["nav"])
    assert "changelog.md" in pages
    for page in pages:
        built = site / ("index.html" if page == "index.md" else page.removesuffix(".md") + "/index.html")
        assert f"EATlas {__version__}" in _text(built), page
        assert "katex.min.js" in built.read_text(encoding="utf-8"), page
    changelog = _text(site / "changelog" / "index.html")
    first = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").split("\n## ", 2)[1].split("\n")[0]
    assert first.strip("[]") in changelog


def test_search_finds_option_names_and_variables_as_one_word(site):
    """The search index splits text with mkdocs.yml's separator: an option (--p-rule) or a variable (EATLAS_CACHE)
    stays one word (lunr then trims the leading dashes, in the query as in the text)."""
    import json

    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    sep = re.compile(index["config"]["separator"])
    words = {w.strip("-.").lower() for doc in index["docs"] for w in sep.split(unescape(doc["text"]))}
    assert {"p-rule", "eatlas_cache", "llm-iat-batch-size"} <= words


def test_the_cli_reference_tables_every_option_with_an_example_that_parses(site):
    import argparse
    import importlib.util as iu
    import shlex

    from eatlas.cli.main import build_parser

    spec = iu.spec_from_file_location("docs_reference_hook", ROOT / "docs" / "_hooks" / "reference.py")
    hook = iu.module_from_spec(spec)
    spec.loader.exec_module(hook)
    for name, example in hook.EXAMPLES.items():
        try:
            build_parser().parse_args(shlex.split(example)[1:])
        except SystemExit:
            pytest.fail(f"the reference's example of eatlas {name} does not parse: {example}")
    html = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "--help" not in re.sub(r"<[^>]+>", "", html).replace("eatlas COMMAND --help", "")   # no raw help text
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    for name in sub.choices:
        section = html[html.index(f'id="eatlas-{name}"'):]
        section = section[:section.index("<h2", 1)] if "<h2" in section[1:] else section
        assert "<table>" in section and "<th>default</th>" in section, name
        assert "language-bash" in section or 'class="highlight"' in section, name


def test_pages_in_a_browser_request_nothing_from_elsewhere_and_typeset_formulas(site, tmp_path):
    """The manual's pages loaded in headless Chromium (every host but 127.0.0.1 unreachable): each request is for
    the site's own files, and a formula a page holds is typeset by the bundled KaTeX."""
    from tests import browser

    why = browser.why_no_browser()
    if why:
        pytest.skip(why)
    pages = ["", "quickstart/", "concepts/", "methods/", "reference/cli/", "changelog/", "guides/llm-iat/"]
    typeset = 0
    with browser.Served(site) as served:
        driver = browser.chrome(tmp_path / "profile")
        try:
            outside, untypeset = [], []
            for page in pages:
                driver.get(served.url + page)
                driver.execute_script("return document.fonts.ready")
                outside += [u for u in browser.requested(driver)      # (chrome:// is the browser's own)
                            if re.match(r"(https?|wss?|ftp):", u) and not u.startswith(served.url)]
                untypeset += [page] * driver.execute_script(
                    "return [...document.querySelectorAll('.arithmatex')].filter(e => !e.querySelector('.katex'))"
                    ".length")
                typeset += driver.execute_script("return document.querySelectorAll('.arithmatex .katex').length")
        finally:
            driver.quit()
    assert not outside, outside[:10]
    assert not untypeset, untypeset
    assert typeset >= 5            # the LLM IAT guide's formula and the letters it names
