"""The registry files' vocabulary: the forms of ids, versions, references and language tags, the kinds of
stimulus, the roles of a test and the fields each kind of file may hold.

Shared by the declared models that check a file (:mod:`eatlas.registry.models`, which imports pydantic)
and by the code that reads a registry (:mod:`eatlas.registry.base`, which must not: a warm run loads the
parsed registry from the cache and never needs the models).
"""
from __future__ import annotations

import re
from typing import Any

# Patterns without named groups, so that they are JSON Schema (ECMA-262) patterns as well as Python ones.
ID_PATTERN = r"^[a-z0-9][a-z0-9_+\-]*$"
SEMVER_PATTERN = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$"
REF_PATTERN = r"^[a-z0-9][a-z0-9_+\-]*@(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$"
# BCP-47 (RFC 5646) language tag in its canonical case: language (2-3 letters; no 5-8 letter subtag is
# registered), optional extlang, Script (Title case), REGION (upper case or 3 digits), variants; -x- private use.
LANGUAGE_PATTERN = (r"^[a-z]{2,3}(-[a-z]{3}){0,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?"
                    r"(-([a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*(-x(-[a-z0-9]{1,8})+)?$")

ID_RE = re.compile(ID_PATTERN)
SEMVER_RE = re.compile(SEMVER_PATTERN)
REF_RE = re.compile(r"^(?P<id>[^@\s]+)@(?P<version>[^@\s]+)$")      # the form id@version, before its parts are checked
LANGUAGE_RE = re.compile(LANGUAGE_PATTERN)

KINDS = ("name", "noun", "group_term", "mass_noun", "adjective", "verb", "pronoun", "sentence", "word")
ROLES = ("x", "y", "a", "b")
# A test's `overlap:` names the items its authors' lists put in both targets (x/y), both attributes (a/b), or a
# target and an attribute (x/a, x/b, y/a, y/b: allowed, but warned about unless declared).
OVERLAP_PAIRS = ("x/y", "a/b", "x/a", "x/b", "y/a", "y/b")
DEFAULT_LANGUAGE = "en"

# The fields of each kind of file (the models' fields; tests/test_registry_models.py keeps them equal).
SET_KEYS = {"id", "version", "concept", "license", "source", "notes", "changelog", "items",
            "template_vars", "group", "case_sensitive", "tags",
            "language", "kind", "source_kind", "variant", "variant_of", "license_note"}
ITEM_KEYS = {"text", "kind", "case", "number", "plural", "singular", "article", "note"}
TEST_KEYS = {"id", "version", "title", "bias_type", "level", "license", "source", "x", "y", "a", "b",
             "expansions", "aliases", "notes", "changelog", "equal_targets", "equal_attributes",
             "methods", "tags", "language", "variant", "variant_of", "license_note", "overlap", "forms"}
TEMPLATE_KEYS = {"id", "version", "license", "source", "description", "parts", "families", "changelog",
                 "language", "variables"}
CATALOG_KEYS = {"sets", "tests", "templates", "published", "criteria"}
# A variant (e.g. the list an author's code ran, beside the paper's) is a separate id linked to its
# canonical entry of the same kind: `variant: <short label>`, `variant_of: <id>` (docs/registry-format.md).


def semver_key(version) -> tuple[int, ...] | None:
    """(major, minor, patch) for ordering versions; None for anything that is not MAJOR.MINOR.PATCH."""
    return tuple(int(x) for x in str(version).split(".")) if SEMVER_RE.match(str(version)) else None


def typename(v: Any) -> str:
    """A YAML value's kind in a curator's words: text, a mapping, a list, true/false, nothing (null), int, ..."""
    return {str: "text", dict: "a mapping", list: "a list", bool: "true/false", type(None): "nothing (null)"}.get(
        type(v), type(v).__name__)


def canonical_language(tag: str) -> str | None:
    """The tag in canonical case (``EN_us`` -> ``en-US``) when that makes it valid, else None."""
    parts = tag.replace("_", "-").split("-")
    out = [parts[0].lower()]
    for p in parts[1:]:
        out.append(p.title() if len(p) == 4 and p.isalpha() else p.upper() if len(p) == 2 else p.lower())
    fixed = "-".join(out)
    return fixed if LANGUAGE_RE.match(fixed) else None
