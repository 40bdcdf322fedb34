"""The peers' conventions of the WEAT's effect size and p-value (eatlas.stats.conventions; docs/methods.md,
"Conventions"), each checked against the peer's own formula on fixed vectors. The peers' formulas are written
below from their code, with file and commit, as plain numpy: the packages themselves are not dependencies."""
from __future__ import annotations

import itertools
import math
import types

import numpy as np
import pytest
from scipy import stats

import eatlas
from eatlas.errors import EatlasError
from eatlas.stats import conventions


def _vectors(sizes=(6, 6, 5, 5), dim=12, shift=0.5, seed=3):
    """X, Y, A, B: Gaussian vectors, X and A shifted along one direction (a positive effect)."""
    rng = np.random.default_rng(seed)
    u = np.zeros(dim)
    u[0] = 1.0
    out = []
    for n, s in zip(sizes, (shift, 0.0, shift, 0.0)):
        out.append(rng.normal(size=(n, dim)) + s * u)
    return out


def _cos(u, v):
    return float(np.dot(u, v) / math.sqrt(np.dot(u, u) * np.dot(v, v)))


def _s(W, A, B):
    """s(w, A, B) = mean cos(w, a) - mean cos(w, b), pair by pair (as every peer computes it)."""
    return np.array([np.mean([_cos(w, a) for a in A]) - np.mean([_cos(w, b) for b in B]) for w in W])


# ------------------------------------------------------------------------------------------------ caliskan
def test_the_default_is_caliskan_and_equals_sent_bias():
    """W4ngatang/sent-bias sentbias/weat.py (commit e3559fb669ca): effect_size = (mean s(X) - mean s(Y)) /
    np.std(s(X u Y), ddof=1) (l. 178-193); the exact p counts si > s or si == s over every equal-size
    partition (l. 151-167)."""
    X, Y, A, B = _vectors()
    default = eatlas.weat(X, Y, A, B, ci=None)
    named = eatlas.weat(X, Y, A, B, ci=None, convention="caliskan")
    assert default == named and default.convention == "caliskan"
    sx, sy = _s(X, A, B), _s(Y, A, B)
    s = np.concatenate([sx, sy])
    assert default.effect_size == pytest.approx((sx.mean() - sy.mean()) / s.std(ddof=1), rel=1e-12)
    observed = sx.sum()
    hits = total = 0
    for xi in itertools.combinations(range(len(s)), len(X)):
        si = s[list(xi)].sum()
        hits += si > observed or si == observed
        total += 1
    assert default.exact and default.n_partitions == total == 924
    assert default.p_value == hits / total


# ------------------------------------------------------------------------------------------------- weathub
def _weathub(X, Y, A, B):
    """iamshnoo/weathub src/weat.py (commit 878d6cea7aab), exact branch: cosines with 1e-8 added to the norms'
    product (l. 67-78), d = mean difference / (np.std(s, ddof=1) + 1e-8) (l. 116-135), the normalised test
    statistic mean s(X') - mean s(Y') (run_weat.py's default, l. 101-114) over every partition (l. 227-234),
    p = share of partitions with si > test_statistic (l. 236-243, 276-279)."""
    XY, AB = np.vstack((X, Y)), np.vstack((A, B))
    cs = np.dot(XY, AB.T) / (np.outer(np.linalg.norm(XY, axis=1), np.linalg.norm(AB, axis=1)) + 1e-8)
    s = cs[:, :len(A)].mean(axis=1) - cs[:, len(A):].mean(axis=1)
    nx = len(X)
    d = (s[:nx].mean() - s[nx:].mean()) / (np.std(s, ddof=1) + 1e-8)
    stat = s[:nx].mean() - s[nx:].mean()
    count = total = 0
    for xi in itertools.combinations(range(len(s)), min(len(X), len(Y))):
        yi = np.setdiff1d(np.arange(len(s)), xi)
        si = s[list(xi)].mean() - s[yi].mean()
        count += si > stat
        total += 1
    return d, count / total


