"""Renders the Gait style and Re-time like... pictures of docs/blender.md headless (Workbench):

    blender -b --factory-startup --python scripts/blender_render_operators.py -- <build>/python blender docs/img

Uses koma's built-in sample character only (no corpus data): a brisk walk imported through the
add-on, an adverb learned from a version with twice the arm swing, and a slower, heavier walk
imported as a second armature (the example for Re-time like...). Runs the two operators as a user
would (adverb in the panel's list, example chosen by name) and draws, for each, the input (grey,
below) and the result (coloured, above) at the same frame numbers along the path: a chronophotograph
in which spacing shows timing. Writes blender_gait_style.png and blender_retime.png.
"""
import math
import os
import sys
import tempfile

import bpy
from mathutils import Vector

argv = sys.argv[sys.argv.index("--") + 1:]
python_dir, addon_dir, out_dir = argv[:3]
sys.path[:0] = [python_dir, addon_dir]
import koma  # noqa: E402
import koma_blender  # noqa: E402

koma_blender.register()
for o in list(bpy.data.objects):
    bpy.data.objects.remove(o)
tmp = tempfile.mkdtemp()
scene = bpy.context.scene


def sample(**kw):
    m = koma.make_sample_motion(koma.SampleSettings(jump=False, walk_cycles=3, **kw))
    return koma.resample(m, 24.0)


def import_motion(motion, name):
    path = os.path.join(tmp, name + ".bvh")
    koma.write(path, motion)
    bpy.ops.koma.import_bvh(filepath=path)
    return bpy.context.active_object


brisk = sample()
heavy = import_motion(sample(cycle_seconds=1.6, arm_swing=0.5), "heavy_walk")
arm = import_motion(brisk, "brisk_walk")
source = arm.animation_data.action
adverb_path = os.path.join(tmp, "arm_swing.adverb.json")
koma.gait.write_adverb(adverb_path, koma.gait.make_adverb(koma.gait.analyze_gait(sample()),
                                                        koma.gait.analyze_gait(sample(arm_swing=2.0))))


def pose_strip(action, frames, color, lift, width):
    """Tube figures of `arm` playing `action` at `frames`, raised by `lift` metres; returns points."""
    arm.animation_data.action = action
    points = []
    for i, frame in enumerate(frames):
        scene.frame_set(frame)
        curve = bpy.data.curves.new(f"{action.name}@{frame}", "CURVE")
        curve.dimensions = "3D"
        curve.bevel_depth = width
        curve.bevel_resolution = 2
        for pb in arm.pose.bones:
            if pb.parent is None:
                continue
            head = arm.matrix_world @ pb.head + Vector((0, 0, lift))
            tail = arm.matrix_world @ pb.tail + Vector((0, 0, lift))
            sp = curve.splines.new("POLY")
            sp.points.add(1)
            sp.points[0].co = (*head, 1.0)
            sp.points[1].co = (*tail, 1.0)
            points += [head, tail]
        obj = bpy.data.objects.new(curve.name, curve)
        shade = 1.0 - 0.45 * i / max(1, len(frames) - 1)
        obj.color = (color[0] * shade, color[1] * shade, color[2] * shade, 1.0)
        scene.collection.objects.link(obj)
    return points


def render(name, rows):
    """rows: (action, frames, colour, label); row i is drawn 2.1 m above row i - 1."""
    for o in list(scene.objects):
        if o is not arm and o is not heavy:
            bpy.data.objects.remove(o)
    arm.hide_render = heavy.hide_render = True
    points, labels = [], []
    for i, (action, frames, color, label) in enumerate(rows):
        pts = pose_strip(action, frames, color, 2.1 * i, 0.022)
        points += pts
        labels.append((label, max(p.z for p in pts), color))
    lo = Vector([min(p[k] for p in points) for k in range(3)])
    hi = Vector([max(p[k] for p in points) for k in range(3)])
    center = (lo + hi) / 2
    travel = Vector((hi.x - lo.x, hi.y - lo.y, 0.0))
    side = Vector((-travel.y, travel.x, 0.0)).normalized() if travel.length > 1e-6 else Vector((0, -1, 0))
    along = Vector((travel.x, travel.y, 0.0)).normalized()
    height = hi.z - lo.z + 0.4  # room for the labels
    ratio = min(1.0, max(0.45, height / max(travel.length, 1e-3)))
    cam_data = bpy.data.cameras.new("cam")
    cam_data.type = "ORTHO"
    cam_data.ortho_scale = max(travel.length, height / ratio) * 1.1
    cam = bpy.data.objects.new("cam", cam_data)
    cam.location = center + side * 10 + Vector((0, 0, 0.2))
    cam.rotation_euler = (center - cam.location).to_track_quat("-Z", "Y").to_euler()
    scene.collection.objects.link(cam)
    scene.camera = cam
    right = cam.rotation_euler.to_matrix() @ Vector((1, 0, 0))
    left_end = center - right * (cam_data.ortho_scale / 2 - 0.15)
    for text, z, color in labels:
        font = bpy.data.curves.new(f"label {text}", "FONT")
        font.body = text
        font.size = 0.17
        obj = bpy.data.objects.new(font.name, font)
        obj.location = Vector((left_end.x, left_end.y, z + 0.1)) + side * 1.0
        obj.rotation_euler = cam.rotation_euler
        obj.color = (color[0] * 0.8, color[1] * 0.8, color[2] * 0.8, 1.0)
        scene.collection.objects.link(obj)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    scene.display.shading.show_shadows = False
    scene.render.resolution_x = 880
    scene.render.resolution_y = int(880 * ratio)
    scene.render.image_settings.color_mode = "RGB"
    scene.render.image_settings.compression = 100
    scene.render.filepath = os.path.join(os.path.abspath(out_dir), name)
    bpy.ops.render.render(write_still=True)
    print(f"wrote {scene.render.filepath}")
    arm.animation_data.action = source
    bpy.context.view_layer.objects.active = arm


# ---- Gait style: 1.5 x the arm-swing adverb, 1.2 x stride -------------------------------------------
bpy.context.view_layer.objects.active = arm
slot = scene.koma_adverbs.add()
slot.filepath, slot.alpha = adverb_path, 1.5
bpy.ops.koma.gait_style(adverbs=[{"name": "", "filepath": adverb_path, "alpha": 1.5}], stride=1.2)
styled = arm.animation_data.action
frames = list(range(1, 40, 4))
render("blender_gait_style.png", [(source, frames, (0.55, 0.55, 0.58), "input walk"),
                                  (styled, frames, (0.95, 0.45, 0.15), "Gait style: arm swing x1.5, stride x1.2")])

# ---- Re-time like...: the brisk walk with the heavy walk's timing ------------------------------------
arm.animation_data.action = source
bpy.ops.koma.retime_like(example=heavy.animation_data.action.name)
retimed = arm.animation_data.action
frames = list(range(1, 40, 4))
render("blender_retime.png", [(source, frames, (0.55, 0.55, 0.58), "input walk, every 4th frame"),
                              (retimed, frames, (0.2, 0.45, 0.9), "Re-time like 'heavy_walk', same frames")])
