"""Screenshots of the koma panel in Blender's real UI, for docs/blender.md (and the CTest
`blender.panel_screenshot`). Blender needs a window for its UI, so run it under a virtual display:

    xvfb-run -a -s "-screen 0 1500x900x24" blender --factory-startup --enable-event-simulate \
        --python scripts/blender_render_panel.py -- \
        <build>/python blender <out_dir>

Only koma's built-in sample is used: the walk at 120 fps (a mocap-rate scene), Key poses on 2s at
the 24 fps drawing rate, then the panel with the result's error-vs-keys curve. Writes
<out_dir>/blender_panel_keys.png and <out_dir>/blender_panel_cartoon.png and exits 0, or exits 1
naming what failed (a Python error while the panel drew, no screenshot).
"""
import os
import sys
import tempfile
import traceback

import bpy

argv = sys.argv[sys.argv.index("--") + 1:]
python_dir, addon_dir, out_dir = argv[:3]
sys.path[:0] = [python_dir, addon_dir]
os.makedirs(out_dir, exist_ok=True)

import koma  # noqa: E402
import koma_blender  # noqa: E402

koma_blender.register()
bpy.context.preferences.view.show_splash = False
problems = []


def setup():
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 120, 1.0
    path = os.path.join(tempfile.mkdtemp(), "sample_walk.bvh")
    koma.write(path, koma.make_sample_motion(koma.SampleSettings(frame_rate=120.0)))
    bpy.ops.koma.import_bvh(filepath=path, use_scene_fps=True)
    bpy.ops.koma.key_poses(mode="ON", on=2)
    # The big 3D view becomes the Dope Sheet's Action Editor with its sidebar on the koma tab.
    screen = bpy.context.window.screen
    area = max(screen.areas, key=lambda a: a.width * a.height)
    area.type = "DOPESHEET_EDITOR"
    space = area.spaces.active
    space.mode = "ACTION"
    space.show_region_ui = True
    return area


def open_koma_tab():
    """Clicks the sidebar's "koma" tab (Blender 3.4 has no API to choose a sidebar tab; needs
    --enable-event-simulate). The tabs are a vertical strip at the sidebar's right edge: "Action"
    first, "koma" second, about 45 px each at UI scale 1."""
    win = bpy.context.window
    for area in win.screen.areas:
        if area.type != "DOPESHEET_EDITOR":
            continue
        for region in area.regions:
            if region.type == "UI" and region.width > 1:
                x, y = region.x + region.width - 9, region.y + region.height - 80
                win.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
                win.event_simulate(type="LEFTMOUSE", value="PRESS", x=x, y=y)
                win.event_simulate(type="LEFTMOUSE", value="RELEASE", x=x, y=y)
                return


def shot(name):
    path = os.path.join(out_dir, name)
    bpy.ops.screen.screenshot(filepath=path)
    if not os.path.exists(path) or os.path.getsize(path) < 10000:
        problems.append(f"no screenshot at {path}")
    print(f"wrote {path}")


def step(fn):
    """A timer step: runs `fn` once, recording any exception as a problem."""
    def run():
        try:
            fn()
        except Exception:
            problems.append(traceback.format_exc())
        return None
    return run


def shot_keys_then_cartoon():
    shot("blender_panel_keys.png")
    obj = bpy.context.active_object
    obj.animation_data.action = koma_blender.operators.source_action(obj.animation_data.action)
    bpy.ops.koma.cartoon_filter(strength=8.0, keep_feet=True, squash=0.3)


def step_shot_cartoon():
    try:
        shot("blender_panel_cartoon.png")
    except Exception:
        problems.append(traceback.format_exc())
    for p in problems:
        print("FAIL", p)
    os._exit(1 if problems else 0)


bpy.app.timers.register(step(setup), first_interval=1.0)
bpy.app.timers.register(step(open_koma_tab), first_interval=3.0)
bpy.app.timers.register(step(shot_keys_then_cartoon), first_interval=4.5)
bpy.app.timers.register(step_shot_cartoon, first_interval=7.0)
