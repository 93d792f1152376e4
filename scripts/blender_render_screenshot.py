"""Renders docs/img/blender_key_poses.png headless (Workbench), the picture of docs/blender.md:

    blender -b --factory-startup --python scripts/blender_render_screenshot.py -- <build>/python blender out.png [walk.bvh]

Imports a walk through the add-on (or uses koma's built-in sample written to a temporary BVH),
runs Key poses on 3s, and draws the character at each kept pose along its path (bones as tubes,
later poses darker), like a chronophotograph of the stepped animation. No UI can be captured in
background mode (no window), so this renders the scene instead.
"""
import math
import os
import sys
import tempfile

import bpy
from mathutils import Vector

argv = sys.argv[sys.argv.index("--") + 1:]
python_dir, addon_dir, out_png = argv[:3]
sys.path[:0] = [python_dir, addon_dir]
import koma  # noqa: E402
import koma_blender  # noqa: E402

koma_blender.register()
for o in list(bpy.data.objects):
    bpy.data.objects.remove(o)

bvh = argv[3] if len(argv) > 3 else os.path.join(tempfile.mkdtemp(), "sample_walk.bvh")
if len(argv) <= 3:
    koma.write(bvh, koma.resample(koma.make_sample_motion(koma.SampleSettings(jump=False)), 24.0))
bpy.ops.koma.import_bvh(filepath=bvh)
arm = bpy.context.active_object
bpy.ops.koma.key_poses(mode="ON", on=3, min_hold=2)
scene = bpy.context.scene
keys = sorted(m.frame for m in scene.timeline_markers if m.name.startswith("koma "))
shown = keys[:: max(1, len(keys) // 9)]

points = []
for i, frame in enumerate(shown):
    scene.frame_set(frame)
    curve = bpy.data.curves.new(f"pose{frame}", "CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = 0.025
    curve.bevel_resolution = 2
    for pb in arm.pose.bones:
        if pb.parent is None:
            continue  # the root bone (often a fixed stick from the origin) would clutter the picture
        head, tail = arm.matrix_world @ pb.head, arm.matrix_world @ pb.tail
        sp = curve.splines.new("POLY")
        sp.points.add(1)
        sp.points[0].co = (*head, 1.0)
        sp.points[1].co = (*tail, 1.0)
        points += [head, tail]
    obj = bpy.data.objects.new(f"pose{frame}", curve)
    shade = 0.85 - 0.6 * i / max(1, len(shown) - 1)
    obj.color = (0.95 * shade + 0.05, 0.45 * shade + 0.1, 0.2, 1.0)
    scene.collection.objects.link(obj)
arm.hide_render = True

lo = Vector([min(p[k] for p in points) for k in range(3)])
hi = Vector([max(p[k] for p in points) for k in range(3)])
center = (lo + hi) / 2
travel = Vector((hi.x - lo.x, hi.y - lo.y, 0.0))
side = Vector((-travel.y, travel.x, 0.0)).normalized() if travel.length > 1e-6 else Vector((0, -1, 0))
bpy.ops.mesh.primitive_plane_add(size=max(travel.length, 2.0) * 2, location=(center.x, center.y, lo.z))
bpy.context.active_object.color = (0.8, 0.8, 0.78, 1.0)

cam_data = bpy.data.cameras.new("cam")
cam_data.type = "ORTHO"
cam_data.ortho_scale = max(travel.length, hi.z - lo.z) * 1.15
cam = bpy.data.objects.new("cam", cam_data)
cam.location = center + side * 10 + Vector((0, 0, 1.0))
cam.rotation_euler = (center - cam.location).to_track_quat("-Z", "Y").to_euler()
scene.collection.objects.link(cam)
scene.camera = cam

scene.render.engine = "BLENDER_WORKBENCH"
scene.display.shading.light = "STUDIO"
scene.display.shading.color_type = "OBJECT"
scene.display.shading.show_shadows = True
scene.display.shading.show_cavity = False
scene.render.resolution_x = 960
scene.render.resolution_y = int(960 * min(0.6, max(0.3, (hi.z - lo.z) * 1.15 / max(travel.length, 1e-3))))
scene.render.film_transparent = False
scene.render.image_settings.color_mode = "RGB"
scene.render.image_settings.compression = 100
scene.render.filepath = os.path.abspath(out_png)
bpy.ops.render.render(write_still=True)
print(f"wrote {out_png}: {len(shown)} of {len(keys)} key poses")
