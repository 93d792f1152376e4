#!/usr/bin/python3
"""Which FBX writer? assimp's exporter, Blender's io_scene_fbx and koma's own, against the checks
of issue 40 (docs/fbx.md, "Choosing the writer"). Re-run:

    /usr/bin/python3 scripts/fbx_writer_compare.py --koma build/release/apps/koma/koma \
        --data ../shared/data --work /tmp/fbx_compare [--cases Fox,CesiumMan,AnimatedHuman,bvh_walk]

For each case `koma keys SOURCE --on 2` writes run.glb (the reference: koma's glTF output, checked
elsewhere) and koma.fbx; the other writers get the same result from run.glb:
  - assimp: `fbx_assimp_export run.glb assimp.fbx fbx` (scripts/fbx_assimp_export.cpp, compiled
    here against Debian's libassimp: assimp 5.2's exporter as koma would link it);
  - Blender: Blender 3.4 imports run.glb and exports blender.fbx with io_scene_fbx (every frame
    baked, no key simplification, one take per action, no leaf bones: its best chance), driven
    headless as an external program (its code is GPL: nothing of it is in koma).
Each FBX then goes through the three importers the issue names: Blender's FBX importer
(tests/blender/test_fbx_export.py), three.js r147's FBXLoader in headless Chromium
(tests/view/fbx_three_check.py) and koma's reader (`koma positions` against the GLB's, every frame).
Prints one Markdown table: per writer and importer, pass/fail with the worst joint error (% of
height), the take name and the distinct poses, or the reason it failed.
"""
import argparse
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASES = {
    "Fox": ("gltf/Fox/Fox.glb", ["--animation", "Walk"]),
    "CesiumMan": ("gltf/CesiumMan/CesiumMan.gltf", []),
    "AnimatedHuman": ("fbx/quaternius_AnimatedHuman.fbx", ["--animation", "Walk"]),
    "bvh_walk": ("bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh", []),
}
BLENDER_EXPORT = """
import bpy, numpy, sys
glb, out = sys.argv[sys.argv.index('--') + 1:][:2]
bpy.ops.wm.read_factory_settings(use_empty=True)
numpy.bool = bool  # Debian Blender 3.4's glTF importer calls np.bool (removed in numpy 1.24)
bpy.ops.import_scene.gltf(filepath=glb)
del numpy.bool
# Its best chance: every frame baked, no key simplification, one take per action, no leaf bones.
bpy.ops.export_scene.fbx(filepath=out, bake_anim=True, add_leaf_bones=False, bake_anim_use_all_actions=True,
                         bake_anim_use_nla_strips=False, bake_anim_step=1.0, bake_anim_simplify_factor=0.0)
"""


def run(cmd, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def positions(koma, path):
    r = run([koma, "positions", path, "--out-unit", "m", "-o", path + ".csv"], check=False)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"
    rows = list(csv.reader(open(path + ".csv")))
    head, data = rows[0], rows[1:]
    return {head[c].rsplit(".", 1)[0]: [tuple(float(r[c + k]) for k in range(3)) for r in data]
            for c in range(2, len(head), 3)}, ""


def koma_check(koma, glb, fbx, drawings):
    ref, _ = positions(koma, glb)
    got, why = positions(koma, fbx)
    if got is None:
        return f"fail: {why[:90]}"
    names = sorted(set(ref) & set(got))
    frames = min(len(next(iter(ref.values()))), len(next(iter(got.values()))))
    height = max(p[1] for p in (v[0] for v in ref.values())) - min(p[1] for p in (v[0] for v in ref.values()))
    worst = max((math.dist(ref[n][f], got[n][f]) for n in names for f in range(frames)), default=math.inf)
    take = json.loads(run([koma, "info", fbx, "--json"]).stdout)["animations"][0]["name"]
    want = json.loads(run([koma, "info", glb, "--json"]).stdout)["animations"][0]["name"]
    poses = 1 + sum(1 for f in range(1, frames) if max(math.dist(got[n][f], got[n][f - 1]) for n in names) > 1e-5 * height)
    ok = worst <= 1e-3 * height and take == want and poses == drawings and frames == len(next(iter(ref.values())))
    return (f"{'pass' if ok else 'fail'}: {len(names)} joints, worst {100 * worst / height:.4f} %, take '{take}', "
            f"{poses} poses / {drawings} drawings")


def summarise(out):
    """The verdict and the measured lines of a check script's output."""
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    failed = [ln for ln in lines if ln.startswith(("FAILED", "FAIL:", "Error", "Traceback"))]
    keep = [ln for ln in lines if re.search(r"worst|take|clip|poses|only|FAIL|Error|exception", ln)]
    text = "; ".join(keep)[:400]
    return ("fail: " if failed or "ok" not in lines else "pass: ") + text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--koma", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--chromium", default="chromium")
    ap.add_argument("--three", default=os.path.join(ROOT, "view/node_modules/three"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    exporter = os.path.join(a.work, "fbx_assimp_export")
    run(["g++", "-O1", os.path.join(HERE, "fbx_assimp_export.cpp"), "-o", exporter, "-lassimp"])
    script = os.path.join(a.work, "blender_export.py")
    open(script, "w").write(BLENDER_EXPORT)
    rows = []
    for case in a.cases.split(","):
        source, extra = CASES[case]
        source = os.path.join(a.data, source)
        d = os.path.join(a.work, case)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        glb, summary = os.path.join(d, "run.glb"), os.path.join(d, "summary.json")
        out = run([a.koma, "keys", source, *extra, "--on", "2", "-o", glb, "--json"]).stdout
        open(summary, "w").write(out)
        drawings = json.loads(out)["key_count"]
        fbx = {w: os.path.join(d, f"{w}.fbx") for w in ("koma", "assimp", "blender")}
        run([a.koma, "keys", source, *extra, "--on", "2", "-o", fbx["koma"]])
        made = {"koma": "", "assimp": run([exporter, glb, fbx["assimp"], "fbx"], check=False).stderr.strip(),
                "blender": run(["blender", "-b", "--factory-startup", "--python", script, "--", glb, fbx["blender"]],
                               check=False).stderr.strip()}
        for writer, path in fbx.items():
            if not os.path.exists(path):
                rows.append((case, writer, f"not written: {made[writer][-200:]}", "", ""))
                continue
            blender = run(["blender", "-b", "--factory-startup", "--python-exit-code", "1", "--python",
                           os.path.join(ROOT, "tests/blender/test_fbx_export.py"), "--", a.koma, source,
                           os.path.join(d, f"bl_{writer}"), "--fbx", path, "--glb", glb, "--report", summary], check=False)
            three = run(["/usr/bin/python3", os.path.join(ROOT, "tests/view/fbx_three_check.py"), "--koma", a.koma,
                         "--chromium", a.chromium, "--three", a.three, "--work", os.path.join(d, f"three_{writer}"),
                         "--input", source, "--fbx", path, "--glb", glb, "--drawings", str(drawings)], check=False)
            rows.append((case, writer, summarise(blender.stdout + blender.stderr), summarise(three.stdout + three.stderr),
                         koma_check(a.koma, glb, path, drawings)))
            print(" | ".join(rows[-1]), file=sys.stderr)
    print("| case | writer | Blender's FBX importer | three.js FBXLoader | koma's reader |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")


if __name__ == "__main__":
    main()
