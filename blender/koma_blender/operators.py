"""The add-on's operators. Each one: check the input, convert bpy -> koma, call ONE koma function,
convert back. Errors go to self.report({'ERROR'}, ...) and leave the scene unchanged (everything is
computed before anything is written). Operators whose koma capability is not built are not
registered."""
import math
import os
import warnings

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
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


CLASSES = [KOMA_OT_import_bvh]
if has("keys"):
    CLASSES.append(KOMA_OT_key_poses)
if has("cartoon"):
    CLASSES.append(KOMA_OT_cartoon_filter)


def menu_import(self, context):
    self.layout.operator(KOMA_OT_import_bvh.bl_idname, text="Motion capture via koma (.bvh)")


def register():
    for c in CLASSES:
        bpy.utils.register_class(c)
    bpy.types.TOPBAR_MT_file_import.append(menu_import)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    for c in reversed(CLASSES):
        bpy.utils.unregister_class(c)
