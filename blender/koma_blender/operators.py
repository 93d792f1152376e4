"""The add-on's operators. Each one: check the input, convert bpy -> koma, call ONE koma function,
convert back. Errors go to self.report({'ERROR'}, ...) and leave the scene unchanged (everything is
computed before anything is written). Operators whose koma capability is not built are not
registered."""
import math
import os
import warnings

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty, FloatVectorProperty,
                       IntProperty, StringProperty)
from bpy_extras.io_utils import ImportHelper

from . import _find_koma

koma = _find_koma()
if koma is not None:
    from . import convert
    from .convert import ConversionError
else:  # the operators still register nothing useful; the panel says what is missing
    ConversionError = Exception

MARKER_PREFIX = "koma "
SOURCE_KEY = "koma_source"      # custom property of a result action: the name of the action it came from
OPERATION_KEY = "koma_operation"  # ... and what made it ("key poses on 2 at 24 fps")

# koma's settings names (the start of its error messages) in the words of the panel. Errors are
# shown with these, never with CLI flags or C++ field names.
PANEL_WORDS = {
    "constraints.locked": "Lock selected markers",
    "constraints.min_hold": "Min hold (drawings)",
    "constraints.max_hold": "Max hold (drawings)",
    "min_hold": "Min hold (drawings)",
    "max_hold": "Max hold (drawings)",
    "locked": "Lock selected markers",
    "keys": "Keys",
    "on": "On",
    "max_error": "Max RMS error",
    "strength": "Strength",
    "sigma_seconds": "Sigma (s)",
    "min_sigma_seconds": "Sigma range",
    "max_sigma_seconds": "Sigma range",
    "squash": "Squash and stretch",
    "squash_joint": "Squash bone",
    "frame_rate": "Drawing rate",
    "features.camera": "Score in the camera view",
    "layers": "Layers",
    "camera": "Score in the camera view",
    "output_rate": "Drawing rate",
}


def panel_words(message):
    """koma's error text with its leading settings name replaced by the panel's label."""
    text = str(message)
    head, sep, rest = text.partition(": ")
    if sep and head in PANEL_WORDS:
        return f"{PANEL_WORDS[head]}: {rest}"
    if sep and head.startswith("part "):
        return f"Part strength ({head[5:]}): {rest}"
    return text


def has(name):
    return koma is not None and hasattr(koma, name)


def _errors():
    return (ConversionError, koma.Error) if koma is not None else (ConversionError,)


def _active_armature(context):
    obj = context.active_object
    if obj is None:
        raise ConversionError("no active object: select an armature")
    if obj.type != "ARMATURE":
        raise ConversionError(f"'{obj.name}' is a {obj.type.lower()}, not an armature")
    action = obj.animation_data.action if obj.animation_data else None
    if action is None:
        raise ConversionError(f"armature '{obj.name}' has no action")
    return obj, action


def source_action(action):
    """The original action a koma result came from (following results of results), or `action`
    itself. Every operator works on this, however many times it runs."""
    seen = set()
    while action is not None and action.get(SOURCE_KEY) and action.name not in seen:
        seen.add(action.name)
        src = bpy.data.actions.get(action[SOURCE_KEY])
        if src is None:
            break
        action = src
    return action


def _ensure_object_mode(context):
    if context.mode != "OBJECT" and context.active_object is not None:
        bpy.ops.object.mode_set(mode="OBJECT")


class KOMA_OT_import_bvh(bpy.types.Operator, ImportHelper):
    """Import a BVH motion capture file through koma (every BVH dialect; units detected)"""
    bl_idname = "koma.import_bvh"
    bl_label = "Import BVH (koma)"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".bvh"
    filter_glob: StringProperty(default="*.bvh", options={"HIDDEN"})
    unit: EnumProperty(name="File unit", default="AUTO", items=[
        ("AUTO", "Detect", "Detect the unit from the character's size"),
        ("m", "Metres", ""), ("cm", "Centimetres", ""), ("mm", "Millimetres", ""),
        ("in", "Inches", ""), ("ft", "Feet", ""), ("cmu", "CMU units", "1/0.45 inch, the CMU motion-capture releases")])
    use_scene_fps: BoolProperty(
        name="Keep scene frame rate", default=False,
        description="Resample the motion to the scene's frame rate instead of setting the scene to the file's")
    update_range: BoolProperty(name="Set frame range", default=True,
                               description="Set the scene's frame range to the motion")

    def execute(self, context):
        scene = context.scene
        try:
            _ensure_object_mode(context)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", koma.KomaWarning)
                motion = koma.read(self.filepath, unit=None if self.unit == "AUTO" else self.unit)
            rate = motion.frame_rate
            if self.use_scene_fps:
                rate = convert.scene_fps(scene)
                if abs(rate - motion.frame_rate) > 1e-9:
                    motion = koma.resample(motion, rate)
            name = os.path.splitext(os.path.basename(self.filepath))[0]
            obj, rig = convert.create_armature(context, motion, name)
            try:
                first = scene.frame_start if self.update_range is False else 1
                action = convert.motion_to_action(obj, rig, motion, name, first)
            except Exception:
                bpy.data.objects.remove(obj)  # leave nothing half made
                raise
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        convert.assign_action(obj, action)
        if not self.use_scene_fps:
            fps = round(rate)
            scene.render.fps = max(1, fps)
            scene.render.fps_base = max(1, fps) / rate
        if self.update_range:
            scene.frame_start = 1
            scene.frame_end = motion.frame_count
        for o in context.selected_objects:
            o.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        for w in caught:
            self.report({"WARNING"}, str(w.message))
        self.report({"INFO"}, f"{name}: {motion.frame_count} frames x {motion.joint_count} joints "
                              f"at {motion.frame_rate:g} fps")
        return {"FINISHED"}


