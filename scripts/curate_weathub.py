"""Curate WEATHub (Mukherjee et al., EMNLP 2023) into the registry: sets, tests, published results.

Not part of the package. Run from the repository root with a bare git snapshot of the authors'
repository (github:iamshnoo/weathub):

    python scripts/curate_weathub.py GIT_DIR [--check]

It reads ``data/<lang>_{human,gt,all}/weat{1,2,6,7,8,9}.json``, ``data/<lang>_new/weat*.json`` and
``data/<lang>_india/weat*.json`` (``data/en/`` is Caliskan et al.'s English WEAT, held already as
caliskan2017) and ``final_results/results-csv/sheet{1,2,3}/<model>/<lang>_results.csv`` and
``final_results/valence/valence-<model>/<lang>_results_valence.csv``, and writes
``registry/weathub2023/{sets,tests,published}/``, ``registry/weathub2023/README.md`` and
``tests/data/authors/weathub/digests.json`` (sha256 of each authors' list, which
tests/test_registry_weathub.py re-derives every set from). Curation rules: :func:`curate_list`.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
import sys
import unicodedata
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from eatlas.registry.textcheck import item_key  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from item_cleaning import clean_items  # noqa: E402

PAPER = "weathub2023"
REPO = "iamshnoo/weathub"
LICENSE = "GPL-3.0"
LICENSE_NOTE = ("The lists are copied from the authors' GitHub repository iamshnoo/weathub, whose LICENSE file is "
                "the GNU GPL v3 (GPL-3.0). The authors' Hugging Face copy (iamshnoo/WEATHub) declares cc-by-4.0 in "
                "its dataset card, which says the dataset is currently released under CC-4.0 and that this might "
                "be updated. The two statements differ; EATlas records the licence of the files it copied "
                "(GPL-3.0). Check both before redistributing.")
DATE = "2026-11-23"
ROLES = {"targ1": "x", "targ2": "y", "attr1": "a", "attr2": "b"}
FOLDERS = ("human", "gt", "all", "new", "india")
VARIANT = {"human": "human_translation", "gt": "machine_translation", "all": "human_translation_extended"}
SOURCE_KIND = {"human": ["translation_human"], "gt": ["translation_machine"],
               "all": ["translation_human", "authors_curated"], "new": ["authors_curated", "translation_human"],
               "india": ["authors_curated"]}
FOLDER_TEXT = {
    "human": "human translation (annotators' column of annotations/<language>_sheet1.xlsx, sheet 1)",
    "gt": "machine translation (Google Translate column of annotations/<language>_sheet1.xlsx, sheet 1)",
    "all": "annotators' full list (annotations/<language>_sheet1.xlsx, sheet 2: the human translations with "
           "the words the annotators added for their language)",
    "new": "new bias dimensions (annotations/<language>_sheet2.xlsx)",
    "india": "India-specific dimensions (annotations/<language>_sheet3.xlsx)",
}
BIAS = {"weat1": "non-social", "weat2": "non-social", "weat6": "gender", "weat7": "gender", "weat8": "gender",
        "weat9": "disability", "weat11": "gender", "weat12": "disability", "weat12b": "disability",
        "weat13": "sexuality", "weat13b": "sexuality", "weat14": "education", "weat15": "immigration",
        **{f"weat{n}": "gender" for n in range(16, 21)}, "weat21": "caste", "weat22": "caste",
        "weat23": "religion", "weat24": "religion", "weat25": "religion", "weat26": "urban-rural"}
LANG_NOTE = {"ku": "The authors' code 'ku' is Kurmanji (annotations/kurmanji_sheet*.xlsx); kept as given.",
             "tl": "The authors' code 'tl' is Filipino (annotations/filipino_sheet*.xlsx); kept as given.",
             "ckb": "Central Kurdish (Sorani; annotations/kurdish_sheet*.xlsx)."}


DATE_VARIANTS = "2026-11-25"
CALISKAN = {"weat1", "weat2", "weat6", "weat7", "weat8", "weat9"}     # caliskan2017's ids of the tests WEATHub translated
OVERLAP_CANON = ("variant_of names {canon}, the canonical test it stands beside (the same language's human "
                 "translation where that one is canonical, else the English test it translates, else the Hindi "
                 "human translation).")


def canonical_of(tid: str, lang: str, folder: str, weat: str, clean: set) -> str:
    """The canonical test a variant names in variant_of: for a machine translation (_gt) or the annotators' full
    list (_all), the same language's human translation when that is a canonical test; else the English test it
    translates (Caliskan et al.'s WEAT 1-9, which caliskan2017 holds, or WEATHub's English list of a new or
    India-specific dimension); else, where that English list itself puts an item in both sets, the Hindi
    human translation."""
    if folder in ("gt", "all") and f"weathub_{lang}_{weat}" in clean:
        return f"weathub_{lang}_{weat}"
    if weat in CALISKAN:
        return weat
    for cand in (f"weathub_en_{weat}", f"weathub_hi_{weat}"):
        if cand in clean and cand != tid:
            return cand
    raise AssertionError(f"no canonical test for {tid}")


def git(gitdir: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9+]+", "_", text.lower()).strip("_")


def kind_of(category: str) -> str:
    """The set's default item kind, from the concept the authors name (their items are not typed)."""
    c = category.lower().replace(" ", "")
    if "names" in c:
        return "name"
    if "adjectives" in c:
        return "adjective"
    if "verbs" in c:
        return "verb"
    if c in ("maleterms", "femaleterms"):
        return "group_term"
    return "word"      # the part of speech is not stated: word level only


