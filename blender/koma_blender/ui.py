"""The koma panel in the Dope Sheet and Graph Editor sidebars (N panel, tab "koma")."""
import bpy

from . import operators


class _KomaPanel:
    bl_region_type = "UI"
    bl_category = "koma"
    bl_label = "koma"

    def draw(self, context):
        layout = self.layout
        if operators.koma is None:
            layout.label(text="koma module not found", icon="ERROR")
            layout.label(text="see docs/blender.md")
            return
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            layout.label(text="Select an armature", icon="INFO")
        else:
            action = obj.animation_data.action if obj.animation_data else None
            layout.label(text=f"{obj.name}: {action.name if action else 'no action'}", icon="ARMATURE_DATA")
            src = operators.source_action(action) if action is not None else None
            if src is not None and (src is not action or obj.koma_show_original):
                box = layout.box()
                box.label(text=f"Original: {src.name}", icon="ACTION")
                shown = action.get(operators.OPERATION_KEY, "") if src is not action else "original"
                box.label(text=f"Showing: {shown}")
                box.prop(obj, "koma_show_original", text="Compare: show original", toggle=True)
        scene = context.scene
        row = layout.row(align=True)
        row.prop(scene, "koma_drawing_fps", text="Drawing rate (fps)")
        scene_fps = scene.render.fps / scene.render.fps_base
        if scene.koma_drawing_fps > 0 and abs(scene.koma_drawing_fps - scene_fps) > 1e-6:
            layout.label(text=f"Scene runs at {scene_fps:g} fps: keys on the {scene.koma_drawing_fps:g} fps grid",
                         icon="INFO")
            layout.operator(operators.KOMA_OT_drawing_rate_scene.bl_idname)
        col = layout.column(align=True)
        for cls in operators.ACTION_OPERATORS:
            col.operator(cls.bl_idname)
        if hasattr(context.scene, "koma_adverbs"):
            box = layout.box()
            row = box.row()
            row.label(text="Gait style adverbs")
            row.operator(operators.KOMA_OT_adverb_add.bl_idname, text="", icon="ADD")
            for i, a in enumerate(context.scene.koma_adverbs):
                row = box.row(align=True)
                row.prop(a, "filepath", text="")
                row.prop(a, "alpha", text="α")
                row.operator(operators.KOMA_OT_adverb_remove.bl_idname, text="", icon="X").index = i
        layout.separator()
        layout.operator(operators.KOMA_OT_import_bvh.bl_idname, icon="IMPORT")


class KOMA_PT_dopesheet(_KomaPanel, bpy.types.Panel):
    bl_space_type = "DOPESHEET_EDITOR"
    bl_idname = "KOMA_PT_dopesheet"


class KOMA_PT_graph(_KomaPanel, bpy.types.Panel):
    bl_space_type = "GRAPH_EDITOR"
    bl_idname = "KOMA_PT_graph"


CLASSES = [KOMA_PT_dopesheet, KOMA_PT_graph]


def register():
    for c in CLASSES:
        bpy.utils.register_class(c)


def unregister():
    for c in reversed(CLASSES):
        bpy.utils.unregister_class(c)
