"""Curation of the wave-2 English public stimulus sets from the authors' files.

Writes registry/<source>/{sets,tests,data}/..., templates/bai2024_llm_iat.yaml and the digests the curation
tests check (tests/data/authors/wave2en_digests.json). Run from the repository root:

    EATLAS_AUTHORS_GIT=<folder of owner+name/repo git snapshots> python scripts/curate_wave2en.py

then `python -m eatlas catalog --sync`. The lists come only from the authors' files (scripts/wave2en_authors.py);
every curation decision (item kinds, deduplication, the sets Bad Seeds lists are linked to) is stated here
and recorded in the files it writes. Not part of the package.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
import unicodedata
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wave2en_authors as A  # noqa: E402
from item_cleaning import clean_items  # noqa: E402

ROOT = A.ROOT
DATE = "2026-11-23"
DIGESTS: dict = {"files": {}, "sets": {}}
WRITTEN: dict[str, dict] = {}           # set id -> doc (this run)


# ----------------------------------------------------------------------------------------------- YAML out

class Flow(dict):
    pass


class FlowList(list):
    pass


class Dumper(yaml.SafeDumper):
    pass


Dumper.add_representer(Flow, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))
Dumper.add_representer(FlowList, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))


def dump(path: Path, doc: dict, header: str | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    s = yaml.dump(doc, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=110)
    path.write_text((f"# {header}\n" if header else "") + s, encoding="utf-8")


def list_digest(items: list[str]) -> str:
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode("utf-8")).hexdigest()


def record_file(repo: str, path: str) -> str:
    h = A.sha256(repo, path)
    DIGESTS["files"][f"{repo}:{path}"] = h
    return h


def authors_file(repo: str, path: str, detail: str = "") -> str:
    record_file(repo, path)
    return f"{repo} {path}" + (f" {detail}" if detail else "")


def make_items(texts: list[str], kinds: dict[str, object] | None, default: str | None):
    """Bare strings where the item takes the set's kind, else a flow mapping."""
    out = []
    for t in texts:
        k = (kinds or {}).get(t)
        if k is None or k == default:
            if default is None:
                raise ValueError(f"no kind for {t!r}")
            out.append(t)
        elif isinstance(k, str):
            out.append(Flow(text=t, kind=k))
        else:
            out.append(Flow(text=t, **k))
    return out


def write_set(source_dir: str, sid: str, *, concept: str, license: str, paper: str, authors_file_: str,
              texts: list[str], default_kind: str | None, kinds: dict | None = None, section: str | None = None,
              source_kind: list[str] | None = None, notes: str, variant: str | None = None,
              variant_of: str | None = None, license_note: str | None = None, extra_source: dict | None = None,
              digest_of: list[str] | None = None, group: dict | None = None, template_vars: dict | None = None,
              change: str | None = None, derive: dict) -> str:
    """Writes registry/<source_dir>/sets/<sid>.yaml; returns "sid@1.0.0". ``digest_of``: the authors' list
    the set re-derives to (recorded for the curation tests); default ``texts``."""
    assert re.match(r"^[a-z0-9][a-z0-9_+\-]*$", sid), sid
    assert sid not in WRITTEN, f"duplicate set id {sid}"
    for t in texts:
        assert t == t.strip() and t == unicodedata.normalize("NFC", t), (sid, t)
    assert len(set(texts)) == len(texts), (sid, [t for t in texts if texts.count(t) > 1])
    assert clean_items(texts, case_sensitive=True) == (list(texts), []), sid     # the one routine changes nothing
    doc: dict = {"id": sid, "version": "1.0.0", "concept": concept, "language": "en", "license": license}
    if license_note:
        doc["license_note"] = license_note
    if default_kind:
        doc["kind"] = default_kind
    doc["source_kind"] = FlowList(source_kind or [])
    if variant:
        doc["variant"] = variant
        if variant_of:
            doc["variant_of"] = variant_of
    src = {"paper": paper, "section": section, "table": None, "page": None, "authors_file": authors_file_}
    src.update(extra_source or {})
    doc["source"] = src
    if group:
        doc["group"] = Flow(group)
    if template_vars:
        doc["template_vars"] = Flow(template_vars)
    doc["notes"] = notes
    doc["changelog"] = [Flow(version="1.0.0", date=DATE,
                             change=change or f"Initial curation from {authors_file_.split(' ')[0]} "
                                              f"{authors_file_.split(' ')[1] if ' ' in authors_file_ else ''}".strip())]
    doc["items"] = make_items(texts, kinds, default_kind)
    dump(ROOT / "registry" / source_dir / "sets" / f"{sid}.yaml", doc)
    WRITTEN[sid] = doc
    DIGESTS["sets"][sid] = {"authors": list_digest(digest_of if digest_of is not None else texts),
                            "curated": list_digest(texts), "derive": [derive]}
    return f"{sid}@1.0.0"


def also_derived(ref: str, derive: dict) -> None:
    """The same list found again in another authors' file / place (one set serves both)."""
    DIGESTS["sets"][ref.split("@")[0]]["derive"].append(derive)


def write_test(source_dir: str, tid: str, *, title: str, bias_type: str, license: str, source: dict,
               x: str, y: str, a: str, b: str, notes: str, level: str = "word", expansions: dict | None = None,
               aliases: list | None = None, variant: str | None = None, variant_of: str | None = None,
               license_note: str | None = None, change: str, equal_targets: bool | None = None) -> None:
    doc: dict = {"id": tid, "version": "1.0.0", "title": title, "language": "en", "bias_type": bias_type,
                 "level": level, "license": license}
    if license_note:
        doc["license_note"] = license_note
    if variant:
        doc["variant"] = variant
        doc["variant_of"] = variant_of
    doc["source"] = source
    doc.update({"x": x, "y": y, "a": a, "b": b})
    if equal_targets is not None:
        doc["equal_targets"] = equal_targets
    if expansions:
        doc["expansions"] = {k: Flow(v) for k, v in expansions.items()}
    doc["aliases"] = [Flow(a_) for a_ in (aliases or [])]
    doc["notes"] = notes
    doc["changelog"] = [Flow(version="1.0.0", date=DATE, change=change)]
    dump(ROOT / "registry" / source_dir / "tests" / f"{tid}.yaml", doc)


def rewrite(doc: dict, source_dir: str) -> None:
    dump(ROOT / "registry" / source_dir / "sets" / f"{doc['id']}.yaml", doc)


def existing_sets() -> dict[str, dict]:
    out = {}
    for p in sorted((ROOT / "registry").glob("*/sets/*.yaml")):
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        out[doc["id"]] = doc
    return out


def texts_of(doc: dict) -> list[str]:
    return [i if isinstance(i, str) else i["text"] for i in doc["items"]]


def kinds_of(doc: dict) -> dict[str, object]:
    """text -> kind spec (str or dict of the item's fields other than text) of an existing set."""
    out = {}
    for i in doc["items"]:
        if isinstance(i, str):
            out[i] = doc["kind"]
        else:
            rest = {k: v for k, v in i.items() if k != "text"}
            out[i["text"]] = rest["kind"] if list(rest) == ["kind"] else rest
    return out


def oxford(xs: list[str]) -> str:
    xs = [f"'{x}'" for x in xs]
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def dedupe(texts: list[str]) -> tuple[list[str], list[str]]:
    """The curation scripts' one item-cleaning routine (scripts/item_cleaning.py) on a list already stripped and
    NFC-normalised: a repeat is kept once, at its first position; returns (the list, the repeats left out). Any
    other change the routine would make is refused here (these lists are written as the authors' files hold them)."""
    out, diffs = clean_items(texts)
    assert all(d["reason"].startswith("repeats position") for d in diffs), diffs
    return out, [d["text"] for d in diffs]


OUTPUTS = ["registry/may2019/sets/pi_*.yaml", "registry/may2019/tests/project_implicit_*.yaml",
           "registry/guo2021/sets/*_code.yaml", "registry/guo2021/tests/*_code.yaml", "templates/bai2024_llm_iat.yaml",
           *(f"registry/{s}/**/*.*" for s in ("meade2022", "garg2018", "bolukbasi2016", "manzini2019", "zhao2018gn",
                                               "antoniak2021", "bai2024"))]
