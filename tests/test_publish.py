"""Publishing: the dataset folder loads with `datasets` offline, in a fresh interpreter, and holds
exactly the registry's content; the card's header; pushing without a token fails cleanly."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from eatlas.errors import EatlasError
from eatlas.outputs.publish import (
    PLUS,
    config_name,
    criterion_config,
    hub_license,
    original_test_id,
    publish,
    registry_version,
)
from eatlas.registry import load_registry
from eatlas.registry.stimuli import get_test
from eatlas.store import read_published
from tests.conftest import make_set, make_test

# The configs loaded through `datasets` (about 0.5 s each): one per test, the raw sets, the published
# results; of the 538 WEATHub tests, all of one shape, a sample (variants, scripts, English) is loaded
# this way and every one is read with pyarrow (test_every_weathub_config_holds_its_test).
WEATHUB_SAMPLE = {"weathub_hi_weat1", "weathub_hi_weat1_gt", "weathub_hi_weat1_all", "weathub_te_weat1",
                  "weathub_zh_weat12", "weathub_hi_weat21", "weathub_en_weat11"}
# The same for the other large word-level sources (CA-WEAT, X-WEAT, Lewis & Lupyan, Malik et al.): two tests each
# through `datasets`, every one read with pyarrow (test_every_sampled_config_holds_its_test).
SAMPLED = ("weathub_", "caweat_", "xweat_", "lewis2020_", "malik2022_")
_IDS = list(load_registry().tests)
SAMPLE = WEATHUB_SAMPLE | {t for p in SAMPLED[1:] for t in sorted(i for i in _IDS if i.startswith(p))[:2]}
CONFIGS = [config_name(t) for t in _IDS if not t.startswith(SAMPLED) or t in SAMPLE] + ["sets", "published_results"]

LOADER = textwrap.dedent("""
    import json, sys
    import datasets
    out = {}
    for name in sys.argv[2:]:
        ds = datasets.load_dataset(sys.argv[1], name, split="test")
        out[name] = ds.to_list()
    assert not any(m == "eatlas" or m.startswith("eatlas.") for m in sys.modules), "eatlas was imported"
    print(json.dumps(out))
