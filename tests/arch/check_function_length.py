#!/usr/bin/env python3
"""Fails when a function in src/, apps/ or python/src/ is longer than the limit (default 150 lines).

Each long function in koma already marks its steps with section comments; the limit keeps it
that way: a step that grows becomes a named function with its own test. Lengths are counted
from the line of the function's name to the line of its closing brace, as Universal Ctags
reports them (`--fields=+ne`). Without ctags a small brace-matching parser does the same.

Usage: check_function_length.py [--src DIR ...] [--limit N] [--parser auto|ctags|braces]
                                [--allow NAME ...] [--no-allow]
Prints one line per offender, `file:line: function is N lines (limit L)`, and exits 1. An
allow-listed function that is no longer too long (or no longer exists) is a stale entry and
also fails, so the list only shrinks.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# Functions allowed over the limit while being split (none: every function of src/, apps/ and
# python/src/ is within it).
ALLOW = ()

SOURCE_EXTENSIONS = (".cpp", ".cc", ".cxx", ".hpp", ".h", ".hh", ".hxx", ".ipp")


def source_files(src):
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCE_EXTENSIONS):
                yield os.path.join(root, name)


def functions_ctags(ctags, src):
    """(file, line, name, length) for every function definition, from Universal Ctags."""
    files = list(source_files(src))
    if not files:
        return []
    out = subprocess.run(
        [ctags, "--languages=C++", "--language-force=C++", "--kinds-C++=f", "--fields=+neZ",
         "-x", "--_xformat=%F\t%n\t%{end}\t%N\t%{scope}", *files],
        check=True, capture_output=True, text=True).stdout
    result = []
    for row in out.splitlines():
        parts = row.split("\t")
        if len(parts) < 4 or not parts[2].isdigit():
            continue
        path, start, end, name = parts[0], int(parts[1]), int(parts[2]), parts[3]
        scope = parts[4] if len(parts) > 4 else ""
        scope = "::".join(part for part in scope.split("::") if not part.startswith("__anon"))
        if scope and scope != "-":
            name = scope + "::" + name
        result.append((path, start, name, end - start + 1))
    return result


_CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof",
            "noexcept", "requires", "static_assert"}


def _strip(text):
    """Blanks comments, string and character literals (keeping newlines) so braces can be counted."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            close = ")" + m.group(1) + '"'
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum()):  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions_braces(src):
    """(file, line, name, length) from brace matching: a `{` after `name(...)` at namespace or
    class level opens a function body."""
    result = []
    for path in source_files(src):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = _strip(f.read())
        text = re.sub(r"^[ \t]*#.*$", "", text, flags=re.M)  # preprocessor lines
        stack = []  # per open brace: True when it is a container (namespace, class, extern)
        head_start = 0
        line = 1
        for i, c in enumerate(text):
            if c == "\n":
                line += 1
            elif c == ";":
                head_start = i + 1
            elif c == "{":
                head = text[head_start:i]
                in_function = any(kind == "function" or kind == "block" for kind, *_ in stack)
                kind = "block"
                if not in_function:
                    if re.search(r"\b(namespace|class|struct|union|enum)\b[^()]*$", head) or \
                            re.search(r'\bextern\s*$', head):
                        kind = "container"
                    else:
                        names = re.findall(r"(operator\s*[^\s(]+|[A-Za-z_~][\w:~]*)\s*(?:<[^()]*>)?\s*\(",
                                           head)
                        names = [x for x in names if x.split("::")[-1] not in _CONTROL]
                        if names and not head.rstrip().endswith("="):
                            kind = "function"
                            name = names[0]
                            name_line = line - head[head.find(name):].count("\n") \
                                if name in head else line
                stack.append((kind, i, line, name if kind == "function" else None,
                              name_line if kind == "function" else line))
                head_start = i + 1
            elif c == "}":
                if stack:
                    kind, _, _, name, start = stack.pop()
                    if kind == "function":
                        result.append((path, start, name, line - start + 1))
                head_start = i + 1
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--src", action="append", default=None,
                    help="a source folder (repeatable; default src/, apps/ and python/src/ of the checkout)")
    ap.add_argument("--limit", type=int, default=150)
    ap.add_argument("--parser", choices=("auto", "ctags", "braces"), default="auto")
    ap.add_argument("--allow", action="append", default=None,
                    help="allow-listed function name (replaces the built-in list)")
    ap.add_argument("--no-allow", action="store_true", help="empty allow-list")
    args = ap.parse_args(argv)

    allow = set() if args.no_allow else set(args.allow if args.allow is not None else ALLOW)
    root = os.path.join(here, "..", "..")
    folders = args.src or [os.path.join(root, d) for d in ("src", "apps", os.path.join("python", "src"))]
    ctags = shutil.which("ctags")
    parser = "braces"
    if args.parser == "ctags" or (args.parser == "auto" and ctags):
        if not ctags:
            print("check_function_length: ctags not found", file=sys.stderr)
            return 2
        version = subprocess.run([ctags, "--version"], capture_output=True, text=True).stdout
        if "Universal Ctags" in version:
            parser = "ctags"
        elif args.parser == "ctags":
            print("check_function_length: ctags is not Universal Ctags", file=sys.stderr)
            return 2

    failures = []
    seen_long = set()
    count = 0
    for folder in folders:
        src = os.path.normpath(folder)
        functions = functions_ctags(ctags, src) if parser == "ctags" else functions_braces(src)
        count += len(functions)
        for path, line, name, length in sorted(functions):
            if length <= args.limit:
                continue
            short = name.split("::")[-1]
            if short in allow or name in allow:
                seen_long.add(short if short in allow else name)
                continue
            rel = os.path.relpath(path, os.path.dirname(src))
            failures.append(f"{rel}:{line}: {name} is {length} lines (limit {args.limit})")
    for name in sorted(allow - seen_long):
        failures.append(f"allow-list entry '{name}' is stale: no function of that name is over "
                        f"{args.limit} lines any more; remove it from ALLOW in {__file__}")
    for f in failures:
        print(f)
    print(f"check_function_length: {count} functions in {', '.join(os.path.normpath(f) for f in folders)} "
          f"({parser}), {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
