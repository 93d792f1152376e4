"""Headless Blender check of koma's FBX output against koma's GLB of the same run.

Run by CTest only when `blender` is on PATH (tests/io/CMakeLists.txt):
    blender -b --factory-startup --python-exit-code 1 --python test_fbx_export.py -- \
        KOMA SOURCE WORKDIR [--animation NAME] [--fbx FILE.fbx --glb FILE.glb --report SUMMARY.json]
Skips (exit 77) outside Blender or when SOURCE is absent. Unless --fbx/--glb are given it runs
`KOMA keys SOURCE --on 2 [--animation NAME]` twice, writing `run.glb` (with its --json summary) and
`run.fbx`; the same settings give the same drawings. Then Blender's glTF importer reads the GLB
and Blender's own FBX importer the FBX, and at every frame:
  - every joint both have (pose-bone heads, world space: the armature's object scale and Blender's
    unit conversion applied) agrees within 0.1 % of the body height;
  - the box around every deformed mesh vertex agrees within 1 % of the height (when there is a mesh);
and the FBX action is named after the take (the GLB's animation name), and the number of distinct
poses over the frames equals the number of drawings in the report. Prints the worst differences.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fbx_args import fbx_args, run_koma  # noqa: E402

koma, source, workdir = fbx_args("test_fbx_export.py")
import bpy  # noqa: E402
import numpy  # noqa: E402

argv = sys.argv[sys.argv.index("--") + 4:]
opts = {argv[i]: argv[i + 1] for i in range(0, len(argv) - 1, 2)}
fbx = opts.get("--fbx", os.path.join(workdir, "run.fbx"))
glb = opts.get("--glb", os.path.join(workdir, "run.glb"))
report = opts.get("--report", os.path.join(workdir, "run.json"))
if "--fbx" not in opts:
    extra = ["--animation", opts["--animation"]] if "--animation" in opts else []
    summary = run_koma(koma, "keys", source, "-o", glb, "--on", "2", "--json", *extra)
    with open(report, "w") as f:
        f.write(summary)
    run_koma(koma, "keys", source, "-o", fbx, "--on", "2", *extra)
# The drawings: `koma keys --json`'s key_count (koma convert: every frame is a drawing).
drawings = json.load(open(report))["key_count"] if os.path.exists(report) else None
glb_info = json.loads(run_koma(koma, "info", glb, "--json"))
take = glb_info["animations"][0]["name"]
frames = glb_info["frames"]


def sample(importer, path):
    """Per frame: {bone: world head}, and the deformed meshes' box (or None); the action's name."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.render.fps = round(glb_info["fps"])
    if path.endswith(".glb"):  # Debian Blender 3.4's glTF importer calls np.bool (gone in numpy 1.24)
        numpy.bool = bool
    importer(filepath=path)
    if path.endswith(".glb"):
        del numpy.bool
    scene = bpy.context.scene
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    action = arm.animation_data.action
    start = action.frame_range[0]
    poses, boxes = [], []
    for f in range(frames):
        scene.frame_set(int(round(start + f)))
        poses.append({b.name: tuple(arm.matrix_world @ b.head) for b in arm.pose.bones})
        if meshes:
            depsgraph = bpy.context.evaluated_depsgraph_get()
            lo, hi = [math.inf] * 3, [-math.inf] * 3
            for m in meshes:
                ev = m.evaluated_get(depsgraph)
                for v in ev.to_mesh().vertices:
                    w = ev.matrix_world @ v.co
                    lo = [min(a, b) for a, b in zip(lo, w)]
                    hi = [max(a, b) for a, b in zip(hi, w)]
                ev.to_mesh_clear()
            boxes.append(lo + hi)
        else:
            boxes.append(None)
    return poses, boxes, action.name


def distinct(poses, tol):
    count = 1
    for a, b in zip(poses, poses[1:]):
        if max(math.dist(a[n], b[n]) for n in a) > tol:
            count += 1
    return count


ref, ref_box, _ = sample(bpy.ops.import_scene.gltf, glb)
got, got_box, action_name = sample(bpy.ops.import_scene.fbx, fbx)
common = sorted(set(ref[0]) & set(got[0]))
zs = [p[2] for p in ref[0].values()]
height = max(zs) - min(zs)
failures = []
if len(common) < max(2, len(ref[0]) // 2):
    failures.append(f"only {len(common)} bones in common: GLB {sorted(ref[0])}, FBX {sorted(got[0])}")
worst_joint = max(((math.dist(r[n], g[n]), f, n) for f, (r, g) in enumerate(zip(ref, got)) for n in common),
                  default=(0, 0, ""))
print(f"{os.path.basename(source)}: {len(common)} joints over {frames} frames, height {height:.3f} m; "
      f"worst joint {worst_joint[0] * 100:.4f} cm ({worst_joint[0] / height * 100:.4f} % of height) at frame "
      f"{worst_joint[1]} ({worst_joint[2]})")
if worst_joint[0] > 1e-3 * height:
    failures.append(f"joint {worst_joint[2]} at frame {worst_joint[1]} is {worst_joint[0]:.5f} m off (> 0.1 % of height)")
if ref_box[0] is not None:
    worst_box = max((max(abs(a - b) for a, b in zip(r, g)), f) for f, (r, g) in enumerate(zip(ref_box, got_box)))
    print(f"  deformed mesh box: worst {worst_box[0] * 100:.4f} cm ({worst_box[0] / height * 100:.4f} % of height) "
          f"at frame {worst_box[1]}")
    if worst_box[0] > 1e-2 * height:
        failures.append(f"mesh box at frame {worst_box[1]} is {worst_box[0]:.4f} m off (> 1 % of height)")
print(f"  take '{take}', Blender action '{action_name}'")
if action_name != take and not action_name.endswith("|" + take):
    failures.append(f"action '{action_name}' is not named after the take '{take}'")
poses_fbx = distinct([{n: p[n] for n in common} for p in got], 1e-5 * height)
poses_glb = distinct([{n: p[n] for n in common} for p in ref], 1e-5 * height)
print(f"  distinct poses: FBX {poses_fbx}, GLB {poses_glb}, drawings {drawings}")
if drawings is not None and poses_fbx != drawings:
    failures.append(f"{poses_fbx} distinct poses in the FBX import, {drawings} drawings")
if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("ok")
