"""Headless test of the koma_blender add-on on a 120 fps take (run by CTest when Blender is installed):

    blender -b --factory-startup --python-exit-code 1 --python test_koma_addon_rates.py -- \
        <build>/python <source>/blender <take_120fps.bvh>

What an animator meets in a mocap-rate scene: key poses on the 24 fps drawing grid (on 2s = 12
drawings a second, each held a whole number of drawings), re-runs that read the original action
(on 3 after on 2 gives on-3s timing; koma's own markers are never locks), CONSTANT keys, the
original action never changed, undo, Compare, the cartoon filter doing the same at 120 and 30 fps,
squash keyed as bone scale, and errors in the panel's words. Exits 77 (skip) when the file is absent.
"""
import os
import sys

import bpy
import numpy as np

argv = sys.argv[sys.argv.index("--") + 1:]
python_dir, addon_dir, bvh_path = argv[:3]
if not os.path.exists(bvh_path):
    print(f"SKIP: {bvh_path} not found")
    sys.exit(77)
sys.path[:0] = [python_dir, addon_dir]

import koma  # noqa: E402
import koma_blender  # noqa: E402
from koma_blender import convert, operators  # noqa: E402

koma_blender.register()
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def fingerprint(action):
    """Every key of every curve: equal fingerprints = an unchanged action."""
    return tuple((fc.data_path, fc.array_index, tuple(round(v, 9) for kp in fc.keyframe_points for v in kp.co))
                 for fc in action.fcurves)


def key_frames(action):
    return sorted({int(round(kp.co[0])) for fc in action.fcurves for kp in fc.keyframe_points})


def expect_error(op, what, words=(), **kw):
    try:
        op(**kw)
        check(False, f"{what}: reported an error")
        return ""
    except RuntimeError as e:
        msg = str(e).strip()
        check("Error" in msg, f"{what}: reported an error ({msg})")
        check("--" not in msg, f"{what}: no CLI flag in the message")
        for w in words:
            check(w in msg, f"{what}: the message says '{w}'")
        return msg


for o in list(bpy.data.objects):
    bpy.data.objects.remove(o)
scene = bpy.context.scene

# An armature with no animation: an error in Blender's words, nothing written.
bpy.ops.object.armature_add()
expect_error(bpy.ops.koma.key_poses, "key poses on an armature with no animation", words=("no action",))
expect_error(bpy.ops.koma.cartoon_filter, "cartoon on an armature with no animation", words=("no action",))
bpy.data.objects.remove(bpy.context.active_object)

# ---- a 120 fps take in a 120 fps scene -------------------------------------------------------------
bpy.ops.koma.import_bvh(filepath=bvh_path)
obj = bpy.context.active_object
original = obj.animation_data.action
scene_fps = convert.scene_fps(scene)
check(abs(scene_fps - 120) < 0.5, f"the scene runs at the take's rate ({scene_fps:g} fps)")
check(abs(scene.koma_drawing_fps - 24) < 1e-9, "the drawing rate defaults to 24 fps")
before = fingerprint(original)
F = obj.animation_data.action.frame_range[1] - obj.animation_data.action.frame_range[0] + 1
seconds = (F - 1) / scene_fps
step = scene_fps / 24.0  # scene frames per drawing: 5


def drawing_timing(action, on):
    """Checks a key-poses result: drawings a second, holds a whole number of drawings >= on."""
    frames = key_frames(action)
    holds = np.diff(frames)
    per_second = (len(frames) - 1) / seconds
    check(per_second <= 24.0 / on + 0.5,
          f"on {on}: {per_second:.2f} drawings a second (<= {24 / on:g} at 24 fps; {len(frames)} keys in {seconds:.2f} s)")
    check(per_second >= 24.0 / on * 0.8, f"on {on}: not far fewer drawings than on {on}s ({per_second:.2f} a second)")
    whole = np.abs(holds / step - np.round(holds / step)).max()
    check(whole < 1e-9, f"on {on}: every hold is a whole number of drawings ({step:g} scene frames each)")
    check(holds.min() >= on * step - 1e-9, f"on {on}: no hold shorter than {on} drawings (min {holds.min() / step:g})")
    check(all(kp.interpolation == "CONSTANT" for fc in action.fcurves for kp in fc.keyframe_points),
          f"on {on}: every key is CONSTANT")
    markers = sorted(m.frame for m in scene.timeline_markers if m.name.startswith(operators.MARKER_PREFIX))
    check(markers == [f + 1 for f in frames] or markers == frames, f"on {on}: a koma marker on every key")
    return frames


bpy.ops.ed.undo_push(message="imported")
bpy.ops.koma.key_poses(mode="ON", on=2)
on2 = obj.animation_data.action
check(on2 is not original and on2.get(operators.SOURCE_KEY) == original.name,
      f"on 2 wrote a new action '{on2.name}' that names its original")
