"""Registry files as declared models (pydantic v2): a stimulus set, a test, a sentence template and the
catalog, field by field; and the one place where what pydantic finds becomes EATlas's messages.

The models say what each field holds (``id: Id``, ``items: list[ItemModel]``, ``equal_targets: bool``);
pydantic checks a whole file at once and reports every problem, each with where it is (``loc``), its
kind (``type``), the value and the facts of the check (``ctx``). :func:`problems` turns each into an
:class:`~eatlas.errors.EatlasError` naming the file, the object, the field and what to do, in EATlas's
words (``WHOLE``, ``_by_form`` and ``_word``), never pydantic's: a curator reads "version '1.0' is not
semantic (MAJOR.MINOR.PATCH) (write three numbers, e.g. 1.0.0)", not "String should match pattern".

What a model cannot say about one field alone (a test's level among its expansions, a variant's label)
and what needs the whole registry (kinds and other vocabularies, duplicates, overlaps, templates that
expand) is checked in :mod:`eatlas.registry.base` and by ``eatlas validate`` (:mod:`eatlas.registry.schemas`).

The models are also exported as JSON Schema (``schemas/set.schema.json``, ``schemas/test.schema.json``,
``schemas/template.schema.json``), for a curator's editor (docs/registry-format.md)::

    python -m eatlas.registry.models --write-schemas     # after changing a model
    python -m eatlas.registry.models --check             # exit 1 when a committed file differs

Only reading registry files from YAML needs this module (and pydantic): a run whose registry comes from
the cache (:mod:`eatlas.registry.cache`) never imports it.
"""
from __future__ import annotations

import json
import sys
import types
import typing
from functools import cache
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    StrictBool,
    StrictStr,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..errors import EatlasError
from ..levels import EXPANSIONS
from .terms import (
    ID_PATTERN,
    ID_RE,
    LANGUAGE_PATTERN,
    LANGUAGE_RE,
    OVERLAP_PAIRS,
    REF_PATTERN,
    REF_RE,
    ROLES,
    SEMVER_PATTERN,
    SEMVER_RE,
    canonical_language,
    typename,
)

Text = StrictStr
Id = Annotated[StrictStr, StringConstraints(pattern=ID_PATTERN)]
Version = Annotated[StrictStr, StringConstraints(pattern=SEMVER_PATTERN)]
Ref = Annotated[StrictStr, StringConstraints(pattern=REF_PATTERN)]
Language = Annotated[StrictStr, StringConstraints(pattern=LANGUAGE_PATTERN)]
Changelog = list[dict[str, Any]]
LICENSE_DESCRIPTION = ("the licence as the source states it: an SPDX licence expression, LicenseRef-<name> with the "
                       "licence's text or URL in license_note, or unspecified (eatlas.registry.spdx)")


def _unique(names: list[str]) -> list[str]:
    if len(set(names)) < len(names):
        raise PydanticCustomError("duplicate", "a name is listed twice")
    return names


def _identifier(name: str) -> str:
    if not name.isidentifier():
        raise PydanticCustomError("identifier", "not a variable name")
    return name


def _vocabulary(column: str, *, nullable: bool = False, array: bool = False):
    """A JSON Schema hook: the values ``eatlas validate`` accepts for ``column`` (schemas/stimuli.yaml), listed
    for an editor's completion. The parser takes any text there; validate says which is unknown."""
    def hook(schema: dict) -> None:
        values = _stimulus_vocabulary(column)
        if array:
            schema["items"] = {"type": "string", "enum": values}
        else:
            schema["enum"] = values + ([None] if nullable else [])
    return hook


@cache
def _stimulus_vocabulary(column: str) -> list:
    import yaml

    from ..paths import schema_file  # only when the JSON Schema is written
    return list(yaml.safe_load(schema_file().read_text(encoding="utf-8"))["columns"][column]["checks"]["isin"])


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SourceModel(BaseModel):
    """Where an entry comes from: the paper's key in registry/sources.yaml and where in it (section, table,
    page, the authors' file), in any further keys."""
    model_config = ConfigDict(extra="allow", strict=True, frozen=True, title="Source")
    paper: Annotated[StrictStr, StringConstraints(min_length=1)] = Field(
        description="the paper's key in registry/sources.yaml, e.g. caliskan2017")


