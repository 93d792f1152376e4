"""Cartoon filter (koma.cartoon) on the active action, and the compare toggle."""
import bpy
from bpy.props import BoolProperty, FloatProperty, FloatVectorProperty, StringProperty

from .common import koma, panel_words, _errors, source_action, _ActionOperator


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
