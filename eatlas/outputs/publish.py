"""The registry as a Hugging Face dataset repository folder, and pushing it to the Hub.

Layout written into OUT_DIR::

    README.md                          dataset card: YAML header (configs, license, ...) and prose: what,
                                       for whom, loading, licences, limitations, columns
    CONFIGS.md                         every config: test id, version, language, levels, rows, licence
    CITATIONS.md, CITATIONS.bib        the works each config draws on, and their BibTeX once each
    CHANGELOG.md                       what changed in the data, date by date, then every entry
    LICENSE.md                         the licence of every config (the dataset-level licence is "other"
                                       when they differ)
    data/<config>/test.parquet         one config per test (every level it has), plus "sets" and
                                       "published_results", and one per validity criterion
                                       ("criterion__<id>": its items, values and where each comes from)

Config names are the test ids with ``+`` written ``_plus_`` (``weat+occ`` -> ``weat_plus_occ``); the
original id is in the ``test_id`` column. The registry version (package version + a digest of all
the data published) is printed in the card and used as the Hub tag.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from .. import __version__
from ..errors import EatlasError
from ..registry.base import Registry, TestSpec
from ..registry.cite import eatlas_bibtex, repository_line
from ..registry.published import read_published
from ..registry.stimuli import build_test
from .export import export_levels, rows_frame, stimulus_rows

SPLIT = "test"
SETS_CONFIG = "sets"
PUBLISHED_CONFIG = "published_results"
PLUS = "_plus_"
UNSPECIFIED = "unspecified"
# the card and the files it points to, beside data/
CARD_FILES = ("README.md", "CONFIGS.md", "CITATIONS.md", "CITATIONS.bib", "CHANGELOG.md", "LICENSE.md")
CRITERION_PREFIX = "criterion__"


def criterion_config(criterion_id: str) -> str:
    """The config name of a validity criterion (eatlas.registry.criteria)."""
    return CRITERION_PREFIX + criterion_id.replace("+", PLUS)


def config_name(test_id: str) -> str:
    """A Hub-safe config name for a test id: ``+`` -> ``_plus_`` (reversed by :func:`original_test_id`)."""
    return test_id.replace("+", PLUS)


def original_test_id(config: str) -> str:
    return config.replace(PLUS, "+")


def registry_version(reg: Registry) -> str:
    """``<eatlas version>+<digest>``: the digest covers every set, test, template and published table."""
    h = hashlib.sha256()
    for kind, objs in (("sets", reg.sets), ("tests", reg.tests), ("templates", reg.templates)):
        for oid in sorted(objs):
            h.update(f"{kind} {oid}@{objs[oid].version} {objs[oid].hash()}\n".encode())
    for e in sorted(reg.catalog.get("published") or [], key=lambda e: str(e.get("id"))):
        path = reg.resolve(e.get("file"), "catalog.yaml", f"published {e.get('id')}")
        h.update(f"published {e.get('id')} {hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    criteria = getattr(reg, "criteria", {})
    for cid in sorted(criteria):
        h.update(f"criteria {cid}@{criteria[cid].version} {criteria[cid].hash()}\n".encode())
    return f"{__version__}+{h.hexdigest()[:8]}"


def licences_of(reg: Registry, spec: TestSpec) -> dict[str, list[str]]:
    """Licence -> the parts of a test under it (the test file, its sets, the templates of its levels)."""
    parts: dict[str, list[str]] = {}
    parts.setdefault(spec.license, []).append("test")
    for ref in dict.fromkeys([*spec.sets.values(), *spec.form_sets.values()]):
        s = reg.get_set(ref)
        parts.setdefault(s.license, []).append(f"set {s.id}")
    for lv in export_levels(spec):
        if lv in spec.expansions:
            t = reg.get_template(spec.expansions[lv].template)
            parts.setdefault(t.license or UNSPECIFIED, []).append(f"template {t.id}")
    return parts


def _licence_text(parts: dict[str, list[str]]) -> str:
    if len(parts) == 1:
        return next(iter(parts))
    return "; ".join(f"{lic} ({', '.join(who)})" for lic, who in sorted(parts.items()))


def hub_license(licences: set[str]) -> dict:
    """The card's dataset-level licence: never more than every part grants."""
    if len(licences) == 1:
        (lic,) = licences
        return {"license": "unknown" if lic == UNSPECIFIED else lic.lower()}
    return {"license": "other", "license_name": "eatlas-mixed", "license_link": "LICENSE.md"}


