"""Fidelity: exact ties, and the authors'-code options (docs/methods.md, "Departures from the authors' code").

Each listed departure has an option here, and each option is tested against an independent computation:
- ties in the permutation tests (WEAT exact and sampled, ML-EAT Level 2) against exact rational arithmetic;
- ``--mleat-p authors`` against Wolfe et al.'s formula (normal fit, smaller tail) written out with scipy;
- ``--eibd-rule all`` against Guo & Caliskan's intended rule, checked word by word.
"""
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import norm

from eatlas.stats import subsets
from eatlas.stats.mleat import level2, mleat
from eatlas.stats.weat import association, weat


def _stat(s, chosen, tot):
    return 2 * sum(s[i] for i in chosen) - tot


def exact_count(s_x, s_y, partitions=None):
    """How many partitions (all, or the given index rows) have a statistic >= the observed one, in
    exact rational arithmetic on the float values of s (each float is a rational number)."""
    s = [Fraction(float(v)) for v in list(s_x) + list(s_y)]
    k = len(s_x)
    tot = sum(s)
    obs = _stat(s, range(k), tot)
    rows = itertools.combinations(range(len(s)), k) if partitions is None else partitions
    hits = total = 0
    for c in rows:
        hits += _stat(s, c, tot) >= obs
        total += 1
    return hits, total


@pytest.mark.parametrize("seed", [0, 2, 6])
def test_exact_weat_counts_ties_of_duplicated_targets(seed):
    """X == Y: every partition that swaps a word for its duplicate ties the observed statistic exactly;
    float rounding used to lose some of them (p 0.44-0.53 where the exact answer is 0.563)."""
    rng = np.random.default_rng(seed)
    X, A, B = rng.normal(size=(5, 8)), rng.normal(size=(4, 8)), rng.normal(size=(4, 8))
    r = weat(X, X.copy(), A, B)
    s = association(X, A, B)
    hits, total = exact_count(s, s)
    assert r.exact and r.n_partitions == total == math.comb(10, 5)
    assert r.p_value == hits / total


