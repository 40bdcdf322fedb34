"""The user-facing view of a test: four concepts with their items at one encoding level.

``get_test("weat1")`` gives the word lists; ``get_test("weat1", level="sent")`` the bleached
sentences; the c-word levels give the same sentences as sent / sent(u), with spans, since a
contextual-word vector is read off the stimulus's tokens inside its sentence.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import EatlasError
from ..levels import level as get_level
from .base import ROLES, Registry, StimulusSet, TestSpec, load_registry
from .checks import template_ok
from .templates import Expanded, expand_item


@dataclass
class Concept:
    role: str
    name: str
    set_ref: str
    stimuli: list[Expanded]
    n_before_truncation: int

    @property
    def items(self) -> list[str]:
        return [s.text for s in self.stimuli]

    def __len__(self):
        return len(self.stimuli)


@dataclass
class Test:
    id: str
    version: str
    title: str
    level: str
    x: Concept
    y: Concept
    a: Concept
    b: Concept
    provenance: dict
    template: str | None = None
    truncation_seed: int | None = None
    truncated: dict = field(default_factory=dict)   # role -> (before, after)
    spec: TestSpec | None = field(default=None, repr=False)
    # paired forms (TestSpec.forms): target y's attributes in y's form, role ("a", "b") -> its concept, whose
    # items are aligned with a's and b's (x's form); empty for a test without forms
    forms: dict[str, Concept] = field(default_factory=dict)

    __test__ = False

    @property
    def concepts(self) -> dict[str, Concept]:
        return {"x": self.x, "y": self.y, "a": self.a, "b": self.b}

    @property
    def all_concepts(self) -> dict[str, Concept]:
        """The four concepts and y's attribute forms ("a@y", "b@y"): every list a run encodes."""
        return {**self.concepts, **{f"{r}@y": c for r, c in self.forms.items()}}


def _word_level(s: StimulusSet) -> list[Expanded]:
    return [Expanded(text=i.text, stimulus=i.text, surface=i.text, span=(0, len(i.text)) if i.kind != "sentence"
                     else None, item_index=n) for n, i in enumerate(s.items)]


def _truncate(stimuli: list[Expanded], size: int, rng: np.random.Generator) -> list[Expanded]:
    keep = np.sort(rng.choice(len(stimuli), size=size, replace=False))
    return [stimuli[k] for k in keep]


def build_test(reg: Registry, spec: TestSpec, level: str | None = None, *, seed: int = 0) -> Test:
    level = level or spec.level
    lv = get_level(level, obj=f"test {spec.id}")
    sets = {r: reg.get_set(spec.sets[r]) for r in ROLES}
    form_sets = {r: reg.get_set(ref) for r, ref in spec.form_sets.items()}
    if form_sets and level != "word":
        raise EatlasError(f"test {spec.id} pairs its attributes' forms (forms:), which runs at the word level only",
                          obj=f"test {spec.id}", field="level")
    template_ref = None
    if lv.expansion is None:
        if spec.level != "word":
            raise EatlasError(f"test {spec.id} is written at level {spec.level}; it has no word level",
                              obj=f"test {spec.id}", field="level")
        stim = {r: _word_level(sets[r]) for r in ROLES}
        stim.update({f"{r}@y": _word_level(s) for r, s in form_sets.items()})
    else:
        key = lv.expansion
        if key not in spec.expansions:
            raise EatlasError(f"test {spec.id} has no {key} expansion (levels: {', '.join(spec.levels)})",
                              file=spec.file, obj=f"test {spec.id}", field="expansions")
        exp = spec.expansions[key]
        tmpl = reg.get_template(exp.template)
        template_ok(tmpl)          # bounded before anything is expanded (eatlas.registry.checks)
        template_ref = tmpl.ref
        stim = {}
        for r in ROLES:
            s = sets[r]
            variables = {**s.template_vars, **exp.vars}
            stim[r] = [e for n, it in enumerate(s.items)
                       for e in expand_item(it, n, tmpl, family=exp.families.get(r), variables=variables)]
    rng = np.random.default_rng(seed)
    truncated = {}
    pairs = [("x", "y")] if spec.equal_targets else []
    pairs += [("a", "b")] if spec.equal_attributes else []
    for p, q in pairs:
        n = min(len(stim[p]), len(stim[q]))
        for r in (p, q):
            if len(stim[r]) > n:
                truncated[r] = (len(stim[r]), n)
                stim[r] = _truncate(stim[r], n, rng)
    concepts = {r: Concept(role=r, name=sets[r].concept, set_ref=sets[r].ref, stimuli=stim[r],
                           n_before_truncation=truncated.get(r, (len(stim[r]),))[0]) for r in ROLES}
    forms = {r: Concept(role=r, name=s.concept, set_ref=s.ref, stimuli=stim[f"{r}@y"],
                        n_before_truncation=len(stim[f"{r}@y"])) for r, s in form_sets.items()}
    return Test(id=spec.id, version=spec.version, title=spec.title, level=level, provenance=dict(spec.source),
                template=template_ref, truncation_seed=seed if truncated else None, truncated=truncated,
                spec=spec, forms=forms, **concepts)


def get_test(test_id: str, level: str | None = None, *, registry: str | None = None, seed: int = 0) -> Test:
    """A test's four concepts at ``level`` (None: the test's own level)."""
    reg = load_registry(registry)
    return build_test(reg, reg.get_test_spec(test_id), level, seed=seed)


def list_tests(*, registry: str | None = None) -> list[dict]:
    reg = load_registry(registry)
    return [{"id": t.id, "version": t.version, "title": t.title, "bias_type": t.bias_type,
             "source": t.source.get("paper"), "levels": t.levels} for t in reg.tests.values()]
