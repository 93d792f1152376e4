#!/usr/bin/python3
"""Checks that module dependencies follow the table in docs/index.md.

The "Module map" table of docs/index.md is the one source of truth for which module may use which:

    | module | holds | uses |
    |---|---|---|
    | `keys` | ... | core, body |

Every `#include "koma/<module>/..."` in src/<m>/ and include/koma/<m>/ must name <m> itself or a
module in <m>'s "uses" cell (parenthesised remarks are ignored, names that are not modules, such as
Eigen, are external). The koma::<module> targets that src/<m>/CMakeLists.txt links must be allowed
too. Prints one line per violation, `file:line: <m> -> <other> ...`, and exits 1; exits 2 when the
table cannot be read; 0 when everything agrees.

    /usr/bin/python3 tests/arch/check_arrows.py [--root DIR] [--table FILE]
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]koma/([A-Za-z0-9_]+)/')
CMAKE_DEP = re.compile(r'\bkoma::([A-Za-z0-9_]+)\b')
SOURCE_SUFFIXES = {".hpp", ".h", ".cpp", ".cc", ".inl"}


def parse_table(text):
    """{module: set(allowed modules)} from the first markdown table whose header is
    | module | holds | uses |. Rows whose first cell names no `module` (the front ends) are skipped."""
    rows, in_table = [], False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else None
        if cells is None:
            if in_table:
                break
            continue
        if not in_table:
            if [c.lower() for c in cells[:3]] == ["module", "holds", "uses"]:
                in_table = True
            continue
        if set("".join(cells)) <= set("-: "):
            continue  # the |---|---| line
        rows.append(cells)
    table = {}
    for cells in rows:
        if len(cells) < 3:
            continue
        name = re.match(r"`([A-Za-z0-9_]+)`", cells[0])
        if not name:
            continue  # "`apps/koma`, `python/`, ..." and other non-module rows
        table[name.group(1)] = cells[-1]
    allowed = {}
    for module, uses in table.items():
        uses = re.sub(r"\([^)]*\)", "", uses).replace("`", "")
        words = {w.strip().split()[0] for w in uses.split(",") if w.strip()}
        allowed[module] = {w for w in words if w in table}
    return allowed


def module_files(root, module):
    for base in (root / "src" / module, root / "include" / "koma" / module):
        if base.is_dir():
            yield from sorted(p for p in base.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file())


def check_includes(root, allowed):
    errors = []
    for module in sorted(allowed):
        for path in module_files(root, module):
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m or m.group(1) == module or m.group(1) in allowed[module]:
                    continue
                other = m.group(1)
                why = "not in the table" if other not in allowed else "not allowed by docs/index.md"
                uses = ", ".join(sorted(allowed[module])) or "nothing"
                errors.append(f"{path.relative_to(root)}:{number}: {module} -> {other} ({why}; "
                              f"{module} may use: {uses})")
    return errors


def check_cmake(root, allowed):
    """The koma::<x> targets a module's CMakeLists.txt links must be allowed arrows too."""
    errors = []
    for module in sorted(allowed):
        path = root / "src" / module / "CMakeLists.txt"
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            for other in CMAKE_DEP.findall(code):
                if other != module and other not in allowed[module]:
                    errors.append(f"{path.relative_to(root)}:{number}: {module} -> {other} "
                                  f"(links koma::{other}; not allowed by docs/index.md)")
    return errors


def main(argv=None):
    here = pathlib.Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, default=here.parents[2], help="repository root")
    parser.add_argument("--table", type=pathlib.Path, help="markdown file with the table (default docs/index.md)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    table_path = args.table or root / "docs" / "index.md"
    try:
        allowed = parse_table(table_path.read_text())
    except OSError as e:
        print(f"check_arrows: cannot read {table_path}: {e}", file=sys.stderr)
        return 2
    if "core" not in allowed or len(allowed) < 2:
        print(f"check_arrows: {table_path}: no | module | holds | uses | table with a `core` row", file=sys.stderr)
        return 2
    errors = check_includes(root, allowed) + check_cmake(root, allowed)
    for e in errors:
        print(e)
    if errors:
        print(f"check_arrows: {len(errors)} dependency arrow(s) cross the table in {table_path.name}",
              file=sys.stderr)
        return 1
    arrows = sum(len(v) for v in allowed.values())
    print(f"check_arrows: {len(allowed)} modules, {arrows} allowed arrows, every include and link agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
