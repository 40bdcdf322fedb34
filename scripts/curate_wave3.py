"""Curation of the registry's third wave (the field's newer and multilingual lists) from the authors' files.

Not part of the package. Run from the repository root with a folder of bare git snapshots of the authors'
repositories, one per repository at ``SNAPSHOTS/<owner>+<name>/repo`` (the layout of a ``fetch`` of
``github:<owner>/<name>``):

    python scripts/curate_wave3.py SNAPSHOTS [--only caweat,lewis2020,...]
    python -m eatlas catalog --sync && python -m eatlas.registry.licenses > DATA-LICENSES.md

Each step reads its repository at the commit the snapshot holds, records that commit in every file it writes,
removes what an earlier run of the same step wrote, and writes registry/<source>/{sets,tests,published}/ and the
digests the curation tests re-derive the lists from (tests/data/authors/wave3/digests.json). Every list is the
authors' as their own code reads it; every change (a repeat kept once, a stripped space, an invisible mark) is
recorded with the set (source.differences) and said in its notes (DIFFERENCE).
"""
from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wave3_common import (  # noqa: E402
    DATE,
    ROOT,
    Snapshot,
    coverage_note,
    curate_list,
    difference_note,
    dump,
    item_key,
    list_digest,
    update_digests,
    write_files,
)

STEPS: dict[str, callable] = {}


def step(fn):
    STEPS[fn.__name__] = fn
    return fn


def changelog(change: str) -> list[dict]:
    return [{"version": "1.0.0", "date": DATE, "change": change}]


def set_doc(*, sid: str, concept: str, language: str, kind: str, license: str, source: dict, notes: list[str],
            items: list, source_kind: list[str] | None = None, license_note: str | None = None,
            variant: str | None = None, variant_of: str | None = None, change: str, tags: list | None = None,
            group: dict | None = None) -> dict:
    doc: dict = {"id": sid, "version": "1.0.0", "concept": concept, "language": language, "kind": kind}
    if source_kind:
        doc["source_kind"] = source_kind
    doc["license"] = license
    if license_note:
        doc["license_note"] = license_note
    if variant:
        doc["variant"] = variant
        if variant_of:
            doc["variant_of"] = variant_of
    doc["source"] = source
    if group:
        doc["group"] = group
    if tags:
        doc["tags"] = tags
    doc["notes"] = " ".join(n for n in notes if n)
    doc["changelog"] = changelog(change)
    doc["items"] = items
    return doc


def overlaps(items: dict[str, list[str]]) -> dict[str, list[str]]:
    """x/y, a/b -> the items both sets of the pair hold (as the validator compares them)."""
    out = {}
    for p, q in (("x", "y"), ("a", "b")):
        kp = {item_key(t, True) for t in items[p]}
        both = [t for t in items[q] if item_key(t, True) in kp]
        if both:
            out[f"{p}/{q}"] = both
    return out


PUB_HEADER = ["paper", "table_id", "row_label", "column_label", "statistic", "value", "significance", "missing",
              "test_id", "level", "model", "model_family", "note"]


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=PUB_HEADER, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


# ===================================================================================================== CA-WEAT
CAWEAT = "espanabonet2022"
CAWEAT_REPO = "cristinae/CA-WEAT"
# caweat.py's WEAT 1, by version (checked in the repository's history): FLOWERS and INSECTS from the first version
# (eba1aae) to c88aefe (2023-12-11); INSTRUMENTS and INSECTS from 49af924 (2024-09-24) on.
CAWEAT_WEAT1_NOTE = (
    "WEAT 1 as the authors' code of 2022 builds it: FLOWERS and INSECTS (caweat.py from its first version to "
    "00c0c1a, 2022-11-30, the code of the paper's numbers, and to c88aefe, 2023-12-11), the IAT1 the README and "
    "the paper describe. DIFFERENCE (the authors' current code): commit 49af924 (2024-09-24, 'ca-weat can now deal "
    "with json files') builds WEAT 1 from the INSTRUMENTS and INSECTS columns (weat_1: targets_1 = INSTRUMENTS), as "
    "the commit curated here does; the registry follows the 2022 version, whose WEAT 1 is the paper's.")
CA_COLS = {"FLOWERS": ("flowers", "Flowers"), "INSECTS": ("insects", "Insects"),
           "INSTRUMENTS": ("instruments", "Musical instruments"), "WEAPONS": ("weapons", "Weapons"),
           "PLEASANT": ("pleasant", "Pleasant"), "UNPLEASANT": ("unpleasant", "Unpleasant")}
CA_TESTS = {1: ("FLOWERS", "INSECTS", "Flowers/Insects vs Pleasant/Unpleasant", "weat1"),
            2: ("INSTRUMENTS", "WEAPONS", "Musical instruments/Weapons vs Pleasant/Unpleasant", "weat2")}
CALISKAN_SETS = {"FLOWERS": "flowers", "INSECTS": "insects", "INSTRUMENTS": "instruments", "WEAPONS": "weapons",
                 "PLEASANT": "pleasant", "UNPLEASANT": "unpleasant"}
# The printed names of collectedData.csv's model column: plots/plotCollectedData.py `naming` (the labels of the
# paper's tables and figures), LaTeX subscripts written with '_'.
CA_SPLIT = ("The authors' code splits a cell with .replace(', ', ',').split(',') (caweat.py weat_1/weat_2) and "
            "strips each piece (--phrases); EATlas keeps each piece as one item, as that split gives it.")
CA_LICENSE_NOTE = ("The repository cristinae/CA-WEAT has no licence file and its README states no terms for the "
                   "lists; it asks users to cite España-Bonet and Barrón-Cedeño (2022). Redistribution terms unknown.")


def ca_lang(code: str) -> str:
    """The BCP-47 tag of a CA-WEAT list name (it1 -> it, en_US1 -> en-US, zh1 -> zh-Hans)."""
    m = re.fullmatch(r"([a-z]{2})(?:_([A-Z]{2}))?(\d*)", code)
    assert m, code
    lang = m[1] + (f"-{m[2]}" if m[2] else "")
    return "zh-Hans" if lang == "zh" else lang


def ca_slug(code: str) -> str:
    return code.lower()


def split_cell(cell: str) -> list[str]:
    return cell.replace(", ", ",").split(",")


