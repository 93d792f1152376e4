"""Headless test of the koma_blender add-on (run by CTest when Blender is installed):

    blender -b --factory-startup --python-exit-code 1 --python test_koma_addon.py -- \
        <build>/python <source>/blender <walk.bvh>

Imports a real BVH through the add-on, checks that Blender's pose equals koma's forward kinematics,
runs every registered operator and checks its result, and checks that bad input (no armature, a
mesh, an action without keys) is reported and leaves the scene unchanged. Exits 77 (skip) when the
BVH file is absent.
"""
import math
import os
import sys

import bpy
import numpy as np
from mathutils import Matrix

argv = sys.argv[sys.argv.index("--") + 1:]
python_dir, addon_dir, bvh_path = argv[:3]
if not os.path.exists(bvh_path):
    print(f"SKIP: {bvh_path} not found")
    sys.exit(77)
sys.path[:0] = [python_dir, addon_dir]

import koma  # noqa: E402
import koma_blender  # noqa: E402
from koma_blender import convert  # noqa: E402

koma_blender.register()
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def scene_state():
    s = bpy.context.scene
    return (len(bpy.data.objects), len(bpy.data.actions), len(s.timeline_markers),
            tuple(sorted(a.name for a in bpy.data.actions)),
            tuple((o.name, o.animation_data.action.name if o.animation_data and o.animation_data.action else None)
                  for o in bpy.data.objects))


def expect_error(op, what, **kw):
    before = scene_state()
    try:
        op(**kw)
        check(False, f"{what}: reported an error")
    except RuntimeError as e:
        check("Error" in str(e), f"{what}: reported an error ({str(e).strip()})")
    check(scene_state() == before, f"{what}: scene unchanged")


def blender_points(obj, frame):
    """World positions of every bone head (koma joint order) in Blender's world at `frame`."""
    bpy.context.scene.frame_set(frame)
    rig = convert.Rig(obj)
    return np.array([list(obj.matrix_world @ obj.pose.bones[n].head) for n in rig.names]), rig


def koma_to_blender_world(p):
    return p @ np.array(Matrix.Rotation(math.pi / 2, 3, "X")).T


# Start from an empty scene.
for o in list(bpy.data.objects):
    bpy.data.objects.remove(o)

# The operators on the active armature's action that this build registers.
ACTION_OPS = [name for name in ("key_poses", "cartoon_filter", "gait_style", "gait_apply", "gait_adverb", "retime_like")
              if hasattr(bpy.types, f"KOMA_OT_{name}")]
print("action operators:", ACTION_OPS)
for name in ACTION_OPS:
    cls = getattr(koma_blender.operators, f"KOMA_OT_{name}")
    check("UNDO" in cls.bl_options, f"{name} is undoable")

# ---- bad input before anything is imported -------------------------------------------------
for name in ACTION_OPS:
    expect_error(getattr(bpy.ops.koma, name), f"{name} without an active object")
bpy.ops.mesh.primitive_cube_add()
for name in ACTION_OPS:
    expect_error(getattr(bpy.ops.koma, name), f"{name} on a mesh")
bpy.data.objects.remove(bpy.context.active_object)
expect_error(bpy.ops.koma.import_bvh, "import of a missing file", filepath="/nonexistent/walk.bvh")

# ---- import through koma ----------------------------------------------------------------------
bpy.ops.koma.import_bvh(filepath=bvh_path)
obj = bpy.context.active_object
src = koma.read(bvh_path)
check(obj is not None and obj.type == "ARMATURE", "import made an armature")
check(len(obj.data.bones) == src.joint_count, f"one bone per joint ({src.joint_count})")
action = obj.animation_data.action
F = src.frame_count
check(action is not None and all(len(fc.keyframe_points) == F for fc in action.fcurves),
      f"every curve has {F} keys")
