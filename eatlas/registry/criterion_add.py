"""``eatlas criterion add``: a validity criterion of one's own registry from a table one supplies (CSV, or
tab-separated when the name ends in .tsv: a word column and a value column), for ``eatlas run --method validity
--registry DIR``.

The file is copied byte for byte into ``DIR/registry/<source>/data/`` (its sha256 in that folder's
``provenance.yaml``) and every item's value is read from its row (eatlas.registry.criteria.items_from_rows's rule:
one row per word), so ``eatlas validate`` derives it again. Before anything is written, every problem of the
file is collected and named with file, row and column (a duplicate word, a file that is not UTF-8, a value that is
not a finite number, a missing key or value column, a word with outer whitespace or one that Unicode normalisation
would change), the ids are checked (``--id`` and ``--source`` are registry ids: no path separator, no '..'),
and the criterion is validated as ``validate`` will read it (its declared model, its attribute sets, every value
derived again from the staged data file). Only then are the files moved into place, each through a temporary file
in its own folder and a rename; a file of the same name the registry holds with other bytes is never replaced.
"""
from __future__ import annotations

import csv
import hashlib
import io
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import EatlasError, ValidationFailed
from .base import ID_RE, Registry, normalize_text, parse_criterion

FILE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")     # a data file's name in the registry
MAX_BYTES = 64 << 20


@dataclass
class CriterionSpec:
    """What ``eatlas criterion add`` is given (its options)."""
    source: str
    file: str
    id: str
    key: str
    value: str
    a: str
    b: str
    measure: str
    unit: str
    agency: str
    year: int
    table: str
    license: str
    kind: str = "word"
    expected_sign: str = "positive"
    meaning: str = ""
    reliability: str = "not stated by the file"
    date: str = ""


def _problem(msg: str, *, file: str | None = None, field: str | None = None, hint: str | None = None) -> EatlasError:
    return EatlasError(msg, file=file, field=field, hint=hint)


def read_table(path: Path, key: str, value: str) -> tuple[bytes, list[dict], list[EatlasError]]:
    """The file's bytes, its items (text, kind unset, value, rows) and every problem, each naming file, row
    (1-based data row, the header not counted) and column."""
    f = str(path)
    probs: list[EatlasError] = []
    if not path.is_file():
        raise _problem("no such file" if not path.exists() else "is not a regular file", file=f, field="--file")
    if path.stat().st_size > MAX_BYTES:
        raise _problem(f"is larger than {MAX_BYTES >> 20} MiB", file=f, field="--file")
    blob = path.read_bytes()
    try:
        text = blob.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = blob[:e.start].count(b"\n") + 1
        raise _problem(f"is not UTF-8 text (byte {e.start}, line {line}: {blob[e.start:e.start + 1]!r})", file=f,
                       hint="save it as UTF-8") from None
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t" if path.suffix == ".tsv" else ",")
        rows = list(reader)
        header = reader.fieldnames or []
    except csv.Error as e:
        raise _problem(f"is not a readable {'TSV' if path.suffix == '.tsv' else 'CSV'} file: {e}", file=f) from None
    absent = [(opt, c) for opt, c in (("--key", key), ("--value", value)) if c not in header]
    if absent:
        raise ValidationFailed([_problem(f"has no column {c!r} (its columns: {', '.join(map(repr, header))})",
                                         file=f, field=opt) for opt, c in absent])
    items: list[dict] = []
    seen: dict[str, int] = {}
    for n, r in enumerate(rows, 1):
        where = f"row {n} (line {n + 1})"
        if None in r:
            probs.append(_problem(f"{where} has more cells than the header", file=f))
            continue
        w = r.get(key)
        if w is None:
            probs.append(_problem(f"{where} has fewer cells than the header", file=f, field=key))
            continue
        if not w.strip():
            continue                # a row without a word: not an item
        if w != w.strip():
            probs.append(_problem(f"{where}: word {w!r} has leading or trailing whitespace", file=f, field=key,
                                  hint="remove it in the file: the value is read from the row as written"))
            continue
        if normalize_text(w) != w:
            probs.append(_problem(f"{where}: word {w!r} is not in Unicode normal form NFC", file=f, field=key,
                                  hint="normalise the file's text (NFC)"))
            continue
        k = w.casefold()
        if k in seen:
            probs.append(_problem(f"{where}: word {w!r} is also in row {seen[k]} (without regard to case)", file=f,
                                  field=key, hint="one row per word: aggregate the file first, or leave one out"))
            continue
        seen[k] = n
        raw = r.get(value)
        try:
            v = float(raw) if raw is not None and raw.strip() else None
        except ValueError:
            v = None
        if v is None or not math.isfinite(v):
            what = "is empty" if raw is None or not raw.strip() else \
                "is not a finite number" if v is not None or raw.strip().lower().lstrip("+-") in (
                    "nan", "inf", "infinity") else "is not a number"
            probs.append(_problem(f"{where}: value {raw!r} of {w!r} {what}", file=f, field=value,
                                  hint="give a finite number, or leave the row out"))
            continue
        items.append({"text": w, "value": v, "rows": [n]})
    if not items and not probs:
        probs.append(_problem(f"has no row with a word in column {key!r}", file=f, field=key))
    return blob, items, probs