def test_weathub_convention_equals_weathubs_code():
    """Same d (WEATHub's epsilons change it far below a printed digit) and the strict count: the observed
    partition and every tie are left out, so the p is smaller than the default's by (ties + 1) / partitions."""
    X, Y, A, B = _vectors()
    d_theirs, p_theirs = _weathub(X, Y, A, B)
    ours = eatlas.weat(X, Y, A, B, ci=None, convention="weathub")
    assert ours.convention == "weathub" and ours.exact and ours.n_partitions == 924
    assert ours.effect_size == pytest.approx(d_theirs, rel=1e-6)
    assert ours.p_value == p_theirs
    default = eatlas.weat(X, Y, A, B, ci=None)
    assert ours.p_value == pytest.approx(default.p_value - 1 / 924)        # no tie here: only the observed one


def test_weathub_convention_of_identical_targets_and_when_sampled():
    """X == Y (6 stimuli each): a partition ties with the observed statistic 0 exactly when it takes one of
    each pair of equal vectors, 2^6 = 64 of the 924; the strict count leaves them all out, however its sums
    round. Sampled (more partitions than n_samples): the p counts over n_samples random partitions, the first
    n_samples - 1 of them the default's own, so the two counts differ by the observed one and the last draw."""
    X, _, A, B = _vectors()
    tie = eatlas.weat(X, X.copy(), A, B, ci=None, convention="weathub")
    default = eatlas.weat(X, X.copy(), A, B, ci=None)
    assert default.p_value - tie.p_value == pytest.approx(64 / 924, abs=1e-15)
    X, Y, A, B = _vectors(sizes=(8, 8, 6, 6), shift=0.15, seed=5)
    n = 300
    w = eatlas.weat(X, Y, A, B, ci=None, n_samples=n, convention="weathub")
    c = eatlas.weat(X, Y, A, B, ci=None, n_samples=n)
    assert not w.exact and w.n_partitions == n and c.n_partitions == n
    count_w, count_c = round(w.p_value * n), round(c.p_value * n)
    assert 0.05 < c.p_value < 0.95 and count_w - (count_c - 1) in (0, 1)


# --------------------------------------------------------------------------------------------------- mleat
def test_mleat_convention_is_the_ml_eat_codes_p():
    """wolferobert3/ml-eat mleat.py (commit ec117fc5811a) compute_p_value (l. 6-32): a normal curve fitted to
    the permutation distribution of sum s(X') - sum s(Y') (mean, std with correction=1), p = min(cdf, 1 - cdf)
    at the observed statistic; its effect sizes divide by std(correction=1) (l. 99-100). Here the distribution
    is every partition (the authors draw 1,000 unseeded ones)."""
    X, Y, A, B = _vectors()
    sx, sy = _s(X, A, B), _s(Y, A, B)
    s = np.concatenate([sx, sy])
    dist = np.array([2 * s[list(xi)].sum() - s.sum() for xi in itertools.combinations(range(len(s)), len(sx))])
    cdf = stats.norm.cdf(sx.sum() - sy.sum(), loc=dist.mean(), scale=dist.std(ddof=1))
    ours = eatlas.weat(X, Y, A, B, ci=None, convention="mleat")
    assert ours.p_value == pytest.approx(min(cdf, 1 - cdf), rel=1e-9)
    assert ours.effect_size == eatlas.weat(X, Y, A, B, ci=None).effect_size
    # the smaller tail whatever the direction: swapping X and Y gives the same p
    assert eatlas.weat(Y, X, A, B, ci=None, convention="mleat").p_value == pytest.approx(ours.p_value, rel=1e-9)


