"""mkdocs hook: the reference pages written from the code at build time, so that none of them can go stale.

A page holds a marker line; the hook replaces it with what the code declares:

- ``<!-- eatlas:cli -->``: every command and option, from ``eatlas.cli.main.build_parser()`` (its own help text);
- ``<!-- eatlas:schemas -->``: every field of a set, test and template file, from ``schemas/*.schema.json``;
- ``<!-- eatlas:store -->``: every table and view of the results store, from the DDL ``eatlas.store.db`` runs.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


# ------------------------------------------------------------------------------------------ the CLI
def _subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """name -> (one-line help, parser) of a parser's subcommands, in the order they are declared."""
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                out[name] = (helps.get(name, ""), sub)
    return out


def cli_reference() -> str:
    from eatlas.cli.main import build_parser

    os.environ["COLUMNS"] = "110"        # argparse wraps help at the terminal width; the page is wider
    parser = build_parser()
    lines = ["Every command as `eatlas COMMAND --help` prints it. Options go before or after the command",
             "(`eatlas --registry DIR validate` or `eatlas validate --registry DIR`); list options take spaces or",
             "commas (`--tests weat1 weat2`, `--tests weat1,weat2`).", "",
             "## eatlas", "", "```text", parser.format_help().rstrip(), "```", ""]

    def walk(prefix: str, p: argparse.ArgumentParser, depth: int):
        for name, (help_, sub) in _subcommands(p).items():
            full = f"{prefix} {name}"
            lines.extend([f"{'#' * depth} {full}", ""])
            if help_:
                lines.extend([help_[0].upper() + help_[1:] + ("" if help_.endswith(".") else "."), ""])
            lines.extend(["```text", sub.format_help().rstrip(), "```", ""])
            walk(full, sub, min(depth + 1, 4))

    walk("eatlas", parser, 2)
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ the schemas
def _type(spec: dict, defs: dict) -> str:
    if "$ref" in spec:
        return spec["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in spec:
        return " or ".join(_type(s, defs) for s in spec["anyOf"])
    t = spec.get("type", "any")
    if t == "array":
        return f"list of {_type(spec.get('items', {}), defs)}"
    if t == "object" and isinstance(spec.get("additionalProperties"), dict):
        return f"mapping to {_type(spec['additionalProperties'], defs)}"
    if "enum" in spec:
        return " \\| ".join(f"`{v}`" for v in spec["enum"])
    return str(t)


def _fields(schema: dict, defs: dict) -> list[str]:
    required = set(schema.get("required", []))
    rows = ["| field | type | required | what |", "| --- | --- | --- | --- |"]
    for name, spec in schema.get("properties", {}).items():
        what = spec.get("description", "")
        if "pattern" in spec:
            what += f" (pattern `{spec['pattern']}`)"
        rows.append(f"| `{name}` | {_cell(_type(spec, defs))} | {'yes' if name in required else ''} | {_cell(what)} |")
    return rows


def schema_reference() -> str:
    lines = []
    for path in sorted((ROOT / "schemas").glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        defs = schema.get("$defs", {})
        lines += [f"## {schema.get('title', path.stem)}", "", f"`schemas/{path.name}`. {schema.get('description', '')}",
                  "", *_fields(schema, defs), ""]
        for name, sub in defs.items():
            if sub.get("properties"):
                lines += [f"### {name} ({schema.get('title', path.stem)})", "", sub.get("description", ""), "",
                          *_fields(sub, defs), ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ the store
def store_reference() -> str:
    from eatlas.store.db import duck, init_schema, tables

    docs = {t.name: getattr(t, "doc", "") or "" for t in tables()}
    con = duck()
    try:
        init_schema(con)
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT internal "
                                           "ORDER BY table_name").fetchall()]
        lines = ["## Tables", ""]
        for name in names:
            cols = con.execute("SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                               "WHERE table_name = ? ORDER BY ordinal_position", [name]).fetchall()
            lines += [f"### {name}", ""]
            if docs.get(name):
                lines += [docs[name][0].upper() + docs[name][1:] + ".", ""]
            lines += ["| column | type | NULL allowed |", "| --- | --- | --- |"]
            lines += [f"| `{c}` | {_cell(t)} | {'' if n == 'NO' else 'yes'} |" for c, t, n in cols]
            lines.append("")
        lines += ["## Views", ""]
        for name, sql in con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal "
                                     "ORDER BY view_name").fetchall():
            cols = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                              "WHERE table_name = ? ORDER BY ordinal_position", [name]).fetchall()]
            lines += [f"### {name}", "", "Columns: " + ", ".join(f"`{c}`" for c in cols) + ".", "",
                      '??? note "Its SQL"', "", "    ```sql",
                      *("    " + line for line in sql.strip().splitlines()), "    ```", ""]
        return "\n".join(lines)
    finally:
        con.close()


MARKERS = {"<!-- eatlas:cli -->": cli_reference, "<!-- eatlas:schemas -->": schema_reference,
           "<!-- eatlas:store -->": store_reference}


def on_page_markdown(markdown: str, page, config, files):     # noqa: ARG001 (mkdocs' hook signature)
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown


if __name__ == "__main__":          # print one reference page: python docs/_hooks/reference.py cli|schemas|store
    print({"cli": cli_reference, "schemas": schema_reference, "store": store_reference}[sys.argv[1]]())

