"""Turn a table you supply (CSV or TSV: a word column and a value column) into a validity criterion of your own
registry, for ``eatlas run --method validity --registry DIR``. Not part of the package.

For a criterion whose licence does not let EATlas ship it, e.g. Bellezza, Greenwald and Banaji's valence norms as
the ValNorm repository (autumntoney/ValNorm, no licence stated) holds them in Validation Datasets/Bellezza_Lexicon.csv:

    python scripts/criterion_from_csv.py --registry MYREG --source mylab --file Bellezza_Lexicon.csv \\
        --id bellezza_valence --key word --value combined_pleasantness --a pleasant@1.0.0 --b unpleasant@1.0.0 \\
        --measure "pleasantness rating" --unit "mean rating, 1 to 5" --agency "Bellezza, Greenwald and Banaji" \\
        --year 1986 --table "Bellezza's lexicon" --license unspecified
    eatlas catalog --sync --registry MYREG && eatlas validate --registry MYREG

The file is copied byte for byte into MYREG/registry/<source>/data/ (its sha256 in that folder's provenance.yaml),
and every item's value is read from its row (eatlas.registry.criteria.items_from_rows), so validate derives it
again. MYREG must be a registry folder (catalog.yaml, registry/sources.yaml with the source's key) holding the
attribute sets --a and --b (copy them from EATlas's registry).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import io
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from eatlas.registry.criteria import items_from_rows  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--registry", "--source", "--file", "--id", "--key", "--value", "--a", "--b", "--measure", "--unit",
                 "--agency", "--table", "--license"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--year", type=int, required=True)
    ap.add_argument("--kind", default="word")
    ap.add_argument("--expected-sign", choices=("positive", "negative"), default="positive")
    ap.add_argument("--meaning", default="")
    ap.add_argument("--reliability", default="not stated by the file")
    args = ap.parse_args(argv)
    src = Path(args.file)
    blob = src.read_bytes()
    rows = list(csv.DictReader(io.StringIO(blob.decode("utf-8-sig")), delimiter="\t" if src.suffix == ".tsv" else ","))
    items = items_from_rows(rows, key_column=args.key, value_column=args.value, kind=args.kind)
    reg = Path(args.registry)
    data = reg / "registry" / args.source / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / src.name).write_bytes(blob)
    prov_path = data / "provenance.yaml"
    prov = yaml.safe_load(prov_path.read_text(encoding="utf-8")) if prov_path.is_file() else \
        {"source": args.source, "license": args.license, "files": []}
    prov["files"] = [f for f in prov["files"] if f.get("file") != src.name] + [
        {"file": src.name, "sha256": hashlib.sha256(blob).hexdigest(), "license": args.license,
         "description": f"supplied by the user; copied from {src.name}"}]
    prov_path.write_text(yaml.safe_dump(prov, sort_keys=False, allow_unicode=True), encoding="utf-8")
    doc = {"id": args.id, "version": "1.0.0", "title": f"{args.measure} ({args.agency}, {args.year})",
           "concept": args.measure, "license": args.license, "source": {"paper": args.source},
           "criterion": {"measure": args.measure, "unit": args.unit, "meaning": args.meaning or args.unit,
                         "agency": args.agency, "year": args.year, "table": args.table,
                         "data_file": f"registry/{args.source}/data/{src.name}", "value_column": args.value,
                         "key_columns": [args.key], "aggregate": "single",
                         "derivation": "the row of the word in the supplied file", "reliability": args.reliability},
           "a": args.a, "b": args.b, "expected_sign": args.expected_sign,
           "changelog": [{"version": "1.0.0", "date": "2026-01-01", "change": "from the supplied file"}],
           "items": items}
    out = reg / "registry" / args.source / "criteria" / f"{args.id}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    print(f"wrote {out} ({len(items)} items) and {data / src.name}; now run eatlas catalog --sync --registry {reg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