frames2 = drawing_timing(on2, 2)
check(fingerprint(original) == before, "the original action is unchanged after on 2")

# The exact selector's error-vs-keys curve is stored on the result; the panel's slider re-holds at
# another count from it (optimal keys for that count, no new selection).
curve = operators.curve_of(on2)
counts = [n for n, _ in curve]
check(len(curve) >= 10 and counts[-1] == len(frames2), f"the curve is stored ({len(curve)} counts up to {counts[-1]})")
errs = [e for _, e in curve]
check(all(a >= b - 1e-9 for a, b in zip(errs, errs[1:])), "the stored error falls as keys are added")
check(scene.koma_key_count == len(frames2), "the re-hold slider starts at the result's key count")
n_less = counts[len(counts) // 2]
scene.koma_key_count = n_less
held = obj.animation_data.action
frames_less = key_frames(held)
check(held is not on2 and len(frames_less) == n_less and operators.source_action(held) is original,
      f"re-hold at {n_less} keys from the curve ({held.name}: {len(frames_less)} keys)")
check(frames_less == list(on2["koma_curve_frames"][str(n_less)]), "the re-held keys are the curve's for that count")
holds = np.diff(frames_less)
check(np.abs(holds / step - np.round(holds / step)).max() < 1e-9 and holds.min() >= 2 * step - 1e-9,
      "re-held holds are whole drawings, at least 2")
check(fingerprint(original) == before, "the original action is unchanged after re-hold")
rows = koma_blender.ui.curve_rows(curve, n_less)
check(any(here for here, _ in rows) and all(text.strip().split()[0].isdigit() and text.endswith(" cm") for _, text in rows),
      f"the panel draws the curve ({len(rows)} rows, the current count marked)")
scene.koma_key_count = len(frames2)
obj.animation_data.action = on2 if bpy.data.actions.get(on2.name) else obj.animation_data.action
bpy.ops.ed.undo_push(message="on 2")

# Re-run on 3 with the result active and koma's markers selected: it reads the ORIGINAL action,
# and koma's own markers are not locks.
for m in scene.timeline_markers:
    m.select = True
bpy.ops.koma.key_poses(mode="ON", on=3, use_marker_locks=True)
on3 = obj.animation_data.action
check(on3 is not on2 and operators.source_action(on3) is original, f"on 3 after on 2 works on the original ({on3.name})")
frames3 = drawing_timing(on3, 3)
check(len(frames3) < len(frames2), f"on 3 has fewer drawings than on 2 ({len(frames3)} < {len(frames2)})")
check(fingerprint(original) == before, "the original action is unchanged after on 3")

# Compare: the toggle shows the original, and back.
obj.koma_show_original = True
check(obj.animation_data.action is original, "Compare shows the original action")
obj.koma_show_original = False
check(obj.animation_data.action is on3, "Compare off shows the result again")

# Undo: back to the state after on 2.
obj_name, on2_name, on3_name, original_name = obj.name, on2.name, on3.name, original.name
bpy.ops.ed.undo_push(message="on 3")
bpy.ops.ed.undo()
scene = bpy.context.scene  # undo reloads the data: old references are gone
obj = bpy.data.objects[obj_name]
now = obj.animation_data.action
check(now is not None and now.name == on2_name and key_frames(now) == frames2,
      f"undo restores the on-2 result ({now.name if now else None})")
check(bpy.data.actions.get(on3_name) is None, "undo removes the on-3 action")
original = bpy.data.actions[original_name]
check(fingerprint(original) == before, "the original action is unchanged after undo")

# A user's markers 1 drawing apart with a 2-drawing minimum hold: the error speaks the panel's words.
for m in list(scene.timeline_markers):
    scene.timeline_markers.remove(m)
first = int(original.frame_range[0])
for f in (first + 50, first + 55):
    scene.timeline_markers.new("my lock", frame=f).select = True
expect_error(bpy.ops.koma.key_poses, "locks closer than the minimum hold", words=("Lock selected markers",),
             mode="KEYS", keys=12, min_hold=2, use_marker_locks=True)
for m in list(scene.timeline_markers):
    scene.timeline_markers.remove(m)

# Timing layers: arms on 3s while the body is on 2s; each bone keyed on its layer's drawings.
obj.animation_data.action = original
bpy.ops.koma.key_poses(mode="ON", on=2, layers="arms:3")
layered = obj.animation_data.action
per_bone = {}
for fc in layered.fcurves:
    bone = fc.data_path.split('"')[1]
    per_bone.setdefault(bone, sorted({int(round(kp.co[0])) for kp in fc.keyframe_points}))
arm = [b for b in per_bone if "Arm" in b or "Hand" in b]
body = [b for b in per_bone if b not in arm and ("Leg" in b or "Spine" in b or "Hips" in b)]
arm_n = {len(per_bone[b]) for b in arm}
body_n = {len(per_bone[b]) for b in body}
check(len(arm_n) == 1 and len(body_n) == 1 and next(iter(arm_n)) < next(iter(body_n)),
      f"layers arms:3: arm bones keyed on fewer drawings ({arm_n}) than the body ({body_n})")
check(all(abs(len(per_bone[b]) - 1 - seconds * 8) <= 2 for b in arm), "the arms are on 3s (about 8 drawings a second)")
check(fingerprint(original) == before, "the original action is unchanged after layered key poses")
expect_error(bpy.ops.koma.key_poses, "bad layers text", words=("Layers",), mode="ON", on=2, layers="arms:0")
obj.animation_data.action = original

# Scoring in the active camera's view: an error without a camera, keys with one (a side camera
# sees the walk's depth motion foreshortened, so the choice may differ from the 3D one).
expect_error(bpy.ops.koma.key_poses, "camera view without a camera", words=("Score in the camera view",),
             mode="ON", on=2, use_camera=True)
cam_data = bpy.data.cameras.new("cam")
cam = bpy.data.objects.new("cam", cam_data)
scene.collection.objects.link(cam)
cam.location = (6.0, 0.0, 1.0)
cam.rotation_euler = (1.5708, 0.0, 1.5708)  # looking along -X at the walk
scene.camera = cam
obj.animation_data.action = original
bpy.ops.koma.key_poses(mode="ON", on=2, use_camera=True)
viewed = obj.animation_data.action
vframes = key_frames(viewed)
check(len(vframes) == len(frames2), f"camera-view key poses on 2: as many drawings ({len(vframes)})")
print(f"note: camera view keys differ from 3D on {len(set(vframes) ^ set(frames2))} frames")
check(fingerprint(original) == before, "the original action is unchanged after camera-view key poses")
cam_data.type = "ORTHO"
expect_error(bpy.ops.koma.key_poses, "camera view with an orthographic camera", words=("perspective",),
             mode="ON", on=2, use_camera=True)
bpy.data.objects.remove(cam)

# ---- cartoon: the same strength does the same at 120 and at 30 fps ---------------------------------
def cartoon_change(o):
    act = operators.source_action(o.animation_data.action)
    o.animation_data.action = act
    src, _, _ = convert.action_to_motion(o, act, convert.scene_fps(scene))
    bpy.ops.koma.cartoon_filter(strength=8.0, keep_feet=False)
    out, _, _ = convert.action_to_motion(o, o.animation_data.action, convert.scene_fps(scene))
    return float(np.linalg.norm(koma.positions(out) - koma.positions(src), axis=2).mean())


change120 = cartoon_change(obj)
scene.render.fps, scene.render.fps_base = 30, 1.0
bpy.ops.koma.import_bvh(filepath=bvh_path, use_scene_fps=True)
obj30 = bpy.context.active_object
check(abs(convert.scene_fps(scene) - 30) < 1e-9, "second import keeps the 30 fps scene")
change30 = cartoon_change(obj30)
ratio = change120 / change30
check(abs(ratio - 1) <= 0.10, f"cartoon strength 8 moves the body the same at 120 and 30 fps "
                              f"({change120 * 1000:.1f} vs {change30 * 1000:.1f} mm, ratio {ratio:.3f})")

# Squash and stretch keyed as the squash bone's scale.
obj30.animation_data.action = operators.source_action(obj30.animation_data.action)
root = obj30.data.bones[0].name
bpy.ops.koma.cartoon_filter(strength=8.0, keep_feet=False, squash=0.5, squash_bone=root)
sq = obj30.animation_data.action
curves = [fc for fc in sq.fcurves if fc.data_path == f'pose.bones["{root}"].scale']
check(len(curves) == 3, f"squash keys the scale of the squash bone '{root}' ({len(curves)} curves)")
if curves:
    vals = np.array([[kp.co[1] for kp in fc.keyframe_points] for fc in curves])
    check(vals.min() < 0.99 and vals.max() > 1.01, f"the squash bone squashes and stretches ({vals.min():.3f}..{vals.max():.3f})")
others = {fc.data_path for fc in sq.fcurves if fc.data_path.endswith(".scale")} - {f'pose.bones["{root}"].scale'}
check(not others, "no other bone gets scale keys")
expect_error(bpy.ops.koma.cartoon_filter, "squash on an unknown bone", words=("Squash bone",), squash=0.5,
             squash_bone="no such bone")

# Scene to drawing rate: a new action at 24 fps, the scene follows, the original is kept.
obj.select_set(True)
bpy.context.view_layer.objects.active = obj
scene.render.fps, scene.render.fps_base = 120, 1.0
bpy.ops.koma.drawing_rate_scene()
moved = obj.animation_data.action
check(abs(convert.scene_fps(scene) - 24) < 1e-9 and moved.name.endswith("@24fps"),
      f"scene switched to the drawing rate ({convert.scene_fps(scene):g} fps, action {moved.name})")
check(bpy.data.actions.get(original.name) is not None, "the original action is kept")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