class _ActionOperator:
    """Shared checks of the operators that transform the active armature's action. The result goes
    into a new action "<source>.<suffix>" made active; the source action is kept (fake user)."""
    bl_options = {"REGISTER", "UNDO"}


    @classmethod
    def poll(cls, context):
        return koma is not None

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self)

    def read_motion(self, context):
        """The armature, its ORIGINAL action (the source of a koma result that is active), that
        action as a koma Motion at the scene's rate, the rig and the first frame."""
        obj, action = _active_armature(context)
        action = source_action(action)
        motion, rig, first = convert.action_to_motion(obj, action, convert.scene_fps(context.scene))
        if rig.skipped:
            self.report({"WARNING"}, f"{rig.skipped} bone(s) outside the main hierarchy are left alone")
        return obj, action, motion, rig, first

    def store(self, context, obj, action, rig, motion, first, suffix, key_frames=None, constant=False,
              operation=""):
        """Writes the result into a new action "<source>.<suffix>" (an older result of the same
        source and settings is replaced; the source is never changed). Everything that can fail
        has run before this."""
        name = f"{action.name}.{suffix}"
        old = bpy.data.actions.get(name)
        if old is not None and old is not action and old.get(SOURCE_KEY) == action.name:
            bpy.data.actions.remove(old)
        result = convert.motion_to_action(obj, rig, motion, name, first, key_frames, constant)
        result[SOURCE_KEY] = action.name
        result[OPERATION_KEY] = operation or suffix
        action.use_fake_user = True
        convert.assign_action(obj, result)
        obj["koma_show_original"] = False  # the result is shown (set without the toggle's update)
        return result


def drawing_rate(scene):
    """The rate key poses are chosen at: the scene's koma drawing rate, or the scene's own rate
    when that is 0."""
    fps = getattr(scene, "koma_drawing_fps", 24.0)
    return fps if fps > 0 else convert.scene_fps(scene)


def drawing_frames(drawings, drawing_fps, scene_fps, frame_count):
    """Scene frame indices (from the action's first frame) of drawing indices at `drawing_fps`:
    drawing d is shown from time d / drawing_fps. Raises ConversionError if two drawings land on
    one scene frame (a drawing rate above the scene's)."""
    frames = [min(frame_count - 1, int(round(d * scene_fps / drawing_fps))) for d in drawings]
    if len(set(frames)) != len(frames):
        raise ConversionError(f"Drawing rate {drawing_fps:g} fps is above the scene's {scene_fps:g} fps: "
                              "two drawings would share a frame")
    return frames


def store_curve(result, curve, first):
    """Keeps the exact selector's error-vs-keys curve on a result action: per key count its RMS
    error (cm) and its key frames (scene frames), for the panel's curve and re-hold slider."""
    if not curve:
        return
    result["koma_curve_keys"] = [n for n, _, _ in curve]
    result["koma_curve_rms_cm"] = [e for _, e, _ in curve]
    result["koma_curve_frames"] = {str(n): [first + f for f in frames] for n, _, frames in curve}


def curve_of(action):
    """[(keys, rms_cm)] stored on a key-poses result, or []."""
    if action is None or "koma_curve_keys" not in action:
        return []
    return list(zip(action["koma_curve_keys"], action["koma_curve_rms_cm"]))


def rehold(context, n):
    """Re-holds the active key-poses result at `n` keys from its stored curve: the original
    action's poses on that count's optimal frames, without selecting again. Returns the new
    action, or None when the result has no curve point for `n`."""
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE" or obj.animation_data is None:
        return None
    current = obj.animation_data.action
    if current is None or "koma_curve_frames" not in current or str(n) not in current["koma_curve_frames"]:
        return None
    frames = list(current["koma_curve_frames"][str(n)])
    src = source_action(current)
    motion, rig, first = convert.action_to_motion(obj, src, convert.scene_fps(context.scene))
    fps = current.get("koma_drawing_fps", convert.scene_fps(context.scene))
    op = f"keys {n} from curve @{fps:g}"
    name = f"{src.name}.{op}"
    old = bpy.data.actions.get(name)
    if old is not None and old is not current and old.get(SOURCE_KEY) == src.name:
        bpy.data.actions.remove(old)
    result = convert.motion_to_action(obj, rig, motion, name, first, [f - first for f in frames], True)
    for key in ("koma_drawing_fps", "koma_curve_keys", "koma_curve_rms_cm", "koma_curve_frames"):
        if key in current:
            result[key] = current[key]
    result[SOURCE_KEY] = src.name
    result[OPERATION_KEY] = op
    convert.assign_action(obj, result)
    scene = context.scene
    for m in [m for m in scene.timeline_markers if m.name.startswith(MARKER_PREFIX)]:
        scene.timeline_markers.remove(m)
    for i, f in enumerate(frames):
        scene.timeline_markers.new(f"{MARKER_PREFIX}{i + 1}", frame=f)
    return result


def _key_count_update(scene, context):
    rehold(context, scene.koma_key_count)


def lock_frames(scene, first, frame_count):
    """Frames (from `first`) of the selected timeline markers the USER made: koma's own markers
    ("koma 1", ...) are never locks; rename one to lock it."""
    return sorted({m.frame - first for m in scene.timeline_markers
                   if m.select and not m.name.startswith(MARKER_PREFIX) and first <= m.frame < first + frame_count})


