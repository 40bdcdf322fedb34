"""Checks of the transcribed published-results tables (registry/*/published/*.csv).

Format: docs/registry-format.md, section "Published results". What each table holds and how it
was mapped: registry/PUBLISHED.md. Only the standard library and pandas are used.
"""
import math
import re
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
HEADER = ["paper", "table_id", "row_label", "column_label", "statistic", "value", "significance",
          "missing", "test_id", "level", "model", "model_family", "note"]
TEXT_STATISTICS = {"pattern", "pooling"}       # printed as words, not numbers
LEVELS = {"", "word", "sent", "sent(u)", "c-word", "c-word(u)"}
ID_RE = re.compile(r"^[a-z0-9][a-z0-9_+\-]*$")

# (total rows, rows with missing=true) per transcribed table, counted from the papers.
EXPECTED = {
    # May et al. 2019 Table 4: 14 rows (C1, C3, C6, ABW x word/sent; Competent, Likable x
    # word/sent/sent (u)) x 7 models (CBoW, InferSent, GenSen, USE, ELMo, GPT, BERT) = 98 cells.
    "registry/may2019/published/table4.csv": (98, 0),
    # Table 3: 7 models x 2 printed facts (Agg., Dim.) = 14 cells.
    "registry/may2019/published/table3.csv": (14, 0),
    # Tan & Celis 2019 Table 1: 12 rows (4 corpora x 3 pronoun groups) x 4 columns
    # (#occurrence, M-biased %, F-biased %, Neutral %) = 48 cells.
    "registry/tan2019/published/table1.csv": (48, 0),
    # Table 2: 5 rows (gender, race, intersectional, disability/age, Overall) x 7 models = 35.
    "registry/tan2019/published/table2.csv": (35, 0),
    # Table 3: 22 rows (+C11, C6, C8, +Occ x 3 encodings = 12; two double binds x 5 encodings = 10)
    # x 7 models = 154 cells; CBoW is printed "NA" in the 8 c-word / c-word (u) rows.
    "registry/tan2019/published/table3.csv": (154, 8),
    # Table 4: 19 rows (C3, +C12, +C13 x 3 = 9; two race double binds x 5 = 10) x 7 = 133 cells;
    # 7 CBoW c-word / c-word (u) cells printed "NA".
    "registry/tan2019/published/table4.csv": (133, 7),
    # Table 5: 18 rows (+I1..+I5, ABW x 3 encodings) x 7 = 126 cells; 6 CBoW c-word cells "NA".
    "registry/tan2019/published/table5.csv": (126, 6),
    # Wolfe et al. 2024: every ML-EAT row has 11 numbers: Level 1 (1) + Level 2 (2) + Level 3
    # (4 cells of "mean (std)" = 8).
    # Table 1 (GloVe): 10 rows x 11 = 110, + 10 EAT patterns named in the caption = 120.
    "registry/wolfe2024/published/table1.csv": (120, 0),
    # Table 2 (CLIP-ViT-L14-336): 2 panels (no prompt / with prompt) x 5 rows x 11 = 110,
    # + 10 EAT patterns named in the prose = 120.
    "registry/wolfe2024/published/table2.csv": (120, 0),
    # Table 3 (GPT-2 Base and XL): 2 panels x 10 rows x 11 = 220.
    "registry/wolfe2024/published/table3.csv": (220, 0),
    # Tables 4-8 (Google News; GPT-2 Base, Medium, Large, XL): 10 rows x 11 = 110 each.
    "registry/wolfe2024/published/table4.csv": (110, 0),
    "registry/wolfe2024/published/table5.csv": (110, 0),
    "registry/wolfe2024/published/table6.csv": (110, 0),
    "registry/wolfe2024/published/table7.csv": (110, 0),
    "registry/wolfe2024/published/table8.csv": (110, 0),
    # Tables 9-12 (CLIP ViT-B32, B16, L14, L14-336): 11 rows x 11 = 121 each.
    "registry/wolfe2024/published/table9.csv": (121, 0),
    "registry/wolfe2024/published/table10.csv": (121, 0),
    "registry/wolfe2024/published/table11.csv": (121, 0),
    "registry/wolfe2024/published/table12.csv": (121, 0),
    # Guo & Caliskan 2021: Table 1 and appendix Table 2 absent from the text (1 missing row
    # each) + 8 IBD/EIBD accuracy / random-chance numbers + 3 CEAT counts quoted in prose = 13.
    "registry/guo2021/published/unavailable.csv": (13, 2),
    # Appendix: the 18 validation lists (17 group lists + random insects), each with its printed
    # random chance of correct classification.
    "registry/guo2021/published/appendix_chance.csv": (18, 0),
    # Caliskan, Bryson and Narayanan 2017: the captions of Figure 1 (occupations, rho = 0.90) and Figure 2
    # (androgynous names, rho = 0.84), GloVe Common Crawl 840B 300d.
    "registry/caliskan2017/published/validity.csv": (2, 0),
}

