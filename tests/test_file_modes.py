"""Files EATlas writes for the user get the permissions the user's umask gives (issue 21), as ``open()`` and
``mkdir`` would: a dataset published into a shared folder or onto a web server is readable there. Only the
parsed-registry cache (pickles) stays private to its owner.

Each case sets the process's umask, runs the commands a newcomer runs (run with EAT-Maps, report, publish,
export, results export) on the small registry of conftest, and restores the umask.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from eatlas import files
from tests.test_data_loss import cli, vectors

# umask -> (mode of a file, mode of a folder)
CASES = {0o022: (0o644, 0o755), 0o077: (0o600, 0o700), 0o002: (0o664, 0o775)}


@pytest.fixture
def umask():
    """Set the process's umask for the test; the old one is back afterwards whatever happens."""
    old = os.umask(0o022)
    os.umask(old)
    try:
        yield os.umask
    finally:
        os.umask(old)


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.lstat().st_mode)


def _wrong_modes(top: Path, file_mode: int, dir_mode: int) -> dict[str, str]:
    """Every file and folder under ``top`` (``top`` too) whose mode is not the one expected."""
    out = {}
    for p in [top, *top.rglob("*")]:
        want = dir_mode if p.is_dir() else file_mode
        if _mode(p) != want:
            out[p.relative_to(top.parent).as_posix()] = oct(_mode(p))
    return out


@pytest.mark.parametrize("mask", list(CASES), ids=oct)      # 002: DuckDB's partition folders need fixing
def test_every_output_gets_the_mode_the_umask_gives(mini, tmp_path, capsys, monkeypatch, umask, mask):
    file_mode, dir_mode = CASES[mask]
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    model = vectors(tmp_path / "vec.txt")
    umask(mask)
    assert files.umask() == mask and files.file_mode() == file_mode and files.dir_mode() == dir_mode
    out, db = tmp_path / "out", tmp_path / "out" / "store" / "R.duckdb"
    db.parent.mkdir(parents=True)
    base = ("--registry", mini.root, "--db", db)
    steps = [("run", "--model", model, "--tests", "t1", "--levels", "word", "--n-samples", "200", "--quiet"),
             ("run", "--model", model, "--tests", "t1", "--levels", "word", "--n-samples", "200", "--quiet",
              "--method", "mleat", "--maps", out / "maps"),
             ("report", out / "reports" / "report.html"),
             ("publish", out / "dataset"),
             ("export", out / "csv", "--format", "csv"),
             ("export", out / "sent-bias", "--format", "sent-bias"),
             ("results", "export", out / "results")]
    for step in steps:
        rc, _, err = cli(capsys, *base, *step)
        assert rc == 0, (step, err)
    written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {"maps/grid.png", "maps/grid.svg", "maps/.eatlas-manifest.json", "reports/report.html",
            "dataset/data/t1/test.parquet", "dataset/README.md",
            "csv/t1.csv", "sent-bias/t1.jsonl", "results/manifest.json"} <= written, written
    assert [w for w in written if w.startswith("reports/")] == ["reports/report.html"]    # a report leaves no manifest
    assert any(w.startswith("results/results/model=") for w in written)     # DuckDB's partition folders too
    assert not [w for w in written if ".eatlas-tmp-" in w]
    assert _wrong_modes(out, file_mode, dir_mode) == {}
    # the caches follow the umask, less write for group and others (eatlas.trust: a cache others could write is
    # not trusted): the vectors, and the parsed registry (plain JSON, no pickle to run code)
    shards = list((tmp_path / "cache").glob("*/*.npz"))
    parsed = list((tmp_path / "cache" / "registry").glob("*.jsonl"))
    assert shards and parsed and not list((tmp_path / "cache").rglob("*.pickle"))
    assert {_mode(p) for p in shards} == {file_mode & ~0o022}
    assert {_mode(p) for p in parsed} == {file_mode & ~0o022}
    assert {_mode(p.parent) for p in shards + parsed} == {dir_mode & ~0o022}


def test_a_file_written_again_takes_the_mode_of_the_umask_now(mini, tmp_path, capsys, umask):
    """A folder published under umask 077 (0o600 files) and published again under 022 is readable by all."""
    out = tmp_path / "ds"
    umask(0o077)
    assert cli(capsys, "--registry", mini.root, "publish", out)[0] == 0
    assert _wrong_modes(out, 0o600, 0o700) == {}
    umask(0o022)
    assert cli(capsys, "--registry", mini.root, "publish", out)[0] == 0
    assert _wrong_modes(out / "data" / "t1", 0o644, 0o700) == {}      # folders that exist keep their mode
    assert _mode(out / "README.md") == _mode(out / ".eatlas-manifest.json") == 0o644


def test_write_atomic_follows_the_umask_and_cleans_up_after_a_failure(tmp_path, umask):
    umask(0o002)
    dest = files.write_text(tmp_path / "a.txt", "one\n")
    assert _mode(dest) == 0o664 and dest.read_text() == "one\n"
    assert _mode(files.write_text(tmp_path / "p.bin", "x", private=True)) == 0o600
    assert _mode(files.new_temp_dir(tmp_path, ".t-")) == 0o775

    def fails(tmp):
        Path(tmp).write_text("half")
        raise KeyboardInterrupt        # an interrupt halfway through the write

    with pytest.raises(KeyboardInterrupt):
        files.write_atomic(dest, fails, prefix=".eatlas-tmp-")
    assert dest.read_text() == "one\n"                       # the old file, untouched
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["a.txt", "p.bin"]


def test_publish_leaves_no_temporary_file_when_interrupted(mini, tmp_path, monkeypatch):
    """A publish interrupted while writing a file (Ctrl-C) removes its ``.eatlas-tmp-*`` file; the files it
    wrote before stay listed in the manifest."""
    import eatlas.outputs.publish as publish_mod

    real, calls = publish_mod.pq.write_table, []

    def write_then_stop(table, where, *a, **kw):
        calls.append(where)
        real(table, where, *a, **kw)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(publish_mod.pq, "write_table", write_then_stop)
    out = tmp_path / "ds"
    with pytest.raises(KeyboardInterrupt):
        publish_mod.publish(mini.load(), out)
    # written into a private temporary folder (eatlas.files.write_under: through /proc/self/fd where there is one)
    assert len(calls) == 2 and (".eatlas-tmp-" in str(calls[1]) or str(calls[1]).startswith("/proc/self/fd/"))
    assert not [p for p in out.rglob("*") if p.name.startswith(".eatlas-tmp-")]
    assert [p.relative_to(out).as_posix() for p in out.rglob("*.parquet")] == ["data/t1/test.parquet"]
