"""The add-on's operators. Each one: check the input, convert bpy -> koma, call ONE koma function,
convert back. Errors go to self.report({'ERROR'}, ...) and leave the scene unchanged (everything is
computed before anything is written). Operators whose koma capability is not built are not
registered."""
import math
import os
import warnings

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from . import _find_koma

koma = _find_koma()
if koma is not None:
    from . import convert
    from .convert import ConversionError
else:  # the operators still register nothing useful; the panel says what is missing
    ConversionError = Exception

MARKER_PREFIX = "koma "


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
        ("in", "Inches", ""), ("ft", "Feet", "")])
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
            self.report({"ERROR"}, str(e))
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
        obj, action = _active_armature(context)
        motion, rig, first = convert.action_to_motion(obj, action, convert.scene_fps(context.scene))
        if rig.skipped:
            self.report({"WARNING"}, f"{rig.skipped} bone(s) outside the main hierarchy are left alone")
        return obj, action, motion, rig, first

    def store(self, context, obj, action, rig, motion, first, suffix, key_frames=None, constant=False):
        """Writes the result; everything that can fail has run before this."""
        name = f"{action.name}.{suffix}"
        result = convert.motion_to_action(obj, rig, motion, name, first, key_frames, constant)
        convert.assign_action(obj, result)
        return result


class KOMA_OT_key_poses(_ActionOperator, bpy.types.Operator):
    """Keep the key poses of the action (optimal by default) and hold them: CONSTANT keys on the
    kept frames, each marked with a timeline marker"""
    bl_idname = "koma.key_poses"
    bl_label = "Key poses"

    selector: EnumProperty(name="Selector", default="exact", items=[
        ("exact", "Exact", "Provably optimal key set for the error metric"),
        ("anneal", "Anneal", "Simulated annealing"),
        ("cumsum", "Cumulative sum", "Key when the accumulated change crosses a threshold"),
        ("cumsum+anneal", "Cumsum + anneal", "Annealing started from the cumulative-sum keys"),
        ("uniform", "Uniform", "Evenly spaced keys")])
    mode: EnumProperty(name="How many", default="ON", items=[
        ("ON", "On Ns", "As many keys as animating on Ns would"),
        ("KEYS", "Keys", "Exactly this many keys"),
        ("ERROR", "Error budget", "Fewest keys whose RMS error stays within the budget")])
    on: IntProperty(name="On", default=2, min=1, max=24, description="Animate on Ns (2 = on twos)")
    keys: IntProperty(name="Keys", default=12, min=2, description="Number of key poses to keep")
    max_error_cm: FloatProperty(name="Max RMS error (cm)", default=2.0, min=0.0,
                                description="Error budget: root-mean-square point error in centimetres")
    min_hold: IntProperty(name="Min hold", default=1, min=1, description="Shortest hold in frames")
    max_hold: IntProperty(name="Max hold", default=0, min=0, description="Longest hold in frames (0 = any)")
    use_marker_locks: BoolProperty(name="Lock selected markers", default=True,
                                   description="Frames of selected timeline markers must be keys")
    mark: BoolProperty(name="Mark keys", default=True, description="Add a timeline marker on every key")

    def draw(self, context):
        col = self.layout.column()
        for p in ("selector", "mode"):
            col.prop(self, p)
        col.prop(self, {"ON": "on", "KEYS": "keys", "ERROR": "max_error_cm"}[self.mode])
        for p in ("min_hold", "max_hold", "use_marker_locks", "mark"):
            col.prop(self, p)

    def execute(self, context):
        scene = context.scene
        try:
            obj, action, motion, rig, first = self.read_motion(context)
            s = koma.keys.KeySettings(selector=koma.keys.parse_selector(self.selector))
            if self.mode == "ON":
                s.on = self.on
            elif self.mode == "KEYS":
                s.keys = self.keys
            else:
                s.max_error = (self.max_error_cm / 100.0) ** 2
            s.constraints.min_hold = self.min_hold
            s.constraints.max_hold = self.max_hold
            if self.use_marker_locks:
                s.constraints.locked = sorted({m.frame - first for m in scene.timeline_markers
                                               if m.select and first <= m.frame < first + motion.frame_count})
            selection = koma.keys.select_keys(motion, s)
            keys = list(selection.keys())
            result = self.store(context, obj, action, rig, motion, first, "keys", keys, constant=True)
        except _errors() as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        if self.mark:
            for m in [m for m in scene.timeline_markers if m.name.startswith(MARKER_PREFIX)]:
                scene.timeline_markers.remove(m)
            for i, k in enumerate(keys):
                scene.timeline_markers.new(f"{MARKER_PREFIX}{i + 1}", frame=first + k)
        self.report({"INFO"}, f"{result.name}: {len(keys)} key poses of {motion.frame_count} frames, "
                              f"RMS error {math.sqrt(max(selection.error, 0.0)) * 100:.2f} cm")
        return {"FINISHED"}


