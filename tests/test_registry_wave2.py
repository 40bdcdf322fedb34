"""The wave-2 English sets and tests (issue 13) against the authors' own files.

Each curated set records in tests/data/authors/wave2en_digests.json how its list is read from the authors'
file (repository, path, and the place in the file) and the sha256 of that list. The authors' files are
committed under tests/data/authors/<owner>+<name>/ where their licence allows (MIT, Apache-2.0,
CC BY-NC 4.0); the others are read from a git snapshot when EATLAS_AUTHORS_GIT names a folder of
``<owner>+<name>/repo`` snapshots, and otherwise checked through the recorded digests. A set must hold
the authors' list exactly, or differ only as its notes record under DIFFERENCE (a repeated item kept
once, surrounding spaces removed).
"""
from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
AUTHORS = ROOT / "tests" / "data" / "authors"
DIGESTS = json.loads((AUTHORS / "wave2en_digests.json").read_text(encoding="utf-8"))
WAVE2_DIRS = ("meade2022", "garg2018", "bolukbasi2016", "manzini2019", "zhao2018gn", "antoniak2021", "bai2024")
BAD_SEEDS_KIND = {"borrowed-from-social-sciences": "social_science", "corpus-derived": "corpus_derived",
                  "prior-work": "prior_work", "curated": "authors_curated", "crowd-sourced": "crowdsourced",
                  "lexical-resources": "lexical_resource", "population-derived": "population_derived"}


def _load(p: Path) -> dict:
    return yaml.safe_load(p.read_text(encoding="utf-8"))


SET_FILES = {p.stem: p for p in sorted((ROOT / "registry").glob("*/sets/*.yaml"))}
TEST_FILES = {p.stem: p for p in sorted((ROOT / "registry").glob("*/tests/*.yaml"))}


def texts(doc: dict) -> list[str]:
    return [i if isinstance(i, str) else i["text"] for i in doc["items"]]


def items(doc: dict) -> dict[str, dict]:
    """text -> the item's fields, the set's default kind filled in."""
    out = {}
    for i in doc["items"]:
        i = {"text": i} if isinstance(i, str) else dict(i)
        i.setdefault("kind", doc.get("kind"))
        out[i["text"]] = i
    return out


def digest(lst: list[str]) -> str:
    return hashlib.sha256(json.dumps(lst, ensure_ascii=False).encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- reading the authors' files

def authors_bytes(repo: str, path: str) -> bytes | None:
    copy = AUTHORS / repo.replace("/", "+") / path
    if copy.is_file():
        return copy.read_bytes()
    base = os.environ.get("EATLAS_AUTHORS_GIT")
    if not base:
        return None
    d = Path(base) / repo.replace("/", "+") / "repo"
    d = d / ".git" if (d / ".git").is_dir() else d
    commit = DIGESTS["repos"][repo]["commit"]
    r = subprocess.run(["git", "--git-dir", str(d), "show", f"{commit}:{path}"], capture_output=True)
    return r.stdout if r.returncode == 0 else None


def python_lists(src: str) -> dict[str, list]:
    env: dict[str, list] = {}

    def ev(n):
        if isinstance(n, ast.List):
            return [ev(e) for e in n.elts]
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            return env[n.id]
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            return ev(n.left) + ev(n.right)
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice):
            lo = n.slice.lower.value if n.slice.lower is not None else None
            hi = n.slice.upper.value if n.slice.upper is not None else None
            return ev(n.value)[lo:hi]
        raise ValueError

    for node in ast.parse(src).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                env[node.targets[0].id] = ev(node.value)
            except (ValueError, KeyError, AttributeError):
                pass
    return env


def derive(spec: dict) -> list[str] | None:
    """The list ``spec`` names in the authors' file, or None when the file is not at hand."""
    raw = authors_bytes(spec["repo"], spec["path"])
    if raw is None:
        return None
    src = raw.decode("utf-8")
    fmt = spec["fmt"]
    if fmt == "lines":
        return [ln.rstrip("\r") for ln in src.split("\n") if ln.strip()]
    if fmt == "python":
        return python_lists(src)[spec["var"]]
    if fmt == "csv":
        rows = [r for r in csv.DictReader(io.StringIO(src))
                if all(r[k] == v for k, v in spec["filter"].items())]
        col = [r[spec["column"]] for r in rows if r[spec["column"]] != ""]
        lo, hi = spec["slice"]
        return col[lo:hi]
    value = json.loads(src)
    for key in spec["select"]:
        value = value[key]
    if spec.get("literal"):
        value = ast.literal_eval(value)
    if "column" in spec:
        value = [row[spec["column"]] for row in value]
    return value