def digest(items: list[str]) -> str:
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode("utf-8")).hexdigest()


DATE_CROSS = "2026-11-27"      # a target's item also in an attribute declared in overlap (x/a, ...)


def curate_list(raw: list[str]) -> tuple[list[str], list[dict]]:
    """The authors' list -> (our items, the differences), by the curation scripts' one routine
    (scripts/item_cleaning.py: spaces, invisible marks, empty cells, repeats...), on the list NFC-normalised: WEATHub's
    NFC changes are recorded per set (its notes, and the raw list's digest), the other changes, with their positions,
    in source.differences. A cell pandas read from an empty spreadsheet cell ('nan') is an empty item."""
    return clean_items([unicodedata.normalize("NFC", t) for t in raw], nan_is_empty=True)


def rebuild(items: list[str], removed: list[dict]) -> list[str]:
    """The authors' (NFC) list from our items and the recorded differences (inverse of curate_list)."""
    out = list(items)
    for r in sorted(removed, key=lambda r: r["position"]):
        out.insert(r["position"], r["text"])
    return out


def read_sources(gitdir: str) -> dict:
    """(lang, folder, weat) -> {role: (category, raw list)} for every WEATHub file."""
    names = git(gitdir, "ls-tree", "-r", "--name-only", "HEAD", "data/").decode().split()
    out = {}
    for name in names:
        m = re.fullmatch(r"data/([a-z]+)_([a-z]+)/(weat\w+)\.json", name)
        if not m or m[2] not in FOLDERS:
            continue
        doc = json.loads(git(gitdir, "show", f"HEAD:{name}").decode("utf-8"))
        assert set(doc) == set(ROLES), name
        out[(m[1], m[2], m[3])] = {r: (doc[r]["category"], list(doc[r]["examples"])) for r in ROLES}
    return out


def weat_key(w: str):
    m = re.fullmatch(r"weat(\d+)(\w*)", w)
    return int(m[1]), m[2]


def dump(doc: dict) -> str:
    items = doc.pop("items", None)
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110)
    if items is not None:
        text += "items:\n" + "".join("- " + yaml.safe_dump(i, allow_unicode=True, width=10_000,
                                                           default_style=None).removesuffix("...\n").strip() + "\n"
                                     for i in items)
    return text