check(bpy.context.scene.frame_end == F, "scene frame range set")
fk = koma.positions(src)
worst = 0.0
for f in (0, F // 3, F - 1):
    pts, rig = blender_points(obj, f + 1)
    idx = [src.skeleton.find(n) for n in rig.names]
    worst = max(worst, float(np.abs(pts - koma_to_blender_world(fk[f, idx])).max()))
check(worst < 1e-4, f"Blender pose equals koma FK (max {worst:.2e} m)")

motion, rig, first = convert.action_to_motion(obj, action, convert.scene_fps(bpy.context.scene))
back = koma.positions(motion)
idx = [src.skeleton.find(n) for n in rig.names]
err = float(np.abs(back[:, :len(idx)] - fk[:, idx]).max())
check(motion.frame_count == F and err < 1e-4, f"action -> koma Motion round trip (max {err:.2e} m)")

# An action without keys: error, nothing changes.
empty = bpy.data.actions.new("empty")
obj.animation_data.action = empty
for name in ACTION_OPS:
    expect_error(getattr(bpy.ops.koma, name), f"{name} on an action without keys")
obj.animation_data.action = action
bpy.data.actions.remove(empty)


def foot_heights(m):
    p = koma.positions(m)
    names = [m.skeleton.point_name(i).lower() for i in range(m.skeleton.point_count)]
    feet = [i for i, n in enumerate(names) if "foot" in n or "toe" in n or "ankle" in n]
    return p[:, feet, 1]


# ---- key poses -----------------------------------------------------------------------------------
if hasattr(bpy.types, "KOMA_OT_key_poses"):
    scene = bpy.context.scene
    m = scene.timeline_markers.new("lock", frame=1 + F // 2 + 1)
    m.select = True
    scene.koma_drawing_fps = 0  # drawings at the scene's own rate (tests/blender/test_koma_addon_rates.py: 24 fps)
    bpy.ops.koma.key_poses(mode="ON", on=3, min_hold=2, max_hold=6, use_marker_locks=True)
    scene.koma_drawing_fps = 24
    keyed = obj.animation_data.action
    check(keyed is not action and keyed.name.startswith(action.name + ".keys on 3"),
          f"key poses wrote a new action ({keyed.name})")
    markers = sorted(mk.frame for mk in scene.timeline_markers if mk.name.startswith("koma "))
    counts = {len(fc.keyframe_points) for fc in keyed.fcurves}
    check(counts == {len(markers)}, f"CONSTANT keys per curve == kept poses ({counts} vs {len(markers)})")
    check(all(kp.interpolation == "CONSTANT" for fc in keyed.fcurves for kp in fc.keyframe_points),
          "every key is CONSTANT")
    frames_keyed = sorted({int(round(kp.co[0])) for fc in keyed.fcurves for kp in fc.keyframe_points})
    check(frames_keyed == markers, "markers sit on the keys")
    check(1 + F // 2 + 1 in markers, "the selected marker's frame is a key (lock)")
    holds = np.diff(markers)
    check(holds.min() >= 2 and holds.max() <= 6, f"holds within 2..6 (got {holds.min()}..{holds.max()})")
    check(abs(len(markers) - (F - 1) / 3) <= 2, f"about one key per 3 frames ({len(markers)} for {F})")
    # Between keys the pose holds exactly the key's pose.
    k0, k1 = markers[1], markers[2]
    a, _ = blender_points(obj, k0)
    b, _ = blender_points(obj, k1 - 1)
    check(np.abs(a - b).max() < 1e-6, "pose is held between keys")
    held, _, _ = convert.action_to_motion(obj, keyed, convert.scene_fps(scene))
    check(np.abs(koma.positions(held)[np.array(markers) - 1] - back[np.array(markers) - 1]).max() < 1e-4,
          "kept poses equal the source poses")
    bpy.ops.ed.undo_push()
    obj.animation_data.action = action

    # Spacing (issue 42): 8 keys and inbetweens on 2s by a slow-in-out chart, at the scene's rate.
    scene.koma_drawing_fps = 0
    expect_error(bpy.ops.koma.key_poses, "spacing with On Ns (no key count)", mode="ON", spacing="even")
    expect_error(bpy.ops.koma.key_poses, "spacing with fractions that do not increase", mode="KEYS", keys=8,
                 spacing="CUSTOM", fractions="0.5, 0.2")
    bpy.ops.koma.key_poses(mode="KEYS", keys=8, spacing="slow-in-out", spacing_on=2, min_hold=1, max_hold=0,
                           use_marker_locks=False, selector="exact", metric="position", interpolation="linear",
                           keep_contacts=False, keep_extremes=False, layers="", use_camera=False)
    spaced = obj.animation_data.action
    sel = koma.keys.select_keys(motion, koma.keys.KeySettings(keys=8))
    want = koma.keys.space_drawings(motion, list(sel.keys()), motion.frame_rate,
                                    koma.spacing_settings(on=2, chart="slow-in-out"))
    drawn = sorted({int(round(kp.co[0])) - 1 for fc in spaced.fcurves for kp in fc.keyframe_points})
    check(drawn == want.drawing_frames() and len(drawn) > 8,
          f"spacing: a CONSTANT key on every key and inbetween ({len(drawn)} drawings, koma {len(want.drawings)})")
    got, _, _ = convert.action_to_motion(obj, spaced, convert.scene_fps(scene))
    ref = koma.positions(koma.keys.spaced_motion(motion, want))
    worst = float(np.abs(koma.positions(got)[drawn] - ref[drawn]).max())
    check(worst < 1e-4, f"spacing: every drawing shows koma's spaced pose (max {worst:.2e} m)")
    scene.koma_drawing_fps = 24
    obj.animation_data.action = action

# ---- cartoon filter ------------------------------------------------------------------------------
if hasattr(bpy.types, "KOMA_OT_cartoon_filter"):
    short = bpy.data.actions.new("short")
    fc = short.fcurves.new(f'pose.bones["{rig.names[0]}"].location', index=0)
    fc.keyframe_points.insert(1, 0.0)
    fc.keyframe_points.insert(2, 0.1)
    obj.animation_data.action = short
    expect_error(bpy.ops.koma.cartoon_filter, "cartoon filter on a 2-frame action")
    obj.animation_data.action = action
    bpy.data.actions.remove(short)
    src_motion, _, _ = convert.action_to_motion(obj, action, convert.scene_fps(bpy.context.scene))
    contacts = koma.body.detect_foot_contacts(src_motion)
    skate = {}
    for keep in (False, True):
        obj.animation_data.action = action
        bpy.ops.koma.cartoon_filter(strength=3.0, keep_feet=keep)
        out = obj.animation_data.action
        check(out is not action and ".cartoon" in out.name, f"cartoon (keep_feet={keep}) wrote a new action")
        check({len(fc.keyframe_points) for fc in out.fcurves} == {F}, "cartoon keys every frame")
        res, _, _ = convert.action_to_motion(obj, out, convert.scene_fps(bpy.context.scene))
        change = float(np.abs(koma.positions(res) - koma.positions(src_motion)).max())
        check(change > 0.01, f"cartoon changed the motion (max {change:.3f} m)")
        skate[keep] = koma.cartoon.foot_skating_mm(res, contacts)
    base = koma.cartoon.foot_skating_mm(src_motion, contacts)
    check(skate[True] <= max(base * 1.5, base + 1.0) and skate[True] < skate[False],
          f"feet stay planted: skating {base:.2f} mm/frame in, {skate[False]:.2f} free, {skate[True]:.2f} kept")
    obj.animation_data.action = action

folder = os.path.dirname(bvh_path)
happy_path = os.path.join(folder, "dataset-1_walk_happy_001.bvh")
sad_path = os.path.join(folder, "dataset-1_walk_sad_001.bvh")
scene = bpy.context.scene
src_motion, _, _ = convert.action_to_motion(obj, action, convert.scene_fps(scene))
roles = koma.body.find_joint_roles(src_motion.skeleton)
hips = koma.timing.path_point(roles)


def keyed_range(act):
    xs = [kp.co[0] for fc in act.fcurves for kp in fc.keyframe_points]
    return int(round(min(xs))), int(round(max(xs)))


# ---- gait style ----------------------------------------------------------------------------------
if "gait_style" in ACTION_OPS:
    obj.animation_data.action = action
    expect_error(bpy.ops.koma.gait_style, "gait style with a missing adverb file",
                 adverbs=[{"name": "happy", "filepath": "/nonexistent/happy.adverb.json", "alpha": 1.0}])
    expect_error(bpy.ops.koma.gait_style, "gait style with an empty adverb slot", adverbs=[{"name": "", "filepath": "", "alpha": 1.0}])
    adverbs = []
    if os.path.exists(happy_path):
        import tempfile
        adverb_path = os.path.join(tempfile.mkdtemp(), "happy.adverb.json")
        happy = koma.read(happy_path)
        koma.gait.write_adverb(adverb_path, koma.gait.make_adverb(koma.gait.analyze_gait(src_motion),
                                                               koma.gait.analyze_gait(happy)))
        adverbs = [{"name": "happy", "filepath": adverb_path, "alpha": 1.0}]
    else:
        print(f"note: {happy_path} absent, gait style runs without an adverb")
    outs = {}
    for label, kw in (("plain", dict(adverbs=[])), ("alpha0", dict(adverbs=[dict(a, alpha=0.0) for a in adverbs])),
                      ("styled", dict(adverbs=adverbs, stride=1.2, speed=0.9))):
        obj.animation_data.action = action
        bpy.ops.koma.gait_style(**kw)
        out = obj.animation_data.action
        check(out is not action and out.name.startswith(action.name + ".gait"), f"gait style ({label}) wrote a new action")
        check({len(fc.keyframe_points) for fc in out.fcurves} == {F} and keyed_range(out) == (1, F),
              f"gait style ({label}) keys every frame of the action's range (1..{F})")
        outs[label], _, _ = convert.action_to_motion(obj, out, convert.scene_fps(scene))
    p_in, p_plain = koma.positions(src_motion), koma.positions(outs["plain"])
    start = float(np.abs(p_plain[0].mean(axis=0)[[0, 2]] - p_in[0].mean(axis=0)[[0, 2]]).max())
    check(start < 1e-4, f"the styled walk starts where the action starts ({start:.1e} m)")
    travel_in = np.linalg.norm(p_in[-1, hips, [0, 2]] - p_in[0, hips, [0, 2]])
    travel_out = np.linalg.norm(p_plain[-1, hips, [0, 2]] - p_plain[0, hips, [0, 2]])
    check(0.5 * travel_in < travel_out < 1.5 * travel_in,
          f"the re-synthesised walk travels like the input ({travel_out:.2f} m vs {travel_in:.2f} m)")
    same = float(np.abs(koma.positions(outs["alpha0"]) - p_plain).max())
    check(same < 1e-5, f"alpha 0 is the walk without adverbs ({same:.1e} m)")
    lib = koma.gait_style(src_motion, [(a["filepath"], 1.0) for a in adverbs], stride=1.2, speed=0.9,
                          seconds=src_motion.frame_count / src_motion.frame_rate, frame_rate=src_motion.frame_rate)
    convert.place_like(lib, src_motion)
    agree = float(np.abs(koma.positions(outs["styled"]) - koma.positions(lib)).max())
    check(agree < 1e-4, f"the operator's result is koma.gait_style's ({agree:.1e} m)")
    change = float(np.abs(koma.positions(outs["styled"]) - p_plain).max())
    check(change > 0.02, f"adverbs, stride and speed change the walk (max {change:.3f} m)")
    obj.animation_data.action = action

# ---- gait apply (the take itself) and learning an adverb from two actions ------------------------
if "gait_apply" in ACTION_OPS and os.path.exists(happy_path):
    import tempfile
    obj.animation_data.action = action
    expect_error(bpy.ops.koma.gait_adverb, "learn adverb without a styled action")
    bpy.ops.koma.import_bvh(filepath=happy_path)
    happy_obj = bpy.context.active_object
    happy_action = happy_obj.animation_data.action
    bpy.context.view_layer.objects.active = obj
    obj.animation_data.action = action
    learned = os.path.join(tempfile.mkdtemp(), "happy_learned.adverb.json")
    n_slots = len(scene.koma_adverbs)
    bpy.ops.koma.gait_adverb(styled=happy_action.name, filepath=learned)
    check(os.path.exists(learned) and koma.gait.read_adverb(learned) is not None, "learn adverb wrote a readable file")
    check(len(scene.koma_adverbs) == n_slots + 1 and scene.koma_adverbs[-1].filepath == learned,
          "the learned adverb joins the panel's list")
    outs = {}
    for alpha in (0.0, 1.0):
        obj.animation_data.action = action
        bpy.ops.koma.gait_apply(adverbs=[{"name": "happy", "filepath": learned, "alpha": alpha}])
        out = obj.animation_data.action
        check(out is not action and out.name.startswith(action.name + ".gait apply"),
              f"gait apply (alpha {alpha:g}) wrote a new action ({out.name})")
        check({len(fc.keyframe_points) for fc in out.fcurves} == {F} and keyed_range(out) == (1, F),
              f"gait apply (alpha {alpha:g}) keeps the take's {F} frames")
        outs[alpha], _, _ = convert.action_to_motion(obj, out, convert.scene_fps(scene))
    p_in = koma.positions(src_motion)
    same = float(np.abs(koma.positions(outs[0.0]) - p_in).max())
    check(same < 1e-4, f"gait apply with alpha 0 is the take ({same:.1e} m)")
    p_app = koma.positions(outs[1.0])
    changed = float(np.abs(p_app - p_in).max())
    check(changed > 0.01, f"gait apply with the happy adverb changes the take (max {changed:.3f} m)")
    root = float(np.abs(p_app[:, hips, :][:, [0, 2]] - p_in[:, hips, :][:, [0, 2]]).max())
    check(root < 1e-3, f"gait apply keeps the take's hips path ({root:.1e} m)")
    expect_error(bpy.ops.koma.gait_apply, "gait apply with a missing adverb file",
                 adverbs=[{"name": "x", "filepath": "/nonexistent/x.adverb.json", "alpha": 1.0}])
    # A roles file: one naming the rig's own left ankle gives the same take; one naming a bone the
    # rig lacks is refused and leaves the scene as it was.
    ankle = src_motion.skeleton.names[koma.body.find_joint_roles(src_motion.skeleton)[koma.body.Role.left_ankle]]
    roles_dir = tempfile.mkdtemp()
    good_roles, bad_roles = os.path.join(roles_dir, "good.roles.json"), os.path.join(roles_dir, "bad.roles.json")
    with open(good_roles, "w") as f:
        f.write('{"left_ankle": "%s"}' % ankle)
    with open(bad_roles, "w") as f:
        f.write('{"left_ankle": "NoSuchBone"}')
    obj.animation_data.action = action
    bpy.ops.koma.gait_apply(adverbs=[{"name": "happy", "filepath": learned, "alpha": 1.0}], roles_file=good_roles)
    p_roles = koma.positions(convert.action_to_motion(obj, obj.animation_data.action, convert.scene_fps(scene))[0])
    same_roles = float(np.abs(p_roles - p_app).max())
    check(same_roles < 1e-6, f"gait apply with a roles file naming the rig's own bones is the same ({same_roles:.1e} m)")
    obj.animation_data.action = action
    expect_error(bpy.ops.koma.gait_apply, "gait apply with a roles file naming a missing bone",
                 adverbs=[{"name": "happy", "filepath": learned, "alpha": 1.0}], roles_file=bad_roles)
    bpy.data.objects.remove(happy_obj)
    bpy.context.view_layer.objects.active = obj
    obj.animation_data.action = action

# ---- re-time like... -----------------------------------------------------------------------------
if "retime_like" in ACTION_OPS:
    obj.animation_data.action = action
    expect_error(bpy.ops.koma.retime_like, "re-time without an example")
    expect_error(bpy.ops.koma.retime_like, "re-time like a missing action", example="no such action")
    frame_end = scene.frame_end
    bpy.ops.koma.retime_like(example=action.name)
    same = obj.animation_data.action
    check(same.name.startswith(action.name + ".retimed") and keyed_range(same) == (1, F),
          f"re-timed like itself keeps the {F} frames")
    if os.path.exists(sad_path):
        bpy.ops.koma.import_bvh(filepath=sad_path)
        sad_obj = bpy.context.active_object
        sad_action = sad_obj.animation_data.action
        bpy.context.view_layer.objects.active = obj
        obj.animation_data.action = action
        bpy.ops.koma.retime_like(example=sad_action.name)
        out = obj.animation_data.action
        counts = {len(fc.keyframe_points) for fc in out.fcurves}
        lo, hi = keyed_range(out)
        check(out.name.startswith(action.name + ".retimed") and len(counts) == 1 and lo == 1,
              f"re-time wrote a new action keyed from frame 1 ({counts} keys per curve)")
        check(hi > F, f"like the slower sad walk the same path takes longer ({F} -> {hi} frames)")
        # The same pair through the Python module (and so the CLI: python/tests/test_timing.py)
        # gives the same frame count: the example's cadence does not depend on the rig it is
        # read on (the add-on reads the example action on this armature).
        py = koma.retime_like(koma.read(bvh_path), sad_path).report.output_frames
        check(hi == py, f"add-on and koma.retime_like agree on the frame count ({hi} vs {py})")
        check(scene.frame_end == hi, "scene frame range covers the re-timed action")
        res, _, _ = convert.action_to_motion(obj, out, convert.scene_fps(scene))
        p_in, p_out = koma.positions(src_motion), koma.positions(res)
        ends = float(np.abs(p_out[[0, -1], hips] - p_in[[0, -1], hips]).max())
        check(ends < 1e-4, f"the path's ends are kept ({ends:.1e} m)")
        dev = koma.timing.polyline_deviation(p_in[:, hips], p_out[:, hips])
        check(dev < 1e-4, f"the hips stay on the input's path (deviation {dev:.1e} m)")
        # Steps only (no succession lags, no arm amplitude): the first and last poses are the input's.
        obj.animation_data.action = action
        bpy.ops.koma.retime_like(example=sad_action.name, succession=False, amplitude=False)
        steps, _, _ = convert.action_to_motion(obj, obj.animation_data.action, convert.scene_fps(scene))
        ends = float(np.abs(koma.positions(steps)[[0, -1]] - p_in[[0, -1]]).max())
        check(ends < 1e-4, f"steps only: first and last poses kept ({ends:.1e} m)")
        obj.animation_data.action = action

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