def _sets_frame(reg: Registry) -> pd.DataFrame:
    rows = []
    for s in reg.sets.values():
        src = s.source
        for n, it in enumerate(s.items):
            rows.append({"set_id": s.id, "set_version": s.version, "language": s.language, "concept": s.concept,
                         "item_index": n,
                         **{k: getattr(it, k) for k in ("text", "kind", "case", "number", "plural", "singular",
                                                         "article", "note")},
                         "license": s.license, "license_note": s.raw.get("license_note"),
                         "source_kind": list(s.source_kind), "variant": s.variant, "variant_of": s.variant_of,
                         "paper": src.get("paper"), "section": _str(src.get("section")),
                         "table": _str(src.get("table")), "page": _str(src.get("page")),
                         "authors_file": _str(src.get("authors_file")),
                         "source": json.dumps(src, ensure_ascii=False, sort_keys=True, default=str),
                         "notes": s.notes, "file": s.file})
    df = pd.DataFrame(rows)
    df["item_index"] = df["item_index"].astype("Int64")
    return df


def _criteria_configs(reg: Registry, target) -> list[dict]:
    """One config per validity criterion: a row per item with its value, unit, the data file and rows the value
    comes from, and the criterion's source and licence (eatlas.registry.criteria)."""
    from ..registry.criteria import criterion_rows

    out = []
    for c in getattr(reg, "criteria", {}).values():
        df = pd.DataFrame(criterion_rows(reg, c))
        df["license_note"] = c.raw.get("license_note")
        df["source"] = json.dumps(c.source, ensure_ascii=False, sort_keys=True, default=str)
        df["criterion"] = json.dumps(c.criterion, ensure_ascii=False, sort_keys=True, default=str)
        df["attributes"] = f"{c.a} / {c.b}"
        df["file"] = c.file
        name = criterion_config(c.id)
        out.append({"config_name": name, "test_id": None, "version": c.version, "levels": [],
                    "title": f"validity criterion: {c.title}", "rows": len(df), "language": c.language,
                    "licences": {c.license}, "licence": c.license, "path": _write(df, target, name)})
    return out


def _str(v) -> str | None:
    return None if v is None else str(v)


def _write(df: pd.DataFrame, target, config: str) -> str:
    rel = f"data/{config}/{SPLIT}.parquet"
    table = pa.Table.from_pandas(df, preserve_index=False)
    schema = pa.schema([f.with_type(pa.string()) if pa.types.is_large_string(f.type) else f for f in table.schema])
    target.write(rel, lambda tmp: pq.write_table(table.cast(schema), tmp))
    return rel


def _prepare(out: Path, rels: list[str], *, db=None, registry_root=None):
    """The folder's record of what publish wrote there (eatlas.guard.Outputs), once every file about to be
    written has been checked: publish replaces only files it wrote itself and the user left unchanged, and
    refuses a non-empty folder it never published into."""
    from ..guard import MANIFEST, Outputs

    target = Outputs(out, db=db, registry_root=registry_root, what="dataset")
    from ..guard import TEMP_PREFIX
    kept = [p for p in out.iterdir() if not (p.name.startswith(TEMP_PREFIX) or p.is_dir() and all(
        q.is_dir() or q.name.startswith(TEMP_PREFIX) for q in p.rglob("*")))] if out.is_dir() else []
    if not target.manifest.exists() and kept:       # (a killed publish's temporary files aside)
        shown = sorted(p.name for p in kept)
        raise EatlasError(f"folder is not empty and holds no {MANIFEST} of an earlier publish "
                          f"({', '.join(shown[:3])}{', ...' if len(shown) > 3 else ''}), so publish did not write it",
                          file=str(out), hint="publish into an empty or new folder")
    other = sorted(rel for rel in target.entries if not _published_file(rel))
    if other:                           # e.g. a report's manifest: that folder is another output's
        raise EatlasError(f"folder holds the manifest of another eatlas output ({', '.join(other[:3])}"
                          f"{', ...' if len(other) > 3 else ''}), not of an earlier publish, so publish did not "
                          "write it", file=str(out), hint="publish into an empty or new folder")
    for rel in target.entries:          # a file publish wrote and the user changed since is never replaced
        if (out / rel).exists() and not target.owned(rel):
            raise EatlasError("changed since eatlas publish wrote it", file=str(out / rel),
                              hint="move it away, or publish into a new folder")
    target.check_all(rels)
    target.remove_leftovers()           # temporary files of a publish that was killed
    return target


