"""The curated Caliskan et al. (2017) and May et al. (2019) tests against the authors' own files.

For every test id below, our sets (read here with PyYAML only, ``set@version`` resolved to
``registry/*/sets/<set>.yaml``) must give the authors' sent-bias lists: the same examples of each
category in the same order, or a difference recorded in ``RECORDED``. Sentence-level tests (the
Heilman double binds) are rendered from our templates by a minimal renderer of the registry's
template language and must equal the authors' strings exactly, two-space separators included.
The word-level tests are also checked against the ML-EAT appendix (Wolfe et al. 2024), and every
stated kind against May et al.'s generator (W4ngatang/sent-bias scripts/generate_basic_contexts.py,
restated below), so that the bleached sentence level reproduces their sent-* tests. Finally the same
comparisons run through ``eatlas.get_test``.

The authors' sent-bias files are committed under tests/data/authors/W4ngatang+sent-bias (CC BY-NC 4.0; see the
README there), so these checks run on any clone; SENT_BIAS_TESTS points at another copy. Only the
comparison with the ML-EAT appendix needs the paper's text (not redistributable): it reads a plain-text
extraction from EATLAS_SEEDS (default ../shared/seeds) and skips, saying so, without one.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EATLAS_SHARED", ROOT.parent / "shared"))
SENT_BIAS = Path(os.environ.get("SENT_BIAS_TESTS",
                               ROOT / "tests" / "data" / "authors" / "W4ngatang+sent-bias" / "tests"))
SEEDS = Path(os.environ.get("EATLAS_SEEDS", SHARED / "seeds"))
MLEAT_SEED = SEEDS / "004_1bef118f359bb038.txt"

ROLES = {"x": "targ1", "y": "targ2", "a": "attr1", "b": "attr2"}

CALISKAN = [f"weat{n}" for n in range(1, 11)]
B_VARIANTS = ["weat3b", "weat5b", "weat6b", "weat7b", "weat8b"]
ABW = ["angry_black_woman_stereotype", "angry_black_woman_stereotype_b"]
HEILMAN = [f"heilman_double_bind_{c}_{v}" for c in ("competent", "likable")
           for v in ("one_word", "one_sentence", "1", "1+3-", "1-")]
ALL_TESTS = CALISKAN + B_VARIANTS + ABW + HEILMAN

# Differences from the authors' files, by (test id, role). None so far: every list equals sent-bias.
RECORDED: dict[tuple[str, str], str] = {}

# Differences from the ML-EAT appendix (wolfe2024), by set id; recorded in the set's notes.
MLEAT_RECORDED = {
    "unpleasant_weat3": "same 25 words; the ML-EAT appendix puts 'bomb, evil' last, sent-bias has 'bomb' after "
                        "'tragedy' and 'evil' after 'cancer' (we follow sent-bias)",
}


# ---------------------------------------------------------------- reading our YAML (PyYAML only)

def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _index(kind: str) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for p in sorted((ROOT / "registry").glob(f"*/{kind}/*.yaml")):
        out.setdefault(p.stem, p)
    return out


SET_FILES = _index("sets")
TEST_FILES = _index("tests")


def load_test_doc(tid: str) -> dict:
    assert tid in TEST_FILES, f"no registry/*/tests/{tid}.yaml"
    doc = _load(TEST_FILES[tid])
    assert doc["id"] == tid
    return doc


def resolve_set(ref: str) -> dict:
    sid, version = ref.split("@")
    assert sid in SET_FILES, f"{ref}: no registry/*/sets/{sid}.yaml"
    doc = _load(SET_FILES[sid])
    assert doc["id"] == sid and doc["version"] == version, f"{ref}: file holds {doc['id']}@{doc['version']}"
    return doc


def resolve_template(ref: str) -> dict:
    tid, version = ref.split("@")
    doc = _load(ROOT / "templates" / f"{tid}.yaml")
    assert doc["id"] == tid and doc["version"] == version
    return doc


def authors(tid: str) -> dict:
    path = SENT_BIAS / f"{tid}.jsonl"
    assert path.is_file(), f"authors' file {path} is missing (tests/data/authors/README.md says where it comes from)"
    return json.loads(path.read_text(encoding="utf-8"))   # one JSON object per file, not JSON lines


# ---------------------------------------------------------------- a minimal renderer of our templates

_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|\s*(lower|upper|capitalize)\s*)?\}\}")


def render(src: str, ctx: dict) -> str:
    def sub(m):
        value = ctx[m.group(1)]            # KeyError = undefined variable
        f = m.group(2)
        return {"lower": str.lower, "upper": str.upper,
                "capitalize": lambda s: s[:1].upper() + s[1:].lower()}.get(f, lambda s: s)(value)
    assert "{%" not in src and "{#" not in src
    return _VAR.sub(sub, src)


def upper_first(s: str) -> str:
    return s[:1].upper() + s[1:]


def render_family(template: dict, family: str, term: str, variables: dict) -> list[str]:
    """Parts are rendered only when the family refers to them (directly or through another part)."""
    ctx = dict(variables, term=term)
    parts = template.get("parts") or {}
    needed: set[str] = set()

    def need(src):
        for m in _VAR.finditer(src):
            if m.group(1) in parts and m.group(1) not in needed:
                needed.add(m.group(1))
                need(parts[m.group(1)])
    for s in template["families"][family]:
        need(s)
    for name, src in parts.items():
        if name in needed:
            ctx[name] = render(src, ctx)
    return [upper_first(render(s, ctx)) for s in template["families"][family]]


# ---------------------------------------------------------------- May et al.'s generator, restated

MAY_ADJECTIVES = set("""loyal honest gentle lucky happy ugly rotten soft quiet compromising rational calm kind
agreeable servile pleasant cautious friendly supportive nice mild demure passive indifferent submissive shrill loud
argumentative irrational angry abusive obnoxious controlling nagging brash hostile emasculating mean harsh sassy
aggressive opinionated domineering wonderful terrible horrible nasty awful professional evil hopeless sad gloomy
tearful miserable depressed sick impermanent unstable variable fleeting short-term brief occasional stable constant
persistent chronic prolonged competent productive effective ambitious active decisive strong tough bold assertive
incompetent unproductive ineffective unambitious indecisive weak timid unassertive fair trustworthy selfless
accommodating likable liked abrasive conniving manipulative dishonest selfish pushy unlikable unliked""".split())
MAY_MASS = set("""freedom health love peace cheer heaven loyalty pleasure laughter filth grief hatred poverty agony
dynamite teargas joy physics calculus science chemistry astronomy NASA poetry art literature math algebra geometry
always forever vomit""".split())
MAY_PLURAL_LISTED = {"parents", "children", "cousins", "relatives", "numbers", "equations"}
MAY_VERBS = {"pollute", "kill", "stink"}
MAY_PERSON = re.compile(r"\b(?:woman|man|female|male|girl|boy|sister|brother|daughter|son|mother|father|aunt|uncle"
                        r"|grandmother|grandfather|American)\b")
MAY_PRONOUNS = {"he": "subject", "she": "subject", "him": "object", "her": "object", "his": "possessive",
                "hers": "possessive"}


def may_article(t: str) -> str:
    w = t.lower()
    if w.startswith(("european", "ukrainian")):
        return "a"
    return "an" if w[:1] in "aeiou" or w.startswith("honor") else "a"


def may_plural(t: str) -> str:
    if re.search(r"\bwoman\b", t):
        return re.sub(r"\bwoman\b", "women", t)
    if re.search(r"\bman\b", t):
        return re.sub(r"\bman\b", "men", t)
    if t.endswith("y") and t[-2] not in "aeiou":
        return t[:-1] + "ies"
    if t.endswith(("ch", "sh", "s")):
        return t + "es"
    return t + "s"


def may_singular(t: str) -> str:
    return "child" if t == "children" else (t[:-1] if t.endswith("s") else t)


def may_families(t: str) -> list[tuple[str, str]]:
    """[(family in may2019_bleached, surface form)] as May et al.'s generator chose them for word t."""
    if t[:1].isupper() and not t.endswith("American") and not t.isupper():
        return [("name", t)]
    if t in MAY_ADJECTIVES:
        return [("adjective", t)]
    if t in MAY_VERBS:
        return [("verb", t)]
    if t in MAY_MASS:
        return [("mass_noun", t)]
    if t in MAY_PRONOUNS:
        return [(f"pronoun_{MAY_PRONOUNS[t]}", t)]
    who = "person" if MAY_PERSON.search(t) else "thing"
    sing, plur = (may_singular(t), t) if t in MAY_PLURAL_LISTED else (t, may_plural(t))
    return [(f"noun_singular_{who}", sing), (f"noun_plural_{who}", plur)]