class ItemModel(_File):
    """One stimulus: its text and kind, and what the sentence templates need to write it."""
    model_config = ConfigDict(title="Item")
    text: Text = Field(description="the stimulus as the authors wrote it")
    kind: Text = Field(description="what the item is; the templates choose their sentence by it",
                       json_schema_extra=_vocabulary("kind"))
    case: Text | None = Field(None, description="a pronoun's case",
                              json_schema_extra=_vocabulary("case", nullable=True))
    number: Text | None = Field(None, description="singular (default) or plural",
                                json_schema_extra=_vocabulary("number", nullable=True))
    plural: Text | None = Field(None, description="the plural form, when the templates need it")
    singular: Text | None = Field(None, description="the singular form of a plural item")
    article: Text | None = Field(None, description="the indefinite article, when not the regular one",
                                 json_schema_extra=_vocabulary("article", nullable=True))
    note: Text | None = Field(None, description="a note on this item")


def _items_schema(schema: dict) -> None:
    # a bare string is an item of the set's own kind (kind: at the top of the file)
    schema["items"] = {"anyOf": [schema["items"], {"type": "string"}]}


class SetFile(_File):
    """A stimulus set: one concept's list of items, copied from the authors' files (docs/registry-format.md)."""
    model_config = ConfigDict(title="EATlas stimulus set")
    id: Id = Field(description="lower-case id, unique among the sets")
    version: Version = Field(description="semantic version, MAJOR.MINOR.PATCH; any change to the items is a new one")
    concept: Text = Field(description="the concept the items stand for, e.g. Flowers")
    license: Text = Field(description=LICENSE_DESCRIPTION)
    source: SourceModel
    notes: Text | None = None
    changelog: Changelog | None = Field(None, description="one entry per version: {version, date, change}")
    case_sensitive: StrictBool | None = Field(None, description="false: items that differ only in case are one")
    language: Language | None = Field(None, description="BCP-47 tag, e.g. en, hi, zh-Hans, pt-BR (default en)")
    kind: Text | None = Field(None, description="the kind of every item that does not state its own",
                              json_schema_extra=_vocabulary("kind", nullable=True))
    license_note: Text | None = None
    source_kind: list[Text] | None = Field(None, description="how the authors chose the items",
                                           json_schema_extra=_vocabulary("source_kind", array=True))
    variant: Text | None = Field(None, description="what this variant of another set is, e.g. authors-code")
    variant_of: Id | None = Field(None, description="the id of the set this one is a variant of")
    items: list[ItemModel] = Field(description="the items, in the authors' order",
                                   json_schema_extra=_items_schema)
    template_vars: dict[Text, Text] | None = Field(None, description="values the sentence templates fill in")
    group: dict[str, Any] | None = Field(None, description="the social group the items name, e.g. {gender: female}")
    tags: Any = Field(None, description="a list of ids that select the set for a purpose (checked by validate)")


ExpansionLevel = Literal[EXPANSIONS]        # sent, sent(u)
Role = Literal[ROLES]


class ExpansionModel(_File):
    """How a test's items become sentences at one level: a template, its families per role, its variables."""
    model_config = ConfigDict(title="Expansion")
    template: Ref = Field(description="the template, id@version")
    families: dict[Role, Text] | None = Field(None, description="role -> the template family (default: by kind)")
    vars: dict[Text, Text] | None = Field(None, description="values of the template's own variables")


FormName = Annotated[StrictStr, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]


class FormsModel(_File):
    """Attributes whose words come in paired forms (a gendered language's masculine and feminine forms of the
    same words): each attribute's set per form, aligned item by item, and the form each target is matched with
    (Lewis & Lupyan 2020; docs/methods.md, 'Paired forms')."""
    model_config = ConfigDict(title="Forms")
    x: FormName = Field(description="the form target x is matched with, e.g. masculine")
    y: FormName = Field(description="the form target y is matched with, e.g. feminine")
    a: dict[FormName, Ref] = Field(description="form -> attribute a's set in that form, id@version")
    b: dict[FormName, Ref] = Field(description="form -> attribute b's set in that form, id@version")

    @model_validator(mode="after")
    def _covers(self):
        for role in ("a", "b"):
            have = getattr(self, role)
            for target in ("x", "y"):
                form = getattr(self, target)
                if form not in have:
                    raise PydanticCustomError(
                        "forms_cover", "forms.{role} has no '{form}' form, which forms.{target} names",
                        {"role": role, "form": form, "target": target,
                         "hint": f"add {form}: <set id@version> to forms.{role}, or name one of its forms "
                                 f"({', '.join(sorted(have)) or 'none'}) in forms.{target}"})
        return self