def _published_file(rel: str) -> bool:
    """A file publish writes: the card and the files beside it, a config's parquet."""
    parts = rel.split("/")
    return rel in CARD_FILES or (len(parts) == 3 and parts[0] == "data"
                                                  and parts[2] == f"{SPLIT}.parquet")


def publish(reg: Registry, out_dir: str | Path, *, seed: int = 0, repo_id: str | None = None,
            db: str | Path | None = None) -> dict:
    """Write the dataset folder; returns a summary (version, configs with rows and licences). Writes only
    files it wrote before (listed in the folder's manifest, unchanged), never ``db`` or a registry file."""
    out = Path(out_dir)
    names = {}
    for tid in reg.tests:
        name = config_name(tid)
        if name in (SETS_CONFIG, PUBLISHED_CONFIG) or original_test_id(name) != tid or name in names or \
                name.startswith(CRITERION_PREFIX):
            raise EatlasError(f"test id {tid!r} cannot be mapped to a distinct config name ({name!r})",
                              obj=f"test {tid}", field="id", hint=f"test ids must not contain {PLUS!r}")
        names[name] = tid
    out_rels = [f"data/{config_name(t)}/{SPLIT}.parquet" for t in reg.tests] + \
        [f"data/{c}/{SPLIT}.parquet" for c in (SETS_CONFIG, PUBLISHED_CONFIG)] + list(CARD_FILES) + \
        [f"data/{criterion_config(c)}/{SPLIT}.parquet" for c in getattr(reg, "criteria", {})]
    target = _prepare(out, out_rels, db=db, registry_root=reg.root)
    before = set(target.entries)
    configs = []
    for tid, spec in reg.tests.items():
        rows = [r for lv in export_levels(spec) for r in stimulus_rows(reg, build_test(reg, spec, lv, seed=seed))]
        parts = licences_of(reg, spec)
        frame = rows_frame(rows)
        frame.insert(2, "language", spec.language)
        configs.append({"config_name": config_name(tid), "test_id": tid, "version": spec.version,
                        "title": spec.title, "levels": export_levels(spec), "rows": len(rows),
                        "language": spec.language, "licences": set(parts), "licence": _licence_text(parts),
                        "path": _write(frame, target, config_name(tid))})
    sets = _sets_frame(reg)
    set_lics = set(sets["license"])
    configs.append({"config_name": SETS_CONFIG, "test_id": None, "version": None, "levels": [],
                    "language": ", ".join(sorted(set(sets["language"]))),
                    "title": "every stimulus set, one row per item with its provenance", "rows": len(sets),
                    "licences": set_lics, "licence": "per row (column license): " + ", ".join(sorted(set_lics)),
                    "path": _write(sets, target, SETS_CONFIG)})
    pub = read_published(reg)
    if len(pub):
        configs.append({"config_name": PUBLISHED_CONFIG, "test_id": None, "version": None, "levels": [],
                        "title": "results the papers published, one row per printed cell", "rows": len(pub),
                        "language": "",
                        "licences": {UNSPECIFIED}, "licence": f"{UNSPECIFIED} (numbers transcribed from the papers)",
                        "path": _write(pub, target, PUBLISHED_CONFIG)})
    configs += _criteria_configs(reg, target)
    version = registry_version(reg)
    tests = [c for c in configs if c["test_id"]]
    cites, bib = citation_files(reg, tests)
    from .card_sections import changelog_file
    for rel, text in (("README.md", dataset_card(reg, configs, version, repo_id)),
                      ("CONFIGS.md", configs_file(configs, version)), ("CITATIONS.md", cites), ("CITATIONS.bib", bib),
                      ("CHANGELOG.md", changelog_file(reg, version)), ("LICENSE.md", _licence_file(configs, version))):
        target.write_text(rel, text)
    for rel in before - {c["path"] for c in configs} - set(CARD_FILES):
        target.forget(rel)              # a config an earlier publish wrote that is gone now (unchanged file only)
    target.save()
    return {"version": version, "configs": configs, "out": out}


