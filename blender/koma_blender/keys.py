"""Key poses: the drawings of the active action on 2s, 3s or n keys (koma.keys), re-held from the stored
error curve, and the scene set to the drawing rate."""
import math

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from .common import (koma, convert, ConversionError, MARKER_PREFIX, SOURCE_KEY, OPERATION_KEY,
                     panel_words, _errors, _active_armature, source_action, _ActionOperator)


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
        unit = scene.unit_settings.scale_length  # world lengths in metres, as the rig's (convert.Rig)
        to_koma = lambda v: (unit * v[0], unit * v[2], -unit * v[1])  # noqa: E731
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
