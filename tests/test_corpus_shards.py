"""CEAT corpora are read as what they are (issue 24, "CEAT corpora"), a catalogue in the style of
tests/test_bad_input.py: one reader for a shard whether the corpus is one file or many, local or on Ray; every
shard that is not what its kind needs is a one-line error naming the shard and the line or column, and
nothing is written.

- a single .jsonl file is read as JSON Lines (the CES of the same lines as a text file), so is a single .txt.gz
  (decompressed), each the same as the lines split over shards;
- a JSONL line without "text", with an object, a number or a list as "text", nested too deeply, not an object;
  also on Ray (one line, no RayTaskError);
- a parquet shard whose text column holds numbers or lists, a truncated parquet file;
- a stimulus in a 4 MB line: its context is a window around it that fits the model, never "no contexts".
"""
from __future__ import annotations

import gzip
import json

import duckdb
import numpy as np
import pandas as pd
import pytest

from eatlas.cli import main
from eatlas.distributed.ceat_corpus import corpus_contexts
from eatlas.errors import EatlasError

FLOWERS, INSECTS = ["aster", "clover", "rose", "tulip"], ["ant", "flea", "moth", "wasp"]
GOOD, BAD = ["love", "peace", "cheer", "joy"], ["grief", "agony", "filth", "hatred"]


def lines(n=120, seed=1) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"the {rng.choice(FLOWERS)} brought {rng.choice(GOOD)} and a {rng.choice(INSECTS)} brought "
            f"{rng.choice(BAD)} {i}" for i in range(n)]


def ceat(tiny_bert, db, corpus, *extra) -> int:
    return main(["--db", str(db), "run", "--method", "ceat", "--model", str(tiny_bert), "--tests", "weat1",
                 "--corpus", *map(str, corpus), "--n-draws", "200", "--max-contexts", "5", "--quiet", *extra])