def card_header(configs: list[dict]) -> dict:
    licences = set().union(*(c["licences"] for c in configs))
    languages = sorted({c["language"] for c in configs if c.get("test_id")} or {"en"})
    return {
        "pretty_name": "EATlas: Embedding Association Test stimuli",
        "language": languages,
        **hub_license(licences),
        "tags": ["bias", "social-bias", "fairness", "embedding-association-test", "weat", "seat",
                 "word-embeddings", "sentence-embeddings"],
        "configs": [{"config_name": c["config_name"], "data_files": [{"split": SPLIT, "path": c["path"]}]}
                    for c in configs],
    }


def _code(s) -> str:
    return f"`{s}`" if s else ""


def _md(s) -> str:
    from .card_sections import md_text
    return md_text(s)


def _fence(text: str, info: str = "") -> list[str]:
    """A fenced code block that ``text`` cannot close: the fence is longer than any run of backticks in it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, text, fence]


def dataset_card(reg: Registry, configs: list[dict], version: str, repo_id: str | None = None) -> str:
    """The dataset's README: the Hub's header (configs, licence, languages), then the prose a reader needs
    (what, for whom, how to load it, licences, limitations, columns); the long lists are files of their own
    (``dataset_files``)."""
    from . import card_sections
    repo = repo_id or "<repo>"
    head = yaml.safe_dump(card_header(configs), sort_keys=False, allow_unicode=True, width=1000)
    tests = [c for c in configs if c["test_id"]]
    languages = sorted({c["language"] for c in tests})
    lines = [
        "---", head.rstrip(), "---", "",
        "# EATlas: Embedding Association Test stimuli", "",
        "The word lists and sentences of the Embedding Association Tests (WEAT, SEAT, CEAT, ML-EAT and their "
        "relatives) that social-bias research runs on language models, each copied from a paper or the authors' "
        "own files and recorded with where it came from, and the results the papers printed. "
        f"{len(tests)} tests in {len(languages)} language(s), every stimulus set, and "
        f"{next((c['rows'] for c in configs if c['config_name'] == PUBLISHED_CONFIG), 0)} published numbers.", "",
        "**For whom.** Researchers who measure social bias in language models and want the papers' stimuli "
        "exactly as the papers used them, with their licences and citations, in their own code; and readers "
        "checking a published number against its stimuli. The `eatlas` package runs the tests on a model and "
        "sets its results beside the papers'; it is not needed to read this dataset.", "",
        f"Registry version **{version}** (eatlas {__version__}): the suffix is a digest of every set, test, "
        "template and published table here, so one version always means the same data.", "",
        "## Loading", "",
        "One config per test (its name is the test id, with `+` written `_plus_`), plus `sets` (every stimulus "
        "set, one row per item) and `published_results` (one row per number a paper printed). Each config has "
        "one split, `test`.", "",
        "```python", "from datasets import load_dataset",
        f'weat1 = load_dataset("{repo}", "weat1", split="test")         # a test, every level it has',
        'words = weat1.filter(lambda r: r["level"] == "word")           # the word lists; "sent": sentences',
        f'sets = load_dataset("{repo}", "sets", split="test")', "```", "",
        "## What is in it, by source", "",
        *card_sections.by_source(reg, tests), "",
        "## Files", "",
        "| file | what |", "| --- | --- |",
        "| `CONFIGS.md` | every config: test id, version, language, levels, rows, licence, title |",
        "| `LICENSE.md` | each config's licence, and the configs grouped by licence |",
        "| `CITATIONS.md`, `CITATIONS.bib` | the works each config draws on, and their BibTeX |",
        "| `CHANGELOG.md` | what changed in the data, date by date |",
        "| `data/<config>/test.parquet` | the rows |", "",
        f"Validity criteria (`eatlas run --method validity`) are configs `{CRITERION_PREFIX}<id>`: one row per "
        "item: `criterion_id`, `criterion_version`, `item`, `kind`, `value` in `unit` (what it means: `criterion`, "
        "JSON), `measure`, `weight`, and where the value comes from: `data_file` and its 1-based data `rows`, "
        "`agency`, `year`, `paper`, `source` (JSON), `attributes` (the attribute sets A / B of the association), "
        "`license`, `license_note`, `file`.", "",
        "## Licences", "",
        "The sources grant different terms, so the dataset-level licence is `other` whenever they differ; each "
        "config is under every licence of the sources it draws on (`CONFIGS.md`, `LICENSE.md`). Sets and "
        "templates derived from May et al.'s sent-bias repository are CC-BY-NC-4.0 (non-commercial); a source "
        "that states no licence is `unspecified`, which is not an open licence: ask its authors before reuse "
        "beyond research. A test's sentence levels also carry the licence of the template that made them.", "",
        *licence_notes(reg),
        *card_sections.limitations(),
        *card_sections.columns(),
        "## Citation", "",
        "Cite the works of the configs you use (`CITATIONS.md` lists them per config, `CITATIONS.bib` holds "
        "their BibTeX; `eatlas cite TEST_ID` prints the same for one test) and EATlas:", "",
        *_fence(eatlas_bibtex(), "bibtex"), "",
        "## Sources", "",
        "Every paper the registry cites; the `paper` column of `sets` and `published_results` holds these keys.", "",
    ]
    lines += source_items(reg)
    return "\n".join(lines) + "\n"


def source_items(reg: Registry) -> list[str]:
    """The card's list of sources, one line each: citation, DOI or URL, and whose repository the lists come from
    (the authors' own, or a reproduction by whom, and how its lists were made; eatlas.registry.cite)."""
    out = []
    for key, src in sorted(reg.sources.items()):
        src = src or {}
        cite = _md(src.get("citation", key))
        doi = f" https://doi.org/{_md(src['doi'])}" if src.get("doi") else ""
        url = "" if doi or not src.get("url") else f" {_md(src['url'])}"
        repo_ = f" {_md(repository_line(src))}" if src.get("authors_repository") else ""
        out.append(f"- `{key}`: {cite}{doi}{url}{repo_}")
    return out


def configs_file(configs: list[dict], version: str) -> str:
    """CONFIGS.md: one row per config, and the test ids a config name writes differently."""
    mapped = [c for c in configs if c["test_id"] and c["config_name"] != c["test_id"]]
    return "\n".join([
        f"# Configs of the EATlas dataset, registry version {version}", "",
        "One config per test, plus `sets` and `published_results`. Each has a single split, `test`.", "",
        "| config | test id | version | language | levels | rows | licence | title |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        *(f"| `{c['config_name']}` | {_code(c['test_id'])} | {c['version'] or ''} | {c.get('language', '')} | "
          f"{', '.join(c['levels'])} | {c['rows']} | {_md(c['licence'])} | {_md(c['title'])} |" for c in configs),
        "", "## Config names", "",
        "Hub config names cannot carry every character our ids use, so a test's config name is its id with "
        f"each `+` written `{PLUS}`; the mapping is reversible (no test id contains `{PLUS}`) and the original "
        "id is in the `test_id` column." + (" Renamed here:" if mapped else ""), "",
        *(f"- `{c['test_id']}` -> `{c['config_name']}`" for c in mapped), ""])