# ---------------------------------------------------------------------------------------------------- wefe
def test_wefe_convention_d_is_wefes_formula_and_its_interval_scales():
    """dccuchile/wefe wefe/metrics/WEAT.py (wefe 1.0.1; commit 1998132a3e80) _calc_effect_size (l. 127-141):
    np.std with numpy's default ddof=0 over X u Y. On the same s(w) it is the default d times sqrt(N/(N-1)),
    N = |X| + |Y|, and so are both ends of the intervals of the sample d (the papers' and the bootstrap's: every
    resample keeps the set sizes). The concepts' d and its interval have no ddof: the convention leaves them as
    they are (it once multiplied them too, giving ends beyond any possible |d|)."""
    X, Y, A, B = _vectors(sizes=(6, 7, 5, 5))
    sx, sy = _s(X, A, B), _s(Y, A, B)
    theirs = (np.mean(sx) - np.mean(sy)) / np.std(np.concatenate((sx, sy)))
    ours = eatlas.weat(X, Y, A, B, convention="wefe", n_boot=500, ci_method="percentile")
    default = eatlas.weat(X, Y, A, B, n_boot=500, ci_method="percentile")
    assert ours.effect_size == pytest.approx(theirs, rel=1e-12)
    factor = math.sqrt(13 / 12)
    assert ours.effect_size == pytest.approx(default.effect_size * factor, rel=1e-12)
    assert (ours.ci_low, ours.ci_high) == pytest.approx((default.ci_low * factor, default.ci_high * factor),
                                                        rel=1e-12)
    assert (ours.papers_low, ours.papers_high) == pytest.approx((default.papers_low * factor,
                                                                 default.papers_high * factor), rel=1e-12)
    assert conventions.rescale(default.effect_size, 13, ddof=0) == pytest.approx(ours.effect_size, rel=1e-12)
    # the concepts' answer is the convention's too, unchanged
    assert (ours.concepts_low, ours.concepts_high, ours.d_concepts, ours.p_concepts) == (
        default.concepts_low, default.concepts_high, default.d_concepts, default.p_concepts)


def _wefe_p(sx, sy, iterations, rng, test_type):
    """WEFE 1.0.1's _calc_p_value (l. 143-243), on the associations (A and B stay fixed, so each word's s(w) is
    fixed): draw |X| + |Y| words with replacement from the pooled words (rng.choice), keep draws not seen before,
    count those whose statistic passes the test function (l. 17-33: '>' against the signed observed value;
    two-sided: np.abs(statistic) > observed), p = (count + 1) / (runs + 1). Seeded here (theirs is not)."""
    s = np.concatenate([sx, sy])
    n, nx = len(s), len(sx)
    original = sx.sum() - sy.sum()
    test = {"right-sided": lambda c, o: c > o, "two-sided": lambda c, o: np.abs(c) > o}[test_type]
    runs = min(iterations, math.factorial(n))
    seen, count = set(), 0
    while len(seen) < runs:
        perm = tuple(rng.choice(n, size=n).tolist())
        if perm not in seen:
            count += bool(test(s[list(perm[:nx])].sum() - s[list(perm[nx:])].sum(), original))
            seen.add(perm)
    return (count + 1) / (runs + 1)


def _exact_pooled(sx, sy, tail):
    """The probability WEFE's loop estimates, exactly: X' and Y' are |X| and |Y| independent uniform draws from
    s(X u Y); each multiset of draws with its multinomial probability."""
    s = np.concatenate([sx, sy])
    n = len(s)

    def sums(k):
        vals, probs = [], []
        for combo in itertools.combinations_with_replacement(range(n), k):
            counts = np.bincount(combo, minlength=n)
            vals.append(s[list(combo)].sum())
            probs.append(math.factorial(k) / np.prod([math.factorial(c) for c in counts]) / n ** k)
        return np.array(vals), np.array(probs)

    vx, px = sums(len(sx))
    vy, py = sums(len(sy))
    t = vx[:, None] - vy[None, :]
    w = px[:, None] * py[None, :]
    observed = sx.sum() - sy.sum()
    hit = t > observed + 1e-12 if tail == "greater" else np.abs(t) > abs(observed) + 1e-12
    return float(w[hit].sum())


def test_wefe_convention_p_estimates_what_wefes_loop_estimates():
    """WEFE's p is of another kind than a permutation p: a bootstrap under the null. Ours (seeded) and WEFE's
    loop (transcribed) both land within Monte Carlo error of the exact probability they estimate, computed by
    enumerating every multiset of draws (4 + 4 targets)."""
    X, Y, A, B = _vectors(sizes=(4, 4, 5, 5), shift=0.5, seed=14)
    sx, sy = _s(X, A, B), _s(Y, A, B)
    exact = _exact_pooled(sx, sy, "greater")
    assert 0.05 < exact < 0.5
    b = 40_000
    ours = eatlas.weat(X, Y, A, B, ci=None, convention="wefe", n_samples=b)
    assert not ours.exact and ours.n_partitions == b
    assert abs(ours.p_value - exact) < 4.5 * math.sqrt(exact * (1 - exact) / b)
    theirs = _wefe_p(sx, sy, 4_000, np.random.default_rng(7), "right-sided")
    assert abs(theirs - exact) < 4.5 * math.sqrt(exact * (1 - exact) / 4_000)
    # X all one vector, Y all another: no resample exceeds the observed statistic (a resample of X's and Y's own
    # values ties with it, and is not counted): p = 1 / (resamples + 1), WEFE's floor
    hi, lo = X[np.argmax(sx)], Y[np.argmin(sy)]
    far = eatlas.weat(np.tile(hi, (4, 1)), np.tile(lo, (4, 1)), A, B, ci=None, convention="wefe", n_samples=999)
    assert far.effect_size > 0 and far.p_value == 1 / 1000