def outcome(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return (con.execute("SELECT status, ces, se, missing FROM ceat_results").fetchall(),
                con.execute("SELECT stimulus, n_contexts FROM ceat_contexts ORDER BY ALL").fetchall(),
                con.execute("SELECT json_extract(settings, '$.corpus_lines')::INT FROM runs").fetchall())
    finally:
        con.close()


def refused(capsys, rc: int, db, *needles: str) -> str:
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "RayTaskError" not in err
    for n in needles:
        assert n in err, f"{n!r} not in {err!r}"
    assert not db.exists()          # nothing written
    return err


def jsonl(path, docs) -> None:
    path.write_text("".join((d if isinstance(d, str) else json.dumps(d)) + "\n" for d in docs), encoding="utf-8")


# ----------------------------------------------------------------------------- one reader, one sample
def test_a_single_jsonl_or_gzip_file_is_read_as_what_it_is(tiny_bert, tmp_path):
    text = lines()
    (tmp_path / "c.txt").write_text("\n".join(text) + "\n", encoding="utf-8")
    jsonl(tmp_path / "c.jsonl", [{"text": t, "id": i} for i, t in enumerate(text)])
    (tmp_path / "c.txt.gz").write_bytes(gzip.compress(("\n".join(text) + "\n").encode()))
    (tmp_path / "s1.txt").write_text("\n".join(text[:50]), encoding="utf-8")
    jsonl(tmp_path / "s2.jsonl", [{"text": t} for t in text[50:]])
    runs = {}
    for name, corpus in {"txt": ["c.txt"], "jsonl": ["c.jsonl"], "gz": ["c.txt.gz"],
                         "shards": ["s1.txt", "s2.jsonl"]}.items():
        db = tmp_path / f"{name}.duckdb"
        assert ceat(tiny_bert, db, [tmp_path / c for c in corpus]) == 0
        runs[name] = outcome(db)
    assert runs["txt"][0][0][0] == "ok" and runs["txt"][2] == [(120,)]
    assert runs["jsonl"] == runs["txt"] == runs["gz"] == runs["shards"]


# ----------------------------------------------------------------------------- JSON Lines
@pytest.mark.parametrize("doc, needles", [
    ({"body": "a rose"}, ("line 2 has no key 'text'", "its keys: body", "--corpus-column")),
    ({"text": {"a": "rose"}}, ("line 2: 'text' is a JSON object, not a string",)),
    ({"text": 7}, ("line 2: 'text' is a JSON number, not a string",)),
    ({"text": ["a rose"]}, ("line 2: 'text' is a JSON array, not a string",)),
    ("[" * 100_000 + "]" * 100_000, ("line 2 is JSON nested too deeply",)),
    ('"a rose"', ("line 2 is a JSON string, not an object",)),
    ("{not json", ("line 2 is not valid JSON",)),
], ids=["no-text", "object", "number", "list", "nested", "string", "broken"])
def test_a_jsonl_line_that_is_not_an_object_with_a_string_text_is_named(tiny_bert, tmp_path, capsys, doc, needles):
    shard = tmp_path / "c.jsonl"
    jsonl(shard, [{"text": "a rose and an ant"}, doc, {"text": "more"}])
    db = tmp_path / "r.duckdb"
    refused(capsys, ceat(tiny_bert, db, [shard]), db, "c.jsonl", "cannot read corpus shard", *needles)


def test_a_jsonl_shard_without_text_is_named_on_ray_too(tiny_bert, tmp_path, capsys, ray_local):
    good, bad = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    jsonl(good, [{"text": t} for t in lines(20)])
    jsonl(bad, [{"comment": t} for t in lines(20)])
    db = tmp_path / "r.duckdb"
    refused(capsys, ceat(tiny_bert, db, [good, bad], "--engine", "ray"), db, "b.jsonl", "line 1 has no key 'text'")
    pd.DataFrame({"text": list(range(5))}).to_parquet(tmp_path / "n.parquet")
    refused(capsys, ceat(tiny_bert, db, [good, tmp_path / "n.parquet"], "--engine", "ray"), db, "n.parquet",
            "column 'text' holds int64, not text")


def test_null_text_is_no_text_in_jsonl_and_parquet(tmp_path):
    jsonl(tmp_path / "a.jsonl", [{"text": "a rose"}, {"text": None}, {"text": "a rose again"}])
    pd.DataFrame({"text": ["a rose", None, "a rose again"]}).to_parquet(tmp_path / "a.parquet")
    a = corpus_contexts([tmp_path / "a.jsonl"], [("rose", True)], 5, seed=0)
    assert a == corpus_contexts([tmp_path / "a.parquet"], [("rose", True)], 5, seed=0) and a[1] == 2


# ----------------------------------------------------------------------------- parquet
@pytest.mark.parametrize("values, needle", [([1, 2, 3], "column 'text' holds int64, not text"),
                                            ([["a rose"], ["b"], []], "column 'text' holds list<element: string>")],
                         ids=["ints", "lists"])
def test_a_parquet_text_column_that_holds_no_text_is_named(tiny_bert, tmp_path, capsys, values, needle):
    pd.DataFrame({"text": values}).to_parquet(tmp_path / "c.parquet")
    db = tmp_path / "r.duckdb"
    refused(capsys, ceat(tiny_bert, db, [tmp_path / "c.parquet"]), db, "c.parquet", needle, "--corpus-column")


def test_a_truncated_parquet_file_is_named(tiny_bert, tmp_path, capsys):
    pd.DataFrame({"text": lines(200)}).to_parquet(tmp_path / "c.parquet")
    data = (tmp_path / "c.parquet").read_bytes()
    (tmp_path / "c.parquet").write_bytes(data[: len(data) // 2])
    db = tmp_path / "r.duckdb"
    refused(capsys, ceat(tiny_bert, db, [tmp_path / "c.parquet"]), db, "c.parquet",
            "not a readable parquet file (cut short or damaged)")
    with pytest.raises(EatlasError, match="not a readable parquet file"):
        corpus_contexts([tmp_path / "c.parquet", tmp_path / "c.parquet"], [("rose", True)], 5, seed=0)


def test_a_truncated_gzip_shard_and_a_non_utf8_line_are_named(tmp_path):
    gz = gzip.compress(("\n".join(lines(400)) + "\n").encode())
    (tmp_path / "c.txt.gz").write_bytes(gz[: len(gz) // 2])
    with pytest.raises(EatlasError, match=r"c.txt.gz.*cannot read corpus shard: the compressed shard is cut short"):
        corpus_contexts([tmp_path / "c.txt.gz"], [("rose", True)], 5, seed=0)
    (tmp_path / "c.txt").write_bytes(b"a rose\nan \xff ant\n")
    with pytest.raises(EatlasError, match=r"c.txt.*line 2 is not UTF-8"):
        corpus_contexts([tmp_path / "c.txt"], [("rose", True)], 5, seed=0)


# ----------------------------------------------------------------------------- long lines
def test_a_stimulus_in_a_4_mb_line_gets_a_window_that_fits_the_model(tiny_bert, tmp_path):
    filler = " ".join(["the cloud moved over the hill"] * 75_000)          # 4.1 MB, no stimulus
    text = [t.replace("aster", "rose") for t in lines()]                    # aster only in the long line
    text.insert(30, f"{filler} an aster brought love {filler}")
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(text), encoding="utf-8")
    assert len(text[30]) > 4_000_000
    db = tmp_path / "r.duckdb"
    assert ceat(tiny_bert, db, [corpus]) == 0
    res, contexts, _ = outcome(db)
    assert ("aster", 1) in contexts
    assert res[0][0] == "ok" and "X:aster" not in (res[0][3] or "").split(",")     # found, encoded, not missing


def test_the_window_of_a_long_text_fits_and_holds_the_span(tiny_bert):
    from eatlas.encoders import load_encoder

    enc = load_encoder(str(tiny_bert))
    text = "one two three " * 2000 + "a rose here " + "four five six " * 2000
    s = text.index("rose")
    window, (a, b) = enc._window(text, s, s + 4)
    assert window[a:b] == "rose" and len(enc.tokenizer(window)["input_ids"]) <= enc.max_length
    assert 100 < a and 100 < len(window) - b                          # context on both sides
    edge = "one two three " * 2000 + "rose"
    w, (a, b) = enc._window(edge, len(edge) - 4, len(edge))
    assert w[a:b] == "rose" and w.endswith("rose") and len(enc.tokenizer(w)["input_ids"]) <= enc.max_length
    r = enc.encode_spans([text, "a rose here"], [(s, s + 4), (2, 6)])
    assert not r.missing.any()