def _inside(root: Path, p: Path) -> bool:
    return os.path.realpath(p).startswith(os.path.realpath(root) + os.sep)


class _Staged(Registry):
    """The registry as it will be once the data file is in place: its resolve reads the staged copy."""

    def __init__(self, reg: Registry, rel: str, staged: Path, cid: str, digest: str):
        self.__dict__.update(reg.__dict__)
        self._rel, self._staged = rel, staged
        self.recorded_hash = {**reg.recorded_hash, ("criteria", cid): digest}

    def resolve(self, rel, file, obj):
        return self._staged if rel == self._rel else super().resolve(rel, file, obj)


def _replace(root: Path, path: Path, payload: bytes) -> None:
    """Write ``path`` (inside ``root``) as every EATlas writer does (eatlas.files.write_under): into a private
    temporary folder under a descriptor of ``root``, renamed into place, no link on the way followed (a folder
    swapped for a link meanwhile is refused), a hard link replaced, never written through."""
    from ..files import LinkOnTheWay, open_dir, write_under
    rel = Path(os.path.relpath(path, root)).as_posix()
    if rel.startswith("../") or rel == "..":
        raise _problem("would be written outside the registry folder", file=str(path))
    base = open_dir(root)
    try:
        write_under(base, rel, lambda tmp: Path(tmp).write_bytes(payload), prefix=".eatlas-add-", shown=root)
    except LinkOnTheWay as e:
        raise _problem(f"a link is on the way ({e}); nothing is written through it", file=str(path)) from None
    finally:
        os.close(base)