def test_wefe_two_sided_compares_magnitudes_where_wefe_compares_with_the_signed_value():
    """WEFE's two-sided test function is np.abs(statistic) > observed: for a negative observed statistic every
    resample passes and p is 1. EATlas's two-sided p compares |statistic| with |observed| and estimates
    P(|T*| > |t|), whatever the order of X and Y."""
    X, Y, A, B = _vectors(sizes=(4, 4, 5, 5), shift=0.5, seed=14)
    sx, sy = _s(Y, A, B), _s(X, A, B)            # Y first: the observed statistic is negative
    assert sx.sum() - sy.sum() < 0
    exact = _exact_pooled(sx, sy, "two-sided")
    assert _wefe_p(sx, sy, 2_000, np.random.default_rng(7), "two-sided") == 1.0
    b = 40_000
    for first, second in ((Y, X), (X, Y)):
        ours = eatlas.weat(first, second, A, B, ci=None, convention="wefe", n_samples=b, alternative="two-sided")
        assert abs(ours.p_value - exact) < 4.5 * math.sqrt(exact * (1 - exact) / b)


def test_responsibly_and_embeddingbiasscores_follow_named_conventions():
    """The docs' table: responsibly (ResponsiblyAI/responsibly responsibly/we/weat.py, commit 715c13ff7cf1,
    l. 258-268) divides by np.std(..., ddof=0), the wefe d, and its exact p is mlxtend 0.16's permutation_test
    (evaluate/permutation.py, tag v0.16.0: diff > reference over every combination, func sum(x) - sum(y)), the
    weathub count; EmbeddingBiasScores (geometrical_bias/weat.py, commit 5e72d3612e68, l. 23-35) divides by
    np.std(..., ddof=1), the default d."""
    X, Y, A, B = _vectors()
    sx, sy = list(_s(X, A, B)), list(_s(Y, A, B))
    resp_d = (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=0)
    combined = np.hstack((sx, sy))
    reference = sum(sx) - sum(sy)
    more = 0.0
    m, n = len(sx), len(sy)
    for ix in itertools.combinations(range(m + n), m):
        iy = [i for i in range(m + n) if i not in ix]
        more += float(sum(combined[list(ix)]) - sum(combined[iy]) > reference)
    resp_p = more / (math.factorial(m + n) / (math.factorial(m) * math.factorial(n)))
    assert eatlas.weat(X, Y, A, B, ci=None, convention="wefe").effect_size == pytest.approx(resp_d, rel=1e-12)
    assert eatlas.weat(X, Y, A, B, ci=None, convention="weathub").p_value == pytest.approx(resp_p, abs=1e-15)
    ebs_d = (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1)
    assert eatlas.weat(X, Y, A, B, ci=None).effect_size == pytest.approx(ebs_d, rel=1e-12)


def test_a_convention_is_refused_where_it_means_nothing():
    X, Y, A, B = _vectors()
    with pytest.raises(ValueError, match="caliskan, weathub, mleat, wefe"):
        eatlas.weat(X, Y, A, B, ci=None, convention="sample")
    with pytest.raises(ValueError, match="parametric"):
        eatlas.weat(X, Y, A, B, ci=None, convention="weathub", parametric=True)
    with pytest.raises(ValueError, match="smaller tail"):
        eatlas.weat(X, Y, A, B, ci=None, convention="mleat", alternative="less")


