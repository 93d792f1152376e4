"""Re-time like... (koma.retime_like): the active action on another action's timing."""
import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty

from .common import koma, convert, ConversionError, panel_words, _errors, _ActionOperator


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
    speed: EnumProperty(name="Speed from", default="cadence", items=[
        ("cadence", "Example's cadence", "Steps last as the example's do; this action keeps its stride"),
        ("source", "Example's speed", "The output walks at the example's mean step speed (body sizes/s)"),
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
            result = self.store(context, obj, action, rig, res.motion, first, "retimed",
                                operation=f"re-timed like {example.name}")
        except _errors() as e:
            self.report({"ERROR"}, panel_words(e))
            return {"CANCELLED"}
        r = res.report
        if self.update_range:
            scene.frame_start = first
            scene.frame_end = first + r.output_frames - 1
        self.report({"INFO"}, f"{result.name}: {r.input_frames} -> {r.output_frames} frames like '{example.name}', "
                              f"{len(r.segments)} steps re-timed, path deviation {r.path_deviation:.1e} m")
        return {"FINISHED"}