@pytest.mark.parametrize("n", [10, 40])      # 20 and 80 stimuli: random bit masks (one and two words)
def test_sampled_weat_counts_ties_of_duplicated_vectors(n):
    rng = np.random.default_rng(n)
    base, A, B = rng.normal(size=(n // 2, 8)), rng.normal(size=(3, 8)), rng.normal(size=(3, 8))
    X = np.vstack([base, base])[:n]           # every target vector twice, X and Y the same multiset
    Y = X[::-1].copy()
    n_samples = 3000
    r = weat(X, Y, A, B, n_samples=n_samples, seed=7)
    assert not r.exact and r.n_partitions == n_samples
    sx, sy = association(X, A, B), association(Y, A, B)
    # the partitions the test drew: bit masks of eatlas.stats.subsets (equal sets)
    masks = subsets.random_masks(2 * n, n, n_samples - 1, 7)
    bits = np.unpackbits(masks.view(np.uint8), axis=1, bitorder="little")[:, :2 * n]
    rows = [range(n)] + [tuple(np.flatnonzero(row)) for row in bits]
    hits, total = exact_count(sx, sy, rows)
    assert total == n_samples
    assert r.p_value == hits / total


@pytest.mark.parametrize("seed", [1, 3])
def test_mleat_level2_counts_ties_of_duplicated_attributes(seed):
    """A == B (duplicated attribute vectors): Level 2 re-partitions A u B, so swapping an attribute
    word for its duplicate ties exactly; both tails count those ties."""
    rng = np.random.default_rng(seed)
    T, A = rng.normal(size=(3, 8)), rng.normal(size=(5, 8))
    r = level2(T, A, A.copy())
    u = (A / np.linalg.norm(A, axis=1, keepdims=True)) @ (T / np.linalg.norm(T, axis=1, keepdims=True)).T
    u = u.mean(axis=1)
    up, total = exact_count(u, u)
    low, _ = exact_count(-u, -u)
    assert r.exact and r.n_partitions == total
    assert (r.p_upper, r.p_lower) == (up / total, low / total)


# ------------------------------------------------------------------ ML-EAT p-values: --mleat-p authors
# A small fixed example: targets X lean to B, Y to A, so the Level-1 effect is negative.
FX = np.array([[0.2, 1.0, 0.1], [0.1, 0.9, 0.3], [0.3, 1.1, 0.0], [0.0, 0.8, 0.2]])
FY = np.array([[1.0, 0.2, 0.1], [0.9, 0.1, 0.2], [1.1, 0.3, 0.0], [0.8, 0.0, 0.3]])
FA = np.array([[1.0, 0.0, 0.2], [0.9, 0.1, 0.0], [1.0, 0.2, 0.1]])
FB = np.array([[0.0, 1.0, 0.1], [0.1, 0.9, 0.2], [0.2, 1.0, 0.0]])


def _cos(P, Q):
    P = P / np.sqrt((P ** 2).sum(axis=1))[:, None]
    Q = Q / np.sqrt((Q ** 2).sum(axis=1))[:, None]
    return P @ Q.T


def _authors_formula(v1, v2):
    """wolferobert3/ml-eat mleat.py compute_p_value, over every equal-size split of v1 u v2 (the
    distribution their random permutations sample): normal fit (ddof=1), min(cdf, 1 - cdf)."""
    v = list(v1) + list(v2)
    k = len(v1)
    stats = [sum(v[i] for i in c) - sum(v[i] for i in range(len(v)) if i not in c)
             for c in itertools.combinations(range(len(v)), k)]
    c = norm.cdf(sum(v1) - sum(v2), loc=np.mean(stats), scale=np.std(stats, ddof=1))
    return min(c, 1 - c)


def test_mleat_authors_p_is_their_normal_fit_smaller_tail_at_level_1_and_2():
    ours = mleat(FX, FY, FA, FB)
    theirs = mleat(FX, FY, FA, FB, p_method="authors")
    def s(T):
        return _cos(T, FA).mean(axis=1) - _cos(T, FB).mean(axis=1)
    assert ours.level1.effect_size < 0 and theirs.level1.effect_size == ours.level1.effect_size
    assert theirs.level1.p_value == pytest.approx(_authors_formula(s(FX), s(FY)), rel=1e-9)
    # A negative Level-1 effect: the one-sided permutation p is near 1, the authors' smaller tail is small.
    assert ours.level1.p_value > 0.95 and theirs.level1.p_value < 0.05
    for T, r in ((FX, theirs.x), (FY, theirs.y)):
        u = _cos(FA, T).mean(axis=1), _cos(FB, T).mean(axis=1)
        assert r.p_value == pytest.approx(_authors_formula(*u), rel=1e-9)
        assert r.p_method == "authors" and r.p_value == min(r.p_upper, r.p_lower)
    assert theirs.to_dict()["p_method"] == "authors" and ours.to_dict()["p_method"] == "permutation"
    with pytest.raises(ValueError, match="p_method"):
        mleat(FX, FY, FA, FB, p_method="normal")


def _vector_file(tmp_path, words):
    rng = np.random.default_rng(0)
    path = tmp_path / "vectors.txt"
    path.write_text("".join(f"{w} {' '.join(f'{x:.6f}' for x in rng.normal(size=12))}\n" for w in words),
                    encoding="utf-8")
    return path


def _words(test_id):
    from eatlas.registry import load_registry
    reg = load_registry()
    return [i.text for ref in reg.tests[test_id].sets.values() for i in reg.get_set(ref).items]


def test_mleat_p_option_is_recorded_with_the_run(tmp_path):
    import json

    import duckdb

    from eatlas.cli import main
    vec = _vector_file(tmp_path, _words("weat1"))
    db = tmp_path / "r.duckdb"
    common = ["--db", str(db), "run", "--method", "mleat", "--model", str(vec), "--tests", "weat1", "--levels",
              "word", "--n-samples", "500", "--no-maps", "--no-cache", "--quiet"]
    assert main(common + ["--mleat-p", "authors"]) == 0
    assert main(common) == 0
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT m.p_method, r.settings, m.level1_p_value, s.p_value FROM mleat_results m "
                       "JOIN runs r USING (run_id) JOIN results s USING (run_id, test_id, level) "
                       "ORDER BY r.started_at").fetchall()
    assert [r[0] for r in rows] == ["authors", "permutation"]
    assert [json.loads(r[1])["options"]["mleat_p"] for r in rows] == ["authors", "permutation"]
    assert all(r[2] == r[3] for r in rows) and rows[0][2] != rows[1][2]
    # The option belongs to ML-EAT and is not mixed with Caliskan's one-tailed normal p.
    assert main(["--db", str(db), "run", "--model", str(vec), "--tests", "weat1", "--levels", "word",
                 "--mleat-p", "authors", "--quiet"]) == 2
    assert main(common + ["--mleat-p", "authors", "--parametric"]) == 2


# ------------------------------------------------------------------ EIBD: --eibd-rule any|all
def _eibd_world():
    """Four groups (race A/E x gender F/M). Words: one only AF names share, one of race A, one of race
    A *and* gender F, one of nothing; names and words carry small noise in 30 further dimensions."""
    rng = np.random.default_rng(3)
    dim = {"A": 0, "E": 1, "F": 2, "M": 3, "AF": 4, "AM": 5, "EF": 6, "EM": 7}

    def vec(*dims, n=1):
        v = np.zeros((n, 38))
        v[:, 8:] = 0.1 * rng.normal(size=(n, 30))
        for d in dims:
            v[:, dim[d]] += 1.0
        return v
    groups = {g: vec(g[0], g[1], g, n=8) for g in ("AF", "AM", "EF", "EM")}
    words = {"emergent": vec("AF")[0], "race": vec("A")[0], "race_gender": vec("A", "F")[0], "none": vec()[0]}
    return groups, words


def test_eibd_rule_any_drops_a_word_above_t_on_one_constituent_all_only_on_every_one():
    from eatlas.stats.ibd import association_scores, eibd, ibd
    groups, words = _eibd_world()
    t = 1.25
    W = np.vstack(list(words.values()))
    def union(*gs):
        return np.vstack([groups[g] for g in gs])
    race = association_scores(W, union("AF", "AM"), union("EF", "EM"))      # A vs E
    gender = association_scores(W, union("AF", "EF"), union("AM", "EM"))    # F vs M
    ibd_words = set(ibd(groups, words, None, target="AF", threshold=t).detected)
    expect = {rule: {w for i, w in enumerate(words) if w in ibd_words
                     and not agg([race[i] > t, gender[i] > t])} for rule, agg in (("any", any), ("all", all))}
    got = {rule: eibd(groups, words, None, target="AF", threshold=t, rule=rule) for rule in ("any", "all")}
    assert {k: set(r.detected) for k, r in got.items()} == expect
    # The world is built so the two rules differ: a race-only word is kept by 'all', dropped by 'any'.
    assert expect == {"any": {"emergent"}, "all": {"emergent", "race"}}
    assert got["any"].eibd_rule == "any" and got["all"].to_dict()["eibd_rule"] == "all"
    with pytest.raises(ValueError, match="rule"):
        eibd(groups, words, None, target="AF", threshold=t, rule="some")


def test_eibd_rule_is_recorded_with_the_run(tmp_path):
    import json

    import duckdb

    from eatlas.cli import main
    from eatlas.methods.ibd import ibd_inputs
    from eatlas.registry import load_registry
    groups, lists = ibd_inputs(load_registry())
    vec = _vector_file(tmp_path, sorted({w for ws in [*groups.values(), *lists.values()] for w in ws}))
    db = tmp_path / "r.duckdb"
    for rule in ("all", "any"):
        assert main(["--db", str(db), "run", "--method", "ibd", "--model", str(vec), "--eibd-rule", rule,
                     "--quiet"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT DISTINCT r.settings, i.method, i.eibd_rule FROM ibd_results i JOIN runs r "
                       "USING (run_id)").fetchall()
    got = {(json.loads(s)["eibd_rule"], m, e) for s, m, e in rows}
    assert got == {("all", "IBD", None), ("all", "EIBD", "all"), ("any", "IBD", None), ("any", "EIBD", "any")}
    assert main(["--db", str(db), "run", "--model", str(vec), "--tests", "weat1", "--eibd-rule", "all"]) == 2


# ------------------------------------------------------------------ registry variants (variant / variant_of)
def test_a_variant_is_a_separate_entry_linked_to_an_existing_canonical_one(mini):
    from conftest import make_set, make_test

    from eatlas.errors import EatlasError
    mini.add_set(make_set("roses_v", ["rose", "tulip", "daisy", "iris"], variant="authors-code", variant_of="roses"))
    mini.add_test(make_test("t1_v", "roses_v@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0",
                            variant="authors-code", variant_of="t1"))
    reg = mini.sync().load()
    assert reg.sets["roses_v"].raw["variant_of"] == "roses" and reg.tests["t1_v"].raw["variant"] == "authors-code"
    from eatlas.registry import Registry
    from eatlas.registry.schemas import check_registry
    bad = [({"variant_of": "t1"}, "'t1', which is not a set"),          # a set names a test
           ({"variant_of": "tulips"}, "'tulips', which is not a set")]
    for change, msg in bad:
        doc = make_set("roses_v", ["rose", "tulip", "daisy", "iris"], variant="authors-code", variant_of="roses")
        doc.update(change)
        mini.add_set(doc)
        found = [p.render() for p in check_registry(Registry(mini.sync().root))]
        assert any(msg in m and "roses_v" in m and "variant_of" in m for m in found), found
    for change, fld, msg in (({"variant": None}, "variant", "variant_of needs a variant label"),
                             ({"variant_of": "roses_v"}, "variant_of", "variant of itself")):
        doc = make_set("roses_v", ["rose", "tulip", "daisy", "iris"], variant="authors-code", variant_of="roses")
        doc.update(change)
        mini.add_set({k: v for k, v in doc.items() if v is not None})
        with pytest.raises(EatlasError, match=msg) as e:
            mini.sync().load()
        assert e.value.field == fld and "roses_v" in str(e.value.obj)


def test_the_authors_notebook_variants_hold_the_notebooks_lists():
    """The registry's Google News variants differ from their canonical lists exactly as the notebook's
    replacement block says (wolferobert3/ml-eat empirical_analysis.ipynb): read from the registry here."""
    from eatlas.registry import load_registry
    reg = load_registry()

    def words(test_id, role):
        return [i.text for i in reg.get_set(reg.tests[test_id].sets[role]).items]
    for tid in ("wolfe2024_gnews_weat2", "wolfe2024_gnews_weat5", "wolfe2024_gnews_weat9"):
        t = reg.tests[tid]
        assert t.raw["variant"] == "authors-notebook" and t.raw["variant_of"] == tid.split("_")[-1]
    assert words("wolfe2024_gnews_weat2", "x") == [w for w in words("weat2", "x") if w != "banjo"]
    assert words("wolfe2024_gnews_weat2", "y") == [w for w in words("weat2", "y") if w != "axe"]
    assert words("wolfe2024_gnews_weat5", "x") == words("weat5", "x") + ["Jay", "Kristen"]
    assert words("wolfe2024_gnews_weat5", "y") == words("weat5", "y") + ["Tremayne", "Latonya"]
    assert words("wolfe2024_gnews_weat9", "a") == [w for w in words("weat9", "a") if w != "short-term"] + ["short"]
    for tid in ("wolfe2024_gnews_weat2", "wolfe2024_gnews_weat5", "wolfe2024_gnews_weat9"):
        for role in "xyab":
            if words(tid, role) == words(tid.split("_")[-1], role):
                assert reg.tests[tid].sets[role] == reg.tests[tid.split("_")[-1]].sets[role]   # unchanged: same set
    assert reg.get_test_spec("EA/AA18 P/U8").id == "wolfe2024_gnews_weat5"
