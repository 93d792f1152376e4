#!/usr/bin/env python3
"""Self-test for check_function_length.py: a 151-line function fails, a 150-line one passes,
and an allow-list entry that is no longer too long fails as stale. Runs both parsers."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_function_length.py")


def function(name, lines):
    """C++ source of a function `name` that spans exactly `lines` lines."""
    body = [f"int {name}(int x) {{"]
    body += ["  x += 1;  // {braces} in a comment" for _ in range(lines - 2)]
    body.append("}")
    return "\n".join(body) + "\n"


def run(src, *extra):
    p = subprocess.run([sys.executable, CHECKER, "--src", src, *extra],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    parsers = ["braces"] + (["ctags"] if shutil.which("ctags") else [])
    failures = []

    def expect(cond, what, output):
        if not cond:
            failures.append(f"{what}\n--- output ---\n{output}")

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        os.makedirs(os.path.join(src, "mod"))
        path = os.path.join(src, "mod", "long.cpp")
        with open(path, "w") as f:
            f.write("namespace koma {\nnamespace {\n")
            f.write(function("fits", 150))
            f.write("}  // namespace\n")
            f.write(function("too_long", 151))
            f.write('const char* s = "}";\n')
            f.write("}  // namespace koma\n")
        too_long_line = 2 + 150 + 1 + 1  # namespace lines, fits, closing anon namespace, then it
        for parser in parsers:
            code, out = run(src, "--parser", parser, "--no-allow")
            expect(code == 1, f"[{parser}] a 151-line function must fail (exit {code})", out)
            expect(f"src/mod/long.cpp:{too_long_line}:" in out and "too_long is 151 lines" in out,
                   f"[{parser}] the failure must name file:line, function and length", out)
            expect("fits" not in out, f"[{parser}] a 150-line function must pass", out)

            code, out = run(src, "--parser", parser, "--allow", "too_long")
            expect(code == 0, f"[{parser}] an allow-listed long function must pass (exit {code})",
                   out)

            code, out = run(src, "--parser", parser, "--allow", "too_long", "--allow", "fits")
            expect(code == 1 and "'fits' is stale" in out,
                   f"[{parser}] an allow-list entry that fits must fail as stale", out)

        # The real tree (src/, apps/, python/src/): both parsers agree on which functions are too long.
        root = os.path.join(HERE, "..", "..")
        real = [a for d in ("src", "apps", os.path.join("python", "src")) for a in ("--src", os.path.join(root, d))]
        if len(parsers) == 2:
            outs = [run(real[1], *real[2:], "--parser", p, "--no-allow")[1].splitlines()[:-1] for p in parsers]
            names = [sorted(line.split(" is ")[0].split(": ")[1].split("::")[-1] for line in o)
                     for o in outs]
            expect(names[0] == names[1], "ctags and the brace parser disagree on src/, apps/, python/src/",
                   "\n".join(outs[0] + ["---"] + outs[1]))

    for f in failures:
        print("FAIL:", f)
    print(f"check_function_length self-test: {len(failures)} failure(s) over {parsers}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
