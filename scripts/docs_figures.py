"""The figures of docs/concepts.md, drawn from a run of eatlas itself on a synthetic test (not from a paper).

    python scripts/docs_figures.py            # writes docs/assets/concepts-*.svg
    python scripts/docs_figures.py png DIR    # the same as PNG files in DIR, to look at them

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


if __name__ == "__main__":
    main(*(sys.argv[1:2] or ["svg"]), *([Path(sys.argv[2])] if len(sys.argv) > 2 else []))