def add_criterion(root: str | Path, spec: CriterionSpec) -> dict:
    """Write the criterion (see the module's docstring); returns what was written. Raises EatlasError (one problem)
    or ValidationFailed (several) with nothing written."""
    import datetime as _dt

    root = Path(root)
    reg = Registry(root)
    probs: list[EatlasError] = []
    for opt, v in (("--id", spec.id), ("--source", spec.source)):
        if not ID_RE.match(v or ""):
            probs.append(_problem(f"{v!r} is not a registry id (lower-case letters, digits, '_' and '-'; no path "
                                  "separator, no '..')", field=opt))
    name = Path(spec.file).name
    if not FILE_NAME_RE.match(name) or ".." in name:
        probs.append(_problem(f"the file's name {name!r} is not one the registry keeps (letters, digits, '.', '_', "
                              "'-')", file=spec.file, field="--file", hint="rename the file"))
    if probs:
        raise ValidationFailed(probs)
    if spec.source not in reg.sources:
        raise _problem(f"unknown source {spec.source!r}", file="registry/sources.yaml", field="--source",
                       hint="add its bibliography entry to registry/sources.yaml first")
    if spec.id in getattr(reg, "criteria", {}):
        raise _problem(f"criterion {spec.id!r} exists", field="--id", hint="choose another id, or bump the existing "
                                                                           "criterion's version by hand")
    blob, items, probs = read_table(Path(spec.file), spec.key, spec.value)
    if probs:
        raise ValidationFailed(probs)
    src_dir = root / "registry" / spec.source
    data_dir, crit_dir = src_dir / "data", src_dir / "criteria"
    data, prov_path, out = data_dir / name, data_dir / "provenance.yaml", crit_dir / f"{spec.id}.yaml"
    for p in (data, prov_path, out):
        if not _inside(root, p):
            raise _problem("would be written outside the registry folder (a symbolic link?)", file=str(p),
                           hint="nothing was written")
        if p.is_symlink() or (p.exists() and not p.is_file()):
            raise _problem("is a link or not a regular file", file=str(p), hint="nothing was written")
    if out.exists():
        raise _problem("exists (a file no catalog entry names)", file=str(out), field="--id",
                       hint="remove it or choose another id; nothing was written")
    if data.exists() and data.read_bytes() != blob:
        raise _problem("exists with other content", file=str(data), field="--file",
                       hint="rename your file; a registry file is never replaced; nothing was written")
    digest = hashlib.sha256(blob).hexdigest()
    rel_data = f"registry/{spec.source}/data/{name}"
    prov = {"source": spec.source, "license": spec.license, "files": []}
    if prov_path.is_file():
        prov = yaml.safe_load(prov_path.read_text(encoding="utf-8")) or prov
        if not isinstance(prov, dict) or not isinstance(prov.get("files", []), list):
            raise _problem("is not a provenance file (a mapping with a list 'files')", file=str(prov_path))
    prov["files"] = [f for f in prov.get("files", []) if not (isinstance(f, dict) and f.get("file") == name)] + [
        {"file": name, "sha256": digest, "license": spec.license,
         "description": f"supplied by the user; copied from {name}"}]
    today = spec.date or _dt.date.today().isoformat()
    doc = {"id": spec.id, "version": "1.0.0", "title": f"{spec.measure} ({spec.agency}, {spec.year})",
           "concept": spec.measure, "license": spec.license, "source": {"paper": spec.source},
           "criterion": {"measure": spec.measure, "unit": spec.unit, "meaning": spec.meaning or spec.unit,
                         "agency": spec.agency, "year": int(spec.year), "table": spec.table,
                         "data_file": rel_data, "value_column": spec.value,
                         "key_columns": [spec.key], "aggregate": "single",
                         "derivation": "the row of the word in the supplied file", "reliability": spec.reliability},
           "a": spec.a, "b": spec.b, "expected_sign": spec.expected_sign,
           "changelog": [{"version": "1.0.0", "date": today, "change": f"from the supplied file {name}"}],
           "items": [{"text": i["text"], "kind": spec.kind, "value": i["value"], "rows": i["rows"]} for i in items]}
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    rel_out = f"registry/{spec.source}/criteria/{spec.id}.yaml"
    with tempfile.TemporaryDirectory(prefix="eatlas-criterion-") as tmp:
        staged = Path(tmp) / name
        staged.write_bytes(blob)
        found: list[EatlasError] = []
        c = parse_criterion(yaml.safe_load(text), rel_out, found)
        if c is not None:
            from .criteria import check_criterion
            found += check_criterion(_Staged(reg, rel_data, staged, c.id, c.hash()), c)
        if found or c is None:
            raise ValidationFailed(found or [_problem("the criterion written would not parse", file=rel_out)])
    before = {p: (p.read_bytes() if p.is_file() else None) for p in (data, prov_path, out)}
    try:
        for path, payload in ((data, blob), (prov_path, yaml.safe_dump(prov, sort_keys=False, allow_unicode=True)
                                             .encode("utf-8")), (out, text.encode("utf-8"))):
            _replace(Path(root), path, payload)       # refuses a path leaving the registry or a link on the way
    except BaseException:               # put back what was there: nothing written after all
        for path, old in before.items():
            if old is None:
                path.unlink(missing_ok=True)
            elif not path.is_file() or path.read_bytes() != old:
                _replace(Path(root), path, old)
        raise
    return {"criterion": out, "data": data, "provenance": prov_path, "items": len(items)}
