"""Key poses with a window (run by CTest under a virtual display when xvfb-run is installed):

    xvfb-run -a blender --factory-startup --enable-event-simulate --python test_addon_modal.py -- \
        <build>/python <source>/blender

With a window the selection runs on a thread: the operator returns RUNNING_MODAL, the result
arrives on a later timer, and Esc cancels a long selection leaving the scene as it was. Only koma's
built-in sample is used. Exits 0 when every check passes, 1 otherwise.
"""
import os
import sys
import tempfile

import bpy

argv = sys.argv[sys.argv.index("--") + 1:]
python_dir, addon_dir = argv[:2]
sys.path[:0] = [python_dir, addon_dir]

import koma  # noqa: E402
import koma_blender  # noqa: E402

koma_blender.register()
bpy.context.preferences.view.show_splash = False
failures = []
state = {}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def import_sample(name, cycles):
    path = os.path.join(tempfile.mkdtemp(), f"{name}.bvh")
    koma.write(path, koma.make_sample_motion(koma.SampleSettings(frame_rate=120.0, walk_cycles=cycles)))
    bpy.ops.koma.import_bvh(filepath=path, use_scene_fps=True)
    return bpy.context.active_object


def start_short():
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 120, 1.0
    obj = import_sample("short", 4)
    state["obj"], state["original"] = obj.name, obj.animation_data.action.name
    ret = bpy.ops.koma.key_poses("EXEC_DEFAULT", mode="ON", on=2)
    check(ret == {"RUNNING_MODAL"}, f"with a window, key poses runs modal ({ret})")
    return None


def check_short():
    obj = bpy.data.objects[state["obj"]]
    act = obj.animation_data.action
    check(act.name != state["original"] and act.get("koma_source") == state["original"],
          f"the modal selection finished and wrote its result ({act.name})")
    check(len(act.get("koma_curve_keys", [])) > 5, "the modal result keeps its error-vs-keys curve")
    # A long selection, then Esc while it runs. koma selects even a long take in well under a
    # second, faster than a simulated key press arrives, so the test slows the selection down by
    # sleeping in its progress callback (on the worker thread; the C++ search itself is untouched
    # and unwinds when the callback raises).
    real = koma.keys.select_keys

    def slow(motion, settings, progress=None):
        import time

        def sleepy(fraction):
            state["calls"] = state.get("calls", 0) + 1
            state["last"] = fraction
            time.sleep(0.25)
            if progress is not None:
                progress(fraction)
        return real(motion, settings, progress=sleepy)

    koma.keys.select_keys = slow
    long_obj = import_sample("long", 20)
    state["long"], state["long_action"] = long_obj.name, long_obj.animation_data.action.name
    state["actions"] = sorted(a.name for a in bpy.data.actions)
    ret = bpy.ops.koma.key_poses("EXEC_DEFAULT", mode="ON", on=2)
    check(ret == {"RUNNING_MODAL"}, "the long selection runs modal")
    bpy.app.timers.register(press_esc, first_interval=0.3)
    bpy.app.timers.register(check_cancelled, first_interval=8.0)
    return None


def press_esc():
    win = bpy.context.window_manager.windows[0]
    win.event_simulate(type="MOUSEMOVE", value="NOTHING", x=400, y=400)
    win.event_simulate(type="ESC", value="PRESS", x=400, y=400)
    win.event_simulate(type="ESC", value="RELEASE", x=400, y=400)
    print("pressed Esc", flush=True)
    return None


def check_cancelled():
    obj = bpy.data.objects[state["long"]]
    check(obj.animation_data.action.name == state["long_action"], "after Esc the long take's action is unchanged")
    check(sorted(a.name for a in bpy.data.actions) == state["actions"], "after Esc no action was added")
    check(state.get("last", 1.0) < 0.99, f"the selection stopped early: {state.get('calls')} progress calls, "
                                         f"last at {100 * state.get('last', 1.0):.0f} %")
    for f in failures:
        print("FAIL", f)
    print("all checks passed" if not failures else f"{len(failures)} check(s) failed", flush=True)
    os._exit(1 if failures else 0)


bpy.app.timers.register(start_short, first_interval=1.0)
bpy.app.timers.register(check_short, first_interval=4.0)