def our_families(item: dict) -> list[tuple[str, str]]:
    """The same choice made from the item's stated kind (docs/registry-format.md)."""
    k = item["kind"]
    if k in ("name", "adjective", "mass_noun", "verb"):
        return [(k, item["text"])]
    if k == "pronoun":
        return [(f"pronoun_{item['case']}", item["text"])]
    assert k in ("noun", "group_term"), item
    who = "person" if k == "group_term" else "thing"
    if item.get("number") == "plural":
        sing, plur = item.get("singular") or may_singular(item["text"]), item["text"]
    else:
        sing, plur = item["text"], item.get("plural") or may_plural(item["text"])
    return [(f"noun_singular_{who}", sing), (f"noun_plural_{who}", plur)]


def may_sentences(words: list[str], bleached: dict) -> list[str]:
    return [upper_first(s.replace("{{ term }}", surface).replace("{{ article }}", may_article(surface)))
            for w in words for fam, surface in may_families(w) for s in bleached["families"][fam]]


def our_sentences(items: list[dict], bleached: dict) -> list[str]:
    return [s for it in items for fam, surface in our_families(it)
            for s in render_family(bleached, fam, surface, {"article": it.get("article") or may_article(surface)})]


# ---------------------------------------------------------------- what our YAML gives, per role