@step
def caweat(base: str) -> None:
    snap = Snapshot(base, CAWEAT_REPO)
    c7 = snap.commit[:7]
    v1_path, x_path, pub_path = "data/CA-WEATv1.tsv", "data/X-WEATv1.tsv", "plots/collectedData.csv"
    v1 = list(csv.DictReader(io.StringIO(snap.text(v1_path)), delimiter="\t"))
    xw = list(csv.DictReader(io.StringIO(snap.text(x_path)), delimiter="\t"))
    v3 = {r["LANG"]: r for r in csv.DictReader(io.StringIO(snap.text("data/CA-WEATv3.tsv")), delimiter="\t")}
    files: dict[str, str] = {}
    digests = {"repository": CAWEAT_REPO, "commit": snap.commit,
               "files": {p: snap.sha256(p) for p in (v1_path, x_path, pub_path)}, "lists": []}
    caliskan = {}
    for col, sid in CALISKAN_SETS.items():
        import yaml
        d = yaml.safe_load((ROOT / f"registry/caliskan2017/sets/{sid}.yaml").read_text(encoding="utf-8"))
        caliskan[col] = [i if isinstance(i, str) else i["text"] for i in d["items"]]
    tests_made: dict[str, str] = {}          # (list name, test number) -> test id, for the published rows
    langs = set()

    def make_sets(prefix: str, row: dict, lang: str, path: str, who: str, kind_src: list[str], variant: str | None,
                  extra_note: str) -> dict[str, tuple[str, list[str]]]:
        out = {}
        for col, (slug, concept) in CA_COLS.items():
            raw = split_cell(row[col])
            kept, diffs = curate_list(raw)
            sid = f"{prefix}_{slug}"
            variant_of = None
            if lang == "en" and variant:
                if kept == caliskan[col]:                   # the English original: Caliskan et al.'s set itself
                    out[col] = (CALISKAN_SETS[col], kept)
                    digests["lists"].append({"file": path, "row": row["LANG"], "column": col, "n": len(raw),
                                             "sha256": list_digest(raw), "set": CALISKAN_SETS[col]})
                    continue
                variant_of = CALISKAN_SETS[col]
            src = {"paper": CAWEAT, "authors_file": snap.where(path, f"row LANG={row['LANG']} column {col}"), "commit": snap.commit}
            if diffs:
                src["differences"] = diffs
            notes = [extra_note, f"Concept '{col}' as the authors' column names it.",
                     "Kind: 'word' for every item (the authors do not type their items; word level only).",
                     CA_SPLIT, difference_note(diffs)]
            if variant_of:
                theirs, ours = set(kept), set(caliskan[col])
                notes.append(f"VARIANT of {variant_of} (caliskan2017): DIFFERENCE: the X-WEAT file writes "
                             f"{', '.join(repr(t) for t in sorted(theirs - ours))} where Caliskan et al.'s list has "
                             f"{', '.join(repr(t) for t in sorted(ours - theirs))}; the rest is the same list.")
            doc = set_doc(sid=sid, concept=concept, language=lang, kind="word", license="unspecified",
                          license_note=CA_LICENSE_NOTE, source=src, notes=notes, items=kept, source_kind=kind_src,
                          variant=variant if variant_of else None, variant_of=variant_of,
                          change=f"Initial curation from {snap.where(path)} (commit {c7}), row {row['LANG']}.")
            files[f"registry/{CAWEAT}/sets/{sid}.yaml"] = dump(doc)
            digests["lists"].append({"file": path, "row": row["LANG"], "column": col, "n": len(raw),
                                     "sha256": list_digest(raw), "set": sid})
            out[col] = (sid, kept)
        return out

    def make_tests(prefix: str, row: dict, lang: str, sets: dict, path: str, title_who: str, note: str,
                   variant: str, variant_of_ok: bool) -> None:
        for n, (tx, ty, title, caliskan_test) in CA_TESTS.items():
            refs = {"x": sets[tx], "y": sets[ty], "a": sets["PLEASANT"], "b": sets["UNPLEASANT"]}
            if all(r[0] == CALISKAN_SETS[c] for r, c in zip(refs.values(), (tx, ty, "PLEASANT", "UNPLEASANT"))):
                tests_made[(row["LANG"] if not variant_of_ok else f"{row['LANG']}0", n)] = caliskan_test
                continue                                    # the very lists of Caliskan et al.'s test
            tid = f"{prefix}_weat{n}"
            shared = overlaps({k: v[1] for k, v in refs.items()})
            sizes = {k: len(v[1]) for k, v in refs.items()}
            notes = [note, f"The paper's WEAT {n} ({title}) on this list." if not variant_of_ok else
                     f"X-WEAT's translation of WEAT {n} ({title}).",
                     CAWEAT_WEAT1_NOTE if n == 1 else "",
                     coverage_note(lang)]
            cross = overlaps({"x": refs["x"][1], "y": refs["a"][1], "a": refs["y"][1], "b": refs["b"][1]})
            cross2 = overlaps({"x": refs["x"][1], "y": refs["b"][1], "a": refs["y"][1], "b": refs["a"][1]})
            pairs = {"x/a": cross.get("x/y"), "y/b": cross.get("a/b"), "x/b": cross2.get("x/y"),
                     "y/a": cross2.get("a/b")}
            pairs = {k: v for k, v in pairs.items() if v}
            if pairs:
                notes.append("The authors' lists put " + "; ".join(
                    f"{', '.join(v)} in both {k[0].upper()} and {k[2].upper()}" for k, v in pairs.items())
                    + " (a target item that is also an attribute item): kept, as the authors ran it; such an item "
                      "is compared with itself (cosine 1).")
            if sizes["x"] != sizes["y"] or sizes["a"] != sizes["b"]:
                notes.append(f"Sizes as the authors' lists give them (after repeats kept once): |X|={sizes['x']}, "
                             f"|Y|={sizes['y']}, |A|={sizes['a']}, |B|={sizes['b']}. The authors' code drops the "
                             "last items of the longer list of a pair (caweat.py run_test_precomputed_sims, after "
                             "removing the words its vectors lack); EATlas's run samples it down (seeded).")
            doc = {"id": tid, "version": "1.0.0",
                   "title": f"{title_who} WEAT {n} ({row['LANG']}): {title}", "bias_type": "non-social",
                   "level": "word", "language": lang, "license": "unspecified", "license_note": CA_LICENSE_NOTE}
            if shared:
                doc["variant"], doc["variant_of"] = "authors-lists", caliskan_test
                what = "; ".join(f"{', '.join(v)} in both {'targets' if k == 'x/y' else 'attributes'}"
                                 for k, v in shared.items())
                notes.append(f"VARIANT (authors-lists): the authors' lists put {what}. The test keeps them as they "
                             "are (declared in overlap:), so that the published numbers can be set beside a run; "
                             f"such an item is compared with itself in both concepts. It runs only when named; "
                             f"variant_of names {caliskan_test}, the English test this list stands beside.")
            elif variant_of_ok:
                doc["variant"], doc["variant_of"] = variant, caliskan_test
            else:
                doc["variant"] = variant
            doc["source"] = {"paper": CAWEAT, "authors_file": snap.where(path, f"row LANG="
                                                                                                    f"{row['LANG']}"),
                             "commit": snap.commit}
            doc.update({k: f"{v[0]}@1.0.0" for k, v in refs.items()})
            doc["expansions"] = {}
            if sizes["x"] != sizes["y"]:
                doc["equal_targets"] = False
            if shared or pairs:
                doc["overlap"] = {**shared, **pairs}        # declared, as the authors' lists hold them
            doc["aliases"] = [{"paper": CAWEAT, "name": f"{row['LANG'] if not variant_of_ok else row['LANG'] + '0'}"
                                                       f" WEAT{n}"}]
            doc["notes"] = " ".join(x for x in notes if x)
            doc["changelog"] = changelog(f"Initial curation from {snap.where(path)} (commit {c7}), row "
                                         f"{row['LANG']}.")
            files[f"registry/{CAWEAT}/tests/{tid}.yaml"] = dump(doc)
            tests_made[(row["LANG"] if not variant_of_ok else f"{row['LANG']}0", n)] = tid

    # ---- CA-WEAT v1: the lists of the paper, one row per native speaker
    for row in v1:
        code = row["LANG"]
        lang = ca_lang(code)
        langs.add(lang.split("-")[0])
        prefix = f"caweat_{ca_slug(code)}"
        v3_name = next((k for k, r in v3.items() if all([t.strip() for t in split_cell(r[c])] ==
                                                         [t.strip() for t in split_cell(row[c])] for c in CA_COLS)),
                       None)
        place = row["BORN PLACE"].strip()
        note = (f"CA-WEAT v1 list {code}: written from scratch by a native speaker (not translated), born in "
                f"{place} (the file's BORN PLACE; TYPE {row['TYPE']}, WHO {row['WHO']}).")
        if v3_name:
            note += f" The authors' later file data/CA-WEATv3.tsv holds the same list as {v3_name}."
        else:
            note += (" The authors' later file data/CA-WEATv3.tsv holds a revised list for this speaker or none; "
                     "this set is the v1 list the paper's numbers were computed on.")
        sets = make_sets(prefix, row, lang, v1_path, "", ["crowdsourced"], None, note)
        make_tests(prefix, row, lang, sets, v1_path, "CA-WEAT", note, "culturally-aware", False)

    # ---- X-WEAT v1: the translations of Caliskan et al.'s WEAT 1 and 2
    for row in xw:
        code = row["LANG"]
        lang = ca_lang(code)
        prefix = f"xweat_{code}"
        ref = row["REFERENCE"].strip()
        if row["TYPE"] == "original":
            note = ("X-WEAT v1, the English original: Caliskan et al.'s WEAT 1 and 2 lists as the authors' file "
                    "gives them.")
            kind_src = ["prior_work"]
        else:
            note = (f"X-WEAT v1, translation of Caliskan et al.'s WEAT 1 and 2 lists into {code} (the file's "
                    f"REFERENCE: '{ref}'; the file does not say whether it was made by hand or by machine).")
            kind_src = ["prior_work"]
        sets = make_sets(prefix, row, lang, x_path, "", kind_src, "x-weat", note)
        make_tests(prefix, row, lang, sets, x_path, "X-WEAT", note, "x-weat", True)

    files.update(caweat_published(snap, tests_made))
    n_diff = sum(1 for f, t in files.items() if "/sets/" in f and "differences:" in t)
    files[f"registry/{CAWEAT}/README.md"] = (
        f"# CA-WEAT and X-WEAT (España-Bonet and Barrón-Cedeño, EMNLP 2022)\n\n"
        f"Curated by scripts/curate_wave3.py from {CAWEAT_REPO} at commit {snap.commit}.\n\n"
        f"- `caweat_<list>_weat1|2`: the CA-WEAT v1 lists ({len(v1)} rows of {v1_path}, one per native speaker, "
        f"{len(langs)} languages: {', '.join(sorted(langs))}; regional variants as BCP-47 regions: en-US, es-BO, es-CO, "
        "es-EC, es-ES, es-MX, pt-BR). Each list is its own test, `variant: culturally-aware` (a canonical entry with "
        "a label: written from scratch, not translated from Caliskan et al.'s WEAT 1 and 2).\n"
        f"- `xweat_<lang>_weat1|2`: the translated lists of {x_path}, variants of `weat1`/`weat2` (`variant: x-weat`). "
        "The English row is Caliskan et al.'s lists: it reuses the registry's sets except FLOWERS, which writes "
        "'blue-bell' for 'bluebell' (`xweat_en_flowers`, a variant of `flowers`); its WEAT 2 is `weat2` itself.\n"
        "- data/CA-WEATv3.* (a later, larger collection with revised v1 lists) and data/CA-WEATv2_es.json are not "
        "curated here; each v1 test says whether v3 holds the same list.\n"
        "- `published/collected_data.csv`: plots/collectedData.csv (registry/PUBLISHED.md).\n\n"
        "## Differences from the authors' files\n"
        f"- {n_diff} sets differ from the authors' cell as their code splits it (a repeated item kept once, spaces, "
        "invisible marks); each lists its changes in `source.differences`, and tests/test_registry_wave3.py rebuilds "
        "the authors' list from them and compares it with the digest in tests/data/authors/wave3/digests.json.\n"
        "- Tests whose lists put one item in both targets or both attributes are variants (`variant: authors-lists`, "
        "`overlap:` declared), variant_of the English test.\n"
        "- WEAT 1 follows the authors' code of 2022: caweat.py builds it from FLOWERS and INSECTS in every version "
        "from its first (eba1aae, 2022-06-14) through 00c0c1a (2022-11-30, the month before the paper at EMNLP 2022) "
        "to c88aefe (2023-12-11); commit 49af924 (2024-09-24, 'ca-weat can now deal with json files') made it "
        "INSTRUMENTS and INSECTS, as this commit has it. The registry follows the 2022 code: it is the code of the "
        "paper's numbers, it is the IAT1 the README and the paper describe (flowers and insects), and the 2024 "
        "change came in a commit about JSON input that says nothing of WEAT 1. Said in every WEAT 1 test.\n"
        "- No paired forms: caweat.py has no notion of a word's grammatical gender (each list is one list, as a "
        "speaker wrote it), so the tests of gendered languages are tests on four lists, as the authors ran them.\n\n"
        "## Licence\n" + CA_LICENSE_NOTE + "\n")
    write_files(files, [f"registry/{CAWEAT}/**/*.*"])
    update_digests("caweat", digests)
    print(f"caweat: {sum('/sets/' in f for f in files)} sets, {sum('/tests/' in f for f in files)} tests, "
          f"{len(langs)} languages ({', '.join(sorted(langs))}), commit {snap.commit}")