class KOMA_OT_key_poses(_ActionOperator, bpy.types.Operator):
    """Keep the key poses of the action (optimal by default) on the drawing grid (24 fps by default,
    whatever the scene's rate) and hold them: CONSTANT keys on the kept frames, each marked with a
    timeline marker. Always works on the original action, never on an earlier result"""
    bl_idname = "koma.key_poses"
    bl_label = "Key poses"

    selector: EnumProperty(name="Selector", default="exact", items=[
        ("exact", "Exact", "Provably optimal key set for the error metric"),
        ("anneal", "Anneal", "Simulated annealing"),
        ("cumsum", "Cumulative sum", "Key when the accumulated change crosses a threshold"),
        ("cumsum+anneal", "Cumsum + anneal", "Annealing started from the cumulative-sum keys"),
        ("uniform", "Uniform", "Evenly spaced keys")])
    mode: EnumProperty(name="How many", default="ON", items=[
        ("ON", "On Ns", "As many drawings as animating on Ns would, none held shorter than N"),
        ("KEYS", "Keys", "Exactly this many keys"),
        ("ERROR", "Error budget", "Fewest keys whose RMS error stays within the budget")])
    on: IntProperty(name="On", default=2, min=1, max=24, description="Animate on Ns (2 = on twos) of the drawing rate")
    keys: IntProperty(name="Keys", default=12, min=2, description="Number of key poses to keep")
    max_error_cm: FloatProperty(name="Max RMS error (cm)", default=2.0, min=0.0,
                                description="Error budget: root-mean-square point error in centimetres")
    metric: EnumProperty(name="Metric", default="position", items=[
        ("position", "Position", "Mean squared error of joint positions"),
        ("velocity", "Velocity", "Mean squared error of joint velocities"),
        ("acceleration", "Acceleration", "Mean squared error of joint accelerations")])
    interpolation: EnumProperty(name="Interpolation", default="linear", items=[
        ("linear", "Linear", "Score a dropped frame against linear in-betweens of joint positions"),
        ("cubic", "Cubic", "Score a dropped frame against cubic in-betweens"),
        ("slerp", "Slerp", "Score a dropped frame against rotation in-betweens (slerp per joint)")])
    min_hold: IntProperty(name="Min hold (drawings)", default=1, min=1,
                          description="Shortest hold, in drawings of the drawing rate")
    max_hold: IntProperty(name="Max hold (drawings)", default=0, min=0,
                          description="Longest hold, in drawings (0 = up to 2 seconds)")
    keep_contacts: BoolProperty(name="Keep foot contacts", default=False,
                                description="Key every foot plant's touch-down")
    keep_extremes: BoolProperty(name="Keep extremes", default=False,
                                description="Key the hands' and feet's direction reversals")
    layers: StringProperty(name="Layers", default="",
                           description="Per-part timing, e.g. 'arms:3,legs:2' (arms on 3s, legs on 2s; other "
                                       "bones follow the main keys). Empty = one timing for the whole body")
    use_camera: BoolProperty(name="Score in the camera view", default=False,
                             description="Score the lost motion as the scene's active (perspective) camera sees it, "
                                         "not in 3D: keys go where the picture changes")
    use_marker_locks: BoolProperty(name="Lock selected markers", default=False,
                                   description="Frames of selected timeline markers you made must be keys "
                                               "(koma's own markers are never locks)")
    mark: BoolProperty(name="Mark keys", default=True, description="Add a timeline marker on every key")
    spacing: EnumProperty(name="Spacing", default="HOLD", items=[
        ("HOLD", "Hold keys", "No inbetweens: each key is held until the next"),
        ("source", "Source", "Inbetweens show the action's own pose on their frame (the capture's spacing)"),
        ("even", "Even", "Inbetweens the same distance apart"),
        ("slow-in", "Slow in", "Inbetweens crowd toward the next key (arriving slowly)"),
        ("slow-out", "Slow out", "Inbetweens crowd toward their own key (leaving slowly)"),
        ("slow-in-out", "Slow in and out", "Inbetweens crowd toward both keys"),
        ("halves", "Halves", "Each inbetween half the distance of the one before toward the next key"),
        ("CUSTOM", "Fractions", "Your own chart: shares of the way to the next key")],
        description="Timing chart of the inbetweens between key poses (needs Keys or Error budget)")
    spacing_on: IntProperty(name="Inbetweens on", default=2, min=1, max=24,
                            description="An inbetween every N drawings after each key (2 = on twos)")
    fractions: StringProperty(name="Fractions", default="0.25, 0.5, 0.75",
                              description="The chart's fractions of the way to the next key, increasing, in [0, 1]")

    def draw(self, context):
        col = self.layout.column()
        scene = context.scene
        col.label(text=f"Drawing rate: {drawing_rate(scene):g} fps (scene {convert.scene_fps(scene):g} fps)",
                  icon="TIME")
        for p in ("selector", "mode"):
            col.prop(self, p)
        col.prop(self, {"ON": "on", "KEYS": "keys", "ERROR": "max_error_cm"}[self.mode])
        for p in ("metric", "interpolation", "min_hold", "max_hold", "keep_contacts", "keep_extremes",
                  "layers", "use_camera", "use_marker_locks", "mark", "spacing"):
            col.prop(self, p)
        if self.spacing != "HOLD":
            col.prop(self, "spacing_on")
            if self.spacing == "CUSTOM":
                col.prop(self, "fractions")

    @staticmethod
    def camera(scene, obj):
        """The scene's active camera as a koma perspective camera, in the armature's koma space
        (Rx(-90 deg) of the world relative to the armature object: Y up, metres)."""
        cam = scene.camera
        if cam is None:
            raise ConversionError("Score in the camera view: the scene has no active camera")
        if cam.data.type != "PERSP":
            raise ConversionError(f"Score in the camera view: camera '{cam.name}' is {cam.data.type.lower()}; "
                                  "use a perspective camera")
        to_koma = lambda v: (v[0], v[2], -v[1])  # noqa: E731
        eye = cam.matrix_world.translation - obj.matrix_world.translation
        forward = -(cam.matrix_world.to_3x3().col[2])
        distance = max(0.1, (obj.matrix_world.translation - cam.matrix_world.translation).length)
        target = eye + forward.normalized() * distance
        c = koma.keys.Camera(projection=koma.keys.Projection.perspective)
        c.position, c.target = to_koma(eye), to_koma(target)
        c.fov_degrees = math.degrees(cam.data.angle_y)
        return c

    def settings(self, drawing_fps, scene_fps, first, frame_count, scene, obj=None):
        s = koma.keys.KeySettings(selector=koma.keys.parse_selector(self.selector),
                                  metric=koma.keys.parse_metric(self.metric),
                                  interpolation=koma.keys.parse_interpolation(self.interpolation))
        if self.mode == "ON":
            s.on = self.on
        elif self.mode == "KEYS":
            s.keys = self.keys
        else:
            s.max_error = (self.max_error_cm / 100.0) ** 2
        s.constraints.min_hold = self.min_hold
        s.constraints.max_hold = self.max_hold
        s.keep_contacts = self.keep_contacts
        s.keep_extremes = self.keep_extremes
        if self.use_camera:
            s.features.camera = self.camera(scene, obj)
        if self.layers.strip():
            s.layers = koma.keys.parse_layers(self.layers.replace(" ", ""))
        if self.use_marker_locks:
            # Scene frames -> drawings (the nearest drawing of each locked frame).
            s.constraints.locked = sorted({int(round(f * drawing_fps / scene_fps))
                                           for f in lock_frames(scene, first, frame_count)})
        return s

    def spacing_settings(self):
        """koma.keys.SpacingSettings for the chosen chart, or None (keys held)."""
        if self.spacing == "HOLD":
            return None
        if self.mode == "ON":
            raise ConversionError("Spacing: a chart places inbetweens between key poses; choose how many keys "
                                  "(Keys or Error budget), not On Ns")
        if self.layers.strip():
            raise ConversionError("Spacing: charts space the whole body between its keys; clear Layers")
        chart = self.fractions.replace(" ", "") if self.spacing == "CUSTOM" else self.spacing
        return koma.spacing_settings(on=self.spacing_on, chart=chart)

    def operation(self, drawing_fps):
        how = {"ON": f"on {self.on}", "KEYS": f"{self.keys} keys", "ERROR": f"{self.max_error_cm:g} cm"}[self.mode]
        extra = [v for v, default in ((self.selector, "exact"), (self.metric, "position"),
                                      (self.interpolation, "linear")) if v != default]
        extra += [w for w, on in (("contacts", self.keep_contacts), ("extremes", self.keep_extremes),
                                  ("camera", self.use_camera)) if on]
        if self.layers.strip():
            extra.append(self.layers.replace(" ", ""))
        if self.min_hold > 1 or self.max_hold > 0:
            extra.append(f"hold {self.min_hold}-{self.max_hold or 'any'}")
        if self.spacing != "HOLD":
            chart = self.fractions.replace(" ", "") if self.spacing == "CUSTOM" else self.spacing
            extra.append(f"{chart} on {self.spacing_on}")
        return " ".join([f"keys {how} @{drawing_fps:g}"] + extra)

    def prepare(self, context):
        """Everything before the selection (main thread): the job, or raises."""
        scene = context.scene
        obj, action, motion, rig, first = self.read_motion(context)
        scene_fps, drawing_fps = convert.scene_fps(scene), drawing_rate(scene)
        if drawing_fps > scene_fps + 1e-6:
            raise ConversionError(f"Drawing rate {drawing_fps:g} fps is above the scene's {scene_fps:g} fps")
        drawn = motion if abs(drawing_fps - scene_fps) < 1e-6 else koma.resample(motion, drawing_fps)
        s = self.settings(drawing_fps, scene_fps, first, motion.frame_count, scene, obj)
        spacing = self.spacing_settings()
        if self.selector == "exact" and spacing is None:
            s.exact.curve_keys = True  # the error-vs-keys curve with every count's keys: re-hold later
        return dict(obj=obj, action=action, motion=motion, rig=rig, first=first, scene_fps=scene_fps,
                    drawing_fps=drawing_fps, drawn=drawn, settings=s, spacing=spacing)

    @staticmethod
    def spaced(job, selection):
        """The inbetweens between the selection's keys (koma.keys.space_drawings on the action at the
        scene's rate): (scene frames of every drawing, the action's motion with each inbetween's pose
        on its frame, the Spacing). Key frames keep the action's own pose, as without spacing."""
        import copy
        motion, drawing_fps = job["motion"], job["drawing_fps"]
        sp = koma.keys.space_drawings(motion, list(selection.keys()), drawing_fps, job["spacing"])
        frames = drawing_frames([d.frame for d in sp.drawings], drawing_fps, job["scene_fps"], motion.frame_count)
        poses = koma.keys.spaced_motion(motion, sp)
        shown = copy.copy(motion)
        for d, f in zip(sp.drawings, frames):
            if d.kind == koma.keys.DrawingKind.inbetween:
                shown.rotations[f] = poses.rotations[d.frame]
                shown.translations[f] = poses.translations[d.frame]
        return frames, shown, sp

    def finish(self, context, job, selection):
        """Everything after the selection (main thread): the result action, markers, report."""
        scene = context.scene
        obj, action, motion, rig, first = job["obj"], job["action"], job["motion"], job["rig"], job["first"]
        scene_fps, drawing_fps = job["scene_fps"], job["drawing_fps"]
        drawings = list(selection.keys())
        keys = drawing_frames(drawings, drawing_fps, scene_fps, motion.frame_count)
        curve = [(p.keys, math.sqrt(max(p.error, 0.0)) * 100.0,
                  drawing_frames(list(p.frames), drawing_fps, scene_fps, motion.frame_count))
                 for p in selection.layers[0].curve if len(p.frames)] if selection.layers else []
        # The held pose is the source pose at the key's scene frame (exact, not resampled).
        op = self.operation(drawing_fps)
        per_bone = keys
        if len(selection.layers) > 1:  # each bone on its layer's keys
            layer_frames = [drawing_frames(list(L.keys), drawing_fps, scene_fps, motion.frame_count)
                            for L in selection.layers]
            sk = motion.skeleton
            per_bone = {n: layer_frames[selection.joint_layer[sk.find(n)]] for n in rig.names}
            curve = []  # the curve is the main layer's alone: no re-hold of a layered result
        shown, spacing = motion, None
        if job.get("spacing") is not None:  # inbetweens by the chart, each a CONSTANT key of its own
            per_bone, shown, spacing = self.spaced(job, selection)
            curve = []  # a re-hold from the curve would drop the inbetweens
        result = self.store(context, obj, action, rig, shown, first, op, per_bone, constant=True, operation=op)
        result["koma_drawing_fps"] = drawing_fps
        store_curve(result, curve, first)
        scene["koma_key_count"] = len(keys)  # the re-hold slider starts at this result (no update)
        if self.mark:
            for m in [m for m in scene.timeline_markers if m.name.startswith(MARKER_PREFIX)]:
                scene.timeline_markers.remove(m)
            for i, k in enumerate(keys):
                scene.timeline_markers.new(f"{MARKER_PREFIX}{i + 1}", frame=first + k)
        seconds = (motion.frame_count - 1) / scene_fps
        if spacing is not None:
            inbetweens = sum(g.inbetweens for g in spacing.gaps)
            held = sum(1 for g in spacing.gaps if g.held)
            self.report({"INFO"}, f"{result.name}: {len(keys)} keys and {inbetweens} inbetweens ({self.spacing}"
                                  f"{f', {held} gaps too short, held' if held else ''}), RMS error of the keys "
                                  f"{math.sqrt(max(selection.error, 0.0)) * 100:.2f} cm")
            return
        self.report({"INFO"}, f"{result.name}: {len(keys)} drawings in {seconds:.2f} s "
                              f"({(len(keys) - 1) / max(seconds, 1e-9):.1f} a second at {drawing_fps:g} fps), "
                              f"RMS error {math.sqrt(max(selection.error, 0.0)) * 100:.2f} cm")

    def execute(self, context):
        try:
            job = self.prepare(context)
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        if context.window is not None and not bpy.app.background:
            return self.start_modal(context, job)
        wm = context.window_manager
        wm.progress_begin(0.0, 1.0)  # the cursor's progress counter while koma selects
        try:
            selection = koma.keys.select_keys(job["drawn"], job["settings"], progress=wm.progress_update)
            self.finish(context, job, selection)
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        return {"FINISHED"}

    # With a window: the selection runs on a thread (koma releases the GIL), the UI stays live,
    # progress shows in the status bar and Esc cancels (the progress callback raises, koma unwinds).
    def start_modal(self, context, job):
        import threading
        self._job, self._done, self._error, self._selection = job, False, None, None
        self._fraction, self._cancel = 0.0, False

        def progress(fraction):
            self._fraction = fraction
            if self._cancel:
                raise KeyboardInterrupt("cancelled")

        def work():
            try:
                self._selection = koma.keys.select_keys(job["drawn"], job["settings"], progress=progress)
            except BaseException as e:  # noqa: B902 - handed to the main thread
                self._error = e
            self._done = True

        wm = context.window_manager
        wm.progress_begin(0.0, 1.0)
        self._timer = wm.event_timer_add(0.1, window=context.window)
        self._thread = threading.Thread(target=work, daemon=True)
        self._thread.start()
        wm.modal_handler_add(self)
        context.workspace.status_text_set("koma: selecting key poses... (Esc cancels)")
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC":
            self._cancel = True
        if event.type != "TIMER" or not self._done:
            if event.type == "TIMER":
                context.window_manager.progress_update(self._fraction)
                context.workspace.status_text_set(
                    f"koma: selecting key poses {100 * self._fraction:.0f} % (Esc cancels)")
            return {"RUNNING_MODAL"}
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        context.workspace.status_text_set(None)
        if isinstance(self._error, KeyboardInterrupt) or (self._cancel and self._error is not None):
            self.report({"WARNING"}, "Key poses cancelled: nothing was changed")
            return {"CANCELLED"}
        try:
            if self._error is not None:
                raise self._error
            self.finish(context, self._job, self._selection)
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        return {"FINISHED"}