def build(gitdir: str) -> dict:
    """Every file to write: path (relative to the repository root) -> text."""
    commit = git(gitdir, "rev-parse", "HEAD").decode().strip()
    src = read_sources(gitdir)
    files: dict[str, str] = {}
    # group identical lists of one concept within a language and folder into one set
    groups: dict[tuple, dict[tuple, list[str]]] = defaultdict(dict)
    for (lang, folder, weat) in sorted(src, key=lambda k: (k[0], k[1], weat_key(k[2]))):
        for role, (cat, raw) in src[(lang, folder, weat)].items():
            norm = tuple(unicodedata.normalize("NFC", t) for t in raw)
            groups[(lang, folder, cat)].setdefault(norm, []).append(f"{weat}.{role}")
    set_id: dict[tuple, str] = {}          # (lang, folder, weat, role) -> set id
    set_docs: dict[str, dict] = {}
    digests = {"repository": REPO, "commit": commit, "lists": []}
    for (lang, folder, cat), lists in groups.items():
        base = f"weathub_{lang}_{folder}_{slug(cat)}"
        for _norm, uses in lists.items():
            sid = base if len(lists) == 1 else f"{base}_{uses[0].split('.')[0]}"
            for u in uses:
                w, r = u.split(".")
                set_id[(lang, folder, w, r)] = sid
            raw = src[(lang, folder, uses[0].split(".")[0])][uses[0].split(".")[1]][1]
            kept, removed = curate_list(raw)
            files_used = [f"data/{lang}_{folder}/{u.split('.')[0]}.json {u.split('.')[1]}" for u in uses]
            set_docs[sid] = {"lang": lang, "folder": folder, "cat": cat, "kept": kept, "removed": removed,
                             "files": files_used, "uses": uses, "nfc_changed": sum(
                                 unicodedata.normalize("NFC", t) != t for t in raw)}
    for key in sorted(src, key=lambda k: (k[0], k[1], weat_key(k[2]))):
        lang, folder, weat = key
        for role, (cat, raw) in src[key].items():
            digests["lists"].append({"file": f"data/{lang}_{folder}/{weat}.json", "role": role, "category": cat,
                                     "set": set_id[(lang, folder, weat, role)], "n": len(raw),
                                     "sha256_nfc": digest([unicodedata.normalize("NFC", t) for t in raw]),
                                     **({"sha256_raw": digest(raw)} if any(
                                         unicodedata.normalize("NFC", t) != t for t in raw) else {})})
    # sets
    for sid, d in sorted(set_docs.items()):
        lang, folder = d["lang"], d["folder"]
        notes = [f"{FOLDER_TEXT[folder]}; concept '{d['cat']}' as the authors name it."]
        if len(d["files"]) > 1:
            notes.append(f"The same list is in {len(d['files'])} of the authors' files (see source.authors_files).")
        notes.append(f"Kind: '{kind_of(d['cat'])}' for every item, from the concept; the authors do not type "
                     "their items, and only the word level is used (no template in this language).")
        if d["nfc_changed"]:
            notes.append(f"{d['nfc_changed']} item(s) are not in NFC in the authors' file (decomposed characters); "
                         "stored NFC-normalised (same text, canonical code points).")
        if d["removed"]:
            reps = [r for r in d["removed"] if r["text"] != "nan"]
            nans = [r for r in d["removed"] if r["text"] == "nan"]
            notes.append("DIFFERENCE: " + "; ".join(filter(None, [
                f"{len(reps)} repeated item(s) kept once (a set holds each stimulus once; the authors' list, "
                f"used by their code as is, weights a repeat twice)" if reps else "",
                f"{len(nans)} 'nan' cell(s) (an empty spreadsheet cell) left out" if nans else ""]))
                + "; positions in source.differences.")
        if lang in LANG_NOTE:
            notes.append(LANG_NOTE[lang])
        doc = {"id": sid, "version": "1.0.0", "concept": d["cat"], "language": lang, "kind": kind_of(d["cat"]),
               "source_kind": SOURCE_KIND[folder], "license": LICENSE, "license_note": LICENSE_NOTE}
        if folder in VARIANT:
            doc["variant"] = VARIANT[folder]
            if folder != "human":
                w, r = d["uses"][0].split(".")
                canon = set_id.get((lang, "human", w, r))
                if canon:
                    doc["variant_of"] = canon
        doc["source"] = {"paper": PAPER,
                         "authors_file": f"{REPO} {d['files'][0]}"}
        if len(d["files"]) > 1:
            doc["source"]["authors_files"] = [f"{REPO} {f}" for f in d["files"]]
        doc["source"]["commit"] = commit
        if d["removed"]:
            doc["source"]["differences"] = d["removed"]
        doc["notes"] = " ".join(notes)
        doc["changelog"] = [{"version": "1.0.0", "date": DATE,
                             "change": f"Initial curation from {REPO} {d['files'][0]} (commit {commit[:7]})."}]
        doc["items"] = d["kept"]
        files[f"registry/{PAPER}/sets/{sid}.yaml"] = dump(doc)
    # tests
    skipped, made, overlaps = [], {}, {}
    for key in sorted(src, key=lambda k: (k[0], k[1], weat_key(k[2]))):
        lang, folder, weat = key
        tid = f"weathub_{lang}_{weat}" + ("" if folder in ("human", "new", "india") else f"_{folder}")
        refs = {ROLES[r]: set_id[(lang, folder, weat, r)] for r in ROLES}
        items = {k: set_docs[s]["kept"] for k, s in refs.items()}
        why, shared = [], {}
        for p, q in (("x", "y"), ("a", "b")):
            assert refs[p] != refs[q], (tid, p, q)       # no test of the authors names one list twice
            kp = {item_key(t, True) for t in items[p]}
            both = [t for t in items[q] if item_key(t, True) in kp]
            if both:
                why.append(f"{len(both)} item(s) in both {p} and {q} ({', '.join(both)})")
                shared[f"{p}/{q}"] = both
        if why:
            skipped.append((tid, f"data/{lang}_{folder}/{weat}.json", "; ".join(why)))
            overlaps[tid] = shared
        made[tid] = (lang, folder, weat, refs)
    clean = {t for t in made if t not in overlaps}
    for tid, (lang, folder, weat, refs) in made.items():
        cats = {k: set_docs[s]["cat"] for k, s in refs.items()}
        sizes = {k: len(set_docs[s]["kept"]) for k, s in refs.items()}
        what = {"human": "human translation", "gt": "machine translation", "all": "annotators' full list",
                "new": "new dimension", "india": "India-specific"}[folder]
        notes = [f"WEATHub {weat}, {lang}, {FOLDER_TEXT[folder]}."]
        if sizes["x"] != sizes["y"]:
            notes.append(f"|X|={sizes['x']} and |Y|={sizes['y']} differ (the authors' lists, after repeats "
                         "were kept once), so equal_targets is false.")
        canon = canonical_of(tid, lang, folder, weat, clean) if tid in overlaps or folder in ("gt", "all") else None
        if tid in overlaps:
            what_pair = "; ".join(f"{', '.join(v)} in both {'targets' if k == 'x/y' else 'attributes'}"
                                  for k, v in overlaps[tid].items())
            notes.append(f"VARIANT (authors-lists): the authors' lists put {what_pair}. The test keeps them as they "
                         "are, so that the numbers WEATHub printed for it can be set beside a run; such an item is "
                         "compared with itself in both concepts. The items are declared in overlap: and recorded "
                         "with every result (results.overlap). It runs only when named; "
                         + OVERLAP_CANON.format(canon=canon))
        elif folder == "human":
            notes.append("Canonical entry: the human translation; the machine translation (_gt) and the "
                         "annotators' full list (_all) are its variants.")
        doc = {"id": tid, "version": "1.0.0",
               "title": f"WEATHub {weat} ({lang}, {what}): {cats['x']}/{cats['y']} vs {cats['a']}/{cats['b']}",
               "bias_type": BIAS[weat], "level": "word", "language": lang, "license": LICENSE,
               "license_note": LICENSE_NOTE}
        if tid in overlaps:
            doc["variant"], doc["variant_of"] = "authors-lists", canon
        elif folder in VARIANT:
            doc["variant"] = VARIANT[folder]
            if folder != "human":
                doc["variant_of"] = canon
        doc["source"] = {"paper": PAPER, "authors_file": f"{REPO} data/{lang}_{folder}/{weat}.json",
                         "commit": commit}
        doc.update({f"{k}": f"{refs[k]}@1.0.0" for k in ("x", "y", "a", "b")})
        doc["expansions"] = {}
        # an item the authors' lists put in a target and an attribute (validate warns unless declared)
        cross = {f"{t}/{a}": [w for w in set_docs[refs[t]]["kept"] if w in set(set_docs[refs[a]]["kept"])]
                 for t in "xy" for a in "ab"}
        cross = {k: v for k, v in cross.items() if v}
        if cross:
            doc["overlap"] = cross
            for k, v in cross.items():
                t, a = k.split("/")
                notes.append(f"The authors' lists put {', '.join(v)} in both {t.upper()} ({cats[t]}) and {a.upper()} "
                             f"({cats[a]}); the test keeps them as they are (a list is never altered), declares the "
                             f"item in overlap ({k}), and every result records it (results.overlap); it is compared "
                             "with itself in both concepts.")
        if sizes["x"] != sizes["y"]:
            doc["equal_targets"] = False
        if tid in overlaps:
            doc["overlap"] = overlaps[tid]
        doc["notes"] = " ".join(notes)
        change = f"Initial curation from {REPO} data/{lang}_{folder}/{weat}.json."
        if tid in overlaps:
            change = (f"Imported from {REPO} data/{lang}_{folder}/{weat}.json as a variant keeping the authors' "
                      "lists, with the items in both sets declared in overlap:. Earlier registries left this test "
                      "out because its lists overlap.")
        doc["changelog"] = [{"version": "1.0.0", "date": DATE if tid not in overlaps else DATE_VARIANTS,
                             "change": change}]
        if cross:               # declared after the first curation (version 1.0.1)
            doc["version"] = "1.0.1"
            doc["changelog"].append({"version": "1.0.1", "date": DATE_CROSS, "change": " ".join(
                f"The item the authors' lists put in both {k[0].upper()} and {k[2].upper()} ({', '.join(v)}) is "
                f"declared in overlap ({k}) and said in the notes; the lists are unchanged." for k, v in cross.items())
                + " validate no longer warns about it."})
        files[f"registry/{PAPER}/tests/{tid}.yaml"] = dump(doc)
    pub = published(gitdir, made)
    files.update(pub)
    labels = {row.split(",")[-3] for text in pub.values() for row in text.splitlines()[1:]}
    files[f"registry/{PAPER}/published/models.yaml"] = models_yaml(commit, labels)
    files["tests/data/authors/weathub/digests.json"] = json.dumps(digests, ensure_ascii=False, indent=0) + "\n"
    files[f"registry/{PAPER}/README.md"] = readme(commit, set_docs, made, skipped)
    return files


