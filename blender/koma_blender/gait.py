"""Gait style, gait apply and adverbs learned in the scene (koma.gait), with the adverb list."""
import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from .common import koma, convert, ConversionError, panel_words, _errors, source_action, _ActionOperator


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
