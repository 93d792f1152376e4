"""Headless test: the koma_blender add-on at any object scale (issue 40). Run by CTest:

    blender -b --factory-startup --python-exit-code 1 --python test_addon_scale.py -- \
        <build>/python <source>/blender KOMA <mixamo_rig.bvh> WORKDIR [<character.fbx> <animation>]

Blender imports a centimetre FBX (Mixamo's, koma's default) at object scale 0.01, the armature's
own units being centimetres. The test makes Mixamo-style FBX files with `koma convert`
(centimetres) of a shared Mixamo-rig clip (`mixamorig:` names) and, when given, of a shared
character's walk (Mixamo bone names, skinned mesh), and the same rigs in metres (`--fbx-unit m`,
which Blender imports at scale 1); imports each with the add-on's Import (Blender's FBX importer),
and runs Key poses with a 2 cm budget and the cartoon filter on each: the same drawings at both
scales at a sensible rate (at most 14 a second), the same reported error, and the same world-space
result of the cartoon filter (its mean change in cm) and, on the character, of gait apply with an
adverb learned on another rig. Also: the add-on's Import reads GLB (Blender's glTF
importer with numpy's `bool` alias only during the import) and FBX, and says "koma module not found"
and how to install it when the module is missing. Exits 77 (skip) when the clip is absent.
"""
import os
import subprocess
import sys

import bpy
import numpy as np

argv = sys.argv[sys.argv.index("--") + 1:]
python_dir, addon_dir, koma_exe, clip, work = argv[:5]
character = argv[5:7]  # [FILE.fbx, ANIMATION] or []
for f in [clip] + character[:1]:
    if not os.path.exists(f):
        print(f"SKIP: {f} not found")
        sys.exit(77)
os.makedirs(work, exist_ok=True)
sys.path[:0] = [python_dir, addon_dir]

import koma  # noqa: E402,F401
import koma_blender  # noqa: E402
from koma_blender import operators  # noqa: E402