# Cells whose value can be confirmed from the papers' prose or a second extraction.
SPOT = [
    # file, model, row_label, column_label, statistic, value, significance
    ("registry/may2019/published/table4.csv", "CBoW", "C1: Flowers/Insects | word", "CBoW", "effect_size", "1.50", "**"),
    ("registry/may2019/published/table4.csv", "ELMo", "C1: Flowers/Insects | word", "ELMo", "effect_size", "-0.03", ""),
    ("registry/may2019/published/table4.csv", "GPT", "C3: EA/AA Names | word", "GPT", "effect_size", "0.60", "*"),
    ("registry/may2019/published/table4.csv", "BERT", "Double Bind: Likable | sent (u)", "BERT", "effect_size", "0.99", ""),
    # Tan & Celis prose (5.3): +Occ c-word GPT +0.10, GPT-2 +0.27/+0.43, BERT +0.98/+0.67, ELMo -0.27.
    ("registry/tan2019/published/table3.csv", "GPT", "+Occ: M/F Names, Occ Terms | c-word", "GPT", "effect_size", "+0.10", ""),
    ("registry/tan2019/published/table3.csv", "GPT-2 (345M)", "+Occ: M/F Names, Occ Terms | c-word", "GPT-2 (345M)", "effect_size", "+0.43", ""),
    ("registry/tan2019/published/table3.csv", "BERT (bbc)", "+Occ: M/F Names, Occ Terms | c-word", "BERT (bbc)", "effect_size", "+0.98", ""),
    ("registry/tan2019/published/table3.csv", "ELMo", "+Occ: M/F Names, Occ Terms | c-word", "ELMo", "effect_size", "-0.27", ""),
    ("registry/tan2019/published/table2.csv", "GPT-2 (345M)", "Overall", "GPT-2 (345M)", "proportion_significant_positive", "0.23", ""),
    # ML-EAT prose: Young/Old 1.21 (GloVe, Level 1), Young 1.09 vs Old 0.94 (Level 2),
    # Instruments/Weapons 1.53, Math .10 vs .09 and Arts .23 vs .24 (Level 3 means).
    ("registry/wolfe2024/published/table1.csv", "GloVe", "Young/Old P/U8", "Level 1: A,B,X,Y", "effect_size", "1.21", "*"),
    ("registry/wolfe2024/published/table1.csv", "GloVe", "Young/Old P/U8", "Level 2: A,B,X", "effect_size", "1.09", "*"),
    ("registry/wolfe2024/published/table1.csv", "GloVe", "Young/Old P/U8", "Level 2: A,B,Y", "effect_size", "0.94", "*"),
    ("registry/wolfe2024/published/table1.csv", "GloVe", "Instrument/Weapon P/U25", "Level 1: A,B,X,Y", "effect_size", "1.53", "*"),
    ("registry/wolfe2024/published/table1.csv", "GloVe", "Math/Arts Male/Female", "Level 3: A,X mean", "mean", ".10", ""),
    ("registry/wolfe2024/published/table1.csv", "GloVe", "Math/Arts Male/Female", "Level 3: B,X mean", "mean", ".09", ""),
    ("registry/wolfe2024/published/table1.csv", "GloVe", "Math/Arts Male/Female", "Level 3: A,Y mean", "mean", ".23", ""),
    ("registry/wolfe2024/published/table1.csv", "GloVe", "Math/Arts Male/Female", "Level 3: B,Y mean", "mean", ".24", ""),
    ("registry/wolfe2024/published/table1.csv", "GloVe", "Science/Arts Male/Female", "EAT pattern", "pattern", "AX-Singular", ""),
    # CLIP prose: White/Black changes sign with the prompt.
    ("registry/wolfe2024/published/table2.csv", "CLIP-ViT-L14-336", "No Prompt | White/Black P/U25", "Level 1: A,B,X,Y", "effect_size", "1.05", "*"),
    ("registry/wolfe2024/published/table2.csv", "CLIP-ViT-L14-336", "With Prompt | White/Black P/U25", "Level 1: A,B,X,Y", "effect_size", "-1.20", "*"),
    ("registry/wolfe2024/published/table12.csv", "CLIP-ViT-L14-336", "White/Black P/U25", "Level 1: A,B,X,Y", "effect_size", "1.05", "*"),
    ("registry/wolfe2024/published/table6.csv", "GPT-2 Medium", "Mental/Physical Temporary/Permanent", "Level 3: A,X mean", "mean", ".00", ""),
    ("registry/guo2021/published/unavailable.csv", "GloVe", "IBD | African American females", "accuracy (%)", "detection_accuracy_percent", "81.6", ""),
    ("registry/guo2021/published/appendix_chance.csv", "", "Emergent Intersectional Biases of European American Females", "random chance of correct classification (%)", "random_chance_percent", "1.0", ""),
    # Caliskan et al.'s captions (the P bound as printed is in the note: significance holds only printed marks).
    ("registry/caliskan2017/published/validity.csv", "GloVe Common Crawl 840B 300d", "occupation-gender association",
     "rho", "pearson_r", "0.90", ""),
    ("registry/caliskan2017/published/validity.csv", "GloVe Common Crawl 840B 300d", "androgynous names", "rho",
     "pearson_r", "0.84", ""),
    ("registry/guo2021/published/appendix_chance.csv", "", "Random (Insects)", "random chance of correct classification (%)", "random_chance_percent", "25.5", ""),
]


