"""Curate the validity criteria (per item a value about the world) into the registry.

Not part of the package. Run from the repository root with bare git snapshots of three public repositories:

    python scripts/curate_validity_criteria.py --biased-rulers GIT_DIR --cbn GIT_DIR --wefat-java GIT_DIR \
        [--corefbias GIT_DIR] [--check]

* ``iPieter/biased-rulers`` ``biased_rulers/data/professionsBLS2015.csv``: the US Bureau of Labor Statistics 2015
  occupation table with Caliskan et al.'s one-word labels (the file their WEFAT program reads, by its name);
* ``conjugateprior/cbn`` ``inst/extdata/censusNames1990.tsv`` (the 1990 census names with a gender score) and
  ``inst/extdata/items.R`` (the WEFAT 2 androgynous names), and ``inst/extdata/professionsBLS2015.tsv``, which is
  checked to hold the same numbers as the biased-rulers file;
* ``kariemoorman/iat-weat-wefat`` ``weat/WEFATcode.java``: Caliskan's WEFAT program
  (``WordEmbeddingFactualAssociationTestProfessions``, "@author Aylin Caliskan"), whose array ``professions`` is
  the 50 occupation words and whose comment states how their percentages of women were derived.

* with ``--corefbias GIT_DIR`` (``uclanlp/corefBias``; needs pypdf, not a dependency of EATlas):
  ``NAACL2018_CorefBias.pdf``, Zhao et al.'s paper, whose Table 1 prints the percentage of women in each of
  WinoBias's 40 occupations (Current Population Survey, 2017); the table's text, read from the PDF, is written as
  ``registry/zhao2018/data/winobias_occupations_bls2017.csv`` (one row per printed cell pair).

The two source files are copied byte for byte into ``registry/caliskan2017/data/`` (with ``provenance.yaml``);
every criterion value is computed from them here, never typed, and each criterion item lists the data rows it came
from, so that ``eatlas validate`` derives every value again (eatlas.registry.criteria). Garg et al.'s census shares
come from the authors' file already in ``registry/garg2018/data/``. ``--check`` writes nothing and exits 1 when a
file differs from what it would write.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DATE = "2026-11-27"


def git_show(git_dir: str, path: str) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{path}"], check=True,
                          capture_output=True).stdout


def git_head(git_dir: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def table(data: bytes, delimiter: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8")), delimiter=delimiter))


def java_array(src: str, name: str) -> list[str]:
    """The string literals of ``String[] name = {...};`` in a Java source."""
    m = re.search(r"String\[\]\s+" + re.escape(name) + r"\s*=\s*\{(.*?)\};", src, re.S)
    if m is None:
        raise SystemExit(f"no array {name} in the Java file")
    return re.findall(r'"([^"]*)"', m[1])


def r_vector(src: str, name: str) -> list[str]:
    """The strings of ``name <- c(...)`` in an R source."""
    m = re.search(re.escape(name) + r"\s*<-\s*c\((.*?)\)", src, re.S)
    if m is None:
        raise SystemExit(f"no vector {name} in the R file")
    return re.findall(r'"([^"]*)"', m[1])


LABELS = ("label1", "label2", "label3", "label4", "label5")


def occupations(bls: list[dict], words: list[str]) -> list[dict]:
    """Each word's percentage of women as the authors' comment derives it: the rows (occupational categories)
    labelled with the word; their workers summed; the percentage of women the mean of the rows' percentages weighted
    by their numbers of workers. ``rows``: 1-based data rows of the file (the header is not counted)."""
    out = []
    for w in words:
        rows = [n for n, r in enumerate(bls, 1) if w in {r[c] for c in LABELS}]
        if not rows:
            raise SystemExit(f"occupation {w!r} labels no row of the BLS file")
        total = sum(float(bls[n - 1]["TotalEmployed"]) for n in rows)
        value = sum(float(bls[n - 1]["TotalEmployed"]) * float(bls[n - 1]["Women"]) for n in rows) / total
        out.append({"text": w, "kind": "noun", "value": value, "weight": total, "rows": rows})
    return out


def names(census: list[dict], words: list[str]) -> list[dict]:
    out = []
    for w in words:
        rows = [n for n, r in enumerate(census, 1) if r["Name"].casefold() == w.casefold()]
        if len(rows) != 1:
            raise SystemExit(f"name {w!r} is in {len(rows)} rows of the census file")
        r = census[rows[0] - 1]
        m, f = float(r["Percentage in male population"]), float(r["Percentage in female population"])
        score = float(r["Female-1Male1Unisex0"])
        if abs((m - f) / (m + f) - score) > 5e-4:       # what the column is, checked on every row used
            raise SystemExit(f"{w}: the score is not (m - f) / (m + f) of the row's percentages")
        out.append({"text": w, "kind": "name", "value": score, "rows": rows})
    return out


def garg(rows_all: list[dict], year: str) -> list[dict]:
    out = []
    for n, r in enumerate(rows_all, 1):
        if r["Census year"] == year:
            out.append({"text": r["Occupation"], "kind": "word", "value": float(r["Female"]),
                        "weight": float(r["Total Weight"]), "rows": [n]})
    return sorted(out, key=lambda i: i["text"])


TABLE_ROW = re.compile(r"^([a-z][a-z ]*?) (\d+) ([a-z][a-z ]*?) (\d+)$")


def winobias_table(pdf: bytes) -> list[dict]:
    """Table 1 of Zhao et al. (2018) as its PDF's text gives it: between the header 'Occupation % Occupation %' and
    the caption 'Table 1:', each line two (occupation, percent) cells."""
    from pypdf import PdfReader

    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
    start = text.index("Occupation % Occupation %")
    lines = text[start:text.index("Table 1:", start)].splitlines()[1:]
    out = []
    for n, line in enumerate(lines, 1):
        m = TABLE_ROW.match(line.strip())
        if m is None:
            raise SystemExit(f"Table 1 line {n} is not two (occupation, percent) cells: {line!r}")
        out.append({"occupation": m[1], "percent_women": m[2], "table_line": str(n), "table_column": "left"})
        out.append({"occupation": m[3], "percent_women": m[4], "table_line": str(n), "table_column": "right"})
    if len(out) != 40:
        raise SystemExit(f"expected WinoBias's 40 occupations in Table 1, read {len(out)}")
    return sorted(out, key=lambda r: (int(r["percent_women"]), r["occupation"]))


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def dump(doc: dict) -> str:
    items = doc.pop("items")
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110)
    text += "items:\n" + "".join("  - " + yaml.safe_dump(i, default_flow_style=True, sort_keys=False,
                                                          width=10_000).strip() + "\n" for i in items)
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--biased-rulers", required=True)
    ap.add_argument("--cbn", required=True)
    ap.add_argument("--wefat-java", required=True)
    ap.add_argument("--corefbias", help="uclanlp/corefBias: WinoBias's occupations with their BLS 2017 shares")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)

    br_path, cbn_names, cbn_items = ("biased_rulers/data/professionsBLS2015.csv", "inst/extdata/censusNames1990.tsv",
                                     "inst/extdata/items.R")
    java_path = "weat/WEFATcode.java"
    bls_bytes, census_bytes = git_show(args.biased_rulers, br_path), git_show(args.cbn, cbn_names)
    bls, census = table(bls_bytes, ","), table(census_bytes, "\t")
    cbn_bls = table(git_show(args.cbn, "inst/extdata/professionsBLS2015.tsv"), "\t")
    same = len(cbn_bls) == len(bls) and all(
        all(float(a[c]) == float(b[c]) for c in ("TotalEmployed", "Women")) and
        all(a[c] == b[c] for c in LABELS) for a, b in zip(bls, cbn_bls))
    if not same:
        raise SystemExit("cbn's professionsBLS2015.tsv differs from biased-rulers' professionsBLS2015.csv")
    java = git_show(args.wefat_java, java_path).decode("utf-8")
    words = java_array(java, "professions")
    female, male = java_array(java, "attributesFirstSet"), java_array(java, "attributesSecondSet")
    andro = r_vector(git_show(args.cbn, cbn_items).decode("utf-8"), "WEFAT2$AndrogynousNames")
    if len(words) != 50 or len(andro) != 50:
        raise SystemExit(f"expected 50 occupations and 50 names, got {len(words)} and {len(andro)}")
    heads = {"br": git_head(args.biased_rulers), "cbn": git_head(args.cbn), "java": git_head(args.wefat_java)}
    # the WEFAT attribute lists of the Java file are the registry's WEAT 7 gender terms (female first)
    reg = {s: {i["text"] for i in yaml.safe_load((ROOT / f"registry/caliskan2017/sets/{s}.yaml").read_text())["items"]}
           for s in ("female_terms_weat7", "male_terms_weat7")}
    if set(female) != reg["female_terms_weat7"] or set(male) != reg["male_terms_weat7"]:
        raise SystemExit("the Java file's attribute lists are not the registry's WEAT 7 gender terms")

    data = ROOT / "registry/caliskan2017/data"
    files: dict[Path, bytes | str] = {data / "professionsBLS2015.csv": bls_bytes, data / "censusNames1990.tsv": census_bytes}
    files[data / "provenance.yaml"] = (
        "# Validation data of Caliskan et al. (2017), copied byte for byte from public repositories (see authors_file\n"
        "# and sha256) by scripts/curate_validity_criteria.py; read by the criteria in registry/caliskan2017/criteria/.\n"
        + yaml.safe_dump({
            "source": "caliskan2017",
            "license": "unspecified (professionsBLS2015.csv); GPL-3.0-only (censusNames1990.tsv)",
            "license_note": "Each file keeps the licence of the repository it was copied from (files[].license). The "
                            "numbers are the US Bureau of Labor Statistics' and the US Census Bureau's, works of the US "
                            "federal government (public domain in the US); the files that hold them are not.",
            "authors_repository": "https://github.com/iPieter/biased-rulers; https://github.com/conjugateprior/cbn",
            "files": [
                {"file": "professionsBLS2015.csv", "authors_file": f"iPieter/biased-rulers {br_path}",
                 "authors_commit": heads["br"], "sha256": hashlib.sha256(bls_bytes).hexdigest(),
                 "license": "unspecified",
                 "license_note": "iPieter/biased-rulers states no licence (no LICENSE file, none in its README).",
                 "description": "US Bureau of Labor Statistics, Current Population Survey 2015, employed persons by "
                                "detailed occupation (the table Caliskan's WEFAT program cites, "
                                "http://www.bls.gov/cps/cpsaat11.htm), one row per occupational category: "
                                "TotalEmployed (thousands), Women, AfricanAmerican, Asian, HispanicLatino (percent "
                                "of the employed), and label1-label5, Caliskan et al.'s one-word labels. Caliskan's "
                                "program names this file professionsBLS2015.csv; conjugateprior/cbn "
                                "inst/extdata/professionsBLS2015.tsv holds the same numbers and labels (checked by "
                                "the script)."},
                {"file": "censusNames1990.tsv", "authors_file": f"conjugateprior/cbn {cbn_names}",
                 "authors_commit": heads["cbn"], "sha256": hashlib.sha256(census_bytes).hexdigest(),
                 "license": "GPL-3.0-only",
                 "license_note": "conjugateprior/cbn's DESCRIPTION states License: GPL-3.",
                 "description": "First names of the 1990 US census with a gender score (column "
                                "Female-1Male1Unisex0, -1 female to 1 male) and the name's percentage in the "
                                "population, the female and the male population. cbn's vignette calls it part of "
                                "the replication materials of Caliskan et al. and says it is not clear how the "
                                "paper's figure values come out of it. The score equals (m - f) / (m + f) of the "
                                "row's male (m) and female (f) percentages (checked by the script on every name "
                                "used)."},
            ]}, sort_keys=False, allow_unicode=True, width=110))

    java_src = {"repository": "kariemoorman/iat-weat-wefat", "path": java_path, "commit": heads["java"],
                "note": "Caliskan's WEFAT program (class WordEmbeddingFactualAssociationTestProfessions, "
                        "'@author Aylin Caliskan'), in a repository under the MIT licence (copyright 2023 karie)"}
    crit = ROOT / "registry/caliskan2017/criteria"
    derivation = ("From the program's comment: each occupational category is labelled with its most representative "
                  "one-word occupation names (label1-label5); where one label results from several categories, "
                  "their workers are summed and the percentage of women is the mean of the categories' "
                  "percentages weighted by their numbers of workers. The 50 words are those of the program's "
                  "array 'professions' (the authors removed 'aide', 'technologist', 'assistant', 'waiter' and "
                  "'waitress' and kept the 50 words nearest the centroid of the remaining words' vectors). rows: "
                  "the categories whose labels hold the word; weight: their workers (thousands).")
    files[crit / "caliskan2017_wefat_occupations.yaml"] = dump({
        "id": "caliskan2017_wefat_occupations", "version": "1.0.0",
        "title": "Percentage of women in 50 occupations (US Bureau of Labor Statistics, 2015): Caliskan et al.'s "
                 "WEFAT 1 criterion",
        "concept": "Occupations", "language": "en", "license": "unspecified",
        "license_note": "The percentages are the US Bureau of Labor Statistics' (a US federal work, public domain in "
                        "the US). They are derived here from registry/caliskan2017/data/professionsBLS2015.csv, "
                        "copied from iPieter/biased-rulers, which states no licence; the 50 words come from "
                        "Caliskan's program in kariemoorman/iat-weat-wefat (MIT).",
        "source": {"paper": "caliskan2017", "section": "WEFAT (occupations and the percentage of women in them, "
                                                       "Figure 1)",
                   "authors_file": f"{java_src['repository']} {java_src['path']}",
                   "authors_commit": java_src["commit"], "authors_file_note": java_src["note"]},
        "criterion": {
            "measure": "women among the employed in the occupation", "unit": "percent",
            "meaning": "percentage of the people employed in the occupation (the labelled categories together) "
                       "who are women; 0 to 100",
            "agency": "US Bureau of Labor Statistics", "year": 2015,
            "table": "Current Population Survey, employed persons by detailed occupation, sex, race, and Hispanic "
                     "or Latino ethnicity, 2015 annual averages (cited by the authors' program as "
                     "http://www.bls.gov/cps/cpsaat11.htm)",
            "data_file": "registry/caliskan2017/data/professionsBLS2015.csv", "value_column": "Women",
            "key_columns": list(LABELS), "aggregate": "weighted_mean", "weight_column": "TotalEmployed",
            "derivation": derivation,
            "reliability": "A sample survey's estimate (the Current Population Survey); the file holds no "
                           "standard errors, and its smallest category has 50 thousand workers, so a word whose "
                           "rows are all small categories has a less certain percentage. The one-word labels and "
                           "the choice of the 50 words are the authors'; a label pools categories that differ "
                           "(e.g. 'worker').",
        },
        "a": "female_terms_weat7@1.0.0", "b": "male_terms_weat7@1.0.0", "expected_sign": "positive",
        "notes": "The association is WEFAT's s(w, A, B) with A the female and B the male attribute words of the "
                 "authors' program (attributesFirstSet, attributesSecondSet: the registry's WEAT 7 gender terms), "
                 "so a word associated with women scores high, as its percentage of women does.",
        "changelog": [{"version": "1.0.0", "date": DATE,
                       "change": "Initial curation by scripts/curate_validity_criteria.py"}],
        "items": occupations(bls, words)})
    files[crit / "caliskan2017_wefat_names.yaml"] = dump({
        "id": "caliskan2017_wefat_names", "version": "1.0.0",
        "title": "Gender score of 50 androgynous first names (1990 US census): Caliskan et al.'s WEFAT 2 criterion",
        "concept": "Androgynous names", "language": "en", "license": "GPL-3.0-only",
        "license_note": "The names and scores are copied from conjugateprior/cbn (DESCRIPTION: License: GPL-3); the "
                        "counts behind them are the US Census Bureau's (public domain in the US).",
        "source": {"paper": "caliskan2017", "section": "WEFAT (androgynous names and the 1990 census, Figure 2)",
                   "authors_file": f"conjugateprior/cbn {cbn_items} (WEFAT2$AndrogynousNames)",
                   "authors_commit": heads["cbn"],
                   "authors_file_note": "Will Lowe's R replication of Caliskan et al. (package cbn 0.3.2); the "
                                        "authors' own WEFAT names program is not public"},
        "criterion": {
            "measure": "gender score of the first name", "unit": "score from -1 to 1",
            "meaning": "(m - f) / (m + f), m and f the name's percentage in the male and in the female population: "
                       "-1 only women, 0 as many men as women, 1 only men",
            "agency": "US Census Bureau", "year": 1990,
            "table": "1990 census first-name frequencies by sex",
            "data_file": "registry/caliskan2017/data/censusNames1990.tsv", "value_column": "Female-1Male1Unisex0",
            "key_columns": ["Name"], "aggregate": "single",
            "derivation": "The row of the name (matched without regard to case: the file writes names in capitals).",
            "reliability": "The file does not say how its percentages were counted or how uncertain they are; "
                           "the score ignores the ages of the people named, so a name that changed gender over "
                           "time scores as its 1990 population. cbn's vignette says it is not clear how the paper's figure values "
                           "come out of this file; the score is a linear function of the share of women among the "
                           "name's bearers only if the male and female populations are of equal size.",
        },
        "a": "female_terms_weat7@1.0.0", "b": "male_terms_weat7@1.0.0", "expected_sign": "negative",
        "notes": "The score grows towards men while s(w, A, B) grows towards women (A female), so the expected "
                 "correlation is negative; its size is the paper's figure's, whose x axis is the percentage of "
                 "women.",
        "changelog": [{"version": "1.0.0", "date": DATE,
                       "change": "Initial curation by scripts/curate_validity_criteria.py"}],
        "items": names(census, andro)})
    garg_file = ROOT / "registry/garg2018/data/occupation_percentages_gender_occ1950.csv"
    garg_prov = yaml.safe_load((ROOT / "registry/garg2018/data/provenance.yaml").read_text())
    files[ROOT / "registry/garg2018/criteria/garg2018_occupations_women_2015.yaml"] = dump({
        "id": "garg2018_occupations_women_2015", "version": "1.0.0",
        "title": "Share of women in 1950-basis occupations, census year 2015 (IPUMS): Garg et al.'s occupation "
                 "validation data",
        "concept": "Occupations (1950 census basis)", "language": "en", "license": "unspecified",
        "license_note": "nikhgarg/EmbeddingDynamicStereotypes states no licence; the shares are computed by the "
                        "authors from IPUMS census microdata.",
        "source": {"paper": "garg2018", "section": "Occupations and census data (gender)",
                   "authors_file": "nikhgarg/EmbeddingDynamicStereotypes data/occupation_percentages_gender_occ1950.csv",
                   "authors_commit": garg_prov["authors_commit"]},
        "criterion": {
            "measure": "women among the workers of the occupation", "unit": "proportion",
            "meaning": "the share (0 to 1) of the occupation's weighted workers who are women",
            "agency": "US Census Bureau / American Community Survey via IPUMS (the authors' computation)",
            "year": 2015,
            "table": "the authors' file: Census year, Occupation (their single word for a 1950-basis occupation), "
                     "Total Weight, Female, Male",
            "data_file": "registry/garg2018/data/occupation_percentages_gender_occ1950.csv", "value_column": "Female",
            "key_columns": ["Occupation"], "where": {"Census year": "2015"}, "aggregate": "single",
            "derivation": "The authors' row of the word in census year 2015 (the latest year of the file).",
            "reliability": "A weighted sample estimate (IPUMS microdata); rows with a small Total Weight are "
                           "noisier. The map from census titles to single words is the authors' "
                           "(data/occupation_map.csv).",
        },
        "a": "garg2018_female_pairs@1.0.0", "b": "garg2018_male_pairs@1.0.0", "expected_sign": "positive",
        "notes": "Garg et al. measure the association by the relative norm distance and correlate it with the "
                 "log proportion; here it is WEFAT's s(w, A, B) against their female (A) and male (B) words.",
        "changelog": [{"version": "1.0.0", "date": DATE,
                       "change": "Initial curation by scripts/curate_validity_criteria.py"}],
        "items": garg(table(garg_file.read_bytes(), ","), "2015")})

    if args.corefbias:
        pdf_path = "NAACL2018_CorefBias.pdf"
        pdf = git_show(args.corefbias, pdf_path)
        head = git_head(args.corefbias)
        rows = winobias_table(pdf)
        text = csv_text(rows)
        zdata = ROOT / "registry/zhao2018/data"
        files[zdata / "winobias_occupations_bls2017.csv"] = text
        files[zdata / "provenance.yaml"] = (
            "# Validation data of Zhao et al. (2018): Table 1 of the paper, read from the PDF in the authors' repository\n"
            "# by scripts/curate_validity_criteria.py; read by registry/zhao2018/criteria/.\n" + yaml.safe_dump({
                "source": "zhao2018", "license": "MIT",
                "license_note": "uclanlp/corefBias's LICENSE is the MIT License (Copyright (c) 2020 Natural Language "
                                "Processing @UCLA); the percentages are the US Bureau of Labor Statistics' (public "
                                "domain in the US).",
                "authors_repository": "https://github.com/uclanlp/corefBias", "authors_commit": head,
                "files": [{"file": "winobias_occupations_bls2017.csv",
                           "authors_file": f"uclanlp/corefBias {pdf_path} (Table 1)",
                           "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                           "sha256_of_authors_file": hashlib.sha256(pdf).hexdigest(),
                           "description": "Table 1 of the paper ('Occupations statistics used in WinoBias dataset, "
                                          "organized by the percent of people in the occupation who are reported "
                                          "as female'; footnote 3: Labor Force Statistics from the Current "
                                          "Population Survey, 2017, https://www.bls.gov/cps/cpsaat11.htm) as the "
                                          "PDF's text gives it: occupation and percent_women as printed, the "
                                          "table_line and table_column of the cell; sorted by percent, then "
                                          "occupation."}]}, sort_keys=False, allow_unicode=True, width=110))
        files[ROOT / "registry/zhao2018/criteria/zhao2018_winobias_occupations_bls2017.yaml"] = dump({
            "id": "zhao2018_winobias_occupations_bls2017", "version": "1.0.0",
            "title": "Percentage of women in WinoBias's 40 occupations (US Bureau of Labor Statistics, 2017), as "
                     "Zhao et al. print them",
            "concept": "Occupations (WinoBias)", "language": "en", "license": "MIT",
            "license_note": "Read from the paper's PDF in uclanlp/corefBias (MIT); the percentages are the US Bureau "
                            "of Labor Statistics'.",
            "source": {"paper": "zhao2018", "section": "Section 2 (WinoBias), Table 1",
                       "authors_file": f"uclanlp/corefBias {pdf_path}", "authors_commit": head},
            "criterion": {
                "measure": "women among the employed in the occupation", "unit": "percent",
                "meaning": "percentage of the people in the occupation reported as female, as printed (whole "
                           "numbers); 0 to 100",
                "agency": "US Bureau of Labor Statistics", "year": 2017,
                "table": "Labor Force Statistics from the Current Population Survey, 2017 (cpsaat11), as the paper's "
                         "footnote cites it",
                "data_file": "registry/zhao2018/data/winobias_occupations_bls2017.csv",
                "value_column": "percent_women", "key_columns": ["occupation"], "aggregate": "single",
                "derivation": "The percentage the paper prints beside the occupation in Table 1.",
                "reliability": "A sample survey's estimate, printed rounded to whole percent; the paper does not say "
                               "which BLS categories each occupation word stands for (several are plural or "
                               "broader than one category, e.g. 'designers', 'chief').",
            },
            "a": "female_terms_weat7@1.0.0", "b": "male_terms_weat7@1.0.0", "expected_sign": "positive",
            "notes": "Zhao et al. use the percentages to call each occupation male or female stereotyped; here they "
                     "are the criterion of WEFAT's s(w, A, B) with Caliskan et al.'s female (A) and male (B) terms.",
            "changelog": [{"version": "1.0.0", "date": DATE,
                           "change": "Initial curation by scripts/curate_validity_criteria.py"}],
            "items": [{"text": r["occupation"], "kind": "group_term", "value": float(r["percent_women"]),
                       "rows": [n]} for n, r in enumerate(rows, 1)]})

    from eatlas.files import open_dir, write_under

    stale = []
    base = open_dir(ROOT)
    try:
        for path, content in files.items():
            blob = content.encode("utf-8") if isinstance(content, str) else content
            if path.is_file() and path.read_bytes() == blob:
                continue
            rel = path.relative_to(ROOT).as_posix()
            stale.append(rel)
            if not args.check:      # as every EATlas writer: a private temporary file renamed in, no link followed
                write_under(base, rel, lambda tmp, blob=blob: Path(tmp).write_bytes(blob), shown=ROOT)
    finally:
        os.close(base)
    print(("differ: " if args.check else "wrote: ") + (", ".join(stale) or "nothing"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