def citation_files(reg: Registry, tests: list[dict]) -> tuple[str, str]:
    """CITATIONS.md (which works each test config draws on, configs with the same works together) and
    CITATIONS.bib (their BibTeX, once each, EATlas last)."""
    from ..registry.cite import bibtex_for_tests, source_keys

    groups: dict[tuple[str, ...], list[str]] = {}
    for c in tests:
        keys = tuple(dict.fromkeys(k for lv in reg.tests[c["test_id"]].levels
                                   for k in source_keys(reg, c["test_id"], lv)))
        groups.setdefault(keys + ("eatlas",), []).append(c["config_name"])
    entries = bibtex_for_tests(reg, [c["test_id"] for c in tests])
    cited = {k for k, _ in entries}
    rest = [(k, reg.sources[k]["bibtex"].strip()) for k in sorted(reg.sources) if k not in cited]
    md = ["# Citations of the EATlas dataset", "",
          "If you use a config, cite the works it draws on (its test's paper, its sets' and templates' papers, "
          "at every level it has) and EATlas. Their BibTeX is in `CITATIONS.bib`; `eatlas cite TEST_ID "
          "[--level L]` prints the same for one level.", ""]
    for keys, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        md.append(f"- {', '.join(f'`{k}`' for k in keys)}: {len(names)} config(s): "
                  + ", ".join(f"`{n}`" for n in names))
    md += [f"- `{SETS_CONFIG}`, `{PUBLISHED_CONFIG}`: the works of the rows you use (their `paper` column), "
           "and `eatlas`", ""]
    bib = "\n\n".join(b.strip() for _, b in entries[:-1] + rest + entries[-1:]) + "\n"
    return "\n".join(md), bib