def our_lists(tid: str) -> dict[str, list[str]]:
    """Role -> the texts at the test's own level (words, or the rendered sentences)."""
    doc = load_test_doc(tid)
    out = {}
    for role in ROLES:
        s = resolve_set(doc[role])
        if doc.get("level", "word") == "word":
            out[role] = [i["text"] for i in s["items"]]
            continue
        exp = doc["expansions"][doc["level"]]
        tmpl = resolve_template(exp["template"])
        fam = exp["families"][role]
        variables = {**(s.get("template_vars") or {}), **(exp.get("vars") or {})}
        out[role] = [t for i in s["items"] for t in render_family(tmpl, fam, i["text"], variables)]
    return out


# ---------------------------------------------------------------- the tests

@pytest.mark.parametrize("tid", ALL_TESTS)
def test_matches_authors_file(tid):
    ours = our_lists(tid)
    theirs = authors(tid)
    for role, key in ROLES.items():
        if (tid, role) in RECORDED:
            continue
        assert ours[role] == theirs[key]["examples"], f"{tid} {role} ({theirs[key]['category']}) differs"


@pytest.mark.parametrize("tid", ALL_TESTS)
def test_test_file_shape(tid):
    doc = load_test_doc(tid)
    assert doc["license"] == "CC-BY-NC-4.0"
    assert doc["source"]["authors_file"] == f"sent-bias tests/{tid}.jsonl"
    if tid in HEILMAN and not tid.endswith("one_word"):
        assert doc["level"] == "sent(u)" and set(doc["expansions"]) == {"sent(u)"}
        assert set(doc["expansions"]["sent(u)"]["families"]) == set(ROLES)
    else:
        assert doc["level"] == "word"
        assert doc["expansions"] == {"sent": {"template": "may2019_bleached@1.0.0"}}
    for role in ROLES:
        s = resolve_set(doc[role])
        assert s["license"] == "CC-BY-NC-4.0" and s["changelog"] and s["source"]["authors_file"]
        assert s["items"] and all(i["kind"] != "sentence" for i in s["items"]), "word sets only"


@pytest.mark.parametrize("tid", [t for t in ALL_TESTS if t not in HEILMAN or t.endswith("one_word")])
def test_kinds_reproduce_may_bleached_expansion(tid):
    """Our stated kinds give exactly the bleached sentences of May et al.'s generator (sent-<tid>)."""
    bleached = resolve_template("may2019_bleached@1.0.0")
    doc = load_test_doc(tid)
    for role in ROLES:
        items = resolve_set(doc[role])["items"]
        assert our_sentences(items, bleached) == may_sentences([i["text"] for i in items], bleached), (tid, role)


def test_heilman_name_sets_refer_back():
    assert resolve_set("male_names@1.0.0")["template_vars"] == {"subject": "he", "object": "him", "possessive": "his"}
    assert resolve_set("female_names@1.0.0")["template_vars"] == {"subject": "she", "object": "her",
                                                                  "possessive": "her"}


