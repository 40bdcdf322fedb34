"""What a run read from the registry, by content: table ``run_inputs``.

A set, test or template edited without a version bump keeps its version, so the version alone cannot
tell two results apart. Each run therefore stores, for every test it ran, every set those tests name and
every template the expansions used, the content hash (``sha256`` of the normalised lexical content,
``registry.StimulusSet.hash`` and the like: items and template parts, not comments or notes). Two results
under one version with different hashes were computed from different stimuli::

    SELECT r.test_id, r.test_version, i.sha256, r.effect_size
    FROM results r JOIN run_inputs i ON i.run_id = r.run_id AND i.kind = 'test' AND i.id = r.test_id;
"""
from __future__ import annotations

from ..columns import as_columns

COLUMNS = ["kind", "id", "version", "sha256", "file"]


def run_inputs(reg, test_ids: list[str], templates: list[str] = ()) -> list[dict]:
    """One row per test run, set named by those tests and template their expansions use, and per further
    template the run used (``templates``, id@version: e.g. the LLM IAT's prompt)."""
    rows, seen = [], set()

    def add(kind, obj):
        if (kind, obj.id) not in seen:
            seen.add((kind, obj.id))
            rows.append({"kind": kind, "id": obj.id, "version": obj.version, "sha256": obj.hash(),
                         "file": obj.file})
    for tid in test_ids:
        spec = reg.get_test_spec(tid)
        add("test", spec)
        for ref in [*spec.sets.values(), *spec.form_sets.values()]:
            add("set", reg.get_set(ref))
        for exp in spec.expansions.values():
            add("template", reg.get_template(exp.template))
    for ref in templates:
        add("template", reg.get_template(ref))
    return rows


def init(con) -> None:
    con.execute("""CREATE TABLE IF NOT EXISTS run_inputs (
        run_id VARCHAR NOT NULL REFERENCES runs (run_id), kind VARCHAR NOT NULL, id VARCHAR NOT NULL,
        version VARCHAR NOT NULL, sha256 VARCHAR NOT NULL, file VARCHAR,
        PRIMARY KEY (run_id, kind, id))""")


def write(con, run_id: str, rows: list[dict]) -> None:
    if not rows:
        return
    con.register("_inputs", as_columns([{"run_id": run_id, **r} for r in rows], ["run_id", *COLUMNS]))
    con.execute("INSERT INTO run_inputs SELECT run_id, kind, id, version, sha256, file FROM _inputs")
    con.unregister("_inputs")