CA_MODELS = {
    # code -> (printed name, family, name, hub ids {lang or '': id}, layer)
    "wiki": ("WP", "", "WP", {}, None), "wikiAlign": ("WPali", "", "WPali", {}, None),
    "ccwp": ("CCWP", "", "CCWP", {}, None), "cc10017": ("CCe", "", "CCe", {}, None),
    "cc10017Align": ("CCeAli", "", "CCeAli", {}, None), "cc10017vecmap": ("CCeVMuns", "", "CCeVMuns", {}, None),
    "cc10017vecmapSup": ("CCeVMsup", "", "CCeVMsup", {}, None), "w2v2langs": ("CCe2langs", "", "CCe2langs", {}, None),
    "w2v9langs": ("CCe9langs", "", "CCe9langs", {}, None),
    "bert0": ("mBERT_0", "bert", "mBERT", {"": "bert-base-multilingual-cased"}, 0),
    "bert11": ("mBERT_11", "bert", "mBERT", {"": "bert-base-multilingual-cased"}, 11),
    "xlmr0": ("XLM-R_0", "xlmr", "XLM-R", {"": "xlm-roberta-large"}, 0),
    "xlmr11": ("XLM-R_11", "xlmr", "XLM-R", {"": "xlm-roberta-large"}, 11),
    "xglm0": ("XGLM_0", "", "XGLM", {"": "facebook/xglm-2.9B"}, 0),
    "xglm47": ("XGLM_47", "", "XGLM", {"": "facebook/xglm-2.9B"}, 47),
}
for _l, _h in {"de": "bert-base-german-cased", "en": "bert-base-cased", "es": "dccuchile/bert-base-spanish-wwm-cased",
               "it": "dbmdz/bert-base-italian-cased"}.items():
    CA_MODELS[f"bert0{_l}"] = ("BERT_0", "monobert", "BERT", {_l: _h}, 0)
    CA_MODELS[f"bert11{_l}"] = ("BERT_11", "monobert", "BERT", {_l: _h}, 11)
CA_STATS = {"sizeEffect": "effect_size", "DsizeEffectUP": "effect_size_ci_up", "DsizeEffectLO": "effect_size_ci_lo",
            "statistic": "test_statistic", "DstatUP": "test_statistic_ci_up", "DstatLO": "test_statistic_ci_lo"}


def caweat_published(snap: Snapshot, tests_made: dict) -> dict[str, str]:
    path = "plots/collectedData.csv"
    rows = list(csv.DictReader(io.StringIO(snap.text(path))))
    out = []
    seen = set()
    for r in rows:
        code, test, model = r["language"], int(r["test"]), r["model"]
        printed, family = CA_MODELS[model][0], CA_MODELS[model][1]
        mono = re.fullmatch(r"bert(?:0|11)([a-z]{2})", model)
        label = f"{printed} ({mono[1]})" if mono else printed
        tid = tests_made.get((code, test), "")
        xweat = r["source"] == "0"
        for col, stat in CA_STATS.items():
            key = (label, f"{code} | WEAT{test}", col)
            assert key not in seen, key
            seen.add(key)
            note = f"collectedData.csv model '{model}', source {r['source']}"
            if xweat:
                note += ("; X-WEAT row: scripts/collectData.py copies the bootstrap mean and its interval as "
                         "printed with two decimals (meansTrad), not the point estimate")
            if col.startswith("D"):
                note += "; distance from the bootstrap mean to the 95% interval's bound (caweat.py format_output)"
            out.append({"paper": CAWEAT, "table_id": path, "row_label": f"{code} | WEAT{test}", "column_label": col,
                        "statistic": stat, "value": r[col], "significance": "", "missing": "false",
                        "test_id": tid, "level": "word", "model": label, "model_family": family, "note": note})
    return {f"registry/{CAWEAT}/published/collected_data.csv": csv_text(out),
            f"registry/{CAWEAT}/published/models.yaml": caweat_models_yaml(snap),
            f"registry/{CAWEAT}/published/conventions.yaml": caweat_conventions(snap)}


def caweat_models_yaml(snap: Snapshot) -> str:
    import yaml
    models = []
    seen = set()
    for code, (printed, family, name, hubs, layer) in CA_MODELS.items():
        mono = re.fullmatch(r"bert(?:0|11)([a-z]{2})", code)
        label = f"{printed} ({mono[1]})" if mono else printed
        if label in seen:
            continue
        seen.add(label)
        m: dict = {"model": label}
        if family:
            m["model_family"] = family
        m["name"] = name
        m["stated_in"] = (f"{snap.repo} plots/plotCollectedData.py (commit {snap.commit[:7]}): naming['{code}'], the "
                          "label of the paper's tables and figures for collectedData.csv's model "
                          f"'{code}'")
        if hubs:
            m["hub_ids"] = list(hubs.values())
            m["layer"] = layer
            m["encoding"] = "unknown"
            m["code"] = (f"{snap.repo} scripts/embeddings/extractWEfromLMs.py (commit {snap.commit[:7]}): "
                         f"{'BertModel' if 'bert' in code else 'XLMRobertaModel' if 'xlmr' in code else 'XGLMForCausalLM'}"
                         f".from_pretrained('{list(hubs.values())[0]}', output_hidden_states=True); each list item "
                         "alone, between the tokenizer's start and end marks, the sum of its subword tokens' "
                         f"hidden_states[{layer}] (special tokens excluded), written to a .vec file that caweat.py "
                         "reads like static vectors")
            m["departures"] = [
                {"what": "items lower-cased before the look-up in most runs",
                 "code": "caweat.py --lower (runCaweat.sh passes --lower True; collectData.py reads files named "
                         "*_uncased.res), while the .vec file was built from the items as written",
                 "effect": "an item with a capital letter is looked up lower-cased and can be missing from the "
                           "vectors (dropped, caweat.py _build_vocab_dict); which runs did so is not recorded per "
                           "cell, so no EATlas encoding is known to compute these numbers (encoding unknown)"}]
        else:
            m["hub_ids"] = []
            m["no_hub_id"] = ("static word vectors the authors trained or downloaded (a .vec file read by "
                              "caweat.py utils.load_embeddings), not a hub model")
        models.append(m)
    head = ("# The models of CA-WEAT's collected results (España-Bonet and Barrón-Cedeño, EMNLP 2022), "
            f"plots/collectedData.csv of {snap.repo}\n# at commit {snap.commit}: each printed label "
            "(plots/plotCollectedData.py naming), and for the language models the hub id their\n# extraction "
            "script loads. Written by scripts/curate_wave3.py.\n")
    return head + yaml.safe_dump({"paper": CAWEAT, "models": models}, sort_keys=False, allow_unicode=True, width=110)


def caweat_conventions(snap: Snapshot) -> str:
    return (f"# The convention of CA-WEAT's numbers (see may2019/published/conventions.yaml). Written by "
            "scripts/curate_wave3.py.\n"
            f"paper: {CAWEAT}\nconvention: wefe\nstated_in: >-\n"
            f"  {snap.repo} caweat.py (commit {snap.commit[:7]}): weat_effect_size_precomputed_sims divides by "
            "np.std(...) of s(w, A, B) over\n  T1 + T2 with numpy's default ddof=0 (the population standard "
            "deviation); weat_stats_precomputed_sims sets p = 0\n  (no p-value is computed, none is printed).\n")


# ============================================================================================ Lewis and Lupyan
LEWIS = "lewis2020"
LEWIS_REPO = "mllewis/IATLANG"
# analyses/study1b/04_get_swabs.R CAREER_WORD_LIST: the English IAT words the translations are of, by role
LEWIS_ROLES = {"male": ["male", "man", "boy", "brother", "he", "him", "his", "son"],
               "female": ["female", "woman", "girl", "sister", "she", "her", "hers", "daughter"],
               "career": ["executive", "management", "professional", "corporation", "salary", "office", "business",
                          "career"],
               "family": ["home", "parents", "children", "family", "cousins", "marriage", "wedding", "relatives"]}
LEWIS_CONCEPT = {"male": "Male terms", "female": "Female terms", "career": "Career", "family": "Family"}
LEWIS_LANG = {"persian": "fa", "mandarin": "zh", "zulu_panlex": "zu", "tagalog": "tl", "norwegian": "no"}
# A cell the registry cannot hold as written: one alternative in another script than the rest of the item.
LEWIS_FIX = {"ее/eë/ей/своя/твоя": ("ее/ей/своя/твоя", "the alternative 'eë' (Latin letters: a transliteration "
                                    "beside the Cyrillic) left out, since an item may not mix scripts")}
LEWIS_NOTE = ("Lewis and Lupyan (2020), Study 1b: the words of the gender-career IAT (Nosek et al., 2002) translated "
              "into the language; the English words are analyses/study1b/04_get_swabs.R CAREER_WORD_LIST (\"not "
              "identical to caliskan (caliskan used proper names)\").")
LEWIS_FORMS_NOTE = ("The career and family words have masculine and feminine forms in this language (the file's "
                    "gender column M and F): as the authors' code does (00_IAT_utils.R get_lang_es_separate_gender, "
                    "05_calculate_es_from_swabs.R), male terms are matched with the masculine forms and female terms "
                    "with the feminine ones (forms:; docs/methods.md, 'Paired forms'); a and b name the masculine "
                    "forms. Only the WEAT computes this measure.")
LEWIS_ITEMS = ("Each item is the translation cell of one English IAT word as data/study1b/iat_translations_raw.csv "
               "gives it (its English word in the item's note), alternatives separated by '/' included: the authors' "
               "code (02_tidy_translations_wiki.R, 00_IAT_utils.R) lower-cases the cell, splits it at '/' and at "
               "spaces and averages the vectors of the pieces, which no EATlas encoding does; an EATlas run encodes "
               "the cell as written.")


