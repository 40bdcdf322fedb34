"""The manual's figures, made by eatlas itself.

    python scripts/docs_figures.py            # docs/assets/concepts-*.svg: drawn from a synthetic test
    python scripts/docs_figures.py png DIR    # the same as PNG files in DIR, to look at them
    python scripts/docs_figures.py screens [WASM]   # docs/assets/shot-*.png: the report, the site, its SQL box

``screens`` makes a small run (GloVe 6B 50d, five of Caliskan et al.'s tests at word level; the validity criteria
on the same model; the LLM IAT's log-probability variant with the tiny random GPT-2 the tests use, 8 prompts),
writes the report and the static site from it, and photographs them in headless Chromium at 1400 px (every host but
127.0.0.1 unreachable): the report's top, its forest plot, validity scatter and LLM IAT order split, the site's
index, a test page and the SQL box with a query run (the pages' text names the work folder and the repository as
'.', so no picture shows a folder of the machine that made it) (WASM: a folder of ``npm pack @duckdb/duckdb-wasm@1.32.0
apache-arrow@17.0.0``; without it the SQL shot is left as it was). Each PNG is reduced to 256 colours. It records
in docs/assets/figures.json, per figure, a hash of the files that decide what it shows (the code and templates);
tests/test_docs_figures.py recomputes those hashes, so a change to them asks for this command again.

Four sets of unit vectors are drawn from a seeded normal model whose target means lean towards A and B, and
``eatlas.weat`` computes both answers on them (the sample d, p and the papers' interval; the concepts' d, p_concepts and its interval); the figures show what those numbers are made of.
"""
from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eatlas.stats.weat import weat  # noqa: E402

OUT = ROOT / "docs" / "assets"


def unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def synthetic(seed: int = 3, n: int = 8, dim: int = 20, noise: float = 1.3):
    rng = np.random.default_rng(seed)
    a_dir, b_dir = rng.normal(size=dim), rng.normal(size=dim)
    A = unit(a_dir + noise * rng.normal(size=(n, dim)))
    B = unit(b_dir + noise * rng.normal(size=(n, dim)))
    X = unit(0.6 * a_dir + 0.4 * b_dir + noise * rng.normal(size=(n, dim)))
    Y = unit(0.4 * a_dir + 0.6 * b_dir + noise * rng.normal(size=(n, dim)))
    return X, Y, A, B


def s(W, A, B):
    return (W @ A.T).mean(axis=1) - (W @ B.T).mean(axis=1)


def main(fmt: str = "svg", out: Path = OUT) -> None:
    out.mkdir(parents=True, exist_ok=True)
    X, Y, A, B = synthetic()
    r = weat(X, Y, A, B, seed=0)
    sx, sy = s(X, A, B), s(Y, A, B)

    fig, ax = plt.subplots(figsize=(7.5, 2.6))
    for row, vals, label, colour in ((1, sx, "X (targets)", "#1f77b4"), (0, sy, "Y (targets)", "#d62728")):
        ax.scatter(vals, np.full(len(vals), row), s=60, color=colour, alpha=0.8, label=label, zorder=3)
        ax.plot([vals.mean()] * 2, [row - 0.3, row + 0.3], color=colour, lw=2)
    ax.annotate("", xy=(sx.mean(), 0.5), xytext=(sy.mean(), 0.5),
                arrowprops={"arrowstyle": "->", "lw": 1.5})
    ax.text((sx.mean() + sy.mean()) / 2, 0.58, "difference of means", ha="center", fontsize=10)
    ax.set_yticks([0, 1], ["Y", "X"])
    ax.set_ylim(-0.6, 1.6)
    ax.set_xlabel("s(w, A, B): mean cosine with A minus mean cosine with B")
    ax.set_title(f"d = difference of means / standard deviation over X and Y = {r.effect_size:+.2f}   "
                 "(a synthetic test, 8 stimuli a set)", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / f"concepts-d.{fmt}", **_meta(fmt))
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7.5, 2.8))
    rows = ((1, r.d_concepts, r.concepts_low, r.concepts_high, "#ff7f0e",
             f"the concepts' d [95% interval], p concepts = {r.p_concepts:.2g}"),
            (0, r.effect_size, r.papers_low, r.papers_high, "#1f77b4",
             f"sample d [the papers' interval], p papers = {r.p_value:.2g}"))
    for row, est, lo, hi, colour, label in rows:
        ax.plot([lo, hi], [row, row], color=colour, lw=3, solid_capstyle="butt")
        ax.scatter([est], [row], s=80, color=colour, zorder=3)
        ax.text(lo, row + 0.25, label, fontsize=9, color=colour)
    ax.axvline(0, color="#999", lw=1, ls="--")
    ax.set_yticks([0, 1], ["papers'", "concepts'"])
    ax.set_ylim(-0.6, 1.7)
    ax.set_xlabel("effect size")
    ax.set_title("Each interval belongs to the estimate beside it", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / f"concepts-interval.{fmt}", **_meta(fmt))
    plt.close(fig)
    print(f"sample d {r.effect_size:.3f} [{r.papers_low:.3f}, {r.papers_high:.3f}] p {r.p_value:.3g}; "
          f"concepts' d {r.d_concepts:.3f} [{r.concepts_low:.3f}, {r.concepts_high:.3f}] p_concepts "
          f"{r.p_concepts:.3g} -> {out}")


def _meta(fmt: str) -> dict:
    return {"metadata": {"Date": None}} if fmt == "svg" else {"dpi": 110}      # an SVG without a date: reproducible


# ------------------------------------------------------------------------------------------ the screenshots
COMMON = ("eatlas/outputs/report.py", "eatlas/outputs/site.py", "eatlas/outputs/site_assets", "eatlas/legend.py",
          "eatlas/columns.py", "scripts/docs_figures.py")