def dedupe_strip(lst: list[str]) -> list[str]:
    out = []
    for t in (t.strip() for t in lst):
        if t not in out:
            out.append(t)
    return out


# ---------------------------------------------------------------- every curated set against its authors' list

CURATED = sorted(DIGESTS["sets"])


def test_every_wave2_set_has_a_recorded_derivation():
    """No set in the wave-2 folders (nor a May hidden-test or Guo code-variant set) without its authors' list."""
    ours = {sid for sid, p in SET_FILES.items()
            if p.parent.parent.name in WAVE2_DIRS or sid.startswith("pi_") or sid.endswith("_code")}
    assert ours - set(CURATED) == set(), "sets without a recorded derivation from an authors' file"
    assert set(CURATED) - set(SET_FILES) == set(), "recorded sets missing from the registry"


@pytest.mark.parametrize("sid", CURATED)
def test_set_is_the_authors_list(sid):
    doc = _load(SET_FILES[sid])
    rec = DIGESTS["sets"][sid]
    ours = texts(doc)
    derived = [derive(spec) for spec in rec["derive"]]
    for spec, lst in zip(rec["derive"], derived):
        if lst is not None:
            assert digest(lst) == rec["authors"], \
                f"{spec['repo']} {spec['path']}: the authors' list is not the one recorded at curation"
    if ours == derived[0] if derived[0] is not None else digest(ours) == rec["authors"]:
        return
    assert "DIFFERENCE" in (doc.get("notes") or ""), f"{sid}: differs from the authors' list without a DIFFERENCE note"
    assert digest(ours) == rec["curated"], f"{sid}: differs from the authors' list beyond the recorded DIFFERENCE"
    if derived[0] is not None:
        assert ours == dedupe_strip(derived[0]), f"{sid}: a difference other than repeats and spaces"


def test_committed_authors_files_are_the_recorded_ones():
    n = 0
    for key, sha in DIGESTS["files"].items():
        repo, path = key.split(":", 1)
        copy = AUTHORS / repo.replace("/", "+") / path
        if copy.is_file():
            assert hashlib.sha256(copy.read_bytes()).hexdigest() == sha, f"{copy} changed"
            assert DIGESTS["repos"][repo]["license"] in ("MIT", "Apache-2.0", "CC-BY-NC-4.0")
            n += 1
    assert n >= 20
    for repo in ("tolga-b/debiaswe", "uclanlp/gn_glove", "baixuechunzi/llm-implicit-bias", "W4ngatang/sent-bias"):
        assert (AUTHORS / repo.replace("/", "+") / "LICENSE").is_file(), f"{repo}: its licence travels with the copy"


@pytest.mark.parametrize("sid", CURATED)
def test_licence_is_the_repository_s(sid):
    doc = _load(SET_FILES[sid])
    repo = DIGESTS["sets"][sid]["derive"][0]["repo"]
    assert doc["license"] == DIGESTS["repos"][repo]["license"], f"{sid}: licence is not what {repo} states"


# ---------------------------------------------------------------- 1. May et al. hidden tests

PI_TESTS = ["arab-muslim", "disability", "native", "religion", "sexuality", "skin-tone", "weapons", "weight"]


@pytest.mark.parametrize("name", PI_TESTS)
def test_may_hidden_test_roles_and_sentences(name):
    from eatlas.registry.stimuli import get_test
    tid = f"project_implicit_{name}"
    doc = _load(TEST_FILES[tid])
    for role, key in zip("xyab", ("targ1", "targ2", "attr1", "attr2")):
        sid = doc[role].split("@")[0]
        specs = DIGESTS["sets"][sid]["derive"]
        assert {"repo": "W4ngatang/sent-bias", "path": f"tests-hidden/{tid}.jsonl", "fmt": "json",
                "select": [key, "examples"]} in specs, f"{tid} {role} is not the authors' {key}"
    t = get_test(tid, level="sent")
    for role, concept in t.concepts.items():
        stimuli = {s.stimulus for s in concept.stimuli}
        if not t.truncated.get(role):
            expected = set(texts(_load(SET_FILES[doc[role].split("@")[0]])))
            assert stimuli == expected, f"{role}: a stimulus got no sentence"
        assert all(s.text.endswith(".") and s.text[0].isupper() for s in concept.stimuli)