@step
def lewis2020(base: str) -> None:
    snap = Snapshot(base, LEWIS_REPO)
    c7 = snap.commit[:7]
    path = "data/study1b/iat_translations_raw.csv"
    raw = list(csv.DictReader(io.StringIO(snap.text(path))))
    names = {r["language_name"].lower(): r["wiki_language_code"] for r in csv.DictReader(io.StringIO(
        snap.text("data/study0/processed/lang_name_to_wiki_iso.csv")))}
    in_study = {r["wiki_language_code"] for r in csv.DictReader(io.StringIO(snap.text(
        "data/study0/processed/by_language_df.csv")))}
    files: dict[str, str] = {}
    digests = {"repository": LEWIS_REPO, "commit": snap.commit, "files": {path: snap.sha256(path)}, "lists": []}
    by_lang: dict[str, list[dict]] = {}
    for r in raw:
        by_lang.setdefault(r["language"], []).append(r)
    tests_by_code: dict[str, str] = {}
    gendered_codes: dict[str, bool] = {}
    langs = set()
    for lname, rows in by_lang.items():
        code = LEWIS_LANG.get(lname) or names[lname]
        langs.add(code)
        slug = lname.replace("_", "-")
        gendered = any(r["gender"] != "N" for r in rows)
        gendered_codes[code] = gendered
        panlex = lname == "zulu_panlex"
        study = ("one of the languages of the authors' by-language IAT data (data/study0/processed/"
                 "by_language_df.csv)" if code in in_study else "not among the languages of the authors' by-language "
                 "IAT data (data/study0/processed/by_language_df.csv)")
        made: dict[str, tuple[str, list[str]]] = {}
        for role, words in LEWIS_ROLES.items():
            forms = ["N"] if role in ("male", "female") or not gendered else ["M", "F"]
            for g in forms:
                cells = []
                for w in words:
                    hit = [r for r in rows if r["word"] == w and r["gender"] == g]
                    assert len(hit) == 1, (lname, w, g, hit)
                    cells.append((w, hit[0]["translation"]))
                rawlist = [c for _, c in cells]
                kept, diffs = curate_list(rawlist, custom=LEWIS_FIX)
                english = {}
                for (w, _c), k in zip(cells, [curate_list([c], custom=LEWIS_FIX)[0][0] for _, c in cells]):
                    english.setdefault(k, []).append(w)
                items = [{"text": t, "kind": "word", "note": "English: " + ", ".join(english[t])} for t in kept]
                suffix = "" if g == "N" else "_" + g.lower()
                sid = f"lewis2020_{slug}_{role}{suffix}"
                gnote = ("" if g == "N" else f" The {'masculine' if g == 'M' else 'feminine'} forms (the file's "
                         f"gender column {g}): the authors compare {'male' if g == 'M' else 'female'} terms with "
                         "these (05_calculate_es_from_swabs.R).")
                src = {"paper": LEWIS, "section": "Study 1b",
                       "authors_file": snap.where(path, f"language={lname}, gender={g}, words of {role}"),
                       "commit": snap.commit}
                if diffs:
                    src["differences"] = diffs
                notes = [LEWIS_NOTE, f"Language: {lname} ({code}), {study}." + gnote, LEWIS_ITEMS,
                         "zulu_panlex is a second Zulu translation in the authors' file (its name says PanLex)."
                         if panlex else "", difference_note(diffs)]
                doc = set_doc(sid=sid, concept=LEWIS_CONCEPT[role] + ("" if g == "N" else
                                                                      f" ({'masculine' if g == 'M' else 'feminine'})"),
                              language=code, kind="word", license="unspecified",
                              license_note="The repository mllewis/IATLANG has no licence file.", source=src,
                              notes=notes, items=[i if "note" in i else i["text"] for i in items],
                              source_kind=["social_science", "translation_human"],
                              variant="panlex" if panlex else None,
                              variant_of=f"lewis2020_zulu_{role}{suffix}" if panlex else None,
                              change=f"Initial curation from {snap.where(path)} (commit {c7}), language {lname}.")
                files[f"registry/{LEWIS}/sets/{sid}.yaml"] = dump(doc)
                digests["lists"].append({"file": path, "row": lname, "column": f"{role}/{g}", "n": len(rawlist),
                                         "sha256": list_digest(rawlist), "set": sid})
                made[role + suffix] = (sid, kept)
        # a gendered language: the authors match each gender's terms with that gender's forms (forms:)
        refs = {"x": made["male"], "y": made["female"], "a": made["career_m" if gendered else "career"],
                "b": made["family_m" if gendered else "family"]}
        shared = overlaps({k: v[1] for k, v in refs.items()})
        if gendered:
            shared_f = overlaps({"x": refs["x"][1], "y": refs["y"][1], "a": made["career_f"][1],
                                 "b": made["family_f"][1]})
            assert shared_f == shared, (lname, shared, shared_f)     # one overlap: declares both forms'
        tid = f"lewis2020_{slug}"
        notes = [LEWIS_NOTE, f"Language: {lname} ({code}), {study}.",
                 "Male/female terms vs career/family words: the comparison of 04_get_swabs.R (test_name WEAT_6, "
                 "bias_type gender-bias-career-family).", LEWIS_FORMS_NOTE if gendered else "", LEWIS_ITEMS,
                 coverage_note(code)]
        doc = {"id": tid, "version": "1.0.0",
               "title": f"Lewis and Lupyan (2020) gender-career IAT words ({lname}): Male/Female vs Career/Family",
               "bias_type": "gender", "level": "word", "language": code, "license": "unspecified",
               "license_note": "The repository mllewis/IATLANG has no licence file."}
        if shared:
            what = "; ".join(f"{', '.join(v)} in both {'targets' if k == 'x/y' else 'attributes'}"
                             for k, v in shared.items())
            doc["variant"], doc["variant_of"] = "authors-lists", "lewis2020_english"
            notes.append(f"VARIANT (authors-lists): the translations put {what} (one word for two English ones); "
                         "kept as the authors' lists hold them (overlap:), so the test runs only when named; "
                         "variant_of names the English test.")
        elif panlex:
            doc["variant"], doc["variant_of"] = "panlex", "lewis2020_zulu"
        doc["source"] = {"paper": LEWIS, "section": "Study 1b", "authors_file": snap.where(path, f"language={lname}"),
                         "commit": snap.commit}
        doc.update({k: f"{v[0]}@1.0.0" for k, v in refs.items()})
        doc["expansions"] = {}
        if gendered:
            doc["forms"] = {"x": "masculine", "y": "feminine",
                            "a": {"masculine": f"{made['career_m'][0]}@1.0.0",
                                  "feminine": f"{made['career_f'][0]}@1.0.0"},
                            "b": {"masculine": f"{made['family_m'][0]}@1.0.0",
                                  "feminine": f"{made['family_f'][0]}@1.0.0"}}
            doc["methods"] = ["weat"]
        if len(refs["x"][1]) != len(refs["y"][1]):
            doc["equal_targets"] = False
        if shared:
            doc["overlap"] = shared
        doc["notes"] = " ".join(n for n in notes if n)
        doc["changelog"] = changelog(f"Initial curation from {snap.where(path)} (commit {c7}), language {lname}.")
        files[f"registry/{LEWIS}/tests/{tid}.yaml"] = dump(doc)
        if not panlex:
            tests_by_code[code] = tid
    files.update(lewis_published(snap, tests_by_code, gendered_codes))
    files[f"registry/{LEWIS}/README.md"] = (
        "# Lewis and Lupyan (2020), Nature Human Behaviour\n\n"
        f"Curated by scripts/curate_wave3.py from {LEWIS_REPO} at commit {snap.commit}, file {path}.\n\n"
        f"- Sets `lewis2020_<language>_<male|female|career|family>` in {len(langs)} languages "
        f"({', '.join(sorted(langs))}); where the authors give masculine and feminine forms of the career and "
        "family words (the file's gender column M and F), two sets, `_m` and `_f`.\n"
        f"- Tests `lewis2020_<language>` in every language ({len(tests_by_code)} languages and the PanLex Zulu "
        f"variant); in the {sum(gendered_codes.values())} gendered ones the test pairs the attributes' forms "
        "(`forms:`): male terms with the masculine forms (`_m`), female terms with the feminine ones (`_f`), as the "
        "authors' code does (docs/methods.md, 'Paired forms'); only the WEAT computes that measure.\n"
        "- The English words 'artistic', 'brilliant', 'creative', 'genius', 'super-imaginative', 'super-smart' of "
        "the file are not in the career/family lists of Study 1b (04_get_swabs.R): not curated.\n"
        "- Items are whole translation cells (with '/' alternatives); control characters and one Latin "
        "transliteration inside a Cyrillic cell are the recorded differences (source.differences).\n\n"
        "## Licence\nThe repository has no licence file: `unspecified`.\n")
    write_files(files, [f"registry/{LEWIS}/**/*.*"])
    update_digests("lewis2020", digests)
    print(f"lewis2020: {sum('/sets/' in f for f in files)} sets, {sum('/tests/' in f for f in files)} tests, "
          f"{len(langs)} languages ({', '.join(sorted(langs))}), commit {snap.commit}")


LEWIS_MODELS = {"lang_es_sub": ("fastText Subtitles", "sub.<lang>.vec"),
                "lang_es_wiki": ("fastText Wikipedia", "wiki.<lang>.vec"),
                "lang_es_wiki_cc": ("fastText Wikipedia + Common Crawl", "cc.<lang>.300.vec")}


def lewis_published(snap: Snapshot, tests_by_code: dict, gendered_codes: dict) -> dict[str, str]:
    path = "data/study1b/iat_es_lang.csv"
    rows = list(csv.DictReader(io.StringIO(snap.text(path))))
    excl = {r["language_code"]: r for r in csv.DictReader(io.StringIO(snap.text(
        "data/study1b/language_exclusions.csv")))}
    out = []
    for r in rows:
        code = r["language_code"]
        for col, (model, _f) in LEWIS_MODELS.items():
            v = r[col]
            missing = v in ("", "NA")
            note = "the language's effect size as 05_calculate_es_from_swabs.R computes it"
            x = excl.get(code, {}).get(col.replace("lang_es_", "exclude_"))
            if x == "TRUE":
                note += "; data/study1b/language_exclusions.csv excludes this language for this model"
            tid = tests_by_code.get(code, "")
            if tid and gendered_codes.get(code):
                note += ("; the registry's test pairs the masculine and feminine forms of the attributes with the male "
                         "and female terms as the authors' code does (forms:)")
            if not tid:
                if code in gendered_codes:
                    note += "; no registry test for this language"
                else:
                    note += "; the authors' translation file holds no list for this language"
            out.append({"paper": LEWIS, "table_id": path, "row_label": code, "column_label": col,
                        "statistic": "effect_size", "value": "" if missing else v, "significance": "",
                        "missing": "true" if missing else "false", "test_id": tid, "level": "word" if tid else "",
                        "model": model, "model_family": "fasttext", "note": note + ("; printed NA" if missing else "")})
    models = {"paper": LEWIS, "models": [
        {"model": m, "model_family": "fasttext", "name": "fastText", "hub_ids": [],
         "no_hub_id": f"static fastText vectors read from a .vec file ({f})",
         "encoding": "unknown",
         "stated_in": f"{snap.repo} analyses/study1b/03_save_subsetted_models_*.R and download_wiki*_models.sh "
                      f"(commit {snap.commit[:7]}): the vector files {f}; data/study1b/iat_es_lang.csv column {c}",
         "code": f"{snap.repo} analyses/study1b/00_IAT_utils.R, 04_get_swabs.R, 05_calculate_es_from_swabs.R "
                 f"(commit {snap.commit[:7]})",
         "departures": [{"what": "a translation is the mean of the vectors of its words and alternatives",
                         "code": "02_tidy_translations_wiki.R splits each cell at '/' and spaces, lower-cased",
                         "effect": "no EATlas encoding computes it (encoding unknown)"},
                        {"what": "gendered attributes are matched with each gender's terms",
                         "code": "05_calculate_es_from_swabs.R drops category_1 x F and category_2 x M rows",
                         "effect": "the registry's test states the forms (forms:), and the WEAT computes the "
                                   "authors' measure from them (eatlas.stats.forms)"}]}
        for c, (m, f) in LEWIS_MODELS.items()]}
    import yaml
    conv = (f"# The convention of Lewis and Lupyan's effect sizes. Written by scripts/curate_wave3.py.\n"
            f"paper: {LEWIS}\nconvention: caliskan\nstated_in: >-\n"
            f"  {snap.repo} analyses/study1b/04_get_swabs.R and 05_calculate_es_from_swabs.R (commit "
            f"{snap.commit[:7]}): the difference of the mean\n  s(w, A, B) of the two categories divided by sd, "
            "R's sd() (the sample standard deviation) of s(w, A, B) over both\n  categories; no p-value is "
            "computed.\n")
    return {f"registry/{LEWIS}/published/iat_es_lang.csv": csv_text(out),
            f"registry/{LEWIS}/published/models.yaml": "# Written by scripts/curate_wave3.py.\n" + yaml.safe_dump(
                models, sort_keys=False, allow_unicode=True, width=110),
            f"registry/{LEWIS}/published/conventions.yaml": conv}