def _csvs():
    return sorted(p for p in (ROOT / "registry").glob("*/published/*.csv"))


def _rel(p):
    return p.relative_to(ROOT).as_posix()


def _read(path):
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_expected_files_exist(rel):
    assert (ROOT / rel).is_file(), rel


@pytest.mark.parametrize("path", _csvs(), ids=_rel)
def test_header(path):
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header == HEADER


@pytest.mark.parametrize("path", _csvs(), ids=_rel)
def test_cells(path):
    df = _read(path)
    assert len(df) > 0
    for i, r in df.iterrows():
        where = f"{_rel(path)} line {i + 2}"
        assert r["missing"] in ("true", "false"), where
        assert r["significance"] in ("", "*", "**"), where
        assert r["level"] in LEVELS, where
        assert r["test_id"] == "" or ID_RE.match(r["test_id"]), where
        assert r["paper"] == path.parent.parent.name, where
        assert r["table_id"] and r["row_label"] and r["column_label"] and r["statistic"], where
        if r["missing"] == "true":
            assert r["value"] == "", where
            assert r["significance"] == "", where
            assert r["note"], f"{where}: a missing cell must say why"
        elif r["statistic"] in TEXT_STATISTICS:
            assert r["value"] and not re.fullmatch(r"[-+.\d]+", r["value"]), where
        else:
            v = float(r["value"])  # raises if not a number
            assert math.isfinite(v), where


@pytest.mark.parametrize("path", _csvs(), ids=_rel)
def test_unique_cells(path):
    df = _read(path)
    keys = df[["model", "row_label", "column_label", "statistic"]].apply(tuple, axis=1)
    assert not keys.duplicated().any(), list(keys[keys.duplicated()])


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_counts(rel):
    df = _read(ROOT / rel)
    total, missing = EXPECTED[rel]
    assert len(df) == total
    assert (df["missing"] == "true").sum() == missing


def test_may_table4_significance_counts():
    # As printed: 27 cells with **, 18 with *, 53 unmarked.
    sig = _read(ROOT / "registry/may2019/published/table4.csv")["significance"].value_counts().to_dict()
    assert sig == {"**": 27, "*": 18, "": 53}


def test_tan_na_cells_are_cbow_c_word():
    for t in (3, 4, 5):
        df = _read(ROOT / f"registry/tan2019/published/table{t}.csv")
        miss = df[df["missing"] == "true"]
        assert (miss["model"] == "CBoW").all()
        assert miss["level"].isin(["c-word", "c-word(u)"]).all()
        assert miss["note"].str.contains("printed 'NA'").all()


def test_wolfe_statistics():
    for t in range(1, 13):
        df = _read(ROOT / f"registry/wolfe2024/published/table{t}.csv")
        counts = df["statistic"].value_counts().to_dict()
        n = counts["mean"]
        assert counts["std"] == n and counts["effect_size"] == 3 * n // 4
        assert set(counts) <= {"effect_size", "mean", "std", "pattern"}


def test_may_table3_models():
    df = _read(ROOT / "registry/may2019/published/table3.csv")
    agg = df[df["statistic"] == "pooling"]
    dim = df[df["statistic"] == "dimension"]
    assert list(agg["model"]) == list(dim["model"]) == ["CBoW", "InferSent", "GenSen", "USE", "ELMo", "GPT", "BERT"]
    assert list(agg["value"]) == ["mean", "max", "last", "N/A", "mean", "last", "[CLS]"]
    assert list(dim["value"]) == ["300", "4096", "4096", "512", "1024", "768", "1024"]
    assert set(agg["column_label"]) == {"Agg."} and set(dim["column_label"]) == {"Dim."}
    assert agg["row_label"].iloc[-1] == "BERT, large, cased (Devlin et al., 2018)"


@pytest.mark.parametrize("spot", SPOT, ids=lambda s: f"{s[0].split('/')[1]}:{s[2]}:{s[3]}")
def test_spot_values(spot):
    rel, model, row, col, stat, value, sig = spot
    df = _read(ROOT / rel)
    hit = df[(df["model"] == model) & (df["row_label"] == row) & (df["column_label"] == col) & (df["statistic"] == stat)]
    assert len(hit) == 1
    assert hit.iloc[0]["value"] == value
    assert hit.iloc[0]["significance"] == sig


def test_caliskan_validity_rows_carry_n_and_the_printed_p_bound():
    """Caliskan et al. print no P-value but a bound, and n in the caption: both are in each row's note."""
    df = _read(ROOT / "registry/caliskan2017/published/validity.csv")
    bounds = dict(zip(df["test_id"], df["note"]))
    assert bounds["caliskan2017_wefat_occupations"].startswith("P < 10^-18 as printed (n = 50)")
    assert bounds["caliskan2017_wefat_names"].startswith("P < 10^-13 as printed (n = 50)")
    assert set(df["model"]) == {"GloVe Common Crawl 840B 300d"} and set(df["level"]) == {"word"}
