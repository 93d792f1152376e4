#!/usr/bin/env python3
"""Fails when a C++ file other than src/core/child_process.cpp starts a process.

koma starts other programs (ffmpeg, ffprobe, the signal-safe `rm -rf`) in one place,
src/core/child_process.cpp: one runner wires the pipes, captures the messages, registers the child
for the hard-exit cleanup and kills it on an error. Any call of fork, vfork, clone, the exec
family, popen, posix_spawn or system elsewhere (comments and string literals ignored) is a second
runner. Scanned: src/, include/, apps/, python/src/, tests/, bench/, fuzz/, view/.

Usage: check_child_process.py [--root DIR]
Prints one line per offender, `file:line: calls NAME (only src/core/child_process.cpp may)`,
and exits 1.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_function_length import SOURCE_EXTENSIONS, _strip  # noqa: E402

ALLOWED = "src/core/child_process.cpp"
FOLDERS = ("src", "include", "apps", "python/src", "tests", "bench", "fuzz", "view")
CALLS = ("fork", "vfork", "clone", "clone3", "execl", "execle", "execlp", "execv", "execve", "execvp",
         "execvpe", "fexecve", "popen", "posix_spawn", "posix_spawnp", "system")
# A call: the name not preceded by an identifier character, '.' or '->' (a member), then '('.
PATTERN = re.compile(r"(?<![\w.>])(?:::\s*|std::)?(" + "|".join(CALLS) + r")\s*\(")


def offenders(root):
    found = []
    for folder in FOLDERS:
        for base, dirs, files in os.walk(os.path.join(root, folder)):
            dirs[:] = sorted(d for d in dirs if d not in ("build", "__pycache__"))
            for name in sorted(files):
                if not name.endswith(SOURCE_EXTENSIONS):
                    continue
                path = os.path.join(base, name)
                rel = os.path.relpath(path, root)
                if rel == ALLOWED:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = _strip(f.read())
                for m in PATTERN.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    found.append(f"{rel}:{line}: calls {m.group(1)} (only {ALLOWED} may start processes)")
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.join(here, "..", ".."))
    args = ap.parse_args(argv)
    root = os.path.normpath(args.root)
    if not os.path.isfile(os.path.join(root, ALLOWED)):
        print(f"check_child_process: {ALLOWED} is missing under {root}")
        return 1
    found = offenders(root)
    for line in found:
        print(line)
    print(f"check_child_process: {len(found)} process start(s) outside {ALLOWED}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