def test_may_hidden_kinds_as_the_issue_states():
    from eatlas.registry.stimuli import get_test
    dark = items(_load(SET_FILES["pi_skin_tone_dark_terms"]))
    light = items(_load(SET_FILES["pi_skin_tone_light_terms"]))
    assert light["light skin"]["kind"] == "mass_noun" and dark["dark skin"]["kind"] == "mass_noun"
    assert dark["person of color"]["kind"] == "group_term" and dark["person of color"]["plural"] == "people of color"
    sents = [s.text for s in get_test("project_implicit_skin-tone", level="sent", seed=0).y.stimuli
             if s.stimulus == "person of color"]
    assert "These are people of color." in sents or "This is a person of color." in sents
    assert not any("a light skin" in s.text for s in get_test("project_implicit_skin-tone", level="sent").x.stimuli)


# ---------------------------------------------------------------- 2. Meade et al. religion SEAT

@pytest.mark.parametrize("t", ["1", "1b", "2", "2b"])
def test_meade_sent_level_is_the_authors_sentences(t):
    from eatlas.registry.stimuli import get_test
    tid = f"sent-religion{t}"
    test = get_test(tid, level="sent")
    assert test.level == "sent" and not test.truncated
    raw = authors_bytes("McGill-NLP/bias-bench", f"data/seat/{tid}.jsonl")
    for role, key in zip("xyab", ("targ1", "targ2", "attr1", "attr2")):
        got = test.concepts[role].items
        if raw is not None:
            assert got == json.loads(raw)[key]["examples"]
        else:           # the file's licence keeps it out of the repository: its recorded digest
            sid = _load(TEST_FILES[tid])[role].split("@")[0]
            assert digest(got) == DIGESTS["sets"][sid]["authors"]


# ---------------------------------------------------------------- 3. Guo & Caliskan code variants

@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_guo_code_variant_tests(n):
    doc = _load(TEST_FILES[f"ceat_i{n}_code"])
    assert doc["variant"] == "authors-code" and doc["variant_of"] == f"ceat_i{n}" and f"ceat_i{n}" in TEST_FILES
    refs = {r: doc[r].split("@")[0] for r in "xyab"}
    for r, sid in refs.items():
        s = _load(SET_FILES[sid])
        assert s["variant"] == "authors-code" and s["variant_of"] in SET_FILES
        assert s["variant_of"] == _load(TEST_FILES[f"ceat_i{n}"])[r].split("@")[0] or r in "ab"
    assert len(texts(_load(SET_FILES[refs["x"]]))) == 12 and len(texts(_load(SET_FILES[refs["y"]]))) == 12
    raw = authors_bytes("weiguowilliam/CEAT", "code/ceat.py")
    if raw is None:
        pytest.skip("CEAT's code is not committed (no licence); set EATLAS_AUTHORS_GIT to check weat_groups")
    env = python_lists(raw.decode("utf-8"))
    want = env["weat_groups"][9 + n]            # rows 11-14: af-inter, af-emerg, lf-inter, lf-emerg
    assert [texts(_load(SET_FILES[refs[r]])) for r in "xyab"] == want


def test_guo_code_forms_are_the_code_s():
    words = set()
    for sid in ("guo2021_ceat_i1_af_code", "guo2021_ceat_i1_em_code"):
        words |= set(texts(_load(SET_FILES[sid])))
    assert {"chicken", "status", "American"} <= words
    assert not {"fried-chicken", "high-status", "all-American"} & words
    weat9 = _load(TEST_FILES["weat9_ceat_code"])
    assert weat9["variant_of"] == "weat9" and weat9["a"] == "temporary_ceat_code@1.0.0"
    assert "short" in texts(_load(SET_FILES["temporary_ceat_code"]))
    assert "short-term" in texts(_load(SET_FILES["temporary"]))


# ---------------------------------------------------------------- 8. Bad Seeds

def test_bad_seeds_every_nonempty_list_is_a_set():
    ids = sorted(p.stem for p in SET_FILES.values() if p.parent.parent.name == "antoniak2021")
    raw = authors_bytes("maria-antoniak/bad-seeds", "gathered_seeds.json")
    rows = json.loads(raw) if raw is not None else None
    if rows is None:
        assert len(ids) == 165
        return
    nonempty = [r for r in rows if ast.literal_eval(r["Seeds"])]
    assert len(ids) == len(nonempty)
    got = {_load(SET_FILES[i])["source"]["seeds_id"] for i in ids}
    assert got == {r["Seeds ID"] for r in nonempty}


