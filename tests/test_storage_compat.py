"""The results file opens in the DuckDB 1.x clients researchers have (storage compatibility)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eatlas.store import STORAGE_VERSION, connect, init_schema

# A DuckDB 1.x wheel installed into a throwaway folder (pip install --target DIR duckdb==1.4.1); the test
# runs it in a subprocess so it never meets the installed duckdb.
OLD = os.environ.get("EATLAS_DUCKDB1_TARGET", "/tmp/duck14t")


def toy_encoder():
    import numpy as np

    from eatlas.encoders import StaticEncoder

    words = "rose tulip daisy lily ant moth wasp flea happy gentle lucky honest ugly rotten sick evil".split()
    vecs = np.random.default_rng(0).normal(size=(len(words), 8))
    return StaticEncoder(words, vecs, model_id="toy", family="test", fingerprint="toy", lowercase=False)


def test_a_new_results_file_is_written_in_a_1x_storage_format(tmp_path):
    db = tmp_path / "r.duckdb"
    con = connect(db)
    init_schema(con)
    con.close()
    con = connect(db, read_only=True)
    try:
        got = con.execute("SELECT tags FROM duckdb_databases() WHERE database_name = 'r'").fetchone()
    finally:
        con.close()
    assert STORAGE_VERSION.startswith("v1.")
    assert "v1." in str(got), got


@pytest.mark.skipif(not (Path(OLD) / "duckdb").is_dir(), reason=f"no DuckDB 1.x in {OLD}: "
                    "pip download duckdb==1.4.1 && pip install --no-deps --target DIR the wheel")
def test_a_duckdb_1x_client_reads_the_results_of_a_run(tmp_path, mini):
    from eatlas.run.runner import RunConfig, run

    db = tmp_path / "r.duckdb"
    run(RunConfig(tests=["t1"], levels=("word",), n_samples=200), db=db, registry=mini.root, encoder=toy_encoder())
    run(RunConfig(tests=["t1"], levels=("word",), n_samples=200, seed=1), db=db, registry=mini.root,
        encoder=toy_encoder())      # a file opened again keeps its format
    code = ("import duckdb, sys; assert duckdb.__version__.startswith('1.'), duckdb.__version__;"
            "c = duckdb.connect(sys.argv[1], read_only=True);"
            "print(duckdb.__version__, c.execute('SELECT count(*) FROM results').fetchone()[0],"
            " c.execute('SELECT count(*) FROM run_inputs').fetchone()[0])")
    out = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": OLD}, timeout=120)
    assert out.returncode == 0, out.stderr
    version, n_results, n_inputs = out.stdout.split()
    # per run: 1 test, 4 sets, 1 template
    assert version.startswith("1.") and int(n_results) == 2 and int(n_inputs) == 12
