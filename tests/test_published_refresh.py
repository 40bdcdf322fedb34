"""Writing a run refreshes published_results from the registry's CSVs, and skips reading them when the
table already holds what the same CSVs gave (store.refresh_published)."""
import duckdb
import pytest

from eatlas.errors import EatlasError
from eatlas.store import db as store

HEADER = ",".join(store.PUBLISHED_COLUMNS)


class _Reg:
    """The part of a Registry refresh_published reads: the catalog's published entries and resolve()."""

    def __init__(self, root, files):
        self.root = root
        self.catalog = {"published": [{"id": f.split(".")[0], "file": f} for f in files]}

    def resolve(self, rel, where, obj):
        return self.root / rel


def _csv(path, *values):
    rows = [f"p,T1,r{i},c,d,{v},,false,weat1,word,m,f," for i, v in enumerate(values)]
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")


@pytest.fixture
def con():
    c = duckdb.connect()
    store.init_schema(c)
    yield c
    c.close()


def _values(con):
    return [r[0] for r in con.execute("SELECT value FROM published_results ORDER BY row_label").fetchall()]


def test_unchanged_csvs_are_not_read_again_and_a_change_is(tmp_path, con, monkeypatch):
    _csv(tmp_path / "a.csv", "1.5", "0.2")
    reg = _Reg(tmp_path, ["a.csv"])
    assert store.refresh_published(con, reg) == 2
    reads = []
    real = store.read_published
    monkeypatch.setattr(store, "read_published", lambda *a, **k: reads.append(1) or real(*a, **k))
    assert store.refresh_published(con, reg) == 2 and reads == []           # same files: nothing read
    _csv(tmp_path / "a.csv", "1.5", "0.3")                                    # same size, other value
    assert store.refresh_published(con, reg) == 2 and reads == [1]
    assert _values(con) == ["1.5", "0.3"]


def test_rows_removed_by_hand_are_restored(tmp_path, con):
    _csv(tmp_path / "a.csv", "1.5", "0.2")
    reg = _Reg(tmp_path, ["a.csv"])
    store.refresh_published(con, reg)
    con.execute("DELETE FROM published_results WHERE row_label = 'r1'")
    store.refresh_published(con, reg)
    assert _values(con) == ["1.5", "0.2"]


def test_a_new_entry_and_a_missing_file(tmp_path, con):
    _csv(tmp_path / "a.csv", "1.5")
    _csv(tmp_path / "b.csv", "0.7")
    store.refresh_published(con, _Reg(tmp_path, ["a.csv"]))
    assert store.refresh_published(con, _Reg(tmp_path, ["a.csv", "b.csv"])) == 2
    with pytest.raises(EatlasError, match="file not found"):
        store.refresh_published(con, _Reg(tmp_path, ["a.csv", "gone.csv"]))