PUB_HEADER = ["paper", "table_id", "row_label", "column_label", "statistic", "value", "significance", "missing",
              "test_id", "level", "model", "model_family", "note"]
CELL = re.compile(r"(-?\d+\.\d+) \((\d+\.\d+)\)")


def published(gitdir: str, made: dict) -> dict:
    """final_results/results-csv/sheet{1,2,3}/<model>/ and final_results/valence/: one CSV per folder. The fastText
    rows, which every model folder of a sheet repeats (the same vectors whatever the contextual model), are kept
    once, in <sheet>_fasttext.csv, with family fasttext: from the first folder (in name order) that holds each
    row, after checking that every folder holding it prints the same cells."""
    names = git(gitdir, "ls-tree", "-r", "--name-only", "HEAD", "final_results/").decode().split()
    out: dict[str, list] = defaultdict(list)
    fasttext: dict[tuple, tuple] = {}          # (sheet, lang, row label) -> (first file, its cells)
    also: dict[tuple, list] = defaultdict(list)
    for name in sorted(names):
        m = re.fullmatch(r"final_results/results-csv/(sheet\d)/(\w+)/([a-z]+)_results\.csv", name) or \
            re.fullmatch(r"final_results/valence/(valence)-(\w+)/([a-z]+)_results_valence\.csv", name)
        if not m:
            continue
        sheet, family, lang = m[1], m[2], m[3]
        rows = list(csv.reader(io.StringIO(git(gitdir, "show", f"HEAD:{name}").decode("utf-8"))))
        head = rows[0]
        assert head[:3] == ["Type", "DataSource", "Method"], name
        for r in rows[1:]:
            typ, source, method = r[:3]
            label = f"{lang} | {typ},{source},{method}"
            if method == "fasttext" and family != "fasttext":
                key = (sheet, lang, label)
                if key in fasttext:
                    assert fasttext[key][1] == (head, r), ("fastText rows differ", name, fasttext[key][0])
                    also[key].append(name)
                    continue
                fasttext[key] = (name, (head, r))
                out_key = f"{sheet}_fasttext"
            else:
                out_key = f"{sheet}_{family}"
            folder = {"ALL": "all", "GT": "gt", "HT": "human" if sheet == "sheet1" else "india",
                      "NEW_HT": "new"}[source]
            if sheet == "sheet3" and source == "GT":
                folder = None           # no machine-translated India-specific lists in data/
            for weat, cell in zip(head[3:], r[3:]):
                c = CELL.fullmatch(cell)
                assert c, (name, r[:3], cell)
                tid = f"weathub_{lang}_{weat}" + ("_gt" if folder == "gt" else "_all" if folder == "all" else "")
                note = "printed 'd (p)'"
                if folder is None or tid not in made:
                    note += "; no EATlas test (" + ("no machine-translated India-specific list in data/"
                                                    if folder is None else "not in data/") + ")"
                    tid = ""
                fam = "fasttext" if method == "fasttext" else family
                for stat, val in (("effect_size", c[1]), ("p_value", c[2])):
                    out[out_key].append([PAPER, name, label, weat, stat, val, "", "false", tid, "word", method, fam,
                                         note])
    for key, names_also in also.items():       # where else the authors printed the same fastText row
        first = fasttext[key][0]
        where = ", ".join(sorted({n.split("/")[3] for n in names_also}))
        for row in out[f"{key[0]}_fasttext"]:
            if row[1] == first and row[2] == key[2]:
                row[12] += f"; the same row, cell for cell, in the {where} folder(s) of {key[0]}"
    # Rows the XLM-R table prints with the very cells of the DistilmBERT table's row (same sheet, language, data
    # source, method): which model produced them cannot be told from the files, and each says so.
    for sheet in ("sheet1", "sheet2", "sheet3"):
        def cells(fam, sheet=sheet):
            by = defaultdict(list)
            for row in out.get(f"{sheet}_{fam}", []):
                lang, rest = row[2].split(" | ")
                by[(lang, rest.rsplit(",", 1)[0], row[10].split("-", 1)[1])].append(row)
            return by
        d, x = cells("distilbert"), cells("xlmr")
        for key, rows in x.items():
            if key in d and [r[3:6] for r in rows] == [r[3:6] for r in d[key]]:
                for r in rows + d[key]:
                    other = d[key][0] if r in rows else rows[0]
                    r[12] += (f"; the row '{other[2]}' of {other[1]} prints the very same cells, so which of "
                              "DistilmBERT and XLM-R produced them is uncertain (published/models.yaml)")
    files = {}
    for key, rows in out.items():
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(PUB_HEADER)
        w.writerows(rows)
        files[f"registry/{PAPER}/published/{key}.csv"] = buf.getvalue()
    return files


