"""Headless Blender check of koma's glTF output.

Run by CTest only when `blender` is on PATH:
    blender -b --factory-startup --python-exit-code 1 --python test_gltf_import.py -- held.glb held.json
Skips (exit 77) when not run inside Blender. Checks that
  * every action F-curve of the imported armature has exactly one key per kept frame, all of them
    CONSTANT (glTF STEP arrives as held keys, not baked duplicates);
  * each joint's world position at each kept frame matches koma's (glTF Y-up -> Blender Z-up).
"""
import json
import sys

try:
    import bpy  # noqa: F401  (only inside Blender)
except ImportError:
    print("skipped: not running inside Blender")
    sys.exit(77)

args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
if len(args) != 2:
    print("usage: blender -b --python test_gltf_import.py -- file.glb expected.json")
    sys.exit(2)
glb, expected_path = args
with open(expected_path) as f:
    expected = json.load(f)

bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps = int(round(expected["fps"]))
scene.render.fps_base = 1.0
bpy.ops.import_scene.gltf(filepath=glb)

armatures = [o for o in bpy.data.objects if o.type == "ARMATURE"]
assert len(armatures) == 1, f"expected one armature, got {len(armatures)}"
arm = armatures[0]
action = arm.animation_data.action if arm.animation_data else None
assert action is not None, "the armature has no action"



def action_fcurves(obj, act):
    """F-curves of an action: legacy `action.fcurves`, or the slot's channel bag (layered actions)."""
    fcurves = getattr(act, "fcurves", None)
    if fcurves is not None and len(fcurves) > 0:
        return list(fcurves)
    slot = getattr(obj.animation_data, "action_slot", None)
    for layer in getattr(act, "layers", []):
        for strip in layer.strips:
            bag = strip.channelbag(slot) if slot is not None else None
            if bag is not None:
                return list(bag.fcurves)
    return []


curves = action_fcurves(arm, action)
assert curves, "the action has no F-curves"
kept = expected["kept"]
failures = []
for fc in curves:
    keys = fc.keyframe_points
    if len(keys) != len(kept):
        failures.append(f"{fc.data_path}[{fc.array_index}]: {len(keys)} keys, expected {len(kept)}")
    bad = [k.interpolation for k in keys if k.interpolation != "CONSTANT"]
    if bad:
        failures.append(f"{fc.data_path}[{fc.array_index}]: {len(bad)} keys are {bad[0]}, not CONSTANT")

# Frames of the kept poses as Blender placed them (whatever its time offset).
frames = sorted({round(k.co[0]) for fc in curves for k in fc.keyframe_points})
if len(frames) != len(kept):
    failures.append(f"{len(frames)} distinct key frames, expected {len(kept)}")
else:
    worst = 0.0
    for i, frame in enumerate(frames):
        scene.frame_set(frame)
        bpy.context.view_layer.update()
        for j, name in enumerate(expected["joints"]):
            bone = arm.pose.bones.get(name)
            if bone is None:
                failures.append(f"no bone {name}")
                continue
            head = arm.matrix_world @ bone.head
            x, y, z = expected["positions"][i][j]
            want = (x, -z, y)  # glTF Y-up -> Blender Z-up
            worst = max(worst, max(abs(head[c] - want[c]) for c in range(3)))
    print(f"largest joint position difference: {worst:.2e} m")
    if worst > 1e-3:
        failures.append(f"joint positions differ by up to {worst:.4f} m")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures[:20]))
    sys.exit(1)
print(f"ok: {len(curves)} F-curves, {len(kept)} CONSTANT keys each, positions match")
