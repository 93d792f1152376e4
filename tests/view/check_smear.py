#!/usr/bin/python3
"""Smears in the viewer (issue 42), measured in headless Chromium as koma render's are.

Holds INPUT on 2s (`koma keys --on 2 --report`), writes `koma view INPUT --keys REPORT --smear`,
opens it (the page must say data-koma-smear="smear", the option), and on every drawing of the
result (right) viewport compares the character's silhouette with smears on and off (the
character's pixels are those that differ from the viewport with the characters hidden):
  --fast: at least one drawing's silhouette grows by >= 15 %, and drawings the page does not
          smear (koma.smeared() false: the character's own meshes are drawn) are pixel-identical
          with smears on and off (the first 8 of them are pictured);
  --slow: no drawing changes by more than 3 %.
Also --multiples must change the fastest drawing. Prints one JSON line. Exit 0 = pass, 1 = a
check failed, 77 = skipped.

usage: check_smear.py --koma KOMA --chromium CHROMIUM --work DIR --input FILE [--animation NAME]
                      (--fast | --slow) [--screenshot OUT.png]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np  # Debian python3-numpy
    from check_viewer import Browser, Check  # exits 77 itself when websocket or PIL is missing
except ImportError as e:  # pragma: no cover - reported as a skip
    print(f"SKIP: {e.name} is missing (make deps installs python3-numpy)")
    sys.exit(77)

GROW, STEADY = 0.15, 0.03


class Page:
    def __init__(self, b, url, timeout):
        self.b = b
        t0 = time.time()
        b.call("Page.navigate", url=url)
        state = None
        while time.time() - t0 < timeout:
            state = b.js("document.body ? [document.body.dataset.komaReady || '', document.body.dataset.komaError || '',"
                         " document.documentElement.dataset.komaSmear || ''] : null")
            if state and (state[0] == "true" or state[1]):
                break
            time.sleep(0.1)
        if not state or state[1]:
            raise Check(f"{url}: the page reports an error: {state[1] if state else 'no body'}")
        if state[0] != "true":
            raise Check(f"{url}: komaReady not set after {timeout} s")
        self.smear = state[2]
        r = b.js("(() => { const r = document.getElementById('viewports').getBoundingClientRect();"
                 " return {x: r.left, y: r.top, width: r.width, height: r.height}; })()")
        half = int(r["width"]) // 2
        self.right = {"x": r["x"] + half, "y": r["y"], "width": int(r["width"]) - half, "height": r["height"]}

    def shot(self):
        self.b.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))", await_promise=True)
        return np.asarray(self.b.screenshot(self.right), dtype=np.int16)


def silhouette(img, empty):
    return int((np.abs(img - empty).sum(axis=2) > 24).sum())


def measure(page):
    drawings = page.b.js("koma.drawings")
    page.b.js("koma.setCharactersVisible(false)")
    page.b.js(f"koma.seek({drawings[0]})")
    empty = page.shot()
    page.b.js("koma.setCharactersVisible(true)")
    rows, unsmeared = [], 0
    for f in drawings[1:]:
        page.b.js(f"koma.seek({f})")
        page.b.js("koma.setSmear('smear')")
        smeared = bool(page.b.js("koma.smeared()"))
        if not smeared:
            unsmeared += 1
            if unsmeared > 8:  # drawn by the character's own meshes: a few pictures show it
                rows.append({"frame": f, "smeared": False, "growth": 0.0, "identical": True})
                continue
        img = page.shot()
        page.b.js("koma.setSmear('off')")
        plain = page.shot()
        a, s = silhouette(plain, empty), silhouette(img, empty)
        rows.append({"frame": f, "smeared": smeared, "growth": s / max(a, 1) - 1,
                     "identical": bool((plain == img).all()), "plain": plain, "img": img})
    return rows, empty


def run(args):
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    extra = [f"--animation={args.animation}"] if args.animation else []
    report = os.path.join(work, "keys.json")
    subprocess.run([args.koma, "keys", args.input, "-o", os.path.join(work, "held.glb" if args.animation else "held.bvh"),
                    "--on", "2", "--report", report, *extra], check=True, stdout=subprocess.DEVNULL)
    out = os.path.join(work, "view")
    subprocess.run([args.koma, "view", args.input, "--keys", report, "-o", out, "--smear", *extra], check=True,
                   stdout=subprocess.DEVNULL)
    b = Browser(args.chromium, 1280, 800)
    try:
        page = Page(b, "file://" + os.path.join(out, "index.html"), 120)
        if page.smear != "smear":
            raise Check(f"koma view --smear: the page opened with data-koma-smear='{page.smear}'")
        rows, empty = measure(page)
        most = max(rows, key=lambda r: r["growth"])
        change = max(abs(r["growth"]) for r in rows)
        result = {"input": os.path.basename(args.input), "drawings": len(rows) + 1,
                  "smeared": sum(r["smeared"] for r in rows), "largest_growth": round(most["growth"], 4),
                  "largest_change": round(change, 4), "at_frame": most["frame"],
                  "unsmeared_identical": all(r["identical"] for r in rows if not r["smeared"])}
        if args.fast:
            page.b.js(f"koma.seek({most['frame']})")
            page.b.js("koma.setSmear('multiples')")
            copies = silhouette(page.shot(), empty) / max(silhouette(most["plain"], empty), 1) - 1
            result["multiples_growth"] = round(copies, 4)
            if args.screenshot:
                from PIL import Image
                Image.fromarray(np.concatenate([most["plain"], most["img"]], axis=1).astype(np.uint8)).save(args.screenshot)
        print(json.dumps(result))
        if b.errors:
            raise Check("the page logged errors: " + "; ".join(b.errors[:3]))
        if not result["unsmeared_identical"]:
            raise Check("a drawing the page does not smear changed with smears on")
        if args.fast and most["growth"] < GROW:
            raise Check(f"no drawing's silhouette grows by {GROW:.0%} with smears (largest {most['growth']:.1%})")
        if args.fast and not result["multiples_growth"] > 0.01:
            raise Check("multiples do not change the fastest drawing")
        if args.slow and change > STEADY:
            raise Check(f"a drawing of a slow take changes by {change:.1%} (at most {STEADY:.0%})")
    finally:
        b.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--koma", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--animation", default="")
    kind = ap.add_mutually_exclusive_group(required=True)
    kind.add_argument("--fast", action="store_true")
    kind.add_argument("--slow", action="store_true")
    ap.add_argument("--screenshot")
    args = ap.parse_args()
    if not os.path.exists(args.input):
        print(f"SKIP: {args.input} not found")
        return 77
    if not shutil.which(args.chromium):
        print(f"SKIP: {args.chromium} not found")
        return 77
    try:
        run(args)
    except Check as e:
        print(f"FAIL: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