# figure -> the files (or folders) that decide what it shows, beside COMMON
FIGURES = {
    "shot-report.png": ("eatlas/methods/weat.py",),
    "shot-forest.png": ("eatlas/methods/weat.py",),
    "shot-validity.png": ("eatlas/methods/validity.py",),
    "shot-llm-iat-order.png": ("eatlas/methods/llm_iat.py",),
    "shot-site-index.png": (),
    "shot-site-test.png": (),
    "shot-site-sql.png": (),
}
MANIFEST = OUT / "figures.json"
GLOVE_TESTS = ("weat1", "weat2", "weat6", "weat7", "weat8")
SQL = ("SELECT test_id, level, round(effect_size, 2) AS d, round(d_concepts, 2) AS d_concepts, p_value, p_concepts "
       "FROM results WHERE model = 'glove-6b-50d' ORDER BY test_id")


def inputs_hash(figure: str) -> str:
    """sha256 over the named files' paths and bytes (a folder: every file under it), in a fixed order."""
    import hashlib

    h = hashlib.sha256()
    for name in sorted({*COMMON, *FIGURES[figure]}):
        path = ROOT / name
        files = sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts) \
            if path.is_dir() else [path]
        for f in files:
            h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _eatlas(*args: str, cwd: Path) -> None:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "eatlas", *args], cwd=cwd, capture_output=True, text=True,
                          env={**__import__("os").environ, "COLUMNS": "140"})
    if proc.returncode:
        raise SystemExit(f"eatlas {' '.join(args)} failed:\n{proc.stderr[-3000:]}")


def _small_png(png: bytes, path: Path, width: int | None = None) -> None:
    """The screenshot as a 256-colour optimised PNG (a screenshot of text and flat colours loses nothing seen)."""
    import io

    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    if width and img.width > width:
        img = img.resize((width, round(img.height * width / img.width)), Image.LANCZOS)
    img.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(path, optimize=True)


def screens(wasm: Path | None = None, out: Path = OUT) -> None:
    import json
    import tempfile

    sys.path.insert(0, str(ROOT))
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests import browser
    from tests.test_progress import _tiny_causal_lm

    if browser.why_no_browser():
        raise SystemExit(browser.why_no_browser())
    work = Path(tempfile.mkdtemp(prefix="eatlas-figures-"))
    db = str(work / "eatlas.duckdb")
    _eatlas("run", "--model", "glove-6b-50d", "--tests", *GLOVE_TESTS, "--levels", "word", "--db", db, "--quiet",
            cwd=work)
    _eatlas("run", "--method", "validity", "--model", "glove-6b-50d", "--db", db, "--quiet", cwd=work)
    _tiny_causal_lm(work / "tiny-gpt2")
    _eatlas("run", "--method", "llm-iat", "--model", "tiny-gpt2", "--tests", "bai2024_age", "bai2024_racism",
            "--llm-iat-scoring", "logprob", "--llm-iat-prompts", "8", "--n-boot", "200", "--db", db, "--quiet",
            cwd=work)
    _eatlas("report", "report.html", "--db", db, cwd=work)
    _eatlas("site", "site", "--db", db, *(["--duckdb-wasm", str(wasm)] if wasm else ["--offline"]), cwd=work)

    made = {}
    with browser.Served(work) as served:
        driver = browser.chrome(work / "profile", width=1400, height=900)
        try:
            def page(url: str):
                driver.get(served.url + url)
                driver.execute_script("return document.fonts.ready")
                # the pictures name no folder of the machine that made them: the work folder and the
                # repository, wherever a page prints them, read as '.'
                driver.execute_script(
                    "const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);"
                    "for (let n; (n = w.nextNode());) for (const p of arguments[0])"
                    " n.nodeValue = n.nodeValue.split(p + '/').join('').split(p).join('.');",
                    [str(work), str(ROOT)])

            def element(css: str, name: str) -> None:
                el = driver.find_element(By.CSS_SELECTOR, css)
                driver.execute_script("arguments[0].scrollIntoView()", el)
                _small_png(el.screenshot_as_png, out / name, width=1100)
                made[name] = True

            def viewport(name: str) -> None:
                _small_png(driver.get_screenshot_as_png(), out / name, width=1100)
                made[name] = True

            page("report.html")
            viewport("shot-report.png")
            element("#fig-forest", "shot-forest.png")
            element("#fig-validity", "shot-validity.png")
            element("#llm-iat", "shot-llm-iat-order.png")
            page("site/index.html")
            viewport("shot-site-index.png")
            page("site/tests/weat6.html")
            viewport("shot-site-test.png")
            if wasm:
                page("site/sql.html")
                driver.execute_script("document.getElementById('sql').value = arguments[0]", SQL)
                driver.find_element(By.ID, "run").click()
                WebDriverWait(driver, 180).until(
                    lambda d: d.find_element(By.ID, "status").text.split(" ")[0].isdigit()
                    or d.find_element(By.ID, "status").text.startswith("Error"))
                viewport("shot-site-sql.png")
        finally:
            driver.quit()
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8")) if MANIFEST.is_file() else {}
    for name in made:
        manifest[name] = {"inputs": inputs_hash(name), "bytes": (out / name).stat().st_size}
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for name in made:
        print(f"{name}: {(out / name).stat().st_size // 1024} KB")


if __name__ == "__main__":
    if sys.argv[1:2] == ["screens"]:
        screens(Path(sys.argv[2]) if len(sys.argv) > 2 else None)
    else:
        main(*(sys.argv[1:2] or ["svg"]), *([Path(sys.argv[2])] if len(sys.argv) > 2 else []))
