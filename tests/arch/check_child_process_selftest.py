#!/usr/bin/env python3
"""Self-test for check_child_process.py: a popen or posix_spawnp outside
src/core/child_process.cpp fails, naming file:line; the same words in a comment, a string, a
member call or a longer name pass."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_child_process.py")


def run(root):
    p = subprocess.run([sys.executable, CHECKER, "--root", root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as root:
        write(root, "src/core/child_process.cpp", "void f() { ::posix_spawnp(0, 0, 0, 0, 0, 0); ::fork(); }\n")
        write(root, "src/io/quiet.cpp",
              '// popen("x") in a comment\nconst char* s = "system(1)";\nvoid g() { axis_system(1); o.fork(); p->system(); }\n')
        rc, out = run(root)
        if rc != 0:
            failures.append(f"clean tree rejected:\n{out}")
        write(root, "tests/render/bad_test.cpp", "#include <cstdio>\n\nvoid h() {\n  FILE* p = ::popen(\"ls\", \"r\");\n}\n")
        write(root, "apps/koma/bad.cpp", "void k() { std::system(\"ls\"); }\n")
        rc, out = run(root)
        if rc == 0 or "tests/render/bad_test.cpp:4: calls popen" not in out or "apps/koma/bad.cpp:1: calls system" not in out:
            failures.append(f"spawns outside child_process.cpp not reported:\n{out}")
        os.remove(os.path.join(root, "src/core/child_process.cpp"))
        rc, out = run(root)
        if rc == 0:
            failures.append(f"missing child_process.cpp not reported:\n{out}")
    for f in failures:
        print(f)
    print(f"check_child_process_selftest: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