# The models of WEATHub's tables: which hub model each printed Method is, read from the authors' code
# (src/encoding_utils.py, src/run_weat.py) and checked against their per-run files (results/<lang>/all_tests_<hub
# id>_*.json), whose cells the final_results tables consolidate.
FAMILIES = {
    "distilbert": ("DistilmBERT", {"*": "distilbert-base-multilingual-cased"}),
    "xlmr": ("XLM-R", {"*": "xlm-roberta-base"}),
    "indicbert": ("IndicBERT", {"*": "ai4bharat/indic-bert"}),
    "monobert": ("monolingual BERT", {
        "ar": "asafaya/bert-base-arabic", "bn": "l3cube-pune/bengali-bert", "el": "nlpaueb/bert-base-greek-uncased-v1",
        "hi": "l3cube-pune/hindi-bert-v2", "it": "dbmdz/bert-base-italian-uncased", "mr": "l3cube-pune/marathi-bert-v2",
        "pa": "l3cube-pune/punjabi-bert", "ru": "DeepPavlov/rubert-base-cased", "te": "l3cube-pune/telugu-bert",
        "th": "monsoon-nlp/bert-base-thai", "tl": "jcblaise/roberta-tagalog-base", "tr": "dbmdz/bert-base-turkish-uncased",
        "ur": "urduhack/roberta-urdu-small", "vi": "trituenhantaoio/bert-base-vietnamese-uncased",
        "zh": "bert-base-chinese"}),
}
PREFIX = {"distilbert": "distilbert", "xlmr": "xlmr", "indicbert": "indic-bert", "monobert": "mono-bert"}
# Method label suffix -> (run_weat.py strategy, encoding_utils function, what it computes, the paper's method).
PER_TOKEN = ("each space-separated word of the stimulus is tokenised alone (tokenizer(word).tokens()[1:-1]); each "
             "of its subword tokens is then sent through the model ALONE, as the text of a new input "
             "(tokenizer(token) with special tokens added), and the vector at position 1 (the first piece of that "
             "re-tokenised token) is kept")
