"""Runs store the content hash of every test, set and template they read (table run_inputs)."""
import duckdb
from conftest import make_set
from test_progress import toy_encoder

from eatlas.registry.base import _DEFAULT
from eatlas.run.runner import RunConfig, run


def test_two_results_under_one_version_can_be_told_apart(tmp_path, mini):
    db = tmp_path / "r.duckdb"
    cfg = RunConfig(tests=["t1"], levels=("word",), n_samples=200, use_cache=False)
    run(cfg, db=db, registry=mini.root, encoder=toy_encoder())
    # The set is edited without a version bump: same version, other stimuli.
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "happy"]))   # X shares an item with A: a warning
    mini.sync()
    _DEFAULT.clear()      # a new process would read the registry afresh
    run(cfg, db=db, registry=mini.root, encoder=toy_encoder())
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT i.run_id, i.version, i.sha256, r.effect_size FROM run_inputs i JOIN results r "
                       "USING (run_id) WHERE i.kind = 'set' AND i.id = 'roses' ORDER BY r.effect_size").fetchall()
    assert len(rows) == 2 and rows[0][1] == rows[1][1] == "1.0.0"
    assert rows[0][2] != rows[1][2] and rows[0][3] != rows[1][3]
    reg = mini.load()
    kinds = con.execute("SELECT kind, id, sha256 FROM run_inputs WHERE run_id = ? ORDER BY kind, id",
                        [rows[0][0] if rows[0][2] == reg.sets["roses"].hash() else rows[1][0]]).fetchall()
    assert [(k, i) for k, i, _ in kinds] == [("set", "bad"), ("set", "bugs"), ("set", "good"), ("set", "roses"),
                                            ("template", "may2019_bleached"), ("test", "t1")]
    assert dict(((k, i), h) for k, i, h in kinds)[("test", "t1")] == reg.tests["t1"].hash()


# ------------------------------------------------------------------ whose repository a source's lists come from
def _sources():
    import yaml

    from eatlas.paths import data_root
    return yaml.safe_load((data_root() / "registry" / "sources.yaml").read_text(encoding="utf-8"))


def test_every_source_repository_says_whose_it_is_and_malik_is_a_reproduction():
    src = _sources()
    repos = {k: v["authors_repository"] for k, v in src.items() if v.get("authors_repository")}
    assert all(r["kind"] in ("authors", "reproduction") for r in repos.values())
    assert [k for k, r in repos.items() if r["kind"] == "reproduction"] == ["malik2022"]
    m = repos["malik2022"]
    assert m["url"] == "https://github.com/iamshnoo/soc_bias" and m["license"] == "GPL-3.0"
    assert "Mukherjee" in m["by"] and "Raj" in m["by"] and "Reproduction Code" in m["by"]
    assert "appendix" in m["lists"] and "Google Translate" in m["lists"]
    # the paper's first author is not the repository's (nor WEATHub's)
    assert src["malik2022"]["authors"][0].startswith("Malik") and src["weathub2023"]["authors"][0].startswith(
        "Mukherjee")


def test_no_registry_file_says_malik_shares_weathubs_first_author():
    from eatlas.paths import data_root
    root = data_root() / "registry" / "malik2022"
    said = [p.name for p in root.rglob("*.*") if "same first author" in p.read_text(encoding="utf-8")]
    assert said == []
    from eatlas.registry import load_registry
    reg = load_registry()
    trans = [s for s in reg.sets.values() if s.id.startswith("malik2022_hi_trans_")]
    assert trans and all(s.source_kind == ["translation_machine"] for s in trans)      # Google Translate


def test_sources_yaml_is_valid_under_its_json_schema():
    import json

    import jsonschema

    from eatlas.paths import data_root
    schema = json.loads((data_root() / "schemas" / "sources.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(_sources(), schema)
    from eatlas.registry.cite import REPOSITORY_KEYS
    props = schema["$defs"]["RepositoryModel"]["properties"]
    assert set(props) == REPOSITORY_KEYS and set(props["kind"]["enum"]) == {"authors", "reproduction"}


def test_show_the_card_and_the_site_say_a_reproduction_is_one(capsys):
    from eatlas.outputs.publish import source_items
    from eatlas.registry import load_registry
    from eatlas.registry.cite import source_lines
    reg = load_registry()
    lines = source_lines(reg, reg.get_test_spec("malik2022_hi_weat7").source)
    assert lines[1].startswith("file of a reproduction by Anjishnu Mukherjee and Chahat Raj")
    assert lines[2].startswith("how its lists were made:")
    caliskan = source_lines(reg, reg.get_set("weathub_hi_human_flowers").source) if "weathub_hi_human_flowers" in \
        reg.sets else source_lines(reg, reg.get_test_spec("lewis2020_english").source)
    assert caliskan[1].startswith("authors' file")
    card = "\n".join(source_items(reg))
    line = next(x for x in card.splitlines() if x.startswith("- `malik2022`"))
    assert "a reproduction by Anjishnu Mukherjee and Chahat Raj" in line and "Google Translate" in line
    assert "Authors' files: https://github.com/mllewis/IATLANG" in card