for pattern in OUTPUTS:             # what an earlier run of this script wrote
    for p in ROOT.glob(pattern):
        p.unlink()
BEFORE = existing_sets()            # the registry without this script's files (canonical entries to link)

# =============================================================================================== 1. May 2019
SB = "W4ngatang/sent-bias"
PI_KINDS = {
    # targets
    "walking": "mass_noun", "running": "mass_noun", "crossing": "mass_noun", "skiing": "mass_noun",
    "crutches": {"kind": "noun", "number": "plural", "singular": "crutch"},
    "wheelchair": "noun", "service dog": "noun", "white cane": "noun",
    "European American": "group_term", "American colonist": "group_term",
    "Native American": "group_term", "indigenous American": "group_term",
    "cross": "noun", "church": "noun", "Bible": "noun", "Christian": "group_term", "Christianity": "mass_noun",
    "star and crescent": {"kind": "noun", "plural": "stars and crescents"}, "mosque": "noun", "Koran": "noun",
    "Muslim": "group_term", "Islam": "mass_noun",
    "straight": "adjective", "heterosexual": "adjective", "homosexual": "adjective", "gay": "adjective",
    "straight people": {"kind": "group_term", "number": "plural", "singular": "straight person"},
    "gay people": {"kind": "group_term", "number": "plural", "singular": "gay person"},
    "light-skinned": "adjective", "light skin": "mass_noun", "pale": "adjective", "fair": "adjective",
    "fair-skinned": "adjective", "dark-skinned": "adjective", "dark skin": "mass_noun",
    "white person": {"kind": "group_term", "plural": "white people"},
    "brown person": {"kind": "group_term", "plural": "brown people"},
    "black person": {"kind": "group_term", "plural": "black people"},
    "person of color": {"kind": "group_term", "plural": "people of color"},
    # landmarks (proper nouns: the mass-noun frames take no article)
    "Old Faithful": "mass_noun", "Niagara Falls": "mass_noun", "Grand Canyon": "mass_noun",
    "Devils Tower": "mass_noun", "redwood forest": "noun", "Antarctica": "mass_noun", "Mount Everest": "mass_noun",
    "Sahara": "mass_noun", "Mount Merapi": "mass_noun", "Great Barrier Reef": "mass_noun",
    # objects and weapons
    "water bottle": "noun", "camera": "noun", "soda can": "noun", "ice cream cone": "noun", "cell phone": "noun",
    "tape player": "noun", "wallet": "noun", "axe": "noun", "canon": "noun", "grenade": "noun", "mace": "noun",
    "pistol": "noun", "rifle": "noun", "sword": "noun",
    # weight adjectives
    **{w: "adjective" for w in ("thin underweight light skinny bony gaunt slender scrawny lanky lean fat overweight "
                                "heavy thick plump obese chubby large wide hefty").split()},
    # Good / Bad
    **{w: "adjective" for w in ("spectacular joyous terrific fantastic dirty negative evil angry attractive joyful glad "
                                "happy horrific bothersome hurtful appealing glorious rotten gross awful fabulous "
                                "yucky cheerful ugly beautiful smiling selfish horrible").split()},
    **{w: "verb" for w in "celebrate cherish humiliate adore enjoy detest".split()},
    **{w: "mass_noun" for w in ("cheer grief hate abuse disgust scorn delight friendship excitement hatred poison "
                                "love sadness pleasure").split()},
    **{w: "noun" for w in "triumph disaster failure friend".split()},
}
PI_NOTE_ITEMS = {
    "canon": "as the authors' file spells it (the Project Implicit weapons IAT item is a cannon)",
    "smiling": "an adjective here ('They are smiling.')",
    "Old Faithful": "a proper noun: the mass-noun frames ('This is Old Faithful.') take no article",
}
PI = {   # test -> (title, bias_type, x concept id, y, a, b)
    "arab-muslim": ("Other names vs Arab-Muslim names, Good/Bad", "race"),
    "disability": ("Abled vs disabled terms, Good/Bad", "disability"),
    "native": ("White American vs Native American terms, American/Foreign landmarks", "race"),
    "religion": ("Christianity vs Islam terms, Good/Bad", "religion"),
    "sexuality": ("Straight vs gay terms, Good/Bad", "sexuality"),
    "skin-tone": ("Light vs dark skin terms, Good/Bad", "race"),
    "weapons": ("White vs Black American terms, harmless objects vs weapons", "race"),
    "weight": ("Thin vs fat terms, Good/Bad", "body"),
}


