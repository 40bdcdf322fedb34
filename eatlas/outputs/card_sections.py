"""Sections of the dataset card (eatlas.outputs.publish) that a careful reader of a bias measurement needs:
what is in it by source, what an EAT does and does not measure, the columns; and the dataset's CHANGELOG.md,
what changed in the data."""
from __future__ import annotations

from ..legend import meanings


def md_text(s) -> str:
    """Registry text in the card's Markdown: HTML tags written as text (the Hub renders HTML in a card: a
    ``<script>`` in a licence note or a title must stay text), on one line, ``|`` escaped for tables."""
    text = str(s if s is not None else "").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|").replace("\n", " ")


# The one reference given here is copied from a source paper's reference list (Wolfe, Hiniker and Howe
# 2024, references); other caveats are stated without a citation rather than cited from memory.
ETHAYARAJH_2019 = ("Ethayarajh, K.; Duvenaud, D.; and Hirst, G. 2019. Understanding undesirable word embedding "
                   "associations. arXiv preprint arXiv:1908.06361.")


def limitations() -> list[str]:
    return [
        "## Limitations and risks", "",
        "- **What an EAT measures.** An Embedding Association Test measures how much closer, in cosine "
        "similarity, one set of target stimuli is to one set of attribute stimuli than another set is, in one "
        "model's vector space. It measures associations in representations, not behaviour: a large effect "
        "size does not show that a system built on the model treats people unfairly, and a small or "
        "non-significant one does not show that it does not.",
        "- **Effect sizes are relative and standardised.** The WEAT effect size divides by the standard "
        "deviation of the associations, which can hide differences in the underlying cosine similarities "
        "(Ethayarajh, Duvenaud and Hirst 2019); the ML-EAT levels 2 and 3 (`mleat` method) show what the "
        "single number hides. Anisotropic spaces (most contextual models) make every cosine similarity high, "
        "so compare effect sizes only within one model and one encoding choice.",
        "- **Stimulus sensitivity.** Results depend on the exact word lists, templates, pooling, layer and "
        "tokenisation: changing a few stimuli, or the sentence templates, can change an effect's size and "
        "sign. Every list here is the one a paper used, with its version and content hash; report which "
        "version, level and template you ran, and do not read one test as a measure of a whole construct.",
        "- **The lists contain stereotypes.** The attribute and target lists encode the stereotypes and social "
        "categories the original studies tested (gender, race, age, disability, intersectional groups), in "
        "the terms and name lists of their time and country (mostly US English). Names stand in for groups "
        "only approximately; the lists are instruments for measuring bias, not descriptions of people, and "
        "should not be used to build or train systems that sort people.",
        "- **What each number answers.** " + " ".join(meanings("concepts")) + " Both questions are stored: "
        "`p_concepts`, `d_concepts` and its interval (`concepts_low`, `concepts_high`; where it is not estimable "
        "these are NULL, `concepts_reason` says why and the hull of the confidence set is in `concepts_hull_low`, "
        "`concepts_hull_high`), and the papers' `p_value` with its interval (`papers_low`, `papers_high`) and, "
        "where p is at its floor 1/`p_n_samples` (`p_at_floor`), a bound rather than a value; "
        "`ci_low`/`ci_high` hold the interval of `ci_method`. A result whose p-value and "
        "interval disagree, whose sets are smaller than the calibration study checked, or whose effect lies "
        "opposite to a one-sided alternative carries a note (`notes`).",
        "- **Published numbers.** `published_results` holds numbers as the papers print them; a different "
        "model, release, corpus or dimension gives different numbers, so compare a run only with the same "
        "model (`eatlas` view `reproduction`; `reproduction_loose` says what differs otherwise).", "",
        f"Reference: {ETHAYARAJH_2019}", "",
    ]


def by_source(reg, tests: list[dict]) -> list[str]:
    """One row per source paper of the test configs: how many tests, their languages, their licences."""
    groups: dict[str, list[dict]] = {}
    for c in tests:
        paper = (reg.tests[c["test_id"]].source or {}).get("paper") or "unknown"
        groups.setdefault(str(paper), []).append(c)
    rows = ["| source | tests | languages | licences |", "| --- | --- | --- | --- |"]
    for paper, cs in sorted(groups.items()):
        langs = sorted({c["language"] for c in cs})
        shown = ", ".join(langs) if len(langs) <= 6 else f"{len(langs)} languages"
        lics = ", ".join(f"`{lic}`" for lic in sorted(set().union(*(c["licences"] for c in cs))))
        rows.append(f"| `{md_text(paper)}` | {len(cs)} | {shown} | {lics} |")
    return rows + ["", "`CONFIGS.md` lists every config; the Sources section below names each source."]


