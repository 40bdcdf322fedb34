"""The registry: stimulus sets, tests, templates and published tables as versioned files, read and checked.

``base``: reading a registry's files safely (bounded YAML), their data classes and parsers, the
:class:`Registry` and :func:`load_registry` (re-exported here, as when this package was one module,
``eatlas/registry.py``); ``models``: each kind of file as a declared model (pydantic), their problems in
EATlas's words, and their JSON Schema; ``terms``: the files' vocabulary (id and version forms, kinds,
roles); ``stimuli``: a test expanded at a level (``templates``: the sentence templates);
``catalog``: catalog.yaml and ``eatlas add``; ``schemas`` and ``checks`` (``textcheck``): validation;
``published``: the papers' published-results tables; ``cite``, ``licenses``: citations and licences;
``provenance``: the content hashes a run records; ``cache``: the parsed registry kept between runs.
The registry knows nothing of models, runs or the results database.
"""
from .base import (
    CATALOG_KEYS,
    CATALOG_MAX_BYTES,
    DEFAULT_LANGUAGE,
    EXPANSIONS,
    ID_RE,
    ITEM_KEYS,
    KINDS,
    LANGUAGE_RE,
    LEVELS,
    MAX_FILE_BYTES,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    OVERLAP_PAIRS,
    REF_RE,
    ROLES,
    SEMVER_RE,
    SET_KEYS,
    TEMPLATE_KEYS,
    TEST_KEYS,
    Criterion,
    CriterionItem,
    Expansion,
    Item,
    LazyEntries,
    Registry,
    StimulusSet,
    Template,
    TestSpec,
    check_id,
    check_language,
    check_version,
    content_hash,
    default_root,
    load_registry,
    normalize_text,
    parse_criterion,
    parse_ref,
    parse_set,
    parse_template,
    parse_test,
    parse_yaml,
    read_yaml,
    semver_key,
)
from .stimuli import Concept, Test, build_test, get_test, list_tests

__all__ = [
    "CATALOG_KEYS", "CATALOG_MAX_BYTES", "DEFAULT_LANGUAGE", "EXPANSIONS", "ID_RE", "ITEM_KEYS", "KINDS", "LANGUAGE_RE",
    "LEVELS",
    "MAX_FILE_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_NODES", "OVERLAP_PAIRS", "REF_RE", "ROLES", "SEMVER_RE",
    "SET_KEYS", "TEMPLATE_KEYS", "TEST_KEYS", "Concept", "Criterion", "CriterionItem", "Expansion", "Item",
    "LazyEntries", "Registry",
    "StimulusSet", "Template", "Test",
    "TestSpec", "build_test", "check_id", "check_language", "check_registry", "check_tests", "check_version",
    "content_hash", "default_root", "get_test", "list_tests", "load_registry", "normalize_text", "parse_criterion",
    "parse_ref", "parse_set", "parse_template", "parse_test", "parse_yaml", "read_yaml", "semver_key", "validate",
]


def __getattr__(name: str):
    # validation needs pandera and pandas: loaded when first asked for, not by `import eatlas`
    if name in ("check_registry", "check_tests", "validate"):
        from . import schemas
        return getattr(schemas, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