# --------------------------------------------------------------------------------------- papers' conventions
def test_every_paper_with_printed_effect_sizes_states_its_convention():
    """Each paper whose published tables print an effect size says which convention they follow, and the
    file names one that eatlas.weat computes."""
    import csv

    from eatlas.paths import data_root
    from eatlas.registry.published import read_conventions

    root = data_root()
    papers = {p.parent.parent.name for p in (root / "registry").glob("*/published/*.csv")
              if any(r["statistic"] == "effect_size" and r["missing"] != "true"
                     for r in csv.DictReader(p.open(encoding="utf-8-sig")))}
    assert {"may2019", "tan2019", "wolfe2024", "weathub2023"} <= papers
    stated = {r["paper"]: r for r in read_conventions(types.SimpleNamespace(root=root))}
    assert papers <= set(stated), f"no conventions.yaml for {sorted(papers - set(stated))}"
    assert {p: stated[p]["convention"] for p in ("may2019", "tan2019", "wolfe2024", "weathub2023")} == {
        "may2019": "caliskan", "tan2019": "caliskan", "wolfe2024": "mleat", "weathub2023": "weathub"}
    assert all(stated[p]["d_denominator"] == "sample" for p in ("may2019", "tan2019", "wolfe2024", "weathub2023"))
    # CA-WEAT's code divides by numpy's default np.std (ddof 0): its numbers pair only with a population-d run
    assert (stated["espanabonet2022"]["convention"], stated["espanabonet2022"]["d_denominator"]) == (
        "wefe", "population")


def test_a_wrong_conventions_file_is_named_with_its_field(tmp_path):
    from eatlas.registry.published import read_conventions

    f = tmp_path / "registry" / "smith2025" / "published" / "conventions.yaml"
    f.parent.mkdir(parents=True)
    reg = types.SimpleNamespace(root=tmp_path)
    f.write_text("paper: smith2025\nconvention: population\nstated_in: their weat.py\n", encoding="utf-8")
    with pytest.raises(EatlasError) as e:
        read_conventions(reg)
    assert e.value.file == "registry/smith2025/published/conventions.yaml" and e.value.field == "convention"
    assert "caliskan" in e.value.hint
    f.write_text("paper: smith2024\nconvention: wefe\nstated_in: their weat.py\n", encoding="utf-8")
    with pytest.raises(EatlasError) as e:
        read_conventions(reg)
    assert e.value.field == "paper"
    f.write_text("paper: smith2025\nconvention: wefe\nstated_in: ''\n", encoding="utf-8")
    with pytest.raises(EatlasError) as e:
        read_conventions(reg)
    assert e.value.field == "stated_in"
    f.write_text("paper: smith2025\nconvention: wefe\nstated_in: WEFE 1.0.1\n", encoding="utf-8")
    assert read_conventions(reg)[0]["d_denominator"] == "population"


# ------------------------------------------------------------------------------------------ runs and the store
@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A default run and a --convention wefe run of a tiny static model (family glove, so that
    reproduction_loose sets it beside May et al.'s and ML-EAT's GloVe numbers), both on weat1 and weat6; and a
    --convention weathub run of it as family distilbert on WEATHub's English weat11 (printed with p-values)."""
    from eatlas.cli import main
    from tests.static_models import write_static_model

    tmp = tmp_path_factory.mktemp("conventions")
    model = write_static_model(tmp / "m.txt", seed=0, tests=("weat1", "weat6", "weathub_en_weat11"))
    db = tmp / "r.duckdb"
    common = ["--db", str(db), "run", "--model", str(model), "--levels", "word", "--n-samples", "1000",
              "--no-cache", "--quiet"]
    glove = [*common, "--family", "glove", "--tests", "weat1", "weat6"]
    assert main(glove) == 0
    assert main([*glove, "--convention", "wefe"]) == 0
    assert main([*common, "--family", "distilbert", "--tests", "weathub_en_weat11", "--convention", "weathub"]) == 0
    return db