class KOMA_OT_drawing_rate_scene(bpy.types.Operator):
    """Switch the scene to the drawing rate: the active armature's original action is resampled
    by koma into a new action at the drawing rate (the original is kept), and the scene's rate and
    frame range follow"""
    bl_idname = "koma.drawing_rate_scene"
    bl_label = "Scene to drawing rate"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return koma is not None

    def execute(self, context):
        scene = context.scene
        try:
            obj, action = _active_armature(context)
            action = source_action(action)
            scene_fps, fps = convert.scene_fps(scene), drawing_rate(scene)
            motion, rig, first = convert.action_to_motion(obj, action, scene_fps)
            if abs(fps - scene_fps) < 1e-6:
                self.report({"INFO"}, f"the scene already runs at the drawing rate, {fps:g} fps")
                return {"CANCELLED"}
            moved = koma.resample(motion, fps)
            name = f"{action.name}@{fps:g}fps"
            result = convert.motion_to_action(obj, rig, moved, name, first)
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        action.use_fake_user = True
        convert.assign_action(obj, result)
        scene.render.fps = max(1, int(round(fps)))
        scene.render.fps_base = scene.render.fps / fps
        scene.frame_start = first
        scene.frame_end = first + moved.frame_count - 1
        self.report({"INFO"}, f"{name}: {motion.frame_count} frames at {scene_fps:g} fps -> "
                              f"{moved.frame_count} at {fps:g} fps")
        return {"FINISHED"}


