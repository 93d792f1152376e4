#!/usr/bin/python3
"""Self-test of check_arrows.py: a clean temporary tree passes, and the same tree with one include,
and separately one CMake link, that crosses the table fails naming the file, line and arrow."""
import pathlib
import subprocess
import sys
import tempfile

CHECK = pathlib.Path(__file__).resolve().with_name("check_arrows.py")

TABLE = """# test tree
| module | holds | uses |
|---|---|---|
| `core` | plain data | Eigen |
| `body` | roles | core |
| `keys` | selection | core, body (contacts) |
| `gait` | spectra | core, body |
| `video` (optional) | flow | core, keys (tracks) |
| `apps/koma`, `python/` | front ends | everything |
"""


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run(root):
    r = subprocess.run([sys.executable, str(CHECK), "--root", str(root)], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        write(root, "docs/index.md", TABLE)
        write(root, "include/koma/body/roles.hpp", '#include "koma/core/motion.hpp"\n')
        write(root, "src/keys/select.cpp", '#include "koma/keys/select.hpp"\n#include "koma/body/roles.hpp"\n')
        write(root, "src/keys/CMakeLists.txt", "koma_add_library(keys SOURCES select.cpp DEPS koma::core koma::body)\n")
        write(root, "src/video/flow.cpp", '#include "koma/keys/select.hpp"\n')
        code, out = run(root)
        if code != 0:
            failures.append(f"clean tree: expected exit 0, got {code}:\n{out}")

        # A capability including a sibling capability's header.
        write(root, "src/keys/select.cpp",
              '#include "koma/keys/select.hpp"\n#include "koma/body/roles.hpp"\n#include "koma/gait/cycle.hpp"\n')
        code, out = run(root)
        if code != 1 or "src/keys/select.cpp:3: keys -> gait" not in out:
            failures.append(f"bad include: expected exit 1 naming src/keys/select.cpp:3: keys -> gait, got {code}:\n{out}")
        write(root, "src/keys/select.cpp", '#include "koma/keys/select.hpp"\n')

        # A public header reaching up (body -> keys), and a module missing from the table.
        write(root, "include/koma/body/roles.hpp", '#include "koma/core/motion.hpp"\n  #include <koma/keys/x.hpp>\n')
        write(root, "src/gait/files.cpp", '#include "koma/io/json.hpp"\n')
        code, out = run(root)
        if code != 1 or "include/koma/body/roles.hpp:2: body -> keys" not in out \
                or "src/gait/files.cpp:1: gait -> io (not in the table" not in out:
            failures.append(f"upward include / unknown module: expected both named, got {code}:\n{out}")
        write(root, "include/koma/body/roles.hpp", '#include "koma/core/motion.hpp"\n')
        write(root, "src/gait/files.cpp", "\n")

        # A CMake link the table does not allow.
        write(root, "src/keys/CMakeLists.txt",
              "koma_add_library(keys SOURCES select.cpp\n  DEPS koma::core koma::gait)\n")
        code, out = run(root)
        if code != 1 or "src/keys/CMakeLists.txt:2: keys -> gait" not in out:
            failures.append(f"bad link: expected exit 1 naming src/keys/CMakeLists.txt:2, got {code}:\n{out}")
        write(root, "src/keys/CMakeLists.txt", "koma_add_library(keys SOURCES select.cpp DEPS koma::core)\n")

        # No table at all is an error, not a pass.
        write(root, "docs/index.md", "# no table here\n")
        code, out = run(root)
        if code != 2:
            failures.append(f"missing table: expected exit 2, got {code}:\n{out}")
    for f in failures:
        print(f)
    print("check_arrows self-test:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