# ============================================================================================ Czarnowska et al.
CZ = "czarnowska2021"
CZ_REPO = "amazon-science/generalized-fairness-metrics"
CZ_DIR = "terms/identity_terms"
CZ_FILES = ("age", "countries", "disability", "gender", "race", "religion", "sexuality")
CZ_KIND = {"n": "group_term", "adj": "adjective", "pp": "word", "": "word"}
CZ_NOTE = ("Czarnowska, Vyas and Shah (2021) identity terms (terms/identity_terms/): the lexicons their templates fill "
           "to build test suites for extrinsic fairness metrics (classification and NER). The paper defines no "
           "association test on them, so the registry holds them as sets only.")
CZ_SOURCES = {"age": "Wiktionary Category:en:Age (heavily filtered) and Dixon et al. (2018)",
              "countries": "Wikipedia's lists of countries by GDP (nominal), of adjectival and demonymic forms, and "
                           "the United Nations geoscheme",
              "disability": "Hutchinson et al. (2020), Social Biases in NLP Models as Barriers for Persons with "
                            "Disabilities",
              "gender": "Wiktionary Category:en:Gender, filtered and categorised by the authors (basic: at least "
                        "100 occurrences in enTenTen)",
              "race": "the NIH notice NOT-OD-15-089 on racial and ethnic categories",
              "religion": "Wikipedia's Major religious groups (largest and medium-sized) and Dixon et al. (2018)",
              "sexuality": "Wiktionary Category:en:Sexuality"}


@step
def czarnowska2021(base: str) -> None:
    snap = Snapshot(base, CZ_REPO)
    c7 = snap.commit[:7]
    files: dict[str, str] = {}
    paths = [f"{CZ_DIR}/{f}.csv" for f in CZ_FILES]
    digests = {"repository": CZ_REPO, "commit": snap.commit, "files": {p: snap.sha256(p) for p in paths},
               "lists": []}
    lic = "Apache-2.0"
    lic_note = "The repository's LICENSE is the Apache License 2.0; terms/identity_terms/SOURCES.txt names the " \
               "sources each list was drawn from."
    n_sets = 0
    for fname, path in zip(CZ_FILES, paths):
        rows = list(csv.DictReader(io.StringIO(snap.text(path))))
        groups: dict[tuple, list[dict]] = {}
        for r in rows:
            if fname == "countries":
                groups.setdefault((r["CONTINENT"], ""), []).append(r)
            elif fname == "disability":
                groups.setdefault((r["GROUP"], r["TYPE"]), []).append(r)
            else:
                groups.setdefault((r["GROUP"], ""), []).append(r)
        for (group, typ), grows in groups.items():
            cols = [("TERM", "word")] if fname != "countries" else [("TERM", "word"), ("COUNTRY_ADJ", "adjective")]
            for col, ckind in cols:
                raw = [r[col] for r in grows]
                kept, diffs = curate_list(raw)
                for d in diffs:
                    m = re.fullmatch(r"repeats position (\d+)", d["reason"])
                    if m and "POS" in grows[0]:
                        d["reason"] += (f" (there POS {grows[int(m[1])]['POS'] or 'empty'}, here POS "
                                        f"{grows[d['position']]['POS'] or 'empty'}; the first row's kind is kept)")
                first = {}
                for r in grows:
                    one = curate_list([r[col]])[0]
                    if one:
                        first.setdefault(one[0], r)
                items = []
                for t in kept:
                    r = first[t]
                    kind = ckind if fname == "countries" else CZ_KIND[r.get("POS", "")]
                    note = []
                    if fname == "disability":
                        note.append("non-recommended term (the file's TYPE nonrec)" if typ == "nonrec"
                                    else "recommended term (the file's TYPE empty)")
                    if r.get("TYPE") == "basic":
                        note.append("basic (the file's TYPE)")
                    if r.get("SEM"):
                        note.append(f"SEM {r['SEM']}")
                    if fname == "countries":
                        note.append(f"{r['TERM']}; region {r['REGION']}; GDP rank {r['RANK']}")
                    items.append({"text": t, "kind": kind, **({"note": "; ".join(note)} if note else {})})
                gslug = re.sub(r"[^a-z0-9]+", "_", group.lower()).strip("_") or "ungrouped"
                if fname == "countries":
                    sid = f"czarnowska2021_countries_{gslug}" + ("_adjectives" if col == "COUNTRY_ADJ" else "")
                    concept = f"Countries of {group}" + (" (adjectives)" if col == "COUNTRY_ADJ" else "")
                elif fname == "disability":
                    sid = f"czarnowska2021_disability_{gslug}" + ("_nonrecommended" if typ == "nonrec" else "")
                    concept = f"Disability: {group}" + (" (non-recommended terms)" if typ == "nonrec" else
                                                        " (recommended terms)")
                else:
                    sid = f"czarnowska2021_{fname}_{gslug}"
                    concept = f"{fname.capitalize()}: {group or 'no GROUP given'}"
                kinds = list(dict.fromkeys(i["kind"] for i in items))        # first-seen order breaks a tie
                default = max(kinds, key=lambda k: sum(i["kind"] == k for i in items))
                out_items = [i["text"] if i["kind"] == default and "note" not in i else i for i in items]
                src = {"paper": CZ, "authors_file": snap.where(path, f"rows with {'CONTINENT' if fname == 'countries' else 'GROUP'}={group}"
                                                               + (f", TYPE={typ}" if fname == "disability" else "")
                                                               + f", column {col}"),
                       "commit": snap.commit}
                if diffs:
                    src["differences"] = diffs
                notes = [CZ_NOTE, f"The list's source, as SOURCES.txt names it: {CZ_SOURCES[fname]}.",
                         "Kinds from the file's POS column (n: group_term, adj: adjective, pp, a prepositional "
                         "phrase: word)." if fname not in ("countries", "race") else
                         ("Country names are of kind word (not a person's name), their adjectives adjective."
                          if fname == "countries" else "The file gives no part of speech: kind word."),
                         "Disability terms are marked recommended or non-recommended as the file's TYPE column "
                         "says (nonrec: a term Hutchinson et al. list as one to avoid); the two are separate sets."
                         if fname == "disability" else "", difference_note(diffs)]
                group_field = {fname if fname != "countries" else "continent": group}
                if fname == "disability":
                    group_field["recommended"] = typ != "nonrec"
                doc = set_doc(sid=sid, concept=concept, language="en", kind=default, license=lic,
                              license_note=lic_note, source=src, notes=notes, items=out_items,
                              source_kind=["authors_curated", "lexical_resource"] if fname in (
                                  "age", "gender", "sexuality") else ["authors_curated", "prior_work"],
                              group=group_field,
                              change=f"Initial curation from {snap.where(path)} (commit {c7}).")
                files[f"registry/{CZ}/sets/{sid}.yaml"] = dump(doc)
                digests["lists"].append({"file": path, "row": f"{group}|{typ}", "column": col, "n": len(raw),
                                         "sha256": list_digest(raw), "set": sid})
                n_sets += 1
    # the authors' files themselves, for the tests (Apache-2.0 allows the copy; the LICENSE goes with them)
    copy = f"tests/data/authors/{CZ_REPO.replace('/', '+')}"
    for p in [*paths, f"{CZ_DIR}/SOURCES.txt", "LICENSE"]:
        files[f"{copy}/{p}"] = snap.text(p)
    files[f"registry/{CZ}/README.md"] = (
        "# Czarnowska, Vyas and Shah (2021), identity terms\n\n"
        f"Curated by scripts/curate_wave3.py from {CZ_REPO} at commit {snap.commit}, {CZ_DIR}/*.csv "
        "(Apache-2.0).\n\n"
        f"{n_sets} sets, one per file and GROUP (countries: per CONTINENT, names and adjectives apart; disability: "
        "per GROUP and TYPE, the non-recommended terms in `_nonrecommended` sets, each item's note saying which). "
        "Sets only: the paper measures extrinsic fairness (classification, NER), not associations. "
        "terms/identity_terms/wiktionary_names/ (given names) is not curated here.\n")
    write_files(files, [f"registry/{CZ}/**/*.*", f"{copy}/**/*"])
    update_digests("czarnowska2021", digests)
    print(f"czarnowska2021: {n_sets} sets, commit {snap.commit}")


# ============================================================================================== HolisticBias
HB = "smith2022"
HB_REPO = "facebookresearch/ResponsibleNLP"
HB_PATH = "holistic_bias/dataset/v1.1/descriptors.json"
HB_LICENSE_NOTE = ("The repository's LICENSE puts the HolisticBias code under the MIT License and the HolisticBias "
                   "dataset (these descriptors) under Creative Commons Attribution-ShareAlike 4.0 International; "
                   "the README's BibTeX says the same (copyright = CC BY-SA 4.0).")
HB_PREF = {"dispreferred": "dispreferred (marked as dispreferred by an expert with lived experience of this term)",
           "polarizing": "polarizing (marked by an expert as polarizing or debated)",
           "reviewed": "reviewed (reviewed by an expert, not flagged as dispreferred)",
           None: "no_data (not reviewed: no preference in the file)"}