def _show_original_update(obj, context):
    """The Compare toggle: shows the original action, or the koma result it was switched from."""
    if obj.animation_data is None:
        return
    current = obj.animation_data.action
    if obj.koma_show_original:
        src = source_action(current)
        if current is not None and src is not current:
            obj["koma_compare_result"] = current.name
            current.use_fake_user = True
            obj.animation_data.action = src
    else:
        result = bpy.data.actions.get(obj.get("koma_compare_result", ""))
        if result is not None and source_action(result) is current:
            obj.animation_data.action = result


class KOMA_OT_cartoon_filter(_ActionOperator, bpy.types.Operator):
    """Cartoon animation filter: anticipation, follow-through and exaggeration from one strength
    knob (Wang et al. 2006), the same at every scene rate, optionally keeping planted feet planted
    and squashing one bone"""
    bl_idname = "koma.cartoon_filter"
    bl_label = "Cartoon filter"

    strength: FloatProperty(name="Strength", default=8.0, min=-1e4, max=1e4, soft_min=0.0, soft_max=50.0,
                            description="Filter strength A (0 = unchanged; negative smooths). The same value "
                                        "does the same at 24, 30, 60 or 120 fps")
    sigma: FloatProperty(name="Sigma (s)", default=0.0, min=0.0, soft_max=0.5, precision=3,
                         description="Width of the filter in seconds (0 = adaptive, from the motion's own rhythm)")
    parts: FloatVectorProperty(name="Part strength", size=5, default=(1.0, 1.0, 1.0, 1.0, 1.0), soft_min=0.0,
                               soft_max=3.0, description="Multiplier of the strength for root, torso, head, arms, legs")
    keep_feet: BoolProperty(name="Keep feet", default=True,
                            description="Keep planted feet planted (two-bone IK per leg)")
    squash: FloatProperty(name="Squash and stretch", default=0.0, min=0.0, soft_max=1.0,
                          description="Squash-and-stretch amount (0 = off), keyed as the squash bone's scale")
    squash_bone: StringProperty(name="Squash bone", default="",
                                description="The bone that squashes (empty = the root bone)")

    def draw(self, context):
        col = self.layout.column()
        for p in ("strength", "sigma", "keep_feet"):
            col.prop(self, p)
        box = col.box()
        box.label(text="Part strength")
        for i, name in enumerate(("Root", "Torso", "Head", "Arms", "Legs")):
            box.prop(self, "parts", index=i, text=name)
        col.prop(self, "squash")
        obj = context.active_object
        if obj is not None and obj.type == "ARMATURE":
            col.prop_search(self, "squash_bone", obj.data, "bones")

    def execute(self, context):
        try:
            obj, action, motion, rig, first = self.read_motion(context)
            s = koma.cartoon.CartoonSettings(keep_feet=self.keep_feet, strength=self.strength,
                                             sigma_seconds=self.sigma, squash=self.squash,
                                             squash_joint=self.squash_bone)
            s.part_strength = list(self.parts)
            res = koma.cartoon.cartoon_motion(motion, s)
            op = f"cartoon {self.strength:g}" + (" feet" if self.keep_feet else "") + (
                f" squash {self.squash:g}" if self.squash > 0 else "")
            result = self.store(context, obj, action, rig, res.motion, first, op, operation=op)
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        feet = (f", foot skating {res.skating_input_mm:.1f} -> {res.skating_output_mm:.1f} mm/frame"
                if self.keep_feet else "")
        self.report({"INFO"}, f"{result.name}: mean change {res.body_change_m * 100:.1f} cm, sigma "
                              f"{res.sigma_mean / res.frame_rate:.3f} s{feet}")
        return {"FINISHED"}


