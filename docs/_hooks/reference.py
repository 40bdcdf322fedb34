"""mkdocs hook: the reference pages written from the code at build time, so that none of them can go stale.

A page holds a marker line; the hook replaces it with what the code declares:

- ``<!-- eatlas:cli -->``: every command and option, from ``eatlas.cli.main.build_parser()`` (its own help text);
- ``<!-- eatlas:schemas -->``: every field of a set, test and template file, from ``schemas/*.schema.json``;
- ``<!-- eatlas:store -->``: every table and view of the results store, from the DDL ``eatlas.store.db`` runs;
- ``<!-- eatlas:changelog -->``: the repository's CHANGELOG.md.

It also puts the package's version in every page's footer and, where pyproject.toml names the repository
(``[project.urls] Repository``), links it from every page (``repo_url``).
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


# One example per command, each checked against the parser by tests/test_docs_site.py; a command without one here
# shows its usage line's short form instead.
EXAMPLES = {
    "run": "eatlas run --model glove-6b-50d --tests weat1 weat6 --levels word",
    "sql": "eatlas sql \"SELECT test_id, level, effect_size, p_value FROM latest_results ORDER BY test_id\"",
    "list": "eatlas list --language en",
    "show": "eatlas show weat6 --level sent",
    "validate": "eatlas validate",
    "models": "eatlas models",
    "catalog": "eatlas catalog --check",
    "cache": "eatlas cache info",
    "add": "eatlas add my_sets/nurses.yaml",
    "publish": "eatlas publish dataset/",
    "export": "eatlas export stimuli/ --format csv --tests weat6",
    "report": "eatlas report report.html",
    "site": "eatlas site site/",
    "show-influence": "eatlas show-influence 908eb0ab weat6 --top 5",
    "cite": "eatlas cite weat6",
    "sweep": "eatlas sweep --models glove-6b-50d sentence-transformers/all-MiniLM-L6-v2 --tests weat6",
    "results": "eatlas results export results.parquet",
    "results export": "eatlas results export results.parquet",
    "results import": "eatlas results import results.parquet",
}


def _invocation(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return parser._get_formatter()._format_action_invocation(action)


def _default(action: argparse.Action) -> str:
    d = action.default
    if d is None or d is argparse.SUPPRESS or isinstance(action, (argparse._StoreTrueAction,
                                                                     argparse._StoreFalseAction)):
        return ""
    if isinstance(d, (list, tuple)):
        d = " ".join(map(str, d))
    return f"`{d}`" if str(d) != "" else "`''`"


def _meaning(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The option's own help text (without the "(default: ...)" a defaults formatter appends: the table has a
    column for it), and its choices where the invocation does not show them."""
    text = action.help or ""
    params = {k: v for k, v in vars(action).items() if v is not argparse.SUPPRESS}
    params["prog"] = parser.prog
    if params.get("choices") is not None:
        params["choices"] = ", ".join(map(str, params["choices"]))
    try:
        text = text % params
    except (KeyError, TypeError, ValueError):
        pass
    if action.choices and action.metavar is not None and not isinstance(action, argparse._SubParsersAction):
        text += ("; " if text else "") + "one of " + ", ".join(f"`{c}`" for c in action.choices)
    return text


def _option_cell(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The option's name, never broken inside (class opt), and its value's form, broken only after a comma or
    between words (class arg; docs/assets/extra.css)."""
    from html import escape

    fmt = parser._get_formatter()
    if action.option_strings:
        opt = ", ".join(action.option_strings)
        arg = fmt._format_args(action, fmt._get_default_metavar_for_optional(action)) if action.nargs != 0 else ""
    else:
        opt, arg = "", _invocation(parser, action)
    arg = ",<wbr>".join(f'<span class="nw">{piece}</span>' for piece in escape(arg).replace("|", "&#124;").split(","))
    return (f'<code class="opt">{escape(opt)}</code> ' if opt else "") + (f'<code class="arg">{arg}</code>'
                                                                         if arg else "")


def options_table(parser: argparse.ArgumentParser) -> list[str]:
    """The parser's arguments as tables (option, default, meaning), one per argument group that has any."""
    out = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions
                   if a.help is not argparse.SUPPRESS and not isinstance(a, (argparse._HelpAction,
                                                                               argparse._SubParsersAction))]
        if not actions:
            continue
        if group.title not in ("options", "optional arguments", "positional arguments"):
            out += [f"*{group.title}*", ""]
        out += ["| option | default | meaning |", "| --- | --- | --- |"]
        for a in actions:
            out.append(f"| {_option_cell(parser, a)} | {_cell(_default(a))} | {_cell(_meaning(parser, a))} |")
        out.append("")
    return out


def _example(name: str, parser: argparse.ArgumentParser) -> str:
    if name in EXAMPLES:
        return EXAMPLES[name]
    usage = " ".join(parser.format_usage().split())
    return usage.removeprefix("usage: ")


def cli_reference() -> str:
    from eatlas.cli.main import build_parser

    os.environ["COLUMNS"] = "110"        # argparse wraps help at the terminal width; the page is wider
    parser = build_parser()
    lines = ["Every command and option, from the parser itself (`eatlas COMMAND --help` prints the same). Options go",
             "before or after the command (`eatlas --registry DIR validate` or `eatlas validate --registry DIR`); list",
             "options take spaces or commas (`--tests weat1 weat2`, `--tests weat1,weat2`). An option's default is",
             "what it is when left out; an empty default means the option is off or decided at run time (its",
             "meaning says how).", "",
             "## eatlas", "", "Options every command takes:", "", *options_table(parser)]

    def walk(prefix: str, p: argparse.ArgumentParser, depth: int):
        for name, (help_, sub) in _subcommands(p).items():
            full = f"{prefix} {name}"
            key = full.removeprefix("eatlas ")
            lines.extend([f"{'#' * depth} {full}", ""])
            if help_:
                lines.extend([help_[0].upper() + help_[1:] + ("" if help_.endswith(".") else "."), ""])
            lines.extend(["```bash", _example(key, sub), "```", ""])
            lines.extend(options_table(sub))
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


def changelog() -> str:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return text.split("\n", 1)[1] if text.startswith("# ") else text     # the page has its own title


MARKERS = {"<!-- eatlas:cli -->": cli_reference, "<!-- eatlas:schemas -->": schema_reference,
           "<!-- eatlas:store -->": store_reference, "<!-- eatlas:changelog -->": changelog}


def on_config(config):
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    config["copyright"] = f"EATlas {project['version']}"
    repo = (project.get("urls") or {}).get("Repository")
    if repo and not config.get("repo_url"):
        config["repo_url"] = repo
    return config



def on_page_markdown(markdown: str, page, config, files):     # noqa: ARG001 (mkdocs' hook signature)
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown


if __name__ == "__main__":          # print one reference page: python docs/_hooks/reference.py cli|schemas|store
    print({"cli": cli_reference, "schemas": schema_reference, "store": store_reference}[sys.argv[1]]())

