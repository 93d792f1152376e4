"""The koma panel in the Dope Sheet and Graph Editor sidebars (N panel, tab "koma")."""
import bpy

from . import operators


class _KomaPanel:
    bl_region_type = "UI"
    bl_category = "koma"
    bl_label = "koma"

    def draw_curve(self, layout, scene, action):
        """The stored error-vs-keys curve of a key-poses result, and the re-hold slider."""
        curve = operators.curve_of(action)
        if not curve:
            return
        box = layout.box()
        box.label(text="RMS error vs keys", icon="GRAPH")
        current = len({int(round(kp.co[0])) for fc in action.fcurves for kp in fc.keyframe_points})
        col = box.column(align=True)
        for here, text in curve_rows(curve, current):
            col.label(text=text, icon="RIGHTARROW" if here else "BLANK1")
        box.prop(scene, "koma_key_count", text="Re-hold at keys", slider=False)

    def draw(self, context):
        layout = self.layout
        if operators.koma is None:
            layout.label(text="koma module not found", icon="ERROR")
            col = layout.column(align=True)
            col.label(text="Install: make build, then link")
            col.label(text="build/release/python/koma into")
            col.label(text="Blender's scripts/modules folder,")
            col.label(text="or start Blender with")
            col.label(text="KOMA_PYTHONPATH=<build>/python")
            col.label(text="(docs/blender.md, Install)")
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
        if obj is not None and obj.type == "ARMATURE" and obj.animation_data is not None:
            self.draw_curve(layout, scene, obj.animation_data.action)
        row = layout.row(align=True)
        row.prop(scene, "koma_drawing_fps", text="Drawing rate (fps)")
        scene_fps = scene.render.fps / scene.render.fps_base
        if scene.koma_drawing_fps > 0 and abs(scene.koma_drawing_fps - scene_fps) > 1e-6:
            layout.label(text=f"Scene {scene_fps:g} fps, keys on {scene.koma_drawing_fps:g}",
                         icon="INFO")
            layout.operator(operators.KOMA_OT_drawing_rate_scene.bl_idname)
        col = layout.column(align=True)
        for cls in operators.ACTION_OPERATORS:
            col.operator(cls.bl_idname)
        if hasattr(context.scene, "koma_adverbs"):
            box = layout.box()
            row = box.row()
            row.label(text="Gait adverbs")
            row.operator(operators.KOMA_OT_adverb_add.bl_idname, text="", icon="ADD")
            for i, a in enumerate(context.scene.koma_adverbs):
                row = box.row(align=True)
                row.prop(a, "filepath", text="")
                row.prop(a, "alpha", text="α")
                row.operator(operators.KOMA_OT_adverb_remove.bl_idname, text="", icon="X").index = i
        layout.separator()
        layout.operator(operators.KOMA_OT_import_bvh.bl_idname, icon="IMPORT")


def curve_rows(curve, current, rows=10, width=8):
    """Text rows of the error-vs-keys curve: about `rows` key counts (always the current one), each
    with a bar proportional to its RMS error."""
    if not curve:
        return []
    step = max(1, len(curve) // rows)
    picked = [c for i, c in enumerate(curve) if i % step == 0 or c[0] == current or i == len(curve) - 1]
    top = max(e for _, e in curve) or 1.0
    out = []
    for n, e in picked:
        bar = "\u2588" * max(1, int(round(width * e / top)))
        out.append((n == current, f"{n:>3} {bar:<{width}} {e:.2f} cm"))
    return out


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