class KomaAdverbSlot(bpy.types.PropertyGroup):
    """One adverb of Gait style: a file written by `koma gait adverb` and its weight alpha."""
    filepath: StringProperty(name="Adverb", subtype="FILE_PATH",
                             description="Adverb file (.adverb.json) written by koma gait adverb")
    alpha: FloatProperty(name="Alpha", default=1.0, soft_min=-1.0, soft_max=2.0,
                         description="Weight: 0 = no effect, 1 = the full style, > 1 exaggerates")


class KOMA_OT_adverb_add(bpy.types.Operator, ImportHelper):
    """Add an adverb file (.adverb.json) to the scene's Gait style list"""
    bl_idname = "koma.adverb_add"
    bl_label = "Add adverb"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    def execute(self, context):
        slot = context.scene.koma_adverbs.add()
        slot.filepath = self.filepath
        slot.alpha = 1.0
        return {"FINISHED"}


class KOMA_OT_adverb_remove(bpy.types.Operator):
    """Remove an adverb from the scene's Gait style list"""
    bl_idname = "koma.adverb_remove"
    bl_label = "Remove adverb"
    bl_options = {"REGISTER", "UNDO"}

    index: IntProperty(name="Index", default=0, min=0)

    def execute(self, context):
        adverbs = context.scene.koma_adverbs
        if self.index >= len(adverbs):
            self.report({"ERROR"}, f"no adverb {self.index + 1} in the list")
            return {"CANCELLED"}
        adverbs.remove(self.index)
        return {"FINISHED"}


class _AdverbOperator(_ActionOperator):
    """The dialog of the operators that apply the panel's adverb list: the adverbs with their
    alpha, then the operator's own `dialog_options`."""
    adverbs: CollectionProperty(type=KomaAdverbSlot, name="Adverbs", options={"SKIP_SAVE"},
                                description="Adverb files and weights (from the panel: the scene's list)")
    dialog_options = ()

    def invoke(self, context, event):
        # From the panel: the scene's adverb list (not remembered from the last run: SKIP_SAVE).
        self.adverbs.clear()
        for a in context.scene.koma_adverbs:
            slot = self.adverbs.add()
            slot.filepath, slot.alpha = a.filepath, a.alpha
        return context.window_manager.invoke_props_dialog(self)

    def draw(self, context):
        col = self.layout.column()
        if len(self.adverbs) == 0:
            col.label(text="No adverbs: add them in the koma panel", icon="INFO")
        for a in self.adverbs:
            row = col.row(align=True)
            row.label(text=os.path.basename(bpy.path.abspath(a.filepath)) or "(no file)")
            row.prop(a, "alpha")
        for p in self.dialog_options:
            col.prop(self, p)


