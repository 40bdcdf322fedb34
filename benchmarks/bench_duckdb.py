"""The results store at scale: one million result rows in a temporary DuckDB file.

Builds synthetic runs of one result per test and level of the real registry each (~7,000 runs), model
families taken in turn from the published tables and from families no paper covers, the real published_results
from the registry's CSVs, and times, best of --repeat, each query fetched in full as an Arrow table:

* ``SELECT * FROM reproduction``: our runs beside the papers' numbers (every matching row);
* a typical filtered query: one paper, one level, ordered;
* a typical aggregate: mean and spread of our-minus-published difference per test, level, family;
* the results table itself (``SELECT count(*) ... GROUP BY``), for scale.

Target: each under 200 ms. Run: python benchmarks/bench_duckdb.py [--results 1000000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import duckdb

from eatlas import store
from eatlas.registry import LEVELS, load_registry

OTHER_FAMILIES = ["llama", "mistral", "qwen", "e5", "bge", "t5", "roberta", "deberta", "xlm-roberta"]

QUERIES = {
    "SELECT * FROM reproduction": "SELECT * FROM reproduction",
    "filtered (one paper, level, ordered)":
        "SELECT test_id, model_family, published_model, row_label, our_effect_size, published_effect_size, "
        "difference FROM reproduction WHERE paper = 'may2019' AND level = 'sent' "
        "ORDER BY abs(difference) DESC LIMIT 100",
    "aggregate (per test, level, family)":
        "SELECT test_id, level, model_family, count(*) AS n, avg(difference) AS mean_diff, "
        "stddev_samp(difference) AS sd_diff, avg(CASE WHEN sign(our_effect_size) = sign(published_effect_size) "
        "THEN 1 ELSE 0 END) AS same_sign FROM reproduction GROUP BY ALL ORDER BY ALL",
    "results: per test and level (no join)":
        "SELECT test_id, level, count(*), avg(effect_size), avg(p_value) FROM results GROUP BY ALL",
}


def build(con: duckdb.DuckDBPyConnection, n_results: int, seed: int = 0) -> dict:
    reg = load_registry()
    store.init_schema(con)
    n_pub = store.refresh_published(con, reg)
    fams = [r[0] for r in con.execute("SELECT DISTINCT model_family FROM published_results "
                                      "WHERE model_family <> '' ORDER BY 1").fetchall()] + OTHER_FAMILIES
    pairs = [(t.id, lv) for t in reg.tests.values() for lv in LEVELS
             if (lv == "word" and t.level == "word") or (lv != "word" and ("sent" if lv in ("sent", "c-word")
                                                                           else "sent(u)") in t.expansions)]
    per_run = len(pairs)                   # every run: every test at every level it has (the primary key)
    n_runs = -(-n_results // per_run)
    con.execute("SELECT setseed(?)", [seed / 10])
    con.execute("CREATE TEMP TABLE fam AS SELECT unnest(?::VARCHAR[]) AS family, "
                "generate_subscripts(?::VARCHAR[], 1) - 1 AS i", [fams, fams])
    con.execute("CREATE TEMP TABLE pair AS SELECT unnest(?::VARCHAR[]) AS test_id, unnest(?::VARCHAR[]) AS level, "
                "generate_subscripts(?::VARCHAR[], 1) - 1 AS i",
                [[p[0] for p in pairs], [p[1] for p in pairs], [p[0] for p in pairs]])
    con.execute(f"""
        INSERT INTO runs (run_id, method, model, model_fingerprint, model_family, pooling, layer, seed, n_samples,
                          alpha, levels, tests, started_at, finished_at, eatlas_version, package_versions, registry,
                          settings)
        SELECT 'run-' || r, 'weat', 'model-' || (r % 97), 'sha256:' || md5(r::VARCHAR)[:16], f.family, 'mean', '-1',
               r, 100000, 0.01, ['word', 'sent'], [], TIMESTAMP '2026-01-01' + INTERVAL (r) MINUTE,
               TIMESTAMP '2026-01-01' + INTERVAL (r) MINUTE + INTERVAL 3 MINUTE, '0.1.0', '{{}}', '{{}}', '{{}}'
        FROM range({n_runs}) t(r) JOIN fam f ON f.i = r % {len(fams)}""")
    con.execute(f"""
        INSERT INTO results (run_id, test_id, test_version, level, model, pooling, layer, status, reason,
                             effect_size, p_value, exact, n_partitions, parametric, n_x, n_y, n_a, n_b,
                             holm_significant, template, truncation_seed, n_dropped, dropped)
        SELECT 'run-' || (k // {per_run}), p.test_id, '1.0.0', p.level, 'model-' || ((k // {per_run}) % 97), 'mean',
               '-1', CASE WHEN k % 50 = 0 THEN 'not_run' ELSE 'ok' END, NULL, random() * 4 - 2, random(), false,
               100000, false, 25, 25, 25, 25, random() < 0.3, NULL, NULL, 0, '{{}}'
        FROM range({n_results}) t(k) JOIN pair p ON p.i = k % {per_run}""")
    from eatlas.encoders import identity
    t0 = time.perf_counter()
    identity.refresh(con, reg)          # which printed model each run is (model_matches), as a run's write does
    print(f"matched {n_runs:,} runs with the printed models in {time.perf_counter() - t0:.2f} s")
    return {"published": n_pub, "families": len(fams), "pairs": len(pairs), "runs": n_runs}


def timed(con, sql: str, repeat: int) -> tuple[float, int]:
    best, rows = float("inf"), 0
    for _ in range(repeat):
        t = time.perf_counter()
        tbl = con.sql(sql).to_arrow_table()
        best = min(best, time.perf_counter() - t)
        rows = tbl.num_rows
    return best, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--target-ms", type=float, default=200)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, duckdb {duckdb.__version__}, "
          f"python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.duckdb"
        con = duckdb.connect(str(path))
        t = time.perf_counter()
        info = build(con, args.results)
        con.execute("CHECKPOINT")
        con.close()
        n = duckdb.connect(str(path), read_only=True).execute("SELECT count(*) FROM results").fetchone()[0]
        print(f"built {n:,} results in {info['runs']:,} runs ({info['pairs']} test/level pairs, "
              f"{info['families']} model families), {info['published']:,} published rows: "
              f"{time.perf_counter() - t:.1f} s, file {path.stat().st_size / 1e6:.0f} MB")
        con = store.connect(path, sandbox=True)   # as 'eatlas sql' opens it
        worst = 0.0
        for name, sql in QUERIES.items():
            secs, rows = timed(con, sql, args.repeat)
            worst = max(worst, secs)
            print(f"{name:40s} {secs * 1e3:8.1f} ms  {rows:>10,} rows")
        con.close()
    verdict = "met" if worst * 1e3 <= args.target_ms else "MISSED"
    print(f"target: every query under {args.target_ms:.0f} ms: {verdict} (slowest {worst * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