koma_blender.register()
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run_koma(*args):
    out = subprocess.run([koma_exe, *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"koma {' '.join(map(str, args))}: {out.stderr}")


def fresh_scene():
    koma_blender.unregister()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    koma_blender.register()


def key_frames(action):
    return sorted({int(round(kp.co[0])) for fc in action.fcurves for kp in fc.keyframe_points})


def world_heads(obj, frames):
    out = []
    for f in frames:
        bpy.context.scene.frame_set(f)
        out.append([list(obj.matrix_world @ b.head) for b in obj.pose.bones])
    return np.array(out)


def scale_case(stem, source, *read, adverb=None):
    """Key poses (2 cm) and cartoon (and with `adverb`, gait apply at a 1 s period) on `source` as a
    centimetre FBX (object scale 0.01) and a metre FBX (scale 1); checks both give the same result
    in world units."""
    cm_fbx, m_fbx = os.path.join(work, f"{stem}_cm.fbx"), os.path.join(work, f"{stem}_m.fbx")
    run_koma("convert", source, cm_fbx, *read)
    run_koma("convert", source, m_fbx, *read, "--fbx-unit", "m")
    results = {}
    for path in (cm_fbx, m_fbx):
        label = os.path.basename(path)
        fresh_scene()
        ret = bpy.ops.koma.import_bvh(filepath=path)
        obj = bpy.context.view_layer.objects.active
        check(ret == {"FINISHED"} and obj is not None and obj.type == "ARMATURE", f"{label}: imported an armature")
        scale = obj.scale[0]
        source_action = obj.animation_data.action
        frames = key_frames(source_action)
        bpy.context.scene.koma_drawing_fps = 24.0
        bpy.ops.koma.key_poses("EXEC_DEFAULT", mode="ERROR", max_error_cm=2.0)
        keys = key_frames(obj.animation_data.action)
        seconds = (frames[-1] - frames[0] + 1) / (bpy.context.scene.render.fps / bpy.context.scene.render.fps_base)
        curve = operators.curve_of(obj.animation_data.action)
        heads_keys = world_heads(obj, frames)
        obj.animation_data.action = source_action
        bpy.ops.koma.cartoon_filter("EXEC_DEFAULT")
        cartoon = world_heads(obj, frames)
        obj.animation_data.action = source_action
        original = world_heads(obj, frames)
        change_cm = 100 * np.linalg.norm(cartoon - original, axis=2).mean()
        gait = None
        if adverb:
            ret = bpy.ops.koma.gait_apply("EXEC_DEFAULT", period=1.0,
                                          adverbs=[{"name": "swing", "filepath": adverb, "alpha": 1.0}])
            check(ret == {"FINISHED"}, f"{label}: gait apply ran")
            gait = world_heads(obj, frames)
            moved = np.abs(gait - original).max()
            check(moved > 1e-3, f"{label}: gait apply changes the walk ({100 * moved:.1f} cm at most)")
            obj.animation_data.action = source_action
        results[label] = (scale, keys, seconds, heads_keys, change_cm, curve, gait)
        print(f"{label}: object scale {scale:g}, {len(frames)} frames ({seconds:.2f} s), key poses within 2 cm: "
              f"{len(keys)} drawings = {len(keys) / seconds:.1f} a second; cartoon mean change {change_cm:.2f} cm")

    (s_cm, k_cm, sec, h_cm, c_cm, curve_cm, g_cm), (s_m, k_m, _, h_m, c_m, curve_m, g_m) = results.values()
    if adverb:
        change = np.abs(g_cm - g_m).max()
        check(change < 1e-4, f"{stem}: gait apply gives the same world-space result at both scales ({change:.2e} m)")
    check(abs(s_cm - 0.01) < 1e-6 and abs(s_m - 1.0) < 1e-6, f"{stem}: imported at object scale 0.01 and 1 ({s_cm:g}, {s_m:g})")
    check(k_cm == k_m, f"{stem}: the same drawings at both scales ({len(k_cm)} vs {len(k_m)})")
    check(len(k_cm) / sec <= 14.0, f"{stem}: a sensible rate: {len(k_cm) / sec:.1f} drawings a second (at most 14)")
    check(len(k_cm) >= 3, f"{stem}: more than the first and last pose ({len(k_cm)} drawings)")
    check(np.abs(h_cm - h_m).max() < 1e-4, f"{stem}: the held poses agree in world space ({np.abs(h_cm - h_m).max():.2e} m)")
    check(abs(c_cm - c_m) <= 0.01 * max(c_m, 1e-9), f"{stem}: cartoon mean change {c_cm:.2f} cm at 0.01, {c_m:.2f} cm at 1")
    check(bool(curve_cm) and bool(curve_m)
          and all(abs(a[1] - b[1]) <= 1e-3 * max(b[1], 1e-6) for a, b in zip(curve_cm, curve_m)),
          f"{stem}: the stored error curve (cm) is the same at both scales")
    return cm_fbx


cm_fbx = scale_case("mixamo", clip, "--fps", "30")
if character:
    swing = os.path.join(work, "swing.adverb.json")  # an adverb learned on another rig (mapped by role)
    data = os.path.join(addon_dir, "..", "tests", "data")
    run_koma("gait", "adverb", os.path.join(data, "gait_walk.bvh"), os.path.join(data, "gait_walk_swing.bvh"), "-o", swing)
    scale_case("character_walk", character[0], "--animation", character[1], adverb=swing)

# GLB through the add-on's Import: Blender's glTF importer, numpy's bool alias only while it runs.
glb = os.path.join(work, "mixamo.glb")
run_koma("convert", cm_fbx, glb)
fresh_scene()
had_bool = hasattr(np, "bool")
ret = bpy.ops.koma.import_bvh(filepath=glb)
obj = bpy.context.view_layer.objects.active
check(ret == {"FINISHED"} and obj is not None and obj.type == "ARMATURE", "GLB: imported an armature")
check(hasattr(np, "bool") == had_bool, "GLB: numpy's bool alias is gone after the import")

# No koma module: the panel and the Import say so, and how to install it.
MISSING = koma_blender.common.MISSING
check("koma module not found" in MISSING and "KOMA_PYTHONPATH" in MISSING
      and "scripts/modules" in MISSING, "the missing-module message says how to install koma")
io_module = koma_blender.io_bvh  # the Import operator's module
saved = io_module.koma
io_module.koma = None
try:
    try:
        bpy.ops.koma.import_bvh(filepath=clip)
        check(False, "BVH import without the module reports an error")
    except RuntimeError as e:
        check("koma module not found" in str(e), f"BVH import without the module: {str(e).strip()[:60]}...")
finally:
    io_module.koma = saved

if failures:
    print(f"FAILED ({len(failures)}):\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all checks passed")
