"""What each encoding level means, said once.

A test is encoded at a *level*: its word lists (``word``), or sentences its expansion templates
make of them (``sent``: May et al.'s bleached templates; ``sent(u)``: unbleached, semantically
rich contexts), read either as whole sentences or, at the contextual-word levels (``c-word``,
``c-word(u)``), as the vector of the stimulus's own tokens inside its sentence. Every module that
needs a level's meaning (expansion, runner, CLI, export, citation, validation) asks a ``Level``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import EatlasError


@dataclass(frozen=True)
class Level:
    name: str
    expansion: str | None     # the test expansion whose sentences are encoded (None: the word lists)
    span: bool                # contextual word: the stimulus's tokens inside its sentence, not the whole text
    description: str

    @property
    def unbleached(self) -> bool:
        return self.expansion == "sent(u)"

    def why_not(self, spec) -> str | None:
        """Why test ``spec`` (a registry TestSpec) has no such level (None: it has)."""
        if self.expansion is None:
            return None if spec.level == "word" else f"written at level {spec.level}"
        return None if self.expansion in spec.expansions else "no such expansion"

    def cache_mode(self, stimulus) -> str:
        """'span' (a contextual-word vector of ``stimulus.span`` in ``stimulus.text``) or 'plain' (the whole text)."""
        return "span" if self.span and stimulus.span is not None else "plain"

    def __str__(self) -> str:
        return self.name


WORD = Level("word", None, False, "the stimulus words themselves")
SENT = Level("sent", "sent", False, "each stimulus in bleached template sentences (May et al. 2019), whole sentence")
SENT_U = Level("sent(u)", "sent(u)", False, "each stimulus in unbleached, semantically rich contexts, whole sentence")
C_WORD = Level("c-word", "sent", True, "the stimulus's own tokens inside its bleached sentence (contextual word)")
C_WORD_U = Level("c-word(u)", "sent(u)", True, "the stimulus's own tokens inside its unbleached sentence")

LEVELS: dict[str, Level] = {lv.name: lv for lv in (WORD, SENT, SENT_U, C_WORD, C_WORD_U)}
NAMES: tuple[str, ...] = tuple(LEVELS)
DEFAULT: tuple[str, ...] = ("word", "sent")
EXPANSIONS: tuple[str, ...] = tuple(dict.fromkeys(lv.expansion for lv in LEVELS.values() if lv.expansion))
# the levels with texts of their own (c-word levels read spans of those texts)
TEXT_LEVELS: tuple[str, ...] = tuple(lv.name for lv in LEVELS.values() if not lv.span)


def level(name: str, *, field: str = "level", obj: str | None = None) -> Level:
    """The level called ``name``; an unknown name is a clear error."""
    try:
        return LEVELS[name]
    except (KeyError, TypeError):
        raise EatlasError(f"unknown level {name!r}", field=field, obj=obj, hint=f"one of {', '.join(NAMES)}") from None


def levels_of(spec) -> list[str]:
    """Every level test ``spec`` can be encoded at."""
    return [lv.name for lv in LEVELS.values() if lv.why_not(spec) is None]