def _mleat_lists() -> list[list[str]]:
    if not MLEAT_SEED.is_file():
        pytest.skip(f"needs the text of Wolfe et al. (2024), the ML-EAT appendix (not redistributable): "
                    f"set EATLAS_SEEDS to a folder holding {MLEAT_SEED.name}")
    txt = MLEAT_SEED.read_text(encoding="utf-8")
    seg = txt[txt.index("EAT Text Stimuli"):txt.index("Comprehensive ML-EAT Results")]
    lists = [[w.strip() for w in m.group(1).split(",")]
             for m in re.finditer(r"^[ABXY] \([^)]*\): (.*)$", seg, flags=re.M)]
    assert len(lists) == 40
    return lists


@pytest.mark.parametrize("n", range(1, 11))
def test_caliskan_matches_mleat_appendix(n):
    """The appendix prints A, B, X, Y for each of WEAT 1-10 in turn."""
    lists = _mleat_lists()[4 * (n - 1): 4 * n]
    doc = load_test_doc(f"weat{n}")
    for role, printed in zip("abxy", lists):
        s = resolve_set(doc[role])
        ours = [i["text"] for i in s["items"]]
        if s["id"] in MLEAT_RECORDED:
            assert sorted(ours) == sorted(printed) and ours != printed
            assert "ML-EAT" in s["notes"], "the difference must be recorded in the set's notes"
        else:
            assert ours == printed, (n, role)


def doc_level(tid: str) -> str:
    return load_test_doc(tid).get("level", "word")


# ---------------------------------------------------------------- the same through the package's loader

def _loader():
    try:
        import eatlas
    except ImportError as e:  # pragma: no cover - loader not there
        pytest.skip(f"eatlas loader not importable: {e}")
    return eatlas


@pytest.fixture(scope="module")
def mini_registry(tmp_path_factory):
    """A registry folder holding only these tests, their sets and templates, with a catalog naming them
    (so the check does not wait for catalog.yaml to be regenerated, nor depend on others' files)."""
    root = tmp_path_factory.mktemp("registry")
    cat = {"sets": [], "tests": [], "templates": [], "published": []}
    seen = set()

    def add(kind, src: Path):
        rel = src.relative_to(ROOT)
        if rel in seen:
            return
        seen.add(rel)
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        doc = _load(src)
        cat[kind].append({"id": doc["id"], "version": doc["version"], "file": str(rel)})

    for tid in ALL_TESTS:
        add("tests", TEST_FILES[tid])
        doc = load_test_doc(tid)
        for role in ROLES:
            add("sets", SET_FILES[doc[role].split("@")[0]])
        for exp in doc["expansions"].values():
            add("templates", ROOT / "templates" / f"{exp['template'].split('@')[0]}.yaml")
    (root / "registry").mkdir(exist_ok=True)
    shutil.copyfile(ROOT / "registry" / "sources.yaml", root / "registry" / "sources.yaml")
    (root / "catalog.yaml").write_text(yaml.safe_dump(cat, sort_keys=False), encoding="utf-8")
    return str(root)


def _get(eatlas, tid, registry, level=None):
    return eatlas.get_test(tid, level=level, registry=registry)


@pytest.mark.parametrize("tid", ALL_TESTS)
def test_loader_matches_authors_file(tid, mini_registry):
    eatlas = _loader()
    t = _get(eatlas, tid, mini_registry)
    theirs = authors(tid)
    assert t.level == doc_level(tid)
    for role, key in ROLES.items():
        if (tid, role) in RECORDED:
            continue
        assert getattr(t, role).items == theirs[key]["examples"], f"{tid} {role} differs"


@pytest.mark.parametrize("tid", [t for t in ALL_TESTS if t not in HEILMAN or t.endswith("one_word")])
def test_loader_bleached_level_is_mays(tid, mini_registry):
    """sent level = May et al.'s generator output; a truncated role keeps an ordered subset of it."""
    eatlas = _loader()
    t = _get(eatlas, tid, mini_registry, level="sent")
    bleached = resolve_template("may2019_bleached@1.0.0")
    for role, key in ROLES.items():
        expected = may_sentences(authors(tid)[key]["examples"], bleached)
        got = getattr(t, role).items
        if role in t.truncated:
            it = iter(expected)
            assert len(got) == t.truncated[role][1] and all(s in it for s in got), (tid, role)
        else:
            assert got == expected, (tid, role)
