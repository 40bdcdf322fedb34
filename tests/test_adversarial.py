"""Nothing from a shared folder changes a result or escapes its folder: the adversarial classes, each as an
attacker would try it.

- a poisoned shared cache: the parsed registry's entry edited (its checksums recomputed) and a validity marker
  planted, a cache folder others can write, one owned by another user, a poisoned embedding shard: the true
  words and vectors, or a one-line refusal;
- a folder of the output swapped for a symbolic link while `site` writes: nothing written through it;
- a hard link under `--maps` (a backup made with `cp -al`): the linked file is left as it was;
- a results file whose own view would answer for one of EATlas's (a table it needs left out): EATlas's views
  are made from EATlas's text, nothing of a local file read, no absolute path of the reader in any output;
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from eatlas.registry import base as registry
from tests.cli_helpers import cli


def _cache_file(mini) -> Path:
    from eatlas.registry import cache
    return cache.folder() / f"{cache.catalog_key(mini.root)}.jsonl"


def _forge(path: Path, old: bytes, new: bytes) -> None:
    """Edit an entry as someone with write access to the cache would: the word changed and every checksum a
    reader could recompute recomputed (offsets, sizes, plain digests)."""
    from tests.registry_cache_forge import forge
    path.write_bytes(forge(path.read_bytes(), old, new))


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    registry._DEFAULT.clear()
    yield tmp_path / "cache"
    registry._DEFAULT.clear()


def test_a_poisoned_registry_cache_entry_and_marker_give_the_true_words(mini, own_cache, capsys):
    from eatlas.registry import cache
    reg = registry.load_registry(mini.root)
    cache.mark_valid(reg, ["t1"], {})
    assert cache.known_valid(reg, ["t1"])
    path = _cache_file(mini)
    _forge(path, b'"tulip"', b'"tulxp"')
    for planted in (b"", b'{"files": {}, "seal": "0"}'):      # markers planted for tests never checked
        cache._marker(reg, cache._tests_name(["t2"])).write_bytes(planted)
        assert not cache.known_valid(reg, ["t2"])
    registry._DEFAULT.clear()
    rc, out, err = cli(capsys, "--registry", mini.root, "show", "roses")
    assert rc == 0, err
    assert "tulip" in out and "tulxp" not in out
    reg = registry.load_registry(mini.root)
    assert [i.text for i in reg.sets["roses"].items] == ["rose", "tulip", "daisy", "lily"]
    assert not cache.known_valid(reg, ["t2"])


def test_an_entry_whose_source_file_changed_is_read_from_the_file(mini, own_cache):
    """An entry sealed for the files as they were is not used once its own file differs (a cache made stale by a
    kept digest of the folder's state): the file as it is decides."""
    from eatlas.registry import cache
    registry.load_registry(mini.root)
    key = cache.catalog_key(mini.root)
    p = mini.root / "registry" / "sets" / "roses.yaml"
    if not p.exists():
        p = next(mini.root.rglob("roses.yaml"))
    p.write_text(p.read_text(encoding="utf-8").replace("tulip", "tulipa"), encoding="utf-8")
    data = (cache.folder() / f"{key}.jsonl").read_bytes()
    reg = cache._decode(key, data, registry.Registry.from_view)
    assert reg is not None
    assert "tulipa" in [i.text for i in reg.sets["roses"].items]


@pytest.mark.parametrize("how", ["group-writable", "another user"])
def test_a_cache_folder_others_can_write_is_refused_in_one_line(mini, own_cache, capsys, how):
    from eatlas.registry import cache
    registry.load_registry(mini.root)
    path = _cache_file(mini)
    _forge(path, b'"tulip"', b'"tulxp"')
    if how == "group-writable":
        os.chmod(cache.folder(), 0o775)
        want = "writable by group"
    else:
        if os.geteuid() != 0:
            pytest.skip("changing a folder's owner needs root")
        os.chown(cache.folder(), 65534, 65534)
        want = "owned by another user"
    registry._DEFAULT.clear()
    rc, out, err = cli(capsys, "--registry", mini.root, "show", "roses")
    assert rc == 0 and "tulip" in out and "tulxp" not in out
    notes = [line for line in err.splitlines() if "registry cache" in line]
    assert len(notes) == 1 and want in notes[0] and str(cache.folder()) in notes[0], err


def test_a_poisoned_embedding_shard_is_never_read(tmp_path):
    import numpy as np

    from eatlas.encoders.cache import EmbeddingCache
    c = EmbeddingCache(tmp_path / "cache")
    key = {"model": "m"}
    c.put(key, [("rose", None)], np.ones((1, 3), np.float32), np.array([False]))
    assert c.get(key, [("rose", None)])[("rose", None)][0].tolist() == [1.0, 1.0, 1.0]
    shard = next((tmp_path / "cache").glob("*/*.npz"))
    with np.load(shard) as z:
        arrays = dict(z)
    arrays["vectors"] = np.full((1, 3), 9.0, np.float32)       # poisoned, the seal kept
    with open(shard, "wb") as f:
        np.savez(f, **arrays)
    assert c.get(key, [("rose", None)]) == {}
    os.chmod(shard.parent, 0o777)       # and a settings folder anyone can write: refused
    c.put(key, [("rose", None)], np.ones((1, 3), np.float32), np.array([False]))
    assert c.get(key, [("rose", None)]) == {}


# ----------------------------------------------------------------------------- writers
def test_a_folder_swapped_for_a_link_during_the_site_gets_nothing(mini, tmp_path, capsys, monkeypatch):
    from eatlas.outputs import site
    from tests.test_bad_input import _stored_run
    db = _stored_run(capsys, mini, tmp_path)
    out, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    victim = elsewhere / "t1.html"
    victim.write_text("the user's own file\n")
    real, calls = site._test_context, []

    def swap_then_go_on(*a, **kw):       # between the check of every path and the write of the first test page
        calls.append(1)
        if len(calls) == 1:
            if (out / "tests").is_dir():
                (out / "tests").rename(tmp_path / "moved")
            (out / "tests").symlink_to(elsewhere, target_is_directory=True)
        return real(*a, **kw)
    monkeypatch.setattr(site, "_test_context", swap_then_go_on)
    rc, stdout, err = cli(capsys, "--registry", mini.root, "site", out, "--db", db, "--figures", "none")
    assert calls and rc != 0
    assert "Traceback" not in err and "symbolic link" in err, err
    assert sorted(p.name for p in elsewhere.iterdir()) == ["t1.html"]
    assert victim.read_text() == "the user's own file\n"


def test_a_hard_link_under_maps_is_replaced_never_drawn_through(mini, tmp_path, capsys):
    from tests.test_data_loss import vectors
    model = vectors(tmp_path / "vec.txt")
    maps = tmp_path / "maps"
    args = ("--registry", mini.root, "--db", tmp_path / "r.duckdb", "run", "--model", model, "--tests", "t1",
            "--levels", "word", "--n-samples", "200", "--quiet", "--method", "mleat", "--maps", maps)
    rc, _, err = cli(capsys, *args)
    assert rc == 0, err
    backup = tmp_path / "backup"
    backup.mkdir()
    before = {}
    for p in maps.iterdir():        # `cp -al maps backup`
        os.link(p, backup / p.name)
        before[p.name] = p.read_bytes()
    rc, _, err = cli(capsys, *args[:-1], maps, "--seed", "7")
    assert rc == 0, err
    for name, data in before.items():
        assert (backup / name).read_bytes() == data, name
        if name.endswith((".png", ".svg")):
            assert not os.path.samefile(backup / name, maps / name), name


def test_write_under_refuses_the_database_by_identity(tmp_path):
    from eatlas import files
    db = tmp_path / "r.duckdb"
    db.write_bytes(b"the database")
    (tmp_path / "out").mkdir()
    os.link(db, tmp_path / "out" / "page.html")      # the database under another name
    st = os.stat(db)
    fd = files.open_dir(tmp_path / "out")
    try:
        with pytest.raises(OSError, match="results database"):
            files.write_under(fd, "page.html", lambda p: Path(p).write_text("x"), shown=tmp_path / "out",
                              protect=frozenset({(st.st_dev, st.st_ino)}))
    finally:
        os.close(fd)
    assert db.read_bytes() == b"the database"
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["page.html"]      # no temporary folder left


# ----------------------------------------------------------------------------- foreign views, hostile text
SECRET = "S3CRET-of-the-reader-77ab"


def _outputs_bytes(folder: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in folder.rglob("*") if p.is_file()]


def test_a_results_file_keeping_its_own_view_is_read_through_eatlas_views(mini, tmp_path, capsys):
    """The file leaves out a table EATlas's reproduction view needs (before, that view's own definition in the
    file then answered, reading a local file and the reader's paths): EATlas's views are made all the same."""
    import duckdb

    from tests.test_bad_input import _stored_run
    db = _stored_run(capsys, mini, tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE published_results")
    con.execute(f"CREATE OR REPLACE VIEW reproduction AS SELECT content AS test_id, "
                f"current_setting('home_directory') AS home FROM read_text('{secret}')")
    con.close()
    out = tmp_path / "OUT"
    rc, stdout, err = cli(capsys, "--registry", mini.root, "--db", db, "report", out / "r.html")
    assert rc == 0 and "Traceback" not in err, err
    rc, stdout2, err2 = cli(capsys, "--registry", mini.root, "site", out / "site", "--db", db, "--figures", "none")
    assert rc == 0 and "Traceback" not in err2, err2
    for p, data in _outputs_bytes(out):
        assert SECRET.encode() not in data, p
        if p.suffix in (".parquet", ".arrow"):
            assert str(tmp_path).encode() not in data and str(Path.home()).encode() not in data, p


def test_a_forged_yaml_parse_for_the_true_bytes_is_never_used(mini, own_cache, monkeypatch):
    """The YAML parse cache is keyed by the file's bytes, which anyone can hash: a line written for the true
    bytes of a set's file, with another parse (edited words) and no seal of the user's key, is not used; nor is
    a cache file another user could write."""
    import stat

    from eatlas.registry import parsecache
    f = Path(mini.root) / "registry" / "mini" / "roses.yaml"
    if not f.is_file():
        f = next(p for p in Path(mini.root).rglob("*.yaml") if b"tulip" in p.read_bytes())
    raw = f.read_bytes()
    monkeypatch.setattr(parsecache, "_mem", None)
    monkeypatch.setattr(parsecache, "_new", {})
    monkeypatch.setattr(parsecache, "_direct", parsecache.DIRECT)     # past a run's first few files: the cache serves
    true = registry.read_yaml(f)
    key = hashlib.blake2b(raw, digest_size=20).hexdigest()
    forged = json.dumps(json.loads(json.dumps(true, default=str)), ensure_ascii=False).replace("tulip", "tulxp")
    p = parsecache.path()
    p.parent.mkdir(parents=True, exist_ok=True)
    for line in (f"{key}\t{forged}", f"{key}\t{'0' * 32}\t{forged}", f"{key}\t\t{forged}"):   # unsealed, forged seal
        p.write_text(line + "\n", encoding="utf-8")
        parsecache._mem = None
        assert registry.read_yaml(f) == true
    parsecache._mem = None
    registry.read_yaml(f)
    parsecache._save()                                  # a sealed line for the true parse
    p.chmod(p.stat().st_mode | stat.S_IWOTH)            # ...in a file others can write: not read at all
    parsecache._mem = None
    assert parsecache._load() == {}


def test_report_and_site_on_a_20_mb_model_name_stop_in_one_line_and_are_bounded_when_allowed(mini, tmp_path,
                                                                                             capsys, monkeypatch):
    """A results file from elsewhere with a 20 MB model name holding a bidi override: report and site refuse it in
    one line, before any work, naming the column; allowed with EATLAS_MAX_TEXT, the report is made in bounded time
    with the name escaped and cut (before: past 400 s)."""
    import time

    import duckdb

    from tests.test_bad_input import _stored_run
    db = _stored_run(capsys, mini, tmp_path)
    con = duckdb.connect(str(db))
    con.execute("UPDATE runs SET model = 'evil\u202eledom' || repeat('x', 20000000)")
    con.close()
    out = tmp_path / "OUT"
    for argv in (["report", out / "r.html"], ["site", out / "site", "--figures", "none"]):
        start = time.monotonic()
        rc, stdout, err = cli(capsys, "--registry", mini.root, "--db", db, *argv)
        assert rc == 2 and "Traceback" not in err and time.monotonic() - start < 60, err
        assert "runs.model holds a value of 20,000,010 characters" in err and len(err.strip().splitlines()) == 1
    assert not out.exists() or _outputs_bytes(out) == []
    monkeypatch.setenv("EATLAS_MAX_TEXT", "30000000")
    start = time.monotonic()
    rc, stdout, err = cli(capsys, "--registry", mini.root, "--db", db, "report", out / "r.html")
    assert rc == 0 and "Traceback" not in err and time.monotonic() - start < 60, err
    html = (out / "r.html").read_text(encoding="utf-8")
    assert "\u202e" not in html and "\\u202e" in html and len(html) < 2_000_000
