"""The add-on's operators: one module per capability (io_bvh, keys, cartoon, gait, timing) over
common.py; this module registers them and names the ones the panel shows. Each operator: check the
input, convert bpy -> koma, call ONE koma function, convert back. Errors go to
self.report({'ERROR'}, ...) and leave the scene unchanged (everything is computed before anything
is written). Operators whose koma capability is not built are not registered."""
import bpy
from bpy.props import BoolProperty, CollectionProperty, FloatProperty, IntProperty

from .cartoon import KOMA_OT_cartoon_filter, _show_original_update
from .common import (MARKER_PREFIX, OPERATION_KEY, SOURCE_KEY, ConversionError, has, koma,  # noqa: F401
                     panel_words, source_action)
from .gait import (KOMA_OT_adverb_add, KOMA_OT_adverb_remove, KOMA_OT_gait_adverb, KOMA_OT_gait_apply,  # noqa: F401
                   KOMA_OT_gait_style, KomaAdverbSlot)
from .io_bvh import KOMA_OT_import_bvh, menu_import
from .keys import KOMA_OT_drawing_rate_scene, KOMA_OT_key_poses, _key_count_update, curve_of  # noqa: F401
from .timing import KOMA_OT_retime_like


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