def columns() -> list[str]:
    return [
        "## Columns", "",
        "Test configs, one row per stimulus as it enters an encoder, at every level the test has (`word`: the "
        "curated item; `sent`: bleached sentences; `sent(u)`: unbleached sentences and scripts): "
        "`test_id`, `test_version`, `language`, `level`, `role` (X, Y targets; A, B attributes), `concept`, "
        "`set_id`, `set_version`, `item_index` and `item` (the curated stimulus), `kind`, `text` (the stimulus "
        "text), `surface` (the item's form inside the text), `span_start`/`span_end` (character span of the item "
        "in `text`), `template_id`, `template_version`, `family`, `template_index`, `truncation_seed` (set where "
        "a level left X and Y unequal and the larger was cut to the smaller by a seeded sample that keeps "
        "order; rows are what `eatlas.get_test(test_id, level)` gives).", "",
        "`sets`: one row per item: `set_id`, `set_version`, `language`, `concept`, `item_index`, the lexical "
        "fields `text`, `kind`, `case`, `number`, `plural`, `singular`, `article`, `note`, and provenance: "
        "`license`, `license_note`, `source_kind`, `variant`, `variant_of`, `paper`, `section`, `table`, `page`, "
        "`authors_file`, `source` (JSON), `notes`, `file`.", "",
        "`published_results`: one row per printed cell: `paper`, `table_id`, `row_label`, `column_label`, "
        "`statistic`, `value` (as printed), `significance`, `missing`, and our `test_id`, `level`, `model`, "
        "`model_family`, `note`, `source_file`.", ""]


def _entries(reg) -> list[tuple[str, str, str, str, str, str]]:
    """(date, kind, id, version, change, source paper) of every changelog entry, newest first."""
    rows = []
    for kind, objs in (("test", reg.tests), ("set", reg.sets), ("template", reg.templates)):
        for oid, obj in objs.items():
            log = getattr(obj, "changelog", None) or (getattr(obj, "raw", None) or {}).get("changelog") or []
            paper = str((getattr(obj, "source", None) or {}).get("paper") or "")
            for e in log:
                if isinstance(e, dict):
                    rows.append((md_text(e.get("date", "")), kind, oid, md_text(e.get("version", "")),
                                 md_text(e.get("change", "")), paper))
    rows.sort(key=lambda r: (r[0], r[1], r[2], r[3]), reverse=True)
    return rows


def _shape(change: str) -> str:
    """A change with its file names and ids blanked, so that one import's entries (the same words about a
    different file each) count as one kind of change."""
    import re
    return re.sub(r"\S*[/_.]\S*|\d+", "…", change)


def changelog_file(reg, version: str) -> str:
    """CHANGELOG.md of the dataset: date by date, what changed in the data (entries of one kind, e.g. one
    import of a source's files, as one line with how many and which), then every entry of the sets', tests' and
    templates' own changelogs."""
    rows = _entries(reg)
    out = [f"# What changed in the EATlas data (registry version {version})", "",
           "Each set, test and template has a version; any change to its items is a new version with an entry "
           "here. A result is tied to the versions it ran (and, in an eatlas results database, to the content "
           "hash in `run_inputs`), so a number stays reproducible after the data changes.", ""]
    by_date: dict[str, dict[tuple, list]] = {}
    for d, kind, oid, ver, change, paper in rows:
        by_date.setdefault(d, {}).setdefault((paper, kind, _shape(change)), []).append((oid, ver, change))
    for d, groups in by_date.items():
        out += [f"## {d}", ""]
        for (paper, kind, _), entries in sorted(groups.items()):
            entries = sorted(entries)
            oid, ver, change = entries[0]
            src = f" of `{md_text(paper)}`" if paper else ""
            if len(entries) == 1:
                out.append(f"- {kind} `{oid}` {ver}{src}: {change}")
                continue
            ids = [e[0] for e in entries]
            shown = ", ".join(f"`{i}`" for i in ids[:8]) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")
            out.append(f"- {len(entries)} {kind}s{src} ({shown}), each like `{oid}` {ver}: {change}")
        out.append("")
    out += ["## Every entry", "",
            "| date | kind | id | version | change |", "| --- | --- | --- | --- | --- |",
            *(f"| {d} | {k} | `{i}` | {v} | {c} |" for d, k, i, v, c, _ in rows), ""]
    return "\n".join(out)