METHODS = {
    "CLS": ("2", "encode_words_2", "last_hidden_state[0, 0] of the whole stimulus (the first special token: [CLS] "
            "or <s>); no subword or phrase strategy", None),
    "last-hidden-subword-first": ("3a", "encode_words_1", f"{PER_TOKEN} from the last layer "
                                  "(last_hidden_state[0, 1]); a word is its first token's vector; a phrase the mean "
                                  "of its words", None),
    "last-hidden-subword-avg": ("3b", "encode_words_1", f"{PER_TOKEN} from the last layer (last_hidden_state[0, 1]); "
                                "a word is the mean of its tokens' vectors; a phrase the mean of its words", "M8"),
    "2nd-last-layer-subword-first": ("4a", "encode_words_3", f"{PER_TOKEN} from the second-to-last layer "
                                     "(hidden_states[-2][0, 1]); first token; mean over words", None),
    "2nd-last-layer-subword-avg": ("4b", "encode_words_3", f"{PER_TOKEN} from the second-to-last layer "
                                   "(hidden_states[-2][0, 1]); mean over tokens; mean over words", None),
    "avg-all-hidden-subword-first": ("5a", "encode_words_4", f"{PER_TOKEN} as the mean over every hidden state "
                                     "(the embeddings and each layer) at position 1; first token; mean over words",
                                     None),
    "avg-all-hidden-subword-avg": ("5b", "encode_words_4", f"{PER_TOKEN} as the mean over every hidden state "
                                   "(the embeddings and each layer) at position 1; mean over tokens; mean over words",
                                   "M5"),
    "layer-0-subword-first": ("1a", "encode_words_b", f"{PER_TOKEN} from the embedding layer "
                              "(hidden_states[0][0, 1]); first token; mean over words", None),
    "layer-0-subword-avg": ("1b", "encode_words_b", f"{PER_TOKEN} from the embedding layer (hidden_states[0][0, 1]); "
                            "mean over tokens; mean over words", "M1"),
}