class KOMA_OT_gait_style(_AdverbOperator, bpy.types.Operator):
    """Gait style (Unuma et al. 1995): analyse the walk or run of the action as a Fourier spectrum,
    add adverbs (styles learned with koma gait adverb) with a weight each, and play it back with
    another stride and speed, as many frames as the action has"""
    bl_idname = "koma.gait_style"
    bl_label = "Gait style"

    stride: FloatProperty(name="Stride", default=1.0, min=0.05, soft_max=3.0,
                          description="Scales the swing and the distance per cycle (1 = as analysed)")
    speed: FloatProperty(name="Speed", default=1.0, min=0.05, soft_max=3.0,
                         description="Scales the cadence (1 = as analysed)")
    keep_start: BoolProperty(name="Start where the action starts", default=True,
                             description="Place the styled walk's first root position on the action's")

    dialog_options = ("stride", "speed", "keep_start")

    def execute(self, context):
        try:
            obj, action, motion, rig, first = self.read_motion(context)
            adverbs = _adverb_list(self.adverbs)
            # The styled walk replaces the action over its own range and rate (the CLI's default
            # of 10 s at 24 fps is for new files).
            styled = koma.gait_style(motion, adverbs, stride=self.stride, speed=self.speed,
                                     seconds=motion.frame_count / motion.frame_rate, frame_rate=motion.frame_rate)
            if self.keep_start:
                convert.place_like(styled, motion)
            result = self.store(context, obj, action, rig, styled, first, "gait", operation="gait style")
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        names = ", ".join(f"{os.path.basename(p)} x{w:g}" for p, w in adverbs) or "no adverb"
        self.report({"INFO"}, f"{result.name}: {styled.frame_count} frames, {names}, "
                              f"stride {self.stride:g}, speed {self.speed:g}")
        return {"FINISHED"}


def _adverb_list(slots):
    """(path, alpha) of every adverb slot; ConversionError for an empty one."""
    adverbs = []
    for a in slots:
        if not a.filepath:
            raise ConversionError("an adverb slot has no file: choose an .adverb.json file")
        adverbs.append((bpy.path.abspath(a.filepath), a.alpha))
    return adverbs


class KOMA_OT_gait_apply(_AdverbOperator, bpy.types.Operator):
    """Gait apply: add the adverbs to THIS take (not an averaged loop): its frame count, timing,
    root path, turns and planted feet are kept, each cycle styled at its own phase; adverbs learned
    on another rig map by joint role"""
    bl_idname = "koma.gait_apply"
    bl_label = "Gait apply (this take)"

    stride: FloatProperty(name="Stride", default=1.0, min=0.05, soft_max=3.0,
                          description="Scales the root travel (1 = the take's own path)")
    period: FloatProperty(name="Fixed period (s)", default=0.0, min=0.0, soft_max=3.0,
                          description="0 = detect the gait cycle per step; > 0 = apply at this period (s)")
    plant_feet: BoolProperty(name="Keep feet planted", default=True,
                             description="The take's foot contacts stay contacts (leg IK)")
    roles_file: StringProperty(name="Roles file", subtype="FILE_PATH", default="",
                               description="For a rig whose bone names koma does not know: a JSON file naming "
                                           "bones by role, {\"left_ankle\": \"leg_joint_L_3\", ...} (empty = "
                                           "found by name)")

    dialog_options = ("stride", "period", "plant_feet", "roles_file")

    def execute(self, context):
        try:
            obj, action, motion, rig, first = self.read_motion(context)
            adverbs = _adverb_list(self.adverbs)
            roles = bpy.path.abspath(self.roles_file) if self.roles_file else None
            res = koma.gait_apply(motion, adverbs, stride=self.stride, period=self.period, plant_feet=self.plant_feet,
                                  roles=roles)
            result = self.store(context, obj, action, rig, res.motion, first, "gait apply", operation="gait apply")
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        for w in res.warnings:
            self.report({"WARNING"}, str(w))
        names = ", ".join(f"{os.path.basename(p)} x{w:g}" for p, w in adverbs) or "no adverb"
        self.report({"INFO"}, f"{result.name}: {res.motion.frame_count} frames, {names}, "
                              f"{res.phase.cycles} cycles (confidence {res.phase.confidence:.2f})")
        return {"FINISHED"}


class KOMA_OT_gait_adverb(_ActionOperator, bpy.types.Operator):
    """Learn an adverb: the style difference between this action (neutral) and a styled action of
    the same rig (e.g. a happy walk), saved as an .adverb.json file and added to the adverb list"""
    bl_idname = "koma.gait_adverb"
    bl_label = "Learn adverb..."

    styled: StringProperty(name="Styled action", description="The action with the style (same rig, e.g. a happy walk)")
    filepath: StringProperty(name="Save as", subtype="FILE_PATH", default="//style.adverb.json",
                             description="Where to write the adverb (.adverb.json)")

    def draw(self, context):
        col = self.layout.column()
        col.prop_search(self, "styled", bpy.data, "actions")
        col.prop(self, "filepath")

    def execute(self, context):
        scene = context.scene
        try:
            obj, action, motion, rig, first = self.read_motion(context)
            styled = bpy.data.actions.get(self.styled) if self.styled else None
            if styled is None:
                raise ConversionError(f"no styled action '{self.styled}': choose the action with the style"
                                      if self.styled else "choose the styled action to learn from")
            other, _, _ = convert.action_to_motion(obj, source_action(styled), convert.scene_fps(scene))
            path = bpy.path.abspath(self.filepath)
            if not path or path.endswith(os.sep):
                raise ConversionError("Save as: choose a file name for the adverb")
            adverb = koma.gait.make_adverb(koma.gait.analyze_gait(motion), koma.gait.analyze_gait(other))
            koma.gait.write_adverb(path, adverb)
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        except OSError as e:
            self.report({"ERROR"}, f"Save as: {e}")
            return {"CANCELLED"}
        if hasattr(scene, "koma_adverbs"):
            slot = scene.koma_adverbs.add()
            slot.filepath, slot.alpha = path, 1.0
        self.report({"INFO"}, f"{os.path.basename(path)}: {action.name} -> {styled.name}, added to the adverb list")
        return {"FINISHED"}