""")


def _offline_env(tmp: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_HOME=str(tmp / "hf-home"),
               HF_ENDPOINT="http://127.0.0.1:9", **extra)   # a dead local port: nothing can reach the Hub
    return env


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("publish")
    summary = publish(load_registry(), tmp / "ds")
    return tmp, summary


@pytest.fixture(scope="module")
def loaded(published):
    tmp, summary = published
    proc = subprocess.run([sys.executable, "-c", LOADER, str(summary["out"]), *CONFIGS], capture_output=True,
                          text=True, env=_offline_env(tmp), cwd=tmp, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("config", [c for c in CONFIGS if c not in ("sets", "published_results")])
def test_test_configs_equal_the_registry(loaded, config):
    rows = loaded[config]
    tid = original_test_id(config)
    assert {r["test_id"] for r in rows} == {tid}
    reg = load_registry()
    levels = [lv for lv in reg.tests[tid].levels if lv in ("word", "sent", "sent(u)")]
    assert list(dict.fromkeys(r["level"] for r in rows)) == levels
    n = 0
    for lv in levels:
        t = get_test(tid, lv)
        for role, c in t.all_concepts.items():      # a gendered test's y forms too (roles A@Y, B@Y)
            mine = [r for r in rows if r["level"] == lv and r["role"] == role.upper()]
            assert [r["text"] for r in mine] == c.items, (lv, role)
            assert [r["item"] for r in mine] == [s.stimulus for s in c.stimuli]
            assert {(r["concept"], r["set_id"], r["set_version"]) for r in mine} == \
                {(c.name, *c.set_ref.split("@"))}
            n += len(c)
    assert len(rows) == n


def test_every_sampled_config_holds_its_test(published):
    import pyarrow.parquet as pq
    _, summary = published
    reg = load_registry()
    wh = [t for t in reg.tests if t.startswith(SAMPLED)]
    assert len([t for t in wh if t.startswith("weathub_")]) > 500 and SAMPLE <= set(wh)
    assert all(any(t.startswith(p) for t in SAMPLE) for p in SAMPLED)
    for tid in wh:
        rows = pq.read_table(summary["out"] / "data" / config_name(tid) / "test.parquet",
                             columns=["test_id", "language", "level", "item"]).to_pylist()
        rows = [r for r in rows if r["level"] == "word"]
        t = get_test(tid, "word")
        assert [r["item"] for r in rows] == [i for c in t.all_concepts.values() for i in c.items], tid
        assert {(r["test_id"], r["language"]) for r in rows} == {(tid, reg.tests[tid].language)}


def test_plus_ids_are_kept_in_a_column(loaded):
    assert {r["test_id"] for r in loaded["weat_plus_occ"]} == {"weat+occ"}
    assert {r["test_id"] for r in loaded["heilman_double_bind_competent_1_plus_3-"]} == \
        {"heilman_double_bind_competent_1+3-"}
    sent = [r for r in loaded["weat_plus_occ"] if r["level"] == "sent"]
    assert all(r["text"][r["span_start"]:r["span_end"]] == r["surface"] for r in sent)
    assert {r["template_id"] for r in sent} == {"may2019_bleached"}


def test_sets_config(loaded):
    reg = load_registry()
    rows = loaded["sets"]
    expected = [(s.id, s.version, n, i.text, i.kind) for s in reg.sets.values() for n, i in enumerate(s.items)]
    assert [(r["set_id"], r["set_version"], r["item_index"], r["text"], r["kind"]) for r in rows] == expected
    flowers = next(r for r in rows if r["set_id"] == "flowers")
    assert (flowers["license"], flowers["paper"], flowers["authors_file"]) == \
        ("CC-BY-NC-4.0", "caliskan2017", "sent-bias tests/weat1.jsonl targ1")
    assert {r["license"] for r in rows if r["set_id"].startswith("tan2019_")} == {"unspecified"}


def test_published_results_config(loaded):
    rows = loaded["published_results"]
    pub = read_published(load_registry())
    assert len(rows) == len(pub) > 1000
    assert [r["value"] for r in rows] == list(pub["value"])
    assert [r["missing"] for r in rows] == list(pub["missing"])


def test_card_header_and_licences(published):
    _, summary = published
    reg = load_registry()
    text = (summary["out"] / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    header = yaml.safe_load(text.split("---\n")[1])
    names = [c["config_name"] for c in header["configs"]]
    assert names == [config_name(t) for t in reg.tests] + ["sets", "published_results"] + \
        [criterion_config(c) for c in reg.criteria]
    assert not any("+" in n for n in names) and "weat_plus_occ" in names
    for c in header["configs"]:
        (df,) = c["data_files"]
        assert df["split"] == "test" and (summary["out"] / df["path"]).is_file()
    # sent-bias sets are CC-BY-NC-4.0, Tan & Celis's unspecified: no single licence may be claimed
    assert (header["license"], header["license_link"]) == ("other", "LICENSE.md")
    assert (summary["out"] / "LICENSE.md").is_file()
    # the card names every language a test is in (BCP-47 tags, as the Hub's language field takes them)
    assert header["language"] == sorted({t.language for t in load_registry().tests.values()})
    assert "en" in header["language"] and header["pretty_name"] and "bias" in header["tags"]
    configs = (summary["out"] / "CONFIGS.md").read_text(encoding="utf-8")
    rows = {ln.split(" | ")[0]: ln for ln in configs.splitlines() if ln.startswith("| `")}
    assert "| CC-BY-NC-4.0 |" in rows["| `weat1`"]
    assert "unspecified (test" in rows["| `weat_plus_occ`"] and "CC-BY-NC-4.0 (template" in rows["| `weat_plus_occ`"]
    assert "- `weat+occ` -> `weat_plus_occ`" in configs
    assert set(rows) == {f"| `{n}`" for n in names}               # every config, in CONFIGS.md
    for key, src in reg.sources.items():
        assert src["citation"] in text, key
    assert registry_version(reg) in text and summary["version"] == registry_version(reg)


def test_card_cites_each_config(published):
    from eatlas.registry.cite import source_keys

    out = published[1]["out"]
    section = (out / "CITATIONS.md").read_text(encoding="utf-8")
    reg = load_registry()
    cited = {}
    for line in section.splitlines():           # "- `k1`, `k2`: N config(s): `c1`, `c2`": configs citing the same
        m = re.fullmatch(r"- (.*): \d+ config\(s\): (.*)", line)
        if m:
            for name in re.findall(r"`([^`]+)`", m.group(2)):
                cited[name] = re.findall(r"`([^`]+)`", m.group(1))
    assert cited["weat_plus_occ"] == ["tan2019", "zhao2018", "may2019", "eatlas"]
    assert cited["weat1"] == ["caliskan2017", "may2019", "wolfe2024", "eatlas"]
    assert set(cited) == {config_name(t) for t in reg.tests}
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "@software{eatlas," in card[card.index("## Citation"):]      # the card says how to cite EATlas
    bib = (out / "CITATIONS.bib").read_text(encoding="utf-8")
    keys = re.findall(r"^@\w+\{([^,]+),", bib, flags=re.M)
    assert len(keys) == len(set(keys)) and keys[-1] == "eatlas"
    assert set(keys) == set(reg.sources) | {"eatlas"}
    for tid in reg.tests:                                   # every config's works are in the block
        assert set(source_keys(reg, tid)) <= set(keys)
        assert set(source_keys(reg, tid)) <= set(cited[config_name(tid)])


def test_card_parses_with_huggingface_hub(published):
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(published[1]["out"] / "README.md")
    assert card.data.license == "other"
    assert len(card.data.configs) == len(load_registry().tests) + 2 + len(load_registry().criteria)


def test_config_names_map_back():
    for tid in ("weat+occ", "heilman_double_bind_likable_1+3-", "weat1"):
        assert original_test_id(config_name(tid)) == tid and "+" not in config_name(tid)
    assert hub_license({"CC-BY-NC-4.0"}) == {"license": "cc-by-nc-4.0"}
    assert hub_license({"unspecified"}) == {"license": "unknown"}
    assert hub_license({"CC-BY-NC-4.0", "unspecified"})["license"] == "other"


def test_ambiguous_ids_and_foreign_folders_are_refused(mini, tmp_path):
    mini.add_test(make_test(f"t{PLUS}2", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    with pytest.raises(EatlasError, match="cannot be mapped"):
        publish(mini.sync().load(), tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "notes.txt").write_text("mine")
    with pytest.raises(EatlasError, match="did not write"):
        publish(load_registry(), tmp_path / "b")


def test_version_follows_the_content(mini, tmp_path):
    first = publish(mini.load(), tmp_path / "ds")
    again = publish(mini.load(), tmp_path / "ds")          # republishing into the folder is fine
    assert first["version"] == again["version"]
    header = yaml.safe_load((tmp_path / "ds" / "README.md").read_text().split("---\n")[1])
    assert header["license"] == "other"                    # CC0-1.0 sets, CC-BY-NC-4.0 sentence template
    assert [c["config_name"] for c in header["configs"]] == ["t1", "sets"]     # no published tables
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", expansions={}))
    publish(mini.sync().load(), tmp_path / "ds")
    header = yaml.safe_load((tmp_path / "ds" / "README.md").read_text().split("---\n")[1])
    assert header["license"] == "cc0-1.0"                  # word level only: one licence throughout
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "iris"], version="1.0.1"))
    mini.add_test(make_test("t1", "roses@1.0.1", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    assert registry_version(mini.sync().load()) != first["version"]


def _cli(args, env, cwd):
    return subprocess.run([sys.executable, "-m", "eatlas.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def test_push_without_a_token_fails_clearly(tmp_path):
    (tmp_path / "hf-home").mkdir()
    proc = _cli(["publish", str(tmp_path / "ds"), "--push", "someone/eatlas"], _offline_env(tmp_path), tmp_path)
    assert proc.returncode == 2
    assert "no Hugging Face token configured" in proc.stderr and "HF_TOKEN" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "ds").exists()      # checked before anything is written


def test_push_failure_is_one_clear_message(tmp_path):
    env = _offline_env(tmp_path, HF_TOKEN="hf_not_a_real_token")
    proc = _cli(["publish", str(tmp_path / "ds"), "--push", "someone/eatlas"], env, tmp_path)
    assert proc.returncode == 2
    assert "push to someone/eatlas failed" in proc.stderr and "Traceback" not in proc.stderr
    assert (tmp_path / "ds" / "README.md").is_file()


def test_card_has_limitations_and_a_changelog_of_registry_versions(published):
    card = (published[1]["out"] / "README.md").read_text(encoding="utf-8")
    lim = card[card.index("## Limitations and risks"):card.index("## Columns")]
    for said in ("does not show", "Stimulus sensitivity", "contain stereotypes", "Ethayarajh"):
        assert said in lim
    assert "arXiv:1908.06361" in lim        # the reference as the ML-EAT paper lists it
    changes = (published[1]["out"] / "CHANGELOG.md").read_text(encoding="utf-8")
    log = changes[changes.index("## Every entry"):]
    reg = load_registry(None)
    for kind, objs in (("test", reg.tests), ("set", reg.sets)):
        for oid, obj in list(objs.items())[:5]:
            entry = (obj.changelog if kind == "set" else obj.raw["changelog"])[0]
            assert f"| {kind} | `{oid}` | {entry['version']} |" in log


def test_the_card_is_short_prose_first_and_points_to_the_long_lists(published):
    """A reader opens the card on the Hub: below the header the Hub needs (the configs), a short card whose
    prose comes first (what, for whom, how to load it, licences, limitations), then the columns; the config
    table, the per-config citations and the changelog are files beside it."""
    out = published[1]["out"]
    card = (out / "README.md").read_text(encoding="utf-8")
    body = card.split("---\n", 2)[2]
    assert len(body.splitlines()) < 2000
    heads = re.findall(r"^## (.+)$", body, flags=re.M)
    assert heads.index("Loading") < heads.index("Licences") < heads.index("Limitations and risks") \
        < heads.index("Columns") < heads.index("Citation")
    assert "**For whom.**" in body.split("## Loading")[0]
    assert "load_dataset(" in body
    for name in ("CONFIGS.md", "CITATIONS.md", "CITATIONS.bib", "CHANGELOG.md", "LICENSE.md"):
        assert f"`{name}`" in body and (out / name).is_file(), name
    assert "| `weat1` |" not in body                  # the config table is CONFIGS.md's


def test_no_file_of_the_dataset_cites_a_tracker_number(published):
    from tests.test_no_tracker_refs import tracker_refs

    out = published[1]["out"]
    for name in ("README.md", "CONFIGS.md", "CITATIONS.md", "CHANGELOG.md", "LICENSE.md"):
        assert tracker_refs((out / name).read_text(encoding="utf-8"), name) == []


def test_the_changelog_says_what_changed_date_by_date_then_every_entry(published):
    changes = (published[1]["out"] / "CHANGELOG.md").read_text(encoding="utf-8")
    summary = changes[:changes.index("## Every entry")]
    dates = re.findall(r"^## (\d{4}-\d\d-\d\d)$", summary, flags=re.M)
    assert dates == sorted(dates, reverse=True) and dates
    # one import of a source is one line: the 146 WEATHub variants kept with their authors' overlapping lists
    line = next(ln for ln in summary.splitlines() if "declared in overlap" in ln and " tests of " in ln)
    assert re.match(r"- 146 tests of `weathub2023` \(`weathub_\w+`", line) and "and 138 more" in line
    assert len(summary.splitlines()) < 200
