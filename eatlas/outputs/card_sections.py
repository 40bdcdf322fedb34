"""Sections of the dataset card (eatlas.outputs.publish) that a careful reader of a bias measurement needs:
what an EAT does and does not measure, and how the registry changed from version to version."""
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
        "`p_concepts`, `d_concepts` and its interval (`concepts_low`, `concepts_high`, or `concepts_reason` where "
        "it is not estimable), and the papers' `p_value` with its interval (`papers_low`, `papers_high`); "
        "`ci_low`/`ci_high` hold the interval of `ci_method`. A result whose p-value and "
        "interval disagree, whose sets are smaller than the calibration study checked, or whose effect lies "
        "opposite to a one-sided alternative carries a note (`notes`).",
        "- **Published numbers.** `published_results` holds numbers as the papers print them; a different "
        "model, release, corpus or dimension gives different numbers, so compare a run only with the same "
        "model (`eatlas` view `reproduction`; `reproduction_loose` says what differs otherwise).", "",
        f"Reference: {ETHAYARAJH_2019}", "",
    ]


def changelog(reg) -> list[str]:
    """Every changelog entry of the registry's sets, tests and templates, newest first."""
    rows = []
    for kind, objs in (("test", reg.tests), ("set", reg.sets), ("template", reg.templates)):
        for oid, obj in objs.items():
            log = getattr(obj, "changelog", None) or (getattr(obj, "raw", None) or {}).get("changelog") or []
            for e in log:
                if isinstance(e, dict):
                    rows.append((md_text(e.get("date", "")), kind, oid, md_text(e.get("version", "")),
                                 md_text(e.get("change", ""))))
    rows.sort(key=lambda r: (r[0], r[1], r[2], r[3]), reverse=True)
    return ["## Changelog", "",
            "Versions of the sets, tests and templates, from their own changelogs (newest first). A result is "
            "tied to the version it ran (and, in an eatlas results database, to the content hash in "
            "`run_inputs`).", "",
            "| date | kind | id | version | change |", "| --- | --- | --- | --- | --- |",
            *(f"| {d} | {k} | `{i}` | {v} | {c} |" for d, k, i, v, c in rows), ""]