class KOMA_OT_cartoon_filter(_ActionOperator, bpy.types.Operator):
    """Cartoon animation filter: anticipation, follow-through and exaggeration from one strength
    knob (Wang et al. 2006), optionally keeping planted feet planted"""
    bl_idname = "koma.cartoon_filter"
    bl_label = "Cartoon filter"

    strength: FloatProperty(name="Strength", default=1.0, min=-1.0, max=10.0,
                            description="Filter strength A (0 = unchanged; negative smooths)")
    keep_feet: BoolProperty(name="Keep feet", default=True,
                            description="Keep planted feet planted (two-bone IK per leg)")

    def execute(self, context):
        try:
            obj, action, motion, rig, first = self.read_motion(context)
            s = koma.cartoon.CartoonSettings(keep_feet=self.keep_feet)
            s.filter.strength = self.strength
            res = koma.cartoon.cartoon_motion(motion, s)
            result = self.store(context, obj, action, rig, res.motion, first, "cartoon")
        except _errors() as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        feet = (f", foot skating {res.skating_input_mm:.1f} -> {res.skating_output_mm:.1f} mm/frame"
                if self.keep_feet else "")
        self.report({"INFO"}, f"{result.name}: mean change {res.body_change_m * 100:.1f} cm{feet}")
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


class KOMA_OT_gait_style(_ActionOperator, bpy.types.Operator):
    """Gait style (Unuma et al. 1995): analyse the walk or run of the action as a Fourier spectrum,
    add adverbs (styles learned with koma gait adverb) with a weight each, and play it back with
    another stride and speed, as many frames as the action has"""
    bl_idname = "koma.gait_style"
    bl_label = "Gait style"

    adverbs: CollectionProperty(type=KomaAdverbSlot, name="Adverbs", options={"SKIP_SAVE"},
                                description="Adverb files and weights (from the panel: the scene's list)")
    stride: FloatProperty(name="Stride", default=1.0, min=0.05, soft_max=3.0,
                          description="Scales the swing and the distance per cycle (1 = as analysed)")
    speed: FloatProperty(name="Speed", default=1.0, min=0.05, soft_max=3.0,
                         description="Scales the cadence (1 = as analysed)")
    keep_start: BoolProperty(name="Start where the action starts", default=True,
                             description="Place the styled walk's first root position on the action's")

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
        for p in ("stride", "speed", "keep_start"):
            col.prop(self, p)

    def execute(self, context):
        try:
            obj, action, motion, rig, first = self.read_motion(context)
            adverbs = []
            for a in self.adverbs:
                if not a.filepath:
                    raise ConversionError("an adverb slot has no file: choose an .adverb.json file")
                adverbs.append((bpy.path.abspath(a.filepath), a.alpha))
            # The styled walk replaces the action over its own range and rate (the CLI's default
            # of 10 s at 24 fps is for new files).
            styled = koma.gait_style(motion, adverbs, stride=self.stride, speed=self.speed,
                                     seconds=motion.frame_count / motion.frame_rate, frame_rate=motion.frame_rate)
            if self.keep_start:
                convert.place_like(styled, motion)
            result = self.store(context, obj, action, rig, styled, first, "gait")
        except _errors() as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        names = ", ".join(f"{os.path.basename(p)} x{w:g}" for p, w in adverbs) or "no adverb"
        self.report({"INFO"}, f"{result.name}: {styled.frame_count} frames, {names}, "
                              f"stride {self.stride:g}, speed {self.speed:g}")
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
            result = self.store(context, obj, action, rig, res.motion, first, "retimed")
        except _errors() as e:
            self.report({"ERROR"}, str(e))
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
if has("timing") and has("retime_like") and hasattr(koma.timing, "retime"):
    ACTION_OPERATORS.append(KOMA_OT_retime_like)
HELPERS = [KomaAdverbSlot, KOMA_OT_adverb_add, KOMA_OT_adverb_remove] if KOMA_OT_gait_style in ACTION_OPERATORS else []
CLASSES = HELPERS + [KOMA_OT_import_bvh] + ACTION_OPERATORS


def menu_import(self, context):
    self.layout.operator(KOMA_OT_import_bvh.bl_idname, text="Motion capture via koma (.bvh)")


def register():
    for c in CLASSES:
        bpy.utils.register_class(c)
    if KomaAdverbSlot in CLASSES:
        bpy.types.Scene.koma_adverbs = CollectionProperty(type=KomaAdverbSlot, name="koma adverbs")
    bpy.types.TOPBAR_MT_file_import.append(menu_import)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    if hasattr(bpy.types.Scene, "koma_adverbs"):
        del bpy.types.Scene.koma_adverbs
    for c in reversed(CLASSES):
        bpy.utils.unregister_class(c)