@step
def smith2022(base: str) -> None:
    import json
    snap = Snapshot(base, HB_REPO)
    c7 = snap.commit[:7]
    doc_all = json.loads(snap.text(HB_PATH))
    files: dict[str, str] = {}
    digests = {"repository": HB_REPO, "commit": snap.commit, "files": {HB_PATH: snap.sha256(HB_PATH)}, "lists": []}
    n_items = 0
    prefs: dict = {}
    for axis, buckets in doc_all.items():
        for bucket, entries in buckets.items():
            assert isinstance(entries, list), (axis, bucket)
            recs = [{"descriptor": e} if isinstance(e, str) else e for e in entries]
            raw = [r["descriptor"] for r in recs]
            kept, diffs = curate_list(raw)
            first = {}
            for r in recs:
                one = curate_list([r["descriptor"]])[0]
                if one:
                    first.setdefault(one[0], r)
            items = []
            for t in kept:
                r = first[t]
                pref = r.get("preference")
                prefs[pref] = prefs.get(pref, 0) + 1
                note = [f"preference: {HB_PREF[pref]}"]
                if r.get("gender"):
                    note.append(f"gender: {r['gender']}")
                item = {"text": t, "kind": "word"}
                if r.get("article"):
                    item["article"] = r["article"]
                item["note"] = "; ".join(note)
                items.append(item)
            n_items += len(items)
            sid = f"holisticbias_{axis}_{bucket}".lower()
            src = {"paper": HB, "section": "HolisticBias v1.1 descriptors",
                   "authors_file": snap.where(HB_PATH, f"{axis}.{bucket}"), "commit": snap.commit}
            if diffs:
                src["differences"] = diffs
            notes = [f"HolisticBias v1.1 descriptors of axis '{axis}', bucket '{bucket}' (holistic_bias/dataset/v1.1/"
                     "descriptors.json). Each item's note gives its preference label as the file states it (README: "
                     "dispreferred, polarizing, reviewed; no label: no_data) and its gender where the file gives one.",
                     "The authors insert each descriptor into noun phrases and sentence templates to probe generative "
                     "models (the README); they define no association test on these lists, so the registry holds them "
                     "as sets only.",
                     "Kind: 'word' (the README says a descriptor is 'usually an adjective'; the file gives no part of "
                     "speech per item).", difference_note(diffs)]
            d = set_doc(sid=sid, concept=f"{axis}: {bucket}", language="en", kind="word", license="CC-BY-SA-4.0",
                        license_note=HB_LICENSE_NOTE, source=src, notes=notes, items=items,
                        source_kind=["authors_curated"],
                        group={"axis": axis, "bucket": bucket},
                        change=f"Initial curation from {snap.where(HB_PATH)} (commit {c7}).")
            files[f"registry/{HB}/sets/{sid}.yaml"] = dump(d)
            digests["lists"].append({"file": HB_PATH, "row": axis, "column": bucket, "n": len(raw),
                                     "sha256": list_digest(raw), "set": sid})
    files[f"registry/{HB}/README.md"] = (
        "# HolisticBias v1.1 (Smith et al., 2022)\n\n"
        f"Curated by scripts/curate_wave3.py from {HB_REPO} at commit {snap.commit}, {HB_PATH} "
        "(CC BY-SA 4.0).\n\n"
        f"{len(digests['lists'])} sets (one per axis and bucket, `group: {{axis, bucket}}`), {n_items} descriptors "
        f"in {len(doc_all)} axes. Preference labels as items' notes: "
        + ", ".join(f"{('no_data' if k is None else k)} {v}" for k, v in sorted(prefs.items(), key=lambda kv: str(kv[0])))
        + ". Sets only: the nouns, noun phrases and sentence templates of the dataset are not curated here.\n")
    write_files(files, [f"registry/{HB}/**/*.*"])
    update_digests("smith2022", digests)
    print(f"smith2022: {len(digests['lists'])} sets, {n_items} descriptors, {len(doc_all)} axes, commit {snap.commit}")


# ====================================================================================== SeeGULL Multilingual
SG = "bhutani2024"
SG_REPO = "google-research-datasets/SeeGULL-Multilingual"
SG_REGION = {"UAE": "AE", "Bangladesh": "BD", "India": "IN", "Netherlands": "NL", "France": "FR", "Germany": "DE",
             "Indonesia": "ID", "Italy": "IT", "Japan": "JP", "Korea": "KR", "Malaysia": "MY", "Brazil": "BR",
             "Portugal": "PT", "Mexico": "MX", "Spain": "ES", "Kenya": "KE", "Thailand": "TH", "Turkey": "TR",
             "Vietnam": "VN"}
SG_LANG = {"vn": "vi"}          # the authors' file names write Vietnamese 'vn' (a country code); BCP-47 'vi'
SG_LICENSE_NOTE = ("The repository's LICENSE file is the Creative Commons Attribution 4.0 International licence "
                   "(CC BY 4.0); its README states no licence of its own. The dataset contains stereotypes that may "
                   "be offensive (README).")


@step
def bhutani2024(base: str) -> None:
    snap = Snapshot(base, SG_REPO)
    c7 = snap.commit[:7]
    files: dict[str, str] = {}
    paths = sorted(p for p in snap.files("dataset/stereotypes") if p.endswith(".csv"))
    digests = {"repository": SG_REPO, "commit": snap.commit, "files": {p: snap.sha256(p) for p in paths},
               "lists": []}
    prov = {"source": SG, "license": "CC-BY-4.0", "license_note": SG_LICENSE_NOTE,
            "authors_repository": f"https://github.com/{SG_REPO}", "authors_commit": snap.commit, "files": []}
    langs, n_tuples = set(), 0
    for path in paths:
        m = re.fullmatch(r"dataset/stereotypes/(.+) \((\w+)\) in (.+)\.csv", path)
        lname, code, region = m[1], m[2], m[3]
        tag = f"{SG_LANG.get(code, code)}-{SG_REGION[region]}"
        langs.add(tag)
        text = snap.text(path)
        rows = list(csv.DictReader(io.StringIO(text)))
        n_tuples += len(rows)
        data_name = f"stereotypes_{tag}.csv"
        files[f"registry/{SG}/data/{data_name}"] = text
        prov["files"].append({"file": data_name, "authors_file": snap.where(path), "sha256": snap.sha256(path),
                              "description": f"The {len(rows)} (identity, attribute) tuples of {lname} in {region}, "
                                             "with the annotators' votes (non_stereotype, stereotype, unsure), the "
                                             "mean offensiveness of the attribute and the English translations, "
                                             "byte for byte."})
        for col, what, concept in (("identity", "identities", "Identity terms"),
                                   ("attribute", "attributes", "Stereotype attributes")):
            distinct = list(dict.fromkeys(r[col] for r in rows))
            kept, diffs = curate_list(distinct, drop_mixed=True)
            count = {}
            for r in rows:
                count[r[col]] = count.get(r[col], 0) + 1
            sid = f"seegull_ml_{tag.lower()}_{what}"
            src = {"paper": SG, "authors_file": snap.where(path, f"column {col}"), "commit": snap.commit}
            if diffs:
                src["differences"] = diffs
            notes = [f"SeeGULL Multilingual, {lname} in {region} ({tag}): every distinct {col} of the file's "
                     f"(identity, attribute) tuples, once, in the order of its first row ({len(rows)} tuples; the "
                     f"authors' code {code!r} is written {SG_LANG.get(code, code)!r} in the tag).",
                     f"The tuples themselves, with the annotators' votes and the English translations, are kept "
                     f"byte for byte in registry/{SG}/data/{data_name}; a set cannot hold the pairing.",
                     "The paper evaluates generative models with the tuples and defines no association test on "
                     "them, so the registry holds them as sets only.",
                     "Kind: 'word' (the file gives no part of speech).", difference_note(diffs)]
            d = set_doc(sid=sid, concept=f"{concept} ({lname}, {region})", language=tag, kind="word",
                        license="CC-BY-4.0", license_note=SG_LICENSE_NOTE, source=src, notes=notes, items=kept,
                        source_kind=["crowdsourced"], change=f"Initial curation from {snap.where(path)} "
                                                             f"(commit {c7}).")
            files[f"registry/{SG}/sets/{sid}.yaml"] = dump(d)
            digests["lists"].append({"file": path, "row": "distinct values in order", "column": col,
                                     "n": len(distinct), "sha256": list_digest(distinct), "set": sid})
    import yaml
    files[f"registry/{SG}/data/LICENSE"] = snap.text("LICENSE")
    prov["files"].append({"file": "LICENSE", "authors_file": snap.where("LICENSE"), "sha256": snap.sha256("LICENSE"),
                          "description": "The repository's licence (CC BY 4.0), kept beside the copied files."})
    files[f"registry/{SG}/data/provenance.yaml"] = (
        "# The tuples of SeeGULL Multilingual, copied byte for byte by scripts/curate_wave3.py.\n"
        + yaml.safe_dump(prov, sort_keys=False, allow_unicode=True, width=110))
    files[f"registry/{SG}/README.md"] = (
        "# SeeGULL Multilingual (Bhutani et al., ACL 2024)\n\n"
        f"Curated by scripts/curate_wave3.py from {SG_REPO} at commit {snap.commit}, dataset/stereotypes/*.csv.\n\n"
        f"{len(paths)} language-region pairs ({', '.join(sorted(langs))}), {n_tuples} tuples: per pair two sets "
        "(`seegull_ml_<tag>_identities`, `_attributes`) and the tuples themselves in `data/` (byte for byte). "
        "dataset/offensiveness/ (the attributes' offensiveness ratings) and the combined .xlsx sheets are not copied; "
        "the stereotype files carry each attribute's mean offensiveness.\n\n"
        "## Licence\n" + SG_LICENSE_NOTE + " (A description of the repository elsewhere gives Apache 2.0; the "
        "LICENSE file at this commit is CC BY 4.0, recorded here.)\n")
    write_files(files, [f"registry/{SG}/**/*.*", f"registry/{SG}/data/LICENSE"])
    update_digests("bhutani2024", digests)
    print(f"bhutani2024: {2 * len(paths)} sets, {len(paths)} language-region pairs, {n_tuples} tuples, "
          f"commit {snap.commit}")