class KOMA_OT_retime_like(_ActionOperator, bpy.types.Operator):
    """Re-time like...: keep where the body goes and take when it gets there from another action
    (timing transfer): step durations, within-step speed, succession lags and arm/spine amplitude.
    The example action must animate this armature's bones (e.g. another take of the same rig)"""
    bl_idname = "koma.retime_like"
    bl_label = "Re-time like..."

    example: StringProperty(name="Example action",
                            description="The action whose timing to take (same bone names as this armature)")
    succession: BoolProperty(name="Succession", default=True,
                             description="Shift child joints to the example's parent->child lags")
    amplitude: BoolProperty(name="Amplitude", default=True,
                            description="Scale arm/spine rotation ranges to the example's")
    speed: EnumProperty(name="Speed from", default="source", items=[
        ("source", "Example", "The output walks at the example's mean step speed"),
        ("input", "This action", "Total step time unchanged; only the rhythm changes")])
    update_range: BoolProperty(name="Set frame range", default=True,
                               description="Set the scene's frame range to the re-timed action")

    def draw(self, context):
        col = self.layout.column()
        col.prop_search(self, "example", bpy.data, "actions")
        for p in ("speed", "succession", "amplitude", "update_range"):
            col.prop(self, p)

    def execute(self, context):
        scene = context.scene
        try:
            obj, action, motion, rig, first = self.read_motion(context)
            example = bpy.data.actions.get(self.example) if self.example else None
            if example is None:
                raise ConversionError(f"no example action '{self.example}': choose an action to re-time like"
                                      if self.example else "choose an example action to re-time like")
            like, _, _ = convert.action_to_motion(obj, example, convert.scene_fps(scene))
            s = koma.timing.RetimeSettings(succession=self.succession, amplitude=self.amplitude,
                                           speed=getattr(koma.timing.SpeedFrom, self.speed))
            res = koma.retime_like(motion, like, s)
            result = self.store(context, obj, action, rig, res.motion, first, "retimed",
                                operation=f"re-timed like {example.name}")
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        r = res.report
        if self.update_range:
            scene.frame_start = first
            scene.frame_end = first + r.output_frames - 1
        self.report({"INFO"}, f"{result.name}: {r.input_frames} -> {r.output_frames} frames like '{example.name}', "
                              f"{len(r.segments)} steps re-timed, path deviation {r.path_deviation:.1e} m")
        return {"FINISHED"}


# The operators shown as buttons in the panel, in order; all of them plus helpers are registered.
ACTION_OPERATORS = []
if has("keys"):
    ACTION_OPERATORS.append(KOMA_OT_key_poses)
if has("cartoon"):
    ACTION_OPERATORS.append(KOMA_OT_cartoon_filter)
if has("gait") and has("gait_style"):
    ACTION_OPERATORS.append(KOMA_OT_gait_style)
if has("gait") and has("gait_apply"):
    ACTION_OPERATORS += [KOMA_OT_gait_apply, KOMA_OT_gait_adverb]
if has("timing") and has("retime_like") and hasattr(koma.timing, "retime"):
    ACTION_OPERATORS.append(KOMA_OT_retime_like)
HELPERS = ([KomaAdverbSlot, KOMA_OT_adverb_add, KOMA_OT_adverb_remove]
           if KOMA_OT_gait_style in ACTION_OPERATORS or KOMA_OT_gait_apply in ACTION_OPERATORS else [])
CLASSES = HELPERS + [KOMA_OT_import_bvh, KOMA_OT_drawing_rate_scene] + ACTION_OPERATORS


def menu_import(self, context):
    self.layout.operator(KOMA_OT_import_bvh.bl_idname, text="Motion capture via koma (.bvh)")


def register():
    for c in CLASSES:
        bpy.utils.register_class(c)
    if KomaAdverbSlot in CLASSES:
        bpy.types.Scene.koma_adverbs = CollectionProperty(type=KomaAdverbSlot, name="koma adverbs")
    bpy.types.Scene.koma_drawing_fps = FloatProperty(
        name="Drawing rate", default=24.0, min=0.0, max=240.0,
        description="Frames per second of the drawings key poses are chosen on (24 = anime timing; "
                    "0 = the scene's own rate). On 2s at 24 fps is 12 drawings a second at any scene rate")
    bpy.types.Scene.koma_key_count = IntProperty(
        name="Keys", default=12, min=2, update=_key_count_update,
        description="Re-hold the key-poses result at this many keys from its stored error curve "
                    "(the optimal keys for every count, no new selection)")
    bpy.types.Object.koma_show_original = BoolProperty(
        name="Compare: show original", default=False, update=_show_original_update,
        description="Show the original action instead of the koma result (toggle to compare)")
    bpy.types.TOPBAR_MT_file_import.append(menu_import)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    if hasattr(bpy.types.Scene, "koma_adverbs"):
        del bpy.types.Scene.koma_adverbs
    del bpy.types.Scene.koma_drawing_fps
    del bpy.types.Scene.koma_key_count
    del bpy.types.Object.koma_show_original
    for c in reversed(CLASSES):
        bpy.utils.unregister_class(c)
