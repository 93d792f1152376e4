"""File > Import > Motion capture via koma (.bvh): every BVH dialect, units detected."""
import os
import warnings

import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from .common import koma, convert, panel_words, _errors, _ensure_object_mode


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


def menu_import(self, context):
    self.layout.operator(KOMA_OT_import_bvh.bl_idname, text="Motion capture via koma (.bvh)")
