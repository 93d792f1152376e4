"""Shared start of the FBX checks run inside Blender (test_fbx_import.py, test_fbx_character.py):
`blender -b --python SCRIPT -- KOMA FILE.fbx WORKDIR`. Exits 77 (CTest: skipped) outside Blender or
when FILE is absent, 2 on a wrong command line; else returns (koma, fbx, workdir) and `run_koma`."""
import os
import subprocess
import sys


def fbx_args(script):
    try:
        import bpy  # noqa: F401  (only inside Blender)
    except ImportError:
        print("skipped: not running inside Blender")
        sys.exit(77)
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    if len(args) < 3:
        print(f"usage: blender -b --python {script} -- koma file.fbx workdir")
        sys.exit(2)
    koma, fbx, workdir = args[:3]
    if not os.path.exists(fbx):
        print(f"skipped: {fbx} not found (the real corpus sits beside the checkout as ../shared/data)")
        sys.exit(77)
    os.makedirs(workdir, exist_ok=True)
    return koma, fbx, workdir


def run_koma(koma, *argv):
    """koma's stdout; a failure ends the test with its stderr."""
    out = subprocess.run([koma, *map(str, argv)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"koma {' '.join(map(str, argv))} failed ({out.returncode}): {out.stderr}")
    return out.stdout