class TestFile(_File):
    """A test: four sets (targets x, y; attributes a, b) by id@version, and its sentence expansions."""
    __test__: ClassVar[bool] = False      # not a pytest class
    model_config = ConfigDict(title="EATlas test")
    id: Id = Field(description="lower-case id, unique among the tests")
    version: Version
    title: Text
    license: Text = Field(description=LICENSE_DESCRIPTION)
    source: SourceModel
    notes: Text | None = None
    bias_type: Text | None = None
    license_note: Text | None = None
    changelog: Changelog | None = None
    language: Language | None = None
    variant: Text | None = None
    variant_of: Id | None = None
    x: Ref = Field(description="first target set, id@version")
    y: Ref = Field(description="second target set, id@version")
    a: Ref = Field(description="first attribute set, id@version")
    b: Ref = Field(description="second attribute set, id@version")
    level: Text | None = Field(None, description="the level the paper ran: word (default) or an expansion's")
    expansions: dict[ExpansionLevel, ExpansionModel] | None = None
    aliases: list[dict[str, Any]] | None = Field(None, description="the test's names in papers: {paper, name}")
    equal_targets: StrictBool | None = Field(None, description="whether |X| = |Y| is required (default true)")
    equal_attributes: StrictBool | None = Field(None, description="whether |A| = |B| is required (default false)")
    methods: Annotated[list[Id], Field(min_length=1), AfterValidator(_unique)] | None = Field(
        None, description="the methods that run it (default: every method over embeddings)",
        json_schema_extra={"uniqueItems": True})
    overlap: Annotated[dict[Literal[OVERLAP_PAIRS], Annotated[list[Annotated[StrictStr, StringConstraints(
        min_length=1)]], Field(min_length=1)]], Field(min_length=1)] | None = Field(
        None, description="a pair of roles (x/y, a/b, or a target and an attribute: x/a, x/b, y/a, y/b) -> the "
                          "items the authors' lists put in both sets (kept as the authors ran them; validate checks "
                          "them against the sets)")
    tags: Any = Field(None, description="a list of ids that select the test for a purpose (checked by validate)")
    forms: FormsModel | None = Field(None, description="paired forms of the attributes (a gendered language's "
                                                       "masculine and feminine words) and the form each target "
                                                       "uses; a and b are then target x's forms")


class TemplateFile(_File):
    """Sentence templates (Jinja, sandboxed): families of sentences, each with the stimulus as {{ term }}."""
    model_config = ConfigDict(title="EATlas sentence template")
    id: Id
    version: Version
    license: Text | None = None
    source: dict[str, Any] | None = None
    description: Text | None = None
    families: dict[Text, Annotated[list[Text], Field(min_length=1)]] = Field(
        description="family name -> its sentences, e.g. name: ['This is {{ term }}.']")
    parts: dict[Text, Text] | None = Field(None, description="named parts the sentences include")
    changelog: Changelog | None = None
    language: Language | None = None
    variables: list[Annotated[StrictStr, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"),
                              AfterValidator(_identifier)]] | None = Field(
        None, description="variables the caller fills in, beyond term and article")


class CriterionItemModel(_File):
    """One item of a criterion: the word or name, its value, and the data rows the value comes from."""
    model_config = ConfigDict(title="Criterion item")
    text: Text = Field(description="the word or name as the source writes it")
    kind: Text = Field(description="what the item is (as a stimulus item's kind)",
                       json_schema_extra=_vocabulary("kind"))
    value: float = Field(description="the criterion's value for the item, in the criterion's unit")
    rows: Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1)] = Field(
        description="the 1-based data rows of criterion.data_file the value comes from (the header not counted)")
    weight: float | None = Field(None, description="the item's weight, e.g. its number of workers (weight_column)")
    note: Text | None = None