def test_a_runs_convention_is_stored_and_its_numbers_follow_it(two_runs):
    """results.convention says which convention each row's d and p follow; the wefe run's d is the default's
    times sqrt(N/(N-1)), and so is each leave-one-out d (with the N of what is left), so delta compares like
    with like."""
    import duckdb

    con = duckdb.connect(str(two_runs), read_only=True)
    rows = con.execute("SELECT r.convention, r.test_id, r.effect_size, r.n_x + r.n_y, r.d_loo_min, r.run_id "
                       "FROM results r JOIN runs USING (run_id) ORDER BY started_at, test_id").fetchall()
    assert [(r[0], r[1]) for r in rows] == [("caliskan", "weat1"), ("caliskan", "weat6"), ("wefe", "weat1"),
                                            ("wefe", "weat6"), ("weathub", "weathub_en_weat11")]
    for base, wefe in zip(rows[:2], rows[2:]):
        n = base[3]
        assert wefe[2] == pytest.approx(base[2] * math.sqrt(n / (n - 1)), rel=1e-12)
    inf = con.execute("SELECT i.role, i.item, i.d_without, i.delta, r.convention, r.effect_size, r.n_x + r.n_y "
                      "FROM influence i JOIN results r USING (run_id, test_id, level) WHERE i.test_id = 'weat6'"
                      ).fetchall()
    base = {(r[0], r[1]): r for r in inf if r[4] == "caliskan"}
    for role, item, d, delta, conv, es, n in inf:
        if conv != "wefe":
            continue
        left = n - (role in ("x", "y"))
        assert d == pytest.approx(base[role, item][2] * math.sqrt(left / (left - 1)), rel=1e-12)
        assert delta == pytest.approx(d - es, rel=1e-9, abs=1e-12)


def test_the_reproduction_views_pair_only_a_d_of_the_papers_denominator(two_runs):
    """Every paper in the registry divides by the sample standard deviation: the default run is set beside
    their numbers, with both conventions shown; the wefe run (population standard deviation) beside none."""
    import duckdb

    con = duckdb.connect(str(two_runs), read_only=True)
    rows = con.execute("SELECT DISTINCT paper, convention, published_convention FROM reproduction_loose "
                       "ORDER BY paper").fetchall()
    assert ("may2019", "caliskan", "caliskan") in rows and ("wolfe2024", "caliskan", "mleat") in rows
    assert ("weathub2023", "weathub", "weathub") in rows
    assert {r[1] for r in rows} == {"caliskan", "weathub"}
    assert con.execute("SELECT count(*) FROM published_conventions").fetchone()[0] >= 4
    # WEATHub prints d (p): each of its d comes with its p beside ours, both counted the same way
    pv = con.execute("SELECT count(*), count(published_p_value), min(published_p_value), max(published_p_value) "
                     "FROM reproduction_loose WHERE paper = 'weathub2023'").fetchone()
    assert pv[0] > 0 and pv[1] == pv[0] and 0 <= pv[2] <= pv[3] <= 1
    assert con.execute("SELECT count(published_p_value) FROM reproduction_loose WHERE paper = 'may2019'"
                       ).fetchone()[0] == 0


def test_a_convention_that_means_nothing_with_the_options_is_refused_in_one_line(tmp_path, capsys):
    from eatlas.cli import main

    db = tmp_path / "r.duckdb"
    base = ["--db", str(db), "run", "--tests", "weat6", "--levels", "word", "--quiet"]
    for extra in (["--convention", "wefe", "--parametric"], ["--convention", "mleat", "--alternative", "less"],
                  ["--method", "mleat", "--convention", "wefe", "--no-maps"]):
        capsys.readouterr()
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert "--convention" in err and len(err.splitlines()) == 1, err
    assert not db.exists()


def test_validate_names_a_wrong_conventions_file_and_catalog_leaves_it_unindexed(mini, capsys):
    """`eatlas validate` reads every conventions.yaml (an unknown convention fails with file and field); the
    file is not a catalog entry, so a correct one is not reported as unindexed."""
    from eatlas.cli import main

    f = mini.root / "registry" / "testpaper" / "published" / "conventions.yaml"
    f.parent.mkdir(parents=True)
    f.write_text("paper: testpaper\nconvention: wefe\nstated_in: their weat.py\n", encoding="utf-8")
    assert main(["--registry", str(mini.root), "validate"]) == 0
    capsys.readouterr()
    f.write_text("paper: testpaper\nconvention: cohen\nstated_in: their weat.py\n", encoding="utf-8")
    assert main(["--registry", str(mini.root), "validate"]) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert "registry/testpaper/published/conventions.yaml" in text and "convention" in text and "cohen" in text


def test_the_line_after_a_wefe_run_says_why_nothing_pairs():
    from eatlas.cli.run_summary import pairing_line

    counts = {"results": 2, "same_model": 0, "loose_only": 0}
    line = pairing_line(counts, "m", {"wefe"})
    assert "population standard deviation" in line and "none of its 2 result(s)" in line
    assert "population" not in pairing_line(counts, "m", {"caliskan"})
