"""What the CLI test scripts share: run koma, stop with a message, find atomic writes' leftovers.

The scripts run as `python3 tests/cli/NAME.py ...`, so this folder is on sys.path and they import it
as `from cli_support import fail, run, must, temp_files`.
"""
import os
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(koma, *args):
    """koma's (exit status, stdout, stderr); arguments may be paths or numbers."""
    p = subprocess.run([koma, *map(str, args)], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def must(koma, *args):
    """run(), failing the test unless koma exits 0; its stdout."""
    rc, so, se = run(koma, *args)
    if rc != 0:
        fail(f"koma {' '.join(map(str, args))}: exit {rc}\n{so}\n{se}")
    return so


def temp_files(root, suffixes=(".tmp",)):
    """An atomic write's leftovers under `root`: .NAME.koma-PID-RANDOM.tmp (and, when asked, .old and
    .log); not the batch's own .koma-batch.json."""
    return [p for p in root.rglob("*") if ".koma-" in p.name and p.suffix in suffixes]


def require_shared(*paths):
    """Skips the test (exit 77, CTest's SKIP_RETURN_CODE) unless every file of the shared corpus exists."""
    for f in paths:
        if not os.path.exists(f):
            print(f"skipped: {f} not found (the shared corpus sits beside the checkout as ../shared/data)")
            sys.exit(77)
