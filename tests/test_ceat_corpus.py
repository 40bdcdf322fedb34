"""CEAT contexts at corpus scale (issue 14): one pass per shard, a sample that is the same whatever the sharding."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from eatlas.distributed.ceat_corpus import corpus_contexts, merge, scan_lines
from eatlas.errors import EatlasError
from eatlas.stats.ceat import find_contexts

WORDS = ["rose", "ant", "Rich", "all American", "fried-chicken", "fried", "Mr.", "Mr", "anther", "love"]


def corpus(n=600, seed=3):
    rng = np.random.default_rng(seed)
    vocab = ["the", "a", "rose", "roses", "ant", "anther", "rich", "Rich", "all", "American", "fried-chicken",
             "fried", "Mr.", "Mr", "love", "loved", "cloud", "ANT", "and", "ant's"]
    return [" ".join(rng.choice(vocab, size=rng.integers(3, 12))) for _ in range(n)]


@pytest.mark.parametrize("cs", [True, False])
def test_one_pass_finds_exactly_what_find_contexts_finds(cs):
    lines = corpus()
    keys = [(w, cs) for w in WORDS]
    sample, n = scan_lines(lines, keys, None, seed=0)
    assert n == len(lines)
    ref = find_contexts(lines, WORDS, case_sensitive=cs)
    for w in WORDS:
        got = sorted((t, s, e) for _, t, s, e in sample[(w, cs)])
        want = sorted((lines[i], a, b) for i, (a, b) in ref[w])
        assert got == want, w
    assert sum(len(v) for v in sample.values()) > 100


def test_sample_is_the_same_whatever_the_sharding_and_order():
    lines = corpus(1500)
    keys = [(w, True) for w in WORDS]
    whole, _ = scan_lines(lines, keys, 7, seed=5)
    for cuts in ([500, 1000], [1, 2, 1499], [750]):
        bounds = [0, *cuts, len(lines)]
        parts = [scan_lines(lines[a:b], keys, 7, seed=5)[0] for a, b in zip(bounds, bounds[1:])]
        assert merge(parts, 7) == whole
        assert merge(reversed(parts), 7) == whole
    assert all(len(v) <= 7 for v in whole.values()) and len(whole[("rose", True)]) == 7
    # another seed, another sample
    assert scan_lines(lines, keys, 7, seed=6)[0][("rose", True)] != whole[("rose", True)]


def test_sample_is_uniform():
    lines = [f"line {i} rose" for i in range(40)]
    counts = np.zeros(40)
    for seed in range(400):
        for _, t, _, _ in scan_lines(lines, [("rose", True)], 10, seed)[0][("rose", True)]:
            counts[int(t.split()[1])] += 1
    assert counts.sum() == 4000 and counts.min() > 50 and counts.max() < 160      # expected 100 each


def test_text_jsonl_and_parquet_shards_give_one_sample(tmp_path):
    lines = corpus(900)
    keys = [(w, False) for w in WORDS]
    (tmp_path / "a.txt").write_text("\n".join(lines[:300]) + "\n", encoding="utf-8")
    with open(tmp_path / "b.jsonl", "w") as f:
        for ln in lines[300:600]:
            f.write(json.dumps({"body": ln}) + "\n")
    pd.DataFrame({"body": lines[600:]}).to_parquet(tmp_path / "c.parquet")
    got, n = corpus_contexts([tmp_path / "a.txt", tmp_path / "b.jsonl", tmp_path / "c.parquet"], keys, 5, seed=1,
                             column="body")
    assert n == 900 and got == scan_lines(lines, keys, 5, seed=1)[0]


def test_an_unreadable_shard_is_named(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"rose \xff\xfe\n")
    with pytest.raises(EatlasError, match="bad.txt.*cannot read corpus shard"):
        corpus_contexts([bad], [("rose", True)], 5, seed=0)
    with pytest.raises(EatlasError, match="missing.txt.*not found"):
        corpus_contexts([tmp_path / "missing.txt"], [("rose", True)], 5, seed=0)


def test_ray_data_gives_the_local_sample(tmp_path, ray_local):
    lines = corpus(1200)
    keys = [(w, True) for w in WORDS]
    paths = []
    for i in range(3):
        p = tmp_path / f"s{i}.txt"
        p.write_text("\n".join(lines[i * 400:(i + 1) * 400]), encoding="utf-8")
        paths.append(p)
    local = corpus_contexts(paths, keys, 6, seed=2)
    distributed = corpus_contexts(paths, keys, 6, seed=2, engine="ray")
    assert distributed == local and local[1] == 1200


def _ceat_cli(tiny_bert, db, corpus, *extra):
    from eatlas.cli import main
    return main(["--db", str(db), "run", "--method", "ceat", "--model", str(tiny_bert), "--tests", "weat1",
                 "--corpus", *map(str, corpus), "--n-draws", "200", "--max-contexts", "5", "--quiet", *extra])


def _ces(db):
    import duckdb
    con = duckdb.connect(str(db), read_only=True)
    try:
        res = con.execute("SELECT ces, se, n_draws FROM ceat_results").fetchall()
        ctx = con.execute("SELECT stimulus, n_contexts FROM ceat_contexts ORDER BY ALL").fetchall()
        lines = con.execute("SELECT json_extract(settings, '$.corpus_lines')::INT FROM runs").fetchall()
        return res, ctx, lines
    finally:
        con.close()


def test_ceat_on_ray_shards_gives_the_ces_of_the_local_run_on_one_file(tiny_bert, tmp_path, ray_local):
    rng = np.random.default_rng(1)
    flowers, insects = ["aster", "clover", "rose", "tulip"], ["ant", "flea", "moth", "wasp"]
    good, bad = ["love", "peace", "cheer", "joy"], ["grief", "agony", "filth", "hatred"]
    lines = [f"the {rng.choice(flowers)} brought {rng.choice(good)} and a {rng.choice(insects)} brought "
             f"{rng.choice(bad)} {i}" for i in range(150)]
    whole = tmp_path / "corpus.txt"
    whole.write_text("\n".join(lines), encoding="utf-8")
    shards = [tmp_path / "s1.txt", tmp_path / "s2.jsonl"]
    shards[0].write_text("\n".join(lines[:70]), encoding="utf-8")
    shards[1].write_text("".join(json.dumps({"text": ln}) + "\n" for ln in lines[70:]), encoding="utf-8")
    assert _ceat_cli(tiny_bert, tmp_path / "local.duckdb", [whole]) == 0
    assert _ceat_cli(tiny_bert, tmp_path / "ray.duckdb", shards, "--engine", "ray") == 0
    local, distributed = _ces(tmp_path / "local.duckdb"), _ces(tmp_path / "ray.duckdb")
    assert local == distributed
    assert local[0][0][0] is not None and local[2] == [(150,)] and max(n for _, n in local[1]) == 5


def test_ceat_with_an_unreadable_shard_names_it_and_writes_nothing(tiny_bert, tmp_path, capsys):
    good, bad = tmp_path / "a.txt", tmp_path / "b.txt"
    good.write_text("a rose and an ant\n", encoding="utf-8")
    bad.write_bytes(b"a rose \xff\n")
    db = tmp_path / "r.duckdb"
    assert _ceat_cli(tiny_bert, db, [good, bad]) == 2
    err = capsys.readouterr().err
    assert "b.txt" in err and "cannot read corpus shard" in err and err.count("\n") == 1
    assert not db.exists()