def models_yaml(commit: str, labels: set) -> str:
    """registry/weathub2023/published/models.yaml: one entry per Method label the published tables print, in the
    form eatlas.encoders.identity reads (hub_ids, encoding, pooling, layer, code, departures)."""
    code = f"{REPO} src/encoding_utils.py and src/run_weat.py (commit {commit[:7]})"
    per_token = {"what": "each subword token is encoded alone, out of its word and sentence",
                 "code": "encoding_utils.py encode(): tokens = tokenizer(word).tokens()[1:-1]; each token string is "
                         "then passed to encode_words_N as a text of its own (tokenizer(token) with special tokens, "
                         "the model on that input), and the vector at position 1 is kept",
                 "effect": "no EATlas encoding computes this (its pooling reads the tokens of the whole text in one "
                           "pass), so no run pairs with these numbers in reproduction (encoding unknown)"}
    models = []
    for fam, (name, hubs) in FAMILIES.items():
        prefixes = [PREFIX[fam]] + (["mono-indic-bert"] if fam == "monobert" else [])
        for prefix in prefixes:
            for suffix, (strategy, fn, what, paper_m) in METHODS.items():
                label = f"{prefix}-{suffix}"
                if label not in labels:
                    continue
                m = {"model": label, "model_family": fam, "name": name}
                if "*" in hubs:
                    m["hub_ids"] = [hubs["*"]]
                else:
                    langs = ("bn", "hi") if prefix == "mono-indic-bert" else tuple(hubs)
                    m["hub_ids"] = sorted({hubs[k] for k in langs})
                    m["hub_id_by_language"] = {k: hubs[k] for k in sorted(langs)}
                if suffix == "CLS":         # the whole stimulus through the model, the first token's last state
                    m.update(encoding="standard", pooling="cls", layer=-1)
                else:
                    m.update(encoding="unknown", departures=[per_token])
                if paper_m:
                    m["paper_method"] = paper_m
                m["code"] = f"strategy {strategy} of run_weat.py, {fn} in encoding_utils.py: {what}"
                m["stated_in"] = (f"{code}: AutoTokenizer/AutoModel.from_pretrained(name) in load_hf_tokenizer_model; "
                                  "the hub id as in the authors' result files results/<lang>/all_tests_<hub id>_*.json, "
                                  "whose cells the table prints")
                models.append(m)
    models.append({"model": "fasttext", "model_family": "fasttext", "name": "fastText",
                   "corpus": "Common Crawl + Wikipedia", "dimension": 300, "hub_ids": [],
                   "no_hub_id": "fastText's binary cc.<lang>.300.bin, fetched by fasttext.util.download_model(lang) "
                                "(encoding_utils.py load_fasttext_model), not a Hugging Face repository",
                   "paper_method": "M10",
                   "code": "strategy 0 of run_weat.py, encode_words_a in encoding_utils.py: get_word_vector of each "
                           "space-separated word (fastText builds a vector from subword n-grams for a word outside "
                           "its vocabulary); a phrase the mean of its words",
                   "stated_in": f"{code}: load_fasttext_model and encode_words_a, the files cc.<lang>.300.bin (300 "
                                "dimensions), fastText's vectors for 157 languages trained on Common Crawl and "
                                "Wikipedia (Grave et al., LREC 2018, 'Learning Word Vectors for 157 Languages'); the "
                                "same rows in every model folder of final_results (stored once, <sheet>_fasttext.csv)"})
    head = f"""# The models of WEATHub's tables (Mukherjee et al., EMNLP 2023; eatlas.encoders.identity), read from the authors'
# code, iamshnoo/weathub at commit {commit}: src/encoding_utils.py names every model it loaded
# ("MODELS USED"), and the per-run files results/<lang>/all_tests_<hub id>_*.json, whose cells the tables in
# final_results/ consolidate, name the hub id of each run. Written by scripts/curate_weathub.py.
#
# How the authors' code encoded a stimulus (code) differs from the usual pooling: outside the CLS method, every
# subword token is re-tokenised and sent through the model on its own, without the rest of its word, and the
# vector at position 1 is kept (departures; encoding unknown: no EATlas encoding computes it). The CLS method is
# EATlas's standard encoding with --pooling cls at the last layer. Their lists keep repeated items, which EATlas
# keeps once (the sets' source.differences). No WEATHub model is available offline, so no run pairs with these
# numbers in the view `reproduction` today.
#
# Checked against the authors' files (scripts/curate_weathub.py): the 'mono-bert' hub id of each language is the
# one whose per-run files hold the printed cells; 'mono-indic-bert' (sheet 1, bn and hi) is l3cube-pune's Bengali and
# Hindi BERT, not ai4bharat/indic-bert. Sheet 1's XLM-R rows for el, ru and zh (80 of its 648 rows) print the very
# cells of the DistilmBERT rows (same language, data source and method); each such row of both tables says so in
# its note, since the files do not tell which model produced them. Every DistilmBERT, IndicBERT, monolingual-BERT
# and fastText row of sheets 1-3 matches a committed per-run file of its hub id, cell for cell; of the XLM-R rows,
# 108 of 648 (sheet 1, 80 of them the rows above), 18 of 225 (sheet 2) and 54 of 63 (sheet 3) match the committed
# results/<lang>/all_tests_xlm-roberta-base_*.json files and the others match none (checked on 2026-11-25). In the
# code, the model is the default argument of load_hf_tokenizer_model (encoding_utils.py: "SET THE MODEL NAME"),
# while run_weat.py's BERT_NAME only names the result file, so a result file's name need not be the model it ran.
# The authors' WEAT: 100,000 sampled partitions, seed 42, lists used with their repeated items (README.md).
paper: {PAPER}
"""
    return head + yaml.safe_dump({"models": models}, sort_keys=False, allow_unicode=True, width=110)


