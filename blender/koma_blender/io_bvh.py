"""File > Import > Motion via koma: BVH through koma (every BVH dialect, units detected); glTF/GLB
and FBX with their characters through Blender's own importers (koma's fixes applied)."""
import contextlib
import os
import warnings

import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from .common import MISSING, koma, convert, panel_words, _errors, _ensure_object_mode


@contextlib.contextmanager
def numpy_bool_alias():
    """numpy.bool for the duration of a block: Debian's Blender 3.4 glTF importer calls np.bool,
    which numpy 1.24 removed, on every mesh with normals. Added only when missing, removed after."""
    import numpy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        missing = not hasattr(numpy, "bool")
    if missing:
        numpy.bool = bool
    try:
        yield
    finally:
        if missing:
            del numpy.bool


def _imported_armature(before):
    """The armature a Blender importer just added (the one with the most bones), or None."""
    new = [o for o in bpy.data.objects if o.name not in before and o.type == "ARMATURE"]
    return max(new, key=lambda o: len(o.data.bones)) if new else None


class KOMA_OT_import_bvh(bpy.types.Operator, ImportHelper):
    """Import motion: BVH through koma (every BVH dialect; units detected), glTF/GLB and FBX with
    their characters through Blender's own importers (koma's fixes applied)"""
    bl_idname = "koma.import_bvh"
    bl_label = "Import motion (koma)"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".bvh"
    filter_glob: StringProperty(default="*.bvh;*.glb;*.gltf;*.fbx", options={"HIDDEN"})
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
        ext = os.path.splitext(self.filepath)[1].lower()
        if ext in (".glb", ".gltf", ".fbx"):
            return self.import_character(context, ext)
        if koma is None:
            self.report({"ERROR"}, MISSING)
            return {"CANCELLED"}
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
            self.set_scene_rate(scene, rate)
        if self.update_range:
            scene.frame_start = 1
            scene.frame_end = motion.frame_count
        self.select(context, obj)
        for w in caught:
            self.report({"WARNING"}, str(w.message))
        self.report({"INFO"}, f"{name}: {motion.frame_count} frames x {motion.joint_count} joints "
                              f"at {motion.frame_rate:g} fps")
        return {"FINISHED"}

    @staticmethod
    def set_scene_rate(scene, rate):
        fps = round(rate)
        scene.render.fps = max(1, fps)
        scene.render.fps_base = max(1, fps) / rate

    @staticmethod
    def select(context, obj):
        for o in context.selected_objects:
            o.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj

    def import_character(self, context, ext):
        """glTF/GLB and FBX: the character, skin and actions through Blender's own importers (the
        scene set to the file's rate first, as both place keys at time x scene rate). Distances are
        world lengths whatever scale the importer gives the armature (convert.metres_per_unit)."""
        scene = context.scene
        _ensure_object_mode(context)
        if koma is not None and not self.use_scene_fps:
            try:
                self.set_scene_rate(scene, koma.read(self.filepath).frame_rate)
            except _errors() as e:
                self.report({"ERROR"}, panel_words(e))
                return {"CANCELLED"}
        before = {o.name for o in bpy.data.objects}
        try:
            if ext == ".fbx":
                result = bpy.ops.import_scene.fbx(filepath=self.filepath)
            else:
                with numpy_bool_alias():
                    result = bpy.ops.import_scene.gltf(filepath=self.filepath)
        except (RuntimeError, AttributeError, ValueError) as e:
            self.report({"ERROR"}, f"{os.path.basename(self.filepath)}: Blender's importer failed: {e}")
            return {"CANCELLED"}
        obj = _imported_armature(before)
        if "FINISHED" not in result or obj is None:
            self.report({"ERROR"}, f"{os.path.basename(self.filepath)}: no armature imported")
            return {"CANCELLED"}
        action = obj.animation_data.action if obj.animation_data else None
        if self.update_range and action is not None:
            first, last = convert.action_frame_range(action) if koma is not None else map(int, action.frame_range)
            scene.frame_start, scene.frame_end = first, last
        self.select(context, obj)
        self.report({"INFO"}, f"{obj.name}: {len(obj.data.bones)} bones, object scale {obj.scale[0]:g}"
                              + (f", action {action.name}" if action else ""))
        return {"FINISHED"}


def menu_import(self, context):
    self.layout.operator(KOMA_OT_import_bvh.bl_idname, text="Motion via koma (.bvh, .glb, .gltf, .fbx)")
