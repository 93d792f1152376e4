"""Headless Blender check of koma's FBX reader against Blender's own FBX importer.

Run by CTest only when `blender` is on PATH (tests/io/CMakeLists.txt, one test per file):
    blender -b --factory-startup --python-exit-code 1 --python test_fbx_import.py -- \
        KOMA FILE.fbx WORKDIR
Skips (exit 77) when not run inside Blender. For up to three stacks of FILE (junk stacks of at most
one frame are left out) it runs `KOMA positions FILE --animation i --out-unit m`, imports FILE with
bpy.ops.import_scene.fbx, plays the matching action and, at the first, middle and last frame,
compares every pair of joints that both sides have: |distance(koma) - distance(Blender bone heads)|
must stay within 1 mm scaled to a 1.8 m character (max(1, height / 1.8) mm). Distances do not depend
on the axis convention, so Blender's Z-up scene compares directly with koma's Y-up one.

Blender 3.4 imports binary FBX only (ASCII files are refused by its importer), so ASCII files are
not compared here. Bone heads include Blender's bones made from "_end" leaf nodes, which koma has
as end sites of the same name.
"""
import csv
import itertools
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fbx_args import fbx_args, run_koma as _run_koma  # noqa: E402

koma, fbx, workdir = fbx_args("test_fbx_import.py")
import bpy  # noqa: E402


def run_koma(*argv):
    return _run_koma(koma, *argv)


def koma_positions(path, stack, name):
    """koma's world positions per frame: {joint: [(x, y, z) per frame]} in metres."""
    csv_path = os.path.join(workdir, name)
    run_koma("positions", path, "--animation", str(stack), "--out-unit", "m", "-o", csv_path)
    with open(csv_path) as f:
        rows = list(csv.reader(f))
    header, data = rows[0], rows[1:]
    joints = {}
    for c in range(2, len(header), 3):
        joint = header[c].rsplit(".", 1)[0]
        joints[joint] = [tuple(float(r[c + k]) for k in range(3)) for r in data]
    return joints


info = json.loads(run_koma("info", fbx, "--json"))
height = max(info["height_m"], 1e-9)
tolerance = 1e-3 * max(1.0, height / 1.8)
stacks = [a for a in info["animations"] if not a["junk"]][:3]
assert stacks, f"{fbx}: no stack to compare"

bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.fbx(filepath=fbx)
scene = bpy.context.scene
armatures = [o for o in bpy.data.objects if o.type == "ARMATURE"]
assert len(armatures) == 1, f"expected one armature, got {len(armatures)}"
arm = armatures[0]
if arm.animation_data is None:
    arm.animation_data_create()


def action_for(stack_name):
    """Blender names an imported action '<object>|<stack>'; take the longest name match."""
    for a in bpy.data.actions:
        if a.name == stack_name or a.name.endswith("|" + stack_name):
            return a
    short = stack_name.split("|")[-1]
    matches = [a for a in bpy.data.actions if a.name.split("|")[-1] == short]
    return matches[0] if matches else None


failures = []
for stack in stacks:
    action = action_for(stack["name"])
    if action is None:
        failures.append(f"{stack['name']}: Blender made no action for it ({[a.name for a in bpy.data.actions]})")
        continue
    arm.animation_data.action = action
    ours = koma_positions(fbx, stack["index"], f"koma_{stack['index']}.csv")
    names = [b.name for b in arm.pose.bones if b.name in ours]
    frames = len(next(iter(ours.values())))
    start = action.frame_range[0]
    # Blender's frame for koma frame f (time f / rate): the action starts on the stack's first frame,
    # and Blender 3.4's importer places a key at time x render.fps, ignoring fps_base (a 14.985 fps
    # file gets render.fps 15, fps_base 1.001, and keys 1.001 frames apart).
    step = scene.render.fps / stack["fps"]
    worst = (0.0, "", 0)
    for f in sorted({0, frames // 2, frames - 1}):
        at = start + f * step
        scene.frame_set(int(math.floor(at)), subframe=at % 1.0)
        heads = {n: arm.matrix_world @ arm.pose.bones[n].head for n in names}
        for a, b in itertools.combinations(names, 2):
            d_koma = math.dist(ours[a][f], ours[b][f])
            d_blender = (heads[a] - heads[b]).length
            err = abs(d_koma - d_blender)
            if err > worst[0]:
                worst = (err, f"{a}-{b}", f)
    print(f"{os.path.basename(fbx)} '{stack['name']}': {len(names)} joints, worst {worst[0] * 1000:.4f} mm "
          f"({worst[1]} at frame {worst[2]}), tolerance {tolerance * 1000:.3f} mm")
    if len(names) < 2:
        failures.append(f"{stack['name']}: only {len(names)} bones in common")
    if worst[0] > tolerance:
        failures.append(f"{stack['name']}: {worst[1]} differs by {worst[0] * 1000:.3f} mm at frame {worst[2]}")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("ok")