def readme(commit: str, set_docs: dict, made: dict, skipped: list) -> str:
    langs = sorted({d["lang"] for d in set_docs.values()})
    reps = sum(1 for d in set_docs.values() for r in d["removed"] if r["text"] != "nan")
    nans = sum(1 for d in set_docs.values() for r in d["removed"] if r["text"] == "nan")
    nfc = sum(d["nfc_changed"] for d in set_docs.values())
    lines = [
        "# WEATHub (Mukherjee, Raj, Zhu & Anastasopoulos, EMNLP 2023)", "",
        f"Curated by scripts/curate_weathub.py from the authors' repository {REPO} (commit {commit}).",
        f"{len(set_docs)} sets and {len(made)} tests in {len(langs)} languages ({', '.join(langs)}).", "",
        "## Variants",
        "The WEAT 1, 2, 6, 7, 8, 9 lists exist three times per language: `data/<lang>_human` (annotators' "
        "translation), `data/<lang>_gt` (Google Translate) and `data/<lang>_all` (the annotators' full list, "
        "with the culturally relevant words they added). The human translation is the canonical entry "
        "(`weathub_<lang>_<weat>`, `variant: human_translation`): it is the translation the native-speaker annotators "
        "made (src/load_annotations.py: column 2 of the first sheet; Google Translate is column 1). `weathub_<lang>_<weat>_gt` "
        "(`variant: machine_translation`) and `weathub_<lang>_<weat>_all` "
        "(`variant: human_translation_extended`) name it in `variant_of`; so do their sets.", "",
        "## Gendered languages",
        "No paired forms: the authors' code (src/weat.py, src/run_weat.py) has no notion of a word's grammatical "
        "gender; each list is one list, as the annotators wrote it, and the tests of gendered languages are tests on "
        "four lists, as WEATHub ran them (docs/methods.md, 'Paired forms').", "",
        "## Licence",
        LICENSE_NOTE, "",
        "## Differences from the authors' files",
        f"- {reps} repeated items (a word the translation gave for two English words, e.g. two of the "
        "pleasant words) are kept once per set; the authors' code used the lists with the repeats.",
        f"- {nans} 'nan' items (empty spreadsheet cells that pandas read as 'nan') are left out.",
        f"- {nfc} items in decomposed form are stored NFC-normalised.",
        "- Each set lists the positions it left out in `source.differences`; "
        "tests/test_registry_weathub.py rebuilds every authors' list from them and compares it with the "
        "sha256 in tests/data/authors/weathub/digests.json.",
        "- Zero-width joiners (U+200D, Marathi) and non-joiners (U+200C, Telugu) inside words are the "
        "authors' and are kept.", "",
        f"## Tests whose lists put an item in both targets or both attributes ({len(skipped)})",
        "In these tests the translation gives the same word for both concepts (e.g. a language without "
        "gendered pronouns, or one word for two English ones). The validator refuses such a test unless it "
        "declares the shared items in `overlap:`; these are kept as the authors' lists hold them, as variants "
        "(`variant: authors-lists`), so that the numbers WEATHub printed for them can be set beside a run. "
        "A run records the shared items with each result (`results.overlap`). They run only when named "
        "(`eatlas run --tests weathub_hi_weat7`); the default run keeps to canonical tests. " + OVERLAP_CANON.format(
            canon="a canonical test"), "",
        *(f"- `{tid}` ({f}): {why}" for tid, f, why in skipped), "",
        "## Published results",
        "`published/<sheet>_<model>.csv`: every cell of final_results/results-csv/sheet{1,2,3}/<model>/"
        "<lang>_results.csv and final_results/valence/valence-<model>/<lang>_results_valence.csv, as two rows "
        "(effect_size, p_value) of the printed 'd (p)' (WEAT effect size and p-value, computed by the authors on "
        "their lists, repeats included). `row_label` is '<lang> | Type,DataSource,Method' as in "
        "the file; `model` the Method column. The fastText rows, which every model folder of a sheet repeats "
        "with the same cells (fastText's vectors do not depend on the contextual model beside them), are stored "
        "once, in `<sheet>_fasttext.csv` with family `fasttext`, from the first folder that holds each row; "
        "the curation checks that the other folders print the same cells. `published/models.yaml` says which "
        "model each Method is (the hub ids the authors' code loaded) and how their code encoded a word. "
        "`final_results/results-csv/variances/` (cosine variances, not "
        "test results) and the per-run JSON files under results/<lang>/ (the runs the final_results tables "
        "consolidate) are not imported.", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    files = build(argv[0])
    check = "--check" in argv
    differ = []
    for rel, text in files.items():
        p = ROOT / rel
        if check:
            if not p.is_file() or p.read_text(encoding="utf-8") != text:
                differ.append(rel)
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    if check:
        print(f"{len(differ)} file(s) differ" + (f", e.g. {differ[:3]}" if differ else ""))
        return 1 if differ else 0
    print(f"wrote {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