# ============================================================================================ Hofmann et al.
HOF = "hofmann2024"
HOF_REPO = "valentinhofmann/dialect-prejudice"
HOF_LISTS = {"katz": ("hofmann2024_princeton_trilogy_adjectives", "Princeton Trilogy trait adjectives", "adjective",
                      "The trait adjectives of the Princeton Trilogy (Katz and Braly 1933 and its successors), which the "
                      "README calls 'the trait adjectives from the Princeton Trilogy used in the paper'."),
             "occupations": ("hofmann2024_occupations", "Occupations", "group_term",
                             "The occupations of the employability experiment (scripts/run_employability_experiment.sh "
                             "probes data/attributes/occupations.txt). Kind group_term: occupations are people "
                             "(docs/registry-format.md).")}


def lines_of(text: str) -> list[str]:
    """A text file's lines as the authors' code reads them: one item per line, the final newline not an item."""
    return [ln.rstrip("\r") for ln in text.split("\n") if ln.strip() != ""]


@step
def hofmann2024(base: str) -> None:
    snap = Snapshot(base, HOF_REPO)
    c7 = snap.commit[:7]
    files: dict[str, str] = {}
    paths = {k: f"data/attributes/{k}.txt" for k in HOF_LISTS}
    digests = {"repository": HOF_REPO, "commit": snap.commit, "files": {p: snap.sha256(p) for p in paths.values()},
               "lists": []}
    for key, (sid, concept, kind, what) in HOF_LISTS.items():
        raw = lines_of(snap.text(paths[key]))
        kept, diffs = curate_list(raw)
        src = {"paper": HOF, "authors_file": snap.where(paths[key]), "commit": snap.commit}
        if diffs:
            src["differences"] = diffs
        notes = [what, "Hofmann et al. (2024) probe language models with these words by Matched Guise Probing "
                 "(prompts in probing/prompting.py): a method on generative models, not an association test on "
                 "embeddings, so the registry holds the list as a set only.", difference_note(diffs)]
        d = set_doc(sid=sid, concept=concept, language="en", kind=kind, license="MIT",
                    license_note="The repository's LICENSE: MIT License, Copyright (c) 2024 Valentin Hofmann.",
                    source=src, notes=notes, items=kept,
                    source_kind=["social_science"] if key == "katz" else ["authors_curated"],
                    change=f"Initial curation from {snap.where(paths[key])} (commit {c7}).")
        files[f"registry/{HOF}/sets/{sid}.yaml"] = dump(d)
        digests["lists"].append({"file": paths[key], "row": "", "column": "lines", "n": len(raw),
                                 "sha256": list_digest(raw), "set": sid})
    copy = f"tests/data/authors/{HOF_REPO.replace('/', '+')}"
    for p in [*paths.values(), "LICENSE"]:
        files[f"{copy}/{p}"] = snap.text(p)
    write_files(files, [f"registry/{HOF}/**/*.*", f"{copy}/**/*"])
    update_digests("hofmann2024", digests)
    print(f"hofmann2024: {len(HOF_LISTS)} sets, commit {snap.commit}")


# ============================================================================================== HELM word lists
HELM = "liang2023"
HELM_REPO = "stanford-crfm/helm"
HELM_PATH = "src/helm/benchmark/metrics/bias_word_lists.py"
# HELM's list -> (set id, concept, kind, the registry set it is a variant of, the source HELM's docstring names)
HELM_LISTS = {
    "FEMALE_WORDS": ("helm_female_words", "Female words", "group_term", "garg2018_female_pairs", "Bolukbasi et al. 2016"),
    "MALE_WORDS": ("helm_male_words", "Male words", "group_term", "garg2018_male_pairs", "Bolukbasi et al. 2016"),
    "ASIAN_NAMES": ("helm_asian_names", "Asian names", "name", "garg2018_names_asian", "Garg et al. 2018"),
    "HISPANIC_NAMES": ("helm_hispanic_names", "Hispanic names", "name", "garg2018_names_hispanic", "Garg et al. 2018"),
    "WHITE_NAMES": ("helm_white_names", "White names", "name", "garg2018_names_white", "Garg et al. 2018"),
    "ADJECTIVE_LIST": ("helm_adjectives", "Adjectives", "adjective", "garg2018_personalitytraits_original",
                       "Garg et al. 2018"),
    "PROFESSION_LIST": ("helm_professions", "Professions", "group_term", "bolukbasi2016_professions",
                        "Bolukbasi et al. 2016"),
}


def python_lists(text: str) -> dict[str, list[str]]:
    """The module-level list literals of a Python file, read with ast (nothing is executed)."""
    import ast
    out = {}
    for node in ast.parse(text).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and isinstance(node.value, ast.List):
            out[target.id] = [ast.literal_eval(e) for e in node.value.elts]
    return out


@step
def liang2023(base: str) -> None:
    import yaml
    snap = Snapshot(base, HELM_REPO)
    c7 = snap.commit[:7]
    lists = python_lists(snap.text(HELM_PATH))
    files: dict[str, str] = {}
    digests = {"repository": HELM_REPO, "commit": snap.commit, "files": {HELM_PATH: snap.sha256(HELM_PATH)},
               "lists": []}
    report = []
    for name, (sid, concept, kind, canon, cited) in HELM_LISTS.items():
        raw = lists[name]
        kept, diffs = curate_list(raw)
        cdoc = yaml.safe_load(next((ROOT / "registry").glob(f"*/sets/{canon}.yaml")).read_text(encoding="utf-8"))
        theirs = [i if isinstance(i, str) else i["text"] for i in cdoc["items"]]
        only_helm = [t for t in kept if t not in theirs]
        only_canon = [t for t in theirs if t not in kept]
        full = {(i if isinstance(i, str) else i["text"]): ({"text": i, "kind": cdoc.get("kind")} if isinstance(i, str)
                                                            else dict(i)) for i in cdoc["items"]}
        if not only_helm and not only_canon:
            same = ("the same items as " + canon + (" in the same order" if kept == theirs else
                                                    ", in another order") + ".")
        else:
            parts = []
            if len(only_helm) == len(only_canon) == 1 and kept.index(only_helm[0]) == theirs.index(only_canon[0]):
                parts.append(f"HELM's list has '{only_helm[0]}' where {canon} has '{only_canon[0]}' (position "
                             f"{kept.index(only_helm[0])}; the rest is the same list, in the same order)")
            else:
                if only_helm:
                    parts.append(f"{len(only_helm)} item(s) not in {canon}: " + ", ".join(repr(t) for t in only_helm))
                if only_canon:
                    parts.append(f"{len(only_canon)} item(s) of {canon} not in HELM's list: "
                                 + ", ".join(repr(t) for t in only_canon))
            same = "DIFFERENCE: " + "; ".join(parts) + "."
        report.append(f"- `{sid}` ({name}): " + same.removeprefix("DIFFERENCE: "))
        # each item as the set it derives from types it (kind, case, plural, ...); HELM's own item ('femen') as the
        # list's kind
        items = [t if t not in full or full[t] == {"text": t, "kind": kind} else full[t] for t in kept]
        src = {"paper": HELM, "authors_file": snap.where(HELM_PATH, name), "commit": snap.commit,
               "based_on": canon.split("_")[0]}
        if diffs:
            src["differences"] = diffs
        notes = [f"HELM's {name} (bias_word_lists.py), which its docstring attributes to {cited}; HELM's bias "
                 "metrics count these words in generated text. Registered as a variant of the registry's copy of "
                 f"the list it derives from ({canon}), with every difference: {same}",
                 ("HELM's 'femen' is not an English word: the list it derives from has 'females' at that place. "
                  "The typo is kept, as HELM (and the tools that reuse its lists) run it." if "femen" in kept else ""),
                 "HELM defines no association test on these lists: sets only.", difference_note(diffs),
                 "Item kinds (and a pronoun's case) as in the set this one derives from."]
        d = set_doc(sid=sid, concept=concept, language="en", kind=kind, license="Apache-2.0",
                    license_note="The repository's LICENSE: Apache License 2.0. The lists derive from Garg et al. "
                                 "(2018) and Bolukbasi et al. (2016), whose own terms the registry records on their "
                                 "sets.", source=src, notes=notes, items=items, source_kind=["prior_work"],
                    variant="helm", variant_of=canon,
                    change=f"Initial curation from {snap.where(HELM_PATH)} (commit {c7}), {name}.")
        files[f"registry/{HELM}/sets/{sid}.yaml"] = dump(d)
        digests["lists"].append({"file": HELM_PATH, "row": "", "column": name, "n": len(raw),
                                 "sha256": list_digest(raw), "set": sid})
    files[f"registry/{HELM}/README.md"] = (
        "# HELM's bias word lists (Liang et al., 2023)\n\n"
        f"Curated by scripts/curate_wave3.py from {HELM_REPO} at commit {snap.commit}, {HELM_PATH} (Apache-2.0). "
        "Each list is a variant (`variant: helm`) of the registry's copy of the list it derives from, compared "
        "item by item:\n\n" + "\n".join(report) + "\n")
    write_files(files, [f"registry/{HELM}/**/*.*"])
    update_digests("liang2023", digests)
    print(f"liang2023: {len(HELM_LISTS)} sets, commit {snap.commit}\n" + "\n".join(report))


# ============================================================================================== Malik et al.
MALIK = "malik2022"
MALIK_REPO = "iamshnoo/soc_bias"
MALIK_LICENSE_NOTE = ("The repository's LICENSE is the GNU GPL v3 (GPL-3.0). The repository is a reproduction by "
                      "Mukherjee and Raj (2023), not the paper's authors' own (registry/sources.yaml).")
# iamshnoo/soc_bias: CITATION.cff "Reproduction Code for the paper ..." (Mukherjee and Raj, 2023-04-05); README: the
# lang_spec lists are "manually created word lists defined in the paper appendix", the trans ones data/weat/en
# translated "using Google Translate"
MALIK_MADE = {"lang_spec": "language-specific, written for Hindi: the reproduction typed them from the paper's "
                           "appendix (its README)",
              "trans": "translated from the English WEAT: the reproduction translated data/weat/en with Google "
                       "Translate (its README)"}
MALIK_BIAS = {"weat7": "gender", "weat8": "gender", "weat11": "gender", "weat12": "gender", "weat13": "gender",
              "weat14": "gender", "weat15": "gender", "weat16": "caste", "weat17": "caste", "weat18": "religion",
              "weat19": "religion", "weat20": "religion", "weat21": "urban-rural"}


