#!/usr/bin/python3
"""One browser case of issue 21: koma keys -> report, koma view -> folder, then check_viewer.py.

usage: browser_case.py --koma KOMA --chromium CHROMIUM --work DIR --input CLIP [--animation NAME]
                       [--compare-held] [--screenshot OUT.png]
The report's key count is what the page must show as data-koma-drawings. With --compare-held the
result viewport is the held file koma keys wrote (read back, written as STEP again), not the input
held on the report. Exit 77 (skip) when the clip or chromium is absent.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {r.returncode}\n{r.stdout}{r.stderr}")
        sys.exit(1)
    return r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--koma", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--animation")
    ap.add_argument("--compare-held", action="store_true")
    ap.add_argument("--screenshot")
    a = ap.parse_args()
    if not os.path.exists(a.input):
        print(f"SKIP: {a.input} not found (the shared corpus sits beside the checkout as ../shared/data)")
        return 77
    if not shutil.which(a.chromium) and not os.path.exists(a.chromium):
        print(f"SKIP: chromium not found ({a.chromium}); make deps installs it")
        return 77
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    ext = os.path.splitext(a.input)[1].lower()
    held = os.path.join(a.work, "held.glb" if ext in (".glb", ".gltf") else "held.bvh")
    report = os.path.join(a.work, "report.json")
    anim = ["--animation", a.animation] if a.animation else []
    run([a.koma, "keys", a.input, *anim, "-o", held, "--report", report])
    keys = json.load(open(report))["layers"][0]["key_count"]
    page = os.path.join(a.work, "viewer")
    cmd = [a.koma, "view", a.input, *anim, "--keys", report, "-o", page]
    if a.compare_held:
        cmd += ["--compare", held]
    print(run(cmd).strip())
    check = [sys.executable, os.path.join(HERE, "check_viewer.py"), "--chromium", a.chromium,
             "--page", os.path.join(page, "index.html"), "--drawings", str(keys)]
    if a.screenshot:
        check += ["--screenshot", a.screenshot]
    return subprocess.run(check).returncode


if __name__ == "__main__":
    sys.exit(main())