def _group_key(c: dict) -> tuple[str, ...]:
    return tuple(sorted(c["licences"], key=lambda lic: (lic == UNSPECIFIED, lic)))


def licence_groups(configs: list[dict]) -> list[str]:
    """The configs grouped by the licences they carry: every licence of a group applies to each of its
    configs; a group with an unspecified part is never called open."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for c in configs:
        groups.setdefault(_group_key(c), []).append(c["config_name"])
    lines = ["### Configs by licence", ""]
    for key in sorted(groups, key=lambda k: (UNSPECIFIED in k, len(k), k)):
        what = " + ".join(f"`{lic}`" for lic in key)
        if UNSPECIFIED in key:
            what += " (the source states no licence: not open; ask the authors before reuse beyond research)"
        names = groups[key]
        lines.append(f"- {what}: {len(names)} config(s): " + ", ".join(f"`{n}`" for n in names))
    return lines + [""]


def licence_notes(reg: Registry) -> list[str]:
    """What the sources say about their licences beyond the SPDX id (``license_note`` of sets and tests)."""
    notes: dict[tuple[str, str], list[str]] = {}
    for kind, objs in (("set", reg.sets), ("test", reg.tests)):
        for o in objs.values():
            note = o.raw.get("license_note")
            if note:
                notes.setdefault((o.license, _md(" ".join(str(note).split()))), []).append(f"{kind} {o.id}")
    if not notes:
        return []
    lines = ["### Licence notes", ""]
    for (lic, note), who in sorted(notes.items()):
        lines.append(f"- `{lic}` ({len(who)} entries, e.g. {who[0]}): {note}")
    return lines + [""]


def _licence_file(configs: list[dict], version: str) -> str:
    return "\n".join([
        f"# Licences of the EATlas dataset, registry version {version}", "",
        "Each config is under the terms of every source it draws on (all of the licences listed for it apply). "
        "`unspecified`: the source grants no licence.", "",
        "| config | licence |", "| --- | --- |",
        *(f"| `{c['config_name']}` | {_md(c['licence'])} |" for c in configs), "", *licence_groups(configs)])


def hub_token() -> str:
    """The configured Hugging Face token (HF_TOKEN or the cached login), or a clear error."""
    try:
        from huggingface_hub import get_token
    except ImportError:
        raise EatlasError("huggingface_hub is not installed", hint="pip install 'eatlas[publish]'") from None
    token = get_token()
    if not token:
        raise EatlasError("no Hugging Face token configured, so nothing can be pushed",
                          hint="set HF_TOKEN or run 'hf auth login'; without --push the folder is only written")
    return token


def push(out_dir: str | Path, repo_id: str, version: str, *, token: str) -> str:
    """Upload the folder to the dataset repo ``repo_id`` and tag the commit with ``version``."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        from ..guard import Outputs
        info = api.upload_folder(repo_id=repo_id, repo_type="dataset", folder_path=str(out_dir),
                                 allow_patterns=sorted(Outputs(out_dir).entries) or None,   # only what publish wrote
                                 commit_message=f"EATlas registry {version}")
        api.create_tag(repo_id, tag=version, repo_type="dataset", revision=info.oid, exist_ok=True)
    except Exception as e:  # network, auth and Hub errors alike become one clear message
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise EatlasError(f"push to {repo_id} failed: {type(e).__name__}: {first}",
                          hint="check the token's write access and the network") from None
    return f"https://huggingface.co/datasets/{repo_id}/tree/{version}"