@step
def malik2022(base: str) -> None:
    import json

    import yaml
    snap = Snapshot(base, MALIK_REPO)
    c7 = snap.commit[:7]
    paths = sorted(p for p in snap.files("data/weat/hi") if p.endswith(".jsonl"))
    files: dict[str, str] = {}
    digests = {"repository": MALIK_REPO, "commit": snap.commit, "files": {p: snap.sha256(p) for p in paths},
               "lists": []}
    hub = {}                       # WEATHub's Hindi sets, by their items: the same list is reused, not copied
    for p in sorted((ROOT / "registry/weathub2023/sets").glob("weathub_hi_*.yaml")):
        d = yaml.safe_load(p.read_text(encoding="utf-8"))
        hub.setdefault(tuple(i if isinstance(i, str) else i["text"] for i in d["items"]),
                       (d["id"], d["source"].get("differences") or []))
    hub_tests = {}
    for p in sorted((ROOT / "registry/weathub2023/tests").glob("weathub_hi_*.yaml")):
        d = yaml.safe_load(p.read_text(encoding="utf-8"))
        hub_tests[tuple(d[k].split("@")[0] for k in "xyab")] = d["id"]
        hub_canon = hub_tests.setdefault("_canon", {})
        hub_canon[d["id"]] = d.get("variant_of") or d["id"]
    reused, new_sets, same_tests, made = [], [], [], []
    for path in paths:
        m = re.fullmatch(r"data/weat/hi/(lang_spec|trans)/(weat\d+)_hi\.jsonl", path)
        folder, weat = m[1], m[2]
        doc = json.loads(snap.text(path))
        refs = {}
        for role, key in (("x", "targ1"), ("y", "targ2"), ("a", "attr1"), ("b", "attr2")):
            raw = list(doc[key]["examples"])
            kept, diffs = curate_list(raw)
            cat = doc[key]["category"]
            same_list = hub.get(tuple(kept))
            # reused only where WEATHub's set is this very list: the same items, and the same repeats left out
            sid = same_list[0] if same_list and same_list[1] == diffs else None
            if sid:
                reused.append(f"{path} {key} = {sid}")
            else:
                sid = f"malik2022_hi_{folder.replace('_', '')}_{weat}_{key}"
                src = {"paper": MALIK, "authors_file": snap.where(path, key), "commit": snap.commit}
                if diffs:
                    src["differences"] = diffs
                kind = {"adjectives": "adjective", "verbs": "verb", "names": "name"}.get(
                    doc[key].get("type", ""), "word")
                notes = [f"Malik et al. (2022) Hindi WEAT list '{cat}' ({folder}: {MALIK_MADE[folder]}).",
                         "Compared by content with WEATHub's Hindi sets (WEATHub's first two authors made this "
                         "reproduction): no WEATHub set holds "
                         "this list as this file gives it, so it is registered here; a list WEATHub holds is reused, "
                         "not copied." + (f" (WEATHub's {same_list[0]} holds the same items, its file repeating "
                                          "other ones.)" if same_list else ""),
                         f"Kind '{kind}' from the file's type field ('{doc[key].get('type', '')}'); 'word' where "
                         "it gives none.", difference_note(diffs)]
                d = set_doc(sid=sid, concept=cat, language="hi", kind=kind, license="GPL-3.0",
                            license_note=MALIK_LICENSE_NOTE, source=src, notes=notes, items=kept,
                            source_kind=["authors_curated"] if folder == "lang_spec" else ["translation_machine"],
                            change=f"Initial curation from {snap.where(path)} (commit {c7}), {key}.")
                files[f"registry/{MALIK}/sets/{sid}.yaml"] = dump(d)
                new_sets.append(sid)
            digests["lists"].append({"file": path, "row": "", "column": key, "n": len(raw),
                                     "sha256": list_digest(raw), "set": sid})
            refs[role] = (sid, kept, cat)
        tid = f"malik2022_hi_{weat}" + ("_trans" if folder == "trans" else "")
        same = hub_tests.get(tuple(refs[k][0] for k in "xyab"))
        notes = [f"Malik et al. (2022), Hindi WEAT {weat} ({folder}), data/weat/hi/{folder}/{weat}_hi.jsonl.",
                 (f"Its four lists are those of WEATHub's {same}: the same sets, two entries each with its own "
                  "provenance (a run computes them once)." if same else
                  "Lists WEATHub holds are reused (its sets); the others are this source's."),
                 coverage_note("hi")]
        shared = overlaps({k: v[1] for k, v in refs.items()})
        t = {"id": tid, "version": "1.0.0",
             "title": f"Malik et al. (2022) Hindi {weat}: {refs['x'][2]}/{refs['y'][2]} vs {refs['a'][2]}/"
                      f"{refs['b'][2]}",
             "bias_type": MALIK_BIAS[weat], "level": "word", "language": "hi", "license": "GPL-3.0",
             "license_note": MALIK_LICENSE_NOTE}
        if shared:
            # the canonical test it stands beside: WEATHub's (or the one WEATHub's names), else Caliskan et al.'s
            t["variant"], t["variant_of"] = "authors-lists", (hub_tests["_canon"][same] if same else weat)
        t["source"] = {"paper": MALIK, "authors_file": snap.where(path), "commit": snap.commit}
        t.update({k: f"{v[0]}@1.0.0" for k, v in refs.items()})
        t["expansions"] = {}
        if len(refs["x"][1]) != len(refs["y"][1]):
            t["equal_targets"] = False
        if shared:
            t["overlap"] = shared
        t["aliases"] = [{"paper": MALIK, "name": f"{weat} ({folder})"}]
        t["notes"] = " ".join(n for n in notes if n)
        t["changelog"] = changelog(f"Initial curation from {snap.where(path)} (commit {c7}).")
        files[f"registry/{MALIK}/tests/{tid}.yaml"] = dump(t)
        made.append(tid)
        if same:
            same_tests.append(f"{tid} = {same}")
    files[f"registry/{MALIK}/README.md"] = (
        "# Malik et al. (2022), Hindi WEAT lists\n\n"
        f"Curated by scripts/curate_wave3.py from {MALIK_REPO} at commit {snap.commit}, data/weat/hi/ (GPL-3.0).\n\n"
        "The repository is a reproduction, not the paper's authors' own: its CITATION.cff names it \"Reproduction "
        "Code for the paper 'Socially Aware Bias Measurements for Hindi Language Representations'\" by Anjishnu "
        "Mukherjee and Chahat Raj (released 2023-04-05); the paper's authors are Malik, Dev, Nishi, Peng and Chang. "
        "Its README says the language-specific lists (data/weat/hi/lang_spec) are word lists from the paper's "
        "appendix and the translated ones (data/weat/hi/trans, WEAT 7 and 8) were made with Google Translate from "
        "data/weat/en.\n\n"
        "Compared by content with WEATHub's Hindi sets (registry/weathub2023): a list WEATHub holds is reused, a new "
        f"one registered. {len(made)} tests; {len(new_sets)} new sets; {len(reused)} lists reused from WEATHub.\n\n"
        "Tests whose four lists are a WEATHub test's:\n" + "".join(f"- {x}\n" for x in same_tests)
        + "\nNot curated: the SEAT sentence lists (data/seat/hi/) and the authors' results (results/).\n")
    write_files(files, [f"registry/{MALIK}/**/*.*"])
    update_digests("malik2022", digests)
    print(f"malik2022: {len(made)} tests, {len(new_sets)} new sets, {len(reused)} lists reused, "
          f"{len(same_tests)} tests equal to WEATHub's, commit {snap.commit}")


# ================================================================================ Omrani Sabbaghi et al.
OMRANI = "omrani2023"
OMRANI_REPO = "shivaomrani/LLM-Bias"
OMRANI_LISTS = {"experiment2": ("omrani2023_experiment2_descriptors", "Intersectional descriptors (experiment 2)"),
                "experiment3": ("omrani2023_experiment3_descriptors", "Intersectional descriptors (experiment 3)")}


@step
def omrani2023(base: str) -> None:
    snap = Snapshot(base, OMRANI_REPO)
    c7 = snap.commit[:7]
    files: dict[str, str] = {}
    paths = {k: f"data/experiment-phrases/{k}.txt" for k in OMRANI_LISTS}
    digests = {"repository": OMRANI_REPO, "commit": snap.commit,
               "files": {p: snap.sha256(p) for p in paths.values()}, "lists": []}
    for key, (sid, concept) in OMRANI_LISTS.items():
        raw = lines_of(snap.text(paths[key]))
        kept, diffs = curate_list(raw)
        src = {"paper": OMRANI, "authors_file": snap.where(paths[key]), "commit": snap.commit}
        if diffs:
            src["differences"] = diffs
        notes = [f"The descriptor phrases of the paper's {key.replace('experiment', 'experiment ')} "
                 f"({paths[key]}, one per line: 'a <descriptors> person', the intersections of the descriptors the "
                 "authors combine).",
                 "The authors measure each phrase's valence association (SC-WEAT against a valence lexicon, "
                 "src/experiment2_generate_table.py and src/experiment3.py) and compare groups of phrases selected by "
                 "a descriptor in their code; no four-list test is stated in a file, so the registry holds the "
                 "phrases as a set only.",
                 "Kind 'word': a whole phrase, encoded as written (no template expands it).", difference_note(diffs)]
        d = set_doc(sid=sid, concept=concept, language="en", kind="word", license="unspecified",
                    license_note="The repository shivaomrani/LLM-Bias has no licence file.", source=src, notes=notes,
                    items=kept, source_kind=["authors_curated"],
                    change=f"Initial curation from {snap.where(paths[key])} (commit {c7}).")
        files[f"registry/{OMRANI}/sets/{sid}.yaml"] = dump(d)
        digests["lists"].append({"file": paths[key], "row": "", "column": "lines", "n": len(raw),
                                 "sha256": list_digest(raw), "set": sid})
    write_files(files, [f"registry/{OMRANI}/**/*.*"])
    update_digests("omrani2023", digests)
    print(f"omrani2023: {len(OMRANI_LISTS)} sets ({', '.join(str(len(lines_of(snap.text(p)))) for p in paths.values())}"
          f" phrases), commit {snap.commit}")


# ===================================================================================================== main
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("snapshots", help="folder of <owner>+<name>/repo bare git snapshots")
    ap.add_argument("--only", default=",".join(STEPS), help=f"steps, comma-separated (default all: {', '.join(STEPS)})")
    args = ap.parse_args(argv)
    for name in args.only.split(","):
        STEPS[name](args.snapshots)


if __name__ == "__main__":
    main()