class CriterionSpecModel(_File):
    """What a criterion measures and where its values come from: the agency, table and year, the data file in
    the registry, the columns, how a value is derived from its rows, and the criterion's own reliability."""
    model_config = ConfigDict(title="Criterion")
    measure: Text = Field(description="what is measured, e.g. women among the employed in the occupation")
    unit: Text = Field(description="the unit of the values, e.g. percent")
    meaning: Text = Field(description="what a value means, its range and direction")
    agency: Text = Field(description="who collected the data, e.g. US Bureau of Labor Statistics")
    year: int = Field(description="the year the data describe")
    table: Text = Field(description="the agency's table or survey")
    data_file: Text = Field(description="the registry file (under registry/<source>/data/) holding the values")
    value_column: Text = Field(description="the data file's column of the values")
    key_columns: Annotated[list[Text], Field(min_length=1)] = Field(
        description="the columns that name the item (a row belongs to the item when one of them is its text, "
                    "without regard to case)")
    aggregate: Literal["single", "weighted_mean"] = Field(
        description="single: the value of one row; weighted_mean: the rows' values weighted by weight_column")
    weight_column: Text | None = Field(None, description="the column of the weights (weighted_mean)")
    where: dict[Text, Text] | None = Field(None, description="only rows with these column values, e.g. a year")
    derivation: Text = Field(description="how the values were derived, in words")
    reliability: Text = Field(description="the criterion's own reliability and limits, as its source allows")


class CriterionFile(_File):
    """A validity criterion: per item a value about the world (census, labour, human ratings), with its
    source, and the two attribute sets the items' associations are measured against."""
    model_config = ConfigDict(title="EATlas validity criterion")
    id: Id = Field(description="lower-case id, unique among the criteria")
    version: Version
    title: Text
    concept: Text = Field(description="what the items are, e.g. Occupations")
    license: Text = Field(description=LICENSE_DESCRIPTION)
    license_note: Text | None = None
    source: SourceModel
    criterion: CriterionSpecModel
    a: Ref = Field(description="the attribute set the association points to, id@version")
    b: Ref = Field(description="the other attribute set, id@version")
    expected_sign: Literal["positive", "negative"] = Field(
        description="the sign of the correlation the source leads one to expect")
    notes: Text | None = None
    language: Language | None = None
    changelog: Changelog | None = None
    items: Annotated[list[CriterionItemModel], Field(min_length=1)]


class CatalogEntry(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)
    id: Id
    version: Version
    file: StrictStr | None = None       # the path is checked where it is used (Registry.resolve)


class PublishedEntry(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)
    file: StrictStr
    version: Version | None = None


class CatalogFile(_File):
    sets: list[CatalogEntry] | None = None
    tests: list[CatalogEntry] | None = None
    templates: list[CatalogEntry] | None = None
    published: list[PublishedEntry] | None = None
    criteria: list[CatalogEntry] | None = None


class RepositoryModel(BaseModel):
    """The repository a source's lists were copied from: whose it is (the authors' own or a reproduction by
    others), under which licence, and how its lists were made. Checked by eatlas.registry.cite when the
    registry loads (REPOSITORY_KEYS, REPOSITORY_KINDS)."""
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, title="Repository")
    url: StrictStr = Field(description="the repository, e.g. https://github.com/mllewis/IATLANG")
    license: StrictStr = Field(description="the licence as the repository states it (an SPDX id), or unspecified")
    kind: Literal["authors", "reproduction"] = Field(
        description="authors: the paper's authors' own repository; reproduction: made by others to reproduce it")
    by: StrictStr | None = Field(None, description="who made the repository, and when (required for a "
                                                   "reproduction), as it says so itself (e.g. its CITATION.cff)")
    lists: StrictStr | None = Field(None, description="how the repository's lists were made (copied from the "
                                                      "paper, typed from its appendix, machine-translated...)")
    note: StrictStr | None = Field(None, description="where in it the lists are; anything else a reader needs")


class SourceEntryModel(BaseModel):
    """One paper of registry/sources.yaml (docs/registry-format.md, 'Sources')."""
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, title="Source entry")
    type: StrictStr = Field(description="BibTeX entry type: article, inproceedings, ...")
    authors: list[StrictStr] = Field(description='"Last, First" each')
    year: int
    title: StrictStr
    venue: StrictStr = Field(description="journal or proceedings")
    bibtex: StrictStr = Field(description="the BibTeX entry, keyed by the source key")
    volume: StrictStr | None = None
    number: StrictStr | None = None
    pages: StrictStr | None = None
    publisher: StrictStr | None = None
    doi: StrictStr | None = None
    url: StrictStr | None = None
    authors_repository: RepositoryModel | None = None
    checked: StrictStr | None = Field(None, description="where the bibliographic data were read")
    citation: StrictStr | None = None
    preprint: StrictStr | None = None