def snake(category: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", category).lower()


def may2019_hidden() -> tuple[int, int]:
    n_sets = n_tests = 0
    sets_by_list: dict[tuple, str] = {}
    for test, (title, bias) in PI.items():
        path = f"tests-hidden/project_implicit_{test}.jsonl"
        doc = A.json_file(SB, path)
        meta_path = f"tests-meta/project_implicit_{test}.txt"
        try:
            meta = " ".join(A.text(SB, meta_path).split())
            record_file(SB, meta_path)
        except Exception:
            meta = None
        refs = {}
        for role, key in zip("xyab", ("targ1", "targ2", "attr1", "attr2")):
            cat, ex = doc[key]["category"], doc[key]["examples"]
            if tuple(ex) in sets_by_list:             # the same list in another hidden test: one set
                refs[role] = sets_by_list[tuple(ex)]
                WRITTEN[refs[role].split("@")[0]]["source"]["authors_file"] += f"; {path} {key}"
                rewrite(WRITTEN[refs[role].split("@")[0]], "may2019")
                also_derived(refs[role], {"repo": SB, "path": path, "fmt": "json", "select": [key, "examples"]})
                continue
            sid = f"pi_{test.replace('-', '_')}_{snake(cat)}"
            kinds = {t: "name" if cat.endswith("Names") else PI_KINDS[t] for t in ex}
            for t, note in PI_NOTE_ITEMS.items():
                if t in kinds:
                    k = kinds[t]
                    kinds[t] = {**({"kind": k} if isinstance(k, str) else k), "note": note}
            counts = {}
            for t in ex:
                k = kinds[t] if isinstance(kinds[t], str) else kinds[t]["kind"]
                counts[k] = counts.get(k, 0) + 1
            default = max(counts, key=counts.get)
            notes = (f"Category '{cat}' of May et al.'s hidden Project Implicit test project_implicit_{test} "
                     f"(sent-bias tests-hidden/), in the authors' order. The authors never made a sentence "
                     f"version of the hidden tests; the kinds stated here (ours) give the bleached sentence "
                     f"level. ")
            if meta:
                notes += f"The authors' note (tests-meta/project_implicit_{test}.txt): \"{meta}\""
            else:
                notes += "sent-bias has no tests-meta note for this test."
            refs[role] = write_set("may2019", sid, concept=cat, license="CC-BY-NC-4.0", paper="may2019",
                                   section="Hidden tests (Project Implicit IATs); not printed in the paper",
                                   authors_file_=authors_file(SB, path, key), texts=ex, default_kind=default,
                                   kinds=kinds, source_kind=["social_science"] if role in "ab" or test in
                                   ("arab-muslim",) else ["social_science", "authors_curated"],
                                   notes=notes, extra_source={"authors_commit": A.REPOS[SB][0]},
                                   derive={"repo": SB, "path": path, "fmt": "json", "select": [key, "examples"]})
            sets_by_list[tuple(ex)] = refs[role]
            n_sets += 1
        tid = f"project_implicit_{test}"
        write_test("may2019", tid, title=title, bias_type=bias, license="CC-BY-NC-4.0",
                   source={"paper": "may2019", "section": "Hidden tests (Project Implicit IATs)", "table": None,
                           "authors_file": authors_file(SB, path), "authors_commit": A.REPOS[SB][0]},
                   x=refs["x"], y=refs["y"], a=refs["a"], b=refs["b"],
                   expansions={"sent": {"template": "may2019_bleached@1.0.0"}},
                   aliases=[{"paper": "may2019", "name": tid}],
                   notes=(f"One of the eight tests May et al. adapted from Project Implicit IATs and kept out of "
                          f"the paper (sent-bias tests-hidden/{Path(path).name}). Word lists exactly as in the "
                          f"authors' file (same order). The sent level is our bleached expansion through May et "
                          f"al.'s templates with the kinds stated in each set; the authors made none."
                          + (f" Authors' note: \"{meta}\"" if meta else "")),
                   change=f"Initial curation from sent-bias {path}.")
        n_tests += 1
    return n_sets, n_tests


# ============================================================================================ 2. Meade 2022
BB = "McGill-NLP/bias-bench"


def meade2022() -> tuple[int, int]:
    n_sets = n_tests = 0
    by_list: dict[tuple, str] = {}
    names = {"ChristianityTerms": "christianity_terms", "IslamTerms": "islam_terms", "JewishTerms": "jewish_terms",
             "Good": "good", "Bad": "bad", "Pleasant": "pleasant", "Unpleasant": "unpleasant"}
    for t in ("1", "1b", "2", "2b"):
        path = f"data/seat/sent-religion{t}.jsonl"
        doc = A.json_file(BB, path)
        refs = {}
        for role, key in zip("xyab", ("targ1", "targ2", "attr1", "attr2")):
            cat, ex = doc[key]["category"], doc[key]["examples"]
            if tuple(ex) in by_list:
                refs[role] = by_list[tuple(ex)]
                WRITTEN[refs[role].split("@")[0]]["source"]["authors_file"] += f"; {path} {key}"
                rewrite(WRITTEN[refs[role].split("@")[0]], "meade2022")
                also_derived(refs[role], {"repo": BB, "path": path, "fmt": "json", "select": [key, "examples"]})
                continue
            sid = f"meade2022_sent_{names[cat]}"
            assert sid not in WRITTEN, (sid, "a second, different list under the same category")
            words = []
            for sent in ex:                       # the words the sentences frame ("This is [a|an] X.", "This will X.")
                m = re.match(r"^(?:This is (?:an? )?|This will )(.+)\.$", sent)
                if m and m.group(1) not in words:
                    words.append(m.group(1))
            pool = {k: v for k, v in {**BEFORE, **WRITTEN}.items() if not v.get("variant")}
            best, score = None, 0.0
            for osid, odoc in pool.items():
                ot = {t.lower() for t in texts_of(odoc)}
                j = len(ot & set(words)) / len(ot | set(words))
                if j > score:
                    best, score = osid, j
            rel = ""
            if best and score >= 0.6:
                ot = [t.lower() for t in texts_of(pool[best])]
                extra_w = [w for w in words if w not in ot]
                miss_w = [t for t in texts_of(pool[best]) if t.lower() not in words]
                rel = (f" Compared case-insensitively with {best}@{pool[best]['version']}, the framed words "
                       + ("are the same" if not extra_w and not miss_w else
                          " and ".join(x for x in (f"add {oxford(extra_w)}" if extra_w else "",
                                                   f"lack {oxford(miss_w)}" if miss_w else "") if x)) + ".")
            framed = (f" The {len(words)} words the sentences frame ('This is [a/an] X.', 'This will X.'): "
                      f"{', '.join(words)}."
                      + rel)
            refs[role] = write_set(
                "meade2022", sid, concept=cat, license="unspecified", paper="meade2022",
                section="Section 3 and Appendix (SEAT religion tests)", authors_file_=authors_file(BB, path, key),
                texts=ex, default_kind="sentence", source_kind=["prior_work"],
                derive={"repo": BB, "path": path, "fmt": "json", "select": [key, "examples"]},
                extra_source={"authors_commit": A.REPOS[BB][0]},
                license_note="bias-bench has no licence file. The sentences are May et al.'s bleached templates "
                             "(sent-bias, CC BY-NC 4.0) filled with religion terms.",
                notes=(f"The {len(ex)} sentences of category '{cat}' exactly as the authors ship them, stored as "
                       f"the sent level. They were made by May et al.'s sentence generator (each word's kind "
                       f"guessed by that generator, e.g. 'This is a cherish.'), and the authors ship no word "
                       f"list, so no word set is derived from them here." + framed))
            by_list[tuple(ex)] = refs[role]
            n_sets += 1
        tid = f"sent-religion{t}"
        write_test("meade2022", tid, title=f"Religion SEAT {t}: {doc['targ1']['category']} vs "
                                          f"{doc['targ2']['category']}, {doc['attr1']['category']}/"
                                          f"{doc['attr2']['category']}",
                   bias_type="religion", license="unspecified", level="sent",
                   source={"paper": "meade2022", "section": "SEAT religion tests", "table": None,
                           "authors_file": authors_file(BB, path), "authors_commit": A.REPOS[BB][0]},
                   x=refs["x"], y=refs["y"], a=refs["a"], b=refs["b"],
                   expansions={"sent": {"template": "may2019_bleached@1.0.0"}},
                   aliases=[{"paper": "meade2022", "name": tid}],
                   notes=("Sentence-level test: the sets hold the authors' sentences (kind sentence), which every "
                          "template passes through unchanged, so the sent level is exactly bias-bench's file. "
                          "may2019_bleached is named because May et al.'s generator made these sentences; it adds "
                          "nothing. The test has no word level."),
                   change=f"Initial curation from bias-bench {path}.")
        n_tests += 1
    return n_sets, n_tests


# ============================================================================================ 3. Guo & Caliskan code
CE = "weiguowilliam/CEAT"
GUO_NAMES = {   # code variable -> canonical guo2021 set
    "african_female": "guo2021_af_names", "african_male": "guo2021_am_names",
    "european_female": "guo2021_ef_names", "european_male": "guo2021_em_names",
    "mexican_female": "guo2021_mf_names", "mexican_male": "guo2021_mm_names",
}
CEAT_TESTS = {  # test -> ((x, y, a, b) code variables in ceat.py weat_groups, canonical test)
    "ceat_i1": ("african_female", "european_male", "af_bias", "em_bias_foraf"),
    "ceat_i2": ("african_female", "european_male", "af_unique_bias", "em_unique_bias_foraf"),
    "ceat_i3": ("mexican_female", "european_male", "lf_bias", "em_bias_forlf"),
    "ceat_i4": ("mexican_female", "european_male", "lf_unique_bias", "em_unique_bias_forlf"),
}
CODE_FORMS = {"chicken": ("fried-chicken", "mass_noun"), "status": ("high-status", "mass_noun"),
              "American": ("all-American", "adjective")}
CEAT_WEAT_KINDS = {"short": "adjective"}      # words of CEAT's WEAT lists absent from Caliskan et al.'s sets
IBD_LISTS = {   # ibd.py variable -> canonical guo2021 validation set
    "african_female_bias": "guo2021_val_af_intersectional", "african_female_intersectional_bias": "guo2021_val_af_emergent",
    "african_male_bias": "guo2021_val_am_intersectional", "african_male_intersectional_bias": "guo2021_val_am_emergent",
    "european_male_bias": "guo2021_val_em_intersectional", "european_male_intersectional_bias": "guo2021_val_em_emergent",
    "european_female_bias": "guo2021_val_ef_intersectional", "european_female_intersectional_bias": "guo2021_val_ef_emergent",
    "mexican_female_bias": "guo2021_val_mf_intersectional", "mexican_female_intersectional_bias": "guo2021_val_mf_emergent",
    "mexican_male_bias": "guo2021_val_mm_intersectional", "mexican_male_intersectional_bias": "guo2021_val_mm_emergent",
}


def compare(ours: list[str], theirs: list[str]) -> str:
    """A sentence saying how a variant list differs from its canonical list."""
    if ours == theirs:
        return "is the same list in the same order"
    miss = [t for t in theirs if t not in ours]
    add = [t for t in ours if t not in theirs]
    parts = []
    if not miss and not add:
        return "has the same items in a different order"
    if [norm(t) for t in ours] == [norm(t) for t in theirs]:
        how = []
        if any(a != b and a.lower() == b.lower() for a, b in zip(ours, theirs)):
            how.append("case")
        if any("_" in a and " " in b for a, b in zip(ours, theirs)):
            how.append("'_' for spaces")
        return f"has the same items in the same order, differing only in {' and '.join(how) or 'spacing'}"
    if add:
        parts.append(f"has {oxford(add)}")
    if miss:
        parts.append(f"lacks {oxford(miss)}")
    s = " and ".join(parts)
    if not miss or not add or sorted(set(ours) & set(theirs), key=ours.index) != [t for t in theirs if t in ours]:
        s += " (order as the authors' list)"
    return s


def guo2021_code() -> tuple[int, int]:
    n_sets = n_tests = 0
    ceat = A.python_lists(CE, "code/ceat.py")
    ibd = A.python_lists(CE, "code/ibd.py")
    record_file(CE, "code/ceat.py")
    record_file(CE, "code/ibd.py")
    created: dict[tuple[str, str], str] = {}        # (file, var) -> ref

    def code_set(file: str, var: str, canonical: str, *, suffix: str) -> str:
        lists = ceat if file == "code/ceat.py" else ibd
        lst, l0, l1 = lists[var]
        canon = BEFORE[canonical]
        ck = kinds_of(canon)
        kinds = {}
        for t in lst:
            if t in ck:
                kinds[t] = ck[t]
            elif t in CODE_FORMS:
                paper_form, k = CODE_FORMS[t]
                pk = ck.get(paper_form, k)
                kinds[t] = {"kind": pk if isinstance(pk, str) else pk["kind"], "note": f"the paper's '{paper_form}'"}
            else:
                raise ValueError(f"{file} {var}: {t!r} has no kind in {canonical}")
        default = canon.get("kind") or "name" if all((k if isinstance(k, str) else k["kind"]) == "name"
                                                      for k in kinds.values()) else None
        if default is None:
            counts = {}
            for k in kinds.values():
                kk = k if isinstance(k, str) else k["kind"]
                counts[kk] = counts.get(kk, 0) + 1
            default = max(counts, key=counts.get)
        sid = f"{canonical}_{suffix}"
        diff = compare(lst, texts_of(canon))
        trunc = ""
        if "[0:12]" in "".join(A.text(CE, file).split("\n")[l0 - 1:l1]):
            trunc = (" The code writes a longer list and keeps its first 12 names ([0:12]); its comments name "
                     "the names it deleted.")
        ref = write_set("guo2021", sid, concept=canon["concept"] + " (authors' code)", license="unspecified",
                        paper="guo2021", section="Authors' code (not printed in the paper)",
                        authors_file_=authors_file(CE, file, f"{var}, " + (f"line {l0}" if l0 == l1 else f"lines {l0}-{l1}")), texts=lst,
                        default_kind=default, kinds=kinds, derive={"repo": CE, "path": file, "fmt": "python", "var": var},
                        source_kind=list(canon.get("source_kind") or []) or
                        ["prior_work"], variant="authors-code", variant_of=canonical,
                        extra_source={"authors_commit": A.REPOS[CE][0]}, group=canon.get("group"),
                        notes=(f"The list `{var}` as Guo & Caliskan's code runs it ({file}, "
                               + (f"line {l0}" if l0 == l1 else f"lines {l0}-{l1}") + "): "
                               f"compared with the paper's list {canonical}@{canon['version']}, it {diff}.{trunc} "
                               f"The published CEAT/IBD numbers came from the code's lists; a corpus search with "
                               f"the paper's hyphenated forms ('fried-chicken', 'high-status', 'all-American') "
                               f"finds few contexts."))
        created[(file, var)] = ref
        return ref

    for var, canonical in GUO_NAMES.items():
        code_set("code/ceat.py", var, canonical, suffix="code")
        n_sets += 1
        if set(ibd[var][0]) != set(ceat[var][0]):
            code_set("code/ibd.py", var, canonical, suffix="ibd_code")
            n_sets += 1
        elif ibd[var][0] != ceat[var][0]:
            WRITTEN[f"{canonical}_code"]["notes"] += (
                f" code/ibd.py (lines {ibd[var][1]}-{ibd[var][2]}) has the same {len(ibd[var][0])} names in another "
                f"order; IBD takes them as a set, so no separate variant is kept.")
            rewrite(WRITTEN[f"{canonical}_code"], "guo2021")
    bias_canon = {"af_bias": "guo2021_ceat_i1_af", "em_bias_foraf": "guo2021_ceat_i1_em",
                  "af_unique_bias": "guo2021_ceat_i2_af", "em_unique_bias_foraf": "guo2021_ceat_i2_em",
                  "lf_bias": "guo2021_ceat_i3_mf", "em_bias_forlf": "guo2021_ceat_i3_em",
                  "lf_unique_bias": None, "em_unique_bias_forlf": "guo2021_ceat_i4_em"}
    tests = {}
    for tid, (x, y, a, b) in CEAT_TESTS.items():
        canon_test = yaml.safe_load((ROOT / "registry/guo2021/tests" / f"{tid}.yaml").read_text())
        refs = {}
        for role, var in zip("xyab", (x, y, a, b)):
            if ("code/ceat.py", var) in created:
                refs[role] = created[("code/ceat.py", var)]
                continue
            canonical = bias_canon.get(var) or canon_test[role].split("@")[0]
            refs[role] = code_set("code/ceat.py", var, canonical, suffix="code")
            n_sets += 1
        tests[tid] = refs
        lst_line = {v: ceat[v][1] for v in (x, y, a, b)}
        write_test("guo2021", f"{tid}_code", title=canon_test["title"] + " (authors' code)",
                   bias_type="intersectional", license="unspecified", variant="authors-code", variant_of=tid,
                   source={"paper": "guo2021", "section": "Authors' code, weat_groups", "table": None,
                           "authors_file": f"{CE} code/ceat.py weat_groups (lines "
                                           f"{', '.join(f'{v} {n}' for v, n in lst_line.items())})",
                           "authors_commit": A.REPOS[CE][0]},
                   x=refs["x"], y=refs["y"], a=refs["a"], b=refs["b"],
                   notes=(f"{canon_test['aliases'][0]['name']} as Guo & Caliskan's code ran it (code/ceat.py "
                          f"weat_groups): names truncated to the first 12 of the code's lists and attribute words "
                          f"in the code's forms ('chicken', 'status', 'American'). The paper's version, with the "
                          f"appendix lists, is {tid}@{canon_test['version']}. Word level only, as CEAT."),
                   change="Initial curation from CEAT code/ceat.py.")
        n_tests += 1
    # CEAT's WEAT 1-10 (weat_groups rows 1-10) against Caliskan et al.'s lists: a variant where the words differ
    rows = [[e.id for e in r.elts] for node in __import__("ast").parse(A.text(CE, "code/ceat.py")).body
            if isinstance(node, __import__("ast").Assign) and getattr(node.targets[0], "id", None) == "weat_groups"
            for r in node.value.elts]
    for n in range(1, 11):
        canon_test = yaml.safe_load((ROOT / "registry/caliskan2017/tests" / f"weat{n}.yaml").read_text())
        refs, changed, same_order = {}, [], []
        for role, var in zip("xyab", rows[n - 1]):
            canonical = canon_test[role].split("@")[0]
            lst, l0, l1 = ceat[var]
            if set(lst) == set(texts_of(BEFORE[canonical])):
                refs[role] = canon_test[role]
                if lst != texts_of(BEFORE[canonical]):
                    same_order.append(f"{var} ({role})")
                continue
            canon = BEFORE[canonical]
            ck = kinds_of(canon)
            kinds = {t: ck.get(t) or CEAT_WEAT_KINDS[t] for t in lst}
            sid = f"{canonical}_ceat_code"
            refs[role] = write_set(
                "guo2021", sid, concept=canon["concept"] + " (CEAT code)", license="unspecified", paper="guo2021",
                section="Authors' code (CEAT's WEAT replications)",
                authors_file_=authors_file(CE, "code/ceat.py", f"{var}, line {l0}" if l0 == l1 else f"{var}, lines {l0}-{l1}"),
                texts=lst, default_kind=canon.get("kind") or max(
                    [k if isinstance(k, str) else k["kind"] for k in kinds.values()],
                    key=[k if isinstance(k, str) else k["kind"] for k in kinds.values()].count),
                kinds=kinds, derive={"repo": CE, "path": "code/ceat.py", "fmt": "python", "var": var},
                source_kind=list(canon.get("source_kind") or []) or ["prior_work"], variant="authors-code",
                variant_of=canonical, extra_source={"authors_commit": A.REPOS[CE][0]},
                notes=(f"The list `{var}` that Guo & Caliskan's CEAT code runs for WEAT {n} (code/ceat.py, "
                       + (f"line {l0}" if l0 == l1 else f"lines {l0}-{l1}") + f"): compared with Caliskan et al.'s {canonical}@{canon['version']}, it "
                       f"{compare(lst, texts_of(canon))}."))
            changed.append(role)
            n_sets += 1
        if not changed:
            continue
        write_test("guo2021", f"weat{n}_ceat_code", title=canon_test["title"] + " (CEAT code)", bias_type=canon_test.get(
                       "bias_type", "non-social"), license="unspecified", variant="authors-code", variant_of=f"weat{n}",
                   source={"paper": "guo2021", "section": "Authors' code, weat_groups row " + str(n), "table": None,
                           "authors_file": f"{CE} code/ceat.py weat_groups", "authors_commit": A.REPOS[CE][0]},
                   x=refs["x"], y=refs["y"], a=refs["a"], b=refs["b"],
                   notes=(f"WEAT {n} as Guo & Caliskan's CEAT code ran it (code/ceat.py weat_groups, row {n}); "
                          f"the {', '.join(changed)} list(s) differ in their words from Caliskan et al.'s, see the "
                          f"variant sets. " + (f"The code also orders {', '.join(same_order)} differently (same "
                                               f"words), which WEAT does not see. " if same_order else "")
                          + "Word level only, as CEAT."),
                   change="Initial curation from CEAT code/ceat.py.")
        n_tests += 1
    for var, canonical in IBD_LISTS.items():
        lst = ibd[var][0]
        if set(lst) == set(texts_of(BEFORE[canonical])):
            continue        # the same words (IBD takes a set): no variant
        code_set("code/ibd.py", var, canonical, suffix="ibd_code")
        n_sets += 1
    return n_sets, n_tests


# ================================================================================================= 4. Garg 2018
GA = "nikhgarg/EmbeddingDynamicStereotypes"
GARG_PRONOUNS = {"she": "subject", "he": "subject", "her": "object", "him": "object", "hers": "possessive",
                 "his": "possessive"}


def garg2018() -> tuple[int, int]:
    n = 0
    lic_note = "The repository states no licence."
    for side in ("female", "male"):
        path = f"data/{side}_pairs.txt"
        lst = A.lines(GA, path)
        kinds = {t: {"kind": "pronoun", "case": GARG_PRONOUNS[t]} for t in lst if t in GARG_PRONOUNS}
        kinds.update({t: {"kind": "pronoun", "case": "object", "note": "reflexive"}
                      for t in lst if t.endswith("self")})
        for t in lst:
            if t not in kinds and t.endswith("s") and t not in ("his", "hers"):
                kinds[t] = {"kind": "group_term", "number": "plural"}
        kinds.update({"women": {"kind": "group_term", "number": "plural", "singular": "woman"},
                      "men": {"kind": "group_term", "number": "plural", "singular": "man"}}
                     if side in ("female", "male") else {})
        kinds = {k: v for k, v in kinds.items() if k in lst}
        write_set("garg2018", f"garg2018_{side}_pairs", concept=f"{side.title()} words (gender pairs)",
                  license="unspecified", license_note=lic_note, paper="garg2018",
                  section="Materials and Methods; SI Appendix (word lists)", authors_file_=authors_file(GA, path), derive={"repo": GA, "path": path, "fmt": "lines"},
                  texts=lst, default_kind="group_term", kinds=kinds, source_kind=["authors_curated"],
                  extra_source={"authors_commit": A.REPOS[GA][0]},
                  notes=(f"The {side} words of Garg et al.'s gender pairs, one per line in {path}; item n pairs "
                         f"with item n of garg2018_{'male' if side == 'female' else 'female'}_pairs. Used for "
                         f"the relative norm distance, not a WEAT test."))
        n += 1
    for grp in ("asian", "black", "chinese", "hispanic", "russian", "white"):
        path = f"data/names_{grp}.txt"
        write_set("garg2018", f"garg2018_names_{grp}", concept=f"{grp.title()} last names", license="unspecified",
                  license_note=lic_note, paper="garg2018", section="Materials and Methods (ethnic stereotypes); "
                  "SI Appendix", authors_file_=authors_file(GA, path), derive={"repo": GA, "path": path, "fmt": "lines"}, texts=A.lines(GA, path), default_kind="name",
                  source_kind=["population_derived"], extra_source={"authors_commit": A.REPOS[GA][0]},
                  notes=(f"Last names, lower-cased as in the authors' file {path}. The paper takes the most "
                         f"common last names of each group from the U.S. census."))
        n += 1
    adjectives = {"appearance": "Appearance adjectives", "intelligencegeneral": "Intelligence adjectives",
                  "otherization": "Otherization adjectives", "princeton": "Princeton trilogy adjectives",
                  "sensitive": "Sensitive adjectives", "williamsbest": "Williams & Best adjectives"}
    for stem, concept in adjectives.items():
        path = f"data/adjectives_{stem}.txt"
        raw = A.lines(GA, path)
        lst, dup = dedupe(raw)
        note = f"The authors' adjective list {path}, in their order (kind adjective, as the file is named)."
        if dup:
            note += (f" DIFFERENCE: the file lists {oxford(sorted(set(dup)))} twice; each is kept once, at its "
                     f"first position ({len(raw)} lines, {len(lst)} items).")
        sk = ["social_science"] if stem in ("princeton", "williamsbest") else ["authors_curated"]
        write_set("garg2018", f"garg2018_adjectives_{stem}", concept=concept, license="unspecified",
                  license_note=lic_note, paper="garg2018", section="Materials and Methods; SI Appendix",
                  authors_file_=authors_file(GA, path), derive={"repo": GA, "path": path, "fmt": "lines"}, texts=lst, default_kind="adjective", source_kind=sk,
                  extra_source={"authors_commit": A.REPOS[GA][0]}, notes=note, digest_of=raw)
        n += 1
    others = {"personalitytraits_original": ("Personality traits", ["social_science"]),
              "occupations1950": ("Occupations (1950 census basis)", ["population_derived"]),
              "occupations1950_professional": ("Professional occupations (1950 census basis)", ["population_derived"]),
              "occupationsMturk": ("Occupations rated on MTurk", ["crowdsourced"]),
              "words_christianity": ("Christianity words", ["authors_curated"]),
              "words_islam": ("Islam words", ["authors_curated"]),
              "words_terrorism": ("Terrorism words", ["authors_curated"])}
    for stem, (concept, sk) in others.items():
        path = f"data/{stem}.txt"
        raw = A.lines(GA, path)
        lst, dup = dedupe(raw)
        note = (f"The authors' list {path}, in their order. The file gives no part of speech, so the items are "
                f"kind 'word' (no sentence template applies).")
        if dup:
            note += (f" DIFFERENCE: the file lists {oxford(sorted(set(dup)))} twice; each is kept once, at its "
                     f"first position ({len(raw)} lines, {len(lst)} items).")
        write_set("garg2018", f"garg2018_{stem.lower()}", concept=concept, license="unspecified",
                  license_note=lic_note, paper="garg2018", section="Materials and Methods; SI Appendix",
                  authors_file_=authors_file(GA, path), derive={"repo": GA, "path": path, "fmt": "lines"}, texts=lst, default_kind="word", source_kind=sk,
                  extra_source={"authors_commit": A.REPOS[GA][0]}, notes=note, digest_of=raw)
        n += 1
    # validation data kept as data, verbatim, with provenance
    data = ROOT / "registry/garg2018/data"
    data.mkdir(parents=True, exist_ok=True)
    prov = {"source": "garg2018", "license": "unspecified",
            "license_note": "nikhgarg/EmbeddingDynamicStereotypes states no licence.",
            "authors_repository": f"https://github.com/{GA}", "authors_commit": A.REPOS[GA][0], "files": []}
    descr = {
        "occupation_percentages_gender_occ1950.csv": "Share of women and men in each occupation (1950 census "
        "occupation basis) per census year, from IPUMS; the validation data of the gender occupation analysis. "
        "Columns as the authors wrote them: Census year, Occupation, Total Weight, Female, Male.",
        "occupation_percentages_race_occ1950.csv": "Share of each race/ethnicity in each occupation per census "
        "year (multirace, aian, white, hispanic, asian, black), from IPUMS.",
        "occupation_map.csv": "The authors' map from census occupation titles (1950 basis) to single words.",
        "adjectives_williamsbest.csv": "Williams & Best adjectives with the year and score of each rating.",
        "princeton_stereotypes.csv": "Princeton trilogy stereotype adjectives by group and year with scores.",
        "mturk_stereotypes.csv": "Occupation stereotype scores collected by the authors on MTurk.",
    }
    for name, what in descr.items():
        path = f"data/{name}"
        raw = A.read_bytes(GA, path)
        (data / name).write_bytes(raw)
        prov["files"].append({"file": name, "authors_file": f"{GA} {path}", "sha256": record_file(GA, path),
                              "description": what})
    dump(data / "provenance.yaml", prov, header="Validation data of Garg et al. (2018), copied byte for byte from "
                                                 "the authors' repository (see authors_file and sha256).")
    return n, 0


# =========================================================================================== 5. Bolukbasi 2016
BO = "tolga-b/debiaswe"


def bolukbasi2016() -> tuple[int, int]:
    n = 0
    sk = ["authors_curated"]
    extra = {"authors_commit": A.REPOS[BO][0]}
    word_note = "The file gives no part of speech, so the items are kind 'word' (no sentence template applies)."
    for stem, labels in (("definitional_pairs", ("first", "second")), ("equalize_pairs", ("first", "second"))):
        path = f"data/{stem}.json"
        pairs = A.json_file(BO, path)
        for i, lab in enumerate(labels):
            lst = [p[i] for p in pairs]
            write_set("bolukbasi2016", f"bolukbasi2016_{stem}_{lab}",
                      concept=f"{stem.replace('_', ' ').capitalize()}, {lab} word of each pair", license="MIT",
                      paper="bolukbasi2016", section="Section 5 (gender subspace) and Appendix",
                      authors_file_=authors_file(BO, path, f"element {i} of each pair"), texts=lst,
                      derive={"repo": BO, "path": path, "fmt": "json", "select": [], "column": i},
                      default_kind="word", source_kind=sk, extra_source=extra,
                      notes=(f"Element {i} of each pair in {path}, in the file's order; item n pairs with item n "
                             f"of bolukbasi2016_{stem}_{labels[1 - i]}. {word_note}"))
            n += 1
    for stem, concept in (("gender_specific_seed", "Gender-specific words (seed)"),
                          ("gender_specific_full", "Gender-specific words (full)"),):
        path = f"data/{stem}.json"
        lst = A.json_file(BO, path)
        lst2, dup = dedupe(lst)
        note = f"The authors' list {path}, in its order. {word_note}"
        if dup:
            note += f" DIFFERENCE: {oxford(sorted(set(dup)))} appear twice in the file; kept once."
        write_set("bolukbasi2016", f"bolukbasi2016_{stem}", concept=concept, license="MIT", paper="bolukbasi2016",
                  section="Section 5 and Appendix", authors_file_=authors_file(BO, path), texts=lst2,
                  derive={"repo": BO, "path": path, "fmt": "json", "select": []},
                  default_kind="word", source_kind=["authors_curated"] if stem.endswith("seed")
                  else ["authors_curated", "corpus_derived"], extra_source=extra, notes=note, digest_of=lst)
        n += 1
    path = "data/professions.json"
    rows = A.json_file(BO, path)
    lst = [r[0] for r in rows]
    write_set("bolukbasi2016", "bolukbasi2016_professions", concept="Professions", license="MIT",
              paper="bolukbasi2016", section="Section 3 and Appendix (professions)",
              authors_file_=authors_file(BO, path, "first element of each row"), texts=lst, default_kind="word",
              derive={"repo": BO, "path": path, "fmt": "json", "select": [], "column": 0},
              source_kind=["authors_curated", "crowdsourced"], extra_source=extra,
              notes=("The professions of data/professions.json in its order (multi-word entries joined by '_' as "
                     "the file writes them). Their two scores (definitional and stereotypical, female -1.0 to "
                     "male 1.0, as debiaswe/data.py load_professions() describes them) are kept as data in "
                     f"registry/bolukbasi2016/data/professions.csv. {word_note}"))
    n += 1
    data = ROOT / "registry/bolukbasi2016/data"
    data.mkdir(parents=True, exist_ok=True)
    with open(data / "professions.csv", "w", encoding="utf-8", newline="") as f:
        f.write("word,definitional,stereotypical\n")
        for w, d, s in rows:
            f.write(f"{w},{d!r},{s!r}\n")
    dump(data / "provenance.yaml",
         {"source": "bolukbasi2016", "license": "MIT", "authors_repository": f"https://github.com/{BO}",
          "authors_commit": A.REPOS[BO][0],
          "files": [{"file": "professions.csv", "authors_file": f"{BO} {path}", "sha256_of_authors_file":
                     DIGESTS["files"][f"{BO}:{path}"],
                     "description": "Each row of professions.json as CSV: word, definitional score, stereotypical "
                                    "score (female -1.0 to male 1.0, per debiaswe/data.py load_professions()). "
                                    "Numbers written as Python prints the parsed JSON floats."}]},
         header="Validation data of Bolukbasi et al. (2016) from the authors' repository (MIT; copyright 2016 Tolga).")
    return n, 0


# ============================================================================================= 6. Manzini 2019
MZ = "TManzini/DebiasMulticlassWordEmbedding"
MZ_LABELS = {"gender": ["male", "female"], "race": ["black", "caucasian", "asian"],
             "religion": ["jewish", "christian", "muslim"]}


def manzini2019() -> tuple[int, int]:
    n = 0
    extra = {"authors_commit": A.REPOS[MZ][0]}
    word_note = "The file gives no part of speech, so the items are kind 'word' (no sentence template applies)."
    lic_note = "The repository states no licence."
    for attr, labels in MZ_LABELS.items():
        path = f"Debiasing/data/vocab/{attr}_attributes_optm.json"
        doc = A.json_file(MZ, path)
        defs = doc["definite_sets"]
        for i, lab in enumerate(labels):
            lst = [row[i] for row in defs]
            lst2, dup = dedupe(lst)
            note = (f"Column {i} of definite_sets in {path} (one word per row, the rows are aligned across "
                    f"the {len(labels)} classes: {', '.join('manzini2019_' + attr + '_definite_' + lab for lab in labels)}). "
                    f"{word_note}")
            if doc["eval_targets"] == defs:
                note += " The file's eval_targets are the same rows."
            if dup:
                note += (f" DIFFERENCE: {oxford(sorted(set(dup)))} recurs in this column (rows pair it with "
                         f"different words); kept once, at its first row.")
            write_set("manzini2019", f"manzini2019_{attr}_definite_{lab}",
                      concept=f"{attr.title()} definitional words, class {lab}", license="unspecified",
                      license_note=lic_note, paper="manzini2019", section="Section 3 and Appendix (vocabularies)",
                      authors_file_=authors_file(MZ, path, f"definite_sets column {i}"), texts=lst2,
                      derive={"repo": MZ, "path": path, "fmt": "json", "select": ["definite_sets"], "column": i},
                      default_kind="word", source_kind=["authors_curated"], extra_source=extra, notes=note,
                      digest_of=lst)
            n += 1
            if doc["eval_targets"] != defs:
                ev = [row[i] for row in doc["eval_targets"]]
                write_set("manzini2019", f"manzini2019_{attr}_eval_{lab}",
                          concept=f"{attr.title()} evaluation targets, class {lab}", license="unspecified",
                          license_note=lic_note, paper="manzini2019", section="Section 4 (evaluation)",
                          authors_file_=authors_file(MZ, path, f"eval_targets column {i}"), texts=ev,
                          derive={"repo": MZ, "path": path, "fmt": "json", "select": ["eval_targets"], "column": i},
                          default_kind="word", source_kind=["authors_curated"], extra_source=extra,
                          notes=f"Column {i} of eval_targets in {path}. {word_note}")
                n += 1
        for kind_, by_class in doc["analogy_templates"].items():
            for cls, words in by_class.items():
                write_set("manzini2019", f"manzini2019_{attr}_{kind_}_{cls}",
                          concept=f"{attr.title()} analogy {kind_}s, class {cls}", license="unspecified",
                          license_note=lic_note, paper="manzini2019", section="Section 3 (analogies)",
                          authors_file_=authors_file(MZ, path, f"analogy_templates.{kind_}.{cls}"), texts=words,
                          derive={"repo": MZ, "path": path, "fmt": "json", "select": ["analogy_templates", kind_, cls]},
                          default_kind="word", source_kind=["authors_curated"], extra_source=extra,
                          notes=f"analogy_templates.{kind_}.{cls} of {path}, in its order. {word_note}")
                n += 1
        lst = doc["testTerms"]
        lst2, dup = dedupe(lst)
        note = f"testTerms of {path}, in its order. {word_note}"
        if dup:
            note += f" DIFFERENCE: the file lists {oxford(sorted(set(dup)))} twice; kept once, at its first position."
        write_set("manzini2019", f"manzini2019_{attr}_test_terms", concept=f"{attr.title()} test terms",
                  license="unspecified", license_note=lic_note, paper="manzini2019", section="Section 4",
                  authors_file_=authors_file(MZ, path, "testTerms"), texts=lst2, default_kind="word",
                  derive={"repo": MZ, "path": path, "fmt": "json", "select": ["testTerms"]},
                  source_kind=["authors_curated"], extra_source=extra, notes=note, digest_of=lst)
        n += 1
    return n, 0


# ============================================================================================ 7. Zhao 2018 GN
GN = "uclanlp/gn_glove"


def zhao2018gn() -> tuple[int, int]:
    n = 0
    for side in ("male", "female"):
        path = f"wordlist/{side}_word_file.txt"
        raw = A.lines(GN, path)
        lst, dup = dedupe(raw)
        diff = ""
        if dup:
            diff = (f" DIFFERENCE: the file has {len(raw)} lines with {len(raw) - len(lst)} repeats "
                    f"({oxford(sorted(set(dup)))}); each word is kept once, at its first line, so the position "
                    f"pairing with the other list holds only for the file, not for this set.")
        write_set("zhao2018gn", f"zhao2018gn_{side}_words", concept=f"{side.title()}-definition words",
                  license="Apache-2.0", paper="zhao2018gn", section="Section 3 (gender-definition seed words)",
                  authors_file_=authors_file(GN, path), texts=lst, default_kind="word", digest_of=raw,
                  derive={"repo": GN, "path": path, "fmt": "lines"},
                  source_kind=["lexical_resource", "authors_curated"],
                  extra_source={"authors_commit": A.REPOS[GN][0]},
                  notes=(f"The {side} word list of GN-GloVe ({path}), one word per line, in its order; item n pairs "
                         f"with item n of the {'female' if side == 'male' else 'male'} list. The file gives no "
                         f"part of speech, so the items are kind 'word'.{diff}"))
        n += 1
    return n, 0


# ============================================================================================= 8. Bad Seeds
BS = "maria-antoniak/bad-seeds"
BS_KIND = {"borrowed-from-social-sciences": "social_science", "corpus-derived": "corpus_derived",
           "prior-work": "prior_work", "curated": "authors_curated", "crowd-sourced": "crowdsourced",
           "lexical-resources": "lexical_resource", "population-derived": "population_derived"}
BS_UNMAPPED = {"unknown", "other", "None", ""}


def norm(t: str) -> str:
    return t.replace("_", " ").strip().lower()


def badseeds() -> tuple[int, int]:
    import ast as _ast
    path = "gathered_seeds.json"
    rows = A.json_file(BS, path)
    authors_file(BS, path)
    pool = {**BEFORE, **WRITTEN}
    pool = {k: v for k, v in pool.items() if k.split("_")[0] != "badseeds" and not v.get("variant")}  # canonical only
    by_exact = {}
    for sid, doc in pool.items():
        by_exact.setdefault(tuple(texts_of(doc)), sid)
    n = 0
    mapping_used = {}
    for idx, r in enumerate(rows):
        seeds = _ast.literal_eval(r["Seeds"]) if isinstance(r["Seeds"], str) else r["Seeds"]
        if not seeds:
            continue
        sid = "badseeds_" + re.sub(r"[^a-z0-9]+", "_", r["Seeds ID"].lower()).strip("_")
        cats_raw = r.get("Source Categories")
        cats = [c.strip() for c in str(cats_raw).split(",")] if cats_raw not in (None, "") else []
        sk = []
        for c in cats:
            if c in BS_KIND:
                sk.append(BS_KIND[c])
                mapping_used[c] = BS_KIND[c]
            else:
                assert c in BS_UNMAPPED, c
                mapping_used[c] = None
        seeds2 = [s.strip() for s in seeds]
        clean, dup = dedupe(seeds2)
        link, how = None, None
        if tuple(clean) in by_exact:
            link, how = by_exact[tuple(clean)], "identical"
        else:
            best, score = None, 0.0
            nc = [norm(t) for t in clean]
            for osid, odoc in pool.items():
                ot = [norm(t) for t in texts_of(odoc)]
                inter = len(set(nc) & set(ot))
                j = inter / len(set(nc) | set(ot)) if ot else 0
                if j > score:
                    best, score = osid, j
            if best and score >= 0.6:
                link, how = best, compare(clean, texts_of(pool[best]))
        note = (f"Bad Seeds (Antoniak & Mimno 2021) transcription of the seed set '{r['Category']}' "
                f"(Seeds ID {r['Seeds ID']}), used in: {r.get('Used in Paper')}. Source / justification as "
                f"Bad Seeds records it: {r.get('Source / Justification')!s}. Source categories: "
                f"{cats_raw!s}. Link: {r.get('Link')!s}. Items in the transcription's order; the transcription "
                f"gives no part of speech, so they are kind 'word'.")
        if link and how == "identical":
            note += f" The same list as {link}@{pool[link]['version']} (same items, same order)."
        elif link:
            note += f" A variant of {link}@{pool[link]['version']}: DIFFERENCE: the transcription {how}."
        else:
            note += " No set of the registry holds this list."
        if dup:
            note += (f" DIFFERENCE: the transcription lists {oxford(sorted(set(dup)))} more than once; kept once, "
                     f"at the first position.")
        if seeds2 != seeds:
            note += " DIFFERENCE: surrounding spaces of items removed."
        write_set("antoniak2021", sid, concept=r["Category"], license="unspecified", paper="antoniak2021",
                  license_note=("maria-antoniak/bad-seeds states no licence; the list is from the paper named in "
                                "the notes, whose own terms apply."),
                  section=f"gathered_seeds.json entry {idx}", authors_file_=f"{BS} {path} [{idx}] Seeds",
                  texts=clean, default_kind="word", source_kind=sk, variant="bad-seeds-transcription",
                  variant_of=link, notes=note, digest_of=seeds,
                  derive={"repo": BS, "path": path, "fmt": "json", "select": [idx, "Seeds"], "literal": True},
                  extra_source={"authors_commit": A.REPOS[BS][0], "seeds_id": r["Seeds ID"],
                                "category": cats_raw, "used_in_paper": r.get("Used in Paper"),
                                "justification": r.get("Source / Justification"), "link": r.get("Link")},
                  change="Initial curation from bad-seeds gathered_seeds.json.")
        n += 1
    print("Bad Seeds category mapping:", mapping_used, file=sys.stderr)
    return n, 0


# ================================================================================================= 9. Bai 2024
BA = "baixuechunzi/llm-implicit-bias"
BAI_PROMPTS = {"replication": "prompt/implicit/gpt4/racism/replication.py",
               "instruction1": "prompt/implicit/gpt4/racism/instruction1.py",
               "instruction2": "prompt/implicit/gpt4/racism/instruction2.py",
               "synonym": "prompt/implicit/gpt4/racism/synonym.py"}


def relation(words: list[str], exclude_prefix: str) -> str:
    """A sentence naming the registry set whose words these are (case-insensitive Jaccard >= 0.6), if any."""
    pool = {k: v for k, v in {**BEFORE, **WRITTEN}.items()
            if not v.get("variant") and not k.startswith(exclude_prefix) and v.get("kind") != "sentence"}
    low = [w.lower() for w in words]
    best, score = None, 0.0
    for osid, odoc in sorted(pool.items()):
        ot = {t.lower() for t in texts_of(odoc)}
        j = len(ot & set(low)) / len(ot | set(low))
        if j > score:
            best, score = osid, j
    if not best or score < 0.6:
        return ""
    ot = [t.lower() for t in texts_of(pool[best])]
    extra_w = [w for w in words if w.lower() not in ot]
    miss_w = [t for t in texts_of(pool[best]) if t.lower() not in low]
    return (f" Compared case-insensitively with {best}@{pool[best]['version']}, the words "
            + ("are the same" if not extra_w and not miss_w else
               " and ".join(x for x in (f"add {oxford(extra_w)}" if extra_w else "",
                                        f"lack {oxford(miss_w)}" if miss_w else "") if x)) + ".")


def bai2024() -> tuple[int, int]:
    path = "stimuli/iat_stimuli.csv"
    rows = A.csv_rows(BA, path)
    authors_file(BA, path)
    order, by = [], {}
    for r in rows:
        if r["dataset"] not in by:
            order.append(r["dataset"])
            by[r["dataset"]] = []
        by[r["dataset"]].append(r)
    n_sets = n_tests = 0
    shared: dict[tuple, str] = {}
    extra = {"authors_commit": A.REPOS[BA][0]}
    for ds in order:
        rs = by[ds]
        cat = rs[0]["category"]
        key = re.sub(r"[^a-z0-9]+", "_", ds.lower()).strip("_")
        cols = {c: [r[c] for r in rs if r[c] != ""] for c in "ABC"}
        half = len(cols["C"]) // 2
        parts = {"x": ("A", cols["A"], "default group"), "y": ("B", cols["B"], "stigmatised group"),
                 "a": ("C", cols["C"][:half], "attributes, first half"),
                 "b": ("C", cols["C"][half:], "attributes, second half")}
        refs = {}
        for role, (col, lst, what) in parts.items():
            lo, hi = (0, half) if role == "a" else (half, None) if role == "b" else (None, None)
            derive = {"repo": BA, "path": path, "fmt": "csv", "filter": {"dataset": ds}, "column": col, "slice": [lo, hi]}
            where = f"dataset={ds} column {col}" + (
                f" rows {'1-' + str(half) if role == 'a' else str(half + 1) + '-' + str(len(cols['C']))}"
                if col == "C" else "")
            if tuple(lst) in shared:                  # the same list in an earlier dataset: one set
                refs[role] = shared[tuple(lst)]
                doc = WRITTEN[refs[role].split("@")[0]]
                doc["source"]["authors_file"] += f"; {where}"
                doc["notes"] += f" The same list is {what} of dataset '{ds}'."
                rewrite(doc, "bai2024")
                also_derived(refs[role], derive)
                continue
            sid = f"bai2024_{key}_{ {'x': 'group_a', 'y': 'group_b', 'a': 'attr_a', 'b': 'attr_b'}[role] }"
            refs[role] = shared[tuple(lst)] = write_set(
                "bai2024", sid, concept=f"{ds}: {what}", license="MIT", paper="bai2024",
                section="Stimuli (LLM IAT)", authors_file_=authors_file(BA, path, where), derive=derive,
                texts=lst, default_kind="word", source_kind=["social_science"], extra_source=extra,
                notes=(f"Column {col} of {path} for dataset '{ds}' (category {cat}), in the file's order"
                       + (f"; the {'first' if role == 'a' else 'second'} half of the {len(cols['C'])} attribute "
                          f"words. The authors split column C in halves (first half with the default group A, "
                          f"second half with the stigmatised group B) in additional/gpt4 iat vs openai embed/"
                          f"clean_gpt4_temp0_responses.ipynb" if col == "C" else "")
                       + ". Their prompts lower-case every term (.str.lower()); the registry keeps the file's case. "
                         "Kind 'word': the file gives no part of speech." + relation(lst, "bai2024_")))
            n_sets += 1
        write_test("bai2024", f"bai2024_{key}", title=f"LLM IAT '{ds}' ({cat}): group A vs B, attributes",
                   bias_type={"race": "race", "gender": "gender", "religion": "religion", "health": "health",
                              "age": "age"}.get(cat, cat), license="MIT",
                   source={"paper": "bai2024", "section": "Stimuli (21 IAT datasets)", "table": None,
                           "authors_file": f"{BA} {path} dataset={ds}", "authors_commit": A.REPOS[BA][0]},
                   x=refs["x"], y=refs["y"], a=refs["a"], b=refs["b"], equal_targets=False,
                   aliases=[{"paper": "bai2024", "name": ds}],
                   notes=(f"Bai et al.'s LLM word-association IAT '{ds}' as an embedding association test: X the "
                          f"default group terms (column A), Y the stigmatised group terms (column B), A/B the two "
                          f"halves of the attribute words (column C). The authors measured it by prompting "
                          f"generative models (templates/bai2024_llm_iat.yaml), which EATlas does not run; the "
                          f"word level here is for embedding tests. Group lists may differ in size (the paper "
                          f"samples one term from each per prompt), hence equal_targets: false."
                          + (" Here X and Y hold a single term each, too few for a WEAT (EATlas needs at least two "
                             "encodable stimuli per set and reports the test as not run); the lists are kept as the "
                             "authors give them." if min(len(cols["A"]), len(cols["B"])) < 2 else "")),
                   change="Initial curation from llm-implicit-bias stimuli/iat_stimuli.csv.")
        n_tests += 1
    # the prompt family: the f-strings of the GPT-4 racism prompts, as Jinja
    fams = {}
    for var, p in BAI_PROMPTS.items():
        src = A.text(BA, p)
        record_file(BA, p)
        m = re.search(r"prompt = \(\s*f'(.*?)'\)", src, re.S)
        s = m.group(1)
        s = s.replace("{pair_group[0]}", "{{ group0 }}").replace("{pair_group[1]}", "{{ group1 }}")
        s = s.replace("{attributes}", "{{ attributes }}")
        assert "{" not in s.replace("{{ group0 }}", "").replace("{{ group1 }}", "").replace("{{ attributes }}", "")
        fams[var] = [s]
    doc = {"id": "bai2024_llm_iat", "version": "1.0.0", "language": "en", "license": "MIT",
           "source": {"paper": "bai2024", "section": "LLM Implicit Bias (word association prompts)",
                      "authors_file": "; ".join(f"{BA} {p}" for p in BAI_PROMPTS.values()),
                      "authors_commit": A.REPOS[BA][0]},
           "description": ("Bai et al.'s LLM IAT prompt in its four wordings (replication, two instruction "
                           "rewordings, synonym), copied from the GPT-4 prompt scripts with their f-string fields "
                           "as Jinja variables: group0 and group1 are one term sampled from the test's X and Y in "
                           "random order, attributes the test's attribute words (A then B) shuffled and printed as "
                           "a Python list, all lower-cased. The same wordings are used for every dataset (their "
                           "Alpaca and LLaMA scripts wrap the text in an instruction format). For generative "
                           "models; EATlas does not run prompts. The families print no {{ term }}, so they cannot "
                           "expand a test's stimuli."),
           "variables": FlowList(["group0", "group1", "attributes"]),
           "families": fams,
           "changelog": [Flow(version="1.0.0", date=DATE, change="Initial curation from llm-implicit-bias "
                                                                  "prompt/implicit/gpt4/racism/*.py.")]}
    dump(ROOT / "templates/bai2024_llm_iat.yaml", doc)
    return n_sets, n_tests


def main() -> None:
    counts = {}
    for name, fn in (("may2019 hidden", may2019_hidden), ("meade2022", meade2022), ("guo2021 code", guo2021_code),
                     ("garg2018", garg2018), ("bolukbasi2016", bolukbasi2016), ("manzini2019", manzini2019),
                     ("zhao2018gn", zhao2018gn), ("bai2024", bai2024), ("antoniak2021", badseeds)):
        counts[name] = fn()
    out = ROOT / "tests/data/authors/wave2en_digests.json"
    out.write_text(json.dumps({"repos": {k: {"commit": c, "license": lic} for k, (c, lic) in A.REPOS.items()},
                               **DIGESTS}, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    for k, (s, t) in counts.items():
        print(f"{k}: {s} sets, {t} tests")


if __name__ == "__main__":
    main()