@pytest.mark.parametrize("sid", sorted(s for s, p in SET_FILES.items() if p.parent.parent.name == "antoniak2021"))
def test_bad_seeds_set_fields_and_link(sid):
    doc = _load(SET_FILES[sid])
    src = doc["source"]
    for k in ("seeds_id", "category", "used_in_paper", "justification", "link"):
        assert k in src, f"{sid}: source.{k} missing"
    cats = [c.strip() for c in str(src["category"]).split(",")] if src["category"] else []
    assert doc["source_kind"] == [BAD_SEEDS_KIND[c] for c in cats if c in BAD_SEEDS_KIND]
    assert doc["variant"] == "bad-seeds-transcription"
    m = re.search(r"The same list as ([a-z0-9_+\-]+)@", doc["notes"])
    if doc.get("variant_of"):
        canon = _load(SET_FILES[doc["variant_of"]])
        if m:
            assert m.group(1) == doc["variant_of"] and texts(canon) == texts(doc)
        else:
            assert "DIFFERENCE: the transcription" in doc["notes"] and texts(canon) != texts(doc)
    else:
        assert not m and "No set of the registry holds this list" in doc["notes"]


def test_bad_seeds_holds_caliskan_wefat_lists():
    concepts = {_load(SET_FILES[s])["concept"] for s, p in SET_FILES.items() if p.parent.parent.name == "antoniak2021"}
    assert {"careers", "androgynous names"} <= concepts


# ---------------------------------------------------------------- 9. Bai et al. LLM IAT

def test_bai_prompt_template_renders_the_authors_prompts():
    from eatlas.registry import load_registry
    from eatlas.registry.templates import render
    tmpl = load_registry(str(ROOT)).get_template("bai2024_llm_iat@1.0.0")
    pair_group, attributes = ["white", "black"], ["marvelous", "tragic", "superb"]
    for family, path in (("replication", "replication.py"), ("instruction1", "instruction1.py"),
                         ("instruction2", "instruction2.py"), ("synonym", "synonym.py")):
        src = (AUTHORS / "baixuechunzi+llm-implicit-bias/prompt/implicit/gpt4/racism" / path).read_text("utf-8")
        fstring = re.search(r"prompt = \(\s*(f'.*?')\)", src, re.S).group(1)
        theirs = eval(fstring, {"__builtins__": {}}, {"pair_group": pair_group, "attributes": attributes})
        ours = render(tmpl.families[family][0], {"group0": pair_group[0], "group1": pair_group[1],
                                                 "attributes": str(attributes)}, where={"file": tmpl.file})
        assert ours == theirs


def test_bai_tests_split_the_attributes_in_halves():
    rows = list(csv.DictReader(io.StringIO(
        (AUTHORS / "baixuechunzi+llm-implicit-bias/stimuli/iat_stimuli.csv").read_text("utf-8"))))
    datasets = []
    for r in rows:
        if r["dataset"] not in datasets:
            datasets.append(r["dataset"])
    assert len(datasets) == 21
    for ds in datasets:
        key = re.sub(r"[^a-z0-9]+", "_", ds.lower()).strip("_")
        doc = _load(TEST_FILES[f"bai2024_{key}"])
        col = {c: [r[c] for r in rows if r["dataset"] == ds and r[c]] for c in "ABC"}
        got = {role: texts(_load(SET_FILES[doc[role].split("@")[0]])) for role in "xyab"}
        assert got["x"] == col["A"] and got["y"] == col["B"] and got["a"] + got["b"] == col["C"]
        assert len(got["a"]) == len(col["C"]) // 2


# ---------------------------------------------------------------- the format additions this needed

def test_word_kind_has_no_template_family():
    from eatlas.errors import EatlasError
    from eatlas.registry import load_registry
    from eatlas.registry.templates import expand_item
    reg = load_registry(str(ROOT))
    s = reg.get_set("garg2018_words_islam@1.0.0")
    assert {i.kind for i in s.items} == {"word"}
    with pytest.raises(EatlasError, match="kind 'word' are not expanded"):
        expand_item(s.items[0], 0, reg.get_template("may2019_bleached@1.0.0"))


def test_template_variables_must_be_names():
    from eatlas.errors import EatlasError
    from eatlas.registry import parse_template
    doc = {"id": "p", "version": "1.0.0", "families": {"f": ["{{ group0 }}"]}, "variables": ["group 0"]}
    with pytest.raises(EatlasError, match="variables must be a list of variable names"):
        parse_template(doc, "templates/p.yaml")
