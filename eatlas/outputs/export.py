"""Exports of the registry's tests in other tools' formats, and the long table of stimuli.

``sent-bias`` is the format of May et al.'s repository (W4ngatang/sent-bias ``tests/*.jsonl``): one
JSON object per test, ``{targ1, targ2, attr1, attr2}``, each ``{category, examples}``; despite the
``.jsonl`` extension the file holds a single pretty-printed object. ``csv``, ``jsonl`` and
``parquet`` hold the long table of :func:`stimulus_rows`: one row per stimulus with its role,
concept, set, curated item, template and span.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..errors import EatlasError
from ..levels import TEXT_LEVELS
from ..registry.base import Registry, TestSpec
from ..registry.stimuli import Test, build_test

FORMATS = ("sent-bias", "csv", "jsonl", "parquet")
EXPORT_LEVELS = TEXT_LEVELS      # the levels with texts of their own (c-word reads spans of sent's sentences)
SENT_BIAS_KEYS = {"x": "targ1", "y": "targ2", "a": "attr1", "b": "attr2"}

ROW_COLUMNS = ["test_id", "test_version", "level", "role", "concept", "set_id", "set_version", "item_index", "item",
               "kind", "text", "surface", "span_start", "span_end", "template_id", "template_version", "family",
               "template_index", "truncation_seed"]
_INT_COLUMNS = ("item_index", "span_start", "span_end", "template_index", "truncation_seed")


def stimulus_rows(reg: Registry, test: Test) -> list[dict]:
    """The long table of one built test: one row per stimulus as it enters the encoder."""
    rows = []
    # a test of paired forms (forms:) adds y's attribute forms as roles A@Y and B@Y (aligned with A and B)
    for role, c in getattr(test, "all_concepts", test.concepts).items():
        sset = reg.get_set(c.set_ref)
        for s in c.stimuli:
            tid, _, tver = (s.template or "").partition("@")
            rows.append({
                "test_id": test.id, "test_version": test.version, "level": test.level, "role": role.upper(),
                "concept": c.name, "set_id": sset.id, "set_version": sset.version, "item_index": s.item_index,
                "item": s.stimulus, "kind": sset.items[s.item_index].kind, "text": s.text, "surface": s.surface,
                "span_start": s.span[0] if s.span else None, "span_end": s.span[1] if s.span else None,
                "template_id": tid or None, "template_version": tver or None, "family": s.family,
                "template_index": s.template_index, "truncation_seed": test.truncation_seed})
    return rows


def rows_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=ROW_COLUMNS)
    for c in _INT_COLUMNS:
        df[c] = df[c].astype("Int64")
    return df


def export_levels(spec: TestSpec) -> list[str]:
    """The levels a test has that make stimuli of their own (c-word levels reuse the sentences)."""
    return [lv for lv in spec.levels if lv in EXPORT_LEVELS]


def to_sent_bias(test: Test) -> dict:
    return {SENT_BIAS_KEYS[r]: {"category": c.name, "examples": c.items} for r, c in test.concepts.items()}


def dumps_sent_bias(test: Test) -> str:
    """Written as the authors wrote theirs: indent 2, no trailing newline."""
    return json.dumps(to_sent_bias(test), indent=2, ensure_ascii=False)


def read_sent_bias(path: str | Path) -> dict[str, tuple[str, list[str]]]:
    """A sent-bias test file as ``{role: (category, examples)}`` for roles x, y, a, b."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise EatlasError(f"cannot read a sent-bias test: {e}", file=str(path)) from None
    if not isinstance(doc, dict):
        raise EatlasError("expected one JSON object with targ1, targ2, attr1, attr2", file=str(path))
    out = {}
    for role, key in SENT_BIAS_KEYS.items():
        part = doc.get(key)
        if not isinstance(part, dict) or not isinstance(part.get("category"), str) \
                or not isinstance(part.get("examples"), list) \
                or not all(isinstance(e, str) for e in part["examples"]):
            raise EatlasError("expected {category: text, examples: [text, ...]}", file=str(path), field=key)
        out[role] = (part["category"], list(part["examples"]))
    return out


def _select(reg: Registry, test_ids: list[str] | None) -> list[TestSpec]:
    return [reg.get_test_spec(t) for t in test_ids] if test_ids else list(reg.tests.values())


def export(reg: Registry, fmt: str, out_dir: str | Path, *, test_ids: list[str] | None = None,
           level: str | None = None, seed: int = 0, db: str | Path | None = None
           ) -> tuple[list[Path], list[tuple[str, str]]]:
    """Write one file per test into ``out_dir``; returns (files written, [(test, why skipped)]).

    ``level`` None: sent-bias files are at the test's own level, tables hold every level it has. A
    test without the requested level is an error when named in ``test_ids``, otherwise skipped. Files are
    written only where eatlas.guard allows (never over ``db``, a registry file or a file eatlas did not
    write), every path checked before the first is written; CSV cells are neutralised against formulas.
    """
    from ..guard import Outputs, neutralise_csv

    if fmt not in FORMATS:
        raise EatlasError(f"unknown export format {fmt!r}", field="format", hint=f"one of {', '.join(FORMATS)}")
    if level is not None and level not in EXPORT_LEVELS:
        raise EatlasError(f"cannot export level {level!r}", field="level", hint=f"one of {', '.join(EXPORT_LEVELS)}")
    out = Path(out_dir)
    target = Outputs(out, db=db, registry_root=reg.root, what="export")
    specs = _select(reg, test_ids)
    target.check_all(f"{spec.id}.{'jsonl' if fmt == 'sent-bias' else fmt}" for spec in specs)
    written, skipped = [], []
    for spec in specs:
        if level is not None and level not in spec.levels:
            why = f"no {level} level (levels: {', '.join(spec.levels)})"
            if test_ids:
                raise EatlasError(f"test {spec.id} has {why}", obj=f"test {spec.id}", field="level")
            skipped.append((spec.id, why))
            continue
        if fmt == "sent-bias":
            path = target.write_text(f"{spec.id}.jsonl", dumps_sent_bias(build_test(reg, spec, level, seed=seed)))
        else:
            levels = [level] if level else export_levels(spec)
            df = rows_frame([r for lv in levels for r in stimulus_rows(reg, build_test(reg, spec, lv, seed=seed))])
            if fmt == "csv":
                path = target.write(f"{spec.id}.csv", lambda tmp, df=df: neutralise_csv(df).to_csv(tmp, index=False))
            elif fmt == "jsonl":
                path = target.write(f"{spec.id}.jsonl",
                                    lambda tmp, df=df: df.to_json(tmp, orient="records", lines=True, force_ascii=False))
            else:
                path = target.write(f"{spec.id}.parquet", lambda tmp, df=df: df.to_parquet(tmp, index=False))
        written.append(path)
    return written, skipped


__all__ = ["FORMATS", "ROW_COLUMNS", "dumps_sent_bias", "export", "read_sent_bias", "rows_frame", "stimulus_rows",
           "to_sent_bias"]
