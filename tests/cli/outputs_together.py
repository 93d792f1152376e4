"""Multi-file outputs appear together or not at all (issue 17): `koma keys` with a report, an
exposure sheet, a contact sheet and the motion, and `koma cartoon` with a report, run with a file
size limit (RLIMIT_FSIZE 85 KiB, SIGXFSZ ignored) that the motion (and the contact sheet) exceed
but the reports do not. The command must fail with exit 6 naming the output that could not be
written (never a temporary name), and leave none of its outputs nor any temporary file; without the
limit, all of them appear.

    outputs_together.py KOMA WORK_DIR
"""
import os
import resource
import shutil
import signal
import subprocess
import sys

koma, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
subprocess.run([koma, "demo", "--output-dir", os.path.join(work, "demo")], check=True, capture_output=True)
walk = os.path.join(work, "demo", "walk.bvh")
failures = []


def limited():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (85 * 1024, 85 * 1024))  # keys r.json 78 KiB, toon.bvh 90 KiB


def run(args, limit):
    return subprocess.run([koma] + args, capture_output=True, text=True, preexec_fn=limited if limit else None)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


CASES = {
    # The motion is written last: before outputs were staged, r.json and x.csv were left behind.
    "keys_reports": (["keys", walk, "-o", "OUT/held.bvh", "--fps", "120", "--report", "OUT/r.json", "--xsheet",
                      "OUT/x.csv"], ["held.bvh", "r.json", "x.csv"]),
    "keys": (["keys", walk, "-o", "OUT/held.bvh", "--fps", "120", "--report", "OUT/r.json", "--xsheet", "OUT/x.csv",
              "--contact-sheet", "OUT/sheet.png"], ["held.bvh", "r.json", "x.csv", "sheet.png"]),
    "cartoon": (["cartoon", walk, "-o", "OUT/toon.bvh", "--report", "OUT/toon.json"], ["toon.bvh", "toon.json"]),
}
for name, (args, outputs) in CASES.items():
    out = os.path.join(work, name)
    os.makedirs(out)
    a = [x.replace("OUT", out) for x in args]
    r = run(a, limit=True)
    left = sorted(os.listdir(out))
    check(r.returncode == 6, f"{name} with a full disk exits 6 (got {r.returncode}: {r.stderr.strip()})")
    check(any(os.path.join(out, o) + ":" in r.stderr for o in outputs) and ".tmp" not in r.stderr,
          f"{name}: the error names an output, not a temporary")
    check(left == [], f"{name}: nothing written, no temporary left ({left})")
    r = run(a, limit=False)
    check(r.returncode == 0 and sorted(os.listdir(out)) == sorted(outputs),
          f"{name} without the limit writes all of {outputs} ({sorted(os.listdir(out))})")

print("all checks passed" if not failures else f"{len(failures)} check(s) failed")
sys.exit(1 if failures else 0)