class SourcesRoot(RootModel[dict[Annotated[StrictStr, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")],
                                SourceEntryModel]]):
    """registry/sources.yaml: paper key -> its entry (the JSON Schema a curator's editor reads)."""
    model_config = ConfigDict(title="EATlas sources (registry/sources.yaml)")


MODELS = {"set": SetFile, "test": TestFile, "template": TemplateFile, "catalog": CatalogFile,
          "criterion": CriterionFile, "sources": SourcesRoot}


# ============================================================================ pydantic's findings in EATlas's words
# A field whose every problem is one message (a list or mapping of a given form): (model, field) -> (message, hint).
WHOLE: dict[tuple[type, str], tuple[str, str]] = {
    **{(m, "changelog"): ("changelog must be a list of {version, date, change}",
                          "write - {version: 1.0.0, date: 2026-01-01, change: ...}")
       for m in (SetFile, TestFile, TemplateFile, CriterionFile)},
    (SetFile, "template_vars"): ("template_vars must map names to text",
                                 "e.g. template_vars: {subject: he, possessive: his}"),
    (SetFile, "source_kind"): ("source_kind must be a list of tags",
                               "e.g. source_kind: [social_science]; the tags are in schemas/stimuli.yaml"),
    (TestFile, "aliases"): ("aliases must be a list of {paper, name}", "write - {paper: may2019, name: sent-weat1}"),
    (TestFile, "methods"): ("methods must be a non-empty list of method names",
                            "e.g. methods: [weat, mleat]; leave it out for every method"),
    (TestFile, "overlap"): ("overlap must map x/y, a/b, x/a, x/b, y/a or y/b to the list of items in both sets",
                            "e.g. overlap: {a/b: [su]}"),
    (TestFile, "expansions"): ("expansions must be a mapping level -> {template: id@version}",
                               "e.g. expansions: {sent: {template: may2019_bleached@1.0.0}}"),
    (ExpansionModel, "families"): ("families must map roles x, y, a, b to a family name",
                                   "e.g. families: {x: name, y: name}"),
    (ExpansionModel, "vars"): ("vars must map names to text", "e.g. vars: {occupation: engineer}"),
    (TemplateFile, "parts"): ("parts must map names to template strings", 'e.g. parts: {s1: "{{ term }} is here."}'),
    (TemplateFile, "variables"): ("variables must be a list of variable names",
                                  "e.g. variables: [group0, group1, attributes]"),
}
_TYPE_ERRORS = {"string_type", "list_type", "dict_type", "bool_type", "int_type", "model_type", "float_type",
                "model_attributes_type", "is_instance_of", "string_sub_type"}
_WANT = {str: "text", list: "a list", dict: "a mapping", bool: "true or false", int: "a whole number",
         float: "a number"}


def _unwrap(tp):
    """The annotation without Annotated[...] and Optional (X | None)."""
    while True:
        origin = typing.get_origin(tp)
        if origin is Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp


def _want(tp) -> str:
    tp = _unwrap(tp)
    origin = typing.get_origin(tp) or tp
    if isinstance(origin, type) and issubclass(origin, BaseModel):
        return "a mapping"
    return _WANT.get(origin, "text")


def _pattern(info) -> str | None:
    """The pattern a field's text must match (an id, a version, id@version, a language tag), from its
    declaration (``Id``, ``Version | None``, ...); None for a field without one."""
    todo = [*info.metadata, info.annotation] if info is not None else []
    while todo:
        t = todo.pop()
        if isinstance(getattr(t, "pattern", None), str):
            return t.pattern
        todo += [*getattr(t, "__metadata__", ()), *typing.get_args(t)]
    return None


class _At(typing.NamedTuple):
    """Where in a model an error of ``loc`` is."""
    owner: type            # the model whose field it is (or the model an element should have been)
    name: str | None       # the field (None: the element itself is not of its model, e.g. an item that is a list)
    info: Any              # the field's FieldInfo
    field: str             # the field's path, e.g. items[3].text
    path: str              # the full path, into the field's lists and mappings, e.g. template_vars.subject
    rest: tuple            # what of ``loc`` is below that: (key, '[key]') for a mapping key of the wrong form


def _walk(model: type[BaseModel], loc: tuple) -> _At:
    """Follow ``loc`` through the model's fields, into lists, mappings and the models they hold:
    ('items', 3, 'text') -> (ItemModel, 'text', ..., 'items[3].text', 'items[3].text', ())."""
    owner, path, i = model, "", 0
    while True:
        name = loc[i] if i < len(loc) else None
        info = owner.model_fields.get(name) if isinstance(name, str) else None
        if info is None:
            return _At(owner, None, None, path, path, loc[i:])
        field = path = f"{path}.{name}" if path else name
        tp, i = _unwrap(info.annotation), i + 1
        while i < len(loc):         # into lists and mappings
            origin = typing.get_origin(tp)
            if origin is list and isinstance(loc[i], int):
                tp, path, i = _unwrap(typing.get_args(tp)[0]), f"{path}[{loc[i]}]", i + 1
            elif origin is dict and loc[i + 1:i + 2] != ("[key]",):
                tp, path, i = _unwrap(typing.get_args(tp)[1]), f"{path}.{loc[i]}", i + 1
            else:
                break
        is_model = isinstance(tp, type) and issubclass(tp, BaseModel)
        if is_model and i < len(loc) and loc[i] in tp.model_fields:
            owner = tp
            continue
        if is_model and i == len(loc) and path != field:       # an element that is not of its model
            return _At(tp, None, None, path, path, ())
        return _At(owner, name, info, field, path, loc[i:])


def _model_at(model: type[BaseModel], loc: tuple) -> type[BaseModel]:
    """The model of the mapping at ``loc`` (where an unknown key was found)."""
    at = _walk(model, loc)
    if at.name is None:
        return at.owner
    tp = _unwrap(at.info.annotation)
    while typing.get_origin(tp) in (list, dict):
        tp = _unwrap(typing.get_args(tp)[-1])
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else at.owner


def _dotted(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part != "[key]":
            out += f".{part}" if out else str(part)
    return out


def _by_form(pattern: str | None, value: Any, name: str) -> tuple[str, str] | None:
    """The message and hint for a value that is not of its field's form (id, version, id@version, language)."""
    if pattern == ID_PATTERN:
        if value is None:
            return "missing required field", f"add {name}: with a lower-case id"
        return f"invalid id {value!r:.80}", "ids are lower case letters, digits, '_', '+', '-' (no '/', no '..')"
    if pattern == SEMVER_PATTERN:
        hint = "write three numbers, e.g. 1.0.0" if isinstance(value, str) else 'write it quoted, e.g. version: "1.0.0"'
        return f"version {value!r:.80} is not semantic (MAJOR.MINOR.PATCH)", hint
    if pattern == REF_PATTERN:
        m = REF_RE.match(value) if isinstance(value, str) else None
        if m is None:
            return f"expected 'id@version', got {value!r:.80}", "e.g. flowers@1.0.0"
        if not ID_RE.match(m["id"]):
            return _by_form(ID_PATTERN, m["id"], name)
        return _by_form(SEMVER_PATTERN, m["version"], name)
    if pattern == LANGUAGE_PATTERN:
        fixed = canonical_language(value) if isinstance(value, str) else None
        return (f"language {value!r:.40} is not a BCP-47 tag",
                f"write {fixed}" if fixed and fixed != value else
                "e.g. en, hi, ckb, zh-Hans, pt-BR (language lower case, Script title case, REGION upper)")
    return None


def _word(at: _At, err: dict, doc: Any) -> tuple[str, str, str]:
    """(field, message, hint) of one of pydantic's errors."""
    owner, name, info, path, rest = at.owner, at.name, at.info, at.path, at.rest
    typ, value = err["type"], err.get("input")
    if typ == "forms_cover":
        return "forms." + err["ctx"]["role"], err["msg"], err["ctx"]["hint"]
    if owner is TestFile and name == "expansions" and rest[-1:] == ("[key]",):
        return (f"expansions.{rest[0]}", f"unknown expansion level {rest[0]!r}",
                "sent or sent(u); c-word levels reuse these sentences")
    whole = WHOLE.get((owner, name))
    if whole is not None:
        msg, hint = whole
        if (owner, name) == (TestFile, "methods"):
            twice = typ == "duplicate"
            msg = "methods names a method twice" if twice else f"{msg}, got {_field_value(doc, at.field)!r:.60}"
            hint = "list each method once" if twice else hint
        return at.field, msg, hint
    if owner is TemplateFile and name == "families":
        if rest[-1:] == ("[key]",):
            return "families", f"family name {rest[0]!r:.40} is not text", "quote the family name"
        if path != at.field:
            family = ".".join(path.split(".")[:2]).split("[")[0]
            return family, "a family must be a non-empty list of template strings", 'e.g. name: ["This is {{ term }}."]'
    if owner is SourceModel and name == "paper":
        msg = "source has no paper" if value in (None, "") or typ == "missing" else \
            f"expected text, got {typename(value)}"
        return path, msg, "name the paper key from registry/sources.yaml"
    if owner is ItemModel and name in ("text", "kind") and (typ == "missing" or value is None):
        return path, f"the item has no {name}", "every item needs text and kind: - {text: ..., kind: noun}"
    if owner is ItemModel and name is None and typ == "model_type":        # the item itself is not a mapping
        if isinstance(value, str):
            return (path, f"item {value!r:.60} is a bare string; give its kind",
                    "write - {text: ..., kind: noun}, or declare the set's kind: (e.g. kind: name) so its items may "
                    "be bare strings")
        return path, f"expected a mapping, got {typename(value)}", "write - {text: ..., kind: noun}"
    if owner is ExpansionModel and name is None and typ == "model_type":
        level = path.rsplit(".", 1)[-1]
        return path, "expected a mapping with 'template'", f"write {level}: {{template: may2019_bleached@1.0.0}}"
    if typ == "missing":
        value = None
    by_form = _by_form(err.get("ctx", {}).get("pattern") or _pattern(info), value, name or path)
    if by_form is not None:
        return (path, *by_form)
    want = _want(info.annotation) if info is not None else "a mapping"
    if typ == "missing" or (value is None and info is not None and info.is_required()):
        return path, "missing required field", f"add {name}: with {want}"
    if want == "true or false":
        return path, f"expected true or false, got {value!r:.40}", f"write {name}: true or {name}: false (unquoted)"
    if typ in _TYPE_ERRORS:
        return (path, f"expected {want}, got {typename(value)} {value!r:.60}",
                "quote values such as yes/no/numbers/dates" if want == "text" else f"write {name or path} as {want}")
    if typ == "literal_error":
        allowed = err.get("ctx", {}).get("expected", "")
        return path, f"{name or path} {value!r:.40} is not one of {allowed}", f"write one of {allowed}"
    if typ == "too_short":
        return path, f"{name} is empty", f"give {name} at least one value, or leave it out"
    return path, f"{name or path} is not valid ({typ})", "see docs/registry-format.md for the field's form"


def _field_value(doc: Any, path: str) -> Any:
    v = doc
    for part in path.replace("[", ".").replace("]", "").split("."):
        if isinstance(v, dict):
            v = v.get(part)
        elif isinstance(v, list) and part.isdigit() and int(part) < len(v):
            v = v[int(part)]
        else:
            return None
    return v


def problems(exc: ValidationError, model: type[BaseModel], doc: Any, file: str, obj) -> list[EatlasError]:
    """Every problem pydantic found in ``doc`` (checked as ``model``), as EATlas's errors: one per field,
    unknown keys of one mapping together; the id's first, then unknown keys, then the fields in the
    model's order. ``obj``: the object named (text, or a function of the error's path, e.g. a catalog
    entry's)."""
    found: list[tuple[int, int, str, str, str]] = []
    unknown: dict[tuple, list[str]] = {}
    for n, err in enumerate(exc.errors(include_url=False)):
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            unknown.setdefault(loc[:-1], []).append(str(loc[-1]))
            continue
        field, msg, hint = _word(_walk(model, loc), err, doc)
        found.append((0 if field == "id" else 2, n, field, msg, hint))
    for parent, keys in unknown.items():
        allowed = sorted(_model_at(model, parent).model_fields)
        prefix = _dotted(parent)
        keys = sorted(keys)
        found.append((1 if not parent else 2, _first(exc, parent), f"{prefix}.{keys[0]}" if prefix else keys[0],
                      f"unknown key(s) {', '.join(keys)}", f"allowed: {', '.join(allowed)}"))
    out, seen = [], set()
    for _, _, field, msg, hint in sorted(found, key=lambda f: f[:2]):
        if (field, msg) not in seen:
            seen.add((field, msg))
            where = obj(field) if callable(obj) else obj
            out.append(EatlasError(msg, file=file, obj=where, field=field, hint=hint))
    return out


def _first(exc: ValidationError, parent: tuple) -> int:
    return next(n for n, e in enumerate(exc.errors(include_url=False)) if tuple(e["loc"][:-1]) == parent)


# ============================================================================ checking a file
def check(kind: str, doc: dict, file: str, obj) -> list[EatlasError]:
    """Every problem of the fields of ``doc``, a file of ``kind`` (set, test, template, catalog), in EATlas's
    words (empty when there is none)."""
    model = MODELS[kind]
    found: list[EatlasError] = []
    try:
        model.model_validate(doc)
    except ValidationError as e:
        found = problems(e, model, doc, file, obj)
        if kind == "catalog":       # written by 'eatlas catalog --sync': rebuilt, not edited
            sync = "run 'eatlas catalog --sync' to rebuild it"
            found = [p if str(p.field).endswith((".id", ".version")) else
                     EatlasError(p.message, file=p.file, obj=p.obj, field=p.field,
                                 hint=f"{p.hint}; {sync}" if p.message.startswith("unknown key") else sync)
                     for p in found]
    if kind != "catalog" and isinstance(doc, dict) and isinstance(doc.get("license"), str):
        from .spdx import license_problem, note_gives_licence
        bad = license_problem(doc["license"], note_gives_licence(doc.get("license_note")))
        if bad:
            where = obj("license") if callable(obj) else obj
            found.append(EatlasError(bad[0], file=file, obj=where, field="license", hint=bad[1]))
    return found


_FORMS = {"id": ID_PATTERN, "version": SEMVER_PATTERN, "ref": REF_PATTERN, "language": LANGUAGE_PATTERN}


def value_problem(form: str, value: Any, file: str | None, obj: str | None, field: str) -> EatlasError | None:
    """The problem of one value of a form (id, version, ref: id@version, language), worded as the models'
    fields of that form are; None when it is of the form."""
    if isinstance(value, str) and _of_form(form, value):
        return None
    msg, hint = _by_form(_FORMS[form], value, field)
    return EatlasError(msg, file=file, obj=obj, field=field, hint=hint)


def _of_form(form: str, value: str) -> bool:
    if form == "ref":
        m = REF_RE.match(value)
        return m is not None and ID_RE.match(m["id"]) is not None and SEMVER_RE.match(m["version"]) is not None
    return {"id": ID_RE, "version": SEMVER_RE, "language": LANGUAGE_RE}[form].match(value) is not None


# ============================================================================ JSON Schema
SCHEMA_FILES = {"set": "set.schema.json", "test": "test.schema.json", "template": "template.schema.json",
                "criterion": "criterion.schema.json", "sources": "sources.schema.json"}


def json_schema(kind: str) -> dict:
    """The JSON Schema (draft 2020-12) of a file of ``kind``, as :func:`main` writes it."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            **MODELS[kind].model_json_schema(mode="validation")}


def render(kind: str) -> str:
    return json.dumps(json_schema(kind), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    from ..paths import data_root
    ap = argparse.ArgumentParser(prog="python -m eatlas.registry.models",
                                 description="Write (or check) the JSON Schema files of the registry's files.")
    ap.add_argument("--write-schemas", action="store_true", help="write schemas/*.schema.json")
    ap.add_argument("--check", action="store_true", help="exit 1 when a committed file differs from the models")
    ap.add_argument("--dir", type=Path, default=None, help="the schemas folder (default: the registry's)")
    args = ap.parse_args(argv)
    folder = args.dir or data_root() / "schemas"
    stale = []
    for kind, name in SCHEMA_FILES.items():
        path, text = folder / name, render(kind)
        if args.write_schemas:
            from ..files import write_text
            write_text(path, text)
            print(f"wrote {path}")
        elif not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    if stale:
        print(f"{', '.join(stale)} differ from the models: run python -m eatlas.registry.models --write-schemas",
              file=sys.stderr)
        return 1
    if not args.write_schemas:
        print("the schema files are those of the models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
