"""Headless Blender check that koma carries an FBX file's skinned character to glTF.

Run by CTest only when `blender` is on PATH (tests/io/CMakeLists.txt, one test per file):
    blender -b --factory-startup --python-exit-code 1 --python test_fbx_character.py -- \
        KOMA FILE.fbx WORKDIR
Skips (exit 77) when not run inside Blender or when FILE is absent. It runs
`KOMA convert FILE -o WORKDIR/character.glb` (the first clip that is not junk), then imports FILE
with Blender's FBX importer and the GLB with its glTF importer, plays both, and at the first,
middle and last frame measures every mesh vertex after the armature deforms it (world space).
The two imports must agree: the same number of triangles, and a bounding box whose corners differ
by at most 0.2 % of the character's height (koma keeps the four largest weights per vertex, as
glTF asks, where Blender's FBX import keeps them all). Blender's importers are the reference: koma's
reader, writer and inverse bind matrices are checked against code koma does not share. Then
`KOMA keys FILE -o keys.glb --on 2` must import with the same triangles, every mesh on the armature,
and only CONSTANT keys (each drawing held).
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fbx_args import fbx_args, run_koma  # noqa: E402

koma, fbx, workdir = fbx_args("test_fbx_character.py")
import bpy  # noqa: E402
import numpy  # noqa: E402

if not hasattr(numpy, "bool"):
    # Debian's Blender 3.4 glTF importer calls np.bool (removed in numpy 1.24) on every mesh with
    # normals, with its default "Normals" shading; the alias lets the unmodified importer run.
    numpy.bool = bool
glb = os.path.join(workdir, "character.glb")
run_koma(koma, "convert", fbx, glb)
info = json.loads(run_koma(koma, "info", fbx, "--json"))
clip = next(a for a in info["animations"] if not a["junk"])
frames = clip["frames"]


def measure(importer, path):
    """Per sampled frame: (min corner, max corner) of every deformed mesh vertex; triangle count."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    importer(filepath=path)
    scene = bpy.context.scene
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    assert meshes, f"{path}: no mesh imported"
    action = arm.animation_data.action if arm.animation_data else None
    if path.endswith(".fbx"):  # the clip koma converted
        for a in bpy.data.actions:
            if a.name == clip["name"] or a.name.endswith("|" + clip["name"]) or a.name.split("|")[-1] == clip["name"].split("|")[-1]:
                action = a
                break
        arm.animation_data.action = action
    assert action is not None, f"{path}: no action"
    start = action.frame_range[0]
    step = scene.render.fps / clip["fps"]
    triangles = sum(sum(len(p.vertices) - 2 for p in m.data.polygons) for m in meshes)
    boxes = []
    for f in sorted({0, frames // 2, frames - 1}):
        at = start + f * step
        scene.frame_set(int(math.floor(at)), subframe=at % 1.0)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        lo, hi = [math.inf] * 3, [-math.inf] * 3
        for m in meshes:
            ev = m.evaluated_get(depsgraph)
            for v in ev.to_mesh().vertices:
                w = ev.matrix_world @ v.co
                lo = [min(a, b) for a, b in zip(lo, w)]
                hi = [max(a, b) for a, b in zip(hi, w)]
            ev.to_mesh_clear()
        boxes.append((f, lo, hi))
    return boxes, triangles


theirs, tri_fbx = measure(bpy.ops.import_scene.fbx, fbx)
ours, tri_glb = measure(bpy.ops.import_scene.gltf, glb)
height = max(hi[2] - lo[2] for _, lo, hi in theirs)
tolerance = 0.002 * height
failures = []
if tri_fbx != tri_glb:
    failures.append(f"triangles: FBX import {tri_fbx}, koma's GLB {tri_glb}")
for (f, lo_t, hi_t), (_, lo_o, hi_o) in zip(theirs, ours):
    err = max(abs(a - b) for a, b in zip(lo_t + hi_t, lo_o + hi_o))
    print(f"{os.path.basename(fbx)} frame {f}: deformed mesh box differs by {err * 100:.2f} cm "
          f"(height {height:.3f} m, tolerance {tolerance * 100:.2f} cm)")
    if err > tolerance:
        failures.append(f"frame {f}: box {lo_o}..{hi_o} vs Blender's FBX import {lo_t}..{hi_t}")
# FBX -> GLB through `koma keys`: the same mesh and skin, every key CONSTANT (held drawings).
keys_glb = os.path.join(workdir, "keys.glb")
run_koma(koma, "keys", fbx, "-o", keys_glb, "--on", "2", "--animation", clip["index"])
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=keys_glb)
arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
meshes = [o for o in bpy.data.objects if o.type == "MESH"]
tri_keys = sum(sum(len(p.vertices) - 2 for p in m.data.polygons) for m in meshes)
skinned = all(any(md.type == "ARMATURE" and md.object == arm for md in m.modifiers) for m in meshes)
modes = {k.interpolation for fc in arm.animation_data.action.fcurves for k in fc.keyframe_points}
print(f"{os.path.basename(fbx)} keys --on 2 -> GLB: {tri_keys} triangles, skinned {skinned}, interpolation {sorted(modes)}")
if tri_keys != tri_fbx or not skinned:
    failures.append(f"keys GLB: {tri_keys} triangles (FBX {tri_fbx}), every mesh on the armature: {skinned}")
if modes != {"CONSTANT"}:
    failures.append(f"keys GLB: interpolation {sorted(modes)}, expected only CONSTANT")
if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("ok")
